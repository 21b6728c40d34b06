"""linalg.cholesky/cholesky_ex/solve_triangular and the legacy cholesky,
cholesky_solve, cholesky_inverse and triangular_solve: values against NumPy,
derivatives against float64 central differences (gradcheck, forward mode,
batched), the error cases."""

from __future__ import annotations

import warnings

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import jacfwd, jacrev, vmap

DTYPES = [
    (fg.float32, np.float32, dict(rtol=2e-4, atol=2e-5)),
    (fg.float64, np.float64, dict(rtol=1e-10, atol=1e-11)),
    (fg.complex64, np.complex64, dict(rtol=2e-4, atol=2e-5)),
    (fg.complex128, np.complex128, dict(rtol=1e-10, atol=1e-11)),
]


def randn(rng, shape, npdt):
    x = rng.standard_normal(shape)
    if np.issubdtype(npdt, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(npdt)


def spd(rng, shape, npdt):
    """Hermitian positive-definite matrices of ``shape`` (..., n, n)."""
    x = randn(rng, shape, npdt)
    n = shape[-1]
    return (x @ np.swapaxes(x.conj(), -1, -2) + n * np.eye(n)).astype(npdt)


def close(got, want, tol):
    np.testing.assert_allclose(got.numpy(), want, **tol)


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 1, 6, 6), (0, 3, 3)])
def test_cholesky_matches_numpy_in_the_input_dtype(fdt, npdt, tol, shape):
    rng = np.random.default_rng(0)
    a = spd(rng, shape, npdt)
    # Garbage in the triangle not read must not matter.
    noisy = a + np.triu(randn(rng, shape, npdt), 1)
    lo = fg.linalg.cholesky(fg.tensor(noisy))
    assert lo.dtype == fdt
    want = np.linalg.cholesky(a) if a.size else a
    close(lo, want, tol)
    noisy_up = a + np.tril(randn(rng, shape, npdt), -1)
    up = fg.linalg.cholesky(fg.tensor(noisy_up), upper=True)
    close(up, np.swapaxes(want.conj(), -1, -2), tol)


def test_large_single_matrix_reconstructs():
    rng = np.random.default_rng(1)
    a = spd(rng, (300, 300), np.float64)
    L = fg.linalg.cholesky(fg.tensor(a)).numpy()
    np.testing.assert_allclose(L @ L.T, a, rtol=1e-10, atol=1e-9)
    assert np.allclose(np.triu(L, 1), 0)


def test_batch_rows_equal_single_calls_bitwise():
    rng = np.random.default_rng(2)
    a = fg.tensor(spd(rng, (16, 12, 12), np.float64))
    b = fg.tensor(rng.standard_normal((16, 12, 3)))
    L = fg.linalg.cholesky(a)
    X = fg.linalg.solve_triangular(L, b, upper=False)
    for i in range(16):
        assert fg.equal(L[i], fg.linalg.cholesky(a[i]))
        assert fg.equal(X[i], fg.linalg.solve_triangular(L[i], b[i], upper=False))


def test_not_positive_definite_raises_linalg_error():
    bad = fg.tensor([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(fg.linalg.LinAlgError, match=r"leading minor of order 2 is not positive-definite"):
        fg.linalg.cholesky(bad)
    assert issubclass(fg.linalg.LinAlgError, RuntimeError)
    batch = fg.stack([fg.eye(2), bad])
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: \(Batch element 1\)"):
        fg.linalg.cholesky(batch)
    with pytest.raises(fg.linalg.LinAlgError, match="not positive-definite"):
        fg.linalg.cholesky(-fg.eye(3))


def test_inverse_of_singular_is_a_linalg_error():
    with pytest.raises(fg.linalg.LinAlgError, match="singular"):
        fg.linalg.inv(fg.zeros(2, 2))
    with pytest.raises(fg.linalg.LinAlgError, match="singular"):
        fg.linalg.solve(fg.zeros(2, 2), fg.ones(2))


def test_cholesky_ex_reports_info_per_matrix():
    a = fg.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]])
    L, info = fg.linalg.cholesky_ex(a)
    assert info.dtype == fg.int32 and info.tolist() == [0, 2, 1]
    assert fg.equal(L[0], fg.eye(2)) and not L[1].any() and not L[2].any()
    with pytest.raises(fg.linalg.LinAlgError, match=r"cholesky_ex: \(Batch element 1\).*order 2"):
        fg.linalg.cholesky_ex(a, check_errors=True)
    L1, info1 = fg.linalg.cholesky_ex(fg.eye(3) * 4)
    assert info1.shape == () and info1.item() == 0
    close(L1, 2 * np.eye(3), dict(rtol=0, atol=0))


