"""ferrograd.distributions: KL divergences involving Gamma, Chi2, Beta,
Dirichlet, Poisson and Binomial against numerical integrals and sums of
``p log(p / q)`` written in the test, the infinite pairs, the
Dirichlet divergence through its stick-breaking factorisation, and the
exponential-family parameterisation (natural parameters and log-normalizer)
through the Bregman divergence it implies."""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from ferrograd.autograd import gradcheck
from ferrograd.distributions.exp_family import ExponentialFamily
from gamma_reference import (
    beta_logpdf,
    binomial_logpmf,
    gamma_logpdf,
    on_interval,
    on_positive,
    poisson_logpmf,
)
from numpy_oracle import close, npy, t


def _normal_logpdf(x, xc, m, s):
    return -((x - m) ** 2) / (2 * s * s) - np.log(s) - 0.5 * math.log(2 * math.pi)


def _gumbel_logpdf(x, xc, m, s):
    z = (x - m) / s
    return -z - np.exp(-z) - np.log(s)


def _continuous_bernoulli_logpdf(x, xc, lam):
    log_norm = np.log(2 * np.arctanh(1 - 2 * lam) / (1 - 2 * lam))
    return log_norm + x * np.log(lam) + xc * np.log1p(-lam)


# name -> (constructor from parameter arrays, log-density of (x, 1 - x, *params))
FAMILIES = {
    "Gamma": (lambda a, b: D.Gamma(t(a), t(b)), lambda x, xc, a, b: gamma_logpdf(x, a, b)),
    "Chi2": (lambda df: D.Chi2(t(df)), lambda x, xc, df: gamma_logpdf(x, df / 2, 0.5)),
    "Beta": (lambda a, b: D.Beta(t(a), t(b)), beta_logpdf),
    "Exponential": (lambda r: D.Exponential(t(r)), lambda x, xc, r: np.log(r) - r * x),
    "Normal": (lambda m, s: D.Normal(t(m), t(s)), _normal_logpdf),
    "Gumbel": (lambda m, s: D.Gumbel(t(m), t(s)), _gumbel_logpdf),
    "Uniform": (lambda lo, hi: D.Uniform(t(lo), t(hi)), lambda x, xc, lo, hi: -np.log(hi - lo) + 0 * x),
    "Pareto": (
        lambda s, a: D.Pareto(t(s), t(a)),
        lambda x, xc, s, a: np.log(a) + a * np.log(s) - (a + 1) * np.log(x),
    ),
    "ContinuousBernoulli": (lambda lam: D.ContinuousBernoulli(t(lam)), _continuous_bernoulli_logpdf),
}
P_PARAMS = {
    "Gamma": (np.array([0.7, 3.0]), np.array([1.5, 0.6])),
    "Chi2": (np.array([1.0, 5.0]),),
    "Beta": (np.array([0.6, 2.5]), np.array([1.8, 0.9])),
    "Exponential": (np.array([0.5, 2.0]),),
    "Uniform": (np.array([0.0, 0.2]), np.array([1.0, 0.7])),
    "Pareto": (np.array([0.5, 2.0]), np.array([2.5, 4.0])),
}
Q_PARAMS = {
    "Gamma": (np.array([1.2, 2.0]), np.array([0.8, 1.1])),
    "Beta": (np.array([1.5, 0.7]), np.array([0.9, 2.2])),
    "Exponential": (np.array([1.3, 0.4]),),
    "Normal": (np.array([0.4, -1.0]), np.array([0.9, 2.0])),
    "Gumbel": (np.array([0.3, 1.5]), np.array([0.8, 2.5])),
    "Uniform": (np.array([-0.5, 0.0]), np.array([1.0, 2.0])),
    "ContinuousBernoulli": (np.array([0.3, 0.8]),),
}
PAIRS = [
    ("Gamma", "Gamma"), ("Chi2", "Gamma"), ("Gamma", "Exponential"), ("Gamma", "Normal"),
    ("Gamma", "Gumbel"), ("Exponential", "Gamma"), ("Beta", "Beta"), ("Beta", "Exponential"),
    ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "Uniform"), ("Uniform", "Beta"), ("Uniform", "Gamma"),
    ("Beta", "ContinuousBernoulli"), ("Pareto", "Gamma"),
]  # fmt: skip


