"""Sliding windows and short-time Fourier transforms: ``Tensor.unfold`` (a
view of the windows), ``stft`` and ``istft`` (module functions and
``Tensor`` methods) and the window functions (``hann_window``,
``hamming_window``, ``blackman_window``, ``bartlett_window``,
``kaiser_window``).

``Tensor.unfold`` is an ``as_strided`` view of the tensor's own storage, so
writes through it reach the tensor and its gradient is ``as_strided``'s
(overlapping windows sum theirs). Under ``vmap`` the view is taken of the
physical tensor with the batch dimensions in front.

``stft`` frames the (padded) signal with ``unfold``, multiplies by the
window and applies :mod:`ferrograd.fft`; ``istft`` inverts each frame,
windows it, overlap-adds the frames with ``nn.functional.fold`` and divides
by the overlap-added squared window. Both are compositions of
differentiable ops, so reverse mode, forward mode, double backward and
``vmap`` go through them with no rule of their own.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import ferrograd as _fg

from ._batched import BatchedTensor, per_row, wrap
from ._core import Tensor
from ._ops_reduce_extra import _install, _wrap_dim
from .utils._docs import with_doc_pieces

__all__ = [
    "bartlett_window", "blackman_window", "hamming_window", "hann_window", "istft", "kaiser_window", "stft",
]  # fmt: skip


# ---------------------------------------------------------------------------
# Tensor.unfold


def _check_windows(n: int, dim: int, size: int, step: int) -> None:
    """torch's checks of ``unfold(dim, size, step)`` along a dimension of length ``n``."""
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")


def _windows(x: Tensor, dim: int, size: int, step: int) -> Tensor:
    """The windows of ``x`` along its (non-negative, checked) ``dim`` as an
    ``as_strided`` view of its storage: ``dim`` counts the windows, a new
    last dimension holds each window."""
    shape, strides = list(x.shape), list(x.stride())
    count = (shape[dim] - size) // step + 1
    new_shape = [*shape[:dim], count, *shape[dim + 1 :], size]
    new_strides = [*strides[:dim], strides[dim] * step, *strides[dim + 1 :], strides[dim]]
    return x.as_strided(new_shape, new_strides, x.storage_offset())


def _unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """unfold(dimension, size, step) -> Tensor

    A view of the windows of ``size`` consecutive elements along
    ``dimension``, ``step`` apart: ``dimension`` becomes the window count
    ``(n - size) // step + 1`` and a new last dimension of length ``size``
    holds each window. The view shares this tensor's storage (writes
    through it reach the tensor); where windows overlap, their gradients
    add up.

    Args:
        dimension (int): the dimension the windows slide along.
        size (int): the length of each window.
        step (int): the distance between window starts (positive).

    Example:
        >>> ferrograd.arange(5.0).unfold(0, 2, 1)
        tensor([[0., 1.],
                [1., 2.],
                [2., 3.],
                [3., 4.]])
    """
    d = _wrap_dim(dimension, self.dim())
    if self.dim() == 0:
        _check_windows(1, d, size, step)
        return self.unsqueeze(0).narrow(0, 0, size)
    _check_windows(self.shape[d], d, size, step)
    return _windows(self, d, size, step)


def _batched_unfold(self: BatchedTensor, dimension: int, size: int, step: int) -> Any:
    """``Tensor.unfold`` under ``vmap``: the view of the physical tensor,
    whose batch dimensions stay in front."""
    p, levels = self._p, self._lv
    nb = len(levels)
    logical = p.dim() - nb
    d = _wrap_dim(dimension, logical)
    if logical == 0:
        _check_windows(1, d, size, step)
        return wrap(p.unsqueeze(-1).narrow(-1, 0, size), levels)
    _check_windows(p.shape[nb + d], d, size, step)
    if any(st == 0 and n > 1 for n, st in zip(p.shape, p.stride(), strict=True)):
        # A physical tensor expanded over a batch (an unbatched primal whose
        # tangents are batched, say) aliases its rows: a strided view of its
        # storage could not tell their tangents apart. One row at a time.
        return per_row("unfold", _unfold, (self, dimension, size, step), {})
    return wrap(_windows(p, nb + d, size, step), levels)


