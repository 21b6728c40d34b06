"""The composed math functions (angle conversions, float_power, ldexp,
frexp, nan_to_num, fmax/fmin, heaviside, logit, isreal), finfo/iinfo/
can_cast, and the ATen-style ``torch.*`` forms of the nn functions (their
argument orders against nn.functional), with F.prelu and F.pdist.
"""

from __future__ import annotations

import itertools
import math

import ferrograd as torch
import ferrograd.nn.functional as F
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(11)
A = RNG.normal(size=(3, 4)) * 4


def t(v, **kw):
    return torch.tensor(np.asarray(v, dtype=np.float64), **kw)


def test_values_against_numpy():
    x = t(A)
    np.testing.assert_allclose(torch.deg2rad(x).numpy(), np.deg2rad(A), rtol=1e-15)
    np.testing.assert_allclose(torch.rad2deg(x).numpy(), np.rad2deg(A), rtol=1e-15)
    assert torch.deg2rad(torch.tensor([180])).dtype == torch.float32
    base, exp = torch.tensor([2, 3], dtype=torch.int32), torch.tensor([0.5, 2.0], dtype=torch.float32)
    fp = torch.float_power(base, exp)
    assert fp.dtype == torch.float64
    np.testing.assert_allclose(fp.numpy(), np.float_power([2, 3], [0.5, 2.0]), rtol=1e-15)
    assert torch.float_power(torch.tensor([2.0]), 1j).dtype == torch.complex128
    e = RNG.integers(-5, 5, size=(3, 4))
    np.testing.assert_array_equal(torch.ldexp(x, torch.tensor(e)).numpy(), np.ldexp(A, e))
    np.testing.assert_array_equal(torch.fmax(x, x.T[:1].T.expand(3, 4)).numpy(), np.fmax(A, A[:, :1]))
    nan = np.nan
    a, b = np.array([1.0, nan, 3.0, nan, -0.5]), np.array([2.0, 2.0, nan, nan, -0.5])
    np.testing.assert_array_equal(torch.fmax(t(a), t(b)).numpy(), np.fmax(a, b))
    np.testing.assert_array_equal(torch.fmin(t(a), t(b)).numpy(), np.fmin(a, b))
    np.testing.assert_array_equal(torch.fmax(torch.tensor([1, 5]), torch.tensor([3, 2])).numpy(), [3, 5])
    h = np.array([-1.0, 0.0, 2.0, nan])
    np.testing.assert_array_equal(torch.heaviside(t(h), t([0.5])).numpy(), [0.0, 0.5, 1.0, 0.0])
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(t(h), torch.tensor([0.5], dtype=torch.float32))
    p = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(torch.logit(t(p)).numpy(), np.log(p / (1 - p)), rtol=1e-14, atol=1e-16)
    np.testing.assert_array_equal(torch.isreal(torch.tensor([1 + 0j, 2 + 1j])).numpy(), [True, False])
    assert torch.isreal(x).all()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_frexp_reconstructs_every_value(dtype):
    npd = np.float64 if dtype == torch.float64 else np.float32
    tiny = np.finfo(npd).tiny
    v = np.array([8.0, -3.0, 0.0, 1.0, 0.75, 1e-3, tiny, tiny / 8, 3e30, np.inf, -np.inf, np.nan], dtype=npd)
    m, e = torch.frexp(torch.tensor(v))
    wm, we = np.frexp(v)
    np.testing.assert_array_equal(m.numpy(), wm)
    np.testing.assert_array_equal(e.numpy()[np.isfinite(v)], we[np.isfinite(v)])
    assert e.dtype == torch.int32 and m.dtype == dtype
    with pytest.raises(RuntimeError, match="floating-point"):
        torch.frexp(torch.tensor([1, 2]))


def test_nan_to_num():
    v = np.array([np.nan, np.inf, -np.inf, 1.5])
    np.testing.assert_array_equal(torch.nan_to_num(t(v)).numpy(), np.nan_to_num(v))
    np.testing.assert_array_equal(torch.nan_to_num(t(v), nan=1.0, posinf=2.0, neginf=-2.0).numpy(),
                                  [1.0, 2.0, -2.0, 1.5])
    f32 = torch.nan_to_num(torch.tensor(v, dtype=torch.float32)).numpy()
    assert f32[1] == np.finfo(np.float32).max
    x = t(v).requires_grad_()
    torch.nan_to_num(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, 1.0])
    y = t(v)
    assert y.nan_to_num_() is y and np.isfinite(y.numpy()).all()


GRAD_CASES = {
    "deg2rad": lambda x: torch.deg2rad(x),
    "float_power": lambda x: torch.float_power(x, 2.5),
    "ldexp": lambda x: torch.ldexp(x, torch.tensor([1.0, -2.0, 3.0])),
    "fmax": lambda x: torch.fmax(x, torch.tensor([0.5, 1.2, 0.1], dtype=torch.float64)),
    "fmin": lambda x: torch.fmin(x, torch.tensor([0.5, 1.2, 0.1], dtype=torch.float64)),
    "logit": lambda x: torch.logit(x * 0.3),
    "logit_eps": lambda x: torch.logit(x * 0.3, eps=0.2),
    "frexp_mantissa": lambda x: torch.frexp(x * 3).mantissa,
}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients(name):
    x = t([0.7, 1.9, 2.6]).requires_grad_()
    assert gradcheck(GRAD_CASES[name], (x,))
    assert gradcheck(GRAD_CASES[name], (x,), check_forward_ad=True, check_backward_ad=False)
    assert gradgradcheck(GRAD_CASES[name], (x,))


