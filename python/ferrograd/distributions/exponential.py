"""The exponential distribution."""

from __future__ import annotations

import ferrograd

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution with density ``rate * exp(-rate * x)``.

    Args:
        rate (float or Tensor): the rate (inverse scale), positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Exponential
        >>> Exponential(2.0).mean
        tensor(0.5000)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Exponential, batch_shape, _instance, {"rate": ()})

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return ferrograd.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        draws = ferrograd.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return draws / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ferrograd.exp(-self.rate * value)

    def icdf(self, value):
        return -ferrograd.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -ferrograd.log(-x)
