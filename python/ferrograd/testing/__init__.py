"""``ferrograd.testing``: the ``torch.testing`` helpers for writing tests.

:func:`assert_close` compares tensors, numbers, NumPy arrays and nested
sequences or mappings of them with dtype-aware tolerances and explains a
mismatch; :func:`make_tensor` makes random test inputs of any dtype;
:func:`assert_allclose` is the deprecated predecessor of
:func:`assert_close`.
"""

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
