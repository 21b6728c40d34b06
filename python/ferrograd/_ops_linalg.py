"""Module-level forms of the linalg operations (``ferrograd.matmul(a, b)``)."""

from ._core import Tensor, einsum

__all__ = [
    "addmm",
    "bmm",
    "det",
    "dot",
    "einsum",
    "ger",
    "inverse",
    "matmul",
    "mm",
    "mv",
    "outer",
    "trace",
]

addmm = Tensor.addmm
bmm = Tensor.bmm
det = Tensor.det
dot = Tensor.dot
ger = Tensor.ger
inverse = Tensor.inverse
matmul = Tensor.matmul
mm = Tensor.mm
mv = Tensor.mv
outer = Tensor.outer
trace = Tensor.trace

# Module-level docs of the functions above that are Tensor methods (applied
# when ``ferrograd`` routes them; the methods keep their own docs).
DOCS: dict[str, str] = {
    "matmul": """matmul(input, other) -> Tensor

    Matrix product of two tensors, with the behaviour chosen by their
    dimensions (the ``@`` operator):

    * 1-D and 1-D: the dot product, a 0-dim tensor.
    * 2-D and 2-D: the matrix product.
    * 1-D first: a 1 is prepended to its shape for the product, then
      removed; 1-D second: a 1 is appended, then removed.
    * more dimensions: a batched matrix product over the last two
      dimensions, the leading (batch) dimensions broadcast together
      (``(j, 1, n, m) @ (k, m, p)`` gives ``(j, k, n, p)``).

    Both operands must have the same dtype. Differentiable with respect to
    both.

    Args:
        input (Tensor): the first operand.
        other (Tensor): the second operand.

    Example:
        >>> a = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> ferrograd.matmul(a, ferrograd.tensor([[0.0, 1.0], [1.0, 0.0]]))
        tensor([[2., 1.],
                [4., 3.]])
        >>> ferrograd.matmul(a, ferrograd.tensor([1.0, 1.0]))
        tensor([3., 7.])
        >>> ferrograd.matmul(ferrograd.ones(5, 1, 2, 3), ferrograd.ones(4, 3, 2)).shape
        ferrograd.Size([5, 4, 2, 2])
    """,
    "mm": """mm(input, mat2) -> Tensor

    Matrix product of the 2-D tensors ``input`` (``n x m``) and ``mat2``
    (``m x p``), giving ``n x p``. Does not broadcast: see
    :func:`ferrograd.matmul` for that.

    Args:
        input (Tensor): the first matrix.
        mat2 (Tensor): the second matrix.

    Example:
        >>> a = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> ferrograd.mm(a, ferrograd.tensor([[0.0, 1.0], [1.0, 0.0]]))
        tensor([[2., 1.],
                [4., 3.]])
    """,
    "bmm": """bmm(input, mat2) -> Tensor

    Batched matrix product of the 3-D tensors ``input`` (``b x n x m``) and
    ``mat2`` (``b x m x p``), giving ``b x n x p``: one matrix product per
    batch entry. The batch sizes must match (no broadcasting).

    Args:
        input (Tensor): the first batch of matrices.
        mat2 (Tensor): the second batch of matrices.

    Example:
        >>> ferrograd.bmm(ferrograd.ones(2, 1, 3), ferrograd.ones(2, 3, 2)).shape
        ferrograd.Size([2, 1, 2])
    """,
    "addmm": """addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor

    Returns ``beta * input + alpha * (mat1 @ mat2)``: a matrix product added
    to ``input``, which is broadcast to the product's shape (a bias vector
    works). With ``beta=0``, ``input`` is ignored (NaN in it does not
    spread).

    Args:
        input (Tensor): the tensor added to the product.
        mat1 (Tensor): the first matrix (``n x m``).
        mat2 (Tensor): the second matrix (``m x p``).

    Keyword args:
        beta (Number): the multiplier of ``input``. Default: 1.
        alpha (Number): the multiplier of the product. Default: 1.

    Example:
        >>> a = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> ferrograd.addmm(ferrograd.tensor([10.0, 20.0]), a, ferrograd.eye(2))
        tensor([[11., 22.],
                [13., 24.]])
        >>> ferrograd.addmm(ferrograd.ones(2), a, ferrograd.eye(2), beta=0.5, alpha=2)
        tensor([[2.5000, 4.5000],
                [6.5000, 8.5000]])
    """,
    "mv": """mv(input, vec) -> Tensor

    Product of the matrix ``input`` (``n x m``) and the vector ``vec``
    (length ``m``), giving a vector of length ``n``.

    Args:
        input (Tensor): the matrix.
        vec (Tensor): the vector.

    Example:
        >>> ferrograd.mv(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]), ferrograd.tensor([1.0, 1.0]))
        tensor([3., 7.])
    """,
    "dot": """dot(input, tensor) -> Tensor

    Dot product of two 1-D tensors of the same length and dtype:
    ``sum(input * tensor)``, a 0-dim tensor. Unlike NumPy's ``dot`` it
    takes only vectors (see :func:`ferrograd.matmul`), and complex inputs
    are not conjugated.

    Args:
        input (Tensor): the first vector.
        tensor (Tensor): the second vector.

    Example:
        >>> ferrograd.dot(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([3.0, 4.0]))
        tensor(11.)
    """,
    "outer": """outer(input, vec2) -> Tensor

    Outer product of two 1-D tensors: the matrix ``out[i][j] = input[i] *
    vec2[j]``, of shape ``(len(input), len(vec2))``.

    Args:
        input (Tensor): the first vector.
        vec2 (Tensor): the second vector.

    Example:
        >>> ferrograd.outer(ferrograd.tensor([1, 2]), ferrograd.tensor([1, 2, 3]))
        tensor([[1, 2, 3],
                [2, 4, 6]])
    """,
    "ger": """ger(input, vec2) -> Tensor

    Alias for :func:`ferrograd.outer` (torch's older name).
    """,
    "trace": """trace(input) -> Tensor

    Returns the sum of the main diagonal of the 2-D tensor ``input`` (which
    need not be square), as a 0-dim tensor; integer inputs sum as ``int64``.

    Args:
        input (Tensor): a matrix.

    Example:
        >>> ferrograd.trace(ferrograd.arange(6).reshape(2, 3))
        tensor(4)
    """,
    "det": """det(input) -> Tensor

    Returns the determinant of a square matrix, or of each matrix in a
    batch (the last two dimensions), computed by LU factorisation with
    partial pivoting. The same as :func:`ferrograd.linalg.det`.

    Args:
        input (Tensor): a ``(*, n, n)`` floating-point or complex tensor.

    Example:
        >>> ferrograd.det(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(-2.)
    """,
    "inverse": """inverse(input) -> Tensor

    Returns the inverse of a square matrix, or of each matrix in a batch
    (the last two dimensions). Raises an error if a matrix is singular. The
    same as :func:`ferrograd.linalg.inv`; to solve ``A x = b`` prefer
    :func:`ferrograd.linalg.solve`, which is faster and more accurate.

    Args:
        input (Tensor): a ``(*, n, n)`` floating-point or complex tensor.

    Example:
        >>> ferrograd.inverse(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor([[-2.0000,  1.0000],
                [ 1.5000, -0.5000]])
    """,
}
