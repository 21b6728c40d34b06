"""The :class:`ExponentialFamily` base class: entropy (and, in ``kl_extra``,
the same-family KL divergence) from the log-normalizer by automatic
differentiation."""

from __future__ import annotations

import ferrograd

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of the distributions with a density of the form
    ``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``: natural parameters
    ``theta``, sufficient statistic ``t``, log-normalizer ``F`` and carrier
    measure ``k``.

    A subclass gives ``_natural_params`` (a tuple of tensors),
    ``_log_normalizer(*natural_params)`` and ``_mean_carrier_measure``
    (``E[k(x)]``); the entropy then follows as the Bregman divergence
    ``F(theta) - <theta, grad F(theta)> - E[k(x)]``, and
    :func:`~ferrograd.distributions.kl_divergence` between two members of
    the same family as ``F(theta_q) - F(theta_p) - <theta_q - theta_p,
    grad F(theta_p)>``. The derivative is taken with respect to detached
    copies of ``p``'s natural parameters (as in torch): these results are
    differentiable in ``q``'s parameters only.

    Args:
        batch_shape (Size): the batch shape.
        event_shape (Size): the event shape.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import ExponentialFamily, Normal
        >>> d = Normal(0.0, 1.0)
        >>> isinstance(d, ExponentialFamily), ExponentialFamily.entropy(d).detach()
        (True, tensor(1.4189))
    """

    @property
    def _natural_params(self):
        """tuple of Tensor: the natural parameters ``theta``."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """Returns ``F(theta)`` at the given natural parameters.

        Args:
            *natural_params (Tensor): the natural parameters.
        """
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """float or Tensor: ``E[k(x)]``, the expected carrier measure."""
        raise NotImplementedError

    def _log_normalizer_and_gradients(self):
        """Returns detached leaf copies of the natural parameters, ``F`` at
        them and ``grad F`` (with a graph, so that it can be differentiated
        again)."""
        with ferrograd.enable_grad():
            params = [p.detach().requires_grad_() for p in self._natural_params]
            log_norm = self._log_normalizer(*params)
            grads = ferrograd.autograd.grad(log_norm.sum(), params, create_graph=True)
        return params, log_norm, grads

    def entropy(self):
        params, log_norm, grads = self._log_normalizer_and_gradients()
        result = log_norm - self._mean_carrier_measure
        batch = tuple(self._batch_shape)
        for param, grad in zip(params, grads, strict=True):
            result = result - (param * grad).reshape(batch + (-1,)).sum(-1)
        return result
