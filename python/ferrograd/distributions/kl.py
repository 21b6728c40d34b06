"""Kullback-Leibler divergences ``KL(p || q)`` between distributions,
dispatched on the pair of types with the most specific registered match.

The closed forms below are ``E_p[log p] - E_p[log q]`` worked out per pair;
pairs whose supports make the divergence infinite return infinity.
"""

from __future__ import annotations

import math
import warnings

import ferrograd
from ferrograd.nn.functional import softplus

from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .distribution import Distribution
from .exponential import Exponential
from .geometric import Geometric
from .gumbel import _EULER_GAMMA, Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _half_log_det
from .normal import _LOG_SQRT_2PI, Normal
from .one_hot_categorical import OneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import _sum_rightmost
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}  # (type_p, type_q) -> function
_KL_MEMOIZE: dict = {}  # (type(p), type(q)) -> the dispatched function


def register_kl(type_p, type_q):
    """Decorator registering a pairwise KL function for
    :func:`kl_divergence`.

    When several registrations match a pair of subclasses, the one whose
    types are most specific wins (ordered by ``p``'s type first, then
    ``q``'s); if that differs from the order ``q`` first, a RuntimeWarning
    says the choice is ambiguous.

    Args:
        type_p (type): a subclass of :class:`Distribution`.
        type_q (type): a subclass of :class:`Distribution`.

    Example:
        >>> from ferrograd.distributions import Normal, kl_divergence, register_kl
        >>> class MyNormal(Normal):
        ...     pass
        >>> @register_kl(MyNormal, MyNormal)
        ... def _kl_mine(p, q):
        ...     return ferrograd.zeros(p.batch_shape)
        >>> kl_divergence(MyNormal(0.0, 1.0), MyNormal(1.0, 1.0))
        tensor(0.)
    """
    for name, cls in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {cls}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun

    return decorator


class _Match:
    """A registered type pair, ordered so that ``a < b`` when ``a`` is more
    specific: lexicographic by subclassing, the first differing type decides."""

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types, strict=True):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True

    def __lt__(self, other):
        return self <= other and self != other

    __hash__ = None


def _dispatch_kl(type_p, type_q):
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    if left_fun is not _KL_REGISTRY[right_p, right_q]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return left_fun


def kl_divergence(p, q):
    """Returns ``KL(p || q) = E_p[log p(x) - log q(x)]``, one value per batch
    element.

    Args:
        p (Distribution): the distribution the expectation is under.
        q (Distribution): the reference distribution.

    Raises:
        NotImplementedError: no function is registered for the pair of types.

    Example:
        >>> from ferrograd.distributions import Normal, kl_divergence
        >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
        tensor(0.5000)
    """
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fun = _KL_MEMOIZE[key]
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}"
        )
    return fun(p, q)


def _infinite_like(tensor):
    return ferrograd.full_like(tensor, math.inf)


def _where_inf(mask, value):
    return ferrograd.where(mask, math.inf, value)


def _exponential_cross_entropy(q, mean_p):
    """``-E_p[log q]`` for an exponential ``q``, given ``E_p[x]`` (``p`` on
    the non-negative half-line)."""
    return q.rate * mean_p - q.rate.log()


def _normal_cross_entropy(q, mean_p, second_moment_about_mean):
    """``-E_p[log q]`` for a normal ``q``, given ``E_p[x]`` and ``Var_p[x]``."""
    return (
        q.scale.log()
        + _LOG_SQRT_2PI
        + (second_moment_about_mean + (mean_p - q.loc).pow(2)) / (2 * q.scale**2)
    )


