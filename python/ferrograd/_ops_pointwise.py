"""Module-level forms of the pointwise operations (``ferrograd.exp(t)``...).

Each function takes torch's argument names (``input``, ``other``, ``alpha``,
``exponent``...) and an optional ``out=`` tensor of the result's shape that
receives the result (which must be castable to its dtype). A Python number
is accepted where torch accepts a Scalar, including as the first operand of
binary ops (``ferrograd.pow(2, t)``, ``ferrograd.add(1, t)``).
"""

from __future__ import annotations

import textwrap
from typing import Any, Protocol

from ._core import Tensor, _wrap_number

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


# ----------------------------------------------------------------- docs
# The module-level docs of the functions made by the factories above, of the
# aliases and of the Tensor methods exposed here (``DOCS``): the factories
# give each function its entry, and ``ferrograd`` applies the others when it
# routes them. Factory-made functions share a template filled with their
# summary, dtype rule and example.

_FLOAT = "Integer and bool inputs give a result of the default float dtype; complex inputs are supported."
_FLOAT_REAL = (
    "Integer and bool inputs give a result of the default float dtype; complex inputs are not supported."
)
_SAME = (
    "The result has the dtype of ``input``, except that a complex input gives the matching real dtype; "
    "bool inputs are not supported."
)
_SAME_ALL = "The result has the dtype of ``input``."
_ANGLE = (
    "Integer and bool inputs give a result of the default float dtype; a complex input gives the matching "
    "real dtype."
)
_INTBOOL = "Only integer and bool inputs are supported; the result has the dtype of ``input``."
_ROUND = "Integer inputs are returned unchanged, with their dtype; bool and complex inputs are not supported."
_FRAC = "Only floating-point inputs are supported."
_BOOL = "The result is a ``bool`` tensor of the shape of ``input``."
_BOOL_REAL = "The result is a ``bool`` tensor of the shape of ``input``; complex inputs are not supported."
_NEG = (
    "The result has the dtype of ``input``; bool inputs are not supported (see "
    ":func:`ferrograd.logical_not`)."
)
_RELU = "The result has the dtype of ``input``; bool and complex inputs are not supported."
_SIGN = (
    "The result has the dtype of ``input``; complex inputs are not supported (see :func:`ferrograd.sgn`)."
)
_SQUARE = "The result has the dtype of ``input``, except that bools give ``int64``."
_B_FLOAT = (
    "``input`` and ``other`` are broadcast together (either may be a number); integer and bool inputs "
    "give a result of the default float dtype."
)
_B_INTBOOL = (
    "``input`` and ``other`` are broadcast together and must be integer or bool tensors or numbers; "
    "their dtypes are promoted."
)
_B_CMP = (
    "``input`` and ``other`` are broadcast together (either may be a number) and compared after type "
    "promotion; the result is a ``bool`` tensor."
)
_B_ARITH = (
    "``input`` and ``other`` are broadcast together (either may be a number) and their dtypes promoted "
    "as torch does: a Python number or 0-dim tensor only changes the kind of the result (integer to "
    "float...), not the width of a dimensioned tensor's dtype."
)
_B_LOGIC = (
    "``input`` and ``other`` are broadcast together and may have any dtypes (non-zero counts as True); "
    "the result is a ``bool`` tensor."
)
_OUT = """    Keyword args:
        out (Tensor, optional): a tensor of the result's shape that receives
            the result (its dtype must be one the result can be cast to)."""

