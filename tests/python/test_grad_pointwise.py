"""Gradients of the pointwise ops: first and second order against float64
finite differences on three memory layouts, broadcasting, dtype promotion,
torch's subgradients at kinks, and the in-place forms.
"""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import numpy as np
import pytest
from ferrograd.autograd import functional as F
from gradcheck_util import check_grad

RNG = np.random.default_rng(1234)


def uniform(lo: float, hi: float, shape=(2, 3)) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape)


def away_from_integers(shape=(2, 3)) -> np.ndarray:
    """Values whose fractional part is in (0.2, 0.4), far from kinks of floor/round/..."""
    return RNG.integers(-3, 3, size=shape) + RNG.uniform(0.2, 0.4, size=shape)


def signed(lo: float, hi: float, shape=(2, 3)) -> np.ndarray:
    """Magnitudes in [lo, hi] with random signs (away from 0)."""
    return uniform(lo, hi, shape) * RNG.choice([-1.0, 1.0], size=shape)


# ---------------------------------------------------------------------------
# Unary ops: (name, function, input values away from kinks and poles)

UNARY = [
    ("neg", lambda x: x.neg(), uniform(-2, 2)),
    ("negative", lambda x: -x, uniform(-2, 2)),
    ("abs", lambda x: x.abs(), signed(0.2, 2)),
    ("sign", lambda x: x.sign(), signed(0.2, 2)),
    ("reciprocal", lambda x: x.reciprocal(), signed(0.5, 2)),
    ("square", lambda x: x.square(), uniform(-2, 2)),
    ("sqrt", lambda x: x.sqrt(), uniform(0.3, 3)),
    ("rsqrt", lambda x: x.rsqrt(), uniform(0.3, 3)),
    ("exp", lambda x: x.exp(), uniform(-2, 2)),
    ("exp2", lambda x: x.exp2(), uniform(-2, 2)),
    ("expm1", lambda x: x.expm1(), uniform(-2, 2)),
    ("log", lambda x: x.log(), uniform(0.3, 3)),
    ("log1p", lambda x: x.log1p(), uniform(-0.6, 3)),
    ("log2", lambda x: x.log2(), uniform(0.3, 3)),
    ("log10", lambda x: x.log10(), uniform(0.3, 3)),
    ("sin", lambda x: x.sin(), uniform(-3, 3)),
    ("cos", lambda x: x.cos(), uniform(-3, 3)),
    ("tan", lambda x: x.tan(), uniform(-1.2, 1.2)),
    ("asin", lambda x: x.asin(), uniform(-0.8, 0.8)),
    ("acos", lambda x: x.acos(), uniform(-0.8, 0.8)),
    ("atan", lambda x: x.atan(), uniform(-3, 3)),
    ("sinh", lambda x: x.sinh(), uniform(-2, 2)),
    ("cosh", lambda x: x.cosh(), uniform(-2, 2)),
    ("tanh", lambda x: x.tanh(), uniform(-2, 2)),
    ("asinh", lambda x: x.asinh(), uniform(-3, 3)),
    ("acosh", lambda x: x.acosh(), uniform(1.2, 3)),
    ("atanh", lambda x: x.atanh(), uniform(-0.8, 0.8)),
    ("sigmoid", lambda x: x.sigmoid(), uniform(-3, 3)),
    ("erf", lambda x: x.erf(), uniform(-2, 2)),
    ("erfc", lambda x: x.erfc(), uniform(-2, 2)),
    ("relu", lambda x: x.relu(), signed(0.2, 2)),
    ("floor", lambda x: x.floor(), away_from_integers()),
    ("ceil", lambda x: x.ceil(), away_from_integers()),
    ("round", lambda x: x.round(), away_from_integers()),
    ("round_decimals", lambda x: x.round(decimals=1), away_from_integers() / 10 + 0.003),
    ("trunc", lambda x: x.trunc(), away_from_integers()),
    ("frac", lambda x: x.frac(), away_from_integers()),
    ("positive", lambda x: fg.positive(x) * 1, uniform(-2, 2)),
    ("pow_scalar", lambda x: x**3, uniform(-2, 2)),
    ("pow_float_scalar", lambda x: x**2.5, uniform(0.3, 2)),
    ("pow_negative_scalar", lambda x: x ** (-1.5), uniform(0.5, 2)),
    ("rpow", lambda x: 2.0**x, uniform(-2, 2)),
    ("div_scalar", lambda x: x / 4, uniform(-2, 2)),
    ("rdiv_scalar", lambda x: 3 / x, signed(0.5, 2)),
    ("rsub", lambda x: 1 - x, uniform(-2, 2)),
    ("fmod_scalar", lambda x: fg.fmod(x, 1.5), signed(0.2, 1.3)),
    ("remainder_scalar", lambda x: x % 1.5, signed(0.2, 1.3)),
    ("clamp_scalars", lambda x: x.clamp(-0.5, 0.5), signed(0.1, 0.4).ravel()[:3].tolist() + [-1.0, 1.0, 0.7]),
    ("clamp_min_scalar", lambda x: x.clamp_min(0.1), signed(0.2, 1)),
    ("clamp_max_scalar", lambda x: x.clamp(max=0.1), signed(0.2, 1)),
    ("clip", lambda x: fg.clip(x, min=-0.3), signed(0.5, 1)),
    ("lerp_scalar_weight", lambda x: x.lerp(x * x, 0.3), uniform(-2, 2)),
]


