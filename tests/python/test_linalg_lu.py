"""linalg.lu_factor(_ex), lu, lu_solve, solve_ex, inv_ex and the torch-level
lu, lu_unpack and lu_solve: factors and pivots against an elimination with
partial pivoting written here in NumPy (LAPACK's getrf rule: the largest
|re| + |im| in the column, the first on ties, zero pivots left unscaled),
solutions against numpy.linalg.solve, derivatives against float64 central
differences (gradcheck, forward mode, batched, second order), the errors
and warnings torch gives."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import jacfwd, jacrev, vmap
from test_linalg_spectral import randn

DTYPES = [
    (fg.float32, np.float32, dict(rtol=1e-4, atol=1e-4)),
    (fg.float64, np.float64, dict(rtol=1e-10, atol=1e-10)),
    (fg.complex64, np.complex64, dict(rtol=1e-4, atol=1e-4)),
    (fg.complex128, np.complex128, dict(rtol=1e-10, atol=1e-10)),
]
SHAPES = [(1, 1), (4, 4), (5, 3), (3, 5), (2, 4, 3), (2, 1, 3, 4), (0, 3, 3), (40, 40), (37, 21), (21, 37)]


def getrf(a):
    """Packed factors, 1-based pivots and info of one matrix, by textbook
    elimination in float64/complex128."""
    a = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64).copy()
    m, n = a.shape
    k = min(m, n)
    piv = np.zeros(k, dtype=np.int32)
    info = 0
    for j in range(k):
        mag = np.abs(a[j:, j].real) + np.abs(a[j:, j].imag)
        p = j + int(np.argmax(mag))  # argmax takes the first maximum
        piv[j] = p + 1
        a[[j, p]] = a[[p, j]]
        if a[j, j] == 0:
            info = info or j + 1
            continue
        a[j + 1 :, j] /= a[j, j]
        a[j + 1 :, j + 1 :] -= np.outer(a[j + 1 :, j], a[j, j + 1 :])
    return a, piv, info


def reference(a):
    flat = a.reshape((-1,) + a.shape[-2:])
    out = [getrf(x) for x in flat]
    batch = a.shape[:-2]
    k = min(a.shape[-2:])
    lu = np.stack([o[0] for o in out]).reshape(a.shape) if out else np.zeros(a.shape)
    piv = np.stack([o[1] for o in out]).reshape(batch + (k,)) if out else np.zeros(batch + (k,))
    info = np.array([o[2] for o in out]).reshape(batch)
    return lu, piv, info


def close(got, want, tol):
    np.testing.assert_allclose(np.asarray(got), want, **tol)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_factors_and_pivots_match_elimination(fdt, npdt, tol, shape):
    rng = np.random.default_rng(1)
    a = randn(rng, shape, npdt)
    LU, piv, info = fg.linalg.lu_factor_ex(fg.tensor(a))
    assert LU.dtype == fdt and piv.dtype == fg.int32 and info.dtype == fg.int32
    want_lu, want_piv, want_info = reference(a)
    assert tuple(LU.shape) == shape and tuple(piv.shape) == shape[:-2] + (min(shape[-2:]),)
    np.testing.assert_array_equal(piv.numpy(), want_piv)
    np.testing.assert_array_equal(info.numpy(), want_info)
    close(LU.numpy(), want_lu, tol)
    # A = P L U, with P, L, U from linalg.lu and from lu_unpack.
    for P, L, U in (fg.linalg.lu(fg.tensor(a)), fg.lu_unpack(LU, piv)):
        m, n = shape[-2:]
        k = min(m, n)
        assert tuple(P.shape) == shape[:-2] + (m, m) and tuple(L.shape) == shape[:-2] + (m, k)
        assert tuple(U.shape) == shape[:-2] + (k, n)
        close(P.numpy() @ L.numpy() @ U.numpy(), a, tol)
        assert np.all(np.triu(L.numpy(), 1) == 0) and np.all(np.tril(U.numpy(), -1) == 0)


def test_singular_matrices_report_their_first_zero_pivot_as_lapack():
    # torch 2.13 (LAPACK): zeros give pivots [1, 2, 3] and info 1; a rank-one
    # 2x2 pivots on its second row and reports U[2, 2].
    LU, piv, info = fg.linalg.lu_factor_ex(fg.zeros(3, 3))
    assert piv.tolist() == [1, 2, 3] and int(info) == 1 and LU.abs().sum() == 0
    LU, piv, info = fg.linalg.lu_factor_ex(fg.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert piv.tolist() == [2, 2] and int(info) == 2 and LU.tolist() == [[2.0, 4.0], [0.5, 0.0]]
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[2,2\] is zero"):
        fg.linalg.lu_factor(fg.stack([fg.eye(2), fg.tensor([[1.0, 2.0], [2.0, 4.0]])]))
    with pytest.raises(RuntimeError, match=r"torch.linalg.lu_factor_ex: U\[1,1\] is zero"):
        fg.linalg.lu_factor_ex(fg.zeros(2, 2), check_errors=True)
    # The determinant of a singular matrix is exactly 0, not NaN.
    assert float(fg.linalg.det(fg.tensor([[1.0, 2.0], [2.0, 4.0]]))) == 0.0
    assert float(fg.linalg.det(fg.zeros(3, 3, dtype=fg.float64))) == 0.0


def test_factors_are_column_major_as_torchs():
    LU, _ = fg.linalg.lu_factor(fg.randn(2, 4, 3, dtype=fg.float64))
    assert LU.stride() == (12, 1, 4)
    assert fg.linalg.inv(fg.randn(3, 3)).stride() == (1, 3)
    assert fg.linalg.solve(fg.randn(3, 3), fg.randn(3, 2)).stride() == (1, 3)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve_matches_numpy(fdt, npdt, tol, left, adjoint):
    rng = np.random.default_rng(2)
    a = randn(rng, (2, 5, 5), npdt) + 3 * np.eye(5, dtype=npdt)
    b = randn(rng, (3, 1, 5, 2) if left else (3, 1, 2, 5), npdt)
    LU, piv = fg.linalg.lu_factor(fg.tensor(a))
    x = fg.linalg.lu_solve(LU, piv, fg.tensor(b), left=left, adjoint=adjoint)
    op = np.swapaxes(a.conj(), -1, -2) if adjoint else a
    if left:
        want = np.linalg.solve(op, b)
    else:  # X A = B  <=>  A^T X^T = B^T
        want = np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    close(x.numpy(), want, tol)
    # The differentiable path (LU requiring grad) gives the same values.
    LU.requires_grad_()
    y = fg.linalg.lu_solve(LU, piv, fg.tensor(b), left=left, adjoint=adjoint)
    close(y.detach().numpy(), want, tol)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
def test_inv_det_solve_compute_in_the_input_dtype(fdt, npdt, tol):
    rng = np.random.default_rng(3)
    a = randn(rng, (3, 6, 6), npdt)
    b = randn(rng, (3, 6, 2), npdt)
    A = fg.tensor(a)
    assert fg.linalg.inv(A).dtype == fdt
    close(fg.linalg.inv(A).numpy(), np.linalg.inv(a), tol)
    close(fg.linalg.det(A).numpy(), np.linalg.det(a), dict(rtol=tol["rtol"] * 10, atol=tol["atol"] * 10))
    close(fg.linalg.solve(A, fg.tensor(b)).numpy(), np.linalg.solve(a, b), tol)
    xl = fg.linalg.solve(A, fg.tensor(np.swapaxes(b, -1, -2)), left=False).numpy()
    close(xl @ a, np.swapaxes(b, -1, -2), dict(rtol=tol["rtol"] * 10, atol=tol["atol"] * 10))


def test_large_matrices_factor_with_the_pool_and_solve():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((300, 300))
    b = rng.standard_normal((300, 3))
    np.testing.assert_allclose(
        fg.linalg.solve(fg.tensor(a), fg.tensor(b)).numpy(), np.linalg.solve(a, b), rtol=1e-8, atol=1e-9
    )
    LU, piv = fg.linalg.lu_factor(fg.tensor(a))
    want_lu, want_piv, _ = reference(a)
    np.testing.assert_array_equal(piv.numpy(), want_piv)
    np.testing.assert_allclose(LU.numpy(), want_lu, rtol=1e-8, atol=1e-9)


def test_solve_ex_and_inv_ex():
    A = fg.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=fg.float64)
    r = fg.linalg.solve_ex(A, fg.tensor([3.0, 4.0], dtype=fg.float64))
    assert r.result.tolist() == pytest.approx([1.0, 1.0]) and int(r.info) == 0
    r = fg.linalg.inv_ex(A)
    np.testing.assert_allclose(r.inverse.numpy(), np.linalg.inv(A.numpy()))
    # Singular: inf/nan and a nonzero info instead of an error, unless asked.
    s = fg.tensor([[1.0, 2.0], [2.0, 4.0]])
    r = fg.linalg.solve_ex(s, fg.ones(2, 1))
    assert int(r.info) == 2 and not bool(fg.isfinite(r.result).all())
    r = fg.linalg.inv_ex(s)
    assert int(r.info) == 2 and not bool(fg.isfinite(r.inverse).all())
    with pytest.raises(fg.linalg.LinAlgError, match="torch.linalg.solve_ex: The solver failed"):
        fg.linalg.solve_ex(s, fg.ones(2, 1), check_errors=True)
    with pytest.raises(fg.linalg.LinAlgError, match="linalg.inv_ex: The diagonal element 2 is zero"):
        fg.linalg.inv_ex(s, check_errors=True)


def test_legacy_lu_and_lu_solve_warn_and_agree():
    A = fg.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=fg.float64)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        LU, piv = fg.lu(A)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        out = A.lu(get_infos=True)
    assert type(out).__name__ == "_lu_with_info" and int(out.info) == 0
    assert fg.equal(LU, fg.linalg.lu_factor(A).LU) and fg.equal(out.pivots, piv)
    b = fg.tensor([[3.0], [4.0]], dtype=fg.float64)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        x = fg.lu_solve(b, LU, piv)
    assert fg.allclose(x, fg.ones(2, 1, dtype=fg.float64))
    assert fg.allclose(b.lu_solve(LU, piv), x)
    # A singular matrix does not raise here (torch's check covers arguments only).
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        _, _, info = fg.lu(fg.zeros(2, 2), get_infos=True)
    assert int(info) == 1
    P, L, U = fg.lu_unpack(LU, piv, unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and P.shape == (2, 2)


def lu_factor_loss(x):
    return fg.linalg.lu_factor(x).LU


def lu_loss(x):
    _, L, U = fg.linalg.lu(x)
    return L, U


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (3, 5), (5, 3), (2, 2, 4)])
def test_lu_factor_and_lu_derivatives(dtype, shape):
    x = fg.randn(*shape, dtype=dtype, requires_grad=True)
    assert gradcheck(lu_factor_loss, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradcheck(lu_loss, (x,), check_forward_ad=True)
    assert gradgradcheck(lu_factor_loss, (x,))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("left,adjoint", [(True, False), (True, True), (False, True)])
def test_lu_solve_derivatives(dtype, left, adjoint):
    a = (fg.randn(2, 3, 3, dtype=dtype) + 3 * fg.eye(3, dtype=dtype)).requires_grad_()
    b = fg.randn(2, 3, 2, dtype=dtype, requires_grad=True)

    def f(a, b):
        LU, piv = fg.linalg.lu_factor(a)
        return fg.linalg.lu_solve(LU, piv, b if left else b.mT, left=left, adjoint=adjoint)

    assert gradcheck(f, (a, b), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(f, (a, b))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_solve_inv_det_derivatives_on_the_new_kernels(dtype):
    a = (fg.randn(2, 3, 3, dtype=dtype) + 3 * fg.eye(3, dtype=dtype)).requires_grad_()
    b = fg.randn(2, 3, 2, dtype=dtype, requires_grad=True)
    assert gradcheck(fg.linalg.solve, (a, b), check_forward_ad=True, check_batched_grad=True)
    assert gradcheck(lambda a, b: fg.linalg.solve(a, b.mT, left=False), (a, b), check_forward_ad=True)
    assert gradcheck(fg.linalg.inv, (a,), check_forward_ad=True)
    assert gradcheck(fg.linalg.det, (a,), check_forward_ad=True)
    assert gradcheck(lambda a, b: fg.linalg.solve_ex(a, b).result, (a, b), check_forward_ad=True)
    assert gradcheck(lambda a: fg.linalg.inv_ex(a).inverse, (a,), check_forward_ad=True)


def test_transforms_agree_with_loops():
    x = fg.randn(4, 3, 3, dtype=fg.float64)
    assert fg.allclose(vmap(lu_factor_loss)(x), fg.stack([lu_factor_loss(m) for m in x]))
    assert fg.allclose(jacrev(lu_factor_loss)(x[0]), jacfwd(lu_factor_loss)(x[0]), atol=1e-9)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: fg.linalg.lu_factor(fg.randn(3)), RuntimeError, "Expected tensor with 2 or more dimensions"),
        (lambda: fg.linalg.lu_factor(fg.randn(3, 3), pivot=False), RuntimeError, "without pivoting"),
        (lambda: fg.linalg.lu(fg.randn(3, 3), pivot=False), RuntimeError, "without pivoting"),
        (lambda: fg.linalg.lu_factor(fg.ones(3, 3, dtype=fg.int64)), NotImplementedError, "lu_cpu"),
        (lambda: fg.linalg.lu_factor(fg.ones(3, 3, dtype=fg.float16)), NotImplementedError, "lu_cpu"),
        (
            lambda: fg.linalg.lu_solve(*fg.linalg.lu_factor(fg.eye(3)), fg.randn(4, 2)),
            RuntimeError,
            r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)",
        ),
        (
            lambda: fg.linalg.lu_solve(*fg.linalg.lu_factor(fg.eye(3)), fg.randn(3)),
            RuntimeError,
            "B must have at least 2 dimensions",
        ),
        (
            lambda: fg.linalg.lu_solve(
                fg.linalg.lu_factor(fg.eye(3))[0], fg.zeros(3, dtype=fg.int32), fg.randn(3, 1)
            ),
            RuntimeError,
            "greater or equal to 1",
        ),
        (
            lambda: fg.linalg.lu_solve(
                fg.linalg.lu_factor(fg.eye(3))[0], fg.full((3,), 4, dtype=fg.int32), fg.randn(3, 1)
            ),
            RuntimeError,
            "smaller or equal to LU.size",
        ),
        (lambda: fg.linalg.solve(fg.eye(2), fg.ones(2), left=False), RuntimeError, "Vector broadcasting"),
        (lambda: fg.lu_unpack(fg.eye(3), fg.ones(3)), RuntimeError, "int32"),
    ],
)
def test_bad_arguments_raise_torchs_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
