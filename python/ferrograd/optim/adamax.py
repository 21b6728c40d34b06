"""Adamax: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from . import _steps
from .optimizer import _FLAGS_RESTORED, Optimizer, ParamsT, _get_value, _steps_by_group, _to_scalar

__all__ = ["Adamax", "adamax"]


@_steps_by_group
class Adamax(Optimizer):
    r"""Adamax: a variant of Adam based on the infinity norm.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    Args:
        {params_arg}
        {lr_arg:2e-3}
        betas (tuple): decay rates of the first moment and of the infinity norm
            (default: (0.9, 0.999)).
        eps (float): added to ``|g|`` for stability (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        {foreach_arg:foreach}
        {maximize_arg}
        {differentiable_arg}
        capturable (bool): accepted for compatibility.

    State: ``step`` (a 0-dim float32 tensor), ``exp_avg``, ``exp_inf``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.Adamax([w], lr=0.1)
        >>> w.grad = ferrograd.tensor([2.0, -0.5])
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _restored_options = _FLAGS_RESTORED
    _scalar_state = ("step",)

    _options = "lr betas eps weight_decay foreach maximize differentiable capturable"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
        maximize: bool = False, differentiable: bool = False, capturable: bool = False,
    ) -> None:  # fmt: skip
        self._check_options(lr=lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group, "exp_avg", "exp_inf")
        return [params, grads, *self._state_lists(states, "exp_avg", "exp_inf", "step")]

    def _step_group(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        options = self._group_options(group, "lr weight_decay eps maximize differentiable")
        adamax(*self._init_group(group), beta1=beta1, beta2=beta2, **options)


def adamax(
    params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_infs: list[Tensor],
    state_steps: list[Tensor], *, eps: float, beta1: float, beta2: float, lr: float | Tensor,
    weight_decay: float, maximize: bool = False, differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional Adamax over lists of tensors; see :class:`Adamax` for the update rule."""
    if _steps.core_ok(differentiable, params, grads, exp_avgs, exp_infs):
        _steps.counted(
            "adamax", params, grads, [exp_avgs, exp_infs], state_steps, lr=lr, beta1=beta1,
            beta2=beta2, eps=eps, weight_decay=weight_decay, maximize=maximize,
        )  # fmt: skip
        return
    lr = _to_scalar(lr)  # a tensor lr is divided by the bias correction in its own dtype
    steps = _steps.per_tensor(
        params, grads, state_steps, exp_avgs, exp_infs, maximize=maximize, weight_decay=weight_decay
    )
    for _, step_t, param, grad, exp_avg, exp_inf in steps:
        exp_avg.lerp_(grad, 1 - beta1)
        if differentiable:
            # The running maximum as an out-of-place op the graph can differentiate.
            exp_inf.copy_(_fg.maximum(exp_inf.mul(beta2), grad.abs().add(eps)))
        else:
            exp_inf.copy_(_fg.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))

        clr = _get_value(lr / (1 - beta1 ** _get_value(step_t)))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)


# torch's name for the per-tensor loop, which ``adamax`` runs itself here.
_single_tensor_adamax = adamax
