"""The sampling-grid and pooling composites of the in-place/view program
fuzzer (see ``inplace_composites.py``): grid_sample, affine_grid, fractional
max pooling, max unpooling (through the ``*_with_indices`` forms) and 3-D
power-average pooling of a slot ``a`` with a constant ``c``, each as
ferrograd (or torch) computes it and by its formula in NumPy, which also
rejects inputs near a kink while programs are generated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from vision_reference import np_affine_grid, np_fractional_windows, np_grid_sample, np_lp_pool, np_pixel

VISION_COMPOSITES = ["grid_sample", "affine_grid", "fractional_max_pool", "max_unpool", "lp_pool3d"]
VISION_NDIMS = {
    "grid_sample": (2, 3), "affine_grid": (1, 2, 3), "fractional_max_pool": (2, 3), "max_unpool": (1, 2, 3),
    "lp_pool3d": (2, 3),
}  # fmt: skip
PADDINGS = ["zeros", "border", "reflection"]
KINK_MARGIN = 1e-2


def _row(a: Any, end: int) -> Any:
    """``a[e, ..., e, :]`` with ``e`` = ``end`` (0 or -1): a 1-D view of a row."""
    return a[(end,) * (a.ndim - 1)]


def _grid_settings(a: Any, c: float) -> tuple[str, str, bool, bool]:
    """Mode, padding mode, align_corners and whether a 3-D slot is a volume
    (else its first dim is channels), all read off the constant."""
    digits = int(round(abs(c) * 1000))
    mode = "nearest" if c < -0.5 else "bilinear"
    return mode, PADDINGS[digits % 3], digits % 2 == 1, a.ndim == 3 and c >= 0


def _grid_points(T: Any, a: Any, c: float) -> tuple[Any, Any]:
    """The image (``(1, C, *S)``) and grid (``(1, 1, [1,] W, nd)``) a slot makes:
    the points' coordinates come from its first and last rows."""
    *_, volume = _grid_settings(a, c)
    first, last = _row(a, 0), _row(a, -1)
    coords = [1.3 * T.tanh(first + c), 1.3 * T.tanh(last - c)]
    if volume:
        coords.append(1.3 * T.tanh(first * last))
        return a[None, None], T.stack(coords, -1)[None, None, None]
    image = a[None, None] if a.ndim == 2 else a[None]
    return image, T.stack(coords, -1)[None, None]


def _sample_by_gather(T: Any, image: Any, grid: Any, mode: str, padding: str, align: bool) -> Any:
    """grid_sample (bilinear or nearest) written with indexing, for torch
    (whose grid_sample has no forward mode)."""
    sizes = image.shape[2:]
    nd = len(sizes)
    flat = image.reshape(image.shape[1], -1)
    pts = grid.reshape(-1, nd)
    coords = []
    for d in range(nd):
        v = pts[:, nd - 1 - d]
        n = sizes[d]
        v = (v + 1) / 2 * (n - 1) if align else ((v + 1) * n - 1) / 2
        if padding == "border":
            v = v.clamp(0, n - 1)
        elif padding == "reflection":
            lo, length = (0.0, n - 1.0) if align else (-0.5, float(n))
            if length == 0:
                v = v * 0
            else:
                u = T.remainder(v - lo, 2 * length)
                v = (lo + T.where(u > length, 2 * length - u, u)).clamp(0, n - 1)
        coords.append(v)
    corners = [[0] * nd] if mode == "nearest" else [list(b) for b in np.ndindex(*([2] * nd))]
    out = 0
    for corner in corners:
        index, valid, weight = 0, True, 1
        for d in range(nd):
            if mode == "nearest":
                at = T.round(coords[d]).detach()
            else:
                at = T.floor(coords[d]).detach() + corner[d]
                weight = weight * (1 - (coords[d] - at).abs())
            valid = valid & (at >= 0) & (at <= sizes[d] - 1)
            index = index * sizes[d] + at.clamp(0, sizes[d] - 1).long()
        out = out + T.where(valid, flat[:, index] * weight, 0.0)
    return out


