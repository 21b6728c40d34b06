"""kron, inner, vdot, cross, diagflat, rot90, combinations, tril/triu_indices,
tensor_split and its directional forms, split_with_sizes, the unsafe_
splits, column_stack/row_stack, take_along_dim, the module forms of Tensor
methods and the small Tensor methods (matrix_power, addmm_, sgn_,
get_device, dim_order, map_/map2_, the random fills): values against NumPy
and itertools, gradients against float64 finite differences, torch's errors."""

from __future__ import annotations

import itertools

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from numpy_oracle import close, t

RNG = np.random.default_rng(1)
A = RNG.standard_normal((3, 4))


# ---------------------------------------------------------------------------
# Products


@pytest.mark.parametrize(("sa", "sb"), [((2, 3), (4, 2)), ((3,), (2, 2)), ((2, 1, 2), (3,)), ((), (2,))])
def test_kron_matches_numpy(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    close(fg.kron(t(a), t(b)), np.kron(a, b))
    close(t(a).kron(t(b)), np.kron(a, b))


def test_inner_matches_numpy():
    b = RNG.standard_normal((2, 5, 4))
    close(fg.inner(t(A), t(b)), np.inner(A, b))
    close(fg.inner(t(2.0), t(A)), 2.0 * A)
    with pytest.raises(RuntimeError, match="last dimension must match"):
        fg.inner(fg.ones(2, 3), fg.ones(4))


def test_vdot_conjugates_the_first():
    a = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    b = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    close(fg.vdot(t(a, fg.complex128), t(b, fg.complex128)), np.vdot(a, b))
    close(fg.vdot(t(a.real), t(b.real)), np.vdot(a.real, b.real))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D"):
        fg.vdot(fg.ones(2, 3), fg.ones(4))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        fg.vdot(fg.ones(3), fg.ones(4))
    with pytest.raises(RuntimeError, match="same dtype, but found Float and Double"):
        fg.vdot(fg.ones(3), fg.ones(3, dtype=fg.float64))


def test_cross_default_dim_warns_and_picks_first_size_3():
    a, b = RNG.standard_normal((3, 2, 3)), RNG.standard_normal((3, 2, 3))
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        got = fg.cross(t(a), t(b))
    close(got, np.cross(a, b, axis=0))
    close(fg.cross(t(a), t(b), dim=2), np.cross(a, b, axis=2))
    with pytest.raises(RuntimeError, match="no dimension of size 3"), pytest.warns(UserWarning):
        fg.cross(fg.ones(2, 4), fg.ones(2, 4))


def test_products_gradcheck():
    a, b = (
        t(RNG.standard_normal((2, 3)), requires_grad=True),
        t(RNG.standard_normal((3, 2)), requires_grad=True),
    )
    assert gradcheck(fg.kron, (a, b))
    assert gradcheck(fg.inner, (a, t(RNG.standard_normal((4, 3)), requires_grad=True)))
    u = t(RNG.standard_normal(3) + 1j * RNG.standard_normal(3), fg.complex128, requires_grad=True)
    v = t(RNG.standard_normal(3) + 1j * RNG.standard_normal(3), fg.complex128, requires_grad=True)
    assert gradcheck(lambda x, y: fg.vdot(x, y).abs(), (u, v))
    c = t(RNG.standard_normal((4, 3)), requires_grad=True)
    assert gradcheck(
        lambda x, y: fg.cross(x, y, dim=1), (c, t(RNG.standard_normal((4, 3)), requires_grad=True))
    )
    assert gradgradcheck(fg.kron, (a, b))


# ---------------------------------------------------------------------------
# diagflat / rot90 / combinations / triangle indices


@pytest.mark.parametrize("offset", [0, 2, -1])
def test_diagflat_matches_numpy(offset):
    close(fg.diagflat(t(A), offset), np.diagflat(A, offset))
    assert gradcheck(lambda x: fg.diagflat(x, offset), (t(A, requires_grad=True),))


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (2, 0), (-1, 1)])
def test_rot90_matches_numpy(k, dims):
    a = RNG.standard_normal((2, 3, 4))
    close(fg.rot90(t(a), k, dims), np.rot90(a, k, dims))
    close(t(a).rot90(k, dims), np.rot90(a, k, dims))


