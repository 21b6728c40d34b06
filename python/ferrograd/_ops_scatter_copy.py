"""Writes into copies and copies of views, composed from other ops:
``put``, ``masked_scatter``, ``scatter_reduce``, ``index_reduce``, the
``*_scatter`` functions (``select_scatter``, ``slice_scatter``,
``diagonal_scatter``, ``as_strided_scatter``), the ``*_copy`` functions
(a view op's result in fresh memory) and ``Tensor.fill_diagonal_``.

Each is written with differentiable ferrograd ops reached as module
attributes at call time, so reverse mode, forward mode and ``vmap`` go
through it with no rule of its own. A ``*_scatter`` function is
``out = input.clone()`` with the view of ``out`` overwritten by
``copy_(src)``: the gradient reaches ``input`` everywhere but the view,
and ``src`` through the view. In-place forms compute on a copy of the
tensor and write the result back with ``copy_``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import ferrograd as _fg

from ._core import Tensor
from ._core import dtype as _dtype
from ._ops_composite import _scalar_type
from ._ops_reduce_extra import _install, _wrap_dim, _write_back

__all__ = [
    "alias_copy", "as_strided_copy", "as_strided_scatter", "detach_copy", "diagonal_copy", "diagonal_scatter",
    "expand_copy", "index_reduce", "masked_scatter", "narrow_copy", "permute_copy", "put", "scatter_reduce",
    "select_copy", "select_scatter", "slice_copy", "slice_scatter", "split_copy", "split_with_sizes_copy",
    "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy",
    "view_as_complex_copy", "view_as_real_copy", "view_copy",
]  # fmt: skip


def _overwrite(input: Tensor, view_of: Callable[[Tensor], Tensor], src: Tensor) -> Tensor:
    """A copy of ``input`` whose view ``view_of(copy)`` holds ``src`` (of the view's exact shape).

    The view is taken of the elements' flat positions rather than of a
    copy written in place: ``input`` scattered at those positions is the
    same value, and a scatter's derivatives (of any order, batched or not)
    need no view bookkeeping.
    """
    ids = _fg.arange(input.numel(), dtype=_fg.int64).reshape(input.shape)
    return _scatter_at(input, view_of(ids), src)


def _scatter_at(input: Tensor, positions: Tensor, src: Tensor) -> Tensor:
    """``input`` with ``src`` written at the flat positions ``positions`` (of ``src``'s shape)."""
    if tuple(positions.shape) != tuple(src.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(positions.shape)}"
        )
    flat = input.reshape(-1).scatter(0, positions.reshape(-1), src.reshape(-1).to(input.dtype))
    return flat.reshape(input.shape)


# ---------------------------------------------------------------------------
# put / masked_scatter


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """put(input, index, source, accumulate=False) -> Tensor

    A copy of ``input`` with ``source`` written at the flat (row-major)
    positions ``index``, or added there when ``accumulate`` (see :meth:`Tensor.put_`).

    Args:
        input (Tensor): the tensor copied.
        index (Tensor): int64 flat positions (negative count from the end).
        source (Tensor): the values, one per index.
        accumulate (bool): add to the elements instead of replacing them.

    Example:
        >>> ferrograd.put(ferrograd.zeros(2, 2), ferrograd.tensor([0, 3]), ferrograd.tensor([1.0, 2.0]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    return input.put(index, source, accumulate=accumulate)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """masked_scatter(input, mask, source) -> Tensor

    A copy of ``input`` (broadcast with ``mask``) whose elements where
    ``mask`` is True are replaced, in row-major order, by the first
    elements of ``source``.

    Args:
        input (Tensor): the tensor copied.
        mask (Tensor): a bool tensor broadcastable with ``input``.
        source (Tensor): the values, of ``input``'s dtype, with at least as
            many elements as ``mask`` has True entries.

    Example:
        >>> mask = ferrograd.tensor([[True, False], [False, True]])
        >>> ferrograd.masked_scatter(ferrograd.zeros(2, 2), mask, ferrograd.tensor([1.0, 2.0, 3.0]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    if mask.dtype != _fg.bool:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {_scalar_type(mask.dtype)}"
        )
    if input.dtype != source.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but "
            f"got{_scalar_type(input.dtype)} and "
            f"{_scalar_type(source.dtype)}"
        )
    shape = _fg.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x, m = input.expand(*shape), mask.expand(*shape)
    flat = m.reshape(-1)
    count = int(flat.sum().item()) if flat.numel() else 0
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if count == 0:
        return x.clone()
    # The k-th True entry reads source[k]: its running count minus one.
    position = (flat.to(_fg.int64).cumsum(0) - 1).clamp(min=0)
    picked = source.reshape(-1).gather(0, position).reshape(shape)
    return _fg.where(m, picked, x)


def _masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In-place version of :meth:`Tensor.masked_scatter` (``mask`` broadcasts to this tensor's shape)."""
    return _write_back(self, masked_scatter(self.clone(), mask.expand(*self.shape), source))


# ---------------------------------------------------------------------------
# scatter_reduce / index_reduce

_INT_BOUNDS = {
    "uint8": (0, 255), "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1), "bool": (0, 1),
}  # fmt: skip


def _lowest_highest(d: _dtype) -> tuple[Any, Any]:
    if d.is_floating_point or d.is_complex:
        return -math.inf, math.inf
    return _INT_BOUNDS[repr(d).rpartition(".")[2]]


def _check_scatter(input: Tensor, dim: int, index: Tensor, src: Tensor) -> int:
    if index.dtype != _fg.int64:
        raise RuntimeError("scatter(): Expected dtype int64 for index")
    if input.dtype != src.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not input.dim() == index.dim() == src.dim():
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    d = _wrap_dim(dim, input.dim())
    for i in range(index.dim()):
        if index.size(i) > src.size(i) or (i != d and index.size(i) > input.size(i)):
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be smaller than self {list(input.shape)} apart from "
                f"dimension {d} and to be smaller size than src {list(src.shape)}"
            )
    if index.numel():
        lo, hi = int(index.min().item()), int(index.max().item())
        n = input.size(d) if input.dim() else 1
        bad = lo if lo < 0 else hi
        if lo < 0 or hi >= n:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    return d


def _region(t: Tensor, shape: Sequence[int], d: int) -> Tensor:
    """``t`` narrowed to ``shape`` in every dimension but ``d``."""
    for i, n in enumerate(shape):
        if i != d and t.size(i) != n:
            t = t.narrow(i, 0, n)
    return t


def _reduce_by_membership(
    x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool
) -> Tensor:
    """``scatter_reduce`` for ``prod``/``amax``/``amin`` on the region of
    ``x`` that ``index`` covers: each target position reduces over a
    (target x source) membership mask, so the reduction ops' own gradients
    apply (ties share the gradient of ``amax``/``amin`` evenly, as in torch)."""
    n = x.size(d)
    xs = x.movedim(d, -1)  # (..., N)
    idx = index.movedim(d, -1)  # (..., K)
    vals = src.movedim(d, -1)
    member = idx.unsqueeze(-1) == _fg.arange(n, dtype=_fg.int64)  # (..., K, N)
    hit = member.any(-2)  # (..., N)
    spread = vals.unsqueeze(-1).expand(*member.shape)
    if reduce == "prod":
        reduced = _fg.where(member, spread, _fg.ones_like(spread)).prod(-2)
        out = reduced * xs if include_self else _fg.where(hit, reduced, xs)
    else:
        low, high = _lowest_highest(x.dtype)
        fill = low if reduce == "amax" else high
        rows = spread.masked_fill(member.logical_not(), fill)
        if include_self:
            rows = _fg.cat([xs.unsqueeze(-2), rows], dim=-2)
        reduced = rows.amax(-2) if reduce == "amax" else rows.amin(-2)
        out = reduced if include_self else _fg.where(hit, reduced, xs)
    return out.movedim(-1, d)


def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor

    A copy of ``input`` where each element that ``index`` points at along
    ``dim`` is the reduction of the ``src`` elements sent to it (and of
    itself when ``include_self``): for ``dim=0``,
    ``out[index[i][j]][j] = reduce(..., src[i][j])``. Elements no index
    points at keep their value. ``'mean'`` divides by the number of values
    reduced (rounding down for integers).

    ``'prod'``, ``'amax'`` and ``'amin'`` build a mask of (target, source)
    pairs along ``dim``: memory grows as ``index.numel() * input.size(dim)``.

    Args:
        input (Tensor): the tensor copied.
        dim (int): the dimension indexed.
        index (Tensor): int64 targets along ``dim``, as many dimensions as
            ``input``, no larger than ``src`` (nor than ``input`` but in ``dim``).
        src (Tensor): the values sent, of ``input``'s dtype.
        reduce (str): ``'sum'``, ``'prod'``, ``'mean'``, ``'amax'`` or ``'amin'``.
        include_self (bool): whether the targeted elements of ``input`` take part.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0, 4.0])
        >>> index = ferrograd.tensor([0, 1, 0, 1, 2])
        >>> src = ferrograd.tensor([5.0, 6.0, 7.0, 8.0, 9.0])
        >>> x.scatter_reduce(0, index, src, "sum")
        tensor([13., 16., 12.,  4.])
        >>> x.scatter_reduce(0, index, src, "amax", include_self=False)
        tensor([7., 8., 9., 4.])
    """
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d = _check_scatter(input, dim, index, src)
    src = _region(src, index.shape, -1)  # the part of src that index reads
    if index.numel() == 0:
        return input.clone()
    if reduce in ("sum", "mean"):
        base = input if include_self else input.scatter(d, index, 0)
        total = base.scatter_add(d, index, src)
        if reduce == "sum":
            return total
        counts = _fg.ones_like(input)
        if not include_self:
            counts = counts.scatter(d, index, 0)
        counts = counts.scatter_add(d, index, _fg.ones_like(src))
        if input.is_floating_point() or input.is_complex():
            return total / counts
        return total.div(counts, rounding_mode="floor")
    region = _region(input, index.shape, d)
    reduced = _reduce_by_membership(region, d, index, src, reduce, include_self)
    if tuple(region.shape) == tuple(input.shape):
        return reduced
    return _overwrite(input, lambda out: _region(out, index.shape, d), reduced)


def _scatter_reduce_(
    self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """In-place version of :meth:`Tensor.scatter_reduce`."""
    return _write_back(self, scatter_reduce(self.clone(), dim, index, src, reduce, include_self=include_self))


def index_reduce(
    input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """index_reduce(input, dim, index, source, reduce, *, include_self=True) -> Tensor

    A copy of ``input`` where each slice ``index[i]`` along ``dim`` is
    reduced with the slice ``i`` of ``source`` (and with itself when
    ``include_self``): :func:`scatter_reduce` with ``index`` spread over
    ``source``'s shape.

    Args:
        input (Tensor): the tensor copied.
        dim (int): the dimension indexed.
        index (Tensor): 1-D int64 targets, one per slice of ``source`` along ``dim``.
        source (Tensor): the values, shaped like ``input`` but in ``dim``.
        reduce (str): ``'prod'``, ``'mean'``, ``'amax'`` or ``'amin'``.
        include_self (bool): whether the targeted slices of ``input`` take part.

    Example:
        >>> x = ferrograd.ones(3, 2)
        >>> x.index_reduce(0, ferrograd.tensor([0, 0]), ferrograd.tensor([[2.0, 3.0], [4.0, 5.0]]), "prod")
        tensor([[ 8., 15.],
                [ 1.,  1.],
                [ 1.,  1.]])
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
        )
    if index.dim() > 1:
        raise RuntimeError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{_scalar_type(index.dtype)} and size: {list(index.shape)}"
        )
    d = _wrap_dim(dim, input.dim())
    if input.dim() != source.dim() or any(
        input.size(i) != source.size(i) for i in range(input.dim()) if i != d
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. "
            "Got self.shape "
            f"= {list(input.shape)} source.shape = {list(source.shape)}"
        )
    if index.numel() != (source.size(d) if source.dim() else 1):
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
            f"({source.size(d)}), for dim: {d}"
        )
    shape = [1] * source.dim()
    shape[d] = -1
    spread = index.reshape(shape).expand(*source.shape)
    return scatter_reduce(input, d, spread, source, reduce, include_self=include_self)


