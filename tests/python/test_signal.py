"""``Tensor.unfold`` (a view), ``stft``/``istft`` (functions and methods) and
the window functions.

Oracles: NumPy (``sliding_window_view``, ``np.fft`` on framed and windowed
signals, overlap-add in ``nn_reference``, ``np.hanning`` and its
siblings), the round trip ``istft(stft(x)) == x``, float64 central
differences, ``vmap`` against a loop, and torch's errors.
"""

from __future__ import annotations

import warnings

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import vmap
from nn_reference import istft as istft_np
from nn_reference import stft as stft_np

pytestmark = [pytest.mark.timeout(120), pytest.mark.filterwarnings("ignore:A window was not provided")]

RNG = np.random.default_rng(2)


# ---------------------------------------------------------------------------
# Tensor.unfold


@pytest.mark.parametrize(("shape", "dim", "size", "step"), [
    ((7,), 0, 3, 2), ((7,), 0, 7, 1), ((7,), 0, 0, 3), ((3, 6), 1, 2, 1), ((3, 6), 0, 2, 1),
    ((2, 5, 4), -2, 3, 2), ((2, 5, 4), 2, 4, 3),
])  # fmt: skip
def test_unfold_values_are_numpys_sliding_windows(shape, dim, size, step):
    a = RNG.standard_normal(shape)
    got = fg.tensor(a).unfold(dim, size, step)
    dim %= len(shape)
    want = np.lib.stride_tricks.sliding_window_view(a, size, axis=dim)  # window last, as unfold's
    want = want.take(np.arange(0, want.shape[dim], step), axis=dim)
    np.testing.assert_array_equal(got.numpy(), want)


def test_unfold_is_a_view_of_a_strided_input():
    base = fg.arange(24.0).reshape(4, 6)
    t = base.t()  # non-contiguous
    u = t.unfold(1, 2, 2)  # windows of the rows of t, without overlap
    np.testing.assert_array_equal(u.numpy(), np.arange(24.0).reshape(4, 6).T.reshape(6, 2, 2))
    assert u.data_ptr() == base.data_ptr() and u._is_view()
    u[1, 0, 1] = -1.0  # t[1, 1] is base[1, 1]
    assert float(base[1, 1]) == -1.0
    s = fg.tensor(3.0).unfold(0, 1, 1)
    assert s.shape == (1,) and float(s) == 3.0


def test_unfold_gradient_sums_over_overlapping_windows():
    x = fg.tensor(RNG.standard_normal(6), requires_grad=True)
    x.unfold(0, 3, 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 3, 3, 2, 1])
    m = fg.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    assert gradcheck(lambda a: a.t().unfold(0, 2, 2) * 2, (m,), check_forward_ad=True)
    assert gradgradcheck(lambda a: a.unfold(1, 3, 1).square(), (m,))


def test_unfold_under_vmap_equals_a_loop():
    xs = fg.tensor(RNG.standard_normal((3, 4, 5)))
    for in_dim in (0, 1, 2):
        got = vmap(lambda t: t.unfold(-1, 2, 1), in_dims=in_dim)(xs)
        rows = [r.unfold(-1, 2, 1) for r in xs.movedim(in_dim, 0)]
        np.testing.assert_array_equal(got.numpy(), fg.stack(rows).numpy())
    scalar = vmap(lambda t: t.unfold(0, 1, 1))(fg.arange(3.0))
    assert scalar.shape == (3, 1)


@pytest.mark.parametrize(("args", "error", "match"), [
    ((0, 8, 1), RuntimeError, "maximum size for tensor at dimension 0 is 7 but size is 8"),
    ((0, 2, 0), RuntimeError, "step is 0 but must be > 0"),
    ((0, -1, 1), RuntimeError, "size is -1 but must be >= 0"),
    ((1, 2, 1), IndexError, "Dimension out of range"),
])  # fmt: skip
def test_unfold_errors(args, error, match):
    with pytest.raises(error, match=match):
        fg.arange(7.0).unfold(*args)


# ---------------------------------------------------------------------------
# Window functions


@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [False, True])
def test_windows_equal_numpys(length, periodic):
    def np_window(fn, *args):
        # periodic: the symmetric window one longer, less its last sample.
        return fn(length + 1, *args)[:-1] if periodic and length > 1 else fn(length, *args)

    kw = {"periodic": periodic, "dtype": fg.float64}
    cases = [
        (fg.hann_window(length, **kw), np_window(np.hanning)),
        (fg.hamming_window(length, **kw), np_window(np.hamming)),
        (fg.blackman_window(length, **kw), np_window(np.blackman)),
        (fg.bartlett_window(length, **kw), np_window(np.bartlett)),
        (fg.kaiser_window(length, beta=5.0, **kw), np_window(np.kaiser, 5.0)),
    ]
    for got, want in cases:
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_window_arguments():
    w = fg.hamming_window(6, alpha=0.5, beta=0.5, requires_grad=True)
    assert w.dtype == fg.float32 and w.requires_grad
    np.testing.assert_allclose(w.detach().numpy(), fg.hann_window(6).numpy(), atol=1e-7)
    with pytest.raises(RuntimeError, match="non-negative window_length"):
        fg.hann_window(-1)
    with pytest.raises(RuntimeError, match="floating point dtypes"):
        fg.kaiser_window(4, dtype=fg.int64)
    with pytest.raises(RuntimeError, match="CPU"):
        fg.bartlett_window(4, device="cuda")


