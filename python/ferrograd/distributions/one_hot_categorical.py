"""The one-hot categorical distribution."""

from __future__ import annotations

import ferrograd
from ferrograd.nn.functional import one_hot

from . import constraints
from .categorical import _CategoricalEvents

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(_CategoricalEvents):
    """A categorical distribution whose samples are one-hot vectors of length
    ``K`` (the last dimension of ``probs``/``logits``).

    Args:
        probs (Tensor, optional): non-negative event weights.
        logits (Tensor, optional): event log-weights.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import OneHotCategorical
        >>> d = OneHotCategorical(probs=ferrograd.tensor([0.0, 1.0]))
        >>> d.sample()
        tensor([0., 1.])
    """

    support = constraints.one_hot
    has_enumerate_support = True

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1).indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = ferrograd.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """:class:`OneHotCategorical` whose :meth:`rsample` passes gradients
    straight through: the value is a one-hot sample, the gradient that of
    the probabilities.

    Args:
        probs (Tensor, optional): non-negative event weights.
        logits (Tensor, optional): event log-weights.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import OneHotCategoricalStraightThrough
        >>> OneHotCategoricalStraightThrough(probs=ferrograd.tensor([1.0, 0.0])).rsample()
        tensor([1., 0.])
    """

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