def _index_reduce_(
    self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """In-place version of :meth:`Tensor.index_reduce`."""
    return _write_back(
        self, index_reduce(self.clone(), dim, index, source, reduce, include_self=include_self)
    )


def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """fill_diagonal_(fill_value, wrap=False) -> Tensor

    Writes ``fill_value`` on the main diagonal (the elements with all
    indices equal) in place. A tall matrix with ``wrap`` continues the
    diagonal below, restarting every ``cols + 1`` rows (NumPy's rule).

    Args:
        fill_value (number): the value written.
        wrap (bool): continue past the first ``cols`` rows of a tall matrix.

    Example:
        >>> ferrograd.zeros(2, 3).fill_diagonal_(5.0)
        tensor([[5., 0., 0.],
                [0., 5., 0.]])
    """
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    shape = tuple(self.shape)
    if self.dim() > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    # In row-major order the diagonal is every `step`-th element from 0.
    step = sum(math.prod(shape[i + 1 :]) for i in range(len(shape)))
    flat = _fg.arange(self.numel(), dtype=_fg.int64)
    on = flat % step == 0
    if not (wrap and self.dim() == 2):
        on = on & (flat <= (min(shape) - 1) * step)
    return self.masked_fill_(on.reshape(shape), fill_value)


# ---------------------------------------------------------------------------
# *_scatter


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """select_scatter(input, src, dim, index) -> Tensor

    A copy of ``input`` with ``src`` written into ``input.select(dim, index)``.

    Args:
        input (Tensor): the tensor copied.
        src (Tensor): the values, of the selected slice's shape.
        dim (int): the dimension selected from.
        index (int): the position selected along ``dim``.

    Example:
        >>> ferrograd.select_scatter(ferrograd.zeros(2, 2), ferrograd.ones(2), 0, 1)
        tensor([[0., 0.],
                [1., 1.]])
    """
    return _overwrite(input, lambda out: out.select(dim, index), src)


def _slice_view(t: Tensor, dim: int, start: int | None, end: int | None, step: int) -> Tensor:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _wrap_dim(dim, t.dim())
    return t[(slice(None),) * d + (slice(start, end, step),)]


def slice_scatter(
    input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    """slice_scatter(input, src, dim=0, start=None, end=None, step=1) -> Tensor

    A copy of ``input`` with ``src`` written into the slice
    ``start:end:step`` of dimension ``dim``.

    Args:
        input (Tensor): the tensor copied.
        src (Tensor): the values, of the slice's shape.
        dim (int): the dimension sliced.
        start (int, optional): the first position (0 when None).
        end (int, optional): the position past the last (the size when None).
        step (int): the distance between positions (positive).

    Example:
        >>> ferrograd.slice_scatter(ferrograd.zeros(2, 4), ferrograd.ones(2, 2), dim=1, start=0, step=2)
        tensor([[1., 0., 1., 0.],
                [1., 0., 1., 0.]])
    """
    return _overwrite(input, lambda out: _slice_view(out, dim, start, end, step), src)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """diagonal_scatter(input, src, offset=0, dim1=0, dim2=1) -> Tensor

    A copy of ``input`` with ``src`` written into ``input.diagonal(offset, dim1, dim2)``.

    Args:
        input (Tensor): the tensor copied (at least 2-D).
        src (Tensor): the values, of the diagonal's shape.
        offset (int): the diagonal: 0 the main one, positive above, negative below.
        dim1 (int): the first dimension of the matrices.
        dim2 (int): the second dimension of the matrices.

    Example:
        >>> ferrograd.diagonal_scatter(ferrograd.zeros(2, 3), ferrograd.ones(2), 1)
        tensor([[0., 1., 0.],
                [0., 0., 1.]])
    """
    return _overwrite(input, lambda out: out.diagonal(offset, dim1, dim2), src)


def as_strided_scatter(
    input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    """as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor

    A copy of ``input`` (keeping its strides) with ``src`` written into the
    copy's ``as_strided(size, stride, storage_offset)`` view.

    Args:
        input (Tensor): the tensor copied.
        src (Tensor): the values, of shape ``size``.
        size (tuple of ints): the view's shape.
        stride (tuple of ints): the view's strides, in elements of the copy's memory.
        storage_offset (int, optional): the view's first element in that memory (0 when None).

    Example:
        >>> ferrograd.as_strided_scatter(ferrograd.zeros(3, 3), ferrograd.ones(3), (3,), (4,))
        tensor([[1., 0., 0.],
                [0., 1., 0.],
                [0., 0., 1.]])
    """
    # The flat position of the element at each place of the copy's memory
    # (the copy keeps input's strides when it is dense, as clone does).
    shape, strides = tuple(input.shape), _fg.empty_like(input).stride()
    place = _fg.zeros((), dtype=_fg.int64)
    for n, st in zip(shape, strides, strict=True):
        place = place.unsqueeze(-1) + _fg.arange(n, dtype=_fg.int64) * st
    memory = _fg.zeros(max(input.numel(), 1), dtype=_fg.int64)
    memory = memory.scatter(0, place.reshape(-1), _fg.arange(input.numel(), dtype=_fg.int64))
    offset = 0 if storage_offset is None else storage_offset
    return _scatter_at(input, memory.as_strided(tuple(size), tuple(stride), offset), src)


# ---------------------------------------------------------------------------
# *_copy


def _fresh(t: Tensor) -> Tensor:
    return t.clone(memory_format=_fg.contiguous_format)


def alias_copy(input: Tensor) -> Tensor:
    """alias_copy(input) -> Tensor

    A copy of ``input`` in fresh contiguous memory (torch's ``alias``, copied).

    Args:
        input (Tensor): the tensor copied.

    Example:
        >>> ferrograd.alias_copy(ferrograd.tensor([1, 2]))
        tensor([1, 2])
    """
    return _fresh(input)


def as_strided_copy(
    input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> Tensor:
    """as_strided_copy(input, size, stride, storage_offset=None) -> Tensor

    :meth:`Tensor.as_strided`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor viewed.
        size (tuple of ints): the view's shape.
        stride (tuple of ints): the view's strides, in elements.
        storage_offset (int, optional): the view's first element (``input``'s own when None).

    Example:
        >>> ferrograd.as_strided_copy(ferrograd.arange(4), (2, 2), (1, 1))
        tensor([[0, 1],
                [1, 2]])
    """
    if storage_offset is None:
        return _fresh(input.as_strided(tuple(size), tuple(stride)))
    return _fresh(input.as_strided(tuple(size), tuple(stride), storage_offset))


def detach_copy(input: Tensor) -> Tensor:
    """detach_copy(input) -> Tensor

    :meth:`Tensor.detach`'s result, copied to fresh memory (outside the graph).

    Args:
        input (Tensor): the tensor detached.

    Example:
        >>> ferrograd.detach_copy(ferrograd.ones(2, requires_grad=True))
        tensor([1., 1.])
    """
    return _fresh(input.detach())


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """diagonal_copy(input, offset=0, dim1=0, dim2=1) -> Tensor

    :meth:`Tensor.diagonal`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor viewed (at least 2-D).
        offset (int): the diagonal: 0 the main one, positive above, negative below.
        dim1 (int): the first dimension of the matrices.
        dim2 (int): the second dimension of the matrices.

    Example:
        >>> ferrograd.diagonal_copy(ferrograd.tensor([[1, 2], [3, 4]]))
        tensor([1, 4])
    """
    return _fresh(input.diagonal(offset, dim1, dim2))


def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    """expand_copy(input, size, *, implicit=False) -> Tensor

    :meth:`Tensor.expand`'s view, copied to fresh contiguous memory (every
    repeated element stored).

    Args:
        input (Tensor): the tensor expanded.
        size (tuple of ints): the new shape (-1 keeps a size).
        implicit (bool): accepted for torch compatibility.

    Example:
        >>> ferrograd.expand_copy(ferrograd.tensor([1, 2]), (2, 2))
        tensor([[1, 2],
                [1, 2]])
    """
    del implicit
    return _fresh(input.expand(*size))


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """narrow_copy(input, dim, start, length) -> Tensor

    :meth:`Tensor.narrow`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor narrowed.
        dim (int): the dimension narrowed.
        start (int): the first position kept.
        length (int): the number of positions kept.

    Example:
        >>> ferrograd.narrow_copy(ferrograd.arange(5), 0, 1, 3)
        tensor([1, 2, 3])
    """
    return _fresh(input.narrow(dim, start, length))


def permute_copy(input: Tensor, dims: Sequence[int]) -> Tensor:
    """permute_copy(input, dims) -> Tensor

    :meth:`Tensor.permute`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor permuted.
        dims (tuple of ints): the new order of the dimensions.

    Example:
        >>> ferrograd.permute_copy(ferrograd.zeros(2, 3), (1, 0)).shape
        ferrograd.Size([3, 2])
    """
    return _fresh(input.permute(*dims))


def select_copy(input: Tensor, dim: int, index: int) -> Tensor:
    """select_copy(input, dim, index) -> Tensor

    :meth:`Tensor.select`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor selected from.
        dim (int): the dimension selected from.
        index (int): the position selected.

    Example:
        >>> ferrograd.select_copy(ferrograd.tensor([[1, 2], [3, 4]]), 1, 0)
        tensor([1, 3])
    """
    return _fresh(input.select(dim, index))


def slice_copy(
    input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    """slice_copy(input, dim=0, start=None, end=None, step=1) -> Tensor

    The slice ``start:end:step`` of dimension ``dim``, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor sliced.
        dim (int): the dimension sliced.
        start (int, optional): the first position (0 when None).
        end (int, optional): the position past the last (the size when None).
        step (int): the distance between positions (positive).

    Example:
        >>> ferrograd.slice_copy(ferrograd.arange(6), 0, 1, None, 2)
        tensor([1, 3, 5])
    """
    return _fresh(_slice_view(input, dim, start, end, step))


def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """split_copy(input, split_size, dim=0) -> tuple of Tensors

    :meth:`Tensor.split`'s pieces, each copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor split.
        split_size (int): the size of each piece (the last may be smaller).
        dim (int): the dimension split.

    Example:
        >>> ferrograd.split_copy(ferrograd.arange(3), 2)
        (tensor([0, 1]), tensor([2]))
    """
    return tuple(_fresh(t) for t in input.split(split_size, dim))


def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """split_with_sizes_copy(input, split_sizes, dim=0) -> tuple of Tensors

    :func:`ferrograd.split_with_sizes`'s pieces, each copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor split.
        split_sizes (list of ints): the size of each piece (adding up to the size of ``dim``).
        dim (int): the dimension split.

    Example:
        >>> ferrograd.split_with_sizes_copy(ferrograd.arange(3), [1, 2])
        (tensor([0]), tensor([1, 2]))
    """
    return tuple(_fresh(t) for t in _fg.split_with_sizes(input, split_sizes, dim))


def squeeze_copy(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """squeeze_copy(input, dim=None) -> Tensor

    :meth:`Tensor.squeeze`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor squeezed.
        dim (int or tuple of ints, optional): the size-1 dimensions removed (all when None).

    Example:
        >>> ferrograd.squeeze_copy(ferrograd.zeros(1, 2, 1), (0, 2)).shape
        ferrograd.Size([2])
    """
    return _fresh(input.squeeze() if dim is None else input.squeeze(dim))


def t_copy(input: Tensor) -> Tensor:
    """t_copy(input) -> Tensor

    :meth:`Tensor.t`'s view (the transpose of a matrix; 0-D and 1-D tensors
    as they are), copied to fresh contiguous memory.

    Args:
        input (Tensor): a tensor with at most two dimensions.

    Example:
        >>> ferrograd.t_copy(ferrograd.tensor([[1, 2]]))
        tensor([[1],
                [2]])
    """
    return _fresh(input.t())


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """transpose_copy(input, dim0, dim1) -> Tensor

    :meth:`Tensor.transpose`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor transposed.
        dim0 (int): the first dimension swapped.
        dim1 (int): the second dimension swapped.

    Example:
        >>> ferrograd.transpose_copy(ferrograd.zeros(2, 3, 4), 0, 2).shape
        ferrograd.Size([4, 3, 2])
    """
    return _fresh(input.transpose(dim0, dim1))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """unbind_copy(input, dim=0) -> tuple of Tensors

    :meth:`Tensor.unbind`'s slices, each copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor unbound.
        dim (int): the dimension removed.

    Example:
        >>> ferrograd.unbind_copy(ferrograd.tensor([[1, 2], [3, 4]]), 1)
        (tensor([1, 3]), tensor([2, 4]))
    """
    return tuple(_fresh(t) for t in input.unbind(dim))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """unfold_copy(input, dimension, size, step) -> Tensor

    The windows of ``size`` consecutive elements along ``dimension``,
    ``step`` apart, in fresh memory: ``dimension`` becomes the window count
    ``(n - size) // step + 1`` and a last dimension of length ``size`` holds
    each window (torch's ``Tensor.unfold``, copied).

    Args:
        input (Tensor): the tensor read.
        dimension (int): the dimension the windows slide along.
        size (int): the length of each window.
        step (int): the distance between window starts (positive).

    Example:
        >>> ferrograd.unfold_copy(ferrograd.arange(5), 0, 2, 2)
        tensor([[0, 1],
                [2, 3]])
    """
    x = input.reshape(1) if input.dim() == 0 else input
    d = _wrap_dim(dimension, x.dim())
    n = x.size(d)
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    windows = [x.narrow(d, i * step, size) for i in range((n - size) // step + 1)]
    out = _fg.stack(windows, dim=d).movedim(d + 1, -1)
    return out.reshape(size) if input.dim() == 0 else out.contiguous()


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    """unsqueeze_copy(input, dim) -> Tensor

    :meth:`Tensor.unsqueeze`'s view, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor viewed.
        dim (int): the position of the new size-1 dimension.

    Example:
        >>> ferrograd.unsqueeze_copy(ferrograd.tensor([1, 2]), 1).shape
        ferrograd.Size([2, 1])
    """
    return _fresh(input.unsqueeze(dim))


def view_as_complex_copy(input: Tensor) -> Tensor:
    """view_as_complex_copy(input) -> Tensor

    :func:`ferrograd.view_as_complex`'s view, copied to fresh memory.

    Args:
        input (Tensor): a float tensor whose last dimension has size 2 (real, imaginary).

    Example:
        >>> ferrograd.view_as_complex_copy(ferrograd.tensor([[1.0, 2.0]]))
        tensor([1.+2.j])
    """
    return _fresh(_fg.view_as_complex(input))


def view_as_real_copy(input: Tensor) -> Tensor:
    """view_as_real_copy(input) -> Tensor

    :func:`ferrograd.view_as_real`'s view, copied to fresh memory.

    Args:
        input (Tensor): a complex tensor.

    Example:
        >>> ferrograd.view_as_real_copy(ferrograd.tensor([1.0 + 2.0j]))
        tensor([[1., 2.]])
    """
    return _fresh(_fg.view_as_real(input))


def view_copy(input: Tensor, size: Any) -> Tensor:
    """view_copy(input, size) -> Tensor
    view_copy(input, dtype) -> Tensor

    :meth:`Tensor.view`'s result, copied to fresh contiguous memory.

    Args:
        input (Tensor): the tensor viewed.
        size (tuple of ints or ferrograd.dtype): the new shape (one -1
            inferred), or a dtype (only ``input``'s own: ferrograd does not
            reinterpret memory as another dtype).

    Example:
        >>> ferrograd.view_copy(ferrograd.arange(4), (2, 2))
        tensor([[0, 1],
                [2, 3]])
    """
    if isinstance(size, _dtype):
        if size != input.dtype:
            raise TypeError(
                f"view(dtype) between different dtypes ({repr(input.dtype).rpartition('.')[2]} -> "
                f"{repr(size).rpartition('.')[2]}) is not supported"
            )
        return _fresh(input)
    return _fresh(input.view(*size) if isinstance(size, (list, tuple)) else input.view(size))


for _fn in (
    narrow_copy,
    masked_scatter,
    scatter_reduce,
    index_reduce,
    select_scatter,
    slice_scatter,
    diagonal_scatter,
    as_strided_scatter,
):
    _install(_fn.__name__, _fn)
_METHODS: list[tuple[str, Callable[..., Any]]] = [
    ("masked_scatter_", _masked_scatter_), ("scatter_reduce_", _scatter_reduce_),
    ("index_reduce_", _index_reduce_), ("fill_diagonal_", _fill_diagonal_),
]  # fmt: skip
for _name, _method in _METHODS:
    _method.__name__ = _method.__qualname__ = _name
    _install(_name, _method)
del _fn, _name, _method
