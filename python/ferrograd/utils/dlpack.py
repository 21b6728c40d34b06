"""``ferrograd.utils.dlpack``: tensors to and from DLPack capsules.

DLPack is the array-library standard for sharing memory without copies:
``ferrograd.from_dlpack(x)`` views the memory of any object with a
``__dlpack__`` method (a NumPy array, a torch or JAX CPU tensor...), and
other libraries' ``from_dlpack`` view a ferrograd tensor's memory.
"""

from __future__ import annotations

from typing import Any

from .._core import Tensor, _to_dlpack
from .._core import from_dlpack as from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule (the legacy ``dltensor`` struct) viewing ``tensor``'s
    memory; consumed once by another library's ``from_dlpack``. The
    tensor must not require grad (``detach()`` it first)."""
    return _to_dlpack(tensor)
