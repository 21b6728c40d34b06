"""Nested containers of leaves ("pytrees"): flatten them to a list of
leaves and a spec, and rebuild them from new leaves.

Containers are tuples, lists, dicts (in insertion order), namedtuples and
``None`` (a container with no leaves); anything else is a leaf. The
transforms of ``ferrograd.func`` use this to accept and return nested
structures of tensors, as ``torch.func`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves"]


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


class TreeSpec:
    """The shape of a pytree: its container type, the container's context
    (dict keys, a namedtuple's class) and one spec per child."""

    __slots__ = ("type", "context", "children_specs", "num_leaves")

    def __init__(self, type: Any, context: Any, children_specs: list[TreeSpec]) -> None:
        self.type = type
        self.context = context
        self.children_specs = children_specs
        self.num_leaves = sum([c.num_leaves for c in children_specs])

    def is_leaf(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeSpec) or other.is_leaf() != self.is_leaf():
            return False
        return (self.type is other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self) -> int:
        return hash((self.type, len(self.children_specs)))

    def __repr__(self) -> str:
        name = getattr(self.type, "__name__", repr(self.type))
        return f"TreeSpec({name}, {self.context!r}, [{', '.join(map(repr, self.children_specs))}])"


class LeafSpec(TreeSpec):
    """The spec of a single leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, [])
        self.num_leaves = 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "*"


_LEAF = LeafSpec()


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """``(leaves, spec)``: the leaves in depth-first order and the spec that
    ``tree_unflatten`` rebuilds ``tree`` from."""
    leaves: list[Any] = []
    spec = _visit(tree, leaves)
    return leaves, spec


# The recursions are module-level functions, not closures: a closure that
# calls itself is a reference cycle (function -> cell -> function) holding
# the leaves, which would then live until the garbage collector runs.


def _visit(node: Any, leaves: list[Any]) -> TreeSpec:
    kind = type(node)
    if isinstance(node, (tuple, list)):
        named = kind is not tuple and kind is not list and _is_namedtuple(node)
        return TreeSpec(kind, kind if named else None, _children(node, leaves))
    if isinstance(node, dict):
        keys = list(node)
        return TreeSpec(kind, keys, _children([node[k] for k in keys], leaves))
    if node is None:
        return TreeSpec(type(None), None, [])
    leaves.append(node)
    return _LEAF


def _children(items: Any, leaves: list[Any]) -> list[TreeSpec]:
    """The specs of a container's children (leaves appended in place)."""
    specs = []
    for c in items:
        if c is None or isinstance(c, (tuple, list, dict)):
            specs.append(_visit(c, leaves))
        else:
            leaves.append(c)
            specs.append(_LEAF)
    return specs


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """The pytree of shape ``spec`` whose leaves are ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
            f"refers to a pytree that holds {spec.num_leaves} items ({spec})."
        )
    return _build(spec, iter(leaves))


def _build(s: TreeSpec, it: Any) -> Any:
    if s.is_leaf():
        return next(it)
    if s.type is type(None):
        return None
    children = [_build(c, it) for c in s.children_specs]
    if issubclass(s.type, dict):
        out = s.type()
        for k, v in zip(s.context, children, strict=True):
            out[k] = v
        return out
    return sequence_of(s.type, children)


def sequence_of(kind: type, items: list[Any]) -> Any:
    """A tuple or list of type ``kind`` holding ``items``: namedtuples are
    made field by field, struct sequences (return types) and plain
    tuples/lists from one sequence."""
    return kind._make(items) if hasattr(kind, "_make") else kind(items)


def tree_leaves(tree: Any) -> list[Any]:
    return tree_flatten(tree)[0]


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to every leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)
