"""The functions of ``torch.functional`` that are compositions of other ops
(``ferrograd.cdist``, ``ferrograd.tensordot``, ``ferrograd.meshgrid``...).

Each is written in Python from differentiable ferrograd ops, so reverse
mode, forward mode and ``vmap`` go through it with no rule of its own. Ops
are reached as module attributes at call time (``_fg.cat``, not
``_core.cat``): those are the routed functions, which batch under
``vmap``; a raw ``_core`` function handed a batched tensor would send the
whole call down the per-row fallback.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ferrograd as _fg

from ._core import Tensor
from ._core import dtype as _dtype
from ._ops_pointwise import _finish

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "cartesian_prod",
    "cdist",
    "chain_matmul",
    "meshgrid",
    "tensordot",
    "unravel_index",
]

# Module-level docs of functions that are Tensor methods or aliases (none
# here: every function above is defined below with its own docstring).
DOCS: dict[str, str] = {}

_INT64_MAX = 2**63 - 1

# torch's names of the dtypes in its messages: the ScalarType names, and
# the C++ element types that ``multi_dot`` prints.
_SCALAR_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}  # fmt: skip
_CPP_TYPE_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}  # fmt: skip


def _dtype_key(d: _dtype) -> str:
    return repr(d).rpartition(".")[2]


def _scalar_type(d: _dtype) -> str:
    """torch's ScalarType name of ``d`` (``Float``, ``Long``...)."""
    return _SCALAR_TYPE_NAMES[_dtype_key(d)]


