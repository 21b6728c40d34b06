"""Poisson, binomial, gamma and Dirichlet sampling (``ferrograd.poisson``,
``binomial``, ``_standard_gamma``, ``_sample_dirichlet``) and the implicit
derivatives of gamma and beta draws in their shapes.

Oracles: the families' means and variances (closed forms) with fixed seeds
and bounds of several standard errors; the gamma CDF (``special.gammainc``
in float64) at the sample's quantiles; and the pathwise identities
``d/da E[X] = 1`` and ``d/da E[X^2] = 2a + 1`` for ``X ~ Gamma(a)``, and
``d/da E[X] = b / (a + b)^2`` for ``X ~ Beta(a, b)`` (``_dirichlet_grad``
is that derivative over ``1 - x``).
"""

from __future__ import annotations

import math

import ferrograd as fg
import numpy as np
import pytest

N = 20000


def _stats(x):
    v = x.double().numpy()
    return v.mean(axis=0), v.var(axis=0)


def test_poisson_moments_in_both_regimes():
    fg.manual_seed(0)
    rates = fg.tensor([0.0, 0.5, 3.0, 9.5, 12.0, 80.0]).expand(N, 6)
    x = fg.poisson(rates)
    assert x.dtype == fg.float32 and x.shape == (N, 6)
    v = x.numpy()
    assert np.all(v == np.round(v)) and np.all(v >= 0)
    mean, var = _stats(x)
    lam = np.array([0.0, 0.5, 3.0, 9.5, 12.0, 80.0])
    assert np.all(np.abs(mean - lam) <= 5 * np.sqrt(lam / N) + 1e-12)
    assert np.all(np.abs(var - lam) <= 6 * np.sqrt(2 * lam**2 / N + lam / N) + 1e-12)


def test_poisson_errors_and_seeded_reproduction():
    with pytest.raises(RuntimeError, match="non-negative"):
        fg.poisson(fg.tensor([1.0, -0.5]))
    with pytest.raises(NotImplementedError):
        fg.poisson(fg.tensor([1, 2]))
    g1, g2 = fg.Generator().manual_seed(5), fg.Generator().manual_seed(5)
    r = fg.tensor([0.7, 14.0, 300.0], dtype=fg.float64)
    assert fg.equal(fg.poisson(r, generator=g1), fg.poisson(r, generator=g2))


@pytest.mark.parametrize("n,p", [(5.0, 0.3), (40.0, 0.1), (200.0, 0.25), (60.0, 0.8), (1000.0, 0.97)])
def test_binomial_moments(n, p):
    fg.manual_seed(1)
    x = fg.binomial(fg.full((N,), n, dtype=fg.float64), fg.full((N,), p, dtype=fg.float64))
    v = x.numpy()
    assert np.all((v >= 0) & (v <= n) & (v == np.round(v)))
    mean, var = v.mean(), v.var()
    assert abs(mean - n * p) <= 5 * math.sqrt(n * p * (1 - p) / N)
    assert abs(var / (n * p * (1 - p)) - 1) < 0.06


def test_binomial_edges_and_errors():
    n = fg.tensor([4.0, 7.0, 0.0, -2.0])
    assert fg.binomial(n, fg.tensor([1.0, 0.0, 0.5, 0.5])).tolist() == [4.0, 0.0, 0.0, 0.0]
    assert fg.binomial(n, fg.tensor(1.0)).tolist() == [4.0, 7.0, 0.0, 0.0]  # prob broadcasts
    with pytest.raises(ValueError, match="floating-point"):
        fg.binomial(fg.tensor([3, 4]), fg.tensor([0.5, 0.5]))
    with pytest.raises(RuntimeError, match="Double"):
        fg.binomial(fg.tensor([3.0]), fg.tensor([0.5], dtype=fg.float64))


