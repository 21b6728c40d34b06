"""RAdam: Adam with the variance of its adaptive step size rectified."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

from .._core import Tensor
from . import _steps
from .optimizer import (
    _FLAGS_RESTORED,
    Optimizer,
    ParamsT,
    _check_step_grad,
    _get_value,
    _steps_by_group,
    _to_scalar,
)

__all__ = ["RAdam", "radam"]


@_steps_by_group
class RAdam(Optimizer):
    r"""RAdam: Adam that falls back to momentum SGD while its second moment is unreliable.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * p                 otherwise
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / (1 - beta2**t)
        if rho_t > 5:
            r = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r
        else:
            p = p - lr * m_hat

    Args:
        {params_arg}
        {lr_arg:1e-3}
        {moments_args}
        weight_decay (float): weight decay (default: 0).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does.
        {foreach_arg:foreach}
        {maximize_arg}
        capturable (bool): accepted for compatibility.
        {differentiable_arg}

    State: ``step`` (a 0-dim float32 tensor), ``exp_avg``, ``exp_avg_sq``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.RAdam([w], lr=0.1)
        >>> w.grad = ferrograd.tensor([1.0, -1.0])
        >>> opt.step()  # rho_t <= 5: an SGD-with-momentum step
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _restored_options = {**_FLAGS_RESTORED, "decoupled_weight_decay": False}
    _scalar_state = ("step",)

    _options = "lr betas eps weight_decay maximize foreach capturable decoupled_weight_decay differentiable"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
        foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
        differentiable: bool = False,
    ) -> None:  # fmt: skip
        self._check_options(lr=lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group, "exp_avg", "exp_avg_sq")
        return [params, grads, *self._state_lists(states, "exp_avg", "exp_avg_sq", "step")]

    def _check_state(self, group: dict[str, Any], state: dict[str, Any]) -> None:
        _check_step_grad(group, state)

    def _step_group(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        options = self._group_options(
            group, "lr weight_decay eps decoupled_weight_decay maximize differentiable"
        )
        radam(*self._init_group(group), beta1=beta1, beta2=beta2, **options)


def radam(
    params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor], *, beta1: float, beta2: float, lr: float | Tensor, weight_decay: float,
    eps: float, decoupled_weight_decay: bool = False, maximize: bool = False,
    differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional RAdam over lists of tensors; see :class:`RAdam` for the update rule."""
    lr = _get_value(_to_scalar(lr))
    if _steps.core_ok(differentiable, params, grads, exp_avgs, exp_avg_sqs):
        _steps.counted(
            "radam", params, grads, [exp_avgs, exp_avg_sqs], state_steps, lr=lr, beta1=beta1,
            beta2=beta2, eps=eps, weight_decay=weight_decay, decoupled=decoupled_weight_decay,
            maximize=maximize,
        )  # fmt: skip
        return

    # The length of the approximated simple moving average, at its limit t -> infinity.
    rho_inf = 2 / (1 - beta2) - 1
    steps = _steps.per_tensor(
        params, grads, state_steps, exp_avgs, exp_avg_sqs, maximize=maximize, weight_decay=weight_decay,
        decoupled_lr=lr if decoupled_weight_decay else None,
    )  # fmt: skip
    for _, step_t, param, grad, exp_avg, exp_avg_sq in steps:
        step = _get_value(step_t)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2

        if rho_t > 5.0:
            # The variance of the adaptive lr is tractable: rectify it by ``rect``.
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            sqrt_v = exp_avg_sq.sqrt()
            sqrt_v = sqrt_v.add(eps) if differentiable else sqrt_v.add_(eps)
            adaptive_lr = (bias_correction2**0.5) / sqrt_v
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


# torch's name for the per-tensor loop, which ``radam`` runs itself here.
_single_tensor_radam = radam
