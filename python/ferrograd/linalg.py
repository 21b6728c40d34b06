"""``ferrograd.linalg``: the ``torch.linalg`` functions ferrograd provides."""

from ._core import Tensor
from ._core import _linalg_solve as solve

__all__ = ["det", "inv", "matmul", "solve"]

det = Tensor.det
inv = Tensor.inverse
matmul = Tensor.matmul
