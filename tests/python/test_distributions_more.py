"""ferrograd.distributions, the further families: HalfCauchy, Weibull, Pareto,
VonMises, ContinuousBernoulli, the relaxed Bernoulli/categorical families,
LowRankMultivariateNormal, MixtureSameFamily and the ExponentialFamily base.

Oracles: densities written out in NumPy from their definitions
(distribution_reference_more.py); moments, entropies and CDFs as numerical
integrals of those densities (Gauss-Legendre on bounded supports, the
trapezoid rule after ``x = c + w tan(u)`` on unbounded ones); dense NumPy
linear algebra for the low-rank normal; float64 finite differences for
gradients; seeded sample statistics with generous bounds.
"""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from distribution_reference import check_gaussian_matrices, integrate, normal_pdf
from distribution_reference_more import (
    concrete_pdf,
    continuous_bernoulli_pdf,
    gauss_legendre,
    half_cauchy_pdf,
    integrate_from,
    logistic_relaxed_pdf,
    mvn_logpdf,
    pareto_pdf,
    relaxed_bernoulli_pdf,
    von_mises_pdf,
    weibull_pdf,
)
from ferrograd.autograd import gradcheck
from ferrograd.func import vmap
from numpy_oracle import close, npy, t

A, B = np.array([0.6, 1.0, 2.2]), np.array([1.5, 2.5, 3.5])
CB_PROBS = np.array([0.12, 0.4995, 0.7])  # the middle one inside the Taylor region

# name -> (constructor from the arrays (a, b), NumPy density of (x, a, b), support lower end, values)
UNIVARIATE = {
    "HalfCauchy": (lambda a, b: D.HalfCauchy(t(a)), lambda x, a, b: half_cauchy_pdf(x, a), 0.0),
    "Weibull": (lambda a, b: D.Weibull(t(a), t(b)), weibull_pdf, 0.0),
    # alpha > 3: the trapezoid rule needs the variance's integrand to vanish at infinity
    "Pareto": (lambda a, b: D.Pareto(t(a), t(b + 2)), lambda x, a, b: pareto_pdf(x, a, b + 2), None),
}
VALUES = np.array([0.7, 1.3, 2.9])


def _lower(name, i):
    return A[i] if name == "Pareto" else UNIVARIATE[name][2]


def _integral(name, fn, i):
    return integrate_from(fn, _lower(name, i), A[i])


@pytest.mark.parametrize("name", sorted(UNIVARIATE))
def test_log_prob_matches_density(name):
    make, pdf, _ = UNIVARIATE[name]
    close(make(A, B).log_prob(t(VALUES)), np.log(pdf(VALUES, A, B)), 1e-12)


@pytest.mark.parametrize("name", sorted(UNIVARIATE))
def test_entropy_mean_variance_are_integrals_of_the_density(name):
    make, pdf, _ = UNIVARIATE[name]
    d = make(A, B)
    for i in range(3):

        def density(x, i=i):
            return pdf(x, A[i], B[i])

        def plogp(x):
            p = density(x)
            return np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)

        assert npy(d.entropy())[i] == pytest.approx(_integral(name, plogp, i), rel=1e-4, abs=1e-5)
        if name == "HalfCauchy":
            continue
        mean = _integral(name, lambda x: x * density(x), i)
        var = _integral(name, lambda x, mean=mean: (x - mean) ** 2 * density(x), i)
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-4)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-3)


def test_heavy_tails_give_infinite_moments():
    d = D.HalfCauchy(t(A))
    assert np.isinf(npy(d.mean)).all() and np.isinf(npy(d.variance)).all()
    p = D.Pareto(t([1.0, 1.0, 1.0]), t([0.5, 1.5, 3.0]))
    assert np.isinf(npy(p.mean)[0]) and np.isfinite(npy(p.mean)[1:]).all()
    assert np.isinf(npy(p.variance)[:2]).all() and np.isfinite(npy(p.variance)[2])


def test_modes():
    close(D.HalfCauchy(t(A)).mode, np.zeros(3))
    close(D.Pareto(t(A), t(B)).mode, A)
    # d/dx log p = (k - 1)/x - k x^(k-1) / lam^k = 0
    close(D.Weibull(t(A), t(B)).mode, A * ((B - 1) / B) ** (1 / B), 1e-12)


