"""``ferrograd.fft`` against NumPy's ``numpy.fft`` (values, norm modes,
padding and trimming, dims, dtypes), float64 finite differences
(gradcheck and gradgradcheck, reverse and forward mode, batched
gradients), ``vmap`` against a loop, and torch's errors.

NumPy has no n-dimensional Hermitian transforms; their oracle is the
identity they are defined by: ``hfftn(x, norm=m)`` is ``irfftn(conj(x))``
with the forward and backward scalings swapped, ``ihfftn(x, norm=m)`` the
conjugate of ``rfftn(x)`` likewise.
"""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.timeout(120)

NORMS = [None, "backward", "forward", "ortho"]
SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
RNG = np.random.default_rng(0)


def real(*shape: int, dtype=np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def cplx(*shape: int, dtype=np.complex128) -> np.ndarray:
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def close(got: fg.Tensor, want: np.ndarray, single: bool = False) -> None:
    g = got.detach().numpy()
    assert g.shape == want.shape
    tol = 2e-4 if single else 1e-10
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))


# --- values against NumPy -------------------------------------------------

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 3, 8, 11])
def test_one_dimensional_transforms_match_numpy(name, norm, n):
    for x in ([real(5, 7)] if name in REAL_ONLY else [real(5, 7), cplx(5, 7)]):
        for dim in (-1, 0):
            got = getattr(fg.fft, name)(fg.tensor(x), n=n, dim=dim, norm=norm)
            want = getattr(np.fft, name)(x, n=n, axis=dim, norm=norm)
            close(got, want)


ND = {"fft2": "fft2", "ifft2": "ifft2", "fftn": "fftn", "ifftn": "ifftn", "rfft2": "rfft2",
      "irfft2": "irfft2", "rfftn": "rfftn", "irfftn": "irfftn"}  # fmt: skip


def hermitian_oracle(name: str, x: np.ndarray, s, axes, norm) -> np.ndarray:
    if name.startswith("ihfft"):
        return np.conj(np.fft.rfftn(x, s=s, axes=axes, norm=SWAP[norm]))
    return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=SWAP[norm])


C2R = {"irfft2", "irfftn", "hfft2", "hfftn"}


def numpy_sizes(name: str, x: np.ndarray, s, axes) -> list[int] | None:
    """torch's ``s`` as NumPy takes it: ``-1`` is the input's size, or for
    the last dim of a complex-to-real transform ``2 * (m - 1)``."""
    if s is None:
        return None
    sizes = []
    for i, (a, n) in enumerate(zip(axes, s, strict=True)):
        if n != -1:
            sizes.append(n)
        elif i == len(s) - 1 and name in C2R:
            sizes.append(2 * (x.shape[a] - 1))
        else:
            sizes.append(x.shape[a])
    return sizes


SIZES_AND_DIMS = [(None, None), ((4, 6), None), ((3, -1), (0, 2)), (None, (2, 0)), ((5,), (1,)),
                  ((6, 4, 7), None)]  # fmt: skip
ND_NAMES = [*ND, "hfft2", "ihfft2", "hfftn", "ihfftn"]
ND_CASES = [(name, s, dim) for name in ND_NAMES for s, dim in SIZES_AND_DIMS
            if not name.endswith("2") or ((s is None or len(s) == 2) and (dim is None or len(dim) == 2))]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(("name", "s", "dim"), ND_CASES)
def test_n_dimensional_transforms_match_numpy(name, norm, s, dim):
    two = name.endswith("2")
    inputs = [real(4, 5, 6)] if name in REAL_ONLY else [real(4, 5, 6), cplx(4, 5, 6)]
    for x in inputs:
        axes = dim if dim is not None else ((-2, -1) if two else None)
        if axes is None and s is not None:
            axes = tuple(range(3 - len(s), 3))
        kwargs = {} if dim is None else {"dim": dim}
        got = getattr(fg.fft, name)(fg.tensor(x), s=s, norm=norm, **kwargs)
        np_s = numpy_sizes(name, x, s, axes)
        if name in ND:
            want = getattr(np.fft, ND[name].replace("2", "n"))(x, s=np_s, axes=axes, norm=norm)
        else:
            want = hermitian_oracle(name, x, np_s, axes, norm)
        close(got, want)


