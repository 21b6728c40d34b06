"""ferrograd.distributions, continuous univariate families: densities against
hand-written NumPy formulas; entropy, mean and variance against numerical
integrals of those densities; cdf/icdf, gradients, samples and shapes.

Oracles: the NumPy density of each family is written out below; moments and
entropies are integrals of it (trapezoid rule after ``x = c + w tan(t)``, which
covers heavy tails); gradients are checked by finite differences.
"""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from distribution_reference import FAMILIES, POSITIVE, integrate, normal_pdf
from ferrograd.autograd import gradcheck
from numpy_oracle import close, npy, t

LOC, SCALE = np.array([-0.7, 0.0, 1.3]), np.array([0.6, 1.0, 2.2])


def _values(name):
    if name == "Uniform":
        return LOC + 0.3 * SCALE
    return np.array([0.4, 1.1, 2.5]) if name in POSITIVE else np.array([-1.9, 0.2, 1.7])


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_log_prob_matches_density(name):
    make, pdf = FAMILIES[name]
    x = _values(name)
    close(make(LOC, SCALE).log_prob(t(x)), np.log(pdf(x, LOC, SCALE)), 1e-12)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_entropy_mean_variance_are_integrals_of_the_density(name):
    make, pdf = FAMILIES[name]
    d = make(LOC, SCALE)
    for i in range(3):
        m, s = LOC[i], SCALE[i]
        center = m + s / 2 if name == "Uniform" else (0.0 if name in POSITIVE else m)

        def integral(fn, center=m if name == "LogNormal" else center):
            if name == "LogNormal":  # over y = log(x): the density is a narrow spike and a long tail in x
                return integrate(
                    lambda y: fn(np.exp(np.clip(y, -300, 300))) * np.exp(np.clip(y, -300, 300)), center
                )
            return integrate(fn, center)

        def plogp(x, m=m, s=s):
            p = pdf(x, m, s)
            return np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)

        assert npy(d.entropy())[i] == pytest.approx(integral(plogp), rel=1e-4, abs=1e-5)
        if name == "Cauchy":
            continue
        mean = integral(lambda x, m=m, s=s: x * pdf(x, m, s))
        var = integral(lambda x, m=m, s=s, mean=mean: (x - mean) ** 2 * pdf(x, m, s))
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-4, abs=1e-5)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-4, abs=1e-5)
        assert npy(d.stddev)[i] == pytest.approx(np.sqrt(var), rel=1e-4)


def test_cauchy_moments_are_undefined():
    d = D.Cauchy(t(LOC), t(SCALE))
    assert np.isnan(npy(d.mean)).all() and np.isinf(npy(d.variance)).all()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_cdf_integrates_density_and_icdf_inverts_it(name):
    make, pdf = FAMILIES[name]
    d = make(LOC, SCALE)
    x = _values(name)
    cdf = npy(d.cdf(t(x)))
    for i in range(3):
        # From the support's lower end: the trapezoid rule must not straddle a jump of the density.
        lower = 0.0 if name in POSITIVE else LOC[i] if name == "Uniform" else x[i] - 60 * SCALE[i] - 60
        grid = np.linspace(lower, x[i], 600_001)
        want = np.trapezoid(pdf(grid, LOC[i], SCALE[i]), grid)
        tail = 0.0
        if name == "Cauchy":  # the mass left of the grid: atan tail
            tail = 0.5 + math.atan((grid[0] - LOC[i]) / SCALE[i]) / math.pi
        assert cdf[i] == pytest.approx(want + tail, abs=2e-5)
    close(d.icdf(t(cdf)), x, 1e-8)


def test_mode():
    close(D.Normal(t(LOC), t(SCALE)).mode, LOC)
    close(D.Gumbel(t(LOC), t(SCALE)).mode, LOC)
    close(D.LogNormal(t(LOC), t(SCALE)).mode, np.exp(LOC - SCALE**2))
    close(D.Exponential(t(SCALE)).mode, np.zeros(3))
    close(D.HalfNormal(t(SCALE)).mode, np.zeros(3))
    assert np.isnan(npy(D.Uniform(t(LOC), t(LOC + 1)).mode)).all()


def test_out_of_support_density_without_validation():
    assert npy(D.HalfNormal(1.0, validate_args=False).log_prob(fg.tensor(-1.0))) == -np.inf
    assert npy(D.Uniform(0.0, 1.0, validate_args=False).log_prob(fg.tensor(1.0))) == -np.inf
    assert npy(D.Uniform(0.0, 1.0).log_prob(fg.tensor(0.0))) == 0.0


# Gradients ------------------------------------------------------------------------


def _params():
    return t(LOC, requires_grad=True), t(SCALE, requires_grad=True)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_gradcheck_log_prob_and_entropy(name):
    make, _ = FAMILIES[name]
    x = t(_values(name))

    def build(m, s):
        if name == "Uniform":
            return D.Uniform(m, m + s)
        cls = getattr(D, name)
        return cls(s) if name in ("HalfNormal", "Exponential") else cls(m, s)

    assert gradcheck(lambda m, s: build(m, s).log_prob(x), _params())
    assert gradcheck(lambda m, s: build(m, s).entropy(), _params())
    assert gradcheck(lambda m, s: build(m, s).cdf(x), _params())


