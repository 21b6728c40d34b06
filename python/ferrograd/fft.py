"""``ferrograd.fft``: the ``torch.fft`` discrete Fourier transforms.

Every transform is one of three differentiable primitives (``_fft_c2c``,
``_fft_r2c``, ``_fft_c2r``, torch's own) after its input has been
promoted (integers and bools to the default float dtype), padded with
zeros or trimmed to the requested signal sizes; the Hermitian transforms
add a conjugate (``hfft`` is ``irfft`` of the conjugate with the forward
scaling, ``ihfft`` the conjugate of ``rfft`` with the inverse one).

``norm`` picks the scaling of ``n`` points: ``"backward"`` (the default)
leaves the forward transforms unscaled and divides the inverse ones by
``n``, ``"forward"`` the other way round, ``"ortho"`` divides both by
``sqrt(n)``.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from . import _core
from ._core import Tensor
from ._ops_composite import _scalar_type
from ._ops_pointwise import _finish

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn",
    "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
    "rfftn",
]  # fmt: skip

_Dims = int | Sequence[int] | None
_Sizes = Sequence[int] | None
_COMPLEX = {_core.float32: _core.complex64, _core.float64: _core.complex128}


def _norm_code(norm: str | None, forward: bool) -> int:
    """torch's normalization code (0: none, 1: by ``1/sqrt(n)``, 2: by
    ``1/n``) of ``norm`` for a transform in the ``forward`` direction."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _input(x: Any, name: str, real: bool = False) -> Tensor:
    """``x`` checked and promoted: integers and bools to the default float
    dtype; half types refused (as on torch's CPU); complex refused when
    the transform takes a ``real`` signal."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    dt = x.dtype
    if dt in (_core.float16, _core.bfloat16):
        raise RuntimeError(f"Unsupported dtype {_scalar_type(dt)}")
    if dt.is_complex:
        if real:
            raise RuntimeError(f"{name} expects a real input tensor, but got {_scalar_type(dt)}")
        return x
    if not dt.is_floating_point:
        return x.to(_core.get_default_dtype())
    return x


def _wrap(d: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _shape_and_dims(x: Tensor, s: _Sizes, dim: _Dims) -> tuple[list[int], list[int]]:
    """torch's reading of ``s`` and ``dim``: the signal size of each
    transformed dim (``-1``: the input's) and the dims, as positions."""
    ndim = x.dim()
    dims: list[int] | None = None
    if dim is not None:
        dims = [_wrap(int(d), ndim) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is None:
        dims = list(range(ndim)) if dims is None else dims
        return [x.shape[d] for d in dims], dims
    sizes = [int(n) for n in s]
    if dims is not None and len(dims) != len(sizes):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if len(sizes) > ndim:
        raise RuntimeError(f"Got shape with {len(sizes)} values but input tensor only has {ndim} dimensions.")
    if dims is None:
        dims = list(range(ndim - len(sizes), ndim))
    return [x.shape[d] if n == -1 else n for d, n in zip(dims, sizes, strict=True)], dims


def _one_dim(x: Tensor, n: int | None, dim: int) -> tuple[list[int], list[int]]:
    d = _wrap(int(dim), x.dim())
    return [x.shape[d] if n is None else int(n)], [d]


def _resize(x: Tensor, dims: list[int], sizes: list[int]) -> Tensor:
    """``x`` trimmed or padded with zeros at the end to ``sizes`` along
    ``dims`` (torch's resizing of the signal before it is transformed)."""
    pads = [0] * (2 * x.dim())
    for d, n in zip(dims, sizes, strict=True):
        _check_points(n)
        have = x.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            pads[2 * (x.dim() - 1 - d) + 1] = n - have
    if any(pads):
        from .nn.functional import pad

        while pads and pads[-1] == 0:
            pads.pop()
        x = pad(x, pads)
    return x


def _call(prim: Any, x: Tensor, dims: list[int], *args: Any) -> Tensor:
    """``prim(x, dims, *args)``, with ``dims`` counted from the back: under
    ``vmap`` the primitive runs once on the whole batch (the batch dims
    lead, so dims counted from the back still name the same dims)."""
    ndim = x.dim()
    back = [d - ndim for d in dims]
    if type(x) is not Tensor:
        from . import _batched

        if type(x) is _batched.BatchedTensor:
            return _batched.wrap_result(prim(x._p, back, *args), x._lv)
    return prim(x, back, *args)


def _out(name: str, result: Tensor, out: Tensor | None) -> Tensor:
    if out is not None and isinstance(out, Tensor):
        want_complex = result.dtype.is_complex
        if want_complex and not out.dtype.is_complex:
            raise RuntimeError(f"{name} expects a complex output tensor, but got {_scalar_type(out.dtype)}")
        if not want_complex and not out.dtype.is_floating_point:
            raise RuntimeError(
                f"{name} expects a floating point output tensor, but got {_scalar_type(out.dtype)}")
    return _finish(result, out)


def _c2c(name: str, input: Tensor, sizes: list[int], dims: list[int], norm: str | None,
         forward: bool) -> Tensor:  # fmt: skip
    x = _resize(input, dims, sizes)
    if not dims:
        return x if x.dtype.is_complex else x.to(_COMPLEX[x.dtype])
    code = _norm_code(norm, forward)
    if x.dtype.is_complex:
        return _call(_core._fft_c2c, x, dims, code, forward)
    # A real signal: its full spectrum; the inverse transform of a real
    # signal is the conjugate of its forward one.
    y = _call(_core._fft_r2c, x, dims, code, False)
    return y if forward else y.conj()


def _r2c(name: str, input: Tensor, sizes: list[int], dims: list[int], norm: str | None,
         forward: bool) -> Tensor:  # fmt: skip
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize(input, dims, sizes)
    y = _call(_core._fft_r2c, x, dims, _norm_code(norm, forward), True)
    return y if forward else y.conj()


def _c2r(name: str, input: Tensor, sizes: list[int], last: int | None, dims: list[int], norm: str | None,
         forward: bool) -> Tensor:  # fmt: skip
    """The real signal of a half spectrum (``irfft``; ``hfft`` when
    ``forward``, which transforms the conjugate with forward scaling).
    The last of ``dims`` holds the half: its output size is ``last``, or
    ``2 * (m - 1)`` for ``m`` input points there when ``last`` is None;
    ``sizes`` sizes the other dims."""
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if last is None:
        last = 2 * (input.shape[dims[-1]] - 1)
    _check_points(last)
    x = _resize(input, dims, [*sizes[:-1], last // 2 + 1])
    if not x.dtype.is_complex:
        x = x.to(_COMPLEX[x.dtype])
    if forward:
        x = x.conj()
    return _call(_core._fft_c2r, x, dims, _norm_code(norm, forward), last)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "fft")
    sizes, dims = _one_dim(x, n, dim)
    return _out("fft", _c2c("fft", x, sizes, dims, norm, True), out)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "ifft")
    sizes, dims = _one_dim(x, n, dim)
    return _out("ifft", _c2c("ifft", x, sizes, dims, norm, False), out)


def fft2(input: Tensor, s: _Sizes = None, dim: _Dims = (-2, -1), norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:  # fmt: skip
    return fftn(input, s, dim, norm, out=out)


def ifft2(input: Tensor, s: _Sizes = None, dim: _Dims = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    return ifftn(input, s, dim, norm, out=out)


def fftn(input: Tensor, s: _Sizes = None, dim: _Dims = None, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "fftn")
    sizes, dims = _shape_and_dims(x, s, dim)
    return _out("fftn", _c2c("fftn", x, sizes, dims, norm, True), out)


def ifftn(input: Tensor, s: _Sizes = None, dim: _Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "ifftn")
    sizes, dims = _shape_and_dims(x, s, dim)
    return _out("ifftn", _c2c("ifftn", x, sizes, dims, norm, False), out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "rfft", real=True)
    sizes, dims = _one_dim(x, n, dim)
    return _out("rfft", _r2c("rfft", x, sizes, dims, norm, True), out)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "ihfft", real=True)
    sizes, dims = _one_dim(x, n, dim)
    return _out("ihfft", _r2c("ihfft", x, sizes, dims, norm, False), out)


def rfft2(input: Tensor, s: _Sizes = None, dim: _Dims = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    return rfftn(input, s, dim, norm, out=out)


def ihfft2(input: Tensor, s: _Sizes = None, dim: _Dims = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:  # fmt: skip
    return ihfftn(input, s, dim, norm, out=out)


def rfftn(input: Tensor, s: _Sizes = None, dim: _Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "rfftn", real=True)
    sizes, dims = _shape_and_dims(x, s, dim)
    return _out("rfftn", _r2c("rfftn", x, sizes, dims, norm, True), out)


def ihfftn(input: Tensor, s: _Sizes = None, dim: _Dims = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "ihfftn", real=True)
    sizes, dims = _shape_and_dims(x, s, dim)
    return _out("ihfftn", _r2c("ihfftn", x, sizes, dims, norm, False), out)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "irfft")
    sizes, dims = _one_dim(x, n, dim)
    return _out("irfft", _c2r("irfft", x, sizes, n, dims, norm, False), out)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "hfft")
    sizes, dims = _one_dim(x, n, dim)
    return _out("hfft", _c2r("hfft", x, sizes, n, dims, norm, True), out)


def irfft2(input: Tensor, s: _Sizes = None, dim: _Dims = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:  # fmt: skip
    return irfftn(input, s, dim, norm, out=out)


def hfft2(input: Tensor, s: _Sizes = None, dim: _Dims = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    return hfftn(input, s, dim, norm, out=out)


def _c2r_args(x: Tensor, s: _Sizes, dim: _Dims) -> tuple[list[int], int | None, list[int]]:
    """The sizes, output size of the last dim (None: its default) and dims
    of an n-dimensional complex-to-real transform."""
    sizes, dims = _shape_and_dims(x, s, dim)
    last = None if s is None or s[-1] == -1 else int(s[-1])
    return sizes, last, dims


def irfftn(input: Tensor, s: _Sizes = None, dim: _Dims = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "irfftn")
    sizes, last, dims = _c2r_args(x, s, dim)
    return _out("irfftn", _c2r("irfftn", x, sizes, last, dims, norm, False), out)


def hfftn(input: Tensor, s: _Sizes = None, dim: _Dims = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:  # fmt: skip
    x = _input(input, "hfftn")
    sizes, last, dims = _c2r_args(x, s, dim)
    return _out("hfftn", _c2r("hfftn", x, sizes, last, dims, norm, True), out)


def _freqs(ks: list[int], n: int, d: float, out: Tensor | None, dtype: Any, requires_grad: bool) -> Tensor:
    values = _core.tensor(ks, dtype=dtype or _core.get_default_dtype()).mul(1.0 / (n * d))
    if out is not None:
        return _finish(values, out).requires_grad_(requires_grad)
    return values.requires_grad_(requires_grad)


def fftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: builtins.bool = False) -> Tensor:  # fmt: skip
    del layout, device  # strided CPU tensors only
    ks = list(range((n + 1) // 2)) + list(range(-(n // 2), 0))
    return _freqs(ks, n, d, out, dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: builtins.bool = False) -> Tensor:  # fmt: skip
    del layout, device  # strided CPU tensors only
    return _freqs(list(range(n // 2 + 1)), n, d, out, dtype, requires_grad)


def _shift(input: Tensor, dim: _Dims, inverse: bool) -> Tensor:
    ndim = input.dim()
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = [_wrap(int(d), ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    if not dims:
        return input.clone()
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return input.roll(shifts, dims)


def fftshift(input: Tensor, dim: _Dims = None) -> Tensor:
    return _shift(input, dim, False)


def ifftshift(input: Tensor, dim: _Dims = None) -> Tensor:
    return _shift(input, dim, True)


from ._fft_docs import DOCS as _DOCS  # noqa: E402
from ._routed import route_module as _route_module  # noqa: E402

_route_module(globals(), __name__, "fft.", _DOCS)
del _route_module