_UNARY_DOCS: dict[str, tuple[str, str, str, str]] = {
    "abs": (
        "Computes the absolute value of each element: ``|input|`` (the modulus for complex inputs, "
        "giving a real tensor).",
        _SAME, "[-1.5, 0.0, 2.0]", "tensor([1.5000, 0.0000, 2.0000])",
    ),
    "acos": (
        "Computes the inverse cosine of each element, in radians: ``arccos(input)``; NaN outside "
        "``[-1, 1]``.",
        _FLOAT, "[-1.0, 0.0, 1.0]", "tensor([3.1416, 1.5708, 0.0000])",
    ),
    "acosh": (
        "Computes the inverse hyperbolic cosine of each element: ``arccosh(input)``; NaN below 1.",
        _FLOAT, "[1.0, 2.0, 10.0]", "tensor([0.0000, 1.3170, 2.9932])",
    ),
    "angle": (
        "Computes the angle (argument) of each element, in radians: ``atan2(imag, real)`` for complex"
        " inputs; for real inputs 0 for non-negative values and pi for negative ones.",
        _ANGLE, "[-2.0, 0.0, 3.0]", "tensor([3.1416, 0.0000, 0.0000])",
    ),
    "asin": (
        "Computes the inverse sine of each element, in radians: ``arcsin(input)``; NaN outside ``[-1,"
        " 1]``.",
        _FLOAT, "[-1.0, 0.0, 0.5]", "tensor([-1.5708,  0.0000,  0.5236])",
    ),
    "asinh": (
        "Computes the inverse hyperbolic sine of each element: ``arcsinh(input)``.",
        _FLOAT, "[-1.0, 0.0, 2.0]", "tensor([-0.8814,  0.0000,  1.4436])",
    ),
    "atan": (
        "Computes the inverse tangent of each element, in radians: ``arctan(input)``, in ``(-pi/2, "
        "pi/2)``.",
        _FLOAT, "[-1.0, 0.0, 10.0]", "tensor([-0.7854,  0.0000,  1.4711])",
    ),
    "atanh": (
        "Computes the inverse hyperbolic tangent of each element: ``arctanh(input)``; infinite at -1 "
        "and 1, NaN outside ``[-1, 1]``.",
        _FLOAT, "[-0.5, 0.0, 0.5]", "tensor([-0.5493,  0.0000,  0.5493])",
    ),
    "bitwise_not": (
        "Computes the bitwise NOT of each element: ``~input`` (logical NOT for bools).",
        _INTBOOL, "[0, 5, -3]", "tensor([-1, -6,  2])",
    ),
    "ceil": (
        "Rounds each element up to the nearest integer: ``ceil(input)``.",
        _ROUND, "[-1.5, 0.2, 2.0]", "tensor([-1.,  1.,  2.])",
    ),
    "conj_physical": (
        "Computes the complex conjugate of each element into new memory: ``real - 1j * imag`` (a copy"
        " of ``input`` for real tensors). :func:`ferrograd.conj` gives a lazy view instead.",
        _SAME_ALL, "[1 + 2j, 3 - 1j]", "tensor([1.-2.j, 3.+1.j])",
    ),
    "cos": (
        "Computes the cosine of each element (in radians): ``cos(input)``.",
        _FLOAT, "[0.0, 1.0, 3.1416]", "tensor([ 1.0000,  0.5403, -1.0000])",
    ),
    "cosh": (
        "Computes the hyperbolic cosine of each element: ``cosh(input)``.",
        _FLOAT, "[-1.0, 0.0, 1.0]", "tensor([1.5431, 1.0000, 1.5431])",
    ),
    "erf": (
        "Computes the error function of each element: ``erf(x) = 2/sqrt(pi) * integral from 0 to x of"
        " exp(-t**2) dt``.",
        _FLOAT_REAL, "[-1.0, 0.0, 0.5]", "tensor([-0.8427,  0.0000,  0.5205])",
    ),
    "erfc": (
        "Computes the complementary error function of each element: ``erfc(x) = 1 - erf(x)``, "
        "accurate where ``erf(x)`` is close to 1.",
        _FLOAT_REAL, "[-1.0, 0.0, 3.0]", "tensor([1.8427e+00, 1.0000e+00, 2.2090e-05])",
    ),
    "exp": (
        "Computes the exponential of each element: ``e ** input``.",
        _FLOAT, "[0.0, 1.0, -1.0]", "tensor([1.0000, 2.7183, 0.3679])",
    ),
    "exp2": (
        "Computes 2 to the power of each element: ``2 ** input``.",
        _FLOAT, "[0.0, 3.0, -1.0]", "tensor([1.0000, 8.0000, 0.5000])",
    ),
    "expm1": (
        "Computes ``exp(input) - 1`` for each element, accurately for small inputs.",
        _FLOAT, "[0.0, 1e-5, 1.0]", "tensor([0.0000e+00, 1.0000e-05, 1.7183e+00])",
    ),
    "floor": (
        "Rounds each element down to the nearest integer: ``floor(input)``.",
        _ROUND, "[-1.5, 0.2, 2.0]", "tensor([-2.,  0.,  2.])",
    ),
    "frac": (
        "Computes the fractional part of each element: ``input - trunc(input)`` (negative for "
        "negative inputs).",
        _FRAC, "[-1.5, 0.25, 2.0]", "tensor([-0.5000,  0.2500,  0.0000])",
    ),
    "isfinite": (
        "Tests each element for being finite (neither infinite nor NaN).",
        _BOOL, "[1.0, np.inf, np.nan]", "tensor([ True, False, False])",
    ),
    "isinf": (
        "Tests each element for being positive or negative infinity.",
        _BOOL, "[1.0, np.inf, -np.inf]", "tensor([False,  True,  True])",
    ),
    "isnan": (
        "Tests each element for being NaN.",
        _BOOL, "[1.0, np.nan, np.inf]", "tensor([False,  True, False])",
    ),
    "isneginf": (
        "Tests each element for being negative infinity.",
        _BOOL_REAL, "[1.0, np.inf, -np.inf]", "tensor([False, False,  True])",
    ),
    "isposinf": (
        "Tests each element for being positive infinity.",
        _BOOL_REAL, "[1.0, np.inf, -np.inf]", "tensor([False,  True, False])",
    ),
    "log": (
        "Computes the natural logarithm of each element: ``ln(input)``; ``-inf`` at 0, NaN for "
        "negative inputs.",
        _FLOAT, "[1.0, 2.7183, 0.0]", "tensor([0.0000, 1.0000,   -inf])",
    ),
    "log10": (
        "Computes the base-10 logarithm of each element: ``log10(input)``.",
        _FLOAT, "[1.0, 10.0, 1000.0]", "tensor([0., 1., 3.])",
    ),
    "log1p": (
        "Computes ``ln(1 + input)`` for each element, accurately for small inputs.",
        _FLOAT, "[0.0, 1e-5, 1.0]", "tensor([0.0000e+00, 9.9999e-06, 6.9315e-01])",
    ),
    "log2": (
        "Computes the base-2 logarithm of each element: ``log2(input)``.",
        _FLOAT, "[1.0, 2.0, 8.0]", "tensor([0., 1., 3.])",
    ),
    "logical_not": (
        "Computes the logical NOT of each element: True where the element is zero, False elsewhere.",
        _BOOL, "[0, 1, 2]", "tensor([ True, False, False])",
    ),
    "neg": (
        "Negates each element: ``-input``.",
        _NEG, "[1.0, -2.0, 0.0]", "tensor([-1.,  2., -0.])",
    ),
    "positive": (
        "Returns ``input`` itself (the unary ``+``); kept for compatibility with NumPy and torch.",
        _NEG, "[1.0, -2.0]", "tensor([ 1., -2.])",
    ),
    "reciprocal": (
        "Computes the reciprocal of each element: ``1 / input`` (infinite at 0).",
        _FLOAT, "[1.0, 2.0, -4.0]", "tensor([ 1.0000,  0.5000, -0.2500])",
    ),
    "relu": (
        "Applies the rectified linear unit to each element: ``max(input, 0)``.",
        _RELU, "[-1.0, 0.0, 2.0]", "tensor([0., 0., 2.])",
    ),
    "rsqrt": (
        "Computes the reciprocal of the square root of each element: ``1 / sqrt(input)``.",
        _FLOAT, "[1.0, 4.0, 0.25]", "tensor([1.0000, 0.5000, 2.0000])",
    ),
    "sgn": (
        "Computes the sign of each element, extended to complex numbers: ``input / |input|`` (0 where"
        " ``input`` is 0); for real inputs the same as :func:`ferrograd.sign`.",
        _SAME_ALL, "[3 + 4j, -2, 0]", "tensor([ 0.6000+0.8000j, -1.0000+0.0000j,  0.0000+0.0000j])",
    ),
    "sigmoid": (
        "Applies the logistic sigmoid to each element: ``1 / (1 + exp(-input))``.",
        _FLOAT, "[-2.0, 0.0, 2.0]", "tensor([0.1192, 0.5000, 0.8808])",
    ),
    "sign": (
        "Computes the sign of each element: -1, 0 or 1.",
        _SIGN, "[-3.0, 0.0, 2.5]", "tensor([-1.,  0.,  1.])",
    ),
    "signbit": (
        "Tests whether the sign bit of each element is set: True for negative values, including "
        "``-0.0``.",
        _BOOL_REAL, "[-1.0, -0.0, 0.0, 2.0]", "tensor([ True,  True, False, False])",
    ),
    "sin": (
        "Computes the sine of each element (in radians): ``sin(input)``.",
        _FLOAT, "[0.0, 1.5708, -1.0]", "tensor([ 0.0000,  1.0000, -0.8415])",
    ),
    "sinh": (
        "Computes the hyperbolic sine of each element: ``sinh(input)``.",
        _FLOAT, "[-1.0, 0.0, 1.0]", "tensor([-1.1752,  0.0000,  1.1752])",
    ),
    "sqrt": (
        "Computes the square root of each element: ``sqrt(input)``; NaN for negative real inputs.",
        _FLOAT, "[0.0, 4.0, 2.0]", "tensor([0.0000, 2.0000, 1.4142])",
    ),
    "square": (
        "Squares each element: ``input * input``.",
        _SQUARE, "[-2.0, 0.5, 3.0]", "tensor([4.0000, 0.2500, 9.0000])",
    ),
    "tan": (
        "Computes the tangent of each element (in radians): ``tan(input)``.",
        _FLOAT, "[0.0, 0.7854, -1.0]", "tensor([ 0.0000,  1.0000, -1.5574])",
    ),
    "tanh": (
        "Computes the hyperbolic tangent of each element: ``tanh(input)``, in ``(-1, 1)``.",
        _FLOAT, "[-2.0, 0.0, 0.5]", "tensor([-0.9640,  0.0000,  0.4621])",
    ),
    "trunc": (
        "Rounds each element toward zero, dropping its fractional part: ``trunc(input)``.",
        _ROUND, "[-1.7, 0.2, 2.9]", "tensor([-1.,  0.,  2.])",
    ),
}
_BINARY_DOCS: dict[str, tuple[str, str, str, str, str]] = {
    "atan2": (
        "Computes the angle of the point ``(other, input)`` for each pair of elements: ``atan2(input,"
        " other)``, in radians in ``[-pi, pi]``, with the quadrant taken from both signs.",
        _B_FLOAT, "[1.0, 1.0, -1.0]", "ferrograd.tensor([1.0, -1.0, -1.0])",
        "tensor([ 0.7854,  2.3562, -2.3562])",
    ),
    "bitwise_and": (
        "Computes the bitwise AND of each pair of elements: ``input & other`` (logical AND for "
        "bools).",
        _B_INTBOOL, "[12, 10, 7]", "6", "tensor([4, 2, 6])",
    ),
    "bitwise_or": (
        "Computes the bitwise OR of each pair of elements: ``input | other`` (logical OR for bools).",
        _B_INTBOOL, "[12, 10, 7]", "6", "tensor([14, 14,  7])",
    ),
    "bitwise_xor": (
        "Computes the bitwise exclusive OR of each pair of elements: ``input ^ other`` (logical XOR "
        "for bools).",
        _B_INTBOOL, "[12, 10, 7]", "6", "tensor([10, 12,  1])",
    ),
    "eq": (
        "Tests each pair of elements for equality: ``input == other``.",
        _B_CMP, "[1, 2, 3]", "ferrograd.tensor([1, 0, 3])", "tensor([ True, False,  True])",
    ),
    "ne": (
        "Tests each pair of elements for inequality: ``input != other``.",
        _B_CMP, "[1, 2, 3]", "ferrograd.tensor([1, 0, 3])", "tensor([False,  True, False])",
    ),
    "ge": (
        "Tests ``input >= other`` for each pair of elements.",
        _B_CMP, "[1, 2, 3]", "2", "tensor([False,  True,  True])",
    ),
    "gt": (
        "Tests ``input > other`` for each pair of elements.",
        _B_CMP, "[1, 2, 3]", "2", "tensor([False, False,  True])",
    ),
    "le": (
        "Tests ``input <= other`` for each pair of elements.",
        _B_CMP, "[1, 2, 3]", "2", "tensor([ True,  True, False])",
    ),
    "lt": (
        "Tests ``input < other`` for each pair of elements.",
        _B_CMP, "[1, 2, 3]", "2", "tensor([ True, False, False])",
    ),
    "floor_divide": (
        "Divides each pair of elements and rounds the quotient down: ``floor(input / other)``, the "
        "same as ``div(input, other, rounding_mode='floor')`` and Python's ``//``.",
        _B_ARITH, "[7, -7, 7]", "2", "tensor([ 3, -4,  3])",
    ),
    "fmod": (
        "Computes the remainder of each division, with the sign of the dividend ``input`` (C's "
        "``fmod``): ``input - trunc(input / other) * other``.",
        _B_ARITH, "[7, -7, 5]", "3", "tensor([ 1, -1,  2])",
    ),
    "remainder": (
        "Computes the remainder of each division, with the sign of the divisor ``other`` (Python's "
        "``%``): ``input - floor(input / other) * other``.",
        _B_ARITH, "[7, -7, 5]", "3", "tensor([1, 2, 2])",
    ),
    "logical_and": (
        "Computes the logical AND of each pair of elements (non-zero counts as True).",
        _B_LOGIC, "[True, True, False]", "ferrograd.tensor([True, False, False])",
        "tensor([ True, False, False])",
    ),
    "logical_or": (
        "Computes the logical OR of each pair of elements (non-zero counts as True).",
        _B_LOGIC, "[True, True, False]", "ferrograd.tensor([True, False, False])",
        "tensor([ True,  True, False])",
    ),
    "logical_xor": (
        "Computes the logical exclusive OR of each pair of elements (non-zero counts as True).",
        _B_LOGIC, "[True, True, False]", "ferrograd.tensor([True, False, False])",
        "tensor([False,  True, False])",
    ),
    "maximum": (
        "Takes the larger of each pair of elements; NaN wins over any number.",
        _B_ARITH, "[1.0, 5.0, 3.0]", "ferrograd.tensor([4.0, 2.0, np.nan])", "tensor([4., 5., nan])",
    ),
    "minimum": (
        "Takes the smaller of each pair of elements; NaN wins over any number.",
        _B_ARITH, "[1.0, 5.0, 3.0]", "ferrograd.tensor([4.0, 2.0, np.nan])", "tensor([1., 2., nan])",
    ),
    "mul": (
        "Multiplies each pair of elements: ``input * other``.",
        _B_ARITH, "[1.0, 2.0, 3.0]", "ferrograd.tensor([2.0, 0.5, -1.0])", "tensor([ 2.,  1., -3.])",
    ),
}
_ALIASES = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctanh": "atanh", "fix": "trunc", "negative": "neg", "arctan2": "atan2",
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "multiply": "mul",
    "not_equal": "ne",
}  # fmt: skip


