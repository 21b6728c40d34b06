"""Gradients of shape, view and indexing ops.

Every op is checked with ``check_grad`` (first and second order against
float64 finite differences, on contiguous, transposed and step-sliced
inputs). Inputs are squared before the op so that the gradient depends on
the input and the second-order check exercises the op's backward. Views
must stay views, in-place ops through views must rebase history correctly,
and overlapping ``as_strided`` views must sum the gradient of aliased
elements (checked by hand).
"""

from __future__ import annotations

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import numpy as np
import pytest
from gradcheck_util import check_grad

RNG = np.random.default_rng(7)


def arr(*shape):
    """Values away from zero (squaring stays well conditioned)."""
    return RNG.uniform(0.5, 1.5, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


def sq(x):
    return x * x


def idx(*v):
    return fg.tensor(list(v), dtype=fg.int64)


def same_tensor(a, b):
    """Whether two handles show the same tensor (same memory and shape)."""
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()


# ---------------------------------------------------------------- views

VIEWS = {
    # A transposed input gives a transposed square, which only a copy views.
    "view": (lambda x: x.contiguous().view(2, 6), "ViewBackward0"),
    "reshape": (lambda x: x.reshape(4, 3), "ViewBackward0"),
    "flatten": (lambda x: x.flatten(), "ViewBackward0"),
    "unflatten": (lambda x: x.unflatten(1, (2, 2)), "ViewBackward0"),
    "squeeze_all": (lambda x: x.unsqueeze(1).squeeze(), "SqueezeBackward0"),
    "squeeze_dim": (lambda x: x.unsqueeze(0).squeeze(0), "SqueezeBackward1"),
    "unsqueeze": (lambda x: x.unsqueeze(-1), "UnsqueezeBackward0"),
    "transpose": (lambda x: x.transpose(0, 1), "TransposeBackward0"),
    "t": (lambda x: x.t(), "TBackward0"),
    "mT": (lambda x: x.mT, "TransposeBackward0"),
    "T": (lambda x: x.T, "PermuteBackward0"),
    "permute": (lambda x: x.unsqueeze(0).permute(2, 0, 1), "PermuteBackward0"),
    "movedim": (lambda x: x.unsqueeze(0).movedim(0, 2), "PermuteBackward0"),
    "expand": (lambda x: x.expand(2, 3, 4), "ExpandBackward0"),
    "broadcast_to": (lambda x: x[:, :1].broadcast_to((3, 4)), "ExpandBackward0"),
    "expand_as": (lambda x: x[:1].expand_as(fg.zeros(3, 4)), "ExpandBackward0"),
    "narrow": (lambda x: x.narrow(1, 1, 2), "SliceBackward0"),
    "slice": (lambda x: x[1:3], "SliceBackward0"),
    "slice_step": (lambda x: x[:, ::2], "SliceBackward0"),
    "select": (lambda x: x.select(1, 2), "SelectBackward0"),
    "getitem_int": (lambda x: x[1], "SelectBackward0"),
    "getitem_neg": (lambda x: x[:, -1], "SelectBackward0"),
    "getitem_mixed": (lambda x: x[..., None, 1:], "SliceBackward0"),
    "diagonal": (lambda x: x.diagonal(), "DiagonalBackward0"),
    "diagonal_offset": (lambda x: x.diagonal(1), "DiagonalBackward0"),
    "diagonal_neg": (lambda x: x.diagonal(-1, 1, 0), "DiagonalBackward0"),
    "as_strided": (lambda x: x.as_strided((2, 2), (1, 2), 1), "AsStridedBackward0"),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_grad(name):
    fn, _ = VIEWS[name]
    check_grad(lambda x: fn(sq(x)), [arr(3, 4)])


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_node_and_aliasing(name):
    fn, node = VIEWS[name]
    x = fg.tensor(arr(3, 4), requires_grad=True)
    b = x * 1
    v = fn(b)
    assert v.grad_fn.name() == node
    assert v._is_view()
    assert same_tensor(v._base, b)
    v2 = fn(x)
    assert v2._is_view() and same_tensor(v2._base, x)


@pytest.mark.parametrize(
    "name, fn, node",
    [
        ("unbind", lambda x: x.unbind(1), "UnbindBackward0"),
        ("split", lambda x: x.split(3, 1), "SplitBackward0"),
        ("chunk", lambda x: x.chunk(2, 0), "SplitBackward0"),
        ("split_sizes", lambda x: x.split([1, 3], 1), "SplitWithSizesBackward0"),
    ],
)
def test_multi_output_view_grad(name, fn, node):
    check_grad(lambda x: fn(sq(x)), [arr(3, 4)])
    # Only some pieces used: the others contribute zeros.
    check_grad(lambda x: fn(sq(x))[0], [arr(3, 4)])
    x = fg.tensor(arr(3, 4), requires_grad=True)
    parts = fn(x * 1)
    assert all(p.grad_fn.name() == node and p._is_view() for p in parts)
    with pytest.raises(RuntimeError, match="multiple views"):
        parts[0].mul_(2)


def test_as_strided_overlapping_sums_aliased_gradients():
    x = fg.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=fg.float64, requires_grad=True)
    y = x.as_strided((3, 2), (1, 1))  # rows [x0 x1], [x1 x2], [x2 x3]
    w = np.array([[1.0, 10.0], [100.0, 1000.0], [1e4, 1e5]])
    (y * fg.tensor(w)).sum().backward()
    want = np.zeros(5)
    for i in range(3):
        for j in range(2):
            want[i + j] += w[i, j]
    np.testing.assert_allclose(x.grad.numpy(), want)
    assert y.grad_fn.name() == "AsStridedBackward0"


def test_as_strided_overlapping_with_offset_and_zero_stride():
    x = fg.tensor([1.0, 2.0, 3.0, 4.0], dtype=fg.float64, requires_grad=True)
    y = x.as_strided((2, 3), (2, 0), 1)  # rows [x1 x1 x1], [x3 x3 x3]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 3.0, 0.0, 3.0])


def test_as_strided_overlapping_grad_check():
    check_grad(lambda x: sq(x.reshape(-1)).as_strided((3, 3), (2, 1)), [arr(2, 4)])
    check_grad(lambda x: sq(x).as_strided((2, 2, 2), (1, 1, 1), 2), [arr(6)])


def test_as_strided_of_a_view_uses_storage_positions():
    base = fg.tensor(arr(4, 3), requires_grad=True)
    v = base * 1
    col = v[:, 1]
    y = col.as_strided((2,), (3,), col.storage_offset() + 3)  # v[1,1], v[2,1]
    y.sum().backward()
    want = np.zeros((4, 3))
    want[1, 1] = want[2, 1] = 1.0
    np.testing.assert_allclose(base.grad.numpy(), want)


# ----------------------------------------------------------- copying ops


def test_cat_grad():
    check_grad(lambda a, b: fg.cat([sq(a), sq(b)], 1), [arr(2, 3), arr(2, 2)])
    check_grad(lambda a, b: fg.cat([sq(a), b * a[:1]], 0), [arr(2, 3), arr(1, 3)])
    a = fg.tensor(arr(2, 3), requires_grad=True)
    assert fg.cat([a, a], 0).grad_fn.name() == "CatBackward0"


def test_cat_with_constant_and_legacy_empty():
    check_grad(lambda a: fg.cat([fg.ones(1, 3, dtype=fg.float64), sq(a), fg.zeros(0)], 0), [arr(2, 3)])


def test_stack_grad():
    check_grad(lambda a, b: fg.stack([sq(a), sq(b)], 1), [arr(2, 3), arr(2, 3)])
    a = fg.tensor(arr(2, 3), requires_grad=True)
    assert fg.stack([a, a]).grad_fn.name() == "StackBackward0"


def test_hstack_vstack_grad():
    check_grad(lambda a, b: fg.hstack([sq(a), sq(b)]), [arr(3), arr(2)])
    check_grad(lambda a, b: fg.vstack([sq(a), sq(b)]), [arr(3), arr(2, 3)])


@pytest.mark.parametrize(
    "name, fn, node",
    [
        ("flip", lambda x: x.flip([0, 1]), "FlipBackward0"),
        ("flip_one", lambda x: fg.flip(x, [1]), "FlipBackward0"),
        ("fliplr", lambda x: x.fliplr(), "FlipBackward0"),
        ("roll", lambda x: x.roll((1, -3), (0, 1)), "RollBackward0"),
        ("roll_flat", lambda x: x.roll(5), "RollBackward0"),
        ("repeat", lambda x: x[:2, :2].repeat(2, 1, 3), "RepeatBackward0"),
        ("tile", lambda x: x[:, :2].tile((2,)), "RepeatBackward0"),
        ("tril", lambda x: x.tril(), "TrilBackward0"),
        ("tril_k", lambda x: x.tril(-1), "TrilBackward0"),
        ("triu", lambda x: x.triu(1), "TriuBackward0"),
        ("diag_2d", lambda x: x.diag(1), None),
        ("diag_1d", lambda x: x[0].diag(-1), "DiagEmbedBackward0"),
        ("diag_embed", lambda x: x.diag_embed(), "DiagEmbedBackward0"),
        ("diag_embed_dims", lambda x: x[:, :2].diag_embed(1, 0, 2), "DiagEmbedBackward0"),
        ("repeat_interleave", lambda x: x.repeat_interleave(2), None),
        (
            "repeat_interleave_dim",
            lambda x: x.repeat_interleave(idx(1, 0, 2), dim=0),
            None,
        ),
    ],
)
def test_copying_op_grad(name, fn, node):
    check_grad(lambda x: fn(sq(x)), [arr(3, 4)])
    if node:
        x = fg.tensor(arr(3, 4), requires_grad=True)
        assert fn(x).grad_fn.name() == node


# -------------------------------------------------------------- indexing

INDEXING = {
    "int_tensor_repeated": lambda x: x[idx(2, 0, 2, 2)],
    "int_tensor_dim1": lambda x: x[:, idx(3, 3, 0)],
    "int_tensor_2d": lambda x: x[fg.tensor([[0, 1], [1, 1]])],
    "two_tensors": lambda x: x[idx(0, 2, 0), idx(1, 1, 1)],
    "non_adjacent": lambda x: x.reshape(3, 2, 2)[idx(1, 1), :, idx(0, 0)],
    "int_and_tensor": lambda x: x[1, idx(0, 0, 3)],
    "newaxis_ellipsis_tensor": lambda x: x[None, ..., idx(2, 2)],
    "bool_mask": lambda x: x[fg.tensor([[True, False, True, False]] * 3)],
    "bool_rows": lambda x: x[fg.tensor([True, False, True])],
    "negative": lambda x: x[idx(-1, -1, 0)],
}


@pytest.mark.parametrize("name", sorted(INDEXING))
def test_advanced_index_grad(name):
    fn = INDEXING[name]
    check_grad(lambda x: fn(sq(x)), [arr(3, 4)])
    x = fg.tensor(arr(3, 4), requires_grad=True)
    assert fn(x).grad_fn.name() == "IndexBackward0"


def test_repeated_index_accumulates():
    x = fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64, requires_grad=True)
    x[idx(0, 2, 0, 0)].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 0.0, 1.0])


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_grad(accumulate):
    i = (idx(0, 2),)
    check_grad(lambda x, v: sq(x).index_put(i, sq(v), accumulate), [arr(3, 4), arr(2, 4)])
    # values broadcast over the indexed rows
    check_grad(lambda x, v: sq(x).index_put(i, sq(v), accumulate), [arr(3, 4), arr(4)])
    if accumulate:  # repeated indices sum (without accumulate, the winner is unspecified)
        rep = (idx(1, 1),)
        check_grad(lambda x, v: sq(x).index_put(rep, sq(v), True), [arr(3, 2), arr(2, 2)])
    x = fg.tensor(arr(3, 4), requires_grad=True)
    assert x.index_put(i, fg.zeros(4, dtype=fg.float64)).grad_fn.name() == "IndexPutBackward0"