@pytest.mark.parametrize("name,fn,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_first_and_second_order(name, fn, x):
    check_grad(fn, [np.asarray(x, dtype=np.float64).reshape(2, 3)])


# ---------------------------------------------------------------------------
# Binary and ternary ops, with broadcasting: (name, function, inputs)

BINARY = [
    ("add", lambda a, b: a + b, [uniform(-2, 2), uniform(-2, 2, (3,))]),
    ("add_alpha", lambda a, b: a.add(b, alpha=2.5), [uniform(-2, 2), uniform(-2, 2, (2, 1))]),
    ("sub_alpha", lambda a, b: fg.sub(a, b, alpha=-1.5), [uniform(-2, 2, (3,)), uniform(-2, 2)]),
    ("mul", lambda a, b: a * b, [uniform(-2, 2, (2, 1)), uniform(-2, 2, (1, 3))]),
    ("div", lambda a, b: a / b, [uniform(-2, 2), signed(0.5, 2, (3,))]),
    ("true_divide", lambda a, b: fg.true_divide(a, b), [uniform(-2, 2, (2, 1)), signed(0.5, 2)]),
    # quotients |a / b| stay in (1.3, 1.6), away from the integers where these jump
    ("div_floor", lambda a, b: a.div(b, rounding_mode="floor"), [signed(2.1, 2.4), uniform(1.5, 1.6, (3,))]),
    ("div_trunc", lambda a, b: a.div(b, rounding_mode="trunc"), [signed(2.1, 2.4), uniform(1.5, 1.6, (3,))]),
    ("fmod", lambda a, b: a.fmod(b), [signed(2.1, 2.4), signed(1.5, 1.6, (3,))]),
    ("remainder", lambda a, b: a.remainder(b), [signed(2.1, 2.4), signed(1.5, 1.6, (2, 1))]),
    ("pow", lambda a, b: a.pow(b), [uniform(0.5, 2), uniform(-2, 2, (3,))]),
    ("atan2", lambda a, b: a.atan2(b), [signed(0.3, 2), signed(0.3, 2, (3,))]),
    ("maximum", lambda a, b: a.maximum(b), [uniform(-2, 2), uniform(-2, 2, (3,))]),
    ("minimum", lambda a, b: fg.minimum(a, b), [uniform(-2, 2, (2, 1)), uniform(-2, 2)]),
    ("clamp_min_tensor", lambda a, b: a.clamp_min(b), [uniform(-2, 2), uniform(-2, 2, (3,))]),
    ("clamp_max_tensor", lambda a, b: a.clamp(max=b), [uniform(-2, 2), uniform(-2, 2, (2, 1))]),
    ("lerp_tensor_weight", lambda a, w: a.lerp(a.exp(), w), [uniform(-1, 1), uniform(-1, 2, (3,))]),
    ("where", lambda a, b: fg.where(a.detach() > 0, a, b), [signed(0.2, 2), uniform(-2, 2, (3,))]),
    (
        "where_scalar",
        lambda a, b: fg.where(b.detach() > 0, a * b, 2.0),
        [uniform(-2, 2), signed(0.2, 2, (3,))],
    ),
]

TERNARY = [
    (
        "clamp_tensors",
        lambda x, lo, hi: x.clamp(lo, hi),
        [uniform(-2, 2), uniform(-1.5, -0.1, (3,)), uniform(0.1, 1.5, (2, 1))],
    ),
    (
        "clamp_inverted_bounds",
        lambda x, lo, hi: x.clamp(lo, hi),
        [uniform(-2, 2), uniform(0.6, 1, (3,)), uniform(-0.5, 0.4, (2, 1))],
    ),
    (
        "lerp",
        lambda a, b, w: fg.lerp(a, b, w),
        [uniform(-2, 2), uniform(-2, 2, (3,)), uniform(-1, 2, (2, 1))],
    ),
    (
        "addcmul",
        lambda x, a, b: x.addcmul(a, b, value=-0.7),
        [uniform(-2, 2, (3,)), uniform(-2, 2), uniform(-2, 2, (2, 1))],
    ),
    (
        "addcdiv",
        lambda x, a, b: fg.addcdiv(x, a, b, value=1.5),
        [uniform(-2, 2), uniform(-2, 2, (3,)), signed(0.5, 2, (2, 1))],
    ),
]


@pytest.mark.parametrize("name,fn,xs", BINARY + TERNARY, ids=[b[0] for b in BINARY + TERNARY])
def test_multi_input_first_and_second_order_with_broadcast(name, fn, xs):
    check_grad(fn, xs)


@pytest.mark.parametrize("name,fn,xs", BINARY + TERNARY, ids=[b[0] for b in BINARY + TERNARY])
def test_forward_mode_jacobian_matches_reverse_mode(name, fn, xs):
    # One batched dual level: tangents of broadcast inputs carry a batch dim.
    inputs = tuple(fg.tensor(np.asarray(x, dtype=np.float64)) for x in xs)
    fwd = F.jacobian(fn, inputs, vectorize=True, strategy="forward-mode")
    rev = F.jacobian(fn, inputs)
    for f, r in zip(fwd, rev, strict=True):
        np.testing.assert_allclose(f.numpy(), r.numpy(), rtol=1e-12, atol=1e-14)


def _copy_into(x, s):
    y = x * 2
    y.copy_(s.exp())
    return y * x


def test_copy_into_a_tensor_takes_the_broadcast_source_tangent():
    check_grad(_copy_into, [uniform(-1, 1), uniform(-1, 1, (3,))])


def test_copy_of_a_constant_zeroes_the_tangent():
    def f(x):
        y = x * 1
        y.copy_(fg.ones((3,), dtype=fg.float64))
        return y

    with fwAD.dual_level():
        d = fwAD.make_dual(fg.tensor(uniform(-1, 1)), fg.tensor(uniform(-1, 1)))
        assert fwAD.unpack_dual(f(d)).tangent.tolist() == [[0.0] * 3] * 2


def test_output_tangent_is_not_the_input_tangent():
    # An in-place op on the output writes into the output's tangent only.
    t = uniform(-1, 1, (3,))
    for fn in (
        lambda d: d + 0.0,
        lambda d: d - 1,
        lambda d: d.add(1, alpha=2),
        lambda d: d.remainder(5.0),
        lambda d: d.addcmul(fg.ones(3, dtype=fg.float64), fg.ones(3, dtype=fg.float64)),
        lambda d: d.frac(),
    ):
        with fwAD.dual_level():
            d = fwAD.make_dual(fg.tensor([0.25, 0.5, 1.5], dtype=fg.float64), fg.tensor(t))
            y = fn(d)
            y.mul_(3)
            np.testing.assert_allclose(fwAD.unpack_dual(d).tangent.numpy(), t, rtol=0)
            np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), 3 * t, rtol=1e-15)


