"""The relaxed (concrete, Gumbel-softmax) Bernoulli distribution on ``(0, 1)``
and its logit, for reparameterized gradients through binary choices."""

from __future__ import annotations

import numbers

import ferrograd
from ferrograd.nn.functional import softplus

from . import constraints
from .bernoulli import _SuccessProbability
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]

# The constructor arguments, shared by the docstrings below.
_ARGS = """    Args:
        temperature (Tensor or float): the relaxation temperature, positive.
        probs (float or Tensor, optional): the probability of 1.
        logits (float or Tensor, optional): the log-odds of 1.
        validate_args (bool, optional): validate arguments and samples.
"""


def _as_temperature(temperature, like):
    """The temperature as a tensor (a number becomes one of ``like``'s dtype)."""
    if isinstance(temperature, ferrograd.Tensor):
        return temperature
    if isinstance(temperature, numbers.Real) and not isinstance(temperature, bool):
        return ferrograd.tensor(float(temperature), dtype=like.dtype, device=like.device)
    raise TypeError(f"temperature must be a Tensor or a number, got {type(temperature).__name__}")


class LogitRelaxedBernoulli(_SuccessProbability):
    __doc__ = f"""The logit of a :class:`RelaxedBernoulli` variable: samples are
    ``(logit(U) + logits) / temperature`` for a uniform ``U``, on the whole
    real line.

    Give exactly one of ``probs`` and ``logits``.

{_ARGS}
    Example:
        >>> from ferrograd.distributions import LogitRelaxedBernoulli
        >>> LogitRelaxedBernoulli(ferrograd.tensor(1.0), logits=0.0).log_prob(ferrograd.tensor(0.0))
        tensor(-1.3863)
    """

    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(probs, logits, validate_args=validate_args)
        self.temperature = _as_temperature(temperature, self._param)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        new.temperature = self.temperature
        return super().expand(batch_shape, _instance=new)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(ferrograd.rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * softplus(diff)


class _Relaxed(TransformedDistribution):
    """The parts shared by the relaxed distributions: a transform of a base
    distribution that holds the ``temperature`` and the ``probs``/``logits``."""

    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(self._family(_Relaxed), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """Tensor: the relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self):
        """Tensor: the logits of the relaxed distribution."""
        return self.base_dist.logits

    @property
    def probs(self):
        """Tensor: the probabilities of the relaxed distribution."""
        return self.base_dist.probs


class RelaxedBernoulli(_Relaxed):
    __doc__ = f"""A continuous relaxation of :class:`Bernoulli` on ``(0, 1)``: the
    sigmoid of a :class:`LogitRelaxedBernoulli` variable, with
    reparameterized samples. Low temperatures push the samples towards 0
    and 1.

    Give exactly one of ``probs`` and ``logits``.

{_ARGS}
    Example:
        >>> from ferrograd.distributions import RelaxedBernoulli
        >>> RelaxedBernoulli(ferrograd.tensor(1.0), probs=0.5).log_prob(ferrograd.tensor(0.5))
        tensor(0.)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)
