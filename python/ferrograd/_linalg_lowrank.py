"""Randomized low-rank SVD and PCA (``svd_lowrank``, ``pca_lowrank``), built
from differentiable operations: a Gaussian sketch, a few power iterations
re-orthonormalized by QR, and the exact SVD of the small projected matrix
(Halko, Martinsson and Tropp, "Finding structure with randomness", 2009,
algorithms 4.4 and 5.1)."""

from __future__ import annotations

from ._core import Tensor, float32, randn

__all__ = ["pca_lowrank", "svd_lowrank"]


def _basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An ``(*, m, q)`` orthonormal basis approximately spanning the range of
    ``A - M``: a Gaussian sketch refined by ``niter`` power iterations."""
    dtype = A.dtype if A.dtype.is_complex or A.dtype.is_floating_point else float32

    def times(X: Tensor, adjoint: bool) -> Tensor:
        lhs, mlhs = (A.mH, None if M is None else M.mH) if adjoint else (A, M)
        Y = lhs @ X
        return Y if mlhs is None else Y - mlhs @ X

    from .linalg import qr

    Q = qr(times(randn(A.shape[-1], q, dtype=dtype), False)).Q
    for _ in range(niter):
        Q = qr(times(Q, True)).Q
        Q = qr(times(Q, False)).Q
    return Q


def _check(fname: str, A: object, M: object = None, **ints: object) -> None:
    """torch's TypeErrors for arguments of the wrong type."""
    for name, x in (("A", A), ("M", M)):
        if (x is not None or name == "A") and not isinstance(x, Tensor):
            raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    if A.ndim < 2:  # type: ignore[attr-defined]
        raise RuntimeError(
            f"{fname}: expected a tensor with at least 2 dimensions, got shape {tuple(A.shape)}"
        )  # type: ignore[attr-defined]
    for name, v in ints.items():
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise TypeError(f"{fname}(): argument '{name}' must be int, not {type(v).__name__}")


def _svd_lowrank(A: Tensor, q: int, niter: int, M: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    from .linalg import svd

    m, n = A.shape[-2:]
    if q < 0 or niter < 0:
        raise ValueError(f"svd_lowrank: q(={q}) and niter(={niter}) must be non-negative integers")
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # work on the tall adjoint, so that the projected matrix is small
        A = A.mH
        M = None if M is None else M.mH
    Q = _basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(
    A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """svd_lowrank(A, q=6, niter=2, M=None) -> (Tensor, Tensor, Tensor)

    An approximate truncated SVD ``A - M ≈ U diag(S) V^H`` of rank ``q``,
    by a randomized range finder: ``A``'s action on a Gaussian
    ``(n, q)`` sketch (drawn from the global generator with
    :func:`ferrograd.randn`), ``niter`` power iterations each
    re-orthonormalized by QR, and the exact SVD of the ``q``-row
    projection. ``U`` is ``(*, m, q)``, ``S`` ``(*, q)`` and ``V``
    ``(*, n, q)`` (``V``, not ``V^H``, as torch returns it). Exact (up to
    signs) for a matrix of rank at most ``q``; otherwise more power
    iterations bring ``S`` closer to the leading singular values.
    Differentiable through the operations it is made of.

    Args:
        A (Tensor): ``(*, m, n)`` input.
        q (int, optional): the rank of the approximation. Default: 6.
        niter (int): power iterations. Default: 2.
        M (Tensor, optional): subtracted from ``A`` (broadcast to its
            shape) without forming ``A - M``.

    Example:
        >>> _ = ferrograd.manual_seed(0)
        >>> f64 = ferrograd.float64
        >>> A = ferrograd.randn(8, 2, dtype=f64) @ ferrograd.randn(2, 5, dtype=f64)
        >>> U, S, V = ferrograd.svd_lowrank(A, q=2)
        >>> ferrograd.allclose(U @ ferrograd.diag(S) @ V.mT, A)
        True
    """
    _check("svd_lowrank", A, M, q=q, niter=niter)
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(
    A: Tensor, q: int | None = None, center: bool = True, niter: int = 2
) -> tuple[Tensor, Tensor, Tensor]:
    """pca_lowrank(A, q=None, center=True, niter=2) -> (Tensor, Tensor, Tensor)

    Principal component analysis of the rows of ``A`` by
    :func:`svd_lowrank` of the centered data (``A`` minus its column
    means, with ``center``): ``(U, S, V)`` with the principal directions in
    the columns of ``V``; ``A @ V[:, :k]`` projects the data onto the first
    ``k``, and ``S**2 / (m - 1)`` are the variances along them.

    Args:
        A (Tensor): ``(*, m, n)`` data, one sample per row.
        q (int, optional): the number of components; default
            ``min(6, m, n)``.
        center (bool): subtract the column means first. Default: True.
        niter (int): power iterations. Default: 2.

    Raises:
        ValueError: ``q`` is negative or above ``min(m, n)``, or ``niter``
            is negative.

    Example:
        >>> _ = ferrograd.manual_seed(0)
        >>> f64 = ferrograd.float64
        >>> X = ferrograd.randn(50, 3, dtype=f64) * ferrograd.tensor([5.0, 1.0, 0.1], dtype=f64)
        >>> U, S, V = ferrograd.pca_lowrank(X, q=3)
        >>> V[:, 0].abs().argmax().item()
        0
    """
    _check("pca_lowrank", A, q=q, niter=niter)
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