def test_floor_divide_has_no_forward_derivative_either():
    with fwAD.dual_level():
        d = fwAD.make_dual(fg.tensor([1.5, 2.5]), fg.tensor([1.0, 1.0]))
        with pytest.raises(RuntimeError, match="derivative for floor_divide is not implemented"):
            d // 2


def test_clamp_inverted_bounds_sends_gradient_to_max():
    # min > max: the result is max everywhere, so max gets every gradient.
    x = fg.tensor([-2.0, 0.0, 2.0], requires_grad=True)
    lo = fg.tensor([1.0, 1.0, 1.0], requires_grad=True)
    hi = fg.tensor([0.5, 0.5, 0.5], requires_grad=True)
    x.clamp(lo, hi).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    assert lo.grad.tolist() == [0.0, 0.0, 0.0]
    assert hi.grad.tolist() == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------------------
# Node names (torch's), and which inputs receive gradients


def _leaf(shape=(3,), value=0.5):
    return fg.full(shape, value, dtype=fg.float64).requires_grad_()


NODE_NAMES = [
    (lambda x: x.exp(), "ExpBackward0"),
    (lambda x: x.sqrt(), "SqrtBackward0"),
    (lambda x: -x, "NegBackward0"),
    (lambda x: x.abs(), "AbsBackward0"),
    (lambda x: x.sign(), "SignBackward0"),
    (lambda x: x.square(), "PowBackward0"),
    (lambda x: x**2, "PowBackward0"),
    (lambda x: x ** _leaf(), "PowBackward1"),
    (lambda x: 2**x, "PowBackward2"),
    (lambda x: x / 2, "DivBackward0"),
    (lambda x: x.div(2, rounding_mode="floor"), "DivBackward2"),
    (lambda x: x.add(1, alpha=2), "AddBackward0"),
    (lambda x: x.sub(1, alpha=2), "SubBackward0"),
    (lambda x: x.fmod(2), "FmodBackward0"),
    (lambda x: x.fmod(_leaf()), "FmodBackward1"),
    (lambda x: x % 2, "RemainderBackward0"),
    (lambda x: x.remainder(_leaf()), "RemainderBackward1"),
    (lambda x: x.maximum(_leaf()), "MaximumBackward0"),
    (lambda x: x.minimum(_leaf()), "MinimumBackward0"),
    (lambda x: x.atan2(_leaf()), "Atan2Backward0"),
    (lambda x: x.clamp(0, 1), "ClampBackward1"),
    (lambda x: x.clamp_min(0), "ClampMinBackward0"),
    (lambda x: x.clamp_max(_leaf()), "ClampMaxBackward1"),
    (lambda x: fg.where(x > 0, x, 0.0), "WhereBackward0"),
    (lambda x: x.lerp(_leaf(), 0.5), "LerpBackward0"),
    (lambda x: x.lerp(_leaf(), _leaf()), "LerpBackward1"),
    (lambda x: x.addcmul(x, x), "AddcmulBackward0"),
    (lambda x: x.addcdiv(x, x), "AddcdivBackward0"),
    (lambda x: x.relu(), "ReluBackward0"),
    (lambda x: x.sigmoid(), "SigmoidBackward0"),
    (lambda x: x.log1p(), "Log1PBackward0"),
    (lambda x: x.round(decimals=2), "RoundBackward1"),
    (lambda x: x.frac(), "FracBackward0"),
]


