"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from .optimizer import (
    Optimizer,
    ParamsT,
    _check_lr,
    _check_non_negative,
    _get_value,
    _group_options,
    _state_lists,
    _steps_by_group,
    _to_scalar,
)

__all__ = ["RMSprop", "rmsprop"]


@_steps_by_group
class RMSprop(Optimizer):
    r"""RMSprop: divide the gradient by a running root mean square of recent gradients.

    For each parameter with a gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        a = alpha * a + (1 - alpha) * g            (centered)
        d = sqrt(v - a * a) + eps  if centered  else  sqrt(v) + eps
        b = momentum * b + g / d;  p = p - lr * b  (momentum > 0)
        p = p - lr * g / d                         (otherwise)

    Args:
        params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): learning rate (default: 1e-2).
        alpha (float): smoothing constant (default: 0.99).
        eps (float): added to the denominator (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        momentum (float): momentum factor (default: 0).
        centered (bool): normalize by an estimate of the gradient's variance (default: False).
        maximize (bool): ascend the objective instead of descending it.
        capturable, foreach (bool, optional): accepted for compatibility.
        differentiable (bool): run the step with autograd recording it.

    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.RMSprop([w], lr=0.01, alpha=0.75)
        >>> w.grad = ferrograd.tensor([1.0, 1.0])
        >>> opt.step()
        >>> w
        tensor([ 0.9800, -2.0200], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(eps, "epsilon")
        _check_non_negative(momentum, "momentum")
        _check_non_negative(weight_decay, "weight_decay")
        _check_non_negative(alpha, "alpha")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._set_missing_options(
            {
                "momentum": 0,
                "centered": False,
                "foreach": None,
                "maximize": False,
                "differentiable": False,
                "capturable": False,
            },
            step_tensors=True,
        )

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        buf = "momentum_buffer" if group["momentum"] > 0 else None
        avg = "grad_avg" if group["centered"] else None
        params, grads, states = self._group_states(group, "square_avg", buf, avg)
        return [params, grads, *_state_lists(states, "square_avg", avg, buf, "step")]

    def _step_group(self, group: dict[str, Any]) -> None:
        rmsprop(
            *self._init_group(group),
            **_group_options(
                group, "lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize",
                "differentiable",
            ),
        )


def rmsprop(
    params: list[Tensor],
    grads: list[Tensor],
    square_avgs: list[Tensor],
    grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float | Tensor,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    centered: bool,
    maximize: bool,
    differentiable: bool = False,
) -> None:
    """Functional RMSprop over lists of tensors; see :class:`RMSprop` for the update rule."""
    # A Rust foreach kernel would take these same lists and replace the loop below.
    lr = _get_value(_to_scalar(lr))
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        state_steps[i] += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        is_complex = _fg.is_complex(param)
        if is_complex:
            param = _fg.view_as_real(param)
            grad = _fg.view_as_real(grad)
            square_avg = _fg.view_as_real(square_avg)

        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            if is_complex:
                grad_avg = _fg.view_as_real(grad_avg)
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        # Out of place when differentiable: ``avg`` may be saved by the graph.
        avg = avg.add(eps) if differentiable else avg.add_(eps)

        if momentum > 0:
            buf = momentum_buffer_list[i]
            if is_complex:
                buf = _fg.view_as_real(buf)
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


# torch's name for the per-tensor loop, which ``rmsprop`` runs itself here.
_single_tensor_rmsprop = rmsprop