@pytest.mark.parametrize("name", sorted(UNIVARIATE))
def test_cdf_integrates_density_and_icdf_inverts_it(name):
    make, pdf, _ = UNIVARIATE[name]
    d = make(A, B)
    x = VALUES + A  # inside every support
    cdf = npy(d.cdf(t(x)))
    for i in range(3):
        want = gauss_legendre(lambda u, i=i: pdf(u, A[i], B[i]), _lower(name, i), x[i], 2000)
        assert cdf[i] == pytest.approx(want, abs=1e-8)
    close(d.icdf(t(cdf)), x, 1e-9)


@pytest.mark.parametrize("name", [*sorted(UNIVARIATE), "ContinuousBernoulli"])
def test_samples_follow_the_cdf(name):
    # The CDFs are checked against integrals of the densities above.
    d = D.ContinuousBernoulli(t(CB_PROBS)) if name == "ContinuousBernoulli" else UNIVARIATE[name][0](A, B)
    fg.manual_seed(12)
    n = 20_000
    samples = npy(d.sample((n,)))
    assert samples.shape == (n, 3)
    cdf = npy(d.cdf(t(np.sort(samples, axis=0))))  # each column sorted
    ks = np.max(np.abs(cdf - np.arange(1, n + 1)[:, None] / n), axis=0)
    assert (ks < 0.02).all(), (name, ks)  # the 1e-6 quantile of the KS statistic is about 0.017


def test_von_mises_density_moments_and_cdf_of_samples():
    loc, conc = np.array([0.4, -2.5, 3.0]), np.array([0.05, 1.3, 40.0])
    d = D.VonMises(t(loc), t(conc))
    x = np.array([1.0, 2.0, -3.0])
    close(d.log_prob(t(x)), np.log(von_mises_pdf(x, loc, conc)), 1e-12)
    close(d.log_prob(t(x + 4 * np.pi)), npy(d.log_prob(t(x))), 1e-10)  # angles modulo 2 pi
    for i in range(3):
        total = gauss_legendre(lambda u, i=i: von_mises_pdf(u, loc[i], conc[i]), -np.pi, np.pi)
        assert total == pytest.approx(1.0, rel=1e-10)
        circular = gauss_legendre(
            lambda u, i=i: np.cos(u - loc[i]) * von_mises_pdf(u, loc[i], conc[i]), -np.pi, np.pi
        )
        assert npy(d.variance)[i] == pytest.approx(1 - circular, rel=1e-9)
    close(d.mean, loc)
    close(d.mode, loc)
    fg.manual_seed(0)
    n = 20_000
    samples = npy(d.sample((n,)))
    assert samples.shape == (n, 3) and (samples >= -np.pi).all() and (samples < np.pi).all()
    for i in range(3):
        xs = np.sort(samples[:, i])
        grid = np.linspace(-np.pi, np.pi, 20_001)
        cdf = np.concatenate(
            [[0.0], np.cumsum(np.diff(grid) * von_mises_pdf(grid[1:] - 0.5 * np.diff(grid), loc[i], conc[i]))]
        )
        ks = np.max(np.abs(np.interp(xs, grid, cdf) - np.arange(1, n + 1) / n))
        assert ks < 0.02, (i, ks)


def test_von_mises_samples_in_float64_internally():
    # Tiny concentrations are nearly uniform; a float32 rejection loop would stall there.
    fg.manual_seed(1)
    x = D.VonMises(fg.zeros(2), fg.full((2,), 1e-6)).sample((5000,))
    assert x.dtype == fg.float32 and x.shape == (5000, 2)
    assert abs(float(x.mean())) < 0.1 and float(x.var()) == pytest.approx(np.pi**2 / 3, rel=0.05)
    assert D.VonMises(0.0, 1.0).has_rsample is False


def test_von_mises_without_validation_never_hangs():
    # A concentration the rejection loop cannot accept for gives NaN, not an endless loop.
    d = D.VonMises(fg.zeros(3), fg.tensor([float("nan"), 0.0, 2.0]), validate_args=False)
    x = npy(d.sample((4,)))
    assert np.isnan(x[:, :2]).all() and np.isfinite(x[:, 2]).all()


