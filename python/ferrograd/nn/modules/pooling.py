"""Pooling layers: max, average and adaptive pooling in one and two dimensions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ferrograd._core import Tensor

from .. import functional as F
from .._docs import fill_docs as _fill_docs
from .conv import _ntuple
from .module import Module

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "MaxPool1d",
    "MaxPool2d",
]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )

    def _pool(self, pool: Callable[..., Any], input: Tensor) -> Any:
        """``pool`` (a functional max pooling) applied with this module's settings."""
        return pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                    ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    r"""1-D max pooling over ``(N, C, L)``; ``stride`` defaults to ``kernel_size``.

    Args:
        {max_pool_layer_args}

    Example:
        >>> nn.MaxPool1d(3, stride=2)(ferrograd.randn(20, 16, 50)).shape
        ferrograd.Size([20, 16, 24])
    """

    def forward(self, input: Tensor) -> Any:
        """Applies :func:`ferrograd.nn.functional.max_pool1d` with this module's settings."""
        return self._pool(F.max_pool1d, input)


class MaxPool2d(_MaxPoolNd):
    r"""2-D max pooling over ``(N, C, H, W)``; with ``return_indices=True`` it also
    returns the flat index of each maximum within its ``H * W`` plane.

    Args:
        {max_pool_layer_args}

    Example:
        >>> nn.MaxPool2d((3, 2), stride=(2, 1))(ferrograd.randn(20, 16, 50, 32)).shape
        ferrograd.Size([20, 16, 24, 31])
    """

    def forward(self, input: Tensor) -> Any:
        """Applies :func:`ferrograd.nn.functional.max_pool2d` with this module's settings."""
        return self._pool(F.max_pool2d, input)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    r"""1-D average pooling over ``(N, C, L)``; the sizes are stored as 1-tuples.

    Args:
        kernel_size (int): the window size.
        stride (int, optional): the window step. Default: ``kernel_size``.
        padding (int): implicit zero padding on both sides. Default: 0.
        ceil_mode (bool): round the output size up. Default: False.
        count_include_pad (bool): count padding in the average. Default: True.

    Example:
        >>> nn.AvgPool1d(3, stride=2)(ferrograd.tensor([[[1.0, 2, 3, 4, 5, 6, 7]]]))
        tensor([[[2., 4., 6.]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.avg_pool1d` with this module's settings."""
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad
        )


class AvgPool2d(_AvgPoolNd):
    r"""2-D average pooling over ``(N, C, H, W)``; ``divisor_override`` replaces the
    window size as the divisor.

    Args:
        kernel_size (int or tuple of 2 ints): the window size.
        stride (int or tuple, optional): the window step. Default: ``kernel_size``.
        padding (int or tuple): implicit zero padding. Default: 0.
        ceil_mode (bool): round the output size up. Default: False.
        count_include_pad (bool): count padding in the average. Default: True.
        divisor_override (int, optional): divide by this instead of the window size.

    Example:
        >>> nn.AvgPool2d(2)(ferrograd.ones(1, 1, 4, 4)).shape
        ferrograd.Size([1, 1, 2, 2])
    """

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.avg_pool2d` with this module's settings."""
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    r"""Averages ``(N, C, L)`` down to length ``output_size`` with windows
    ``[floor(i L / out), ceil((i + 1) L / out))``.

    Args:
        output_size (int): the output length.

    Example:
        >>> nn.AdaptiveAvgPool1d(5)(ferrograd.randn(1, 64, 8)).shape
        ferrograd.Size([1, 64, 5])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.adaptive_avg_pool1d` with this module's settings."""
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    r"""Averages ``(N, C, H, W)`` down to ``output_size`` (an int, a pair, or a pair
    with ``None`` to keep that dimension).

    Args:
        output_size (int or tuple): the output ``(H, W)``; None keeps that dim's size.

    Example:
        >>> nn.AdaptiveAvgPool2d((5, None))(ferrograd.randn(1, 64, 8, 9)).shape
        ferrograd.Size([1, 64, 5, 9])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.adaptive_avg_pool2d` with this module's settings."""
        return F.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    r"""Max over adaptive windows of ``(N, C, L)``.

    Args:
        output_size (int): the output length.
        return_indices (bool): also return the indices of the maxima. Default: False.

    Example:
        >>> nn.AdaptiveMaxPool1d(5)(ferrograd.randn(1, 64, 8)).shape
        ferrograd.Size([1, 64, 5])
    """

    def forward(self, input: Tensor) -> Any:
        """Applies :func:`ferrograd.nn.functional.adaptive_max_pool1d` with this module's settings."""
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    r"""Max over adaptive windows of ``(N, C, H, W)``.

    Args:
        output_size (int or tuple): the output ``(H, W)``; None keeps that dim's size.
        return_indices (bool): also return the indices of the maxima. Default: False.

    Example:
        >>> nn.AdaptiveMaxPool2d((5, 7))(ferrograd.randn(1, 64, 8, 9)).shape
        ferrograd.Size([1, 64, 5, 7])
    """

    def forward(self, input: Tensor) -> Any:
        """Applies :func:`ferrograd.nn.functional.adaptive_max_pool2d` with this module's settings."""
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


_fill_docs(globals())
