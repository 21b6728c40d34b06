"""Padding layers: constant (and zero), reflection, replication and circular,
for the last one or two dimensions."""

from __future__ import annotations

from typing import Any

from ferrograd._core import Tensor

from .. import functional as F
from .._docs import fill_docs as _fill_docs
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ZeroPad1d",
    "ZeroPad2d",
]


def _amounts(padding: Any, n: int) -> tuple[int, ...]:
    """An int pads every side; otherwise the (left, right[, top, bottom]) tuple is kept."""
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    return tuple(padding)


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = "constant"
    _pairs = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._pairs)

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.pad` with this module's settings."""
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"{self.padding}"


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _pairs = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__()
        self.padding = _amounts(padding, self._pairs)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.pad` with this module's settings."""
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    r"""Pads the last dimension with ``value``; ``padding`` is an int or ``(left, right)``.

    Args:
        {pad1d_arg}
        value (float): the fill value.

    Example:
        >>> nn.ConstantPad1d(2, 3.5)(ferrograd.zeros(1, 2))
        tensor([[3.5000, 3.5000, 0.0000, 0.0000, 3.5000, 3.5000]])
    """


class ConstantPad2d(_ConstantPadNd):
    r"""Pads the last two dimensions with ``value``; ``padding`` is an int or
    ``(left, right, top, bottom)``.

    Args:
        {pad2d_arg}
        value (float): the fill value.

    Example:
        >>> nn.ConstantPad2d((1, 0, 0, 1), 2.0)(ferrograd.zeros(1, 1, 1)).shape
        ferrograd.Size([1, 2, 2])
    """

    _pairs = 2


class ZeroPad1d(ConstantPad1d):
    r"""Pads the last dimension with zeros.

    Args:
        {pad1d_arg}

    Example:
        >>> nn.ZeroPad1d((1, 2))(ferrograd.ones(1, 1))
        tensor([[0., 1., 0., 0.]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    r"""Pads the last two dimensions with zeros.

    Args:
        {pad2d_arg}

    Example:
        >>> nn.ZeroPad2d(1)(ferrograd.ones(1, 1, 1))
        tensor([[[0., 0., 0.],
                 [0., 1., 0.],
                 [0., 0., 0.]]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    r"""Pads the last dimension with its reflection (the edge is not repeated).

    Args:
        {pad1d_arg}

    Example:
        >>> nn.ReflectionPad1d(2)(ferrograd.tensor([[0.0, 1.0, 2.0, 3.0]]))
        tensor([[2., 1., 0., 1., 2., 3., 2., 1.]])
    """

    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    r"""Pads the last two dimensions with their reflection.

    {pad2d_ones_args:ReflectionPad2d}
    """

    _mode = "reflect"
    _pairs = 2


class ReplicationPad1d(_PadNd):
    r"""Pads the last dimension by repeating its edge values.

    Args:
        {pad1d_arg}

    Example:
        >>> nn.ReplicationPad1d(2)(ferrograd.tensor([[0.0, 1.0]]))
        tensor([[0., 0., 0., 1., 1., 1.]])
    """

    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    r"""Pads the last two dimensions by repeating their edge values.

    Args:
        {pad2d_arg}

    Example:
        >>> nn.ReplicationPad2d((1, 0, 1, 0))(ferrograd.ones(1, 1, 2, 2)).shape
        ferrograd.Size([1, 1, 3, 3])
    """

    _mode = "replicate"
    _pairs = 2


class CircularPad1d(_PadNd):
    r"""Pads the last dimension by wrapping around.

    Args:
        {pad1d_arg}

    Example:
        >>> pad = nn.CircularPad1d(1)
        >>> pad(ferrograd.tensor([[0.0, 1.0, 2.0]]))
        tensor([[2., 0., 1., 2., 0.]])
    """

    _mode = "circular"


class CircularPad2d(_PadNd):
    r"""Pads the last two dimensions by wrapping around.

    Args:
        {pad2d_arg}

    Example:
        >>> nn.CircularPad2d(1)(ferrograd.arange(4.0).reshape(1, 1, 2, 2))[0, 0, 0]
        tensor([3., 2., 3., 2.])
    """

    _mode = "circular"
    _pairs = 2


_fill_docs(globals())
