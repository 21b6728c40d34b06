"""Complex tensors (complex64, complex128): promotion, creation, NumPy,
views of the real and imaginary parts, kernels, torch's refusals, and
gradients under torch's convention.

Oracles: NumPy's complex arithmetic and functions (complex128, or
complex64 for single precision), torch's documented promotion rules, and
for gradients float64 central differences taken separately along the real
and the imaginary axis: for a real loss ``L(z)``, ``z.grad`` must equal
``dL/dx + i dL/dy``.
"""

from __future__ import annotations

import pickle

import ferrograd as fg
import numpy as np
import pytest
from conftest import cases, to_np

RNG = np.random.default_rng(7)


def crandn(*shape, dtype=np.complex128) -> np.ndarray:
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


# --- dtypes and promotion ---------------------------------------------------


def test_dtype_objects_and_aliases():
    assert fg.cfloat is fg.complex64 and fg.cdouble is fg.complex128
    assert fg.complex64.is_complex and not fg.complex64.is_floating_point
    assert (fg.complex64.itemsize, fg.complex128.itemsize) == (8, 16)
    assert fg.complex64.to_real() == fg.float32 and fg.float64.to_complex() == fg.complex128
    assert repr(fg.complex128) == "ferrograd.complex128"
    assert pickle.loads(pickle.dumps(fg.complex64)) is fg.complex64
    with pytest.raises(RuntimeError, match="to_complex is only supported"):
        fg.int64.to_complex()


REAL = [fg.bool, fg.uint8, fg.int8, fg.int16, fg.int32, fg.int64, fg.float16, fg.bfloat16,
        fg.float32, fg.float64]  # fmt: skip


@pytest.mark.parametrize("other", REAL + [fg.complex64, fg.complex128])
def test_promote_types_with_complex(other):
    # The components promote as reals: only float64 (or complex128) widens
    # complex64.
    wide = other in (fg.float64, fg.complex128)
    assert fg.promote_types(fg.complex64, other) == (fg.complex128 if wide else fg.complex64)
    assert fg.promote_types(other, fg.complex128) == fg.complex128


def test_result_type_tiers_with_complex():
    f32, f64, i64 = fg.ones(2), fg.ones(2, dtype=fg.float64), fg.ones(2, dtype=fg.int64)
    c64, c128 = fg.ones(2, dtype=fg.complex64), fg.ones(2, dtype=fg.complex128)
    z128 = fg.tensor(1j, dtype=fg.complex128)
    assert fg.result_type(f32, 1j) == fg.complex64
    assert fg.result_type(f64, 1j) == fg.complex128
    assert fg.result_type(i64, 1j) == fg.complex64
    # A complex zero-dim tensor makes a float tensor complex at its own precision.
    assert fg.result_type(f32, z128) == fg.complex64
    assert fg.result_type(i64, z128) == fg.complex128
    assert fg.result_type(c64, fg.tensor(1.0, dtype=fg.float64)) == fg.complex64
    assert fg.result_type(c64, z128) == fg.complex64
    assert fg.result_type(c128, 2.5) == fg.complex128
    old = fg.get_default_dtype()
    try:
        fg.set_default_dtype(fg.float64)
        assert fg.result_type(i64, 1j) == fg.complex128
        assert fg.tensor([1, 2j]).dtype == fg.complex128
    finally:
        fg.set_default_dtype(old)


# --- creation, conversion, NumPy -------------------------------------------


def test_tensor_from_python_complex_and_back():
    t = fg.tensor([[1, 2.5], [3j, -1 - 0.5j]])
    assert t.dtype == fg.complex64 and fg.is_complex(t) is not None
    assert t.tolist() == [[1 + 0j, 2.5 + 0j], [3j, -1 - 0.5j]]
    z = t[1, 1].item()
    assert isinstance(z, complex) and z == -1 - 0.5j
    assert fg.tensor(1j).dtype == fg.complex64
    assert fg.full((2,), 1 + 1j).dtype == fg.complex64
    assert fg.zeros(3, dtype=fg.cdouble).tolist() == [0j, 0j, 0j]
    assert fg.tensor([1, 2], dtype=complex).dtype == fg.complex128


def test_casts_between_real_and_complex():
    x = fg.tensor([1.5, -2.0])
    assert x.cfloat().tolist() == [1.5 + 0j, -2 + 0j]
    z = fg.tensor([1.5 + 2j, -3 - 4j], dtype=fg.complex128)
    assert z.float().tolist() == [1.5, -3.0]  # the imaginary part is dropped
    assert z.long().tolist() == [1, -3]
    assert fg.tensor([0j, 1j, 0.5 + 0j]).bool().tolist() == [False, True, True]
    assert z.to(fg.complex64).dtype == fg.complex64


@pytest.mark.parametrize("np_dt,dt", [(np.complex64, fg.complex64), (np.complex128, fg.complex128)])
def test_numpy_shares_complex_memory(np_dt, dt):
    a = crandn(3, 2, dtype=np_dt)
    t = fg.from_numpy(a)
    assert t.dtype == dt
    a[0, 0] = 7 - 7j
    assert t[0, 0].item() == 7 - 7j
    back = np.asarray(t)
    assert back.dtype == np_dt
    back[1, 1] = 1j
    assert t[1, 1].item() == 1j
    np.testing.assert_array_equal(fg.tensor(a).numpy(), a)


