"""The two-parameter Weibull distribution."""

from __future__ import annotations

import ferrograd

from . import constraints
from .exponential import Exponential
from .gumbel import _EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution with cumulative distribution
    ``1 - exp(-(x / scale)^concentration)`` on ``x > 0``, built as
    ``scale * E^(1 / concentration)`` for a standard exponential ``E``.

    Args:
        scale (float or Tensor): the scale ``lambda``, positive.
        concentration (float or Tensor): the shape ``k``, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Weibull
        >>> Weibull(2.0, 1.0).mean
        tensor(2.)
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ferrograd.ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self):
        return [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        TransformedDistribution.__init__(new, base, new._transforms(), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * ferrograd.lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        second = ferrograd.lgamma(1 + 2 * self.concentration_reciprocal).exp()
        first_squared = (2 * ferrograd.lgamma(1 + self.concentration_reciprocal)).exp()
        return self.scale.pow(2) * (second - first_squared)

    def entropy(self):
        return (
            _EULER_GAMMA * (1 - self.concentration_reciprocal)
            + (self.scale * self.concentration_reciprocal).log()
            + 1
        )
