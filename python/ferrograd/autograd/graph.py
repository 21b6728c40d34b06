"""The backward graph as Python sees it: ``Node``, ``GradientEdge``,
``get_gradient_edge``, ``increment_version``, ``register_multi_grad_hook``
the saved-tensor hooks (``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``) and ``allow_mutation_on_saved_tensors``."""

from __future__ import annotations

import abc
import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from .. import _core

__all__ = [
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "allow_mutation_on_saved_tensors",
]


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


class _MultiHandle:
    """Removes every hook of a ``register_multi_grad_hook`` call."""

    def __init__(self, handles: tuple[Any, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(
    tensors: Sequence[Any], fn: Callable[..., None], *, mode: str = "all"
) -> _MultiHandle:
    """Registers ``fn`` to run once per backward call over several tensors.

    ``mode="all"``: ``fn(grads)`` runs after the gradients of all of
    ``tensors`` that take part in the backward call were computed; ``grads``
    has one entry per tensor, ``None`` for those that got no gradient.
    ``mode="any"``: ``fn(grad)`` runs with the first gradient computed for
    any of ``tensors``. Returns a handle whose ``remove()`` unregisters it.

    Example::

        >>> a = ferrograd.ones(2, requires_grad=True)
        >>> b = ferrograd.ones(2, requires_grad=True)
        >>> h = register_multi_grad_hook((a, b), lambda gs: print(len(gs)))
        >>> (a * b).sum().backward()
        2
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        fired: set[int] = set()

        def any_hook(grad: Any) -> None:
            task = _core._current_graph_task_id()
            with lock:
                if task in fired:
                    return
                fired.add(task)
            fn(grad)

        handles = tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad)
        return _MultiHandle(handles)

    nodes = [get_gradient_edge(t).node for t in tensors]
    counts: dict[int, int] = {}
    expected: dict[int, int] = {}
    buffers: dict[int, list[Any]] = {}

    def inner(idx: int) -> Callable[[Any], None]:
        def hook(grad: Any) -> None:
            task = _core._current_graph_task_id()
            with lock:
                if task not in counts:
                    counts[task] = 0
                    buffers[task] = [None] * len(tensors)
                    expected[task] = sum(map(_core._will_engine_execute_node, nodes))
                counts[task] += 1
                buffers[task][idx] = grad
                done = counts[task] == expected[task]
                if done:
                    grads = buffers.pop(task)
                    del counts[task], expected[task]
            if done:
                fn(grads)

        return hook

    handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
    return _MultiHandle(handles)


class saved_tensors_hooks:  # noqa: N801 (torch's name)
    """Context manager: every tensor an op saves for backward inside it is
    replaced by ``pack_hook(tensor)``, and turned back into a tensor by
    ``unpack_hook(packed)`` whenever backward needs it.

    The hooks are thread-local and nest (the innermost pair applies). They
    also apply to tensors saved by custom Functions and by a
    ``create_graph=True`` backward called inside the context. The pack hook
    must not modify its input in place; the unpack hook must return a
    tensor with the saved tensor's values. Saved tensors kept by hooks are
    not version-checked (the hooks decide what is kept).

    Example::

        >>> def pack(t):
        ...     return t.numpy().copy()        # keep a NumPy copy
        >>> def unpack(a):
        ...     return torch.from_numpy(a)
        >>> with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        ...     y = (x * x).sum()
        >>> y.backward()
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _core._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _core._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (torch's name)
    """Saved tensors are kept on the CPU and moved back to their device
    when backward needs them. ferrograd tensors always live on the CPU, so
    the values are kept as they are (with ``pin_memory=True``, as a copy)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Any) -> tuple[Any, Any]:
            return (t.device, t.clone() if pin_memory else t)

        def unpack(packed: tuple[Any, Any]) -> Any:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801 (torch's name)
    """Context manager in which registering saved-tensor hooks raises
    ``RuntimeError(error_message)``; entering it while hooks are active
    raises too."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        _core._disable_saved_tensors_hooks(self.error_message)

    def __exit__(self, *args: object) -> None:
        _core._pop_saved_tensors_hooks()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[None]:
    """Context manager: inside it, modifying in place a tensor that was
    saved for backward is allowed. The saved value is copied just before
    the first such write (only tensors actually saved and then modified
    are copied), and backward uses the copy. Leaving the context frees the
    copies; a backward through a graph recorded inside it must run inside
    it too, or it raises RuntimeError.

    Example::

        >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
        ...     b = a.clone()
        ...     out = (b ** 2).sum()   # saves b
        ...     b.sin_()               # b is copied first
        ...     out.backward()         # uses the value b had when saved
    """
    _core._open_mutation_context()
    try:
        yield
    finally:
        _core._close_mutation_context()
