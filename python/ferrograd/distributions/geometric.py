"""The geometric distribution: failures before the first success."""

from __future__ import annotations

import ferrograd
from ferrograd.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .bernoulli import _SuccessProbability
from .utils import all_true, broadcast_all

__all__ = ["Geometric"]


class Geometric(_SuccessProbability):
    """The number of failures before the first success in Bernoulli trials
    with success probability ``probs``: ``P(k) = (1 - p)^k p``.

    Args:
        probs (float or Tensor, optional): the success probability, in ``(0, 1]``.
        logits (float or Tensor, optional): the log-odds of success.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Geometric
        >>> Geometric(probs=0.5).log_prob(ferrograd.tensor(1.0)).exp()
        tensor(0.2500)
    """

    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(probs, logits, validate_args=validate_args)
        param = self._param
        if self._validate_args and probs is not None and not all_true(param > 0):
            raise ValueError(
                f"Expected parameter probs ({type(param).__name__} of shape {tuple(param.shape)}) "
                f"of distribution {self!r} to be positive but found invalid values:\n{param[param <= 0]}"
            )

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return ferrograd.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        tiny = ferrograd.finfo(self.probs.dtype).tiny
        with ferrograd.no_grad():
            u = ferrograd.empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # P(0) = 1 at p = 1, where value * log1p(-p) would be 0 * -inf.
        probs = ferrograd.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
