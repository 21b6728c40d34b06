"""The logistic-normal distribution on the simplex."""

from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms_extra import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """The distribution on the ``K + 1`` simplex of ``StickBreaking(X)`` for
    ``X ~ Normal(loc, scale)`` in ``R^K``: the inverse takes ``y`` to
    ``log(y_i / (1 - y_1 - ... - y_i))`` (shifted per coordinate), which is
    normal.

    The last dimension of ``loc``/``scale`` is the event dimension (a scalar
    pair is one coordinate, a two-category event).

    Args:
        loc (float or Tensor): the mean of the base normal.
        scale (float or Tensor): the standard deviation of the base normal,
            positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import LogisticNormal
        >>> d = LogisticNormal(ferrograd.zeros(2), ferrograd.ones(2))
        >>> d.event_shape
        ferrograd.Size([3])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogisticNormal, _instance))

    @property
    def loc(self):
        """Tensor: the mean of the base normal."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        """Tensor: the standard deviation of the base normal."""
        return self.base_dist.base_dist.scale
