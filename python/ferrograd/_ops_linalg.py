"""Module-level forms of the linalg operations (``ferrograd.matmul(a, b)``)."""

from ._core import Tensor, einsum
from ._linalg_compose import matrix_power
from ._linalg_lobpcg import lobpcg
from ._linalg_lowrank import pca_lowrank, svd_lowrank
from ._linalg_lu import legacy_lu as lu
from ._linalg_lu import legacy_lu_solve as lu_solve
from ._linalg_lu import lu_unpack
from ._linalg_spectral import _finish_all
from ._ops_pointwise import _finish
from .return_types import qr as _qr_tuple
from .return_types import svd as _svd_tuple

__all__ = [
    "addbmm",
    "addmm",
    "addmv",
    "addr",
    "baddbmm",
    "bmm",
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "det",
    "dot",
    "einsum",
    "ger",
    "inverse",
    "lobpcg",
    "logdet",
    "lu",
    "lu_solve",
    "lu_unpack",
    "matmul",
    "matrix_exp",
    "matrix_power",
    "mm",
    "mv",
    "orgqr",
    "outer",
    "pca_lowrank",
    "pinverse",
    "qr",
    "slogdet",
    "svd",
    "svd_lowrank",
    "trace",
    "triangular_solve",
]

addbmm = Tensor.addbmm
addmm = Tensor.addmm
addmv = Tensor.addmv
addr = Tensor.addr
baddbmm = Tensor.baddbmm
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


def _check(fname: str, **args: object) -> None:
    """torch's TypeError for an argument of ``fname`` that is not a tensor."""
    for what, x in args.items():
        if not isinstance(x, Tensor):
            raise TypeError(f"{fname}(): argument '{what}' must be Tensor, not {type(x).__name__}")