@pytest.mark.parametrize("dtype", [fg.float32, fg.float64])
@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.5, 200.0])
def test_standard_gamma_matches_the_gamma_cdf(alpha, dtype):
    fg.manual_seed(2)
    x = fg._standard_gamma(fg.full((N,), alpha, dtype=dtype))
    assert x.dtype == dtype
    v = np.sort(x.double().numpy())
    assert v[0] > 0
    assert abs(v.mean() - alpha) <= 5 * math.sqrt(alpha / N)
    # The empirical CDF at its own quantiles against P(alpha, x).
    qs = v[[N // 10, N // 4, N // 2, 3 * N // 4, 9 * N // 10]]
    cdf = fg.special.gammainc(fg.full((5,), alpha, dtype=fg.float64), fg.tensor(qs)).numpy()
    assert np.all(np.abs(cdf - np.array([0.1, 0.25, 0.5, 0.75, 0.9])) < 0.02)


def test_standard_gamma_edges():
    x = fg._standard_gamma(fg.tensor([0.0, float("inf")]))
    assert x[0].item() == np.finfo(np.float32).tiny and math.isinf(x[1].item())
    with pytest.raises(NotImplementedError):
        fg._standard_gamma(fg.ones(2, dtype=fg.float16))


@pytest.mark.parametrize("alpha", [0.4, 2.0, 25.0])
def test_gamma_pathwise_gradients(alpha):
    # E[X] = a and E[X^2] = a^2 + a for X ~ Gamma(a, 1).
    fg.manual_seed(3)
    a = fg.full((N,), alpha, dtype=fg.float64, requires_grad=True)
    x = fg._standard_gamma(a)
    (g1,) = fg.autograd.grad(x.sum() / N, a, retain_graph=True)
    (g2,) = fg.autograd.grad((x * x).sum() / N, a)
    d1, d2 = g1.sum().item(), g2.sum().item()
    assert abs(d1 - 1.0) < 0.05
    assert abs(d2 / (2 * alpha + 1) - 1) < 0.08


def test_standard_gamma_grad_is_minus_the_cdf_slope_over_the_density():
    a = np.array([0.05, 0.7, 3.0, 50.0, 3000.0])
    x = np.array([1e-4, 0.4, 6.0, 43.0, 3100.0])
    got = fg._standard_gamma_grad(fg.tensor(a), fg.tensor(x)).numpy()
    h = 1e-5 * a
    cdf = lambda s: fg.special.gammainc(fg.tensor(s), fg.tensor(x)).numpy()  # noqa: E731
    slope = (cdf(a + h) - cdf(a - h)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(x) - x - np.array([math.lgamma(v) for v in a]))
    np.testing.assert_allclose(got, -slope / pdf, rtol=1e-5)


def test_sample_dirichlet_rows_and_means():
    fg.manual_seed(4)
    alpha = fg.tensor([0.5, 2.0, 7.5], dtype=fg.float64)
    x = fg._sample_dirichlet(alpha.expand(N, 3))
    v = x.numpy()
    np.testing.assert_allclose(v.sum(-1), 1.0, rtol=1e-12)
    want = alpha.numpy() / alpha.sum().item()
    assert np.all(np.abs(v.mean(0) - want) < 5 * np.sqrt(want * (1 - want) / N))
    with pytest.raises(NotImplementedError):
        fg._sample_dirichlet(fg.ones(3, dtype=fg.float16))


@pytest.mark.parametrize("a,b", [(0.6, 1.4), (3.0, 1.5), (12.0, 28.0)])
def test_dirichlet_grad_pathwise_mean(a, b):
    # For X ~ Beta(a, b) with b fixed, d/da E[X] = d/da a / (a + b) = b / (a + b)^2,
    # and _dirichlet_grad(x, a, a + b) is dx/da over (1 - x).
    fg.manual_seed(5)
    conc = fg.tensor([a, b], dtype=fg.float64).expand(N, 2)
    x = fg._sample_dirichlet(conc)[:, 0]
    g = fg._dirichlet_grad(x, fg.full((N,), a, dtype=fg.float64), fg.full((N,), a + b, dtype=fg.float64))
    assert abs((g * (1 - x)).mean().item() * (a + b) ** 2 / b - 1) < 0.05


@pytest.mark.parametrize("draw", [
    lambda c: fg.distributions.Gamma(c, 1.0).rsample(),
    lambda c: fg.distributions.Dirichlet(c).rsample(),
    lambda c: fg.distributions.Beta(c, c + 1).rsample(),
    lambda c: fg.distributions.Poisson(c).sample(),
    lambda c: fg.distributions.Binomial(10, probs=c / 5).sample(),
])
def test_vmap_draws_as_one_batched_call(draw):
    # With randomness='different' the rows draw from one stream, as the
    # unbatched call on the whole batch does; 'same' repeats one row's draw;
    # the default ('error') refuses.
    conc = fg.tensor([[1.0, 2.0], [3.0, 0.5], [1.0, 2.0]])
    fg.manual_seed(6)
    batched = fg.func.vmap(draw, randomness="different")(conc)
    fg.manual_seed(6)
    assert fg.equal(batched, draw(conc))
    same = fg.func.vmap(draw, randomness="same")(fg.tensor([[1.0, 2.0]] * 3))
    assert fg.equal(same[0], same[1]) and fg.equal(same[0], same[2])
    with pytest.raises(RuntimeError, match="randomness"):
        fg.func.vmap(draw)(conc)


def test_grad_of_gamma_rsample_under_vmap_matches_the_unbatched_gradient():
    conc = fg.tensor([[1.5, 2.0], [3.0, 0.7]], dtype=fg.float64)

    def total(c):
        return fg.distributions.Gamma(c, 1.0).rsample().sum()

    fg.manual_seed(7)
    batched = fg.func.vmap(fg.func.grad(total), randomness="different")(conc)
    fg.manual_seed(7)
    c = conc.clone().requires_grad_()
    x = fg._standard_gamma(c)
    (want,) = fg.autograd.grad(x.sum(), c)
    assert fg.allclose(batched, want, rtol=1e-12, atol=0)