# Continuous Bernoulli -------------------------------------------------------------------


def test_continuous_bernoulli_density_moments_entropy():
    d = D.ContinuousBernoulli(probs=t(CB_PROBS))
    x = np.array([0.05, 0.5, 0.93])
    close(d.log_prob(t(x)), np.log(continuous_bernoulli_pdf(x, CB_PROBS)), 1e-9)
    for i, p in enumerate(CB_PROBS):
        assert gauss_legendre(lambda u, p=p: continuous_bernoulli_pdf(u, p), 0, 1) == pytest.approx(
            1, rel=1e-12
        )
        mean = gauss_legendre(lambda u, p=p: u * continuous_bernoulli_pdf(u, p), 0, 1)
        var = gauss_legendre(lambda u, p=p, m=mean: (u - m) ** 2 * continuous_bernoulli_pdf(u, p), 0, 1)
        ent = gauss_legendre(
            lambda u, p=p: -continuous_bernoulli_pdf(u, p) * np.log(continuous_bernoulli_pdf(u, p)), 0, 1
        )
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-9)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-8)
        assert npy(d.entropy())[i] == pytest.approx(ent, rel=1e-6, abs=1e-9)
        # Inside lims the CDF is the uniform one (as torch's), off by O(p - 1/2).
        cdf = npy(d.cdf(t(x)))[i]
        want = gauss_legendre(lambda u, p=p: continuous_bernoulli_pdf(u, p), 0, x[i])
        assert cdf == pytest.approx(want, abs=1e-3 if i == 1 else 1e-9)
    close(d.icdf(d.cdf(t(x))), x, 1e-9)
    unchecked = D.ContinuousBernoulli(probs=t(CB_PROBS), validate_args=False)
    close(unchecked.cdf(t([-0.5, 1.5, 1.0])), [0.0, 1.0, 1.0])
    close(unchecked.stddev, np.sqrt(npy(d.variance)))


def test_continuous_bernoulli_logits_and_lims():
    logits = np.log(CB_PROBS / (1 - CB_PROBS))
    by_logits = D.ContinuousBernoulli(logits=t(logits))
    by_probs = D.ContinuousBernoulli(probs=t(CB_PROBS))
    close(by_logits.probs, CB_PROBS, 1e-12)
    close(by_logits.log_prob(t([0.3])), npy(by_probs.log_prob(t([0.3]))), 1e-9)
    # Widening lims moves 0.4 into the expansion, which agrees to its truncation error.
    wide = D.ContinuousBernoulli(probs=t([0.4]), lims=(0.35, 0.65))
    narrow = D.ContinuousBernoulli(probs=t([0.4]))
    assert npy(wide.mean)[0] == pytest.approx(npy(narrow.mean)[0], abs=1e-5)
    assert npy(wide.mean)[0] != npy(narrow.mean)[0]
    assert wide.expand((2, 1))._lims == (0.35, 0.65)
    # Probabilities at the ends are clamped into the open interval.
    assert np.isfinite(npy(D.ContinuousBernoulli(probs=t([0.0, 1.0])).log_prob(t([0.5, 0.5])))).all()


# Relaxed Bernoulli and categorical --------------------------------------------------------


def test_relaxed_bernoulli_densities():
    temperature, logits = 0.7, np.array([-1.2, 0.0, 2.0])
    y = np.array([-0.5, 0.3, 4.0])
    logit = D.LogitRelaxedBernoulli(t(temperature), logits=t(logits))
    close(logit.log_prob(t(y)), np.log(logistic_relaxed_pdf(y, temperature, logits)), 1e-12)
    x = np.array([0.1, 0.45, 0.99])
    relaxed = D.RelaxedBernoulli(t(temperature), probs=t(1 / (1 + np.exp(-logits))))
    close(relaxed.log_prob(t(x)), np.log(relaxed_bernoulli_pdf(x, temperature, logits)), 1e-9)
    # (the oracle density integrates to 1; above temperature 1 it vanishes at both ends)
    assert gauss_legendre(lambda u: relaxed_bernoulli_pdf(u, 1.5, 0.3), 0, 1, 2000) == pytest.approx(
        1, rel=1e-9
    )
    close(relaxed.logits, logits, 1e-12)
    assert float(relaxed.temperature) == temperature


