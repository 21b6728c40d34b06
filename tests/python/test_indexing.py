"""__getitem__ / __setitem__ and the index ops (gather, scatter, index_*, masked_*...)."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from conftest import cases
from conftest import check_against_numpy as check
from hypothesis import given, settings
from hypothesis import strategies as st

DTYPES = [np.float32, np.float64, np.int64]


def is_base(view, base):
    """`view._base` is `base` (the binding makes a new wrapper per access)."""
    b = view._base
    return (
        b is not None
        and base._base is None
        and b.data_ptr() == base.data_ptr()
        and b.shape == base.shape
        and b.stride() == base.stride()
    )


def sample(shape, dtype, rng):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


SHAPE = (4, 5, 6)
A = np.arange(np.prod(SHAPE)).reshape(SHAPE)

# Index expressions built by `f(arr)`, where `arr` turns nested lists into the
# library's array type (np.array for NumPy, fg.tensor for ferrograd), so the same
# expression indexes both. Plain lists are also used as-is.
BASIC = {
    "int": lambda arr: 1,
    "neg_int": lambda arr: -1,
    "two_ints": lambda arr: (1, 2),
    "three_ints_neg": lambda arr: (3, -2, -6),
    "full_slice": lambda arr: slice(None),
    "slice": lambda arr: slice(1, 3),
    "slice_step": lambda arr: slice(None, None, 2),
    "slice_neg_start": lambda arr: slice(-3, None),
    "slice_past_end": lambda arr: slice(1, 100, 3),
    "slice_empty": lambda arr: slice(3, 1),
    "slice_then_int": lambda arr: (slice(None), 2),
    "slices_steps": lambda arr: (slice(0, 4, 3), slice(None), slice(1, None, 4)),
    "ellipsis_int": lambda arr: (Ellipsis, 1),
    "int_ellipsis": lambda arr: (1, Ellipsis),
    "ellipsis_mid": lambda arr: (0, Ellipsis, slice(2, 4)),
    "none": lambda arr: None,
    "none_int_none": lambda arr: (None, 1, None),
    "ellipsis_none": lambda arr: (Ellipsis, None),
    "slice_none_slice": lambda arr: (slice(None), None, slice(1, 3)),
    "empty_tuple": lambda arr: (),
    "ellipsis": lambda arr: Ellipsis,
}

ADVANCED = {
    "int_list": lambda arr: [0, 2],
    "int_list_neg_dup": lambda arr: [-1, 0, 0],
    "two_lists": lambda arr: ([0, 1], [1, 2]),
    "slice_list": lambda arr: (slice(None), [0, 2, 4]),
    "separated_lists_go_first": lambda arr: ([0, 1], slice(None), [1, 2]),
    "separated_by_none_go_first": lambda arr: ([0, 1], None, [1, 2]),
    "adjacent_lists_in_place": lambda arr: (slice(None), [0, 1], [2, 3]),
    "broadcast_2d": lambda arr: (slice(None), arr([[0], [1]]), arr([2, 3, 5])),
    "tensor_1d": lambda arr: arr([0, 2]),
    "tensor_2d": lambda arr: arr([[1, 2], [3, 0]]),
    "tensor_last_dim": lambda arr: (Ellipsis, arr([5, 0])),
    "list_then_ellipsis": lambda arr: ([0, 1], Ellipsis),
    "none_then_list": lambda arr: (None, [0, 3]),
    "mask_full": lambda arr: arr(A % 7 == 0),
    "mask_dim0": lambda arr: arr([True, False, True, True]),
    "mask_dim1": lambda arr: (slice(None), arr([True, False, False, True, True])),
    "mask_2d_trailing": lambda arr: (Ellipsis, arr(A[0] % 3 == 0)),
    "mask_then_slice": lambda arr: ([True, False, True, True], slice(1, 3)),
    "mask_and_list": lambda arr: (arr([True, False, True, False]), arr([1, 4])),
    "true": lambda arr: True,
    "false": lambda arr: False,
    "slice_true": lambda arr: (slice(None), True),
    "empty_list": lambda arr: (slice(None), []),
    "int_and_list_adjacent": lambda arr: (1, [0, 2]),
}


def layouts(dtype):
    return cases(A.astype(dtype))


def indexed(make, dtype):
    """``(label, t, t[index], x[index])`` for each layout of ``A``, the index
    built by the table entry ``make`` for ferrograd and for NumPy."""
    for label, t, x in layouts(dtype):
        yield label, t, t[make(fg.tensor)], np.asarray(x[make(np.array)])


@pytest.mark.parametrize("name", sorted(BASIC))
@pytest.mark.parametrize("dtype", DTYPES)
def test_basic_getitem_matches_numpy_and_is_a_view(name, dtype):
    for label, t, out, expected in indexed(BASIC[name], dtype):
        check(out, expected)
        base = t._base if t._base is not None else t
        assert is_base(out, base), label
        assert out._is_view() and out._version == t._version


@pytest.mark.parametrize("name", sorted(ADVANCED))
@pytest.mark.parametrize("dtype", DTYPES)
def test_advanced_getitem_matches_numpy_and_copies(name, dtype):
    for label, _t, out, expected in indexed(ADVANCED[name], dtype):
        check(out, expected)
        assert out._base is None, label


def test_separated_advanced_dims_go_first_hand_checked():
    t = fg.tensor(A)
    out = t[[0, 3], :, [1, 5]]
    assert out.shape == (2, 5)
    assert out[1].tolist() == [A[3, j, 5] for j in range(5)]
    adj = t[:, [0, 3], [1, 5]]
    assert adj.shape == (4, 2)
    assert adj[2].tolist() == [A[2, 0, 1], A[2, 3, 5]]


def test_ints_are_selects_before_advanced_indexing_as_in_torch():
    # torch applies ints as `select` first, so an int separated from a list by a
    # slice does not move the list's dims to the front (NumPy would give (2, 5)).
    t = fg.tensor(A)
    out = t[1, :, [0, 2]]
    check(out, A[1][:, [0, 2]])
    # An ellipsis covering no dims does not separate advanced indices in torch.
    check(t[:, [0, 1], ..., [2, 3]], A[:, [0, 1], [2, 3]])


def test_zero_dim_int_tensor_index_acts_like_an_int():
    t = fg.tensor(A)
    out = t[fg.tensor(2)]
    check(out, A[2])
    assert is_base(out, t)
    check(t[1, fg.tensor(-1, dtype=fg.int32)], A[1, -1])
    check(t[np.int64(3)], A[3])


def test_index_of_zero_dim_tensor():
    s = fg.tensor(5.0)
    assert s[()].item() == 5.0 and is_base(s[()], s)
    assert s[...].shape == () and s[None].shape == (1,)
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        s[0]


def test_basic_view_shares_memory_version_and_base():
    t = fg.tensor(A.astype(np.float32))
    v = t[1:3, ::2, 4]
    assert is_base(v, t)
    v[0, 1] = -5.0
    assert t[1, 2, 4].item() == -5.0
    t[1, 2, 4] = 3.0
    assert v[0, 1].item() == 3.0
    assert v._version == t._version
    before = t._version
    v[...] = 0.0
    assert t._version == v._version > before
    assert t[1:3, ::2, 4].tolist() == [[0.0] * 3] * 2


def test_advanced_result_is_a_copy():
    t = fg.tensor(A.astype(np.float32))
    c = t[[0, 1]]
    c[...] = -1.0
    assert t[0, 0, 0].item() == 0.0 and t[1, 4, 5].item() == 59.0
    assert c._base is None and not c._is_view()


# ---------------------------------------------------------------- setitem


def apply_setitem(t, x, make, value_np, value_fg):
    expected = x.copy()
    expected[make(np.array)] = value_np
    before = t._version
    t[make(fg.tensor)] = value_fg
    check(t, expected)
    assert t._version > before


@pytest.mark.parametrize("name", sorted(BASIC) + sorted(ADVANCED))
@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_scalar_matches_numpy(name, dtype):
    make = {**BASIC, **ADVANCED}[name]
    for _label, t, x in layouts(dtype)[:3]:  # not the expanded (overlapping) layout
        apply_setitem(t, x, make, 7, 7)


@pytest.mark.parametrize("name", sorted(BASIC) + sorted(ADVANCED))
@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem_broadcast_tensor_matches_numpy(name, dtype):
    make = {**BASIC, **ADVANCED}[name]
    target = A[make(np.array)]
    if target.ndim == 0 or target.size == 0:
        return
    row = (np.arange(target.shape[-1]) * 3 - 4).astype(dtype)
    for _label, t, x in layouts(dtype)[:3]:
        apply_setitem(t, x, make, row, fg.tensor(row))


def test_setitem_casts_values_to_the_tensor_dtype():
    t = fg.zeros(3, dtype=fg.int64)
    t[0] = 2.7
    t[1:] = fg.tensor([-1.9, 5.5])
    assert t.tolist() == [2, -1, 5] and t.dtype == fg.int64
    b = fg.zeros(3, dtype=fg.bool)
    b[[0, 2]] = 5
    assert b.tolist() == [True, False, True]
    f = fg.zeros(2, 2)
    f[0] = [1, 2]
    f[:, 1] = np.array([7.5, 8.5])
    assert f.tolist() == [[1.0, 7.5], [0.0, 8.5]]
    f[fg.tensor([[True, False], [False, True]])] = True
    assert f.tolist() == [[1.0, 7.5], [0.0, 1.0]]


def test_setitem_value_with_leading_unit_dims_is_accepted():
    t = fg.zeros(2, 3)
    t[0] = fg.ones(1, 1, 3)
    assert t.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


def test_setitem_from_overlapping_view_of_itself():
    x = np.arange(6.0)
    t = fg.tensor(x)
    t[1:] = t[:-1]
    x[1:] = x[:-1].copy()
    check(t, x)
    t2 = fg.tensor(np.arange(6.0))
    t2[[1, 2, 3]] = t2[[0, 1, 2]]
    assert t2.tolist() == [0.0, 0.0, 1.0, 2.0, 4.0, 5.0]


def test_index_put_accumulate_sums_duplicates_like_add_at():
    x = np.zeros((3, 2), dtype=np.float64)
    t = fg.tensor(x)
    idx = np.array([0, 2, 0, 0])
    vals = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    assert t.index_put_((fg.tensor(idx),), fg.tensor(vals), accumulate=True) is t
    np.add.at(x, idx, vals)
    check(t, x)
    out = fg.index_put(t, (fg.tensor([1]), fg.tensor([0])), fg.tensor(10.0))
    x2 = x.copy()
    x2[1, 0] = 10.0
    check(out, x2)
    check(t, x)


# ---------------------------------------------------------------- hypothesis


@st.composite
def basic_index(draw):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    items = []
    dims_left = ndim
    used_ellipsis = False
    for _ in range(draw(st.integers(0, ndim + 2))):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis"]))
        if kind in ("int", "slice") and dims_left == 0:
            kind = "none"
        if kind == "ellipsis" and used_ellipsis:
            kind = "none"
        if kind == "int":
            items.append(("int", draw(st.integers(-5, 4))))
            dims_left -= 1
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-7, 7)))
            stop = draw(st.one_of(st.none(), st.integers(-7, 7)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            items.append(("slice", slice(start, stop, step)))
            dims_left -= 1
        elif kind == "ellipsis":
            items.append(("ellipsis", Ellipsis))
            used_ellipsis = True
        else:
            items.append(("none", None))
    return shape, items


@settings(max_examples=200, deadline=None)
@given(basic_index())
def test_random_basic_indexing_matches_numpy(case):
    shape, items = case
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    # Resolve which dim each int lands on so out-of-range ints are checked too.
    index = tuple(v for _, v in items)
    t = fg.tensor(x)
    try:
        expected = x[index]
    except IndexError:
        with pytest.raises(IndexError):
            t[index]
        return
    out = t[index]
    check(out, np.asarray(expected))
    assert is_base(out, t)


# ---------------------------------------------------------------- errors


def test_getitem_errors():
    t = fg.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        t[5]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        t[0, -5]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        t[:, 4]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        t[[0, 3]]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor \[3, 4\] at index 0"):  # noqa: E501
        t[fg.tensor([True, False])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(ValueError, match="step cannot be zero"):
        t[::0]
    with pytest.raises(TypeError, match="valid indices"):
        t[1.5]
    with pytest.raises(TypeError, match="valid indices"):
        t["a"]
    with pytest.raises(TypeError):
        t[{"a": 1}]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool"):
        t[fg.tensor([0.0, 1.0])]
    with pytest.raises(IndexError, match="tensors used as indices"):
        t[[0.5]]


def test_setitem_errors():
    t = fg.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to indexing result of shape \[4\]"):  # noqa: E501
        t[0] = fg.zeros(3)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        t[[0, 1]] = fg.zeros(3)
    with pytest.raises(IndexError, match="out of bounds"):
        t[3] = 1.0
    with pytest.raises(IndexError, match="out of bounds"):
        t[[0, 7]] = 1.0
    with pytest.raises(TypeError):
        t[0.5] = 1.0
    with pytest.raises(RuntimeError, match="more than one element"):
        fg.zeros(1, 3).expand(2, 3)[[0, 1]] = 1.0


# ---------------------------------------------------------------- index ops


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select_matches_numpy_take(dtype, dim, rng):
    a = sample((3, 4), dtype, rng)
    idx = np.array([2, 0, 2]) if dim == 0 else np.array([3, 1, 1, 0])
    for label, t, x in cases(a):
        check(fg.index_select(t, dim, fg.tensor(idx)), np.take(x, idx, axis=dim)), label
        check(t.index_select(dim, fg.tensor(idx, dtype=fg.int32)), np.take(x, idx, axis=dim))


def test_index_select_errors():
    t = fg.zeros(3, 4)
    with pytest.raises(IndexError, match="out of bounds"):
        t.index_select(0, fg.tensor([3]))
    with pytest.raises(RuntimeError, match="int32/int64"):
        t.index_select(0, fg.tensor([0.0]))
    with pytest.raises(IndexError):
        t.index_select(2, fg.tensor([0]))


def gather_oracle(x, dim, idx):
    out = np.empty(idx.shape, dtype=x.dtype)
    for pos in np.ndindex(*idx.shape):
        src = list(pos)
        src[dim] = idx[pos]
        out[pos] = x[tuple(src)]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_matches_loop_oracle(dtype, dim, rng):
    a = sample((3, 4), dtype, rng)
    d = dim % 2
    idx_shape = (2, 3) if d == 0 else (3, 5)
    idx = rng.integers(0, a.shape[d], idx_shape)
    for label, t, x in cases(a):
        out = fg.gather(t, dim, fg.tensor(idx))
        check(out, gather_oracle(x, d, idx)), label
    if d == 1:
        # Same-shaped index agrees with NumPy's take_along_axis.
        idx2 = rng.integers(0, 4, (3, 4))
        check(fg.tensor(a).gather(1, fg.tensor(idx2)), np.take_along_axis(a, idx2, 1))


def test_gather_errors():
    t = fg.zeros(2, 3)
    with pytest.raises(RuntimeError, match="gather\\(\\): Expected dtype int64 for index"):
        t.gather(1, fg.tensor([[0]], dtype=fg.int32))
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 1 with size 3"):
        t.gather(1, fg.tensor([[7]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.gather(1, fg.tensor([[-1]]))
    with pytest.raises(RuntimeError, match="Size does not match at dimension 0"):
        t.gather(1, fg.tensor([[0], [0], [0]]))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        t.gather(1, fg.tensor([0]))


def scatter_oracle(x, dim, idx, src, add=False):
    out = x.copy()
    for pos in np.ndindex(*idx.shape):
        dst = list(pos)
        dst[dim] = idx[pos]
        v = src if np.ndim(src) == 0 else src[pos]
        if add:
            out[tuple(dst)] += v
        else:
            out[tuple(dst)] = v
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_and_scatter_add_match_loop_oracle(dtype, dim, rng):
    a = sample((3, 4), dtype, rng)
    src = sample((3, 4), dtype, rng)
    # Distinct targets per column/row so plain scatter is order independent.
    if dim == 0:
        idx = np.stack([rng.permutation(3)[:2] for _ in range(4)], axis=1)
    else:
        idx = np.stack([rng.permutation(4)[:3] for _ in range(3)], axis=0)
    dup = rng.integers(0, a.shape[dim], idx.shape)
    for label, t, x in cases(a):
        for _, s, y in cases(src)[:3]:
            check(t.scatter(dim, fg.tensor(idx), s), scatter_oracle(x, dim, idx, y)), label
            check(
                fg.scatter_add(t, dim, fg.tensor(dup), s), scatter_oracle(x, dim, dup, y, add=True)
            )
        check(t.scatter(dim, fg.tensor(idx), 5), scatter_oracle(x, dim, idx, 5))
        check(t.scatter(dim, fg.tensor(idx), value=-2), scatter_oracle(x, dim, idx, -2))
        assert t.tolist() == x.tolist()


def test_scatter_in_place_forms_return_self_and_bump_version():
    t = fg.zeros(2, 3)
    v = t._version
    assert t.scatter_(1, fg.tensor([[2], [0]]), fg.tensor([[1.0], [2.0]])) is t
    assert t._version > v
    assert t.tolist() == [[0.0, 0.0, 1.0], [2.0, 0.0, 0.0]]
    v = t._version
    assert t.scatter_add_(0, fg.tensor([[1, 1, 1]]), fg.ones(1, 3)) is t
    assert t._version > v
    assert t.tolist() == [[0.0, 0.0, 1.0], [3.0, 1.0, 1.0]]
    assert t.scatter_(0, fg.tensor([[0]]), 9.0) is t
    assert t[0, 0].item() == 9.0


def test_scatter_errors():
    t = fg.zeros(2, 3)
    with pytest.raises(RuntimeError, match="scatter\\(\\): Expected dtype int64 for index"):
        t.scatter(1, fg.tensor([[0]], dtype=fg.int32), fg.ones(1, 1))
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 1 with size 3"):
        t.scatter(1, fg.tensor([[7]]), fg.ones(1, 1))
    with pytest.raises(RuntimeError, match="self.dtype to be equal to src.dtype"):
        t.scatter(1, fg.tensor([[0]]), fg.ones(1, 1, dtype=fg.float64))
    with pytest.raises(RuntimeError, match="smaller size than src"):
        t.scatter(1, fg.tensor([[0, 1]]), fg.ones(1, 1))
    with pytest.raises(TypeError):
        t.scatter(1, fg.tensor([[0]]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1])
def test_index_add_copy_fill_match_numpy(dtype, dim, rng):
    a = sample((3, 4), dtype, rng)
    idx = np.array([2, 0, 2]) if dim == 0 else np.array([3, 1, 3, 0, 1])
    src_shape = (3, 4) if dim == 0 else (3, 5)
    src = sample(src_shape, dtype, rng)
    uniq = np.array([2, 0]) if dim == 0 else np.array([3, 1, 0])
    src_u = np.take(src, np.arange(len(uniq)), axis=dim)
    sel = (slice(None),) * dim
    for label, t, x in cases(a):
        exp = x.copy()
        np.add.at(exp, sel + (idx,), 2 * src)
        check(fg.index_add(t, dim, fg.tensor(idx), fg.tensor(src), alpha=2), exp), label
        exp = x.copy()
        exp[sel + (uniq,)] = src_u
        check(fg.index_copy(t, dim, fg.tensor(uniq), fg.tensor(src_u)), exp)
        exp = x.copy()
        exp[sel + (np.array([-1, 0]),)] = 3
        check(fg.index_fill(t, dim, fg.tensor([-1, 0]), 3), exp)
        assert t.tolist() == x.tolist()


def test_index_in_place_forms_and_errors():
    t = fg.zeros(3, 2)
    v = t._version
    assert t.index_add_(0, fg.tensor([0, 0]), fg.ones(2, 2)) is t
    assert t.index_copy_(0, fg.tensor([2]), fg.full((1, 2), 5.0)) is t
    assert t.index_fill_(1, fg.tensor([1]), fg.tensor(-1.0)) is t
    assert t._version == v + 3
    assert t.tolist() == [[2.0, -1.0], [0.0, -1.0], [5.0, -1.0]]
    with pytest.raises(RuntimeError, match="same scalar type"):
        t.index_add_(0, fg.tensor([0]), fg.ones(1, 2, dtype=fg.float64))
    with pytest.raises(RuntimeError, match="Number of indices"):
        t.index_add_(0, fg.tensor([0, 1]), fg.ones(1, 2))
    with pytest.raises(IndexError, match="out of bounds"):
        t.index_add_(0, fg.tensor([3]), fg.ones(1, 2))
    with pytest.raises(RuntimeError, match="long tensor"):
        t.index_copy_(0, fg.tensor([0], dtype=fg.int32), fg.ones(1, 2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_fill_matches_numpy_where_with_broadcast(dtype, rng):
    a = sample((3, 4), dtype, rng)
    masks = [rng.random((3, 4)) < 0.5, rng.random(4) < 0.5, rng.random((3, 1)) < 0.5]
    for label, t, x in cases(a):
        for m in masks:
            check(fg.masked_fill(t, fg.tensor(m), 7), np.where(m, np.asarray(7, dtype), x)), label
            check(t.masked_fill(fg.tensor(m), fg.tensor(-3)), np.where(m, np.asarray(-3, dtype), x))
    # out-of-place broadcasts self against a bigger mask, as torch does
    m = rng.random((2, 3, 4)) < 0.5
    check(fg.tensor(a).masked_fill(fg.tensor(m), 1), np.where(m, np.asarray(1, dtype), a))


def test_masked_fill_in_place_and_errors():
    t = fg.zeros(2, 3, dtype=fg.int64)
    v = t._version
    assert t.masked_fill_(fg.tensor([True, False, True]), 2.9) is t
    assert t._version > v
    assert t.tolist() == [[2, 0, 2], [2, 0, 2]]
    with pytest.raises(RuntimeError, match="only supports boolean masks"):
        t.masked_fill(fg.tensor([1, 0, 1]), 1)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor"):
        t.masked_fill(fg.tensor([True, False, True]), fg.tensor([1]))
    with pytest.raises(RuntimeError):
        t.masked_fill_(fg.zeros(3, 3, dtype=fg.bool), 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_select_matches_numpy(dtype, rng):
    a = sample((3, 4), dtype, rng)
    for label, t, x in cases(a):
        for m in (rng.random((3, 4)) < 0.5, rng.random(4) < 0.5, np.zeros(4, bool)):
            check(fg.masked_select(t, fg.tensor(m)), x[np.broadcast_to(m, x.shape)]), label
    with pytest.raises(RuntimeError, match="BoolTensor"):
        fg.zeros(2).masked_select(fg.tensor([1, 0]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_and_put_match_numpy(dtype, rng):
    a = sample((3, 4), dtype, rng)
    idx = np.array([[0, -1], [5, 11]])
    for label, t, x in cases(a):
        check(fg.take(t, fg.tensor(idx)), np.take(x, idx)), label
    for label, t, x in cases(a)[:3]:
        exp = x.copy()
        vals = sample((4,), dtype, rng)
        np.put(exp, [1, -2, 6, 0], vals)
        assert t.put_(fg.tensor([1, -2, 6, 0]), fg.tensor(vals)) is t
        check(t, exp), label
        acc = exp.ravel().copy()
        np.add.at(acc, [3, 3, 0], vals[:3])
        out = t.put(fg.tensor([3, 3, 0]), fg.tensor(vals[:3]), accumulate=True)
        check(out, acc.reshape(3, 4))
    with pytest.raises(IndexError, match="tried to access index 12 on a tensor of 12 elements"):
        fg.tensor(a).take(fg.tensor([12]))
    with pytest.raises(RuntimeError, match="long tensor"):
        fg.tensor(a).take(fg.tensor([1], dtype=fg.int32))
    with pytest.raises(RuntimeError, match="same number of elements"):
        fg.tensor(a).put_(fg.tensor([1, 2]), fg.tensor(a[0, :1]))


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
def test_nonzero_and_argwhere_match_numpy(dtype, rng):
    a = (rng.integers(0, 3, (3, 4)) == 0).astype(dtype)
    for label, t, x in cases(a):
        check(fg.nonzero(t), np.argwhere(x)), label
        check(fg.argwhere(t), np.argwhere(x))
        parts = t.nonzero(as_tuple=True)
        assert isinstance(parts, tuple) and len(parts) == 2
        for p, q in zip(parts, np.nonzero(x), strict=True):
            check(p, q)
    z = fg.zeros(2, 3)
    assert fg.nonzero(z).shape == (0, 2)
    assert fg.tensor(3).nonzero().shape == (1, 0)
    assert [p.tolist() for p in fg.tensor(3).nonzero(as_tuple=True)] == [[0]]


def test_nonzero_counts_nan_as_nonzero():
    t = fg.tensor([0.0, float("nan"), 0.0, 1.0])
    assert t.nonzero().tolist() == [[1], [3]]


def test_large_inputs_take_the_parallel_paths_and_match_numpy(rng):
    x = rng.standard_normal((300, 400)).astype(np.float32)
    t = fg.tensor(x)
    rows = rng.integers(-300, 300, 500)
    check(t[rows], x[rows])
    check(t[:, rows % 400], x[:, rows % 400])
    mask = x > 0.5
    check(t[fg.tensor(mask)], x[mask])
    idx = rng.integers(0, 400, (300, 400))
    check(t.gather(1, fg.tensor(idx)), np.take_along_axis(x, idx, 1))
    check(t.t()[rows % 400], x.T[rows % 400])
    y = x.copy()
    y[mask] = -1.0
    t[fg.tensor(mask)] = -1.0
    check(t, y)


@pytest.mark.parametrize("threads", [1, 2])
def test_last_dim_gather_and_scatter_past_the_parallel_size_match_numpy(threads):
    # Contiguous operands along the last dim take a row-parallel loop; the
    # index repeats positions, so scatter_add must sum every duplicate and
    # scatter must keep the last write of each row.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 6, 784))
    idx = rng.integers(0, 784, (64, 6, 196))
    src = rng.standard_normal((64, 6, 196))
    old = fg.get_num_threads()
    fg.set_num_threads(threads)
    try:
        got = fg.tensor(x).gather(2, fg.tensor(idx))
        added = fg.zeros(64, 6, 784, dtype=fg.float64).scatter_add_(2, fg.tensor(idx), fg.tensor(src))
        put = fg.zeros(64, 6, 784, dtype=fg.float64).scatter_(2, fg.tensor(idx), fg.tensor(src))
    finally:
        fg.set_num_threads(old)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(x, idx, 2))
    want = np.zeros((64, 6, 784))
    rows = np.arange(64 * 6).repeat(196)
    np.add.at(want.reshape(-1, 784), (rows, idx.reshape(-1)), src.reshape(-1))
    np.testing.assert_allclose(added.numpy(), want, rtol=1e-12, atol=1e-12)
    last = np.zeros((64 * 6, 784))
    for r, (ir, sr) in enumerate(zip(idx.reshape(-1, 196), src.reshape(-1, 196), strict=True)):
        last[r, ir] = sr  # NumPy's fancy assignment keeps the last duplicate
    np.testing.assert_array_equal(put.numpy().reshape(-1, 784), last)
    with pytest.raises(RuntimeError, match="index 784 is out of bounds for dimension 2 with size 784"):
        fg.tensor(x).gather(2, fg.tensor(np.full((64, 6, 196), 784)))
