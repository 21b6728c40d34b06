"""The docstrings of ``ferrograd.fft``'s functions, built from one
description per argument so that the 22 functions say the same thing
the same way."""

from __future__ import annotations

_NORM = (
    'norm (str, optional): the scaling, ``"backward"`` (the default, same as ``None``), '
    '``"forward"`` or ``"ortho"``; {which}.'
)
_FORWARD_NORM = _NORM.format(which='``"backward"`` leaves this forward transform unscaled, '
                             '``"forward"`` divides it by ``n``, ``"ortho"`` by ``sqrt(n)``')
_INVERSE_NORM = _NORM.format(which='``"backward"`` divides this inverse transform by ``n``, '
                             '``"forward"`` leaves it unscaled, ``"ortho"`` divides it by ``sqrt(n)``')
_OUT = "out (Tensor, optional): the output tensor."


def _doc(signature: str, summary: str, args: list[str], example: str) -> str:
    lines = "\n".join("    " + a for a in args)
    ex = "\n".join("    " + line for line in example.strip("\n").splitlines())
    return f"{signature}\n\n{summary}\n\nArgs:\n{lines}\n\nExample:\n{ex}\n"


def _one(name: str, summary: str, input_kind: str, n_means: str, forward: bool, example: str) -> str:
    return _doc(
        f"{name}(input, n=None, dim=-1, norm=None, *, out=None) -> Tensor",
        summary,
        [
            f"input (Tensor): {input_kind}.",
            f"n (int, optional): {n_means}",
            "dim (int, optional): the dim to transform (default: the last).",
            _FORWARD_NORM if forward else _INVERSE_NORM,
            _OUT,
        ],
        example,
    )


def _many(name: str, summary: str, input_kind: str, s_means: str, dims: str, forward: bool,
          example: str) -> str:  # fmt: skip
    default = "(-2, -1)" if dims == "2" else "None"
    two = "dim (Tuple[int], optional): the dims to transform (default: the last two)."
    any_dims = ("dim (int or Tuple[int], optional): the dims to transform (default: all of them, or the "
                "last ``len(s)`` when ``s`` is given).")  # fmt: skip
    dim_doc = two if dims == "2" else any_dims
    return _doc(
        f"{name}(input, s=None, dim={default}, norm=None, *, out=None) -> Tensor",
        summary,
        [f"input (Tensor): {input_kind}.", f"s (Tuple[int], optional): {s_means}", dim_doc,
         _FORWARD_NORM if forward else _INVERSE_NORM, _OUT],
        example,
    )


_PAD = "the signal length: the input is trimmed or zero-padded to it along ``dim`` (default: its size there)."
_PAD_N = ("the signal size in each transformed dim: the input is trimmed or zero-padded to it (``-1``: "
          "keep the input's size; default: the input's sizes).")  # fmt: skip
_HALF_OUT = ("the output signal length along ``dim``; the input is trimmed or zero-padded to ``n // 2 + 1`` "
             "values there (default: ``2 * (m - 1)`` for ``m`` input values).")  # fmt: skip
_HALF_OUT_N = ("the output signal size in each transformed dim; the input is trimmed or zero-padded to "
               "``s[-1] // 2 + 1`` values along the last of them, and to ``s[i]`` along the others (``-1`` "
               "or the default: the input's sizes, and ``2 * (m - 1)`` for the last).")  # fmt: skip
_ANY = "the signal (real or complex; integers are promoted to the default float dtype)"
_REAL = "a real signal (integers are promoted to the default float dtype)"
_HALF = "the non-negative frequencies of a Hermitian-symmetric signal (a real one is taken as complex)"
_FOUR = "x = ferrograd.tensor([1.0, 2.0, 3.0, 4.0])"
_GRID = "x = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])"