def _fill(text: str) -> str:
    """``text`` wrapped for a docstring paragraph indented by 4 spaces."""
    return textwrap.fill(text, 76, initial_indent="    ", subsequent_indent="    ")[4:]


def _unary_doc(name: str, summary: str, dtypes: str, example: str, result: str) -> str:
    return f"""{name}(input, *, out=None) -> Tensor

    {_fill(summary)}

    {_fill(dtypes)}

    Args:
        input (Tensor): the input tensor.

{_OUT}

    Example:
        >>> ferrograd.{name}(ferrograd.tensor({example}))
        {result}
    """


def _binary_doc(name: str, summary: str, dtypes: str, first: str, second: str, result: str) -> str:
    return f"""{name}(input, other, *, out=None) -> Tensor

    {_fill(summary)}

    {_fill(dtypes)}

    Args:
        input (Tensor or Number): the first operand.
        other (Tensor or Number): the second operand.

{_OUT}

    Example:
        >>> ferrograd.{name}(ferrograd.tensor({first}), {second})
        {result}
    """


def _alias_doc(name: str, target: str) -> str:
    args = "input, *, out=None" if target in _UNARY_DOCS else "input, other, *, out=None"
    return f"""{name}({args}) -> Tensor

    Alias for :func:`ferrograd.{target}`.
    """


