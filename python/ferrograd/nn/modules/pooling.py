"""Pooling layers: max, average, adaptive, power-average and fractional max
pooling, and max unpooling."""

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
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


def _set_window(module: Module, kernel_size: Any, stride: Any, padding: Any) -> None:
    """Stores a pooling window's settings; the stride defaults to the kernel size."""
    module.kernel_size = kernel_size
    module.stride = stride if stride is not None else kernel_size
    module.padding = padding


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding)
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
        _set_window(self, kernel_size, stride, padding)
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


class _MaxUnpoolNd(Module):
    _dims = 0
    _unpool: Callable[..., Tensor]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._dims)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._dims)
        self.padding = _ntuple(padding, self._dims)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        """Puts each value of ``input`` at its position in ``indices``, zeros elsewhere.

        Args:
            input (Tensor): the pooled values.
            indices (Tensor): the indices the max pooling returned with them.
            output_size (sequence of ints, optional): the exact output size.
                Default: ``None``.

        Returns:
            Tensor: the unpooled tensor.
        """
        return type(self)._unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    r"""Partial inverse of :class:`MaxPool1d`: each value goes back to the position of
    the maximum it came from; the rest of the output is zero.

    Args:
        {max_unpool_layer_args}

    Example:
        >>> v, i = nn.MaxPool1d(2, return_indices=True)(ferrograd.tensor([[[1.0, 3.0, 4.0, 2.0]]]))
        >>> nn.MaxUnpool1d(2)(v, i)
        tensor([[[0., 3., 4., 0.]]])
    """

    _dims = 1
    _unpool = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    r"""Partial inverse of :class:`MaxPool2d`, as :class:`MaxUnpool1d` is of
    :class:`MaxPool1d` (2-D windows).

    Args:
        {max_unpool_layer_args}

    Example:
        >>> v, i = nn.MaxPool2d(2, return_indices=True)(ferrograd.arange(16.0).reshape(1, 1, 4, 4))
        >>> nn.MaxUnpool2d(2)(v, i)[0, 0, 1]
        tensor([0., 5., 0., 7.])
    """

    _dims = 2
    _unpool = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    r"""Partial inverse of 3-D max pooling (:func:`ferrograd.nn.functional.max_pool3d`):
    each value goes back to the position of the maximum it came from; the rest of the
    output is zero.

    Args:
        {max_unpool_layer_args}

    Example:
        >>> v, i = F.max_pool3d(ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> nn.MaxUnpool3d(2)(v, i).flatten()
        tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """

    _dims = 3
    _unpool = staticmethod(F.max_unpool3d)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _pool: Callable[..., Tensor]

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        """Applies the power-average pooling of this module's dimension with its settings."""
        return type(self)._pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    r"""Power-average pooling ``(sum x^p)^(1/p)`` over windows of ``(N, C, L)``
    (``p = inf`` is max pooling of ``|x|``).

    Args:
        {lp_pool_layer_args}

    Example:
        >>> nn.LPPool1d(2, 2)(ferrograd.tensor([[[3.0, 4.0, 0.0, 1.0]]]))
        tensor([[[5., 1.]]])
    """

    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    r"""Power-average pooling ``(sum x^p)^(1/p)`` over windows of ``(N, C, H, W)``.

    Args:
        {lp_pool_layer_args}

    Example:
        >>> nn.LPPool2d(2, 2)(ferrograd.full((1, 1, 2, 2), 2.0))
        tensor([[[[4.]]]])
    """

    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    r"""Power-average pooling ``(sum x^p)^(1/p)`` over windows of ``(N, C, D, H, W)``.

    Args:
        {lp_pool_layer_args}

    Example:
        >>> nn.LPPool3d(1, 2)(ferrograd.ones(1, 1, 2, 2, 4)).shape
        ferrograd.Size([1, 1, 1, 1, 2])
    """

    _pool = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _dims = 0
    _pool: Callable[..., Any]

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        name = type(self).__name__
        nd = self._dims
        if isinstance(kernel_size, int) and kernel_size <= 0 or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        """Applies fractional max pooling with this module's settings (and its
        ``_random_samples`` buffer, when set)."""
        return type(self)._pool(input, self.kernel_size, self.output_size, self.output_ratio,
                                self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    r"""2-D fractional max pooling over ``(N, C, H, W)`` or ``(C, H, W)``: the
    maximum of ``kernel_size`` windows placed pseudo-randomly so that the output
    has ``output_size`` positions (or ``output_ratio`` times the input's).

    Args:
        {fractional_max_pool_layer_args}

    Example:
        >>> nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(ferrograd.randn(20, 16, 50, 32)).shape
        ferrograd.Size([20, 16, 25, 16])
    """

    _dims = 2
    _pool = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    r"""3-D fractional max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``, as
    :class:`FractionalMaxPool2d` with one more dim.

    Args:
        {fractional_max_pool_layer_args}

    Example:
        >>> nn.FractionalMaxPool3d(2, output_size=(4, 5, 6))(ferrograd.randn(2, 3, 8, 9, 10)).shape
        ferrograd.Size([2, 3, 4, 5, 6])
    """

    _dims = 3
    _pool = staticmethod(F.fractional_max_pool3d)

_fill_docs(globals())
