"""The negative binomial distribution: successes before ``total_count``
failures."""

from __future__ import annotations

import ferrograd
from ferrograd.nn.functional import logsigmoid

from . import constraints
from .bernoulli import _probs_or_logits, _SuccessProbability
from .gamma import Gamma
from .utils import broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_SuccessProbability):
    """The number of successes in independent trials with success
    probability ``probs`` (or log-odds ``logits``; give exactly one) before
    ``total_count`` failures: ``P(k) = C(k + r - 1, k) p^k (1 - p)^r`` for
    ``r = total_count``, which may be any non-negative real.

    Sampling draws a gamma-distributed rate ``G ~ Gamma(r, (1 - p) / p)``
    and then ``Poisson(G)``: the negative binomial is that gamma-Poisson
    mixture.

    Args:
        total_count (float or Tensor): the number of failures ``r``,
            non-negative.
        probs (float or Tensor, optional): the success probability, in
            ``[0, 1)``.
        logits (float or Tensor, optional): the log-odds of success.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import NegativeBinomial
        >>> d = NegativeBinomial(2.0, probs=ferrograd.tensor([0.5]))
        >>> d.log_prob(ferrograd.tensor([1.0])).exp(), d.mean
        (tensor([0.2500]), tensor([2.]))
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        name, param = _probs_or_logits(probs, logits)
        total_count, param = broadcast_all(total_count, param)
        self.total_count = total_count.type_as(param)
        super().__init__(**{name: param}, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        new.total_count = self.total_count.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ferrograd.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        """Gamma: the mixing distribution of the Poisson rate."""
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=()):
        with ferrograd.no_grad():
            return ferrograd.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r, logits = self.total_count, self.logits
        log_unnormalized = r * logsigmoid(-logits) + value * logsigmoid(logits)
        log_normalization = ferrograd.lgamma(1.0 + value) + ferrograd.lgamma(r) - ferrograd.lgamma(r + value)
        # r = k = 0: the mass 1 at 0 of the degenerate distribution (lgamma(0) - lgamma(0) is NaN).
        log_normalization = ferrograd.where(r + value == 0.0, 0.0, log_normalization)
        return log_unnormalized - log_normalization