def test_index_put_gradients_by_hand():
    x = fg.tensor(arr(3, 2), requires_grad=True)
    v = fg.tensor(arr(2), requires_grad=True)
    y = x.index_put((idx(1),), v)
    (y * fg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1.0, 2.0], [0.0, 0.0], [5.0, 6.0]])
    np.testing.assert_allclose(v.grad.numpy(), [3.0, 4.0])


def setitem(index, value_fn=None):
    def f(x, v):
        b = sq(x)
        b[index] = v * v if value_fn is None else value_fn(v)
        return b

    return f


@pytest.mark.parametrize(
    "name, fn, vshape",
    [
        ("tensor_index", setitem(idx(2, 0)), (2, 4)),
        ("slice", setitem(slice(1, 3)), (2, 4)),
        ("int", setitem(1), (4,)),
        ("mask", setitem(fg.tensor([[True, False, False, True]] * 3)), (6,)),
        ("column_broadcast", setitem((slice(None), idx(1, 3))), (2,)),
    ],
)
def test_setitem_grad(name, fn, vshape):
    check_grad(fn, [arr(3, 4), arr(*vshape)])


def test_setitem_scalar_on_tensor_requiring_grad():
    def f(x):
        b = sq(x)
        b[1:3] = 0.5
        b[0, 0] = 2.0
        return b

    check_grad(f, [arr(3, 4)])


