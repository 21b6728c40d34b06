"""The normal (Gaussian) distribution."""

from __future__ import annotations

import math

import ferrograd

from .distribution import _LocScale
from .exp_family import ExponentialFamily

__all__ = ["Normal"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(ExponentialFamily, _LocScale):
    """The normal distribution with mean ``loc`` and standard deviation
    ``scale``.

    Args:
        loc (float or Tensor): the mean.
        scale (float or Tensor): the standard deviation (positive).
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Normal
        >>> Normal(0.0, 1.0).log_prob(ferrograd.tensor(0.0))
        tensor(-0.9189)
    """

    _mean_carrier_measure = 0

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ferrograd.no_grad():
            return ferrograd.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ferrograd.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.scale**2) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ferrograd.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        return self.loc + self.scale * ferrograd.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        # x = loc / scale^2, y = -1 / (2 scale^2): F = loc^2 / (2 scale^2) + log(scale sqrt(2 pi)).
        return -0.25 * x.pow(2) / y + 0.5 * ferrograd.log(-math.pi / y)
