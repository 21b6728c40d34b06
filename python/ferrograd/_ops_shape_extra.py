"""Products, splits, stacks and small tensor utilities composed from other
ops: ``kron``, ``inner``, ``vdot``, ``cross``, ``diagflat``, ``rot90``,
``combinations``, ``tril_indices``/``triu_indices``, ``tensor_split`` and
its ``hsplit``/``vsplit``/``dsplit`` forms, ``split_with_sizes`` and the
``unsafe_*`` splits, ``column_stack``/``row_stack``, ``take_along_dim``;
the module forms of ``clone``, ``detach``, ``ravel`` and a few predicates;
and the Tensor methods ``matrix_power``, ``addmm_``, ``sgn_``,
``get_device``, ``dim_order``, ``map_``/``map2_`` and the random fills
``cauchy_``, ``geometric_`` and ``log_normal_``.

Each differentiable function is written with differentiable ferrograd ops
reached as module attributes at call time (``_fg.cat``), so reverse mode,
forward mode and ``vmap`` go through it with no rule of its own.
"""

from __future__ import annotations

import inspect
import itertools
import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ferrograd as _fg

from ._core import Tensor
from ._core import dtype as _dtype
from ._ops_composite import _scalar_type
from ._ops_reduce_extra import _install, _wrap_dim, _write_back

__all__ = [
    "clone", "column_stack", "combinations", "cross", "detach", "diagflat", "dsplit", "get_device", "hsplit",
    "inner", "is_distributed", "is_inference", "is_same_size", "is_signed", "kron", "ravel", "rot90",
    "row_stack", "split_with_sizes", "take_along_dim", "tensor_split", "tril_indices", "triu_indices",
    "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes", "vdot", "vsplit",
]  # fmt: skip


# ---------------------------------------------------------------------------
# Products


def kron(input: Tensor, other: Tensor) -> Tensor:
    """kron(input, other) -> Tensor

    The Kronecker product: every element of ``input`` times the whole of
    ``other``, the blocks laid out like ``input``'s elements. The tensor with
    fewer dimensions is read with leading size-1 dimensions; the result has
    sizes ``input.shape[i] * other.shape[i]``.

    Args:
        input (Tensor): the first factor.
        other (Tensor): the second factor.

    Example:
        >>> ferrograd.kron(ferrograd.tensor([[1, 2], [3, 4]]), ferrograd.tensor([1, 10]))
        tensor([[ 1, 10,  2, 20],
                [ 3, 30,  4, 40]])
    """
    nd = max(input.dim(), other.dim())
    a_shape = [1] * (nd - input.dim()) + list(input.shape)
    b_shape = [1] * (nd - other.dim()) + list(other.shape)
    # a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...): their product
    # holds a[i] * b[j] at (i0, j0, i1, j1, ...), which merges pairwise.
    a = input.reshape([s for n in a_shape for s in (n, 1)])
    b = other.reshape([s for n in b_shape for s in (1, n)])
    return (a * b).reshape([p * q for p, q in zip(a_shape, b_shape, strict=True)])