@pytest.mark.parametrize("fn,name", NODE_NAMES, ids=[n for _, n in NODE_NAMES])
def test_node_name_matches_torch(fn, name):
    assert fn(_leaf()).grad_fn.name() == name


def test_positive_returns_the_input_itself():
    x = _leaf()
    assert fg.positive(x) is x


def test_floor_divide_backward_raises_like_torch():
    x = _leaf()
    y = x // 2
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="floor_divide"):
        y.sum().backward()


def test_where_condition_gets_no_gradient_and_scalar_branches_work():
    x = fg.tensor([-1.0, 2.0, -3.0], requires_grad=True)
    y = fg.where(x > 0, x * x, 10.0)
    (g,) = fg.autograd.grad(y.sum(), [x])
    assert g.tolist() == [0.0, 4.0, 0.0]


# ---------------------------------------------------------------------------
# Mixed float32 / float64: the result promotes, each gradient has its input's dtype

MIXED = [
    ("mul", lambda a, b: a * b, lambda a, b: (b, a)),
    ("div", lambda a, b: a / b, lambda a, b: (1 / b, -a / b**2)),
    ("sub_alpha", lambda a, b: a.sub(b, alpha=3), lambda a, b: (np.ones_like(a), -3 * np.ones_like(b))),
    ("pow", lambda a, b: a**b, lambda a, b: (b * a ** (b - 1), a**b * np.log(a))),
    ("atan2", lambda a, b: a.atan2(b), lambda a, b: (b / (a * a + b * b), -a / (a * a + b * b))),
    ("maximum", lambda a, b: a.maximum(b), lambda a, b: ((a > b) * 1.0, (b > a) * 1.0)),
    ("fmod", lambda a, b: a.fmod(b), lambda a, b: (np.ones_like(a), -np.trunc(a / b))),
    ("clamp_min", lambda a, b: a.clamp_min(b), lambda a, b: ((a >= b) * 1.0, (a < b) * 1.0)),
    ("where", lambda a, b: fg.where(a > 1, a, b), lambda a, b: ((a > 1) * 1.0, (a <= 1) * 1.0)),
    ("addcmul", lambda a, b: a.addcmul(a, b, value=2), lambda a, b: (1 + 2 * b, 2 * a)),
]


