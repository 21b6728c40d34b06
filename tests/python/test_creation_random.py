"""Range creation (arange/linspace/logspace/eye) and seeded random sampling.

Ranges are checked against NumPy. Random functions are checked for
reproducibility (same seed, same values; any thread count), for their
support (every value inside the documented range, every integer hit) and
statistically: with a fixed seed, sample means and variances of 1e5 draws lie
within 5 standard errors of the distribution's moments (a false failure has
probability below 1e-6 per check, and the seed is fixed, so it cannot flake).
"""

from __future__ import annotations

import math

import ferrograd as fg
import numpy as np
import pytest
from conftest import FLOAT_DTYPES, assert_close, to_np

N = 100_000


def arr(t) -> np.ndarray:
    """A NumPy copy of a tensor's values."""
    return np.array(t.numpy(), copy=True)


def within_se(sample: np.ndarray, mean: float, var: float, fourth: float) -> None:
    """Sample mean and variance are within 5 standard errors of the truth.

    ``fourth`` is the distribution's fourth central moment, which sets the
    standard error of the sample variance: sqrt((mu4 - var**2) / n).
    """
    x = sample.astype(np.float64).ravel()
    n = x.size
    se_mean = math.sqrt(var / n)
    se_var = math.sqrt((fourth - var**2) / n)
    assert abs(x.mean() - mean) < 5 * se_mean, (x.mean(), mean, se_mean)
    assert abs(x.var() - var) < 5 * se_var, (x.var(), var, se_var)


# ---------------------------------------------------------------- arange


@pytest.mark.parametrize(
    "args",
    [(5,), (0,), (2, 9), (9, 2, -1), (-3, 10, 4), (10, -7, -3), (3, 3), (5, 5, -2), (0, 1, 7)],
)
def test_arange_integer_args_match_numpy_as_int64(args):
    t = fg.arange(*args)
    assert t.dtype == fg.int64
    assert_close(t, np.arange(*args, dtype=np.int64))


@pytest.mark.parametrize(
    "args",
    [(0.0, 1.0, 0.1), (1.5,), (-2.5, 2.5, 0.5), (3.0, -1.0, -0.3), (0, 1, 0.25), (2.5, 2.5, 1.0),
     (0.0, 10.0, 3.3)],
)
@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_arange_float_args_match_numpy(args, fdt, ndt):
    t = fg.arange(*args, dtype=fdt)
    expected = np.arange(*args, dtype=np.float64).astype(ndt)
    assert t.dtype == fdt
    assert_close(t, expected, rtol=1e-6 if ndt == np.float32 else 1e-12, atol=1e-12)


def test_arange_float_args_infer_default_dtype():
    assert fg.arange(0, 1, 0.5).dtype == fg.float32
    assert fg.arange(2.0).dtype == fg.float32
    assert fg.arange(0, 3, 1).dtype == fg.int64
    fg.set_default_dtype(fg.float64)
    try:
        assert fg.arange(0, 1, 0.5).dtype == fg.float64
    finally:
        fg.set_default_dtype(fg.float32)


def test_arange_keywords_tensor_args_and_explicit_int_dtype():
    assert fg.arange(end=4).tolist() == [0, 1, 2, 3]
    assert fg.arange(start=2, end=8, step=3).tolist() == [2, 5]
    assert fg.arange(fg.tensor(4)).tolist() == [0, 1, 2, 3]
    t = fg.arange(1, 7, 2, dtype=fg.int32)
    assert t.dtype == fg.int32 and t.tolist() == [1, 3, 5]
    assert fg.arange(4, dtype=fg.float64).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_arange_large_int64_values_are_exact():
    start = 2**53 + 1  # not representable in float64
    assert fg.arange(start, start + 3).tolist() == [start, start + 1, start + 2]


@pytest.mark.parametrize("args", [(0, 5, -1), (5, 0, 1), (0.0, 1.0, -0.1), (3, 1)])
def test_arange_step_of_wrong_sign_is_runtime_error(args):
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        fg.arange(*args)


