"""linalg.pinv, lstsq, matrix_exp, eig, eigvals, tensorinv, tensorsolve and
householder_product (with pinverse, matrix_exp and orgqr at the top level):
values against NumPy or identities that define them, derivatives against
float64 central differences (gradcheck in reverse, forward and batched
mode, and second order), the phase error of eig and the error cases."""

from __future__ import annotations

import math

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import jacfwd, jacrev, vmap
from linalg_reference import expm
from test_linalg_spectral import DTYPES, close, mh, randn

TIGHT = dict(rtol=1e-8, atol=1e-8)


# pinv


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3), (0, 3), (2, 0, 0)])
def test_pinv_matches_numpy(fdt, npdt, tol, shape):
    a = randn(np.random.default_rng(0), shape, npdt)
    got = fg.linalg.pinv(fg.tensor(a))
    assert got.dtype == fdt and tuple(got.shape) == shape[:-2] + (shape[-1], shape[-2])
    close(got.numpy(), np.linalg.pinv(a) if a.size else np.zeros(got.shape, npdt), tol)


def test_pinv_tolerances_and_the_hermitian_path():
    rng = np.random.default_rng(1)
    u, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    s = np.array([3.0, 1.0, 1e-3, 1e-17])
    a = u @ np.diag(s) @ u.T
    t = fg.tensor(a)
    # The default drops only the value below eps * n * 3.
    close(fg.linalg.pinv(t).numpy(), u @ np.diag([1 / 3, 1, 1e3, 0]) @ u.T, TIGHT)
    # atol=0 keeps the default rtol (as torch), a positive atol sets rtol to 0.
    close(fg.linalg.pinv(t, atol=0.0).numpy(), fg.linalg.pinv(t).numpy(), dict(rtol=0, atol=0))
    close(fg.linalg.pinv(t, atol=1e-2).numpy(), u @ np.diag([1 / 3, 1, 0, 0]) @ u.T, TIGHT)
    close(fg.linalg.pinv(t, rtol=0.5).numpy(), u @ np.diag([1 / 3, 0, 0, 0]) @ u.T, TIGHT)
    # Hermitian: eigenvalue moduli are the singular values (a negative one too).
    b = u @ np.diag([-2.0, 0.5, 1e-20, 4.0]) @ u.T
    close(fg.linalg.pinv(fg.tensor(b), hermitian=True).numpy(), np.linalg.pinv(b, hermitian=True),
          TIGHT)
    # A tolerance tensor broadcasts with the batch dims.
    atol = fg.tensor([0.0, 0.9, 2.0], dtype=fg.float64)
    got = fg.linalg.pinv(t, atol=atol)
    assert tuple(got.shape) == (3, 4, 4)
    close(got[2].numpy(), u @ np.diag([1 / 3, 0, 0, 0]) @ u.T, TIGHT)
    assert fg.linalg.matrix_rank(t, atol=atol).tolist() == [3, 2, 1]
    assert int(fg.linalg.matrix_rank(t, atol=0.0)) == 3
    close(fg.pinverse(t, rcond=0.5).numpy(), fg.linalg.pinv(t, rtol=0.5).numpy(), dict(rtol=0, atol=0))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 2)])
