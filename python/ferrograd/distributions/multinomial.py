"""The multinomial distribution: category counts of ``total_count`` draws."""

from __future__ import annotations

import ferrograd

from . import constraints
from .categorical import _CategoricalEvents
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(_CategoricalEvents):
    """Counts per category of ``total_count`` independent categorical draws.

    :meth:`log_prob` does not need ``total_count`` (it follows from the value);
    :meth:`sample` needs it.

    Args:
        total_count (int): the number of draws.
        probs (Tensor, optional): non-negative event weights.
        logits (Tensor, optional): event log-weights.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Multinomial
        >>> d = Multinomial(4, probs=ferrograd.tensor([0.5, 0.5]))
        >>> d.log_prob(ferrograd.tensor([2.0, 2.0])).exp()
        tensor(0.3750)
    """

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        super().__init__(probs, logits, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        return super().expand(batch_shape, _instance=new)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        draws = self._categorical.sample((self.total_count,) + sample_shape)
        # (total_count, *sample, *batch) -> (*sample, *batch, total_count)
        draws = draws.permute(*range(1, draws.dim()), 0)
        counts = ferrograd.zeros(self._extended_shape(sample_shape), dtype=draws.dtype, device=draws.device)
        counts.scatter_add_(-1, draws, ferrograd.ones_like(draws))
        return counts.to(self.probs.dtype)

    def entropy(self):
        # H = n H(cat) - log n! + sum_i E[log x_i!], each count x_i ~ Binomial(n, p_i).
        n = self.total_count
        probs = self.probs
        k = ferrograd.arange(1, n + 1, dtype=probs.dtype, device=probs.device)
        k = k.reshape((-1,) + (1,) * probs.dim())
        log_binomial = (
            ferrograd.lgamma(ferrograd.tensor(n + 1.0, dtype=probs.dtype))
            - ferrograd.lgamma(k + 1)
            - ferrograd.lgamma(n - k + 1)
            + ferrograd.xlogy(k, probs)
            + ferrograd.xlogy(n - k, 1 - probs)
        )
        expected_log_factorial = (log_binomial.exp() * ferrograd.lgamma(k + 1)).sum([0, -1])
        log_n_factorial = ferrograd.lgamma(ferrograd.tensor(n + 1.0, dtype=probs.dtype))
        return n * self._categorical.entropy() - log_n_factorial + expected_log_factorial

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        value = value.to(logits.dtype)
        log_factorial_n = ferrograd.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ferrograd.lgamma(value + 1).sum(-1)
        # 0 * log(0) counts as 0: zero counts of impossible categories.
        logits = ferrograd.where((value == 0) & (logits == -float("inf")), 0.0, logits)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
