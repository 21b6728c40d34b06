"""Forward-mode automatic differentiation (torch.autograd.forward_ad's API).

Inside a dual level, ``make_dual(x, t)`` gives a tensor whose tangent is
``t``; every op then computes its output's tangent (its Jacobian times the
inputs' tangents) alongside the value, and ``unpack_dual`` reads it back.
Only one level can be open at a time, as in torch; it is process-wide,
and closing it drops every tangent made in it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import _batched, _core
from .grad_mode import _DecoratorContextManager

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]


def enter_dual_level() -> int:
    """Opens a new forward-AD level and returns its index.

    Prefer the :class:`dual_level` context manager, which also closes it.
    Raises RuntimeError if a level is already open (nested levels are not
    supported).

    Returns:
        int: the index of the new level.

    Example:
        >>> level = enter_dual_level()
        >>> d = make_dual(ferrograd.tensor([1.0, 2.0]), ferrograd.ones(2))
        >>> unpack_dual(d * d).tangent
        tensor([2., 4.])
        >>> exit_dual_level(level=level)
    """
    return _core._enter_dual_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Closes a forward-AD level opened by :func:`enter_dual_level`; the
    tangents of every tensor made in it are dropped.

    Keyword args:
        level (int, optional): the index of the level to close.
            Default: the open one.
    """
    _core._exit_dual_level(level)


def _check_tensor(x: Any, what: str) -> None:
    if not isinstance(x, _core.Tensor):
        raise TypeError(f"{what} must be a Tensor, but got {type(x).__name__}")


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """Returns a view of ``tensor`` whose forward gradient (tangent) is
    ``tangent``: a *dual tensor*.

    Every op applied to a dual tensor computes its output's tangent (the
    Jacobian-vector product) alongside the value. Must be called inside a
    dual level. ``tangent`` must have the primal's shape and dtype
    (floating point or complex). When its strides match the primal's it is
    used as is, otherwise its values are copied into the primal's layout.
    The result stays differentiable with respect to ``tensor`` in reverse
    mode.

    Args:
        tensor (Tensor): the primal value.
        tangent (Tensor): its tangent.

    Keyword args:
        level (int, optional): the level to attach the tangent at.
            Default: the open one.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> with dual_level():
        ...     d = make_dual(x, ferrograd.ones(2))
        ...     unpack_dual(d.sin() * 2).tangent  # 2 * cos(x)
        tensor([ 1.0806, -0.8323])
    """
    _check_tensor(tensor, "make_dual(): tensor")
    _check_tensor(tangent, "make_dual(): tangent")
    if _batched.is_batched(tensor) or _batched.is_batched(tangent):
        # Inside vmap: the dual of the physical tensors, batched at every
        # running level.
        return _batched.rewrap_full(
            make_dual(_batched.full_physical(tensor), _batched.full_physical(tangent), level=level))
    if level is None and _core._current_dual_level() < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    return _core._make_dual(tensor, tangent, level)


class UnpackedDualTensor(NamedTuple):
    """The named tuple ``(primal, tangent)`` that :func:`unpack_dual`
    returns; ``tangent`` is ``None`` when the tensor has no tangent at the
    level.

    Args:
        primal (Tensor): the value, without tangent.
        tangent (Tensor or None): the tangent.
    """

    primal: _core.Tensor
    tangent: _core.Tensor | Any  # None without a tangent (the Any trick, as Tensor.grad)


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """Splits a dual tensor into its primal and its tangent.

    ``primal`` is a view of ``tensor`` without a tangent; ``tangent`` is the
    tangent as stored (``None`` when there is none, or no level is open).

    Args:
        tensor (Tensor): the (possibly dual) tensor.

    Keyword args:
        level (int, optional): the level to read the tangent at.
            Default: the open one.

    Returns:
        UnpackedDualTensor: the named tuple ``(primal, tangent)``.

    Example:
        >>> with dual_level():
        ...     d = make_dual(ferrograd.tensor([3.0]), ferrograd.tensor([1.0]))
        ...     unpack_dual(d * d)
        UnpackedDualTensor(primal=tensor([9.]), tangent=tensor([6.]))
    """
    _check_tensor(tensor, "unpack_dual(): tensor")
    if _batched.is_batched(tensor):
        primal, tangent = _core._unpack_dual(tensor._p, level)
        return UnpackedDualTensor(_batched.wrap(primal, tensor._lv),
                                  None if tangent is None else _batched.wrap(tangent, tensor._lv))
    primal, tangent = _core._unpack_dual(tensor, level)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) that opens a forward-AD level for its
    block and closes it afterwards, dropping the tangents made inside.

    ``with dual_level() as level:`` binds the level's index. Only one level
    can be open at a time.

    Example:
        >>> with dual_level():
        ...     d = make_dual(ferrograd.tensor([2.0]), ferrograd.tensor([1.0]))
        ...     y = d.exp()
        ...     print(unpack_dual(y).tangent)
        tensor([7.3891])
        >>> unpack_dual(y).tangent is None
        True
    """

    def __enter__(self) -> int:  # type: ignore[override]
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


class _set_fwd_grad_enabled(_DecoratorContextManager):
    """Switches forward AD on or off for this thread inside the block."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self.prev = True

    def clone(self) -> _set_fwd_grad_enabled:
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        self.prev = _core._set_fwd_grad_enabled(self.mode)

    def __exit__(self, *exc: object) -> None:
        _core._set_fwd_grad_enabled(self.prev)
