"""Gradients of reductions, scans, softmax-family and linear-algebra ops.

First- and second-order gradients are checked against float64 central finite
differences (``check_grad``) on contiguous, transposed and sliced inputs;
subgradient points (zeros of prod/cumprod, ties of max, zero norms and
variances) against hand-derived values.
"""

from __future__ import annotations

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import numpy as np
import pytest
from gradcheck_util import check_grad, make_leaf

RNG = np.random.default_rng(1234)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def distinct(*shape: int) -> np.ndarray:
    """Values with clear gaps (no near-ties), shuffled."""
    n = int(np.prod(shape))
    return (RNG.permutation(n) * 0.7 - n * 0.3).reshape(shape)


def well_conditioned(*shape: int) -> np.ndarray:
    n = shape[-1]
    return rand(*shape) * 0.3 + 2.0 * np.eye(n)


def grad_of(fn, a: np.ndarray, dtype=fg.float64) -> np.ndarray:
    x = fg.tensor(a, dtype=dtype, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


# ---------------------------------------------------------------- reductions


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.mean(),
        lambda x: x.mean(dim=1),
        lambda x: x.mean(dim=(-1, 0), keepdim=True),
        lambda x: x.mean(dim=-2, keepdim=True),
    ],
)
def test_mean(fn):
    check_grad(fn, [rand(3, 4)])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(),
        lambda x: x.sum(1),
        lambda x: x.sum((0, -1), keepdim=True),
        lambda x: x.sum(dim=-2),
    ],
)
def test_sum(fn):
    check_grad(fn, [rand(3, 4)])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(),
        lambda x: x.mean(0),
        lambda x: x.prod(),
        lambda x: x.amax(),
        lambda x: x.max(0).values,
        lambda x: x.cumsum(0),
        lambda x: x.cumprod(-1),
        lambda x: x.softmax(0) + x.log_softmax(-1),
        lambda x: x.logsumexp(0),
        lambda x: x.norm(p=3.0),
    ],
)
def test_zero_dim_inputs(fn):
    check_grad(fn, [np.array(0.7)])


def test_aminmax():
    check_grad(lambda x: fg.aminmax(x, dim=1), [distinct(3, 4)])
    check_grad(lambda x: fg.aminmax(x), [distinct(3, 4)])


def test_mean_node_names():
    x = fg.ones(2, 3, requires_grad=True)
    assert x.mean().grad_fn.name() == "MeanBackward0"
    assert x.mean(1).grad_fn.name() == "MeanBackward1"


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.prod(),
        lambda x: x.prod(1),
        lambda x: x.prod(-1, keepdim=True),
        lambda x: x.prod(0),
    ],
)
def test_prod(fn):
    check_grad(fn, [rand(3, 4) + 0.5])


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (1, 2)], [(0, 1), (0, 3)], [(0, 0), (0, 1), (0, 2)]])
def test_prod_with_zeros_second_order(zeros):
    a = rand(2, 4) + 0.5
    for z in zeros:
        a[z] = 0.0
    check_grad(lambda x: x.prod(1), [a])
    check_grad(lambda x: x.prod(), [a])