def test_float32_input_gives_complex64_and_matches_numpy():
    x = real(6, 10, dtype=np.float32)
    y = fg.fft.fft(fg.tensor(x))
    assert y.dtype == fg.complex64
    close(y, np.fft.fft(x), single=True)
    r = fg.fft.irfft(fg.fft.rfft(fg.tensor(x)), n=10)
    assert r.dtype == fg.float32
    close(r, x, single=True)
    z = cplx(4, 9, dtype=np.complex64)
    close(fg.fft.ifftn(fg.tensor(z)), np.fft.ifftn(z), single=True)
    assert fg.fft.hfft(fg.tensor(z)).dtype == fg.float32


def test_integer_and_bool_inputs_promote_to_the_default_float_dtype():
    assert fg.fft.fft(fg.arange(4)).dtype == fg.complex64
    assert fg.fft.rfft(fg.tensor([True, False, True])).dtype == fg.complex64
    close(fg.fft.fft(fg.arange(4)), np.fft.fft(np.arange(4.0)), single=True)
    fg.set_default_dtype(fg.float64)
    try:
        assert fg.fft.rfft(fg.arange(4)).dtype == fg.complex128
        assert fg.fft.irfft(fg.arange(4)).dtype == fg.float64
    finally:
        fg.set_default_dtype(fg.float32)


def test_strided_and_large_inputs_match_numpy():
    # A transposed view, and sizes that split lanes over the thread pool.
    x = real(64, 1100)
    xt = fg.tensor(x).t()
    close(fg.fft.fft(xt, dim=0), np.fft.fft(x.T, axis=0))
    close(fg.fft.rfft(fg.tensor(x), dim=0), np.fft.rfft(x, axis=0))
    close(fg.fft.rfft2(fg.tensor(x)), np.fft.rfft2(x))
    z = cplx(40, 1024)
    close(fg.fft.ifft2(fg.tensor(z)[::2, 3:]), np.fft.ifft2(z[::2, 3:]))
    h = np.fft.rfft2(x)
    close(fg.fft.irfft2(fg.tensor(h), s=x.shape), x)


def test_sizes_with_small_prime_and_power_of_two_lengths_round_trip():
    for n in (1, 2, 3, 16, 17, 97, 128, 210):
        x = real(3, n)
        close(fg.fft.irfft(fg.fft.rfft(fg.tensor(x)), n=n), x)
        close(fg.fft.ifft(fg.fft.fft(fg.tensor(x))).real, x)


def test_empty_dims_leave_the_signal_as_complex():
    x = fg.tensor(real(3), dtype=fg.float32)
    y = fg.fft.fftn(x, dim=())
    assert y.dtype == fg.complex64 and np.allclose(y.numpy(), x.numpy())


def test_irfft_ignores_the_imaginary_parts_at_zero_and_nyquist():
    h = cplx(5)
    cut = h.copy()
    cut[0] = cut[0].real
    cut[4] = cut[4].real
    close(fg.fft.irfft(fg.tensor(h)), np.fft.irfft(cut))


def test_freqs_and_shifts_match_numpy():
    for n in (1, 4, 5, 8):
        for d in (1.0, 0.25):
            close(fg.fft.fftfreq(n, d=d, dtype=fg.float64), np.fft.fftfreq(n, d=d))
            close(fg.fft.rfftfreq(n, d=d, dtype=fg.float64), np.fft.rfftfreq(n, d=d))
    assert fg.fft.fftfreq(4).dtype == fg.float32
    assert fg.fft.fftfreq(3, requires_grad=True).requires_grad
    x = np.arange(30.0).reshape(5, 6)
    for dim in (None, 0, 1, (0, 1), -1):
        close(fg.fft.fftshift(fg.tensor(x), dim=dim), np.fft.fftshift(x, axes=dim))
        close(fg.fft.ifftshift(fg.tensor(x), dim=dim), np.fft.ifftshift(x, axes=dim))


