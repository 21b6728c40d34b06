"""Adam, with optional AMSGrad and decoupled (AdamW-style) weight decay."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .. import _core
from .._core import Tensor
from .optimizer import (
    Optimizer,
    ParamsT,
    _check_fused,
    _check_lr,
    _check_non_negative,
    _get_value,
    _group_options,
    _real_views,
    _rust_step_ok,
    _state_lists,
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
        params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): learning rate (default: 1e-3).
        betas (tuple): decay rates of the first and second moments (default: (0.9, 0.999)).
        eps (float): added to the denominator for stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        amsgrad (bool): use the running maximum of the second moment (default: False).
        maximize (bool): ascend the objective instead of descending it.
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does.
        foreach, fused, capturable (bool, optional): accepted for compatibility; the update runs
            the same per-tensor loop either way.
        differentiable (bool): run the step with autograd recording it.

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

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_lr(lr)
        _check_non_negative(eps, "epsilon")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _check_non_negative(weight_decay, "weight_decay")
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
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._set_missing_options(
            {
                "amsgrad": False,
                "maximize": False,
                "foreach": None,
                "capturable": False,
                "differentiable": False,
                "decoupled_weight_decay": False,
                "fused": None,
            },
            step_tensors=True,
        )

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        max_sq = "max_exp_avg_sq" if group["amsgrad"] else None
        params, grads, states = self._group_states(group, "exp_avg", "exp_avg_sq", max_sq)
        return [params, grads, *_state_lists(states, "exp_avg", "exp_avg_sq", max_sq, "step")]

    def _check_state(self, group: dict[str, Any], state: dict[str, Any]) -> None:
        if group["differentiable"] and state["step"].requires_grad:
            raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")
        if group["foreach"] and isinstance(group["lr"], Tensor) and not group["capturable"]:
            raise RuntimeError("lr as a Tensor is not supported for capturable=False and foreach=True")

    def _step_group(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        adam(
            *self._init_group(group),
            beta1=beta1,
            beta2=beta2,
            **_group_options(
                group, "amsgrad", "lr", "weight_decay", "eps", "maximize", "differentiable",
                "decoupled_weight_decay",
            ),
        )


def adam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    max_exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    amsgrad: bool,
    beta1: float | Tensor,
    beta2: float | Tensor,
    lr: float | Tensor,
    weight_decay: float,
    eps: float,
    maximize: bool,
    differentiable: bool = False,
    decoupled_weight_decay: bool = False,
) -> None:
    """Functional Adam over lists of tensors; see :class:`Adam` for the update rule.

    Real floating parameters with contiguous gradients and state are updated by
    one call into the core (the GIL released, element by element in float64);
    anything else (complex parameters, differentiable steps) runs a loop of
    tensor ops.
    """
    state_lists = [exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    if _rust_step_ok(differentiable, params, grads, *state_lists):
        for step_t in state_steps:
            step_t += 1
        _core._adam_step(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            max_exp_avg_sqs if amsgrad else [],
            [float(s) for s in state_steps],
            lr=float(_get_value(_to_scalar(lr))),
            beta1=float(_get_value(_to_scalar(beta1))),
            beta2=float(_get_value(_to_scalar(beta2))),
            eps=float(eps),
            weight_decay=float(weight_decay),
            decoupled=decoupled_weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
        )
        return

    # Tensor hyper-parameters are read as numbers (the step is not differentiated with respect
    # to them). A tensor lr is combined with the bias correction in its own dtype first, as
    # torch does, so float32 lrs round the same way.
    lr = _to_scalar(lr)
    beta1 = _get_value(_to_scalar(beta1))
    beta2 = _get_value(_to_scalar(beta2))
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        step_t += 1

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(_get_value(1 - lr * weight_decay))
            else:
                grad = grad.add(param, alpha=weight_decay)

        max_exp_avg_sq = max_exp_avg_sqs[i] if amsgrad else None
        param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq = _real_views(
            param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq
        )

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
