"""``ferrograd.linalg``: the ``torch.linalg`` functions ferrograd provides."""

from ._core import Tensor
from ._core import _linalg_solve as solve
from .linalg_norms import matrix_norm, norm, vector_norm

__all__ = ["det", "inv", "matmul", "matrix_norm", "norm", "solve", "vector_norm"]

det = Tensor.det
inv = Tensor.inverse
matmul = Tensor.matmul

from ._routed import route_module as _route_module  # noqa: E402

_route_module(globals(), __name__, "linalg.")
del _route_module

det.__doc__ = """det(A) -> Tensor

Computes the determinant of a square matrix, or of each matrix in a batch.

Computed from an LU factorisation in float64 (0 for a singular matrix).
Differentiable: the gradient is ``det(A) * inv(A).T``, so backward
through a singular matrix raises.

Args:
    A (Tensor): a tensor of shape ``(*, n, n)``.

Example:
    >>> A = ferrograd.tensor([[3.0, 4.0], [0.0, 5.0]])
    >>> ferrograd.linalg.det(A)
    tensor(15.)
"""

inv.__doc__ = """inv(A) -> Tensor

Computes the inverse of a square matrix, or of each matrix in a batch.

Raises RuntimeError when a matrix is singular. To solve ``A X = B``,
:func:`solve` is faster and more accurate than ``inv(A) @ B``.

Args:
    A (Tensor): an invertible tensor of shape ``(*, n, n)``.

Example:
    >>> A = ferrograd.tensor([[3.0, 4.0], [0.0, 5.0]])
    >>> ferrograd.linalg.inv(A)
    tensor([[ 0.3333, -0.2667],
            [ 0.0000,  0.2000]])
"""

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

solve.__doc__ = """solve(A, B) -> Tensor

Computes the solution ``X`` of the square linear system ``A X = B``.

``A`` has shape ``(*, n, n)``; ``B`` has shape ``(*, n, k)`` or, for a
vector right-hand side, ``(*, n)`` (then ``X`` has that shape too). Batch
dims broadcast. Uses an LU factorisation in float64 and raises
RuntimeError when ``A`` is singular. Differentiable with respect to
both ``A`` and ``B``.

Args:
    A (Tensor): the coefficient matrices.
    B (Tensor): the right-hand sides.

Example:
    >>> A = ferrograd.tensor([[2.0, 1.0], [1.0, 3.0]])
    >>> ferrograd.linalg.solve(A, ferrograd.tensor([3.0, 5.0]))
    tensor([0.8000, 1.4000])
"""