def test_out_receives_the_result_and_must_have_the_right_kind():
    x = fg.tensor(real(8))
    out = fg.empty(8, dtype=fg.complex128)
    r = fg.fft.fft(x, out=out)
    assert r is out
    close(out, np.fft.fft(x.numpy()))
    back = fg.empty(8, dtype=fg.float64)
    fg.fft.irfft(fg.fft.rfft(x), n=8, out=back)
    close(back, x.numpy())
    with pytest.raises(RuntimeError, match="fft expects a complex output tensor, but got Float"):
        fg.fft.fft(x, out=fg.empty(8))
    with pytest.raises(RuntimeError, match="irfft expects a floating point output tensor, but got ComplexF"):
        fg.fft.irfft(x, out=fg.empty(8, dtype=fg.complex64))
    f = fg.empty(4, dtype=fg.float64)
    fg.fft.fftfreq(4, out=f)
    close(f, np.fft.fftfreq(4))


# --- autograd ---------------------------------------------------------------

def leaf(x: np.ndarray) -> fg.Tensor:
    return fg.tensor(x).requires_grad_(True)


GRAD_CASES = [
    ("fft", {"n": None}, False), ("fft", {"n": 7}, True), ("fft", {"n": 3, "norm": "ortho"}, False),
    ("ifft", {"dim": 0}, True), ("ifft", {"n": 8, "norm": "forward"}, False),
    ("rfft", {}, False), ("rfft", {"n": 8}, False), ("rfft", {"n": 4, "norm": "ortho"}, False),
    ("irfft", {}, True), ("irfft", {"n": 9}, True), ("irfft", {"n": 4, "norm": "forward"}, True),
    ("hfft", {}, True), ("hfft", {"n": 7, "norm": "ortho"}, True),
    ("ihfft", {}, False), ("ihfft", {"n": 9}, False),
    ("fft2", {}, True), ("ifft2", {"s": (3, 6)}, True), ("fftn", {"dim": (0,)}, False),
    ("rfft2", {}, False), ("rfftn", {"s": (2, 4)}, False),
    ("irfft2", {}, True), ("irfftn", {"s": (4, 5), "norm": "ortho"}, True),
    ("hfft2", {"s": (3, 4)}, True), ("ihfft2", {}, False), ("hfftn", {}, True),
    ("ihfftn", {"s": (5, 3)}, False),
]  # fmt: skip


@pytest.mark.parametrize(("name", "kwargs", "complex_in"), GRAD_CASES,
                         ids=[f"{n}-{k}-{'c' if c else 'r'}" for n, k, c in GRAD_CASES])  # fmt: skip
def test_gradients_match_finite_differences(name, kwargs, complex_in):
    x = leaf(cplx(4, 5) if complex_in else real(4, 5))
    fn = getattr(fg.fft, name)

    def f(t):
        return fn(t, **kwargs)

    assert gradcheck(f, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(f, (x,))


def test_nodes_carry_torchs_names():
    x = leaf(real(6))
    z = leaf(cplx(6))
    assert fg.fft.rfft(x).grad_fn.name() == "FftR2CBackward0"
    assert fg.fft.fft(x).grad_fn.name() == "FftR2CBackward0"
    assert fg.fft.fft(z).grad_fn.name() == "FftC2CBackward0"
    assert fg.fft.irfft(z).grad_fn.name() == "FftC2RBackward0"
    assert fg.fft.hfft(z).grad_fn.name() == "FftC2RBackward0"
    assert fg.fft.ihfft(x).grad_fn.name() == "ConjBackward0"


def test_real_loss_gradient_is_torchs_convention():
    # L = sum |fft(z)|^2 = n sum |z|^2 (Parseval), so dL/dz = 2 n z in
    # torch's convention (grad = dL/dx + i dL/dy).
    zn = cplx(8)
    z = leaf(zn)
    fg.fft.fft(z).abs().pow(2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * 8 * zn, rtol=1e-12)
    # rfft drops the negative frequencies: the gradient of the real part of
    # a single bin k is cos(2 pi jk / n).
    x = leaf(real(8))
    fg.fft.rfft(x)[3].real.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(2 * np.pi * 3 * np.arange(8) / 8), atol=1e-12)


def test_forward_mode_sends_the_tangent_through_the_same_transform():
    import ferrograd.autograd.forward_ad as fwAD

    x, t = real(3, 8), real(3, 8)
    with fwAD.dual_level():
        dual = fwAD.make_dual(fg.tensor(x), fg.tensor(t))
        out = fg.fft.rfft(dual, n=10, norm="ortho")
        close(fwAD.unpack_dual(out).tangent, np.fft.rfft(t, n=10, norm="ortho"))


# --- vmap ---------------------------------------------------------------------

