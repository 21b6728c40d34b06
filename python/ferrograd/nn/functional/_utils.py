"""Argument helpers shared by the parts of :mod:`ferrograd.nn.functional`:
int-or-tuple expansion, ``inplace=True`` handling and loss reductions."""

from __future__ import annotations

import warnings
from typing import Any

from ferrograd._core import Tensor
from ferrograd._routed import route_module

from .._docs import fill_docs as _fill_docs


def _tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """Expand an int (or a 1-sequence) to an n-tuple, as torch's _ntuple does."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values")
    return value


def _apply_inplace(input: Tensor, result: Tensor) -> Tensor:
    """Write ``result`` into ``input`` and return ``input``, torch's ``inplace=True``."""
    input.copy_(result)
    return input


def _inplace_source(input: Tensor, inplace: bool) -> Tensor:
    # The formula must not save ``input`` itself when ``input`` is about to be
    # overwritten, or backward would see a bumped version counter; a clone
    # keeps the saved values intact while the result still lands in ``input``.
    if inplace and input.requires_grad:
        return input.clone()
    return input


def _legacy_reduction(
    size_average: bool | None, reduce: bool | None, reduction: str, stacklevel: int = 3
) -> str:
    """Map the deprecated ``size_average``/``reduce`` pair to a ``reduction`` string."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn(
        "size_average and reduce args will be deprecated, please use reduction='"
        + ("mean" if (size_average is None or size_average) and (reduce is None or reduce) else "sum")
        + "' instead.",
        UserWarning,
        stacklevel=stacklevel,
    )
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    if reduce:
        return "sum"
    return "none"


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _checked_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """A loss function's ``reduction``: :func:`_legacy_reduction` (warning at
    the loss function's caller), then checked by :func:`_check_reduction`."""
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel=4)
    _check_reduction(reduction)
    return reduction


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _route(namespace: dict[str, Any]) -> None:
    """Makes the public functions of a part (its globals, ``namespace``) the
    routed functions of :mod:`ferrograd.nn.functional`, before another part
    imports them: a call from one of them to another then goes through
    ``vmap``'s rules, as a call through the module does. Their docstrings'
    shared sections are filled in first (the routed functions copy them)."""
    _fill_docs(namespace)
    route_module(namespace, "ferrograd.nn.functional", "nn.functional.")
