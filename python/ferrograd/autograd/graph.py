"""The backward graph as Python sees it: ``Node``, ``GradientEdge``,
``get_gradient_edge`` and ``increment_version``."""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

from .. import _core

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version"]


class Node(abc.ABC):
    """A node of the backward graph (every ``grad_fn`` is one)."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name, e.g. ``MulBackward0``."""

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """``(node, input_nr)`` per forward input."""

    @property
    @abc.abstractmethod
    def metadata(self) -> dict[Any, Any]:
        """A dict for user data attached to the node."""

    @abc.abstractmethod
    def register_hook(self, fn: Any) -> Any:
        """Registers ``fn(grad_inputs, grad_outputs)`` to run after the node."""

    @abc.abstractmethod
    def register_prehook(self, fn: Any) -> Any:
        """Registers ``fn(grad_outputs)`` to run before the node."""

    @classmethod
    def __subclasshook__(cls, subclass: type) -> bool:
        if cls is Node and issubclass(subclass, _core._Node):
            return True
        return NotImplemented


Node.register(_core._Node)


class GradientEdge(NamedTuple):
    """An edge of the graph: where the gradient of one tensor flows."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """The gradient edge of ``tensor`` (usable as an input of ``grad``)."""
    node, nr = _core._gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor: Any) -> None:
    """Marks ``tensor`` (or each tensor of an iterable) as modified in place."""
    _core.increment_version(tensor)
