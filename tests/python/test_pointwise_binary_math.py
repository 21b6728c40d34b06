"""The binary float functions (hypot, logaddexp, logaddexp2, xlogy,
special.xlog1py, copysign, nextafter) and the integer ones (gcd, lcm, bit
shifts): values against NumPy, derivatives against float64 central
differences (gradcheck, gradgradcheck, forward mode), in-place forms and
errors.
"""

from __future__ import annotations

import math

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 4)) * 3
B = RNG.normal(size=(4,)) * 3
POS = np.abs(B) + 0.25


def _xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


def _xlog1py(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log1p(y)))


FLOAT_CASES = {
    "hypot": (torch.hypot, np.hypot, B),
    "logaddexp": (torch.logaddexp, np.logaddexp, B),
    "logaddexp2": (torch.logaddexp2, np.logaddexp2, B),
    "xlogy": (torch.xlogy, _xlogy, POS),
    "xlog1py": (torch.special.xlog1py, _xlog1py, POS),
    "copysign": (torch.copysign, np.copysign, B),
}


@pytest.mark.parametrize("name", FLOAT_CASES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_values_match_numpy_with_broadcasting(name, dtype):
    ours, ref, other = FLOAT_CASES[name]
    got = ours(torch.tensor(A, dtype=dtype), torch.tensor(other, dtype=dtype)).numpy()
    want = ref(A.astype(got.dtype), other.astype(got.dtype))
    rtol = 1e-14 if dtype == torch.float64 else 2e-6
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


def test_edge_values():
    inf, nan = math.inf, math.nan
    lae = torch.logaddexp(torch.tensor([inf, -inf, -inf, nan, 1000.0]),
                          torch.tensor([inf, -inf, 3.0, 1.0, 1000.0]))
    np.testing.assert_array_equal(lae.numpy()[:4], [inf, -inf, 3.0, nan])
    assert lae[4].item() == pytest.approx(1000.0 + math.log(2.0))
    # 0 * log(0) is 0, 0 * log(NaN) is NaN, and a Python number is accepted first.
    xl = torch.xlogy(torch.tensor([0.0, 0.0, 2.0]), torch.tensor([0.0, nan, 0.0]))
    np.testing.assert_array_equal(xl.numpy(), [0.0, nan, -inf])
    assert torch.xlogy(2, torch.tensor([3.0])).item() == pytest.approx(2 * math.log(3.0))
    # hypot does not overflow where the squares would.
    big = torch.tensor([3e300], dtype=torch.float64)
    assert torch.hypot(big, big * (4 / 3)).item() == pytest.approx(5e300, rel=1e-15)
    assert torch.copysign(torch.tensor([2.0]), torch.tensor([-0.0])).item() == -2.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nextafter_steps_one_ulp(dtype):
    x = np.array([1.0, 1.0, 0.0, -2.5, 3.0], dtype=np.float32 if dtype == torch.float32 else np.float64)
    y = np.array([2.0, 0.0, -1.0, -2.5, np.nan], dtype=x.dtype)
    got = torch.nextafter(torch.tensor(x), torch.tensor(y)).numpy()
    np.testing.assert_array_equal(got, np.nextafter(x, y))
    assert got.dtype == x.dtype
    # Not differentiable: the result never requires grad.
    assert not torch.nextafter(torch.tensor(x, requires_grad=True), torch.tensor(y)).requires_grad


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "xlogy", "xlog1py", "copysign"])
def test_derivatives_against_finite_differences(name):
    fn = FLOAT_CASES[name][0]
    x = torch.tensor(RNG.uniform(0.5, 2.0, size=(3, 2)), requires_grad=True)
    # A broadcast second operand, so the gradient is summed back to its shape.
    y = torch.tensor(RNG.uniform(0.5, 2.0, size=(2,)) * np.array([1.0, -1.0 if name == "copysign" else 1.0]),
                     requires_grad=True)
    assert gradcheck(fn, (x, y))
    assert gradgradcheck(fn, (x, y))
    assert gradcheck(fn, (x, y), check_forward_ad=True, check_backward_ad=False)


