"""``ferrograd.special``: torch.special's functions.

The gamma, error-function and Bessel families run elementwise kernels of
the core (float64 kernels; float32 and the 16-bit floats compute through
them and round once); the rest are the pointwise and reduction ops under
torch.special's names. Derivatives follow torch: the functions torch
differentiates have derivative rows (``LgammaBackward0``...), and the
Bessel functions of ``bessel_*``/``modified_bessel_*``, ``airy_ai``,
``spherical_bessel_j0`` and the orthogonal polynomials are not
differentiable there, so their results never require grad.
"""

from __future__ import annotations

import ferrograd as _fg

from ._core import Tensor
from ._ops_pointwise import _finish, _input, _tensor

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
    "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]  # fmt: skip

_Number = float | int | bool


_NONDIFF = " Not differentiable (as in torch): the result never requires grad."


def _out(fn_name: str, name: str, summary: str, example: str, result: str):
    """The one-input function ``name`` of the core's ``Tensor`` method ``fn_name``."""
    impl = getattr(Tensor, fn_name)

    def op(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return _finish(impl(_input(input, name)), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, *, out=None) -> Tensor

    {summary}

    Args:
        input (Tensor): the input tensor.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.{name}(ferrograd.tensor({example}))
        {result}
    """
    return op


def _nondiff(fn_name: str, name: str, summary: str, example: str, result: str):
    """:func:`_out` for a function torch does not differentiate (its doc says so)."""
    return _out(fn_name, name, summary + _NONDIFF, example, result)


expit = _out(
    "sigmoid", "expit",
    "The logistic sigmoid ``1 / (1 + exp(-x))``.",
    "[-1.0, 0.0, 2.0]", "tensor([0.2689, 0.5000, 0.8808])",
)
exp2 = _out(
    "exp2", "exp2",
    "``2 ** x`` for each element.",
    "[0.0, 3.0]", "tensor([1., 8.])",
)
expm1 = _out(
    "expm1", "expm1",
    "``exp(x) - 1``, accurate for small ``x``.",
    "[1e-10, 1.0]", "tensor([1.0000e-10, 1.7183e+00])",
)
log1p = _out(
    "log1p", "log1p",
    "``log(1 + x)``, accurate for small ``x``.",
    "[1e-10, 1.0]", "tensor([1.0000e-10, 6.9315e-01])",
)
erf = _out(
    "erf", "erf",
    "The error function.",
    "[0.0, 1.0]", "tensor([0.0000, 0.8427])",
)
erfc = _out(
    "erfc", "erfc",
    "The complementary error function ``1 - erf(x)``.",
    "[0.0, 3.0]", "tensor([1.0000e+00, 2.2090e-05])",
)
gammaln = _out(
    "lgamma", "gammaln",
    "``log|gamma(x)|``, the logarithm of the absolute value of the gamma function.",
    "[0.5, 3.0]", "tensor([0.5724, 0.6931])",
)
digamma = _out(
    "digamma", "digamma",
    "The digamma function, the logarithmic derivative of gamma (``-inf`` at 0).",
    "[1.0, 0.5]", "tensor([-0.5772, -1.9635])",
)
psi = _out(
    "digamma", "psi",
    "Alias for :func:`ferrograd.special.digamma`.",
    "[1.0, 0.5]", "tensor([-0.5772, -1.9635])",
)
erfinv = _out(
    "erfinv", "erfinv",
    "The inverse error function: ``erf(erfinv(y)) = y`` on ``(-1, 1)``.",
    "[0.0, 0.5]", "tensor([0.0000, 0.4769])",
)
erfcx = _out(
    "_special_erfcx", "erfcx",
    "The scaled complementary error function ``exp(x ** 2) * erfc(x)``, finite for large ``x``.",
    "[0.0, 30.0]", "tensor([1.0000, 0.0188])",
)
ndtri = _out(
    "_special_ndtri", "ndtri",
    "The inverse of :func:`ndtr`: the point below which a standard normal has probability ``p``.",
    "[0.5, 0.975]", "tensor([0.0000, 1.9600])",
)
log_ndtr = _out(
    "_special_log_ndtr", "log_ndtr",
    "The logarithm of the standard normal CDF, accurate far into the lower tail.",
    "[0.0, -40.0]", "tensor([-6.9315e-01, -8.0461e+02])",
)
i0 = _out(
    "i0", "i0",
    "The modified Bessel function of the first kind of order 0.",
    "[0.0, 1.0]", "tensor([1.0000, 1.2661])",
)
i0e = _out(
    "_special_i0e", "i0e",
    "The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) * i0(x)``.",
    "[0.0, 1.0]", "tensor([1.0000, 0.4658])",
)
i1 = _out(
    "_special_i1", "i1",
    "The modified Bessel function of the first kind of order 1.",
    "[0.0, 1.0]", "tensor([0.0000, 0.5652])",
)
i1e = _out(
    "_special_i1e", "i1e",
    "The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) * i1(x)``.",
    "[0.0, 1.0]", "tensor([0.0000, 0.2079])",
)
bessel_j0 = _nondiff(
    "_special_bessel_j0", "bessel_j0",
    "The Bessel function of the first kind of order 0.",
    "[0.0, 1.0]", "tensor([1.0000, 0.7652])",
)
bessel_j1 = _nondiff(
    "_special_bessel_j1", "bessel_j1",
    "The Bessel function of the first kind of order 1.",
    "[0.0, 1.0]", "tensor([0.0000, 0.4401])",
)
bessel_y0 = _nondiff(
    "_special_bessel_y0", "bessel_y0",
    "The Bessel function of the second kind of order 0 (``-inf`` at 0, NaN below).",
    "[1.0, 2.0]", "tensor([0.0883, 0.5104])",
)
bessel_y1 = _nondiff(
    "_special_bessel_y1", "bessel_y1",
    "The Bessel function of the second kind of order 1 (``-inf`` at 0, NaN below).",
    "[1.0, 2.0]", "tensor([-0.7812, -0.1070])",
)
modified_bessel_i0 = _nondiff(
    "_special_modified_bessel_i0", "modified_bessel_i0",
    "The modified Bessel function of the first kind of order 0.",
    "[0.0, 1.0]", "tensor([1.0000, 1.2661])",
)
modified_bessel_i1 = _nondiff(
    "_special_modified_bessel_i1", "modified_bessel_i1",
    "The modified Bessel function of the first kind of order 1.",
    "[0.0, 1.0]", "tensor([0.0000, 0.5652])",
)
modified_bessel_k0 = _nondiff(
    "_special_modified_bessel_k0", "modified_bessel_k0",
    "The modified Bessel function of the second kind of order 0.",
    "[1.0, 2.0]", "tensor([0.4210, 0.1139])",
)
modified_bessel_k1 = _nondiff(
    "_special_modified_bessel_k1", "modified_bessel_k1",
    "The modified Bessel function of the second kind of order 1.",
    "[1.0, 2.0]", "tensor([0.6019, 0.1399])",
)
scaled_modified_bessel_k0 = _nondiff(
    "_special_scaled_modified_bessel_k0", "scaled_modified_bessel_k0",
    "``exp(x) * K0(x)``, the scaled modified Bessel function of the second kind of order 0.",
    "[1.0, 2.0]", "tensor([1.1445, 0.8416])",
)
scaled_modified_bessel_k1 = _nondiff(
    "_special_scaled_modified_bessel_k1", "scaled_modified_bessel_k1",
    "``exp(x) * K1(x)``, the scaled modified Bessel function of the second kind of order 1.",
    "[1.0, 2.0]", "tensor([1.6362, 1.0335])",
)
airy_ai = _nondiff(
    "_special_airy_ai", "airy_ai",
    "The Airy function Ai.",
    "[0.0, -2.0]", "tensor([0.3550, 0.2274])",
)
spherical_bessel_j0 = _nondiff(
    "_special_spherical_bessel_j0", "spherical_bessel_j0",
    "The spherical Bessel function of the first kind of order 0, ``sin(x) / x``.",
    "[0.0, 1.0]", "tensor([1.0000, 0.8415])",
)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """round(input, *, decimals=0, out=None) -> Tensor

    Alias for :func:`ferrograd.round`.

    Args:
        input (Tensor): the input tensor.
        decimals (int): the number of decimal places to round to.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.round(ferrograd.tensor([1.26, -0.5]), decimals=1)
        tensor([ 1.3000, -0.5000])
    """
    return _fg.round(input, decimals=decimals, out=out)


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """logsumexp(input, dim, keepdim=False, *, out=None) -> Tensor

    Alias for :func:`ferrograd.logsumexp`.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints): the dimensions to reduce.
        keepdim (bool): whether the reduced dimensions are kept with size 1.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.logsumexp(ferrograd.tensor([0.0, 0.0]), 0)
        tensor(0.6931)
    """
    return _finish(_fg.logsumexp(input, dim, keepdim=keepdim), out)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """softmax(input, dim, *, dtype=None) -> Tensor

    Alias for :func:`ferrograd.softmax`.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension along which the result sums to 1.
        dtype (ferrograd.dtype, optional): the dtype ``input`` is cast to first.

    Example:
        >>> ferrograd.special.softmax(ferrograd.tensor([0.0, 0.0]), 0)
        tensor([0.5000, 0.5000])
    """
    return _fg.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """log_softmax(input, dim, *, dtype=None) -> Tensor

    Alias for :func:`ferrograd.log_softmax`.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension along which ``exp`` of the result sums to 1.
        dtype (ferrograd.dtype, optional): the dtype ``input`` is cast to first.

    Example:
        >>> ferrograd.special.log_softmax(ferrograd.tensor([0.0, 0.0]), 0)
        tensor([-0.6931, -0.6931])
    """
    return _fg.log_softmax(input, dim, dtype=dtype)


def xlogy(input: Tensor | _Number, other: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
    """xlogy(input, other, *, out=None) -> Tensor

    Alias for :func:`ferrograd.xlogy`.

    Args:
        input (Tensor or Number): the first operand.
        other (Tensor or Number): the second operand.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.xlogy(ferrograd.tensor([0.0, 2.0]), ferrograd.tensor([0.0, 3.0]))
        tensor([0.0000, 2.1972])
    """
    return _fg.xlogy(input, other, out=out)


def xlog1py(input: Tensor | _Number, other: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
    """xlog1py(input, other, *, out=None) -> Tensor

    Computes ``input * log1p(other)`` for each pair of elements (broadcast
    together; either may be a number), with 0 where ``input`` is 0 and
    ``other`` is not NaN. Differentiable in both operands.

    Args:
        input (Tensor or Number): the first operand.
        other (Tensor or Number): the second operand.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.xlog1py(ferrograd.tensor([0.0, 2.0]), ferrograd.tensor([-1.0, 1e-8]))
        tensor([0.0000e+00, 2.0000e-08])
    """
    return _finish(_tensor(input)._special_xlog1py(other), out)


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """logit(input, eps=None, *, out=None) -> Tensor

    Alias for :func:`ferrograd.logit`: the log-odds, clamped to
    ``[eps, 1 - eps]`` first when ``eps`` is given.

    Args:
        input (Tensor): probabilities.
        eps (float, optional): the clamping margin.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.logit(ferrograd.tensor([0.5, 0.75]))
        tensor([0.0000, 1.0986])
    """
    return _fg.logit(input, eps, out=out)


def sinc(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """sinc(input, *, out=None) -> Tensor

    The normalized sinc function ``sin(pi x) / (pi x)``, 1 at 0.

    Args:
        input (Tensor): the input tensor.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.sinc(ferrograd.tensor([0.0, 0.5, 1.0]))
        tensor([1.0000, 0.6366, 0.0000])
    """
    return _finish(_input(input, "sinc").sinc(), out)


def entr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """entr(input, *, out=None) -> Tensor

    The elementwise entropy term ``-x log(x)``: 0 at ``x = 0`` and ``-inf``
    for negative ``x``.

    Args:
        input (Tensor): the input tensor.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.entr(ferrograd.tensor([-0.5, 0.0, 0.5]))
        tensor([  -inf, 0.0000, 0.3466])
    """
    return _finish(_input(input, "entr")._special_entr(), out)


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """ndtr(input, *, out=None) -> Tensor

    The standard normal cumulative distribution function
    ``(1 + erf(x / sqrt(2))) / 2``, accurate to the relative precision of
    the dtype in both tails.

    Args:
        input (Tensor): the input tensor.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.ndtr(ferrograd.tensor([-3.0, 0.0, 1.0]))
        tensor([0.0013, 0.5000, 0.8413])
    """
    return _finish(_input(input, "ndtr")._special_ndtr(), out)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """polygamma(n, input, *, out=None) -> Tensor

    Alias for :func:`ferrograd.polygamma`.

    Args:
        n (int): the order of the derivative of digamma, at least 0.
        input (Tensor): the input tensor.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.polygamma(2, ferrograd.tensor([1.0]))
        tensor([-2.4041])
    """
    return _fg.polygamma(n, input, out=out)


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """multigammaln(input, p, *, out=None) -> Tensor

    Alias for :func:`ferrograd.mvlgamma`.

    Args:
        input (Tensor): the input tensor; every element must exceed ``(p - 1) / 2``.
        p (int): the dimension.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.multigammaln(ferrograd.tensor([2.5]), 2)
        tensor([0.8570])
    """
    return _fg.mvlgamma(input, p, out=out)


def zeta(input: Tensor | _Number, other: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
    """zeta(input, other, *, out=None) -> Tensor

    The Hurwitz zeta function ``sum_k (k + q) ** -s`` of each pair
    ``s = input``, ``q = other`` (broadcast together; either may be a
    number; ``q = 1`` gives Riemann's zeta). Differentiable in ``other``
    only, as in torch.

    Args:
        input (Tensor or Number): the exponent ``s``.
        other (Tensor or Number): the shift ``q``.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.zeta(ferrograd.tensor([2.0, 4.0]), 1.0)
        tensor([1.6449, 1.0823])
    """
    return _finish(_tensor(input)._special_zeta(other), out)


def _igamma_alias(name: str, target: str, example: str, result: str):
    """torch.special's name ``name`` for the regularized incomplete gamma function ``target``."""
    impl = getattr(_fg, target)

    def op(input: Tensor | _Number, other: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
        return impl(input, other, out=out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, other, *, out=None) -> Tensor

    Alias for :func:`ferrograd.{target}`.

    Args:
        input (Tensor or Number): the shape parameter ``a``.
        other (Tensor or Number): the argument ``x``.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.{name}(ferrograd.tensor([1.0]), ferrograd.tensor({example}))
        {result}
    """
    return op


gammainc = _igamma_alias("gammainc", "igamma", "[1.0]", "tensor([0.6321])")
gammaincc = _igamma_alias("gammaincc", "igammac", "[1.0]", "tensor([0.3679])")


def _polynomial(name: str, summary: str, example: str, result: str):
    """The polynomial function ``name(input, n)`` of the core's ``Tensor._special_<name>``."""
    method = "_special_" + name

    def op(input: Tensor | _Number, n: Tensor | _Number, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{name}(): expected at least one of input and n to be a Tensor")
        x = _tensor(input)
        if not isinstance(input, Tensor):
            x = x.to(_fg.result_type(x, n))
        return _finish(getattr(x, method)(n), out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, n, *, out=None) -> Tensor

    {summary} of degree ``n`` at each element of ``input`` (broadcast
    together; either may be a number; a negative ``n`` gives 0).{_NONDIFF}

    Args:
        input (Tensor or Number): the points.
        n (Tensor or Number): the degrees (integer-valued).
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.special.{name}(ferrograd.tensor({example}), 3)
        {result}
    """
    return op


_SHIFTED = "The shifted Chebyshev polynomial ``{}_n(2x - 1)``"
_P = [
    ("chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind", "tensor([-1., 26.])"),
    ("chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind", "tensor([-1., 56.])"),
    ("chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind", "tensor([-1., 41.])"),
    ("chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind", "tensor([-1., 71.])"),
    ("shifted_chebyshev_polynomial_t", _SHIFTED.format("T"), "tensor([-0., 99.])"),
    ("shifted_chebyshev_polynomial_u", _SHIFTED.format("U"), "tensor([ -0., 204.])"),
    ("shifted_chebyshev_polynomial_v", _SHIFTED.format("V"), "tensor([  1., 169.])"),
    ("shifted_chebyshev_polynomial_w", _SHIFTED.format("W"), "tensor([ -1., 239.])"),
    ("hermite_polynomial_h", "The physicists' Hermite polynomial", "tensor([-5., 40.])"),
    ("hermite_polynomial_he", "The probabilists' Hermite polynomial", "tensor([-1.3750,  2.0000])"),
    ("laguerre_polynomial_l", "The Laguerre polynomial", "tensor([-0.1458, -0.3333])"),
    ("legendre_polynomial_p", "The Legendre polynomial", "tensor([-0.4375, 17.0000])"),
]
(
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
    legendre_polynomial_p,
) = (_polynomial(name, summary, "[0.5, 2.0]", result) for name, summary, result in _P)  # fmt: skip


from ._routed import route_module as _route_module  # noqa: E402

_route_module(globals(), __name__, "special.")
del _route_module
