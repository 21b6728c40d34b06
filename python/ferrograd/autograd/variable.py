"""``Variable``: the old name for a tensor that requires grad."""

from __future__ import annotations

from typing import Any

from .. import _core


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, _core.Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)`` returns a Tensor (a detached
    alias of ``tensor`` with the flag set), as torch's deprecated API."""

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        if data is None:
            data = _core.empty(0)
        if not isinstance(data, _core.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad_(bool(requires_grad))
        return out
