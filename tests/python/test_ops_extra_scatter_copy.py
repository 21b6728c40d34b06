"""put, masked_scatter, scatter_reduce, index_reduce, fill_diagonal_, the
*_scatter functions and the *_copy functions: values against NumPy models
(loops over the index), gradients against float64 finite differences, and
torch's errors for bad input."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from numpy_oracle import close, t

RNG = np.random.default_rng(2)
A = RNG.standard_normal((3, 4))


# ---------------------------------------------------------------------------
# put / masked_scatter


def test_put_module_function():
    want = A.copy().ravel()
    want[[0, -1]] = [9.0, 8.0]
    close(fg.put(t(A), fg.tensor([0, -1]), t([9.0, 8.0])), want.reshape(3, 4))
    want = A.copy().ravel()
    want[1] += 3.0
    close(fg.put(t(A), fg.tensor([1, 1]), t([1.0, 2.0]), accumulate=True), want.reshape(3, 4))


def _masked_scatter_numpy(a, mask, src):
    a, mask = np.broadcast_arrays(a, mask)
    out = a.copy()
    out[mask] = src.ravel()[: mask.sum()]
    return out


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (1, 4), (3, 1)])
def test_masked_scatter_matches_numpy(mask_shape):
    mask = RNG.random(mask_shape) < 0.5
    src = RNG.standard_normal(20)
    close(fg.masked_scatter(t(A), t(mask, fg.bool), t(src)), _masked_scatter_numpy(A, mask, src))
    x = t(A)
    assert x.masked_scatter_(t(mask, fg.bool), t(src)) is x
    close(x, _masked_scatter_numpy(A, mask, src))


def test_masked_scatter_broadcasts_input_out_of_place_only():
    mask = np.array([[True, False, True]])
    got = fg.masked_scatter(fg.zeros(3, dtype=fg.float64), t(mask, fg.bool), t(np.arange(5.0)))
    close(got, [[0.0, 0.0, 1.0]])
    with pytest.raises(RuntimeError):
        fg.zeros(3).masked_scatter_(t(mask, fg.bool), fg.arange(5.0))


def test_masked_scatter_errors():
    with pytest.raises(RuntimeError, match="only supports boolean masks, but got mask with dtype Byte"):
        fg.masked_scatter(fg.zeros(3), fg.tensor([1, 0, 1], dtype=fg.uint8), fg.arange(3.0))
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in mask"):
        fg.masked_scatter(fg.zeros(3), fg.ones(3, dtype=fg.bool), fg.arange(2.0))
    with pytest.raises(RuntimeError, match="same dtypes but gotFloat and Long"):
        fg.masked_scatter(fg.zeros(3), fg.ones(3, dtype=fg.bool), fg.arange(3))


def test_masked_scatter_gradcheck():
    mask = t(RNG.random((3, 4)) < 0.5, fg.bool)
    x, s = t(A, requires_grad=True), t(RNG.standard_normal(15), requires_grad=True)
    assert gradcheck(lambda a, b: fg.masked_scatter(a, mask, b), (x, s))


# ---------------------------------------------------------------------------
# scatter_reduce / index_reduce

REDUCE = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _scatter_reduce_numpy(a, dim, index, src, reduce, include_self):
    out = a.copy()
    acc: dict[tuple[int, ...], list] = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        acc.setdefault(tuple(target), []).append(src[pos])
    for target, values in acc.items():
        values = ([a[target]] if include_self else []) + values
        if reduce == "mean":
            total = np.sum(values)
            out[target] = total / len(values) if a.dtype.kind == "f" else np.floor_divide(total, len(values))
        else:
            out[target] = REDUCE[reduce].reduce(np.array(values))
    return out


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_reduce_matches_numpy(reduce, include_self, dim):
    index = RNG.integers(0, A.shape[dim], (2, 3))
    src = RNG.standard_normal((3, 4))
    want = _scatter_reduce_numpy(A, dim, index, src, reduce, include_self)
    got = fg.scatter_reduce(t(A), dim, t(index, fg.int64), t(src), reduce, include_self=include_self)
    close(got, want)
    x = t(A)
    assert x.scatter_reduce_(dim, t(index, fg.int64), t(src), reduce, include_self=include_self) is x
    close(x, want)
    # Integers: mean rounds down.
    ai, si = RNG.integers(-5, 5, (3, 4)), RNG.integers(-5, 5, (3, 4))
    want = _scatter_reduce_numpy(ai, dim, index, si, reduce, include_self)
    got = t(ai, fg.int64).scatter_reduce(
        dim, t(index, fg.int64), t(si, fg.int64), reduce, include_self=include_self
    )
    assert got.dtype == fg.int64 and got.tolist() == want.tolist()


def test_scatter_reduce_errors():
    x, s = fg.ones(3), fg.ones(2)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin"):
        x.scatter_reduce(0, fg.tensor([0, 1]), s, "max")
    with pytest.raises(RuntimeError, match="Expected dtype int64 for index"):
        x.scatter_reduce(0, fg.tensor([0, 1], dtype=fg.int32), s, "sum")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_reduce(0, fg.tensor([0, 1]), fg.ones(2, dtype=fg.float64), "sum")
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x.scatter_reduce(0, fg.tensor([5]), s, "sum")
    with pytest.raises(RuntimeError, match="index -1 is out of bounds"):
        x.scatter_reduce(0, fg.tensor([-1]), s, "sum")
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.scatter_reduce(0, fg.tensor([[0]]), s, "sum")


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradcheck(reduce, include_self):
    index = t([[0, 2, 1, 0], [2, 2, 0, 1]], fg.int64)
    x, s = t(A, requires_grad=True), t(RNG.standard_normal((2, 4)), requires_grad=True)
    assert gradcheck(lambda a, b: a.scatter_reduce(0, index, b, reduce, include_self=include_self), (x, s))
    if reduce in ("sum", "mean", "prod"):
        assert gradgradcheck(
            lambda a, b: a.scatter_reduce(0, index, b, reduce, include_self=include_self), (x, s)
        )


def test_scatter_reduce_amax_ties_share_the_gradient_evenly():
    a = t([1.0, 2.0, 2.0], requires_grad=True)
    s = t([2.0, 2.0, 0.5], requires_grad=True)
    out = fg.scatter_reduce(a, 0, fg.tensor([1, 1, 0]), s, "amax")
    ga, gs = fg.autograd.grad(out.sum(), (a, s))
    close(ga, [1.0, 1 / 3, 1.0])
    close(gs, [1 / 3, 1 / 3, 0.0])


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_numpy(reduce, include_self):
    index = np.array([0, 2, 0])
    src = RNG.standard_normal((3, 3))
    spread = np.broadcast_to(index, (3, 3))
    want = _scatter_reduce_numpy(A, 1, spread, src, reduce, include_self)
    got = fg.index_reduce(t(A), 1, t(index, fg.int64), t(src), reduce, include_self=include_self)
    close(got, want)
    x = t(A)
    x.index_reduce_(1, t(index, fg.int64), t(src), reduce, include_self=include_self)
    close(x, want)
    xg, sg = t(A, requires_grad=True), t(src, requires_grad=True)
    idx = t(index, fg.int64)
    assert gradcheck(lambda a, b: a.index_reduce(1, idx, b, reduce, include_self=include_self), (xg, sg))


def test_index_reduce_errors():
    x = fg.ones(3, 2)
    with pytest.raises(
        RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin but got sum"
    ):
        x.index_reduce(0, fg.tensor([0]), fg.ones(1, 2), "sum")
    with pytest.raises(RuntimeError, match="Index is supposed to be a vector"):
        x.index_reduce(0, fg.tensor([[0]]), fg.ones(1, 2), "amax")
    with pytest.raises(RuntimeError, match="source tensor shape must match self tensor shape"):
        x.index_reduce(0, fg.tensor([0]), fg.ones(1, 3), "amax")
    with pytest.raises(
        RuntimeError, match="Number of indices \\(3\\) should be equal to source.size\\(dim\\)"
    ):
        x.index_reduce(0, fg.tensor([0, 0, 1]), fg.ones(2, 2), "prod")


# ---------------------------------------------------------------------------
# fill_diagonal_


@pytest.mark.parametrize(("shape", "wrap"), [((5, 3), True), ((5, 3), False), ((3, 5), True), ((7, 2), True)])
def test_fill_diagonal_matches_numpy(shape, wrap):
    want = np.zeros(shape)
    np.fill_diagonal(want, 2.0, wrap=wrap)
    x = fg.zeros(*shape, dtype=fg.float64)
    assert x.fill_diagonal_(2.0, wrap=wrap) is x
    close(x, want)


def test_fill_diagonal_of_a_cube_and_errors():
    want = np.zeros((3, 3, 3))
    np.fill_diagonal(want, 1.0)
    close(fg.zeros(3, 3, 3, dtype=fg.float64).fill_diagonal_(1.0), want)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        fg.zeros(2, 2, 3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        fg.zeros(3).fill_diagonal_(1)


def test_fill_diagonal_gradient_is_zero_on_the_diagonal():
    leaf = t(A, requires_grad=True)
    y = leaf * 1.0
    y.fill_diagonal_(0.0)
    (g,) = fg.autograd.grad(y.sum(), leaf)
    want = np.ones((3, 4))
    np.fill_diagonal(want, 0.0)
    close(g, want)


# ---------------------------------------------------------------------------
# *_scatter


def test_scatter_functions_match_numpy():
    s = RNG.standard_normal(4)
    want = A.copy()
    want[-1] = s
    close(fg.select_scatter(t(A), t(s), 0, -1), want)
    s = RNG.standard_normal((3, 2))
    want = A.copy()
    want[:, 1::2] = s
    close(fg.slice_scatter(t(A), t(s), 1, 1, None, 2), want)
    want = A.copy()
    want[:, -3:-1] = s
    close(t(A).slice_scatter(t(s), 1, -3, -1), want)
    s = RNG.standard_normal(2)
    want = A.copy()
    want[[0, 1], [2, 3]] = s
    close(fg.diagonal_scatter(t(A), t(s), 2), want)
    want = A.copy().ravel()
    want[[0, 5]] = s
    close(t(A).as_strided_scatter(t(s), (2,), (5,)), want.reshape(3, 4))


def test_as_strided_scatter_keeps_the_input_strides():
    # The copy of a transposed input is laid out like the input's memory.
    base = np.arange(6.0).reshape(2, 3)
    got = fg.as_strided_scatter(t(base).t(), fg.ones(2, dtype=fg.float64), (2,), (2,), 1)
    memory = base.ravel().copy()
    memory[[1, 3]] = 1.0
    close(got, memory.reshape(2, 3).T)


def test_scatter_functions_check_the_src_shape():
    with pytest.raises(RuntimeError, match="src size = \\[2\\], slice size = \\[4\\]"):
        fg.select_scatter(t(A), fg.ones(2, dtype=fg.float64), 0, 0)
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice"):
        fg.diagonal_scatter(t(A), fg.ones(4, dtype=fg.float64))
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice"):
        fg.slice_scatter(t(A), fg.ones(1, 4, dtype=fg.float64), 0, 0, 2)


def test_scatter_functions_gradcheck():
    x = t(A, requires_grad=True)
    cases = [
        (lambda a, s: fg.select_scatter(a, s, 1, 2), (3,)),
        (lambda a, s: fg.slice_scatter(a, s, 1, 0, None, 2), (3, 2)),
        (lambda a, s: fg.diagonal_scatter(a, s, -1), (2,)),
        (lambda a, s: fg.as_strided_scatter(a, s, (2, 2), (1, 4), 1), (2, 2)),
    ]
    for fn, shape in cases:
        s = t(RNG.standard_normal(shape), requires_grad=True)
        assert gradcheck(fn, (x, s))
        assert gradgradcheck(fn, (x, s))


# ---------------------------------------------------------------------------
# *_copy

B = RNG.standard_normal((2, 3, 4))
COPIES = [
    ("alias_copy", (), lambda a: a),
    (
        "as_strided_copy",
        ((2, 2), (1, 2), 1),
        lambda a: np.lib.stride_tricks.as_strided(a.ravel()[1:], (2, 2), (8, 16)),
    ),
    ("detach_copy", (), lambda a: a),
    ("diagonal_copy", (1, 1, 2), lambda a: np.diagonal(a, 1, 1, 2)),
    ("expand_copy", ((5, 2, 3, 4),), lambda a: np.broadcast_to(a, (5, 2, 3, 4))),
    ("narrow_copy", (2, 1, 2), lambda a: a[:, :, 1:3]),
    ("permute_copy", ((2, 0, 1),), lambda a: a.transpose(2, 0, 1)),
    ("select_copy", (1, -1), lambda a: a[:, -1]),
    ("slice_copy", (2, 0, 4, 2), lambda a: a[:, :, 0:4:2]),
    ("squeeze_copy", (), lambda a: a),
    ("transpose_copy", (0, 2), lambda a: a.swapaxes(0, 2)),
    ("unfold_copy", (2, 2, 1), lambda a: np.lib.stride_tricks.sliding_window_view(a, 2, axis=2)),
    ("unfold_copy", (1, 2, 2), lambda a: np.lib.stride_tricks.sliding_window_view(a, 2, axis=1)[:, ::2]),
    ("unsqueeze_copy", (1,), lambda a: a[:, None]),
    ("view_copy", ((6, 4),), lambda a: a.reshape(6, 4)),
]


@pytest.mark.parametrize(("name", "args", "ref"), COPIES, ids=[f"{c[0]}{c[1]}" for c in COPIES])
def test_copy_functions_match_numpy_and_own_their_memory(name, args, ref):
    x = t(B, requires_grad=True)
    got = getattr(fg, name)(x, *args)
    close(got, ref(B))
    assert got.is_contiguous()
    if got.numel():
        assert not (x.data_ptr() <= got.data_ptr() < x.data_ptr() + 8 * x.numel())
    if name != "detach_copy":
        assert gradcheck(lambda a: getattr(fg, name)(a, *args), (t(B, requires_grad=True),))
    else:
        assert not got.requires_grad


def test_list_copy_functions():
    x = t(B)
    for name, args, want in [
        ("split_copy", (2, 2), np.split(B, [2], axis=2)),
        ("split_with_sizes_copy", ([1, 3], 2), np.split(B, [1], axis=2)),
        ("unbind_copy", (1,), [B[:, i] for i in range(3)]),
    ]:
        got = getattr(fg, name)(x, *args)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            close(g, w)
            assert g.is_contiguous()


def test_small_copy_functions():
    m = t(A)
    close(fg.t_copy(m), A.T)
    close(fg.squeeze_copy(fg.zeros(1, 2, 1), (0, 2)), np.zeros(2))
    close(fg.squeeze_copy(fg.zeros(1, 2, 1), 2), np.zeros((1, 2)))
    close(fg.view_copy(m, fg.float64), A)
    with pytest.raises(TypeError, match="between different dtypes"):
        fg.view_copy(m, fg.float32)
    c = RNG.standard_normal((3, 2))
    close(fg.view_as_real_copy(fg.view_as_complex_copy(t(c))), c)
    close(m.narrow_copy(0, 1, 2), A[1:3])
    close(fg.unfold_copy(fg.tensor(5.0), 0, 1, 1), [5.0])
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 3 but size is 4"):
        fg.unfold_copy(fg.arange(3.0), 0, 4, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        fg.unfold_copy(fg.arange(3.0), 0, 2, 0)
