"""NumPy references for the sampling-grid and pooling functions of
ferrograd.nn.functional, written with explicit loops over output positions
from the documented definitions: grid sampling (bilinear, nearest, bicubic;
zeros, border and reflection padding), affine grids, fractional max pooling
(torch's window-start formula) and power-average pooling."""

from __future__ import annotations

import itertools
import math

import numpy as np


def np_pixel(coord, size, align_corners):
    """A normalised coordinate in pixel units (0 is the first pixel's centre)."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def np_mirror(v, size, align_corners):
    """``v`` mirrored into the span the padding reflects at (the corner centres,
    or the outer edges), then clipped to the pixel centres."""
    lo, hi = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
    length = hi - lo
    if length == 0:
        return 0.0
    u = (v - lo) % (2 * length)
    if u > length:
        u = 2 * length - u
    return min(max(lo + u, 0.0), size - 1.0)


def np_pad(v, size, padding, align_corners):
    if padding == "border":
        return min(max(v, 0.0), size - 1.0)
    if padding == "reflection":
        return np_mirror(v, size, align_corners)
    return v


def np_read(img, idx):
    """``img[:, *idx]`` (channels first), zero outside the image."""
    if all(0 <= i < s for i, s in zip(idx, img.shape[1:], strict=True)):
        return img[(slice(None), *idx)]
    return np.zeros(img.shape[0])


def np_keys(d, a=-0.75):
    """The cubic convolution kernel at distance ``d``."""
    d = abs(d)
    if d <= 1:
        return (a + 2) * d**3 - (a + 3) * d**2 + 1
    if d < 2:
        return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return 0.0


def np_sample_point(img, point, mode, padding, align_corners):
    """One output point: ``img`` ``(C, *S)`` at the normalised ``point``
    (fastest-varying coordinate first, as a grid holds it)."""
    sizes = img.shape[1:]
    nd = len(sizes)
    p = [np_pixel(point[nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
    if mode == "bicubic":
        base = [math.floor(v) for v in p]
        out = np.zeros(img.shape[0])
        for offsets in itertools.product(range(-1, 3), repeat=nd):
            taps = [base[d] + offsets[d] for d in range(nd)]
            weight = np.prod([np_keys(p[d] - taps[d]) for d in range(nd)])
            moved = [int(round(np_pad(float(taps[d]), sizes[d], padding, align_corners))) for d in range(nd)]
            out = out + weight * np_read(img, moved)
        return out
    p = [np_pad(v, sizes[d], padding, align_corners) for d, v in enumerate(p)]
    if mode == "nearest":
        return np_read(img, [int(np.rint(v)) for v in p])
    out = np.zeros(img.shape[0])
    for corner in itertools.product((0, 1), repeat=nd):
        idx = [math.floor(v) + c for v, c in zip(p, corner, strict=True)]
        weight = np.prod([1 - abs(v - i) for v, i in zip(p, idx, strict=True)])
        out = out + weight * np_read(img, idx)
    return out


def np_grid_sample(x, grid, mode, padding, align_corners):
    n, c = x.shape[:2]
    out_sizes = grid.shape[1:-1]
    out = np.zeros((n, c, *out_sizes))
    for b in range(n):
        for pos in np.ndindex(*out_sizes):
            out[(b, slice(None), *pos)] = np_sample_point(x[b], grid[(b, *pos)], mode, padding, align_corners)
    return out


def np_affine_grid(theta, size, align_corners):
    n, spatial = size[0], size[2:]
    nd = len(spatial)

    def centre(i, steps):
        if steps == 1:
            return 0.0
        v = -1 + 2 * i / (steps - 1)
        return v if align_corners else v * (steps - 1) / steps

    out = np.zeros((n, *spatial, nd))
    for b in range(n):
        for pos in np.ndindex(*spatial):
            # (x, y[, z], 1): x along the last dim.
            point = [centre(pos[nd - 1 - d], spatial[nd - 1 - d]) for d in range(nd)] + [1.0]
            out[(b, *pos)] = theta[b] @ np.array(point)
    return out


def np_intervals(sample, size, out, kernel, dtype):
    """The window starts of fractional max pooling along one dim, with the
    arithmetic done in ``dtype`` as the documented formula states."""
    if out == 1:
        return [size - kernel]
    alpha = dtype(size - kernel) / dtype(out - 1)
    u = dtype(sample)
    starts = [int(dtype(dtype(i) + u) * alpha) - int(u * alpha) for i in range(out - 1)]
    return starts + [size - kernel]


def np_fractional_windows(x, kernel, out_sizes, samples):
    """The windows of fractional max pooling of ``x`` ``(N, C, *S)``: their
    values and flat indices, ``(N, C, *out_sizes, prod(kernel))`` each, from
    ``samples`` ``(N, C, nd)`` in torch's order (2-D: width, height)."""
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    nd = len(sizes)
    count = int(np.prod(kernel))
    values = np.zeros((n, c, *out_sizes, count), dtype=x.dtype)
    indices = np.zeros((n, c, *out_sizes, count), dtype=np.int64)
    columns = [1, 0] if nd == 2 else [0, 1, 2]
    for b, ch in np.ndindex(n, c):
        starts = [np_intervals(samples[b, ch, columns[d]], sizes[d], out_sizes[d], kernel[d], x.dtype.type)
                  for d in range(nd)]
        for pos in np.ndindex(*out_sizes):
            for j, off in enumerate(np.ndindex(*kernel)):
                at = tuple(starts[d][pos[d]] + off[d] for d in range(nd))
                values[(b, ch, *pos, j)] = x[(b, ch, *at)]
                indices[(b, ch, *pos, j)] = np.ravel_multi_index(at, sizes)
    return values, indices


def np_fractional_max_pool(x, kernel, out_sizes, samples):
    """Values and flat indices of fractional max pooling (the first of equal
    maxima in a window)."""
    values, indices = np_fractional_windows(x, kernel, out_sizes, samples)
    first = values.argmax(-1)[..., None]
    return np.take_along_axis(values, first, -1)[..., 0], np.take_along_axis(indices, first, -1)[..., 0]


def np_lp_pool(x, p, kernel, stride):
    """``(sum x^p)^(1/p)`` over the windows of ``x`` ``(N, C, *S)`` (floor mode)."""
    sizes = x.shape[2:]
    out_sizes = [(s - k) // st + 1 for s, k, st in zip(sizes, kernel, stride, strict=True)]
    out = np.zeros((*x.shape[:2], *out_sizes))
    for pos in np.ndindex(*out_sizes):
        window = x[(slice(None), slice(None), *(slice(i * st, i * st + k)
                                                for i, st, k in zip(pos, stride, kernel, strict=True)))]
        flat = window.reshape(*x.shape[:2], -1)
        out[(slice(None), slice(None), *pos)] = (
            np.abs(flat).max(-1) if p == math.inf else (flat**p).sum(-1) ** (1 / p)
        )
    return out