def test_prod_with_zeros_hand_derived():
    # d/dx_i prod(x) = prod_{j != i} x_j
    a = np.array([2.0, 0.0, 3.0, 4.0])
    np.testing.assert_array_equal(grad_of(lambda x: x.prod(), a), [0.0, 24.0, 0.0, 0.0])
    b = np.array([[2.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(
        grad_of(lambda x: x.prod(1), b), [[0.0, 0.0, 0.0], [6.0, 3.0, 2.0]]
    )
    g = grad_of(lambda x: x.prod(), np.zeros(3))
    assert np.isfinite(g).all() and (g == 0).all()


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.amax(),
        lambda x: x.amax(1),
        lambda x: x.amin(dim=(0, -1), keepdim=True),
        lambda x: x.amin(-2),
        lambda x: x.max(),
        lambda x: x.min(),
        lambda x: x.max(1).values,
        lambda x: x.min(-1, keepdim=True)[0],
        lambda x: x.max(dim=0)[0],
    ],
)
def test_max_family(fn):
    check_grad(fn, [distinct(3, 4)])


def test_max_ties_hand_derived():
    a = np.array([[1.0, 3.0, 3.0], [5.0, 5.0, 5.0]])
    np.testing.assert_allclose(
        grad_of(lambda x: x.amax(1), a), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]
    )
    np.testing.assert_allclose(grad_of(lambda x: x.max(), a), [[0, 0, 0], [1 / 3] * 3])
    b = np.array([[1.0, 3.0, 3.0], [1.0, 2.0, 5.0]])
    np.testing.assert_allclose(grad_of(lambda x: x.amin(0), b), [[0.5, 0, 1], [0.5, 1, 0]])
    # max(dim): the whole gradient goes to the returned (first) index.
    np.testing.assert_allclose(grad_of(lambda x: x.max(1).values, a), [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(grad_of(lambda x: x.min(1).values, a), [[1, 0, 0], [1, 0, 0]])


def test_max_node_names_and_indices():
    x = fg.tensor([[1.0, 2.0], [3.0, 0.0]], requires_grad=True)
    assert x.max().grad_fn.name() == "MaxBackward1"
    v, i = x.max(1)
    assert v.grad_fn.name() == "MaxBackward0"
    assert not i.requires_grad
    assert x.amax(0).grad_fn.name() == "AmaxBackward0"
    assert x.amin(0).grad_fn.name() == "AminBackward0"
    for r in (x.argmax(), x.argmin(1), x.all(), x.any(0), x.count_nonzero()):
        assert not r.requires_grad and r.grad_fn is None


@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize(
    "kw",
    [{}, {"dim": 1}, {"dim": (0, -1), "keepdim": True}, {"dim": -2, "correction": 0}, {"correction": 2}],
)
def test_var_std(op, kw):
    check_grad(lambda x: getattr(x, op)(**kw), [rand(3, 4)])


def test_var_mean_std_mean():
    check_grad(lambda x: fg.var_mean(x, 1), [rand(3, 4)])
    check_grad(lambda x: fg.std_mean(x, dim=0, keepdim=True), [rand(3, 4)])


def test_std_zero_variance_matches_torch():
    # torch masks 1 / (2 std) to 0 where std == 0.
    x = fg.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], requires_grad=True)
    x.std(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0], [-0.5, 0, 0.5]])
    y = fg.tensor([1.0, 1.0], requires_grad=True)
    y.var().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 0.0])


# ------------------------------------------------------------------- norms


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.norm(),
        lambda x: x.norm(p=1, dim=1),
        lambda x: x.norm(p=3.0, dim=-1, keepdim=True),
        lambda x: x.norm(p=float("inf"), dim=0),
        lambda x: fg.linalg.vector_norm(x, ord=-float("inf"), dim=(0, 1)),
        lambda x: fg.linalg.vector_norm(x, ord=1.5),
        lambda x: x.norm(p="fro"),
        lambda x: fg.linalg.norm(x),
        lambda x: fg.linalg.matrix_norm(x),
        lambda x: fg.linalg.matrix_norm(x, ord=1),
        lambda x: fg.linalg.matrix_norm(x, ord=float("inf")),
        lambda x: fg.linalg.matrix_norm(x, ord=-1),
        lambda x: fg.linalg.matrix_norm(x, ord=-float("inf"), keepdim=True),
        lambda x: fg.linalg.matrix_norm(x, ord=2),
        lambda x: fg.linalg.matrix_norm(x, ord=-2, keepdim=True),
        lambda x: fg.linalg.matrix_norm(x, ord="nuc"),
        lambda x: fg.linalg.norm(x, "nuc"),
        lambda x: x.norm(p="nuc"),
        lambda x: x.norm(p=0, dim=1),
        lambda x: x.norm(p=-2.5, dim=0),
    ],
)
def test_norms(fn):
    check_grad(fn, [distinct(3, 4) + 0.35])


def test_norm_subgradients_at_zero():
    z = np.zeros((2, 3))
    np.testing.assert_array_equal(grad_of(lambda x: x.norm(dim=1), z), z)
    np.testing.assert_array_equal(grad_of(lambda x: x.norm(p=3.0), z), z)
    np.testing.assert_array_equal(grad_of(lambda x: x.norm(p=1), z), z)
    a = np.array([1.0, -3.0, 3.0])
    np.testing.assert_allclose(grad_of(lambda x: x.norm(p=float("inf")), a), [0, -0.5, 0.5])
    np.testing.assert_array_equal(grad_of(lambda x: x.norm(p=0), a), [0, 0, 0])


