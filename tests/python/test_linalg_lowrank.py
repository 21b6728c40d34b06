"""svd_lowrank and pca_lowrank: exact (up to signs) for matrices of rank at
most q, checked against numpy.linalg.svd; derivatives of the singular
values against float64 central differences under a fixed sketch."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck


def low_rank(rng, m, n, r, batch=()):
    return rng.standard_normal(batch + (m, r)) @ rng.standard_normal(batch + (r, n))


@pytest.mark.parametrize("m,n,batch", [(12, 5, ()), (5, 12, ()), (9, 9, (2,)), (10, 6, (2, 1))])
def test_svd_lowrank_is_exact_for_low_rank_matrices(m, n, batch):
    rng = np.random.default_rng(0)
    a = low_rank(rng, m, n, 3, batch)
    fg.manual_seed(0)
    U, S, V = fg.svd_lowrank(fg.tensor(a), q=4)
    assert (
        tuple(U.shape) == batch + (m, 4)
        and tuple(S.shape) == batch + (4,)
        and tuple(V.shape) == batch + (n, 4)
    )
    want = np.linalg.svd(a, compute_uv=False)[..., :4]
    np.testing.assert_allclose(S.numpy(), want, atol=1e-10)
    np.testing.assert_allclose((U @ fg.diag_embed(S) @ V.mH).numpy(), a, atol=1e-10)
    eye = np.broadcast_to(np.eye(4), batch + (4, 4))
    np.testing.assert_allclose((U.mH @ U).numpy(), eye, atol=1e-10)
    np.testing.assert_allclose((V.mH @ V).numpy(), eye, atol=1e-10)


def test_svd_lowrank_subtracts_m_without_forming_the_difference():
    rng = np.random.default_rng(1)
    a = low_rank(rng, 8, 6, 2)
    shift = np.ones((1, 6)) * rng.standard_normal(6)  # broadcast over the rows
    fg.manual_seed(1)
    U, S, V = fg.svd_lowrank(fg.tensor(a + shift), q=3, M=fg.tensor(shift))
    np.testing.assert_allclose((U @ fg.diag_embed(S) @ V.mT).numpy(), a, atol=1e-10)


def test_svd_lowrank_of_a_complex_matrix():
    rng = np.random.default_rng(2)
    a = low_rank(rng, 7, 5, 2) + 1j * low_rank(rng, 7, 5, 1)
    U, S, V = fg.svd_lowrank(fg.tensor(a), q=3)
    assert S.dtype == fg.float64 and U.dtype == fg.complex128
    np.testing.assert_allclose((U @ fg.diag_embed(S).to(fg.complex128) @ V.mH).numpy(), a, atol=1e-10)


def test_pca_lowrank_finds_the_principal_directions():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((200, 4)) * np.array([6.0, 3.0, 1.0, 0.2]) + 5.0
    U, S, V = fg.pca_lowrank(fg.tensor(x), q=4)
    centered = x - x.mean(axis=0)
    want = np.linalg.svd(centered, compute_uv=False)
    np.testing.assert_allclose(S.numpy(), want, rtol=1e-9)
    # The directions up to sign: |V^T V_np| is the identity.
    _, _, vt = np.linalg.svd(centered, full_matrices=False)
    np.testing.assert_allclose(np.abs(V.numpy().T @ vt.T), np.eye(4), atol=1e-8)
    # Without centering it is the SVD of the data itself.
    _, S2, _ = fg.pca_lowrank(fg.tensor(x), q=4, center=False)
    np.testing.assert_allclose(S2.numpy(), np.linalg.svd(x, compute_uv=False), rtol=1e-9)
    assert fg.pca_lowrank(fg.tensor(x))[1].shape == (4,)  # q defaults to min(6, m, n)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(q=5), r"q\(=5\) must be non-negative integer and not greater than min\(m, n\)=4"),
        (dict(q=-1), r"q\(=-1\)"),
        (dict(niter=-1), r"niter\(=-1\) must be non-negative integer"),
    ],
)
def test_pca_lowrank_checks_its_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fg.pca_lowrank(fg.randn(6, 4), **kwargs)


def test_singular_values_are_differentiable_under_a_fixed_sketch():
    def values(a):
        fg.manual_seed(0)
        return fg.svd_lowrank(a, q=4, niter=1)[1]

    a = fg.randn(6, 4, dtype=fg.float64, requires_grad=True)
    assert gradcheck(values, (a,))
    # With q = min(m, n) the values are the exact ones, whose gradient is
    # U V^H for the loss sum(S).
    values(a).sum().backward()
    u, _, vh = np.linalg.svd(a.detach().numpy(), full_matrices=False)
    np.testing.assert_allclose(a.grad.numpy(), u @ vh, atol=1e-8)


def test_functional_module_has_them():
    import ferrograd.functional as F

    assert F.svd_lowrank is fg.svd_lowrank and F.pca_lowrank is fg.pca_lowrank and F.lu is fg.lu
