"""Max, average, adaptive, power-average pooling and max unpooling, for
:mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence
from typing import Any

import ferrograd as _fg
from ferrograd import _core
from ferrograd._core import Tensor

from ._conv import _window_view
from ._padding import _pad_spatial
from ._utils import _route, _tuple


def _pool_geometry(
    x: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[list[int], list[tuple[int, int]]]:
    """Output sizes and the (left, right) padding that makes every window fit."""
    nd = len(kernel)
    for i in range(nd):
        if padding[i] > (dilation[i] * (kernel[i] - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={padding[i]}, "
                f"kernel_size={kernel[i]} and dilation={dilation[i]}"
            )
    out, pairs = [], []
    for i in range(nd):
        size = x.shape[2 + i]
        span = size + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1
        o = (-(-span // stride[i]) if ceil_mode else span // stride[i]) + 1
        if ceil_mode and (o - 1) * stride[i] >= size + padding[i]:
            o -= 1  # the last window must start inside the input or left padding
        out.append(o)
        needed = (o - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
        extra = max(needed - (size + 2 * padding[i]), 0)
        pairs.append((padding[i], padding[i] + extra))
    if any(o <= 0 for o in out):
        given = "x".join(str(s) for s in x.shape[1:])
        calc = "x".join(str(s) for s in [x.shape[1], *out])
        raise RuntimeError(
            f"Given input size: ({given}). Calculated output size: ({calc}). Output size is too small"
        )
    return out, pairs


def _pool_args(
    kernel_size: Any, stride: Any, padding: Any, dilation: Any, nd: int
) -> tuple[tuple[int, ...], ...]:
    kernel = _tuple(kernel_size, nd, "kernel_size")
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        stride_t = kernel
    else:
        stride_t = _tuple(stride, nd, "stride")
    if any(s <= 0 for s in stride_t):
        raise RuntimeError("stride should be greater than zero")
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero")
    return kernel, stride_t, _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation")


def _pool_input(input: Tensor, nd: int) -> tuple[Tensor, bool]:
    # Only the batch dimension may be empty, as in torch.
    if input.dim() not in (nd + 1, nd + 2) or 0 in tuple(input.shape[-(nd + 1) :]):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _pool_windows(
    xp: Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int], out: Sequence[int]
) -> Tensor:
    """The windows of a padded ``(N, C, *S)`` tensor as ``(N, C, K, *out)``, K
    the window size, in row-major kernel order."""
    nd = len(kernel)
    n, c = xp.shape[0], xp.shape[1]
    if nd in (1, 2) and xp.is_floating_point() and xp.numel() > 0:
        # The core's im2col, whose backward (col2im) sums gradients back.
        lift = (lambda t: (1, *t)) if nd == 1 else tuple
        img = xp.unsqueeze(2) if nd == 1 else xp
        cols = _core._im2col(img, lift(kernel), lift(dilation), (0, 0), lift(stride))
        return cols.view(n, c, math.prod(kernel), *out)
    windows = _window_view(xp, kernel, stride, dilation, out)
    return windows.reshape(n, c, *out, math.prod(kernel)).movedim(-1, 2)


def _unravel(flat: Tensor, sizes: Sequence[int]) -> list[Tensor]:
    """The index along each dim of the row-major offsets ``flat`` into a
    block of shape ``sizes`` (a window's offset -> its per-dim offsets)."""
    indices = []
    rem = flat
    for i in range(len(sizes)):
        block = math.prod(sizes[i + 1 :])
        index = rem.div(block, rounding_mode="floor")
        rem = rem - index * block
        indices.append(index)
    return indices


def _max_poolnd(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
    nd: int,
) -> Any:
    x, unbatched = _pool_input(input, nd)
    kernel, stride_t, padding_t, dilation_t = _pool_args(kernel_size, stride, padding, dilation, nd)
    out_sizes, pairs = _pool_geometry(x, kernel, stride_t, padding_t, dilation_t, ceil_mode)
    padded = any(lo or hi for lo, hi in pairs)
    xp = _pad_spatial(x, pairs, value=float("-inf")) if padded else x
    if nd in (1, 2) and x.is_floating_point() and x.numel() > 0:
        # The core finds each window's argmax; the values are gathered from
        # the input, so the gradient goes to that one element (as torch's).
        lift = (lambda t: (1, *t)) if nd == 1 else tuple
        img = xp.unsqueeze(2) if nd == 1 else xp
        idx = _core._max_pool2d_indices(img, lift(kernel), lift(dilation_t), (0, 0), lift(stride_t))
        n, c = x.shape[0], x.shape[1]
        flat_idx = idx.reshape(n, c, -1)
        values = xp.reshape(n, c, -1).gather(2, flat_idx).reshape(n, c, *out_sizes)
        if unbatched:
            values = values.squeeze(0)
        if not return_indices:
            return values
        if padded:
            wp = img.shape[-1]
            rows = idx.div(wp, rounding_mode="floor") - (pairs[0][0] if nd == 2 else 0)
            cols = idx.remainder(wp) - pairs[-1][0]
            idx = rows * x.shape[-1] + cols if nd == 2 else cols
        idx = idx.reshape(n, c, *out_sizes)
        return values, (idx.squeeze(0) if unbatched else idx)
    # max with a dim sends the gradient to one element per window, as torch's
    # max_pool backward does (amax would split it between ties).
    values, arg = _pool_windows(xp, kernel, stride_t, dilation_t, out_sizes).max(2)
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    # Window offset -> flat index into the unpadded input plane.
    flat = _fg.zeros(arg.shape, dtype=_fg.int64)
    plane_stride = 1
    strides_in = []
    for i in reversed(range(nd)):
        strides_in.append(plane_stride)
        plane_stride *= x.shape[2 + i]
    strides_in.reverse()
    for i, k_i in enumerate(_unravel(arg, kernel)):
        shape = [1] * (2 + nd)
        shape[2 + i] = out_sizes[i]
        start = (_fg.arange(out_sizes[i]) * stride_t[i] - padding_t[i]).reshape(shape)
        flat = flat + (start + k_i * dilation_t[i]) * strides_in[i]
    if unbatched:
        flat = flat.squeeze(0)
    return values, flat


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over ``(N, C, L)``.

    {max_pool_args}
        return_indices (bool): also return the index of each maximum, for
            :func:`max_unpool1d`. Default: ``False``.

    Example:
        >>> F.max_pool1d(ferrograd.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[3., 2.]]])
    """
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-D max pooling over ``(N, C, H, W)``; ``stride`` defaults to ``kernel_size``.
    With ``return_indices`` also returns flat indices into each ``H * W`` plane.

    {max_pool_args}
        return_indices (bool): also return the flat index (within each spatial
            plane) of each maximum, for :func:`max_unpool2d`. Default:
            ``False``.

    Example:
        >>> F.max_pool2d(ferrograd.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-D max pooling over ``(N, C, D, H, W)``.

    {max_pool_args}
        return_indices (bool): also return the flat index of each maximum.
            Default: ``False``.

    Example:
        >>> F.max_pool3d(ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[7.]]]]])
    """
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _avg_poolnd(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    nd: int,
) -> Tensor:
    x, unbatched = _pool_input(input, nd)
    kernel, stride_t, padding_t, dilation_t = _pool_args(kernel_size, stride, padding, 1, nd)
    out_sizes, pairs = _pool_geometry(x, kernel, stride_t, padding_t, dilation_t, ceil_mode)
    xp = _pad_spatial(x, pairs)
    sums = _pool_windows(xp, kernel, stride_t, dilation_t, out_sizes).sum(2)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        out = sums / divisor_override
    else:
        # Count, per window, the cells that belong to the divisor: real input,
        # plus the symmetric padding when count_include_pad, never the extra
        # cells that ceil_mode appends on the right.
        ones = _fg.ones(1, 1, *x.shape[2:], dtype=x.dtype)
        counted = _pad_spatial(ones, [(p, p) for p in padding_t], value=1.0 if count_include_pad else 0.0)
        counted = _pad_spatial(counted, [(0, b - a) for a, b in pairs])
        divisor = _window_view(counted, kernel, stride_t, dilation_t, out_sizes)
        out = sums / divisor.sum(tuple(range(2 + nd, 2 + 2 * nd)))
    return out.squeeze(0) if unbatched else out


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over ``(N, C, L)``.

    {avg_pool_args}

    Example:
        >>> F.avg_pool1d(ferrograd.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[2., 1.]]])
    """
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """2-D average pooling over ``(N, C, H, W)``.

    {avg_pool_divisor_args}

    Example:
        >>> F.avg_pool2d(ferrograd.ones(1, 1, 4, 4), 2, padding=1, count_include_pad=False).shape
        ferrograd.Size([1, 1, 3, 3])
    """
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """3-D average pooling over ``(N, C, D, H, W)``.

    {avg_pool_divisor_args}

    Example:
        >>> F.avg_pool3d(ferrograd.ones(1, 1, 4, 4, 4), 2).shape
        ferrograd.Size([1, 1, 2, 2, 2])
    """
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def _adaptive_sizes(output_size: Any, x: Tensor, nd: int) -> list[int]:
    if isinstance(output_size, int):
        output_size = (output_size,) * nd
    sizes = list(output_size)
    if len(sizes) == 1 and nd > 1:
        sizes = sizes * nd
    if len(sizes) != nd:
        raise ValueError(f"adaptive pool: output_size must have {nd} elements")
    return [x.shape[x.dim() - nd + i] if s is None else int(s) for i, s in enumerate(sizes)]


def _adaptive_avg_poolnd(input: Tensor, output_size: Any, nd: int) -> Tensor:
    x, unbatched = _pool_input(input, nd)
    sizes = _adaptive_sizes(output_size, x, nd)
    out = x
    for i in range(nd):
        d = 2 + i
        size = x.shape[d]
        # Averaging matrix (O, S): row o holds 1/len over window o.
        rows = []
        for start, end in _adaptive_bounds(size, sizes[i]):
            row = [0.0] * size
            for j in range(start, end):
                row[j] = 1.0 / (end - start)
            rows.append(row)
        matrix = _fg.tensor(rows, dtype=x.dtype)
        out = out.movedim(d, -1).matmul(matrix.t()).movedim(-1, d)
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """1-D adaptive average pooling to ``output_size`` positions.

    Args:
        input (Tensor): the input tensor.
        output_size (int): the length of the output.

    Example:
        >>> F.adaptive_avg_pool1d(ferrograd.tensor([[[1.0, 2.0, 3.0, 4.0]]]), 2)
        tensor([[[1.5000, 3.5000]]])
    """
    return _adaptive_avg_poolnd(input, output_size, 1)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """2-D adaptive average pooling: window ``i`` spans ``[floor(i S / O), ceil((i + 1) S / O))``.

    Args:
        input (Tensor): the input tensor.
        {adaptive_output_size_arg}

    Example:
        >>> F.adaptive_avg_pool2d(ferrograd.ones(1, 1, 5, 7), (2, 3)).shape
        ferrograd.Size([1, 1, 2, 3])
    """
    return _adaptive_avg_poolnd(input, output_size, 2)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """3-D adaptive average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``: the
    windows are chosen so the output has ``output_size`` positions per dim, as in
    :func:`adaptive_avg_pool2d`.

    Args:
        input (Tensor): the input tensor.
        {adaptive_output_size_arg}

    Example:
        >>> F.adaptive_avg_pool3d(ferrograd.ones(1, 1, 4, 4, 4), 2).shape
        ferrograd.Size([1, 1, 2, 2, 2])
    """
    return _adaptive_avg_poolnd(input, output_size, 3)


def _adaptive_max_poolnd(input: Tensor, output_size: Any, return_indices: bool, nd: int) -> Any:
    x, unbatched = _pool_input(input, nd)
    sizes = _adaptive_sizes(output_size, x, nd)
    gathered = x
    source_indices = []
    lengths = []
    for i in range(nd):
        d = 2 + 2 * i  # each earlier dim has become (O, L)
        bounds = _adaptive_bounds(x.shape[2 + i], sizes[i])
        length = max(e - s for s, e in bounds)
        # Short windows repeat their last index, which cannot change the max.
        idx = [[min(s + j, e - 1) for j in range(length)] for s, e in bounds]
        idx_t = _fg.tensor(idx, dtype=_fg.int64)
        gathered = gathered.index_select(d, idx_t.reshape(-1)).unflatten(d, (sizes[i], length))
        source_indices.append(idx_t)
        lengths.append(length)
    n, c = x.shape[0], x.shape[1]
    perm = [0, 1, *(2 + 2 * i for i in range(nd)), *(3 + 2 * i for i in range(nd))]
    values, arg = gathered.permute(perm).reshape(n, c, *sizes, math.prod(lengths)).max(-1)
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    flat = _fg.zeros(arg.shape, dtype=_fg.int64)
    for i, l_i in enumerate(_unravel(arg, lengths)):
        shape = [1] * (2 + nd)
        shape[2 + i] = sizes[i]
        offsets = _fg.arange(sizes[i]).reshape(shape) * lengths[i] + l_i
        src = source_indices[i].reshape(-1)[offsets.reshape(-1)].reshape(offsets.shape)
        flat = flat + src * math.prod(x.shape[3 + i :])
    if unbatched:
        flat = flat.squeeze(0)
    return values, flat


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """1-D adaptive max pooling over ``(N, C, L)`` or ``(C, L)``: the windows are
    chosen so the output has ``output_size`` positions, as in :func:`adaptive_avg_pool2d`.

    Args:
        input (Tensor): the input tensor.
        output_size (int): the length of the output.
        return_indices (bool): also return the index of each maximum. Default:
            ``False``.

    Example:
        >>> F.adaptive_max_pool1d(ferrograd.tensor([[[1.0, 5.0, 3.0, 4.0]]]), 2)
        tensor([[[5., 4.]]])
    """
    return _adaptive_max_poolnd(input, output_size, return_indices, 1)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """2-D adaptive max pooling, with the same windows as :func:`adaptive_avg_pool2d`.

    {adaptive_max_pool_args}

    Example:
        >>> F.adaptive_max_pool2d(ferrograd.arange(16.0).reshape(1, 1, 4, 4), 1)
        tensor([[[[15.]]]])
    """
    return _adaptive_max_poolnd(input, output_size, return_indices, 2)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """3-D adaptive max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``, with the
    windows of :func:`adaptive_avg_pool3d`.

    {adaptive_max_pool_args}

    Example:
        >>> F.adaptive_max_pool3d(ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 1)
        tensor([[[[[7.]]]]])
    """
    return _adaptive_max_poolnd(input, output_size, return_indices, 3)


def _lp_poolnd(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool, nd: int
) -> Tensor:
    kernel = _tuple(kernel_size, nd, "kernel_size")
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        # The limits p -> +-inf: the largest or smallest magnitude of each window.
        max_pool = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
        if norm_type > 0:
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    avg_pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over 1-D windows.

    Args:
        {lp_pool_head_args}
        kernel_size (int): the window size.
        {pool_stride_arg}
        {ceil_mode_arg}

    Example:
        >>> F.lp_pool1d(ferrograd.tensor([[[3.0, 4.0, 0.0, 1.0]]]), 2, 2)
        tensor([[[5., 1.]]])
    """
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over 2-D windows.

    Args:
        {lp_pool_head_args}
        kernel_size (int or tuple of ints): the size of the window.
        {pool_stride_arg}
        {ceil_mode_arg}

    Example:
        >>> F.lp_pool2d(ferrograd.full((1, 1, 2, 2), 2.0), 2, 2)
        tensor([[[[4.]]]])
    """
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over 3-D windows of
    ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Args:
        {lp_pool_head_args}
        kernel_size (int or tuple of ints): the window's depth, height and width (one int: all three).
        {pool_stride_arg}
        {ceil_mode_arg}

    Example:
        >>> F.lp_pool3d(ferrograd.full((1, 1, 2, 2, 2), 2.0), 1, 2)
        tensor([[[[[16.]]]]])
    """
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _unpool_sizes(input: Tensor, kernel: Sequence[int], stride: Sequence[int], padding: Sequence[int],
                  output_size: Any) -> list[int]:
    """The spatial output size of max unpooling: the pooling's input size
    implied by the arguments, or ``output_size`` when it is one of the sizes
    the pooling maps to the input's."""
    nd = len(kernel)
    spatial = tuple(input.shape[input.dim() - nd :])
    default = [(spatial[d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    sizes = default
    if output_size is not None:
        sizes = [int(s) for s in output_size]
        if len(sizes) == nd + 2:
            sizes = sizes[2:]
        if len(sizes) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                f"length of '{len(sizes)}'"
            )
        for d in range(nd):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < sizes[d] < high:
                raise ValueError(
                    f'invalid output_size "{tuple(output_size)}" (dim {d} must be between {low} and {high})'
                )
    for d in range(nd):
        if sizes[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                f"output_size[{d}]={sizes[d]}"
            )
    return sizes


def _max_unpoolnd(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any, output_size: Any, nd: int
) -> Tensor:
    kernel, stride_t, padding_t, _ = _pool_args(kernel_size, stride, padding, 1, nd)
    sizes = _unpool_sizes(input, kernel, stride_t, padding_t, output_size)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
            f"{input.dim()} dimensions."
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) but got "
            f"indices tensor with shape: {list(indices.shape)}"
        )
    if indices.dtype != _fg.int64:
        raise RuntimeError("elements in indices should be type int64")
    lead = tuple(input.shape[: input.dim() - nd])
    pooled = math.prod(input.shape[input.dim() - nd :])
    try:
        out = _fg.zeros(*lead, math.prod(sizes), dtype=input.dtype).scatter(
            -1, indices.reshape(*lead, pooled), input.reshape(*lead, pooled)
        )
    except RuntimeError as e:
        if "out of bounds" not in str(e):
            raise
        raise RuntimeError(
            f"Found an invalid max index: {e} (output volumes are of size {'x'.join(map(str, sizes))})"
        ) from None
    return out.reshape(*lead, *sizes)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """Partial inverse of :func:`max_pool1d`: places values at ``indices``, zeros elsewhere.

    {max_unpool_args}

    Example:
        >>> v, i = F.max_pool1d(ferrograd.tensor([[[1.0, 3.0, 4.0, 2.0]]]), 2, return_indices=True)
        >>> F.max_unpool1d(v, i, 2)
        tensor([[[0., 3., 4., 0.]]])
    """
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """Partial inverse of :func:`max_pool2d`: puts each value of ``input`` at the position
    ``indices`` recorded for it and fills the rest of the output with zeros.

    {max_unpool_args}

    Example:
        >>> v, i = F.max_pool2d(ferrograd.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> F.max_unpool2d(v, i, 2)[0, 0, 1]
        tensor([0., 5., 0., 7.])
    """
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    """Partial inverse of :func:`max_pool3d`: puts each value of ``input`` at the flat
    position ``indices`` recorded for it in its ``D * H * W`` volume, zeros elsewhere.

    {max_unpool_args}

    Example:
        >>> v, i = F.max_pool3d(ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
        >>> F.max_unpool3d(v, i, 2).flatten()
        tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 3)


_MAX_POOL_ARGS = """{max_pool_args}
        {ignored_return_indices_arg}"""
_ADAPTIVE_ARGS = """Args:
        input (Tensor): the input tensor.
        {adaptive_output_size_arg}
        {ignored_return_indices_arg}"""


def _with_indices(pool: Any, args_doc: str, call: str, result: str) -> Any:
    """``<pool>_with_indices``: ``pool`` with ``return_indices=True``, whatever
    is passed for it (torch's signature, the argument ignored)."""
    signature = inspect.signature(pool)
    name = f"{pool.__name__}_with_indices"

    def op(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.arguments["return_indices"] = True
        # The module's public form, as routed (batched inputs go through vmap's rules).
        return globals()[pool.__name__](*bound.args, **bound.kwargs)

    op.__signature__ = signature  # type: ignore[attr-defined]
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f""":func:`{pool.__name__}` with ``return_indices=True``: ``(values, indices)``.

    {args_doc}

    Example:
        >>> F.{name}({call})[1]
        {result}
    """
    return op


max_pool1d_with_indices = _with_indices(
    max_pool1d, _MAX_POOL_ARGS, "ferrograd.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2", "tensor([[[1, 2]]])"
)
max_pool2d_with_indices = _with_indices(
    max_pool2d, _MAX_POOL_ARGS, "ferrograd.arange(16.0).reshape(1, 1, 4, 4), 4", "tensor([[[[15]]]])"
)
max_pool3d_with_indices = _with_indices(
    max_pool3d, _MAX_POOL_ARGS, "ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 2", "tensor([[[[[7]]]]])"
)
adaptive_max_pool1d_with_indices = _with_indices(
    adaptive_max_pool1d, _ADAPTIVE_ARGS, "ferrograd.tensor([[[1.0, 5.0, 3.0, 4.0]]]), 2", "tensor([[[1, 3]]])"
)
adaptive_max_pool2d_with_indices = _with_indices(
    adaptive_max_pool2d, _ADAPTIVE_ARGS, "ferrograd.arange(16.0).reshape(1, 1, 4, 4), 1", "tensor([[[[15]]]])"
)
adaptive_max_pool3d_with_indices = _with_indices(
    adaptive_max_pool3d, _ADAPTIVE_ARGS, "ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 1",
    "tensor([[[[[7]]]]])",
)

_route(globals())
