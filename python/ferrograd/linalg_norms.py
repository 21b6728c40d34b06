"""``linalg.norm``, ``linalg.vector_norm`` and ``linalg.matrix_norm``.

Argument handling only: the kernels are ``Tensor.vector_norm``-style Rust
functions in ``ferrograd._core`` (vector norms accumulate in float64; the
spectral matrix norms ``2``, ``-2`` and ``"nuc"`` use singular values from a
one-sided Jacobi iteration in float64).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._core import Tensor, _matrix_norm, _vector_norm
from ._core import dtype as _dtype
from .utils import _docs

__all__ = ["matrix_norm", "norm", "vector_norm"]

# The arguments that ``matrix_norm``'s and ``norm``'s docstrings describe alike, where a line
# ``{keepdim_dtype_args}`` (at the indentation of ``Args:``) stands for them.
_with_doc_pieces = _docs.with_doc_pieces(
    {
        "keepdim_dtype_args": """\
    keepdim (bool): keep the reduced dims with size 1. Default: ``False``.

Keyword args:
    dtype (dtype, optional): convert ``A`` to this dtype first.
        Default: ``None``.""",
    }
)


def _check_tensor(name: str, x: object) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.{name}(): argument must be a Tensor, not {type(x).__name__}")


def vector_norm(
    x: Tensor,
    ord: float = 2,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: _dtype | None = None,
) -> Tensor:
    """Computes the vector ``ord``-norm of ``x`` over the dims ``dim``.

    ``ord`` is any number: ``inf`` is ``max(abs(x))``, ``-inf`` is
    ``min(abs(x))``, ``0`` counts nonzeros, otherwise
    ``sum(abs(x)**ord)**(1/ord)``. The sums accumulate in float64.
    Differentiable (at zero the gradient of the 2-norm is zero).

    Args:
        x (Tensor): the input tensor.
        ord (int, float, inf or -inf): the order of the norm. Default: ``2``.
        dim (int or tuple of ints, optional): the dims to reduce.
            Default: ``None`` (all of them, as if ``x`` were flattened).
        keepdim (bool): keep the reduced dims with size 1. Default: ``False``.

    Keyword args:
        dtype (dtype, optional): convert ``x`` to this dtype first.
            Default: ``None``.

    Example:
        >>> x = ferrograd.tensor([3.0, -4.0])
        >>> ferrograd.linalg.vector_norm(x)
        tensor(5.)
        >>> ferrograd.linalg.vector_norm(x, ord=1), ferrograd.linalg.vector_norm(x, float("inf"))
        (tensor(7.), tensor(4.))
    """
    _check_tensor("vector_norm", x)
    if isinstance(ord, str) or isinstance(ord, bool):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return _vector_norm(x, ord, dim, keepdim, dtype)


@_with_doc_pieces
def matrix_norm(
    A: Tensor,
    ord: float | str = "fro",
    dim: int | Sequence[int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: _dtype | None = None,
) -> Tensor:
    """Computes a matrix norm of each matrix over the two dims ``dim``.

    ``ord`` is ``"fro"`` (Frobenius), ``"nuc"`` (sum of singular values),
    ``1``/``-1`` (max/min absolute column sum), ``inf``/``-inf`` (max/min
    absolute row sum) or ``2``/``-2`` (largest/smallest singular value).
    The singular values come from a one-sided Jacobi iteration in float64.

    Args:
        A (Tensor): a tensor with at least two dims.
        ord (int, float, inf, -inf or str): the kind of norm.
            Default: ``"fro"``.
        dim (tuple of two ints): the dims holding the matrices.
            Default: ``(-2, -1)``.
    {keepdim_dtype_args}

    Example:
        >>> A = ferrograd.tensor([[3.0, 4.0], [0.0, 5.0]])
        >>> ferrograd.linalg.matrix_norm(A)
        tensor(7.0711)
        >>> ferrograd.linalg.matrix_norm(A, 1)
        tensor(9.)
    """
    _check_tensor("matrix_norm", A)
    if isinstance(dim, int):
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    return _matrix_norm(A, ord, tuple(dim), keepdim, dtype)


@_with_doc_pieces
def norm(
    A: Tensor,
    ord: float | str | None = None,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: _dtype | None = None,
) -> Tensor:
    """Computes a vector or a matrix norm, chosen by ``dim`` and ``ord``.

    With an int or one-element ``dim``, a vector norm (:func:`vector_norm`);
    with a two-element ``dim``, a matrix norm (:func:`matrix_norm`). Without
    ``dim``: the 2-norm of the flattened input when ``ord`` is ``None``,
    otherwise a vector norm for a 1-D input and a matrix norm for a 2-D one.

    Args:
        A (Tensor): the input tensor.
        ord (int, float, inf, -inf or str, optional): the order of the norm.
            Default: ``None`` (2 for vectors, ``"fro"`` for matrices).
        dim (int or tuple of ints, optional): the dims to reduce.
            Default: ``None``.
    {keepdim_dtype_args}

    Example:
        >>> A = ferrograd.tensor([[3.0, 4.0], [0.0, 5.0]])
        >>> ferrograd.linalg.norm(A)
        tensor(7.0711)
        >>> ferrograd.linalg.norm(A, dim=1)
        tensor([5., 5.])
    """
    _check_tensor("norm", A)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 1:
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        if len(dim) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        raise RuntimeError(
            f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}"
        )
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(
        "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
        f"Got {A.dim()}D."
    )
