"""Module-level forms of the pointwise operations (``ferrograd.exp(t)``...).

Each function takes torch's argument names (``input``, ``other``, ``alpha``,
``exponent``...) and an optional ``out=`` tensor of the result's shape that
receives the result (which must be castable to its dtype). A Python number
is accepted where torch accepts a Scalar, including as the first operand of
binary ops (``ferrograd.pow(2, t)``, ``ferrograd.add(1, t)``).
"""

from __future__ import annotations

from typing import Any, Protocol

from ._core import Tensor, _wrap_number
from ._ops_pointwise_docs import DOCS
from .utils._docs import with_doc_pieces as _with_doc_pieces

# The ``out=`` keyword's description, shared by the docstrings below.
_doc_pieces = _with_doc_pieces({
    "out": "out (Tensor, optional): a tensor of the result's shape that receives\n    the result.",
})

# A tensor operand, or a Python number where torch accepts a Scalar.
_TensorLike = Tensor | float | int | bool


class _UnaryOp(Protocol):
    def __call__(self, input: Tensor, *, out: Tensor | None = None) -> Tensor: ...


class _BinaryOp(Protocol):
    def __call__(self, input: _TensorLike, other: _TensorLike, *, out: Tensor | None = None) -> Tensor: ...


def _tensor(x: _TensorLike) -> Tensor:
    """A tensor operand: tensors pass through, numbers become wrapped scalars."""
    return x if isinstance(x, Tensor) else _wrap_number(x)


