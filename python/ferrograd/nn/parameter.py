"""``Parameter`` and ``Buffer``: the tensors a :class:`~ferrograd.nn.Module`
registers when they are assigned as its attributes.

Note [How a Parameter shares its data]
``Parameter(data)`` is ``Tensor._make_subclass(Parameter, data,
requires_grad)``: a new Parameter object over a detached alias of ``data``
(same memory, no history, a leaf). Like every instance of a ``Tensor``
subclass it is its tensor's object and the tensor keeps it alive, so
``.grad``, ``AccumulateGrad.variable`` and hook arguments return the
Parameter, and attributes set on it last as long as the tensor.
"""

from __future__ import annotations

import copy
from typing import Any

import ferrograd
from ferrograd._core import Tensor

__all__ = ["Buffer", "Parameter"]


def _fresh_alias(data: Tensor) -> Tensor:
    """A new tensor object sharing ``data``'s memory, without its history."""
    if not isinstance(data, Tensor):
        raise TypeError(f"expected a Tensor as data, got {type(data).__name__}")
    return data.detach()


class Parameter(Tensor):
    r"""A tensor that a :class:`~ferrograd.nn.Module` registers as a parameter
    when it is assigned as an attribute of the module.

    The Parameter shares memory with ``data``; it is a leaf.

    Args:
        data (Tensor): parameter tensor (default: an empty float tensor).
        requires_grad (bool, optional): if the parameter requires gradient.
            ``no_grad`` does not change this default. Default: ``True``

    Example:
        >>> p = nn.Parameter(ferrograd.zeros(2))
        >>> p
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = ferrograd.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"expected a Tensor as data, got {type(data).__name__}")
        # Note [How a Parameter shares its data]
        return Tensor._make_subclass(cls, data, requires_grad)  # type: ignore[return-value]

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        # The base ``__init__`` registers a constructed object; this one is
        # already its tensor's object.
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        # Attributes set on the parameter travel with it, as torch's state does.
        for k, v in self.__dict__.items():
            setattr(result, k, copy.deepcopy(v, memo))
        return result

    def __reduce_ex__(self, proto: Any) -> Any:
        state = dict(self.__dict__)
        return (_rebuild_parameter, (self.detach(), self.requires_grad, type(self), state))

    def __reduce__(self) -> Any:
        return self.__reduce_ex__(2)


def _rebuild_parameter(
    data: Tensor, requires_grad: bool, cls: type = Parameter, state: dict[str, Any] | None = None
) -> Parameter:
    p = cls(data, requires_grad)
    for k, v in (state or {}).items():
        setattr(p, k, v)
    return p


class _BufferMeta(type(Tensor)):  # type: ignore[misc]
    # ``Buffer(...)`` returns a plain tensor marked as a buffer (as torch's
    # does); ``isinstance(t, Buffer)`` reads the mark.
    def __instancecheck__(cls, instance: Any) -> bool:
        if cls is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    r"""A tensor that a :class:`~ferrograd.nn.Module` registers as a buffer
    (state that is not a parameter, such as running statistics) when it is
    assigned as an attribute of the module.

    ``Buffer(data)`` returns a plain :class:`~ferrograd.Tensor` sharing
    ``data``'s memory, detached from its history and keeping its
    ``requires_grad``, with a ``persistent`` attribute; ``isinstance(b,
    nn.Buffer)`` is true for it.

    Args:
        data (Tensor): buffer tensor (default: an empty float tensor).
        persistent (bool, optional): whether the buffer is part of the
            module's ``state_dict``. Default: ``True``

    Example:
        >>> m = nn.Module()
        >>> m.running = nn.Buffer(ferrograd.zeros(3), persistent=False)
        >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
        (['running'], [])
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Tensor:  # type: ignore[misc]
        if data is None:
            data = ferrograd.empty(0)
        t = _fresh_alias(data).requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
