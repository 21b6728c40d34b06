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
    """A node of the backward graph: every tensor's ``grad_fn`` is one.

    ``isinstance(t.grad_fn, Node)`` is true for the engine's nodes and for
    custom Functions' ``ctx``. A node has ``name()``, ``next_functions``
    (the edges to the nodes of its forward inputs), ``metadata`` and
    hooks.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> isinstance(y.grad_fn, Node), y.grad_fn.name()
        (True, 'MulBackward0')
        >>> y.grad_fn.next_functions
        ((<AccumulateGrad object at 0x...>, 0), (None, 0))
    """

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
        """Registers a hook that runs after the node computed its gradients.

        Args:
            fn (callable): ``fn(grad_inputs, grad_outputs)``; may return new
                ``grad_inputs`` (a tuple) to replace them.

        Returns:
            a handle whose ``remove()`` unregisters the hook.
        """

    @abc.abstractmethod
    def register_prehook(self, fn: Any) -> Any:
        """Registers a hook that runs before the node, on the gradients of
        its outputs.

        Args:
            fn (callable): ``fn(grad_outputs)``; may return new
                ``grad_outputs`` (a tuple) to use instead.

        Returns:
            a handle whose ``remove()`` unregisters the hook.
        """

    @classmethod
    def __subclasshook__(cls, subclass: type) -> bool:
        if cls is Node and issubclass(subclass, _core._Node):
            return True
        return NotImplemented


Node.register(_core._Node)


class GradientEdge(NamedTuple):
    """An edge of the backward graph: the node a tensor's gradient flows
    into, and which of that node's inputs it is.

    Accepted wherever :func:`ferrograd.autograd.grad` takes an input, to get
    the gradient with respect to a tensor of the graph (even one that is no
    longer alive). Made by :func:`get_gradient_edge`.

    Args:
        node (Node): the node.
        output_nr (int): the index of the node's input (the tensor's
            ``output_nr``).
    """

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """Returns the :class:`GradientEdge` of ``tensor``: its ``grad_fn`` (or
    its gradient accumulator, for a leaf) and its output number.

    Args:
        tensor (Tensor): a tensor that requires grad.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> edge = get_gradient_edge(y)
        >>> ferrograd.autograd.grad((y * y).sum(), edge)
        (tensor([ 6., 12.]),)
    """
    node, nr = _core._gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor: Any) -> None:
    """Bumps the version counter of ``tensor``, as an in-place change does.

    For code that writes into a tensor's memory behind autograd's back (a
    NumPy view, DLPack, a custom kernel): the bump makes a backward that
    saved the old value raise instead of using the new one.

    Args:
        tensor (Tensor or iterable of Tensors): the modified tensor(s).

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> x._version
        0
        >>> increment_version(x)
        >>> x._version
        1
    """
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
    any of ``tensors``.

    Args:
        tensors (sequence of Tensors): the tensors to watch.
        fn (callable): the hook, ``fn(grads)`` or ``fn(grad)`` by ``mode``;
            its return value is ignored.

    Keyword args:
        mode (str): ``"all"`` or ``"any"``. Default: ``"all"``.

    Returns:
        a handle whose ``remove()`` unregisters the hook (also a context
            manager that removes it on exit).

    Example:
        >>> a = ferrograd.ones(2, requires_grad=True)
        >>> b = ferrograd.ones(2, requires_grad=True)
        >>> h = register_multi_grad_hook((a, b), lambda gs: print([g is None for g in gs]))
        >>> (a * 2).sum().backward()
        [False, True]
        >>> h.remove()
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

    Args:
        pack_hook (callable): ``pack_hook(tensor) -> object``, called when
            a tensor is saved.
        unpack_hook (callable): ``unpack_hook(object) -> Tensor``, called
            when backward reads the saved tensor.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> def pack(t):
        ...     return t.detach().numpy().copy()  # keep a NumPy copy
        >>> def unpack(a):
        ...     return ferrograd.from_numpy(a)
        >>> with saved_tensors_hooks(pack, unpack):
        ...     y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 4.])
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _core._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _core._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (torch's name)
    """Context manager under which tensors saved for backward are kept on
    the CPU and moved back to their device when backward needs them.

    ferrograd tensors always live on the CPU, so the values are kept as
    they are (with ``pin_memory=True``, as a copy); it exists so that code
    written for torch runs unchanged.

    Args:
        pin_memory (bool): keep a copy of each saved tensor.
            Default: ``False``.
        device_type (str): accepted for compatibility. Default: ``"cuda"``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with save_on_cpu():
        ...     y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Any) -> tuple[Any, Any]:
            return (t.device, t.clone() if pin_memory else t)

        def unpack(packed: tuple[Any, Any]) -> Any:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801 (torch's name)
    """Context manager in which using :class:`saved_tensors_hooks` raises
    ``RuntimeError(error_message)``; entering it while hooks are active
    raises too.

    Args:
        error_message (str): the message of the error.

    Example:
        >>> with disable_saved_tensors_hooks("no hooks here"):
        ...     with saved_tensors_hooks(lambda t: t, lambda t: t):
        ...         pass
        Traceback (most recent call last):
          ...
        RuntimeError: no hooks here
    """

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

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with allow_mutation_on_saved_tensors():
        ...     b = a.clone()
        ...     out = (b ** 2).sum()  # saves b
        ...     _ = b.sin_()          # b is copied first
        ...     out.backward()        # uses the value b had when saved
        >>> a.grad
        tensor([2., 4.])
    """
    _core._open_mutation_context()
    try:
        yield
    finally:
        _core._close_mutation_context()