def test_rot90_errors_and_gradcheck():
    with pytest.raises(RuntimeError, match="total rotation dims == 2"):
        fg.rot90(t(A), 1, [0, 1, 2])
    with pytest.raises(RuntimeError, match="total dims >= 2"):
        fg.rot90(fg.ones(3), 1)
    with pytest.raises(RuntimeError, match="rotation dims to be different"):
        fg.rot90(t(A), 1, [0, 0])
    with pytest.raises(IndexError, match="Dimension out of range"):
        fg.rot90(t(A), 1, [0, 2])
    assert gradcheck(lambda x: fg.rot90(x, 3), (t(A, requires_grad=True),))


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_match_itertools(r, with_replacement):
    v = RNG.standard_normal(4)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    got = fg.combinations(t(v), r, with_replacement)
    if r == 0:
        assert got.shape == (0,)
    else:
        close(got, np.array([list(c) for c in pick(v, r)]).reshape(-1, r))


def test_combinations_errors_and_gradcheck():
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        fg.combinations(fg.ones(2, 2))
    with pytest.raises(RuntimeError, match="Expect a non-negative number"):
        fg.combinations(fg.ones(3), r=-1)
    assert gradcheck(lambda x: fg.combinations(x, 2, True), (t(RNG.standard_normal(3), requires_grad=True),))


@pytest.mark.parametrize(
    ("row", "col", "offset"), [(3, 4, 0), (3, 4, 1), (4, 3, -2), (0, 3, 0), (2, 2, 5), (3, 3, -9)]
)
def test_triangle_indices_match_numpy(row, col, offset):
    lo, up = fg.tril_indices(row, col, offset), fg.triu_indices(row, col, offset)
    assert lo.dtype == up.dtype == fg.int64 and lo.shape[0] == up.shape[0] == 2
    assert lo.tolist() == [list(x) for x in np.tril_indices(row, offset, col)]
    assert up.tolist() == [list(x) for x in np.triu_indices(row, offset, col)]


def test_triangle_indices_dtype_and_errors():
    assert fg.tril_indices(3, 3, dtype=fg.int32).dtype == fg.int32
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        fg.tril_indices(-1, 3)
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        fg.triu_indices(3, 3, dtype=fg.float32)


# ---------------------------------------------------------------------------
# Splits and stacks


def _shapes(parts):
    return [tuple(p.shape) for p in parts]


@pytest.mark.parametrize("arg", [3, 1, 8, [1, 5], [1, -2, 9], [5, 2], []])
def test_tensor_split_matches_numpy(arg):
    a = np.arange(14.0).reshape(7, 2)
    got = fg.tensor_split(t(a), arg)
    want = np.array_split(a, arg) if isinstance(arg, int) else np.split(a, arg)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        close(g, w)
    got = t(a).tensor_split(arg, dim=0)
    assert _shapes(got) == [w.shape for w in want]