def test_relaxed_bernoulli_samples_follow_the_logistic_cdf():
    temperature, logits = 0.5, np.array([-1.0, 1.5])
    d = D.RelaxedBernoulli(t(temperature), logits=t(logits))
    fg.manual_seed(2)
    n = 20_000
    samples = npy(d.sample((n,)))
    assert ((samples > 0) & (samples < 1)).all()
    for i in range(2):
        xs = np.sort(samples[:, i])
        cdf = 1 / (1 + np.exp(-(temperature * np.log(xs / (1 - xs)) - logits[i])))
        assert np.max(np.abs(cdf - np.arange(1, n + 1) / n)) < 0.02
    # Their logits: P(Y <= y) = sigmoid(temperature y - logits).
    ys = np.sort(npy(D.LogitRelaxedBernoulli(t(temperature), logits=t(logits)).sample((n,))), axis=0)
    cdf = 1 / (1 + np.exp(-(temperature * ys - logits)))
    assert (np.max(np.abs(cdf - np.arange(1, n + 1)[:, None] / n), axis=0) < 0.02).all()


def test_relaxed_one_hot_categorical_density_and_argmax_frequencies():
    probs = np.array([0.2, 0.3, 0.5])
    temperature = 0.6
    d = D.RelaxedOneHotCategorical(t(temperature), probs=t(probs))
    x = np.array([[0.1, 0.6, 0.3], [0.7, 0.2, 0.1]])
    close(d.log_prob(t(x)), np.log(concrete_pdf(x, temperature, probs)), 1e-9)
    exp_relaxed = D.ExpRelaxedCategorical(t(temperature), logits=t(np.log(probs) + 3.0))
    close(
        exp_relaxed.log_prob(t(np.log(x))),
        np.log(concrete_pdf(x, temperature, probs)) + np.log(x).sum(-1),
        1e-9,
    )
    fg.manual_seed(3)
    n = 20_000
    samples = npy(d.sample((n,)))
    np.testing.assert_allclose(samples.sum(-1), 1.0, atol=1e-12)
    # The arg-max of a concrete sample is categorical with the given probabilities (Gumbel-max).
    freq = np.bincount(samples.argmax(-1), minlength=3) / n
    np.testing.assert_allclose(freq, probs, atol=6 * np.sqrt(0.25 / n))
    log_samples = npy(exp_relaxed.sample((n,)))
    np.testing.assert_allclose(np.exp(log_samples).sum(-1), 1.0, atol=1e-12)
    freq = np.bincount(log_samples.argmax(-1), minlength=3) / n
    np.testing.assert_allclose(freq, probs, atol=6 * np.sqrt(0.25 / n))
    logits = t(np.log(probs), requires_grad=True)
    assert D.RelaxedOneHotCategorical(t(temperature), logits=logits).rsample().requires_grad
    assert not D.RelaxedOneHotCategorical(t(temperature), logits=logits).sample().requires_grad


# Low-rank multivariate normal -------------------------------------------------------------

LOC = np.array([[0.3, -0.2, 1.0], [0.0, 0.5, -0.4]])
FACTOR = np.array([[[1.0, 0.5], [0.2, -0.3], [0.4, 1.1]], [[0.1, 0.0], [0.7, 0.2], [-0.5, 0.3]]])
DIAG = np.array([0.8, 1.5, 0.3])


def _lowrank():
    return D.LowRankMultivariateNormal(t(LOC), t(FACTOR), t(DIAG))


def _dense_cov():
    return FACTOR @ np.swapaxes(FACTOR, -1, -2) + np.diag(DIAG)