def test_index_select_grad():
    check_grad(lambda x: sq(x).index_select(1, idx(3, 0, 3)), [arr(3, 4)])
    check_grad(lambda x: sq(x).index_select(0, idx(2, 2)), [arr(3, 4)])
    x = fg.tensor(arr(3, 4), requires_grad=True)
    assert x.index_select(0, idx(1)).grad_fn.name() == "IndexSelectBackward0"


def test_gather_grad():
    index = fg.tensor([[0, 0, 2], [1, 0, 0]])
    check_grad(lambda x: sq(x).gather(0, index), [arr(3, 4)])
    check_grad(lambda x: sq(x).gather(1, index), [arr(3, 4)])
    x = fg.tensor(arr(3, 4), requires_grad=True)
    assert x.gather(0, index).grad_fn.name() == "GatherBackward0"


def test_scatter_grad():
    index = fg.tensor([[0, 1, 2], [2, 0, 1]])
    check_grad(lambda x, s: sq(x).scatter(0, index, sq(s)), [arr(3, 4), arr(2, 3)])
    # src larger than index: the unused part of src gets zero gradient
    check_grad(lambda x, s: sq(x).scatter(1, index, sq(s)), [arr(3, 4), arr(3, 4)])
    check_grad(lambda x: sq(x).scatter(1, index, value=2.5), [arr(3, 4)])
    x = fg.tensor(arr(3, 4), requires_grad=True)
    assert x.scatter(0, index, x[:2, :3]).grad_fn.name() == "ScatterBackward0"
    assert x.scatter(0, index, value=1.0).grad_fn.name() == "ScatterBackward1"