def test_arange_bad_arguments_raise():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        fg.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        fg.arange(0.0, 1.0, 0.0)
    with pytest.raises(RuntimeError, match="unsupported range"):
        fg.arange(0, math.inf)
    with pytest.raises(RuntimeError, match="unsupported range"):
        fg.arange(math.nan)
    with pytest.raises(RuntimeError, match="Bool"):
        fg.arange(3, dtype=fg.bool)
    with pytest.raises(TypeError):
        fg.arange()
    with pytest.raises(TypeError):
        fg.arange("3")
    with pytest.raises(TypeError):
        fg.arange(1, 2, 3, 4)


# ------------------------------------------------------------- linspace


@pytest.mark.parametrize(
    "start,end,steps",
    [(0.0, 1.0, 5), (-3.0, 7.5, 11), (10.0, -10.0, 7), (0.1, 0.7, 100), (2.0, 2.0, 4),
     (1e-3, 1e3, 33)],
)
@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_linspace_matches_numpy_with_exact_endpoints(start, end, steps, fdt, ndt):
    t = fg.linspace(start, end, steps, dtype=fdt)
    expected = np.linspace(start, end, steps).astype(ndt)
    assert_close(t, expected, rtol=1e-6 if ndt == np.float32 else 1e-13, atol=1e-12)
    values = to_np(t)
    assert values[0] == ndt(start) and values[-1] == ndt(end)


def test_linspace_default_dtype_small_step_counts_and_int_dtype():
    assert fg.linspace(0, 1, 3).dtype == fg.float32
    assert fg.linspace(0, 1, 0).shape == (0,)
    assert fg.linspace(3.5, 9.0, 1).tolist() == [3.5]
    t = fg.linspace(0, 10, 5, dtype=fg.int64)
    assert t.dtype == fg.int64
    assert t.tolist() == np.linspace(0, 10, 5).astype(np.int64).tolist()
    assert fg.linspace(fg.tensor(1.0), fg.tensor(2.0), 3).tolist() == [1.0, 1.5, 2.0]


def test_linspace_is_symmetric_about_its_middle():
    # Computed from both ends, so mirrored points are exact mirrors.
    t = to_np(fg.linspace(-1.0, 1.0, 101, dtype=fg.float64))
    np.testing.assert_array_equal(t, -t[::-1])


def test_linspace_errors():
    with pytest.raises(RuntimeError, match="non-negative"):
        fg.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        fg.linspace(0, 1)
    with pytest.raises(TypeError):
        fg.linspace(0, 1, 2.5)


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_logspace_matches_numpy(fdt, ndt):
    assert_close(fg.logspace(-2, 3, 11, dtype=fdt), np.logspace(-2, 3, 11).astype(ndt),
                 rtol=1e-6 if ndt == np.float32 else 1e-12)
    assert_close(fg.logspace(0, 4, 5, base=2.0, dtype=fdt),
                 np.logspace(0, 4, 5, base=2.0).astype(ndt))


# ------------------------------------------------------------------ eye


@pytest.mark.parametrize("n,m", [(3, None), (2, 5), (5, 2), (0, None), (0, 3), (1, 1)])
@pytest.mark.parametrize(
    "fdt,ndt",
    [(fg.float32, np.float32), (fg.float64, np.float64), (fg.int64, np.int64),
     (fg.int32, np.int32), (fg.bool, np.bool_)],
)
def test_eye_matches_numpy(n, m, fdt, ndt):
    t = fg.eye(n, m, dtype=fdt)
    x, expected = arr(t), np.eye(n, m, dtype=ndt)
    assert x.shape == expected.shape and x.dtype == expected.dtype
    np.testing.assert_array_equal(x, expected)


