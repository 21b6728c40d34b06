"""Convolution, transposed convolution, ``unfold`` and ``fold``, for
:mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import ferrograd as _fg
from ferrograd import _core
from ferrograd._core import Tensor

from ._padding import _pad_spatial
from ._utils import _route, _tuple


def _batchify(input: Tensor, nd: int, name: str) -> tuple[Tensor, bool]:
    """Add the batch dimension to an unbatched input; say whether it was added."""
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    if input.dim() == nd + 2:
        return input, False
    raise RuntimeError(
        f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
        f"size: {list(input.shape)}"
    )


def _window_view(
    x: Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int], out: Sequence[int]
) -> Tensor:
    """The sliding windows of a contiguous ``(N, C, *S)`` tensor as a
    ``(N, C, *out, *kernel)`` view (im2col without a copy)."""
    x = x.contiguous()
    st = x.stride()
    nd = len(kernel)
    spatial = st[2:]
    shape = (x.shape[0], x.shape[1], *out, *kernel)
    strides = (
        st[0],
        st[1],
        *(spatial[i] * stride[i] for i in range(nd)),
        *(spatial[i] * dilation[i] for i in range(nd)),
    )
    return x.as_strided(shape, strides, x.storage_offset())


def _conv_padding(
    padding: Any, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int], nd: int
) -> list[tuple[int, int]]:
    """(left, right) zero padding per spatial dimension."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pairs = []
            for k, d in zip(kernel, dilation, strict=True):
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))
            return pairs
        raise RuntimeError(f"Invalid padding string: {padding!r}")
    p = _tuple(padding, nd, "padding")
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    return [(v, v) for v in p]


