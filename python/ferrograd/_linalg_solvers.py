"""``ferrograd.linalg``: pseudo-inverses and least squares, the matrix
exponential, the general eigendecomposition, tensor inverses and solves,
products of Householder reflections and the LDL factorization."""

from __future__ import annotations

from collections.abc import Sequence

from . import return_types as _return_types
from ._core import LinAlgError, Tensor
from ._core import _linalg_cutoff as _cutoff
from ._core import _linalg_eig as _eig
from ._core import _linalg_eigvals as _eigvals
from ._core import _linalg_householder_product as _householder_product
from ._core import _linalg_ldl_factor_ex as _ldl_factor_ex
from ._core import _linalg_ldl_solve as _ldl_solve
from ._core import _linalg_lstsq as _lstsq
from ._core import _linalg_matrix_exp as _matrix_exp
from ._core import _linalg_tensorinv as _tensorinv
from ._core import _linalg_tensorsolve as _tensorsolve
from ._linalg_compose import Tol
from ._linalg_spectral import _finish_all
from ._ops_pointwise import _finish

__all__ = [
    "eig", "eigvals", "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq",
    "matrix_exp", "pinv", "tensorinv", "tensorsolve",
]  # fmt: skip


def pinv(
    A: Tensor, *, atol: Tol = None, rtol: Tol = None, hermitian: bool = False, out: Tensor | None = None
) -> Tensor:
    """pinv(A, *, atol=None, rtol=None, hermitian=False, out=None) -> Tensor

    Computes the Moore-Penrose pseudo-inverse of a matrix, or of each
    matrix in a batch (``(*, m, n)`` gives ``(*, n, m)``), from its singular
    value decomposition: singular values at or below
    ``max(atol, rtol * σ_max)`` are treated as zero. When neither tolerance
    is given, ``rtol`` is ``eps * max(m, n)`` for ``A``'s dtype; when only
    ``atol`` is given and positive, ``rtol`` is 0. Tol tensors
    broadcast with the batch dims. With ``hermitian=True`` the
    eigendecomposition of ``A``'s lower triangle is used instead (``A``
    assumed Hermitian), with the eigenvalues' moduli as the singular values.

    Differentiable (reverse, forward and batched), with the pseudo-inverse's
    own derivative, which stays finite at any rank as long as the rank does
    not change near ``A``.

    Args:
        A (Tensor): a ``(*, m, n)`` float or complex tensor.
        atol (float or Tensor, optional): the absolute tolerance.
        rtol (float or Tensor, optional): the tolerance relative to the
            largest singular value.
        hermitian (bool): ``A`` is Hermitian (read from its lower triangle).
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.pinv(ferrograd.tensor([[1.0, 0.0], [0.0, 0.0]]))
        tensor([[1., 0.],
                [0., 0.]])
    """
    return _finish(_cutoff("pinv", A, atol, rtol, hermitian), out)