def test_scatter_add_grad():
    index = fg.tensor([[0, 0, 2], [0, 0, 1]])
    check_grad(lambda x, s: sq(x).scatter_add(0, index, sq(s)), [arr(3, 4), arr(2, 3)])
    check_grad(lambda x, s: sq(x).scatter_add(1, index, sq(s)), [arr(2, 4), arr(2, 4)])


def test_index_add_copy_fill_grad():
    i = idx(2, 0, 2)
    check_grad(lambda x, s: sq(x).index_add(0, i, sq(s)), [arr(3, 4), arr(3, 4)])
    check_grad(lambda x, s: sq(x).index_add(1, i, sq(s), alpha=-2.0), [arr(2, 4), arr(2, 3)])
    j = idx(2, 0)
    check_grad(lambda x, s: sq(x).index_copy(1, j, sq(s)), [arr(3, 4), arr(3, 2)])
    check_grad(lambda x: sq(x).index_fill(1, idx(3, -4), 1.5), [arr(3, 4)])
    x = fg.tensor(arr(3, 4), requires_grad=True)
    assert x.index_add(0, j, x[:2]).grad_fn.name() == "IndexAddBackward0"
    assert x.index_copy(0, j, x[:2]).grad_fn.name() == "IndexCopyBackward0"
    assert x.index_fill(0, j, 0.0).grad_fn.name() == "IndexFillBackward0"


MASK = fg.tensor([[True, False, False, True], [False, False, True, True], [True, True, False, False]])


def test_masked_fill_grad():
    check_grad(lambda x: sq(x).masked_fill(MASK, -1.0), [arr(3, 4)])
    # a mask that broadcasts over the input's rows
    check_grad(lambda x: sq(x).masked_fill(MASK[0], 3.0), [arr(3, 4)])
    # a 0-dim tensor value gets the summed gradient of the filled places
    check_grad(lambda x, v: sq(x).masked_fill(MASK, sq(v)), [arr(3, 4), arr()])


def test_masked_select_take_grad():
    check_grad(lambda x: sq(x).masked_select(MASK), [arr(3, 4)])
    check_grad(lambda x: sq(x).masked_select(MASK[1]), [arr(3, 4)])
    take_idx = fg.tensor([[0, 11], [11, -1]])
    check_grad(lambda x: sq(x).take(take_idx), [arr(3, 4)])


def test_nonzero_is_not_differentiable():
    x = fg.tensor(arr(3, 4), requires_grad=True)
    nz = x.nonzero()
    assert nz.dtype == fg.int64 and not nz.requires_grad and nz.grad_fn is None


# ------------------------------------------------------ in-place ops


def inplace(method, *args, **kwargs):
    def f(x):
        b = sq(x)
        getattr(b, method)(*args, **kwargs)
        return b

    return f


@pytest.mark.parametrize(
    "name, fn",
    [
        ("scatter_", inplace("scatter_", 0, fg.tensor([[0, 1, 2, 0]]), fg.ones(1, 4, dtype=fg.float64))),
        ("scatter_value", inplace("scatter_", 1, fg.tensor([[0], [3], [1]]), value=2.0)),
        ("masked_fill_", inplace("masked_fill_", MASK, 0.25)),
        ("index_fill_", inplace("index_fill_", 1, idx(0, 2), -1.0)),
        ("tril_", inplace("tril_")),
        ("triu_", inplace("triu_", -1)),
    ],
)
def test_inplace_without_tensor_args_grad(name, fn):
    check_grad(fn, [arr(3, 4)])


