"""The legacy typed tensor constructors (``torch.FloatTensor`` and friends).

Each is a class whose instances are never made: calling it makes an
ordinary ``Tensor`` of its dtype, and ``isinstance(t, FloatTensor)`` is
true exactly for float32 tensors (all ferrograd tensors live on the CPU),
as in torch. ``Tensor.type(FloatTensor)`` converts.

>>> import ferrograd
>>> ferrograd.FloatTensor(2, 3).shape, ferrograd.LongTensor([1.7, 2.0]).tolist()
(ferrograd.Size([2, 3]), [1, 2])
>>> isinstance(ferrograd.ones(2), ferrograd.FloatTensor)
True
"""

from __future__ import annotations

from typing import Any

from ._core import (
    Tensor,
    bfloat16,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    tensor,
    uint8,
    zeros,
)
from ._core import bool as bool_
from ._size import Size


class _TensorType(type):
    """The metaclass of the legacy types (torch's ``tensortype``)."""

    dtype = None

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __subclasscheck__(cls, sub: type) -> bool:
        return sub is cls

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        if device is not None and str(device).split(":")[0] != "cpu":
            raise RuntimeError(
                f"legacy constructor expects device type: cpu but device type: {device} was passed"
            )
        if not args:
            return zeros(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            data = args[0]
            if data.dtype != cls.dtype:
                raise TypeError(
                    f"expected {cls.dtype} (got {data.dtype}): a legacy {cls.__name__} "
                    "constructor shares the memory of a tensor of its own dtype only"
                )
            return data.view(data.shape)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)
        ):
            shape = tuple(args[0]) if isinstance(args[0], Size) else args
            return zeros(*shape, dtype=cls.dtype)
        if len(args) == 1:
            return tensor(args[0], dtype=cls.dtype)
        raise TypeError(
            f"{cls.__name__}(): expected sizes (ints), a sequence of data or a tensor, "
            f"got {', '.join(type(a).__name__ for a in args)}"
        )


def _tensor_type(name: str, dtype: Any) -> _TensorType:
    doc = (
        f"Legacy constructor of {dtype} tensors: ``{name}(*sizes)`` gives zeros of that "
        f"shape, ``{name}(data)`` converts data, and ``isinstance(t, {name})`` tests the dtype."
    )
    return _TensorType(
        name, (), {"dtype": dtype, "__module__": "ferrograd", "is_cuda": False, "__doc__": doc}
    )


FloatTensor = _tensor_type("FloatTensor", float32)
DoubleTensor = _tensor_type("DoubleTensor", float64)
LongTensor = _tensor_type("LongTensor", int64)
IntTensor = _tensor_type("IntTensor", int32)
BoolTensor = _tensor_type("BoolTensor", bool_)
HalfTensor = _tensor_type("HalfTensor", float16)
BFloat16Tensor = _tensor_type("BFloat16Tensor", bfloat16)
ShortTensor = _tensor_type("ShortTensor", int16)
CharTensor = _tensor_type("CharTensor", int8)
ByteTensor = _tensor_type("ByteTensor", uint8)

__all__ = [
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
]