def _check_tensors(tensors: Sequence[object]) -> None:
    """torch's TypeError for a sequence-of-tensors argument holding something else."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")


# ---------------------------------------------------------------------------
# atleast_1d / atleast_2d / atleast_3d


def _with_at_least(t: Tensor, ndim: int) -> Tensor:
    """``t`` as a view with at least ``ndim`` (1-3) dimensions, placed as torch
    places them: a vector becomes a row (``(1, n)``, then ``(1, n, 1)``), a
    matrix gets a trailing dimension; ``t`` itself when it has enough."""
    d = t.dim()
    if d >= ndim:
        return t
    if d == 0:
        return t.reshape((1,) * ndim)
    if d == 1:
        t = t.unsqueeze(0)
    return t.unsqueeze(-1) if ndim == 3 else t


def _atleast(name: str, ndim: int, tensors: tuple[Any, ...]) -> Tensor | tuple[Tensor, ...]:
    if len(tensors) == 1:
        arg = tensors[0]
        if isinstance(arg, Tensor):
            return _with_at_least(arg, ndim)
        if not isinstance(arg, (list, tuple)):
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got ({type(arg).__name__}), but "
                "expected one of:\n * (Tensor input)\n * (tuple of Tensors tensors)\n"
            )
        tensors = tuple(arg)
    _check_tensors(tensors)
    return tuple(_with_at_least(t, ndim) for t in tensors)


def atleast_1d(*tensors: Any) -> Tensor | tuple[Tensor, ...]:
    """Returns a view of each input with at least one dimension.

    A 0-dim tensor becomes a 1-element vector; tensors with one or more
    dimensions are returned as they are (the same object).

    Args:
        *tensors (Tensor or sequence of Tensors): one tensor, several
            tensors, or one list or tuple of tensors.

    Returns:
        Tensor or tuple of Tensors: a tensor for a single tensor argument,
        otherwise a tuple with one entry per input (empty for no input).

    Example:
        >>> ferrograd.atleast_1d(ferrograd.tensor(1.5))
        tensor([1.5000])
        >>> ferrograd.atleast_1d(ferrograd.tensor(1), ferrograd.tensor([2, 3]))
        (tensor([1]), tensor([2, 3]))
    """
    return _atleast("atleast_1d", 1, tensors)


def atleast_2d(*tensors: Any) -> Tensor | tuple[Tensor, ...]:
    """Returns a view of each input with at least two dimensions.

    A 0-dim tensor becomes ``1 x 1``, a vector of ``n`` elements a ``1 x n``
    row; tensors with two or more dimensions are returned as they are.

    Args:
        *tensors (Tensor or sequence of Tensors): as for :func:`atleast_1d`.

    Returns:
        Tensor or tuple of Tensors: as for :func:`atleast_1d`.

    Example:
        >>> ferrograd.atleast_2d(ferrograd.tensor([1, 2, 3]))
        tensor([[1, 2, 3]])
        >>> [tuple(t.shape) for t in ferrograd.atleast_2d([ferrograd.tensor(0.0), ferrograd.ones(2, 2)])]
        [(1, 1), (2, 2)]
    """
    return _atleast("atleast_2d", 2, tensors)


def atleast_3d(*tensors: Any) -> Tensor | tuple[Tensor, ...]:
    """Returns a view of each input with at least three dimensions.

    A 0-dim tensor becomes ``1 x 1 x 1``, a vector of ``n`` elements
    ``1 x n x 1``, an ``m x n`` matrix ``m x n x 1``; tensors with three or
    more dimensions are returned as they are.

    Args:
        *tensors (Tensor or sequence of Tensors): as for :func:`atleast_1d`.

    Returns:
        Tensor or tuple of Tensors: as for :func:`atleast_1d`.

    Example:
        >>> ferrograd.atleast_3d(ferrograd.tensor([1, 2])).shape
        ferrograd.Size([1, 2, 1])
        >>> [tuple(t.shape) for t in ferrograd.atleast_3d(ferrograd.ones(2, 3), ferrograd.tensor(4))]
        [(2, 3, 1), (1, 1, 1)]
    """
    return _atleast("atleast_3d", 3, tensors)


# ---------------------------------------------------------------------------
# block_diag


def _promoted(dtypes: Sequence[_dtype]) -> _dtype:
    result = dtypes[0]
    for d in dtypes[1:]:
        result = _fg.promote_types(result, d)
    return result


def _result_dtype(tensors: Sequence[Tensor]) -> _dtype:
    """The dtype ``torch.result_type`` gives for several tensors: the
    dimensioned ones set the dtype, and 0-dim ones only raise its category
    (``result_type`` of one tensor of each kind decides that)."""
    shaped = [t.dtype for t in tensors if t.dim() > 0]
    scalars = [t.dtype for t in tensors if t.dim() == 0]
    if not scalars:
        return _promoted(shaped)
    if not shaped:
        return _promoted(scalars)
    probe_shaped = _fg.empty(0, dtype=_promoted(shaped))
    probe_scalar = _fg.empty((), dtype=_promoted(scalars))
    return _fg.result_type(probe_shaped, probe_scalar)


def block_diag(*tensors: Tensor) -> Tensor:
    """Builds a block diagonal matrix from the inputs.

    The inputs are placed along the diagonal, each below and to the right
    of the one before, with zeros elsewhere. A 0-dim input counts as a
    ``1 x 1`` block and a vector of ``n`` elements as a ``1 x n`` row. The
    result has the dtype of the inputs promoted together (as
    :func:`ferrograd.result_type` would), and is differentiable with
    respect to every input. With no inputs, the result is an empty
    ``1 x 0`` matrix.

    Args:
        *tensors (Tensor): blocks with at most two dimensions each.

    Returns:
        Tensor: a ``(sum of rows) x (sum of columns)`` matrix.

    Example:
        >>> ferrograd.block_diag(ferrograd.tensor([[1, 2], [3, 4]]), ferrograd.tensor(5))
        tensor([[1, 2, 0],
                [3, 4, 0],
                [0, 0, 5]])
        >>> ferrograd.block_diag(ferrograd.tensor([1, 2]), ferrograd.tensor([[3.0], [4.0]]))
        tensor([[1., 2., 0.],
                [0., 0., 3.],
                [0., 0., 4.]])
    """
    _check_tensors(tensors)
    blocks = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} "
                "dimensions"
            )
        blocks.append(_with_at_least(t, 2))
    if not blocks:
        return _fg.zeros(1, 0)
    dtype = _result_dtype(tensors)
    width = sum(b.shape[1] for b in blocks)
    bands = []
    left = 0
    for b in blocks:
        rows, cols = b.shape
        right = width - left - cols
        pieces = [_fg.zeros(rows, left, dtype=dtype)] if left else []
        pieces.append(b.to(dtype))
        if right:
            pieces.append(_fg.zeros(rows, right, dtype=dtype))
        bands.append(_fg.cat(pieces, dim=1))
        left += cols
    return _fg.cat(bands, dim=0)


# ---------------------------------------------------------------------------
# meshgrid / cartesian_prod


def _meshgrid(tensors: Sequence[Any], indexing: Any) -> tuple[Tensor, ...]:
    _check_tensors(tensors)
    if not isinstance(indexing, str):
        raise TypeError(f"meshgrid(): argument 'indexing' must be str, not {type(indexing).__name__}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    n = len(tensors)
    # Input k varies along output dimension k; "xy" swaps the first two.
    where = list(range(n))
    if indexing == "xy" and n >= 2:
        where[0], where[1] = 1, 0
    sizes = [t.shape[0] if t.dim() else 1 for t in tensors]
    shape = [0] * n
    for size, d in zip(sizes, where, strict=True):
        shape[d] = size
    grids = []
    for t, size, d in zip(tensors, sizes, where, strict=True):
        along = [1] * n
        along[d] = size
        grids.append(t.reshape(along).expand(shape))
    return tuple(grids)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D coordinate vectors.

    For inputs of sizes ``n0, n1, ...`` the outputs all have shape
    ``(n0, n1, ...)`` (``indexing="ij"``, matrix indexing) or
    ``(n1, n0, ...)`` (``indexing="xy"``, Cartesian indexing: the first two
    dimensions swapped), and output ``k`` holds input ``k`` repeated along
    every other dimension. The outputs are expanded views of the inputs
    (write to a clone). A 0-dim input counts as one element. All inputs
    must have the same dtype.

    Leaving ``indexing`` out gives ``"ij"`` with torch's warning that the
    argument will become required.

    Args:
        *tensors (Tensor or sequence of Tensors): 0-D or 1-D tensors, or
            one list or tuple of them.

    Keyword args:
        indexing (str, optional): ``"ij"`` or ``"xy"``. Default: ``None``
            (``"ij"``, with a warning).

    Returns:
        tuple of Tensors: one grid per input.

    Example:
        >>> rows, cols = ferrograd.meshgrid(ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4, 5]),
        ...                                 indexing="ij")
        >>> rows
        tensor([[1, 1, 1],
                [2, 2, 2]])
        >>> cols
        tensor([[3, 4, 5],
                [3, 4, 5]])
        >>> x, y = ferrograd.meshgrid(ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4, 5]), indexing="xy")
        >>> x.shape
        ferrograd.Size([3, 2])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    _check_tensors(tensors)
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning,
            stacklevel=2,
        )
        indexing = "ij"
    return _meshgrid(tensors, indexing)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors, in the order of
    ``itertools.product``.

    Row ``r`` of the result holds one element of each input, the last input
    varying fastest. A single input is returned as it is. All inputs must
    have the same dtype. Differentiable with respect to every input.

    Args:
        *tensors (Tensor): 1-D tensors.

    Returns:
        Tensor: a ``(product of the sizes) x (number of inputs)`` tensor,
        or the input itself when there is one.

    Example:
        >>> ferrograd.cartesian_prod(ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4, 5]))
        tensor([[1, 3],
                [1, 4],
                [1, 5],
                [2, 3],
                [2, 4],
                [2, 5]])
    """
    _check_tensors(tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = _meshgrid(tensors, "ij")
    return _fg.stack([g.reshape(-1) for g in grids], dim=1)


# ---------------------------------------------------------------------------
# cdist

# compute_mode -> whether p=2 distances come from a matrix product: always
# (True), never (False), or when either input has more than 25 rows (None).
_COMPUTE_MODES: dict[str, bool | None] = {
    "use_mm_for_euclid_dist_if_necessary": None,
    "use_mm_for_euclid_dist": True,
    "donot_use_mm_for_euclid_dist": False,
}


def _where_kept(fn: Callable[[Tensor], Tensor], x: Tensor, keep: Tensor) -> Tensor:
    """``fn(x)`` where ``keep``, 0 elsewhere, with a zero derivative there at
    every order: ``fn`` sees 1 in place of the values left out, so its slope
    at them (infinite at 0 for a root or a power below 1) never meets the
    zero cotangent or tangent as ``0 * inf = NaN``."""
    return fn(x.where(keep, 1.0)).where(keep, 0.0)


def _euclidean_by_mm(x1: Tensor, x2: Tensor) -> Tensor:
    """p=2 distances from ``|a|^2 + |b|^2 - 2 a.b`` (one matrix product; may
    lose digits to cancellation), 0 where that is not positive."""
    sq = x1.square().sum(-1, keepdim=True) + x2.square().sum(-1, keepdim=True).mT - 2 * x1.matmul(x2.mT)
    return _where_kept(Tensor.sqrt, sq, sq.le(0).logical_not())  # NaN is kept


def _p_distance(diff: Tensor, p: float) -> Tensor:
    """``sum(|diff|^p)^(1/p)`` over the last dimension, for 0 < p < 2,
    p != 1, with torch's zero gradient wherever a coordinate difference or
    the distance is 0."""
    a = diff.abs()
    s = _where_kept(lambda t: t.pow(p), a, a.ne(0)).sum(-1)
    return _where_kept(lambda t: t.pow(1.0 / p), s, s.ne(0))


def cdist(
    x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary"
) -> Tensor:
    """The p-norm distance between each row of ``x1`` and each row of ``x2``.

    ``x1`` is ``B x P x M`` and ``x2`` is ``B x R x M`` (the batch dimensions
    ``B``, any number of them, broadcast together); the result is
    ``B x P x R`` with ``result[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p``.
    ``p = 0`` counts the coordinates that differ and ``p = inf`` takes the
    largest difference.

    For ``p = 2`` and either input with more than 25 rows (or
    ``compute_mode="use_mm_for_euclid_dist"``) the distances come from one
    matrix product, ``|a|^2 + |b|^2 - 2 a.b``, which is faster but may lose
    digits to cancellation; ``"donot_use_mm_for_euclid_dist"`` always takes
    the differences. Otherwise a ``B x P x R x M`` tensor of differences is
    formed.

    Differentiable with respect to both inputs, at every order. The
    gradient at a zero distance is 0, as in torch, and so is that of a
    zero coordinate difference for ``p < 2``. Where several coordinates tie
    for the largest difference (``p = inf``), the gradient is shared
    between them as in :func:`ferrograd.linalg.vector_norm` (torch's cdist
    gives each of them the whole of it).

    Args:
        x1 (Tensor): a floating-point tensor of shape ``B x P x M``.
        x2 (Tensor): a tensor of shape ``B x R x M`` and the same dtype.
        p (float): the order of the norm, ``0 <= p <= inf``. Default: 2.
        compute_mode (str): ``"use_mm_for_euclid_dist_if_necessary"``,
            ``"use_mm_for_euclid_dist"`` or ``"donot_use_mm_for_euclid_dist"``
            (see above). Default: ``"use_mm_for_euclid_dist_if_necessary"``.

    Returns:
        Tensor: the ``B x P x R`` distances.

    Example:
        >>> a = ferrograd.tensor([[0.0, 0.0], [1.0, 1.0]])
        >>> b = ferrograd.tensor([[3.0, 4.0]])
        >>> ferrograd.cdist(a, b)
        tensor([[5.0000],
                [3.6056]])
        >>> ferrograd.cdist(a, b, p=1)
        tensor([[7.],
                [5.]])
        >>> ferrograd.cdist(ferrograd.ones(4, 2, 3), ferrograd.ones(5, 3)).shape
        ferrograd.Size([4, 2, 5])
    """
    if not (isinstance(compute_mode, str) and compute_mode in _COMPUTE_MODES):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _COMPUTE_MODES[compute_mode]
    for position, name, x in ((1, "x1", x1), (2, "x2", x2)):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"cdist(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}"
            )
    if not isinstance(p, numbers.Real):
        raise TypeError(f"cdist(): argument 'p' (position 3) must be float, not {type(p).__name__}")
    p = float(p)
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {_scalar_type(x.dtype)}"
            )
    if not p >= 0:  # NaN too
        raise RuntimeError("cdist only supports non-negative p values")
    _fg.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])  # torch's error when the batches differ
    if x1.dtype != x2.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_type(x1.dtype)} but found {_scalar_type(x2.dtype)}"
        )
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and x1.shape[-1] > 0 and (mode or (mode is None and (rows1 > 25 or rows2 > 25))):
        return _euclidean_by_mm(x1, x2)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if x1.shape[-1] == 0:
        return diff.abs().sum(-1)  # all distances 0 (no norm reduces over an empty dimension)
    if 0 < p < 2 and p != 1:
        # linalg.vector_norm's gradient there is NaN at zero coordinate
        # differences; the masked form gives torch's 0.
        return _p_distance(diff, p)
    return _fg.linalg.vector_norm(diff, ord=p, dim=-1)


