"""``torch._dynamo.exc``: the error ``compile(fullgraph=True)`` raises."""

from .._compile import Unsupported as Unsupported

__all__ = ["Unsupported"]
