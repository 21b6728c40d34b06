"""Resampling (``interpolate``, ``affine_grid``, ``grid_sample``) and
channel rearrangements, for :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import itertools
import math
import warnings
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
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c = input.shape[0], input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """The ATen name of :func:`channel_shuffle`, with the same result.

    Args:
        input (Tensor): the input tensor.
        groups (int): the number of groups the channels are split into.

    Example:
        >>> F.native_channel_shuffle(ferrograd.arange(6.0).reshape(1, 6, 1), 3).flatten()
        tensor([0., 2., 4., 1., 3., 5.])
    """
    return channel_shuffle(input, groups)


# --- Sampling grids -------------------------------------------------------------------------------
#
# A grid holds, for each output position, a point of the input in normalised
# coordinates: -1 and 1 are the edges of the input (``align_corners=False``)
# or the centres of its corner pixels (``align_corners=True``). Its last dim
# lists the coordinates fastest-varying first: (x, y) = (W, H) in 2-D,
# (x, y, z) = (W, H, D) in 3-D. Everything below is made of tensor ops (the
# taps are gathered from the flattened input), so the gradients reach the
# input and the grid through those ops' formulas.

_INTERPOLATION_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")
# Coordinates beyond this, and non-finite ones, left after the padding mode
# has moved them, sample nothing (as a point far outside the input would).
_FAR = 2.0**31 - 2
_FAR_AWAY = -100.0
# The cubic convolution's free parameter (Keys' kernel), as in torch.
_CUBIC_A = -0.75


def _grid_axis(steps: int, align_corners: bool, dtype: Any) -> Tensor:
    """The normalised coordinates of ``steps`` pixel centres along one axis."""
    if steps <= 1:
        return _fg.zeros(max(steps, 0), dtype=dtype)
    axis = _fg.linspace(-1.0, 1.0, steps, dtype=dtype)
    return axis if align_corners else axis * (steps - 1) / steps


def _affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """affine_grid after its argument checks (those of ATen's
    ``affine_grid_generator``)."""
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    nd = len(size) - 2
    if min(size) < 0:
        raise RuntimeError(f"affine_grid_generator: expected non-negative sizes, but got {size}")
    if not theta.is_floating_point():
        raise RuntimeError(f"affine_grid_generator: expected a floating point theta, but got {theta.dtype}")
    if theta.dim() != 3 or tuple(theta.shape) != (size[0], nd, nd + 1):
        raise RuntimeError(
            f"affine_grid_generator: expected theta of shape [{size[0]}, {nd}, {nd + 1}] for size {size}, "
            f"but got {list(theta.shape)}"
        )
    spatial = size[2:]
    # (x, y[, z], 1) at every output position: x runs along the last dim.
    axes = [_grid_axis(s, align_corners, theta.dtype) for s in reversed(spatial)]
    mesh = _fg.meshgrid(*axes[::-1], indexing="ij")[::-1]
    base = _fg.stack([*mesh, _fg.ones(spatial, dtype=theta.dtype)], dim=-1)
    out = base.reshape(1, -1, nd + 1).matmul(theta.transpose(1, 2))
    return out.reshape(size[0], *spatial, nd)


def _warn_align_corners(align_corners: bool | None) -> bool:
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
            "Please specify align_corners=True if the old behavior is desired. "
            "See the documentation of grid_sample for details.",
            UserWarning,
            stacklevel=3,
        )
        return False
    return bool(align_corners)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps, for :func:`grid_sample`:
    ``grid[n, h, w] = theta[n] @ (x_w, y_h, 1)``, with ``(x_w, y_h)`` the
    normalised coordinates of output pixel ``(h, w)``.

    Args:
        theta (Tensor): the affine matrices, ``(N, 2, 3)`` for a 2-D grid or
            ``(N, 3, 4)`` for a 3-D one.
        size (sequence of ints): the size of the output image,
            ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        align_corners (bool, optional): as in :func:`grid_sample`; use the same
            value there. ``None`` warns and means ``False``. Default: ``None``.

    Returns:
        Tensor: the grid, ``(N, H, W, 2)`` or ``(N, D, H, W, 3)``.

    Example:
        >>> F.affine_grid(ferrograd.eye(2, 3)[None], (1, 1, 2, 2), align_corners=True)
        tensor([[[[-1., -1.],
                  [ 1., -1.]],
        <BLANKLINE>
                 [[-1.,  1.],
                  [ 1.,  1.]]]])
    """
    align_corners = _warn_align_corners(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}."
        )
    nd = len(size) - 2
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError(
            f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for size {size}. "
            f"Got {theta.shape}."
        )
    if align_corners and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. "
            "See the documentation of affine_grid for details.",
            UserWarning,
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _affine_grid_generator(theta, size, align_corners)