# ---------------------------------------------------------------------------
# chain_matmul

_CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
    "parameters."
)


def _chain_product(matrices: Sequence[Tensor]) -> Tensor:
    """The product of ``matrices`` (at least two, shapes chained), in the
    order of multiplications with the fewest scalar products (the classic
    dynamic program over split points)."""
    n = len(matrices)
    sizes = [matrices[0].shape[0]] + [m.shape[1] for m in matrices]
    # cost[i][j]: fewest scalar products for matrices i..j; split[i][j]: the
    # last matrix of the left factor in that order.
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1], k) for k in range(i, j)
            )

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return matrices[i]
        k = split[i][j]
        return product(i, k).mm(product(k + 1, j))

    return product(0, n - 1)


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """The matrix product of two or more 2-D tensors, multiplied in the
    order that takes the fewest scalar products.

    Deprecated in torch in favour of ``linalg.multi_dot``, with a
    ``UserWarning`` on every call here. A single matrix is returned as a
    copy. The matrices must have the same dtype and chained shapes
    (``n x m``, ``m x p``, ...). Differentiable with respect to every
    matrix.

    Args:
        *matrices (Tensor): the 2-D tensors to multiply, in order.

    Keyword args:
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Returns:
        Tensor: the product, ``(rows of the first) x (columns of the last)``.

    Example:
        >>> import warnings
        >>> a, b = ferrograd.tensor([[1.0, 2.0]]), ferrograd.tensor([[3.0], [4.0]])
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     ferrograd.chain_matmul(a, b, ferrograd.tensor([[1.0, -1.0]]))
        tensor([[ 11., -11.]])
    """
    _check_tensors(matrices)
    warnings.warn(_CHAIN_MATMUL_DEPRECATED, UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return _finish(matrices[0].clone(), out)
    first = matrices[0].dtype
    for i in range(1, len(matrices)):
        if matrices[i].dtype != first:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{_CPP_TYPE_NAMES[_dtype_key(first)]} and tensor {i} "
                f"{_CPP_TYPE_NAMES[_dtype_key(matrices[i].dtype)]}"
            )
        before, this = list(matrices[i - 1].shape), list(matrices[i].shape)
        if before[1] != this[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i - 1} and {i} with shapes {before} and {this} cannot be multiplied"
            )
    return _finish(_chain_product(matrices), out)