DOCS = {
    "fft": _one("fft", "The one-dimensional discrete Fourier transform of ``input``: ``X[k] = sum_j x[j] "
                "exp(-2 pi i jk / n)``. A real input gives the full (complex) spectrum.\n\n"
                "Differentiable (reverse and forward mode, any order).", _ANY, _PAD, True, f"""
>>> {_FOUR}
>>> ferrograd.fft.fft(x)
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
"""),
    "ifft": _one("ifft", "The one-dimensional inverse discrete Fourier transform: ``x[j] = (1/n) sum_k "
                 "X[k] exp(2 pi i jk / n)``, the inverse of :func:`fft`.", _ANY, _PAD, False, f"""
>>> {_FOUR}
>>> ferrograd.fft.ifft(ferrograd.fft.fft(x)).real
tensor([1., 2., 3., 4.])
"""),
    "fft2": _many("fft2", "The two-dimensional discrete Fourier transform: :func:`fftn` over the last two "
                  "dims.", _ANY, _PAD_N, "2", True, f"""
>>> {_GRID}
>>> ferrograd.fft.fft2(x)
tensor([[10.+0.j, -2.+0.j],
        [-4.+0.j,  0.+0.j]])
"""),
    "ifft2": _many("ifft2", "The two-dimensional inverse discrete Fourier transform: :func:`ifftn` over the "
                   "last two dims.", _ANY, _PAD_N, "2", False, f"""
>>> {_GRID}
>>> ferrograd.fft.ifft2(ferrograd.fft.fft2(x)).real
tensor([[1., 2.],
        [3., 4.]])
"""),
    "fftn": _many("fftn", "The N-dimensional discrete Fourier transform over ``dim``: the one-dimensional "
                  "transform along each of them in turn.", _ANY, _PAD_N, "n", True, f"""
>>> {_GRID}
>>> ferrograd.fft.fftn(x, dim=0)
tensor([[ 4.+0.j,  6.+0.j],
        [-2.+0.j, -2.+0.j]])
"""),
    "ifftn": _many("ifftn", "The N-dimensional inverse discrete Fourier transform over ``dim``, the inverse "
                   "of :func:`fftn`.", _ANY, _PAD_N, "n", False, f"""
>>> {_GRID}
>>> ferrograd.fft.ifftn(x, dim=0).real
tensor([[ 2.,  3.],
        [-1., -1.]])
"""),
    "rfft": _one("rfft", "The discrete Fourier transform of a real signal, keeping the ``n // 2 + 1`` "
                 "non-negative frequencies (the others are their conjugates).", _REAL, _PAD, True, f"""
>>> {_FOUR}
>>> ferrograd.fft.rfft(x)
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""),
    "irfft": _one("irfft", "The inverse of :func:`rfft`: the real signal of ``n`` points whose "
                  "non-negative frequencies ``input`` holds. The imaginary parts at frequency 0 (and "
                  "``n / 2`` for even ``n``) are ignored.", _HALF, _HALF_OUT, False, f"""
>>> {_FOUR}
>>> ferrograd.fft.irfft(ferrograd.fft.rfft(x), n=4)
tensor([1., 2., 3., 4.])
"""),
    "rfft2": _many("rfft2", "The two-dimensional transform of a real signal: :func:`rfftn` over the last two "
                   "dims.", _REAL, _PAD_N, "2", True, f"""
>>> {_GRID}
>>> ferrograd.fft.rfft2(x).abs()
tensor([[10.,  2.],
        [ 4.,  0.]])
"""),
    "irfft2": _many("irfft2", "The inverse of :func:`rfft2`: :func:`irfftn` over the last two dims.", _HALF,
                    _HALF_OUT_N, "2", False, f"""
>>> {_GRID}
>>> ferrograd.fft.irfft2(ferrograd.fft.rfft2(x), s=(2, 2))
tensor([[1., 2.],
        [3., 4.]])
"""),
    "rfftn": _many("rfftn", "The N-dimensional transform of a real signal over ``dim``: the last of them "
                   "keeps its ``n // 2 + 1`` non-negative frequencies.", _REAL, _PAD_N, "n", True, f"""
>>> {_GRID}
>>> ferrograd.fft.rfftn(x, dim=0).abs()
tensor([[4., 6.],
        [2., 2.]])
"""),
    "irfftn": _many("irfftn", "The inverse of :func:`rfftn`: the real signal whose half spectrum (along the "
                    "last of ``dim``) ``input`` holds.", _HALF, _HALF_OUT_N, "n", False, f"""
>>> {_GRID}
>>> ferrograd.fft.irfftn(ferrograd.fft.rfftn(x), s=(2, 2))
tensor([[1., 2.],
        [3., 4.]])
"""),
    "hfft": _one("hfft", "The discrete Fourier transform of a Hermitian-symmetric signal given by its "
                 "non-negative half: a real spectrum of ``n`` points (:func:`irfft` of the conjugate, scaled "
                 "as a forward transform).", _HALF, _HALF_OUT, True, """
>>> ferrograd.fft.hfft(ferrograd.tensor([1.0, 2.0, 3.0]))
tensor([ 8., -2.,  0., -2.])
"""),
    "ihfft": _one("ihfft", "The inverse of :func:`hfft`: the non-negative half of the inverse transform of "
                  "a real signal (the conjugate of :func:`rfft`, scaled as an inverse transform).", _REAL,
                  _PAD, False, """
>>> ferrograd.fft.ihfft(ferrograd.tensor([8.0, -2.0, 0.0, -2.0])).real
tensor([1., 2., 3.])
"""),
    "hfft2": _many("hfft2", "The two-dimensional :func:`hfftn` over the last two dims.", _HALF, _HALF_OUT_N,
                   "2", True, """
>>> ferrograd.fft.hfft2(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]), s=(2, 2))
tensor([[10., -2.],
        [-4.,  0.]])
