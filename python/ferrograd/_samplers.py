"""The samplers behind ``ferrograd.distributions`` whose draws are
differentiable: ``_standard_gamma`` (the shape's gradient by implicit
reparameterization, ``dx/dalpha = -(dF/dalpha) / f``) and the raw Dirichlet
draw with its implicit derivative ``_dirichlet_grad``.
"""

from __future__ import annotations

from typing import Any

from ._core import Tensor, _dirichlet_grad, _sample_dirichlet, _standard_gamma_grad, _standard_gamma_sample
from ._core import is_grad_enabled as _is_grad_enabled
from .autograd.function import Function

__all__ = ["_dirichlet_grad", "_sample_dirichlet", "_standard_gamma", "_standard_gamma_grad"]


class _StandardGamma(Function):
    """Gamma(alpha, 1) draws; backward multiplies by ``dx/dalpha``."""

    @staticmethod
    def forward(ctx: Any, alpha: Tensor, generator: Any) -> Tensor:
        x = _standard_gamma_sample(alpha, generator=generator)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        alpha, x = ctx.saved_tensors
        return grad * _standard_gamma_grad(alpha, x), None


def _standard_gamma(input: Tensor, generator: Any = None) -> Tensor:
    """Draws one Gamma(``input``, 1) sample per element (float32 or
    float64), at least the dtype's smallest normal number.

    The result is differentiable in ``input`` by implicit
    reparameterization: the derivative of a draw ``x`` is
    ``dx/dalpha = -(dP/dalpha)(alpha, x) / p(x; alpha)``, with ``P`` the
    regularized lower incomplete gamma function and ``p`` the density
    (:func:`ferrograd._standard_gamma_grad`).

    Args:
        input (Tensor): the shapes ``alpha``, non-negative.
        generator (Generator, optional): the generator to draw from.

    Example:
        >>> alpha = ferrograd.full((4000,), 3.0, requires_grad=True)
        >>> x = ferrograd._standard_gamma(alpha)
        >>> bool(abs(x.mean() - 3.0) < 0.2)
        True
        >>> x.sum().backward()
        >>> bool(abs(alpha.grad.mean() - 1.0) < 0.1)
        True
    """
    if _is_grad_enabled() and input.requires_grad:
        return _StandardGamma.apply(input, generator)
    return _standard_gamma_sample(input, generator=generator)
