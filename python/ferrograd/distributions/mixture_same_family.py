"""Finite mixtures whose components are one batch of a single distribution."""

from __future__ import annotations

import ferrograd

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A mixture of ``k`` components of one family: ``mixture_distribution``
    (a :class:`Categorical` over ``k`` categories) picks a component, the
    right-most batch dimension of ``component_distribution`` (of size ``k``)
    indexes the components.

    ``log_prob`` is ``logsumexp`` over the components of the component
    log-densities plus the log mixture weights; samples draw the component
    indices first, then a sample of every component, and keep the chosen
    one (no :meth:`rsample`).

    Args:
        mixture_distribution (Categorical): the mixing weights; its batch
            shape is ``()`` or broadcastable with
            ``component_distribution.batch_shape[:-1]``.
        component_distribution (Distribution): the components, with batch
            shape ``(*batch, k)``.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Categorical, MixtureSameFamily, Normal
        >>> mix = Categorical(probs=ferrograd.tensor([0.5, 0.5]))
        >>> gmm = MixtureSameFamily(mix, Normal(ferrograd.tensor([-1.0, 1.0]), 1.0))
        >>> gmm.mean, gmm.variance
        (tensor(0.), tensor(2.))
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(
                "The Mixture distribution needs to be an instance of ferrograd.distributions.Categorical"
            )
        if not isinstance(component_distribution, Distribution):
            raise ValueError(
                "The Component distribution needs to be an instance of ferrograd.distributions.Distribution"
            )
        if len(component_distribution.batch_shape) < 1:
            raise ValueError(
                "component_distribution must have at least one batch dimension (the components), "
                f"got batch_shape {component_distribution.batch_shape}"
            )
        mix_batch = tuple(mixture_distribution.batch_shape)
        comp_batch = tuple(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mix_batch), reversed(comp_batch), strict=False):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({ferrograd.Size(mix_batch)}) is not "
                    f"compatible with `component_distribution.batch_shape`({ferrograd.Size(comp_batch)})"
                )
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(
                f"`mixture_distribution component` ({km}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({kc})"
            )
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(comp_batch, component_distribution.event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,)
        )
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return self._finish_expand(new, batch_shape)

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        """Categorical: the distribution over the components."""
        return self._mixture_distribution

    @property
    def component_distribution(self):
        """Distribution: the components (right-most batch dimension)."""
        return self._component_distribution

    def _pad(self, x):
        """Inserts the component dimension in front of the event dimensions."""
        return x.unsqueeze(-1 - self._event_ndims)

    def _padded_probs(self):
        """The mixture weights shaped ``(*batch, k, 1, ..., 1)`` against the
        components' ``(*batch, k, *event)``."""
        probs = self.mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._padded_probs()
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # The law of total variance: E[Var(X | Z)] + Var(E[X | Z]).
        probs = self._padded_probs()
        components = self.component_distribution
        mean_cond_var = (probs * components.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (components.mean - self._pad(self.mean)).pow(2)).sum(-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        """Returns the mixture's cumulative distribution function at ``x``
        (univariate components).

        Args:
            x (Tensor): the values.
        """
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        """Returns ``log sum_k w_k p_k(x)``.

        Args:
            x (Tensor): the values.
        """
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # (*sample, *batch, k)
        log_mix_prob = ferrograd.log_softmax(self.mixture_distribution.logits, dim=-1)
        return ferrograd.logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        batch_shape = tuple(self.batch_shape)
        event_shape = tuple(self.event_shape)
        with ferrograd.no_grad():
            mix_sample = self.mixture_distribution.sample(sample_shape)
            comp_samples = self.component_distribution.sample(sample_shape)  # (*sample, *batch, k, *event)
            # The drawn indices, over the full batch and repeated over the event, pick along k.
            mix_batch = tuple(mix_sample.shape[len(sample_shape) :])
            lead = sample_shape + (1,) * (len(batch_shape) - len(mix_batch)) + mix_batch
            index = mix_sample.reshape(lead + (1,) * (len(event_shape) + 1))
            index = index.expand(sample_shape + batch_shape + (1,) + event_shape)
            gather_dim = len(sample_shape) + len(batch_shape)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