def inner(input: Tensor, other: Tensor) -> Tensor:
    """inner(input, other) -> Tensor

    The dot products over the last dimension of both tensors (the product
    when either is 0-dim); the result has shape
    ``input.shape[:-1] + other.shape[:-1]``.

    Args:
        input (Tensor): the first tensor.
        other (Tensor): the second tensor; its last size equals ``input``'s.

    Example:
        >>> ferrograd.inner(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]), ferrograd.tensor([1.0, 1.0]))
        tensor([3., 7.])
    """
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.size(-1) != other.size(-1):
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    return _fg.tensordot(input, other, dims=([-1], [-1]))


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """vdot(input, other) -> Tensor

    The dot product of two 1-D tensors with ``input`` conjugated:
    ``sum(conj(input) * other)``.

    Args:
        input (Tensor): the first vector (conjugated when complex).
        other (Tensor): the second vector, of the same size and dtype.

    Example:
        >>> ferrograd.vdot(ferrograd.tensor([1j, 2.0]), ferrograd.tensor([1j, 3.0]))
        tensor(7.+0.j)
    """
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    if input.numel() != other.numel():
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.numel()}] and src [{other.numel()}] "
            "to have the "
            f"same number of elements, but got {input.numel()} and {other.numel()} elements respectively"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_scalar_type(input.dtype)} and "
            f"{_scalar_type(other.dtype)}"
        )
    return (input.conj() * other).sum() if input.is_complex() else (input * other).sum()


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """cross(input, other, dim=None) -> Tensor

    The cross product of the 3-vectors along ``dim`` (the other dimensions
    broadcast), as :func:`ferrograd.linalg.cross`. When ``dim`` is None the
    first dimension of ``input`` of size 3 is used, with torch's
    deprecation warning (pass ``dim``, or use ``linalg.cross``).

    Args:
        input (Tensor): the first vectors.
        other (Tensor): the second vectors, with as many dimensions as ``input``.
        dim (int, optional): the dimension of size 3 the vectors lie along.

    Example:
        >>> ferrograd.cross(ferrograd.tensor([1.0, 0.0, 0.0]), ferrograd.tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
            "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
            "with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        sizes = list(input.shape)
        if 3 not in sizes:
            raise RuntimeError("no dimension of size 3 in input")
        dim = sizes.index(3)
    return _fg.linalg.cross(input, other, dim=dim)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """diagflat(input, offset=0) -> Tensor

    A square matrix with the flattened ``input`` on diagonal ``offset``
    (above the main one when positive) and zeros elsewhere.

    Args:
        input (Tensor): the values of the diagonal (flattened).
        offset (int): the diagonal: 0 the main one, positive above, negative below.

    Example:
        >>> ferrograd.diagflat(ferrograd.tensor([[1, 2], [3, 4]]))
        tensor([[1, 0, 0, 0],
                [0, 2, 0, 0],
                [0, 0, 3, 0],
                [0, 0, 0, 4]])
    """
    return _fg.diag(input.reshape(-1), offset)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """rot90(input, k=1, dims=(0, 1)) -> Tensor

    ``input`` rotated by 90 degrees ``k`` times in the plane of ``dims``,
    from the first dimension towards the second (negative ``k`` turns the
    other way).

    Args:
        input (Tensor): a tensor with at least two dimensions.
        k (int): the number of quarter turns.
        dims (sequence of two ints): the plane of the rotation.

    Example:
        >>> ferrograd.rot90(ferrograd.tensor([[1, 2], [3, 4]]))
        tensor([[2, 4],
                [1, 3]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = (_wrap_dim(d, input.dim()) for d in dims)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """combinations(input, r=2, with_replacement=False) -> Tensor

    The length-``r`` combinations of the elements of a 1-D tensor, one per
    row, in the order of :func:`itertools.combinations` (or
    ``combinations_with_replacement``).

    Args:
        input (Tensor): a 1-D tensor.
        r (int): the number of elements in each combination.
        with_replacement (bool): whether an element may repeat within a combination.

    Example:
        >>> ferrograd.combinations(ferrograd.tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _fg.empty(0, dtype=input.dtype)
    n = input.numel()
    if not with_replacement and r > n:
        return _fg.empty(0, r, dtype=input.dtype)
    if (math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)) * r > _MAX_EMPTY_SECTIONS * 64:
        raise RuntimeError(f"combinations: too many combinations of {r} of {n} elements to make")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(n), r))
    index = _fg.tensor(rows, dtype=_fg.int64).reshape(len(rows), r)
    return input[index]


def _triangle_indices(upper: bool, example: str, result: str):
    """``tril_indices``/``triu_indices``: the coordinates of one triangle of a matrix."""
    name, part, where, other_side = (
        ("triu_indices", "upper", "above", "negative below")
        if upper
        else ("tril_indices", "lower", "below", "positive above")
    )

    def op(
        row: int,
        col: int,
        offset: int = 0,
        *,
        dtype: _dtype | None = None,
        layout: Any = None,
        device: Any = None,
        pin_memory: bool | None = False,
    ) -> Tensor:
        del layout, pin_memory
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"ferrograd has no device '{device}': only 'cpu' is supported")
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        dtype = _fg.int64 if dtype is None else dtype
        if dtype not in (_fg.int64, _fg.int32):
            raise NotImplementedError(f"\"{name}\" not implemented for '{_scalar_type(dtype)}'")
        r = _fg.arange(row, dtype=_fg.int64).unsqueeze(1)
        c = _fg.arange(col, dtype=_fg.int64).unsqueeze(0)
        inside = (c - r >= offset) if upper else (c - r <= offset)
        rr, cc = r.expand(row, col)[inside], c.expand(row, col)[inside]
        return _fg.stack([rr, cc]).to(dtype)

    op.__name__ = op.__qualname__ = name
    signature = "(row, col, offset=0, *, dtype=ferrograd.long, layout=None, device=None, pin_memory=False)"
    op.__doc__ = f"""{name}{signature}

    The coordinates of the {part} triangle (on and {where} diagonal
    ``offset``) of a ``row x col`` matrix, row by row, as a ``2 x N``
    tensor: row indices, then column indices.

    Args:
        row (int): the number of rows.
        col (int): the number of columns.
        offset (int): the diagonal bounding the triangle ({other_side} the main one).
        dtype (ferrograd.dtype, optional): ``int64`` (default) or ``int32``.
        layout: accepted for torch compatibility (strided only).
        device: accepted for torch compatibility (CPU only).
        pin_memory (bool): accepted for torch compatibility.

    Example:
        >>> ferrograd.{name}({example})
        {result}
    """
    return op


tril_indices = _triangle_indices(
    False, "3, 3", "tensor([[0, 1, 1, 2, 2, 2],\n                [0, 0, 1, 0, 1, 2]])"
)
triu_indices = _triangle_indices(True, "2, 3, 1", "tensor([[0, 0, 1],\n                [1, 2, 2]])")


# ---------------------------------------------------------------------------
# Splits and stacks


def _pieces(input: Tensor, dim: int, bounds: list[int]) -> tuple[Tensor, ...]:
    """Views of ``input`` between consecutive ``bounds`` along ``dim`` (Python slice bounds)."""
    n = input.size(dim)
    out = []
    for a, b in itertools.pairwise([0, *bounds, n]):
        start, stop, _ = slice(a, b).indices(n)
        out.append(input.narrow(dim, start, max(0, stop - start)))
    return tuple(out)


# The most sections ``tensor_split`` makes past a dimension's size.
_MAX_EMPTY_SECTIONS = 1 << 20


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """tensor_split(input, indices_or_sections, dim=0) -> tuple of Tensors

    Views of ``input`` split along ``dim``: into ``sections`` pieces whose
    sizes differ by at most one (the first ``size % sections`` one larger),
    or at the listed indices (``input[:i0]``, ``input[i0:i1]``, ...,
    ``input[ik:]``, with Python's slice bounds).

    Args:
        input (Tensor): a tensor with at least one dimension.
        indices_or_sections (int, list of ints or Tensor): the number of
            pieces, the split indices, or an int64 tensor of either (0-D for
            a number of pieces, 1-D for indices).
        dim (int): the dimension split.

    Example:
        >>> ferrograd.tensor_split(ferrograd.arange(7), 3)
        (tensor([0, 1, 2]), tensor([3, 4]), tensor([5, 6]))
        >>> ferrograd.tensor_split(ferrograd.arange(7), [1, 5])
        (tensor([0]), tensor([1, 2, 3, 4]), tensor([5, 6]))
    """
    if input.dim() == 0:
        raise RuntimeError(
            f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with {input.dim()} dims"
        )
    d = _wrap_dim(dim, input.dim())
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype != _fg.int64:
            raise RuntimeError(
                f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                f"{_scalar_type(arg.dtype)}"
            )
        if arg.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                "one-dimensional "
                f"tensor, but got a tensor with {arg.dim()} dims"
            )
        arg = int(arg.item()) if arg.dim() == 0 else [int(i) for i in arg.tolist()]
    if isinstance(arg, numbers.Integral):
        sections = int(arg)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        n = input.size(d)
        if sections > max(n, _MAX_EMPTY_SECTIONS):
            # Past the size every piece is empty: refuse counts no list of tensors could hold.
            raise RuntimeError(
                f"tensor_split: {sections} sections of a dimension of size {n} would be more tensors than "
                "can be made"
            )
        size, extra = divmod(n, sections)
        bounds = list(itertools.accumulate(size + (i < extra) for i in range(sections - 1)))
        return _pieces(input, d, bounds)
    return _pieces(input, d, [int(i) for i in arg])


def _directional_split(name: str, input: Tensor, arg: Any, dim: int, min_dims: int) -> tuple[Tensor, ...]:
    if input.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with "
            f"{input.dim()} dimensions!"
        )
    if isinstance(arg, numbers.Integral):
        size = input.size(dim)
        if arg == 0 or size % arg != 0:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                f"{size} "
                f"is not divisible by the split_size {arg}!"
            )
    return tensor_split(input, arg, dim)


def hsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """hsplit(input, indices_or_sections) -> tuple of Tensors

    :func:`tensor_split` along dimension 1 (dimension 0 for a 1-D input); a
    number of sections must divide the size evenly.

    Args:
        input (Tensor): a tensor with at least one dimension.
        indices_or_sections (int or list of ints): the number of equal pieces, or the split indices.

    Example:
        >>> [t.shape for t in ferrograd.hsplit(ferrograd.zeros(2, 4), 2)]
        [ferrograd.Size([2, 2]), ferrograd.Size([2, 2])]
    """
    dim = 0 if input.dim() == 1 else 1
    return _directional_split("hsplit", input, indices_or_sections, dim, 1)


def _split_along(name: str, dim: int, rank: str, example: str, result: str):
    """``vsplit``/``dsplit``: :func:`tensor_split` along ``dim`` of a tensor of rank at least
    ``rank`` (in words)."""
    min_dims = {"two": 2, "three": 3}[rank]

    def op(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
        return _directional_split(name, input, indices_or_sections, dim, min_dims)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, indices_or_sections) -> tuple of Tensors

    :func:`tensor_split` along dimension {dim} of a tensor with at least {rank}
    dimensions; a number of sections must divide the size evenly.

    Args:
        input (Tensor): a tensor with at least {rank} dimensions.
        indices_or_sections (int or list of ints): the number of equal pieces, or the split indices.

    Example:
        >>> {example}
        {result}
    """
    return op


vsplit = _split_along(
    "vsplit", 0, "two", "ferrograd.vsplit(ferrograd.tensor([[1, 2], [3, 4]]), [1])",
    "(tensor([[1, 2]]), tensor([[3, 4]]))",
)
dsplit = _split_along(
    "dsplit", 2, "three", "[t.shape for t in ferrograd.dsplit(ferrograd.zeros(1, 2, 6), [1, 4])]",
    "[ferrograd.Size([1, 2, 1]), ferrograd.Size([1, 2, 3]), ferrograd.Size([1, 2, 2])]",
)


def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """split_with_sizes(input, split_sizes, dim=0) -> tuple of Tensors

    Views of consecutive pieces of ``input`` along ``dim`` of the listed
    sizes, which must add up to the size of ``dim``.

    Args:
        input (Tensor): the tensor split.
        split_sizes (list of ints): the size of each piece.
        dim (int): the dimension split.

    Example:
        >>> ferrograd.split_with_sizes(ferrograd.arange(5), [2, 3])
        (tensor([0, 1]), tensor([2, 3, 4]))
    """
    d = _wrap_dim(dim, input.dim())
    sizes = [int(s) for s in split_sizes]
    if sum(sizes) != input.size(d) or any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {input.size(d)} (input tensor's size at "
            f"dimension {dim}), but got split_sizes={sizes}"
        )
    return tuple(input.split(sizes, d))


def _unsafe(name: str, safe: Callable[..., Any], arg: str, arg_doc: str, call: str, result: str):
    """torch's ``unsafe_`` form ``name`` of the splitting function ``safe``: the same pieces,
    which are ordinary views here (torch's skip its checks on in-place writes; these keep them)."""
    signature = inspect.Signature([
        inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("dim", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=0),
    ])

    def op(*args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(safe(*bound.args))

    op.__signature__ = signature  # type: ignore[attr-defined]
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"""{name}(input, {arg}, dim=0) -> tuple of Tensors

    The pieces :func:`{name[len("unsafe_"):]}` gives. torch's ``unsafe_`` forms skip
    the checks on in-place writes to the pieces; here the pieces are ordinary
    views and keep every check.

    Args:
        input (Tensor): the tensor split.
        {arg} ({arg_doc}
        dim (int): the dimension split.

    Example:
        >>> ferrograd.{name}({call})
        {result}
    """
    return op


unsafe_chunk = _unsafe(
    "unsafe_chunk", Tensor.chunk, "chunks", "int): the number of pieces.", "ferrograd.arange(4), 2",
    "(tensor([0, 1]), tensor([2, 3]))",
)
unsafe_split = _unsafe(
    "unsafe_split", Tensor.split, "split_size", "int): the size of each piece (the last may be smaller).",
    "ferrograd.arange(5), 2", "(tensor([0, 1]), tensor([2, 3]), tensor([4]))",
)
unsafe_split_with_sizes = _unsafe(
    "unsafe_split_with_sizes", split_with_sizes, "split_sizes", "list of ints): the size of each piece.",
    "ferrograd.arange(3), [1, 2]", "(tensor([0]), tensor([1, 2]))",
)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """column_stack(tensors) -> Tensor

    Joins the tensors side by side as columns: 0-D and 1-D tensors become
    ``(n, 1)`` columns first, then all are concatenated along dimension 1.

    Args:
        tensors (sequence of Tensors): the columns (or blocks of columns).

    Example:
        >>> ferrograd.column_stack([ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4])])
        tensor([[1, 3],
                [2, 4]])
    """
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"column_stack(): argument 'tensors' must be tuple of Tensors, not {type(tensors).__name__}"
        )
    if len(tensors) == 0:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return _fg.hstack([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors])


def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    """row_stack(tensors) -> Tensor

    An alias of :func:`ferrograd.vstack`: joins the tensors as rows, 1-D
    tensors becoming ``(1, n)`` rows.

    Args:
        tensors (sequence of Tensors): the rows (or blocks of rows).

    Example:
        >>> ferrograd.row_stack([ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4])])
        tensor([[1, 2],
                [3, 4]])
    """
    return _fg.vstack(tensors)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """take_along_dim(input, indices, dim=None) -> Tensor

    The elements of ``input`` at ``indices`` along ``dim``, as
    :meth:`Tensor.gather` after broadcasting the two in the other
    dimensions; with ``dim=None``, the elements of the flattened input at
    the flattened indices.

    Args:
        input (Tensor): the tensor read.
        indices (Tensor): int64 positions along ``dim`` (as many dimensions as ``input``).
        dim (int, optional): the dimension indexed (None flattens both).

    Example:
        >>> x = ferrograd.tensor([[10, 30, 20], [60, 40, 50]])
        >>> ferrograd.take_along_dim(x, x.argsort(dim=1), dim=1)
        tensor([[10, 20, 30],
                [40, 50, 60]])
    """
    if indices.dtype != _fg.int64:
        raise RuntimeError(
            f"torch.take_along_dim(): dtype of indices should be Long but got {_scalar_type(indices.dtype)}"
        )
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{input.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    d = _wrap_dim(dim, input.dim())
    a_shape, i_shape = list(input.shape), list(indices.shape)
    a_shape[d] = i_shape[d] = 1
    common = list(_fg.broadcast_shapes(tuple(a_shape), tuple(i_shape)))
    a_full, i_full = list(common), list(common)
    a_full[d], i_full[d] = input.size(d), indices.size(d)
    return input.expand(*a_full).gather(d, indices.expand(*i_full))


# ---------------------------------------------------------------------------
# Module forms of Tensor methods, predicates


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    """clone(input, *, memory_format=ferrograd.preserve_format) -> Tensor

    A copy of ``input`` with its own memory, differentiable (the gradient
    passes through unchanged).

    Args:
        input (Tensor): the tensor copied.
        memory_format (ferrograd.memory_format, optional): the layout of the copy.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> y = ferrograd.clone(x)
        >>> y.data_ptr() != x.data_ptr()
        True
    """
    return input.clone(memory_format=memory_format)


def detach(input: Tensor) -> Tensor:
    """detach(input) -> Tensor

    A tensor sharing ``input``'s memory, cut from the autograd graph (see
    :meth:`Tensor.detach`).

    Args:
        input (Tensor): the tensor detached.

    Example:
        >>> ferrograd.detach(ferrograd.ones(2, requires_grad=True)).requires_grad
        False
    """
    return input.detach()


def ravel(input: Tensor) -> Tensor:
    """ravel(input) -> Tensor

    All elements in one dimension in row-major order (a view when possible).

    Args:
        input (Tensor): the tensor flattened.

    Example:
        >>> ferrograd.ravel(ferrograd.tensor([[1, 2], [3, 4]]))
        tensor([1, 2, 3, 4])
    """
    return input.ravel()


def is_same_size(input: Tensor, other: Tensor) -> bool:
    """is_same_size(input, other) -> bool

    Whether the two tensors have the same shape.

    Args:
        input (Tensor): the first tensor.
        other (Tensor): the second tensor.

    Example:
        >>> ferrograd.is_same_size(ferrograd.zeros(2, 3), ferrograd.ones(2, 3))
        True
    """
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:
    """is_signed(input) -> bool

    Whether ``input``'s dtype can hold negative values (False for ``uint8`` and ``bool``).

    Args:
        input (Tensor): the tensor asked about.

    Example:
        >>> ferrograd.is_signed(ferrograd.tensor([1], dtype=ferrograd.uint8))
        False
    """
    return input.is_signed()


def is_inference(input: Tensor) -> bool:
    """is_inference(input) -> bool

    Whether ``input`` was made under :class:`ferrograd.inference_mode`.

    Args:
        input (Tensor): the tensor asked about.

    Example:
        >>> with ferrograd.inference_mode():
        ...     x = ferrograd.ones(2)
        >>> ferrograd.is_inference(x)
        True
    """
    return input.is_inference()


def get_device(input: Tensor) -> int:
    """get_device(input) -> int

    The index of the device holding ``input``: always -1, torch's answer
    for a CPU tensor (ferrograd computes on the CPU only).

    Args:
        input (Tensor): the tensor asked about.

    Example:
        >>> ferrograd.get_device(ferrograd.ones(2))
        -1
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"get_device(): argument 'input' must be Tensor, not {type(input).__name__}")
    return -1


def is_distributed(input: Tensor) -> bool:
    """is_distributed(input) -> bool

    Whether ``input`` is spread over several processes: always False.

    Args:
        input (Tensor): the tensor asked about.

    Example:
        >>> ferrograd.is_distributed(ferrograd.ones(2))
        False
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' must be Tensor, not {type(input).__name__}")
    return False


# ---------------------------------------------------------------------------
# Tensor methods


def _matrix_power(self: Tensor, n: int) -> Tensor:
    """matrix_power(n) -> Tensor

    This (batch of) square matrices raised to the integer power ``n``; see
    :func:`ferrograd.linalg.matrix_power`.

    Args:
        n (int): the exponent (negative inverts first).

    Example:
        >>> ferrograd.tensor([[1.0, 1.0], [0.0, 1.0]]).matrix_power(3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    return _fg.linalg.matrix_power(self, n)


def _addmm_(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """In-place version of :meth:`Tensor.addmm`: ``self = beta * self + alpha * (mat1 @ mat2)``.

    Args:
        mat1 (Tensor): the first matrix factor.
        mat2 (Tensor): the second matrix factor.
        beta (number): the factor of ``self``.
        alpha (number): the factor of the product.
    """
    result = self.clone().addmm(mat1, mat2, beta=beta, alpha=alpha)
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(
            f"The size of the result {list(result.shape)} does not match the size of self "
            f"{list(self.shape)}: "
            "addmm_ cannot broadcast self"
        )
    return _write_back(self, result)


def _sgn_(self: Tensor) -> Tensor:
    """In-place version of :meth:`Tensor.sgn`."""
    return _write_back(self, self.clone().sgn())


def _get_device(self: Tensor) -> int:
    """get_device() -> int

    The index of the device holding this tensor: -1, torch's answer for a CPU tensor.

    Example:
        >>> ferrograd.zeros(1).get_device()
        -1
    """
    return -1


def _is_distributed(self: Tensor) -> bool:
    """Whether this tensor is spread over several processes: always False."""
    return False


def _dim_order(self: Tensor, *, ambiguity_check: bool | list[Any] = False) -> tuple[int, ...]:
    """dim_order(*, ambiguity_check=False) -> tuple of ints

    The dimensions from outermost to innermost in memory: sorted by
    decreasing stride, ties kept in dimension order.

    Args:
        ambiguity_check (bool or list of memory formats): when set, raise if
            the order is not unique (two dimensions share a stride, as size-1
            dimensions may).

    Example:
        >>> ferrograd.zeros(2, 3).t().dim_order()
        (1, 0)
    """
    strides = self.stride()
    order = tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))
    if ambiguity_check is not False and len(set(strides)) != len(strides):
        raise RuntimeError(
            "The tensor does not have unique dim order, or cannot map to exact one of the given memory "
            "formats."
        )
    return order


def _map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """map_(tensor, callable) -> Tensor

    Replaces each element ``a`` of this tensor by ``callable(a, b)``, with
    ``b`` the matching element of ``tensor`` (broadcast to this shape). The
    function runs in Python, one element at a time, on Python numbers; not
    differentiated.

    Args:
        tensor (Tensor): the second argument's values.
        callable (callable): a function of two numbers returning a number.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> x.map_(ferrograd.tensor([10.0, 20.0]), lambda a, b: a * b + 1)
        tensor([11., 41.])
    """
    return _map_elements(self, [tensor], callable)


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:
    """map2_(x, y, callable) -> Tensor

    Replaces each element ``a`` of this tensor by ``callable(a, b, c)``,
    with ``b`` and ``c`` the matching elements of ``x`` and ``y`` (broadcast
    to this shape); like :meth:`map_`.

    Args:
        x (Tensor): the second argument's values.
        y (Tensor): the third argument's values.
        callable (callable): a function of three numbers returning a number.

    Example:
        >>> x = ferrograd.zeros(2)
        >>> x.map2_(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([3.0, 4.0]), lambda a, b, c: b * c)
        tensor([3., 8.])
    """
    return _map_elements(self, [x, y], callable)


def _map_elements(self: Tensor, others: list[Tensor], fn: Callable[..., Any]) -> Tensor:
    shape = tuple(self.shape)
    columns = [self.reshape(-1).tolist()] + [o.expand(*shape).reshape(-1).tolist() for o in others]
    values = [fn(*args) for args in zip(*columns, strict=True)]
    with _fg.no_grad():
        self.copy_(_fg.tensor(values, dtype=self.dtype).reshape(shape))
    return self


def _cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
    """cauchy_(median=0, sigma=1, *, generator=None) -> Tensor

    Fills this tensor with samples of the Cauchy distribution,
    ``median + sigma * tan(pi * (u - 1/2))`` for ``u`` uniform on ``[0, 1)``.
    The samples come from ferrograd's generator: the same seed does not
    give torch's numbers.

    Args:
        median (float): the location of the distribution.
        sigma (float): its scale (half the interquartile range).
        generator (ferrograd.Generator, optional): the source of randomness.
    """
    u = _fg.empty(tuple(self.shape), dtype=self.dtype).uniform_(generator=generator)
    return self.copy_(median + sigma * (math.pi * (u - 0.5)).tan())


def _geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """geometric_(p, *, generator=None) -> Tensor

    Fills this tensor with samples of the geometric distribution: the
    number of Bernoulli(``p``) trials up to and including the first
    success (1, 2, ...), ``ceil(log(u) / log(1 - p))`` for ``u`` uniform.
    The samples come from ferrograd's generator: the same seed does not
    give torch's numbers.

    Args:
        p (float): the success probability of each trial, in ``(0, 1]``.
        generator (ferrograd.Generator, optional): the source of randomness.
    """
    if not 0 < p <= 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _fg.empty(tuple(self.shape), dtype=_fg.float64).uniform_(generator=generator)
    if p == 1:
        trials = _fg.ones_like(u)
    else:
        # 1 - u lies in (0, 1], so its log is finite; at least one trial.
        trials = ((1 - u).log() / math.log1p(-p)).ceil().clamp(min=1)
    return self.copy_(trials)


def _log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
    """log_normal_(mean=1, std=2, *, generator=None) -> Tensor

    Fills this tensor with samples ``exp(z)`` for ``z`` normal with the
    given ``mean`` and ``std`` (the parameters of the underlying normal).
    The samples come from ferrograd's generator: the same seed does not
    give torch's numbers.

    Args:
        mean (float): the mean of the underlying normal.
        std (float): its standard deviation (positive).
        generator (ferrograd.Generator, optional): the source of randomness.
    """
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = _fg.empty(tuple(self.shape), dtype=self.dtype).normal_(mean, std, generator=generator)
    return self.copy_(z.exp())


for _fn in (
    kron,
    inner,
    vdot,
    cross,
    diagflat,
    rot90,
    tensor_split,
    hsplit,
    vsplit,
    dsplit,
    split_with_sizes,
    unsafe_chunk,
    unsafe_split,
    unsafe_split_with_sizes,
    take_along_dim,
    is_same_size,
):
    _install(_fn.__name__, _fn)
_METHODS: list[tuple[str, Callable[..., Any]]] = [
    ("matrix_power", _matrix_power), ("addmm_", _addmm_), ("sgn_", _sgn_), ("get_device", _get_device),
    ("is_distributed", _is_distributed), ("dim_order", _dim_order), ("map_", _map_), ("map2_", _map2_),
    ("cauchy_", _cauchy_), ("geometric_", _geometric_), ("log_normal_", _log_normal_),
]  # fmt: skip
for _name, _method in _METHODS:
    _method.__name__ = _method.__qualname__ = _name
    _install(_name, _method)
del _fn, _name, _method
