"""Pointwise math functions composed from other ops, as module functions
and ``Tensor`` methods: angle conversions, ``float_power``, ``ldexp``,
``frexp``, ``nan_to_num``, ``fmax``/``fmin``, ``heaviside``, ``logit``,
``polygamma``, ``mvlgamma``, ``igamma``/``igammac`` and ``isreal``.

Each is written with differentiable ferrograd ops, so reverse mode,
forward mode and ``vmap`` go through it with no rule of its own. The
in-place forms compute the result from a copy of the tensor (so the graph
saves the copy, not the tensor being overwritten) and write it back with
``copy_``, refusing a result dtype the tensor cannot hold as torch does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ferrograd as _fg

from . import return_types as _return_types
from ._batched import BatchedTensor
from ._core import Tensor
from ._dtype_info import can_cast as _can_cast
from ._dtype_info import finfo as _finfo
from ._ops_composite import _scalar_type
from ._ops_pointwise import _finish, _input, _tensor
from ._routed import torch_errors

__all__ = [
    "deg2rad", "fmax", "fmin", "float_power", "frexp", "heaviside", "igamma", "igammac", "isreal", "ldexp",
    "logit", "mvlgamma", "nan_to_num", "polygamma", "rad2deg",
]  # fmt: skip

_Number = float | int | bool


def _float_of(t: Tensor) -> Tensor:
    """``t`` itself if it has a float or complex dtype, else in the default float dtype."""
    return t if t.is_floating_point() or t.is_complex() else t.to(_fg.get_default_dtype())


def _write_back(name: str, self: Tensor, result: Tensor) -> Tensor:
    """``self`` overwritten by ``result`` (torch's error if its dtype cannot hold it)."""
    if name == "float_power_" and result.dtype != self.dtype:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_scalar_type(self.dtype)} but the operation's result "
            f"requires dtype {_scalar_type(result.dtype)}"
        )
    if not _can_cast(result.dtype, self.dtype):
        raise RuntimeError(
            f"result type {_scalar_type(result.dtype)} can't be cast to the desired output type "
            f"{_scalar_type(self.dtype)}"
        )
    return self.copy_(result)


def _method_pair(name: str, fn: Callable[..., Tensor]) -> None:
    """Installs ``Tensor.name`` and its in-place form ``Tensor.name_``."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return fn(self, *args, **kwargs)

    def method_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return _write_back(name + "_", self, fn(self.clone(), *args, **kwargs))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"See :func:`ferrograd.{name}`."
    method_.__name__ = method_.__qualname__ = name + "_"
    method_.__doc__ = f"In-place version of :meth:`Tensor.{name}`."
    _install(name, method)
    _install(name + "_", method_)


def _install(name: str, fn: Callable[..., Any]) -> None:
    """Makes ``fn`` a method of ``Tensor`` and of ``vmap``'s ``BatchedTensor``
    (which copied ``Tensor``'s methods before this module ran; a composite
    runs as it is on a batched tensor)."""
    fn = torch_errors(fn, name)
    setattr(Tensor, name, fn)
    setattr(BatchedTensor, name, fn)


def _angle_conversion(name: str, source: str, target: str, factor: float, example: str, result: str):
    """``deg2rad``/``rad2deg``: each element times ``factor``, in a float dtype."""

    def op(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _finish(_float_of(_input(input, name)) * factor, out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, *, out=None) -> Tensor

    Converts each element from {source} to {target} (integer inputs give the
    default float dtype).

    Args:
        input (Tensor): angles in {source}.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.{name}(ferrograd.tensor({example}))
        {result}
    """
    return op


deg2rad = _angle_conversion(
    "deg2rad", "degrees", "radians", math.pi / 180.0, "[180.0, -90.0]", "tensor([ 3.1416, -1.5708])"
)
rad2deg = _angle_conversion(
    "rad2deg", "radians", "degrees", 180.0 / math.pi, "[ferrograd.pi, -1.0]", "tensor([180.0000, -57.2958])"
)


