"""The beta distribution on ``[0, 1]``."""

from __future__ import annotations

import numbers

import ferrograd

from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """The beta distribution with density
    ``x^(a-1) (1-x)^(b-1) / B(a, b)`` for ``a = concentration1`` and
    ``b = concentration0``: the first coordinate of a two-category
    :class:`Dirichlet` over ``(a, b)``, which it holds and samples from.

    Args:
        concentration1 (float or Tensor): ``a``, the concentration of
            ``x`` (often called alpha), positive.
        concentration0 (float or Tensor): ``b``, the concentration of
            ``1 - x`` (often called beta), positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Beta
        >>> Beta(2.0, 6.0).mean
        tensor(0.2500)
        >>> Beta(2.0, 1.0).log_prob(ferrograd.tensor(0.5)).exp()
        tensor(1.)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number):
            both = ferrograd.tensor([float(concentration1), float(concentration0)])
        else:
            both = ferrograd.stack(broadcast_all(concentration1, concentration0), -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return self._finish_expand(new, tuple(batch_shape))

    @property
    def concentration1(self):
        """Tensor: the concentration ``a`` of ``x``."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        """Tensor: the concentration ``b`` of ``1 - x``."""
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(ferrograd.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return ferrograd.lgamma(x) + ferrograd.lgamma(y) - ferrograd.lgamma(x + y)