def test_inplace_with_tensor_args_grad():
    index = fg.tensor([[0, 0, 2], [1, 0, 0]])

    def scatter_(x, s):
        b = sq(x)
        b.scatter_(0, fg.tensor([[0, 2, 2], [1, 0, 0]]), s * s)
        return b

    def scatter_add_(x, s):
        b = sq(x)
        b.scatter_add_(0, index, s * s)
        return b

    def index_add_(x, s):
        b = sq(x)
        b.index_add_(0, idx(2, 2), s * s, alpha=0.5)
        return b

    def index_copy_(x, s):
        b = sq(x)
        b.index_copy_(0, idx(2, 0), s * s)
        return b

    def index_put_(x, s):
        b = sq(x)
        b.index_put_((idx(1, 1), idx(0, 2)), s[0, :2] * s[1, 1:], accumulate=True)
        return b

    def masked_fill_(x, s):
        b = sq(x)
        b.masked_fill_(MASK, s[0, 0] * s[1, 2])
        return b

    for f in (scatter_, scatter_add_, index_add_, index_copy_, index_put_, masked_fill_):
        check_grad(f, [arr(3, 4), arr(2, 4) if f in (index_add_, index_copy_) else arr(2, 3)])


def mul_is_recorded():
    b = fg.ones(2, requires_grad=True) * 1
    try:
        b.mul_(b)
    except RuntimeError as e:
        if "no derivative formula" in str(e):
            return False
        raise
    return True


def test_inplace_copy_through_a_slice_view():
    def f(x, w):
        b = x * 1
        b[1:3].copy_(x[1:3] * w)
        return b

    check_grad(f, [arr(4, 3), arr(3)])


@pytest.mark.skipif(not mul_is_recorded(), reason="mul_ has no derivative formula on this build")
def test_inplace_through_a_slice_view():
    def f(x, w):
        b = x * 1
        b[1:3].mul_(w)
        return b

    check_grad(f, [arr(4, 3), arr(3)])
    x = fg.tensor(arr(4, 3), requires_grad=True)
    w = fg.tensor(arr(3), requires_grad=True)
    b = x * 1
    b[1:3].mul_(w)
    b.sum().backward()
    want = np.ones((4, 3))
    want[1:3] = w.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), want)
    np.testing.assert_allclose(w.grad.numpy(), x.detach().numpy()[1:3].sum(0))


def test_inplace_through_other_views():
    def transpose_diag(x, w):
        b = sq(x)
        b.t().diagonal().copy_(x.diagonal() * w)
        return b

    def select_scatter(x, w):
        b = sq(x)
        b.select(1, 0).scatter_add_(0, idx(2, 2), w[:2] * w[1:])
        return b

    check_grad(transpose_diag, [arr(3, 3), arr(3)])
    check_grad(select_scatter, [arr(3, 4), arr(3)])


def test_setitem_with_values_requiring_grad():
    x = fg.tensor(arr(3, 2), requires_grad=True)
    v = fg.tensor(arr(2, 2), requires_grad=True)
    b = x * 1
    b[idx(2, 0)] = v
    assert b.grad_fn.name() == "IndexPutBackward0"
    (b * fg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(v.grad.numpy(), [[5.0, 6.0], [1.0, 2.0]])


def test_view_of_leaf_modified_in_place_raises():
    x = fg.tensor(arr(3, 4), requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[1:].mul_(2.0)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0][idx(1)] = 1.0
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[idx(1)] = 1.0
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.scatter_(0, fg.tensor([[0]]), value=1.0)


def test_views_of_a_leaf_stay_views_and_share_memory():
    x = fg.tensor(arr(3, 4), requires_grad=True)
    v = x[1:, ::2]
    assert v._is_view() and same_tensor(v._base, x)
    with fg.no_grad():
        x.mul_(2.0)
    np.testing.assert_allclose(v.detach().numpy(), x.detach().numpy()[1:, ::2])


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_grad(accumulate):
    index = fg.tensor([[0, 11], [-1, 5]]) if accumulate else fg.tensor([[0, 10], [-1, 5]])
    check_grad(lambda x, s: sq(x).put(index, sq(s), accumulate), [arr(3, 4), arr(2, 2)])

    def put_(x, s):
        b = sq(x)
        b.put_(index, s * s, accumulate=accumulate)
        return b

    check_grad(put_, [arr(3, 4), arr(2, 2)])


def test_view_as_same_dtype_is_a_recorded_alias():
    x = fg.tensor(arr(3), requires_grad=True)
    v = x.view(x.dtype)
    assert v._is_view() and v.grad_fn.name() == "AliasBackward0"
    check_grad(lambda x: sq(x).view(fg.float64), [arr(3)])


# ---------------------------------------------------------- forward mode


def tangent_of(y):
    return fwAD.unpack_dual(y).tangent


SHARED_VIEWS = {
    "getitem_int": lambda d: d[1],
    "getitem_slices": lambda d: d[1:, ::2],
    "select": lambda d: d.select(1, 2),
    "narrow": lambda d: d.narrow(1, 1, 2),
    "transpose": lambda d: d.t(),
    "permute": lambda d: d.permute(1, 0),
    "view": lambda d: d.view(2, 6),
    "unsqueeze": lambda d: d.unsqueeze(1),
    "diagonal": lambda d: d.diagonal(1),
    "expand": lambda d: d[:1].expand(2, 3, 4),
    "as_strided": lambda d: d.as_strided((2, 2), (1, 2), 1),
    "unbind": lambda d: d.unbind(1)[2],
    "split": lambda d: d.split(2, 1)[1],
    "chunk": lambda d: d.chunk(3, 0)[2],
}


@pytest.mark.parametrize("name", sorted(SHARED_VIEWS))
def test_view_tangent_shares_memory_with_the_input_tangent(name):
    fn = SHARED_VIEWS[name]
    x = fg.tensor(arr(3, 4))
    t = fg.tensor(arr(3, 4))
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        assert tangent_of(dual).data_ptr() == t.data_ptr()
        v = fn(dual)
        tv = tangent_of(v)
        np.testing.assert_allclose(tv.numpy(), fn(t).numpy())
        # the view's tangent is the same view of t: same memory, writes seen
        assert same_tensor(tv, fn(t))
        with fg.no_grad():
            t.add_(1.0)
        np.testing.assert_allclose(tv.numpy(), fn(t).numpy())


def test_view_of_a_view_of_a_dual_shares_the_tangent():
    x = fg.tensor(arr(3, 4))
    t = fg.tensor(arr(3, 4))
    with fwAD.dual_level():
        v = fwAD.make_dual(x, t)[0]
        tv = tangent_of(v)
        assert tv.data_ptr() == t[0].data_ptr()
        w = v[1:3]
        assert tangent_of(w).data_ptr() == t[0, 1].data_ptr()
        tv.mul_(3.0)  # writing through the view's tangent changes t
        np.testing.assert_allclose(t.numpy()[0], tv.numpy())


def test_reshape_that_copies_gives_a_tangent_of_its_own():
    x = fg.tensor(arr(4, 3)).t()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, fg.tensor(arr(3, 4)))
        before = tangent_of(d).numpy().copy()
        y = d.reshape(-1)  # no view can express it: a copy
        assert not y._is_view()
        y.mul_(2.0)
        np.testing.assert_allclose(tangent_of(d).numpy(), before)
        np.testing.assert_allclose(tangent_of(y).numpy(), 2 * before.reshape(-1))


