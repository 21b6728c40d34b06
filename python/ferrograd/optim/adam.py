"""Adam, with optional AMSGrad and decoupled (AdamW-style) weight decay."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from . import _steps
from .optimizer import (
    _FLAGS_RESTORED,
    Optimizer,
    ParamsT,
    _check_fused,
    _check_step_grad,
    _get_value,
    _steps_by_group,
    _to_scalar,
)

__all__ = ["Adam", "adam"]


@_steps_by_group
class Adam(Optimizer):
    r"""Adam: adaptive moment estimation.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * p                 otherwise
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                    (amsgrad; v_max replaces v below)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Args:
        {params_arg}
        {lr_arg:1e-3}
        {moments_args}
        weight_decay (float): weight decay (default: 0).
        amsgrad (bool): use the running maximum of the second moment (default: False).
        {maximize_arg}
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does.
        {foreach_arg:foreach, fused, capturable}
        {differentiable_arg}

    State: ``step`` (a 0-dim float32 tensor), ``exp_avg``, ``exp_avg_sq`` and, with amsgrad,
    ``max_exp_avg_sq``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    _restored_options = {
        **_FLAGS_RESTORED, "amsgrad": False, "decoupled_weight_decay": False, "fused": None,
    }  # fmt: skip
    _scalar_state = ("step",)

    _options = (
        "lr betas eps weight_decay amsgrad maximize foreach capturable differentiable fused "
        "decoupled_weight_decay"
    )

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
        weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
        maximize: bool = False, capturable: bool = False, differentiable: bool = False,
        fused: bool | None = None, decoupled_weight_decay: bool = False,
    ) -> None:  # fmt: skip
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        self._check_options(lr=lr, epsilon=eps, betas=betas, weight_decay=weight_decay)
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if not capturable and foreach:
                    raise ValueError(
                        f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True"
                    )
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(_to_scalar(b) for b in betas)  # type: ignore[assignment]
        super().__init__(params, self._defaults(locals()))
        _check_fused(fused, foreach, differentiable)

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        max_sq = "max_exp_avg_sq" if group["amsgrad"] else None
        params, grads, states = self._group_states(group, "exp_avg", "exp_avg_sq", max_sq)
        return [params, grads, *self._state_lists(states, "exp_avg", "exp_avg_sq", max_sq, "step")]

    def _check_state(self, group: dict[str, Any], state: dict[str, Any]) -> None:
        _check_step_grad(group, state)
        if group["foreach"] and isinstance(group["lr"], Tensor) and not group["capturable"]:
            raise RuntimeError("lr as a Tensor is not supported for capturable=False and foreach=True")

    def _step_group(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        options = self._group_options(
            group, "amsgrad lr weight_decay eps maximize differentiable decoupled_weight_decay"
        )
        adam(*self._init_group(group), beta1=beta1, beta2=beta2, **options)


def adam(
    params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor], state_steps: list[Tensor], *, amsgrad: bool, beta1: float | Tensor,
    beta2: float | Tensor, lr: float | Tensor, weight_decay: float, eps: float, maximize: bool,
    differentiable: bool = False, decoupled_weight_decay: bool = False,
) -> None:  # fmt: skip
    """Functional Adam over lists of tensors; see :class:`Adam` for the update rule.

    Real floating parameters with contiguous gradients and state are updated by one call into the
    core; anything else (complex parameters, differentiable steps) runs a loop of tensor ops.
    """
    state_lists = [exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    if _steps.core_ok(differentiable, params, grads, *state_lists):
        _steps.counted(
            "adam", params, grads, state_lists, state_steps, lr=lr, beta1=beta1,
            beta2=beta2, eps=eps, weight_decay=weight_decay, decoupled=decoupled_weight_decay,
            amsgrad=amsgrad, maximize=maximize,
        )  # fmt: skip
        return

    # Tensor hyper-parameters are read as numbers (the step is not differentiated with respect
    # to them). A tensor lr is combined with the bias correction in its own dtype first, as
    # torch does, so float32 lrs round the same way.
    lr = _to_scalar(lr)
    beta1 = _get_value(_to_scalar(beta1))
    beta2 = _get_value(_to_scalar(beta2))
    decoupled_lr = lr if decoupled_weight_decay else None
    steps = _steps.per_tensor(
        params, grads, state_steps, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [],
        maximize=maximize, weight_decay=weight_decay, decoupled_lr=decoupled_lr,
    )  # fmt: skip
    for _, step_t, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq in steps:
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)

        if differentiable:
            # torch's differentiable form: the bias corrections come from the step tensor (in
            # its float32 arithmetic) and the update is folded into one addcdiv of tensors.
            step_size_neg = (lr / (1 - beta1**step_t)).neg()
            bias_correction2_sqrt = (1 - beta2**step_t).sqrt()
            if max_exp_avg_sq is not None:
                max_exp_avg_sq.copy_(_fg.maximum(max_exp_avg_sq.clone(), exp_avg_sq))
                second = max_exp_avg_sq
            else:
                second = exp_avg_sq
            denom = (second.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
            param.addcdiv_(exp_avg.clone(), denom)
            continue

        step = _get_value(step_t)
        bias_correction1 = 1 - beta1**step
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        step_size = _get_value(lr / bias_correction1)
        if max_exp_avg_sq is not None:
            max_exp_avg_sq.copy_(_fg.maximum(max_exp_avg_sq, exp_avg_sq))
            denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)