@pytest.mark.parametrize(
    "name", ["Normal", "Laplace", "Cauchy", "LogNormal", "Uniform", "Exponential", "HalfNormal"]
)
def test_gradcheck_rsample(name):
    cls = getattr(D, name)
    assert cls.has_rsample

    def draw(m, s):
        fg.manual_seed(7)  # the same noise for every finite-difference evaluation
        if name == "Uniform":
            return D.Uniform(m, m + s).rsample((4,))
        return (cls(s) if name in ("HalfNormal", "Exponential") else cls(m, s)).rsample((4,))

    assert gradcheck(draw, _params())


def test_rsample_is_location_scale_in_the_noise():
    # Normal.rsample = loc + eps * scale with eps from randn of the extended shape.
    fg.manual_seed(3)
    got = D.Normal(t(LOC), t(SCALE)).rsample((5,))
    fg.manual_seed(3)
    eps = fg.randn(5, 3, dtype=fg.float64)
    close(got, LOC + npy(eps) * SCALE, 1e-12)
    fg.manual_seed(3)
    got = D.Exponential(t(SCALE)).rsample((5,))
    fg.manual_seed(3)
    close(got, npy(fg.empty(5, 3, dtype=fg.float64).exponential_()) / SCALE, 1e-12)


def test_reparameterized_expectation_gradient():
    # d/dloc E[X^2] = 2 loc and d/dscale E[X^2] = 2 scale for X ~ Normal(loc, scale).
    loc, scale = (
        fg.tensor(0.7, dtype=fg.float64, requires_grad=True),
        fg.tensor(1.3, dtype=fg.float64, requires_grad=True),
    )
    fg.manual_seed(0)
    (D.Normal(loc, scale).rsample((200_000,)) ** 2).mean().backward()
    assert npy(loc.grad) == pytest.approx(1.4, abs=0.03)
    assert npy(scale.grad) == pytest.approx(2.6, abs=0.03)


def test_sample_has_no_graph_and_rsample_has_one():
    loc = fg.zeros(3, requires_grad=True)
    assert not D.Normal(loc, 1.0).sample().requires_grad
    assert D.Normal(loc, 1.0).rsample().requires_grad


# Samples ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_sample_distribution_matches_cdf(name):
    make, _ = FAMILIES[name]
    d = make(LOC, SCALE)
    fg.manual_seed(11)
    n = 20_000
    samples = npy(d.sample((n,)))
    assert samples.shape == (n, 3)
    for i in range(3):
        xs = np.sort(samples[:, i])
        cdf = npy(make(LOC[i : i + 1], SCALE[i : i + 1]).cdf(t(xs[:, None])))[:, 0]
        ks = np.max(np.abs(cdf - np.arange(1, n + 1) / n))
        assert ks < 0.02, (name, i, ks)  # the 1e-6 quantile of the KS statistic is about 0.017
        if name != "Cauchy":
            se = np.sqrt(npy(d.variance)[i] / n)
            assert abs(xs.mean() - npy(d.mean)[i]) < 6 * se


def test_seeded_samples_repeat():
    fg.manual_seed(5)
    a = D.Gumbel(t(LOC), t(SCALE)).sample((3,))
    fg.manual_seed(5)
    b = D.Gumbel(t(LOC), t(SCALE)).sample((3,))
    close(a, npy(b))


# Shapes ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_shapes_and_expand(name):
    make, _ = FAMILIES[name]
    d = make(LOC, SCALE)
    assert d.batch_shape == (3,) and d.event_shape == ()
    assert d.sample().shape == (3,)
    assert d.sample((4, 2)).shape == (4, 2, 3)
    assert d.log_prob(t(_values(name)[None, :].repeat(2, 0))).shape == (2, 3)
    e = d.expand((5, 3))
    assert e.batch_shape == (5, 3) and type(e) is type(d)
    assert e.sample((2,)).shape == (2, 5, 3)
    close(e.log_prob(t(_values(name))), np.broadcast_to(npy(d.log_prob(t(_values(name)))), (5, 3)))
    with pytest.raises(RuntimeError):
        d.expand((4,))


def test_python_number_parameters_give_scalar_batch():
    d = D.Normal(0.0, 1.0)
    assert d.batch_shape == () and d.sample().shape == ()
    assert d.loc.dtype == fg.get_default_dtype()
    assert D.Exponential(2.0).rsample((3,)).shape == (3,)
    assert D.Normal(fg.zeros(2, dtype=fg.float64), 1.0).scale.dtype == fg.float64


def test_extended_shape_and_sample_n():
    d = D.Laplace(fg.zeros(2, 3), 1.0)
    assert d._extended_shape((4,)) == (4, 2, 3)
    with pytest.warns(FutureWarning):
        assert d.sample_n(5).shape == (5, 2, 3)


def test_perplexity_is_exp_entropy():
    d = D.Normal(t(LOC), t(SCALE))
    close(d.perplexity(), np.exp(npy(d.entropy())))


def test_vmap_over_parameters():
    from ferrograd.func import grad, vmap

    locs = fg.randn(4, 3, dtype=fg.float64)
    got = vmap(lambda m: D.Normal(m, 2.0).log_prob(fg.zeros(3, dtype=fg.float64)))(locs)
    close(got, np.log(normal_pdf(0.0, npy(locs), 2.0)), 1e-12)
    g = vmap(grad(lambda m: D.Laplace(m, 1.0).log_prob(fg.ones((), dtype=fg.float64))))(locs[:, 0])
    close(g, np.sign(1.0 - npy(locs[:, 0])))
    with pytest.raises(ValueError, match="Expected parameter scale"):
        vmap(lambda s: D.Normal(0.0, s).log_prob(fg.zeros(())))(fg.tensor([1.0, -1.0]))