def _expect(name, params, fn):
    """``E_p[fn(x, 1 - x)]`` for ``p`` of the family ``name`` with the scalar ``params``."""
    logpdf = FAMILIES[name][1]

    def weighted(x, xc):
        return np.exp(logpdf(x, xc, *params)) * fn(x, xc)

    if name == "Beta":
        return on_interval(weighted, 0.0, 1.0)
    if name == "Uniform":
        lo, hi = params
        return on_interval(lambda x, to_hi: weighted(x, (1 - hi) + to_hi), lo, hi)
    if name == "Pareto":  # x = scale exp(e^u) on [scale, inf)
        u = np.linspace(-40.0, 5.0, 400_001)
        x = params[0] * np.exp(np.exp(u))
        return np.trapezoid(weighted(x, 1 - x) * x * np.exp(u), u)
    return on_positive(lambda x: weighted(x, 1 - x))


@pytest.mark.parametrize(("p_name", "q_name"), PAIRS)
def test_kl_matches_numerical_integral(p_name, q_name):
    (make_p, logp), (make_q, logq) = FAMILIES[p_name], FAMILIES[q_name]
    pp, qp = P_PARAMS[p_name], Q_PARAMS[q_name]
    got = npy(D.kl_divergence(make_p(*pp), make_q(*qp)))
    assert got.shape == (2,)
    for i in range(2):
        pi, qi = [v[i] for v in pp], [v[i] for v in qp]
        want = _expect(p_name, pi, lambda x, xc, pi=pi, qi=qi: logp(x, xc, *pi) - logq(x, xc, *qi))
        assert got[i] == pytest.approx(want, rel=1e-8, abs=1e-10), (p_name, q_name, i)


@pytest.mark.parametrize(("p_name", "q_name"), PAIRS)
def test_kl_gradients(p_name, q_name):
    pp = [t(v, requires_grad=True) for v in P_PARAMS[p_name]]
    qp = [t(v, requires_grad=True) for v in Q_PARAMS[q_name]]
    bare = {"Gamma": D.Gamma, "Chi2": D.Chi2, "Beta": D.Beta, "Exponential": D.Exponential}
    bare.update({"Normal": D.Normal, "Gumbel": D.Gumbel, "Uniform": D.Uniform, "Pareto": D.Pareto})
    bare["ContinuousBernoulli"] = D.ContinuousBernoulli
    n = len(pp)

    def kl(*params):
        return D.kl_divergence(bare[p_name](*params[:n]), bare[q_name](*params[n:]))

    # Uniform's bounds sit on the support's edge in some cases: differentiate the others only.
    inputs = [v if p_name != "Uniform" else v.detach() for v in pp] + qp
    assert gradcheck(kl, inputs)


def test_kl_between_discrete_families_matches_sums():
    k = np.arange(0, 400.0)
    rp, rq = np.array([0.3, 4.0, 9.5]), np.array([1.1, 2.5, 12.0])
    got = npy(D.kl_divergence(D.Poisson(t(rp)), D.Poisson(t(rq))))
    for i in range(3):
        lp, lq = poisson_logpmf(k, rp[i]), poisson_logpmf(k, rq[i])
        assert got[i] == pytest.approx((np.exp(lp) * (lp - lq)).sum(), rel=1e-11)
    close(D.kl_divergence(D.Poisson(t([0.0])), D.Poisson(t([2.0]))), [2.0])  # P(0) = 1 against exp(-2)

    n, pp, pq = 7.0, np.array([0.2, 0.5, 0.9]), np.array([0.6, 0.45, 0.3])
    ks = np.arange(n + 1)
    for d in (
        D.kl_divergence(D.Binomial(7, probs=t(pp)), D.Binomial(7, probs=t(pq))),
        D.kl_divergence(D.Binomial(t(n), logits=t(np.log(pp / (1 - pp)))), D.Binomial(7, probs=t(pq))),
    ):
        for i in range(3):
            lp, lq = binomial_logpmf(ks, n, pp[i]), binomial_logpmf(ks, n, pq[i])
            assert npy(d)[i] == pytest.approx((np.exp(lp) * (lp - lq)).sum(), rel=1e-10)

    bern, rate = np.array([0.1, 0.7]), np.array([0.5, 3.0])
    got = npy(D.kl_divergence(D.Bernoulli(t(bern)), D.Poisson(t(rate))))
    for i in range(2):
        lp = np.log([1 - bern[i], bern[i]])
        assert got[i] == pytest.approx((np.exp(lp) * (lp - poisson_logpmf(np.arange(2.0), rate[i]))).sum())


