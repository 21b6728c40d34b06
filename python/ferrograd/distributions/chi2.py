"""The chi-squared distribution."""

from __future__ import annotations

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: the sum of
    ``df`` squared standard normals, which is ``Gamma(df / 2, 1 / 2)``.

    Args:
        df (float or Tensor): the degrees of freedom, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Chi2
        >>> d = Chi2(ferrograd.tensor([4.0]))
        >>> d.mean, d.variance
        (tensor([4.]), tensor([8.]))
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        """Tensor: the degrees of freedom."""
        return self.concentration * 2
