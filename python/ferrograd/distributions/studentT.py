"""Student's t-distribution."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location
    ``loc`` and scale ``scale``: ``loc + scale * Z / sqrt(V / df)`` for a
    standard normal ``Z`` and an independent ``V ~ Chi2(df)``.

    The mean is NaN for ``df <= 1``; the variance is infinite for
    ``1 < df <= 2`` and NaN for ``df <= 1``.

    Args:
        df (float or Tensor): the degrees of freedom, positive.
        loc (float or Tensor): the location (the median).
        scale (float or Tensor): the scale, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import StudentT
        >>> StudentT(ferrograd.tensor([1.0, 4.0])).variance
        tensor([nan, 2.])
        >>> StudentT(1.0).log_prob(ferrograd.tensor(0.0)).exp()  # Cauchy: 1 / pi
        tensor(0.3183)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        params = {"df": (), "loc": (), "scale": ()}
        new = self._expand_params(StudentT, batch_shape, _instance, params)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        return ferrograd.where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        finite = self.df > 2
        # The formula is evaluated at a harmless df where it is not used, so
        # that its gradient there is 0 rather than 0 * inf.
        df = ferrograd.where(finite, self.df, 3.0)
        formula = self.scale.pow(2) * df / (df - 2)
        return ferrograd.where(finite, formula, ferrograd.where(self.df > 1, math.inf, math.nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        normal = ferrograd.randn(shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * normal * ferrograd.rsqrt(chi2 / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_normalizer = (
            self.scale.log()
            + 0.5 * df.log()
            + 0.5 * math.log(math.pi)
            + ferrograd.lgamma(0.5 * df)
            - ferrograd.lgamma(0.5 * (df + 1.0))
        )
        return -0.5 * (df + 1.0) * ferrograd.log1p(y.pow(2) / df) - log_normalizer

    def entropy(self):
        df = self.df
        log_beta = ferrograd.lgamma(0.5 * df) + math.lgamma(0.5) - ferrograd.lgamma(0.5 * (df + 1))
        return (
            self.scale.log()
            + 0.5 * (df + 1) * (ferrograd.digamma(0.5 * (df + 1)) - ferrograd.digamma(0.5 * df))
            + 0.5 * df.log()
            + log_beta
        )