@pytest.mark.parametrize("name,fn,grads", MIXED, ids=[m[0] for m in MIXED])
@pytest.mark.parametrize("dtypes", [(fg.float32, fg.float64), (fg.float64, fg.float32)])
def test_mixed_precision_gradients_keep_input_dtype(name, fn, grads, dtypes):
    a_np = np.array([0.5, 1.5, 2.5])
    b_np = np.array([1.25, 0.625, 3.5])
    a = fg.tensor(a_np.tolist(), dtype=dtypes[0], requires_grad=True)
    b = fg.tensor(b_np.tolist(), dtype=dtypes[1], requires_grad=True)
    out = fn(a, b)
    assert out.dtype == fg.float64
    out.sum().backward()
    assert a.grad.dtype == dtypes[0] and b.grad.dtype == dtypes[1]
    want_a, want_b = grads(a_np, b_np)
    np.testing.assert_allclose(a.grad.tolist(), want_a, rtol=1e-5)
    np.testing.assert_allclose(b.grad.tolist(), want_b, rtol=1e-5)


@pytest.mark.parametrize("name,fn,grads", MIXED, ids=[m[0] for m in MIXED])
@pytest.mark.parametrize("dtypes", [(fg.float32, fg.float64), (fg.float64, fg.float32)])
def test_mixed_precision_tangents_have_the_output_dtype(name, fn, grads, dtypes):
    a_np = np.array([0.5, 1.5, 2.5])
    b_np = np.array([1.25, 0.625, 3.5])
    ta, tb = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.75])
    with fwAD.dual_level():
        a = fwAD.make_dual(fg.tensor(a_np.tolist(), dtype=dtypes[0]), fg.tensor(ta.tolist(), dtype=dtypes[0]))
        b = fwAD.make_dual(fg.tensor(b_np.tolist(), dtype=dtypes[1]), fg.tensor(tb.tolist(), dtype=dtypes[1]))
        tangent = fwAD.unpack_dual(fn(a, b)).tangent
    assert tangent.dtype == fg.float64
    da, db = grads(a_np, b_np)
    np.testing.assert_allclose(tangent.tolist(), da * ta + db * tb, rtol=1e-5)


@pytest.mark.parametrize("dtype", [fg.float32, fg.float64])
def test_unary_gradient_has_input_dtype(dtype):
    x = fg.tensor([0.5, 1.0], dtype=dtype, requires_grad=True)
    (x.exp() * x.tanh()).sum().backward()
    assert x.grad.dtype == dtype
    v = np.array([0.5, 1.0])
    want = np.exp(v) * np.tanh(v) + np.exp(v) * (1 - np.tanh(v) ** 2)
    np.testing.assert_allclose(x.grad.tolist(), want, rtol=1e-6 if dtype == fg.float32 else 1e-12)


# ---------------------------------------------------------------------------
# Subgradients at kinks (hand-derived, as torch)


def _grad(fn, *values):
    xs = [fg.tensor(v, dtype=fg.float64, requires_grad=True) for v in values]
    fn(*xs).sum().backward()
    return [x.grad.tolist() for x in xs]


def test_abs_at_zero_has_zero_gradient():
    assert _grad(lambda x: x.abs(), [-1.0, 0.0, 2.0]) == [[-1.0, 0.0, 1.0]]


def test_relu_at_zero_has_zero_gradient():
    assert _grad(lambda x: x.relu(), [-1.0, 0.0, 2.0]) == [[0.0, 0.0, 1.0]]


def test_sqrt_at_zero_has_infinite_gradient():
    assert _grad(lambda x: x.sqrt(), [0.0, 4.0]) == [[math.inf, 0.25]]


