"""``linalg.norm``, ``linalg.vector_norm`` and ``linalg.matrix_norm``.

Argument handling only: the kernels are ``Tensor.vector_norm``-style Rust
functions in ``ferrograd._core`` (vector norms accumulate in float64; the
spectral matrix norms ``2``, ``-2`` and ``"nuc"`` use singular values from a
one-sided Jacobi iteration in float64).
"""

from __future__ import annotations

from ._core import Tensor, _matrix_norm, _vector_norm

__all__ = ["matrix_norm", "norm", "vector_norm"]


def _check_tensor(name: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.{name}(): argument must be a Tensor, not {type(x).__name__}")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (all dims when None).

    ``ord`` is any number: ``inf`` is ``max(abs(x))``, ``-inf`` is
    ``min(abs(x))``, ``0`` counts nonzeros, otherwise
    ``sum(abs(x)**ord)**(1/ord)``.
    """
    _check_tensor("vector_norm", x)
    if isinstance(ord, str) or isinstance(ord, bool):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return _vector_norm(x, ord, dim, keepdim, dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of each matrix over the two dims ``dim``.

    ``ord`` is ``"fro"``, ``"nuc"``, ``1``/``-1`` (max/min absolute column
    sum), ``inf``/``-inf`` (max/min absolute row sum) or ``2``/``-2``
    (largest/smallest singular value).
    """
    _check_tensor("matrix_norm", A)
    if isinstance(dim, int):
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    return _matrix_norm(A, ord, tuple(dim), keepdim, dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch's ``linalg.norm``: a vector norm for one dim (or a flattened
    input when both ``ord`` and ``dim`` are None), a matrix norm for two."""
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
