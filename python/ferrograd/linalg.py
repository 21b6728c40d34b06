"""``ferrograd.linalg``: the ``torch.linalg`` functions ferrograd provides."""

from . import return_types as _return_types
from ._core import LinAlgError, Tensor
from ._core import _linalg_cholesky as _cholesky
from ._core import _linalg_cholesky_ex as _cholesky_ex
from ._core import _linalg_solve as _solve
from ._core import _linalg_solve_triangular as _solve_triangular
from ._linalg_compose import cond, cross, diagonal, matrix_power, matrix_rank, multi_dot, vander, vecdot
from ._linalg_lu import inv_ex, lu, lu_factor, lu_factor_ex, lu_solve, solve_ex
from ._linalg_solvers import (
    eig,
    eigvals,
    householder_product,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lstsq,
    matrix_exp,
    pinv,
    tensorinv,
    tensorsolve,
)  # fmt: skip
from ._linalg_spectral import eigh, eigvalsh, qr, slogdet, svd, svdvals
from ._ops_pointwise import _finish
from .linalg_norms import matrix_norm, norm, vector_norm

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
    "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
    "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
    "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]  # fmt: skip



def cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """cholesky(A, *, upper=False, out=None) -> Tensor

    Computes the Cholesky decomposition of a Hermitian positive-definite
    matrix, or of each matrix in a batch: ``L`` lower triangular with
    ``A = L L^H``, read from ``A``'s lower triangle; with ``upper=True``,
    ``U = L^H`` with ``A = U^H U``, read from the upper triangle. Computes in
    ``A``'s own dtype (float32, float64, complex64, complex128).

    Differentiable (reverse and forward mode). The gradient assumes ``A``
    Hermitian: it is Hermitian itself, spread over both triangles.

    Args:
        A (Tensor): a ``(*, n, n)`` tensor.
        upper (bool): return the upper factor.
        out (Tensor, optional): the output tensor.

    Raises:
        LinAlgError: a matrix is not positive definite (the message names
            the order of the first leading minor that is not, and the batch
            element).

    Example:
        >>> A = ferrograd.tensor([[4.0, 2.0], [2.0, 5.0]])
        >>> ferrograd.linalg.cholesky(A)
        tensor([[2., 0.],
                [1., 2.]])
    """
    return _finish(_cholesky(A, upper), out)


def cholesky_ex(
    A: Tensor, *, upper: bool = False, check_errors: bool = False, out: tuple[Tensor, Tensor] | None = None
) -> tuple[Tensor, Tensor]:
    """cholesky_ex(A, *, upper=False, check_errors=False, out=None) -> (Tensor, Tensor)

    :func:`cholesky` without the error: returns the named tuple
    ``(L, info)``, where ``info`` (int32, one per matrix) is 0 for a matrix
    that was factored and otherwise the order of its first leading minor
    that is not positive definite (its ``L`` is then zeros). With
    ``check_errors=True`` such a matrix raises :class:`LinAlgError`.

    Args:
        A (Tensor): a ``(*, n, n)`` tensor.
        upper (bool): return the upper factor.
        check_errors (bool): raise for a matrix that is not positive definite.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[[4.0, 2.0], [2.0, 5.0]], [[1.0, 2.0], [2.0, 1.0]]])
        >>> ferrograd.linalg.cholesky_ex(A).info
        tensor([0, 2], dtype=ferrograd.int32)
    """
    r = _cholesky_ex(A, upper)
    if check_errors:
        codes = r.info.reshape(-1).tolist()
        bad = next((i for i, k in enumerate(codes) if k), None)
        if bad is not None:
            where = f"(Batch element {bad}): " if r.info.dim() else ""
            raise LinAlgError(
                f"linalg.cholesky_ex: {where}The factorization could not be completed because the input is "
                f"not positive-definite (the leading minor of order {codes[bad]} is not positive-definite)."
            )
    if out is None:
        return r
    _finish(r[0], out[0])
    _finish(r[1], out[1])
    return _return_types.linalg_cholesky_ex(out)


