"""The half-normal distribution: ``|X|`` for a centred normal ``X``; and the
folding of a centred symmetric distribution that it shares with ``HalfCauchy``."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class _Folded(TransformedDistribution):
    """The parts shared by the distributions of ``|X|`` for ``X`` centred and
    symmetric about 0 with a ``scale`` (``base_dist``): the density, CDF and
    entropy of ``X`` folded onto the non-negative half-line."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(self._family(_Folded), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """Tensor: the scale."""
        return self.base_dist.scale

    @property
    def mode(self):
        return ferrograd.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ferrograd.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """The distribution of ``|X|`` with ``X ~ Normal(0, scale)``.

    Args:
        scale (float or Tensor): the scale of the underlying normal, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import HalfNormal
        >>> HalfNormal(1.0).log_prob(ferrograd.tensor(0.0))
        tensor(-0.2258)
    """

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