def test_inplace_on_a_view_of_a_dual_updates_the_base_tangent():
    x_np, t_np, w_np, tw_np = arr(4, 3), arr(4, 3), arr(3), arr(3)
    with fwAD.dual_level():
        x = fwAD.make_dual(fg.tensor(x_np), fg.tensor(t_np))
        w = fwAD.make_dual(fg.tensor(w_np), fg.tensor(tw_np))
        b = x * 2.0
        b[1:3].mul_(w)
        b.select(1, 0).add_(w[:1] * w[1:2])
        b_t = tangent_of(b).numpy()
    want = 2.0 * t_np
    want[1:3] = 2.0 * t_np[1:3] * w_np + 2.0 * x_np[1:3] * tw_np
    want[:, 0] += tw_np[0] * w_np[1] + w_np[0] * tw_np[1]
    np.testing.assert_allclose(b_t, want, rtol=1e-12)


def test_inplace_on_a_view_of_a_base_without_tangent():
    w_np, tw_np = arr(2, 3), arr(2, 3)
    with fwAD.dual_level():
        w = fwAD.make_dual(fg.tensor(w_np), fg.tensor(tw_np))
        b = fg.tensor(arr(4, 3))
        b[1:3].add_(w * w)
        b_t = tangent_of(b).numpy().copy()
        b.t()[0].mul_(w[0, 0])
        b_t2 = tangent_of(b).numpy()
    want = np.zeros((4, 3))
    want[1:3] = 2 * w_np * tw_np
    np.testing.assert_allclose(b_t, want, rtol=1e-12)
    b_np = np.array(b.detach().numpy())
    # column 0 was multiplied by w[0, 0]: product rule with the old column
    old0 = b_np[:, 0] / w_np[0, 0]
    want[:, 0] = want[:, 0] * w_np[0, 0] + old0 * tw_np[0, 0]
    np.testing.assert_allclose(b_t2, want, rtol=1e-12)


def test_inplace_on_the_dual_is_seen_by_its_views():
    x, t = fg.tensor(arr(3, 4)), fg.tensor(arr(3, 4))
    t0 = t.numpy().copy()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        v = d[:, 1]
        d.mul_(2.0)
        np.testing.assert_allclose(tangent_of(v).numpy(), 2 * t0[:, 1])
        v.zero_()
        np.testing.assert_allclose(tangent_of(d).numpy()[:, 1], 0.0)
        np.testing.assert_allclose(tangent_of(d).numpy()[:, 0], 2 * t0[:, 0])


