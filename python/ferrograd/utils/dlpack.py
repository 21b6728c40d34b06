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
    """Returns a DLPack capsule (the legacy ``dltensor`` form) that views
    ``tensor``'s memory, for another library's ``from_dlpack``.

    No data is copied, and the capsule can be consumed once. Newer
    libraries accept the tensor itself (it has ``__dlpack__``); the capsule
    is for those that only take capsules. The tensor must not require grad
    (``detach()`` it first).

    Args:
        tensor (Tensor): the tensor to export.

    Returns:
        PyCapsule: the capsule.

    Example:
        >>> t = ferrograd.tensor([1.0, 2.0])
        >>> u = from_dlpack(to_dlpack(t))  # shares t's memory
        >>> u[0] = 5.0
        >>> t
        tensor([5., 2.])
    """
    return _to_dlpack(tensor)
