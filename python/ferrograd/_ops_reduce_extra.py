"""Differences, integrals and statistics composed from other ops: ``diff``,
``gradient``, ``trapezoid``/``trapz``, ``cumulative_trapezoid``, ``dist``,
``cov``, ``corrcoef``, ``nansum``, ``nanmean``, ``quantile``/``nanquantile``,
``renorm`` and ``Tensor.sum_to_size`` (with the in-place ``renorm_``,
``cumsum_`` and ``cumprod_``).

Each is written with differentiable ferrograd ops reached as module
attributes at call time (``_fg.cat``), so reverse mode, forward mode and
``vmap`` go through it with no rule of its own. Slices along a dimension
are taken with ``narrow`` (a view), so a difference like ``x[1:] - x[:-1]``
costs one subtraction and its gradient is two scatters into a zero tensor.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ferrograd as _fg

from ._batched import BatchedTensor
from ._core import Tensor
from ._core import dtype as _dtype
from ._ops_composite import _scalar_type
from ._ops_pointwise import _finish
from ._routed import torch_errors

__all__ = [
    "corrcoef", "cov", "cumulative_trapezoid", "diff", "dist", "frobenius_norm", "gradient", "nanmean",
    "nanquantile", "nansum", "nuclear_norm", "quantile", "renorm", "trapezoid", "trapz",
]  # fmt: skip


# ---------------------------------------------------------------------------
# Helpers shared by the extra-op modules


def _wrap_dim(dim: int, ndim: int) -> int:
    """``dim`` as a non-negative dimension of an ``ndim``-dim tensor (torch's IndexError if out of range)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _slice(t: Tensor, dim: int, start: int | None, stop: int | None) -> Tensor:
    """``t[..., start:stop]`` along ``dim``, with Python's slice bounds, as a view."""
    n = t.size(dim)
    a, b, _ = slice(start, stop).indices(n)
    return t.narrow(dim, a, max(0, b - a))


def _along(v: Tensor, dim: int, ndim: int) -> Tensor:
    """The 1-D ``v`` shaped to broadcast along ``dim`` of an ``ndim``-dim tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return v.reshape(shape)


def _is_float(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def _float_of(t: Tensor) -> Tensor:
    """``t`` itself when float or complex, else in the default float dtype."""
    return t if _is_float(t) else t.to(_fg.get_default_dtype())


def _kind(d: _dtype) -> int:
    """0 bool, 1 integer, 2 float, 3 complex: a result may be written into a
    tensor whose kind is at least its own (torch's ``can_cast``)."""
    if d == _fg.bool:
        return 0
    if d.is_complex:
        return 3
    return 2 if d.is_floating_point else 1


def _write_back(self: Tensor, result: Tensor) -> Tensor:
    """``self`` overwritten by ``result``, with torch's error when its dtype cannot hold the result."""
    if _kind(result.dtype) > _kind(self.dtype):
        raise RuntimeError(
            f"result type {_scalar_type(result.dtype)} can't be cast to the desired output type "
            f"{_scalar_type(self.dtype)}"
        )
    return self.copy_(result)


def _install(name: str, fn: Callable[..., Any]) -> None:
    """Makes ``fn`` the method ``name`` of ``Tensor`` and of ``vmap``'s
    ``BatchedTensor``: a composite runs as it is on a batched tensor (its
    ops batch one by one), and ``BatchedTensor`` copied ``Tensor``'s methods
    when ``func`` was imported, before these modules."""
    fn = torch_errors(fn, name)
    setattr(Tensor, name, fn)
    setattr(BatchedTensor, name, fn)


def _dims_of(dim: int | Sequence[int] | None, ndim: int) -> list[int]:
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, Sequence):
        return [_wrap_dim(int(d), ndim) for d in dim]
    return [_wrap_dim(int(dim), ndim)]


# ---------------------------------------------------------------------------
# diff / gradient


def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None
) -> Tensor:
    """diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor

    The ``n``-th forward difference along ``dim``: ``out[i] = x[i + 1] - x[i]``,
    applied ``n`` times (``!=`` for bool tensors). ``prepend`` and
    ``append`` are joined to ``input`` along ``dim`` first.

    Args:
        input (Tensor): a tensor with at least one dimension.
        n (int): how many times to take the difference (0 returns the input).
        dim (int): the dimension along which differences are taken.
        prepend (Tensor, optional): values joined before ``input`` along
            ``dim``; the same number of dimensions as ``input``, the same
            sizes in the others.
        append (Tensor, optional): values joined after ``input``, like ``prepend``.

    Example:
        >>> ferrograd.diff(ferrograd.tensor([1, 3, 6, 10]))
        tensor([2, 3, 4])
        >>> ferrograd.diff(ferrograd.tensor([1.0, 3.0, 6.0]), n=2, prepend=ferrograd.tensor([0.0]))
        tensor([1., 1.])
    """
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.dim())
    for extra in (prepend, append):
        if extra is not None and extra.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = _fg.cat(parts, dim=d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.size(d)
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi != lo if x.dtype == _fg.bool else hi - lo
    return x


def _uniform_gradient(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """The derivative of ``f`` along ``d`` for samples ``h`` apart: central
    differences inside, one-sided ones of order ``edge_order`` at the ends."""
    n = f.size(d)
    inner = (f.narrow(d, 2, n - 2) - f.narrow(d, 0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (f.narrow(d, 1, 1) - f.narrow(d, 0, 1)) / h
        last = (f.narrow(d, n - 1, 1) - f.narrow(d, n - 2, 1)) / h
    else:
        first = (-1.5 * f.narrow(d, 0, 1) + 2 * f.narrow(d, 1, 1) - 0.5 * f.narrow(d, 2, 1)) / h
        last = (0.5 * f.narrow(d, n - 3, 1) - 2 * f.narrow(d, n - 2, 1) + 1.5 * f.narrow(d, n - 1, 1)) / h
    return _fg.cat([first, inner, last], dim=d)


def _coordinate_gradient(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    """The derivative of ``f`` along ``d`` sampled at the coordinates ``x``
    (1-D): the second-order three-point formula for uneven steps inside,
    one-sided formulas of order ``edge_order`` at the ends."""
    n = f.size(d)
    x = _along(x.to(f.dtype) if not _is_float(x) else x, d, f.dim())
    h = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)  # h[i] = x[i + 1] - x[i]
    hl, hr = h.narrow(d, 0, n - 2), h.narrow(d, 1, n - 2)
    # f'(x_i) ~ -hr/(hl(hl+hr)) f[i-1] + (hr-hl)/(hl hr) f[i] + hl/(hr(hl+hr)) f[i+1]
    inner = (
        -hr / (hl * (hl + hr)) * f.narrow(d, 0, n - 2)
        + (hr - hl) / (hl * hr) * f.narrow(d, 1, n - 2)
        + hl / (hr * (hl + hr)) * f.narrow(d, 2, n - 2)
    )
    if edge_order == 1:
        first = (f.narrow(d, 1, 1) - f.narrow(d, 0, 1)) / h.narrow(d, 0, 1)
        last = (f.narrow(d, n - 1, 1) - f.narrow(d, n - 2, 1)) / h.narrow(d, n - 2, 1)
    else:
        h1, h2 = h.narrow(d, 0, 1), h.narrow(d, 1, 1)
        first = (
            -(2 * h1 + h2) / (h1 * (h1 + h2)) * f.narrow(d, 0, 1)
            + (h1 + h2) / (h1 * h2) * f.narrow(d, 1, 1)
            - h1 / (h2 * (h1 + h2)) * f.narrow(d, 2, 1)
        )
        h1, h2 = h.narrow(d, n - 3, 1), h.narrow(d, n - 2, 1)
        last = (
            h2 / (h1 * (h1 + h2)) * f.narrow(d, n - 3, 1)
            - (h1 + h2) / (h1 * h2) * f.narrow(d, n - 2, 1)
            + (2 * h2 + h1) / (h2 * (h1 + h2)) * f.narrow(d, n - 1, 1)
        )
    return _fg.cat([first, inner, last], dim=d)


def gradient(
    input: Tensor,
    *,
    spacing: Any = 1,
    dim: int | Sequence[int] | None = None,
    edge_order: int = 1,
) -> tuple[Tensor, ...]:
    """gradient(input, *, spacing=1, dim=None, edge_order=1) -> tuple of Tensors

    Estimates the derivative of a sampled function along each of ``dim``:
    second-order central differences inside, one-sided differences of order
    ``edge_order`` at the two ends. Integer inputs give the default float
    dtype.

    Args:
        input (Tensor): the samples ``f(x)``.
        spacing (number, list of numbers or list of Tensors): a number is
            the step between samples along every dimension; a list has one
            entry per dimension of ``dim``, each a step or a 1-D tensor of the
            sample coordinates along that dimension.
        dim (int or list of ints, optional): the dimensions differentiated
            along (all when None).
        edge_order (int): 1 or 2, the order of the differences at the ends;
            each dimension needs at least ``edge_order + 1`` samples.

    Returns:
        tuple of Tensors: one estimate per dimension, each shaped like ``input``.

    Example:
        >>> ferrograd.gradient(ferrograd.tensor([1.0, 4.0, 9.0, 16.0]))
        (tensor([3., 4., 6., 7.]),)
        >>> ferrograd.gradient(ferrograd.tensor([1.0, 4.0, 9.0, 16.0]), spacing=2.0, edge_order=2)
        (tensor([1., 2., 3., 4.]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    f = _float_of(input)
    dims = _dims_of(dim, f.dim())
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if dim is None:
                raise RuntimeError(
                    "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                    f"to 'self.dim() = {f.dim()}', since dim argument was not given, but got a list of "
                    f"length {len(spacing)}"
                )
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                f"arguments to have the same length, but got a spacing argument of length {len(spacing)} "
                f"and a dim argument of length {len(dims)}."
            )
        steps = list(spacing)
    elif isinstance(spacing, numbers.Number):
        steps = [spacing] * len(dims)
    else:
        raise TypeError(
            f"gradient(): argument 'spacing' must be a number or a list of numbers or tensors, "
            f"not {type(spacing).__name__}"
        )
    for d in dims:
        if f.size(d) < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, h in zip(dims, steps, strict=True):
        if isinstance(h, Tensor):
            if h.dim() != 1 or h.numel() != f.size(d):
                raise RuntimeError(
                    "torch.gradient expected each tensor to be on the same device and to have one "
                    f"coordinate per sample along dim {d}: got {h.numel()} coordinates for {f.size(d)} "
                    "samples"
                )
            out.append(_coordinate_gradient(f, d, h, edge_order))
        else:
            out.append(_uniform_gradient(f, d, h, edge_order))
    return tuple(out)


# ---------------------------------------------------------------------------
# trapezoid / trapz / cumulative_trapezoid


def _sample_steps(y: Tensor, x: Tensor, d: int, name: str) -> Tensor:
    """The steps ``x[i + 1] - x[i]`` along ``d``, broadcastable against the samples' pairs."""
    if x.dim() == 1:
        if x.numel() != y.size(d):
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        return _along(x.narrow(0, 1, x.numel() - 1) - x.narrow(0, 0, x.numel() - 1), d, y.dim())
    dx = diff(x, dim=d - y.dim())
    return dx


def _pair_means(y: Tensor, d: int) -> Tensor:
    n = y.size(d)
    return (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2


def _integrate(name: str, y: Tensor, x: Tensor | None, dx: Any, dim: int, cumulative: bool) -> Tensor:
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both x and dx")
    y = _float_of(y)
    d = _wrap_dim(dim, y.dim())
    n = y.size(d)
    if n == 0:
        return y.narrow(d, 0, 0) if cumulative else y.sum(d)
    if x is None:
        step = 1 if dx is None else dx
        if not cumulative:
            return step * (y.sum(d) - (y.narrow(d, 0, 1) + y.narrow(d, n - 1, 1)).squeeze(d) / 2)
        return (_pair_means(y, d) * step).cumsum(d)
    areas = _pair_means(y, d) * _sample_steps(y, x, d, name)
    return areas.cumsum(d) if cumulative else areas.sum(d)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

    The integral of the samples ``y`` along ``dim`` by the trapezoidal
    rule: the sum over neighbouring pairs of their mean times their step.
    Integer samples give the default float dtype.

    Args:
        y (Tensor): the sampled values.
        x (Tensor, optional): the sample coordinates: 1-D with one entry per
            sample, or shaped like ``y`` (broadcastable). Not with ``dx``.
        dx (number, optional): the constant step between samples (1 when
            neither ``x`` nor ``dx`` is given).
        dim (int): the dimension integrated along.

    Example:
        >>> ferrograd.trapezoid(ferrograd.tensor([1.0, 2.0, 3.0]))
        tensor(4.)
        >>> ferrograd.trapezoid(ferrograd.tensor([1.0, 2.0, 3.0]), ferrograd.tensor([0.0, 1.0, 3.0]))
        tensor(6.5000)
    """
    return _integrate("trapezoid", y, x, dx, dim, cumulative=False)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """trapz(y, x, *, dim=-1) -> Tensor
    trapz(y, *, dx=1, dim=-1) -> Tensor

    An alias of :func:`ferrograd.trapezoid` (its two torch overloads: with
    the coordinates ``x``, or with the constant step ``dx``).

    Args:
        y (Tensor): the sampled values.
        x (Tensor, optional): the sample coordinates. Not with ``dx``.
        dx (float, optional): the constant step between samples (1 by default).
        dim (int): the dimension integrated along.

    Example:
        >>> ferrograd.trapz(ferrograd.tensor([1.0, 2.0, 3.0]), dx=0.5)
        tensor(2.)
    """
    return _integrate("trapz", y, x, dx, dim, cumulative=False)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor

    The running trapezoidal integral of ``y`` along ``dim``: entry ``i`` is
    :func:`trapezoid` of the first ``i + 2`` samples, so the result is one
    shorter than ``y`` along ``dim``.

    Args:
        y (Tensor): the sampled values.
        x (Tensor, optional): the sample coordinates (or give ``dx``).
        dx (number, optional): the constant step between samples; 1 by default.
        dim (int): the dimension integrated along.

    Example:
        >>> ferrograd.cumulative_trapezoid(ferrograd.tensor([1.0, 2.0, 3.0]))
        tensor([1.5000, 4.0000])
    """
    return _integrate("cumulative_trapezoid", y, x, dx, dim, cumulative=True)


# ---------------------------------------------------------------------------
# dist / cov / corrcoef


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """dist(input, other, p=2) -> Tensor

    The ``p``-norm of ``input - other`` (broadcast): ``p = 0`` counts the
    differing elements, ``inf`` and ``-inf`` take the largest and smallest
    absolute difference.

    Args:
        input (Tensor): a float or complex tensor.
        other (Tensor): a tensor broadcastable with ``input``.
        p (float): the order of the norm.

    Example:
        >>> ferrograd.dist(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([4.0, 6.0]))
        tensor(5.)
        >>> ferrograd.dist(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([4.0, 6.0]), p=np.inf)
        tensor(4.)
    """
    d = input - other
    if not _is_float(d):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {_scalar_type(d.dtype)} instead."
        )
    return _fg.linalg.vector_norm(d, ord=p)


def _weights_check(name: str, w: Tensor, n: int, integral: bool) -> None:
    if w.dim() > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} dimensions"
        )
    if w.numel() != n:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {n}"
        )
    is_int = not _is_float(w) and w.dtype != _fg.bool
    if integral and not is_int:
        raise RuntimeError(
            f"cov(): expected fweights to have integral dtype but got fweights with "
            f"{_scalar_type(w.dtype)} dtype"
        )
    if not integral and not w.is_floating_point():
        raise RuntimeError(
            f"cov(): expected aweights to have floating point dtype but got aweights with "
            f"{_scalar_type(w.dtype)} dtype"
        )
    if bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(
    input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None
) -> Tensor:
    """cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor

    The covariance matrix of the variables in the rows of ``input``, whose
    columns are the observations (a 1-D input is one variable, and gives a
    0-dim result). With weights ``w = fweights * aweights`` the mean is
    weighted and the sum of products is divided by
    ``sum(w) - correction * sum(w * aweights) / sum(w)`` (``sum(w) - correction``
    without ``aweights``; ``N - correction`` without weights); a divisor
    that is not positive gives inf/NaN with a warning, as in torch.

    Args:
        input (Tensor): 0-, 1- or 2-D; rows are variables, columns observations.
        correction (int): subtracted from the number of observations (1
            gives the unbiased estimate, 0 the maximum-likelihood one).
        fweights (Tensor, optional): 1-D integer counts of each observation.
        aweights (Tensor, optional): 1-D float importance of each observation.

    Example:
        >>> ferrograd.cov(ferrograd.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    if input.dim() > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{input.dim()} dimensions"
        )
    x = _float_of(input)
    x = x.reshape(1, -1) if x.dim() < 2 else x
    n = x.size(1)
    w: Tensor | None = None
    if fweights is not None:
        _weights_check("fweights", fweights, n, integral=True)
        w = fweights.to(x.real.dtype if x.is_complex() else x.dtype)
    if aweights is not None:
        _weights_check("aweights", aweights, n, integral=False)
        a = aweights.to(x.real.dtype if x.is_complex() else x.dtype)
        w = a if w is None else w * a
    if w is None:
        mean = x.mean(1, keepdim=True)
        norm: Any = n - correction
        wsum: Any = n
    else:
        wsum = w.sum()
        mean = (x * w).sum(1, keepdim=True) / wsum
        if aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * (w * a).sum() / wsum
    if (float(norm) if isinstance(norm, Tensor) else norm) <= 0:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
            "observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    xc = x - mean
    weighted = xc if w is None else xc * w
    c = (weighted @ xc.mT.conj()) / norm
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input: Tensor) -> Tensor:
    """corrcoef(input) -> Tensor

    The Pearson correlation coefficients of the variables in the rows of
    ``input`` (columns are observations): :func:`cov` divided by the
    products of the standard deviations, clipped to ``[-1, 1]``.

    Args:
        input (Tensor): 0-, 1- or 2-D; rows are variables, columns observations.

    Example:
        >>> ferrograd.corrcoef(ferrograd.tensor([[0.0, 1.0, 2.0], [1.0, 3.0, 2.0]]))
        tensor([[1.0000, 0.5000],
                [0.5000, 1.0000]])
    """
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = c.diagonal().real.sqrt() if c.is_complex() else c.diagonal().sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.is_complex():
        return _fg.complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


# ---------------------------------------------------------------------------
# nansum / nanmean


def _reduce_dims(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def nansum(
    input: Tensor,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: _dtype | None = None,
) -> Tensor:
    """nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The sum over ``dim`` with NaN counted as zero (an integer input sums as
    :func:`ferrograd.sum` does).

    Args:
        input (Tensor): a real tensor.
        dim (int or tuple of ints, optional): the dimension(s) reduced (all when None).
        keepdim (bool): whether the reduced dimensions are kept with size 1.
        dtype (ferrograd.dtype, optional): the dtype the input is cast to first.

    Example:
        >>> ferrograd.nansum(ferrograd.tensor([1.0, np.nan, 2.0]))
        tensor(3.)
    """
    if input.is_complex():
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x = input.masked_fill(input.isnan(), 0) if input.is_floating_point() else input
    return x.sum(_reduce_dims(dim), keepdim=keepdim, dtype=dtype)


def nanmean(
    input: Tensor,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: _dtype | None = None,
) -> Tensor:
    """nanmean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor

    The mean over ``dim`` of the elements that are not NaN (NaN where all are).

    Args:
        input (Tensor): a float tensor (or any, with a float ``dtype``).
        dim (int or tuple of ints, optional): the dimension(s) reduced (all when None).
        keepdim (bool): whether the reduced dimensions are kept with size 1.
        dtype (ferrograd.dtype, optional): a float or complex dtype the input is cast to first.

    Example:
        >>> ferrograd.nanmean(ferrograd.tensor([[1.0, np.nan], [3.0, 4.0]]), dim=1)
        tensor([1.0000, 3.5000])
    """
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(
                "nanmean(): could not infer output dtype. Optional dtype must be either a floating point or "
                f"complex dtype. Got: {_scalar_type(dtype)}"
            )
        input = input.to(dtype)
    elif not _is_float(input):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{_scalar_type(input.dtype)}"
        )
    dims = _reduce_dims(dim)
    valid = input.isnan().logical_not()
    count = valid.sum(dims, keepdim=keepdim)
    return input.masked_fill(valid.logical_not(), 0).sum(dims, keepdim=keepdim) / count


# ---------------------------------------------------------------------------
# quantile / nanquantile

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(
    name: str, input: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str, ignore_nan: bool
) -> Tensor:
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (_fg.float32, _fg.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but got "
            f"{interpolation}"
        )
    if isinstance(q, Tensor):
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        qs, q_dims = q.detach().reshape(-1), q.dim()
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qs, q_dims = _fg.tensor([float(q)], dtype=input.dtype), 0
    # The samples of each slice on the last dim, sorted (NaN last).
    if dim is None:
        x = input.reshape(-1)
        out_shape = [1] * input.dim() if keepdim else []
    else:
        d = _wrap_dim(dim, input.dim())
        x = input.movedim(d, -1) if input.dim() > 0 else input.reshape(1)
        out_shape = list(input.shape)
        if input.dim() > 0:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    values = x.sort(dim=-1)[0]
    n = values.size(-1)
    nans = x.isnan()
    if ignore_nan:
        valid = (~nans).sum(-1, keepdim=True)  # (..., 1)
        ranks = qs * (valid - 1).to(qs.dtype)  # (..., Q)
        no_value = valid == 0
    else:
        ranks = (qs * (n - 1)).expand(*values.shape[:-1], qs.numel())
        no_value = nans.any(-1, keepdim=True)
    # A slice with no usable values reads its last sorted entry, a NaN.
    ranks = ranks.masked_fill(no_value, n - 1)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.floor().clamp(0, n - 1).to(_fg.int64)
    above = ranks.ceil().clamp(0, n - 1).to(_fg.int64)
    lo, hi = values.gather(-1, below), values.gather(-1, above)
    if interpolation == "midpoint":
        result = lo + (hi - lo) * (above > below).to(values.dtype) * 0.5
    elif interpolation == "linear":
        result = lo + (hi - lo) * (ranks - below.to(ranks.dtype))
    else:
        result = lo
    # (..., Q) to (Q, *out_shape), or out_shape for a scalar q.
    result = result.movedim(-1, 0).reshape(qs.numel(), *out_shape)
    return result.squeeze(0) if q_dims == 0 else result


def quantile(
    input: Tensor,
    q: float | Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """quantile(input, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor

    The ``q``-th quantiles of each slice of ``input`` along ``dim`` (of all
    elements when None): the value at rank ``q * (n - 1)`` of the sorted
    slice, between two ranks read as ``interpolation`` says. A slice holding
    NaN gives NaN. Differentiable through the sort: the gradient goes to the
    one or two elements read.

    Args:
        input (Tensor): a float32 or float64 tensor.
        q (float or Tensor): the quantile(s) in ``[0, 1]``: a number, or a
            0-D or 1-D tensor of ``input``'s dtype (a 1-D ``q`` puts its
            dimension first in the result).
        dim (int, optional): the dimension reduced (None flattens the input).
        keepdim (bool): whether the reduced dimension is kept with size 1.
        interpolation (str): between ranks ``i < r < j``: ``'linear'``
            (``x[i] + (r - i) * (x[j] - x[i])``), ``'lower'`` (``x[i]``),
            ``'higher'`` (``x[j]``), ``'midpoint'`` (their mean) or
            ``'nearest'`` (the closer one, ties to the even rank).

    Example:
        >>> x = ferrograd.tensor([0.0, 1.0, 2.0, 3.0])
        >>> ferrograd.quantile(x, 0.5)
        tensor(1.5000)
        >>> ferrograd.quantile(x, ferrograd.tensor([0.25, 0.5]), interpolation="lower")
        tensor([0., 1.])
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(
    input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False,
    *, interpolation: str = "linear",
) -> Tensor:  # fmt: skip
    """nanquantile(input, q, dim=None, keepdim=False, *, interpolation='linear') -> Tensor

    :func:`quantile` of the elements that are not NaN (NaN for a slice of NaN only).

    Args:
        input (Tensor): a float32 or float64 tensor.
        q (float or Tensor): the quantile(s) in ``[0, 1]``: a number, or a 0-D or 1-D tensor.
        dim (int, optional): the dimension reduced (None flattens the input).
        keepdim (bool): whether the reduced dimension is kept with size 1.
        interpolation (str): ``'linear'``, ``'lower'``, ``'higher'``,
            ``'midpoint'`` or ``'nearest'`` (see :func:`quantile`).

    Example:
        >>> ferrograd.nanquantile(ferrograd.tensor([1.0, np.nan, 3.0]), 0.5)
        tensor(2.)
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


# ---------------------------------------------------------------------------
# renorm / sum_to_size / in-place scans


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """renorm(input, p, dim, maxnorm) -> Tensor

    Each slice of ``input`` along ``dim`` (each ``input.select(dim, i)``)
    whose ``p``-norm exceeds ``maxnorm``, scaled to norm ``maxnorm`` (by
    ``maxnorm / (norm + 1e-7)``); the others unchanged.

    Args:
        input (Tensor): a float or complex tensor with at least two dimensions.
        p (float): the order of the norm (positive).
        dim (int): the dimension whose slices are renormalized.
        maxnorm (float): the largest norm kept (non-negative).

    Example:
        >>> ferrograd.renorm(ferrograd.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    if not p > 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if not _is_float(input):
        raise RuntimeError(
            f"renorm: input dtype should be floating point or complex, got {_scalar_type(input.dtype)}"
        )
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = _wrap_dim(dim, input.dim())
    others = [i for i in range(input.dim()) if i != d]
    norm = _fg.linalg.vector_norm(input, ord=p, dim=others, keepdim=True)
    factor = _fg.where(norm > maxnorm, maxnorm / (norm + 1e-7), _fg.ones_like(norm))
    return input * factor


def _renorm_(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """In-place version of :meth:`Tensor.renorm`."""
    return _write_back(self, renorm(self.clone(), p, dim, maxnorm))


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """sum_to_size(*size) -> Tensor

    This tensor summed over the dimensions it was broadcast along from
    ``size``: the result has shape ``size``, and broadcasts back to this
    tensor's shape.

    Args:
        *size (ints or a tuple of ints): a shape this tensor's shape is an
            expansion of.

    Example:
        >>> ferrograd.ones(2, 3).sum_to_size(1, 3)
        tensor([[2., 2., 2.]])
    """
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    target = [int(s) for s in size]
    shape = list(self.shape)
    lead = len(shape) - len(target)
    if lead < 0 or any(t != s and t != 1 for t, s in zip(target, shape[lead:], strict=True)):
        raise RuntimeError(f"size {{{target}}} is not expandable to size {{{shape}}}.")
    keep = tuple(lead + i for i, t in enumerate(target) if t == 1 and shape[lead + i] != 1)
    out = self.sum(keep, keepdim=True) if keep else self
    return out.sum(tuple(range(lead))) if lead else out


def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """frobenius_norm(input, dim, keepdim=False, *, out=None) -> Tensor

    Deprecated, as in torch: the 2-norm of ``input`` over the dimensions
    ``dim``, :func:`ferrograd.linalg.vector_norm` with ``ord=2``.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints): the dimensions reduced.
        keepdim (bool): whether they are kept with size 1.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.frobenius_norm(ferrograd.tensor([[3.0, 0.0], [0.0, 4.0]]), (0, 1))
        tensor(5.)
    """
    warnings.warn(
        "frobenius_norm is deprecated; use linalg.vector_norm(A, 2., dim, keepdim) instead",
        UserWarning, stacklevel=2,
    )
    return _finish(_fg.linalg.vector_norm(input, 2.0, dim, keepdim), out)


def nuclear_norm(
    input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Tensor | None = None
) -> Tensor:
    """nuclear_norm(input, keepdim=False, *, out=None) -> Tensor
    nuclear_norm(input, dim, keepdim=False, *, out=None) -> Tensor

    Deprecated, as in torch: the sum of the singular values of the matrices
    over the two dimensions ``dim`` (the last two by default),
    :func:`ferrograd.linalg.matrix_norm` with ``ord='nuc'``.

    Args:
        input (Tensor): the input tensor.
        dim (tuple of two ints, optional): the matrix dimensions; a bool
            here is ``keepdim`` (torch's first overload).
        keepdim (bool): whether they are kept with size 1.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.nuclear_norm(ferrograd.tensor([[3.0, 0.0], [0.0, -4.0]]))
        tensor(7.)
    """
    warnings.warn(
        "nuclear_norm is deprecated; use linalg.matrix_norm(A, 'nuc', dim, keepdim) instead",
        UserWarning, stacklevel=2,
    )
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    dims = (-2, -1) if dim is None else tuple(dim)
    return _finish(_fg.linalg.matrix_norm(input, "nuc", dims, keepdim), out)


def _cumsum_(self: Tensor, dim: int, *, dtype: _dtype | None = None) -> Tensor:
    """In-place version of :meth:`Tensor.cumsum`."""
    return _write_back(self, self.clone().cumsum(dim, dtype=dtype))


def _cumprod_(self: Tensor, dim: int, *, dtype: _dtype | None = None) -> Tensor:
    """In-place version of :meth:`Tensor.cumprod`."""
    return _write_back(self, self.clone().cumprod(dim, dtype=dtype))


for _fn in (diff, dist, cov, corrcoef, nansum, nanmean, quantile, nanquantile, renorm):
    _install(_fn.__name__, _fn)
_METHODS: list[tuple[str, Callable[..., Any]]] = [
    ("renorm_", _renorm_),
    ("sum_to_size", _sum_to_size),
    ("cumsum_", _cumsum_),
    ("cumprod_", _cumprod_),
]
for _name, _method in _METHODS:
    _method.__name__ = _method.__qualname__ = _name
    _install(_name, _method)
del _fn, _name, _method