# Same family -----------------------------------------------------------------


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = ferrograd.where(p.probs == 0, 0.0, _where_inf(q.probs == 0, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = ferrograd.where(p.probs == 1, 0.0, _where_inf(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    q_zero, p_zero = ferrograd.broadcast_tensors(q.probs == 0, p.probs == 0)
    t = ferrograd.where(p_zero, 0.0, _where_inf(q_zero, t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _where_inf((q.low > p.low) | (q.high < p.high), result)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log() - (4 * p.scale * q.scale).log()


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (1 / p.probs - 1) * (-q.probs).log1p() - q.probs.log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # E_p[exp(-(x - q.loc) / q.scale)] = exp((q.loc - p.loc) / q.scale) * Gamma(1 + p.scale / q.scale).
    ratio = p.scale / q.scale
    mean_term = (p.loc + p.scale * _EULER_GAMMA - q.loc) / q.scale
    exp_term = ((q.loc - p.loc) / q.scale + ferrograd.lgamma(1 + ratio)).exp()
    return -ratio.log() - 1 - _EULER_GAMMA + mean_term + exp_term


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes cannot be computed"
        )
    n = p.event_shape[0]
    lq, lp = q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril
    batch = tuple(ferrograd.broadcast_shapes(lq.shape[:-2], lp.shape[:-2]))
    # tr(Sq^-1 Sp) = ||Lq^-1 Lp||_F^2
    solved = ferrograd.linalg.solve_triangular(
        lq.expand(batch + (n, n)), lp.expand(batch + (n, n)), upper=False
    )
    trace = solved.pow(2).sum((-2, -1))
    mahalanobis = _batch_mahalanobis(lq, q.loc - p.loc)
    return _half_log_det(lq) - _half_log_det(lp) + 0.5 * (trace + mahalanobis - n)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError(
            "KL between TransformedDistributions needs equal transforms and event shapes"
        )
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# Across families ---------------------------------------------------------------


def _register_infinite(param, pairs):
    """Registers, for each ``(type_p, type_q)`` in ``pairs`` (where ``q``'s
    support misses part of ``p``'s), a KL of infinity shaped like ``p``'s
    parameter ``param``."""

    def kl(p, q):
        return _infinite_like(getattr(p, param))

    for type_p, type_q in pairs:
        register_kl(type_p, type_q)(kl)


_register_infinite("rate", [(Exponential, Uniform)])
_register_infinite("loc", [(t, u) for t in (Gumbel, Laplace, Normal) for u in (Uniform, Exponential)])


def _gumbel_cross_entropy(q, mean_p, exp_moment):
    """``-E_p[log q]`` for a Gumbel ``q``, given ``E_p[x]`` and
    ``E_p[exp(-(x - q.loc) / q.scale)]``."""
    return q.scale.log() + (mean_p - q.loc) / q.scale + exp_moment


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E_p[exp(-x / s)] = rate / (rate + 1 / s)
    exp_moment = (q.loc / q.scale).exp() * p.rate * q.scale / (p.rate * q.scale + 1)
    return -p.entropy() + _gumbel_cross_entropy(q, p.mean, exp_moment)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(q, p.mean, p.variance)


@register_kl(Gumbel, Normal)
@register_kl(Laplace, Normal)
def _kl_loc_scale_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(q, p.mean, p.variance)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    # E_p[exp(-x / s)] = exp(-loc / s + scale^2 / (2 s^2))
    exp_moment = ((q.loc - p.loc) / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2))).exp()
    return -p.entropy() + _gumbel_cross_entropy(q, p.loc, exp_moment)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(mu, sigma) and d = mu - m:
    #   sigma sqrt(2/pi) exp(-d^2 / 2 sigma^2) + d erf(d / (sigma sqrt 2))
    d = p.loc - q.loc
    abs_moment = p.scale * math.sqrt(2 / math.pi) * (
        -d.pow(2) / (2 * p.scale.pow(2))
    ).exp() + d * ferrograd.erf(d / (p.scale * math.sqrt(2)))
    return -p.entropy() + (2 * q.scale).log() + abs_moment / q.scale


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return _where_inf(p.low < 0, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    width = p.high - p.low
    exp_moment = q.scale * (((q.loc - p.low) / q.scale).exp() - ((q.loc - p.high) / q.scale).exp()) / width
    return -p.entropy() + _gumbel_cross_entropy(q, p.mean, exp_moment)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(q, p.mean, p.variance)


from . import kl_extra as _kl_extra  # noqa: E402, F401  (registers the pairs of the families there)
from . import kl_gamma as _kl_gamma  # noqa: E402, F401  (registers the gamma-family pairs)