def lstsq(
    A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """lstsq(A, B, rcond=None, *, driver=None) -> (Tensor, Tensor, Tensor, Tensor)

    Computes a solution of the least-squares problem ``min ||A X - B||_F``
    for ``A`` of shape ``(*, m, n)`` and ``B`` of shape ``(*, m, k)`` (or a
    batch of vectors ``(*, m)``), batch dims broadcast. The solution is the
    one of least norm, with the singular values of ``A`` at or below
    ``rcond * σ_max`` treated as zero (``rcond`` defaults to
    ``eps * max(m, n)`` for ``A``'s dtype).

    Returns the named tuple ``(solution, residuals, rank,
    singular_values)``. Which fields are filled follows the ``driver``
    (``'gels'``, ``'gelsy'`` (the default), ``'gelsd'`` or ``'gelss'``, the
    names torch accepts on CPU): ``residuals``, the squared residuals
    ``||A X - B||²`` of each column, for ``m > n`` with ``'gels'``, and with
    ``'gelsd'``/``'gelss'`` when every matrix has full rank; ``rank`` for
    every driver but ``'gels'``; ``singular_values`` for ``'gelsd'`` and
    ``'gelss'``. The others are empty tensors.

    ``'gels'`` solves through a QR factorization (assuming full rank, as
    LAPACK does), ``'gelsy'`` too when the factor is well conditioned, and
    otherwise the SVD is used. Differentiable with respect to ``A`` and
    ``B`` (the solution and the residuals).

    Args:
        A (Tensor): the ``(*, m, n)`` coefficient matrices.
        B (Tensor): the ``(*, m, k)`` right-hand sides, or ``(*, m)``.
        rcond (float, optional): the relative cutoff for small singular
            values.
        driver (str, optional): which of torch's LAPACK driver names the
            outputs follow.

    Example:
        >>> A = ferrograd.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> ferrograd.linalg.lstsq(A, ferrograd.tensor([[1.0], [2.0], [3.0]])).solution
        tensor([[1.0000],
                [2.0000]])
    """
    return _lstsq(A, B, rcond, driver)


def matrix_exp(A: Tensor) -> Tensor:
    """matrix_exp(A) -> Tensor

    Computes the matrix exponential ``Σ A^k / k!`` of a square matrix, or
    of each matrix in a batch, by scaling and squaring with a degree-13
    Padé approximant, in ``A``'s dtype. Differentiable (reverse, forward,
    batched and to any order): each derivative is itself the exponential
    of a ``2n x 2n`` block matrix.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.

    Example:
        >>> ferrograd.linalg.matrix_exp(ferrograd.tensor([[0.0, 1.0], [0.0, 0.0]]))
        tensor([[1., 1.],
                [0., 1.]])
    """
    return _matrix_exp(A)


def eig(A: Tensor, *, out: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """eig(A, *, out=None) -> (Tensor, Tensor)

    Computes the eigendecomposition ``A = V diag(L) V^{-1}`` of a square
    matrix, or of each matrix in a batch. Returns the named tuple
    ``(eigenvalues, eigenvectors)``, both complex (also for real ``A``),
    the eigenvectors the columns of ``V``, each of unit norm with its
    largest component real and positive.

    Differentiable (reverse, forward and batched) where the eigenvalues are
    distinct. Each eigenvector is defined only up to a complex phase: a
    loss that depends on those phases raises RuntimeError in backward.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> L, V = ferrograd.linalg.eig(ferrograd.tensor([[2.0, 0.0], [1.0, 3.0]]))
        >>> L.real
        tensor([3., 2.])
    """
    return _finish_all(_eig(A), out, _return_types.linalg_eig)


def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """eigvals(A, *, out=None) -> Tensor

    The (complex) eigenvalues of the square matrices ``A``, as :func:`eig`
    computes them; the eigenvectors are computed only when a derivative
    needs them. Differentiable.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.eigvals(ferrograd.tensor([[2.0, 0.0], [1.0, 3.0]])).real
        tensor([3., 2.])
    """
    return _finish(_eigvals(A), out)


def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """tensorinv(A, ind=2, *, out=None) -> Tensor

    The inverse of ``A`` for :func:`ferrograd.tensordot`: ``A`` is read as
    a matrix whose rows run over its first ``ind`` dims and columns over
    the rest (the two products of sizes must agree), inverted, and shaped
    ``A.shape[ind:] + A.shape[:ind]``. Differentiable.

    Args:
        A (Tensor): the tensor to invert.
        ind (int): how many leading dims index the rows.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.eye(4).reshape(4, 2, 2)
        >>> ferrograd.linalg.tensorinv(A, ind=1).shape
        ferrograd.Size([2, 2, 4])
    """
    if not isinstance(ind, int) or isinstance(ind, bool):
        raise TypeError(f"tensorinv(): argument 'ind' must be int, not {type(ind).__name__}")
    return _finish(_tensorinv(A, ind), out)


def tensorsolve(
    A: Tensor, B: Tensor, dims: Sequence[int] | None = None, *, out: Tensor | None = None
) -> Tensor:
    """tensorsolve(A, B, dims=None, *, out=None) -> Tensor

    Computes the ``X`` with ``tensordot(A, X, X.ndim) == B``: ``X`` has the
    shape ``A.shape[B.ndim:]``, whose size must equal ``B``'s. With
    ``dims``, those dims of ``A`` are first moved to its end.
    Differentiable.

    Args:
        A (Tensor): the coefficient tensor.
        B (Tensor): the right-hand side.
        dims (sequence of int, optional): dims of ``A`` to move to its end.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.eye(6).reshape(6, 2, 3)
        >>> ferrograd.linalg.tensorsolve(A, ferrograd.arange(6.0))
        tensor([[0., 1., 2.],
                [3., 4., 5.]])
    """
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
    return _finish(_tensorsolve(A, B, dims), out)


def householder_product(A: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """householder_product(A, tau, *, out=None) -> Tensor

    The first ``n`` columns of the product ``H_1 ... H_k`` of Householder
    reflections ``H_i = I - tau_i v_i v_i^H``, where ``v_i`` is column ``i``
    of ``A`` below the diagonal with a 1 on it (LAPACK's ``orgqr``), for
    ``A`` of shape ``(*, m, n)`` and ``tau`` of shape ``(*, k)``,
    ``m >= n >= k``. Differentiable with respect to both.

    Args:
        A (Tensor): the reflectors, below the diagonal.
        tau (Tensor): the reflectors' scale factors.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[0.0], [1.0]])
        >>> ferrograd.linalg.householder_product(A, ferrograd.tensor([1.0]))
        tensor([[ 0.],
                [-1.]])
    """
    return _finish(_householder_product(A, tau), out)


def ldl_factor_ex(
    A: Tensor, *, hermitian: bool = False, check_errors: bool = False,
    out: tuple[Tensor, Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None) -> (Tensor, Tensor, Tensor)

    Computes the LDL factorization ``A = P L D L^T P^T`` of a symmetric
    (with ``hermitian=True`` and complex ``A``, ``L D L^H`` of a Hermitian)
    possibly indefinite matrix, or of each matrix in a batch, reading only
    its lower triangle, by Bunch-Kaufman pivoting in LAPACK's compact form.
    Returns the named tuple ``(LD, pivots, info)``: ``L`` (unit lower
    triangular) below the diagonal of ``LD`` and the 1x1 and 2x2 blocks of
    ``D`` on and next to it; int32 ``pivots`` as LAPACK's ``sytrf`` writes
    them (a positive ``p`` at ``k``: rows and columns ``k`` and ``p - 1``
    swapped; a negative pair: a 2x2 block); int32 ``info``, 0 or the index
    (from 1) of the first zero block of ``D``. With ``check_errors=True`` a
    non-zero ``info`` raises :class:`LinAlgError`. Not differentiable.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.
        hermitian (bool): factor a complex ``A`` as Hermitian.
        check_errors (bool): raise for a matrix whose ``D`` is singular.
        out (tuple of three Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[0.0, 1.0], [1.0, 0.0]])
        >>> ferrograd.linalg.ldl_factor_ex(A).pivots
        tensor([-2, -2], dtype=ferrograd.int32)
    """
    r = _ldl_factor_ex(A, hermitian)
    if check_errors:
        _raise_for_info("linalg.ldl_factor_ex", r.info)
    return _finish_all(r, out, _return_types.linalg_ldl_factor_ex)


def _raise_for_info(op: str, info: Tensor) -> None:
    codes = info.reshape(-1).tolist()
    bad = next((i for i, k in enumerate(codes) if k), None)
    if bad is not None:
        where = f"(Batch element {bad}): " if info.dim() else ""
        raise LinAlgError(
            f"{op}: {where}The factorization could not be completed because the block diagonal matrix D is "
            f"exactly singular (its diagonal block {codes[bad]} is zero)."
        )


def ldl_factor(
    A: Tensor, *, hermitian: bool = False, out: tuple[Tensor, Tensor] | None = None
) -> tuple[Tensor, Tensor]:
    """ldl_factor(A, *, hermitian=False, out=None) -> (Tensor, Tensor)

    The named tuple ``(LD, pivots)`` of :func:`ldl_factor_ex`, raising
    :class:`LinAlgError` when a block of ``D`` is zero. Not differentiable.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.
        hermitian (bool): factor a complex ``A`` as Hermitian.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[4.0, 2.0], [2.0, -3.0]])
        >>> ferrograd.linalg.ldl_factor(A).LD
        tensor([[ 4.0000,  0.0000],
                [ 0.5000, -4.0000]])
    """
    r = _ldl_factor_ex(A, hermitian)
    _raise_for_info("linalg.ldl_factor", r.info)
    pair = _return_types.linalg_ldl_factor((r.LD, r.pivots))
    return _finish_all(pair, out, _return_types.linalg_ldl_factor)


def ldl_solve(
    LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out: Tensor | None = None
) -> Tensor:
    """ldl_solve(LD, pivots, B, *, hermitian=False, out=None) -> Tensor

    Solves ``A X = B`` given the LDL factorization of ``A`` from
    :func:`ldl_factor` (pass the same ``hermitian``). Batch dims broadcast.
    Not differentiable.

    Args:
        LD (Tensor): the ``(*, n, n)`` compact factors.
        pivots (Tensor): the ``(*, n)`` int32 pivots.
        B (Tensor): the ``(*, n, k)`` right-hand sides.
        hermitian (bool): the factorization is Hermitian.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[4.0, 2.0], [2.0, -3.0]])
        >>> LD, piv = ferrograd.linalg.ldl_factor(A)
        >>> ferrograd.linalg.ldl_solve(LD, piv, ferrograd.tensor([[6.0], [-1.0]]))
        tensor([[1.],
                [1.]])
    """
    return _finish(_ldl_solve(LD, pivots, B, hermitian), out)
