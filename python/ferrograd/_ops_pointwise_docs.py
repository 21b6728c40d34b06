"""The docs of the module-level pointwise functions (``ferrograd.exp``...).

The docs of the functions the factories of ``_ops_pointwise`` make, of the
aliases and of the Tensor methods exposed there (``DOCS``): the factories
give each function its entry, and ``ferrograd`` applies the others when it
routes them. Factory-made functions share a template filled with their
summary, dtype rule and example.
"""

from __future__ import annotations

import textwrap

from ._core import _unary_rows

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
_B_INT = (
    "``input`` and ``other`` are broadcast together and must be integer tensors or numbers; their dtypes "
    "are promoted."
)
_B_NEXT = (
    "``input`` and ``other`` are broadcast together (either may be a number) and must promote to "
    "``float32`` or ``float64``."
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
    "digamma": (
        "Computes the digamma function of each element, the logarithmic derivative of the gamma "
        "function: ``digamma(x) = d/dx lgamma(x)`` (``-inf`` at 0, NaN at the negative integers).",
        _FLOAT_REAL, "[1.0, 0.5, 10.0]", "tensor([-0.5772, -1.9635,  2.2518])",
    ),
    "erfinv": (
        "Computes the inverse error function of each element: ``erf(erfinv(y)) = y`` for ``y`` in "
        "``(-1, 1)``, ``+-inf`` at ``+-1`` and NaN outside.",
        _FLOAT_REAL, "[0.0, 0.5, -1.0]", "tensor([0.0000, 0.4769,   -inf])",
    ),
    "i0": (
        "Computes the modified Bessel function of the first kind of order 0 of each element.",
        _FLOAT_REAL, "[0.0, 1.0, 5.0]", "tensor([ 1.0000,  1.2661, 27.2399])",
    ),
    "lgamma": (
        "Computes the natural logarithm of the absolute value of the gamma function of each element "
        "(``+inf`` at the non-positive integers).",
        _FLOAT_REAL, "[0.5, 3.0, 100.0]", "tensor([  0.5724,   0.6931, 359.1342])",
    ),
    "sinc": (
        "Computes the normalized sinc function of each element: ``sin(pi x) / (pi x)``, 1 at 0.",
        _FLOAT_REAL, "[0.0, 0.5, 1.5]", "tensor([ 1.0000,  0.6366, -0.2122])",
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
    "bitwise_left_shift": (
        "Shifts the bits of each element of ``input`` left by ``other``: ``input << other``; shifts "
        "by a negative amount or by the width of the dtype or more give 0.",
        _B_INT, "[1, 3, -2]", "2", "tensor([ 4, 12, -8])",
    ),
    "bitwise_right_shift": (
        "Shifts the bits of each element of ``input`` right by ``other``, keeping the sign: ``input >> "
        "other``; shifts by a negative amount or by the width of the dtype or more give 0 (-1 for a "
        "negative element).",
        _B_INT, "[16, 3, -8]", "2", "tensor([ 4,  0, -2])",
    ),
    "copysign": (
        "Takes the magnitude of each element of ``input`` with the sign of ``other`` (the sign bit, so "
        "``-0.0`` counts as negative).",
        _B_FLOAT, "[1.0, -2.0, 3.0]", "ferrograd.tensor([-1.0, 1.0, -0.0])", "tensor([-1.,  2., -3.])",
    ),
    "gcd": (
        "Computes the greatest common divisor of each pair of elements, always non-negative "
        "(``gcd(0, 0) = 0``).",
        _B_INT, "[4, -6, 0]", "ferrograd.tensor([6, 4, 5])", "tensor([2, 2, 5])",
    ),
    "hypot": (
        "Computes ``sqrt(input ** 2 + other ** 2)`` for each pair of elements, without overflow or "
        "underflow in the squares.",
        _B_FLOAT, "[3.0, 5.0, 1e200]", "ferrograd.tensor([4.0, 12.0, 1e200])",
        "tensor([ 5., 13., inf])",
    ),
    "lcm": (
        "Computes the least common multiple of each pair of elements, always non-negative (0 when "
        "either is 0).",
        _B_INT, "[4, -6, 0]", "ferrograd.tensor([6, 4, 5])", "tensor([12, 12,  0])",
    ),
    "logaddexp": (
        "Computes ``log(exp(input) + exp(other))`` for each pair of elements without overflow: useful "
        "to add probabilities kept as logarithms.",
        _B_FLOAT, "[-1.0, 0.0, 1000.0]", "ferrograd.tensor([-1.0, 1.0, 1000.0])",
        "tensor([-3.0685e-01,  1.3133e+00,  1.0007e+03])",
    ),
    "logaddexp2": (
        "Computes ``log2(2 ** input + 2 ** other)`` for each pair of elements without overflow.",
        _B_FLOAT, "[-1.0, 0.0, 1000.0]", "ferrograd.tensor([-1.0, 1.0, 1000.0])",
        "tensor([   0.0000,    1.5850, 1001.0000])",
    ),
    "nextafter": (
        "Returns the next representable floating-point value after each element of ``input`` toward "
        "the matching element of ``other`` (``other`` itself where they are equal). Not "
        "differentiable.",
        _B_NEXT, "[1.0, 1.0]", "ferrograd.tensor([2.0, 0.0])", "tensor([1.0000, 1.0000])",
    ),
    "xlogy": (
        "Computes ``input * log(other)`` for each pair of elements, with 0 where ``input`` is 0 and "
        "``other`` is not NaN (so ``0 * log(0)`` is 0).",
        _B_FLOAT, "[0.0, 2.0, 1.0]", "ferrograd.tensor([0.0, 3.0, np.nan])",
        "tensor([0.0000, 2.1972,    nan])",
    ),
    "mul": (
        "Multiplies each pair of elements: ``input * other``.",
        _B_ARITH, "[1.0, 2.0, 3.0]", "ferrograd.tensor([2.0, 0.5, -1.0])", "tensor([ 2.,  1., -3.])",
    ),
}
# The aliases the unary table rows declare (``| arcsin arcsin_``), and the others.
_ALIASES = {
    **{alias: name for _, name, _, aliases, _, _ in _unary_rows() for alias in aliases},
    "arctan2": "atan2", "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
    "multiply": "mul", "not_equal": "ne",
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


