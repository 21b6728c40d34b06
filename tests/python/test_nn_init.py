"""ferrograd.nn.init: fan and gain formulas, bounds and moments of the random
initialisers on large tensors, structure of the deterministic ones
(identity, Dirac, orthogonality), and that every initialiser works in
place under no_grad and draws from the global (or a given) generator."""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.nn.functional as F
import ferrograd.nn.init as init
import numpy as np
import pytest
from conftest import to_np


@pytest.mark.parametrize(
    ("name", "param", "expected"),
    [
        ("linear", None, 1.0),
        ("conv2d", None, 1.0),
        ("conv_transpose3d", None, 1.0),
        ("sigmoid", None, 1.0),
        ("tanh", None, 5.0 / 3.0),
        ("relu", None, math.sqrt(2.0)),
        ("leaky_relu", None, math.sqrt(2.0 / (1 + 0.01**2))),
        ("leaky_relu", 0.2, math.sqrt(2.0 / 1.04)),
        ("leaky_relu", 3, math.sqrt(2.0 / 10)),
        ("selu", None, 0.75),
    ],
)
def test_calculate_gain_follows_the_documented_table(name, param, expected):
    assert init.calculate_gain(name, param) == pytest.approx(expected, rel=1e-15)


def test_calculate_gain_rejects_unknown_names_and_bad_slopes():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(7, 3), (8, 4, 3), (6, 5, 3, 2), (2, 3, 2, 2, 2)])
def test_fan_in_and_fan_out_use_the_receptive_field(shape):
    receptive = math.prod(shape[2:])
    fan_in, fan_out = init._calculate_fan_in_and_fan_out(fg.empty(*shape))
    assert (fan_in, fan_out) == (shape[1] * receptive, shape[0] * receptive)


