"""addmv, addr, baddbmm and addbmm (and their in-place forms) against
NumPy, their gradients against float64 central differences, and beta=0
ignoring the input."""

import ferrograd
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def _t(*shape, grad=False):
    return ferrograd.tensor(RNG.standard_normal(shape), requires_grad=grad)


CASES = [
    ("addmv", (3,), (3, 4), (4,), lambda x, a, b: x + a @ b),
    ("addr", (3, 1), (3,), (5,), lambda x, a, b: x + np.outer(a, b)),
    ("baddbmm", (3, 1), (2, 3, 4), (2, 4, 5), lambda x, a, b: x + a @ b),
    ("addbmm", (5,), (2, 3, 4), (2, 4, 5), lambda x, a, b: x + (a @ b).sum(0)),
]


@pytest.mark.parametrize("name, sx, sa, sb, ref", CASES)
def test_values_against_numpy(name, sx, sa, sb, ref):
    x, a, b = _t(*sx), _t(*sa), _t(*sb)
    xn, an, bn = x.numpy(), a.numpy(), b.numpy()
    got = getattr(ferrograd, name)(x, a, b, beta=0.5, alpha=-2.0)
    want = 0.5 * xn + (-2.0) * (ref(np.zeros_like(xn), an, bn))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(getattr(x, name)(a, b).numpy(), ref(xn, an, bn), rtol=1e-12, atol=1e-12)
    # beta=0 ignores the input, NaN included.
    nan_x = ferrograd.full(sx, float("nan"), dtype=ferrograd.float64)
    np.testing.assert_allclose(
        getattr(ferrograd, name)(nan_x, a, b, beta=0).numpy(), ref(np.zeros_like(xn), an, bn), rtol=1e-12
    )


@pytest.mark.parametrize("name, sx, sa, sb, ref", CASES)
def test_in_place_forms_write_the_result(name, sx, sa, sb, ref):
    a, b = _t(*sa), _t(*sb)
    out_shape = ref(np.zeros(sx), a.numpy(), b.numpy()).shape
    x = _t(*out_shape)
    want = ref(x.numpy(), a.numpy(), b.numpy())
    r = getattr(x, name + "_")(a, b)
    assert r is x
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, sx, sa, sb, ref", CASES)
def test_gradients_against_central_differences(name, sx, sa, sb, ref):
    x, a, b = _t(*sx, grad=True), _t(*sa, grad=True), _t(*sb, grad=True)

    def f(x, a, b):
        return getattr(ferrograd, name)(x, a, b, beta=0.7, alpha=1.3)

    assert gradcheck(f, (x, a, b), check_forward_ad=True)
    assert gradgradcheck(f, (x, a, b))
    # With beta=0 the input's gradient is zero.
    getattr(ferrograd, name)(x, a, b, beta=0).sum().backward()
    assert np.all(x.grad.numpy() == 0)


def test_bad_shapes_raise():
    with pytest.raises(RuntimeError, match="vec must be a 1-D tensor"):
        ferrograd.addmv(_t(3), _t(3, 4), _t(4, 1))
    with pytest.raises(RuntimeError, match="batch1 must be a 3-D tensor"):
        ferrograd.baddbmm(_t(3, 5), _t(3, 4), _t(2, 4, 5))
    with pytest.raises(RuntimeError, match="must not be a floating point number"):
        ferrograd.addr(ferrograd.zeros(2, 2, dtype=ferrograd.int64), ferrograd.ones(2, dtype=ferrograd.int64),
                       ferrograd.ones(2, dtype=ferrograd.int64), beta=0.5)
