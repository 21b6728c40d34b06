"""``ferrograd.linalg`` functions made of other differentiable operations."""

from __future__ import annotations

from collections.abc import Sequence

from ._core import Tensor
from ._core import _linalg_cond as _cond
from ._core import _linalg_cross as _cross
from ._core import _linalg_cutoff as _cutoff
from ._core import _linalg_matrix_power as _matrix_power
from ._core import _linalg_multi_dot as _multi_dot
from ._core import _linalg_vander as _vander
from ._core import _linalg_vecdot as _vecdot
from ._ops_pointwise import _finish

Tol = float | Tensor | None

__all__ = ["cond", "cross", "diagonal", "matrix_power", "matrix_rank", "multi_dot", "vander", "vecdot"]


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """vecdot(x, y, *, dim=-1, out=None) -> Tensor

    The dot product of the vectors of ``x`` and ``y`` along ``dim``,
    ``sum(x.conj() * y, dim)``, with the other dims broadcast. Both must
    have one dtype. Differentiable.

    Args:
        x (Tensor): the first vectors (conjugated).
        y (Tensor): the second vectors.
        dim (int): the dim the vectors lie along.
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.vecdot(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([3.0, 4.0]))
        tensor(11.)
    """
    return _finish(_vecdot(x, y, dim), out)


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """cross(input, other, *, dim=-1, out=None) -> Tensor

    The cross product of the 3-vectors of ``input`` and ``other`` along
    ``dim`` (which must have size 3 in both), the other dims broadcast.
    Differentiable.

    Args:
        input (Tensor): the first vectors.
        other (Tensor): the second vectors.
        dim (int): the dim of size 3 the vectors lie along.
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.cross(ferrograd.tensor([1.0, 0.0, 0.0]), ferrograd.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    return _finish(_cross(input, other, dim), out)


def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:
    """matrix_power(A, n, *, out=None) -> Tensor

    The ``n``-th power of a square matrix, or of each matrix in a batch, by
    repeated squaring: the identity for ``n = 0``, and for ``n < 0`` the
    power of the inverse (which raises LinAlgError for a singular matrix).
    Differentiable.

    Args:
        A (Tensor): a ``(*, n, n)`` tensor.
        n (int): the exponent.
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.matrix_power(ferrograd.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
        tensor([[1., 3.],
                [0., 1.]])
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    return _finish(_matrix_power(A, n), out)


def multi_dot(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """multi_dot(tensors, *, out=None) -> Tensor

    The product of two or more matrices, multiplied in the order that needs
    the fewest scalar multiplications. The first tensor may be a 1-D row
    vector and the last a 1-D column vector; the others are 2-D.
    Differentiable.

    Args:
        tensors (sequence of Tensors): two or more tensors.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.ones(2, 3)
        >>> ferrograd.linalg.multi_dot([ferrograd.ones(2), A, ferrograd.ones(3)])
        tensor(6.)
    """
    return _finish(_multi_dot(list(tensors)), out)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """vander(x, *, N=None) -> Tensor

    The Vandermonde matrices of the vectors along ``x``'s last dim: column
    ``j`` is ``x ** j`` for ``j < N`` (``N`` defaults to the vectors'
    length and must be greater than 1). Note the increasing powers, unlike
    ``ferrograd.vander``. Differentiable.

    Args:
        x (Tensor): a ``(*, n)`` tensor.
        N (int, optional): the number of columns.

    Example:
        >>> ferrograd.linalg.vander(ferrograd.tensor([1.0, 2.0, 3.0]))
        tensor([[1., 1., 1.],
                [1., 2., 4.],
                [1., 3., 9.]])
    """
    return _vander(x, N)


def matrix_rank(
    A: Tensor, *, atol: Tol = None, rtol: Tol = None, hermitian: bool = False, out: Tensor | None = None
) -> Tensor:
    """matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor

    The numerical rank of a matrix, or of each matrix in a batch: the number
    of singular values (of eigenvalue moduli, with ``hermitian=True``)
    greater than ``max(atol, rtol * largest)``. When neither tolerance is
    given, ``rtol`` is ``eps * max(m, n)`` for ``A``'s dtype; when only
    ``atol`` is given and positive, ``rtol`` is 0. Tol tensors
    broadcast with the batch dims. Returns int64.

    Args:
        A (Tensor): a ``(*, m, n)`` float or complex tensor.
        atol (float or Tensor, optional): the absolute tolerance.
        rtol (float or Tensor, optional): the tolerance relative to the
            largest value.
        hermitian (bool): ``A`` is Hermitian (its eigenvalues are used).
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.matrix_rank(ferrograd.tensor([[1.0, 2.0], [2.0, 4.0]]))
        tensor(1)
    """
    return _finish(_cutoff("matrix_rank", A, atol, rtol, hermitian), out)


def cond(A: Tensor, p: float | str | None = None, *, out: Tensor | None = None) -> Tensor:
    """cond(A, p=None, *, out=None) -> Tensor

    The condition number of a matrix, or of each matrix in a batch. With
    ``p`` None or 2, the ratio of the largest to the smallest singular
    value (any ``m x n`` matrix; ``-2`` gives the inverse ratio); with
    ``p`` ``'fro'``, ``'nuc'``, ``inf``, ``-inf``, 1 or -1,
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` for square ``A``. The
    result is real. Differentiable.

    Args:
        A (Tensor): a ``(*, m, n)`` tensor (square unless ``p`` is 2, -2 or None).
        p (int, float, str, optional): the norm's order.
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.cond(ferrograd.tensor([[2.0, 0.0], [0.0, 0.5]]))
        tensor(4.)
    """
    return _finish(_cond(A, p), out)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """diagonal(A, *, offset=0, dim1=-2, dim2=-1) -> Tensor

    :meth:`Tensor.diagonal` with the last two dims as the default: a view of
    the diagonals of a batch of matrices.

    Args:
        A (Tensor): a tensor of at least 2 dims.
        offset (int): the diagonal (0 the main one, > 0 above it).
        dim1 (int): the first dim of the matrices.
        dim2 (int): the second dim of the matrices.

    Example:
        >>> ferrograd.linalg.diagonal(ferrograd.eye(2).expand(3, 2, 2)).shape
        ferrograd.Size([3, 2])
    """
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)
