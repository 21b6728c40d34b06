"""The Dirichlet distribution over the probability simplex."""

from __future__ import annotations

import ferrograd
from ferrograd.autograd.function import Function, once_differentiable

from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _dirichlet_backward(x, concentration, grad_output):
    """The vector-Jacobian product of a Dirichlet draw ``x`` in its
    ``concentration``, by implicit reparameterization.

    Each coordinate ``x_i`` is Beta(a_i, a0 - a_i) with ``a0`` the total,
    whose pathwise derivative ``dx_i/da_i`` (``a0`` held fixed) is
    ``ferrograd._dirichlet_grad``; moving ``a_i`` with the total free also
    moves the other coordinates in proportion to themselves (they renormalise
    to ``1 - x_i``), which subtracts ``sum_j x_j g_j`` from each ``g_i``.
    """
    total = concentration.sum(-1, keepdim=True).expand_as(concentration)
    grad = ferrograd._dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, keepdim=True))


class _Dirichlet(Function):
    """A Dirichlet draw as an autograd function of the concentration."""

    generate_vmap_rule = True

    @staticmethod
    def forward(concentration):
        return ferrograd._sample_dirichlet(concentration)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output, inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution on the simplex over the last dimension of
    ``concentration`` (``a``): density ``prod_i x_i^(a_i - 1) / B(a)``.

    Args:
        concentration (Tensor): the positive concentrations, at least 1-D;
            the last dimension is the event.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Dirichlet
        >>> d = Dirichlet(ferrograd.tensor([1.0, 3.0]))
        >>> d.mean
        tensor([0.2500, 0.7500])
        >>> d.log_prob(ferrograd.tensor([0.5, 0.5]))
        tensor(-0.2877)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, ferrograd.Tensor) or concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        params = {"concentration": tuple(self.event_shape)}
        return self._expand_params(Dirichlet, batch_shape, _instance, params)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        log_beta = ferrograd.lgamma(a).sum(-1) - ferrograd.lgamma(a.sum(-1))
        return ferrograd.xlogy(a - 1.0, value).sum(-1) - log_beta

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        # When every a_i < 1 the density is unbounded at the vertices and the
        # ratio above is 0/0; as torch, the mode is then the vertex of the
        # first coordinate (argmax over all-NaN picks index 0).
        vertex = ferrograd.nn.functional.one_hot(mode.argmax(dim=-1), shifted.shape[-1]).to(mode.dtype)
        below_one = (self.concentration < 1).all(dim=-1, keepdim=True)
        return ferrograd.where(below_one, vertex, mode)

    @property
    def variance(self):
        a = self.concentration
        a0 = a.sum(-1, keepdim=True)
        return a * (a0 - a) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return (
            ferrograd.lgamma(a).sum(-1)
            - ferrograd.lgamma(a0)
            - (k - a0) * ferrograd.digamma(a0)
            - ((a - 1.0) * ferrograd.digamma(a)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return ferrograd.lgamma(x).sum(-1) - ferrograd.lgamma(x.sum(-1))
