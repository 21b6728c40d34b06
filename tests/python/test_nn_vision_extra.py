"""Sampling grids (affine_grid, grid_sample), fractional max pooling, 3-D max
unpooling, 3-D power-average pooling and the ``*_with_indices`` forms of
ferrograd.nn.functional, against NumPy references written here with explicit
loops over output positions; float64 central finite differences (gradcheck,
gradgradcheck, forward mode); the layers of ferrograd.nn; torch's error types
for bad input."""

from __future__ import annotations

import itertools
import math
import warnings

import ferrograd as fg
import ferrograd.nn as nn
import ferrograd.nn.functional as F
import numpy as np
import pytest
from conftest import assert_close, to_np
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import vmap
from vision_reference import np_affine_grid, np_fractional_max_pool, np_grid_sample, np_lp_pool

MODES = {2: ["bilinear", "nearest", "bicubic"], 3: ["bilinear", "nearest"]}
PADDINGS = ["zeros", "border", "reflection"]


def t64(a, grad=False):
    x = fg.tensor(np.asarray(a, dtype=np.float64))
    return x.requires_grad_(True) if grad else x


@pytest.fixture
def rng():
    return np.random.default_rng(11)


# ---------------------------------------------------------------------------
# affine_grid and grid_sample
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 2, 1, 3), (2, 1, 3, 2, 4)])
def test_affine_grid_matches_reference(rng, size, align_corners):
    nd = len(size) - 2
    theta = rng.normal(size=(size[0], nd, nd + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unit-size grids with align_corners warn
        got = F.affine_grid(t64(theta), size, align_corners=align_corners)
    assert_close(got, np_affine_grid(theta, size, align_corners), rtol=1e-12, atol=1e-12)
    assert_close(fg.affine_grid_generator(t64(theta), size, align_corners), to_np(got), rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_matches_reference_loops(rng, nd):
    for mode, padding, align_corners in itertools.product(MODES[nd], PADDINGS, (False, True)):
        sizes = (3, 4) if nd == 2 else (2, 3, 4)
        x = rng.normal(size=(2, 2, *sizes))
        # Points inside and well outside the input, and one on a pixel centre.
        grid = rng.uniform(-1.8, 1.8, size=(2, 3, *([2] * (nd - 1)), nd))
        grid[0, 0].flat[:nd] = 0.0
        got = F.grid_sample(t64(x), t64(grid), mode=mode, padding_mode=padding, align_corners=align_corners)
        want = np_grid_sample(x, grid, mode, padding, align_corners)
        assert_close(got, want, rtol=1e-10, atol=1e-12)


def test_grid_sample_float32_matches_reference(rng):
    x = rng.normal(size=(1, 3, 5, 4)).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, size=(1, 4, 3, 2)).astype(np.float32)
    for mode in MODES[2]:
        got = F.grid_sample(fg.tensor(x), fg.tensor(grid), mode=mode, padding_mode="reflection",
                            align_corners=False)
        want = np_grid_sample(x.astype(np.float64), grid.astype(np.float64), mode, "reflection", False)
        assert_close(got, want.astype(np.float32), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("nd", [2, 3])
def test_identity_affine_grid_samples_the_input_back(rng, nd, align_corners):
    size = (2, 3, 4, 5) if nd == 2 else (2, 3, 3, 4, 5)
    x = t64(rng.normal(size=size))
    theta = fg.eye(nd, nd + 1, dtype=fg.float64).expand(2, nd, nd + 1)
    grid = F.affine_grid(theta, size, align_corners=align_corners)
    for mode in MODES[nd]:
        out = F.grid_sample(x, grid, mode=mode, align_corners=align_corners)
        assert_close(out, to_np(x), rtol=1e-12, atol=1e-12)


def test_grid_sample_of_a_flipped_grid_flips_the_image(rng):
    x = rng.normal(size=(1, 2, 3, 4))
    theta = t64([[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = F.affine_grid(theta, (1, 2, 3, 4), align_corners=False)
    out = F.grid_sample(t64(x), grid, mode="nearest", align_corners=False)
    np.testing.assert_array_equal(to_np(out), x[..., ::-1])


def test_nearest_rounds_halves_to_even():
    x = t64(np.arange(4.0).reshape(1, 1, 1, 4))
    # Across 4 pixels, x = -0.5 is pixel 0.5 and x = 0 is pixel 1.5.
    grid = t64([[[[-0.5, 0.0], [0.0, 0.0]]]])
    out = F.grid_sample(x, grid, mode="nearest", align_corners=False)
    np.testing.assert_array_equal(to_np(out).ravel(), [0.0, 2.0])


def test_non_finite_points_sample_zero_in_zeros_mode():
    x = t64(np.ones((1, 1, 2, 2)))
    grid = t64([[[[math.inf, 0.0], [math.nan, 0.0], [1e30, 0.0]]]])
    out = F.grid_sample(x, grid, mode="bilinear", align_corners=False)
    np.testing.assert_array_equal(to_np(out).ravel(), [0.0, 0.0, 0.0])
    border = F.grid_sample(x, grid[..., 2:, :], padding_mode="border", align_corners=False)
    np.testing.assert_array_equal(to_np(border).ravel(), [1.0])


@pytest.mark.parametrize("nd", [2, 3])
def test_grid_sample_gradients_match_finite_differences(rng, nd):
    sizes = (3, 4) if nd == 2 else (2, 3, 2)
    x = t64(rng.normal(size=(1, 2, *sizes)), True)
    # Points kept away from pixel centres and edges, where the linear
    # interpolants have kinks.
    base = rng.uniform(-1.4, 1.4, size=(1, 2, *([2] * (nd - 1)), nd))
    for mode, padding in itertools.product(MODES[nd], PADDINGS):
        grid = t64(base, True)

        def f(a, g, mode=mode, padding=padding):
            return F.grid_sample(a, g, mode=mode, padding_mode=padding, align_corners=False)

        assert gradcheck(f, (x, grid), check_forward_ad=True)
        if nd == 2:
            assert gradgradcheck(f, (x, grid))


def test_nearest_gives_the_grid_a_zero_gradient(rng):
    x = t64(rng.normal(size=(1, 1, 3, 3)), True)
    grid = t64(rng.uniform(-1, 1, size=(1, 2, 2, 2)), True)
    out = F.grid_sample(x, grid, mode="nearest", align_corners=False)
    gx, gg = fg.autograd.grad(out.sum(), (x, grid))
    np.testing.assert_array_equal(to_np(gg), np.zeros((1, 2, 2, 2)))
    assert to_np(gx).sum() == 4.0


def test_affine_grid_gradients(rng):
    theta = t64(rng.normal(size=(2, 3, 4)), True)
    assert gradcheck(lambda t: F.affine_grid(t, (2, 1, 2, 3, 2), align_corners=False), (theta,),
                     check_forward_ad=True)
    theta2 = t64(rng.normal(size=(1, 2, 3)) * 0.5, True)
    x = t64(rng.normal(size=(1, 2, 4, 4)), True)

    def warp(t, a):
        return F.grid_sample(a, F.affine_grid(t, (1, 2, 3, 3), align_corners=True), align_corners=True)

    assert gradcheck(warp, (theta2, x))
    assert gradgradcheck(warp, (theta2, x))


def test_grid_sample_under_vmap_matches_a_loop(rng):
    x = t64(rng.normal(size=(3, 1, 2, 3, 4)))
    grid = t64(rng.uniform(-1.2, 1.2, size=(3, 1, 2, 2, 2)))
    for mode in MODES[2]:
        def f(a, g, mode=mode):
            return F.grid_sample(a, g, mode=mode, padding_mode="reflection", align_corners=True)

        batched = vmap(f)(x, grid)
        looped = fg.stack([f(x[i], grid[i]) for i in range(3)])
        assert_close(batched, to_np(looped), rtol=0, atol=0)


def test_torch_level_grid_sampler_takes_integer_modes(rng):
    x = t64(rng.normal(size=(1, 2, 3, 3)))
    grid = t64(rng.uniform(-1.2, 1.2, size=(1, 2, 2, 2)))
    for (m, mode), (p, padding) in itertools.product(enumerate(MODES[2]), enumerate(PADDINGS)):
        want = to_np(F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=True))
        assert_close(fg.grid_sampler(x, grid, m, p, True), want, rtol=0, atol=0)
        assert_close(fg.grid_sampler_2d(x, grid, m, p, True), want, rtol=0, atol=0)
    x3, grid3 = t64(np.ones((1, 1, 2, 2, 2))), t64(np.zeros((1, 1, 1, 1, 3)))
    assert_close(fg.grid_sampler_3d(x3, grid3, 0, 0, False), np.ones((1, 1, 1, 1, 1)))
    with pytest.raises(RuntimeError, match="expected 4D input"):
        fg.grid_sampler_2d(x3, grid3, 0, 0, False)
    with pytest.raises(RuntimeError, match="expected 5D input"):
        fg.grid_sampler_3d(x, grid, 0, 0, False)
    with pytest.raises(RuntimeError, match="interpolation_mode"):
        fg.grid_sampler(x, grid, 3, 0, False)


def test_grid_sample_empty_batch_and_channels():
    out = F.grid_sample(fg.zeros(0, 2, 3, 3), fg.zeros(0, 4, 5, 2), align_corners=False)
    assert tuple(out.shape) == (0, 2, 4, 5)
    out = F.grid_sample(fg.zeros(2, 0, 3, 3), fg.zeros(2, 4, 5, 2), align_corners=False)
    assert tuple(out.shape) == (2, 0, 4, 5)


def test_align_corners_none_warns_and_means_false(rng):
    x = t64(rng.normal(size=(1, 1, 3, 3)))
    grid = t64(rng.uniform(-1, 1, size=(1, 2, 2, 2)))
    with pytest.warns(UserWarning, match="align_corners=False"):
        out = F.grid_sample(x, grid)
    assert_close(out, to_np(F.grid_sample(x, grid, align_corners=False)), rtol=0, atol=0)
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.affine_grid(fg.eye(2, 3)[None], (1, 1, 2, 2))


def test_grid_functions_reject_bad_arguments():
    x, grid = fg.zeros(2, 1, 3, 3), fg.zeros(2, 2, 2, 2)
    with pytest.raises(ValueError, match="expected mode"):
        F.grid_sample(x, grid, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, grid, padding_mode="circular", align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D"):
        F.grid_sample(fg.zeros(1, 1, 2, 2, 2), fg.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match="same dtype"):
        F.grid_sample(x, grid.double(), align_corners=False)
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x, grid[:1], align_corners=False)
    with pytest.raises(RuntimeError, match="size 2 in last dimension"):
        F.grid_sample(x, fg.zeros(2, 2, 2, 3), align_corners=False)
    with pytest.raises(RuntimeError, match="non-empty spatial dimensions"):
        F.grid_sample(fg.zeros(2, 1, 0, 3), grid, align_corners=False)
    with pytest.raises(RuntimeError, match="not implemented"):
        F.grid_sample(x.long(), grid.long(), align_corners=False)
    theta = fg.zeros(2, 2, 3)
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(fg.zeros(2, 3, 3), (2, 1, 4, 4), align_corners=False)
    with pytest.raises(ValueError, match="Nx3x4"):
        F.affine_grid(theta, (2, 1, 4, 4, 4), align_corners=False)
    with pytest.raises(NotImplementedError, match="4D and 5D"):
        F.affine_grid(theta, (2, 1, 4), align_corners=False)
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(theta.long(), (2, 1, 4, 4), align_corners=False)
    with pytest.raises(ValueError, match="positive output size"):
        F.affine_grid(theta, (2, 1, 0, 4), align_corners=False)
    with pytest.raises(RuntimeError, match="theta of shape"):
        F.affine_grid(theta, (3, 1, 4, 4), align_corners=False)
    with pytest.raises(RuntimeError, match="4d"):
        fg.affine_grid_generator(theta, (2, 1, 4), False)


# ---------------------------------------------------------------------------
# Fractional max pooling
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "nd, sizes, kernel, out",
    [(2, (7, 9), (2, 3), (4, 5)), (2, (6, 6), (3, 3), (4, 4)), (2, (5, 8), (1, 2), (1, 7)),
     (3, (5, 6, 7), (2, 2, 3), (3, 4, 2)), (3, (4, 4, 5), (1, 2, 2), (3, 2, 3))],
)
def test_fractional_max_pool_matches_reference(rng, nd, sizes, kernel, out, dtype):
    # Integer values make ties, which go to the first element of a window.
    x = rng.integers(-4, 5, size=(2, 3, *sizes)).astype(dtype)
    samples = rng.random(size=(2, 3, nd)).astype(dtype)
    pool = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    values, indices = pool(fg.tensor(x), kernel, output_size=out, return_indices=True,
                           _random_samples=fg.tensor(samples))
    want_values, want_indices = np_fractional_max_pool(x, kernel, out, samples)
    np.testing.assert_array_equal(to_np(values), want_values)
    np.testing.assert_array_equal(to_np(indices), want_indices)
    with_indices = F.fractional_max_pool2d_with_indices if nd == 2 else F.fractional_max_pool3d_with_indices
    pair = with_indices(fg.tensor(x), kernel, output_size=out, _random_samples=fg.tensor(samples))
    np.testing.assert_array_equal(to_np(pair[1]), want_indices)


def test_fractional_max_pool_gradient_goes_to_the_maxima(rng):
    x = t64(rng.normal(size=(2, 2, 7, 6)), True)
    samples = t64(rng.random(size=(2, 2, 2)))
    values, indices = F.fractional_max_pool2d(x, 2, output_size=(4, 3), return_indices=True,
                                              _random_samples=samples)
    upstream = rng.normal(size=values.shape)
    (values * t64(upstream)).sum().backward()
    want = np.zeros((2, 2, 42))
    flat_idx = to_np(indices).reshape(2, 2, -1)
    for b, c in np.ndindex(2, 2):
        np.add.at(want[b, c], flat_idx[b, c], upstream.reshape(2, 2, -1)[b, c])
    assert_close(x.grad, want.reshape(2, 2, 7, 6), rtol=1e-12, atol=1e-12)

    def f(a):
        return F.fractional_max_pool2d(a, 2, output_size=(4, 3), _random_samples=samples)

    assert gradcheck(f, (x,), check_forward_ad=True)
    assert gradgradcheck(f, (x,))
    x3 = t64(rng.normal(size=(1, 2, 4, 5, 4)), True)
    s3 = t64(rng.random(size=(1, 2, 3)))
    assert gradcheck(lambda a: F.fractional_max_pool3d(a, 2, output_size=(2, 3, 2), _random_samples=s3),
                     (x3,), check_forward_ad=True)


def test_fractional_max_pool_output_ratio_unbatched_and_drawn_samples(rng):
    x = t64(rng.normal(size=(3, 11, 10)))
    assert tuple(F.fractional_max_pool2d(x, 2, output_ratio=0.5).shape) == (3, 5, 5)
    assert tuple(F.fractional_max_pool2d(x, 2, output_ratio=(0.3, 0.7)).shape) == (3, 3, 7)
    volume = t64(np.ones((2, 8, 9, 10)))
    assert tuple(F.fractional_max_pool3d(volume, 2, output_ratio=0.5).shape) == (2, 4, 4, 5)
    # Without samples, one uniform draw of shape (N, C, nd) places the windows.
    fg.manual_seed(3)
    drawn = F.fractional_max_pool2d(x, 3, output_size=4, return_indices=True)[1]
    fg.manual_seed(3)
    samples = fg.rand(1, 3, 2, dtype=fg.float64)
    given = F.fractional_max_pool2d(x, 3, output_size=4, return_indices=True, _random_samples=samples)[1]
    np.testing.assert_array_equal(to_np(drawn), to_np(given))
    batched = F.fractional_max_pool2d(x[None], 3, output_size=4, _random_samples=samples)
    assert_close(batched[0], to_np(F.fractional_max_pool2d(x, 3, output_size=4, _random_samples=samples)))


def test_fractional_max_pool_rejects_bad_arguments():
    x = fg.zeros(2, 3, 7, 8)
    with pytest.raises(ValueError, match="output_size or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with pytest.raises(RuntimeError, match="too large"):
        F.fractional_max_pool2d(x, 3, output_size=6)
    with pytest.raises(RuntimeError, match="too large"):  # 3-D windows must end inside the input
        F.fractional_max_pool3d(fg.zeros(1, 5, 6, 7), 1, output_size=(5, 6, 6))
    with pytest.raises(RuntimeError, match="kernel_size"):
        F.fractional_max_pool2d(x, (2, 2, 2), output_size=3)
    with pytest.raises(RuntimeError, match="size\\(2\\)"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=fg.rand(2, 3, 3))
    with pytest.raises(RuntimeError, match="size\\(0\\)"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=fg.rand(1, 3, 2))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=fg.rand(2, 3, 2, dtype=fg.float64))
    with pytest.raises(RuntimeError, match="3D or 4D"):
        F.fractional_max_pool2d(fg.zeros(7, 8), 2, output_size=3)
    with pytest.raises(RuntimeError, match="non-zero size"):
        F.fractional_max_pool2d(fg.zeros(2, 3, 0, 8), 2, output_size=3)


def test_fractional_max_pool_layers(rng):
    x = t64(rng.normal(size=(2, 3, 9, 8)))
    samples = t64(rng.random(size=(2, 3, 2)))
    layer = nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True, _random_samples=samples)
    assert "_random_samples" in layer.state_dict()
    values, indices = layer(x)
    want = F.fractional_max_pool2d(x, 3, output_size=(4, 5), return_indices=True, _random_samples=samples)
    np.testing.assert_array_equal(to_np(indices), to_np(want[1]))
    assert tuple(nn.FractionalMaxPool3d(2, output_ratio=0.5)(t64(np.ones((1, 2, 6, 6, 8)))).shape) == (
        1, 2, 3, 3, 4)
    with pytest.raises(ValueError, match="output size, or a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError, match="only one of"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)


# ---------------------------------------------------------------------------
# Unpooling, power-average pooling, the *_with_indices forms
# ---------------------------------------------------------------------------


def test_max_unpool3d_puts_the_maxima_back(rng):
    x = rng.normal(size=(2, 3, 4, 6, 5))
    values, indices = F.max_pool3d(t64(x), 2, return_indices=True)
    restored = F.max_unpool3d(values, indices, 2, output_size=x.shape[2:])
    want = np.zeros((2, 3, 120))
    np.put_along_axis(want, to_np(indices).reshape(2, 3, -1), to_np(values).reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(to_np(restored), want.reshape(x.shape))
    # Each restored value is the maximum of the window it sits in.
    for pos in np.ndindex(2, 3, 2, 3, 2):
        b, c, i, j, k = pos
        window = x[b, c, 2 * i: 2 * i + 2, 2 * j: 2 * j + 2, 2 * k: 2 * k + 2]
        assert to_np(values)[pos] == window.max()
    layer = nn.MaxUnpool3d(2)
    assert_close(layer(values, indices, output_size=x.shape), to_np(restored), rtol=0, atol=0)
    assert gradcheck(lambda v: F.max_unpool3d(v, indices, 2, output_size=x.shape[2:]),
                     (t64(to_np(values), True),), check_forward_ad=True)
    unbatched = F.max_unpool3d(values[0], indices[0], 2, output_size=x.shape[2:])
    assert_close(unbatched, to_np(restored)[0], rtol=0, atol=0)


def test_max_unpool_layers_match_the_functions(rng):
    x1 = t64(rng.normal(size=(2, 3, 8)))
    v1, i1 = F.max_pool1d(x1, 2, return_indices=True)
    assert_close(nn.MaxUnpool1d(2)(v1, i1), to_np(F.max_unpool1d(v1, i1, 2)), rtol=0, atol=0)
    x2 = t64(rng.normal(size=(2, 3, 4, 6)))
    v2, i2 = F.max_pool2d(x2, 2, stride=1, return_indices=True)
    unpooled = nn.MaxUnpool2d(2, stride=1)(v2, i2)
    assert_close(unpooled, to_np(F.max_unpool2d(v2, i2, 2, stride=1)), rtol=0, atol=0)
    assert repr(nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"


def test_max_unpool_rejects_bad_arguments(rng):
    values, indices = F.max_pool3d(t64(rng.normal(size=(1, 2, 4, 4, 4))), 2, return_indices=True)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool3d(values, indices, 2, output_size=(6, 4, 4))
    with pytest.raises(ValueError, match="3 or 5 elements"):
        F.max_unpool3d(values, indices, 2, output_size=(4, 4))
    with pytest.raises(RuntimeError, match="int64"):
        F.max_unpool3d(values, indices.int(), 2)
    with pytest.raises(RuntimeError, match="same as that of the input"):
        F.max_unpool3d(values, indices[..., :1], 2)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool3d(values, indices + 64, 2)
    with pytest.raises(RuntimeError, match="4d or 5d"):
        F.max_unpool3d(values[0, 0], indices[0, 0], 2)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(t64([[[1.0]]]), fg.tensor([[[-1]]]), 1)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf])
def test_lp_pool3d_matches_reference(rng, p):
    x = rng.uniform(0.1, 2.0, size=(2, 2, 4, 5, 4))
    got = F.lp_pool3d(t64(x), p, (2, 3, 2), stride=(2, 1, 2))
    want = np_lp_pool(x, p, (2, 3, 2), (2, 1, 2))
    assert_close(got, want, rtol=1e-10, atol=1e-12)
    assert_close(nn.LPPool3d(p, (2, 3, 2), stride=(2, 1, 2))(t64(x)), want, rtol=1e-10, atol=1e-12)
    if p != math.inf:
        assert gradcheck(lambda a: F.lp_pool3d(a, p, 2), (t64(x[:1, :1], True),), check_forward_ad=True)


def test_lp_pool_layers_and_infinite_norms(rng):
    x = rng.uniform(-2.0, 2.0, size=(2, 3, 6, 4))
    want = np_lp_pool(x, math.inf, (2, 2), (2, 2))
    assert_close(F.lp_pool2d(t64(x), math.inf, 2), want, rtol=0, atol=0)
    assert_close(nn.LPPool2d(math.inf, 2)(t64(x)), want, rtol=0, atol=0)
    smallest = np.abs(x).reshape(2, 3, 3, 2, 2, 2).min(axis=(3, 5))
    assert_close(F.lp_pool2d(t64(x), -math.inf, 2), smallest, rtol=0, atol=0)
    x1 = rng.uniform(0.1, 2.0, size=(2, 3, 6))
    assert_close(nn.LPPool1d(2.0, 3)(t64(x1)), np_lp_pool(x1[:, :, None], 2.0, (1, 3), (1, 3))[:, :, 0],
                 rtol=1e-12, atol=1e-12)
    assert "norm_type=2.0, kernel_size=3" in repr(nn.LPPool1d(2.0, 3))


def test_with_indices_forms_return_values_and_indices(rng):
    x1, x2, x3 = (t64(rng.normal(size=(2, 3, *([4] * nd)))) for nd in (1, 2, 3))
    pairs = [
        (F.max_pool1d_with_indices(x1, 2), F.max_pool1d(x1, 2, return_indices=True)),
        (F.max_pool2d_with_indices(x2, 2, 1), F.max_pool2d(x2, 2, 1, return_indices=True)),
        (F.max_pool3d_with_indices(x3, 2), F.max_pool3d(x3, 2, return_indices=True)),
        (F.adaptive_max_pool1d_with_indices(x1, 3), F.adaptive_max_pool1d(x1, 3, return_indices=True)),
        (F.adaptive_max_pool2d_with_indices(x2, 3), F.adaptive_max_pool2d(x2, 3, return_indices=True)),
        (F.adaptive_max_pool3d_with_indices(x3, 3), F.adaptive_max_pool3d(x3, 3, return_indices=True)),
    ]
    for got, want in pairs:
        assert len(got) == 2
        np.testing.assert_array_equal(to_np(got[0]), to_np(want[0]))
        np.testing.assert_array_equal(to_np(got[1]), to_np(want[1]))


def test_native_channel_shuffle_is_channel_shuffle():
    x = fg.arange(12.0).reshape(1, 6, 2)
    want = to_np(x).reshape(1, 2, 3, 2).transpose(0, 2, 1, 3).reshape(1, 6, 2)
    np.testing.assert_array_equal(to_np(F.native_channel_shuffle(x, 2)), want)
    np.testing.assert_array_equal(to_np(fg.native_channel_shuffle(x, 2)), want)
    with pytest.raises(RuntimeError, match="divisible by groups"):
        fg.native_channel_shuffle(x, 4)
