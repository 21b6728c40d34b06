"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

from .._core import Tensor
from . import _steps
from .optimizer import _FLAGS_RESTORED, Optimizer, ParamsT, _get_value, _steps_by_group, _to_scalar

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
        {params_arg}
        {lr_arg:1e-2}
        alpha (float): smoothing constant (default: 0.99).
        eps (float): added to the denominator (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        momentum (float): momentum factor (default: 0).
        centered (bool): normalize by an estimate of the gradient's variance (default: False).
        {maximize_arg}
        {foreach_arg:capturable, foreach}
        {differentiable_arg}

    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.RMSprop([w], lr=0.01, alpha=0.75)
        >>> w.grad = ferrograd.tensor([1.0, 1.0])
        >>> opt.step()
        >>> w
        tensor([ 0.9800, -2.0200], requires_grad=True)
    """

    _restored_options = {**_FLAGS_RESTORED, "momentum": 0, "centered": False}
    _scalar_state = ("step",)

    _options = "lr momentum alpha eps centered weight_decay capturable foreach maximize differentiable"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
        weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
        foreach: bool | None = None, maximize: bool = False, differentiable: bool = False,
    ) -> None:  # fmt: skip
        self._check_options(lr=lr, epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        buf = "momentum_buffer" if group["momentum"] > 0 else None
        avg = "grad_avg" if group["centered"] else None
        params, grads, states = self._group_states(group, "square_avg", buf, avg)
        return [params, grads, *self._state_lists(states, "square_avg", avg, buf, "step")]

    def _step_group(self, group: dict[str, Any]) -> None:
        options = self._group_options(
            group, "lr alpha eps weight_decay momentum centered maximize differentiable"
        )
        rmsprop(*self._init_group(group), **options)


def rmsprop(
    params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor], grad_avgs: list[Tensor],
    momentum_buffer_list: list[Tensor], state_steps: list[Tensor], *, lr: float | Tensor, alpha: float,
    eps: float, weight_decay: float, momentum: float, centered: bool, maximize: bool,
    differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional RMSprop over lists of tensors; see :class:`RMSprop` for the update rule."""
    # The state lists the options use, in the core's order.
    state_lists = [square_avgs] + [grad_avgs] * centered + [momentum_buffer_list] * (momentum > 0)
    if _steps.core_ok(differentiable, params, grads, *state_lists):
        _steps.advance(state_steps)
        _steps.in_core(
            "rmsprop", params, grads, state_lists, [], lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
            momentum=momentum, centered=centered, maximize=maximize,
        )  # fmt: skip
        return
    lr = _get_value(_to_scalar(lr))
    steps = _steps.per_tensor(
        params, grads, state_steps, square_avgs, grad_avgs, momentum_buffer_list, maximize=maximize,
        weight_decay=weight_decay,
    )  # fmt: skip
    for _, _, param, grad, square_avg, grad_avg, buf in steps:
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        # Out of place when differentiable: ``avg`` may be saved by the graph.
        avg = avg.add(eps) if differentiable else avg.add_(eps)

        if momentum > 0:
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


# torch's name for the per-tensor loop, which ``rmsprop`` runs itself here.
_single_tensor_rmsprop = rmsprop
