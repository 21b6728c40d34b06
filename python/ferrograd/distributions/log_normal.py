"""The log-normal distribution: ``exp(X)`` for a normal ``X``."""

from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """The distribution of ``exp(X)`` with ``X ~ Normal(loc, scale)``.

    Args:
        loc (float or Tensor): the mean of ``log`` of the variable.
        scale (float or Tensor): the standard deviation of ``log`` of the
            variable, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import LogNormal
        >>> LogNormal(0.0, 1.0).log_prob(ferrograd.tensor(1.0))
        tensor(-0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(
            Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args
        )

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogNormal, _instance))

    @property
    def loc(self):
        """Tensor: the mean of the underlying normal."""
        return self.base_dist.loc

    @property
    def scale(self):
        """Tensor: the standard deviation of the underlying normal."""
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale2 = self.scale.pow(2)
        return scale2.expm1() * (2 * self.loc + scale2).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