# ---------------------------------------------------------------------------
# tensordot

_TENSORDOT_DIMS = (
    "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two "
    "lists, but got dims="
)


def _dim_list(dims: Any, name: str, position: int) -> list[int]:
    """``dims`` as a list of ints, or the TypeError torch's argument parser gives."""
    where = f"tensordot(): argument '{name}' (position {position})"
    if not isinstance(dims, (list, tuple)):
        raise TypeError(f"{where} must be tuple of ints, not {type(dims).__name__}")
    for k, d in enumerate(dims):
        if not isinstance(d, int):
            raise TypeError(
                f"{where} must be tuple of ints, but found element of type {type(d).__name__} at pos {k}"
            )
    return [int(d) for d in dims]


def _distinct_dims(dims: list[int], ndim: int) -> list[int]:
    """``dims`` made non-negative (already checked to be in range), each
    appearing once."""
    seen: list[int] = []
    for d in dims:
        d = d + ndim if d < 0 else d
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
    return seen


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Contracts ``a`` and ``b`` over the given dimensions: a generalised
    matrix product (``numpy.tensordot``).

    The contracted dimensions of ``a`` and ``b`` are paired up and summed
    over; the result has the remaining dimensions of ``a``, then those of
    ``b``, each in order. A contracted dimension of size 1 paired with a
    larger one is broadcast (the other side is summed over it). Both
    inputs must have the same dtype. Differentiable with respect to both.

    Args:
        a (Tensor): the left tensor.
        b (Tensor): the right tensor.
        dims (int, pair of lists of ints, or Tensor): an int ``d``
            contracts the last ``d`` dimensions of ``a`` with the first ``d``
            of ``b``, in order; ``([a dims], [b dims])`` lists the paired
            dimensions; a tensor is read the same way (a 0-dim or
            one-element tensor as an int, otherwise its two rows as the
            lists). Default: 2.
        out (Tensor, optional): a tensor of the result's shape that receives
            the result.

    Returns:
        Tensor: the contraction.

    Example:
        >>> a = ferrograd.arange(6.0).reshape(2, 3)
        >>> b = ferrograd.arange(12.0).reshape(3, 2, 2)
        >>> ferrograd.tensordot(a, b, dims=1).shape
        ferrograd.Size([2, 2, 2])
        >>> ferrograd.tensordot(a, ferrograd.ones(2, 3), dims=([0, 1], [0, 1]))
        tensor(15.)
        >>> ferrograd.tensordot(a, ferrograd.ones(3, 2), dims=([1], [0]))
        tensor([[ 3.,  3.],
                [12., 12.]])
    """
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(f"{_TENSORDOT_DIMS}{dims}")
    for position, name, x in ((1, "self", a), (2, "other", b)):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"tensordot(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}"
            )
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.shape[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.shape[0]}")
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            count = int(dims.item())
            if count < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-count, 0)), list(range(count))
    else:
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    dims_a = _dim_list(dims_a, "dims_self", 3)
    dims_b = _dim_list(dims_b, "dims_other", 4)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    left, right = a, b
    for da, db in zip(dims_a, dims_b, strict=True):
        size_a, size_b = a.size(da), b.size(db)
        if size_b == 1:  # broadcast: sum the other side over it first
            left = left.sum(da, keepdim=True, dtype=left.dtype)
        elif size_a == 1:
            right = right.sum(db, keepdim=True, dtype=right.dtype)
        elif size_a != size_b:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {size_a} in dim {da} and second "
                f"has size {size_b} in dim {db}"
            )
    summed_a = _distinct_dims(dims_a, a.dim())
    summed_b = _distinct_dims(dims_b, b.dim())
    kept_a = [d for d in range(a.dim()) if d not in summed_a]
    kept_b = [d for d in range(b.dim()) if d not in summed_b]
    kept_shape = [left.shape[d] for d in kept_a] + [right.shape[d] for d in kept_b]
    inner = math.prod(left.shape[d] for d in summed_a)
    # (kept of a, contracted) @ (contracted, kept of b), then unflattened.
    lhs = left.permute(kept_a + summed_a).reshape(math.prod(left.shape[d] for d in kept_a), inner)
    rhs = right.permute(summed_b + kept_b).reshape(inner, math.prod(right.shape[d] for d in kept_b))
    return _finish(lhs.mm(rhs).reshape(kept_shape), out)


# ---------------------------------------------------------------------------
# unravel_index


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """Converts flat (row-major) indices into coordinates in a tensor of
    ``shape``.

    An index ``i`` becomes the coordinates ``(c0, c1, ...)`` with
    ``i = c0 * s1 * s2 * ... + c1 * s2 * ... + ...``. As in torch, indices
    are not checked against the size: each coordinate is taken modulo its
    dimension (floor division, so ``-1`` is the last element).

    Args:
        indices (Tensor): an integer tensor of flat indices, of any shape.
        shape (int or sequence of ints): the shape to index, with no
            negative sizes.

    Returns:
        tuple of Tensors: one int64 tensor of the shape of ``indices`` per
        dimension of ``shape``.

    Example:
        >>> ferrograd.unravel_index(ferrograd.tensor(4), (3, 2))
        (tensor(2), tensor(0))
        >>> ferrograd.unravel_index(ferrograd.tensor([4, 1, -1]), (3, 2))
        (tensor([2, 0, 2]), tensor([0, 1, 1]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(
            f"unravel_index(): argument 'indices' (position 1) must be Tensor, not {type(indices).__name__}"
        )
    if indices.is_complex() or indices.is_floating_point() or indices.dtype == _fg.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        sizes = [int(shape)]
    elif isinstance(shape, Sequence):
        for size in shape:
            if not isinstance(size, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(size)}")
        sizes = [int(size) for size in shape]
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    # The strides of a row-major tensor of that shape.
    strides = [math.prod(sizes[k + 1:]) for k in range(len(sizes))]
    if any(abs(v) > _INT64_MAX for v in sizes + strides):
        raise ValueError("Overflow when unpacking long long")
    if any(size < 0 for size in sizes):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(sizes)}")
    if not sizes:
        return ()
    if 0 in sizes and indices.numel() == 0:
        # Nothing to divide (torch divides no element either, so no error).
        return _fg.zeros((*indices.shape, len(sizes)), dtype=_fg.int64).unbind(-1)
    coords = indices.unsqueeze(-1).floor_divide(_fg.tensor(strides)).remainder(_fg.tensor(sizes))
    return coords.unbind(-1)