def test_pickle_round_trip():
    z = fg.tensor(crandn(2, 3))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(z)).numpy(), z.numpy())


# --- views: real, imag, view_as_real, view_as_complex ----------------------


def test_real_and_imag_are_writable_views():
    z = fg.tensor([1 + 2j, 3 + 4j])
    re, im = z.real, z.imag
    assert re.dtype == im.dtype == fg.float32
    assert (re.stride(), im.stride(), im.storage_offset()) == ((2,), (2,), 1)
    re[0] = 10.0
    im.mul_(2)
    assert z.tolist() == [10 + 4j, 3 + 8j]
    z.real = fg.tensor([9.0, 9.0])
    z.imag = fg.tensor([0.5, 0.25])
    assert z.tolist() == [9 + 0.5j, 9 + 0.25j]
    x = fg.ones(2)
    assert x.real is x or x.real.data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        x.imag  # noqa: B018


def test_view_as_real_and_complex_share_memory():
    z = fg.tensor(crandn(3, 4)).transpose(0, 1)
    r = fg.view_as_real(z)
    assert r.shape == (4, 3, 2) and r.stride() == (2, 8, 1)
    np.testing.assert_array_equal(to_np(r)[..., 0] + 1j * to_np(r)[..., 1], to_np(z))
    x = fg.arange(12.0).reshape(3, 2, 2)[::2]
    c = fg.view_as_complex(x)
    assert c.shape == (2, 2) and c.dtype == fg.complex64
    c[0, 0] = 5 - 1j
    assert x[0, 0].tolist() == [5.0, -1.0]


@pytest.mark.parametrize(
    "make,msg",
    [
        (lambda: fg.ones(2, 3), "last dimension of size 2"),
        (lambda: fg.ones(2, 2).t(), "last dimension with stride 1"),
        (lambda: fg.ones(4, 3)[:, :2], "stride divisible by 2"),
        (lambda: fg.ones(5)[1:].view(2, 2), "storage_offset divisible by 2"),
        (lambda: fg.ones(2, 2, dtype=fg.int64), "only supported for float and double"),
        (lambda: fg.ones(()), "one or more dimensions"),
    ],
)
def test_view_as_complex_refuses_bad_layouts(make, msg):
    with pytest.raises(RuntimeError, match=msg):
        fg.view_as_complex(make())


def test_view_as_real_refuses_real_tensors():
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        fg.view_as_real(fg.ones(2))


# --- kernels against NumPy --------------------------------------------------


@pytest.mark.parametrize(
    "dt,np_dt,tol", [(fg.complex64, np.complex64, 1e-5), (fg.complex128, np.complex128, 1e-12)]
)
def test_arithmetic_matches_numpy(dt, np_dt, tol):
    a, b = crandn(3, 4, dtype=np_dt), crandn(4, dtype=np_dt)
    for label, ta, na in cases(a):
        tb = fg.tensor(b)
        for op in (np.add, np.subtract, np.multiply, np.divide):
            got = to_np(getattr(fg, op.__name__)(ta, tb))
            np.testing.assert_allclose(got, op(na, b), rtol=tol, atol=tol, err_msg=label)
    ta = fg.tensor(a)
    np.testing.assert_allclose(to_np(-ta), -a, rtol=tol)
    np.testing.assert_allclose(to_np(ta * 2.5 - 1j), a * 2.5 - 1j, rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(1j / ta), 1j / a, rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(ta**2), a * a, rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(ta ** (0.5 + 1j)), a ** (0.5 + 1j), rtol=10 * tol, atol=tol)
    np.testing.assert_allclose(to_np(ta ** fg.tensor(b)), a**b, rtol=10 * tol, atol=tol)
    # Real operands promote into complex results.
    r = RNG.standard_normal(4).astype(np.float32 if dt == fg.complex64 else np.float64)
    np.testing.assert_allclose(to_np(ta * fg.tensor(r)), a * r, rtol=tol)
    ta.add_(fg.tensor(b), alpha=2)
    np.testing.assert_allclose(to_np(ta), a + 2 * b, rtol=tol, atol=tol)