def _inplace_doc(name: str, signature: str) -> str:
    return f"""{name}({signature}) -> Tensor

    In-place version of :func:`ferrograd.{name[:-1]}`: writes the result into
    ``input`` and returns ``input``.
    """


DOCS: dict[str, str] = {
    **{name: _unary_doc(name, *spec) for name, spec in _UNARY_DOCS.items()},
    **{name: _binary_doc(name, *spec) for name, spec in _BINARY_DOCS.items()},
    **{name: _alias_doc(name, target) for name, target in _ALIASES.items()},
    "true_divide": """true_divide(input, other, *, out=None) -> Tensor

    Alias for :func:`ferrograd.div` without ``rounding_mode``.
    """,
    "subtract": """subtract(input, other, *, alpha=1, out=None) -> Tensor

    Alias for :func:`ferrograd.sub`.
    """,
    "divide": """divide(input, other, *, rounding_mode=None, out=None) -> Tensor

    Alias for :func:`ferrograd.div`.
    """,
    "clip": """clip(input, min=None, max=None, *, out=None) -> Tensor

    Alias for :func:`ferrograd.clamp`.
    """,
    "relu_": _inplace_doc("relu_", "input"),
    "sigmoid_": _inplace_doc("sigmoid_", "input"),
    "exp_": _inplace_doc("exp_", "input"),
    "clamp_": _inplace_doc("clamp_", "input, min=None, max=None"),
    "clip_": """clip_(input, min=None, max=None) -> Tensor

    Alias for :func:`ferrograd.clamp_`.
    """,
    "resolve_conj": """resolve_conj(input) -> Tensor

    Returns ``input`` with any pending (lazy) conjugation applied. ferrograd
    conjugates eagerly (:func:`ferrograd.is_conj` is always False), so the
    result equals ``input``; kept for code written for torch.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.resolve_conj(ferrograd.conj(ferrograd.tensor([1 + 2j])))
        tensor([1.-2.j])
    """,
    "resolve_neg": """resolve_neg(input) -> Tensor

    Returns ``input`` with any pending (lazy) negation applied. ferrograd has
    no lazy negation, so this returns ``input`` itself; kept for code
    written for torch.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> ferrograd.resolve_neg(x) is x
        True
    """,
    "is_conj": """is_conj(input) -> bool

    Returns whether ``input`` is a lazily conjugated view: always False,
    since :func:`ferrograd.conj` conjugates eagerly.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.is_conj(ferrograd.conj(ferrograd.tensor([1 + 2j])))
        False
    """,
    "is_neg": """is_neg(input) -> bool

    Returns whether ``input`` is a lazily negated view: always False, since
    ferrograd has no lazy negation.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.is_neg(ferrograd.tensor([1.0]))
        False
    """,
}