def test_inplace_forms_refuse_results_the_tensor_cannot_hold():
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.tensor([1, 2]).deg2rad_()
    with pytest.raises(RuntimeError, match="float_power_"):
        torch.tensor([1.0, 2.0]).float_power_(2)
    y = t([0.25, 0.5])
    assert y.logit_() is y
    np.testing.assert_allclose(y.numpy(), [math.log(1 / 3), 0.0], atol=1e-16)
    # In place on a non-leaf keeps the gradient path through the old value.
    x = t([0.2, 0.6]).requires_grad_()
    z = x * 1.0
    z.logit_()
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (np.array([0.2, 0.6]) * (1 - np.array([0.2, 0.6]))))


def test_finfo_iinfo_can_cast_match_numpy():
    for d, n in [(torch.float32, np.float32), (torch.float64, np.float64), (torch.float16, np.float16)]:
        fi, ni = torch.finfo(d), np.finfo(n)
        want = (float(ni.eps), float(ni.max), float(ni.min), float(ni.tiny), ni.bits)
        assert (fi.eps, fi.max, fi.min, fi.tiny, fi.bits) == want
    assert torch.finfo(torch.bfloat16).eps == 2.0**-7
    assert torch.finfo(torch.complex128).eps == np.finfo(np.float64).eps
    assert torch.finfo().dtype == "float32"
    for d, n in [(torch.int8, np.int8), (torch.uint8, np.uint8), (torch.int64, np.int64)]:
        ii, ni = torch.iinfo(d), np.iinfo(n)
        assert (ii.min, ii.max, ii.bits) == (ni.min, ni.max, ni.bits)
    with pytest.raises(TypeError):
        torch.finfo(torch.int32)
    with pytest.raises(TypeError):
        torch.iinfo(torch.float32)
    # Never to a lower kind: bool < integers < floats < complex.
    kinds = [torch.bool, torch.uint8, torch.int64, torch.float16, torch.float64, torch.complex64]
    rank = [0, 1, 1, 2, 2, 3]
    for a, b in itertools.product(range(6), repeat=2):
        assert torch.can_cast(kinds[a], kinds[b]) == (rank[a] <= rank[b]), (kinds[a], kinds[b])


def test_aten_forms_of_nn_functions_take_torchs_argument_orders():
    x = t(RNG.normal(size=(2, 3, 5, 5)))
    w = t(RNG.normal(size=(4, 3, 3, 3)))
    b = t(RNG.normal(size=4))
    np.testing.assert_array_equal(torch.conv2d(x, w, b, 1, 1).numpy(), F.conv2d(x, w, b, 1, 1).numpy())
    np.testing.assert_array_equal(
        torch.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1).numpy(),
        F.conv2d(x, w, b, 1, 1).numpy(),
    )
    mean, var = t(RNG.normal(size=3)), t(RNG.uniform(0.5, 2, size=3))
    gamma, beta = t(RNG.normal(size=3)), t(RNG.normal(size=3))
    got = torch.batch_norm(x, gamma, beta, mean, var, False, 0.1, 1e-5, True)
    c = (slice(None), None, None)
    want = (x.numpy() - mean.numpy()[c]) / np.sqrt(var.numpy()[c] + 1e-5) * gamma.numpy()[c] + beta.numpy()[c]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    table = t(RNG.normal(size=(6, 2)))
    idx = torch.tensor([[0, 5], [2, 2]])
    np.testing.assert_array_equal(torch.embedding(table, idx).numpy(), table.numpy()[idx.numpy()])
    logits, target = t(RNG.normal(size=5)), t(RNG.uniform(size=5))
    for r, name in [(0, "none"), (1, "mean"), (2, "sum")]:
        np.testing.assert_array_equal(
            torch.binary_cross_entropy_with_logits(logits, target, None, None, r).numpy(),
            F.binary_cross_entropy_with_logits(logits, target, reduction=name).numpy(),
        )
    np.testing.assert_array_equal(torch.dropout(x, 0.5, False).numpy(), x.numpy())
    np.testing.assert_array_equal(torch.layer_norm(x, [5, 5]).numpy(), F.layer_norm(x, [5, 5]).numpy())


def test_prelu_and_pdist():
    x = RNG.normal(size=(2, 3, 4))
    w = np.array([0.1, 0.2, 0.3])
    got = F.prelu(t(x), t(w)).numpy()
    np.testing.assert_array_equal(got, np.where(x > 0, x, w[:, None] * x))
    np.testing.assert_array_equal(torch.prelu(t(x), t([0.25])).numpy(), np.where(x > 0, x, 0.25 * x))
    pts = RNG.normal(size=(5, 3))
    for p in (1.0, 2.0, 3.5, math.inf):
        want = [np.linalg.norm(pts[i] - pts[j], ord=p) for i in range(5) for j in range(i + 1, 5)]
        np.testing.assert_allclose(torch.pdist(t(pts), p).numpy(), want, rtol=1e-13)
    y = t(pts).requires_grad_()
    assert gradcheck(lambda v: F.pdist(v), (y,))
    with pytest.raises(RuntimeError, match="2D"):
        F.pdist(t(x))
