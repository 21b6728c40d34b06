"""The samplers behind ``ferrograd.distributions`` whose draws are
differentiable: ``_standard_gamma`` (the shape's gradient by implicit
reparameterization, ``dx/dalpha = -(dF/dalpha) / f``) and the raw Dirichlet
draw with its implicit derivative ``_dirichlet_grad``.
"""

from __future__ import annotations

from typing import Any

from . import _core
from ._core import Tensor
from ._core import is_grad_enabled as _is_grad_enabled
from ._routed import route
from .autograd.function import Function

__all__ = ["_dirichlet_grad", "_sample_dirichlet", "_standard_gamma", "_standard_gamma_grad"]

# Routed, so that vmap batches them: the draws as random ops (by randomness
# mode), the derivatives row by row.
_standard_gamma_sample = route("_standard_gamma_sample", _core._standard_gamma_sample, "ferrograd")
_sample_dirichlet = route("_sample_dirichlet", _core._sample_dirichlet, "ferrograd")
_standard_gamma_grad = route("_standard_gamma_grad", _core._standard_gamma_grad, "ferrograd")
_dirichlet_grad = route("_dirichlet_grad", _core._dirichlet_grad, "ferrograd")


class _StandardGamma(Function):
    """Gamma(alpha, 1) draws; backward multiplies by ``dx/dalpha``."""

    generate_vmap_rule = True

    @staticmethod
    def forward(alpha: Tensor, generator: Any) -> Tensor:
        return _standard_gamma_sample(alpha, generator=generator)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
        ctx.save_for_backward(inputs[0], output)

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