def test_lowrank_log_prob_entropy_and_matrices_against_dense_algebra():
    d = _lowrank()
    cov = _dense_cov()
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.array([[0.5, 0.1, -0.7], [1.2, -0.3, 0.2]])
    for i in range(2):
        assert npy(d.log_prob(t(x)))[i] == pytest.approx(mvn_logpdf(x[i], LOC[i], cov[i]), rel=1e-12)
        # H = n/2 (1 + log 2 pi) + 1/2 log det Sigma
        assert npy(d.entropy())[i] == pytest.approx(
            1.5 * (1 + np.log(2 * np.pi)) + 0.5 * np.linalg.slogdet(cov[i])[1]
        )
    check_gaussian_matrices(d, LOC, cov)


def test_lowrank_rsample_uses_two_normal_draws():
    d = _lowrank()
    fg.manual_seed(4)
    got = d.rsample((5,))
    fg.manual_seed(4)
    eps_w = npy(fg.randn(5, 2, 2, dtype=fg.float64))
    eps_d = npy(fg.randn(5, 2, 3, dtype=fg.float64))
    close(got, LOC + np.einsum("bij,sbj->sbi", FACTOR, eps_w) + np.sqrt(DIAG) * eps_d, 1e-12)
    fg.manual_seed(5)
    samples = npy(d.sample((40_000,)))
    for i in range(2):
        np.testing.assert_allclose(samples[:, i].mean(0), LOC[i], atol=0.05)
        np.testing.assert_allclose(np.cov(samples[:, i].T), _dense_cov()[i], atol=0.06)


def test_lowrank_shapes_expand_and_errors():
    d = _lowrank()
    e = d.expand((4, 2))
    assert e.batch_shape == (4, 2) and e.sample((3,)).shape == (3, 4, 2, 3)
    close(e.log_prob(t(LOC)), np.broadcast_to(npy(d.log_prob(t(LOC))), (4, 2)), 1e-12)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
        D.LowRankMultivariateNormal(fg.zeros(3), fg.ones(2, 1), fg.ones(3))
    with pytest.raises(ValueError, match="cov_diag must be a batch of vectors"):
        D.LowRankMultivariateNormal(fg.zeros(3), fg.ones(3, 1), fg.ones(2))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.LowRankMultivariateNormal(fg.tensor(0.0), fg.ones(3, 1), fg.ones(3))
    with pytest.raises(ValueError, match="Incompatible batch shapes"):
        D.LowRankMultivariateNormal(fg.zeros(2, 3), fg.ones(4, 3, 1), fg.ones(3))
    with pytest.raises(ValueError, match="cov_diag"):
        D.LowRankMultivariateNormal(fg.zeros(3), fg.ones(3, 1), -fg.ones(3))
    with pytest.raises(TypeError):
        D.LowRankMultivariateNormal([0.0, 0.0], fg.ones(2, 1), fg.ones(2))


# Mixtures ----------------------------------------------------------------------------------

WEIGHTS = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
MEANS, SDS = np.array([[-2.0, 0.0, 1.5], [0.5, 3.0, -1.0]]), np.array([[0.5, 1.0, 0.7], [1.2, 0.4, 0.9]])


def _gmm(weights=WEIGHTS):
    return D.MixtureSameFamily(D.Categorical(probs=t(weights)), D.Normal(t(MEANS), t(SDS)))


def _gmm_pdf(x, i):
    return sum(WEIGHTS[i, k] * normal_pdf(x, MEANS[i, k], SDS[i, k]) for k in range(3))


def test_mixture_density_moments_and_cdf():
    d = _gmm()
    assert d.batch_shape == (2,) and d.event_shape == ()
    x = np.array([0.3, -1.7])
    close(d.log_prob(t(x)), np.log([_gmm_pdf(x[0], 0), _gmm_pdf(x[1], 1)]), 1e-12)
    for i in range(2):
        mean = integrate(lambda u, i=i: u * _gmm_pdf(u, i))
        var = integrate(lambda u, i=i, m=mean: (u - m) ** 2 * _gmm_pdf(u, i))
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-6)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-6)
        want_cdf = gauss_legendre(lambda u, i=i: _gmm_pdf(u, i), -30.0, x[i], 1000)
        assert npy(d.cdf(t(x)))[i] == pytest.approx(want_cdf, abs=1e-9)


