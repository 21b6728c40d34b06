"""``ferrograd.Size``: the tuple subclass returned by ``Tensor.shape``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, SupportsIndex, overload


class Size(tuple[int, ...]):
    """A tensor's shape: a tuple of ints that prints as ``ferrograd.Size([2, 3])``.

    :attr:`Tensor.shape` and :meth:`Tensor.size` return it; it compares equal
    to a plain tuple of the same ints, and slicing it gives a ``Size``.

    Args:
        iterable (iterable of ints): the size of each dim. Default: empty (a 0-dim shape).

    Example:
        >>> s = ferrograd.zeros(2, 3).shape
        >>> s, s[1], s.numel(), s == (2, 3)
        (ferrograd.Size([2, 3]), 3, 6, True)
        >>> s[:1]
        ferrograd.Size([2])
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ferrograd.Size({list(self)!r})"

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    @overload
    def __getitem__(self, key: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, key: slice) -> Size: ...
    def __getitem__(self, key: SupportsIndex | slice) -> int | Size:
        # Slicing keeps the type, as torch.Size does.
        if isinstance(key, slice):
            return Size(tuple.__getitem__(self, key))
        return tuple.__getitem__(self, key)

    def __add__(self, other: Iterable[int]) -> Size:  # type: ignore[override]
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Size, (tuple(self),))