def test_forward_over_reverse_of_views_and_indexing():
    # backward formulas run on a dual cotangent: their tangents (the
    # view_scatter / scatter-like nodes) are the same ops on its tangent
    x = fg.tensor(arr(3, 4), requires_grad=True)
    ops = [
        lambda x: x[1:, ::2],
        lambda x: x.select(0, 1),
        lambda x: x.diagonal(),
        lambda x: x[idx(2, 0, 2)],
        lambda x: x.gather(1, fg.tensor([[0, 0], [3, 1], [2, 2]])),
        lambda x: x.scatter(1, fg.tensor([[1], [0], [3]]), x[:, :1] * 2),
        lambda x: x.index_select(1, idx(3, 1)),
    ]
    for op in ops:
        y = op(x)
        v, tv = arr(*y.shape), arr(*y.shape)
        with fwAD.dual_level():
            g = fg.autograd.grad(y, x, fwAD.make_dual(fg.tensor(v), fg.tensor(tv)), retain_graph=True)[0]
            got = tangent_of(g)
        want = fg.autograd.grad(y, x, fg.tensor(tv), retain_graph=True)[0]
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_masked_fill_with_a_dual_value_tensor():
    x_np, t_np = arr(3, 4), arr(3, 4)
    mask = MASK.numpy()
    with fwAD.dual_level():
        x = fwAD.make_dual(fg.tensor(x_np), fg.tensor(t_np))
        v = fwAD.make_dual(fg.tensor(2.0, dtype=fg.float64), fg.tensor(-3.0, dtype=fg.float64))
        got = tangent_of(x.masked_fill(MASK, v)).numpy()
        only_v = tangent_of(fg.tensor(x_np).masked_fill(MASK, v)).numpy()
    np.testing.assert_allclose(got, np.where(mask, -3.0, t_np))
    np.testing.assert_allclose(only_v, np.where(mask, -3.0, 0.0))


def test_cat_stack_with_inputs_without_tangent():
    a_np, ta_np, b_np = arr(2, 3), arr(2, 3), arr(2, 3)
    with fwAD.dual_level():
        a = fwAD.make_dual(fg.tensor(a_np), fg.tensor(ta_np))
        b = fg.tensor(b_np)
        c = tangent_of(fg.cat([b, a, fg.zeros(0)], 1)).numpy()
        s = tangent_of(fg.stack([a, b], 0)).numpy()
    np.testing.assert_allclose(c, np.concatenate([np.zeros((2, 3)), ta_np], 1))
    np.testing.assert_allclose(s, np.stack([ta_np, np.zeros((2, 3))]))


def test_index_ops_with_a_tangent_on_one_value_input_only():
    x_np, s_np, ts_np = arr(3, 4), arr(2, 4), arr(2, 4)
    i = idx(2, 0)
    with fwAD.dual_level():
        s = fwAD.make_dual(fg.tensor(s_np), fg.tensor(ts_np))
        x = fg.tensor(x_np)
        put = tangent_of(x.index_put((i,), s)).numpy()
        add = tangent_of(x.index_add(0, i, s, alpha=2.0)).numpy()
        copy = tangent_of(x.index_copy(0, i, s)).numpy()
        sc = tangent_of(x.scatter(0, fg.tensor([[1, 0, 2, 1]]), s[:1])).numpy()
    want = np.zeros((3, 4))
    want[[2, 0]] = ts_np
    np.testing.assert_allclose(put, want)
    np.testing.assert_allclose(copy, want)
    np.testing.assert_allclose(add, 2 * want)
    want = np.zeros((3, 4))
    want[[1, 0, 2, 1], [0, 1, 2, 3]] = ts_np[0]
    np.testing.assert_allclose(sc, want)


