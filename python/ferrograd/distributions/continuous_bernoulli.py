"""The continuous Bernoulli distribution on ``[0, 1]``."""

from __future__ import annotations

import math

import ferrograd
from ferrograd.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .bernoulli import _SuccessProbability
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]

# Note [continuous Bernoulli near 1/2]: the normaliser
# C(p) = 2 atanh(1 - 2p) / (1 - 2p) and the moments are 0/0 at p = 1/2.
# Inside ``lims`` (an interval around 1/2) the closed forms are evaluated at
# ``lims[0]`` instead (so that neither they nor their gradients see the
# 0/0) and the result is the Taylor expansion about 1/2 in ``x = p - 1/2``:
#   log C = log 2 + (4/3) x^2 + (104/45) x^4,
#   mean  = 1/2 + x/3 + (16/45) x^3,
#   var   = 1/12 - x^2/15 + (128/945) x^4.


class ContinuousBernoulli(ExponentialFamily, _SuccessProbability):
    """The continuous Bernoulli distribution: density
    ``C(p) p^x (1 - p)^(1 - x)`` on ``[0, 1]``, with the normalising constant
    ``C(p)`` that makes it integrate to 1.

    ``probs`` (in ``(0, 1)``, clamped away from the ends) and ``logits``
    (``log(p / (1 - p))``) parameterise the shape; they are not a
    probability or log-odds of anything. Samples come from the inverse
    CDF of a uniform draw, so :meth:`rsample` is reparameterized.

    Give exactly one of ``probs`` and ``logits``.

    Args:
        probs (float or Tensor, optional): the parameter ``p``.
        logits (float or Tensor, optional): ``log(p / (1 - p))``.
        lims (tuple of float): the interval about ``p = 1/2`` where Taylor
            expansions replace the closed forms, which are 0/0 at 1/2.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import ContinuousBernoulli
        >>> ContinuousBernoulli(probs=0.5).log_prob(ferrograd.tensor(0.3))
        tensor(0.)
    """

    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        super().__init__(probs, logits, validate_args=validate_args)
        if probs is not None:
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        return super().expand(batch_shape, _instance=new)

    @lazy_property
    def probs(self):
        """Tensor: the parameter ``p``, clamped into the open unit interval."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs`` with the values inside ``lims`` moved to ``lims[0]``."""
        return ferrograd.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """``log C(p)``; see Note [continuous Bernoulli near 1/2]."""
        cut = self._cut_probs()
        below_half = ferrograd.where(cut <= 0.5, cut, 0.0)
        above_half = ferrograd.where(cut >= 0.5, cut, 1.0)
        log_norm = ferrograd.log((ferrograd.log1p(-cut) - ferrograd.log(cut)).abs()) - ferrograd.where(
            cut <= 0.5, ferrograd.log1p(-2.0 * below_half), ferrograd.log(2.0 * above_half - 1.0)
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ferrograd.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (ferrograd.log1p(-cut) - ferrograd.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ferrograd.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / (
            ferrograd.log1p(-cut) - ferrograd.log(cut)
        ).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ferrograd.where(self._outside_unstable_region(), variances, taylor)

    def sample(self, sample_shape=()):
        with ferrograd.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = ferrograd.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = ferrograd.where(self._outside_unstable_region(), cdfs, value)
        return ferrograd.where(value <= 0.0, 0.0, ferrograd.where(value >= 1.0, 1.0, inside))

    def icdf(self, value):
        cut = self._cut_probs()
        closed = (ferrograd.log1p(-cut + value * (2.0 * cut - 1.0)) - ferrograd.log1p(-cut)) / (
            ferrograd.log(cut) - ferrograd.log1p(-cut)
        )
        return ferrograd.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        log_probs0 = ferrograd.log1p(-self.probs)
        log_probs1 = ferrograd.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        # F(eta) = log((e^eta - 1) / eta), with its expansion about eta = 0
        # inside the lims shifted to the natural parameter.
        low, high = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = (x <= low) | (x > high)
        cut = ferrograd.where(outside, x, low)
        log_norm = ferrograd.log(ferrograd.expm1(cut).abs()) - ferrograd.log(cut.abs())
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ferrograd.where(outside, log_norm, taylor)
