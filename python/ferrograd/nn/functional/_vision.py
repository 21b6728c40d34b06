"""Resampling (``interpolate``) and channel rearrangements, for
:mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import math
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from ._pooling import _adaptive_avg_poolnd
from ._utils import _route, _tuple


def _linear_matrix(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any) -> Tensor:
    """(out, size) matrix of linear interpolation weights along one dimension."""
    rows = []
    for o in range(out):
        if align_corners:
            src = o * (size - 1) / (out - 1) if out > 1 else 0.0
        else:
            ratio = scale if scale is not None else size / out
            src = max((o + 0.5) * ratio - 0.5, 0.0)
        i0 = min(int(math.floor(src)), size - 1)
        i1 = min(i0 + 1, size - 1)
        lam = src - i0
        row = [0.0] * size
        row[i0] += 1.0 - lam
        row[i1] += lam
        rows.append(row)
    return _fg.tensor(rows, dtype=dtype)


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resizes the spatial dimensions of ``(N, C, *S)`` with ``mode`` one of
    ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``,
    ``'trilinear'`` or ``'area'``.

    Args:
        input (Tensor): the input, of shape ``(N, C, *spatial)`` with 1 to 3
            spatial dims.
        size (int or tuple of ints, optional): the output spatial size. Default:
            ``None``.
        scale_factor (float or tuple of floats, optional): the multiplier of the
            spatial size (give ``size`` or this). Default: ``None``.
        mode (str): ``'nearest'``, ``'nearest-exact'``, ``'linear'``,
            ``'bilinear'``, ``'trilinear'`` or ``'area'``. Default:
            ``'nearest'``.
        align_corners (bool, optional): for the linear modes: map the corner
            pixels' centres onto each other instead of the corners' edges.
            Default: ``None``.
        recompute_scale_factor (bool, optional): compute the scale from the
            output size rather than using ``scale_factor`` directly. Default:
            ``None``.
        antialias (bool): must be ``False`` (``True`` raises: not supported).
            Default: ``False``.

    Example:
        >>> F.interpolate(ferrograd.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    nd = input.dim() - 2
    if nd < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D)")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    linear_modes = {"linear": 1, "bilinear": 2, "trilinear": 3}
    if mode in linear_modes and linear_modes[mode] != nd:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {linear_modes[mode] + 2}D input"
        )
    if mode not in linear_modes and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = list(input.shape[2:])
    scales: list[float | None]
    if size is not None:
        out_sizes = list(_tuple(size, nd, "size"))
        scales = [None] * nd
    else:
        factors = [float(scale_factor)] * nd if isinstance(scale_factor, (int, float)) else list(scale_factor)
        if len(factors) != nd:
            raise ValueError("Input and scale_factor must have the same number of spatial dimensions")
        out_sizes = [int(math.floor(s * f)) for s, f in zip(in_sizes, factors, strict=True)]
        scales = [None] * nd if recompute_scale_factor else [1.0 / f for f in factors]
    if mode == "area":
        return _adaptive_avg_poolnd(input, out_sizes, nd)
    out = input
    for i in range(nd):
        d = 2 + i
        s, o = in_sizes[i], out_sizes[i]
        ratio = scales[i] if scales[i] is not None else s / o
        if mode in ("nearest", "nearest-exact"):
            offset = 0.5 if mode == "nearest-exact" else 0.0
            idx = [min(int(math.floor((j + offset) * ratio)), s - 1) for j in range(o)]
            out = out.index_select(d, _fg.tensor(idx, dtype=_fg.int64))
        elif mode in linear_modes:
            matrix = _linear_matrix(s, o, bool(align_corners), scales[i], input.dtype)
            out = out.movedim(d, -1).matmul(matrix.t()).movedim(-1, d)
        else:
            raise NotImplementedError(f"interpolate: mode {mode!r} is not supported")
    return out


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearranges ``(*, C r^2, H, W)`` into ``(*, C, H r, W r)``.

    Args:
        input (Tensor): the input tensor.
        upscale_factor (int): the factor ``r``:
            ``(*, C r^2, H, W) -> (*, C, H r, W r)``.

    Example:
        >>> F.pixel_shuffle(ferrograd.arange(4.0).reshape(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    r = upscale_factor
    c, h, w = input.shape[-3:]
    if c % (r * r) != 0:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
            f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    lead = tuple(input.shape[:-3])
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Inverse of :func:`pixel_shuffle`: ``(*, C, H r, W r)`` into ``(*, C r^2, H, W)``.

    Args:
        input (Tensor): the input tensor.
        downscale_factor (int): the factor ``r``:
            ``(*, C, H r, W r) -> (*, C r^2, H, W)``.

    Example:
        >>> F.pixel_unshuffle(ferrograd.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
        tensor([0., 1., 2., 3.])
    """
    r = downscale_factor
    c, h, w = input.shape[-3:]
    if h % r != 0 or w % r != 0:
        raise RuntimeError(
            "pixel_unshuffle expects height and width to be divisible by downscale_factor, "
            f"but got {h} and {w}"
        )
    lead = tuple(input.shape[:-3])
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleaves the channels of ``groups`` groups: ``(N, g, C/g, *) -> (N, C/g, g, *)``.

    Args:
        input (Tensor): the input tensor.
        groups (int): the number of groups the channels are split into.

    Example:
        >>> F.channel_shuffle(ferrograd.arange(4.0).reshape(1, 4, 1, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    n, c = input.shape[0], input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


_route(globals())