def test_tensor_split_tensor_argument_and_errors():
    x = fg.arange(7)
    assert _shapes(fg.tensor_split(x, fg.tensor(3))) == [(3,), (2,), (2,)]
    assert _shapes(fg.tensor_split(x, fg.tensor([2, 3]))) == [(2,), (1,), (4,)]
    with pytest.raises(RuntimeError, match="dtype of long, but got Float"):
        fg.tensor_split(x, fg.tensor([3.0]))
    with pytest.raises(RuntimeError, match="zero-dimensional or one-dimensional"):
        fg.tensor_split(x, fg.tensor([[3]]))
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0"):
        fg.tensor_split(x, 0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
        fg.tensor_split(fg.tensor(7), 1)


def test_tensor_split_pieces_are_views_and_differentiable():
    x = fg.zeros(6)
    fg.tensor_split(x, 2)[1].fill_(1.0)
    assert x.tolist() == [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    assert gradcheck(lambda a: fg.tensor_split(a, [1, 3], dim=1), (t(A, requires_grad=True),))


def test_directional_splits_match_numpy():
    a = np.arange(48.0).reshape(2, 4, 6)
    for ours, theirs in [(fg.hsplit, np.hsplit), (fg.vsplit, np.vsplit), (fg.dsplit, np.dsplit)]:
        for arg in (2, [1, 3]):
            got, want = ours(t(a), arg), theirs(a, arg)
            assert len(got) == len(want)
            for g, w in zip(got, want, strict=True):
                close(g, w)
    close(fg.hsplit(fg.arange(4.0), 2)[1], [2.0, 3.0])
    with pytest.raises(RuntimeError, match="not divisible by the split_size 2"):
        fg.hsplit(fg.ones(4, 5), 2)
    with pytest.raises(RuntimeError, match="vsplit requires a tensor with at least 2 dimension"):
        fg.vsplit(fg.ones(5), 1)
    with pytest.raises(RuntimeError, match="dsplit requires a tensor with at least 3 dimension"):
        fg.dsplit(fg.ones(2, 2), 1)


def test_split_with_sizes_and_unsafe_forms():
    x = t(np.arange(10.0).reshape(5, 2))
    assert _shapes(fg.split_with_sizes(x, [2, 3])) == [(2, 2), (3, 2)]
    assert _shapes(x.split_with_sizes([1, 1], 1)) == [(5, 1), (5, 1)]
    with pytest.raises(RuntimeError, match="split_sizes to sum exactly to 5"):
        fg.split_with_sizes(x, [2, 2])
    assert _shapes(fg.unsafe_chunk(x, 2)) == [(3, 2), (2, 2)]
    assert _shapes(fg.unsafe_split(x, 2)) == [(2, 2), (2, 2), (1, 2)]
    assert _shapes(fg.unsafe_split_with_sizes(x, [4, 1])) == [(4, 2), (1, 2)]
    assert all(isinstance(r, tuple) for r in (fg.unsafe_chunk(x, 2), fg.unsafe_split(x, 2)))


def test_column_stack_row_stack_match_numpy():
    a, b, c = np.arange(3.0), np.arange(6.0).reshape(3, 2), np.float64(7.0)
    close(fg.column_stack([t(a), t(b)]), np.column_stack([a, b]))
    close(fg.column_stack([t(c), t(c)]), np.column_stack([c, c]))
    close(fg.row_stack([t(a), t(a)]), np.vstack([a, a]))
    assert gradcheck(
        lambda x, y: fg.column_stack([x, y]), (t(a, requires_grad=True), t(b, requires_grad=True))
    )


def test_take_along_dim_matches_numpy():
    idx = np.argsort(A, axis=1)
    close(fg.take_along_dim(t(A), t(idx, fg.int64), 1), np.take_along_axis(A, idx, 1))
    close(t(A).take_along_dim(t(idx[:, :2], fg.int64), dim=-1), np.take_along_axis(A, idx[:, :2], 1))
    close(fg.take_along_dim(t(A), t([0, 5], fg.int64)), A.ravel()[[0, 5]])
    # Broadcast in the other dims.
    a = RNG.standard_normal((2, 1, 3))
    i = np.zeros((1, 4, 1), dtype=np.int64)
    close(
        fg.take_along_dim(t(a), t(i, fg.int64), 2),
        np.take_along_axis(np.broadcast_to(a, (2, 4, 3)), np.broadcast_to(i, (2, 4, 1)), 2),
    )
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        fg.take_along_dim(t(A), t([0, 2], fg.int64), 1)
    with pytest.raises(RuntimeError, match="dtype of indices should be Long but got Int"):
        fg.take_along_dim(t(A), t(idx, fg.int32), 1)
    assert gradcheck(lambda x: fg.take_along_dim(x, t(idx, fg.int64), 1), (t(A, requires_grad=True),))


# ---------------------------------------------------------------------------
# Module forms of Tensor methods, predicates, Tensor methods


def test_module_forms_of_tensor_methods():
    x = t(A, requires_grad=True)
    y = fg.clone(x)
    assert y.data_ptr() != x.data_ptr() and y.requires_grad
    assert fg.clone(x.t(), memory_format=fg.contiguous_format).is_contiguous()
    assert not fg.detach(x).requires_grad
    close(fg.ravel(x), A.ravel())
    assert fg.is_same_size(x, fg.zeros(3, 4)) and not fg.is_same_size(x, fg.zeros(4, 3))
    assert fg.is_signed(x) and not fg.is_signed(fg.ones(1, dtype=fg.uint8))
    assert not fg.is_inference(x)
    assert fg.get_device(x) == -1 and x.get_device() == -1
    assert fg.is_distributed(x) is False and x.is_distributed() is False


def test_dim_order():
    assert fg.zeros(2, 3, 4).dim_order() == (0, 1, 2)
    assert fg.zeros(2, 3, 4).permute(2, 0, 1).dim_order() == (1, 2, 0)
    assert fg.zeros(2, 3).t().dim_order() == (1, 0)
    with pytest.raises(RuntimeError, match="unique dim order"):
        fg.zeros(1, 1).dim_order(ambiguity_check=True)


def test_matrix_power_addmm_sgn_methods():
    m = RNG.standard_normal((3, 3))
    close(t(m).matrix_power(3), np.linalg.matrix_power(m, 3))
    close(t(m).matrix_power(-2), np.linalg.matrix_power(m, -2))
    x = t(m)
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal((2, 3))
    assert x.addmm_(t(a), t(b), beta=0.5, alpha=2.0) is x
    close(x, 0.5 * m + 2.0 * a @ b)
    with pytest.raises(RuntimeError, match="does not match the size of self"):
        fg.ones(1, dtype=fg.float64).addmm_(t(a), t(b))
    z = t(np.array([3 + 4j, 0j]), fg.complex128)
    z.sgn_()
    close(z, [0.6 + 0.8j, 0j])
    leaf = t(m, requires_grad=True)
    y = leaf * 1.0
    y.addmm_(t(a), t(b), beta=3.0)
    (g,) = fg.autograd.grad(y.sum(), leaf)
    close(g, np.full((3, 3), 3.0))


def test_map_and_map2():
    x = fg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.map_(fg.tensor([10.0, 20.0]), lambda a, b: a + b) is x
    assert x.tolist() == [[11.0, 22.0], [13.0, 24.0]]
    x.map2_(fg.tensor(2.0), fg.tensor([[1.0], [0.0]]), lambda a, b, c: a * b + c)
    assert x.tolist() == [[23.0, 45.0], [26.0, 48.0]]


def test_random_fills_have_their_distributions():
    fg.manual_seed(0)
    n = 20000
    c = fg.empty(n, dtype=fg.float64).cauchy_(1.0, 2.0)
    assert abs(c.median().item() - 1.0) < 0.1
    q = c.quantile(t([0.25, 0.75])).tolist()
    assert abs((q[1] - q[0]) / 2 - 2.0) < 0.15
    g = fg.empty(n).geometric_(0.25)
    assert g.min().item() >= 1 and (g == g.round()).all()
    assert abs(g.mean().item() - 4.0) < 0.15
    ln = fg.empty(n, dtype=fg.float64).log_normal_(0.5, 0.3)
    assert (ln > 0).all()
    logs = ln.log()
    assert abs(logs.mean().item() - 0.5) < 0.02 and abs(logs.std().item() - 0.3) < 0.02
    with pytest.raises(RuntimeError, match="geometric_ expects p"):
        fg.empty(2).geometric_(0.0)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0"):
        fg.empty(2).log_normal_(1.0, 0.0)
