"""Pointwise ops: values against NumPy (float32/float64, every layout of
``cases()``, broadcasting, Python scalars on either side), torch's type
promotion, in-place forms, special values and every error path."""

from __future__ import annotations

import math

import ferrograd as fg
import numpy as np
import pytest
from conftest import FLOAT_DTYPES, assert_close, cases, to_np
from hypothesis import given, settings
from hypothesis import strategies as st

F64_TOL = {"rtol": 1e-10, "atol": 1e-12}


def tol(np_dtype):
    return F64_TOL if np_dtype == np.float64 else {"rtol": 2e-5, "atol": 1e-6}


_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)

# name -> (NumPy oracle, input domain (lo, hi))
FLOAT_UNARY = {
    "sqrt": (np.sqrt, (0.0, 4.0)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4.0)),
    "exp": (np.exp, (-3.0, 3.0)),
    "exp2": (np.exp2, (-3.0, 3.0)),
    "expm1": (np.expm1, (-1.0, 1.0)),
    "log": (np.log, (0.1, 5.0)),
    "log1p": (np.log1p, (-0.5, 3.0)),
    "log2": (np.log2, (0.1, 5.0)),
    "log10": (np.log10, (0.1, 5.0)),
    "sin": (np.sin, (-3.0, 3.0)),
    "cos": (np.cos, (-3.0, 3.0)),
    "tan": (np.tan, (-1.2, 1.2)),
    "asin": (np.arcsin, (-0.99, 0.99)),
    "acos": (np.arccos, (-0.99, 0.99)),
    "atan": (np.arctan, (-4.0, 4.0)),
    "sinh": (np.sinh, (-3.0, 3.0)),
    "cosh": (np.cosh, (-3.0, 3.0)),
    "tanh": (np.tanh, (-3.0, 3.0)),
    "asinh": (np.arcsinh, (-3.0, 3.0)),
    "acosh": (np.arccosh, (1.0, 4.0)),
    "atanh": (np.arctanh, (-0.9, 0.9)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-6.0, 6.0)),
    "erf": (_erf, (-4.0, 4.0)),
    "erfc": (_erfc, (-2.0, 5.0)),
    "reciprocal": (np.reciprocal, (0.5, 4.0)),
}

NUM_UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "sign": np.sign,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.round,
    "relu": lambda x: np.maximum(x, 0),
    "square": np.square,
}

ALIASES = {
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "negative": "neg", "absolute": "abs", "fix": "trunc",
}  # fmt: skip


def sample(rng, shape, lo, hi, np_dtype):
    return rng.uniform(lo, hi, size=shape).astype(np_dtype)


# ---------------------------------------------------------------- unary ops


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary_matches_numpy_on_every_layout(name, fdt, ndt, rng):
    oracle, (lo, hi) = FLOAT_UNARY[name]
    arr = sample(rng, (3, 5), lo, hi, ndt)
    for label, t, a in cases(arr):
        out = getattr(t, name)()
        assert out.dtype == fdt, label
        assert_close(out, oracle(a).astype(ndt), **tol(ndt))
        assert_close(getattr(fg, name)(t), oracle(a).astype(ndt), **tol(ndt))


@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary_promotes_int_and_bool_to_default_float(name):
    oracle, (lo, hi) = FLOAT_UNARY[name]
    ints = np.array([math.ceil(lo), math.floor(hi)], dtype=np.int64)
    ints = np.clip(ints, lo, hi).astype(np.int64)
    out = getattr(fg.tensor(ints), name)()
    assert out.dtype == fg.float32
    assert_close(out, oracle(ints.astype(np.float64)).astype(np.float32))
    fg.set_default_dtype(fg.float64)
    try:
        assert getattr(fg.tensor(ints, dtype=fg.int32), name)().dtype == fg.float64
    finally:
        fg.set_default_dtype(fg.float32)


@pytest.mark.parametrize("alias,name", sorted(ALIASES.items()))
def test_aliases_equal_their_op(alias, name):
    t = fg.tensor([0.25, 0.5, 0.75], dtype=fg.float64) + (1 if alias == "arccosh" else 0)
    assert getattr(t, alias)().tolist() == getattr(t, name)().tolist()
    assert getattr(fg, alias)(t).tolist() == getattr(t, name)().tolist()


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(NUM_UNARY))
def test_numeric_unary_matches_numpy_and_keeps_float_dtype(name, fdt, ndt, rng):
    arr = sample(rng, (4, 3), -3.0, 3.0, ndt)
    arr[0, :3] = [-2.5, 0.5, 1.5]  # exact halves: round ties to even
    for _, t, a in cases(arr):
        out = getattr(t, name)()
        assert out.dtype == fdt
        assert_close(out, NUM_UNARY[name](a).astype(ndt), **tol(ndt))


@pytest.mark.parametrize("dtype,npdt", [(fg.int64, np.int64), (fg.int32, np.int32)])
@pytest.mark.parametrize("name", sorted(NUM_UNARY))
def test_numeric_unary_on_ints_keeps_int_dtype(name, dtype, npdt):
    a = np.array([[-7, 0, 5], [3, -1, 2]], dtype=npdt)
    for _, t, arr in cases(a):
        out = getattr(t.to(dtype), name)()
        assert out.dtype == dtype
        np.testing.assert_array_equal(to_np(out), NUM_UNARY[name](arr).astype(npdt))


def test_frac_and_round_decimals_match_numpy(rng):
    for fdt, ndt in FLOAT_DTYPES:
        a = sample(rng, (3, 4), -50, 50, ndt)
        for _, t, arr in cases(a):
            assert t.frac().dtype == fdt
            assert_close(t.frac(), arr - np.trunc(arr), **tol(ndt))
            for d in (-1, 1, 2):
                assert_close(t.round(decimals=d), np.round(arr, d), **tol(ndt))
                assert_close(fg.round(t, decimals=d), np.round(arr, d), **tol(ndt))
    assert fg.tensor([0.5, 1.5, 2.5, -0.5]).round().tolist() == [0.0, 2.0, 2.0, -0.0]
    with pytest.raises(RuntimeError, match="Long"):
        fg.tensor([1, 2]).frac()
    with pytest.raises(RuntimeError):
        fg.tensor([1, 2]).round(decimals=1)


