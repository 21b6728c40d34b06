"""Kullback-Leibler divergences involving the gamma family (Gamma and
Chi2), Beta, Dirichlet, Poisson and Binomial, registered with
:func:`~ferrograd.distributions.kl.register_kl`: the pairs torch registers
for them, with each other and with the families of ``kl.py`` and
``kl_extra.py``, whose helpers it uses. Imported at the end of ``kl.py``.

Across families most are ``-H(p) + CE(p, q)``, with the cross entropy
``CE = -E_p[log q]`` of ``q`` written once per family of ``q`` from the
few expectations under ``p`` it needs (``E[x]``, ``E[log x]``, ...).
"""

from __future__ import annotations

import ferrograd

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import _EULER_GAMMA, Gumbel
from .kl import (
    _exponential_cross_entropy,
    _gumbel_cross_entropy,
    _infinite_like,
    _kl_loc_scale_normal,
    _register_infinite,
    _where_inf,
    register_kl,
)
from .kl_extra import _continuous_bernoulli_cross_entropy
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import all_true

__all__: list[str] = []


def _gamma_cross_entropy(q, mean_p, mean_log_p):
    """``-E_p[log q]`` for a gamma ``q``, given ``E_p[x]`` and ``E_p[log x]``."""
    a, b = q.concentration, q.rate
    return ferrograd.lgamma(a) - a * b.log() - (a - 1) * mean_log_p + b * mean_p


def _beta_cross_entropy(q, mean_log_p, mean_log1m_p):
    """``-E_p[log q]`` for a beta ``q``, given ``E_p[log x]`` and
    ``E_p[log(1 - x)]``."""
    a, b = q.concentration1, q.concentration0
    log_beta = ferrograd.lgamma(a) + ferrograd.lgamma(b) - ferrograd.lgamma(a + b)
    return log_beta - (a - 1) * mean_log_p - (b - 1) * mean_log1m_p


def _uniform_mean_log(low, high):
    """``E[log x]`` for ``x`` uniform on ``[low, high]`` (``0 <= low``):
    ``(h log h - l log l - (h - l)) / (h - l)``."""
    width = high - low
    return (ferrograd.xlogy(high, high) - ferrograd.xlogy(low, low) - width) / width


# Same family -----------------------------------------------------------------


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = ferrograd.lgamma(q.concentration) - ferrograd.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ferrograd.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    total_p, total_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = ferrograd.lgamma(total_p) - ferrograd.lgamma(total_q)
    t2 = (ferrograd.lgamma(p.concentration) - ferrograd.lgamma(q.concentration)).sum(-1)
    # E_p[log x_i] = digamma(a_i) - digamma(a_0)
    mean_log = ferrograd.digamma(p.concentration) - ferrograd.digamma(total_p).unsqueeze(-1)
    return t1 - t2 + ((p.concentration - q.concentration) * mean_log).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    # xlogy keeps a zero rate of p at KL = q.rate rather than 0 * log 0.
    return ferrograd.xlogy(p.rate, p.rate / q.rate) - (p.rate - q.rate)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if not all_true(p.total_count >= q.total_count):
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented"
        )
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _where_inf(p.total_count > q.total_count, kl)


# Across families ---------------------------------------------------------------

# Infinite where q's support misses part of p's.
_register_infinite("rate", [(Exponential, Beta), (Poisson, Bernoulli), (Poisson, Binomial)])
_register_infinite("scale", [(Pareto, Beta)])
_register_infinite("loc", [(t, u) for t in (Gumbel, Laplace, Normal) for u in (Beta, Gamma)])
_register_infinite("concentration", [(Gamma, u) for u in (Beta, ContinuousBernoulli, Pareto, Uniform)])

# -H(p) + CE(p, q) from p's mean and variance.
register_kl(Beta, Normal)(_kl_loc_scale_normal)
register_kl(Gamma, Normal)(_kl_loc_scale_normal)



@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, Exponential)
@register_kl(Gamma, Exponential)
def _kl_positive_exponential(p, q):
    return -p.entropy() + _exponential_cross_entropy(q, p.mean)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    # E_p[log x] = digamma(a) - digamma(a + b)
    mean_log = ferrograd.digamma(p.concentration1) - ferrograd.digamma(p.concentration1 + p.concentration0)
    return -p.entropy() + _gamma_cross_entropy(q, p.mean, mean_log)


@register_kl(Beta, Uniform)
@register_kl(ContinuousBernoulli, Uniform)
def _kl_unit_interval_uniform(p, q):
    """For any ``p`` supported on ``[0, 1]``: finite when ``q`` covers it."""
    result = -p.entropy() + (q.high - q.low).log()
    return _where_inf((q.low > 0) | (q.high < 1), result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    # E_p[log x] = -euler_gamma - log(rate)
    return -p.entropy() + _gamma_cross_entropy(q, p.mean, -_EULER_GAMMA - p.rate.log())


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    # E_p[exp(-x / s)] = (1 + 1 / (rate s))^-a, the gamma's moment generating function at -1 / s.
    exp_moment = (q.loc / q.scale).exp() * (1 + (p.rate * q.scale).reciprocal()).pow(-p.concentration)
    return -p.entropy() + _gumbel_cross_entropy(q, p.mean, exp_moment)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    mean_log = _uniform_mean_log(p.low, p.high)
    mean_log1m = _uniform_mean_log(1 - p.high, 1 - p.low)
    result = -p.entropy() + _beta_cross_entropy(q, mean_log, mean_log1m)
    return _where_inf((p.high > 1) | (p.low < 0), result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _gamma_cross_entropy(q, p.mean, _uniform_mean_log(p.low, p.high))
    return _where_inf(p.low < 0, result)


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _continuous_bernoulli_cross_entropy(q, p.mean)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    # E_p[log x] = log(scale) + 1 / alpha; E_p[x] is infinite for alpha <= 1, and so is the KL.
    mean_log = p.scale.log() + p.alpha.reciprocal()
    return _where_inf(p.alpha <= 1, -p.entropy() + _gamma_cross_entropy(q, p.mean, mean_log))