def test_kl_binomial_count_mismatch():
    p = D.Binomial(t([5.0, 7.0]), probs=t([0.3, 0.3]))
    d = npy(D.kl_divergence(p, D.Binomial(t([5.0, 6.0]), probs=t([0.4, 0.4]))))
    assert np.isfinite(d[0]) and np.isinf(d[1])  # p puts mass on 7, where q has none
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(p, D.Binomial(8, probs=t([0.4, 0.4])))


def test_kl_dirichlet_is_the_sum_over_its_stick_breaking_betas():
    # Under both p and q, x1 ~ Beta(a1, a2 + a3) and x2 / (1 - x1) ~ Beta(a2, a3) independently; KL is
    # invariant under that bijection and adds over independent parts.
    a, b = np.array([[0.8, 2.0, 3.5], [1.5, 0.7, 1.0]]), np.array([[1.2, 1.0, 0.6], [2.5, 2.0, 0.9]])
    got = npy(D.kl_divergence(D.Dirichlet(t(a)), D.Dirichlet(t(b))))
    for i in range(2):
        parts = [
            ((a[i, 0], a[i, 1] + a[i, 2]), (b[i, 0], b[i, 1] + b[i, 2])),
            ((a[i, 1], a[i, 2]), (b[i, 1], b[i, 2])),
        ]
        want = sum(
            _expect("Beta", pa, lambda x, xc, pa=pa, qa=qa: beta_logpdf(x, xc, *pa) - beta_logpdf(x, xc, *qa))
            for pa, qa in parts
        )
        assert got[i] == pytest.approx(want, rel=1e-8)
    close(D.kl_divergence(D.Dirichlet(t(a)), D.Dirichlet(t(a))), [0.0, 0.0], 1e-12)
    conc = [t(a, requires_grad=True), t(b, requires_grad=True)]
    assert gradcheck(lambda p, q: D.kl_divergence(D.Dirichlet(p), D.Dirichlet(q)), conc)