# A batched level (as jacobian(strategy="forward-mode", vectorize=True) opens)
# gives every tangent a leading batch dim: each row must come out as the
# tangent of an unbatched run with that row.
BATCHED = {
    **{f"view_{k}": (f, [(3, 4)]) for k, (f, _) in VIEWS.items()},
    "expand_0dim": (lambda x: x[0, 0].expand(2, 3), [(3, 4)]),
    "permute_neg": (lambda x: x.unsqueeze(0).permute(-1, 0, -2), [(3, 4)]),
    "unbind": (lambda x: x.unbind(1), [(3, 4)]),
    "split": (lambda x: x.split(3, -1), [(3, 4)]),
    "split_sizes": (lambda x: x.split([1, 2], 0), [(3, 4)]),
    "cat": (lambda a, b: fg.cat([a, fg.zeros(0), b * 1], -1), [(3, 4), (3, 2)]),
    "stack": (lambda a, b: fg.stack([a, b], 2), [(3, 4), (3, 4)]),
    "flip": (lambda x: x.flip([0, -1]), [(3, 4)]),
    "roll": (lambda x: x.roll((1, -1), (0, -1)), [(3, 4)]),
    "roll_flat": (lambda x: x.roll(5), [(3, 4)]),
    "repeat": (lambda x: x.repeat(2, 1, 2), [(3, 4)]),
    "tril": (lambda x: x.tril(-1), [(3, 4)]),
    "triu": (lambda x: x.triu(1), [(3, 4)]),
    "diag_1d": (lambda x: x[0].diag(1), [(3, 4)]),
    "diag_embed": (lambda x: x.diag_embed(1, 0, 2), [(3, 4)]),
    "index": (lambda x: x[idx(2, 0, 2)], [(3, 4)]),
    "index_non_adjacent": (lambda x: x.reshape(3, 2, 2)[idx(1, 1), :, idx(0, 1)], [(3, 4)]),
    "index_put": (lambda x, v: x.index_put((idx(2, 0),), v), [(3, 4), (4,)]),
    "index_select": (lambda x: x.index_select(-1, idx(3, 0)), [(3, 4)]),
    "index_select_0dim": (lambda x: x[1, 2].index_select(0, idx(0)), [(3, 4)]),
    "gather": (lambda x: x.gather(1, fg.tensor([[0, 0], [3, 1], [2, 2]])), [(3, 4)]),
    "gather_0dim": (lambda x: x[1, 2].gather(0, fg.tensor(0)), [(3, 4)]),
    "scatter": (lambda x, s: x.scatter(0, fg.tensor([[1, 0, 2]]), s), [(3, 4), (1, 3)]),
    "scatter_value": (lambda x: x.scatter(-1, fg.tensor([[1], [0], [3]]), value=2.0), [(3, 4)]),
    "scatter_add": (lambda x, s: x.scatter_add(1, fg.tensor([[1, 1]] * 3), s), [(3, 4), (3, 2)]),
    "index_add": (lambda x, s: x.index_add(1, idx(1, 1), s, alpha=3.0), [(3, 4), (3, 2)]),
    "index_copy": (lambda x, s: x.index_copy(-1, idx(3, 0), s), [(3, 4), (3, 2)]),
    "index_fill": (lambda x: x.index_fill(0, idx(-1), 2.0), [(3, 4)]),
    "masked_fill": (lambda x: x.masked_fill(MASK[0], 2.0), [(3, 4)]),
    "masked_fill_wide_mask": (lambda x: x[0].masked_fill(MASK, 2.0), [(3, 4)]),
    "masked_fill_tensor": (lambda x, v: x.masked_fill(MASK, v), [(3, 4), ()]),
    "masked_select": (lambda x: x.masked_select(MASK), [(3, 4)]),
    "take": (lambda x: x.take(fg.tensor([[0, 11], [-1, 5]])), [(3, 4)]),
    "put": (lambda x, s: x.put(fg.tensor([0, 7]), s, True), [(3, 4), (2,)]),
}


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_batched_tangents_match_row_by_row(name):
    fn, shapes = BATCHED[name]
    nb = 3
    xs = [arr(*s) for s in shapes]
    ts = [arr(nb, *s) for s in shapes]

    def run(tangents, batch):
        fg._core._enter_dual_level(batch)
        try:
            duals = [fwAD.make_dual(fg.tensor(x), fg.tensor(t)) for x, t in zip(xs, tangents, strict=True)]
            r = fn(*duals)
            outs = [r] if isinstance(r, fg.Tensor) else list(r)
            return [tangent_of(o).numpy().copy() for o in outs]
        finally:
            fwAD.exit_dual_level()

    batched = run(ts, nb)
    for r in range(nb):
        rows = run([t[r] for t in ts], None)
        for k, (b, w) in enumerate(zip(batched, rows, strict=True)):
            np.testing.assert_allclose(b[r], w, rtol=1e-12, err_msg=f"output {k}, row {r}")


@pytest.mark.parametrize("name", ["getitem_int", "transpose", "view", "unbind", "diagonal"])
def test_batched_view_tangent_shares_memory(name):
    fn = SHARED_VIEWS[name]
    x, t = fg.tensor(arr(3, 4)), fg.tensor(arr(2, 3, 4))
    fg._core._enter_dual_level(2)
    try:
        d = fwAD.make_dual(x, t)
        td = tangent_of(d)
        tv = tangent_of(fn(d))
        with fg.no_grad():
            td.add_(1.0)
        for r in range(2):
            np.testing.assert_allclose(tv.numpy()[r], fn(td[r]).numpy())
    finally:
        fwAD.exit_dual_level()


def test_view_scatter_and_alias_ops_have_forward_formulas():
    check_grad(lambda x: sq(x)[0].t(), [arr(2)])
    check_grad(lambda x: fg.dstack([sq(x), x]), [arr(2, 3)])
    check_grad(lambda x: sq(x).chunk(3, 1), [arr(2, 3)])