def _affine_theta(M: Any, a: Any, c: float) -> tuple[Any, tuple[int, ...]]:
    """The affine map (and output size, 12 points) of ``affine_grid``: its
    entries are smooth statistics of the slot (``M``: the tensor module or
    NumPy)."""
    u = a.reshape(-1)
    s1, s2, s3 = u.mean(), (u * u).mean(), M.sin(u).mean()
    if a.ndim == 3:
        entries = [1 + 0.3 * s1, 0.2 * s2, 0.1 * c + s3, 0.3 * s3, 0.5 * s1 * s2, 1 - 0.2 * s1, s2 * s3,
                   0.1 * c * s1, -0.4 * s3, 0.2 * s1, 1 + 0.1 * s2, s1 - s3]
        return M.stack(entries).reshape(1, 3, 4), (1, 1, 2, 2, 3)
    entries = [1 + 0.3 * s1, 0.2 * s2, 0.1 * c + 0.2 * s3, 0.3 * s3, 1 - 0.2 * s1, 0.5 * s2 * s3]
    return M.stack(entries).reshape(1, 2, 3), (1, 1, 3, 4)


def _pool_plan(shape: tuple[int, ...], c: float) -> tuple[int, list[int], list[int]]:
    """Fractional max pooling of a slot of ``shape``: its spatial rank (the
    other dims are channels), kernel and output size."""
    if len(shape) == 3 and min(shape) >= 2:  # 3-D windows must end inside the input
        kernel = [min(2, s - 1) for s in shape]
        return 3, kernel, [s - k if c >= 0 else 1 for s, k in zip(shape, kernel, strict=True)]
    spatial = shape[-2:]
    kernel = [min(2, s) for s in spatial]
    return 2, kernel, [s - k + 1 if c >= 0 else max(1, (s - k + 2) // 2) for s, k in zip(spatial, kernel,
                                                                                        strict=True)]


def _samples(nd: int, channels: int, c: float) -> np.ndarray:
    return np.full((1, channels, nd), (abs(c) * 0.61) % 1.0)