def test_eye_defaults_and_errors():
    t = fg.eye(2)
    assert t.dtype == fg.float32 and t.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert fg.eye(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
        fg.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0"):
        fg.eye(2, -3)
    with pytest.raises(TypeError):
        fg.eye(2.0)


def test_creation_keyword_arguments_apply():
    t = fg.arange(3.0, requires_grad=True, device="cpu")
    assert t.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        fg.arange(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="cuda"):
        fg.linspace(0, 1, 3, device="cuda")
    out = fg.zeros(4, dtype=fg.int64)
    res = fg.arange(4, out=out)
    assert res is out and out.tolist() == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="shape"):
        fg.arange(5, out=out)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_shape_factories_share_torchs_keywords(name):
    f = getattr(fg, name)
    assert f(size=(2, 3)).shape == (2, 3)
    assert f((2, 3), pin_memory=False).shape == (2, 3)
    assert f(2, 3, dtype=fg.float64).dtype == fg.float64
    assert f(2, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="both"):
        f(2, size=(2,))
    # out= receives the values (compared with a fresh call from the same
    # seed for the random ones).
    out = fg.full((2, 3), 7.0)
    fg.manual_seed(3)
    res = f(2, 3, out=out)
    fg.manual_seed(3)
    fresh = f(2, 3)
    assert res is out
    if name != "empty":
        np.testing.assert_array_equal(arr(out), arr(fresh))


def test_like_factories_keep_shape_and_dtype_unless_told():
    x = fg.ones(2, 3, dtype=fg.float64)
    for name in ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]:
        f = getattr(fg, name)
        assert f(x).shape == (2, 3) and f(x).dtype == fg.float64
        assert f(x, dtype=fg.float32).dtype == fg.float32
        assert f(x, requires_grad=True).requires_grad
    np.testing.assert_array_equal(arr(fg.zeros_like(x)), np.zeros((2, 3)))
    np.testing.assert_array_equal(arr(fg.ones_like(x)), np.ones((2, 3)))


# ------------------------------------------------------ seeds, generators


def test_manual_seed_returns_the_default_generator():
    g = fg.manual_seed(0)
    assert g is fg.default_generator
    assert isinstance(g, fg.Generator)
    assert fg.initial_seed() == 0
    fg.manual_seed(2**64 - 1)
    assert fg.initial_seed() == 2**64 - 1
    fg.manual_seed(-1)  # negative seeds wrap modulo 2**64, as torch
    assert fg.initial_seed() == 2**64 - 1
    with pytest.raises(RuntimeError, match="Overflow"):
        fg.manual_seed(2**64)
    with pytest.raises(TypeError):
        fg.manual_seed("seed")


SAMPLERS = {
    "rand": lambda: fg.rand(3, 4),
    "randn": lambda: fg.randn(3, 4, dtype=fg.float64),
    "randint": lambda: fg.randint(-50, 50, (3, 4)),
    "randperm": lambda: fg.randperm(12),
    "normal": lambda: fg.normal(1.0, 2.0, size=(12,)),
    "bernoulli": lambda: fg.bernoulli(fg.full((12,), 0.5)),
    "multinomial": lambda: fg.multinomial(fg.ones(12), 6),
    "uniform_": lambda: fg.empty(12).uniform_(-1, 1),
    "normal_": lambda: fg.empty(12).normal_(),
    "random_": lambda: fg.empty(12, dtype=fg.int64).random_(),
    "bernoulli_": lambda: fg.empty(12).bernoulli_(0.5),
    "exponential_": lambda: fg.empty(12).exponential_(),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_same_seed_gives_identical_values_and_other_seeds_differ(name):
    draw = SAMPLERS[name]
    fg.manual_seed(1234)
    first = [draw().tolist() for _ in range(3)]
    fg.manual_seed(1234)
    again = [draw().tolist() for _ in range(3)]
    assert first == again
    assert first[0] != first[1]  # the stream moves on between calls
    fg.manual_seed(4321)
    assert draw().tolist() != first[0]


def test_values_do_not_depend_on_thread_count():
    before = fg.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 3):
            fg.set_num_threads(threads)
            fg.manual_seed(99)
            results.append([arr(fg.rand(300_001)), arr(fg.randn(200_003, dtype=fg.float64)),
                            arr(fg.randint(0, 1000, (150_001,)))])
        for other in results[1:]:
            for a, b in zip(results[0], other, strict=True):
                np.testing.assert_array_equal(a, b)
    finally:
        fg.set_num_threads(before)


