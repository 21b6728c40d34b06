"""The Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F-distribution with ``df1`` and ``df2`` degrees of freedom: the
    ratio ``(U1 / df1) / (U2 / df2)`` of independent chi-squared variables
    ``U1 ~ Chi2(df1)`` and ``U2 ~ Chi2(df2)``, each ``U / df`` drawn as a
    ``Gamma(df / 2, df)``.

    The mean is NaN for ``df2 <= 2``, the mode for ``df1 <= 2`` and the
    variance for ``df2 <= 4``. ``rsample`` is differentiable in both degrees
    of freedom through the gamma draws.

    Args:
        df1 (float or Tensor): the degrees of freedom of the numerator,
            positive.
        df2 (float or Tensor): the degrees of freedom of the denominator,
            positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import FisherSnedecor
        >>> FisherSnedecor(3.0, 6.0).mean
        tensor(1.5000)
        >>> FisherSnedecor(2.0, 2.0).log_prob(ferrograd.tensor(1.0)).exp()  # 1 / (1 + x)^2
        tensor(0.2500)
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, {"df1": (), "df2": ()})
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        defined = self.df2 > 2
        df2 = ferrograd.where(defined, self.df2, 3.0)  # a harmless value where unused
        return ferrograd.where(defined, df2 / (df2 - 2), math.nan)

    @property
    def mode(self):
        defined = self.df1 > 2
        df1 = ferrograd.where(defined, self.df1, 3.0)
        mode = (df1 - 2) / df1 * self.df2 / (self.df2 + 2)
        return ferrograd.where(defined, mode, math.nan)

    @property
    def variance(self):
        defined = self.df2 > 4
        df2 = ferrograd.where(defined, self.df2, 5.0)
        variance = 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))
        return ferrograd.where(defined, variance, math.nan)

    def rsample(self, sample_shape=()):
        numerator = self._gamma1.rsample(sample_shape)
        denominator = self._gamma2.rsample(sample_shape)  # at least the smallest normal number
        ratio = numerator / denominator
        # A ratio that underflows is raised to the smallest normal number in
        # place on a detached alias, keeping the pathwise gradient.
        ratio.detach().clamp_(min=ferrograd.finfo(ratio.dtype).tiny)
        return ratio

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_beta = ferrograd.lgamma(half1) + ferrograd.lgamma(half2) - ferrograd.lgamma(half1 + half2)
        return (
            half1 * ratio.log()
            + (half1 - 1) * ferrograd.log(value)
            - (half1 + half2) * ferrograd.log1p(ratio * value)
            - log_beta
        )