# ---------------------------------------------------------------------------
# stft


STFT_CASES = [
    {"n_fft": 4, "hop": 1, "win": 4},
    {"n_fft": 8, "hop": 3, "win": 5},
    {"n_fft": 6, "hop": 2, "win": 6, "center": False},
    {"n_fft": 5, "hop": 2, "win": 5, "pad_mode": "constant"},
    {"n_fft": 6, "hop": 2, "win": 6, "pad_mode": "replicate"},
    {"n_fft": 6, "hop": 4, "win": 6, "pad_mode": "circular"},
    {"n_fft": 4, "hop": 2, "win": 3, "onesided": False},
]


@pytest.mark.parametrize("case", STFT_CASES)
@pytest.mark.parametrize("batched", [False, True])
def test_stft_equals_the_fft_of_windowed_frames(case, batched):
    x = RNG.standard_normal((2, 19) if batched else (19,))
    window = np.hanning(case["win"] + 2)[1:-1]  # no zero samples
    center, pad_mode = case.get("center", True), case.get("pad_mode", "reflect")
    onesided = case.get("onesided", True)
    got = fg.stft(fg.tensor(x), case["n_fft"], case["hop"], case["win"], fg.tensor(window), center, pad_mode,
                  onesided=onesided, return_complex=True)
    want = stft_np(x, case["n_fft"], case["hop"], window, center, pad_mode, onesided)
    assert got.dtype == fg.complex128 and tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, atol=1e-12)


def test_stft_defaults_normalization_and_real_output():
    x = RNG.standard_normal(16)
    with pytest.warns(UserWarning, match="window was not provided"):
        plain = fg.stft(fg.tensor(x), 8, return_complex=True)  # hop 2, rectangular window
    want = stft_np(x, 8, 2, np.ones(8))
    np.testing.assert_allclose(plain.numpy(), want, atol=1e-12)
    norm = fg.tensor(x).stft(8, window=fg.ones(8, dtype=fg.float64), normalized=True, return_complex=True)
    np.testing.assert_allclose(norm.numpy(), want / np.sqrt(8), atol=1e-12)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        pairs = fg.stft(fg.tensor(x), 8, window=fg.ones(8, dtype=fg.float64), return_complex=False)
    np.testing.assert_allclose(pairs.numpy(), np.stack([want.real, want.imag], -1), atol=1e-12)


def test_stft_of_a_complex_signal_is_two_sided():
    x = RNG.standard_normal(12) + 1j * RNG.standard_normal(12)
    window = np.hanning(6)[1:-1]
    got = fg.stft(fg.tensor(x), 4, 2, window=fg.tensor(window))
    np.testing.assert_allclose(got.numpy(), stft_np(x, 4, 2, window, onesided=False), atol=1e-12)


def test_stft_align_to_window_starts_frames_at_the_window():
    x = RNG.standard_normal(12)
    w = np.array([1.0, 2.0])
    got = fg.stft(fg.tensor(x), 4, 2, 2, fg.tensor(w), center=False, align_to_window=True,
                  return_complex=True)
    # The window sits at offset 1 of each 4-sample frame; the frames start one sample early.
    padded = np.concatenate([[0.0], x, [0.0]])
    np.testing.assert_allclose(got.numpy(), stft_np(padded, 4, 2, w, center=False), atol=1e-12)


def test_stft_gradients_and_vmap():
    x = fg.tensor(RNG.standard_normal(10), requires_grad=True)
    w = fg.tensor(np.hanning(6)[1:-1], requires_grad=True)

    def f(a, b):
        return fg.stft(a, 4, 2, window=b, return_complex=True)

    assert gradcheck(f, (x, w), check_forward_ad=True)
    assert gradgradcheck(f, (x, w))
    xs = fg.tensor(RNG.standard_normal((3, 10)))
    wd = w.detach()
    np.testing.assert_allclose(vmap(lambda a: f(a, wd))(xs).numpy(), f(xs, wd).numpy(), atol=1e-12)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_fft": 40}, "Padding size should be less than"),
    ({"n_fft": 30, "center": False}, "expected 0 < n_fft <= 16"),
    ({"n_fft": 4, "hop_length": 0}, "hop_length > 0"),
    ({"n_fft": 4, "win_length": 5}, "0 < win_length <= n_fft"),
    ({"n_fft": 4, "window": fg.ones(3)}, "window tensor of size equal to win_length=4"),
    ({"n_fft": 4, "align_to_window": True}, "align_to_window should only be set when center = false"),
    ({"n_fft": 4, "return_complex": None}, "requires the return_complex parameter"),
    ({"n_fft": 4, "onesided": True, "window": fg.ones(4, dtype=fg.complex64)}, "Cannot have onesided"),
])  # fmt: skip
def test_stft_errors(kwargs, match):
    kwargs.setdefault("return_complex", True)
    with pytest.raises(RuntimeError, match=match):
        fg.stft(fg.zeros(16), **kwargs)


