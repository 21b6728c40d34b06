"""Module-level forms of the pointwise operations (``ferrograd.exp(t)``...).

Each function takes torch's argument names (``input``, ``other``, ``alpha``,
``exponent``...) and an optional ``out=`` tensor of the result's shape that
receives the result (which must be castable to its dtype). A Python number
is accepted where torch accepts a Scalar, including as the first operand of
binary ops (``ferrograd.pow(2, t)``, ``ferrograd.add(1, t)``).
"""

from __future__ import annotations

from ._core import Tensor, _wrap_number


def _tensor(x):
    """A tensor operand: tensors pass through, numbers become wrapped scalars."""
    return x if isinstance(x, Tensor) else _wrap_number(x)


def _input(x, fn: str):
    """``x`` if it is a tensor, else torch's TypeError for a non-tensor ``input``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _finish(result, out):
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"out must be a Tensor, not {type(out).__name__}")
    return out._store_out(result)


def _unary(name, method=None):
    method = getattr(Tensor, method or name)

    def op(input, *, out=None):
        return _finish(method(input), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}(input, *, out=None)``: elementwise; see ``Tensor.{name}``."
    return op


def _binary(name, method=None):
    method = getattr(Tensor, method or name)

    def op(input, other, *, out=None):
        return _finish(method(_tensor(input), other), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{name}(input, other, *, out=None)``: elementwise; see ``Tensor.{name}``."
    return op


_UNARY = [
    "abs", "absolute", "acos", "angle", "conj_physical", "sgn", "acosh", "arccos", "arccosh",
    "arcsin", "arcsinh", "arctan",
    "arctanh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil", "cos", "cosh", "erf",
    "erfc", "exp", "exp2", "expm1", "fix", "floor", "frac", "isfinite", "isinf", "isnan",
    "isneginf", "isposinf", "log", "log10", "log1p", "log2", "logical_not", "neg", "negative",
    "positive", "reciprocal", "relu", "rsqrt", "sigmoid", "sign", "signbit", "sin", "sinh",
    "sqrt", "square", "tan", "tanh", "trunc",
]  # fmt: skip

_BINARY = [
    "arctan2", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "floor_divide", "fmod",
    "ge", "greater", "greater_equal", "gt", "le", "less", "less_equal", "logical_and",
    "logical_or", "logical_xor", "lt", "maximum", "minimum", "mul", "multiply", "ne",
    "not_equal", "remainder", "true_divide",
]  # fmt: skip

for _name in _UNARY:
    globals()[_name] = _unary(_name)
for _name in _BINARY:
    globals()[_name] = _binary(_name)
del _name

# In-place module functions torch exposes (``torch.relu_(t)``...).
relu_ = Tensor.relu_
sigmoid_ = Tensor.sigmoid_
exp_ = Tensor.exp_
clamp_ = Tensor.clamp_
clip_ = Tensor.clip_


def add(input, other, *, alpha=1, out=None):
    """``add(input, other, *, alpha=1)``: ``input + alpha * other``."""
    return _finish(_tensor(input).add(other, alpha=alpha), out)


def sub(input, other, *, alpha=1, out=None):
    """``sub(input, other, *, alpha=1)``: ``input - alpha * other``."""
    return _finish(_tensor(input).sub(other, alpha=alpha), out)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``rsub(input, other, *, alpha=1)``: ``other - alpha * input``."""
    return _tensor(input)._rsub(other, alpha=alpha)


def div(input, other, *, rounding_mode=None, out=None):
    """``div(input, other, *, rounding_mode=None)``: true, ``"trunc"`` or ``"floor"`` division."""
    return _finish(_tensor(input).div(other, rounding_mode=rounding_mode), out)


divide = div


def pow(input, exponent, *, out=None):  # noqa: A001
    """``pow(input, exponent)``: either may be a number (``pow(2, t)``)."""
    return _finish(_tensor(input).pow(exponent), out)


def round(input, *, decimals=0, out=None):  # noqa: A001
    """``round(input, *, decimals=0)``: half to even, at ``decimals`` places."""
    return _finish(_input(input, "round").round(decimals=decimals), out)


def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    """``clamp(input, min=None, max=None)``: bounds are numbers or tensors."""
    return _finish(_input(input, "clamp").clamp(min, max), out)


clip = clamp


def clamp_min(input, min, *, out=None):  # noqa: A002
    """``clamp_min(input, min)``."""
    return _finish(_input(input, "clamp_min").clamp_min(min), out)


def clamp_max(input, max, *, out=None):  # noqa: A002
    """``clamp_max(input, max)``."""
    return _finish(_input(input, "clamp_max").clamp_max(max), out)


def where(condition, input=None, other=None, *, out=None):
    """``where(condition, input, other)``: ``input`` where ``condition``, else ``other``.

    ``input`` and ``other`` may be numbers. ``where(condition)`` alone is
    ``condition.nonzero(as_tuple=True)``.
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


def lerp(input, end, weight, *, out=None):
    """``lerp(input, end, weight)``: ``input + weight * (end - input)``."""
    return _finish(_input(input, "lerp").lerp(end, weight), out)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``addcmul(input, tensor1, tensor2, *, value=1)``: ``input + value * tensor1 * tensor2``."""
    return _finish(_input(input, "addcmul").addcmul(tensor1, tensor2, value=value), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``addcdiv(input, tensor1, tensor2, *, value=1)``: ``input + value * tensor1 / tensor2``."""
    return _finish(_input(input, "addcdiv").addcdiv(tensor1, tensor2, value=value), out)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)``."""
    return _input(input, "isclose").isclose(other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``allclose(...)``: a Python bool, whether ``isclose`` holds everywhere."""
    return _input(input, "allclose").allclose(other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def equal(input, other):
    """``equal(input, other)``: True if both have the same shape and values."""
    return _input(input, "equal").equal(other)


def conj(input):
    """``conj(input)``: the complex conjugate (``input`` itself if real)."""
    return _input(input, "conj").conj()


def real(input):
    """``real(input)``: the real parts, a view (``input`` itself if real)."""
    return _input(input, "real").real


def imag(input):
    """``imag(input)``: the imaginary parts of a complex tensor, a view."""
    return _input(input, "imag").imag


resolve_conj = Tensor.resolve_conj
resolve_neg = Tensor.resolve_neg
is_conj = Tensor.is_conj
is_neg = Tensor.is_neg

__all__ = sorted(
    [*_UNARY, *_BINARY]
    + [
        "add", "addcdiv", "addcmul", "allclose", "clamp", "clamp_", "clamp_max", "clamp_min",
        "clip", "clip_", "conj", "div", "divide", "equal", "exp_", "imag", "is_conj", "is_neg",
        "isclose", "lerp", "pow", "real", "relu_", "resolve_conj", "resolve_neg", "round",
        "rsub", "sigmoid_", "sub", "subtract", "where",
    ]
)  # fmt: skip