def test_clamp_boundary_values_pass_gradient_to_input():
    assert _grad(lambda x: x.clamp(-1, 1), [-1.0, 1.0, 2.0, -2.0, 0.0]) == [[1.0, 1.0, 0.0, 0.0, 1.0]]
    x, lo, hi = _grad(
        lambda x, lo, hi: x.clamp(lo, hi), [-1.0, 1.0, 3.0], [-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]
    )
    assert x == [1.0, 1.0, 0.0] and lo == [0.0, 0.0, 0.0] and hi == [0.0, 0.0, 1.0]
    x, lo = _grad(lambda x, lo: x.clamp_min(lo), [0.5, 1.0, -2.0], [1.0, 1.0, 1.0])
    assert x == [0.0, 1.0, 0.0] and lo == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_split_gradient_at_ties(op):
    a, b = _grad(lambda a, b: getattr(a, op)(b), [1.0, 2.0, 3.0], [1.0, 0.0, 5.0])
    if op == "maximum":
        assert a == [0.5, 1.0, 0.0] and b == [0.5, 0.0, 1.0]
    else:
        assert a == [0.5, 0.0, 1.0] and b == [0.5, 1.0, 0.0]


def test_pow_zero_exponent_at_zero_has_zero_gradient():
    assert _grad(lambda x: x**0, [0.0, 2.0]) == [[0.0, 0.0]]
    x, e = _grad(lambda x, e: x**e, [0.0, 0.0, 2.0], [0.0, 2.0, 0.0])
    assert x == [0.0, 0.0, 0.0]
    # d(x^e)/de = x^e log x, taken as 0 at x == 0 for e >= 0
    assert e == [0.0, 0.0, math.log(2.0)]


def _tangent(fn, values, tangents):
    with fwAD.dual_level():
        ds = [
            fwAD.make_dual(fg.tensor(v, dtype=fg.float64), fg.tensor(t, dtype=fg.float64))
            for v, t in zip(values, tangents, strict=True)
        ]
        out = fn(*ds)
        tangent = fwAD.unpack_dual(out).tangent
        return [0.0] * out.numel() if tangent is None else tangent.tolist()


