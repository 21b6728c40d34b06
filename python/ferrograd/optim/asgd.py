"""ASGD: stochastic gradient descent with a decaying step size and a running average of the
iterates (Polyak-Ruppert averaging)."""

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
        params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): learning rate (default: 1e-2).
        lambd (float): decay term (default: 1e-4).
        alpha (float): power of the ``eta`` update (default: 0.75).
        t0 (float): the step at which averaging starts (default: 1e6).
        weight_decay (float): L2 penalty (default: 0).
        foreach (bool, optional): accepted for compatibility; the update runs the same
            per-tensor loop either way.
        maximize (bool): ascend the objective instead of descending it.
        differentiable (bool): run the step with autograd recording it.
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

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(weight_decay, "weight_decay")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._set_missing_options(
            {"foreach": None, "maximize": False, "differentiable": False, "capturable": False},
            step_tensors=True,
        )
        # Old checkpoints stored eta and mu as Python numbers.
        for p_state in self.state.values():
            if not isinstance(p_state, dict):
                continue
            for name in ("eta", "mu"):
                if name in p_state and not isinstance(p_state[name], Tensor):
                    p_state[name] = _fg.tensor(float(p_state[name]), dtype=_get_scalar_dtype())

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group)
        for p, state in zip(params, states, strict=True):
            if "ax" not in state:
                lr = _get_value(_to_scalar(group["lr"]))
                state["eta"] = _fg.tensor(float(lr), dtype=_get_scalar_dtype())
                state["mu"] = _fg.tensor(1.0, dtype=_get_scalar_dtype())
                state["ax"] = _fg.zeros_like(p)
        return [params, grads, *_state_lists(states, "ax", "step", "eta", "mu")]

    def _step_group(self, group: dict[str, Any]) -> None:
        asgd(
            *self._init_group(group),
            **_group_options(
                group, "lambd", "lr", "t0", "alpha", "weight_decay", "maximize", "differentiable"
            ),
        )


def asgd(
    params: list[Tensor],
    grads: list[Tensor],
    axs: list[Tensor],
    state_steps: list[Tensor],
    etas: list[Tensor],
    mus: list[Tensor],
    *,
    lambd: float,
    lr: float | Tensor,
    t0: float,
    alpha: float,
    weight_decay: float,
    maximize: bool = False,
    differentiable: bool = False,
) -> None:
    """Functional ASGD over lists of tensors; see :class:`ASGD` for the update rule."""
    # A Rust foreach kernel would take these same lists and replace the loop below.
    lr = _to_scalar(lr)  # a tensor lr decays ``eta`` in its own dtype, as torch does
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t, eta, mu = state_steps[i], etas[i], mus[i]
        step_t += 1
        step = _get_value(step_t)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)

        param, grad, ax = _real_views(param, grad, axs[i])
        # ``eta`` is read from its (float32) state tensor, so the step uses its rounded value.
        eta_value = _get_value(eta)
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)

        if _get_value(mu) != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)

        eta.fill_(_get_value(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.fill_(1 / max(1, step - t0))


# torch's name for the per-tensor loop, which ``asgd`` runs itself here.
_single_tensor_asgd = asgd