@pytest.mark.parametrize("p", [0.5, 1.5, 3.0, -2.0])
def test_p_norm_gradient_is_zero_at_a_zero_element(p):
    # d||x||_p / dx_i = sign(x_i) |x_i|^(p-1) / ||x||_p^(p-1): 0 at x_i = 0
    # for p > 1 (where central differences agree), and torch's subgradient
    # 0 for p < 1 (|x_i|^(p-1) is infinite there), never NaN.
    a = np.array([0.0, -1.25, 2.0, 0.0])
    got = grad_of(lambda x: fg.linalg.vector_norm(x, ord=p), a)
    assert np.isfinite(got).all()
    if p > 0:
        n = (np.abs(a) ** p).sum() ** (1 / p)
        nz = a != 0
        want = np.zeros_like(a)
        want[nz] = np.sign(a[nz]) * np.abs(a[nz]) ** (p - 1) / n ** (p - 1)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    if p > 1:
        eps = 1e-6
        for i in range(a.size):
            d = np.zeros_like(a)
            d[i] = eps
            fd = ((np.abs(a + d) ** p).sum() ** (1 / p) - (np.abs(a - d) ** p).sum() ** (1 / p)) / (2 * eps)
            assert abs(got[i] - fd) < 1e-6
        # The gradient's own derivative is finite too.
        x = fg.tensor(a, requires_grad=True)
        (g,) = fg.autograd.grad(fg.linalg.vector_norm(x, ord=p), x, create_graph=True)
        (h,) = fg.autograd.grad(g.sum(), x)
        assert np.isfinite(h.numpy()).all()


# --------------------------------------------------- softmax family, scans


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.logsumexp(1),
        lambda x: x.logsumexp((0, -1), keepdim=True),
        lambda x: x.softmax(-1),
        lambda x: x.softmax(0),
        lambda x: x.log_softmax(1),
        lambda x: fg.log_softmax(x, -2),
        lambda x: x.cumsum(1),
        lambda x: x.cumsum(-2),
        lambda x: x.cumprod(1),
        lambda x: x.cumprod(-2),
    ],
)
def test_softmax_family_and_scans(fn):
    check_grad(fn, [rand(3, 4) * 0.5 + np.sign(rand(3, 4))])


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 0), (1, 3)], [(2, 2)]])
def test_cumprod_with_one_zero_per_line(zeros):
    a = rand(3, 4) + 0.5
    for z in zeros:
        a[z] = 0.0
    check_grad(lambda x: x.cumprod(1), [a])


def test_cumprod_with_zeros_hand_derived():
    # d/dx_k sum_i cumprod_i = sum_{i >= k} prod_{j <= i, j != k} x_j
    a = np.array([2.0, 0.0, 3.0, 0.0, 5.0])
    want = np.zeros(5)
    for k in range(5):
        for i in range(k, 5):
            want[k] += np.prod([a[j] for j in range(i + 1) if j != k])
    got = grad_of(lambda x: x.cumprod(0), a)
    np.testing.assert_allclose(got, want)
    assert np.isfinite(got).all()
    check_grad(lambda x: x.cumprod(0), [a], second_order=False)


def test_scan_node_names():
    x = fg.ones(2, 3, requires_grad=True)
    names = {
        "CumsumBackward0": x.cumsum(1),
        "CumprodBackward0": x.cumprod(1),
        "SoftmaxBackward0": x.softmax(1),
        "LogSoftmaxBackward0": x.log_softmax(1),
        "LogsumexpBackward0": x.logsumexp(1),
        "ProdBackward1": x.prod(1),
        "VarBackward0": x.var(1),
        "StdBackward0": x.std(),
        "LinalgVectorNormBackward0": x.norm(),
    }
    for name, y in names.items():
        assert y.grad_fn.name() == name


# ------------------------------------------------------------ linear algebra


@pytest.mark.parametrize(
    "sa, sb",
    [
        ((4,), (4,)),
        ((3, 4), (4,)),
        ((4,), (4, 3)),
        ((3, 4), (4, 2)),
        ((2, 3, 2), (2, 3)),
        ((3, 2), (2, 2, 3)),
        ((2, 1, 2, 3), (2, 3, 2)),
        ((3,), (2, 3, 2)),
        ((2, 2, 3), (3,)),
    ],
)
def test_matmul_cases(sa, sb):
    check_grad(lambda a, b: a.matmul(b), [rand(*sa), rand(*sb)])


