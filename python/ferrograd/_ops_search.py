"""Searching and counting: ``searchsorted``, ``bucketize``, ``isin``,
``unique``, ``unique_consecutive``, ``bincount``, ``histc``,
``histogram``, ``mode``, ``cummax``, ``cummin`` and ``logcumsumexp``.

The positions, groups and counts come from the core
(``Tensor.searchsorted``, ``unique`` and the methods of the same names);
these functions give them torch's signatures and result structures.
``mode``, ``cummax`` and ``cummin`` return their values by ``gather``, so
their gradients go back to the chosen positions; the counting functions
are not differentiable, as in torch.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import ferrograd as _fg

from . import return_types as _return_types
from ._batched import BatchedTensor
from ._core import Tensor, _searchsorted, _unique
from ._ops_pointwise import _finish, _input
from ._routed import torch_errors

__all__ = [
    "bincount", "bucketize", "cummax", "cummin", "histc", "histogram", "histogramdd", "isin", "logcumsumexp",
    "mode",
    "searchsorted", "unique", "unique_consecutive",
]  # fmt: skip

_Number = float | int | bool


def _values(x: Tensor | _Number) -> Tensor:
    return x if isinstance(x, Tensor) else _fg.tensor(x)


def searchsorted(
    sorted_sequence: Tensor,
    input: Tensor | _Number,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
    out: Tensor | None = None,
) -> Tensor:
    """searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None,
    out=None) -> Tensor

    For each element of ``input``, the index in the innermost dim of
    ``sorted_sequence`` where it would be inserted to keep that dim sorted:
    before equal elements, or after them with ``right=True`` (or
    ``side='right'``). ``sorted_sequence`` is 1-D (shared by every value)
    or has the leading dims of ``input``; NaN sorts above every number.

    Args:
        sorted_sequence (Tensor): the sorted sequence(s) in the last dim.
        input (Tensor or Number): the values to place.
        out_int32 (bool): return int32 indices instead of int64.
        right (bool): place after equal elements.
        side (str, optional): ``'left'`` or ``'right'``, as ``right``.
        sorter (Tensor, optional): int64 indices that sort an unsorted ``sorted_sequence``.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.searchsorted(ferrograd.tensor([1, 3, 5, 7]), ferrograd.tensor([3, 6, 9]))
        tensor([1, 3, 4])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                "right was True"
            )
        right = side == "right"
    return _finish(_searchsorted(sorted_sequence, _values(input), right, out_int32, sorter), out)