"""),
    "ihfft2": _many("ihfft2", "The two-dimensional :func:`ihfftn` over the last two dims.", _REAL, _PAD_N,
                    "2", False, f"""
>>> {_GRID}
>>> ferrograd.fft.ihfft2(x)
tensor([[ 2.5000-0.j, -0.5000-0.j],
        [-1.0000-0.j,  0.0000-0.j]])
"""),
    "hfftn": _many("hfftn", "The N-dimensional transform of a Hermitian-symmetric signal given by its half "
                   "along the last of ``dim``: a real result (:func:`irfftn` of the conjugate, scaled as a "
                   "forward transform).", _HALF, _HALF_OUT_N, "n", True, """
>>> ferrograd.fft.hfftn(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]), s=(2, 2))
tensor([[10., -2.],
        [-4.,  0.]])
"""),
    "ihfftn": _many("ihfftn", "The inverse of :func:`hfftn`: the half (along the last of ``dim``) of the "
                    "inverse N-dimensional transform of a real signal.", _REAL, _PAD_N, "n", False, f"""
>>> {_GRID}
>>> ferrograd.fft.ihfftn(x)
tensor([[ 2.5000-0.j, -0.5000-0.j],
        [-1.0000-0.j,  0.0000-0.j]])
"""),
    "fftfreq": _doc(
        "fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor",
        "The sample frequencies of an ``n``-point transform with sample spacing ``d``: ``[0, 1, ..., "
        "(n - 1) // 2, -(n // 2), ..., -1] / (d * n)``, in the order :func:`fft` returns them.",
        ["n (int): the signal length.", "d (float, optional): the sample spacing (default 1.0).", _OUT,
         "dtype (ferrograd.dtype, optional): the result's dtype (default: the default float dtype).",
         "layout (ferrograd.layout, optional): only the strided layout exists; accepted and ignored.",
         "device (ferrograd.device, optional): only the CPU exists; accepted and ignored.",
         "requires_grad (bool, optional): whether the result requires grad."],
        """
>>> ferrograd.fft.fftfreq(5, d=0.5)
tensor([ 0.0000,  0.4000,  0.8000, -0.8000, -0.4000])
"""),
    "rfftfreq": _doc(
        "rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False) "
        "-> Tensor",
        "The sample frequencies of :func:`rfft` of ``n`` points with sample spacing ``d``: ``[0, 1, ..., "
        "n // 2] / (d * n)``.",
        ["n (int): the signal length.", "d (float, optional): the sample spacing (default 1.0).", _OUT,
         "dtype (ferrograd.dtype, optional): the result's dtype (default: the default float dtype).",
         "layout (ferrograd.layout, optional): only the strided layout exists; accepted and ignored.",
         "device (ferrograd.device, optional): only the CPU exists; accepted and ignored.",
         "requires_grad (bool, optional): whether the result requires grad."],
        """
>>> ferrograd.fft.rfftfreq(4)
tensor([0.0000, 0.2500, 0.5000])
"""),
    "fftshift": _doc(
        "fftshift(input, dim=None) -> Tensor",
        "Reorders the output of :func:`fftn` so that frequency 0 sits in the middle: rolls each dim in "
        "``dim`` by half its size.",
        ["input (Tensor): a tensor in FFT order.",
         "dim (int or Tuple[int], optional): the dims to roll (default: all of them)."],
        """
>>> ferrograd.fft.fftshift(ferrograd.fft.fftfreq(5))
tensor([-0.4000, -0.2000,  0.0000,  0.2000,  0.4000])
"""),
    "ifftshift": _doc(
        "ifftshift(input, dim=None) -> Tensor",
        "The inverse of :func:`fftshift`: moves frequency 0 back to the front.",
        ["input (Tensor): a tensor in :func:`fftshift`'s order.",
         "dim (int or Tuple[int], optional): the dims to roll (default: all of them)."],
        """
>>> ferrograd.fft.ifftshift(ferrograd.fft.fftshift(ferrograd.fft.fftfreq(5)))
tensor([ 0.0000,  0.2000,  0.4000, -0.4000, -0.2000])
"""),
}
