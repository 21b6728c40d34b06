"""Fractional max pooling (Graham, 2014), for :mod:`ferrograd.nn.functional`.

The windows are fixed-size boxes whose starts advance by a non-integer
step ``alpha = (input - kernel) / (output - 1)`` on average, placed by one
random number per plane and dim in ``[0, 1)`` (``_random_samples``, drawn
when not given). The starts follow torch's formula in the input's dtype, so
the same samples give torch's windows; the maxima are gathered from the
input, so the gradient goes to one element per window.
"""

from __future__ import annotations

import math
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from ._utils import _route


def _sizes(value: Any, nd: int, name: str, what: str) -> list[int]:
    """An int or a sequence of ``nd`` ints as a list of ``nd`` ints."""
    if isinstance(value, int):
        return [value] * nd
    try:
        sizes = [int(v) for v in value]
    except TypeError:
        sizes = []
    if len(sizes) == 1:
        sizes = sizes * nd
    if len(sizes) != nd:
        raise RuntimeError(f"{name}: {what} must either be a single Int or tuple of {nd} Ints")
    return sizes


def _output_sizes(input: Tensor, output_size: Any, output_ratio: Any, nd: int, name: str) -> list[int]:
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return _sizes(output_size, nd, name, "output_size")
    ratios = [float(output_ratio)] * nd if isinstance(output_ratio, (int, float)) else list(output_ratio)
    if len(ratios) == 1:
        ratios = ratios * nd
    if len(ratios) != nd:
        raise ValueError(f"{name} requires output_ratio to be a single number or a tuple of {nd} numbers")
    spatial = input.shape[input.dim() - nd :]
    return [int(s * r) for s, r in zip(spatial, ratios, strict=True)]


def _window_starts(samples: Tensor, size: int, out: int, kernel: int) -> Tensor:
    """The first input index of each window along one dim, ``(N, C, out)``,
    from the samples ``(N, C)``: ``trunc((i + u) alpha) - trunc(u alpha)``
    in the samples' dtype, the last window ending at the input's end."""
    last = size - kernel
    lead = tuple(samples.shape)
    tail = _fg.full((*lead, 1), last, dtype=_fg.int64)
    if out <= 1:
        return tail[..., :out]
    dtype = samples.dtype
    alpha = _fg.tensor(float(last), dtype=dtype) / _fg.tensor(float(out - 1), dtype=dtype)
    u = samples.unsqueeze(-1)
    steps = _fg.arange(out - 1, dtype=dtype)
    starts = ((steps + u) * alpha).trunc().long() - (u * alpha).trunc().long()
    # Samples outside [0, 1) would move windows out of the input; they are
    # kept inside it.
    return _fg.cat([starts.clamp(0, last), tail.expand(*lead, 1)], dim=-1)