def cholesky(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """cholesky(input, upper=False, *, out=None) -> Tensor

    The Cholesky factor of a Hermitian positive-definite matrix, or of each
    matrix in a batch: ``L`` with ``A = L L^H`` (from ``A``'s lower
    triangle), or with ``upper=True`` ``U`` with ``A = U^H U`` (from its
    upper triangle). Deprecated in torch in favour of
    :func:`ferrograd.linalg.cholesky`, which this calls (with a warning).

    Args:
        input (Tensor): a ``(*, n, n)`` float or complex tensor.
        upper (bool): return the upper factor.
        out (Tensor, optional): the output tensor.

    Raises:
        ferrograd.linalg.LinAlgError: a matrix is not positive definite.

    Example:
        >>> import warnings; warnings.simplefilter("ignore")
        >>> ferrograd.cholesky(ferrograd.tensor([[4.0, 2.0], [2.0, 5.0]]))
        tensor([[2., 0.],
                [1., 2.]])
    """
    _check("cholesky", input=input)
    return _finish(input.cholesky(upper), out)


def cholesky_solve(
    input: Tensor, input2: Tensor, upper: bool = False, *, out: Tensor | None = None
) -> Tensor:
    """cholesky_solve(B, L, upper=False, *, out=None) -> Tensor

    Solves ``A X = B`` for a Hermitian positive-definite ``A`` given its
    Cholesky factor ``L`` (``A = L L^H``, or ``A = U^H U`` with
    ``upper=True``), by two triangular solves. Batch dims broadcast;
    differentiable with respect to ``B`` and ``L``.

    Args:
        input (Tensor): the right-hand sides ``B``, of shape ``(*, n, k)``.
        input2 (Tensor): the factor, of shape ``(*, n, n)``.
        upper (bool): ``input2`` is the upper factor.
        out (Tensor, optional): the output tensor.

    Example:
        >>> A = ferrograd.tensor([[4.0, 2.0], [2.0, 5.0]])
        >>> L = ferrograd.linalg.cholesky(A)
        >>> ferrograd.cholesky_solve(ferrograd.tensor([[6.0], [7.0]]), L)
        tensor([[1.],
                [1.]])
    """
    _check("cholesky_solve", input=input, input2=input2)
    return _finish(input.cholesky_solve(input2, upper), out)


def cholesky_inverse(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """cholesky_inverse(L, upper=False, *, out=None) -> Tensor

    The inverse of a Hermitian positive-definite ``A`` given its Cholesky
    factor (``A = L L^H``, or ``A = U^H U`` with ``upper=True``), by
    triangular solves against the identity. Differentiable.

    Args:
        input (Tensor): the factor, of shape ``(*, n, n)``.
        upper (bool): ``input`` is the upper factor.
        out (Tensor, optional): the output tensor.

    Example:
        >>> L = ferrograd.tensor([[2.0, 0.0], [1.0, 2.0]])
        >>> ferrograd.cholesky_inverse(L)
        tensor([[ 0.3125, -0.1250],
                [-0.1250,  0.2500]])
    """
    _check("cholesky_inverse", input=input)
    return _finish(input.cholesky_inverse(upper), out)


def triangular_solve(
    b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False,
    *, out: tuple[Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor]:
    """triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None)

    Solves ``A X = b`` (``A^T X = b`` with ``transpose``) for a triangular
    ``A`` and returns the named tuple ``(solution, cloned_coefficient)``, the
    second a copy of ``A``. The legacy form of
    :func:`ferrograd.linalg.solve_triangular` (note ``upper=True`` by
    default here); batch dims broadcast.

    Args:
        b (Tensor): the right-hand sides, of shape ``(*, n, k)``.
        A (Tensor): the triangular matrices, of shape ``(*, n, n)``.
        upper (bool): ``A`` is upper triangular.
        transpose (bool): solve ``A^T X = b``.
        unitriangular (bool): take ``A``'s diagonal as ones.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> A = ferrograd.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> ferrograd.triangular_solve(ferrograd.tensor([[4.0], [8.0]]), A).solution
        tensor([[1.],
                [2.]])
    """
    _check("triangular_solve", input=b, A=A)
    r = b.triangular_solve(A, upper, transpose, unitriangular)
    if out is None:
        return r
    _finish(r[0], out[0])
    _finish(r[1], out[1])
    return type(r)(out)


def _fused_add_doc(
    name: str, a: tuple[str, str], b: tuple[str, str], form: str, what: str, example: list[str]
) -> str:
    """The docs of ``name(input, a, b, *, beta=1, alpha=1)``: ``beta * input + alpha * form``."""
    lines = "\n".join(f"        {line}" for line in example)
    return f"""{name}(input, {a[0]}, {b[0]}, *, beta=1, alpha=1) -> Tensor

    Returns ``beta * input + alpha * {form}``; ``input`` is broadcast to
    the result's shape, and with ``beta=0`` it is ignored (NaN in it does
    not spread). The derivatives are those of the product and the sum.

    Args:
        input (Tensor): the tensor added to {what}.
        {a[0]} (Tensor): {a[1]}.
        {b[0]} (Tensor): {b[1]}.

    Keyword args:
        beta (Number): the multiplier of ``input``. Default: 1.
        alpha (Number): the multiplier of {what}. Default: 1.

    Example:
{lines}
    """


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
    "addmv": _fused_add_doc(
        "addmv",
        ("mat", "the matrix (``n x m``)"),
        ("vec", "the vector (``m``)"),
        "(mat @ vec)",
        "``mat @ vec``",
        [
            ">>> a = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])",
            ">>> ferrograd.addmv(ferrograd.ones(2), a, ferrograd.tensor([1.0, -1.0]), alpha=2)",
            "tensor([-1., -1.])",
        ],
    ),
    "addr": _fused_add_doc(
        "addr",
        ("vec1", "the first vector (``n``)"),
        ("vec2", "the second vector (``m``)"),
        "outer(vec1, vec2)",
        "the outer product",
        [
            ">>> v1, v2 = ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([3.0, 4.0])",
            ">>> ferrograd.addr(ferrograd.zeros(2, 2), v1, v2)",
            "tensor([[3., 4.],",
            "        [6., 8.]])",
        ],
    ),
    "baddbmm": _fused_add_doc(
        "baddbmm",
        ("batch1", "a batch of matrices (``b x n x m``)"),
        ("batch2", "a batch of matrices (``b x m x p``)"),
        "(batch1 @ batch2)",
        "the batched products",
        [
            ">>> b1, b2 = ferrograd.ones(1, 1, 3), ferrograd.ones(1, 3, 2)",
            ">>> ferrograd.baddbmm(ferrograd.ones(1, 1, 2), b1, b2, beta=0.5)",
            "tensor([[[3.5000, 3.5000]]])",
        ],
    ),
    "addbmm": _fused_add_doc(
        "addbmm",
        ("batch1", "a batch of matrices (``b x n x m``)"),
        ("batch2", "a batch of matrices (``b x m x p``)"),
        "sum_b(batch1[b] @ batch2[b])",
        "the summed products",
        [
            ">>> ferrograd.addbmm(ferrograd.zeros(1, 2), ferrograd.ones(3, 1, 2), ferrograd.ones(3, 2, 2))",
            "tensor([[6., 6.]])",
        ],
    ),
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


def qr(
    input: Tensor, some: bool = True, *, out: tuple[Tensor, Tensor] | None = None
) -> tuple[Tensor, Tensor]:
    """qr(input, some=True, *, out=None) -> (Tensor, Tensor)

    The QR decomposition of ``input`` as the named tuple ``(Q, R)``: the
    reduced one with ``some=True``, the complete one otherwise. The legacy
    form of :func:`ferrograd.linalg.qr` (``mode='reduced'`` or
    ``'complete'``).

    Args:
        input (Tensor): a ``(*, m, n)`` float or complex tensor.
        some (bool): the reduced decomposition.
        out (tuple of two Tensors, optional): the output tensors.

    Example:
        >>> Q, R = ferrograd.qr(ferrograd.tensor([[3.0, 1.0], [4.0, 2.0]]))
        >>> R.abs()
        tensor([[5.0000, 2.2000],
                [0.0000, 0.4000]])
    """
    _check("qr", input=input)
    return _finish_all(input.qr(some), out, _qr_tuple)


def svd(
    input: Tensor, some: bool = True, compute_uv: bool = True, *,
    out: tuple[Tensor, Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """svd(input, some=True, compute_uv=True, *, out=None) -> (Tensor, Tensor, Tensor)

    The singular value decomposition ``input = U diag(S) V^H`` as the named
    tuple ``(U, S, V)`` (``V``, where :func:`ferrograd.linalg.svd` returns
    ``Vh``): thin with ``some=True`` (the default here, unlike
    ``linalg.svd``). With ``compute_uv=False`` only ``S`` is computed and
    ``U``, ``V`` are zero-filled ``(*, m, m)`` and ``(*, n, n)`` tensors.

    Args:
        input (Tensor): a ``(*, m, n)`` float or complex tensor.
        some (bool): the thin decomposition.
        compute_uv (bool): compute ``U`` and ``V``.
        out (tuple of three Tensors, optional): the output tensors.

    Example:
        >>> ferrograd.svd(ferrograd.tensor([[3.0, 0.0], [4.0, 5.0]])).S
        tensor([6.7082, 2.2361])
    """
    _check("svd", input=input)
    return _finish_all(input.svd(some, compute_uv), out, _svd_tuple)


def logdet(input: Tensor) -> Tensor:
    """logdet(input) -> Tensor

    ``log(det(input))`` of a square matrix, or of each matrix in a batch,
    from :func:`ferrograd.linalg.slogdet`: NaN for a real matrix with a
    negative determinant, ``-inf`` for a singular one; for complex input,
    the complex logarithm. Differentiable.

    Args:
        input (Tensor): a ``(*, n, n)`` float or complex tensor.

    Example:
        >>> ferrograd.logdet(ferrograd.tensor([[2.0, 0.0], [0.0, 3.0]]))
        tensor(1.7918)
    """
    _check("logdet", input=input)
    return input.logdet()


def slogdet(input: Tensor) -> tuple[Tensor, Tensor]:
    """slogdet(input) -> (Tensor, Tensor)

    The named tuple ``(sign, logabsdet)`` of :func:`ferrograd.linalg.slogdet`.

    Args:
        input (Tensor): a ``(*, n, n)`` float or complex tensor.

    Example:
        >>> ferrograd.slogdet(ferrograd.tensor([[2.0, 0.0], [0.0, -3.0]])).sign
        tensor(-1.)
    """
    _check("slogdet", input=input)
    return input.slogdet()


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """pinverse(input, rcond=1e-15) -> Tensor

    The pseudo-inverse of :func:`ferrograd.linalg.pinv` with
    ``rtol=rcond``. Differentiable.

    Args:
        input (Tensor): a ``(*, m, n)`` float or complex tensor.
        rcond (float): singular values at or below ``rcond * σ_max`` count
            as zero.

    Example:
        >>> ferrograd.pinverse(ferrograd.tensor([[2.0, 0.0], [0.0, 0.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.0000]])
    """
    _check("pinverse", input=input)
    return input.pinverse(rcond)


def matrix_exp(input: Tensor) -> Tensor:
    """matrix_exp(input) -> Tensor

    The matrix exponential of :func:`ferrograd.linalg.matrix_exp`.
    Differentiable.

    Args:
        input (Tensor): a ``(*, n, n)`` float or complex tensor.

    Example:
        >>> ferrograd.matrix_exp(ferrograd.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    _check("matrix_exp", input=input)
    return input.matrix_exp()


def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """orgqr(input, tau) -> Tensor

    The product of Householder reflections of
    :func:`ferrograd.linalg.householder_product`. Differentiable.

    Args:
        input (Tensor): the reflectors, below the diagonal, ``(*, m, n)``.
        input2 (Tensor): their scale factors ``tau``, ``(*, k)``.

    Example:
        >>> ferrograd.orgqr(ferrograd.tensor([[0.0], [1.0]]), ferrograd.tensor([1.0]))
        tensor([[ 0.],
                [-1.]])
    """
    _check("orgqr", input=input, input2=input2)
    return input.orgqr(input2)