# One line per function (not a loop over the lists), so that type checkers see them.
abs = _unary("abs")
absolute = _unary("absolute")
acos = _unary("acos")
angle = _unary("angle")
conj_physical = _unary("conj_physical")
sgn = _unary("sgn")
acosh = _unary("acosh")
arccos = _unary("arccos")
arccosh = _unary("arccosh")
arcsin = _unary("arcsin")
arcsinh = _unary("arcsinh")
arctan = _unary("arctan")
arctanh = _unary("arctanh")
asin = _unary("asin")
asinh = _unary("asinh")
atan = _unary("atan")
atanh = _unary("atanh")
bitwise_not = _unary("bitwise_not")
ceil = _unary("ceil")
cos = _unary("cos")
cosh = _unary("cosh")
erf = _unary("erf")
erfc = _unary("erfc")
exp = _unary("exp")
exp2 = _unary("exp2")
expm1 = _unary("expm1")
fix = _unary("fix")
floor = _unary("floor")
frac = _unary("frac")
isfinite = _unary("isfinite")
isinf = _unary("isinf")
isnan = _unary("isnan")
isneginf = _unary("isneginf")
isposinf = _unary("isposinf")
log = _unary("log")
log10 = _unary("log10")
log1p = _unary("log1p")
log2 = _unary("log2")
logical_not = _unary("logical_not")
neg = _unary("neg")
negative = _unary("negative")
positive = _unary("positive")
reciprocal = _unary("reciprocal")
relu = _unary("relu")
rsqrt = _unary("rsqrt")
sigmoid = _unary("sigmoid")
sign = _unary("sign")
signbit = _unary("signbit")
sin = _unary("sin")
sinh = _unary("sinh")
sqrt = _unary("sqrt")
square = _unary("square")
tan = _unary("tan")
tanh = _unary("tanh")
trunc = _unary("trunc")
arctan2 = _binary("arctan2")
atan2 = _binary("atan2")
bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.add(a, 1, alpha=2)
        tensor([3., 4., 5.])
        >>> ferrograd.add(a, ferrograd.tensor([[0.0], [10.0]]))
        tensor([[ 1.,  2.,  3.],
                [11., 12., 13.]])
    """
    return _finish(_tensor(input).add(other, alpha=alpha), out)


def sub(input: _TensorLike, other: _TensorLike, *, alpha: float = 1, out: Tensor | None = None) -> Tensor:
    """Subtracts ``other``, scaled by ``alpha``, from ``input``: ``input - alpha * other``.

    Broadcasting and type promotion are those of :func:`ferrograd.add`; bool
    tensors cannot be subtracted.

    Args:
        input (Tensor or Number): the first operand.
        other (Tensor or Number): the tensor or number to subtract.

    Keyword args:
        alpha (Number): the multiplier of ``other``. Default: 1.
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.pow(a, 2)
        tensor([1., 4., 9.])
        >>> ferrograd.pow(2, a)
        tensor([2., 4., 8.])
    """
    return _finish(_tensor(input).pow(exponent), out)


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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> ferrograd.round(ferrograd.tensor([0.5, 1.5, 2.5, -1.7]))
        tensor([ 0.,  2.,  2., -2.])
        >>> ferrograd.round(ferrograd.tensor([1.2345]), decimals=2)
        tensor([1.2300])
    """
    return _finish(_input(input, "round").round(decimals=decimals), out)


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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> x = ferrograd.tensor([-2.0, 0.5, 3.0])
        >>> ferrograd.clamp(x, -1, 1)
        tensor([-1.0000,  0.5000,  1.0000])
        >>> ferrograd.clamp(x, min=0)
        tensor([0.0000, 0.5000, 3.0000])
    """
    return _finish(_input(input, "clamp").clamp(min, max), out)


clip = clamp


def clamp_min(input: Tensor, min: _TensorLike, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Limits each element of ``input`` from below: ``maximum(input, min)``.

    Args:
        input (Tensor): the input tensor.
        min (Number or Tensor): the lower bound.

    Keyword args:
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> ferrograd.clamp_min(ferrograd.tensor([1.0, 2.0, 3.0]), 2)
        tensor([2., 2., 3.])
    """
    return _finish(_input(input, "clamp_min").clamp_min(min), out)