def test_tangents_at_kinks_are_the_transpose_of_the_subgradients():
    # ties split evenly, as the gradients do
    ab, tab = [[1.0, 2.0], [1.0, 0.0]], [[2.0, 2.0], [4.0, 4.0]]
    assert _tangent(lambda a, b: a.maximum(b), ab, tab) == [3.0, 2.0]
    assert _tangent(lambda a, b: a.minimum(b), ab, tab) == [3.0, 4.0]
    # clamp boundaries belong to the input
    assert _tangent(lambda x: x.clamp(-1, 1), [[-1.0, 1.0, 2.0]], [[1.0, 1.0, 1.0]]) == [1.0, 1.0, 0.0]
    # pow: zero exponent, and the exponent derivative at base 0, as the gradients
    assert _tangent(lambda x: x**0, [[0.0, 2.0]], [[1.0, 1.0]]) == [0.0, 0.0]
    got = _tangent(lambda x, e: x**e, [[0.0, 0.0, 2.0], [0.0, 2.0, 0.0]], [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    assert got == [0.0, 0.0, math.log(2.0)]
    assert _tangent(lambda x: x.relu(), [[-1.0, 0.0, 2.0]], [[1.0, 1.0, 1.0]]) == [0.0, 0.0, 1.0]


def test_pow_at_zero_with_positive_exponent():
    assert _grad(lambda x: x**2, [0.0, 3.0]) == [[0.0, 6.0]]
    assert _grad(lambda x: x**0.5, [0.0]) == [[math.inf]]


def test_piecewise_constant_ops_have_zero_gradient():
    for fn in (
        lambda x: x.floor(),
        lambda x: x.ceil(),
        lambda x: x.round(),
        lambda x: x.trunc(),
        lambda x: x.sign(),
    ):
        assert _grad(fn, [-1.5, 0.0, 2.0, 2.5]) == [[0.0, 0.0, 0.0, 0.0]]


# ---------------------------------------------------------------------------
# In-place forms: on a non-leaf they give the out-of-place gradient

INPLACE_UNARY = [
    "neg", "abs", "sign", "reciprocal", "square", "sqrt", "rsqrt", "exp", "exp2", "expm1", "log",
    "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "sigmoid", "erf", "erfc", "relu", "floor", "ceil", "round", "trunc",
    "frac", "negative", "absolute", "arcsin", "arctanh", "fix",
]  # fmt: skip


def _domain(name):
    if name in ("acosh",):
        return [1.5, 2.0, 3.0]
    if name in ("asin", "acos", "atanh", "arcsin", "arctanh"):
        return [-0.5, 0.25, 0.75]
    if name in ("sqrt", "rsqrt", "log", "log2", "log10"):
        return [0.5, 1.5, 2.5]
    return [-0.7, 0.3, 1.6]


def _compare_inplace(out_of_place, in_place, *values):
    """Gradients of sum(f(x)) for the out-of-place op and for `y = x * 1; y.op_()`."""
    xs = [fg.tensor(v, dtype=fg.float64, requires_grad=True) for v in values]
    want = fg.autograd.grad(out_of_place(*xs).sum(), xs, allow_unused=True)
    ys = [fg.tensor(v, dtype=fg.float64, requires_grad=True) for v in values]
    y0 = ys[0] * 1
    ret = in_place(y0, *ys[1:])
    assert ret is y0
    assert y0.requires_grad and y0.grad_fn is not None
    np.testing.assert_allclose(y0.tolist(), out_of_place(*xs).tolist(), rtol=1e-12)
    got = fg.autograd.grad(y0.sum(), ys, allow_unused=True)
    for g, w in zip(got, want, strict=True):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g.tolist(), w.tolist(), rtol=1e-12)


@pytest.mark.parametrize("name", INPLACE_UNARY)
def test_inplace_unary_matches_out_of_place(name):
    _compare_inplace(lambda x: getattr(x, name)(), lambda y: getattr(y, name + "_")(), _domain(name))


def _iadd(a, b):
    a += b
    return a


def _imul(a, b):
    a *= b
    return a


def _itruediv(a, b):
    a /= b
    return a


A = [0.5, 1.5, 2.5]
B = [1.25, -0.75, 3.5]
C = [0.3, -1.2, 0.9]

INPLACE_MULTI = [
    ("add_alpha", lambda a, b: a.add(b, alpha=2), lambda a, b: a.add_(b, alpha=2), [A, B]),
    ("iadd", lambda a, b: a + b, _iadd, [A, B]),
    ("sub", lambda a, b: a - b, lambda a, b: a.sub_(b), [A, B]),
    ("sub_alpha", lambda a, b: a.sub(b, alpha=-3), lambda a, b: a.sub_(b, alpha=-3), [A, B]),
    ("mul", lambda a, b: a * b, lambda a, b: a.mul_(b), [A, B]),
    ("imul", lambda a, b: a * b, _imul, [A, B]),
    ("div", lambda a, b: a / b, lambda a, b: a.div_(b), [A, B]),
    ("itruediv", lambda a, b: a / b, _itruediv, [A, B]),
    (
        "div_floor",
        lambda a, b: a.div(b, rounding_mode="floor"),
        lambda a, b: a.div_(b, rounding_mode="floor"),
        [A, B],
    ),
    ("pow", lambda a, b: a**b, lambda a, b: a.pow_(b), [A, B]),
    ("pow_scalar", lambda a: a**3, lambda a: a.pow_(3), [B]),
    ("fmod", lambda a, b: a.fmod(b), lambda a, b: a.fmod_(b), [A, B]),
    ("remainder", lambda a, b: a.remainder(b), lambda a, b: a.remainder_(b), [A, B]),
    ("atan2", lambda a, b: a.atan2(b), lambda a, b: a.atan2_(b), [A, B]),
    ("clamp_tensors", lambda a, b, c: a.clamp(b, c), lambda a, b, c: a.clamp_(b, c), [B, C, A]),
    ("clamp_scalars", lambda a: a.clamp(-0.5, 1.0), lambda a: a.clamp_(-0.5, 1.0), [B]),
    ("clamp_min", lambda a, b: a.clamp_min(b), lambda a, b: a.clamp_min_(b), [B, C]),
    ("clamp_max", lambda a: a.clamp_max(0.6), lambda a: a.clamp_max_(0.6), [B]),
    ("clip", lambda a: a.clip(max=0.6), lambda a: a.clip_(max=0.6), [B]),
    ("lerp", lambda a, b, c: a.lerp(b, c), lambda a, b, c: a.lerp_(b, c), [A, B, C]),
    ("lerp_scalar", lambda a, b: a.lerp(b, 0.25), lambda a, b: a.lerp_(b, 0.25), [A, B]),
    (
        "addcmul",
        lambda a, b, c: a.addcmul(b, c, value=2),
        lambda a, b, c: a.addcmul_(b, c, value=2),
        [A, B, C],
    ),
    (
        "addcdiv",
        lambda a, b, c: a.addcdiv(b, c, value=2),
        lambda a, b, c: a.addcdiv_(b, c, value=2),
        [A, B, C],
    ),
    ("round_decimals", lambda a: a.round(decimals=1), lambda a: a.round_(decimals=1), [C]),
]


@pytest.mark.parametrize("name,oop,ip,values", INPLACE_MULTI, ids=[m[0] for m in INPLACE_MULTI])
def test_inplace_binary_and_ternary_match_out_of_place(name, oop, ip, values):
    _compare_inplace(oop, ip, *values)


@pytest.mark.parametrize("name,oop,ip,values", INPLACE_MULTI, ids=[m[0] for m in INPLACE_MULTI])
def test_inplace_binary_and_ternary_tangents_match_out_of_place(name, oop, ip, values):
    tangents = [RNG.standard_normal(len(v)).tolist() for v in values]
    want = _tangent(oop, values, tangents)

    def in_place(y, *others):
        y = y * 1
        ip(y, *others)
        return y

    np.testing.assert_allclose(_tangent(in_place, values, tangents), want, rtol=1e-12)


def test_inplace_into_tensor_not_requiring_grad_takes_other_operand_history():
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = fg.tensor([3.0, 4.0], dtype=fg.float64)
    y.mul_(x)
    assert y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 4.0]


