"""The Kumaraswamy distribution on ``[0, 1]``."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .gumbel import _EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moment(a, b, n):
    """``E[x^n] = b B(1 + n / a, b)`` for ``x ~ Kumaraswamy(a, b)``."""
    shifted = 1 + n / a
    return b * (ferrograd.lgamma(shifted) + ferrograd.lgamma(b) - ferrograd.lgamma(shifted + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution with density ``a b x^(a-1) (1 - x^a)^(b-1)``
    on ``[0, 1]`` for ``a = concentration1`` and ``b = concentration0``: its
    cumulative distribution ``1 - (1 - x^a)^b`` inverts in closed form, so a
    draw is ``(1 - U^(1/b))^(1/a)`` for a uniform ``U``.

    The mode is NaN unless both concentrations are at least 1.

    Args:
        concentration1 (float or Tensor): ``a`` (often called alpha),
            positive.
        concentration0 (float or Tensor): ``b`` (often called beta),
            positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Kumaraswamy
        >>> Kumaraswamy(1.0, 1.0).mean  # the uniform distribution
        tensor(0.5000)
        >>> Kumaraswamy(2.0, 1.0).log_prob(ferrograd.tensor(0.5)).exp()  # 2 x
        tensor(1.)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(
            ferrograd.zeros_like(self.concentration0),
            ferrograd.ones_like(self.concentration0),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        defined = (a >= 1) & (b >= 1)
        # ((a - 1) / (a b - 1))^(1/a), with harmless values where undefined (a = b = 1 gives NaN).
        a, b = ferrograd.where(defined, a, 2.0), ferrograd.where(defined, b, 2.0)
        return ferrograd.where(defined, ((a - 1) / (a * b - 1)).pow(a.reciprocal()), math.nan)

    @property
    def variance(self):
        return _moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = ferrograd.digamma(b + 1) + _EULER_GAMMA  # the harmonic number H_b
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - a.log() - b.log()
