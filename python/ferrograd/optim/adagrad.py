"""Adagrad: per-coordinate step sizes from the running sum of squared gradients."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from . import _steps
from .optimizer import (
    Optimizer,
    ParamsT,
    _check_fused,
    _get_scalar_dtype,
    _get_value,
    _steps_by_group,
    _to_scalar,
)

__all__ = ["Adagrad", "adagrad"]


@_steps_by_group
class Adagrad(Optimizer):
    r"""Adagrad.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (sqrt(s) + eps)

    Args:
        {params_arg}
        {lr_arg:1e-2}
        lr_decay (float): learning-rate decay (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        initial_accumulator_value (float): starting value of the sum ``s`` (default: 0).
        eps (float): added to the denominator (default: 1e-10).
        {maximize_arg}
        {foreach_arg:foreach, fused}
        {differentiable_arg}

    State: ``step`` and ``sum``, created for every parameter when the optimizer is built.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.Adagrad([w], lr=0.5)
        >>> w.grad = ferrograd.tensor([2.0, -4.0])
        >>> opt.step()
        >>> w
        tensor([ 0.5000, -1.5000], requires_grad=True)
    """

    _restored_options = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}
    _scalar_state = ("step",)

    _options = "lr lr_decay eps weight_decay initial_accumulator_value foreach maximize differentiable fused"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
        initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
        maximize: bool = False, differentiable: bool = False, fused: bool | None = None,
    ) -> None:  # fmt: skip
        self._check_options(
            lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, epsilon=eps,
        )  # fmt: skip
        super().__init__(params, self._defaults(locals()))
        _check_fused(fused, foreach, differentiable)
        # Unlike the other optimizers, Adagrad's state exists from construction on.
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _fg.tensor(0.0, dtype=_get_scalar_dtype())
                init = group["initial_accumulator_value"]
                if _fg.is_complex(p):
                    init = complex(init, init)
                state["sum"] = _fg.full_like(p, init)

    def _step_group(self, group: dict[str, Any]) -> None:
        params, grads = self._params_with_grad(group)
        state_sums, state_steps = self._state_lists([self.state[p] for p in params], "sum", "step")
        options = self._group_options(group, "lr weight_decay lr_decay eps maximize differentiable")
        adagrad(params, grads, state_sums, state_steps, **options)


def adagrad(
    params: list[Tensor], grads: list[Tensor], state_sums: list[Tensor], state_steps: list[Tensor], *,
    lr: float | Tensor, weight_decay: float, lr_decay: float, eps: float, maximize: bool,
    differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional Adagrad over lists of tensors; see :class:`Adagrad` for the update rule."""
    if _steps.core_ok(differentiable, params, grads, state_sums):
        _steps.counted(
            "adagrad", params, grads, [state_sums], state_steps, lr=lr, lr_decay=lr_decay,
            weight_decay=weight_decay, eps=eps, maximize=maximize,
        )  # fmt: skip
        return
    lr = _to_scalar(lr)  # a tensor lr is decayed in its own dtype, as torch does
    steps = _steps.per_tensor(
        params, grads, state_steps, state_sums, maximize=maximize, weight_decay=weight_decay
    )
    for _, step_t, param, grad, state_sum in steps:
        clr = _get_value(lr / (1 + (_get_value(step_t) - 1) * lr_decay))
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


# torch's name for the per-tensor loop, which ``adagrad`` runs itself here.
_single_tensor_adagrad = adagrad
