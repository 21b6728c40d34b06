"""The categorical distribution over ``{0, ..., K-1}``."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .bernoulli import _probs_or_logits
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """The categorical distribution over the indices of the last dimension of
    ``probs`` (normalised to sum to 1) or ``logits`` (unnormalised
    log-probabilities).

    Args:
        probs (Tensor, optional): non-negative event weights, at least 1-D.
        logits (Tensor, optional): event log-weights, at least 1-D.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Categorical
        >>> Categorical(probs=ferrograd.tensor([1.0, 3.0])).probs
        tensor([0.2500, 0.7500])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, param = _probs_or_logits(probs, logits)
        if not isinstance(param, ferrograd.Tensor) or param.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if name == "probs":
            self.probs = param / param.sum(-1, keepdim=True)
        else:
            self.logits = param - param.logsumexp(dim=-1, keepdim=True)
        self._param = self.__dict__[name]
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        params = {"probs": (self._num_events,), "logits": (self._num_events,)}
        new = self._expand_params(Categorical, batch_shape, _instance, params)
        new._num_events = self._num_events
        new._param = new.probs if "probs" in new.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """Tensor: the normalised log-probabilities."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """Tensor: the normalised probabilities."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """Size: the shape of the parameter."""
        return self._param.shape

    def _nan_filled(self):
        return ferrograd.full(
            self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device
        )

    @property
    def mean(self):
        return self._nan_filled()

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self._nan_filled()

    def sample(self, sample_shape=()):
        shape = ferrograd.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        with ferrograd.no_grad():
            samples_2d = ferrograd.multinomial(probs_2d, shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = ferrograd.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        # Clamping keeps 0 * log(0) at 0 rather than 0 * -inf = nan.
        logits = self.logits.clamp(min=ferrograd.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = ferrograd.arange(self._num_events, dtype=ferrograd.long, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + tuple(self.batch_shape)) if expand else values


class _CategoricalEvents(Distribution):
    """The parts shared by the distributions built on a :class:`Categorical`
    over the last dimension of ``probs``/``logits``, whose event is a vector
    over the categories."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs=probs, logits=logits)
        categorical = self._categorical
        super().__init__(categorical.batch_shape, categorical.param_shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(self._family(_CategoricalEvents), _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, tuple(batch_shape))

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """Tensor: the normalised probabilities."""
        return self._categorical.probs

    @property
    def logits(self):
        """Tensor: the normalised log-probabilities."""
        return self._categorical.logits

    @property
    def param_shape(self):
        """Size: the shape of the parameter."""
        return self._categorical.param_shape
