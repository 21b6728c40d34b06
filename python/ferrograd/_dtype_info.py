"""``ferrograd.finfo``, ``ferrograd.iinfo`` and ``ferrograd.can_cast``: the
numeric limits of the dtypes and torch's casting rule for in-place results.
"""

from __future__ import annotations

import ferrograd as _fg

from ._core import dtype as _dtype

__all__ = ["can_cast", "finfo", "iinfo"]

# bits, eps, max, smallest normal, resolution (10 ** -digits) per float dtype.
_FLOATS = {
    "float32": (32, 2.0**-23, (2 - 2.0**-23) * 2.0**127, 2.0**-126, 1e-06),
    "float64": (64, 2.0**-52, (2 - 2.0**-52) * 2.0**1023, 2.0**-1022, 1e-15),
    "float16": (16, 2.0**-10, 65504.0, 2.0**-14, 0.001),
    "bfloat16": (16, 2.0**-7, (2 - 2.0**-7) * 2.0**127, 2.0**-126, 0.01),
}
# The real dtype of each complex dtype's parts.
_PARTS = {"complex64": "float32", "complex128": "float64"}
_INTS = {
    "uint8": (8, False), "int8": (8, True), "int16": (16, True), "int32": (32, True), "int64": (64, True),
}  # fmt: skip


def _key(d: _dtype) -> str:
    return repr(d).rpartition(".")[2]


class finfo:  # noqa: N801  (torch's name)
    """finfo(type=None)

    The numeric limits of a floating-point dtype (the default dtype when
    none is given; a complex dtype gives those of its parts): ``bits``,
    ``eps`` (the gap from 1 to the next float), ``max``, ``min``,
    ``tiny``/``smallest_normal`` (the smallest positive normal float),
    ``resolution`` and ``dtype``.

    Args:
        type (ferrograd.dtype, optional): a floating-point or complex dtype.

    Example:
        >>> ferrograd.finfo(ferrograd.float32).eps
        1.1920928955078125e-07
    """

    def __init__(self, type: _dtype | None = None) -> None:  # noqa: A002  (torch's name)
        key = _key(_fg.get_default_dtype() if type is None else type)
        key = _PARTS.get(key, key)
        if key not in _FLOATS:
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'"
            )
        self.bits, self.eps, self.max, self.smallest_normal, self.resolution = _FLOATS[key]
        self.min = -self.max
        self.tiny = self.smallest_normal
        self.dtype = key

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801  (torch's name)
    """iinfo(type)

    The numeric limits of an integer dtype: ``bits``, ``max``, ``min`` and
    ``dtype``.

    Args:
        type (ferrograd.dtype): an integer dtype.

    Example:
        >>> ferrograd.iinfo(ferrograd.int16).max
        32767
    """

    def __init__(self, type: _dtype) -> None:  # noqa: A002  (torch's name)
        key = _key(type)
        if key not in _INTS:
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'"
            )
        self.bits, signed = _INTS[key]
        self.max = 2 ** (self.bits - 1) - 1 if signed else 2**self.bits - 1
        self.min = -(2 ** (self.bits - 1)) if signed else 0
        self.dtype = key

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _kind(d: _dtype) -> int:
    """0 for bool, 1 for the integers, 2 for the floats, 3 for the complex dtypes."""
    key = _key(d)
    return 0 if key == "bool" else 1 if key in _INTS else 3 if key in _PARTS else 2


def can_cast(from_: _dtype, to: _dtype) -> bool:
    """can_cast(from_, to) -> bool

    Whether an op may write a result of dtype ``from_`` into a tensor of
    dtype ``to`` under torch's casting rule: never to a lower kind (complex
    to real, float to integer, anything but bool to bool).

    Args:
        from_ (ferrograd.dtype): the result's dtype.
        to (ferrograd.dtype): the target dtype.

    Example:
        >>> ferrograd.can_cast(ferrograd.float64, ferrograd.float32)
        True
        >>> ferrograd.can_cast(ferrograd.float32, ferrograd.int32)
        False
    """
    return _kind(from_) <= _kind(to)
