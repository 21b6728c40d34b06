"""The half-Cauchy distribution: ``|X|`` for a centred Cauchy ``X``."""

from __future__ import annotations

import math

import ferrograd

from .cauchy import Cauchy
from .half_normal import _Folded
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """The distribution of ``|X|`` with ``X ~ Cauchy(0, scale)``, with density
    ``2 / (pi scale (1 + (x / scale)^2))`` on ``x >= 0``. Its mean and
    variance are infinite.

    Args:
        scale (float or Tensor): the scale of the underlying Cauchy, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import HalfCauchy
        >>> HalfCauchy(1.0).cdf(ferrograd.tensor(1.0))
        tensor(0.5000)
    """

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return ferrograd.full(
            self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device
        )

    @property
    def variance(self):
        return self.base_dist.variance