def test_pinv_derivatives(dtype, shape):
    x = fg.randn(*shape, dtype=dtype, generator=fg.Generator().manual_seed(2)).requires_grad_()
    assert gradcheck(fg.linalg.pinv, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(fg.linalg.pinv, (x,))


def test_pinv_derivative_is_finite_at_a_fixed_lower_rank():
    # A rank-2 4x3 matrix moved along directions that keep its rank: the
    # derivative agrees with central differences of the pseudo-inverse.
    rng = np.random.default_rng(3)
    left, right = rng.standard_normal((4, 2)), rng.standard_normal((2, 3))
    lt = fg.tensor(left, requires_grad=True)
    rt = fg.tensor(right, requires_grad=True)
    assert gradcheck(lambda a, b: fg.linalg.pinv(a @ b, rtol=1e-8), (lt, rt), check_forward_ad=True)
    grad = fg.autograd.grad(fg.linalg.pinv(lt @ rt, rtol=1e-8).sum(), lt)[0]
    assert bool(fg.isfinite(grad).all())


def test_pinv_hermitian_derivatives():
    x = fg.randn(3, 3, dtype=fg.float64, generator=fg.Generator().manual_seed(4)).requires_grad_()

    def f(x):
        return fg.linalg.pinv(x + x.mT, hermitian=True)

    assert gradcheck(f, (x,), check_forward_ad=True, check_batched_grad=True)


# lstsq


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("m,n", [(6, 3), (3, 6), (4, 4)])
def test_lstsq_matches_numpy_and_fills_the_drivers_fields(fdt, npdt, tol, driver, m, n):
    rng = np.random.default_rng(5)
    a, b = randn(rng, (m, n), npdt), randn(rng, (m, 2), npdt)
    r = fg.linalg.lstsq(fg.tensor(a), fg.tensor(b), driver=driver)
    want, res, rank, sv = np.linalg.lstsq(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                                          b.astype(np.complex128 if b.dtype.kind == "c" else np.float64),
                                          rcond=None)
    close(r.solution.numpy(), want, tol)
    assert r.solution.dtype == fdt
    drv = driver or "gelsy"
    tall = m > n
    assert tuple(r.residuals.shape) == ((2,) if tall and drv != "gelsy" else (0,))
    if r.residuals.numel():
        close(r.residuals.numpy(), res, tol)
    assert tuple(r.rank.shape) == ((0,) if drv == "gels" else ())
    if drv != "gels":
        assert int(r.rank) == rank
    assert tuple(r.singular_values.shape) == ((min(m, n),) if drv in ("gelsd", "gelss") else (0,))
    if r.singular_values.numel():
        close(r.singular_values.numpy(), sv, tol)


def test_lstsq_rank_deficient_batched_and_vector_cases():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((5, 3))
    a[:, 2] = a[:, 0] + a[:, 1]
    b = rng.standard_normal((2, 5, 2))
    r = fg.linalg.lstsq(fg.tensor(a[None]), fg.tensor(b), driver="gelsd")
    # The minimum-norm solution (NumPy's, per batch element), rank 2, no residuals.
    for i in range(2):
        close(r.solution[i].numpy(), np.linalg.lstsq(a, b[i], rcond=None)[0], TIGHT)
    assert r.rank.tolist() == [2, 2] and tuple(r.residuals.shape) == (0,)
    # gelsy sees the rank deficiency too (its QR is ill-conditioned) and
    # gives the same minimum-norm solution.
    y = fg.linalg.lstsq(fg.tensor(a[None]), fg.tensor(b))
    assert y.rank.tolist() == [2, 2]
    close(y.solution.numpy(), r.solution.numpy(), TIGHT)
    v = fg.linalg.lstsq(fg.tensor(a[:, :2]), fg.tensor(b[0, :, 0]), driver="gels")
    assert tuple(v.solution.shape) == (2,) and tuple(v.residuals.shape) == (1,)
    want = np.linalg.lstsq(a[:, :2], b[0, :, 0], rcond=None)[0]
    close(v.solution.numpy(), want, dict(rtol=1e-9, atol=1e-9))
    # rcond drops the small singular values.
    d = np.diag([4.0, 1.0, 0.01])
    got = fg.linalg.lstsq(fg.tensor(d), fg.tensor(np.ones((3, 1))), rcond=0.1, driver="gelss")
    assert int(got.rank) == 2
    close(got.solution.numpy(), [[0.25], [1.0], [0.0]], dict(rtol=1e-12, atol=1e-12))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("m,n", [(5, 3), (3, 5)])
def test_lstsq_derivatives(dtype, m, n):
    g = fg.Generator().manual_seed(7)
    a = fg.randn(m, n, dtype=dtype, generator=g).requires_grad_()
    b = fg.randn(m, 2, dtype=dtype, generator=g).requires_grad_()

    def solution(a, b):
        return fg.linalg.lstsq(a, b).solution

    def residuals(a, b):
        return fg.linalg.lstsq(a, b, driver="gelsd").residuals

    assert gradcheck(solution, (a, b), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(solution, (a, b))
    if m > n:
        assert gradcheck(residuals, (a, b), check_forward_ad=True)


# matrix_exp


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0])
def test_matrix_exp_matches_a_taylor_series(fdt, npdt, tol, scale):
    rng = np.random.default_rng(8)
    a = (randn(rng, (3, 4, 4), npdt) * scale / 4).astype(npdt)
    got = fg.linalg.matrix_exp(fg.tensor(a)).numpy()
    assert got.dtype == npdt
    for i in range(3):
        want = expm(a[i].astype(np.complex128 if a.dtype.kind == "c" else np.float64))
        rel = np.abs(got[i] - want).max() / max(np.abs(want).max(), 1e-300)
        assert rel < (2e-5 if npdt in (np.float32, np.complex64) else 1e-11)


