"""LU factorization in ``ferrograd.linalg`` (``lu_factor``, ``lu_factor_ex``,
``lu``, ``lu_solve``, ``solve_ex``, ``inv_ex``) and the torch-level
``lu_unpack`` and deprecated ``lu`` and ``lu_solve``."""

from __future__ import annotations

import warnings
from typing import Any

from . import return_types as _return_types
from ._core import Tensor, _lu_unpack
from ._core import _linalg_lu as _lu
from ._core import _linalg_lu_factor as _lu_factor
from ._core import _linalg_lu_factor_ex as _lu_factor_ex
from ._core import _linalg_lu_solve as _lu_solve
from ._linalg_spectral import _finish_all
from ._ops_pointwise import _finish

__all__ = ["inv_ex", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "solve_ex"]

_PIVOTS = """    The factors are those of LAPACK's ``getrf``: ``L`` (unit diagonal,
    not stored) below the diagonal of ``LU`` and ``U`` on and above it,
    ``LU`` column-major; ``pivots`` (int32, 1-based) says that row ``i``
    was swapped with row ``pivots[i]`` at step ``i``."""


def lu_factor(
    A: Tensor, *, pivot: bool = True, out: tuple[Tensor, Tensor] | None = None
) -> tuple[Tensor, Tensor]:
    """lu_factor(A, *, pivot=True, out=None) -> (Tensor, Tensor)

        The LU factorization with partial pivoting ``P A = L U`` of a matrix,
        or of each matrix in a batch, packed for :func:`lu_solve`, as the
        named tuple ``(LU, pivots)``. ``A`` may be rectangular.

    {pivots}

        Raises RuntimeError naming the first matrix with a zero pivot (a
        singular square matrix); :func:`lu_factor_ex` returns those without
        raising. ``pivot=False`` is not available on the CPU (as in torch).
        Differentiable (reverse and forward mode) with respect to ``A``.

        Args:
            A (Tensor): a ``(*, m, n)`` float or complex tensor.
            pivot (bool): must be True.
            out (tuple of two Tensors, optional): the output tensors.

        Example:
            >>> A = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])
            >>> LU, pivots = ferrograd.linalg.lu_factor(A)
            >>> LU
            tensor([[3.0000, 4.0000],
                    [0.3333, 0.6667]])
            >>> pivots
            tensor([2, 2], dtype=ferrograd.int32)
    """
    return _finish_all(_lu_factor(A, pivot), out, _return_types.linalg_lu_factor)


