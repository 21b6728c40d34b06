"""More ``kl_divergence`` pairs: the exponential-family fallback, the
low-rank multivariate normal, the continuous Bernoulli and the Pareto
distribution, with each other and with the families of
:mod:`~ferrograd.distributions.kl`.

Imported at the end of ``kl.py``, whose registry and helpers it uses. As
there, each closed form is ``-H(p) - E_p[log q]`` worked out for the pair,
and pairs where ``q`` misses part of ``p``'s support return infinity.
"""

from __future__ import annotations

import ferrograd

from .continuous_bernoulli import ContinuousBernoulli
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gumbel import Gumbel
from .kl import (
    _exponential_cross_entropy,
    _infinite_like,
    _normal_cross_entropy,
    _register_infinite,
    _where_inf,
    register_kl,
)
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _half_log_det
from .normal import Normal
from .pareto import Pareto
from .transforms import _sum_rightmost
from .uniform import Uniform

__all__: list[str] = []


# The exponential-family fallback ---------------------------------------------------


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # The Bregman divergence of the log-normalizer F:
    # KL = F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>.
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot be computed "
            "using Bregman divergences"
        )
    p_params, p_log_norm, grads = p._log_normalizer_and_gradients()
    q_params = q._natural_params
    result = q._log_normalizer(*q_params) - p_log_norm
    for p_param, q_param, grad in zip(p_params, q_params, grads, strict=True):
        result = result - _sum_rightmost((q_param - p_param) * grad, len(q.event_shape))
    return result


# Low-rank multivariate normal ---------------------------------------------------------


def _trace_xxt(x):
    """``tr(X X^T)``, the squared Frobenius norm, over a batch of matrices."""
    return x.pow(2).sum((-2, -1))


def _check_event_shapes(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError(
            "KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
            f"cannot be computed: {tuple(p.event_shape)} vs {tuple(q.event_shape)}"
        )


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril)


def _lowrank_inverse_parts(q):
    """``(D^{-1}, A)`` with ``Sigma_q^{-1} = diag(D^{-1}) - A^T A`` (Woodbury),
    ``A = C^{-1/2} W^T D^{-1}`` for the capacitance factor ``C^{1/2}``."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    a = ferrograd.linalg.solve_triangular(q._capacitance_tril, wt_dinv, upper=False)
    return q._unbroadcasted_cov_diag.reciprocal(), a


def _lowrank_mahalanobis(q, diff):
    return _batch_lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, diff, q._capacitance_tril
    )


# Each is 1/2 (log det Sq - log det Sp + tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n).


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q)
    log_dets = _lowrank_logdet(q) - _lowrank_logdet(p)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    # tr((diag(1/Dq) - A^T A)(diag(Dp) + Wp Wp^T))
    q_diag_inv, a = _lowrank_inverse_parts(q)
    p_diag, p_factor = p._unbroadcasted_cov_diag, p._unbroadcasted_cov_factor
    trace = (
        (p_diag * q_diag_inv).sum(-1)
        + _trace_xxt(p_factor * q_diag_inv.sqrt().unsqueeze(-1))
        - _trace_xxt(a * p_diag.sqrt().unsqueeze(-2))
        - _trace_xxt(a.matmul(p_factor))
    )
    return 0.5 * (log_dets + trace + mahalanobis - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q)
    log_dets = _lowrank_logdet(q) - 2 * _half_log_det(p._unbroadcasted_scale_tril)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    # tr((diag(1/Dq) - A^T A) Lp Lp^T)
    q_diag_inv, a = _lowrank_inverse_parts(q)
    p_tril = p._unbroadcasted_scale_tril
    trace = _trace_xxt(p_tril * q_diag_inv.sqrt().unsqueeze(-1)) - _trace_xxt(a.matmul(p_tril))
    return 0.5 * (log_dets + trace + mahalanobis - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q)
    q_tril = q._unbroadcasted_scale_tril
    log_dets = 2 * _half_log_det(q_tril) - _lowrank_logdet(p)
    mahalanobis = _batch_mahalanobis(q_tril, q.loc - p.loc)
    # tr(Sq^-1 (Wp Wp^T + Dp)) = ||Lq^-1 Wp||^2 + ||Lq^-1 Dp^(1/2)||^2
    n, rank = p._unbroadcasted_cov_factor.shape[-2:]
    batch = tuple(ferrograd.broadcast_shapes(q_tril.shape[:-2], p._unbroadcasted_cov_factor.shape[:-2]))
    q_tril = q_tril.expand(batch + (n, n))
    p_factor = p._unbroadcasted_cov_factor.expand(batch + (n, rank))
    p_diag = ferrograd.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    trace = _trace_xxt(ferrograd.linalg.solve_triangular(q_tril, p_factor, upper=False)) + _trace_xxt(
        ferrograd.linalg.solve_triangular(q_tril, p_diag, upper=False)
    )
    return 0.5 * (log_dets + trace + mahalanobis - n)


# Continuous Bernoulli -------------------------------------------------------------------
# Its log-density is log C(p) + x logit(p) + log(1 - p) on [0, 1].


def _continuous_bernoulli_cross_entropy(q, mean_p):
    """``-E_p[log q]`` for a continuous Bernoulli ``q``, given ``E_p[x]``."""
    return -(mean_p * q.logits + ferrograd.log1p(-q.probs) + q._cont_bern_log_norm())


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ferrograd.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ferrograd.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() + _exponential_cross_entropy(q, p.mean)


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(q, p.mean, p.variance)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _continuous_bernoulli_cross_entropy(q, p.mean)
    return _where_inf((p.low < 0) | (p.high > 1), result)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


# Pareto -------------------------------------------------------------------------------------


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _where_inf(p.scale < q.scale, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    result = -p.entropy() + _exponential_cross_entropy(q, p.mean)
    return _where_inf(p.alpha <= 1, result)  # the mean is infinite


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    result = -p.entropy() + _normal_cross_entropy(q, p.mean, p.variance)
    return _where_inf(p.alpha <= 2, result)  # the variance is infinite


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    # E_p[log x] = (h log h - h - l log l + l) / (h - l) for x ~ Uniform(l, h).
    width = p.high - p.low
    mean_log = (ferrograd.xlogy(p.high, p.high) - ferrograd.xlogy(p.low, p.low) - width) / width
    result = -p.entropy() - q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * mean_log
    return _where_inf(p.low < q.scale, result)


# Supports that q misses in part: the real line or half-line against a bounded
# or shifted one.
_register_infinite("scale", [(Pareto, ContinuousBernoulli), (Pareto, Uniform)])
_register_infinite("rate", [(Exponential, ContinuousBernoulli), (Exponential, Pareto)])
_register_infinite("loc", [(t, u) for t in (Gumbel, Laplace, Normal) for u in (ContinuousBernoulli, Pareto)])