def test_matrix_exp_identities():
    # A rotation generator, a nilpotent matrix, commuting sums, exp(A)^-1 = exp(-A).
    t = 0.7
    rot = fg.linalg.matrix_exp(fg.tensor([[0.0, -t], [t, 0.0]], dtype=fg.float64))
    want = [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]]
    close(rot.numpy(), want, dict(rtol=1e-14, atol=1e-15))
    n = fg.tensor([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]], dtype=fg.float64)
    want = np.eye(3) + n.numpy() + n.numpy() @ n.numpy() / 2
    close(fg.matrix_exp(n).numpy(), want, dict(rtol=1e-14, atol=0))
    a = fg.randn(2, 5, 5, dtype=fg.float64, generator=fg.Generator().manual_seed(9)) * 3
    close((fg.linalg.matrix_exp(a) @ fg.linalg.matrix_exp(-a)).numpy(), np.broadcast_to(np.eye(5), (2, 5, 5)),
          dict(rtol=0, atol=1e-10))
    # A batch with very different norms: each matrix scaled by its own power of two.
    big = fg.stack([a[0] * 1e-4, a[1] * 10])
    for i in range(2):
        want = fg.linalg.matrix_exp(big[i]).numpy()
        close(fg.linalg.matrix_exp(big)[i].numpy(), want, dict(rtol=1e-12, atol=0))
    assert tuple(fg.linalg.matrix_exp(fg.zeros(0, 3, 3)).shape) == (0, 3, 3)
    close(fg.zeros(2, 2).matrix_exp().numpy(), np.eye(2), dict(rtol=0, atol=0))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_matrix_exp_derivatives(dtype):
    x = fg.randn(2, 3, 3, dtype=dtype, generator=fg.Generator().manual_seed(10)).requires_grad_()
    assert gradcheck(fg.linalg.matrix_exp, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(fg.linalg.matrix_exp, (x[0].detach().requires_grad_(),))


# eig


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 3, 3), (0, 2, 2)])
def test_eig_reconstructs_and_matches_numpys_eigenvalues(fdt, npdt, tol, shape):
    a = randn(np.random.default_rng(11), shape, npdt)
    w, v = fg.linalg.eig(fg.tensor(a))
    cdt = {fg.float32: fg.complex64, fg.float64: fg.complex128}.get(fdt, fdt)
    assert w.dtype == cdt and v.dtype == cdt
    assert tuple(w.shape) == shape[:-1] and tuple(v.shape) == shape
    wn, vn = w.numpy(), v.numpy()
    # A V = V diag(L), unit columns with their largest component real.
    close(a @ vn, vn * wn[..., None, :], tol)
    close(np.linalg.norm(vn, axis=-2), np.ones(wn.shape), tol)
    if a.size:
        top = np.take_along_axis(vn, np.abs(vn).argmax(-2)[..., None, :], -2)
        assert np.all(np.abs(top.imag) <= 1e-5 * np.abs(top)) and np.all(top.real > 0)
        want = np.linalg.eigvals(a)
        for got_row, want_row in zip(wn.reshape(-1, shape[-1]), want.reshape(-1, shape[-1]), strict=True):
            close(np.sort_complex(got_row), np.sort_complex(want_row.astype(got_row.dtype)), tol)
    close(fg.linalg.eigvals(fg.tensor(a)).numpy(), wn, dict(rtol=0, atol=0))