UNARY = [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sin", np.sin), ("cos", np.cos),
    ("tan", np.tan), ("sinh", np.sinh), ("cosh", np.cosh), ("tanh", np.tanh),
    ("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan), ("asinh", np.arcsinh),
    ("acosh", np.arccosh), ("atanh", np.arctanh), ("log2", np.log2), ("log10", np.log10),
    ("exp2", lambda z: 2.0**z), ("expm1", np.expm1), ("log1p", np.log1p),
    ("reciprocal", lambda z: 1 / z), ("rsqrt", lambda z: 1 / np.sqrt(z)),
    ("sigmoid", lambda z: 1 / (1 + np.exp(-z))), ("square", lambda z: z * z),
]  # fmt: skip


@pytest.mark.parametrize("name,ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary_functions_match_numpy(name, ref):
    a = crandn(2, 5)
    for label, t, na in cases(a):
        got = to_np(getattr(t, name)())
        np.testing.assert_allclose(got, ref(na), rtol=1e-12, atol=1e-14, err_msg=label)
    t32 = fg.tensor(a.astype(np.complex64))
    np.testing.assert_allclose(to_np(getattr(t32, name)()), ref(a), rtol=2e-5, atol=1e-6)


def test_expm1_and_log1p_are_accurate_near_zero():
    z = fg.tensor([1e-12 + 1e-13j, -3e-11 + 2e-12j], dtype=fg.complex128)
    want_expm1 = [1e-12 + 1e-13j, -3e-11 + 2e-12j]  # e^z - 1 = z + z^2/2 + ...
    np.testing.assert_allclose(to_np(z.expm1()), want_expm1, rtol=1e-10)
    np.testing.assert_allclose(to_np(z.log1p()), want_expm1, rtol=1e-10)


def test_abs_angle_sgn_conj():
    a = np.array([3 + 4j, -1 + 0j, 0j, -2 - 2j])
    t = fg.tensor(a, dtype=fg.complex128)
    assert t.abs().dtype == fg.float64
    np.testing.assert_allclose(to_np(t.abs()), np.abs(a))
    np.testing.assert_allclose(to_np(t.angle()), np.angle(a))
    sgn = np.where(a == 0, 0, a / np.where(a == 0, 1, np.abs(a)))
    np.testing.assert_allclose(to_np(t.sgn()), sgn)
    np.testing.assert_array_equal(to_np(t.conj()), np.conj(a))
    np.testing.assert_array_equal(to_np(fg.conj_physical(t)), np.conj(a))
    assert not t.conj().is_conj() and t.resolve_conj() is not None
    x = fg.tensor([-2.0, 0.0, 3.0])
    np.testing.assert_allclose(to_np(x.angle()), [np.pi, 0, 0])
    assert x.sgn().tolist() == [-1.0, 0.0, 1.0] and x.conj().tolist() == x.tolist()


def test_complex_and_polar_build_from_real_parts():
    re, im = RNG.standard_normal((2, 1)), RNG.standard_normal(3)
    z = fg.complex(fg.tensor(re, dtype=fg.float32), fg.tensor(im, dtype=fg.float32))
    assert z.dtype == fg.complex64 and z.shape == (2, 3)
    np.testing.assert_allclose(to_np(z), re + 1j * im, rtol=1e-6)
    r, th = np.abs(RNG.standard_normal(4)), RNG.standard_normal(4)
    p = fg.polar(fg.tensor(r, dtype=fg.float64), fg.tensor(th, dtype=fg.float64))
    assert p.dtype == fg.complex128
    np.testing.assert_allclose(to_np(p), r * np.exp(1j * th), rtol=1e-14)
    with pytest.raises(RuntimeError, match="Expected object of scalar type Double"):
        fg.complex(fg.ones(2, dtype=fg.float64), fg.ones(2))
    with pytest.raises(RuntimeError, match="but got Long and Long"):
        fg.polar(fg.ones(2, dtype=fg.int64), fg.ones(2, dtype=fg.int64))
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        fg.complex(fg.ones(2), 1.0)


def test_reductions_match_numpy():
    a = crandn(3, 4)
    t = fg.tensor(a, dtype=fg.complex128)
    np.testing.assert_allclose(to_np(t.sum()), a.sum(), rtol=1e-13)
    np.testing.assert_allclose(to_np(t.sum(1)), a.sum(1), rtol=1e-13)
    np.testing.assert_allclose(to_np(t.mean(0)), a.mean(0), rtol=1e-13)
    np.testing.assert_allclose(to_np(t.prod(1)), a.prod(1), rtol=1e-13)
    np.testing.assert_allclose(to_np(t.cumsum(1)), a.cumsum(1), rtol=1e-13)
    np.testing.assert_allclose(to_np(t.cumprod(0)), a.cumprod(0), rtol=1e-13)
    np.testing.assert_allclose(to_np(fg.ones(3).sum(dtype=fg.complex64)), 3 + 0j)


def test_products_match_numpy():
    a, b = crandn(2, 3, 4), crandn(4, 5)
    np.testing.assert_allclose(to_np(fg.tensor(a) @ fg.tensor(b)), a @ b, rtol=1e-5, atol=1e-5)
    ta, tb = fg.tensor(a, dtype=fg.complex128), fg.tensor(b, dtype=fg.complex128)
    np.testing.assert_allclose(to_np(ta @ tb), a @ b, rtol=1e-13)
    np.testing.assert_allclose(to_np(ta[0].mm(tb)), a[0] @ b, rtol=1e-13)
    np.testing.assert_allclose(to_np(ta.bmm(ta.transpose(1, 2))), a @ a.transpose(0, 2, 1), rtol=1e-13)
    v, w = crandn(6), crandn(6)
    np.testing.assert_allclose(to_np(fg.tensor(v).dot(fg.tensor(w))), v @ w, rtol=1e-6)
    big_a, big_b = crandn(70, 90), crandn(90, 40)
    got = fg.tensor(big_a, dtype=fg.complex128) @ fg.tensor(big_b, dtype=fg.complex128)
    np.testing.assert_allclose(to_np(got), big_a @ big_b, rtol=1e-12)


def test_comparisons_and_predicates():
    a = np.array([1 + 1j, np.nan + 0j, complex(0, np.inf), 2j])
    t = fg.tensor(a, dtype=fg.complex128)
    assert (t == fg.tensor(a, dtype=fg.complex128)).tolist() == [True, False, True, True]
    assert (t != 2j).tolist() == [True, True, True, False]
    assert t.isnan().tolist() == np.isnan(a).tolist()
    assert t.isinf().tolist() == np.isinf(a).tolist()
    assert t.isfinite().tolist() == np.isfinite(a).tolist()
    b = a + 1e-9
    assert fg.isclose(t, fg.tensor(b, dtype=fg.complex128)).tolist() == np.isclose(a, b).tolist()
    assert fg.where(fg.tensor([True, False, True, False]), t, 0).tolist()[3] == 0j


@pytest.mark.parametrize(
    "call,exc,msg",
    [
        (lambda z: z < z, NotImplementedError, '"lt_cpu" not implemented for \'ComplexFloat\''),
        (lambda z: z >= 1, NotImplementedError, '"ge_cpu" not implemented'),
        (lambda z: z.max(), NotImplementedError, '"max_all" not implemented'),
        (lambda z: z.clamp(0, 1), NotImplementedError, "clamp is not supported for complex types"),
        (lambda z: z.relu(), NotImplementedError, "clamp is not supported for complex types"),
        (lambda z: z.sign(), NotImplementedError, "Please use torch.sgn instead"),
        (lambda z: z.floor(), NotImplementedError, "floor is not supported for complex inputs"),
        (lambda z: z % 2, NotImplementedError, '"remainder_cpu" not implemented'),
        (lambda z: z // 2, NotImplementedError, '"div_floor_cpu" not implemented'),
        (lambda z: fg.maximum(z, z), RuntimeError, "maximum not implemented for complex tensors"),
        (lambda z: z.signbit(), NotImplementedError, "signbit is not implemented for complex"),
        (lambda z: z.erf(), NotImplementedError, "not implemented for 'ComplexFloat'"),
        (lambda z: z.abs_(), RuntimeError, "In-place abs is not supported for complex tensors"),
    ],
)
def test_refusals_match_torch(call, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        call(fg.tensor([1 + 2j, -1j]))


def test_complex_result_cannot_be_stored_in_a_real_tensor():
    x = fg.ones(2)
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.mul_(fg.tensor([1j, 1j]))


# --- autograd ----------------------------------------------------------------


def fd_grad(loss, z: np.ndarray, h=1e-6) -> np.ndarray:
    """dL/dx + i dL/dy by float64 central differences along both axes."""
    g = np.zeros_like(z)
    for idx in np.ndindex(z.shape):
        for step in (h, 1j * h):
            zp, zm = z.copy(), z.copy()
            zp[idx] += step
            zm[idx] -= step
            d = (loss(zp) - loss(zm)) / (2 * h)
            g[idx] += d if step == h else 1j * d
    return g


def fg_loss(f):
    return lambda a: f(fg.tensor(a, dtype=fg.complex128)).item()


LOSSES = [
    ("abs2", lambda z: (z.abs() ** 2).sum()),
    ("exp_real", lambda z: z.exp().real.sum()),
    ("log_imag", lambda z: z.log().imag.sum()),
    ("sin_cos_abs", lambda z: (z.sin() * z.cos()).abs().sum()),
    ("tanh_sqrt", lambda z: (z.tanh() + z.sqrt()).abs().sum()),
    ("mul_div", lambda z: (z * z.conj() / (z + 3)).real.sum()),
    ("pow", lambda z: (z**3 - z ** (0.5 + 0.5j)).abs().sum()),
    ("angle", lambda z: z.angle().sum()),
    ("sgn", lambda z: (z.sgn() * (1 - 2j)).real.sum()),
    ("view_as_real", lambda z: (fg.view_as_real(z) ** 2 * fg.tensor([1.0, 3.0], dtype=fg.float64)).sum()),
    ("reciprocal_sigmoid", lambda z: (z.reciprocal() + z.sigmoid()).imag.sum()),
    ("sum_mean", lambda z: (z.sum(0) * z.mean(0)).abs().sum()),
    ("cumsum_prod", lambda z: z.cumsum(0).prod(0).real.sum()),
]


@pytest.mark.parametrize("name,f", LOSSES, ids=[n for n, _ in LOSSES])
def test_gradients_match_central_differences(name, f):
    a = crandn(2, 3) + 0.5
    z = fg.tensor(a, dtype=fg.complex128, requires_grad=True)
    f(z).backward()
    assert z.grad.dtype == fg.complex128
    np.testing.assert_allclose(to_np(z.grad), fd_grad(fg_loss(f), a), rtol=1e-6, atol=1e-7)


def test_abs_squared_gradient_is_two_z():
    a = crandn(4)
    z = fg.tensor(a, dtype=fg.complex128, requires_grad=True)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(to_np(z.grad), 2 * a, rtol=1e-14)


def test_matmul_gradients_match_central_differences():
    a, w = crandn(2, 3), crandn(3, 2)
    wt = fg.tensor(w, dtype=fg.complex128)

    def f(z):
        return ((z @ wt) * (1 + 1j)).real.sum() + (z.mm(wt)).abs().sum()

    z = fg.tensor(a, dtype=fg.complex128, requires_grad=True)
    f(z).backward()
    np.testing.assert_allclose(to_np(z.grad), fd_grad(fg_loss(f), a), rtol=1e-6, atol=1e-7)


def test_real_leaves_get_real_gradients():
    # complex(a, b), polar(r, th) and a real leaf times a complex constant.
    a = RNG.standard_normal(3)
    b = RNG.standard_normal(3)
    w = crandn(3)
    x = fg.tensor(a, dtype=fg.float64, requires_grad=True)
    y = fg.tensor(b, dtype=fg.float64, requires_grad=True)
    fg.complex(x, y).abs().sum().backward()
    r = np.hypot(a, b)
    np.testing.assert_allclose(to_np(x.grad), a / r, rtol=1e-13)
    np.testing.assert_allclose(to_np(y.grad), b / r, rtol=1e-13)
    x.grad = None
    (x * fg.tensor(w, dtype=fg.complex128)).real.sum().backward()
    assert x.grad.dtype == fg.float64
    np.testing.assert_allclose(to_np(x.grad), w.real, rtol=1e-14)
    r0 = fg.tensor(np.abs(a) + 0.5, dtype=fg.float64, requires_grad=True)
    th = fg.tensor(b, dtype=fg.float64, requires_grad=True)
    fg.polar(r0, th).mul(fg.tensor(w, dtype=fg.complex128)).real.sum().backward()
    # Re(w r e^{i th}): d/dr = Re(w e^{i th}), d/dth = Re(i w r e^{i th}).
    e = np.exp(1j * b)
    np.testing.assert_allclose(to_np(r0.grad), (w * e).real, rtol=1e-13)
    np.testing.assert_allclose(to_np(th.grad), (1j * w * (np.abs(a) + 0.5) * e).real, rtol=1e-13)


def test_backward_of_a_complex_scalar_needs_a_gradient():
    z = fg.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got ferrograd.complex64"):
        z.sum().backward()
    z.sum().backward(gradient=fg.tensor(1 + 1j))
    assert z.grad.tolist() == [1 + 1j]


def test_imag_and_real_backward():
    z = fg.tensor([1 + 2j, -0.5 + 0.3j], dtype=fg.complex128, requires_grad=True)
    (z.real * 2 + z.imag * 3).sum().backward()
    assert z.grad.tolist() == [2 + 3j, 2 + 3j]


def test_forward_mode_tangents_are_directional_derivatives():
    import ferrograd.autograd.forward_ad as fwAD

    a, t = crandn(3), crandn(3)
    with fwAD.dual_level():
        z = fwAD.make_dual(fg.tensor(a, dtype=fg.complex128), fg.tensor(t, dtype=fg.complex128))
        out = {
            "mul": (z * z, 2 * a * t),
            "exp": (z.exp(), np.exp(a) * t),
            "conj": (z.conj(), np.conj(t)),
            "abs": (z.abs(), (np.conj(a) * t).real / np.abs(a)),
            "real": (z.real, t.real),
            "angle": (z.angle(), (np.conj(a) * t).imag / np.abs(a) ** 2),
        }
        for name, (y, want) in out.items():
            got = to_np(fwAD.unpack_dual(y).tangent)
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)


# --- printing (strings recorded from torch 2.13) ----------------------------


@pytest.mark.parametrize(
    "values,dtype,want",
    [
        ([1 + 2j, -3.5 - 0.25j], None, "tensor([ 1.0000+2.0000j, -3.5000-0.2500j])"),
        ([[1 + 2j, 3 - 4j], [0.5j, -1]], None,
         "tensor([[ 1.+2.0000j,  3.-4.0000j],\n        [ 0.+0.5000j, -1.+0.0000j]])"),
        (1 + 2j, None, "tensor(1.+2.j)"),
        (-1.5 - 2.25j, fg.complex128, "tensor(-1.5000-2.2500j, dtype=ferrograd.complex128)"),
        ([1e10 + 1j, 1e-5j], None, "tensor([1.0000e+10+1.0000e+00j, 0.0000e+00+1.0000e-05j])"),
        ([123456.789 + 1j, 1j], None, "tensor([123456.7891+1.j,      0.0000+1.j])"),
        ([1 + 1j, 20 + 0j, -300j], None, "tensor([ 1.+1.j, 20.+0.j, -0.-300.j])"),
        ([complex("nan+1j"), complex("1+infj")], None, "tensor([nan+1.j, 1.+infj])"),
        ([], fg.complex64, "tensor([], dtype=ferrograd.complex64)"),
    ],
)  # fmt: skip
def test_repr_matches_torch(values, dtype, want):
    assert repr(fg.tensor(values, dtype=dtype)) == want


def test_repr_wraps_lines_as_torch():
    got = repr(fg.arange(20.0) * (0.5 + 1.25j))
    assert got.splitlines()[0] == "tensor([0.0000+0.0000j, 0.5000+1.2500j, 1.0000+2.5000j, 1.5000+3.7500j,"
    assert len(got.splitlines()) == 5


def test_python_number_conversions():
    z = fg.tensor(1 + 2j)
    assert complex(z) == 1 + 2j and complex(fg.tensor(2.5)) == 2.5 + 0j
    assert float(fg.tensor(1 + 0j)) == 1.0 and int(fg.tensor(3 + 0j)) == 3
    with pytest.raises(RuntimeError, match="cannot be converted to type double without overflow"):
        float(z)
    with pytest.raises(RuntimeError, match="cannot be converted to type int64_t without overflow"):
        int(z)
    with pytest.raises(TypeError, match="can be converted to an index"):
        z.__index__()


def test_complex_sampling_draws_real_pairs():
    # rand/uniform_ fill both parts as the real pairs would be filled;
    # randn/normal_ give each part half the variance (std / sqrt 2).
    fg.manual_seed(3)
    z = fg.rand(4, 3, dtype=fg.complex64)
    fg.manual_seed(3)
    pairs = fg.rand(4, 3, 2)
    np.testing.assert_array_equal(to_np(fg.view_as_real(z)), to_np(pairs))
    fg.manual_seed(5)
    w = fg.randn(2000, dtype=fg.complex128)
    fg.manual_seed(5)
    ref = fg.randn(2000, 2, dtype=fg.float64) * (0.5**0.5)
    np.testing.assert_allclose(to_np(fg.view_as_real(w)), to_np(ref), rtol=1e-15, atol=1e-15)
    assert abs(to_np(w.abs() ** 2).mean() - 1.0) < 0.1  # E|z|^2 = 1
    u = fg.zeros(3, dtype=fg.complex64)
    u.uniform_(2.0, 3.0)
    parts = to_np(fg.view_as_real(u))
    assert ((parts >= 2.0) & (parts < 3.0)).all()
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        fg.zeros(2, dtype=fg.complex64).random_()


def test_views_of_another_dtype_follow_in_place_changes_of_their_base():
    # A real view of a complex base, read after the base changed in place,
    # differentiates through the new values: r = Re(2 w) = 2x.
    z = fg.tensor([1 + 2j, 3 - 1j], dtype=fg.complex128, requires_grad=True)
    w = z * 1
    r = w.real
    w.mul_(2)
    (r * fg.tensor([1.0, 5.0], dtype=fg.float64)).sum().backward()
    assert z.grad.tolist() == [2 + 0j, 10 + 0j]
    # A complex view of a real base: |c| after y *= 3 is 3 |x pair|.
    a = np.array([[3.0, 4.0], [1.0, -1.0]])
    x = fg.tensor(a, dtype=fg.float64, requires_grad=True)
    y = x * 1
    c = fg.view_as_complex(y)
    y.mul_(3)
    c.abs().sum().backward()
    np.testing.assert_allclose(to_np(x.grad), 3 * a / np.hypot(a[:, :1], a[:, 1:]), rtol=1e-14)


def test_in_place_change_of_a_part_view_under_grad_is_refused():
    z = fg.tensor([1 + 2j], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match="view of a complex64 tensor"):
        z.real.mul_(2)
    with fg.no_grad():
        z.imag.mul_(2)
    assert z.tolist() == [1 + 4j]


def test_trace_logsumexp_var_and_norms_match_numpy():
    a = crandn(3, 3)
    t = fg.tensor(a, dtype=fg.complex128)
    np.testing.assert_allclose(to_np(t.trace()), np.trace(a), rtol=1e-14)
    lse = np.log(np.exp(a).sum(1))
    np.testing.assert_allclose(to_np(t.logsumexp(1)), lse, rtol=1e-13)
    big = fg.tensor(a + 800, dtype=fg.complex128)  # exp overflows without the shift
    np.testing.assert_allclose(to_np(big.logsumexp(0)), np.log(np.exp(a).sum(0)) + 800, rtol=1e-13)
    var = (np.abs(a - a.mean(0)) ** 2).sum(0) / 2  # correction=1
    np.testing.assert_allclose(to_np(t.var(0)), var, rtol=1e-13)
    np.testing.assert_allclose(to_np(t.std(0)), np.sqrt(var), rtol=1e-13)
    v, m = fg.var_mean(t, 0) if hasattr(fg, "var_mean") else t.var_mean(0)
    np.testing.assert_allclose(to_np(v), var, rtol=1e-13)
    np.testing.assert_allclose(to_np(m), a.mean(0), rtol=1e-13)
    assert t.var().dtype == fg.float64
    np.testing.assert_allclose(to_np(t.norm()), np.linalg.norm(a), rtol=1e-13)
    np.testing.assert_allclose(
        to_np(fg.linalg.vector_norm(t, 1, dim=1)), np.abs(a).sum(1), rtol=1e-13
    )
    b, c = crandn(3), crandn(3) + 2
    got = fg.tensor(a[0]).addcdiv(fg.tensor(b), fg.tensor(c), value=0.5)
    np.testing.assert_allclose(to_np(got), a[0] + 0.5 * b / c, rtol=1e-5)
    w = np.array([0.2 + 0.1j, 0.9 - 0.3j, -1.5 + 2j])  # both branches of |w| < 0.5
    got = fg.tensor(b, dtype=fg.complex128).lerp(fg.tensor(c, dtype=fg.complex128), fg.tensor(w))
    np.testing.assert_allclose(to_np(got), b + w * (c - b), rtol=1e-14)


REDUCTION_LOSSES = [
    ("logsumexp", lambda z: z.logsumexp(1).abs().sum()),
    ("var", lambda z: z.var(0).sum() + z.std(1).sum()),
    ("norm", lambda z: z.norm() + fg.linalg.vector_norm(z, 3, dim=0).sum()),
    ("trace", lambda z: (z[:, :2].reshape(3, 2)[:2].trace() * (1 + 1j)).real),
    ("addcdiv", lambda z: z[0].addcdiv(z[1], z[2] + 3, value=0.5).abs().sum()),
    ("lerp", lambda z: z[0].lerp(z[1], z[2]).abs().sum() + z[1].lerp(z[0], 0.25).imag.sum()),
]


@pytest.mark.parametrize("name,f", REDUCTION_LOSSES, ids=[n for n, _ in REDUCTION_LOSSES])
def test_reduction_gradients_match_central_differences(name, f):
    a = crandn(3, 3) + 0.5
    z = fg.tensor(a, dtype=fg.complex128, requires_grad=True)
    f(z).backward()
    np.testing.assert_allclose(to_np(z.grad), fd_grad(fg_loss(f), a), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "call,exc,msg",
    [
        (lambda z: z.argmax(), RuntimeError, r"argmax\(\): does not support complex input"),
        (lambda z: z.max(0), RuntimeError, r"max\(\): does not support complex input"),
        (lambda z: z.amax(), NotImplementedError, '"max_values_cpu" not implemented'),
        (lambda z: z.softmax(0), NotImplementedError,
         "\"softmax_lastdim_kernel_impl\" not implemented for 'ComplexFloat'"),
        (lambda z: fg.log_softmax(z.reshape(1, 1), 0), NotImplementedError,
         "\"log_softmax_kernel_impl\" not implemented for 'ComplexFloat'"),
        (lambda z: fg.bernoulli(z), NotImplementedError, "\"bernoulli_tensor_cpu_self_\" not implemented"),
        (lambda z: z.bernoulli_(0.5), NotImplementedError, "\"bernoulli_scalar_cpu_\" not implemented"),
        (lambda z: z.bernoulli_(fg.tensor([0.5])), NotImplementedError, "\"bernoulli_tensor_cpu_self_\""),
        (lambda z: z.exponential_(), RuntimeError,
         "dtype must be a floating point but you specified ComplexFloat"),
        (lambda z: fg.multinomial(z, 1), RuntimeError, "got: ComplexFloat"),
        (lambda z: fg.linalg.matrix_norm(z.reshape(1, 1), dtype=fg.float32), RuntimeError,
         "dtype should be complex for complex inputs, but got Float"),
        (lambda z: fg.linalg.matrix_norm(z.real.reshape(1, 1), dtype=fg.cfloat), RuntimeError,
         "dtype should be real for real inputs, but got ComplexFloat"),
        (lambda z: fg.linalg.solve(z.reshape(1, 1), z.real.reshape(1, 1)), RuntimeError,
         "found A of type ComplexFloat and B of type Float"),
        (lambda z: z.mH, RuntimeError, "tensor.mH is only supported on matrices or batches of matrices"),
        (lambda z: z.H, RuntimeError, r"tensor.H is only supported on matrices \(2-D tensors\). Got 1-D"),
        (lambda z: z.reshape(1, 1, 1).H, RuntimeError, "For batches of matrices, consider using tensor.mH"),
        (lambda z: z.adjoint(), RuntimeError, r"tensor.adjoint\(\) is only supported on matrices"),
    ],
)
def test_more_refusals(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call(fg.tensor([1 + 2j]))


def test_softmax_of_a_complex_input_cast_to_a_real_dtype_runs():
    z = fg.tensor([1 + 2j, 3 - 1j])
    e = np.exp([1.0, 3.0])
    np.testing.assert_allclose(to_np(z.softmax(0, dtype=fg.float32)), e / e.sum(), rtol=1e-6)


def test_normal_with_a_complex_mean_scales_complex_randn():
    mean = fg.tensor([1 + 1j, -2j, 0.5])
    std = fg.tensor([1.0, 2.0, 0.5])
    fg.manual_seed(3)
    got = fg.normal(mean, std)
    fg.manual_seed(3)
    z = fg.randn(3, dtype=fg.cfloat)
    assert got.dtype == fg.complex64
    np.testing.assert_allclose(to_np(got), to_np(z) * to_np(std) + to_np(mean), rtol=1e-6)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        fg.normal(mean, -std)


# --- linear algebra ----------------------------------------------------------


def well_conditioned(*shape) -> np.ndarray:
    """Complex matrices with a dominant diagonal."""
    n = shape[-1]
    return crandn(*shape) + 3 * np.eye(n)


@pytest.mark.parametrize(
    "dt,np_dt,tol", [(fg.complex64, np.complex64, 1e-5), (fg.complex128, np.complex128, 1e-12)]
)
def test_inv_det_solve_match_numpy(dt, np_dt, tol):
    a = well_conditioned(2, 3, 3).astype(np_dt)
    b = crandn(3, 2).astype(np_dt)
    v = crandn(2, 3).astype(np_dt)
    ta = fg.tensor(a, dtype=dt)
    # A transposed view reads through its strides.
    got = fg.linalg.inv(ta.mT)
    assert got.dtype == dt
    np.testing.assert_allclose(to_np(got), np.linalg.inv(a.transpose(0, 2, 1)), rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(fg.linalg.det(ta)), np.linalg.det(a), rtol=tol)
    np.testing.assert_allclose(to_np(ta.det()), np.linalg.det(a), rtol=tol)
    # B broadcasts over A's batch; a batch of vectors stays vectors.
    x = fg.linalg.solve(ta, fg.tensor(b, dtype=dt))
    want = np.linalg.solve(a, np.broadcast_to(b, (2, 3, 2)))
    np.testing.assert_allclose(to_np(x), want, rtol=tol, atol=tol)
    x = fg.linalg.solve(ta, fg.tensor(v, dtype=dt))
    assert x.shape == (2, 3)
    np.testing.assert_allclose(to_np(x), np.linalg.solve(a, v[..., None])[..., 0], rtol=tol, atol=tol)


def test_a_singular_complex_matrix_is_reported():
    a = fg.tensor([[1 + 1j, 2 + 2j], [1j, 2j]])  # row 2 = row 1 * (1 + 1j) / 2
    with pytest.raises(RuntimeError, match="The diagonal element 2 is zero"):
        fg.linalg.inv(a)
    assert abs(fg.linalg.det(a).item()) < 1e-6


LINALG_LOSSES = [
    ("inv", lambda z: (fg.linalg.inv(z) * (1 - 2j)).real.sum()),
    ("det", lambda z: fg.linalg.det(z).abs() + (fg.linalg.det(z) * 1j).real),
    ("solve_a", lambda z: fg.linalg.solve(z, SOLVE_B).abs().sum()),
    ("solve_b", lambda z: fg.linalg.solve(SOLVE_A, z).imag.sum()),
    ("solve_vec", lambda z: fg.linalg.solve(z, SOLVE_B[:, 0]).abs().sum()),
    ("adjoint", lambda z: (z.mH @ z * (2 + 1j)).real.sum() + z.H.imag.sum()),
    ("matrix_norm", lambda z: sum(fg.linalg.matrix_norm(z, o) for o in ("fro", 1, -1, float("inf")))),
]
SOLVE_A = fg.tensor(well_conditioned(3, 3), dtype=fg.complex128)
SOLVE_B = fg.tensor(crandn(3, 2), dtype=fg.complex128)


@pytest.mark.parametrize("name,f", LINALG_LOSSES, ids=[n for n, _ in LINALG_LOSSES])
def test_linalg_gradients_match_central_differences(name, f):
    a = well_conditioned(3, 3) if name != "solve_b" else crandn(3, 3)
    z = fg.tensor(a, dtype=fg.complex128, requires_grad=True)
    f(z).backward()
    np.testing.assert_allclose(to_np(z.grad), fd_grad(fg_loss(f), a), rtol=1e-6, atol=1e-7)


def test_linalg_tangents_are_directional_derivatives():
    import ferrograd.autograd.forward_ad as fwAD

    a, t, b = well_conditioned(3, 3), crandn(3, 3), crandn(3, 2)
    h = 1e-6
    funcs = {
        "inv": lambda m: fg.linalg.inv(m),
        "det": lambda m: fg.linalg.det(m),
        "solve": lambda m: fg.linalg.solve(m, fg.tensor(b, dtype=fg.complex128)),
    }
    for name, f in funcs.items():
        with fwAD.dual_level():
            z = fwAD.make_dual(fg.tensor(a, dtype=fg.complex128), fg.tensor(t, dtype=fg.complex128))
            got = to_np(fwAD.unpack_dual(f(z)).tangent)
        plus = to_np(f(fg.tensor(a + h * t, dtype=fg.complex128)))
        minus = to_np(f(fg.tensor(a - h * t, dtype=fg.complex128)))
        np.testing.assert_allclose(got, (plus - minus) / (2 * h), rtol=1e-6, atol=1e-8, err_msg=name)


def test_adjoint_is_the_conjugate_transpose():
    a = crandn(2, 2, 3)
    t = fg.tensor(a, dtype=fg.complex128)
    want = np.conj(a.transpose(0, 2, 1))
    np.testing.assert_array_equal(to_np(t.mH), want)
    np.testing.assert_array_equal(to_np(fg.adjoint(t)), want)
    np.testing.assert_array_equal(to_np(t[0].H), want[0])
    assert fg.tensor(1 + 2j).H.item() == 1 - 2j
    # A real tensor's adjoint is its transposed view.
    r = fg.tensor(a.real)
    assert r.mH.data_ptr() == r.data_ptr()
    np.testing.assert_array_equal(to_np(r.mH), a.real.transpose(0, 2, 1))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")])
def test_complex_matrix_norms_match_numpy(ord):
    a = crandn(2, 3, 4)
    got = fg.linalg.matrix_norm(fg.tensor(a, dtype=fg.complex64), ord)
    assert got.dtype == fg.float32
    want = np.stack([np.linalg.norm(m, ord) for m in a])
    np.testing.assert_allclose(to_np(got), want, rtol=1e-5)
    got = fg.linalg.norm(fg.tensor(a[0], dtype=fg.complex128), ord, keepdim=True)
    assert got.dtype == fg.float64 and got.shape == (1, 1)
    np.testing.assert_allclose(to_np(got)[0, 0], np.linalg.norm(a[0], ord), rtol=1e-12)
