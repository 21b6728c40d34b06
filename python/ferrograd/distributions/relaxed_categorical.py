"""The relaxed one-hot categorical (concrete, Gumbel-softmax) distribution on
the simplex, and its log."""

from __future__ import annotations

import ferrograd

from . import constraints
from .categorical import _CategoricalEvents
from .relaxed_bernoulli import _as_temperature, _Relaxed
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]

# The constructor arguments, shared by the docstrings below.
_ARGS = """    Args:
        temperature (Tensor or float): the relaxation temperature, positive.
        probs (Tensor, optional): non-negative event weights.
        logits (Tensor, optional): event log-weights.
        validate_args (bool, optional): validate arguments and samples.
"""


class ExpRelaxedCategorical(_CategoricalEvents):
    __doc__ = f"""The log of a :class:`RelaxedOneHotCategorical` point: samples are
    ``log_softmax((logits + G) / temperature)`` for standard Gumbel noise
    ``G``, vectors over the ``K`` categories whose exponentials sum to 1.

    Give exactly one of ``probs`` and ``logits``.

{_ARGS}
    Example:
        >>> from ferrograd.distributions import ExpRelaxedCategorical
        >>> d = ExpRelaxedCategorical(ferrograd.tensor(0.5), probs=ferrograd.tensor([0.2, 0.8]))
        >>> d.rsample((5,)).shape
        ferrograd.Size([5, 2])
    """

    support = constraints.real_vector  # the samples lie on a submanifold of it
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(probs, logits, validate_args=validate_args)
        self.temperature = _as_temperature(temperature, self._param)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        return super().expand(batch_shape, _instance=new)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        u = clamp_probs(ferrograd.rand(shape, dtype=logits.dtype, device=logits.device))
        gumbels = -(-u.log()).log()
        scores = (logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = self.temperature
        log_scale = ferrograd.lgamma(ferrograd.full_like(temperature, float(k))) + (k - 1) * temperature.log()
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    __doc__ = f"""A continuous relaxation of :class:`OneHotCategorical` on the simplex:
    the exponential of an :class:`ExpRelaxedCategorical` variable, with
    reparameterized samples. Low temperatures push the samples towards the
    vertices (one-hot vectors).

    Give exactly one of ``probs`` and ``logits``.

{_ARGS}
    Example:
        >>> from ferrograd.distributions import RelaxedOneHotCategorical
        >>> d = RelaxedOneHotCategorical(ferrograd.tensor(0.5), logits=ferrograd.zeros(3))
        >>> d.batch_shape, d.event_shape
        (ferrograd.Size([]), ferrograd.Size([3]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)