def float_power(input: Tensor | _Number, exponent: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
    """float_power(input, exponent, *, out=None) -> Tensor

    ``input ** exponent`` computed in double precision: the result is
    ``float64``, or ``complex128`` when either operand is complex.

    Args:
        input (Tensor or Number): the base.
        exponent (Tensor or Number): the exponent.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.float_power(ferrograd.tensor([2, 3]), 2)
        tensor([4., 9.], dtype=ferrograd.float64)
    """
    base, exp = _tensor(input), _tensor(exponent)
    wide = _fg.complex128 if base.is_complex() or exp.is_complex() else _fg.float64
    return _finish(base.to(wide).pow(exp.to(wide)), out)


def ldexp(input: Tensor, other: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
    """ldexp(input, other, *, out=None) -> Tensor

    ``input * 2 ** other`` for each pair of elements (broadcast together).

    Args:
        input (Tensor): the mantissas.
        other (Tensor or Number): the exponents.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.ldexp(ferrograd.tensor([1.0, 0.75]), ferrograd.tensor([3, -1]))
        tensor([8.0000, 0.3750])
    """
    x = _float_of(_input(input, "ldexp"))
    return _finish(x * _float_of(_tensor(other)).exp2(), out)


def frexp(input: Tensor, *, out: tuple[Tensor, Tensor] | None = None) -> Any:
    """frexp(input, *, out=None) -> (Tensor mantissa, Tensor exponent)

    Splits each element into a mantissa in ``(-1, -0.5] U [0.5, 1)`` and an
    ``int32`` exponent with ``input = mantissa * 2 ** exponent`` (0, the
    infinities and NaN keep their value as mantissa, with exponent 0). The
    mantissa is differentiable (its gradient is ``grad / 2 ** exponent``).

    Args:
        input (Tensor): a floating-point tensor.
        out (tuple of Tensors, optional): tensors that receive the mantissa and the exponent.

    Example:
        >>> ferrograd.frexp(ferrograd.tensor([8.0, -3.0, 0.0]))
        ferrograd.return_types.frexp(
        mantissa=tensor([ 0.5000, -0.7500,  0.0000]),
        exponent=tensor([4, 2, 0], dtype=ferrograd.int32))
    """
    x = _input(input, "frexp")
    if not x.is_floating_point():
        raise RuntimeError(
            "torch.frexp() only supports floating-point dtypes, but got " + _scalar_type(x.dtype)
        )
    with _fg.no_grad():
        wide = x.to(_fg.float64)
        finite = wide.isfinite() & (wide != 0)
        a = _fg.where(finite, wide.abs(), _fg.ones_like(wide))
        e = a.log2().floor() + 1
        # log2 rounds near powers of two: step the exponent so that a / 2^e is in [0.5, 1).
        m = _scale(a, -e)
        e = e + (m >= 1).to(e.dtype) - (m < 0.5).to(e.dtype)
        e = _fg.where(finite, e, _fg.zeros_like(e))
    mantissa = _fg.where(finite, _scale(x, (-e).to(x.dtype)), x)
    result = _return_types.frexp((mantissa, e.to(_fg.int32)))
    if out is None:
        return result
    out[0].copy_(result[0])
    out[1].copy_(result[1])
    return _return_types.frexp((out[0], out[1]))


def _scale(x: Tensor, n: Tensor) -> Tensor:
    """``x * 2 ** n`` exactly for integer-valued ``n``, in two halves so
    that neither power overflows (the mantissas of subnormals need scales
    past the largest float)."""
    half = (n * 0.5).floor()
    return x * half.exp2() * (n - half).exp2()


def nan_to_num(
    input: Tensor,
    nan: float = 0.0,
    posinf: float | None = None,
    neginf: float | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None) -> Tensor

    Replaces NaN, positive and negative infinity in ``input`` by ``nan``,
    ``posinf`` and ``neginf`` (by default the largest and lowest finite
    values of the dtype). The gradient flows only to finite elements.

    Args:
        input (Tensor): the input tensor.
        nan (float): the value for NaN.
        posinf (float, optional): the value for positive infinity.
        neginf (float, optional): the value for negative infinity.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.nan_to_num(ferrograd.tensor([np.nan, np.inf, -1.0]), posinf=9.0)
        tensor([ 0.,  9., -1.])
    """
    x = _input(input, "nan_to_num")
    if x.is_complex():
        re = nan_to_num(x.real, nan, posinf, neginf)
        im = nan_to_num(x.imag, nan, posinf, neginf)
        return _finish(_fg.complex(re, im), out)
    if not x.is_floating_point():
        return _finish(x.clone(), out)
    info = _finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    fill = x.masked_fill(x.isnan(), nan).masked_fill(x.isposinf(), hi).masked_fill(x.isneginf(), lo)
    return _finish(fill, out)


def _fmax_fmin(name: str, word: str, keep_first: Callable, result: str):
    """``fmax``/``fmin``: the first operand wins where ``keep_first`` holds or the second is NaN."""

    def op(input: Tensor | _Number, other: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
        a, b = _tensor(input), _tensor(other)
        if a.is_complex() or b.is_complex():
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        dtype = _fg.result_type(a, b)
        a, b = a.to(dtype), b.to(dtype)
        return _finish(_fg.where(keep_first(a, b) | b.isnan(), a, b), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, other, *, out=None) -> Tensor

    The {word} of each pair of elements, ignoring NaN: where exactly one is
    NaN the other is taken (NaN only where both are). The gradient goes to
    ``input`` at ties.

    Args:
        input (Tensor or Number): the first operand.
        other (Tensor or Number): the second operand.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> nan = np.nan
        >>> ferrograd.{name}(ferrograd.tensor([1.0, nan, 3.0]), ferrograd.tensor([2.0, 2.0, nan]))
        {result}
    """
    return op


fmax = _fmax_fmin("fmax", "larger", lambda a, b: a >= b, "tensor([2., 2., 3.])")
fmin = _fmax_fmin("fmin", "smaller", lambda a, b: a <= b, "tensor([1., 2., 3.])")


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None) -> Tensor:
    """heaviside(input, values, *, out=None) -> Tensor

    The Heaviside step function of each element: 0 below zero (and for
    NaN), 1 above, and the matching element of ``values`` at zero. Both
    tensors must have the same dtype. Not differentiable.

    Args:
        input (Tensor): the input tensor.
        values (Tensor): the values at zero (broadcast against ``input``).
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.heaviside(ferrograd.tensor([-1.0, 0.0, 2.0]), ferrograd.tensor([0.5]))
        tensor([0.0000, 0.5000, 1.0000])
    """
    x = _input(input, "heaviside")
    if not isinstance(values, Tensor):
        kind = type(values).__name__
        raise TypeError(f"heaviside(): argument 'values' (position 2) must be Tensor, not {kind}")
    if x.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    if x.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    x, v = x.detach(), values.detach()
    step = (x > 0).to(x.dtype)
    return _finish(_fg.where(x == 0, v, step), out)


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """logit(input, eps=None, *, out=None) -> Tensor

    The log-odds ``log(p / (1 - p))`` of each element. With ``eps``,
    elements are first clamped to ``[eps, 1 - eps]`` (the gradient is 0
    outside that range); without it, elements outside ``[0, 1]`` give NaN.

    Args:
        input (Tensor): probabilities.
        eps (float, optional): the clamping margin.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.logit(ferrograd.tensor([0.5, 0.75, 1.0], dtype=ferrograd.float64), eps=1e-6)
        tensor([ 0.0000,  1.0986, 13.8155], dtype=ferrograd.float64)
    """
    p = _float_of(_input(input, "logit"))
    if eps is not None:
        p = p.clamp(eps, 1.0 - eps)
    return _finish(p.log() - (-p).log1p(), out)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """polygamma(n, input, *, out=None) -> Tensor

    The ``n``-th derivative of the digamma function of each element
    (``n = 0`` is digamma); differentiable to any order.

    Args:
        n (int): the order, at least 0.
        input (Tensor): the input tensor.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.polygamma(1, ferrograd.tensor([1.0, 0.5]))
        tensor([1.6449, 4.9348])
    """
    return _finish(_input(input, "polygamma").polygamma(n), out)


def mvlgamma(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """mvlgamma(input, p, *, out=None) -> Tensor

    The multivariate log-gamma function of dimension ``p`` of each element:
    ``p (p - 1) / 4 log(pi) + sum_{i < p} lgamma(x - i / 2)``. Every element
    must exceed ``(p - 1) / 2``.

    Args:
        input (Tensor): the input tensor.
        p (int): the dimension, at least 1.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.mvlgamma(ferrograd.tensor([2.5, 3.0]), 2)
        tensor([0.8570, 1.5502])
    """
    x = _float_of(_input(input, "mvlgamma"))
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1, but got p={p}")
    if x.numel() and not bool((x.detach() > (p - 1) / 2).all()):
        raise RuntimeError(f"All elements must be greater than (p-1)/2, got p={p}")
    shifts = _fg.arange(p, dtype=x.dtype) * -0.5
    terms = (x.unsqueeze(-1) + shifts).lgamma().sum(-1)
    return _finish(terms + p * (p - 1) / 4 * math.log(math.pi), out)


def _incomplete_gamma(name: str, which: str, formula: str, result: str):
    """``igamma``/``igammac``: a regularized incomplete gamma function of the core."""

    def op(input: Tensor | _Number, other: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
        return _finish(getattr(_tensor(input), name)(other), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, other, *, out=None) -> Tensor

    The regularized {which} incomplete gamma function ``{formula}`` of each
    pair ``a = input``, ``x = other`` (broadcast together). Differentiable in
    ``other`` only, as in torch.

    Args:
        input (Tensor or Number): the shape parameter ``a``, positive.
        other (Tensor or Number): the argument ``x``, non-negative.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.{name}(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([1.0, 1.0]))
        {result}
    """
    return op


igamma = _incomplete_gamma("igamma", "lower", "P(a, x)", "tensor([0.6321, 0.2642])")
igammac = _incomplete_gamma("igammac", "upper", "Q(a, x) = 1 - P(a, x)", "tensor([0.3679, 0.7358])")


def isreal(input: Tensor) -> Tensor:
    """isreal(input) -> Tensor

    A bool tensor, True where an element is real: every element of a real
    dtype, and the complex elements whose imaginary part is 0.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.isreal(ferrograd.tensor([1 + 0j, 2 + 1j]))
        tensor([ True, False])
    """
    x = _input(input, "isreal")
    if x.is_complex():
        return x.imag == 0
    return _fg.ones_like(x, dtype=_fg.bool)


for _name, _fn in [
    ("deg2rad", deg2rad), ("rad2deg", rad2deg), ("float_power", float_power), ("ldexp", ldexp),
    ("nan_to_num", nan_to_num), ("heaviside", heaviside), ("logit", logit), ("mvlgamma", mvlgamma),
]:  # fmt: skip
    _method_pair(_name, _fn)
for _name, _fn in [("fmax", fmax), ("fmin", fmin), ("frexp", frexp), ("isreal", isreal)]:
    _install(_name, _fn)
