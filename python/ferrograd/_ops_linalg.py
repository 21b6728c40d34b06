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
