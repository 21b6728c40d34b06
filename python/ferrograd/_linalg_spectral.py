"""QR, Hermitian eigendecomposition, SVD and slogdet in ``ferrograd.linalg``."""

from . import return_types as _return_types
from ._core import Tensor
from ._core import _linalg_eigh as _eigh
from ._core import _linalg_eigvalsh as _eigvalsh
from ._core import _linalg_qr as _qr
from ._core import _linalg_slogdet as _slogdet
from ._core import _linalg_svd as _svd
from ._core import _linalg_svdvals as _svdvals
from ._ops_pointwise import _finish

__all__ = ["eigh", "eigvalsh", "qr", "slogdet", "svd", "svdvals"]


def _finish_all(result: tuple, out: tuple | None, cls: type) -> tuple:  # type: ignore[type-arg]
    """``result`` copied into the tensors of ``out`` (a tuple of as many), as ``cls``."""
    if out is None:
        return result
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"out must be a tuple of {len(result)} Tensors")
    return cls(tuple(_finish(r, o) for r, o in zip(result, out, strict=True)))


def qr(
    A: Tensor, mode: str = "reduced", *, out: tuple[Tensor, Tensor] | None = None
) -> tuple[Tensor, Tensor]:
    """qr(A, mode='reduced', *, out=None) -> (Tensor, Tensor)

    Computes the QR decomposition ``A = Q R`` of a matrix, or of each matrix
    in a batch, by Householder reflections: ``Q`` has orthonormal columns
    (unitary for complex ``A``) and ``R`` is upper triangular (trapezoidal).
    With ``k = min(m, n)`` for an ``m x n`` ``A``, ``mode`` picks the shapes:
    ``'reduced'`` gives ``Q`` ``(*, m, k)`` and ``R`` ``(*, k, n)``;
    ``'complete'`` gives ``Q`` ``(*, m, m)`` and ``R`` ``(*, m, n)``; ``'r'``
    computes only ``R`` (``(*, k, n)``) and returns an empty ``Q``.

    The factors are unique only up to the sign (phase) of each column of
    ``Q`` and row of ``R``, so they may differ from another library's by
    those signs. Differentiable (reverse and forward mode) for
    ``mode='reduced'``, and for ``'complete'`` when ``m <= n``; ``A``'s
    leading ``k`` columns must be linearly independent.

    Args:
        A (Tensor): a ``(*, m, n)`` float or complex tensor.
        mode (str): ``'reduced'``, ``'complete'`` or ``'r'``.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[3.0, 1.0], [4.0, 2.0]])
        >>> Q, R = ferrograd.linalg.qr(A)
        >>> ferrograd.allclose(Q @ R, A)
        True
    """
    return _finish_all(_qr(A, mode), out, _return_types.linalg_qr)