def test_stft_refuses_bad_inputs():
    with pytest.raises(NotImplementedError, match="padding mode"):
        fg.stft(fg.zeros(16), 4, pad_mode="bogus", return_complex=True)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        fg.stft(fg.zeros(2, 2, 8), 4, return_complex=True)
    with pytest.raises(RuntimeError, match="floating point or complex"):
        fg.stft(fg.arange(8), 4, return_complex=True)
    with pytest.raises(TypeError):
        fg.stft([1.0, 2.0], 4, return_complex=True)


# ---------------------------------------------------------------------------
# istft


@pytest.mark.parametrize(("n_fft", "hop", "win", "center"), [
    (4, 1, 4, True), (8, 2, 8, True), (8, 2, 6, True), (6, 3, 6, True), (6, 2, 6, False),
])  # fmt: skip
@pytest.mark.parametrize("batched", [False, True])
def test_istft_inverts_stft(n_fft, hop, win, center, batched):
    x = RNG.standard_normal((3, 20) if batched else (20,))
    window = fg.tensor(np.hanning(win + 2)[1:-1])
    spec = fg.stft(fg.tensor(x), n_fft, hop, win, window, center, return_complex=True)
    length = 20 if center else spec.shape[-1] * hop + n_fft - hop
    y = fg.istft(spec, n_fft, hop, win, window, center, length=length)
    np.testing.assert_allclose(y.numpy()[..., : min(length, 20)], x[..., : min(length, 20)], atol=1e-12)
    two_sided = fg.stft(fg.tensor(x), n_fft, hop, win, window, center, onesided=False, return_complex=True)
    z = two_sided.istft(n_fft, hop, win, window, center, length=length, return_complex=True)
    assert z.is_complex()
    np.testing.assert_allclose(z.numpy()[..., : min(length, 20)], x[..., : min(length, 20)], atol=1e-12)


def test_istft_of_a_modified_spectrum_equals_the_overlap_add():
    x = RNG.standard_normal((2, 17))
    window = np.hanning(8)[1:-1]
    spec = stft_np(x, 6, 2, window) * (1.0 + 0.3 * RNG.standard_normal((4, 9)))
    for length in (None, 10, 17, 30):
        got = fg.istft(fg.tensor(spec), 6, 2, window=fg.tensor(window), length=length)
        want = istft_np(spec, 6, 2, window, length=length)
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
    normalized = fg.istft(fg.tensor(spec), 6, 2, window=fg.tensor(window), normalized=True)
    np.testing.assert_allclose(normalized.numpy(), istft_np(spec, 6, 2, window) * np.sqrt(6), atol=1e-12)


def test_istft_gradients_and_vmap():
    spec = fg.tensor(stft_np(RNG.standard_normal(12), 4, 1, np.hanning(6)[1:-1]), requires_grad=True)
    window = fg.tensor(np.hanning(6)[1:-1], requires_grad=True)

    def f(s, w):
        return fg.istft(s, 4, 1, window=w, length=12)

    assert gradcheck(f, (spec, window), check_forward_ad=True)
    assert gradgradcheck(f, (spec, window))
    specs = fg.stack([spec.detach(), 2 * spec.detach()])
    wd = window.detach()
    np.testing.assert_allclose(vmap(lambda s: f(s, wd))(specs).numpy(), f(specs, wd).numpy(), atol=1e-12)


def test_istft_errors():
    spec = fg.stft(fg.zeros(12), 4, 1, window=fg.ones(4), return_complex=True)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        fg.istft(spec.real, 4, 1)
    with pytest.raises(RuntimeError, match="n_fft / 2 \\+ 1 when onesided=True"):
        fg.istft(spec, 6, 1)
    with pytest.raises(RuntimeError, match="0 < hop_length <= win_length"):
        fg.istft(spec, 4, 5)
    with pytest.raises(RuntimeError, match="Cannot have onesided output"):
        fg.istft(spec, 4, 1, return_complex=True)
    with pytest.raises(RuntimeError, match="NOLA"):
        fg.istft(spec, 4, 1, window=fg.hann_window(4), center=False)  # the first sample's window is 0
    with pytest.raises(RuntimeError, match="2D or 3D"):
        fg.istft(spec[0], 4, 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fg.istft(spec, 4, 1)
    assert any("window was not provided" in str(w.message) for w in caught)
