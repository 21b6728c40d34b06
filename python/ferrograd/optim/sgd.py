"""Stochastic gradient descent, optionally with momentum (heavy-ball or Nesterov)."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from . import _steps
from .optimizer import Optimizer, ParamsT, _check_fused, _check_lr, _get_value, _steps_by_group, _to_scalar

__all__ = ["SGD", "sgd"]


@_steps_by_group
class SGD(Optimizer):
    r"""Stochastic gradient descent, with optional momentum, dampening, Nesterov and weight decay.

    For each parameter with a gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        b = g                                        (first step)
        b = momentum * b + (1 - dampening) * g       (later steps)
        g = g + momentum * b  if nesterov  else  b   (when momentum != 0)
        p = p - lr * g

    Args:
        {params_arg}
        {lr_arg:1e-3}
        momentum (float): momentum factor (default: 0).
        dampening (float): dampening of the momentum (default: 0).
        weight_decay (float): L2 penalty (default: 0).
        nesterov (bool): Nesterov momentum; needs ``momentum > 0`` and zero dampening.
        {maximize_arg}
        {foreach_arg:foreach, fused}
        {differentiable_arg}

    State: ``momentum_buffer`` per parameter, only when ``momentum != 0``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    _restored_options = {
        "nesterov": False, "maximize": False, "foreach": None, "differentiable": False, "fused": False,
    }  # fmt: skip

    _options = "lr momentum dampening weight_decay nesterov maximize foreach differentiable fused"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0, dampening: float = 0,
        weight_decay: float | Tensor = 0, nesterov: bool = False, *, maximize: bool = False,
        foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None,
    ) -> None:  # fmt: skip
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, self._defaults(locals()))
        _check_fused(fused, foreach, differentiable)

    def _step_group(self, group: dict[str, Any]) -> None:
        params, grads = self._params_with_grad(group)
        momentum = group["momentum"] != 0
        bufs = [self.state[p].get("momentum_buffer") for p in params] if momentum else []
        options = self._group_options(
            group, "weight_decay momentum lr dampening nesterov maximize differentiable"
        )
        sgd(params, grads, bufs, **options)
        if momentum:
            # Buffers created on the first step are stored back into the state.
            for p, buf in zip(params, bufs, strict=True):
                self.state[p]["momentum_buffer"] = buf


def sgd(
    params: list[Tensor], d_p_list: list[Tensor], momentum_buffer_list: list[Tensor | None], *,
    weight_decay: float | Tensor, momentum: float, lr: float | Tensor, dampening: float, nesterov: bool,
    maximize: bool, differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional SGD over lists of tensors; see :class:`SGD`.

    ``momentum_buffer_list`` entries that are ``None`` are replaced by new buffers in place.
    """
    bufs = momentum_buffer_list if momentum != 0 else [None] * len(params)
    if _steps.core_ok(differentiable, params, d_p_list, bufs) and not isinstance(weight_decay, Tensor):
        # One call into the core updates every parameter; new buffers start as the gradient.
        states, scalars = [], []
        if momentum != 0:
            scalars = [[float(buf is None) for buf in momentum_buffer_list]]
            for i, buf in enumerate(momentum_buffer_list):
                if buf is None:
                    momentum_buffer_list[i] = _fg.zeros_like(params[i])
            states = [momentum_buffer_list]
        _steps.in_core(
            "sgd", params, d_p_list, states, scalars, lr=lr, momentum=momentum, dampening=dampening,
            weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
        )  # fmt: skip
        return

    lr = _to_scalar(lr)
    if not differentiable:
        lr = _get_value(lr)
        weight_decay = _get_value(weight_decay)
    for i, param in enumerate(params):
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        if isinstance(lr, Tensor):
            # A tensor lr that requires grad stays in the graph of a differentiable step.
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-lr)
