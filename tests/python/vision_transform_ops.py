"""The sampling-grid and pooling ops of the transform-composition programs
(``transform_programs.py``): grid_sample (the program's value as the image,
or as the sampling points), affine_grid of a map made from the value,
fractional max pooling, max unpooling through the ``*_with_indices`` forms,
3-D power-average pooling and the channel shuffle, each offered for a
vector or matrix shape ``s`` through ``add(name, fn, out_shape)``.
"""

from __future__ import annotations

import math

import ferrograd as torch
import ferrograd.nn.functional as F

PADDINGS = ["zeros", "border", "reflection"]


def vision_ops(rng, s, add, const):
    """Offers the ops applicable to shape ``s``; ``const(rng, *shape,
    scale=...)`` makes a float64 constant."""
    d = len(s)
    padding = PADDINGS[int(rng.integers(3))]
    align = bool(rng.random() < 0.5)
    mode2 = ["bilinear", "nearest", "bicubic"][int(rng.integers(3))]
    mode3 = ["bilinear", "nearest"][int(rng.integers(2))]
    m = int(rng.integers(1, 5))
    tag = f"{padding}, align_corners={align}"

    def sample(image, grid, mode):
        return F.grid_sample(image, grid, mode=mode, padding_mode=padding, align_corners=align)

    # An affine map made from the value (a constant map plus a linear
    # function of it), its grid, and an image sampled through that grid.
    n = math.prod(s)
    lift = const(rng, n, 6, scale=0.3 / math.sqrt(n))
    base = torch.tensor([[[1.0, 0.2, 0.1], [-0.1, 0.9, 0.0]]], dtype=torch.float64)
    h, w = int(rng.integers(2, 4)), int(rng.integers(2, 5))

    def theta(t, lift=lift, base=base):
        return base + (t.reshape(-1) @ lift).reshape(1, 2, 3)

    add(f"affine_grid(align_corners={align})",
        lambda t: F.affine_grid(theta(t), (1, 1, h, w), align_corners=align).reshape(h * w, 2), (h * w, 2))
    image = const(rng, 1, 2, 3, 4)
    add(f"affine_warp({mode2}, {tag})",
        lambda t: sample(image, F.affine_grid(theta(t), (1, 2, h, w), align_corners=align), mode2)
        .reshape(2, h * w), (2, h * w))
    lift3 = const(rng, n, 12, scale=0.3 / math.sqrt(n))
    base3 = torch.eye(3, 4, dtype=torch.float64)[None]
    add(f"affine_grid_3d(align_corners={align})",
        lambda t: F.affine_grid(base3 + (t.reshape(-1) @ lift3).reshape(1, 3, 4), (1, 1, 2, 2, 2),
                                align_corners=align).reshape(8, 3), (8, 3))
    if d == 1:
        (k,) = s
        # The value as sampling points: x from it, y (and z) constant.
        ys = const(rng, k, scale=0.6)
        add(f"grid_sample_points({mode2}, {tag})",
            lambda t: sample(image, torch.stack([1.2 * torch.tanh(t), ys], -1)[None, None], mode2)[0, :, 0],
            (2, k))
        volume = const(rng, 1, 1, 2, 3, 3)
        add(f"grid_sample_points_3d({mode3}, {tag})",
            lambda t: sample(volume, torch.stack([1.2 * torch.tanh(t), ys, t.sin()], -1)[None, None, None],
                             mode3).reshape(k), (k,))
        ker = min(2, k)

        def unpool1d(t):
            values, indices = F.max_pool1d_with_indices(t[None, None], ker)
            return F.max_unpool1d(values, indices, ker, output_size=(k,))[0, 0]

        add("max_unpool1d", unpool1d, s)
        return
    r, c = s
    # The value as an image, sampled at constant points (some outside it).
    points = const(rng, 1, 1, m, 2, scale=0.8)
    add(f"grid_sample({mode2}, {tag})", lambda t: sample(t[None, None], points, mode2).reshape(m), (m,))
    points3 = const(rng, 1, 1, 1, m, 3, scale=0.8)
    add(f"grid_sample_3d({mode3}, {tag})",
        lambda t: sample(t[None, None, None], points3, mode3).reshape(m), (m,))
    # Pooling: fractional windows placed by constant samples, max unpooling
    # of max and adaptive max pooling, and power-average pooling in 3-D.
    kernel = (min(2, r), min(2, c))
    out = (int(rng.integers(1, r - kernel[0] + 2)), int(rng.integers(1, c - kernel[1] + 2)))
    samples = torch.tensor(rng.random((1, 1, 2)), dtype=torch.float64)

    def fractional2d(t):
        return F.fractional_max_pool2d(t[None, None], kernel, output_size=out, _random_samples=samples)[0, 0]

    add(f"fractional_max_pool2d({out})", fractional2d, out)
    if r >= 2 and c >= 2:
        out3 = (int(rng.integers(1, r)), int(rng.integers(1, c)), 1)
        samples3 = torch.tensor(rng.random((1, 1, 3)), dtype=torch.float64)

        def fractional3d(t):
            volume = torch.stack([t, t.sin()], -1)[None, None]
            pair = F.fractional_max_pool3d_with_indices(volume, 1, output_size=out3, _random_samples=samples3)
            return pair[0][0, 0, :, :, 0]

        add(f"fractional_max_pool3d({out3})", fractional3d, out3[:2])

    def unpool2d(t):
        values, indices = F.max_pool2d_with_indices(t[None, None], kernel)
        return F.max_unpool2d(values, indices, kernel, output_size=s)[0, 0]

    def unpool3d(t):
        values, indices = F.max_pool3d_with_indices(torch.stack([t, t.cos()])[None, None], (2, *kernel))
        return F.max_unpool3d(values, indices, (2, *kernel), output_size=(2, r, c))[0, 0].sum(0)

    add("max_unpool2d", unpool2d, s)
    add("max_unpool3d", unpool3d, s)
    half = ((r + 1) // 2, (c + 1) // 2)
    add("adaptive_max_pool2d_with_indices",
        lambda t: F.adaptive_max_pool2d_with_indices(t[None], half)[0][0], half)
    p = [1.0, 2.0, 3.5][int(rng.integers(3))]

    def lp3d(t):
        volume = torch.stack([t * t + 0.5, t.cos() + 1.5])[None, None]
        return F.lp_pool3d(volume, p, (2, *kernel))[0, 0, 0]

    add(f"lp_pool3d(p={p})", lp3d, (r // kernel[0], c // kernel[1]))
    if r % 2 == 0:
        add("native_channel_shuffle", lambda t: F.native_channel_shuffle(t[None], 2)[0], s)