def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    """Normalised coordinates -> pixel coordinates (0 is the first pixel's centre)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """``coord`` folded back and forth into ``[twice_low / 2, twice_high / 2]``."""
    if twice_low == twice_high:
        return _fg.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    dist = (coord - low).abs()
    extra = dist.fmod(span)
    even = (dist / span).floor().remainder(2) == 0
    return _fg.where(even, extra + low, span - extra + low)


def _pad_coordinates(coord: Tensor, size: int, padding: int, align_corners: bool) -> Tensor:
    """Pixel coordinates moved into the input by the padding mode (border:
    clamped; reflection: reflected at the edges, then clamped)."""
    if padding == 2:
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
    if padding in (1, 2):
        coord = coord.clamp(0, size - 1)
    return coord


def _finite_coordinates(coord: Tensor) -> Tensor:
    return _fg.where(coord.isfinite() & (coord.abs() < _FAR), coord, _FAR_AWAY)


def _taps(flat: Tensor, points: list[Tensor], sizes: tuple[int, ...]) -> Tensor:
    """The values of ``flat`` (the input as ``(N, C, prod(sizes))``) at the
    integer pixel coordinates ``points`` (one ``(N, P)`` tensor per spatial
    dim), zero where a point is outside the input: ``(N, C, P)``."""
    valid = None
    index = None
    for p, size in zip(points, sizes, strict=True):
        p = p.detach()
        inside = (p >= 0) & (p <= size - 1)
        valid = inside if valid is None else valid & inside
        q = p.clamp(0, size - 1).long()
        index = q if index is None else index * size + q
    assert valid is not None and index is not None
    n, c = flat.shape[0], flat.shape[1]
    values = flat.gather(2, index.unsqueeze(1).expand(n, c, index.shape[-1]))
    return _fg.where(valid.unsqueeze(1), values, 0.0)


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """The cubic convolution weights of the 4 taps around a point at
    fraction ``t`` past the second tap."""
    a = _CUBIC_A

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sampler_checks(input: Tensor, grid: Tensor, mode: int, padding: int, rank: int | None) -> None:
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if mode not in (0, 1, 2) or padding not in (0, 1, 2):
        raise RuntimeError(
            f"grid_sampler(): expected interpolation_mode in 0-2 and padding_mode in 0-2, but got "
            f"{mode} and {padding}"
        )
    if input.dtype != grid.dtype:
        raise RuntimeError(
            f"grid_sampler(): expected input and grid to have the same dtype, but got {input.dtype} "
            f"and {grid.dtype}"
        )
    if rank is not None and (input.dim() != rank or grid.dim() != rank):
        raise RuntimeError(
            f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, but got {sizes}"
        )
    if input.dim() not in (4, 5) or grid.dim() != input.dim() or input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            f"grid_sampler(): expected grid and input to have same batch size and a 4D or 5D shape, "
            f"but got {sizes}"
        )
    nd = input.dim() - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid with sizes "
            f"{list(grid.shape)}"
        )
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes "
                f"{list(input.shape)} with dimension {d} being empty"
            )
    if mode == 2 and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        raise NotImplementedError(f"grid_sampler: not implemented for {input.dtype} input")


def _grid_sample(
    input: Tensor, grid: Tensor, mode: int, padding: int, align_corners: bool, rank: int | None = None
) -> Tensor:
    """grid_sample with torch's integer codes: ``mode`` 0 bilinear, 1
    nearest, 2 bicubic; ``padding`` 0 zeros, 1 border, 2 reflection."""
    _grid_sampler_checks(input, grid, mode, padding, rank)
    nd = input.dim() - 2
    n, c = input.shape[0], input.shape[1]
    sizes = tuple(input.shape[2:])
    out_sizes = tuple(grid.shape[1:-1])
    flat = input.reshape(n, c, math.prod(sizes))
    points = grid.reshape(n, math.prod(out_sizes), nd)
    # Pixel coordinates along each spatial dim, first spatial dim first.
    coords = [_unnormalize(points[..., nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
    if mode == 2:
        # Bicubic: 4 x 4 taps around the point; the padding mode moves the
        # taps (not the point), and rows are interpolated before columns.
        corner = [x.floor() for x in coords]
        weights = [_cubic_weights(x - x0) for x, x0 in zip(coords, corner, strict=True)]
        taps = [
            [_finite_coordinates(_pad_coordinates((x0 + (i - 1)).detach(), size, padding, align_corners))
             for i in range(4)]
            for x0, size in zip(corner, sizes, strict=True)
        ]
        out = None
        for i in range(4):
            row = None
            for j in range(4):
                term = _taps(flat, [taps[0][i], taps[1][j]], sizes) * weights[1][j].unsqueeze(1)
                row = term if row is None else row + term
            assert row is not None
            term = row * weights[0][i].unsqueeze(1)
            out = term if out is None else out + term
        assert out is not None
        return out.reshape(n, c, *out_sizes)
    coords = [
        _finite_coordinates(_pad_coordinates(x, size, padding, align_corners))
        for x, size in zip(coords, sizes, strict=True)
    ]
    if mode == 1:
        # Nearest (halves to even). The grid gets a zero derivative, as in
        # torch, through a term that is zero in value.
        nearest = [x.round() for x in coords]
        out = _taps(flat, nearest, sizes)
        if grid.requires_grad:
            zero = sum(x - x.detach() for x in nearest)
            out = out + zero.unsqueeze(1)
        return out.reshape(n, c, *out_sizes)
    # (Bi/tri)linear: the 2^nd corners around the point, each weighted by the
    # volume of the box between the point and the opposite corner.
    low = [x.floor() for x in coords]
    out = None
    for corner in itertools.product((0, 1), repeat=nd):
        weight = None
        for x, x0, upper in zip(coords, low, corner, strict=True):
            w = x - x0 if upper else x0 + 1 - x
            weight = w if weight is None else weight * w
        assert weight is not None
        term = _taps(flat, [x0 + upper for x0, upper in zip(low, corner, strict=True)], sizes)
        term = term * weight.unsqueeze(1)
        out = term if out is None else out + term
    assert out is not None
    return out.reshape(n, c, *out_sizes)


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Samples ``input`` at the points of ``grid``: ``out[n, :, h, w]`` is
    ``input[n]`` interpolated at ``grid[n, h, w] = (x, y)``, with ``x`` and
    ``y`` in ``[-1, 1]`` across the input's width and height (3-D: ``(x, y,
    z)`` across width, height and depth).

    Args:
        input (Tensor): ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        grid (Tensor): ``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)``,
            of the input's dtype.
        mode (str): ``'bilinear'`` (trilinear on 5-D inputs), ``'nearest'``
            (halves round to even) or ``'bicubic'`` (4-D inputs only).
            Default: ``'bilinear'``.
        padding_mode (str): what is read outside the input: ``'zeros'``,
            ``'border'`` (the nearest edge value) or ``'reflection'`` (the
            input mirrored at its edges). Default: ``'zeros'``.
        align_corners (bool, optional): ``True``: -1 and 1 are the centres of
            the corner pixels; ``False``: they are the outer edges of the corner
            pixels. ``None`` warns and means ``False``. Default: ``None``.

    Returns:
        Tensor: ``(N, C, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``.

    Example:
        >>> image = ferrograd.tensor([[[[0.0, 10.0], [20.0, 30.0]]]])
        >>> F.grid_sample(image, ferrograd.zeros(1, 1, 1, 2), align_corners=False)
        tensor([[[[15.]]]])
    """
    if mode not in _INTERPOLATION_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
            f"but got: '{mode}'"
        )
    if padding_mode not in _PADDING_MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    align_corners = _warn_align_corners(align_corners)
    return _grid_sample(
        input, grid, _INTERPOLATION_MODES.index(mode), _PADDING_MODES.index(padding_mode), align_corners
    )



_route(globals())
