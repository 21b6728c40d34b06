"""The generalized Pareto distribution."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .distribution import _AtLoc
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(_AtLoc):
    """The generalized Pareto distribution with survival function
    ``(1 + c z)^(-1/c)`` in ``z = (x - loc) / scale`` for ``c =
    concentration`` (``exp(-z)`` at ``c = 0``), on ``x >= loc``, and for
    ``c < 0`` up to ``loc - scale / c``. It includes the exponential
    (``loc = c = 0``), the Pareto (``c > 0``, ``loc = scale / c``) and the
    uniform (``c = -1``) distributions; draws invert the cumulative
    distribution.

    The mean is NaN for ``c >= 1`` and the variance for ``c >= 1/2``.

    Args:
        loc (float or Tensor): the location (the lower end of the support).
        scale (float or Tensor): the scale, positive.
        concentration (float or Tensor): the shape ``c`` (tail index).
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import GeneralizedPareto
        >>> d = GeneralizedPareto(0.0, 2.0, 0.0)  # the exponential with rate 1/2
        >>> d.mean, d.log_prob(ferrograd.tensor(0.0))
        (tensor(2.), tensor(-0.6931))
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        params = {"loc": (), "scale": (), "concentration": ()}
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, params)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        negative = self.concentration < 0
        c = ferrograd.where(negative, self.concentration, -1.0)
        return constraints.interval(self.loc, ferrograd.where(negative, self.loc - self.scale / c, math.inf))

    def _safe_concentration(self):
        """Whether the concentration is (close to) 0, and the concentration
        with 1 there, where the ``c = 0`` limit replaces the formulas."""
        c = self.concentration
        at_zero = ferrograd.isclose(c, ferrograd.zeros_like(c))
        return at_zero, ferrograd.where(at_zero, 1.0, c)

    @property
    def mean(self):
        defined = self.concentration < 1
        c = ferrograd.where(defined, self.concentration, 0.5)
        return ferrograd.where(defined, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        defined = self.concentration < 0.5
        c = ferrograd.where(defined, self.concentration, 0.25)
        return ferrograd.where(defined, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)), math.nan)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(ferrograd.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._safe_concentration()
        power = 1 / c + 1
        # power = 0 (c = -1, the uniform): the term is 0, also at the upper end where log1p(c z) = -inf.
        tail = ferrograd.where(power == 0, 0.0, power * ferrograd.log1p(c * z))
        return -self.scale.log() - ferrograd.where(at_zero, z, tail)

    def log_survival_function(self, value):
        """Returns ``log(1 - cdf(value))``.

        Args:
            value (Tensor): the values.
        """
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._safe_concentration()
        return ferrograd.where(at_zero, -z, -ferrograd.log1p(c * z) / c)

    def log_cdf(self, value):
        """Returns the log of the cumulative distribution function.

        Args:
            value (Tensor): the values.
        """
        return ferrograd.log1p(-self.log_survival_function(value).exp())

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        at_zero, c = self._safe_concentration()
        log_survival = ferrograd.log1p(-value)
        return ferrograd.where(
            at_zero,
            self.loc - self.scale * log_survival,
            self.loc + self.scale / c * ferrograd.expm1(-c * log_survival),
        )

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).expand(self.batch_shape)
