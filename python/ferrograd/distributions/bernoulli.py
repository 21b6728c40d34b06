"""The Bernoulli distribution."""

from __future__ import annotations

import math

import ferrograd
from ferrograd.nn.functional import binary_cross_entropy_with_logits, softplus

from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _probs_or_logits(probs, logits):
    """Returns which of ``probs``/``logits`` was given, raising when it is
    not exactly one."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


class _SuccessProbability(Distribution):
    """The parts shared by the families with one success probability per
    batch element, given as ``probs`` or as ``logits`` (log-odds); the other
    form is derived on first use."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, param = _probs_or_logits(probs, logits)
        (param,) = broadcast_all(param)
        setattr(self, name, param)
        self._param = param
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        params = {"probs": (), "logits": ()}
        new = self._expand_params(self._family(_SuccessProbability), batch_shape, _instance, params)
        new._param = new.probs if "probs" in new.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        """Tensor: the log-odds of success."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """Tensor: the probability of success."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """Size: the shape of the parameter."""
        return self._param.shape


class Bernoulli(ExponentialFamily, _SuccessProbability):
    """The Bernoulli distribution: 1 with probability ``probs``, else 0.

    Give exactly one of ``probs`` and ``logits`` (log-odds).

    Args:
        probs (float or Tensor, optional): the probability of 1.
        logits (float or Tensor, optional): the log-odds of 1.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Bernoulli
        >>> Bernoulli(probs=0.25).log_prob(ferrograd.tensor(1.0)).exp()
        tensor(0.2500)
    """

    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ferrograd.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with ferrograd.no_grad():
            return ferrograd.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value.to(logits.dtype), reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return softplus(x)

    def enumerate_support(self, expand=True):
        values = ferrograd.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values