def torch_vision(T: Any, name: str, a: Any, c: float) -> Any:
    """Composite ``name`` of slot ``a`` with constant ``c`` on the tensor module ``T``."""
    F = T.nn.functional
    if name == "grid_sample":
        mode, padding, align, _ = _grid_settings(a, c)
        image, grid = _grid_points(T, a, c)
        if T.__name__ == "torch":
            out = _sample_by_gather(T, image, grid, mode, padding, align)
        else:
            out = F.grid_sample(image, grid, mode=mode, padding_mode=padding, align_corners=align)
        return out.reshape(-1, a.shape[-1])
    if name == "affine_grid":
        theta, size = _affine_theta(T, a, c)
        return F.affine_grid(theta, size, align_corners=c >= 0).reshape(12, -1)
    if name == "fractional_max_pool":
        nd, kernel, out = _pool_plan(tuple(a.shape), c)
        x = a[None, None] if nd == 3 or a.ndim == 2 else a[None]
        samples = T.tensor(_samples(nd, x.shape[1], c).tolist(), dtype=a.dtype)
        if nd == 2:
            pool = F.fractional_max_pool2d if c >= 0 else F.fractional_max_pool2d_with_indices
        else:
            pool = F.fractional_max_pool3d if c >= 0 else F.fractional_max_pool3d_with_indices
        result = pool(x, kernel, output_size=out, _random_samples=samples)
        return (result if c >= 0 else result[0])[0].reshape(-1, out[-1])
    if name == "max_unpool":
        # Each window's maximum back in its place, zeros elsewhere: windows
        # of max pooling (c >= 0) or of adaptive max pooling.
        nd = a.ndim
        x = a[None, None]
        if c >= 0:
            pool = (F.max_pool1d_with_indices, F.max_pool2d_with_indices, F.max_pool3d_with_indices)[nd - 1]
            kernel = [min(2, s) for s in a.shape]
            values, indices = pool(x, kernel)
        else:
            pool = (F.adaptive_max_pool1d_with_indices, F.adaptive_max_pool2d_with_indices,
                    F.adaptive_max_pool3d_with_indices)[nd - 1]
            kernel = [2] * nd
            values, indices = pool(x, [(s + 1) // 2 for s in a.shape])
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[nd - 1]
        return unpool(values, indices, kernel, output_size=tuple(a.shape))[0, 0]
    if name == "lp_pool3d":
        x = (a * a + 0.5)[None, None] if a.ndim == 3 else (a * a + 0.5)[None, None, None]
        kernel = [min(2, s) for s in x.shape[2:]]
        out = F.lp_pool3d(x, 1.5 + abs(c), kernel)
        return out.reshape(-1, out.shape[-1])
    raise ValueError(name)


def _near_kink(v: np.ndarray, step: float) -> bool:
    """Whether a value of ``v`` is within the margin of a multiple of ``step``."""
    v = np.asarray(v, dtype=float)
    return bool(v.size) and np.abs(v / step - np.round(v / step)).min() * step < KINK_MARGIN


def _window_ties(windows: np.ndarray) -> bool:
    """Whether a window's two largest values are within the margin."""
    if windows.shape[-1] < 2 or windows.size == 0:
        return False
    top = np.sort(windows, -1)
    return bool((top[..., -1] - top[..., -2]).min() < KINK_MARGIN)


def _max_windows(shape: tuple[int, ...], c: float) -> list[list[np.ndarray]]:
    """The windows (as index arrays per dim) of the ``max_unpool`` composite."""
    per_dim = []
    for s in shape:
        if c >= 0:
            k = min(2, s)
            per_dim.append([np.arange(i * k, i * k + k) for i in range(s // k)])
        else:
            o = (s + 1) // 2
            per_dim.append([np.arange(i * s // o, -(-(i + 1) * s // o)) for i in range(o)])
    return per_dim


def numpy_vision(be: Any, name: str, a: np.ndarray, c: float) -> np.ndarray:
    """The same composite by its formula in NumPy (``be``: the NumPy backend)."""
    if name == "grid_sample":
        mode, padding, align, _ = _grid_settings(a, c)
        image, grid = _grid_points(np, a, c)
        sizes = image.shape[2:]
        pixels = [np_pixel(grid[..., len(sizes) - 1 - d], sizes[d], align) for d in range(len(sizes))]
        be.reject_if(any(_near_kink(p, 0.5) for p in pixels), "grid_sample: a point near a kink")
        return np_grid_sample(image, grid, mode, padding, align).reshape(-1, a.shape[-1])
    if name == "affine_grid":
        theta, size = _affine_theta(np, a, c)
        return np_affine_grid(theta, size, c >= 0).reshape(12, -1)
    if name == "fractional_max_pool":
        nd, kernel, out = _pool_plan(a.shape, c)
        x = a[None, None] if nd == 3 or a.ndim == 2 else a[None]
        windows, _ = np_fractional_windows(x, kernel, out, _samples(nd, x.shape[1], c))
        be.reject_if(_window_ties(windows), "fractional_max_pool: a tie in a window")
        return windows.max(-1)[0].reshape(-1, out[-1])
    if name == "max_unpool":
        out = np.zeros_like(a)
        for window in np.ndindex(*(len(w) for w in _max_windows(a.shape, c))):
            spans = [w[i] for w, i in zip(_max_windows(a.shape, c), window, strict=True)]
            block = a[np.ix_(*spans)]
            top = np.sort(block.reshape(-1))
            be.reject_if(top.size > 1 and top[-1] - top[-2] < KINK_MARGIN, "max_unpool: a tie in a window")
            peak = np.unravel_index(block.argmax(), block.shape)
            at = tuple(s[i] for s, i in zip(spans, peak, strict=True))
            # (An element that is the maximum of two overlapping windows is put
            # back twice, and its derivative counted twice, by torch as here.)
            be.reject_if(out[at] != 0, "max_unpool: the maximum of two windows")
            out[at] = block.max()
        return out
    if name == "lp_pool3d":
        x = (a * a + 0.5)[None, None] if a.ndim == 3 else (a * a + 0.5)[None, None, None]
        kernel = [min(2, s) for s in x.shape[2:]]
        out = np_lp_pool(x, 1.5 + abs(c), kernel, kernel)
        return out.reshape(-1, out.shape[-1])
    raise ValueError(name)
