"""SparseAdam: Adam for sparse gradients. ferrograd has no sparse tensors, so the class exists for
code that builds it, validates its arguments as torch does, and refuses dense gradients in
``step`` with torch's error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core import Tensor
from .optimizer import Optimizer, ParamsT, _check_betas, _closure_loss, _use_grad_for_differentiable

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    r"""Adam that updates only the entries present in sparse gradients (masked Adam).

    torch's SparseAdam accepts sparse gradients only. ferrograd has no sparse tensors, so every
    gradient is dense and :meth:`step` raises the error torch raises for a dense gradient
    (``RuntimeError: SparseAdam does not support dense gradients, please consider Adam
    instead``); a step where no parameter has a gradient does nothing, as in torch. Use
    :class:`~ferrograd.optim.Adam`.

    Args:
        params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): learning rate; must be positive (default: 1e-3).
        betas (tuple): decay rates of the first and second moments (default: (0.9, 0.999)).
        eps (float): added to the denominator; must be positive (default: 1e-8).
        maximize (bool): ascend the objective instead of descending it.

    Example:
        >>> w = ferrograd.zeros(2, requires_grad=True)
        >>> opt = ferrograd.optim.SparseAdam([w], lr=0.01)
        >>> w.grad = ferrograd.ones(2)
        >>> opt.step()
        Traceback (most recent call last):
            ...
        RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, maximize: bool = False,
    ) -> None:  # fmt: skip
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step; every (dense) gradient is refused, as in torch.

        Args:
            closure (Callable, optional): re-evaluates the model and returns the loss.
        """
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    raise RuntimeError(
                        "SparseAdam does not support dense gradients, please consider Adam instead"
                    )
        return loss
