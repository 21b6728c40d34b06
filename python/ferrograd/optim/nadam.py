"""NAdam: Adam with Nesterov momentum and a warming-up momentum schedule."""

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
    _check_step_grad,
    _get_scalar_dtype,
    _get_value,
    _steps_by_group,
    _to_scalar,
)

__all__ = ["NAdam", "nadam"]


@_steps_by_group
class NAdam(Optimizer):
    r"""NAdam: Adam whose first moment is applied with Nesterov's look-ahead.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        p = p * (1 - lr * weight_decay)          if decoupled_weight_decay
        g = g + weight_decay * p                 otherwise
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_{t+1} = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product = mu_product * mu_t           (the product of mu_1 ... mu_t)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - mu_product) * g / denom
              - lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom

    Args:
        {params_arg}
        {lr_arg:2e-3}
        {moments_args}
        weight_decay (float): weight decay (default: 0).
        momentum_decay (float): how fast ``mu_t`` warms up to ``beta1 / 2`` ... ``beta1``
            (default: 4e-3).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does (NAdamW).
        {foreach_arg:foreach}
        {maximize_arg}
        capturable (bool): accepted for compatibility.
        {differentiable_arg}

    State: ``step`` and ``mu_product`` (0-dim float32 tensors), ``exp_avg``, ``exp_avg_sq``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.NAdam([w], lr=0.1)
        >>> w.grad = ferrograd.tensor([1.0, -1.0])
        >>> opt.step()
        >>> w
        tensor([ 0.8944, -1.8944], requires_grad=True)
    """

    _restored_options = {**_FLAGS_RESTORED, "decoupled_weight_decay": False}
    _scalar_state = ("step", "mu_product")

    _options = (
        "lr betas eps weight_decay momentum_decay decoupled_weight_decay maximize foreach capturable "
        "differentiable"
    )

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
        capturable: bool = False, differentiable: bool = False,
    ) -> None:  # fmt: skip
        self._check_options(
            lr=lr, epsilon=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay
        )
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group, "exp_avg", "exp_avg_sq")
        for state in states:
            if "mu_product" not in state:  # made only when missing (a compiled step replays)
                state["mu_product"] = _fg.tensor(1.0, dtype=_get_scalar_dtype())
        return [params, grads, *self._state_lists(states, "exp_avg", "exp_avg_sq", "mu_product", "step")]

    def _check_state(self, group: dict[str, Any], state: dict[str, Any]) -> None:
        _check_step_grad(group, state)

    def _step_group(self, group: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        options = self._group_options(
            group, "lr weight_decay momentum_decay eps decoupled_weight_decay maximize differentiable"
        )
        nadam(*self._init_group(group), beta1=beta1, beta2=beta2, **options)


def nadam(
    params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor], exp_avg_sqs: list[Tensor],
    mu_products: list[Tensor], state_steps: list[Tensor], *, beta1: float, beta2: float,
    lr: float | Tensor, weight_decay: float, momentum_decay: float, eps: float,
    decoupled_weight_decay: bool = False, maximize: bool = False, differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional NAdam over lists of tensors; see :class:`NAdam` for the update rule."""
    lr = _get_value(_to_scalar(lr))

    def mu_at(step: float) -> float:
        return beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))

    if _steps.core_ok(differentiable, params, grads, exp_avgs, exp_avg_sqs):
        # The core counts the steps and multiplies each momentum product (kept in its state
        # tensor, so it rounds as torch's does) by the step's coefficient.
        _steps.counted(
            "nadam", params, grads, [exp_avgs, exp_avg_sqs], state_steps, mu_products,
            lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled=decoupled_weight_decay, maximize=maximize,
        )  # fmt: skip
        return

    decoupled_lr = lr if decoupled_weight_decay else None
    steps = _steps.per_tensor(
        params, grads, state_steps, exp_avgs, exp_avg_sqs, maximize=maximize, weight_decay=weight_decay,
        decoupled_lr=decoupled_lr,
    )  # fmt: skip
    for i, step_t, param, grad, exp_avg, exp_avg_sq in steps:
        step = _get_value(step_t)
        mu, mu_next = mu_at(step), mu_at(step + 1)
        mu_product = mu_products[i]
        mu_product *= mu

        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(1 - beta2**step).sqrt()

        if differentiable:
            # Out of place: the graph may have saved ``denom``, ``grad`` and ``exp_avg``.
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            param.addcdiv_(grad * (-lr * (1.0 - mu) / (1.0 - mu_product)), denom)
            param.addcdiv_(exp_avg * (-lr * mu_next / (1.0 - mu_product_next)), denom)
            continue

        product = _get_value(mu_product)
        denom.add_(eps)
        param.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - product))
        param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - product * mu_next))


# torch's name for the per-tensor loop, which ``nadam`` runs itself here.
_single_tensor_nadam = nadam
