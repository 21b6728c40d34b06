"""Adagrad: per-coordinate step sizes from the running sum of squared gradients."""

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
    _check_fused,
    _check_lr,
    _check_non_negative,
    _get_scalar_dtype,
    _get_value,
    _group_options,
    _real_views,
    _state_lists,
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
        params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): learning rate (default: 1e-2).
        lr_decay (float): learning-rate decay (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        initial_accumulator_value (float): starting value of the sum ``s`` (default: 0).
        eps (float): added to the denominator (default: 1e-10).
        maximize (bool): ascend the objective instead of descending it.
        foreach, fused (bool, optional): accepted for compatibility.
        differentiable (bool): run the step with autograd recording it.

    State: ``step`` and ``sum``, created for every parameter when the optimizer is built.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.Adagrad([w], lr=0.5)
        >>> w.grad = ferrograd.tensor([2.0, -4.0])
        >>> opt.step()
        >>> w
        tensor([ 0.5000, -1.5000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(lr_decay, "lr_decay")
        _check_non_negative(weight_decay, "weight_decay")
        _check_non_negative(initial_accumulator_value, "initial_accumulator_value")
        _check_non_negative(eps, "epsilon")
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
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

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._set_missing_options(
            {"foreach": None, "maximize": False, "differentiable": False, "fused": None}, step_tensors=True
        )

    def _step_group(self, group: dict[str, Any]) -> None:
        params, grads = self._params_with_grad(group)
        state_sums, state_steps = _state_lists([self.state[p] for p in params], "sum", "step")
        adagrad(
            params,
            grads,
            state_sums,
            state_steps,
            **_group_options(group, "lr", "weight_decay", "lr_decay", "eps", "maximize", "differentiable"),
        )


def adagrad(
    params: list[Tensor],
    grads: list[Tensor],
    state_sums: list[Tensor],
    state_steps: list[Tensor],
    *,
    lr: float | Tensor,
    weight_decay: float,
    lr_decay: float,
    eps: float,
    maximize: bool,
    differentiable: bool = False,
) -> None:
    """Functional Adagrad over lists of tensors; see :class:`Adagrad` for the update rule."""
    # A Rust foreach kernel would take these same lists and replace the loop below.
    lr = _to_scalar(lr)  # a tensor lr is decayed in its own dtype, as torch does
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps, strict=True):
        step_t += 1
        step = _get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = _get_value(lr / (1 + (step - 1) * lr_decay))
        param, grad, state_sum = _real_views(param, grad, state_sum)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


# torch's name for the per-tensor loop, which ``adagrad`` runs itself here.
_single_tensor_adagrad = adagrad
