"""``ferrograd.Size``: the tuple subclass returned by ``Tensor.shape``."""

from __future__ import annotations


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``ferrograd.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ferrograd.Size({list(self)!r})"

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):  # slicing keeps the type, as torch.Size does
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))
