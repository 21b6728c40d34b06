"""The gamma distribution."""

from __future__ import annotations

import ferrograd

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` (``a``) and
    ``rate`` (``b``, the inverse scale): density
    ``b^a x^(a-1) exp(-b x) / Gamma(a)`` on ``x >= 0``.

    ``rsample`` is differentiable in both parameters: a standard gamma draw
    carries implicit reparameterization gradients in ``concentration``
    (``ferrograd._standard_gamma``) and is divided by ``rate``.

    Args:
        concentration (float or Tensor): the shape ``a``, positive.
        rate (float or Tensor): the rate ``b = 1 / scale``, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Gamma
        >>> Gamma(3.0, 2.0).mean
        tensor(1.5000)
        >>> Gamma(1.0, 2.0).log_prob(ferrograd.tensor(0.0))
        tensor(0.6931)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, {"concentration": (), "rate": ()})

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = ferrograd._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # Draws that underflow to 0 are raised to the smallest normal number
        # in place on a detached alias, so that the gradient stays the
        # pathwise one (log_prob and the Beta/Dirichlet ratios need x > 0).
        value.detach().clamp_(min=ferrograd.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = ferrograd.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return ferrograd.xlogy(a, b) + ferrograd.xlogy(a - 1, value) - b * value - ferrograd.lgamma(a)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ferrograd.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + ferrograd.lgamma(a) + (1.0 - a) * ferrograd.digamma(a)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return ferrograd.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()
