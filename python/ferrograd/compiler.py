"""``ferrograd.compiler``: torch.compiler's controls for :func:`ferrograd.compile`."""

from ._compile import disable as disable
from ._compile import is_compiling as is_compiling
from ._compile import reset as reset

__all__ = ["disable", "is_compiling", "reset"]