def test_fan_needs_two_dimensions_and_a_valid_mode():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(fg.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(fg.empty(3, 4), mode="fan_avg")


def test_uniform_and_normal_fill_in_place_with_requested_moments():
    fg.manual_seed(0)
    w = fg.empty(400, 500)
    assert init.uniform_(w, -0.5, 1.5) is w
    values = to_np(w)
    assert values.min() >= -0.5 and values.max() < 1.5
    assert values.mean() == pytest.approx(0.5, abs=0.01)
    assert values.var() == pytest.approx(4.0 / 12.0, rel=0.02)
    assert init.normal_(w, 2.0, 0.5) is w
    values = to_np(w)
    assert values.mean() == pytest.approx(2.0, abs=0.005)
    assert values.std() == pytest.approx(0.5, rel=0.01)


def test_initialisers_work_on_leaves_requiring_grad_without_recording_history():
    w = fg.empty(30, 20, requires_grad=True)
    for fn in (init.xavier_uniform_, init.kaiming_normal_, init.orthogonal_, init.zeros_, init.eye_):
        out = fn(w)
        assert out is w and w.grad_fn is None and w.is_leaf and w.requires_grad


@pytest.mark.parametrize(("shape", "gain"), [((300, 400), 1.0), ((64, 32, 3, 3), 2.0)])
def test_xavier_bounds_and_std_follow_fans(shape, gain):
    fg.manual_seed(1)
    fan_in, fan_out = shape[1] * math.prod(shape[2:]), shape[0] * math.prod(shape[2:])
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    values = to_np(init.xavier_uniform_(fg.empty(*shape), gain=gain))
    bound = math.sqrt(3.0) * std
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.99 * bound
    assert values.std() == pytest.approx(std, rel=0.02)
    values = to_np(init.xavier_normal_(fg.empty(*shape), gain=gain))
    assert values.std() == pytest.approx(std, rel=0.02)
    assert values.mean() == pytest.approx(0.0, abs=0.02 * std)


@pytest.mark.parametrize(
    ("a", "mode", "nonlinearity"),
    [
        (0, "fan_in", "leaky_relu"),
        (math.sqrt(5), "fan_in", "leaky_relu"),
        (0, "fan_out", "relu"),
        (0, "fan_in", "tanh"),
    ],
)
def test_kaiming_bounds_and_std_follow_gain_over_sqrt_fan(a, mode, nonlinearity):
    fg.manual_seed(2)
    shape = (128, 64, 3, 3)
    fan = (64 if mode == "fan_in" else 128) * 9
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    values = to_np(init.kaiming_uniform_(fg.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity))
    assert np.abs(values).max() <= math.sqrt(3.0) * std
    assert values.std() == pytest.approx(std, rel=0.02)
    values = to_np(init.kaiming_normal_(fg.empty(*shape), a=a, mode=mode, nonlinearity=nonlinearity))
    assert values.std() == pytest.approx(std, rel=0.02)


def test_kaiming_uniform_is_one_uniform_draw_so_seeded_streams_agree():
    # kaiming_uniform_ must be exactly tensor.uniform_(-bound, bound): the same
    # seed through both routes gives bitwise identical values.
    bound = math.sqrt(3.0) * init.calculate_gain("leaky_relu", 0.5) / math.sqrt(20)
    fg.manual_seed(9)
    a = init.kaiming_uniform_(fg.empty(10, 20), a=0.5)
    fg.manual_seed(9)
    b = fg.empty(10, 20).uniform_(-bound, bound)
    assert a.tolist() == b.tolist()


def test_explicit_generator_leaves_global_stream_untouched():
    fg.manual_seed(5)
    expected_next = fg.rand(3).tolist()
    fg.manual_seed(5)
    g = fg.Generator()
    g.manual_seed(123)
    first = init.xavier_normal_(fg.empty(4, 4), generator=g)
    assert fg.rand(3).tolist() == expected_next
    g2 = fg.Generator()
    g2.manual_seed(123)
    assert init.xavier_normal_(fg.empty(4, 4), generator=g2).tolist() == first.tolist()


def test_zero_element_kaiming_is_a_warned_no_op():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        out = init.kaiming_uniform_(fg.empty(0, 3))
    assert tuple(out.shape) == (0, 3)


@pytest.mark.parametrize(
    ("mean", "std", "a", "b"), [(0.0, 1.0, -2.0, 2.0), (0.0, 1.0, 1.0, 1.5), (0.03, 0.02, -0.04, 0.04)]
)
def test_trunc_normal_stays_in_bounds_with_truncated_moments(mean, std, a, b):
    fg.manual_seed(3)
    values = to_np(init.trunc_normal_(fg.empty(200_000, dtype=fg.float64), mean, std, a, b))
    assert values.min() >= a and values.max() <= b
    # Moments of the truncated normal in closed form.
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    z = cdf(beta) - cdf(alpha)
    exp_mean = mean + std * (pdf(alpha) - pdf(beta)) / z
    exp_var = std**2 * (1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - ((pdf(alpha) - pdf(beta)) / z) ** 2)
    assert values.mean() == pytest.approx(exp_mean, abs=0.01 * (b - a))
    assert values.var() == pytest.approx(exp_var, rel=0.03)


def test_trunc_normal_warns_when_mean_is_far_outside_the_interval():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(fg.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)


def test_constant_ones_zeros_and_eye_fill_exact_values():
    w = fg.empty(3, 4)
    assert init.constant_(w, 0.25).tolist() == [[0.25] * 4] * 3
    assert init.ones_(w).tolist() == [[1.0] * 4] * 3
    assert init.zeros_(w).tolist() == [[0.0] * 4] * 3
    np.testing.assert_array_equal(to_np(init.eye_(w)), np.eye(3, 4, dtype=np.float32))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(fg.empty(2, 2, 2))


@pytest.mark.parametrize(
    ("shape", "groups"), [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((4, 2, 3, 3, 1), 2), ((3, 5, 2), 1)]
)
def test_dirac_makes_convolution_preserve_channels(shape, groups, rng):
    w = init.dirac_(fg.empty(*shape), groups)
    nd = len(shape) - 2
    per_group = shape[0] // groups
    kept = min(per_group, shape[1])
    x = rng.normal(size=(1, shape[1] * groups, *([4] * nd))).astype(np.float32)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    pad = tuple(k // 2 for k in shape[2:])
    # Odd kernels centre exactly; even ones shift by one, so use 'same'-style padding only for odd.
    if all(k % 2 == 1 for k in shape[2:]):
        out = to_np(conv(fg.tensor(x), w, padding=pad, groups=groups))
        for g in range(groups):
            for d in range(kept):
                np.testing.assert_allclose(out[0, g * per_group + d], x[0, g * shape[1] + d], rtol=1e-6)
            for d in range(kept, per_group):
                assert np.all(out[0, g * per_group + d] == 0)
    assert float(w.sum()) == groups * kept


def test_dirac_rejects_bad_rank_and_groups():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(fg.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(fg.empty(5, 3, 3), groups=2)


@pytest.mark.parametrize("shape", [(6, 6), (10, 4), (4, 10), (8, 3, 2, 2)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape):
    fg.manual_seed(4)
    gain = 1.7
    q = to_np(init.orthogonal_(fg.empty(*shape, dtype=fg.float64), gain=gain)).reshape(shape[0], -1)
    rows, cols = q.shape
    gram = q.T @ q if rows >= cols else q @ q.T
    np.testing.assert_allclose(gram, gain**2 * np.eye(min(rows, cols)), atol=1e-12)


def test_orthogonal_rejects_vectors():
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(fg.empty(5))


def test_sparse_zeroes_the_requested_count_per_column():
    fg.manual_seed(6)
    w = to_np(init.sparse_(fg.empty(20, 300), sparsity=0.25, std=0.5))
    assert np.all((w == 0).sum(0) == 5)
    nonzero = w[w != 0]
    assert nonzero.std() == pytest.approx(0.5, rel=0.03)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(fg.empty(2, 2, 2), 0.1)
