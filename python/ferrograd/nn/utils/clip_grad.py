"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``,
``get_total_norm`` and ``clip_grads_with_norm_``."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import ferrograd
from ferrograd._core import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

_F = TypeVar("_F", bound=Callable[..., Any])
_TensorOrTensors = Tensor | Iterable[Tensor]


def _no_grad(func: _F) -> _F:
    # Gradients are edited in place: nothing here may be recorded.
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with ferrograd.no_grad():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _as_list(tensors: _TensorOrTensors) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def _check_foreach(foreach: bool | None) -> None:
    if foreach:
        raise RuntimeError("foreach=True was passed, but can't use the foreach API on cpu tensors")


@_no_grad
def get_total_norm(
    tensors: _TensorOrTensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    r"""The norm of the norms of ``tensors``, as if they were concatenated
    into one vector.

    Args:
        tensors: a tensor or an iterable of tensors (typically gradients).
        norm_type (float): the order of the norm; ``inf`` for the max norm.
        error_if_nonfinite (bool): raise if the total norm is nan or inf.
        foreach: accepted for compatibility; ``True`` raises (no foreach kernels).

    Example::

        >>> nn.utils.get_total_norm([torch.tensor([3.0]), torch.tensor([4.0])])
        tensor(5.)
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return ferrograd.tensor(0.0)
    _check_foreach(foreach)
    norms = [ferrograd.linalg.vector_norm(t, norm_type) for t in tensors]
    total_norm = ferrograd.linalg.vector_norm(ferrograd.stack(norms), norm_type)
    if error_if_nonfinite and bool(ferrograd.logical_or(total_norm.isnan(), total_norm.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return total_norm


@_no_grad
def clip_grads_with_norm_(
    parameters: _TensorOrTensors,
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    r"""Scales the gradients of ``parameters`` in place by
    ``min(1, max_norm / (total_norm + 1e-6))``.

    Example::

        >>> norm = nn.utils.get_total_norm([p.grad for p in model.parameters()])
        >>> nn.utils.clip_grads_with_norm_(model.parameters(), 1.0, norm)
    """
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if len(grads) == 0:
        return
    _check_foreach(foreach)
    clip_coef = float(max_norm) / (total_norm + 1e-6)
    clip_coef_clamped = ferrograd.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.dtype))


@_no_grad
def clip_grad_norm_(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    r"""Clips the gradient norm of ``parameters`` in place: the norm of all
    gradients together (as one vector) is scaled down to ``max_norm`` when
    larger.

    Args:
        parameters: a tensor or an iterable of tensors with gradients.
        max_norm (float): the largest norm allowed.
        norm_type (float): the order of the norm; ``inf`` for the max norm.
        error_if_nonfinite (bool): raise if the total norm is nan or inf.
        foreach: accepted for compatibility; ``True`` raises (no foreach kernels).

    Returns:
        The total norm before clipping (a 0-dim tensor).

    Example::

        >>> loss.backward()
        >>> nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    r"""Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters: _TensorOrTensors, clip_value: float, foreach: bool | None = None) -> None:
    r"""Clamps every gradient of ``parameters`` in place to
    ``[-clip_value, clip_value]``.

    Example::

        >>> nn.utils.clip_grad_value_(model.parameters(), 0.5)
    """
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if grads:
        _check_foreach(foreach)
    for g in grads:
        g.clamp_(min=-clip_value, max=clip_value)
