"""AdamW: Adam with decoupled weight decay."""

from __future__ import annotations

from typing import Any

from .._core import Tensor
from .adam import Adam, adam
from .optimizer import ParamsT

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    r"""Adam with decoupled weight decay: ``p = p * (1 - lr * weight_decay)`` before the Adam step.

    Same arguments as :class:`Adam` except that ``weight_decay`` defaults to ``1e-2`` and decay
    is always decoupled (the group's ``decoupled_weight_decay`` is ``True``).

    Args:
        params (iterable): the parameters to optimise, or dicts of parameter groups.
        lr (float or Tensor): the learning rate. Default: 1e-3.
        betas (tuple of 2 floats): the decay rates of the first and second moment
            estimates. Default: (0.9, 0.999).
        eps (float): added to the denominator. Default: 1e-8.
        weight_decay (float): the decoupled decay rate. Default: 1e-2.
        amsgrad (bool): use the maximum of past second moments. Default: False.
        maximize (bool): ascend instead of descend. Default: False.
        foreach, capturable, fused: accepted for compatibility.
        differentiable (bool): record the step with autograd. Default: False.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.AdamW([w], lr=0.1, weight_decay=0.5)
        >>> w.grad = ferrograd.zeros(2)
        >>> opt.step()
        >>> w
        tensor([ 0.9500, -1.9000], requires_grad=True)
    """

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
        weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
        foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:  # fmt: skip
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(*args: Any, **kwargs: Any) -> None:
    """Functional AdamW: :func:`~ferrograd.optim.adam.adam` with decoupled weight decay."""
    kwargs["decoupled_weight_decay"] = True
    adam(*args, **kwargs)
