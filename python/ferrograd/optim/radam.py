"""RAdam: Adam with the variance of its adaptive step size rectified."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

from .._core import Tensor
from .optimizer import (
    Optimizer,
    ParamsT,
    _check_betas,
    _check_lr,
    _check_non_negative,
    _get_value,
    _group_options,
    _real_views,
    _state_lists,
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
        params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): learning rate (default: 1e-3).
        betas (tuple): decay rates of the first and second moments (default: (0.9, 0.999)).
        eps (float): added to the denominator for stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does.
        foreach (bool, optional): accepted for compatibility; the update runs the same
            per-tensor loop either way.
        maximize (bool): ascend the objective instead of descending it.
        capturable (bool): accepted for compatibility.
        differentiable (bool): run the step with autograd recording it.

    State: ``step`` (a 0-dim float32 tensor), ``exp_avg``, ``exp_avg_sq``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.RAdam([w], lr=0.1)
        >>> w.grad = ferrograd.tensor([1.0, -1.0])
        >>> opt.step()  # rho_t <= 5: an SGD-with-momentum step
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(eps, "epsilon")
        _check_betas(betas)
        _check_non_negative(weight_decay, "weight_decay")
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._set_missing_options(
            {
                "foreach": None,
                "maximize": False,
                "differentiable": False,
                "decoupled_weight_decay": False,
                "capturable": False,
            },
            step_tensors=True,
        )

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group, "exp_avg", "exp_avg_sq")
        return [params, grads, *_state_lists(states, "exp_avg", "exp_avg_sq", "step")]

    def _check_state(self, group: dict[str, Any], state: dict[str, Any]) -> None:
        if group["differentiable"] and state["step"].requires_grad:
            raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")

    def _step_group(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        radam(
            *self._init_group(group),
            beta1=beta1,
            beta2=beta2,
            **_group_options(
                group, "lr", "weight_decay", "eps", "decoupled_weight_decay", "maximize", "differentiable"
            ),
        )


def radam(
    params: list[Tensor],
    grads: list[Tensor],
    exp_avgs: list[Tensor],
    exp_avg_sqs: list[Tensor],
    state_steps: list[Tensor],
    *,
    beta1: float,
    beta2: float,
    lr: float | Tensor,
    weight_decay: float,
    eps: float,
    decoupled_weight_decay: bool = False,
    maximize: bool = False,
    differentiable: bool = False,
) -> None:
    """Functional RAdam over lists of tensors; see :class:`RAdam` for the update rule."""
    # A Rust foreach kernel would take these same lists and replace the loop below.
    lr = _get_value(_to_scalar(lr))
    # The length of the approximated simple moving average, at its limit t -> infinity.
    rho_inf = 2 / (1 - beta2) - 1
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t = state_steps[i]
        step_t += 1
        step = _get_value(step_t)

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        param, grad, exp_avg, exp_avg_sq = _real_views(param, grad, exp_avgs[i], exp_avg_sqs[i])
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