def clamp_max(input: Tensor, max: _TensorLike, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Limits each element of ``input`` from above: ``minimum(input, max)``.

    Args:
        input (Tensor): the input tensor.
        max (Number or Tensor): the upper bound.

    Keyword args:
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> ferrograd.clamp_max(ferrograd.tensor([1.0, 2.0, 3.0]), 2)
        tensor([1., 2., 2.])
    """
    return _finish(_input(input, "clamp_max").clamp_max(max), out)


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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

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


def lerp(input: Tensor, end: Tensor, weight: _TensorLike, *, out: Tensor | None = None) -> Tensor:
    """Interpolates linearly between ``input`` and ``end``: ``input + weight * (end - input)``.

    All three are broadcast together; ``weight`` may be a number or a tensor.

    Args:
        input (Tensor): the start values.
        end (Tensor): the end values.
        weight (float or Tensor): the interpolation weight (0 gives ``input``,
            1 gives ``end``).

    Keyword args:
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> start = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.lerp(start, ferrograd.full((3,), 10.0), 0.5)
        tensor([5.5000, 6.0000, 6.5000])
    """
    return _finish(_input(input, "lerp").lerp(end, weight), out)


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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> ferrograd.addcmul(a, a, a, value=0.5)
        tensor([1.5000, 4.0000, 7.5000])
    """
    return _finish(_input(input, "addcmul").addcmul(tensor1, tensor2, value=value), out)


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
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

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
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "addcdiv",
    "addcmul",
    "allclose",
    "angle",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "ceil",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_min",
    "clip",
    "clip_",
    "conj",
    "conj_physical",
    "cos",
    "cosh",
    "div",
    "divide",
    "eq",
    "equal",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "exp_",
    "expm1",
    "fix",
    "floor",
    "floor_divide",
    "fmod",
    "frac",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "imag",
    "is_conj",
    "is_neg",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "le",
    "lerp",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
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
    "neg",
    "negative",
    "not_equal",
    "positive",
    "pow",
    "real",
    "reciprocal",
    "relu",
    "relu_",
    "remainder",
    "resolve_conj",
    "resolve_neg",
    "round",
    "rsqrt",
    "rsub",
    "sgn",
    "sigmoid",
    "sigmoid_",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "sub",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "trunc",
    "where",
]
