"""Adadelta: step sizes from running averages of squared gradients and squared updates."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

from .._core import Tensor
from . import _steps
from .optimizer import _FLAGS_RESTORED, Optimizer, ParamsT, _check_lr, _get_value, _steps_by_group, _to_scalar

__all__ = ["Adadelta", "adadelta"]


@_steps_by_group
class Adadelta(Optimizer):
    r"""Adadelta: an adaptive learning-rate method that needs no base step size.

    For each parameter with a gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    Args:
        {params_arg}
        lr (float or Tensor): scales ``delta`` before it is applied (default: 1.0).
        rho (float): decay rate of the running averages (default: 0.9).
        eps (float): added inside the square roots for stability (default: 1e-6).
        weight_decay (float): L2 penalty (default: 0).
        {foreach_arg:foreach}
        capturable (bool): accepted for compatibility.
        {maximize_arg}
        {differentiable_arg}

    State: ``step`` (a 0-dim float32 tensor), ``square_avg`` (``v``), ``acc_delta`` (``u``).

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], dtype=ferrograd.float64, requires_grad=True)
        >>> opt = ferrograd.optim.Adadelta([w], lr=1.0, rho=0.0, eps=1e-6)
        >>> w.grad = ferrograd.tensor([1.0, -1.0], dtype=ferrograd.float64)
        >>> opt.step()  # delta = sqrt(eps / (1 + eps)) * g
        >>> [round(v, 6) for v in w.tolist()]
        [0.999, -1.999]
    """

    _restored_options = _FLAGS_RESTORED
    _scalar_state = ("step",)

    _options = "lr rho eps weight_decay maximize capturable foreach differentiable"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
        weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
        maximize: bool = False, differentiable: bool = False,
    ) -> None:  # fmt: skip
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        self._check_options(epsilon=eps, weight_decay=weight_decay)
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group, "square_avg", "acc_delta")
        return [params, grads, *self._state_lists(states, "square_avg", "acc_delta", "step")]

    def _step_group(self, group: dict[str, Any]) -> None:
        options = self._group_options(group, "lr rho eps weight_decay maximize differentiable")
        adadelta(*self._init_group(group), **options)


def adadelta(
    params: list[Tensor], grads: list[Tensor], square_avgs: list[Tensor], acc_deltas: list[Tensor],
    state_steps: list[Tensor], *, lr: float | Tensor, rho: float, eps: float, weight_decay: float,
    maximize: bool = False, differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional Adadelta over lists of tensors; see :class:`Adadelta` for the update rule."""
    lr = _get_value(_to_scalar(lr))
    if _steps.core_ok(differentiable, params, grads, square_avgs, acc_deltas):
        _steps.advance(state_steps)
        _steps.in_core(
            "adadelta", params, grads, [square_avgs, acc_deltas], [], lr=lr, rho=rho, eps=eps,
            weight_decay=weight_decay, maximize=maximize,
        )  # fmt: skip
        return
    steps = _steps.per_tensor(
        params, grads, state_steps, square_avgs, acc_deltas, maximize=maximize, weight_decay=weight_decay
    )
    for _, _, param, grad, square_avg, acc_delta in steps:
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()  # the graph saved ``delta`` for the sqrt
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)


# torch's name for the per-tensor loop, which ``adadelta`` runs itself here.
_single_tensor_adadelta = adadelta
