"""The 16-bit floats (float16, bfloat16) and the narrow integers (int8,
int16, uint8): promotion, casts, kernels, autograd, NumPy and pickling.

Oracles: NumPy's float16 (correctly rounded from float32), a bfloat16
rounding written here on float32's bits (nearest, ties to even), float32
and float64 computations in NumPy rounded to the 16-bit format, NumPy's
wrapping integer arithmetic, and torch's documented promotion table.
"""

from __future__ import annotations

import pickle

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np

HALF = [fg.float16, fg.bfloat16]
NARROW_INTS = [(fg.uint8, np.uint8), (fg.int8, np.int8), (fg.int16, np.int16)]


def bf16_round(a) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest, ties to even), as float32."""
    a = np.asarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    lsb = (bits >> 16) & 1
    rounded = (((bits + 0x7FFF + lsb) >> 16) << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), rounded)


def round_to(a, dt) -> np.ndarray:
    """float32 (or float64, first rounded to float32) values rounded to `dt`."""
    a = np.asarray(a, dtype=np.float32)
    if dt == fg.float16:
        with np.errstate(over="ignore"):  # beyond 65504 rounds to inf, as intended
            return a.astype(np.float16).astype(np.float32)
    return bf16_round(a)


def spacing(v, dt) -> np.ndarray:
    """The gap between `|v|` and the next larger value of `dt`."""
    v = np.abs(np.asarray(v, dtype=np.float32))
    if dt == fg.float16:
        return np.spacing(v.astype(np.float16)).astype(np.float32)
    exp = np.floor(np.log2(np.maximum(v, np.float32(2.0**-126))))
    return (2.0 ** (exp - 7)).astype(np.float32)


def values(t) -> np.ndarray:
    return to_np(t).astype(np.float32)


def sample(n: int = 200, lo: float = -4.0, hi: float = 4.0, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(np.float32)


# ---------------------------------------------------------------------------
# dtype objects and promotion


def test_dtype_objects_names_sizes_and_aliases():
    assert fg.half is fg.float16 and fg.short is fg.int16
    expect = {
        fg.float16: (2, True, True),
        fg.bfloat16: (2, True, True),
        fg.int16: (2, False, True),
        fg.int8: (1, False, True),
        fg.uint8: (1, False, False),
    }
    for d, (size, floating, signed) in expect.items():
        assert (d.itemsize, d.is_floating_point, d.is_signed, d.is_complex) == (
            size,
            floating,
            signed,
            False,
        )
        assert pickle.loads(pickle.dumps(d)) is d
    assert repr(fg.bfloat16) == "ferrograd.bfloat16"
    assert fg.HalfTensor(2).dtype == fg.float16 and fg.ByteTensor([300 % 256]).tolist() == [44]
    assert isinstance(fg.ones(2, dtype=fg.bfloat16), fg.BFloat16Tensor)


# torch's documented promotion table (torch.promote_types), rows and
# columns in the order of NAMES.
NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
TABLE = """
bool     uint8    int8     int16    int32 int64 float16 bfloat16 float32 float64
uint8    uint8    int16    int16    int32 int64 float16 bfloat16 float32 float64
int8     int16    int8     int16    int32 int64 float16 bfloat16 float32 float64
int16    int16    int16    int16    int32 int64 float16 bfloat16 float32 float64
int32    int32    int32    int32    int32 int64 float16 bfloat16 float32 float64
int64    int64    int64    int64    int64 int64 float16 bfloat16 float32 float64
float16  float16  float16  float16  float16 float16 float16 float32 float32 float64
bfloat16 bfloat16 bfloat16 bfloat16 bfloat16 bfloat16 float32 bfloat16 float32 float64
float32  float32  float32  float32  float32 float32 float32 float32 float32 float64
float64  float64  float64  float64  float64 float64 float64 float64 float64 float64
"""


def test_promote_types_follows_torchs_table():
    rows = [line.split() for line in TABLE.strip().splitlines()]
    for a, row in zip(NAMES, rows, strict=True):
        for b, want in zip(NAMES, row, strict=True):
            got = fg.promote_types(getattr(fg, a), getattr(fg, b))
            assert got == getattr(fg, want), (a, b, got, want)


def test_result_type_tiers_with_the_new_dtypes():
    h = fg.ones(2, dtype=fg.float16)
    u8 = fg.ones(2, dtype=fg.uint8)
    i8 = fg.ones(2, dtype=fg.int8)
    assert (h * 2.5).dtype == fg.float16  # a Python float keeps a float tensor's dtype
    assert (h + fg.tensor(2.5, dtype=fg.float64)).dtype == fg.float16  # zero-dim of the same kind
    assert (u8 + fg.tensor(1, dtype=fg.int8)).dtype == fg.uint8
    assert (u8 + i8).dtype == fg.int16
    assert (i8 * 2.5).dtype == fg.get_default_dtype()
    assert (fg.ones(2, dtype=fg.bool) + fg.tensor(1.0, dtype=fg.bfloat16)).dtype == fg.bfloat16
    assert (h + fg.ones(2, dtype=fg.bfloat16)).dtype == fg.float32
    assert fg.result_type(u8, -1) == fg.uint8


def test_default_dtype_may_be_a_16_bit_float():
    try:
        fg.set_default_dtype(fg.float16)
        assert fg.tensor([1.5]).dtype == fg.float16
        assert (fg.ones(2, dtype=fg.int32) * 2.5).dtype == fg.float16
        fg.set_default_dtype(fg.bfloat16)
        assert fg.zeros(2).dtype == fg.bfloat16
    finally:
        fg.set_default_dtype(fg.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        fg.set_default_dtype(fg.int8)


# ---------------------------------------------------------------------------
# casts


@pytest.mark.parametrize("dt", HALF)
def test_casts_round_to_nearest_even_from_float32(dt):
    rng = np.random.default_rng(1)
    a = np.concatenate(
        [
            rng.standard_normal(300).astype(np.float32) * 10.0 ** rng.integers(-9, 6, 300),
            np.float32([0.0, -0.0, 1e-8, 6.1e-5, 65504.0, 65520.0, 70000.0, 3.3e38, np.inf, -np.inf]),
            # exact ties of both formats
            np.float32([1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-8, 1 + 3 * 2.0**-8]),
        ]
    ).astype(np.float32)
    got = fg.tensor(a).to(dt)
    assert got.dtype == dt
    np.testing.assert_array_equal(values(got), round_to(a, dt))
    # Back to float32 is exact.
    np.testing.assert_array_equal(to_np(got.float()), round_to(a, dt))


def test_float64_to_half_rounds_through_float32():
    # Just above a float16 tie, but float32 rounds it onto the tie first.
    x = 1 + 2.0**-11 + 2.0**-40
    assert fg.tensor([x], dtype=fg.float64).half().item() == 1.0
    assert fg.tensor([x], dtype=fg.float16).item() == float(np.float16(np.float32(x)))
    y = 1 + 2.0**-8 + 2.0**-40
    assert fg.tensor([y], dtype=fg.float64).bfloat16().item() == 1.0


@pytest.mark.parametrize("dt,npdt", NARROW_INTS)
def test_integer_casts_wrap_like_numpy(dt, npdt):
    ints = np.array([-300, -129, -128, -1, 0, 1, 127, 128, 255, 256, 40000], dtype=np.int64)
    np.testing.assert_array_equal(to_np(fg.tensor(ints).to(dt)), ints.astype(npdt))
    floats = np.array([-1.7, -0.5, 0.5, 2.9, 100.2, 200.8], dtype=np.float64)
    want = np.trunc(floats).astype(np.int64).astype(npdt)  # toward zero, then wrap
    np.testing.assert_array_equal(to_np(fg.tensor(floats).to(dt)), want)
    assert fg.tensor(ints).to(dt).to(fg.float32).dtype == fg.float32


def test_tensor_methods_name_their_dtypes():
    x = fg.tensor([1.25, -2.5])
    assert [x.half().dtype, x.bfloat16().dtype] == [fg.float16, fg.bfloat16]
    assert [x.short().dtype, x.char().dtype, x.byte().dtype] == [fg.int16, fg.int8, fg.uint8]
    assert x.type("torch.HalfTensor").dtype == fg.float16
    assert x.half().is_floating_point() and not x.byte().is_floating_point()


# ---------------------------------------------------------------------------
# kernels


@pytest.mark.parametrize("dt", HALF)
def test_arithmetic_rounds_the_float32_result_once(dt):
    a = round_to(sample(seed=2), dt)
    b = round_to(sample(lo=0.5, hi=3.0, seed=3), dt)
    x, y = fg.tensor(a).to(dt), fg.tensor(b).to(dt)
    cases = {
        "add": (x + y, a + b),
        "sub": (x - y, a - b),
        "mul": (x * y, a * b),
        "div": (x / y, a / b),
        "neg": (-x, -a),
        "sqrt": (y.sqrt(), np.sqrt(b)),
        "abs": (x.abs(), np.abs(a)),
        "maximum": (fg.maximum(x, y), np.maximum(a, b)),
        "floor": (x.floor(), np.floor(a)),
        "scalar": (x * 3 + 1, None),
    }
    for name, (got, want) in cases.items():
        assert got.dtype == dt, name
        if want is not None:
            # +, -, *, / and sqrt of two 16-bit values are exact in float32
            # up to one rounding, so rounding that once more is exact.
            np.testing.assert_array_equal(values(got), round_to(want, dt), err_msg=name)
    # Strided operands take the element loop, with the same values.
    xt, yt = x.view(10, 20).t(), y.view(10, 20).t()
    at, bt = a.reshape(10, 20).T, b.reshape(10, 20).T
    for got, want in [(xt + yt, at + bt), (xt * yt, at * bt), (xt / yt, at / bt), (xt - 1.5, at - 1.5)]:
        np.testing.assert_array_equal(values(got), round_to(want, dt))
    # x * 3 rounds to dt, then + 1 rounds again (two ops).
    np.testing.assert_array_equal(values(x * 3 + 1), round_to(round_to(a * 3, dt) + 1, dt))


@pytest.mark.parametrize("dt", HALF)
@pytest.mark.parametrize(
    "name,fn,lo,hi",
    [
        ("exp", np.exp, -5, 5),
        ("log", np.log, 0.01, 50),
        ("sin", np.sin, -10, 10),
        ("cos", np.cos, -10, 10),
        ("tanh", np.tanh, -4, 4),
        ("sigmoid", lambda v: 1 / (1 + np.exp(-v)), -8, 8),
        ("erf", None, -3, 3),
        ("rsqrt", lambda v: 1 / np.sqrt(v), 0.01, 100),
    ],
)
def test_functions_match_float32_rounded(dt, name, fn, lo, hi):
    a = round_to(sample(500, lo, hi, seed=4), dt)
    x = fg.tensor(a).to(dt)
    got = getattr(x, name)()
    assert got.dtype == dt
    if fn is None:
        from math import erf

        want = np.array([erf(float(v)) for v in a])
    else:
        want = fn(a.astype(np.float64))
    # float32's own kernel is within 1.5 of its ulps, so the rounded result
    # may sit one 16-bit step from the exactly rounded one.
    err = np.abs(values(got) - round_to(want, dt))
    assert np.all(err <= spacing(want, dt)), (name, float(np.max(err / spacing(want, dt))))
    # The in-place form computes the same values.
    y = x.clone()
    getattr(y, name + "_")()
    np.testing.assert_array_equal(values(y), values(got))


@pytest.mark.parametrize("dt", HALF)
def test_reductions_accumulate_wider_and_round_once(dt):
    a = round_to(sample(1000, 0, 1, seed=5), dt)
    x = fg.tensor(a).to(dt)
    exact = a.astype(np.float64)
    for name, got, want in [
        ("sum", x.sum(), exact.sum()),
        ("mean", x.mean(), exact.mean()),
        ("sum(dim)", x.view(10, 100).sum(1), exact.reshape(10, 100).sum(1)),
    ]:
        assert got.dtype == dt, name
        # Accumulated wide, the only error is the final rounding.
        np.testing.assert_array_equal(values(got), round_to(want, dt), err_msg=name)
    assert x.amax().item() == a.max() and x.argmin().item() == int(np.argmin(a))
    # 60000 + 60000 overflows float16 once rounded; the mean does not.
    big = fg.tensor([60000.0, 60000.0], dtype=fg.float16)
    assert big.sum().item() == float("inf") and big.mean().item() == 60000.0
    sm = x.view(10, 100).softmax(1)
    assert sm.dtype == dt
    np.testing.assert_allclose(values(sm.sum(1)), np.ones(10), atol=0.02)


@pytest.mark.parametrize("dt", HALF)
def test_matmul_multiplies_in_float32(dt):
    rng = np.random.default_rng(6)
    a = round_to(rng.standard_normal((7, 33)), dt)
    b = round_to(rng.standard_normal((33, 5)), dt)
    got = fg.tensor(a).to(dt) @ fg.tensor(b).to(dt)
    assert got.dtype == dt
    want = a.astype(np.float64) @ b.astype(np.float64)
    # float32 accumulation error is far below one 16-bit step.
    err = np.abs(values(got) - round_to(want, dt))
    assert np.all(err <= spacing(want, dt))
    v = fg.tensor(b[:, 0]).to(dt)
    assert (v @ v).dtype == dt
    np.testing.assert_array_equal(values(v @ v), round_to(b[:, 0].astype(np.float64) @ b[:, 0], dt))


@pytest.mark.parametrize("dt", HALF)
def test_linalg_refuses_16_bit_floats(dt):
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported"):
        fg.linalg.inv(fg.eye(2, dtype=dt))


@pytest.mark.parametrize("dt,npdt", NARROW_INTS)
def test_narrow_integer_arithmetic_wraps_like_numpy(dt, npdt):
    rng = np.random.default_rng(7)
    info = np.iinfo(npdt)
    a = rng.integers(info.min, info.max, 100, endpoint=True).astype(npdt)
    b = rng.integers(1, min(info.max, 50), 100, endpoint=True).astype(npdt)
    x, y = fg.from_numpy(a.copy()), fg.from_numpy(b.copy())
    with np.errstate(over="ignore"):
        for got, want in [
            (x + y, a + b),
            (x - y, a - b),
            (x * y, a * b),
            (x // y, np.floor_divide(a, b)),
            (x % y, np.remainder(a, b)),
            (-x, -a),
        ]:
            assert got.dtype == dt
            np.testing.assert_array_equal(to_np(got), want)
    assert x.sum().dtype == fg.int64 and x.sum().item() == int(a.astype(np.int64).sum())
    assert (x / y).dtype == fg.float32
    np.testing.assert_array_equal(to_np(x.abs()), np.abs(a) if dt != fg.uint8 else a)
    np.testing.assert_array_equal(to_np(x.max(0).values), a.max())


# ---------------------------------------------------------------------------
# autograd


@pytest.mark.parametrize("dt", HALF)
def test_gradients_have_the_leafs_16_bit_dtype(dt):
    a = round_to(sample(50, -2, 2, seed=8), dt)
    x = fg.tensor(a).to(dt).requires_grad_()
    (x * x).sin().sum().backward()
    assert x.grad.dtype == dt
    # The composed backward rounds each op to dt: y = x * x, then
    # g = cos(y) (SinBackward0), then g * x twice (MulBackward0 with one
    # operand in both slots), summed. Replay those roundings in NumPy; the
    # cos kernel may sit one step from the exactly rounded value.
    y = round_to(a * a, dt)
    c = round_to(np.cos(y.astype(np.float64)), dt)
    want = 2 * round_to(c * a, dt)
    err = np.abs(values(x.grad) - want)
    assert np.all(err <= 2 * spacing(want, dt) + 2 * spacing(c, dt) * np.abs(a))


@pytest.mark.parametrize("dt", HALF)
def test_round_trip_through_float32_differentiates(dt):
    a = round_to(sample(20, -2, 2, seed=9), dt)
    x = fg.tensor(a).to(dt).requires_grad_()
    y = x.float()
    assert y.dtype == fg.float32 and y.grad_fn is not None
    (y.exp() * 3).sum().backward()
    assert x.grad.dtype == dt
    # The float32 gradient 3 e^x, rounded once to dt on its way back.
    want = (np.exp(a.astype(np.float32)) * np.float32(3)).astype(np.float32)
    err = np.abs(values(x.grad) - round_to(want, dt))
    assert np.all(err <= spacing(want, dt))


@pytest.mark.parametrize("dt", HALF)
def test_half_matmul_feeding_a_float32_loss(dt):
    rng = np.random.default_rng(10)
    xa = round_to(rng.standard_normal((6, 4)) * 0.5, dt)
    wa = round_to(rng.standard_normal((4, 3)) * 0.5, dt)
    x = fg.tensor(xa).to(dt)
    w = fg.tensor(wa).to(dt).requires_grad_()
    y = (x @ w).float()
    loss = (y * y).sum()
    assert loss.dtype == fg.float32
    loss.backward()
    assert w.grad.dtype == dt
    # d/dw sum((x w)^2) = 2 x^T (x w), from the 16-bit product as computed.
    xw = xa.astype(np.float64) @ wa.astype(np.float64)
    want = 2 * xa.astype(np.float64).T @ xw
    np.testing.assert_allclose(values(w.grad), want, rtol=2e-2 if dt == fg.bfloat16 else 4e-3, atol=0.05)


# ---------------------------------------------------------------------------
# NumPy, Python values, printing, pickling


def test_float16_and_narrow_ints_share_numpy_memory():
    for npdt in (np.float16, np.int8, np.int16, np.uint8):
        a = np.arange(6, dtype=npdt).reshape(2, 3)
        t = fg.from_numpy(a)
        assert t.dtype == getattr(fg, np.dtype(npdt).name)
        t += 1
        np.testing.assert_array_equal(a, np.arange(1, 7).reshape(2, 3).astype(npdt))
        back = t.numpy()
        assert back.dtype == npdt and np.shares_memory(back, a)


def test_bfloat16_converts_to_float32_for_numpy():
    t = fg.tensor([1.0, 2.5, 1 / 3], dtype=fg.bfloat16)
    with pytest.raises(TypeError, match="BFloat16"):
        t.numpy()
    arr = np.asarray(t)
    assert arr.dtype == np.float32
    np.testing.assert_array_equal(arr, bf16_round(np.float32([1.0, 2.5, 1 / 3])))


def test_values_and_printing():
    h = fg.tensor([1 / 3], dtype=fg.float16)
    assert h.item() == float(np.float16(1 / 3)) and h.tolist() == [float(np.float16(1 / 3))]
    want = "tensor([1.0000, 2.5000], dtype=ferrograd.float16)"
    assert repr(fg.tensor([1.0, 2.5], dtype=fg.float16)) == want
    assert repr(fg.tensor([1, -2], dtype=fg.int8)) == "tensor([ 1, -2], dtype=ferrograd.int8)"
    assert repr(fg.tensor(3.5, dtype=fg.bfloat16, requires_grad=True)) == (
        "tensor(3.5000, dtype=ferrograd.bfloat16, requires_grad=True)"
    )
    byte = fg.tensor([7], dtype=fg.uint8).item()
    assert byte == 7 and isinstance(byte, int)


@pytest.mark.parametrize("dt", [fg.float16, fg.bfloat16, fg.int8, fg.int16, fg.uint8])
def test_pickle_round_trips(dt):
    t = fg.tensor([[1.5, -2.0], [3.25, 100.0]]).to(dt).t()
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype == dt
    assert u.tolist() == t.tolist()
