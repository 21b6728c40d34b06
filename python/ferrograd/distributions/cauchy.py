"""The Cauchy (Lorentz) distribution."""

from __future__ import annotations

import math

import ferrograd

from .distribution import _LocScale

__all__ = ["Cauchy"]


class Cauchy(_LocScale):
    """The Cauchy distribution: the ratio of two independent standard
    normals, shifted by ``loc`` and scaled by ``scale``. Its mean and
    variance do not exist (returned as NaN and infinity).

    Args:
        loc (float or Tensor): the median.
        scale (float or Tensor): the half width at half maximum, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Cauchy
        >>> Cauchy(0.0, 1.0).cdf(ferrograd.tensor(1.0))
        tensor(0.7500)
    """

    @property
    def mean(self):
        return ferrograd.full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self):
        return ferrograd.full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ferrograd.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ferrograd.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ferrograd.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
