"""Gradient resetting shared by ``nn.Module.zero_grad`` and ``optim.Optimizer.zero_grad``."""

from __future__ import annotations

from collections.abc import Iterable

from .._core import Tensor


def zero_grads(params: Iterable[Tensor], set_to_none: bool = True) -> None:
    """Reset the ``.grad`` of every tensor in ``params`` that has one.

    With ``set_to_none`` the gradient is dropped (set to ``None``); otherwise it is taken out
    of any graph (detached in place when it has a ``grad_fn``, else made not to require grad)
    and filled with zeros in place.
    """
    for p in params:
        if set_to_none:
            # Set without reading: a compiled step records the assignment
            # alone, and no guard on whether a gradient was there.
            p.grad = None
        elif p.grad is None:
            continue
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()