def _fractional_max_poolnd(
    input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any, random_samples: Tensor | None,
    nd: int,
) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{nd}d"
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    for d in range(input.dim() - nd - 1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but got "
                f"{list(input.shape)} with dimension {d} being empty."
            )
    kernel = _sizes(kernel_size, nd, name, "kernel_size")
    out_sizes = _output_sizes(input, output_size, output_ratio, nd, name)
    if not input.is_floating_point():
        raise NotImplementedError(f"{name}: not implemented for {input.dtype}")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[0], x.shape[1]
    spatial = tuple(x.shape[2:])
    for d in range(nd):
        if kernel[d] <= 0 or out_sizes[d] < 0:
            raise RuntimeError(
                f"{name}(): kernel_size must be greater than zero and output_size non-negative, but got "
                f"kernel_size={kernel} and output_size={out_sizes}"
            )
        # torch lets the 2-D windows end at the input's end, the 3-D ones one
        # element before it.
        reach = out_sizes[d] + kernel[d] - 1
        if reach > spatial[d] or (nd == 3 and reach == spatial[d]):
            raise RuntimeError(
                f"{name}(): pool size {kernel[d]} too large relative to input size {spatial[d]} "
                f"for output size {out_sizes[d]} (spatial dim {d})"
            )
    if random_samples is None:
        random_samples = _fg.rand(n, c, nd, dtype=x.dtype)
    if random_samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to be 3D, got {list(random_samples.shape)}.")
    if random_samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if random_samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if random_samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if random_samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {random_samples.shape[2]}.")
    samples = random_samples.detach()[:n]
    # The flat index (within a plane) of every element of every window,
    # (N, C, *out_sizes, *kernel), summed from one term per spatial dim.
    flat = None
    for d in range(nd):
        # torch's 2-D samples list (width, height), its 3-D ones (depth,
        # height, width).
        column = 1 - d if nd == 2 else d
        starts = _window_starts(samples[..., column], spatial[d], out_sizes[d], kernel[d])
        positions = starts.unsqueeze(-1) + _fg.arange(kernel[d])
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d] = out_sizes[d]
        shape[2 + nd + d] = kernel[d]
        term = positions.reshape(shape) * math.prod(spatial[d + 1 :])
        flat = term if flat is None else flat + term
    assert flat is not None
    windows = flat.reshape(n, c, math.prod(out_sizes), math.prod(kernel))
    plane = x.reshape(n, c, math.prod(spatial))
    every = windows.reshape(n, c, windows.shape[2] * windows.shape[3])
    gathered = plane.gather(2, every).reshape(windows.shape)
    values, arg = gathered.max(-1)
    indices = windows.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    values = values.reshape(n, c, *out_sizes)
    indices = indices.reshape(n, c, *out_sizes)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def fractional_max_pool2d(
    input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
    return_indices: bool = False, _random_samples: Tensor | None = None,
) -> Any:
    """2-D fractional max pooling over ``(N, C, H, W)`` or ``(C, H, W)``: the
    maximum of ``kernel_size`` windows placed pseudo-randomly so that the output
    has ``output_size`` (or ``output_ratio`` times the input's) positions.

    {fractional_max_pool_args}
        return_indices (bool): also return the flat index (within each
            ``H * W`` plane) of each maximum, for :func:`max_unpool2d`.
            Default: ``False``.
        {fractional_samples_arg}

    Example:
        >>> x = ferrograd.arange(25.0).reshape(1, 1, 5, 5)
        >>> F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=ferrograd.zeros(1, 1, 2))
        tensor([[[[ 6.,  9.],
                  [21., 24.]]]])
    """
    pair = _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return pair if return_indices else pair[0]


def fractional_max_pool3d(
    input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
    return_indices: bool = False, _random_samples: Tensor | None = None,
) -> Any:
    """3-D fractional max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``,
    as :func:`fractional_max_pool2d` with one more dim. The windows must end
    before the input's end along each dim (``output + kernel <= input``).

    {fractional_max_pool_args}
        return_indices (bool): also return the flat index (within each
            ``D * H * W`` volume) of each maximum, for :func:`max_unpool3d`.
            Default: ``False``.
        {fractional_samples_arg}

    Example:
        >>> F.fractional_max_pool3d(ferrograd.ones(1, 1, 5, 5, 5), 2, output_ratio=0.5).shape
        ferrograd.Size([1, 1, 2, 2, 2])
    """
    pair = _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return pair if return_indices else pair[0]


def _with_indices(nd: int, numel: int, shape: str, result: str):
    """``fractional_max_pool{nd}d_with_indices``: the pooling's ``(values, indices)``."""

    def op(
        input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
        return_indices: bool = False, _random_samples: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, _random_samples, nd)

    op.__name__ = op.__qualname__ = name = f"fractional_max_pool{nd}d_with_indices"
    op.__doc__ = f""":func:`fractional_max_pool{nd}d` returning ``(values, indices)``.

    {{fractional_max_pool_args}}
        {{ignored_return_indices_arg}}
        {{fractional_samples_arg}}

    Example:
        >>> x = ferrograd.arange({numel}.0).reshape({shape})
        >>> F.{name}(x, 2, output_size=1)[1]
        {result}
    """
    return op


fractional_max_pool2d_with_indices = _with_indices(2, 16, "1, 1, 4, 4", "tensor([[[[15]]]])")
fractional_max_pool3d_with_indices = _with_indices(3, 27, "1, 1, 3, 3, 3", "tensor([[[[[26]]]]])")


_route(globals())