@pytest.mark.parametrize(
    ("p", "q"),
    [
        (D.Exponential(t([1.0, 2.0])), D.Beta(t([1.0, 2.0]), 2.0)),
        (D.Gamma(t([1.0, 2.0]), 1.0), D.Beta(1.0, t([1.0, 2.0]))),
        (D.Gamma(t([1.0, 2.0]), 1.0), D.Uniform(0.0, t([5.0, 9.0]))),
        (D.Normal(t([0.5, 0.2]), 1.0), D.Beta(2.0, t([1.0, 2.0]))),
        (D.Normal(t([0.5, 0.2]), 1.0), D.Gamma(2.0, t([1.0, 2.0]))),
        (D.Laplace(t([0.5, 0.2]), 1.0), D.Beta(2.0, t([1.0, 2.0]))),
        (D.Laplace(t([0.5, 0.2]), 1.0), D.Gamma(2.0, t([1.0, 2.0]))),
        (D.Gumbel(t([0.5, 0.2]), 1.0), D.Beta(2.0, t([1.0, 2.0]))),
        (D.Gumbel(t([0.5, 0.2]), 1.0), D.Gamma(2.0, t([1.0, 2.0]))),
        (D.Poisson(t([0.5, 2.0])), D.Bernoulli(t([0.5, 0.2]))),
        (D.Poisson(t([0.5, 2.0])), D.Binomial(10, t([0.5, 0.2]))),
        (D.Beta(t([2.0, 3.0]), 1.0), D.Uniform(t([0.1, 0.0]), t([1.0, 0.9]))),
        (D.Uniform(t([-0.1, 0.5]), t([0.5, 1.5])), D.Beta(2.0, t([1.0, 2.0]))),
        (D.Uniform(t([-0.1, -2.0]), t([0.5, 1.5])), D.Gamma(2.0, t([1.0, 2.0]))),
        (D.Beta(t([2.0, 3.0]), 1.0), D.Pareto(1.0, t([1.0, 2.0]))),
        (D.Gamma(t([1.0, 2.0]), 1.0), D.Pareto(1.0, t([1.0, 2.0]))),
        (D.Gamma(t([1.0, 2.0]), 1.0), D.ContinuousBernoulli(t([0.3, 0.6]))),
        (D.Pareto(1.0, t([1.0, 2.0])), D.Beta(2.0, t([1.0, 2.0]))),
        (D.Pareto(1.0, t([0.5, 1.0])), D.Gamma(2.0, t([1.0, 2.0]))),  # infinite mean
    ],
)
def test_kl_is_infinite_where_q_misses_part_of_the_support(p, q):
    d = D.kl_divergence(p, q)
    assert d.shape == (2,) and np.isposinf(npy(d)).all()


def test_chi2_and_subclass_dispatch():
    with_gamma = D.kl_divergence(D.Chi2(t([3.0])), D.Gamma(t([1.5]), t([0.5])))
    close(with_gamma, [0.0], 1e-12)
    close(D.kl_divergence(D.Chi2(t([3.0])), D.Chi2(t([3.0]))), [0.0], 1e-12)
    close(D.kl_divergence(D.Beta(t([2.0]), t([3.0])), D.Beta(t([2.0]), t([3.0]))), [0.0], 1e-12)
    close(D.kl_divergence(D.Poisson(t([2.0])), D.Poisson(t([2.0]))), [0.0], 1e-12)
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.StudentT(2.0), D.Normal(0.0, 1.0))  # as torch: none registered


# The exponential-family parameterisation --------------------------------------------------------


def _bregman_kl(p, q):
    """``F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>`` from the natural
    parameters and log-normalizer of ``p`` and ``q``."""
    theta_p = [v.detach().requires_grad_() for v in p._natural_params]
    log_norm_p = p._log_normalizer(*theta_p)
    grads = fg.autograd.grad(log_norm_p.sum(), theta_p)
    result = q._log_normalizer(*q._natural_params) - log_norm_p
    for tp, tq, g in zip(theta_p, q._natural_params, grads, strict=True):
        term = (tq - tp) * g
        result = result - (term.sum(-1) if len(p.event_shape) else term)
    return result


@pytest.mark.parametrize(
    ("p", "q"),
    [
        (D.Gamma(t([0.7, 3.0]), t([1.5, 0.6])), D.Gamma(t([1.2, 2.0]), t([0.8, 1.1]))),
        (D.Beta(t([0.6, 2.5]), t([1.8, 0.9])), D.Beta(t([1.5, 0.7]), t([0.9, 2.2]))),
        (D.Dirichlet(t([[0.8, 2.0, 3.5]])), D.Dirichlet(t([[1.2, 1.0, 0.6]]))),
        (D.Poisson(t([0.3, 4.0])), D.Poisson(t([1.1, 2.5]))),
    ],
)
def test_natural_parameters_and_log_normalizer_give_the_kl(p, q):
    assert isinstance(p, ExponentialFamily)
    close(_bregman_kl(p, q), npy(D.kl_divergence(p, q)), 1e-10)


def test_gamma_entropy_from_the_log_normalizer():
    d = D.Gamma(t([0.7, 3.0]), t([1.5, 0.6]))
    close(ExponentialFamily.entropy(d), npy(d.entropy()), 1e-10)