# ---------------------------------------------------------------------------
# stft and istft


def _F() -> Any:
    from .nn import functional

    return functional


def _signal_sizes(name: str, n_fft: int, hop_length: int | None, win_length: int | None) -> tuple[int, int]:
    """``hop_length`` and ``win_length`` with their defaults (``n_fft // 4``
    and ``n_fft``), the window length checked."""
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


def _full_window(name: str, window: Tensor | None, win: int, n_fft: int, dtype: Any) -> Tensor | None:
    """The window padded with zeros on both sides to ``n_fft`` (``None`` for
    the rectangular window of length ``n_fft``, which changes nothing)."""
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(
            f"{name}: expected a 1D window tensor of size equal to win_length={win}, but got window with "
            f"size {list(window.shape)}"
        )
    if window is None:
        if win == n_fft:
            return None
        window = _fg.ones(win, dtype=dtype)
    left = (n_fft - win) // 2
    return _F().pad(window, (left, n_fft - win - left)) if win < n_fft else window


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
         normalized: bool = False, onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    r"""stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
    pad_mode='reflect', normalized=False, onesided=None, return_complex=None,
    align_to_window=None) -> Tensor

    The short-time Fourier transform: the discrete Fourier transform of
    windowed frames of ``n_fft`` samples, ``hop_length`` apart,
    ``X[w, m] = sum_k window[k] input[m * hop_length + k] exp(-2 pi i w k / n_fft)``.

    Returns a complex tensor of shape ``(B?, N, T)``: ``N`` frequencies
    (``n_fft // 2 + 1`` when ``onesided``, else ``n_fft``) by ``T`` frames
    (``1 + L // hop_length`` when ``center``, else
    ``1 + (L - n_fft) // hop_length``). With ``return_complex=False``
    (deprecated, warns) the real and imaginary parts form a last dimension
    of 2.

    Args:
        input (Tensor): the signal, ``(L,)`` or a batch ``(B, L)``, real or
            complex.
        n_fft (int): the length of each frame and of its Fourier transform.
        hop_length (int, optional): the distance between frame starts.
            Default: ``None`` (``n_fft // 4``).
        win_length (int, optional): the length of the window, at most
            ``n_fft``; the window is padded with zeros on both sides to
            ``n_fft``. Default: ``None`` (``n_fft``).
        window (Tensor, optional): the 1-D window, of length ``win_length``.
            Default: ``None`` (ones; warns, as torch does).
        center (bool): pad the input by ``n_fft // 2`` on both sides, so
            frame ``m`` is centred at ``m * hop_length``. Default: ``True``.
        pad_mode (str): the mode of that padding, as in
            :func:`ferrograd.nn.functional.pad`. Default: ``'reflect'``.
        normalized (bool): multiply the result by ``n_fft ** -0.5``.
            Default: ``False``.
        onesided (bool, optional): return only the ``n_fft // 2 + 1``
            non-negative frequencies. Default: ``None`` (``True`` for a real
            input and window).
        return_complex (bool, optional): return a complex tensor (required
            for real inputs). Default: ``None``.
        align_to_window (bool, optional): with ``center=False``, start each
            frame at its window's first sample rather than at the start of
            the padded window. Default: ``None`` (``False``).

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0, 4.0])
        >>> ferrograd.stft(x, 2, hop_length=2, window=ferrograd.ones(2), center=False, return_complex=True)
        tensor([[ 3.+0.j,  7.+0.j],
                [-1.+0.j, -1.+0.j]])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got a {input.dim()}D tensor")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values, got {input.dtype}")
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will further "
                "require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if center and align_to_window:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    onesided = not complex_in if onesided is None else bool(onesided)
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied, which is known to cause "
            "spectral leakage. Other windows such as ferrograd.hann_window are recommended. To suppress "
            "this warning and use a rectangular window, explicitly set `window=ferrograd.ones(n_fft)`.",
            UserWarning, stacklevel=2,
        )
    if not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated; use return_complex=True and "
            "ferrograd.view_as_real on the result for the old format.", UserWarning, stacklevel=2,
        )
    F = _F()
    x = input.unsqueeze(0) if input.dim() == 1 else input
    if center:
        half = n_fft // 2
        x = F.pad(x.unsqueeze(0), (half, half), mode=pad_mode).squeeze(0)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    hop, win = _signal_sizes("stft", n_fft, hop_length, win_length)
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    full = _full_window("stft", window, win, n_fft, input.real.dtype)
    if align_to_window and win < n_fft:
        left = (n_fft - win) // 2
        x = F.pad(x, (left, n_fft - win - left))
    frames = x.unfold(-1, n_fft, hop)
    if full is not None:
        frames = frames * full
    norm = "ortho" if normalized else "backward"
    spec = _fg.fft.rfft(frames, norm=norm) if onesided else _fg.fft.fft(frames, norm=norm)
    spec = spec.transpose(-1, -2)
    if input.dim() == 1:
        spec = spec.squeeze(0)
    return spec if return_complex else _fg.view_as_real(spec.contiguous())


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False,
          onesided: bool | None = None, length: int | None = None, return_complex: bool = False) -> Tensor:
    r"""istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
    normalized=False, onesided=None, length=None, return_complex=False) -> Tensor

    The inverse of :func:`stft`: each frame's inverse Fourier transform,
    multiplied by the window, overlap-added and divided by the
    overlap-added squared window. With the ``stft`` arguments,
    ``istft(stft(x))`` is ``x`` wherever the squared windows add up to more
    than ``1e-11`` (the NOLA condition, checked over the output).

    Args:
        input (Tensor): a complex spectrum ``(N, T)`` or ``(B, N, T)`` as
            :func:`stft` returns it.
        n_fft (int): the frame length of the transform.
        hop_length (int, optional): the distance between frame starts, at
            most ``win_length``. Default: ``None`` (``n_fft // 4``).
        win_length (int, optional): the length of the window. Default:
            ``None`` (``n_fft``).
        window (Tensor, optional): the window ``stft`` used. Default:
            ``None`` (ones; warns).
        center (bool): the signal was padded by ``n_fft // 2`` on both sides
            (the padding is cut off). Default: ``True``.
        normalized (bool): the spectrum was normalized (it is multiplied by
            ``n_fft ** 0.5``). Default: ``False``.
        onesided (bool, optional): the input holds the ``n_fft // 2 + 1``
            non-negative frequencies only. Default: ``None`` (when the
            input does not have ``n_fft`` frequencies).
        length (int, optional): the length of the output: trimmed, or
            padded with zeros at the end. Default: ``None`` (all the samples
            the frames cover, less the centring padding).
        return_complex (bool): return a complex signal (needs a two-sided
            input); otherwise only the non-negative frequencies are read
            and the signal is real. Default: ``False``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> w = ferrograd.hann_window(4)
        >>> spec = ferrograd.stft(x, 4, hop_length=1, window=w, return_complex=True)
        >>> ferrograd.istft(spec, 4, hop_length=1, window=w)
        tensor([1., 2., 3., 4., 5.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not input.is_complex():
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a 2D or 3D complex tensor, but got a {input.dim()}D tensor")
    hop, win = _signal_sizes("istft", n_fft, hop_length, win_length)
    if not 0 < hop <= win:
        raise RuntimeError(f"istft: expected 0 < hop_length <= win_length, but got hop_length={hop}")
    n_freq, n_frames = input.shape[-2], input.shape[-1]
    onesided = n_freq != n_fft if onesided is None else bool(onesided)
    want = n_fft // 2 + 1 if onesided else n_fft
    if n_freq != want:
        raise RuntimeError(
            f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
            f"{'n_fft / 2 + 1 when onesided=True' if onesided else 'n_fft when onesided=False'}, "
            f"but got {n_freq}"
        )
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window.is_complex():
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    if window is None:
        warnings.warn(
            "A window was not provided. A rectangular window will be applied. Please provide the same "
            "window used by stft to make the inversion lossless. To suppress this warning and use a "
            "rectangular window, explicitly set `window=ferrograd.ones(n_fft)`.", UserWarning, stacklevel=2,
        )
    if n_frames == 0:
        raise RuntimeError("istft: the input has no frames")
    F = _F()
    full = _full_window("istft", window, win, n_fft, input.real.dtype)
    if full is None:
        full = _fg.ones(n_fft, dtype=input.real.dtype)
    norm = "ortho" if normalized else "backward"
    spec = (input.unsqueeze(0) if input.dim() == 2 else input).transpose(-1, -2)
    if return_complex:
        frames = _fg.fft.ifft(spec, n_fft, norm=norm)
    else:
        frames = _fg.fft.irfft(spec.narrow(-1, 0, n_fft // 2 + 1), n_fft, norm=norm)
    frames = frames * full
    total = n_fft + hop * (n_frames - 1)
    fold = {"output_size": (1, total), "kernel_size": (1, n_fft), "stride": (1, hop)}
    y = F.fold(frames.transpose(1, 2), **fold).reshape(frames.shape[0], total)
    envelope = F.fold((full * full).reshape(1, n_fft, 1).expand(1, n_fft, n_frames), **fold).reshape(total)
    start = n_fft // 2 if center else 0
    if length is None:
        end = total - start
    else:
        if length < 0:
            raise RuntimeError(f"istft: expected a non-negative length, but got {length}")
        end = min(start + int(length), total)
    y, envelope = y.narrow(-1, start, max(end - start, 0)), envelope.narrow(0, start, max(end - start, 0))
    if envelope.numel() and bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(
            "istft: window overlap add min below 1e-11: the squared windows do not add up to a positive "
            f"value at every output sample (the NOLA condition) for n_fft={n_fft}, hop_length={hop}"
        )
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        y = F.pad(y, (0, int(length) - y.shape[-1]))
    return y.squeeze(0) if input.dim() == 2 else y


# ---------------------------------------------------------------------------
# Window functions


def _window(name: str, window_length: int, periodic: bool, dtype: Any, device: Any, requires_grad: bool,
            values: Callable[[Tensor, int], Tensor]) -> Tensor:
    """A window of ``window_length`` samples: ``values(k, N)`` at the sample
    indices ``k`` (float64) with ``N`` one less than the length of the
    symmetric window (``window_length`` itself when ``periodic``, which
    drops the last sample of the window one longer), in ``dtype``."""
    window_length = int(window_length)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dtype = _fg.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        out = _fg.ones(window_length, dtype=dtype, device=device)
    else:
        k = _fg.arange(window_length, dtype=_fg.float64, device=device)
        out = values(k, window_length if periodic else window_length - 1).to(dtype)
    return out.requires_grad_(requires_grad)


# The arguments every window function's docstring lists.
_WINDOW_DOCS = {
    "window_length_args": """window_length (int): the number of samples.
periodic (bool): the window of one more sample, less its last. Default:
    ``True``.""",
    "window_factory_args": """dtype (ferrograd.dtype, optional): a floating dtype. Default: the default
    dtype.
layout: accepted for compatibility (strided only).
device: ``'cpu'`` or ``None``.
requires_grad (bool): record operations on the result. Default: ``False``.""",
}


def _cosine_sum(k: Tensor, n: int, coefficients: tuple[float, ...]) -> Tensor:
    """``sum_j (-1)^j a_j cos(2 pi j k / n)``: the generalized cosine windows."""
    out = _fg.full(k.shape, coefficients[0], dtype=k.dtype)
    for j, a in enumerate(coefficients[1:], start=1):
        out = out + (-1) ** j * a * (k * (2 * math.pi * j / n)).cos()
    return out


@with_doc_pieces(_WINDOW_DOCS)
def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    """hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
    requires_grad=False) -> Tensor

    The Hann window ``0.5 - 0.5 cos(2 pi k / N)``, ``N = window_length - 1``
    (``window_length`` when ``periodic``, the form :func:`stft` wants).

    Args:
        {window_length_args}
        {window_factory_args}

    Example:
        >>> ferrograd.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: _cosine_sum(k, n, (0.5, 0.5)))


@with_doc_pieces(_WINDOW_DOCS)
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, layout: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
    """hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
    layout=None, device=None, requires_grad=False) -> Tensor

    The Hamming window ``alpha - beta cos(2 pi k / N)``, ``N = window_length - 1``
    (``window_length`` when ``periodic``).

    Args:
        {window_length_args}
        alpha (float): the constant term. Default: ``0.54``.
        beta (float): the cosine's coefficient. Default: ``0.46``.
        {window_factory_args}

    Example:
        >>> ferrograd.hamming_window(3, periodic=False)
        tensor([0.0800, 1.0000, 0.0800])
    """
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: _cosine_sum(k, n, (alpha, beta)))


@with_doc_pieces(_WINDOW_DOCS)
def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
    requires_grad=False) -> Tensor

    The Blackman window ``0.42 - 0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N)``,
    ``N = window_length - 1`` (``window_length`` when ``periodic``).

    Args:
        {window_length_args}
        {window_factory_args}

    Example:
        >>> ferrograd.blackman_window(5, periodic=False)[1:4]
        tensor([0.3400, 1.0000, 0.3400])
    """
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: _cosine_sum(k, n, (0.42, 0.5, 0.08)))


@with_doc_pieces(_WINDOW_DOCS)
def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
    requires_grad=False) -> Tensor

    The triangular Bartlett window ``1 - |2 k / N - 1|``, ``N = window_length - 1``
    (``window_length`` when ``periodic``).

    Args:
        {window_length_args}
        {window_factory_args}

    Example:
        >>> ferrograd.bartlett_window(5, periodic=False)
        tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1.0 - (k * (2.0 / n) - 1.0).abs())


@with_doc_pieces(_WINDOW_DOCS)
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
    device=None, requires_grad=False) -> Tensor

    The Kaiser window ``I0(beta sqrt(1 - ((k - N/2) / (N/2))^2)) / I0(beta)``,
    ``N = window_length - 1`` (``window_length`` when ``periodic``), with
    ``I0`` the modified Bessel function :func:`ferrograd.i0`.

    Args:
        {window_length_args}
        beta (float): the shape parameter (larger is narrower). Default:
            ``12.0``.
        {window_factory_args}

    Example:
        >>> ferrograd.kaiser_window(3, periodic=False, beta=0.0)
        tensor([1., 1., 1.])
    """
    def values(k: Tensor, n: int) -> Tensor:
        r = (k - n / 2) / (n / 2)
        scale = _fg.i0(_fg.tensor(float(beta), dtype=_fg.float64))
        return _fg.i0(beta * (1.0 - r * r).clamp_min(0.0).sqrt()) / scale

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, values)


def _stft_method(self: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
                 window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
                 normalized: bool = False, onesided: bool | None = None, return_complex: bool | None = None,
                 align_to_window: bool | None = None) -> Tensor:
    """See :func:`ferrograd.stft`."""
    return _fg.stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                    return_complex, align_to_window)


def _istft_method(self: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
                  window: Tensor | None = None, center: bool = True, normalized: bool = False,
                  onesided: bool | None = None, length: int | None = None,
                  return_complex: bool = False) -> Tensor:
    """See :func:`ferrograd.istft`."""
    return _fg.istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                     return_complex)


for _name, _method in (("unfold", _unfold), ("stft", _stft_method), ("istft", _istft_method)):
    _method.__name__ = _method.__qualname__ = _name
    _install(_name, _method)
BatchedTensor.unfold = _batched_unfold  # type: ignore[attr-defined]
del _name, _method