def test_unary_special_values():
    t = fg.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0], dtype=fg.float64)
    x = to_np(t)
    with np.errstate(all="ignore"):
        for name in ("sqrt", "exp", "log", "sigmoid", "tanh", "erf", "reciprocal"):
            oracle = FLOAT_UNARY[name][0]
            np.testing.assert_array_equal(to_np(getattr(t, name)()), oracle(x), err_msg=name)
    assert math.isnan(fg.tensor([-1.0]).sqrt().item())
    assert fg.tensor([0.0]).log().item() == -math.inf
    assert math.isnan(t.relu()[0].item()) if hasattr(t, "__getitem__") else True
    assert math.isnan(t.relu().tolist()[0]) and t.relu().tolist()[1:] == [math.inf, 0, 0, 0]
    assert t.sign().tolist()[1:] == [1.0, -1.0, 0.0, 0.0]


def test_bool_unary_rules():
    b = fg.tensor([True, False])
    assert b.sqrt().dtype == fg.float32 and b.sqrt().tolist() == [1.0, 0.0]
    assert b.square().dtype == fg.int64 and b.square().tolist() == [1, 0]
    assert b.sign().dtype == fg.bool and b.sign().tolist() == [True, False]
    for name in ("neg", "abs", "floor", "relu"):
        with pytest.raises(RuntimeError):
            getattr(b, name)()
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        _ = -b
    with pytest.raises(RuntimeError):
        _ = +b