def lu_factor_ex(
    A: Tensor,
    *,
    pivot: bool = True,
    check_errors: bool = False,
    out: tuple[Tensor, Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """lu_factor_ex(A, *, pivot=True, check_errors=False, out=None) -> (Tensor, Tensor, Tensor)

        :func:`lu_factor` without its check: the named tuple
        ``(LU, pivots, info)`` where ``info`` (int32, one per matrix) is 0, or
        the 1-based index of the first zero on ``U``'s diagonal (the
        factorization is still complete then, as LAPACK's).

    {pivots}

        Args:
            A (Tensor): a ``(*, m, n)`` float or complex tensor.
            pivot (bool): must be True.
            check_errors (bool): raise as :func:`lu_factor` does when an
                ``info`` is not 0. Default: False.
            out (tuple of three Tensors, optional): the output tensors.

        Example:
            >>> ferrograd.linalg.lu_factor_ex(ferrograd.tensor([[1.0, 2.0], [2.0, 4.0]])).info
            tensor(2, dtype=ferrograd.int32)
    """
    result = _lu_factor_ex(A, pivot)
    if check_errors and bool((result[2] != 0).any()):
        try:
            _lu_factor(A.detach(), pivot)
        except RuntimeError as exc:
            raise type(exc)(str(exc).replace("linalg.lu_factor:", "linalg.lu_factor_ex:", 1)) from None
    return _finish_all(result, out, _return_types.linalg_lu_factor_ex)


def lu(
    A: Tensor, *, pivot: bool = True, out: tuple[Tensor, Tensor, Tensor] | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """lu(A, *, pivot=True, out=None) -> (Tensor, Tensor, Tensor)

    The LU factorization with partial pivoting ``A = P L U`` of a matrix,
    or of each matrix in a batch, as the named tuple ``(P, L, U)``: ``P``
    a permutation matrix (``m x m``, in ``A``'s dtype), ``L`` unit lower
    triangular (``m x k``) and ``U`` upper triangular (``k x n``),
    ``k = min(m, n)``. Singular matrices factor too (``U`` then has zeros
    on its diagonal). Differentiable (reverse and forward mode) with
    respect to ``A`` through ``L`` and ``U``.

    Args:
        A (Tensor): a ``(*, m, n)`` float or complex tensor.
        pivot (bool): must be True (no pivot-free LU on the CPU).
        out (tuple of three Tensors, optional): the output tensors.

    Example:
        >>> P, L, U = ferrograd.linalg.lu(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> P
        tensor([[0., 1.],
                [1., 0.]])
        >>> ferrograd.allclose(P @ L @ U, ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
        True
    """
    return _finish_all(_lu(A, pivot), out, _return_types.linalg_lu)


def lu_solve(
    LU: Tensor,
    pivots: Tensor,
    B: Tensor,
    *,
    left: bool = True,
    adjoint: bool = False,
    out: Tensor | None = None,
) -> Tensor:
    """lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None) -> Tensor

    Solves ``A X = B`` for ``A`` given by its LU factorization (the
    ``(LU, pivots)`` of :func:`lu_factor`): ``X A = B`` with
    ``left=False``, and ``A^H`` in place of ``A`` with ``adjoint=True``.
    Batch dims broadcast. Differentiable with respect to ``LU`` and ``B``.

    Args:
        LU (Tensor): ``(*, n, n)`` packed factors.
        pivots (Tensor): ``(*, n)`` int32 pivots.
        B (Tensor): ``(*, n, k)`` right-hand sides (``(*, k, n)`` with
            ``left=False``).
        left (bool): solve ``A X = B`` (True) or ``X A = B``. Default: True.
        adjoint (bool): use ``A``'s conjugate transpose. Default: False.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[2.0, 1.0], [1.0, 3.0]])
        >>> LU, pivots = ferrograd.linalg.lu_factor(A)
        >>> ferrograd.linalg.lu_solve(LU, pivots, ferrograd.tensor([[3.0], [4.0]]))
        tensor([[1.],
                [1.]])
    """
    return _finish(_lu_solve(LU, pivots, B, (left, adjoint)), out)


def solve_ex(
    A: Tensor,
    B: Tensor,
    *,
    left: bool = True,
    check_errors: bool = False,
    out: tuple[Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """solve_ex(A, B, *, left=True, check_errors=False, out=None) -> (Tensor, Tensor)

    :func:`solve` without its check for singular matrices: the named
    tuple ``(result, info)``, ``info`` as in :func:`lu_factor_ex` (a
    singular ``A`` gives ``inf``/``nan`` in ``result`` and a nonzero
    ``info``). Differentiable as :func:`solve`.

    Args:
        A (Tensor): ``(*, n, n)`` coefficient matrices.
        B (Tensor): right-hand sides, as for :func:`solve`.
        left (bool): solve ``A X = B`` (True) or ``X A = B``. Default: True.
        check_errors (bool): raise for a singular ``A``. Default: False.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[2.0, 1.0], [1.0, 3.0]])
        >>> ferrograd.linalg.solve_ex(A, ferrograd.tensor([3.0, 4.0])).result
        tensor([1., 1.])
    """
    from .linalg import solve

    info = _lu_factor_ex(A.detach(), True)[2]
    if check_errors or not bool((info != 0).any()):
        try:
            result = solve(A, B, left=left)
        except RuntimeError as exc:
            raise type(exc)(str(exc).replace("torch.linalg.solve:", "torch.linalg.solve_ex:")) from None
    else:
        result = _singular_solve(A, B, left)
    return _finish_all(_return_types.linalg_solve_ex((result, info)), out, _return_types.linalg_solve_ex)


def inv_ex(
    A: Tensor, *, check_errors: bool = False, out: tuple[Tensor, Tensor] | None = None
) -> tuple[Tensor, Tensor]:
    """inv_ex(A, *, check_errors=False, out=None) -> (Tensor, Tensor)

    :func:`inv` without its check for singular matrices: the named tuple
    ``(inverse, info)``, ``info`` as in :func:`lu_factor_ex` (a singular
    ``A`` gives ``inf``/``nan`` entries and a nonzero ``info``).
    Differentiable as :func:`inv`.

    Args:
        A (Tensor): ``(*, n, n)`` matrices.
        check_errors (bool): raise for a singular ``A``. Default: False.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> ferrograd.linalg.inv_ex(ferrograd.tensor([[2.0, 0.0], [0.0, 4.0]])).inverse
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    info = _lu_factor_ex(A.detach(), True)[2]
    if check_errors or not bool((info != 0).any()):
        try:
            inverse = A.inverse()
        except RuntimeError as exc:
            raise type(exc)(str(exc).replace("linalg.inv:", "linalg.inv_ex:", 1)) from None
    else:
        n = A.shape[-1]
        inverse = _singular_solve(A, _eye_like(A, n), True)
    return _finish_all(_return_types.linalg_inv_ex((inverse, info)), out, _return_types.linalg_inv_ex)


def _eye_like(A: Tensor, n: int) -> Tensor:
    from ._core import eye

    return eye(n, dtype=A.dtype)


def _singular_solve(A: Tensor, B: Tensor, left: bool) -> Tensor:
    """The solution through ``A``'s factors even where ``U`` has a zero on
    its diagonal (which then gives ``inf``/``nan``, as LAPACK's)."""
    factors = _lu_factor_ex(A, True)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    rhs = B.unsqueeze(-1) if vector and left else B
    x = _lu_solve(factors[0], factors[1], rhs, (left, False))
    return x.squeeze(-1) if vector and left else x


_LU_WARNING = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be "
    "removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced "
    "with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
    "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
    "torch.linalg.lu_factor_ex(A, compute_pivots)"
)

_LU_SOLVE_WARNING = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future "
    "PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = "
    "torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)"
)


def legacy_lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> tuple[Tensor, ...]:
    """lu(A, pivot=True, get_infos=False, out=None) -> (Tensor, Tensor) or (Tensor, Tensor, Tensor)

    Deprecated (warns): the packed LU factorization ``(LU, pivots)`` of
    :func:`ferrograd.linalg.lu_factor`, with ``get_infos=True`` the named
    tuple ``(LU, pivots, info)`` of :func:`ferrograd.linalg.lu_factor_ex`.
    Singular matrices do not raise.

    Args:
        A (Tensor): a ``(*, m, n)`` float or complex tensor.
        pivot (bool): must be True.
        get_infos (bool): also return ``info``. Default: False.
        out (tuple, optional): the output tensors.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     LU, pivots = ferrograd.lu(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> pivots
        tensor([2, 2], dtype=ferrograd.int32)
    """
    warnings.warn(_LU_WARNING, UserWarning, stacklevel=2)
    result = _return_types._lu_with_info(_lu_factor_ex(A, pivot))
    if get_infos:
        return _finish_all(result, out, _return_types._lu_with_info)
    return tuple(_finish_all(tuple(result[:2]), out, tuple))


def legacy_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Tensor | None = None) -> Tensor:
    """lu_solve(b, LU_data, LU_pivots, *, out=None) -> Tensor

    Deprecated (warns; note the argument order): ``X`` with ``A X = b``,
    as :func:`ferrograd.linalg.lu_solve` ``(LU_data, LU_pivots, b)``.

    Args:
        b (Tensor): ``(*, n, k)`` right-hand sides.
        LU_data (Tensor): packed factors from :func:`ferrograd.linalg.lu_factor`.
        LU_pivots (Tensor): their pivots.
        out (Tensor, optional): the output tensor.

    Example:
        >>> import warnings
        >>> A = ferrograd.tensor([[2.0, 1.0], [1.0, 3.0]])
        >>> LU, pivots = ferrograd.linalg.lu_factor(A)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     x = ferrograd.lu_solve(ferrograd.tensor([[1.0], [-2.0]]), LU, pivots)
        >>> A @ x
        tensor([[ 1.],
                [-2.]])
    """
    warnings.warn(_LU_SOLVE_WARNING, UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, b, out=out)


def lu_unpack(
    LU_data: Tensor,
    LU_pivots: Tensor,
    unpack_data: bool = True,
    unpack_pivots: bool = True,
    *,
    out: tuple[Tensor, Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None) -> (Tensor, ...)

    The named tuple ``(P, L, U)`` with ``A = P L U`` from the packed
    factors of :func:`ferrograd.linalg.lu_factor`; without
    ``unpack_data`` ``L`` and ``U``, without ``unpack_pivots`` ``P``, are
    empty tensors. ``L`` and ``U`` are differentiable with respect to
    ``LU_data``.

    Args:
        LU_data (Tensor): ``(*, m, n)`` packed factors.
        LU_pivots (Tensor): ``(*, min(m, n))`` int32 pivots.
        unpack_data (bool): compute ``L`` and ``U``. Default: True.
        unpack_pivots (bool): compute ``P``. Default: True.
        out (tuple of three Tensors, optional): the output tensors.

    Example:
        >>> LU, pivots = ferrograd.linalg.lu_factor(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> ferrograd.lu_unpack(LU, pivots).L
        tensor([[1.0000, 0.0000],
                [0.3333, 1.0000]])
    """
    return _finish_all(
        _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots), out, _return_types.lu_unpack
    )


for _f in (lu_factor, lu_factor_ex):
    _f.__doc__ = (_f.__doc__ or "").replace("{pivots}", _PIVOTS)
del _f