def eig_invariant(x):
    # Invariant to each eigenvector's phase: the eigenvalues, and |V_ij|^2.
    w, v = fg.linalg.eig(x)
    return w, (v * v.conj()).real


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_eig_derivatives(dtype):
    x = fg.randn(3, 3, dtype=dtype, generator=fg.Generator().manual_seed(12)).requires_grad_()
    assert gradcheck(eig_invariant, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(lambda x: fg.linalg.eigvals(x), (x,))


def test_eig_phase_dependent_loss_raises():
    x = fg.randn(3, 3, dtype=fg.float64, generator=fg.Generator().manual_seed(13)).requires_grad_()
    _, v = fg.linalg.eig(x)
    with pytest.raises(RuntimeError, match="phase"):
        v.imag.sum().backward()


# tensorinv, tensorsolve, householder_product


def test_tensorinv_and_tensorsolve_match_numpy():
    rng = np.random.default_rng(14)
    a = rng.standard_normal((4, 6, 8, 3))
    got = fg.linalg.tensorinv(fg.tensor(a), ind=2)
    close(got.numpy(), np.linalg.tensorinv(a, ind=2), dict(rtol=1e-9, atol=1e-9))
    a = rng.standard_normal((2, 3, 6))
    b = rng.standard_normal((2, 3))
    close(fg.linalg.tensorsolve(fg.tensor(a), fg.tensor(b)).numpy(), np.linalg.tensorsolve(a, b),
          dict(rtol=1e-9, atol=1e-9))
    a = rng.standard_normal((6, 2, 3))
    close(fg.linalg.tensorsolve(fg.tensor(a), fg.tensor(b), dims=(0,)).numpy(),
          np.linalg.tensorsolve(a, b, axes=(0,)), dict(rtol=1e-9, atol=1e-9))
    x = fg.randn(2, 2, 4, dtype=fg.float64, generator=fg.Generator().manual_seed(15)).requires_grad_()
    assert gradcheck(lambda x: fg.linalg.tensorinv(x, ind=2), (x,), check_forward_ad=True)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
def test_householder_product_rebuilds_qrs_q(fdt, npdt, tol):
    # Householder reflectors built here from scratch (LAPACK's convention):
    # their product is orthonormal and turns R back into A.
    rng = np.random.default_rng(16)
    m, n = 5, 3
    a = randn(rng, (m, n), npdt).astype(np.complex128)
    refl, taus, r = np.zeros((m, n), complex), np.zeros(n, complex), a.copy()
    for j in range(n):
        x = r[j:, j]
        alpha = x[0]
        norm = np.linalg.norm(x)
        beta = -np.exp(1j * np.angle(alpha)) * norm if alpha != 0 else -norm
        v = x / (alpha - beta)
        v[0] = 1
        tau = (beta - alpha) / beta
        r[j:, :] -= tau * np.outer(v, v.conj() @ r[j:, :])
        refl[j + 1:, j], taus[j] = v[1:], tau
    if npdt in (np.float32, np.float64):
        # Real input gives real reflectors (the phases above are signs).
        refl, taus, r = refl.real, taus.real, r.real
    q = fg.linalg.householder_product(fg.tensor(refl.astype(npdt)), fg.tensor(taus.astype(npdt))).numpy()
    close(mh(q) @ q, np.eye(n), tol)
    close(q @ np.triu(r[:n]), a if npdt in (np.complex64, np.complex128) else a.real, tol)
    alias = fg.orgqr(fg.tensor(refl.astype(npdt)), fg.tensor(taus.astype(npdt)))
    close(alias.numpy(), q, dict(rtol=0, atol=0))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_householder_product_derivatives(dtype):
    g = fg.Generator().manual_seed(17)
    a = fg.randn(2, 4, 3, dtype=dtype, generator=g).requires_grad_()
    tau = fg.randn(2, 2, dtype=dtype, generator=g).requires_grad_()
    assert gradcheck(fg.linalg.householder_product, (a, tau), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(fg.linalg.householder_product, (a, tau))


def test_transforms_agree_with_loops():
    x = fg.randn(3, 3, 3, dtype=fg.float64, generator=fg.Generator().manual_seed(18))
    for f in (fg.linalg.pinv, fg.linalg.matrix_exp, lambda m: fg.linalg.lstsq(m, m[:, :1]).solution):
        assert fg.allclose(vmap(f)(x), fg.stack([f(m) for m in x]), atol=1e-10)
        assert fg.allclose(jacrev(f)(x[0]), jacfwd(f)(x[0]), atol=1e-8)


F64 = dict(dtype=fg.float64)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: fg.linalg.pinv(fg.ones(3)), RuntimeError, "at least 2 dimensions"),
        (lambda: fg.linalg.pinv(fg.ones(2, 3), hermitian=True), RuntimeError, "square"),
        (lambda: fg.linalg.pinv(fg.ones(2, 2, dtype=fg.int64)), RuntimeError, "floating point"),
        (lambda: fg.linalg.pinv(fg.ones(2, 2), atol="x"), TypeError, "atol"),
        (lambda: fg.linalg.lstsq(fg.ones(3, 2), fg.ones(4, 1)), RuntimeError, r"size\(-2\) should match"),
        (lambda: fg.linalg.lstsq(fg.ones(3, 2), fg.ones(3, 1), driver="foo"), RuntimeError, "driver"),
        (lambda: fg.linalg.lstsq(fg.ones(3, 2, **F64), fg.ones(3, 1)), RuntimeError, "same dtype"),
        (lambda: fg.linalg.lstsq(fg.ones(3), fg.ones(3)), RuntimeError, "at least 2 dimensions"),
        (lambda: fg.linalg.lstsq(fg.ones(3, 2), fg.ones(2, 2, 3, 1)), RuntimeError, "input.dim()"),
        (lambda: fg.linalg.matrix_exp(fg.ones(2, 3)), RuntimeError, "square"),
        (lambda: fg.linalg.eig(fg.ones(2, 3)), RuntimeError, "square"),
        (lambda: fg.linalg.eigvals(fg.ones(3)), RuntimeError, "at least 2 dimensions"),
        (lambda: fg.linalg.tensorinv(fg.ones(2, 3)), RuntimeError, "prod"),
        (lambda: fg.linalg.tensorinv(fg.ones(2, 2), ind=0), RuntimeError, "strictly positive"),
        (lambda: fg.linalg.tensorsolve(fg.ones(2, 3), fg.ones(2)), RuntimeError, "prod"),
        (lambda: fg.linalg.householder_product(fg.ones(2, 3), fg.ones(1)), RuntimeError, "shape"),
        (lambda: fg.linalg.householder_product(fg.ones(3, 2), fg.ones(3)), RuntimeError, "tau.shape"),
        (lambda: fg.linalg.householder_product(fg.ones(3, 2), fg.ones(1, 1)), RuntimeError, "dim"),
    ],
)
def test_bad_arguments_raise_torchs_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ldl_factor, ldl_solve


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_solve_matches_numpys_solve(fdt, npdt, tol, hermitian):
    rng = np.random.default_rng(19)
    a = randn(rng, (3, 6, 6), npdt)
    a = a + (mh(a) if hermitian else np.swapaxes(a, -1, -2))  # symmetric or Hermitian, indefinite
    b = randn(rng, (3, 6, 2), npdt)
    ld, piv = fg.linalg.ldl_factor(fg.tensor(a), hermitian=hermitian)
    assert ld.dtype == fdt and piv.dtype == fg.int32 and tuple(piv.shape) == (3, 6)
    assert np.all(np.triu(ld.numpy(), 1) == 0)
    x = fg.linalg.ldl_solve(ld, piv, fg.tensor(b), hermitian=hermitian)
    close(x.numpy(), np.linalg.solve(a, b), dict(rtol=tol["rtol"] * 10, atol=tol["atol"] * 10))
    # One factorization broadcast against a batch of right-hand sides.
    xb = fg.linalg.ldl_solve(ld[0], piv[0], fg.tensor(b), hermitian=hermitian)
    close(xb.numpy(), np.linalg.solve(a[0], b), dict(rtol=tol["rtol"] * 10, atol=tol["atol"] * 10))