BAD_CALLS = [
    (lambda: fg.linalg.cholesky(fg.ones(2, 3)), RuntimeError, "square"),
    (lambda: fg.linalg.cholesky(fg.ones(3)), RuntimeError, "at least 2 dimensions"),
    (lambda: fg.linalg.cholesky(fg.ones(2, 2, dtype=fg.int64)), RuntimeError, "floating point or complex"),
    (lambda: fg.linalg.cholesky([[1.0]]), TypeError, "must be Tensor"),
    (lambda: fg.linalg.solve_triangular(fg.eye(2), fg.ones(2, 1, dtype=fg.float64), upper=True),
     RuntimeError, "same dtype"),
    (lambda: fg.linalg.solve_triangular(fg.eye(2), fg.ones(3, 1), upper=True),
     RuntimeError, "Incompatible shapes"),
    (lambda: fg.linalg.solve_triangular(fg.eye(2), fg.ones(2, 1)), TypeError, "upper"),
    (lambda: fg.triangular_solve(fg.ones(2, 1), [[1.0]]), TypeError, "must be Tensor"),
]  # fmt: skip


@pytest.mark.parametrize("call,exc,match", BAD_CALLS)
def test_bad_arguments_raise_torchs_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("fdt,npdt,tol", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_matches_numpy(fdt, npdt, tol, upper, left, unit):
    rng = np.random.default_rng(3)
    a = randn(rng, (2, 1, 4, 4), npdt) + 4 * np.eye(4).astype(npdt)
    b = randn(rng, (3, 4, 2) if left else (3, 2, 4), npdt)
    tri = np.triu(a) if upper else np.tril(a)
    if unit:
        idx = np.arange(4)
        tri = tri.copy()
        tri[..., idx, idx] = 1
    if left:
        want = np.linalg.solve(tri, b)
    else:
        want = np.swapaxes(np.linalg.solve(np.swapaxes(tri, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    got = fg.linalg.solve_triangular(fg.tensor(a), fg.tensor(b), upper=upper, left=left, unitriangular=unit)
    assert got.dtype == fdt and got.shape == want.shape
    close(got, want, tol)


def test_legacy_functions_match_numpy():
    rng = np.random.default_rng(4)
    a = spd(rng, (2, 4, 4), np.float64)
    b = rng.standard_normal((2, 4, 3))
    L = fg.linalg.cholesky(fg.tensor(a))
    U = L.mH
    tol = dict(rtol=1e-9, atol=1e-10)
    close(fg.cholesky_solve(fg.tensor(b), L), np.linalg.solve(a, b), tol)
    close(fg.cholesky_solve(fg.tensor(b), U, upper=True), np.linalg.solve(a, b), tol)
    close(fg.cholesky_inverse(L[0]), np.linalg.inv(a[0]), tol)
    close(U[1].cholesky_inverse(upper=True), np.linalg.inv(a[1]), tol)
    A = fg.tensor(np.triu(rng.standard_normal((4, 4))) + 4 * np.eye(4))
    sol, coeff = fg.triangular_solve(fg.tensor(b), A)
    close(sol, np.linalg.solve(np.triu(A.numpy()), b), tol)
    assert fg.equal(coeff, A) and coeff.data_ptr() != A.data_ptr()
    r = fg.tensor(b).triangular_solve(A, transpose=True)
    close(r.solution, np.linalg.solve(np.triu(A.numpy()).T, b), tol)
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        got = fg.cholesky(fg.tensor(a[0]))
    close(got, np.linalg.cholesky(a[0]), tol)


def _sym(x):
    """A Hermitian positive-definite function of any square ``x``."""
    n = x.shape[-1]
    return x @ x.mH + n * fg.eye(n, dtype=x.dtype)


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_derivatives(dtype, upper):
    x = fg.randn(2, 3, 3, dtype=dtype, requires_grad=True)
    f = lambda x: fg.linalg.cholesky(_sym(x), upper=upper)  # noqa: E731
    assert gradcheck(f, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(f, (x,))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
@pytest.mark.parametrize("upper,left,unit", [(False, True, False), (True, False, False), (True, True, True)])
def test_solve_triangular_derivatives(dtype, upper, left, unit):
    a = (fg.randn(2, 3, 3, dtype=dtype) + 3 * fg.eye(3, dtype=dtype)).requires_grad_()
    b = fg.randn(3, 2, dtype=dtype) if left else fg.randn(2, 3, dtype=dtype)
    b.requires_grad_()
    f = lambda a, b: fg.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)  # noqa: E731
    assert gradcheck(f, (a, b), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(f, (a, b))


def test_composites_differentiate():
    x = fg.randn(3, 3, dtype=fg.float64, requires_grad=True)
    b = fg.randn(3, 2, dtype=fg.float64, requires_grad=True)
    solve = lambda x, b: fg.cholesky_solve(b, fg.linalg.cholesky(_sym(x)))  # noqa: E731
    assert gradcheck(solve, (x, b), check_forward_ad=True)
    assert gradcheck(lambda x: fg.cholesky_inverse(fg.linalg.cholesky(_sym(x))), (x,))
    assert gradcheck(lambda x, b: fg.triangular_solve(b, x + 3 * fg.eye(3, dtype=fg.float64))[0], (x, b))


def test_transforms_agree_with_loops_and_each_other():
    x = fg.randn(4, 3, 3, dtype=fg.float64)
    f = lambda m: fg.linalg.cholesky(_sym(m))  # noqa: E731
    assert fg.allclose(vmap(f)(x), fg.stack([f(m) for m in x]))
    jr = jacrev(f)(x[0])
    jf = jacfwd(f)(x[0])
    assert fg.allclose(jr, jf, atol=1e-10)
    b = fg.randn(4, 3, 2, dtype=fg.float64)
    g = lambda m, r: fg.linalg.solve_triangular(f(m), r, upper=False)  # noqa: E731
    assert fg.allclose(vmap(g)(x, b), fg.stack([g(m, r) for m, r in zip(x, b, strict=True)]))


def test_no_warning_from_linalg_cholesky():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fg.linalg.cholesky(fg.eye(2))


@pytest.mark.parametrize("dtype", [fg.float64, fg.complex128])
def test_results_are_column_major_matrices_as_torchs(dtype):
    rng = np.random.default_rng(5)
    a = fg.tensor(spd(rng, (2, 4, 4), np.complex128 if dtype.is_complex else np.float64))
    b = fg.randn(2, 4, 3, dtype=dtype)
    for r in (fg.linalg.cholesky(a), fg.linalg.cholesky(a, upper=True)):
        assert r.stride() == (16, 1, 4) and r._base is None
    assert fg.linalg.solve_triangular(a, b, upper=True).stride() == (12, 1, 4)
    right = fg.linalg.solve_triangular(a, b.mT, upper=True, left=False)
    assert right.stride() == (12, 1, 3) and right._base is None
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        fg.linalg.cholesky(a).view(-1)