def test_mixture_samples_and_multivariate_components():
    d = _gmm()
    fg.manual_seed(6)
    n = 20_000
    samples = npy(d.sample((n,)))
    assert samples.shape == (n, 2)
    for i in range(2):
        xs = np.sort(samples[:, i])
        grid = np.linspace(-12, 12, 40_001)
        cdf = np.cumsum(_gmm_pdf(grid, i)) * (grid[1] - grid[0])
        assert np.max(np.abs(np.interp(xs, grid, cdf) - np.arange(1, n + 1) / n)) < 0.02
    # Two-dimensional events, one mixture for the whole batch.
    comp = D.Independent(
        D.Normal(t(np.stack([MEANS[0], MEANS[1]], -1)), t(np.stack([SDS[0], SDS[1]], -1))), 1
    )
    mv = D.MixtureSameFamily(D.Categorical(probs=t(WEIGHTS[0])), comp)
    assert mv.batch_shape == () and mv.event_shape == (2,)
    assert mv.sample((7,)).shape == (7, 2)
    x = np.array([0.1, 0.4])
    want = sum(
        WEIGHTS[0, k] * normal_pdf(x[0], MEANS[0, k], SDS[0, k]) * normal_pdf(x[1], MEANS[1, k], SDS[1, k])
        for k in range(3)
    )
    close(mv.log_prob(t(x)), np.log(want), 1e-12)
    close(mv.mean, WEIGHTS[0] @ np.stack([MEANS[0], MEANS[1]], -1), 1e-12)
    # A shared mixture over a batch of component sets.
    shared = _gmm(WEIGHTS[0])
    assert shared.batch_shape == (2,) and shared.sample((3,)).shape == (3, 2)


def test_mixture_expand_support_and_errors():
    d = _gmm()
    e = d.expand((4, 2))
    assert e.batch_shape == (4, 2) and e.sample((3,)).shape == (3, 4, 2)
    close(e.log_prob(t([0.2])), np.broadcast_to(npy(d.log_prob(t([0.2]))), (4, 2)), 1e-12)
    assert repr(d.support) == "MixtureSameFamilyConstraint(Real())"
    positive = D.MixtureSameFamily(D.Categorical(probs=t([0.5, 0.5])), D.Exponential(t([1.0, 2.0])))
    with pytest.raises(ValueError, match="support"):
        positive.log_prob(t(-1.0))
    with pytest.raises(ValueError, match="Categorical"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(t([0.0, 1.0]), 1.0))
    with pytest.raises(ValueError, match="Distribution"):
        D.MixtureSameFamily(D.Categorical(probs=t([0.5, 0.5])), t([0.0, 1.0]))
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(probs=t([0.5, 0.5])), D.Normal(t([0.0, 1.0, 2.0]), 1.0))
    with pytest.raises(ValueError, match="not compatible"):
        D.MixtureSameFamily(D.Categorical(probs=t(np.ones((3, 2)) / 2)), D.Normal(t(np.zeros((4, 2))), 1.0))
    assert D.MixtureSameFamily.has_rsample is False


# The exponential family base ----------------------------------------------------------------


def test_exponential_families_and_bregman_entropy():
    for d in (
        D.Normal(t(A), t(B)),
        D.Bernoulli(t([0.1, 0.5, 0.8])),
        D.Exponential(t(B)),
        D.ContinuousBernoulli(t(CB_PROBS)),
    ):
        assert isinstance(d, D.ExponentialFamily)
        close(D.ExponentialFamily.entropy(d), npy(d.entropy()), 1e-7)
    for d in (D.Categorical(t([0.3, 0.7])), D.Laplace(0.0, 1.0), D.Pareto(1.0, 2.0)):
        assert not isinstance(d, D.ExponentialFamily)
    # The Normal's closed-form entropy did not change: 1/2 log(2 pi e sigma^2).
    close(D.Normal(t(A), t(B)).entropy(), 0.5 * np.log(2 * np.pi * np.e * B**2), 1e-12)


# Gradients ----------------------------------------------------------------------------------------


def _pos(values):
    return t(values, requires_grad=True)