@pytest.mark.parametrize(
    "fn",
    [
        lambda y: y.exp_(),
        lambda y: y.clamp_(0, 1),
        lambda y: y.mul_(2),
        lambda y: y.pow_(2),
        lambda y: y.relu_(),
    ],
)
def test_inplace_second_order(fn):
    def f(x):
        y = x * 1
        fn(y)
        return y * x

    check_grad(f, [uniform(0.1, 0.9)])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.exp_(),
        lambda x: x.mul_(2),
        lambda x: x.clamp_(0, 1),
        lambda x: x.add_(1, alpha=2),
        lambda x: x.floor_(),
    ],
)
def test_inplace_on_leaf_requiring_grad_raises(fn):
    x = fg.tensor([0.5, 1.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        fn(x)


def test_saved_result_modified_in_place_raises_at_backward():
    x = fg.tensor([0.5, 1.5], requires_grad=True)
    y = x.exp()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# ---------------------------------------------------------------------------
# Comparisons and logical ops: bool results, no history, still usable


def test_comparisons_of_tensors_requiring_grad_are_not_differentiable():
    x = fg.tensor([0.5, 1.5], requires_grad=True)
    y = fg.tensor([1.0, 1.0], requires_grad=True)
    for r in (
        x < y,
        x <= y,
        x > y,
        x >= y,
        x == y,
        x != y,
        x.isclose(y),
        x.logical_and(y),
        x.isnan(),
        x.signbit(),
    ):
        assert r.dtype == fg.bool
        assert not r.requires_grad and r.grad_fn is None
    assert x.equal(x) and x.allclose(x)


def test_inplace_comparison_on_non_leaf_gives_zero_gradient():
    x = fg.tensor([0.5, 1.5], requires_grad=True)
    y = x * 1
    y.lt_(1.0)
    assert y.tolist() == [1.0, 0.0]
    (y * x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0]


def test_integer_results_are_not_differentiable():
    x = fg.tensor([1, 2, 3])
    assert not (x * 2).requires_grad
    f = fg.tensor([1.5, 2.5], requires_grad=True)
    assert not (f > 1).requires_grad


def test_no_grad_records_nothing():
    x = fg.tensor([0.5, 1.5], requires_grad=True)
    with fg.no_grad():
        y = x.exp().clamp(0, 2).lerp(x, 0.5)
    assert not y.requires_grad and y.grad_fn is None
