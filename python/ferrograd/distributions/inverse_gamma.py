"""The inverse gamma distribution: ``1 / X`` for a gamma ``X``."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The distribution of ``1 / X`` for ``X ~ Gamma(concentration, rate)``:
    density ``b^a x^(-a-1) exp(-b / x) / Gamma(a)`` on ``x > 0`` with
    ``a = concentration`` and ``b = rate`` (here a scale of ``1 / X``).

    The mean is infinite for ``a <= 1`` and the variance for ``a <= 2``.
    ``rsample`` is differentiable in both parameters through the gamma draw.

    Args:
        concentration (float or Tensor): the shape ``a``, positive.
        rate (float or Tensor): the rate ``b`` of the underlying gamma,
            positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import InverseGamma
        >>> InverseGamma(3.0, 4.0).mean
        tensor(2.)
        >>> InverseGamma(1.0, 1.0).log_prob(ferrograd.tensor(1.0)).exp()  # exp(-1)
        tensor(0.3679)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        minus_one = -ferrograd.ones((), dtype=base.rate.dtype, device=base.rate.device)
        super().__init__(base, PowerTransform(minus_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(InverseGamma, _instance))

    @property
    def concentration(self):
        """Tensor: the shape ``a``."""
        return self.base_dist.concentration

    @property
    def rate(self):
        """Tensor: the rate ``b`` of the underlying gamma."""
        return self.base_dist.rate

    @property
    def mean(self):
        finite = self.concentration > 1
        a = ferrograd.where(finite, self.concentration, 2.0)  # a harmless value where unused
        return ferrograd.where(finite, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        finite = self.concentration > 2
        a = ferrograd.where(finite, self.concentration, 3.0)
        return ferrograd.where(finite, self.rate.square() / ((a - 1).square() * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + ferrograd.lgamma(a) - (1 + a) * ferrograd.digamma(a)
