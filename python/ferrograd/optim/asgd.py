"""ASGD: stochastic gradient descent with a decaying step size and a running average of the
iterates (Polyak-Ruppert averaging)."""

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
    _get_scalar_dtype,
    _get_value,
    _steps_by_group,
    _to_scalar,
)

__all__ = ["ASGD", "asgd"]


@_steps_by_group
class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent.

    For each parameter with a gradient ``g`` (negated when ``maximize``), at step ``t``, with
    ``eta`` starting at ``lr`` and ``mu`` at 1::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = ax + mu * (p - ax)                  (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    ``ax`` holds the average of the iterates since step ``t0``; ``eta`` and ``mu`` are
    0-dim float32 tensors (float64 when that is the default dtype), as in torch.

    Args:
        {params_arg}
        {lr_arg:1e-2}
        lambd (float): decay term (default: 1e-4).
        alpha (float): power of the ``eta`` update (default: 0.75).
        t0 (float): the step at which averaging starts (default: 1e6).
        weight_decay (float): L2 penalty (default: 0).
        {foreach_arg:foreach}
        {maximize_arg}
        {differentiable_arg}
        capturable (bool): accepted for compatibility.

    State: ``step``, ``eta``, ``mu`` (0-dim tensors) and ``ax``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.ASGD([w], lr=0.5, lambd=0.0)
        >>> w.grad = ferrograd.tensor([1.0, 1.0])
        >>> opt.step()
        >>> w
        tensor([ 0.5000, -2.5000], requires_grad=True)
    """

    _restored_options = _FLAGS_RESTORED
    _scalar_state = ("step", "eta", "mu")

    _options = "lr lambd alpha t0 weight_decay foreach maximize differentiable capturable"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
        t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
        differentiable: bool = False, capturable: bool = False,
    ) -> None:  # fmt: skip
        self._check_options(lr=lr, weight_decay=weight_decay)
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group)
        for p, state in zip(params, states, strict=True):
            if "ax" not in state:
                lr = _get_value(_to_scalar(group["lr"]))
                state["eta"] = _fg.tensor(float(lr), dtype=_get_scalar_dtype())
                state["mu"] = _fg.tensor(1.0, dtype=_get_scalar_dtype())
                state["ax"] = _fg.zeros_like(p)
        return [params, grads, *self._state_lists(states, "ax", "step", "eta", "mu")]

    def _step_group(self, group: dict[str, Any]) -> None:
        options = self._group_options(group, "lambd lr t0 alpha weight_decay maximize differentiable")
        asgd(*self._init_group(group), **options)


def asgd(
    params: list[Tensor], grads: list[Tensor], axs: list[Tensor], state_steps: list[Tensor],
    etas: list[Tensor], mus: list[Tensor], *, lambd: float, lr: float | Tensor, t0: float, alpha: float,
    weight_decay: float, maximize: bool = False, differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional ASGD over lists of tensors; see :class:`ASGD` for the update rule."""
    lr = _to_scalar(lr)  # a tensor lr decays ``eta`` in its own dtype, as torch does

    def schedule(i: int, step: float) -> None:
        # The step size and averaging weight of the next step.
        etas[i].fill_(_get_value(lr / ((1 + lambd * lr * step) ** alpha)))
        mus[i].fill_(1 / max(1, step - t0))

    if not isinstance(lr, Tensor) and _steps.core_ok(differentiable, params, grads, axs):
        # The core reads ``eta`` and ``mu`` from their state tensors, counts the steps and sets
        # the next ``eta`` and ``mu``, so no number passes through Python (a compiled step
        # replays the whole update).
        _steps.counted(
            "asgd", params, grads, [axs], state_steps, [*etas, *mus], lr=lr, lambd=lambd,
            alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize,
        )  # fmt: skip
        return

    steps = _steps.per_tensor(params, grads, state_steps, axs, maximize=maximize, weight_decay=weight_decay)
    for i, step_t, param, grad, ax in steps:
        # ``eta`` is read from its (float32) state tensor, so the step uses its rounded value.
        eta_value = _get_value(etas[i])
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)

        if _get_value(mus[i]) != 1:
            ax.add_(param.sub(ax).mul_(mus[i]))
        else:
            ax.copy_(param)
        schedule(i, _get_value(step_t))


# torch's name for the per-tensor loop, which ``asgd`` runs itself here.
_single_tensor_asgd = asgd