def test_matmul_node_names():
    v, m, b = (fg.ones(3, requires_grad=True), fg.ones(3, 3, requires_grad=True),
               fg.ones(2, 3, 3, requires_grad=True))
    assert (v @ v).grad_fn.name() == "DotBackward0"
    assert (m @ v).grad_fn.name() == "MvBackward0"
    assert (m @ m).grad_fn.name() == "MmBackward0"
    assert (b @ m).grad_fn.name() == "BmmBackward0"
    assert m.trace().grad_fn.name() == "TraceBackward0"
    assert fg.addmm(m, m, m).grad_fn.name() == "AddmmBackward0"


def test_mm_bmm_mv_dot_outer():
    check_grad(lambda a, b: a.mm(b), [rand(3, 2), rand(2, 4)])
    check_grad(lambda a, b: a.bmm(b), [rand(2, 3, 2), rand(2, 2, 2)])
    check_grad(lambda a, b: a.mv(b), [rand(3, 4), rand(4)])
    check_grad(lambda a, b: a.dot(b), [rand(5), rand(5)])
    check_grad(lambda a, b: fg.outer(a, b), [rand(3), rand(4)])


@pytest.mark.parametrize(
    "self_shape, beta, alpha",
    [((3, 4), 1.0, 1.0), ((4,), 0.5, 2.0), ((3, 1), 0.0, -1.5)],
)
def test_addmm(self_shape, beta, alpha):
    check_grad(
        lambda s, a, b: fg.addmm(s, a, b, beta=beta, alpha=alpha),
        [rand(*self_shape), rand(3, 2), rand(2, 4)],
    )


def test_trace():
    check_grad(lambda x: x.trace(), [rand(3, 4)])
    np.testing.assert_array_equal(grad_of(lambda x: x.trace(), rand(2, 3)), np.eye(2, 3))


@pytest.mark.parametrize(
    "eq, shapes",
    [
        ("ij,jk->ik", [(2, 3), (3, 2)]),
        ("ij,jk", [(2, 3), (3, 2)]),
        ("ii->", [(3, 3)]),
        ("ii->i", [(3, 3)]),
        ("ij->", [(3, 4)]),
        ("i,i->", [(4,), (4,)]),
        ("i,j->ij", [(3,), (4,)]),
        ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
        ("...ij,jk->...ik", [(2, 2, 3), (3, 2)]),
        ("ij,j->i", [(3, 4), (1,)]),
        ("ijk,ik->j", [(2, 3, 2), (2, 2)]),
        ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ],
)
def test_einsum(eq, shapes):
    check_grad(lambda *xs: fg.einsum(eq, *xs), [rand(*s) for s in shapes])


def test_inv_det_solve():
    check_grad(lambda a: fg.linalg.inv(a), [well_conditioned(3, 3)])
    check_grad(lambda a: fg.linalg.inv(a), [well_conditioned(2, 2, 2)])
    check_grad(lambda a: fg.linalg.det(a), [well_conditioned(3, 3)])
    check_grad(lambda a: fg.linalg.det(a), [well_conditioned(3, 2, 2)])


@pytest.mark.parametrize(
    "sa, sb",
    [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 2, 2), (2, 2)), ((2, 2, 2), (1, 2, 3)), ((2, 2), (3, 2, 1))],
)
def test_solve(sa, sb):
    check_grad(lambda a, b: fg.linalg.solve(a, b), [well_conditioned(*sa), rand(*sb)])


def test_linalg_node_names():
    a = fg.tensor(well_conditioned(2, 2), requires_grad=True)
    assert fg.linalg.inv(a).grad_fn.name() == "LinalgInvExBackward0"
    assert fg.linalg.det(a).grad_fn.name() == "LinalgDetBackward0"
    assert fg.linalg.solve(a, a).grad_fn.name() == "LinalgSolveExBackward0"


