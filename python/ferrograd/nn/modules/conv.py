"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``
and ``ConvTranspose2d``."""

from __future__ import annotations

import math
from typing import Any

from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from .._docs import fill_docs as _fill_docs
from .linear import _factory, _new_parameters
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(value: Any, n: int) -> tuple[int, ...]:
    """torch's ``_ntuple``: an iterable passes through as a tuple, a scalar repeats."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """Shared state of the convolution layers: validation, parameters,
    initialisation and the printed form."""

    __constants__ = [
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
        "output_padding",
        "in_channels",
        "out_channels",
        "kernel_size",
    ]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple[int, ...],
                 stride: tuple[int, ...], padding: str | tuple[int, ...], dilation: tuple[int, ...],
                 transposed: bool, output_padding: tuple[int, ...], groups: int, bias: bool,
                 padding_mode: str, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # The (left, right) amounts F.pad needs for non-zero padding modes,
        # last spatial dimension first (F.pad's order).
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1), strict=True):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        kw = _factory(device, dtype)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        _new_parameters(self, kw, weight=shape, bias=out_channels if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # As Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in from the weight's layout.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = (F.conv1d, F.conv2d, F.conv3d)[len(self.kernel_size) - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class _ConvLayer(_ConvNd):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        n = self._nd
        padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n), padding,
                         _ntuple(dilation, n), False, _ntuple(0, n), groups, bias, padding_mode, device,
                         dtype)


class Conv1d(_ConvLayer):
    r"""1-D convolution over ``(N, C_in, L)`` (or unbatched ``(C_in, L)``) inputs.

    ``weight`` is ``(out_channels, in_channels / groups, kernel_size)``;
    ``padding`` may be an int, ``'valid'`` or ``'same'``, and ``padding_mode``
    one of ``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``.

    Args:
        {conv_layer_args}

    Example:
        >>> m = nn.Conv1d(16, 33, 3, stride=2)
        >>> m(ferrograd.randn(20, 16, 50)).shape
        ferrograd.Size([20, 33, 24])
    """

    _nd = 1


class Conv2d(_ConvLayer):
    r"""2-D convolution over ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``) inputs.

    ``weight`` is ``(out_channels, in_channels / groups, kH, kW)``; ``padding``
    may be an int, a pair, ``'valid'`` or ``'same'``, and ``padding_mode`` one
    of ``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``.

    Args:
        {conv_layer_args}

    Example:
        >>> m = nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2))
        >>> m(ferrograd.randn(2, 16, 10, 12)).shape
        ferrograd.Size([2, 33, 8, 12])
    """

    _nd = 2


class Conv3d(_ConvLayer):
    r"""3-D convolution over ``(N, C_in, D, H, W)`` inputs.

    Args:
        {conv_layer_args}

    Example:
        >>> nn.Conv3d(2, 4, 3)(ferrograd.randn(1, 2, 5, 5, 5)).shape
        ferrograd.Size([1, 4, 3, 3, 3])
    """

    _nd = 3


class _ConvTransposeNd(_ConvNd):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        n = self._nd
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
                         _ntuple(padding, n), _ntuple(dilation, n), True, _ntuple(output_padding, n), groups,
                         bias, padding_mode, device, dtype)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:
        """The ``output_padding`` that makes the output ``output_size`` (spatial, or with
        batch/channel dimensions in front), checked against the reachable range."""
        n = self._nd
        if output_size is None:
            return self.output_padding
        output_size = list(output_size)
        lead = 2 if input.dim() == n + 2 else 1
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} "
                f"or {lead + n} elements (got {len(output_size)})"
            )
        min_sizes = [
            (input.shape[lead + d] - 1) * self.stride[d]
            - 2 * self.padding[d]
            + self.dilation[d] * (self.kernel_size[d] - 1)
            + 1
            for d in range(n)
        ]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride, strict=True)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes, strict=True):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range "
                    f"from {min_sizes} to {max_sizes} (for an input of {input.shape[lead:]})"
                )
        return tuple(size - lo for size, lo in zip(output_size, min_sizes, strict=True))

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        conv = (F.conv_transpose1d, F.conv_transpose2d)[self._nd - 1]
        output_padding = self._output_padding(input, output_size)
        return conv(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    r"""1-D transposed convolution (the gradient of ``Conv1d`` with respect to its input).

    ``weight`` is ``(in_channels, out_channels / groups, kernel_size)``. Pass
    ``output_size`` to ``forward`` to pick among the lengths a strided
    transposed convolution can produce.

    Args:
        {conv_transpose_layer_args}

    Example:
        >>> m = nn.ConvTranspose1d(4, 2, 3, stride=2)
        >>> m(ferrograd.randn(1, 4, 5)).shape
        ferrograd.Size([1, 2, 11])
    """

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    r"""2-D transposed convolution (the gradient of ``Conv2d`` with respect to its input).

    ``weight`` is ``(in_channels, out_channels / groups, kH, kW)``.

    Args:
        {conv_transpose_layer_args}

    Example:
        >>> m = nn.ConvTranspose2d(16, 33, 3, stride=2)
        >>> x = ferrograd.randn(1, 16, 12, 12)
        >>> m(x, output_size=[1, 33, 26, 26]).shape
        ferrograd.Size([1, 33, 26, 26])
    """

    _nd = 2


_fill_docs(globals())