def test_xlogy_input_gradient_is_log_other_and_copysign_other_gets_zeros():
    # d/dx x log(y) = log(y), also at x = 0; taken as 0 where x = y = 0.
    x = torch.tensor([0.0, 2.0, 0.0], requires_grad=True)
    y = torch.tensor([0.5, 4.0, 0.0], requires_grad=True)
    torch.xlogy(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [math.log(0.5), math.log(4.0), 0.0])
    np.testing.assert_allclose(y.grad.numpy()[:2], [0.0, 0.5])
    u = torch.tensor([0.0, 0.0], requires_grad=True)
    torch.special.xlog1py(u, torch.tensor([2.0, -1.0])).sum().backward()
    np.testing.assert_allclose(u.grad.numpy(), [math.log1p(2.0), 0.0])
    a = torch.tensor([0.0, -3.0], requires_grad=True)
    b = torch.tensor([-1.0, 2.0], requires_grad=True)
    torch.copysign(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, -1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("name", ["hypot", "logaddexp", "logaddexp2", "xlogy", "copysign"])
def test_inplace_forms_match_out_of_place(name):
    x = torch.tensor(A)
    other = torch.tensor(POS)
    want = getattr(torch, name)(x, other)
    y = x.clone()
    assert getattr(y, name + "_")(other) is y
    np.testing.assert_array_equal(y.numpy(), want.numpy())
    # An integer tensor cannot hold the float result.
    with pytest.raises(RuntimeError):
        getattr(torch.tensor([1, 2]), name + "_")(torch.tensor([1.5, 2.0]))


INT_CASES = {
    "gcd": (np.gcd, (-40, 40), (-40, 40)),
    "lcm": (np.lcm, (-40, 40), (-40, 40)),
    "bitwise_left_shift": (np.left_shift, (-1000, 1000), (0, 50)),
    "bitwise_right_shift": (np.right_shift, (-1000, 1000), (0, 60)),
}


@pytest.mark.parametrize("name", INT_CASES)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.uint8])
def test_integer_functions_match_numpy(name, dtype):
    ref, xr, yr = INT_CASES[name]
    lo = 0 if dtype == np.uint8 else xr[0]
    x = RNG.integers(lo, xr[1], size=20).astype(dtype)
    y = RNG.integers(max(lo, yr[0]), yr[1], size=20).astype(dtype)
    if name.startswith("bitwise"):
        y = np.minimum(y, np.iinfo(dtype).bits - 1).astype(dtype)
    got = getattr(torch, name)(torch.tensor(x), torch.tensor(y)).numpy()
    want = ref(x, y).astype(dtype)
    if name in ("gcd", "lcm"):
        want = np.abs(want)
    np.testing.assert_array_equal(got, want)


def test_shifts_out_of_range_and_operators():
    x = torch.tensor([1, -8, 5])
    # Amounts past the width or negative: 0, or -1 for a negative value shifted right.
    np.testing.assert_array_equal((x << 70).numpy(), [0, 0, 0])
    np.testing.assert_array_equal((x >> 70).numpy(), [0, -1, 0])
    np.testing.assert_array_equal((x >> -1).numpy(), [0, -1, 0])
    np.testing.assert_array_equal((x << 2).numpy(), [4, -32, 20])
    np.testing.assert_array_equal((2 << torch.tensor([1, 3])).numpy(), [4, 16])
    y = x.clone()
    y >>= 1
    np.testing.assert_array_equal(y.numpy(), [0, -4, 2])
    g = torch.tensor([12, 18])
    g.gcd_(torch.tensor([8, 27]))
    np.testing.assert_array_equal(g.numpy(), [4, 9])


def test_integer_functions_refuse_floats_as_torch():
    with pytest.raises(NotImplementedError, match="gcd_cpu"):
        torch.gcd(torch.tensor([1.0]), torch.tensor([2.0]))
    with pytest.raises(NotImplementedError, match="bitwise_left_shift_cpu"):
        torch.tensor([1.0]) << 1