def _input(x: object, fn: str) -> Tensor:
    """``x`` if it is a tensor, else torch's TypeError for a non-tensor ``input``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _finish(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a Tensor, not {type(out).__name__}")
    return out._store_out(result)


# The names the factories made, in order (the batching rules of
# ``func.vmap`` treat them as pointwise).
_UNARY: list[str] = []
_BINARY: list[str] = []


def _unary(name: str, method: str | None = None) -> _UnaryOp:
    impl = getattr(Tensor, method or name)
    _UNARY.append(name)

    def op(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _finish(impl(input), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = DOCS[name]
    return op


def _binary(name: str, method: str | None = None) -> _BinaryOp:
    impl = getattr(Tensor, method or name)
    _BINARY.append(name)

    def op(input: _TensorLike, other: _TensorLike, *, out: Tensor | None = None) -> Tensor:
        return _finish(impl(_tensor(input), other), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = DOCS[name]
    return op


# One line per function (not a loop over the lists), so that type checkers
# see them. The functions of the unary table rows are at the end of the module,
# written from the rows.
angle = _unary("angle")
conj_physical = _unary("conj_physical")
sgn = _unary("sgn")
bitwise_not = _unary("bitwise_not")
frac = _unary("frac")
isfinite = _unary("isfinite")
isinf = _unary("isinf")
isnan = _unary("isnan")
isneginf = _unary("isneginf")
isposinf = _unary("isposinf")
logical_not = _unary("logical_not")
positive = _unary("positive")
signbit = _unary("signbit")
square = _unary("square")
arctan2 = _binary("arctan2")
atan2 = _binary("atan2")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
bitwise_left_shift = _binary("bitwise_left_shift")
bitwise_right_shift = _binary("bitwise_right_shift")
copysign = _binary("copysign")
gcd = _binary("gcd")
hypot = _binary("hypot")
lcm = _binary("lcm")
logaddexp = _binary("logaddexp")
logaddexp2 = _binary("logaddexp2")
nextafter = _binary("nextafter")
xlogy = _binary("xlogy")
eq = _binary("eq")
floor_divide = _binary("floor_divide")
fmod = _binary("fmod")
ge = _binary("ge")
greater = _binary("greater")
greater_equal = _binary("greater_equal")
gt = _binary("gt")
le = _binary("le")
less = _binary("less")
less_equal = _binary("less_equal")
logical_and = _binary("logical_and")
logical_or = _binary("logical_or")
logical_xor = _binary("logical_xor")
lt = _binary("lt")
maximum = _binary("maximum")
minimum = _binary("minimum")
mul = _binary("mul")
multiply = _binary("multiply")
ne = _binary("ne")
not_equal = _binary("not_equal")
remainder = _binary("remainder")
true_divide = _binary("true_divide")

# In-place module functions torch exposes (``torch.relu_(t)``...).
relu_ = Tensor.relu_
sigmoid_ = Tensor.sigmoid_
exp_ = Tensor.exp_
clamp_ = Tensor.clamp_
clip_ = Tensor.clip_


@_doc_pieces
def add(input: _TensorLike, other: _TensorLike, *, alpha: float = 1, out: Tensor | None = None) -> Tensor:
    """Adds ``other``, scaled by ``alpha``, to ``input``: ``input + alpha * other``.

    ``input`` and ``other`` are broadcast together and their dtypes promoted as
    torch does (a Python number only changes the kind of the result, e.g.
    integer to float, not the width of a tensor's dtype). Either may be a
    Python number. Differentiable with respect to both tensors.

    Args:
        input (Tensor or Number): the first operand.
        other (Tensor or Number): the tensor or number to add.

    Keyword args:
        alpha (Number): the multiplier of ``other``. Default: 1.
        {out}

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.add(a, 1, alpha=2)
        tensor([3., 4., 5.])
        >>> ferrograd.add(a, ferrograd.tensor([[0.0], [10.0]]))
        tensor([[ 1.,  2.,  3.],
                [11., 12., 13.]])
    """
    return _finish(_tensor(input).add(other, alpha=alpha), out)


@_doc_pieces
def sub(input: _TensorLike, other: _TensorLike, *, alpha: float = 1, out: Tensor | None = None) -> Tensor:
    """Subtracts ``other``, scaled by ``alpha``, from ``input``: ``input - alpha * other``.

    Broadcasting and type promotion are those of :func:`ferrograd.add`; bool
    tensors cannot be subtracted.

    Args:
        input (Tensor or Number): the first operand.
        other (Tensor or Number): the tensor or number to subtract.

    Keyword args:
        alpha (Number): the multiplier of ``other`` (``input - other`` by default).
        {out}

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.sub(a, ferrograd.tensor([1.0, 1.0, 1.0]), alpha=0.5)
        tensor([0.5000, 1.5000, 2.5000])
    """
    return _finish(_tensor(input).sub(other, alpha=alpha), out)


subtract = sub


def rsub(input: _TensorLike, other: _TensorLike, *, alpha: float = 1) -> Tensor:
    """Subtracts ``input``, scaled by ``alpha``, from ``other``: ``other - alpha * input``
    (the reversed :func:`ferrograd.sub`).

    Args:
        input (Tensor or Number): the tensor or number subtracted.
        other (Tensor or Number): the tensor or number subtracted from.

    Keyword args:
        alpha (Number): the multiplier of ``input``. Default: 1.

    Example:
        >>> ferrograd.rsub(ferrograd.tensor([1.0, 2.0, 3.0]), 10)
        tensor([9., 8., 7.])
    """
    return _tensor(input)._rsub(other, alpha=alpha)


@_doc_pieces
def div(
    input: _TensorLike, other: _TensorLike, *, rounding_mode: str | None = None, out: Tensor | None = None
) -> Tensor:
    """Divides ``input`` by ``other`` elementwise, with optional rounding of the quotient.

    Without ``rounding_mode`` it is true division: integer and bool inputs give
    a floating-point result (like Python's ``/``). With ``"trunc"`` the quotient
    is rounded toward zero, with ``"floor"`` down (like Python's ``//``); these
    keep integer dtypes. The operands are broadcast together; either may be a
    Python number.

    Args:
        input (Tensor or Number): the dividend.
        other (Tensor or Number): the divisor.

    Keyword args:
        rounding_mode (str, optional): None, ``"trunc"`` or ``"floor"``.
            Default: None.
        {out}

    Example:
        >>> x = ferrograd.tensor([7, -7])
        >>> ferrograd.div(x, 2)
        tensor([ 3.5000, -3.5000])
        >>> ferrograd.div(x, 2, rounding_mode="trunc")
        tensor([ 3, -3])
        >>> ferrograd.div(x, 2, rounding_mode="floor")
        tensor([ 3, -4])
    """
    return _finish(_tensor(input).div(other, rounding_mode=rounding_mode), out)


divide = div


@_doc_pieces
def pow(input: _TensorLike, exponent: _TensorLike, *, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """Raises ``input`` to the power ``exponent``, elementwise.

    Either may be a tensor or a Python number (``pow(2, t)`` computes
    ``2 ** t``); tensors are broadcast together and dtypes promoted as in
    :func:`ferrograd.add`. Integer tensors raised to negative integer powers
    raise an error, as in torch.

    Args:
        input (Tensor or Number): the base.
        exponent (Tensor or Number): the exponent.

    Keyword args:
        {out}

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.pow(a, 2)
        tensor([1., 4., 9.])
        >>> ferrograd.pow(2, a)
        tensor([2., 4., 8.])
    """
    return _finish(_tensor(input).pow(exponent), out)


@_doc_pieces
def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """Rounds each element of ``input`` to the nearest integer, or to ``decimals`` decimal places.

    Halfway values are rounded to the nearest even number (``0.5`` gives 0,
    ``1.5`` gives 2), as in torch and NumPy. Integer inputs are returned
    unchanged.

    Args:
        input (Tensor): the input tensor.

    Keyword args:
        decimals (int): the number of decimal places to keep (negative rounds
            to tens, hundreds...). Default: 0.
        {out}

    Example:
        >>> ferrograd.round(ferrograd.tensor([0.5, 1.5, 2.5, -1.7]))
        tensor([ 0.,  2.,  2., -2.])
        >>> ferrograd.round(ferrograd.tensor([1.2345]), decimals=2)
        tensor([1.2300])
    """
    return _finish(_input(input, "round").round(decimals=decimals), out)


@_doc_pieces
def clamp(  # noqa: A002
    input: Tensor,
    min: _TensorLike | None = None,
    max: _TensorLike | None = None,
    *,
    out: Tensor | None = None,
) -> Tensor:
    """Limits each element of ``input`` to the range ``[min, max]``:
    ``minimum(maximum(input, min), max)``.

    Either bound may be omitted (not both); each may be a number or a tensor
    broadcast against ``input``. If ``min`` is greater than ``max``, every
    element becomes ``max``. The gradient is zero where a bound is applied.

    Args:
        input (Tensor): the input tensor.
        min (Number or Tensor, optional): the lower bound. Default: None.
        max (Number or Tensor, optional): the upper bound. Default: None.

    Keyword args:
        {out}

    Example:
        >>> x = ferrograd.tensor([-2.0, 0.5, 3.0])
        >>> ferrograd.clamp(x, -1, 1)
        tensor([-1.0000,  0.5000,  1.0000])
        >>> ferrograd.clamp(x, min=0)
        tensor([0.0000, 0.5000, 3.0000])
    """
    return _finish(_input(input, "clamp").clamp(min, max), out)


clip = clamp


@_doc_pieces
def clamp_min(input: Tensor, min: _TensorLike, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Limits each element of ``input`` from below: ``maximum(input, min)``.

    Args:
        input (Tensor): the input tensor.
        min (Number or Tensor): the lower bound.

    Keyword args:
        {out}

    Example:
        >>> ferrograd.clamp_min(ferrograd.tensor([1.0, 2.0, 3.0]), 2)
        tensor([2., 2., 3.])
    """
    return _finish(_input(input, "clamp_min").clamp_min(min), out)


@_doc_pieces
def clamp_max(input: Tensor, max: _TensorLike, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Limits each element of ``input`` from above: ``minimum(input, max)``.

    Args:
        input (Tensor): the input tensor.
        max (Number or Tensor): the upper bound (a tensor broadcasts with ``input``).

    Keyword args:
        {out}

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.clamp_max(x, ferrograd.tensor([2.0, 2.0, 2.5]))
        tensor([1.0000, 2.0000, 2.5000])
    """
    return _finish(_input(input, "clamp_max").clamp_max(max), out)


@_doc_pieces
def where(
    condition: Tensor,
    input: _TensorLike | None = None,
    other: _TensorLike | None = None,
    *,
    out: Tensor | None = None,
) -> Any:
    """Chooses elements from ``input`` where ``condition`` is True and from ``other`` elsewhere.

    ``condition``, ``input`` and ``other`` are broadcast together; ``input`` and
    ``other`` may be numbers, and their dtypes are promoted. Differentiable with
    respect to ``input`` and ``other``. Called with ``condition`` alone it is
    ``nonzero(condition, as_tuple=True)``.

    Args:
        condition (BoolTensor): where to take ``input``.
        input (Tensor or Number): the values where ``condition`` is True.
        other (Tensor or Number): the values where it is False.

    Keyword args:
        {out}

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.where(x > 1.5, x, 0.0)
        tensor([0., 2., 3.])
        >>> ferrograd.where(ferrograd.tensor([[0, 1], [1, 0]]))
        (tensor([0, 1]), tensor([1, 0]))
    """
    if input is None and other is None:
        nonzero = getattr(condition, "nonzero", None)
        if nonzero is None:
            raise TypeError("where(condition) needs Tensor.nonzero; pass input and other")
        return nonzero(as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes both input and other, or neither")
    if not isinstance(condition, Tensor):
        raise TypeError(
            f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}"
        )
    return _finish(_tensor(input).where(condition, other), out)


@_doc_pieces
def lerp(input: Tensor, end: Tensor, weight: _TensorLike, *, out: Tensor | None = None) -> Tensor:
    """Interpolates linearly between ``input`` and ``end``: ``input + weight * (end - input)``.

    All three are broadcast together; ``weight`` may be a number or a tensor.

    Args:
        input (Tensor): the start values.
        end (Tensor): the end values.
        weight (float or Tensor): the interpolation weight (0 gives ``input``,
            1 gives ``end``).

    Keyword args:
        {out}

    Example:
        >>> start = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.lerp(start, ferrograd.full((3,), 10.0), 0.5)
        tensor([5.5000, 6.0000, 6.5000])
    """
    return _finish(_input(input, "lerp").lerp(end, weight), out)


@_doc_pieces
def addcmul(
    input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1, out: Tensor | None = None
) -> Tensor:
    """Adds the product of ``tensor1`` and ``tensor2``, scaled by ``value``, to ``input``:
    ``input + value * tensor1 * tensor2``.

    The three tensors are broadcast together.

    Args:
        input (Tensor): the tensor added to.
        tensor1 (Tensor): the first factor.
        tensor2 (Tensor): the second factor.

    Keyword args:
        value (Number): the multiplier of the product. Default: 1.
        {out}

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.addcmul(a, a, a, value=0.5)
        tensor([1.5000, 4.0000, 7.5000])
    """
    return _finish(_input(input, "addcmul").addcmul(tensor1, tensor2, value=value), out)


@_doc_pieces
def addcdiv(
    input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1, out: Tensor | None = None
) -> Tensor:
    """Adds the quotient of ``tensor1`` by ``tensor2``, scaled by ``value``, to ``input``:
    ``input + value * tensor1 / tensor2``.

    The three tensors are broadcast together; the division is true division.

    Args:
        input (Tensor): the tensor added to.
        tensor1 (Tensor): the dividend.
        tensor2 (Tensor): the divisor.

    Keyword args:
        value (Number): the multiplier of the quotient. Default: 1.
        {out}

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.addcdiv(a, a, ferrograd.full((3,), 2.0), value=2)
        tensor([2., 4., 6.])
    """
    return _finish(_input(input, "addcdiv").addcdiv(tensor1, tensor2, value=value), out)


def isclose(
    input: Tensor, other: _TensorLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Tests elementwise whether ``input`` and ``other`` are close:
    ``|input - other| <= atol + rtol * |other|``.

    The two are broadcast together; the result is a ``bool`` tensor. Equal
    infinities are close; NaNs are close to each other only with
    ``equal_nan=True``.

    Args:
        input (Tensor): the first tensor.
        other (Tensor or Number): the second tensor.
        rtol (float): the relative tolerance. Default: 1e-05.
        atol (float): the absolute tolerance. Default: 1e-08.
        equal_nan (bool): whether two NaNs count as close. Default: False.

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, np.nan])
        >>> ferrograd.isclose(a, ferrograd.tensor([1.0 + 1e-6, 2.1, np.nan]))
        tensor([ True, False, False])
    """
    return _input(input, "isclose").isclose(other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(
    input: Tensor, other: _TensorLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Returns True if :func:`ferrograd.isclose` holds for every element: whether
    ``|input - other| <= atol + rtol * |other|`` everywhere.

    Args:
        input (Tensor): the first tensor.
        other (Tensor): the second tensor (broadcast against ``input``).
        rtol (float): the relative tolerance. Default: 1e-05.
        atol (float): the absolute tolerance. Default: 1e-08.
        equal_nan (bool): whether two NaNs count as close. Default: False.

    Returns:
        bool: a Python bool.

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0])
        >>> ferrograd.allclose(a, a + 1e-7), ferrograd.allclose(a, a + 1e-3)
        (True, False)
    """
    return _input(input, "allclose").allclose(other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def equal(input: Tensor, other: Tensor) -> bool:
    """Returns True if ``input`` and ``other`` have the same shape and the same values
    (a Python bool; no broadcasting, and NaN is never equal to itself).

    Args:
        input (Tensor): the first tensor.
        other (Tensor): the second tensor.

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0])
        >>> ferrograd.equal(a, ferrograd.tensor([1.0, 2.0])), ferrograd.equal(a, a[:1])
        (True, False)
    """
    return _input(input, "equal").equal(other)


def conj(input: Tensor) -> Tensor:
    """Returns the complex conjugate of ``input``: ``real - 1j * imag``.

    ferrograd conjugates eagerly: a complex input gives a new tensor (torch
    returns a lazy view, which reads the same); a real input is returned
    itself.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.conj(ferrograd.tensor([1 + 2j, 3 - 1j]))
        tensor([1.-2.j, 3.+1.j])
    """
    return _input(input, "conj").conj()


def real(input: Tensor) -> Tensor:
    """Returns the real parts of ``input`` as a view sharing its memory (writing to
    it changes ``input``); a real input is returned itself.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.real(ferrograd.tensor([1 + 2j, 3 - 1j]))
        tensor([1., 3.])
    """
    return _input(input, "real").real


def imag(input: Tensor) -> Tensor:
    """Returns the imaginary parts of the complex tensor ``input`` as a view sharing
    its memory; real inputs raise an error.

    Args:
        input (Tensor): a complex tensor.

    Example:
        >>> ferrograd.imag(ferrograd.tensor([1 + 2j, 3 - 1j]))
        tensor([ 2., -1.])
    """
    return _input(input, "imag").imag


resolve_conj = Tensor.resolve_conj
resolve_neg = Tensor.resolve_neg
is_conj = Tensor.is_conj
is_neg = Tensor.is_neg

__all__ = [
    "add",
    "addcdiv",
    "addcmul",
    "allclose",
    "angle",
    "arctan2",
    "atan2",
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_right_shift",
    "bitwise_or",
    "bitwise_xor",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_min",
    "clip",
    "clip_",
    "conj",
    "conj_physical",
    "copysign",
    "div",
    "divide",
    "eq",
    "equal",
    "exp_",
    "floor_divide",
    "fmod",
    "frac",
    "gcd",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "hypot",
    "imag",
    "is_conj",
    "is_neg",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "lcm",
    "le",
    "lerp",
    "less",
    "less_equal",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "lt",
    "maximum",
    "minimum",
    "mul",
    "multiply",
    "ne",
    "nextafter",
    "not_equal",
    "positive",
    "pow",
    "real",
    "relu_",
    "remainder",
    "resolve_conj",
    "resolve_neg",
    "round",
    "rsub",
    "sgn",
    "sigmoid_",
    "signbit",
    "square",
    "sub",
    "subtract",
    "true_divide",
    "where",
    "xlogy",
]

# BEGIN unary rows: written by scripts/gen_stubs.py from the rows of the core's unary
# tables (_core._unary_rows()); edit the rows, not these lines.
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
exp = _unary("exp")
exp2 = _unary("exp2")
expm1 = _unary("expm1")
log = _unary("log")
log1p = _unary("log1p")
log2 = _unary("log2")
log10 = _unary("log10")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
asin = _unary("asin")
arcsin = _unary("arcsin")
acos = _unary("acos")
arccos = _unary("arccos")
atan = _unary("atan")
arctan = _unary("arctan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")
asinh = _unary("asinh")
arcsinh = _unary("arcsinh")
acosh = _unary("acosh")
arccosh = _unary("arccosh")
atanh = _unary("atanh")
arctanh = _unary("arctanh")
sigmoid = _unary("sigmoid")
erf = _unary("erf")
erfc = _unary("erfc")
reciprocal = _unary("reciprocal")
lgamma = _unary("lgamma")
digamma = _unary("digamma")
erfinv = _unary("erfinv")
i0 = _unary("i0")
sinc = _unary("sinc")
neg = _unary("neg")
negative = _unary("negative")
abs = _unary("abs")
absolute = _unary("absolute")
sign = _unary("sign")
floor = _unary("floor")
ceil = _unary("ceil")
trunc = _unary("trunc")
fix = _unary("fix")
relu = _unary("relu")
__all__ += [
    "sqrt",
    "rsqrt",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "arcsin",
    "acos",
    "arccos",
    "atan",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "arcsinh",
    "acosh",
    "arccosh",
    "atanh",
    "arctanh",
    "sigmoid",
    "erf",
    "erfc",
    "reciprocal",
    "lgamma",
    "digamma",
    "erfinv",
    "i0",
    "sinc",
    "neg",
    "negative",
    "abs",
    "absolute",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "fix",
    "relu",
]
# END unary rows