GRAD_CASES = {
    "HalfCauchy": (lambda a, b: D.HalfCauchy(a), VALUES),
    "Weibull": (lambda a, b: D.Weibull(a, b), VALUES),
    "Pareto": (lambda a, b: D.Pareto(a, b), VALUES + A),
    "VonMises": (lambda a, b: D.VonMises(a, b), VALUES),
    "ContinuousBernoulli": (lambda a, b: D.ContinuousBernoulli(logits=a - b), np.array([0.2, 0.5, 0.9])),
    "RelaxedBernoulli": (lambda a, b: D.RelaxedBernoulli(b[0], logits=a), np.array([0.2, 0.5, 0.9])),
    "MixtureSameFamily": (
        lambda a, b: D.MixtureSameFamily(D.Categorical(logits=a), D.Normal(b, a)),
        np.array(0.4),
    ),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck_log_prob(name):
    build, x = GRAD_CASES[name]
    assert gradcheck(lambda a, b: build(a, b).log_prob(t(x)), (_pos(A), _pos(B)))


@pytest.mark.parametrize(
    "name", ["HalfCauchy", "Weibull", "Pareto", "ContinuousBernoulli", "RelaxedBernoulli"]
)
def test_gradcheck_rsample(name):
    build, _ = GRAD_CASES[name]
    assert build(t(A), t(B)).has_rsample

    def draw(a, b):
        fg.manual_seed(8)  # the same noise for every finite-difference evaluation
        return build(a, b).rsample((4,))

    assert gradcheck(draw, (_pos(A), _pos(B)))


def test_gradcheck_lowrank_and_relaxed_categorical():
    x = t([[0.5, 0.1, -0.7]])

    def lowrank_log_prob(loc, factor, diag):
        return D.LowRankMultivariateNormal(loc, factor, diag).log_prob(x)

    def lowrank_rsample(loc, factor, diag):
        fg.manual_seed(9)
        return D.LowRankMultivariateNormal(loc, factor, diag).rsample((2,))

    params = (_pos(LOC), _pos(FACTOR), _pos(DIAG))
    assert gradcheck(lowrank_log_prob, params)
    assert gradcheck(lowrank_rsample, params)
    assert gradcheck(lambda *p: D.LowRankMultivariateNormal(*p).entropy(), params)

    def relaxed(temperature, logits):
        fg.manual_seed(10)
        d = D.RelaxedOneHotCategorical(temperature, logits=logits)
        return d.rsample((3,)), d.log_prob(t([0.2, 0.3, 0.5]))

    assert gradcheck(relaxed, (_pos(0.8), _pos([0.1, -0.4, 0.9])))


# Shapes, validation, vmap ---------------------------------------------------------------------------

SHAPE_CASES = {
    "HalfCauchy": lambda: D.HalfCauchy(t(A)),
    "Weibull": lambda: D.Weibull(t(A), t(B)),
    "Pareto": lambda: D.Pareto(t(A), t(B)),
    "VonMises": lambda: D.VonMises(t(A), t(B)),
    "ContinuousBernoulli": lambda: D.ContinuousBernoulli(t(CB_PROBS)),
    "LogitRelaxedBernoulli": lambda: D.LogitRelaxedBernoulli(t(0.5), probs=t(CB_PROBS)),
    "RelaxedBernoulli": lambda: D.RelaxedBernoulli(t(0.5), probs=t(CB_PROBS)),
}


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_shapes_and_expand(name):
    d = SHAPE_CASES[name]()
    x = np.array([0.3, 0.6, 0.9]) + (A if name == "Pareto" else 0)
    assert d.batch_shape == (3,) and d.event_shape == ()
    assert d.sample().shape == (3,) and d.sample((4, 2)).shape == (4, 2, 3)
    e = d.expand((5, 3))
    assert e.batch_shape == (5, 3) and type(e) is type(d)
    assert e.sample((2,)).shape == (2, 5, 3)
    close(e.log_prob(t(x)), np.broadcast_to(npy(d.log_prob(t(x))), (5, 3)), 1e-12)
    with pytest.raises(RuntimeError):
        d.expand((4,))


def test_relaxed_categorical_shapes():
    d = D.RelaxedOneHotCategorical(t(0.5), logits=t(np.zeros((2, 4))))
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    assert d.rsample((3,)).shape == (3, 2, 4)
    e = d.expand((5, 2))
    assert type(e) is type(d) and e.sample().shape == (5, 2, 4)
    base = D.ExpRelaxedCategorical(t(0.5), probs=t([0.1, 0.9])).expand((3,))
    assert base.batch_shape == (3,) and base.rsample().shape == (3, 2) and float(base.temperature) == 0.5


@pytest.mark.parametrize(
    ("make", "param"),
    [
        (lambda: D.HalfCauchy(t([1.0, -1.0])), "scale"),
        (lambda: D.Weibull(t([1.0]), t([0.0])), "concentration"),
        (lambda: D.Weibull(t([-1.0]), t([1.0])), "scale"),
        (lambda: D.Pareto(t([1.0]), t([-2.0])), "(alpha|rate)"),  # the base Exponential checks first
        (lambda: D.Pareto(t([0.0]), t([2.0])), "scale"),
        (lambda: D.VonMises(t([0.0]), t([-1.0])), "concentration"),
        (lambda: D.ContinuousBernoulli(probs=t([1.5])), "probs"),
        (lambda: D.ContinuousBernoulli(logits=t([math.nan])), "logits"),
        (lambda: D.RelaxedBernoulli(t(1.0), probs=t([-0.1])), "probs"),
        (lambda: D.RelaxedOneHotCategorical(t(1.0), probs=t([-0.1, 1.1])), "probs"),
        (lambda: D.LowRankMultivariateNormal(fg.zeros(2), fg.ones(2, 1), t([1.0, 0.0])), "cov_diag"),
    ],
)
def test_invalid_parameters_raise_value_error(make, param):
    with pytest.raises(ValueError, match=f"Expected parameter {param}"):
        make()


def test_out_of_support_values_and_argument_errors():
    with pytest.raises(ValueError, match="support"):
        D.Pareto(t([2.0]), t([3.0])).log_prob(t([1.0]))
    with pytest.raises(ValueError, match="support"):
        D.ContinuousBernoulli(t([0.3])).log_prob(t([1.2]))
    with pytest.raises(ValueError, match="support"):
        D.HalfCauchy(t([1.0])).log_prob(t([-1.0]))
    with pytest.raises(ValueError, match="support"):
        D.RelaxedOneHotCategorical(t(0.5), probs=t([0.5, 0.5])).log_prob(t([0.7, 0.7]))
    assert npy(D.HalfCauchy(1.0, validate_args=False).log_prob(fg.tensor(-1.0))) == -np.inf
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.ContinuousBernoulli()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.RelaxedBernoulli(t(1.0), probs=0.3, logits=0.1)
    with pytest.raises(TypeError, match="temperature"):
        D.LogitRelaxedBernoulli("hot", probs=0.3)


def test_vmap_of_log_prob_equals_the_loop():
    rows = t(np.array([[0.5, 1.2, 0.9], [0.7, 2.0, 1.1], [1.5, 0.3, 2.4]]))
    x = t([0.3, 0.8, 1.9])
    cases = [
        lambda s: D.HalfCauchy(s).log_prob(x),
        lambda s: D.Weibull(s, s + 1).log_prob(x),
        lambda s: D.Pareto(s * 0.1, s + 1).log_prob(x),
        lambda s: D.VonMises(s, s + 1).log_prob(x),
        lambda s: D.ContinuousBernoulli(logits=s - 1).log_prob(x / 2),
        lambda s: D.RelaxedBernoulli(t(0.5), logits=s - 1).log_prob(x / 2),
        lambda s: D.RelaxedOneHotCategorical(t(0.5), logits=s).log_prob(t([0.2, 0.3, 0.5])),
        lambda s: D.LowRankMultivariateNormal(s, s.unsqueeze(-1), s).log_prob(x),
        lambda s: D.MixtureSameFamily(D.Categorical(logits=s), D.Normal(s, 1.0)).log_prob(x),
    ]
    for fn in cases:
        close(vmap(fn)(rows), np.stack([npy(fn(r)) for r in rows]), 1e-12)
