"""linalg.qr, eigh, eigvalsh, svd, svdvals and the legacy qr/svd: values
against NumPy (up to the sign or phase each factor is defined with) and
reconstruction identities, derivatives against float64 central differences
(gradcheck, forward mode, batched) through losses the sign/phase freedom
does not change, the phase error, and the error cases."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import jacfwd, jacrev, jvp, linearize, vmap

DTYPES = [
    (fg.float32, np.float32, dict(rtol=2e-4, atol=2e-4)),
    (fg.float64, np.float64, dict(rtol=1e-9, atol=1e-10)),
    (fg.complex64, np.complex64, dict(rtol=2e-4, atol=2e-4)),
    (fg.complex128, np.complex128, dict(rtol=1e-9, atol=1e-10)),
]
SHAPES = [(1, 1), (4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 1, 3, 4), (0, 3, 3)]


def randn(rng, shape, npdt):
    x = rng.standard_normal(shape)
    if np.issubdtype(npdt, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(npdt)


def mh(x):
    return np.swapaxes(x.conj(), -1, -2)


def close(got, want, tol):
    np.testing.assert_allclose(np.asarray(got), want, **tol)


def real_dtype(fdt):
    return {fg.complex64: fg.float32, fg.complex128: fg.float64}.get(fdt, fdt)


def orthonormal_columns(q, tol):
    k = q.shape[-1]
    close(mh(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), tol)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_reconstructs_and_matches_numpy_up_to_signs(fdt, npdt, tol, shape, mode):
    rng = np.random.default_rng(0)
    a = randn(rng, shape, npdt)
    q, r = fg.linalg.qr(fg.tensor(a), mode=mode)
    assert r.dtype == fdt
    m, n = shape[-2:]
    k = min(m, n)
    assert tuple(r.shape) == shape[:-2] + ((m if mode == "complete" else k), n)
    rn = r.numpy()
    assert np.all(np.tril(rn, -1) == 0)
    if a.size:
        # R is unique up to a sign (phase) per row: its moduli are not.
        want = np.linalg.qr(a, mode="r" if mode == "r" else mode)
        want_r = want if mode == "r" else want[1]
        close(np.abs(rn), np.abs(want_r), tol)
    diag = np.diagonal(rn, axis1=-2, axis2=-1)
    # LAPACK's convention, which the derivatives assume: a real diagonal,
    # for real matrices with LAPACK's signs.
    assert np.all(diag.imag == 0)
    if a.size and not np.iscomplexobj(a):
        close(rn, want_r, tol)
    if mode == "r":
        assert tuple(q.shape) == (0,)
        return
    qn = q.numpy()
    assert tuple(q.shape) == shape[:-2] + (m, m if mode == "complete" else k)
    orthonormal_columns(qn, tol)
    close(qn @ rn, a, tol)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 1, 6, 6), (0, 3, 3)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_matches_numpy_and_reads_one_triangle(fdt, npdt, tol, shape, uplo):
    rng = np.random.default_rng(1)
    x = randn(rng, shape, npdt)
    a = ((x + mh(x)) / 2).astype(npdt)
    # The triangle not read holds garbage.
    noise = randn(rng, shape, npdt)
    noisy = a + (np.triu(noise, 1) if uplo == "L" else np.tril(noise, -1))
    w, v = fg.linalg.eigh(fg.tensor(noisy), UPLO=uplo)
    assert w.dtype == real_dtype(fdt) and v.dtype == fdt
    if not a.size:
        return
    close(w, np.linalg.eigvalsh(a), tol)
    vn = v.numpy()
    orthonormal_columns(vn, tol)
    close(vn @ (w.numpy()[..., None] * mh(vn)), a, tol)
    close(fg.linalg.eigvalsh(fg.tensor(noisy), UPLO=uplo), np.linalg.eigvalsh(a), tol)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_numpy_and_reconstructs(fdt, npdt, tol, shape, full):
    rng = np.random.default_rng(2)
    a = randn(rng, shape, npdt)
    u, s, vh = fg.linalg.svd(fg.tensor(a), full_matrices=full)
    m, n = shape[-2:]
    k = min(m, n)
    assert s.dtype == real_dtype(fdt) and u.dtype == fdt and vh.dtype == fdt
    assert tuple(u.shape) == shape[:-2] + (m, m if full else k)
    assert tuple(vh.shape) == shape[:-2] + (n if full else k, n)
    if not a.size:
        return
    close(s, np.linalg.svd(a, compute_uv=False), tol)
    un, vhn = u.numpy(), vh.numpy()
    orthonormal_columns(un, tol)
    orthonormal_columns(mh(vhn), tol)
    close(un[..., :k] @ (s.numpy()[..., None] * vhn[..., :k, :]), a, tol)
    close(fg.linalg.svdvals(fg.tensor(a)), np.linalg.svd(a, compute_uv=False), tol)


def test_large_single_matrices_use_the_pool_and_reconstruct():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((260, 240))
    q, r = fg.linalg.qr(fg.tensor(a))
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a, atol=1e-10)
    u, s, vh = fg.linalg.svd(fg.tensor(a), full_matrices=False)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    sym = a[:240] + a[:240].T
    np.testing.assert_allclose(fg.linalg.eigvalsh(fg.tensor(sym)).numpy(), np.linalg.eigvalsh(sym), atol=1e-9)


def test_batch_rows_equal_single_calls_bitwise():
    x = fg.randn(5, 4, 3, dtype=fg.float64)
    q, r = fg.linalg.qr(x)
    u, s, vh = fg.linalg.svd(x, full_matrices=False)
    sym = x @ x.mT
    w, v = fg.linalg.eigh(sym)
    for i in range(5):
        assert fg.equal(fg.linalg.qr(x[i]).R, r[i]) and fg.equal(fg.linalg.qr(x[i]).Q, q[i])
        assert fg.equal(fg.linalg.svd(x[i], full_matrices=False).U, u[i])
        assert fg.equal(fg.linalg.eigh(sym[i]).eigenvectors, v[i])


def test_legacy_qr_and_svd():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 5, 3))
    t = fg.tensor(a)
    q, r = fg.qr(t)
    assert tuple(q.shape) == (2, 5, 3) and tuple(t.qr(some=False).Q.shape) == (2, 5, 5)
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    u, s, v = fg.svd(t)
    assert tuple(u.shape) == (2, 5, 3) and tuple(v.shape) == (2, 3, 3)
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ v.mT).numpy(), a, atol=1e-12)
    full = t.svd(some=False)
    assert tuple(full.U.shape) == (2, 5, 5) and tuple(full.V.shape) == (2, 3, 3)
    u0, s0, v0 = fg.svd(t, compute_uv=False)
    assert tuple(u0.shape) == (2, 5, 5) and tuple(v0.shape) == (2, 3, 3)
    assert not u0.any() and not v0.any()
    np.testing.assert_allclose(s0.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)


def test_out_tuples_are_filled():
    a = fg.randn(4, 3, dtype=fg.float64)
    q, r = fg.empty(4, 3, dtype=fg.float64), fg.empty(3, 3, dtype=fg.float64)
    res = fg.linalg.qr(a, out=(q, r))
    assert res.Q is q and res.R is r and fg.allclose(q @ r, a)


# Losses that the sign (phase) of each vector does not change.
def _sym(x):
    return x + x.mH


def qr_invariant(x):
    q, r = fg.linalg.qr(x)
    # Column j of Q times R[j, j] and the moduli of R's rows.
    return q * r.diagonal(dim1=-2, dim2=-1).unsqueeze(-2), r.abs()


def eigh_invariant(x):
    w, v = fg.linalg.eigh(_sym(x))
    return w, (v * v.conj()).real, v @ (w.unsqueeze(-1) * v.mH)


def svd_invariant(x):
    u, s, vh = fg.linalg.svd(x, full_matrices=False)
    return s, (u * u.conj()).real, u @ vh, (vh * vh.conj()).real


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 4)])
def test_qr_derivatives(dtype, shape):
    x = fg.randn(*shape, dtype=dtype, requires_grad=True)
    assert gradcheck(qr_invariant, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(qr_invariant, (x,))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_eigh_derivatives(dtype):
    x = fg.randn(2, 4, 4, dtype=dtype, requires_grad=True)
    assert gradcheck(eigh_invariant, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(eigh_invariant, (x,))
    assert gradcheck(lambda x: fg.linalg.eigvalsh(_sym(x), UPLO="U"), (x,), check_forward_ad=True)


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 3), (3, 5)])
def test_svd_derivatives(dtype, shape):
    x = fg.randn(*shape, dtype=dtype, requires_grad=True)
    assert gradcheck(svd_invariant, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(svd_invariant, (x,))
    assert gradcheck(fg.linalg.svdvals, (x,), check_forward_ad=True)


def test_full_matrices_gradient_ignores_the_extra_vectors():
    x = fg.randn(5, 3, dtype=fg.float64, requires_grad=True)
    assert gradcheck(svd_invariant_full, (x,))


def svd_invariant_full(x):
    u, s, vh = fg.linalg.svd(x, full_matrices=True)
    k = s.shape[-1]
    return u[..., :k] @ vh[..., :k, :], s


def test_value_only_losses_have_gradients_at_repeated_values():
    # Repeated eigenvalues and singular values: E and F are infinite there,
    # but a loss of the values alone never uses them.
    a = fg.eye(3, dtype=fg.float64).requires_grad_()
    fg.linalg.eigvalsh(a).sum().backward()
    assert fg.allclose(a.grad, fg.eye(3, dtype=fg.float64))
    b = fg.eye(3, dtype=fg.float64).requires_grad_()
    fg.linalg.svdvals(2 * b).sum().backward()
    # d sum(s) / dA = U V^H = I for A = 2I.
    assert fg.allclose(b.grad, 2 * fg.eye(3, dtype=fg.float64))


def test_second_derivatives_of_simple_values_beside_exactly_repeated_ones():
    # I + 0.3 u v^T has the singular value 1 twice, exactly, and A's
    # eigenvalue 2 is repeated; the largest and smallest values stay
    # simple, so their Hessians exist (0 · ∞ must not turn them into NaN).
    rng = np.random.default_rng(3)
    u, v = rng.standard_normal((4, 1)), rng.standard_normal((1, 4))
    m = fg.tensor(0.3 * u @ v + np.eye(4))
    a = fg.tensor(np.diag([1.0, 2.0, 2.0, 5.0]))
    for f, x in (
        (lambda t: fg.linalg.cond(t), m),
        (lambda t: fg.linalg.svdvals(t)[0], m),
        (lambda t: fg.linalg.eigvalsh(_sym(t))[-1] - fg.linalg.eigvalsh(_sym(t))[0], a),
    ):
        h = fg.func.hessian(f)(x).reshape(16, 16).numpy()
        g = fg.func.grad(f)
        step = 1e-6
        fd = np.stack(
            [
                ((g(x + step * e) - g(x - step * e)) / (2 * step)).reshape(16).numpy()
                for e in fg.eye(16, dtype=fg.float64).reshape(16, 4, 4)
            ],
            axis=1,
        )
        assert np.isfinite(h).all()
        np.testing.assert_allclose(h, fd, atol=1e-6)


def test_complex_phase_dependent_losses_raise():
    x = fg.randn(3, 3, dtype=fg.complex128, requires_grad=True)
    _, v = fg.linalg.eigh(_sym(x))
    with pytest.raises(RuntimeError, match="specified up to multiplication by e\\^\\{i phi\\}"):
        v.real.sum().backward()
    u, _, _ = fg.linalg.svd(x)
    with pytest.raises(RuntimeError, match="specified up to multiplication by e\\^\\{i phi\\}"):
        u.imag.sum().backward()


def test_qr_modes_without_derivatives_raise_on_backward():
    x = fg.randn(4, 3, dtype=fg.float64, requires_grad=True)
    _, r = fg.linalg.qr(x, mode="r")
    with pytest.raises(RuntimeError, match="mode='r'"):
        r.sum().backward()
    q, r = fg.linalg.qr(x, mode="complete")
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        q.sum().backward()
    wide = fg.randn(3, 4, dtype=fg.float64, requires_grad=True)
    assert gradcheck(qr_complete_invariant, (wide,))


def qr_complete_invariant(x):
    q, r = fg.linalg.qr(x, mode="complete")
    return q @ r[..., : q.shape[-1]], r.abs()


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: fg.linalg.qr(fg.randn(3, 3), mode="full"), RuntimeError, "unrecognized mode 'full'"),
        (lambda: fg.linalg.eigh(fg.randn(3, 3), UPLO="X"), RuntimeError, "UPLO argument to be 'L' or 'U'"),
        (lambda: fg.linalg.eigh(fg.randn(3, 4)), RuntimeError, "square matrices, but they are 3 by 4"),
        (lambda: fg.linalg.svd(fg.randn(3)), RuntimeError, "at least 2 dimensions"),
        (lambda: fg.linalg.qr(fg.ones(3, 3, dtype=fg.int64)), RuntimeError, "floating point or complex"),
        (lambda: fg.linalg.svd(fg.randn(3, 3), driver="gesvd"), RuntimeError, "driver="),
        (lambda: fg.linalg.qr([[1.0]]), TypeError, "must be Tensor"),
    ],
)
def test_bad_arguments_raise_torchs_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_transforms_agree_with_loops_and_each_other():
    x = fg.randn(4, 3, 3, dtype=fg.float64)
    for f in (lambda m: qr_invariant(m)[0], lambda m: eigh_invariant(m)[1], lambda m: svd_invariant(m)[1]):
        assert fg.allclose(vmap(f)(x), fg.stack([f(m) for m in x]))
        assert fg.allclose(jacrev(f)(x[0]), jacfwd(f)(x[0]), atol=1e-9)
        # linearize differentiates the backward with respect to a zero
        # cotangent: its terms must not be skipped as unused.
        _, lin = linearize(f, x[0])
        loop = fg.stack([jvp(f, (x[0],), (t,))[1] for t in x])
        assert fg.allclose(vmap(lin)(x), loop, atol=1e-9)


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_results_are_column_major_matrices_as_torchs(dtype):
    x = fg.randn(2, 4, 3, dtype=dtype)
    q, r = fg.linalg.qr(x)
    assert q.stride() == (12, 1, 4) and r.stride() == (9, 1, 3)
    u, s, vh = fg.linalg.svd(x, full_matrices=False)
    assert u.stride() == (12, 1, 4) and vh.stride() == (9, 1, 3) and s.stride() == (3, 1)
    w, v = fg.linalg.eigh(x[..., :3, :])
    assert v.stride() == (9, 1, 3)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 1, 6, 6), (0, 3, 3)])
def test_slogdet_matches_numpy(fdt, npdt, tol, shape):
    rng = np.random.default_rng(6)
    a = randn(rng, shape, npdt)
    sign, logabs = fg.linalg.slogdet(fg.tensor(a))
    assert sign.dtype == fdt and logabs.dtype == real_dtype(fdt)
    want_sign, want_log = np.linalg.slogdet(a)
    close(sign, want_sign, tol)
    close(logabs, want_log, tol)
    legacy = fg.slogdet(fg.tensor(a))
    assert fg.equal(legacy.sign, sign) and fg.equal(legacy.logabsdet, logabs)


def test_slogdet_of_large_and_singular_matrices():
    rng = np.random.default_rng(7)
    # det of 400 x 400 standard normals overflows float64; its log does not.
    a = rng.standard_normal((400, 400)) * 10
    sign, logabs = fg.linalg.slogdet(fg.tensor(a))
    want_sign, want_log = np.linalg.slogdet(a)
    assert sign.item() == want_sign and abs(logabs.item() - want_log) < 1e-9 * abs(want_log)
    singular = fg.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=fg.float64)
    s, la = fg.linalg.slogdet(singular)
    # Partial pivoting leaves an exactly zero pivot here.
    assert s.item() == 0.0 and la.item() == -np.inf
    neg = fg.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=fg.float64)
    assert fg.isnan(fg.logdet(neg)) and neg.logdet().isnan()
    pos = fg.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=fg.float64)
    assert abs(fg.logdet(pos).item() - np.log(5.0)) < 1e-14


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_slogdet_and_logdet_derivatives(dtype):
    x = (fg.randn(2, 3, 3, dtype=dtype) + 3 * fg.eye(3, dtype=dtype)).requires_grad_()
    f = lambda x: tuple(fg.linalg.slogdet(x))  # noqa: E731
    assert gradcheck(f, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(f, (x,))
    spd_ = lambda x: fg.logdet(x @ x.mH + fg.eye(3, dtype=dtype))  # noqa: E731
    assert gradcheck(spd_, (x,), check_forward_ad=True)
    # d log|det A| / dA = A^{-H}.
    a = fg.randn(4, 4, dtype=fg.float64, requires_grad=True)
    fg.linalg.slogdet(a).logabsdet.backward()
    assert fg.allclose(a.grad, fg.linalg.inv(a.detach()).mT)