def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None) -> Tensor

    Computes the solution ``X`` of ``A X = B`` (``left=True``) or
    ``X A = B`` for a triangular ``A``, reading only its upper or lower
    triangle (and taking its diagonal as ones with ``unitriangular``). Batch
    dims broadcast. A zero on the diagonal gives infinities or NaNs (no
    error, as in torch). Differentiable with respect to both (``A``'s
    gradient lies on the triangle read).

    Args:
        A (Tensor): the ``(*, n, n)`` triangular matrices.
        B (Tensor): the right-hand sides: ``(*, n, k)``, or ``(*, k, n)``
            with ``left=False``.
        upper (bool): ``A`` is upper triangular (keyword-only, required).
        left (bool): solve ``A X = B`` rather than ``X A = B``.
        unitriangular (bool): take ``A``'s diagonal as ones.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[2.0, 0.0], [1.0, 4.0]])
        >>> ferrograd.linalg.solve_triangular(A, ferrograd.tensor([[2.0], [9.0]]), upper=False)
        tensor([[1.],
                [2.]])
    """
    return _finish(_solve_triangular(A, B, (upper, left, unitriangular)), out)


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    """solve(A, B, *, left=True, out=None) -> Tensor

    Computes the solution ``X`` of the square linear system ``A X = B``
    (``X A = B`` with ``left=False``).

    ``A`` has shape ``(*, n, n)``; ``B`` has shape ``(*, n, k)`` or, for a
    vector right-hand side, ``(*, n)`` (then ``X`` has that shape too). Batch
    dims broadcast. Uses an LU factorization with partial pivoting in
    ``A``'s dtype and raises :class:`LinAlgError` when ``A`` is singular
    (:func:`solve_ex` does not). Differentiable (reverse and forward mode)
    with respect to both ``A`` and ``B``.

    Args:
        A (Tensor): the coefficient matrices.
        B (Tensor): the right-hand sides.
        left (bool): solve ``A X = B`` (True) or ``X A = B``. Default: True.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[2.0, 1.0], [1.0, 3.0]])
        >>> ferrograd.linalg.solve(A, ferrograd.tensor([3.0, 5.0]))
        tensor([0.8000, 1.4000])
    """
    if left:
        return _finish(_solve(A, B), out)
    if isinstance(B, Tensor) and B.ndim == 1:
        raise RuntimeError(
            "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
            "In this case linalg.solve is equivalent to B / A.squeeze(-1)"
        )
    return _finish(_solve(A.mH, B.mH).mH, out)


def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """inv(A, *, out=None) -> Tensor

    Computes the inverse of a square matrix, or of each matrix in a batch,
    from an LU factorization with partial pivoting in ``A``'s dtype.

    Raises :class:`LinAlgError` when a matrix is singular (:func:`inv_ex`
    does not). To solve ``A X = B``, :func:`solve` is faster and more
    accurate than ``inv(A) @ B``. Differentiable (reverse and forward
    mode).

    Args:
        A (Tensor): an invertible tensor of shape ``(*, n, n)``.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[3.0, 4.0], [0.0, 5.0]])
        >>> ferrograd.linalg.inv(A)
        tensor([[ 0.3333, -0.2667],
                [ 0.0000,  0.2000]])
    """
    return _finish(Tensor.inverse(A), out)


def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """det(A, *, out=None) -> Tensor

    Computes the determinant of a square matrix, or of each matrix in a
    batch, from an LU factorization with partial pivoting in ``A``'s dtype
    (0 for a singular matrix). Differentiable: the gradient is
    ``det(A) * inv(A).mH`` times the incoming gradient, so backward through
    a singular matrix raises.

    Args:
        A (Tensor): a tensor of shape ``(*, n, n)``.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[3.0, 4.0], [0.0, 5.0]])
        >>> ferrograd.linalg.det(A)
        tensor(15.)
    """
    return _finish(Tensor.det(A), out)


matmul = Tensor.matmul

from ._routed import route_module as _route_module  # noqa: E402

_route_module(globals(), __name__, "linalg.")
del _route_module

matmul.__doc__ = """matmul(input, other) -> Tensor

Matrix product of two tensors; the same function as
:func:`ferrograd.matmul` (1-D operands are vectors, batch dims
broadcast).

Args:
    input (Tensor): the first operand.
    other (Tensor): the second operand.

Example:
    >>> A = ferrograd.tensor([[3.0, 4.0], [0.0, 5.0]])
    >>> ferrograd.linalg.matmul(A, ferrograd.tensor([3.0, -4.0]))
    tensor([ -7., -20.])
"""

