"""``ferrograd._dynamo``: the names torch programs reach under ``torch._dynamo``
for :func:`ferrograd.compile` (reset, disable, explain, the exceptions)."""

from .. import _compile
from .._compile import disable as disable
from .._compile import explain as explain
from .._compile import is_compiling as is_compiling
from .._compile import reset as reset
from . import exc as exc


class _Config:
    """``torch._dynamo.config``: the per-function program limit."""

    @property
    def cache_size_limit(self) -> int:
        return _compile.cache_size_limit

    @cache_size_limit.setter
    def cache_size_limit(self, n: int) -> None:
        _compile.cache_size_limit = int(n)

    recompile_limit = cache_size_limit


config = _Config()

__all__ = ["config", "disable", "exc", "explain", "is_compiling", "reset"]