# ------------------------------------------------------------------- dtypes


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda x: x.mean(1), [(2, 3)]),
        (lambda x: x.prod(), [(2, 3)]),
        (lambda x: x.amax(0), [(2, 3)]),
        (lambda x: x.std(1), [(2, 3)]),
        (lambda x: x.norm(), [(2, 3)]),
        (lambda x: x.softmax(1), [(2, 3)]),
        (lambda x: x.cumprod(1), [(2, 3)]),
        (lambda x: x.logsumexp(1), [(2, 3)]),
        (lambda a, b: a @ b, [(2, 3), (3, 2)]),
        (lambda a, b: fg.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
        (lambda a: fg.linalg.inv(a), [(2, 2)]),
    ],
)
def test_float32_inputs_give_float32_grads(fn, shapes):
    arrays = [rand(*s) + 2.0 * (np.eye(*s) if len(s) == 2 and s[0] == s[1] else 0) for s in shapes]
    xs64 = [make_leaf(a, "contiguous") for a in arrays]
    xs32 = [fg.tensor(a, dtype=fg.float32, requires_grad=True) for a in arrays]
    fn(*xs64).sum().backward()
    fn(*xs32).sum().backward()
    for x32, x64 in zip(xs32, xs64, strict=True):
        assert x32.grad.dtype == fg.float32
        np.testing.assert_allclose(x32.grad.numpy(), x64.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_softmax_dtype_argument_grad_dtype():
    x = fg.tensor(rand(2, 3), dtype=fg.float32, requires_grad=True)
    y = x.softmax(1, dtype=fg.float64)
    assert y.dtype == fg.float64
    (y * fg.tensor(rand(2, 3))).sum().backward()
    assert x.grad.dtype == fg.float32


def test_no_grad_matmul_records_nothing():
    a = fg.ones(3, 3, requires_grad=True)
    with fg.no_grad():
        assert (a @ a).grad_fn is None


# ------------------------------------------------------ batched forward mode


def _tangent_or_zeros(out: fg.Tensor, shape: tuple[int, ...]) -> np.ndarray:
    tan = fwAD.unpack_dual(out).tangent
    return np.zeros(shape) if tan is None else tan.numpy()


def batched_tangent(fn, arrays, tangents) -> np.ndarray:
    """The output tangent of ``fn`` in one batched level, where
    ``tangents[i]`` (``None``: no tangent) has a leading batch dim."""
    b = next(t for t in tangents if t is not None).shape[0]
    fg._core._enter_dual_level(batch=b)
    try:
        xs = [
            fg.tensor(a) if t is None else fwAD.make_dual(fg.tensor(a), fg.tensor(t))
            for a, t in zip(arrays, tangents, strict=True)
        ]
        out = fn(*xs)
        return _tangent_or_zeros(out, (b, *out.shape))
    finally:
        fwAD.exit_dual_level()


def row_tangents(fn, arrays, tangents) -> np.ndarray:
    """The same tangents from one unbatched level per row."""
    b = next(t for t in tangents if t is not None).shape[0]
    rows = []
    for r in range(b):
        with fwAD.dual_level():
            xs = [
                fg.tensor(a) if t is None else fwAD.make_dual(fg.tensor(a), fg.tensor(t[r]))
                for a, t in zip(arrays, tangents, strict=True)
            ]
            out = fn(*xs)
            rows.append(_tangent_or_zeros(out, tuple(out.shape)))
    return np.stack(rows)


BATCHED_FWD = {
    "mv": (lambda w, x: w.mv(x), [(3, 4), (4,)]),
    "mv_tanh": (lambda w, x: (w @ x).tanh(), [(5, 6), (6,)]),
    "mm": (lambda a, b: a.mm(b), [(3, 2), (2, 4)]),
    "dot": (lambda a, b: a.dot(b), [(5,), (5,)]),
    "bmm": (lambda a, b: a.bmm(b), [(2, 3, 2), (2, 2, 4)]),
    "matmul_vm": (lambda a, b: a @ b, [(3,), (3, 4)]),
    "matmul_3d_2d": (lambda a, b: a @ b, [(2, 3, 2), (2, 3)]),
    "matmul_2d_3d": (lambda a, b: a @ b, [(3, 2), (2, 2, 3)]),
    "matmul_4d_3d": (lambda a, b: a @ b, [(2, 1, 2, 3), (2, 3, 2)]),
    "matmul_1d_3d": (lambda a, b: a @ b, [(3,), (2, 3, 2)]),
    "matmul_3d_1d": (lambda a, b: a @ b, [(2, 2, 3), (3,)]),
    "addmm": (lambda s, a, b: fg.addmm(s, a, b, beta=0.5, alpha=2.0), [(4,), (3, 2), (2, 4)]),
    "addmm_beta0": (lambda s, a, b: fg.addmm(s, a, b, beta=0.0), [(3, 1), (3, 2), (2, 4)]),
    "trace": (lambda x: x.trace(), [(3, 4)]),
    "einsum": (lambda a, b: fg.einsum("bij,jk->bik", a, b), [(2, 2, 3), (3, 2)]),
    "einsum_ellipsis": (lambda a, b: fg.einsum("...ij,jk", a, b), [(2, 2, 3), (3, 2)]),
    "einsum_diag": (lambda a: fg.einsum("ii->i", a), [(3, 3)]),
    "sum_all": (lambda x: x.sum(), [(3, 4)]),
    "sum_dim": (lambda x: x.sum(1), [(3, 4)]),
    "sum_keepdim": (lambda x: x.sum((0, -1), keepdim=True), [(2, 3, 4)]),
    "sum_0d": (lambda x: x.sum(), [()]),
    "mean_all": (lambda x: x.mean(), [(3, 4)]),
    "mean_dim": (lambda x: x.mean(0), [(3, 4)]),
    "mean_keepdim": (lambda x: x.mean(-1, keepdim=True), [(3, 4)]),
    "softmax_last": (lambda x: x.softmax(-1), [(3, 4)]),
    "softmax_first": (lambda x: x.softmax(0), [(3, 4)]),
    "log_softmax": (lambda x: x.log_softmax(1), [(3, 4)]),
    "softmax_0d": (lambda x: x.sum().softmax(0), [(3,)]),
    "logsumexp": (lambda x: x.logsumexp(0), [(3, 4)]),
    "cumsum": (lambda x: x.cumsum(1), [(3, 4)]),
    "cumprod": (lambda x: x.cumprod(0), [(3, 4)]),
    "prod": (lambda x: x.prod(1), [(3, 4)]),
    "amax": (lambda x: x.amax(0), [(3, 4)]),
    "max_dim": (lambda x: x.max(1).values, [(3, 4)]),
    "var": (lambda x: x.var(1), [(3, 4)]),
    "std_mean": (lambda x: fg.std_mean(x, 0)[0] + fg.std_mean(x, 0)[1], [(3, 4)]),
    "norm": (lambda x: x.norm(dim=1), [(3, 4)]),
    "norm_inf": (lambda x: x.norm(p=float("inf")), [(3, 4)]),
    "inv": (lambda a: fg.linalg.inv(a), [(2, 3, 3)]),
    "det": (lambda a: fg.linalg.det(a), [(2, 3, 3)]),
    "solve": (lambda a, b: fg.linalg.solve(a, b), [(3, 3), (3, 2)]),
    "solve_vector": (lambda a, b: fg.linalg.solve(a, b), [(3, 3), (3,)]),
    "solve_broadcast": (lambda a, b: fg.linalg.solve(a, b), [(2, 2), (3, 2, 1)]),
}


@pytest.mark.parametrize("name", sorted(BATCHED_FWD))
def test_batched_forward_matches_rows(name):
    fn, shapes = BATCHED_FWD[name]
    square = name in ("inv", "det") or name.startswith("solve")
    ties = name in ("amax", "max_dim", "norm_inf")
    arrays = [
        well_conditioned(*s) if square and i == 0 else distinct(*s) * 0.3 if ties else rand(*s)
        for i, s in enumerate(shapes)
    ]
    full = [rand(4, *s) for s in shapes]
    n = len(shapes)
    # Tangents on every input, then (with several inputs) on each alone.
    masks = [[True] * n] + ([[j == i for j in range(n)] for i in range(n)] if n > 1 else [])
    for mask in masks:
        ts = [t if m else None for t, m in zip(full, mask, strict=True)]
        got, want = batched_tangent(fn, arrays, ts), row_tangents(fn, arrays, ts)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"{name}, tangents on {mask}")


def test_batched_forward_jacobian_of_tanh_layer():
    # The forward-mode Jacobian of tanh(W @ x): the identity as tangents.
    w, x = rand(7, 16), rand(16)
    jac = batched_tangent(lambda x: (fg.tensor(w) @ x).tanh(), [x], [np.eye(16)])
    want = (1 - np.tanh(w @ x) ** 2)[None, :] * w.T
    np.testing.assert_allclose(jac, want, rtol=1e-12, atol=1e-12)
