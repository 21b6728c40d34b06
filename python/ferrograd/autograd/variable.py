"""``Variable``: the old name for a tensor that requires grad."""

from __future__ import annotations

from typing import Any

from .. import _core


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, _core.Tensor)


class Variable(metaclass=_VariableMeta):
    """The pre-tensor name of a tensor that takes part in autograd, kept for
    old code: ``Variable(tensor, requires_grad=False)`` returns a Tensor.

    The result is a detached alias of ``tensor`` (sharing its memory) with
    ``requires_grad`` set; ``isinstance(t, Variable)`` is true for every
    Tensor. New code uses tensors directly.

    Args:
        data (Tensor, optional): the tensor to wrap. Default: an empty tensor.
        requires_grad (bool): whether the result requires grad.
            Default: ``False``.
        volatile (bool): ignored (an old flag). Default: ``False``.

    Example:
        >>> v = ferrograd.autograd.Variable(ferrograd.tensor([1.0, 2.0]), requires_grad=True)
        >>> v
        tensor([1., 2.], requires_grad=True)
        >>> type(v).__name__
        'Tensor'
    """

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        if data is None:
            data = _core.empty(0)
        if not isinstance(data, _core.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out.requires_grad_(bool(requires_grad))
        return out
