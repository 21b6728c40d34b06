"""lobpcg: eigenpairs against NumPy's eigh (standard and generalized,
batched, preconditioned), the tracker, the derivative against float64
central differences (first and second order, reverse and forward mode,
under vmap) and torch's errors."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import jacfwd, jacrev, vmap


def spd(rng, *shape):
    """Symmetric positive-definite matrices with well separated extremes."""
    a = rng.standard_normal(shape)
    m = shape[-1]
    return a @ np.swapaxes(a, -1, -2) + np.diag(np.linspace(1.0, 3.0 * m, m))


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_finds_the_extreme_eigenpairs(method, largest):
    rng = np.random.default_rng(0)
    a = spd(rng, 40, 40)
    E, X = fg.lobpcg(fg.tensor(a), k=3, largest=largest, method=method)
    E, X = E.numpy(), X.numpy()
    w = np.linalg.eigvalsh(a)
    np.testing.assert_allclose(E, w[::-1][:3] if largest else w[:3], rtol=1e-9)
    np.testing.assert_allclose(X.T @ X, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(a @ X, X * E, atol=1e-5 * np.abs(w).max())


def test_lobpcg_generalized_batched_problem():
    rng = np.random.default_rng(1)
    a = spd(rng, 2, 30, 30)
    b = np.eye(30) * 3 + 0.1 * np.ones((30, 30))
    E, X = fg.lobpcg(fg.tensor(a), k=2, B=fg.tensor(b))
    assert E.shape == (2, 2) and X.shape == (2, 30, 2)
    li = np.linalg.inv(np.linalg.cholesky(b))
    for i in range(2):
        w = np.linalg.eigvalsh(li @ a[i] @ li.T)
        np.testing.assert_allclose(E[i].numpy(), w[::-1][:2], rtol=1e-9)
        x = X[i].numpy()
        np.testing.assert_allclose(x.T @ b @ x, np.eye(2), atol=1e-10)


def test_lobpcg_with_a_preconditioner_and_an_initial_block():
    rng = np.random.default_rng(2)
    a = spd(rng, 45, 45)
    ik = np.diag(1.0 / np.diag(a))
    x0 = fg.tensor(rng.standard_normal((45, 4)))
    E, X = fg.lobpcg(fg.tensor(a), X=x0, iK=fg.tensor(ik), largest=False)
    assert E.shape == (4,) and X.shape == (45, 4)  # k defaults to X's columns
    np.testing.assert_allclose(E.numpy(), np.linalg.eigvalsh(a)[:4], rtol=1e-8)


def test_lobpcg_float32_stays_float32():
    a = spd(np.random.default_rng(3), 30, 30)
    E, X = fg.lobpcg(fg.tensor(a, dtype=fg.float32), k=2)
    assert E.dtype == fg.float32 and X.dtype == fg.float32
    np.testing.assert_allclose(E.numpy(), np.linalg.eigvalsh(a)[::-1][:2], rtol=1e-4)


def test_lobpcg_tracker_sees_each_step_and_can_stop_it():
    a = fg.tensor(spd(np.random.default_rng(4), 40, 40))
    seen = []

    def tracker(state):
        seen.append((state.ivars["istep"], float(state.tvars["rerr"].max())))
        if state.ivars["istep"] == 2:
            state.bvars["force_stop"] = True

    fg.lobpcg(a, k=2, tracker=tracker, tol=1e-300)
    assert [s for s, _ in seen] == [0, 1, 2]
    full = []
    fg.lobpcg(a, k=2, tracker=lambda s: full.append(float(s.tvars["rerr"][:2].max())))
    assert full[-1] < 1.5e-8 <= max(full)


def pairs(A, k=2, largest=True):
    """Sign-free functions of lobpcg's pairs of the symmetric part of A."""
    E, X = fg.lobpcg((A + A.mT) / 2, k=k, largest=largest, tol=1e-13, niter=-1)
    return E, X * X * E.unsqueeze(-2)


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_derivatives_match_central_differences(largest):
    a = spd(np.random.default_rng(5), 9, 9) / 9
    x = fg.tensor(a, requires_grad=True)
    assert gradcheck(lambda t: pairs(t, largest=largest), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: pairs(t, largest=largest), (x,))


def test_lobpcg_derivative_of_a_batch_under_vmap_and_jacobians():
    rng = np.random.default_rng(6)
    a = fg.tensor(spd(rng, 3, 9, 9) / 9)
    x0 = fg.tensor(rng.standard_normal((9, 2)))

    def f(t):
        E, X = fg.lobpcg((t + t.mT) / 2, X=x0, tol=1e-13, niter=-1)
        return (X * X * E.unsqueeze(-2)).sum(-1)

    got = vmap(jacrev(f))(a)
    for i in range(3):
        np.testing.assert_allclose(got[i].numpy(), jacfwd(f)(a[i]).numpy(), atol=1e-9)
        h = 1e-6
        col = np.zeros((9, 9))
        col[2, 4] = h
        fd = (f(a[i] + fg.tensor(col)) - f(a[i] - fg.tensor(col))) / (2 * h)
        np.testing.assert_allclose(got[i][:, 2, 4].numpy(), fd.numpy(), atol=1e-6)


def test_lobpcg_errors():
    a = fg.tensor(spd(np.random.default_rng(7), 20, 20))
    with pytest.raises(
        ValueError, match=r"rows \(=20\) is smaller than 3 x the number of requested eigenpairs \(=7\)"
    ):
        fg.lobpcg(a, k=7)
    with pytest.raises(ValueError, match="k \\(=3\\) must not exceed"):
        fg.lobpcg(a, k=3, X=fg.randn(20, 2, dtype=fg.float64))
    with pytest.raises(ValueError, match="method"):
        fg.lobpcg(a, k=1, method="fast")
    with pytest.raises(RuntimeError, match="complex128"):
        fg.lobpcg(a.to(fg.complex128), k=1)
    with pytest.raises(RuntimeError, match="square"):
        fg.lobpcg(a[:, :10], k=1)
    with pytest.raises(TypeError, match="argument 'A' must be Tensor"):
        fg.lobpcg(a.numpy(), k=1)
    x = a.clone().requires_grad_()
    E, _ = fg.lobpcg(x, k=1, B=fg.eye(20, dtype=fg.float64))
    with pytest.raises(RuntimeError, match="only available when B is None"):
        E.sum().backward()
