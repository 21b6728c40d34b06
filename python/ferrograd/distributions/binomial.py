"""The binomial distribution: successes in ``total_count`` Bernoulli trials."""

from __future__ import annotations

import ferrograd

from . import constraints
from .bernoulli import _probs_or_logits, _SuccessProbability
from .utils import broadcast_all

__all__ = ["Binomial"]


class Binomial(_SuccessProbability):
    """The number of successes in ``total_count`` independent trials with
    success probability ``probs`` (or log-odds ``logits``; give exactly one):
    ``P(k) = C(n, k) p^k (1 - p)^(n - k)``.

    ``total_count`` broadcasts with the probabilities, so that each batch
    element may have its own number of trials.

    Args:
        total_count (int or Tensor): the number of trials, a non-negative
            integer.
        probs (float or Tensor, optional): the success probability.
        logits (float or Tensor, optional): the log-odds of success.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Binomial
        >>> d = Binomial(4, probs=ferrograd.tensor([0.5]))
        >>> d.log_prob(ferrograd.tensor([2.0])).exp(), d.mean
        (tensor([0.3750]), tensor([2.]))
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        name, param = _probs_or_logits(probs, logits)
        total_count, param = broadcast_all(total_count, param)
        self.total_count = total_count.type_as(param)
        super().__init__(**{name: param}, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        new.total_count = self.total_count.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ferrograd.no_grad():
            return ferrograd.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_choose = ferrograd.lgamma(n + 1) - ferrograd.lgamma(value + 1) - ferrograd.lgamma(n - value + 1)
        # -n log(1 - p) = n softplus(logits) = n (max(l, 0) + log1p(exp(-|l|))), written so that
        # exp never overflows; max(l, 0) as the mean of two clamps has derivative 1/2 at 0.
        positive_part = (logits.clamp(min=0) + logits - logits.clamp(max=0)) / 2
        log_normalizer = n * positive_part + n * ferrograd.log1p(ferrograd.exp(-logits.abs()))
        return log_choose + value * logits - log_normalizer

    def _homogeneous_count(self, method):
        """The one trial count of every batch element, for ``method`` to sum
        over its support; NotImplementedError when they differ."""
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{method}`.")
        return total_count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_count("enumerate_support")
        values = ferrograd.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values