def test_ldl_factor_pivots_as_lapack_chooses_them():
    # Positive definite: no pivoting, L D L^T with D on the diagonal.
    a = np.array([[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]])
    ld, piv, info = fg.linalg.ldl_factor_ex(fg.tensor(a))
    assert piv.tolist() == [1, 2, 3] and int(info) == 0
    lower = np.tril(ld.numpy(), -1) + np.eye(3)
    close(lower @ np.diag(np.diag(ld.numpy())) @ lower.T, a, dict(rtol=1e-12, atol=1e-12))
    # |a11| < alpha * |a21| but |a22| >= alpha * |a21|: rows 1 and 2 swap
    # for a 1x1 pivot 3, then L21 = 2/3 and D2 = 1 - 4/3.
    ld, piv = fg.linalg.ldl_factor(fg.tensor([[1.0, 2.0], [2.0, 3.0]], dtype=fg.float64))
    assert piv.tolist() == [2, 2]
    close(ld.numpy(), [[3.0, 0.0], [2.0 / 3.0, -1.0 / 3.0]], dict(rtol=1e-15, atol=1e-15))
    # A zero diagonal: a 2x2 block.
    ld, piv = fg.linalg.ldl_factor(fg.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert piv.tolist() == [-2, -2]
    # A zero matrix: info names the first zero block; ldl_factor raises.
    assert int(fg.linalg.ldl_factor_ex(fg.zeros(3, 3)).info) == 1
    with pytest.raises(fg.linalg.LinAlgError, match="singular"):
        fg.linalg.ldl_factor(fg.zeros(2, 3, 3))
    with pytest.raises(fg.linalg.LinAlgError, match="Batch element 0"):
        fg.linalg.ldl_factor_ex(fg.zeros(2, 3, 3), check_errors=True)


def test_ldl_has_no_derivative_and_checks_its_pivots():
    a = fg.tensor([[2.0, 1.0], [1.0, -1.0]], dtype=fg.float64, requires_grad=True)
    ld, piv = fg.linalg.ldl_factor(a)
    with pytest.raises(RuntimeError, match="not implemented"):
        ld.sum().backward()
    b = fg.ones(2, 1, dtype=fg.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        fg.linalg.ldl_solve(ld.detach(), piv, b).sum().backward()
    for bad in ([0, 1], [3, 1], [-1, 2], [1, -2]):
        with pytest.raises(RuntimeError, match="pivots"):
            fg.linalg.ldl_solve(ld.detach(), fg.tensor(bad, dtype=fg.int32), b.detach())
    with pytest.raises(RuntimeError, match="pivots to be integers"):
        fg.linalg.ldl_solve(ld.detach(), piv.long(), b.detach())
    with pytest.raises(RuntimeError, match="same dtype"):
        fg.linalg.ldl_solve(ld.detach(), piv, fg.ones(2, 1))
    with pytest.raises(RuntimeError, match="square"):
        fg.linalg.ldl_factor(fg.ones(2, 3))