def eigh(A: Tensor, UPLO: str = "L", *, out: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """eigh(A, UPLO='L', *, out=None) -> (Tensor, Tensor)

    Computes the eigendecomposition ``A = V diag(L) V^H`` of a Hermitian
    (real symmetric) matrix, or of each matrix in a batch, reading only its
    lower triangle (``UPLO='L'``) or upper one (``'U'``). Returns the named
    tuple ``(eigenvalues, eigenvectors)``: the eigenvalues real and
    ascending, the eigenvectors the orthonormal columns of ``V``.

    Each eigenvector is defined up to its sign (its phase, for complex
    ``A``), and for a repeated eigenvalue only the space they span is
    defined. Differentiable (reverse and forward mode); the gradient is
    Hermitian. It is finite only when the eigenvalues are distinct (a loss
    that uses only the eigenvalues always has one), and a complex loss that
    depends on the eigenvectors' phases raises RuntimeError.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.
        UPLO (str): ``'L'`` or ``'U'``, the triangle read.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[2.0, 1.0], [1.0, 2.0]])
        >>> ferrograd.linalg.eigh(A).eigenvalues
        tensor([1., 3.])
    """
    return _finish_all(_eigh(A, UPLO), out, _return_types.linalg_eigh)


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    """eigvalsh(A, UPLO='L', *, out=None) -> Tensor

    The eigenvalues of the Hermitian matrices ``A`` (real, ascending), as
    :func:`eigh` computes them; the eigenvectors are computed only when a
    derivative needs them. Differentiable, with a finite gradient even for
    repeated eigenvalues.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.
        UPLO (str): ``'L'`` or ``'U'``, the triangle read.
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.eigvalsh(ferrograd.tensor([[2.0, 1.0], [1.0, 2.0]]))
        tensor([1., 3.])
    """
    return _finish(_eigvalsh(A, UPLO), out)


def svd(
    A: Tensor,
    full_matrices: bool = True,
    *,
    driver: str | None = None,
    out: tuple[Tensor, Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """svd(A, full_matrices=True, *, driver=None, out=None) -> (Tensor, Tensor, Tensor)

    Computes the singular value decomposition ``A = U diag(S) Vh`` of a
    matrix, or of each matrix in a batch, and returns the named tuple
    ``(U, S, Vh)``: the singular values ``S`` real, non-negative and
    descending; ``U`` and ``Vh`` with orthonormal columns and rows. For an
    ``m x n`` ``A`` and ``k = min(m, n)``, ``full_matrices=True`` gives
    ``U`` ``(*, m, m)`` and ``Vh`` ``(*, n, n)``, and ``False`` the thin
    ``U`` ``(*, m, k)`` and ``Vh`` ``(*, k, n)``.

    Each pair of singular vectors is defined up to a common sign (phase, for
    complex ``A``). Differentiable (reverse and forward mode; forward mode
    needs ``full_matrices=False`` for non-square ``A``). Gradients through
    ``U`` or ``Vh`` are finite only for distinct, non-zero singular values;
    a loss that uses only ``S`` always has one. The extra columns of a full
    ``U`` or ``Vh`` are arbitrary bases, and their gradients are ignored. A
    complex loss that depends on the vectors' phases raises RuntimeError.

    Args:
        A (Tensor): a ``(*, m, n)`` float or complex tensor.
        full_matrices (bool): return the full (square) ``U`` and ``Vh``.
        driver (str, optional): accepted for compatibility; must be None
            (the drivers name CUDA solvers).
        out (tuple of three Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[3.0, 0.0], [4.0, 5.0]])
        >>> ferrograd.linalg.svd(A).S
        tensor([6.7082, 2.2361])
    """
    _no_driver(driver, "svd")
    return _finish_all(_svd(A, full_matrices), out, _return_types.linalg_svd)


def svdvals(A: Tensor, *, driver: str | None = None, out: Tensor | None = None) -> Tensor:
    """svdvals(A, *, driver=None, out=None) -> Tensor

    The singular values of ``A`` (real, non-negative, descending), as
    :func:`svd` computes them; the singular vectors are computed only when
    a derivative needs them. Differentiable.

    Args:
        A (Tensor): a ``(*, m, n)`` float or complex tensor.
        driver (str, optional): must be None (see :func:`svd`).
        out (Tensor, optional): the output tensor.

    Example:
        >>> ferrograd.linalg.svdvals(ferrograd.tensor([[3.0, 0.0], [4.0, 5.0]]))
        tensor([6.7082, 2.2361])
    """
    _no_driver(driver, "svdvals")
    return _finish(_svdvals(A), out)


def _no_driver(driver: str | None, fname: str) -> None:
    if driver is not None:
        raise RuntimeError(
            f"torch.linalg.{fname}: keyword argument `driver=` is only supported on CUDA inputs "
            "with cuSOLVER backend."
        )


def slogdet(A: Tensor, *, out: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """slogdet(A, *, out=None) -> (Tensor, Tensor)

    The sign and the natural log of the absolute value of the determinant
    of a square matrix, or of each matrix in a batch, as the named tuple
    ``(sign, logabsdet)`` with ``det(A) = sign * exp(logabsdet)``. Computed
    from an LU factorization with partial pivoting in ``A``'s dtype (the
    log accumulated in float64), so it neither overflows nor underflows
    where ``det`` would. ``sign`` has ``A``'s dtype: ±1, for complex ``A``
    the phase ``det / |det|``, and 0 for a singular matrix (whose
    ``logabsdet`` is ``-inf``); ``logabsdet`` is real.

    Differentiable (reverse and forward mode): ``logabsdet``'s gradient is
    ``A^{-H}`` times the incoming gradient; a real ``sign`` has none.

    Args:
        A (Tensor): a ``(*, n, n)`` float or complex tensor.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> ferrograd.linalg.slogdet(ferrograd.tensor([[0.0, 2.0], [3.0, 0.0]]))
        ferrograd.return_types.linalg_slogdet(
        sign=tensor(-1.),
        logabsdet=tensor(1.7918))
    """
    return _finish_all(_slogdet(A), out, _return_types.linalg_slogdet)