def bucketize(
    input: Tensor | _Number, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """bucketize(input, boundaries, *, out_int32=False, right=False, out=None) -> Tensor

    The bucket of each element of ``input`` among the 1-D sorted
    ``boundaries``: the index ``i`` with ``boundaries[i-1] < x <=
    boundaries[i]`` (``boundaries[i-1] <= x < boundaries[i]`` with
    ``right=True``); that is :func:`searchsorted` with the roles swapped.

    Args:
        input (Tensor or Number): the values.
        boundaries (Tensor): the 1-D sorted bucket boundaries.
        out_int32 (bool): return int32 indices instead of int64.
        right (bool): close the buckets on the left instead.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.bucketize(ferrograd.tensor([1, 5, 9]), ferrograd.tensor([1, 3, 5, 7]))
        tensor([0, 2, 4])
    """
    if not isinstance(boundaries, Tensor) or boundaries.dim() != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension")
    return _finish(_searchsorted(boundaries, _values(input), right, out_int32, None), out)


def isin(
    elements: Tensor | _Number, test_elements: Tensor | _Number, *, assume_unique: bool = False,
    invert: bool = False,
) -> Tensor:
    """isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor

    A bool tensor of ``elements``' shape: True where the element equals
    some element of ``test_elements`` (False with ``invert=True``).

    Args:
        elements (Tensor or Number): the values to test.
        test_elements (Tensor or Number): the values to look for.
        assume_unique (bool): accepted for compatibility (the result is the same).
        invert (bool): return True where the element is not found.

    Example:
        >>> ferrograd.isin(ferrograd.tensor([[1, 2], [3, 4]]), ferrograd.tensor([2, 3]))
        tensor([[False,  True],
                [ True, False]])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of elements and test_elements must be a Tensor")
    x, pool = _values(elements).detach(), _values(test_elements).detach().reshape(-1)
    dtype = _fg.result_type(x, pool)
    x, pool = x.to(dtype), pool.sort().values.to(dtype)
    if pool.numel() == 0:
        found = _fg.zeros_like(x, dtype=_fg.bool)
    else:
        at = _searchsorted(pool, x, False, False, None).clamp(max=pool.numel() - 1)
        found = pool[at] == x
    return ~found if invert else found


def unique(
    input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None) -> Tensor or tuple

    The distinct elements of ``input`` in ascending order (every NaN
    distinct), or with ``dim`` the distinct slices along it in
    lexicographic order; with ``return_inverse`` also the index of each
    element's (slice's) value in the result, and with ``return_counts``
    how often each value occurs. Not differentiable.

    Args:
        input (Tensor): the input tensor.
        sorted (bool): accepted for compatibility (the result is always sorted).
        return_inverse (bool): also return the inverse indices.
        return_counts (bool): also return the counts.
        dim (int, optional): find distinct slices along this dim instead of elements.

    Example:
        >>> ferrograd.unique(ferrograd.tensor([3, 1, 3, 2]), return_counts=True)
        (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    values, inverse, counts = _unique(_input(input, "unique"), dim, False)
    return _pick(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None,
) -> Any:
    """unique_consecutive(input, return_inverse=False, return_counts=False, dim=None) -> Tensor or tuple

    One element (or slice along ``dim``) of each run of equal neighbours,
    in order; with the inverse indices and the run lengths on request.

    Args:
        input (Tensor): the input tensor.
        return_inverse (bool): also return the inverse indices.
        return_counts (bool): also return the run lengths.
        dim (int, optional): compare slices along this dim instead of elements.

    Example:
        >>> ferrograd.unique_consecutive(ferrograd.tensor([1, 1, 2, 2, 3, 1]))
        tensor([1, 2, 3, 1])
    """
    values, inverse, counts = _unique(_input(input, "unique_consecutive"), dim, True)
    return _pick(values, inverse, counts, return_inverse, return_counts)


def _pick(values: Tensor, inverse: Tensor, counts: Tensor, with_inverse: bool, with_counts: bool) -> Any:
    if not with_inverse and not with_counts:
        return values
    return (values, *([inverse] if with_inverse else []), *([counts] if with_counts else []))


def histogram(
    input: Tensor,
    bins: int | Tensor = 100,
    *,
    range: tuple[float, float] | None = None,  # noqa: A002  (torch's name)
    weight: Tensor | None = None,
    density: bool = False,
    out: Any = None,
) -> Any:
    """histogram(input, bins, *, range=None, weight=None, density=False, out=None) -> (Tensor, Tensor)

    A histogram of the elements of a float tensor: ``bins`` equal bins over
    ``range`` (the data's range by default), or the bin edges given as a
    1-D tensor. Each bin includes its left edge; the last also its right
    edge. Returns the named tuple ``(hist, bin_edges)``; with ``weight``
    each element adds its weight, and with ``density`` the histogram is
    normalized to integrate to 1.

    Args:
        input (Tensor): the values.
        bins (int or Tensor): the number of bins, or the increasing bin edges.
        range (tuple of float, optional): the ``(min, max)`` of the bins.
        weight (Tensor, optional): a weight per element of ``input``.
        density (bool): normalize the histogram to a density.
        out (tuple of Tensors, optional): tensors that receive ``hist`` and ``bin_edges``.

    Example:
        >>> ferrograd.histogram(ferrograd.tensor([1.0, 2.0, 1.0]), bins=4, range=(0.0, 3.0))
        ferrograd.return_types.histogram(
        hist=tensor([0., 2., 1., 0.]),
        bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    x = _input(input, "histogram").detach()
    if not x.is_floating_point():
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, "
                           f"but got input {x.dtype}")
    flat = x.reshape(-1)
    edges = _bin_edges("histogram", flat, bins, None if range is None else (range[0], range[1]))
    nb = edges.numel() - 1
    inside, at = _bin_index(flat, edges)
    w = _fg.ones_like(flat) if weight is None else weight.detach().reshape(-1).to(x.dtype)
    w = _fg.where(inside, w, _fg.zeros_like(w))
    hist = _fg.zeros(nb, dtype=x.dtype).index_add(0, at, w)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    if out is not None:
        out[0].copy_(hist)
        out[1].copy_(edges)
        hist, edges = out[0], out[1]
    return _return_types.histogram((hist, edges))


def _bin_edges(name: str, values: Tensor, bins: int | Tensor, range: Any) -> Tensor:  # noqa: A002
    """The edges of ``bins`` (a count of equal bins over ``range`` or the
    values' range, or the edges themselves) for the 1-D float ``values``."""
    if isinstance(bins, Tensor):
        edges = bins.detach().to(values.dtype)
        if edges.dim() != 1 or edges.numel() < 2:
            raise RuntimeError(
                f"torch.{name}(): bins tensor should have one dimension and at least 2 elements"
            )
        return edges
    if bins <= 0:
        raise RuntimeError(f"torch.{name}(): bins must be > 0")
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
    elif values.numel():
        lo, hi = float(values.min()), float(values.max())
    else:
        lo, hi = 0.0, 0.0
    if lo > hi:
        raise RuntimeError(f"torch.{name}(): min should not exceed max, but got min {lo} max {hi}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _fg.linspace(lo, hi, bins + 1, dtype=values.dtype)


def _bin_index(values: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """Which values lie within the edges, and each one's bin (each bin holds
    its left edge; the last also its right edge)."""
    nb = edges.numel() - 1
    inside = (values >= edges[0]) & (values <= edges[-1])
    return inside, (_searchsorted(edges, values, True, False, None) - 1).clamp(0, nb - 1)


def histogramdd(
    input: Tensor, bins: Any = 10, *, range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None, density: bool = False,
) -> Any:  # fmt: skip
    """histogramdd(input, bins, *, range=None, weight=None, density=False) -> (Tensor, tuple of Tensors)

    The ``D``-dimensional histogram of the points in the rows of ``input``
    (shape ``(..., D)``): along each dimension the bins are as
    :func:`histogram` makes them, from a count per dimension (one int for
    all), or the edges as a 1-D tensor per dimension. Returns the named
    tuple ``(hist, bin_edges)``, ``hist`` of one size per dimension's bins.

    Args:
        input (Tensor): the points, a float tensor of shape ``(..., D)``.
        bins (int, list of ints or list of Tensors): the bins of each dimension.
        range (list of floats, optional): ``[min_0, max_0, min_1, max_1, ...]``,
            the bins' range per dimension (the data's by default).
        weight (Tensor, optional): a weight per point (shape ``input.shape[:-1]``).
        density (bool): normalize the histogram to integrate to 1.

    Example:
        >>> x = ferrograd.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 0.5], [3.0, 3.0]])
        >>> ferrograd.histogramdd(x, bins=[2, 3]).hist
        tensor([[1., 1., 0.],
                [1., 0., 1.]])
    """
    x = _input(input, "histogramdd").detach()
    if not x.is_floating_point() or x.dim() < 1:
        raise RuntimeError(f"torch.histogramdd: expected a float tensor of shape (..., D), got {x.dtype} "
                           f"of shape {tuple(x.shape)}")
    d = x.shape[-1]
    points = x.reshape(-1, d)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(per_dim) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each dimension, "
                           f"but got {len(per_dim)}")
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram, range should have {2 * d} "
                           f"elements, but got {len(range)}")
    edges = [
        _bin_edges("histogramdd", points[:, i], per_dim[i], None if range is None else range[2 * i:2 * i + 2])
        for i in builtins.range(d)
    ]
    keep = _fg.ones(points.shape[0], dtype=_fg.bool)
    flat = _fg.zeros(points.shape[0], dtype=_fg.int64)
    for i, e in enumerate(edges):
        inside, at = _bin_index(points[:, i], e)
        keep = keep & inside
        flat = flat * (e.numel() - 1) + at
    sizes = [e.numel() - 1 for e in edges]
    n = points.shape[0]
    w = _fg.ones(n, dtype=x.dtype) if weight is None else weight.detach().reshape(-1).to(x.dtype)
    w = _fg.where(keep, w, _fg.zeros_like(w))
    hist = _fg.zeros(math.prod(sizes), dtype=x.dtype).index_add(0, flat, w).reshape(sizes)
    if density:
        volume = _fg.ones(sizes, dtype=x.dtype)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = sizes[i]
            volume = volume * (e[1:] - e[:-1]).reshape(shape)
        hist = hist / (hist.sum() * volume)
    return _return_types.histogramdd((hist, tuple(edges)))


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """bincount(input, weights=None, minlength=0) -> Tensor

    How often each value of a 1-D tensor of non-negative integers occurs,
    in a tensor of length ``max(input) + 1`` (at least ``minlength``); with
    ``weights`` the sum of their weights instead (float64 for integer
    weights, else their dtype). Not differentiable.

    Args:
        input (Tensor): 1-D non-negative integers.
        weights (Tensor, optional): a weight per element of ``input``.
        minlength (int): the least length of the result.

    Example:
        >>> ferrograd.bincount(ferrograd.tensor([1, 1, 3]), minlength=5)
        tensor([0, 2, 0, 1, 0])
    """
    return _input(input, "bincount").bincount(weights, minlength)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,  # noqa: A002
          out: Tensor | None = None) -> Tensor:
    """histc(input, bins=100, min=0, max=0, *, out=None) -> Tensor

    Counts of the elements of a float tensor in ``bins`` equal bins over
    ``[min, max]`` (the data's range when both are 0); elements outside the
    range are ignored, and the last bin includes ``max``.

    Args:
        input (Tensor): the values.
        bins (int): the number of bins.
        min (float): the lower end of the range.
        max (float): the upper end of the range.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.histc(ferrograd.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    return _finish(_input(input, "histc").histc(bins, min, max), out)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """mode(input, dim=-1, keepdim=False) -> (Tensor, LongTensor)

    The most frequent value along ``dim`` (the smallest of equally
    frequent ones) and its last position, as the named tuple ``(values,
    indices)``; the gradient of each value goes to that position.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to reduce.
        keepdim (bool): keep ``dim`` with size 1.

    Example:
        >>> ferrograd.mode(ferrograd.tensor([[1, 3, 3, 2, 1], [2, 2, 5, 5, 0]]), 1)
        ferrograd.return_types.mode(
        values=tensor([1, 2]),
        indices=tensor([4, 1]))
    """
    return _input(input, "mode").mode(dim, keepdim)


def _running_extremum(name: str, summary: str, example: str, values: str):
    """``cummax``/``cummin``: the running extremum along ``dim`` and where it came from."""

    def op(input: Tensor, dim: int) -> Any:
        return getattr(_input(input, name), name)(dim)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, dim) -> (Tensor, LongTensor)

    {summary}

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to scan.

    Example:
        >>> ferrograd.{name}(ferrograd.tensor({example}), 0)
        ferrograd.return_types.{name}(
        values=tensor({values}),
        indices=tensor([0, 1, 1, 3]))
    """
    return op


cummax = _running_extremum(
    "cummax",
    """The running maximum along ``dim`` and the position it came from (the
    later one among equal values; a NaN, once reached, stays), as the named
    tuple ``(values, indices)``; gradients go to those positions.""",
    "[1.0, 3.0, 2.0, 5.0]", "[1., 3., 3., 5.]",
)
cummin = _running_extremum(
    "cummin",
    """The running minimum along ``dim`` and the position it came from, as
    :func:`cummax` does for the maximum.""",
    "[3.0, 1.0, 2.0, 0.5]", "[3.0000, 1.0000, 1.0000, 0.5000]",
)


def logcumsumexp(input: Tensor, dim: int, *, out: Tensor | None = None) -> Tensor:
    """logcumsumexp(input, dim, *, out=None) -> Tensor

    ``log(cumsum(exp(input)))`` along ``dim``, computed as a running
    log-add so that nothing overflows; differentiable to any order.

    Args:
        input (Tensor): a floating-point tensor.
        dim (int): the dimension to scan.
        out (Tensor, optional): a tensor of the result's shape that receives the result.

    Example:
        >>> ferrograd.logcumsumexp(ferrograd.tensor([0.0, 0.0, 1000.0]), 0)
        tensor([0.0000e+00, 6.9315e-01, 1.0000e+03])
    """
    return _finish(_input(input, "logcumsumexp").logcumsumexp(dim), out)


def _unique_method(self: Tensor, sorted: bool = True, return_inverse: bool = False,
                   return_counts: bool = False, dim: int | None = None) -> Any:
    return unique(self, sorted, return_inverse, return_counts, dim)


def _unique_consecutive_method(self: Tensor, return_inverse: bool = False, return_counts: bool = False,
                               dim: int | None = None) -> Any:
    return unique_consecutive(self, return_inverse, return_counts, dim)


def _histogram_method(self: Tensor, bins: int | Tensor = 100, *, range: Any = None,  # noqa: A002
                      weight: Tensor | None = None, density: bool = False) -> Any:
    return histogram(self, bins, range=range, weight=weight, density=density)


for _name, _fn in [("unique", _unique_method), ("unique_consecutive", _unique_consecutive_method),
                   ("histogram", _histogram_method)]:
    _fn.__name__ = _fn.__qualname__ = _name
    _fn.__doc__ = f"See :func:`ferrograd.{_name}`."
    _fn = torch_errors(_fn, _name)
    setattr(Tensor, _name, _fn)
    setattr(BatchedTensor, _name, _fn)