def test_new_generators_start_from_torchs_default_seed_and_seed_reseeds():
    # A new Generator starts from torch's default seed; the default
    # generator's unseeded start is checked in test_random_torch_streams.py.
    assert fg.Generator().initial_seed() == 67280421310721
    s = fg.seed()
    assert isinstance(s, int) and fg.initial_seed() == s
    assert 0 <= s < 2**64


def test_rng_state_round_trip_replays_the_stream():
    fg.manual_seed(7)
    fg.rand(5)
    state = fg.get_rng_state()
    a = fg.randn(10).tolist()
    fg.set_rng_state(state)
    assert fg.randn(10).tolist() == a
    assert state.shape == (5056,)  # torch's CPUGeneratorImplState bytes
    with pytest.raises(TypeError, match="RNG state"):
        fg.set_rng_state(fg.zeros(3))  # not bytes (torch: TypeError too)
    with pytest.raises(RuntimeError, match="size 5056"):
        fg.set_rng_state(fg.zeros(3, dtype=fg.int64))
    bad_left = state.clone()
    bad_left[8:12] = 0  # `left` (an int32 at byte 8) must be in [1, 624]
    with pytest.raises(RuntimeError, match="left"):
        fg.set_rng_state(bad_left)
    with pytest.raises(RuntimeError, match=r"\[0, 255\]"):
        fg.set_rng_state(state - 1)


def test_private_generators_are_independent_of_the_default_one():
    fg.manual_seed(5)
    plain = fg.rand(8).tolist()
    fg.manual_seed(5)
    g = fg.Generator().manual_seed(77)
    mine = fg.rand(8, generator=g).tolist()
    assert fg.rand(8).tolist() == plain  # default stream unaffected
    g.manual_seed(77)
    assert fg.rand(8, generator=g).tolist() == mine
    state = g.get_state()
    x = fg.randint(0, 10, (6,), generator=g).tolist()
    g.set_state(state)
    assert fg.randint(0, 10, (6,), generator=g).tolist() == x
    assert g.initial_seed() == 77 and str(g.device) == "cpu"
    with pytest.raises(TypeError):
        fg.rand(3, generator=5)


# ---------------------------------------------------- rand / randn / normal


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_rand_is_uniform_on_half_open_unit_interval(fdt, ndt):
    fg.manual_seed(11)
    t = fg.rand(N, dtype=fdt)
    x = arr(t)
    assert t.dtype == fdt and x.dtype == ndt
    assert x.min() >= 0.0 and x.max() < 1.0
    within_se(x, 0.5, 1 / 12, 1 / 80)
    # Deciles hold a tenth each (binomial standard error).
    counts = np.histogram(x, bins=10, range=(0, 1))[0]
    se = math.sqrt(N * 0.1 * 0.9)
    assert np.all(np.abs(counts - N / 10) < 5 * se)