def test_integer_overflow_wraps_instead_of_crashing():
    big = fg.tensor([2**31 - 1, -(2**31)], dtype=fg.int32)
    assert (big + 1).tolist() == [-(2**31), -(2**31) + 1]
    assert big.abs().tolist() == [2**31 - 1, -(2**31)]
    assert (-big).tolist() == [-(2**31) + 1, -(2**31)]
    assert (big // -1).tolist() == [-(2**31) + 1, -(2**31)]
    assert (fg.tensor([3], dtype=fg.int64) ** 41).tolist() == [(3**41 + 2**63) % 2**64 - 2**63]


# --------------------------------------------------------------- binary ops

BINARY = {
    "add": (np.add, (-3, 3), (-3, 3)),
    "sub": (np.subtract, (-3, 3), (-3, 3)),
    "mul": (np.multiply, (-3, 3), (-3, 3)),
    "div": (np.true_divide, (-3, 3), (0.5, 3)),
    "true_divide": (np.true_divide, (-3, 3), (-3, -0.5)),
    "floor_divide": (np.floor_divide, (-9, 9), (-3, 3)),
    "remainder": (np.remainder, (-9, 9), (-3, 3)),
    "fmod": (np.fmod, (-9, 9), (-3, 3)),
    "pow": (np.power, (0.1, 3), (-2, 2)),
    "atan2": (np.arctan2, (-3, 3), (-3, 3)),
    "maximum": (np.maximum, (-3, 3), (-3, 3)),
    "minimum": (np.minimum, (-3, 3), (-3, 3)),
}

OPERATORS = {
    "+": (lambda a, b: a + b, np.add),
    "-": (lambda a, b: a - b, np.subtract),
    "*": (lambda a, b: a * b, np.multiply),
    "/": (lambda a, b: a / b, np.true_divide),
    "//": (lambda a, b: a // b, np.floor_divide),
    "%": (lambda a, b: a % b, np.remainder),
    "**": (lambda a, b: a**b, np.power),
}


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_numpy_on_every_layout(name, fdt, ndt, rng):
    oracle, (alo, ahi), (blo, bhi) = BINARY[name]
    a = sample(rng, (4, 3), alo, ahi, ndt)
    b = sample(rng, (4, 3), blo, bhi, ndt)
    for label, ta, na in cases(a):
        for _, tb, nb in cases(b)[:2]:
            out = getattr(ta, name)(tb)
            assert out.dtype == fdt, label
            assert_close(out, oracle(na, nb).astype(ndt), **tol(ndt))
            assert_close(getattr(fg, name)(ta, tb), oracle(na, nb).astype(ndt), **tol(ndt))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcasts_like_numpy(name, rng):
    oracle, (alo, ahi), (blo, bhi) = BINARY[name]
    a = sample(rng, (3, 1, 4), alo, ahi, np.float64)
    b = sample(rng, (2, 4), blo, bhi, np.float64)
    out = getattr(fg.tensor(a), name)(fg.tensor(b))
    assert out.shape == (3, 2, 4)
    assert_close(out, oracle(a, b), **F64_TOL)
    back = getattr(fg.tensor(b), name)(fg.tensor(a))
    with np.errstate(invalid="ignore"):  # negative ** fraction is NaN in both
        assert_close(back, oracle(b, a), **F64_TOL)


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_operators_with_python_scalars_on_both_sides(op, fdt, ndt, rng):
    f, oracle = OPERATORS[op]
    a = sample(rng, (3, 4), 0.5, 3, ndt)
    for _, t, arr in cases(a):
        for s in (2, 1.5):
            right = f(t, s)
            left = f(s, t)
            assert right.dtype == fdt and left.dtype == fdt
            assert_close(right, oracle(arr, ndt(s)), **tol(ndt))
            assert_close(left, oracle(ndt(s), arr), **tol(ndt))


@pytest.mark.parametrize("dtype,npdt", [(fg.int64, np.int64), (fg.int32, np.int32)])
def test_integer_arithmetic_keeps_int_dtype_with_python_semantics(dtype, npdt):
    a = np.array([[-7, 7, -8], [9, 0, -1]], dtype=npdt)
    b = np.array([[2, -2, 3], [-4, 5, -1]], dtype=npdt)
    ta, tb = fg.tensor(a, dtype=dtype), fg.tensor(b, dtype=dtype)
    for name in ("add", "sub", "mul", "floor_divide", "remainder", "fmod", "maximum", "minimum"):
        out = getattr(ta, name)(tb)
        assert out.dtype == dtype, name
        np.testing.assert_array_equal(to_np(out), BINARY[name][0](a, b), err_msg=name)
    np.testing.assert_array_equal(to_np(ta.div(tb, rounding_mode="trunc")), np.trunc(a / b))
    np.testing.assert_array_equal(to_np(ta.div(tb, rounding_mode="floor")), a // b)
    assert (ta + 2).dtype == dtype and (ta * 2).dtype == dtype and (ta % 3).dtype == dtype
    assert (ta / tb).dtype == fg.float32
    assert_close(ta / tb, (a / b).astype(np.float32))
    assert (ta**2).dtype == dtype and (ta**2).tolist() == (a.astype(np.int64) ** 2).tolist()
    assert (ta**2.0).dtype == fg.float32


def test_type_promotion_follows_result_type():
    f32 = fg.tensor([1.0, 2.0])
    f64 = fg.tensor([1.0, 2.0], dtype=fg.float64)
    i32 = fg.tensor([1, 2], dtype=fg.int32)
    i64 = fg.tensor([1, 2])
    b = fg.tensor([True, False])
    z64 = fg.tensor(2.0, dtype=fg.float64)
    pairs = [
        (i32, i64, fg.int64), (i32, f32, fg.float32), (f32, f64, fg.float64),
        (f32, z64, fg.float32), (i32, z64, fg.float64), (b, b, fg.bool), (b, i32, fg.int32),
        (i32, 2, fg.int32), (i32, 2.5, fg.float32), (b, 1, fg.int64), (f64, 2.5, fg.float64),
    ]  # fmt: skip
    for x, y, want in pairs:
        assert fg.result_type(x, y) == want
        assert (x + y).dtype == want and fg.add(x, y).dtype == want
        assert fg.maximum(x, y).dtype == want
        assert (x == y).dtype == fg.bool
        assert (x / y).dtype == (want if want.is_floating_point else fg.float32)
        assert fg.atan2(x, y).dtype == (want if want.is_floating_point else fg.float32)


def test_bool_arithmetic_where_torch_allows_it():
    t, f = fg.tensor([True, True, False]), fg.tensor([True, False, False])
    assert (t + f).tolist() == [True, True, False] and (t + f).dtype == fg.bool
    assert (t * f).tolist() == [True, False, False]
    assert fg.maximum(t, f).tolist() == [True, True, False]
    assert fg.minimum(t, f).tolist() == [True, False, False]
    assert (t + 1).tolist() == [2, 2, 1] and (t + 1).dtype == fg.int64
    assert (t / f).dtype == fg.float32
    with pytest.raises(RuntimeError, match="Subtraction"):
        t - f
    for op in (lambda: t // f, lambda: t % f, lambda: t**f):
        with pytest.raises(RuntimeError):
            op()


def test_division_special_values_for_floats():
    for fdt, ndt in FLOAT_DTYPES:
        a = np.array([1.0, -1.0, 0.0, 5.0, -5.0], dtype=ndt)
        z = np.zeros(5, dtype=ndt)
        ta, tz = fg.tensor(a, dtype=fdt), fg.tensor(z, dtype=fdt)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(to_np(ta / tz), a / z)
            np.testing.assert_array_equal(to_np(ta // tz), np.floor_divide(a, z))
            np.testing.assert_array_equal(to_np(ta % tz), np.remainder(a, z))
            np.testing.assert_array_equal(to_np(ta.fmod(tz)), np.fmod(a, z))
            np.testing.assert_array_equal(
                to_np(ta.div(tz, rounding_mode="trunc")), np.trunc(a / z)
            )
    # Python semantics where floor(1 / 0.1) would be off by one.
    assert (fg.tensor([1.0], dtype=fg.float64) // 0.1).item() == 1.0 // 0.1
    assert (fg.tensor([-1.0], dtype=fg.float64) % 0.3).item() == pytest.approx(-1.0 % 0.3)


def test_integer_division_by_zero_raises_runtime_error():
    a, z = fg.tensor([4, 5]), fg.tensor([1, 0])
    ops = [
        lambda: a // z, lambda: a % z, lambda: a.fmod(z), lambda: a // 0,
        lambda: a.div(z, rounding_mode="trunc"), lambda: a.div(0, rounding_mode="floor"),
        lambda: a.remainder_(z), lambda: a.floor_divide_(0),
    ]  # fmt: skip
    for op in ops:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            op()
    assert a.tolist() == [4, 5]  # the failed in-place ops wrote nothing
    assert (a / z).tolist() == [4.0, math.inf]


def test_div_rounding_modes_match_numpy(rng):
    for fdt, ndt in FLOAT_DTYPES:
        a = sample(rng, (3, 4), -9, 9, ndt)
        b = sample(rng, (3, 4), 0.5, 3, ndt) * rng.choice([-1, 1], size=(3, 4)).astype(ndt)
        ta, tb = fg.tensor(a, dtype=fdt), fg.tensor(b, dtype=fdt)
        assert_close(ta.div(tb, rounding_mode="trunc"), np.trunc(a / b), **tol(ndt))
        assert_close(ta.div(tb, rounding_mode="floor"), np.floor_divide(a, b), **tol(ndt))
        assert_close(fg.div(ta, tb, rounding_mode=None), a / b, **tol(ndt))
        assert_close(fg.divide(ta, tb, rounding_mode="floor"), np.floor_divide(a, b), **tol(ndt))
    with pytest.raises(RuntimeError, match="rounding_mode"):
        fg.tensor([1.0]).div(2, rounding_mode="round")
    with pytest.raises(TypeError):
        fg.tensor([1.0]).div(2, rounding_mode=3)


def test_pow_forms_and_negative_integer_exponent():
    t = fg.tensor([1, 2, 3])
    assert (2**t).tolist() == [2, 4, 8] and (2**t).dtype == fg.int64
    assert fg.pow(2, t).tolist() == [2, 4, 8]
    assert fg.pow(t, 2).tolist() == [1, 4, 9]
    assert (2.0**t).dtype == fg.float32 and (2.0**t).tolist() == [2.0, 4.0, 8.0]
    assert_close(t**0.5, np.sqrt([1, 2, 3]).astype(np.float32))
    assert fg.pow(input=t, exponent=2).tolist() == [1, 4, 9]
    for op in (lambda: t**-1, lambda: t.pow(-2), lambda: t.pow_(-1), lambda: fg.pow(t, -1)):
        with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
            op()
    assert (fg.tensor([2.0]) ** -1).tolist() == [0.5]
    assert (t ** fg.tensor([-1, -1, -1])).tolist() == [1, 0, 0]  # tensor exponent: truncates
    with pytest.raises(TypeError):
        pow(t, 2, 5)


def test_float64_pow_within_two_ulp_on_every_path():
    # Contiguous pairs and a Python-number exponent run the vectorised body;
    # a transposed operand and the in-place form take it one pair at a time.
    rng = np.random.default_rng(11)
    x = np.exp(rng.uniform(-40, 40, (64, 64))) * rng.choice([1.0, -1.0], (64, 64))
    y = np.where(rng.random((64, 64)) < 0.5, rng.uniform(-15, 15, (64, 64)), rng.integers(-9, 10, (64, 64)))
    want = np.power(x, y)
    tx, ty = fg.tensor(x, dtype=fg.float64), fg.tensor(y, dtype=fg.float64)
    inplace = tx.clone()
    inplace.pow_(ty)
    for got, ref in [
        (tx.pow(ty), want),
        (tx.t().pow(ty), np.power(x.T, y)),
        (inplace, want),
        (tx.pow(2.5), np.power(x, 2.5)),
        (tx.pow(2), x * x),
    ]:
        got = got.numpy()
        assert np.array_equal(np.isnan(got), np.isnan(ref))
        ok = ~np.isnan(ref)
        ref_sp = np.spacing(np.abs(ref[ok]))
        assert np.all(np.abs(got[ok] - ref[ok]) <= 2 * ref_sp), np.max(np.abs(got[ok] - ref[ok]) / ref_sp)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, math.inf, -math.inf, math.nan, 5e-324, 1e308]
    a = np.array([u for u in special for _ in special])
    b = np.array([v for _ in special for v in special])
    with np.errstate(all="ignore"):
        ref = np.power(a, b)
    got = fg.tensor(a, dtype=fg.float64).pow(fg.tensor(b, dtype=fg.float64)).numpy()
    same = (got == ref) & (np.signbit(got) == np.signbit(ref)) | (np.isnan(got) & np.isnan(ref))
    close = np.abs(got - ref) <= 2 * np.spacing(np.abs(ref))
    bad = ~(same | (np.isfinite(ref) & (ref != 0) & close))
    assert not bad.any(), list(zip(a[bad], b[bad], got[bad], strict=True))


def test_add_and_sub_alpha():
    a = np.array([1.0, 2.0, 3.0])
    b = np.array([0.5, -1.0, 2.0])
    ta, tb = fg.tensor(a, dtype=fg.float64), fg.tensor(b, dtype=fg.float64)
    assert_close(ta.add(tb, alpha=2), a + 2 * b)
    assert_close(fg.add(ta, tb, alpha=0.1), a + 0.1 * b, **F64_TOL)
    assert_close(fg.sub(input=ta, other=tb, alpha=3), a - 3 * b)
    assert_close(ta.subtract(tb, alpha=-1), a + b)
    assert_close(fg.rsub(ta, tb, alpha=2), b - 2 * a)
    assert_close(fg.add(1, ta), 1 + a)
    i = fg.tensor([1, 2])
    assert i.add(i, alpha=3).tolist() == [4, 8]
    with pytest.raises(RuntimeError, match="alpha"):
        i.add(i, alpha=1.5)
    with pytest.raises(RuntimeError, match="Boolean alpha"):
        ta.add(tb, alpha=True)
    with pytest.raises(TypeError):
        ta.add(tb, alpha="x")


def test_float32_alpha_forms_round_once():
    # a + alpha * b is rounded once to float32, as a fused multiply-add gives it:
    # the float64 value of a + float32(alpha) * b is exact up to one rounding.
    rng = np.random.default_rng(5)
    a = rng.standard_normal(4096).astype(np.float32)
    b = rng.standard_normal(4096).astype(np.float32)
    ta, tb = fg.tensor(a), fg.tensor(b)
    for alpha in (0.1, -0.37, 3.3):
        k = np.float64(np.float32(alpha))
        plus = (a.astype(np.float64) + k * b.astype(np.float64)).astype(np.float32)
        minus = (a.astype(np.float64) - k * b.astype(np.float64)).astype(np.float32)
        assert np.array_equal(ta.add(tb, alpha=alpha).numpy(), plus)
        assert np.array_equal(ta.sub(tb, alpha=alpha).numpy(), minus)
        inplace = ta.clone()
        inplace.add_(tb, alpha=alpha)
        assert np.array_equal(inplace.numpy(), plus)
        inplace = ta.clone()
        inplace.sub_(tb, alpha=alpha)
        assert np.array_equal(inplace.numpy(), minus)


# ------------------------------------------------------- comparison, logic

CMP = {
    "eq": (np.equal, lambda a, b: a == b),
    "ne": (np.not_equal, lambda a, b: a != b),
    "lt": (np.less, lambda a, b: a < b),
    "le": (np.less_equal, lambda a, b: a <= b),
    "gt": (np.greater, lambda a, b: a > b),
    "ge": (np.greater_equal, lambda a, b: a >= b),
}
CMP_ALIASES = {
    "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge",
}  # fmt: skip


@pytest.mark.parametrize("fdt,ndt", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(CMP))
def test_comparisons_match_numpy_including_nan(name, fdt, ndt, rng):
    oracle, op = CMP[name]
    a = rng.integers(-2, 3, size=(3, 4)).astype(ndt)
    a[0, 0] = np.nan
    b = rng.integers(-2, 3, size=(3, 4)).astype(ndt)
    for _, ta, na in cases(a):
        tb = fg.tensor(b, dtype=fdt)
        for out in (getattr(ta, name)(tb), op(ta, tb), getattr(fg, name)(ta, tb)):
            assert out.dtype == fg.bool
            np.testing.assert_array_equal(to_np(out), oracle(na, b))
        np.testing.assert_array_equal(to_np(op(ta, 1)), oracle(na, 1))
        np.testing.assert_array_equal(to_np(op(1, ta)), oracle(1, na))
    b3 = rng.integers(-2, 3, size=(2, 1, 4)).astype(ndt)
    np.testing.assert_array_equal(to_np(op(fg.tensor(a), fg.tensor(b3))), oracle(a, b3))


def test_comparison_aliases_and_mixed_dtypes():
    a, b = fg.tensor([1, 2, 3]), fg.tensor([1.5, 2.0, 2.5])
    for alias, name in CMP_ALIASES.items():
        assert getattr(a, alias)(b).tolist() == getattr(a, name)(b).tolist()
        assert getattr(fg, alias)(a, b).tolist() == getattr(a, name)(b).tolist()
    assert (a == 2.5).tolist() == [False, False, False]
    assert (a < 2.5).tolist() == [True, True, False]
    assert (fg.tensor([True, False]) == fg.tensor([1, 0])).tolist() == [True, True]


def test_comparison_with_unsupported_operands_and_hash():
    t = fg.tensor([1, 2])
    assert (t == "a") is False and (t != None) is True  # noqa: E711
    with pytest.raises(TypeError):
        t < "a"  # noqa: B015
    assert hash(t) == hash(t) and {t: 1}[t] == 1
    assert len({t, fg.tensor([1, 2])}) == 2


def test_logical_ops_match_numpy(rng):
    a = rng.integers(-1, 2, size=(3, 4)).astype(np.float32)
    b = rng.integers(0, 2, size=(4,)).astype(np.int64)
    for _, ta, na in cases(a):
        tb = fg.tensor(b)
        for name, oracle in (
            ("logical_and", np.logical_and), ("logical_or", np.logical_or),
            ("logical_xor", np.logical_xor),
        ):  # fmt: skip
            out = getattr(ta, name)(tb)
            assert out.dtype == fg.bool
            np.testing.assert_array_equal(to_np(out), oracle(na, b))
            np.testing.assert_array_equal(to_np(getattr(fg, name)(ta, tb)), oracle(na, b))
        np.testing.assert_array_equal(to_np(ta.logical_not()), np.logical_not(na))
        np.testing.assert_array_equal(to_np(fg.logical_not(ta)), np.logical_not(na))


@pytest.mark.parametrize("dtype,npdt", [(fg.int64, np.int64), (fg.int32, np.int32)])
def test_bitwise_ops_and_operators(dtype, npdt, rng):
    a = rng.integers(-50, 50, size=(3, 4)).astype(npdt)
    b = rng.integers(-50, 50, size=(3, 4)).astype(npdt)
    for _, ta, na in cases(a):
        tb = fg.tensor(b, dtype=dtype)
        np.testing.assert_array_equal(to_np(ta & tb), na & b)
        np.testing.assert_array_equal(to_np(ta | tb), na | b)
        np.testing.assert_array_equal(to_np(ta ^ tb), na ^ b)
        np.testing.assert_array_equal(to_np(~ta), ~na)
        np.testing.assert_array_equal(to_np(fg.bitwise_and(ta, 6)), na & 6)
        np.testing.assert_array_equal(to_np(6 | ta), 6 | na)
        assert (ta & tb).dtype == dtype
    t, f = fg.tensor([True, False, True]), fg.tensor([True, True, False])
    assert (t & f).tolist() == [True, False, False] and (t | f).tolist() == [True, True, True]
    assert (t ^ f).tolist() == [False, True, True] and (~t).tolist() == [False, True, False]
    for op in (lambda: ~fg.tensor([1.0]), lambda: fg.tensor([1.0]) & 1, lambda: t | 1.5):
        with pytest.raises(RuntimeError, match="Float"):
            op()


def test_float_predicates_match_numpy():
    for fdt, ndt in FLOAT_DTYPES:
        a = np.array([[np.nan, np.inf, -np.inf], [0.0, -0.0, 1.5]], dtype=ndt)
        for _, t, na in cases(a):
            assert t.dtype == fdt
            for name, oracle in (
                ("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite),
                ("isposinf", np.isposinf), ("isneginf", np.isneginf), ("signbit", np.signbit),
            ):  # fmt: skip
                out = getattr(t, name)()
                assert out.dtype == fg.bool
                np.testing.assert_array_equal(to_np(out), oracle(na), err_msg=name)
                np.testing.assert_array_equal(to_np(getattr(fg, name)(t)), oracle(na))
    i = fg.tensor([[1, -2]])
    assert i.isnan().tolist() == [[False, False]] and i.isfinite().tolist() == [[True, True]]
    assert i.isinf().shape == (1, 2) and i.signbit().tolist() == [[False, True]]


def test_isclose_allclose_equal_match_numpy():
    a = np.array([1.0, 1.0 + 1e-6, 1.0 + 1e-4, np.inf, -np.inf, np.nan, 0.0, 1e-9])
    b = np.array([1.0, 1.0, 1.0, np.inf, np.inf, np.nan, 1e-9, 0.0])
    for fdt, ndt in FLOAT_DTYPES:
        ta, tb = fg.tensor(a, dtype=fdt), fg.tensor(b, dtype=fdt)
        for kw in ({}, {"equal_nan": True}, {"rtol": 1e-3, "atol": 0.0}, {"atol": 1e-8}):
            want = np.isclose(a.astype(ndt), b.astype(ndt), **kw)
            np.testing.assert_array_equal(to_np(ta.isclose(tb, **kw)), want)
            np.testing.assert_array_equal(to_np(fg.isclose(ta, tb, **kw)), want)
    x = fg.tensor([1.0, 2.0])
    assert fg.allclose(x, x + 1e-7) and not fg.allclose(x, x + 1e-3)
    assert x.allclose(x + 1e-3, atol=1e-2)
    assert fg.equal(x, fg.tensor([1.0, 2.0])) and not fg.equal(x, fg.tensor([1.0, 2.5]))
    assert not fg.equal(x, fg.tensor([[1.0, 2.0]]))
    assert not fg.equal(fg.tensor([math.nan]), fg.tensor([math.nan]))
    assert fg.isclose(fg.tensor([1, 2]), fg.tensor([1, 3])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="same dtype"):
        fg.isclose(x, x.double())
    with pytest.raises(RuntimeError):
        fg.isclose(x, x, rtol=-1.0)
    with pytest.raises(TypeError):
        fg.isclose(x, 1.0)


# ------------------------------------------------------------ ternary ops


def test_where_matches_numpy_with_broadcasting_and_scalars(rng):
    for fdt, ndt in FLOAT_DTYPES:
        x = sample(rng, (3, 4), -1, 1, ndt)
        y = sample(rng, (4,), -1, 1, ndt)
        c = rng.integers(0, 2, size=(3, 1)).astype(bool)
        for _, tx, nx in cases(x):
            out = fg.where(fg.tensor(c), tx, fg.tensor(y, dtype=fdt))
            assert out.dtype == fdt
            assert_close(out, np.where(c, nx, y))
            assert_close(tx.where(fg.tensor(c), 0.5), np.where(c, nx, ndt(0.5)))
            assert_close(fg.where(fg.tensor(c), 2.0, tx), np.where(c, ndt(2.0), nx))
        cond = fg.tensor(x) > 0
        assert_close(fg.where(cond, 1.0, 0.0), (x > 0).astype(np.float32))
        assert fg.where(cond, 1, 0).dtype == fg.int64
    i, f = fg.tensor([1, 2]), fg.tensor([0.5, 0.5])
    assert fg.where(fg.tensor([True, False]), i, f).tolist() == [1.0, 0.5]
    assert fg.where(condition=fg.tensor([True, False]), input=i, other=f).dtype == fg.float32
    with pytest.raises(RuntimeError, match="boolean"):
        fg.where(fg.tensor([1.0, 0.0]), i, f)
    with pytest.raises(RuntimeError, match="size"):
        fg.where(fg.tensor([True, False, True]), i, f)
    with pytest.raises(TypeError):
        fg.where(fg.tensor([True, False]), i)


def test_clamp_forms_match_numpy(rng):
    for fdt, ndt in FLOAT_DTYPES:
        a = sample(rng, (3, 4), -2, 2, ndt)
        a[0, 0] = np.nan
        lo = sample(rng, (4,), -1, 0, ndt)
        for _, t, na in cases(a):
            assert_close(t.clamp(-0.5, 0.5), np.clip(na, -0.5, 0.5))
            assert_close(fg.clamp(t, min=-0.5), np.maximum(na, -0.5))
            assert_close(fg.clamp(t, max=0.5), np.minimum(na, 0.5))
            assert_close(t.clip(min=fg.tensor(lo, dtype=fdt), max=1.0), np.clip(na, lo, 1.0))
            assert_close(t.clamp_min(0.25), np.maximum(na, 0.25))
            assert_close(fg.clamp_max(t, fg.tensor(lo, dtype=fdt)), np.minimum(na, lo))
            assert t.clamp(0, 1).dtype == fdt
        assert_close(fg.clamp(fg.tensor(a), 1.0, -1.0), np.full_like(a, -1.0) + 0 * a)
    i = fg.tensor([-3, 0, 3])
    assert i.clamp(-1, 1).tolist() == [-1, 0, 1] and i.clamp(-1, 1).dtype == fg.int64
    assert i.clamp(min=0.5).dtype == fg.float32 and i.clamp(min=0.5).tolist() == [0.5, 0.5, 3.0]
    assert fg.tensor([1.0, 5.0]).clamp(min=math.nan).isnan().tolist() == [True, True]
    for op in (lambda: i.clamp(), lambda: fg.clamp(i), lambda: i.clamp_(None, None)):
        with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
            op()
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clamp_(min=0.5)
    with pytest.raises(RuntimeError):
        fg.tensor([True]).clamp(min=False)
    with pytest.raises(TypeError):
        i.clamp(min="a")


def test_lerp_matches_numpy_formula(rng):
    for fdt, ndt in FLOAT_DTYPES:
        s = sample(rng, (3, 4), -2, 2, ndt)
        e = sample(rng, (3, 4), -2, 2, ndt)
        w = sample(rng, (4,), -0.5, 1.5, ndt)
        for _, ts, ns in cases(s):
            te = fg.tensor(e, dtype=fdt)
            assert_close(ts.lerp(te, 0.3), ns + ndt(0.3) * (e - ns), **tol(ndt))
            assert_close(fg.lerp(ts, te, fg.tensor(w, dtype=fdt)), ns + w * (e - ns), **tol(ndt))
    f = fg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Long"):
        fg.tensor([1, 2]).lerp(fg.tensor([3, 4]), 0.5)
    with pytest.raises(RuntimeError, match="end"):
        f.lerp(f.double(), 0.5)
    with pytest.raises(RuntimeError, match="weight"):
        f.lerp(f, f.double())


def test_addcmul_addcdiv_match_numpy(rng):
    for fdt, ndt in FLOAT_DTYPES:
        x = sample(rng, (3, 4), -2, 2, ndt)
        a = sample(rng, (3, 1), -2, 2, ndt)
        b = sample(rng, (4,), 0.5, 2, ndt)
        for _, tx, nx in cases(x):
            ta, tb = fg.tensor(a, dtype=fdt), fg.tensor(b, dtype=fdt)
            assert_close(tx.addcmul(ta, tb), nx + a * b, **tol(ndt))
            assert_close(fg.addcmul(tx, ta, tb, value=0.5), nx + 0.5 * a * b, **tol(ndt))
            assert_close(tx.addcdiv(ta, tb, value=-2), nx - 2 * a / b, **tol(ndt))
            assert_close(fg.addcdiv(tx, ta, tb), nx + a / b, **tol(ndt))
    i = fg.tensor([1, 2])
    assert fg.addcmul(i, i, i, value=2).tolist() == [3, 10]
    assert fg.addcdiv(i, fg.tensor([1.0, 1.0]), fg.tensor([2.0, 4.0])).dtype == fg.float32
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        fg.addcdiv(fg.tensor([1.0]), i, i)
    with pytest.raises(RuntimeError, match="value"):
        fg.addcmul(i, i, i, value=0.5)


# --------------------------------------------------------------- in place

INPLACE = [
    ("add_", lambda t: t.add_(2, alpha=0.5), lambda a: a + 1.0),
    ("sub_", lambda t: t.sub_(0.5), lambda a: a - 0.5),
    ("mul_", lambda t: t.mul_(3), lambda a: a * 3),
    ("div_", lambda t: t.div_(4), lambda a: a / 4),
    ("div_floor", lambda t: t.div_(0.5, rounding_mode="floor"), lambda a: np.floor_divide(a, 0.5)),
    ("true_divide_", lambda t: t.true_divide_(2), lambda a: a / 2),
    ("floor_divide_", lambda t: t.floor_divide_(0.3), lambda a: np.floor_divide(a, 0.3)),
    ("remainder_", lambda t: t.remainder_(0.3), lambda a: np.remainder(a, 0.3)),
    ("fmod_", lambda t: t.fmod_(0.3), lambda a: np.fmod(a, 0.3)),
    ("pow_", lambda t: t.pow_(2), lambda a: a**2),
    ("atan2_", lambda t: t.atan2_(fg.tensor(0.5)), lambda a: np.arctan2(a, 0.5)),
    ("exp_", lambda t: t.exp_(), np.exp),
    ("sigmoid_", lambda t: t.sigmoid_(), lambda a: 1 / (1 + np.exp(-a))),
    ("tanh_", lambda t: t.tanh_(), np.tanh),
    ("neg_", lambda t: t.neg_(), np.negative),
    ("abs_", lambda t: t.abs_(), np.abs),
    ("square_", lambda t: t.square_(), np.square),
    ("round_", lambda t: t.round_(decimals=1), lambda a: np.round(a, 1)),
    ("floor_", lambda t: t.floor_(), np.floor),
    ("relu_", lambda t: t.relu_(), lambda a: np.maximum(a, 0)),
    ("clamp_", lambda t: t.clamp_(-0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
    ("clamp_min_", lambda t: t.clamp_min_(0.1), lambda a: np.maximum(a, 0.1)),
    ("clip_", lambda t: t.clip_(max=fg.tensor([0.0, 0.2, 0.4])),
     lambda a: np.minimum(a, [0, 0.2, 0.4])),
    ("lerp_", lambda t: t.lerp_(fg.ones(3), 0.25), lambda a: a + 0.25 * (1 - a)),
    ("addcmul_", lambda t: t.addcmul_(fg.ones(3), fg.full((3,), 2.0), value=3), lambda a: a + 6),
    ("addcdiv_", lambda t: t.addcdiv_(fg.ones(3), fg.full((3,), 2.0)), lambda a: a + 0.5),
    ("lt_", lambda t: t.lt_(0), lambda a: (a < 0).astype(np.float32)),
    ("logical_not_", lambda t: t.logical_not_(), lambda a: (a == 0).astype(np.float32)),
    ("fill_", lambda t: t.fill_(7), lambda a: np.full_like(a, 7)),
    ("zero_", lambda t: t.zero_(), np.zeros_like),
    ("copy_", lambda t: t.copy_(fg.tensor([1, 2, 3])), lambda a: np.array([1.0, 2.0, 3.0])),
]  # fmt: skip


@pytest.mark.parametrize("name,op,oracle", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_ops_write_through_views_and_bump_version(name, op, oracle, rng):
    base_np = rng.uniform(-1, 1, size=(3, 3)).astype(np.float32)
    base = fg.tensor(base_np)
    view = base.select(0, 1)  # a strided view sharing the base's storage
    v0 = base._version
    out = op(view)
    assert out is view
    assert base._version > v0 and view._version == base._version
    want = base_np.copy()
    want[1] = oracle(base_np[1].astype(np.float64)).astype(np.float32)
    assert_close(base, want, rtol=1e-5, atol=1e-6)
    col = fg.tensor(base_np).select(1, 0)  # non-contiguous view
    op(col)
    assert_close(col, oracle(base_np[:, 0].astype(np.float64)).astype(np.float32), atol=1e-6)


def test_inplace_operators_keep_identity_and_match_numpy():
    for sym, oracle in (
        ("+=", np.add), ("-=", np.subtract), ("*=", np.multiply), ("/=", np.true_divide),
        ("//=", np.floor_divide), ("%=", np.remainder), ("**=", np.power),
    ):  # fmt: skip
        a = np.array([[1.5, 2.0, 3.0], [4.0, 5.5, 6.0]])
        t = fg.tensor(a, dtype=fg.float64)
        same, v0 = t, t._version
        ns = {"t": t}
        exec(f"t {sym} 2", ns)
        assert ns["t"] is same and t._version == v0 + 1
        assert_close(t, oracle(a, 2.0), **F64_TOL)
    i = fg.tensor([6, 7])
    i &= 3
    i |= 8
    i ^= 1
    assert i.tolist() == [(6 & 3 | 8) ^ 1, (7 & 3 | 8) ^ 1]


def test_inplace_refuses_results_it_cannot_hold():
    i = fg.tensor([1, 2, 3])
    ops = [
        lambda: i.div_(2), lambda: i.exp_(), lambda: i.sqrt_(), lambda: i.add_(0.5),
        lambda: i.mul_(fg.tensor([1.0])), lambda: i.atan2_(i), lambda: i.sigmoid_(),
    ]  # fmt: skip
    for op in ops:
        msg = "result type Float can't be cast to the desired output type Long"
        with pytest.raises(RuntimeError, match=msg):
            op()
    with pytest.raises(RuntimeError):
        i /= 2
    with pytest.raises(RuntimeError, match="Bool"):
        fg.tensor([True]).add_(1)
    assert i.tolist() == [1, 2, 3] and i._version == 0
    x = fg.zeros(3)
    with pytest.raises(RuntimeError, match="shape"):
        x.add_(fg.ones(2, 3))
    with pytest.raises(RuntimeError, match="shape"):
        x.lt_(fg.ones(2, 3))
    with pytest.raises(RuntimeError):
        fg.zeros(3).expand(2, 3).add_(1)  # overlapping memory
    with pytest.raises(TypeError):
        x += "a"


def test_fill_zero_copy_bindings():
    t = fg.zeros(2, 3, dtype=fg.int64)
    assert t.fill_(fg.tensor(4.7)) is t and t.tolist() == [[4, 4, 4]] * 2
    assert t.zero_().tolist() == [[0, 0, 0]] * 2
    t.copy_(fg.tensor([1.9, -2.9, 3.0]))  # broadcast rows, cast to int
    assert t.tolist() == [[1, -2, 3]] * 2
    assert t._version == 3
    with pytest.raises(RuntimeError, match="0-dimension"):
        t.fill_(fg.tensor([1, 2]))
    with pytest.raises(TypeError):
        t.fill_("x")
    with pytest.raises(TypeError):
        t.copy_([1, 2, 3])
    with pytest.raises(RuntimeError):
        t.copy_(fg.ones(4))


def test_out_argument():
    t = fg.tensor([1.0, 4.0])
    o = fg.empty(2)
    assert fg.sqrt(t, out=o) is o and o.tolist() == [1.0, 2.0]
    assert fg.add(t, 1, out=o) is o and o.tolist() == [2.0, 5.0]
    with pytest.raises(RuntimeError, match="shape"):
        fg.exp(t, out=fg.empty(3))
    with pytest.raises(RuntimeError, match="can't be cast"):
        fg.exp(t, out=fg.empty(2, dtype=fg.int64))
    with pytest.raises(TypeError):
        fg.exp(t, out=[0, 0])


def test_unsupported_operand_types_raise_type_error():
    t = fg.tensor([1.0])
    for op in (
        lambda: t + "a", lambda: "a" - t, lambda: t * None, lambda: t / [], lambda: t // {},
        lambda: t % "x", lambda: t ** "x", lambda: "x" ** t, lambda: t & "x",
    ):  # fmt: skip
        with pytest.raises(TypeError):
            op()
    with pytest.raises(TypeError):
        t.add("a")
    with pytest.raises(TypeError):
        fg.exp(2.0)
    assert (t + np.float64(2.0)).tolist() == [3.0]


def test_unary_operators():
    a = np.array([[-1.5, 2.0], [0.0, 3.25]])
    t = fg.tensor(a)
    assert_close(-t, -a)
    assert +t is t and fg.positive(t) is t
    assert_close(abs(t), np.abs(a))
    assert (~fg.tensor([True, False])).tolist() == [False, True]


# ------------------------------------------------------ broadcasting property


@st.composite
def broadcast_pair(draw):
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    def operand():
        nd = draw(st.integers(0, len(out)))
        dims = out[len(out) - nd:]
        return [d if draw(st.booleans()) else 1 for d in dims]
    return operand(), operand()


@settings(max_examples=60, deadline=None)
@given(broadcast_pair(), st.sampled_from(["add", "mul", "maximum", "lt", "where"]))
def test_broadcasting_property_matches_numpy(shapes, name):
    sa, sb = shapes
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a = rng.uniform(-2, 2, size=sa)
    b = rng.uniform(-2, 2, size=sb)
    ta, tb = fg.tensor(a, dtype=fg.float64), fg.tensor(b, dtype=fg.float64)
    if name == "where":
        got, want = fg.where(ta > 0, ta, tb), np.where(a > 0, a, b)
    else:
        oracle = {"add": np.add, "mul": np.multiply, "maximum": np.maximum, "lt": np.less}[name]
        got, want = getattr(ta, name)(tb), oracle(a, b)
    assert tuple(got.shape) == want.shape
    np.testing.assert_array_equal(to_np(got), want)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(2, 5), min_size=1, max_size=3), st.integers(0, 2), st.integers(1, 3))
def test_incompatible_shapes_raise_naming_both_sizes(shape, pos, bump):
    pos = pos % len(shape)
    other = list(shape)
    other[pos] = shape[pos] + bump
    a, b = fg.zeros(*shape), fg.zeros(*other)
    for op in (lambda: a + b, lambda: a.maximum(b), lambda: a < b, lambda: fg.where(a > 0, a, b)):
        with pytest.raises(RuntimeError) as err:
            op()
        msg = str(err.value)
        assert str(shape[pos]) in msg and str(other[pos]) in msg


@pytest.mark.parametrize("threads", [1, 2])
def test_strided_operands_past_the_parallel_size_match_numpy(rng, threads):
    # Permuted, broadcast and sliced operands large enough to split over the
    # pool: the loop nest merges dims and hands out runs that may start and
    # end mid-row.
    old = fg.get_num_threads()
    fg.set_num_threads(threads)
    try:
        x = rng.standard_normal((64, 6, 28, 28)).astype(np.float32)
        b = rng.standard_normal((6, 1, 1)).astype(np.float32)
        t = fg.tensor(x)
        np.testing.assert_array_equal(to_np(t + fg.tensor(b)), x + b)
        perm = t.permute(1, 0, 3, 2)
        np.testing.assert_array_equal(to_np(perm.contiguous()), x.transpose(1, 0, 3, 2))
        np.testing.assert_allclose(to_np(perm.exp()), np.exp(x.transpose(1, 0, 3, 2)), rtol=1e-6)
        sl = t[:, 1:5, ::2, 3:]
        back = perm.permute(1, 0, 3, 2)[:, 1:5, ::2, 3:]
        np.testing.assert_array_equal(to_np(sl * back), (x * x)[:, 1:5, ::2, 3:])
        # In place into a transposed destination.
        d = fg.tensor(x.copy()).transpose(0, 3)
        want = np.swapaxes(x, 0, 3) + b
        d.add_(fg.tensor(b))
        np.testing.assert_array_equal(to_np(d), want)
        d.mul_(2.0)
        np.testing.assert_array_equal(to_np(d), 2 * want)
    finally:
        fg.set_num_threads(old)


@pytest.mark.parametrize("threads", [1, 2])
def test_sums_over_outer_and_inner_dims_match_numpy_for_any_thread_count(rng, threads):
    # Summing [N, C, H, W] over N, H, W folds contiguous runs of H * W.
    x = rng.standard_normal((64, 6, 28, 28))
    old = fg.get_num_threads()
    fg.set_num_threads(threads)
    try:
        got = fg.tensor(x).sum((0, 2, 3))
        got32 = fg.tensor(x.astype(np.float32)).sum((0, 2, 3))
    finally:
        fg.set_num_threads(old)
    np.testing.assert_allclose(to_np(got), x.sum((0, 2, 3)), rtol=1e-12)
    np.testing.assert_allclose(to_np(got32), x.sum((0, 2, 3)), rtol=1e-5)
    ref = fg.tensor(x.astype(np.float32)).sum((0, 2, 3))
    assert to_np(got32).tobytes() == to_np(ref).tobytes()