def _convnd(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    nd: int,
    name: str,
) -> Tensor:
    """N-d cross-correlation: padded input -> window view -> one batched matmul."""
    x, unbatched = _batchify(input, nd, name)
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input {list(x.shape)}, "
            f"but got {weight.dim()}-dimensional weight of size {list(weight.shape)} instead"
        )
    kernel = tuple(weight.shape[2:])
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    c_out = weight.shape[0]
    if c_out % groups != 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(x.shape)} "
            f"to have {weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    pairs = _conv_padding(padding, kernel, stride, dilation, nd)
    padded_sizes = [x.shape[2 + i] + pairs[i][0] + pairs[i][1] for i in range(nd)]
    effective = [dilation[i] * (kernel[i] - 1) + 1 for i in range(nd)]
    if any(padded_sizes[i] < effective[i] for i in range(nd)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded_sizes))}). "
            f"Kernel size: ({' x '.join(map(str, effective))}). "
            "Kernel size can't be greater than actual input size"
        )
    if nd in (1, 2) and x.is_floating_point() and x.numel() > 0:
        # The core's conv2d (im2col + one product per image); a 1-d
        # convolution is a 2-d one over images of height 1.
        if any(lo != hi for lo, hi in pairs):
            x = _pad_spatial(x, pairs)
            pairs = [(0, 0)] * nd
        if nd == 1:
            out = _core._conv2d(
                x.unsqueeze(2), weight.unsqueeze(2), bias,
                (1, stride[0]), (0, pairs[0][0]), (1, dilation[0]), groups,
            ).squeeze(2)  # fmt: skip
        else:
            out = _core._conv2d(
                x, weight, bias, tuple(stride), (pairs[0][0], pairs[1][0]), tuple(dilation), groups
            )
        return out.squeeze(0) if unbatched else out
    out_sizes = [(padded_sizes[i] - effective[i]) // stride[i] + 1 for i in range(nd)]
    xp = _pad_spatial(x, pairs)
    n, c_in = x.shape[0], x.shape[1]
    cg, og = c_in // groups, c_out // groups
    windows = _window_view(xp, kernel, stride, dilation, out_sizes)  # (N, C, *O, *K)
    windows = windows.reshape(n, groups, cg, *out_sizes, *kernel)
    # (N, G, *O, Cg, *K) so each output position's patch is one contiguous row.
    perm = [0, 1, *range(3, 3 + nd), 2, *range(3 + nd, 3 + 2 * nd)]
    length = math.prod(out_sizes)
    patch = cg * math.prod(kernel)
    cols = windows.permute(perm).reshape(n, groups, length, patch)
    w = weight.reshape(groups, og, patch).transpose(1, 2)  # (G, patch, Og)
    out = cols.matmul(w)  # (N, G, L, Og)
    out = out.permute(0, 1, 3, 2).reshape(n, c_out, *out_sizes)
    if bias is not None:
        out = out + bias.reshape(1, c_out, *([1] * nd))
    return out.squeeze(0) if unbatched else out


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation over ``(N, C_in, L)``; ``weight`` is ``(C_out, C_in / groups, k)``.

    Args:
        {conv_args}

    Example:
        >>> F.conv1d(ferrograd.ones(1, 1, 5), ferrograd.ones(1, 1, 3))
        tensor([[[3., 3., 3.]]])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution over time-first sequences: ``input`` ``(T, B, C_in)``,
    ``weight`` ``(k, C_in, C_out)``, output ``(T + 2 pad - k + 1, B, C_out)``;
    a negative ``pad`` crops.

    Args:
        input (Tensor): the sequences, ``(time, batch, in_channels)``.
        weight (Tensor): the filters, ``(kernel_width, in_channels, out_channels)``.
        bias (Tensor): added to every output channel, ``(out_channels,)``.
        pad (int): zeros added at both ends of the time dimension. Default: ``0``.

    Example:
        >>> F.conv_tbc(ferrograd.ones(5, 1, 2), ferrograd.ones(3, 2, 1), ferrograd.zeros(1), pad=1).flatten()
        tensor([4., 6., 6., 6., 4.])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    pad = int(pad)
    padded = input.shape[0] + 2 * pad
    if padded < weight.shape[0]:
        raise RuntimeError(
            f"conv_tbc: the kernel width {weight.shape[0]} is larger than the padded input length {padded}"
        )
    x = _pad_spatial(input.permute(1, 2, 0), [(pad, pad)])
    return conv1d(x, weight.permute(2, 1, 0), bias).permute(2, 0, 1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation over ``(N, C_in, H, W)``; ``weight`` is
    ``(C_out, C_in / groups, kH, kW)``; ``padding`` may be an int, a pair,
    ``'valid'`` or ``'same'``.

    Args:
        {conv_args}

    Example:
        >>> F.conv2d(ferrograd.ones(1, 1, 3, 3), ferrograd.ones(1, 1, 2, 2)).shape
        ferrograd.Size([1, 1, 2, 2])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation over ``(N, C_in, D, H, W)``.

    Args:
        {conv_args}

    Example:
        >>> F.conv3d(ferrograd.ones(1, 1, 3, 3, 3), ferrograd.ones(1, 1, 2, 2, 2)).shape
        ferrograd.Size([1, 1, 2, 2, 2])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transposend(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
    nd: int,
) -> Tensor:
    """Transposed convolution as a stride-1 convolution of the zero-stuffed input
    with the flipped, in/out-swapped kernel (the adjoint of :func:`_convnd`)."""
    name = f"conv_transpose{nd}d"
    x, unbatched = _batchify(input, nd, name)
    stride = _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    output_padding = _tuple(output_padding, nd, "output_padding")
    dilation = _tuple(dilation, nd, "dilation")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=True)):
        axes = ("height", "width") if nd == 2 else tuple(f"dim{i}" for i in range(nd))
        parts = [f"output_padding_{a}: {v}" for a, v in zip(axes, output_padding, strict=True)]
        parts += [f"stride_{a}: {v}" for a, v in zip(axes, stride, strict=True)]
        parts += [f"dilation_{a}: {v}" for a, v in zip(axes, dilation, strict=True)]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got " + " ".join(parts)
        )
    c_in = x.shape[1]
    if weight.dim() != nd + 2 or weight.shape[0] != c_in:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} "
            f"to have {weight.shape[0]} channels, but got {c_in} channels instead"
        )
    if c_in % groups != 0:
        raise RuntimeError(f"in_channels ({c_in}) must be divisible by groups ({groups})")
    kernel = tuple(weight.shape[2:])
    og = weight.shape[1]
    n = x.shape[0]
    if any(s > 1 for s in stride):
        sizes = [(x.shape[2 + i] - 1) * stride[i] + 1 for i in range(nd)]
        stuffed = _fg.zeros(n, c_in, *sizes, dtype=x.dtype)
        index = (slice(None), slice(None), *(slice(None, None, s) for s in stride))
        stuffed[index] = x
        x = stuffed
    pairs = []
    for i in range(nd):
        edge = dilation[i] * (kernel[i] - 1) - padding[i]
        pairs.append((edge, edge + output_padding[i]))
    x = _pad_spatial(x, pairs)
    # (C_in, Og, *K) -> (G * Og, C_in / G, *K), flipped in every spatial dim.
    w = weight.reshape(groups, c_in // groups, og, *kernel).transpose(1, 2)
    w = w.reshape(groups * og, c_in // groups, *kernel).flip(list(range(2, 2 + nd)))
    out = _convnd(x, w, bias, 1, 0, dilation, groups, nd, name)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, k)``.

    Args:
        {conv_transpose_args}

    Example:
        >>> F.conv_transpose1d(ferrograd.ones(1, 1, 2), ferrograd.ones(1, 1, 2))
        tensor([[[1., 2., 1.]]])
    """
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-D transposed convolution; output size is
    ``(H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.

    Args:
        {conv_transpose_args}

    Example:
        >>> F.conv_transpose2d(ferrograd.ones(1, 1, 2, 2), ferrograd.ones(1, 3, 2, 2), stride=2).shape
        ferrograd.Size([1, 3, 4, 4])
    """
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-D transposed convolution over ``(N, C_in, D, H, W)``: the gradient of
    :func:`conv3d` with respect to its input; ``weight`` is ``(C_in, C_out / groups, kD, kH, kW)``.

    Args:
        {conv_transpose_args}

    Example:
        >>> F.conv_transpose3d(ferrograd.ones(1, 1, 2, 2, 2), ferrograd.ones(1, 1, 2, 2, 2)).shape
        ferrograd.Size([1, 1, 3, 3, 3])
    """
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


def _block_args(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple[tuple[int, ...], ...]:
    """:func:`unfold`'s and :func:`fold`'s window arguments, each as a pair."""
    return (
        _tuple(kernel_size, 2, "kernel_size"),
        _tuple(dilation, 2, "dilation"),
        _tuple(padding, 2, "padding"),
        _tuple(stride, 2, "stride"),
    )


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """Extracts sliding blocks: ``(N, C, H, W) -> (N, C * kH * kW, L)``.

    Args:
        input (Tensor): the input, of shape ``(N, C, H, W)``.
        {block_args}

    Example:
        >>> F.unfold(ferrograd.ones(1, 2, 3, 3), 2).shape
        ferrograd.Size([1, 8, 4])
    """
    if input.dim() not in (3, 4):
        raise NotImplementedError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)"
        )
    x, unbatched = (input.unsqueeze(0), True) if input.dim() == 3 else (input, False)
    kernel, dilation_t, padding_t, stride_t = _block_args(kernel_size, dilation, padding, stride)
    if x.is_floating_point() and min(padding_t) >= 0 and min(stride_t) > 0:
        cols = _core._im2col(x, kernel, dilation_t, padding_t, stride_t)
        return cols.squeeze(0) if unbatched else cols
    xp = _pad_spatial(x, [(p, p) for p in padding_t])
    out_sizes = [(xp.shape[2 + i] - dilation_t[i] * (kernel[i] - 1) - 1) // stride_t[i] + 1 for i in range(2)]
    if any(o <= 0 for o in out_sizes):
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size={kernel}, "
            f"dilation={dilation_t}, padding={padding_t}, calculated shape of the array of sliding "
            f"blocks as ({out_sizes[0]}, {out_sizes[1]}), but its components must be at least one."
        )
    n, c = x.shape[0], x.shape[1]
    windows = _window_view(xp, kernel, stride_t, dilation_t, out_sizes)  # (N, C, OH, OW, kh, kw)
    cols = windows.permute(0, 1, 4, 5, 2, 3).reshape(
        n, c * kernel[0] * kernel[1], out_sizes[0] * out_sizes[1]
    )
    return cols.squeeze(0) if unbatched else cols


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    """Sums sliding blocks back into a tensor: the adjoint of :func:`unfold`,
    ``(N, C * kH * kW, L) -> (N, C, H, W)``.

    Args:
        input (Tensor): the columns, of shape ``(N, C * prod(kernel_size), L)``.
        output_size (int or tuple of ints): the spatial size ``(H, W)`` of the
            output.
        {block_args}

    Example:
        >>> F.fold(ferrograd.ones(1, 4, 4), (3, 3), 2)[0, 0]
        tensor([[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
            f"dimensions for input, but got: {list(input.shape)}"
        )
    x, unbatched = (input.unsqueeze(0), True) if input.dim() == 2 else (input, False)
    size = _tuple(output_size, 2, "output_size")
    kernel, dilation_t, padding_t, stride_t = _block_args(kernel_size, dilation, padding, stride)
    kk = kernel[0] * kernel[1]
    if x.shape[1] % kk != 0:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={x.shape[1]} and kernel_size={kernel}"
        )
    padded = [size[i] + 2 * padding_t[i] for i in range(2)]
    blocks = [(padded[i] - dilation_t[i] * (kernel[i] - 1) - 1) // stride_t[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation_t}, padding={padding_t}, "
            f"stride={stride_t}, expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={x.shape[2]}."
        )
    if x.is_floating_point() and min(padding_t) >= 0 and min(stride_t) > 0:
        img = _core._col2im(x, size, kernel, dilation_t, padding_t, stride_t)
        return img.squeeze(0) if unbatched else img
    n, c = x.shape[0], x.shape[1] // kk
    ki = _fg.arange(kernel[0]).reshape(-1, 1, 1, 1)
    kj = _fg.arange(kernel[1]).reshape(1, -1, 1, 1)
    oh = _fg.arange(blocks[0]).reshape(1, 1, -1, 1)
    ow = _fg.arange(blocks[1]).reshape(1, 1, 1, -1)
    rows = oh * stride_t[0] + ki * dilation_t[0]
    cols = ow * stride_t[1] + kj * dilation_t[1]
    target = (rows * padded[1] + cols).reshape(-1)  # (kh*kw*L,) in unfold's column order
    values = x.reshape(n, c, -1)
    out = _fg.zeros(n, c, padded[0] * padded[1], dtype=x.dtype).index_add(2, target, values)
    out = out.reshape(n, c, padded[0], padded[1])
    out = out[:, :, padding_t[0] : padding_t[0] + size[0], padding_t[1] : padding_t[1] + size[1]]
    return out.squeeze(0) if unbatched else out


_route(globals())