def test_float32_rand_never_rounds_up_to_one():
    fg.manual_seed(3)
    assert arr(fg.rand(1_000_000)).max() < 1.0


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_randn_is_standard_normal(fdt, ndt):
    fg.manual_seed(12)
    x = arr(fg.randn(N, dtype=fdt))
    within_se(x, 0.0, 1.0, 3.0)
    # P(|z| < 1) = 0.6827
    p = 0.682689492
    frac = np.mean(np.abs(x) < 1.0)
    assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / N)


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_normal_with_scalar_parameters(fdt, ndt):
    fg.manual_seed(13)
    t = fg.normal(3.0, 0.5, size=(N // 100, 100), dtype=fdt)
    assert t.shape == (N // 100, 100) and t.dtype == fdt
    within_se(arr(t), 3.0, 0.25, 3 * 0.25**2)


def test_normal_with_tensor_parameters_broadcasts():
    fg.manual_seed(14)
    mean = fg.tensor([[-10.0], [0.0], [10.0]])
    std = fg.tensor([0.5, 1.0, 2.0, 4.0], dtype=fg.float64)
    n = 20_000
    out = fg.normal(mean.expand(3, 4).unsqueeze(0).expand(n, 3, 4), std)
    assert out.shape == (n, 3, 4) and out.dtype == fg.float64  # promoted, as add would
    x = arr(out)
    for i, m in enumerate([-10.0, 0.0, 10.0]):
        for j, s in enumerate([0.5, 1.0, 2.0, 4.0]):
            within_se(x[:, i, j], m, s * s, 3 * s**4)
    y = arr(fg.normal(fg.zeros(N), 2.0))
    within_se(y, 0.0, 4.0, 48.0)
    z = arr(fg.normal(5.0, fg.full((N,), 0.1)))
    within_se(z, 5.0, 0.01, 3e-4)


def test_normal_errors():
    with pytest.raises(RuntimeError, match="std >= 0"):
        fg.normal(0.0, -1.0, size=(3,))
    with pytest.raises(RuntimeError, match="std >= 0"):
        fg.normal(fg.zeros(3), fg.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(TypeError):
        fg.normal(0.0, 1.0)
    with pytest.raises(RuntimeError):
        fg.normal(fg.zeros(3), fg.ones(4))


def test_rand_shapes_dtypes_and_flags():
    assert fg.rand(2, 3).shape == (2, 3)
    assert fg.rand((2, 3)).shape == (2, 3)
    assert fg.randn([4]).shape == (4,)
    assert fg.rand(size=(1, 5)).shape == (1, 5)
    assert fg.rand(()).shape == () and fg.rand(0, 3).shape == (0, 3)
    assert fg.rand(3).dtype == fg.float32
    t = fg.randn(2, dtype=fg.float64, requires_grad=True)
    assert t.dtype == fg.float64 and t.requires_grad and t.is_leaf
    fg.set_default_dtype(fg.float64)
    try:
        assert fg.rand(2).dtype == fg.float64
    finally:
        fg.set_default_dtype(fg.float32)
    out = fg.zeros(2, 2)
    assert fg.rand(2, 2, out=out) is out
    assert arr(out).max() > 0.0 and arr(out).max() < 1.0


def test_rand_errors():
    with pytest.raises(RuntimeError, match="int64"):
        fg.rand(3, dtype=fg.int64)
    with pytest.raises(RuntimeError, match="bool"):
        fg.randn(3, dtype=fg.bool)
    with pytest.raises(RuntimeError, match="negative dimension"):
        fg.rand(-1)
    with pytest.raises(TypeError):
        fg.rand(2, "a")
    with pytest.raises(RuntimeError, match="not available"):
        fg.randn(2, device="cuda")


def test_like_variants_keep_shape_and_dtype():
    base = fg.zeros(3, 5, dtype=fg.float64)
    assert fg.rand_like(base).shape == (3, 5) and fg.rand_like(base).dtype == fg.float64
    assert fg.randn_like(base, dtype=fg.float32).dtype == fg.float32
    assert fg.randn_like(base, requires_grad=True).requires_grad
    ints = fg.zeros(4, 2, dtype=fg.int32)
    r = fg.randint_like(ints, 10)
    assert r.shape == (4, 2) and r.dtype == fg.int32
    assert set(np.unique(arr(fg.randint_like(ints, 3, 5)))) <= {3, 4}
    assert set(np.unique(arr(fg.randint_like(ints, low=-2, high=0)))) <= {-2, -1}
    with pytest.raises(RuntimeError):
        fg.rand_like(ints)


# ---------------------------------------------------------- integers


def test_randint_covers_exactly_low_to_high():
    fg.manual_seed(21)
    t = fg.randint(-3, 7, (N,))
    assert t.dtype == fg.int64
    x = arr(t)
    values, counts = np.unique(x, return_counts=True)
    assert values.tolist() == list(range(-3, 7))
    se = math.sqrt(N * 0.1 * 0.9)
    assert np.all(np.abs(counts - N / 10) < 5 * se)
    within_se(x, 1.5, (10**2 - 1) / 12, (10**2 - 1) * (3 * 10**2 - 7) / 240)


def test_randint_argument_forms_and_dtypes():
    fg.manual_seed(22)
    assert set(arr(fg.randint(3, (1000,))).tolist()) == {0, 1, 2}
    assert set(arr(fg.randint(low=5, high=7, size=(1000,))).tolist()) == {5, 6}
    assert set(arr(fg.randint(4, size=(1000,))).tolist()) == {0, 1, 2, 3}
    t = fg.randint(0, 2, (1000,), dtype=fg.bool)
    assert t.dtype == fg.bool and set(arr(t).tolist()) == {False, True}
    f = fg.randint(-4, 4, (2000,), dtype=fg.float64)
    assert f.dtype == fg.float64 and set(arr(f).tolist()) == set(range(-4, 4))
    i32 = fg.randint(-(2**31), 2**31, (1000,), dtype=fg.int32)
    assert i32.dtype == fg.int32
    wide = arr(fg.randint(-(2**63), 2**63 - 1, (10_000,)))
    assert (wide < 0).any() and (wide > 0).any()
    assert wide.min() < -(2**61) and wide.max() > 2**61  # spans the range


def test_randint_errors():
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        fg.randint(5, 5, (3,))
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        fg.randint(5, 2, (3,))
    with pytest.raises(RuntimeError, match="bool"):
        fg.randint(0, 3, (3,), dtype=fg.bool)
    with pytest.raises(RuntimeError, match="int32"):
        fg.randint(0, 2**31 + 1, (3,), dtype=fg.int32)
    with pytest.raises(TypeError):
        fg.randint(0, 5)
    with pytest.raises(TypeError):
        fg.randint(0.5, 5, (3,))
    with pytest.raises(RuntimeError, match="floating point"):
        fg.randint(0, 5, (3,), requires_grad=True)


def test_randperm_is_a_uniform_permutation():
    fg.manual_seed(23)
    for n in (0, 1, 2, 17, 1000):
        p = fg.randperm(n)
        assert p.dtype == fg.int64 and p.shape == (n,)
        assert sorted(p.tolist()) == list(range(n))
    counts: dict[tuple, int] = {}
    draws = 6000
    for _ in range(draws):
        key = tuple(fg.randperm(3).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    se = math.sqrt(draws * (1 / 6) * (5 / 6))
    assert all(abs(c - draws / 6) < 5 * se for c in counts.values())
    assert fg.randperm(5, dtype=fg.float64).dtype == fg.float64
    with pytest.raises(RuntimeError, match="non-negative"):
        fg.randperm(-1)
    with pytest.raises(RuntimeError, match="too large"):
        fg.randperm(300, dtype=fg.bool)


# ---------------------------------------------- bernoulli and multinomial


def test_bernoulli_follows_per_element_probabilities():
    fg.manual_seed(31)
    p = fg.tensor([0.0, 1.0, 0.3], dtype=fg.float64).expand(N, 3)
    t = fg.bernoulli(p)
    assert t.dtype == fg.float64 and t.shape == (N, 3)
    x = arr(t)
    assert set(np.unique(x).tolist()) <= {0.0, 1.0}
    assert x[:, 0].sum() == 0 and x[:, 1].sum() == N
    assert abs(x[:, 2].mean() - 0.3) < 5 * math.sqrt(0.3 * 0.7 / N)
    q = fg.zeros(N).bernoulli(0.8)
    assert abs(arr(q).mean() - 0.8) < 5 * math.sqrt(0.8 * 0.2 / N)
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        fg.bernoulli(fg.tensor([0.5, 1.5]))


def test_bernoulli_in_place_scalar_and_tensor_probabilities():
    fg.manual_seed(32)
    t = fg.zeros(N, dtype=fg.int64)
    assert t.bernoulli_(0.25) is t
    assert abs(arr(t).mean() - 0.25) < 5 * math.sqrt(0.25 * 0.75 / N)
    m = fg.zeros(N // 2, 2)
    m.bernoulli_(fg.tensor([0.0, 1.0]))
    assert arr(m)[:, 0].sum() == 0 and arr(m)[:, 1].sum() == N // 2
    b = fg.zeros(1000, dtype=fg.bool).bernoulli_()
    assert set(arr(b).tolist()) == {False, True}
    with pytest.raises(RuntimeError, match="p to be in"):
        t.bernoulli_(1.5)


def test_multinomial_with_replacement_matches_probabilities():
    fg.manual_seed(33)
    w = np.array([1.0, 0.0, 3.0, 6.0])
    t = fg.multinomial(fg.tensor(w), N, replacement=True)
    assert t.dtype == fg.int64 and t.shape == (N,)
    counts = np.bincount(arr(t), minlength=4)
    p = w / w.sum()
    assert counts[1] == 0
    assert np.all(np.abs(counts - N * p) <= 5 * np.sqrt(N * p * (1 - p)))


def test_multinomial_without_replacement_draws_distinct_categories():
    fg.manual_seed(34)
    w = fg.tensor([[0.5, 0.0, 0.25, 0.25, 2.0]] * 3)
    t = fg.multinomial(w, 4)
    assert t.shape == (3, 4)
    for row in t.tolist():
        assert sorted(row) == [0, 2, 3, 4]
    # The first draw of each sample is distributed like one weighted draw.
    rows = 20_000
    firsts = arr(fg.multinomial(fg.tensor([1.0, 2.0, 7.0]).expand(rows, 3), 2))[:, 0]
    p = np.array([0.1, 0.2, 0.7])
    counts = np.bincount(firsts, minlength=3)
    assert np.all(np.abs(counts - rows * p) <= 5 * np.sqrt(rows * p * (1 - p)))


def test_multinomial_errors():
    with pytest.raises(RuntimeError, match="without replacement"):
        fg.multinomial(fg.ones(3), 4)
    with pytest.raises(RuntimeError, match="not enough"):
        fg.multinomial(fg.tensor([1.0, 0.0, 0.0]), 2)
    with pytest.raises(RuntimeError, match="element < 0"):
        fg.multinomial(fg.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        fg.multinomial(fg.zeros(3), 1, True)
    with pytest.raises(RuntimeError, match="1 or 2 dim"):
        fg.multinomial(fg.ones(2, 2, 2), 1)
    with pytest.raises(RuntimeError, match="floating"):
        fg.multinomial(fg.ones(3, dtype=fg.int64), 1)


# ---------------------------------------------------- in-place samplers


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_uniform_in_place_range_and_moments(fdt, ndt):
    fg.manual_seed(41)
    t = fg.empty(N, dtype=fdt)
    assert t.uniform_(-2.0, 6.0) is t
    x = arr(t)
    assert x.min() >= -2.0 and x.max() < 6.0
    within_se(x, 2.0, 64 / 12, 8**4 / 80)
    fg.manual_seed(41)
    assert arr(fg.empty(10, dtype=fdt).uniform_()).max() < 1.0


def test_uniform_upper_bound_stays_open_after_rounding():
    # Only 1.0 lies in [1, nextafter(1)) in float32; rounding up is refused.
    hi = float(np.nextafter(np.float32(1.0), np.float32(2.0)))
    x = arr(fg.empty(10_000).uniform_(1.0, hi))
    assert np.all(x == 1.0)


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
def test_normal_in_place_moments(fdt, ndt):
    fg.manual_seed(42)
    t = fg.empty(N, dtype=fdt)
    assert t.normal_(-1.0, 3.0) is t
    within_se(arr(t), -1.0, 9.0, 3 * 81.0)


def test_exponential_in_place_moments():
    fg.manual_seed(43)
    t = fg.empty(N, dtype=fg.float64).exponential_(2.0)
    x = arr(t)
    assert x.min() >= 0.0
    # Exp(rate 2): mean 1/2, variance 1/4, fourth central moment 9/16.
    within_se(x, 0.5, 0.25, 9 / 16)
    with pytest.raises(RuntimeError, match="lambda > 0"):
        t.exponential_(0.0)


def test_random_in_place_ranges():
    fg.manual_seed(44)
    t = fg.empty(10_000, dtype=fg.int64)
    assert set(arr(t.random_(5)).tolist()) == set(range(5))
    assert set(arr(t.random_(-2, 3)).tolist()) == set(range(-2, 3))
    f = arr(fg.empty(10_000).random_())
    assert np.all(f == np.floor(f)) and f.min() >= 0 and f.max() <= 2**24
    assert f.max() > 2**23
    b = fg.empty(100, dtype=fg.bool).random_()
    assert set(arr(b).tolist()) == {False, True}
    i = arr(fg.empty(10_000, dtype=fg.int32).random_())
    assert i.min() >= 0 and i.max() > 2**29
    with pytest.raises(RuntimeError, match="less than 'to'"):
        t.random_(3, 3)


def test_in_place_samplers_on_views_write_through_and_bump_version():
    fg.manual_seed(45)
    base = fg.zeros(4, 6)
    v0 = base._version
    view = base.transpose(0, 1)
    assert view.uniform_(1.0, 2.0) is view
    x = arr(base)
    assert x.min() >= 1.0 and x.max() < 2.0
    assert base._version > v0
    strided = fg.zeros(10).as_strided((5,), (2,))
    strided.normal_(5.0, 0.1)
    y = to_np(strided._base)
    assert np.all(y[1::2] == 0.0) and np.all(np.abs(y[0::2] - 5.0) < 1.0)


def test_in_place_sampler_errors():
    with pytest.raises(RuntimeError, match="more than one element"):
        fg.zeros(1, 3).expand(4, 3).uniform_()
    with pytest.raises(RuntimeError, match="from=2"):
        fg.empty(3).uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match="std >= 0"):
        fg.empty(3).normal_(0.0, -2.0)
    with pytest.raises(RuntimeError, match="int64"):
        fg.empty(3, dtype=fg.int64).uniform_()
    with pytest.raises(RuntimeError, match="int32"):
        fg.empty(3, dtype=fg.int32).normal_()
    with pytest.raises(TypeError):
        fg.empty(3).uniform_("a")


def test_module_functions_alias_tensor_methods():
    fg.manual_seed(46)
    a = fg.bernoulli(fg.full((8,), 0.5)).tolist()
    fg.manual_seed(46)
    assert fg.full((8,), 0.5).bernoulli().tolist() == a


def test_python_floats_keep_double_precision_when_float64_is_asked():
    # 0.1, 0.3 and 1/3 are not float32 values: a detour through float32
    # would change them.
    values = [0.1, 0.3, 1 / 3]
    for t in (
        fg.tensor(values, dtype=fg.float64),
        fg.as_tensor(values, dtype=fg.float64),
        fg.tensor([values], dtype=fg.float64)[0],
    ):
        assert t.tolist() == values
    assert fg.tensor(0.3, dtype=fg.float64).item() == 0.3
    # The default dtype still rounds to float32, as torch does.
    assert fg.tensor([0.3]).tolist() == [float(np.float32(0.3))]


def test_full_writes_into_out():
    out = fg.empty(2, 3, dtype=fg.float64)
    result = fg.full((2, 3), 2.5, out=out)
    assert result is out
    assert out.tolist() == [[2.5] * 3] * 2 and out.dtype == fg.float64
    with pytest.raises(RuntimeError, match=r"shape \[2, 3\]"):
        fg.full((3, 2), 1.0, out=out)
