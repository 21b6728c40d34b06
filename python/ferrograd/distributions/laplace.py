"""The Laplace (double exponential) distribution."""

from __future__ import annotations

import math

import ferrograd

from .distribution import _LocScale

__all__ = ["Laplace"]


class Laplace(_LocScale):
    """The Laplace distribution with density ``exp(-|x - loc| / scale) / (2 scale)``.

    Args:
        loc (float or Tensor): the location (mean and median).
        scale (float or Tensor): the scale, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Laplace
        >>> Laplace(0.0, 1.0).variance
        tensor(2.)
    """

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ferrograd.finfo(self.loc.dtype).eps
        u = ferrograd.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(eps - 1, 1)
        # Inverse CDF on a symmetric uniform: the sign picks the side, the
        # magnitude an exponential draw.
        return self.loc - self.scale * u.sign() * ferrograd.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ferrograd.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * ferrograd.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * ferrograd.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + ferrograd.log(2 * self.scale)