VMAP_CASES = [
    (lambda t: fg.fft.fft(t, n=6), cplx), (lambda t: fg.fft.rfft(t, dim=0), real),
    (lambda t: fg.fft.irfft(t, n=8, norm="ortho"), cplx), (lambda t: fg.fft.fft2(t, s=(2, 3)), real),
    (lambda t: fg.fft.hfftn(t, dim=(0, 1)), cplx), (lambda t: fg.fft.ihfft2(t), real),
    (lambda t: fg.fft.fftshift(t, dim=0), real),
]  # fmt: skip


@pytest.mark.parametrize(("f", "make"), VMAP_CASES)
def test_vmap_equals_the_loop(f, make):
    xb = fg.tensor(make(3, 4, 5))
    got = fg.func.vmap(f)(xb)
    want = fg.stack([f(xb[i]) for i in range(3)])
    close(got, want.numpy())


def test_vmap_of_grad_equals_the_loop():
    w = fg.tensor(real(5))

    def loss(t):
        return fg.fft.irfft(fg.fft.rfft(t) * fg.fft.rfft(w), n=5).pow(2).sum()

    xb = fg.tensor(real(4, 5))
    got = fg.func.vmap(fg.func.grad(loss))(xb)
    want = fg.stack([fg.func.grad(loss)(xb[i]) for i in range(4)])
    close(got, want.numpy())


# --- errors ------------------------------------------------------------------

def test_errors_are_torchs():
    x = fg.tensor(real(4, 5))
    z = fg.tensor(cplx(3))
    cases = [
        (lambda: fg.fft.fft(x, n=0), RuntimeError, r"Invalid number of data points \(0\) specified"),
        (lambda: fg.fft.fft(x, n=-1), RuntimeError, r"Invalid number of data points \(-1\) specified"),
        (lambda: fg.fft.fft(x, norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
        (lambda: fg.fft.fft(x, dim=2), IndexError, r"expected to be in range of \[-2, 1\], but got 2"),
        (lambda: fg.fft.fftn(x, dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
        (lambda: fg.fft.fftn(x, s=(3,), dim=(0, 1)), RuntimeError,
         "When given, dim and shape arguments must have the same length"),
        (lambda: fg.fft.fftn(x, s=(3, 4, 5)), RuntimeError,
         "Got shape with 3 values but input tensor only has 2 dimensions."),
        (lambda: fg.fft.rfft(z), RuntimeError, "rfft expects a real input tensor, but got ComplexDouble"),
        (lambda: fg.fft.ihfft(z), RuntimeError, "ihfft expects a real input tensor, but got ComplexDouble"),
        (lambda: fg.fft.fft(x.half()), RuntimeError, "Unsupported dtype Half"),
        (lambda: fg.fft.fft(fg.tensor(1.0)), IndexError, "Dimension specified as -1 but tensor has no dim"),
        (lambda: fg.fft.irfft(fg.tensor(cplx(1))), RuntimeError, r"Invalid number of data points \(0\)"),
        (lambda: fg.fft.fft2(fg.tensor(real(3))), IndexError, "Dimension out of range"),
        (lambda: fg.fft.fft(fg.empty(0)), RuntimeError, r"Invalid number of data points \(0\)"),
        (lambda: fg.fft.fftshift(fg.arange(5), dim=3), IndexError, "Dimension out of range"),
        (lambda: fg.fft.fft([1.0, 2.0]), TypeError, "must be Tensor, not list"),
    ]  # fmt: skip
    for fn, kind, msg in cases:
        with pytest.raises(kind, match=msg):
            fn()


def test_primitives_check_their_arguments():
    from ferrograd import _core

    with pytest.raises(RuntimeError, match="_fft_c2c expects a complex input tensor, but got Float"):
        _core._fft_c2c(fg.ones(4), [0], 0, True)
    with pytest.raises(RuntimeError, match="_fft_r2c expects a floating point input tensor"):
        _core._fft_r2c(fg.ones(4, dtype=fg.complex64), [0], 0, True)
    with pytest.raises(RuntimeError, match="expected 3 elements"):
        _core._fft_c2r(fg.ones(4, dtype=fg.complex64), [0], 0, 4)
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        _core._fft_c2c(fg.ones(4, dtype=fg.complex64), [0], 3, True)
