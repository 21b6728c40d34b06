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
