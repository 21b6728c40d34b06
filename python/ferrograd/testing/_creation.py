"""``make_tensor``: random test tensors of any dtype, drawn with
ferrograd's own generator (so ``ferrograd.manual_seed`` fixes them)."""

from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

import ferrograd

from .. import _core
from .._core import Tensor

__all__ = ["make_tensor"]

# [lowest, highest + 1) of each integer dtype; int64 stops at its maximum, as in torch.
_INT_RANGES = {
    _core.uint8: (0, 2**8),
    _core.int8: (-(2**7), 2**7),
    _core.int16: (-(2**15), 2**15),
    _core.int32: (-(2**31), 2**31),
    _core.int64: (-(2**63), 2**63 - 1),
}

# (largest finite value, smallest positive normal value) of each floating dtype.
_FLOAT_LIMITS = {
    _core.float16: (65504.0, 6.103515625e-05),
    _core.bfloat16: (3.3895313892515355e38, 1.1754943508222875e-38),
    _core.float32: (3.4028234663852886e38, 1.1754943508222875e-38),
    _core.float64: (1.7976931348623157e308, 2.2250738585072014e-308),
}
_FLOAT_LIMITS[_core.complex64] = _FLOAT_LIMITS[_core.float32]
_FLOAT_LIMITS[_core.complex128] = _FLOAT_LIMITS[_core.float64]


def _bounds(
    dtype: Any, low: Any, high: Any, lowest: float, highest: float, default_low: float, default_high: float
) -> tuple[Any, Any]:
    """Checks ``low`` and ``high`` (defaults filled in) and clamps them to ``[lowest, highest]``."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    floating = dtype in _FLOAT_LIMITS
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low!r} and high={high!r}")
    if low == high and floating:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. "
            "Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low = min(max(low, lowest), highest)
    high = min(max(high, lowest), highest)
    if floating:
        return low, high
    return math.ceil(low), math.ceil(high)


def make_tensor(
    *shape: int | collections.abc.Sequence[int],
    dtype: ferrograd.dtype,
    device: str | ferrograd.device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Tensor:
    r"""Makes a tensor of the given shape, dtype and device filled with
    random values drawn uniformly from ``[low, high)``.

    The values come from ferrograd's default generator, so
    :func:`ferrograd.manual_seed` makes them repeatable. Without ``low`` and
    ``high`` the range depends on the dtype:

    ======================  ========  =========
    dtype                   low       high
    ======================  ========  =========
    bool                    ``0``     ``2``
    uint8                   ``0``     ``10``
    signed integers         ``-9``    ``10``
    floating, complex       ``-9``    ``9``
    ======================  ========  =========

    A given ``low`` or ``high`` outside the values the dtype can hold is
    clamped to them; for integer and bool dtypes both are rounded up
    (``ceil``). Complex tensors draw their real and imaginary parts
    independently from the range.

    Args:
        *shape (int or sequence of ints): the shape, as separate ints or as
            one list, tuple or :class:`ferrograd.Size`.

    Keyword args:
        dtype (ferrograd.dtype): the dtype of the result.
        device (str or ferrograd.device): the device of the result.
        low (float, optional): inclusive lower end of the range.
        high (float, optional): exclusive upper end of the range. Passing
            ``low == high`` for a floating or complex dtype is deprecated (a
            ``FutureWarning``) and fills the tensor with that value.
        requires_grad (bool): make the result a leaf that requires grad
            (floating and complex dtypes only). Default: ``False``.
        noncontiguous (bool): return a non-contiguous view (every second
            element of a tensor twice as wide in the last dimension). Ignored
            for tensors of fewer than two elements. Default: ``False``.
        exclude_zero (bool): replace zeros by ``1`` (bool, integers) or by the
            dtype's smallest positive normal number (floating, complex: in
            the real part). Default: ``False``.
        memory_format (optional): passed to :meth:`Tensor.clone`; cannot be
            combined with ``noncontiguous``.

    Raises:
        ValueError: if ``requires_grad`` is set for a bool or integer dtype,
            if ``low >= high``, if either is NaN, if the range lies outside
            the dtype's values, or if both ``noncontiguous`` and
            ``memory_format`` are given.
        TypeError: if ``dtype`` is not a dtype ferrograd supports.

    Example:
        >>> from ferrograd.testing import make_tensor
        >>> x = make_tensor(2, 3, dtype=ferrograd.float32, device="cpu", low=-1, high=1)
        >>> x.shape, x.dtype, bool(((x >= -1) & (x < 1)).all())
        (ferrograd.Size([2, 3]), ferrograd.float32, True)
        >>> n = make_tensor((4, 5), dtype=ferrograd.int64, device="cpu", noncontiguous=True)
        >>> n.is_contiguous(), n.stride()
        (False, (10, 2))
        >>> make_tensor(3, dtype=ferrograd.uint8, device="cpu", low=7, high=8)
        tensor([7, 7, 7], dtype=ferrograd.uint8)
    """
    dims: Any = shape[0] if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence) else shape
    size: tuple[int, ...] = tuple(dims)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    exact = dtype == ferrograd.bool or dtype in _INT_RANGES
    if requires_grad and exact:
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(size) > 1
    if noncontiguous:
        size = (*size[:-1], 2 * size[-1])

    if dtype == ferrograd.bool:
        lo, hi = _bounds(dtype, low, high, 0, 2, 0, 2)
        result = ferrograd.randint(lo, hi, size, dtype=dtype, device=device)
    elif dtype in _INT_RANGES:
        lowest, highest = _INT_RANGES[dtype]
        lo, hi = _bounds(dtype, low, high, lowest, highest, -9, 10)
        result = ferrograd.randint(lo, hi, size, dtype=dtype, device=device)
    elif dtype in _FLOAT_LIMITS:
        finite = _FLOAT_LIMITS[dtype][0]
        lo, hi = _bounds(dtype, low, high, -finite, finite, -9, 9)
        result = ferrograd.empty(size, dtype=dtype, device=device)
        target = ferrograd.view_as_real(result) if dtype.is_complex else result
        if hi - lo >= finite:
            # The width itself would overflow: draw from half the range and double.
            target.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            target.uniform_(lo, hi)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by ferrograd.testing.make_tensor().")

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result.masked_fill_(result == 0, 1 if exact else _FLOAT_LIMITS[dtype][1])
    if not exact:
        result.requires_grad = requires_grad
    return result
