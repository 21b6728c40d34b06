"""``ferrograd.utils.checkpoint``: activation checkpointing.

A checkpointed region keeps none of the tensors its operations save for
backward; backward runs the region's forward again to get them back. This
trades compute (one extra forward per region) for memory (the region's
intermediate activations). Two variants, as in torch:

- reentrant (``use_reentrant=True``): a custom Function runs the region
  under ``no_grad`` and, in its backward, reruns it with grad on and
  calls ``autograd.backward`` on the rerun. Only a plain ``backward()``
  works through it.
- non-reentrant (``use_reentrant=False``, recommended): the region runs
  normally under :class:`~ferrograd.autograd.graph.saved_tensors_hooks`
  whose pack hook drops each saved tensor (keeping its shape, dtype and
  device) and whose unpack hook reruns the region once per backward call
  and hands out the rerun's tensors. Works with ``autograd.grad``,
  ``backward(inputs=...)``, ``retain_graph`` and double backward.

See docs/checkpoint.md for a guide.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import _core
from .._core import Tensor, get_rng_state, set_rng_state
from ..autograd import backward
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import get_gradient_edge, saved_tensors_hooks

__all__ = [
    "CheckpointError",
    "checkpoint",
    "checkpoint_sequential",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    """Raised by a non-reentrant checkpoint when its rerun differs from the
    original forward: it saves more or fewer tensors, or (with
    ``determinism_check="default"``) a tensor of another shape, dtype or
    device."""


class _StopRecomputation(Exception):
    """Raised from the rerun's pack hook once every tensor the backward
    needs is back (early stop); caught around the rerun."""


class _Overrides(threading.local):
    """Global switches set by :func:`set_checkpoint_early_stop` and
    :func:`set_checkpoint_debug_enabled` (``None``: use each call's own)."""

    early_stop: bool | None = None
    debug: bool | None = None


_overrides = _Overrides()


_Contexts = tuple[contextlib.AbstractContextManager[Any], contextlib.AbstractContextManager[Any]]


def noop_context_fn() -> _Contexts:
    """The default ``context_fn`` of :func:`checkpoint`: two contexts that
    do nothing (one for the forward, one for the rerun in backward).

    Example:
        >>> fwd, rerun = noop_context_fn()
        >>> with fwd, rerun:
        ...     pass
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def _override(name: str, value: bool | None) -> Iterator[None]:
    old = getattr(_overrides, name)
    setattr(_overrides, name, value)
    try:
        yield
    finally:
        setattr(_overrides, name, old)


def set_checkpoint_early_stop(enable: bool) -> contextlib.AbstractContextManager[None]:
    """Context manager that decides, for the non-reentrant checkpoints run
    inside it, whether a rerun in backward stops as soon as every saved
    tensor is back (``True``, the default of ``checkpoint``) or runs the
    region to its end (``False``). It overrides ``checkpoint``'s
    ``early_stop`` argument.

    Args:
        enable (bool): stop reruns early.

    Example:
        >>> from ferrograd.utils.checkpoint import checkpoint
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with set_checkpoint_early_stop(False):
        ...     y = checkpoint(ferrograd.exp, x, use_reentrant=False)
        >>> y.sum().backward()
        >>> x.grad
        tensor([2.7183, 7.3891])
    """
    return _override("early_stop", bool(enable))


def set_checkpoint_debug_enabled(enabled: bool | None) -> contextlib.AbstractContextManager[None]:
    """Context manager that overrides ``checkpoint``'s ``debug`` argument
    for the non-reentrant checkpoints run inside it (``None``: each call's
    own).

    Args:
        enabled (bool or None): report every mismatch of a rerun, not only
            the first.

    Example:
        >>> with set_checkpoint_debug_enabled(True):
        ...     pass
    """
    return _override("debug", None if enabled is None else bool(enabled))


# --- RNG state -------------------------------------------------------------


@contextlib.contextmanager
def _rng_state_as(state: Tensor | None) -> Iterator[None]:
    """Runs the body with the CPU generator set to ``state`` (when not
    ``None``) and puts the generator's own state back afterwards, so a
    rerun draws the same numbers as the forward did without moving the
    stream the rest of the program sees."""
    if state is None:
        yield
        return
    current = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(current)


def _detached(args: Sequence[Any]) -> list[Any]:
    """``args`` with each tensor replaced by a detached alias that requires
    grad as the original does (the leaves of a rerun's graph)."""
    return [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in args]


# --- reentrant variant ------------------------------------------------------

_REENTRANT_GRAD_MSG = (
    "ferrograd.utils.checkpoint with use_reentrant=True only works with .backward() called "
    "without its `inputs` argument; it cannot be used with autograd.grad() or backward(inputs=...). "
    "Use use_reentrant=False, or call .backward() without `inputs`."
)


class _ReentrantCheckpoint(Function):
    """The reentrant checkpoint: ``forward`` runs the region without a
    graph; ``backward`` reruns it with one and backpropagates through it.

    ``probe`` is a fresh leaf passed only so that ``backward`` can tell a
    plain ``backward()`` (every reachable node runs, the probe's
    accumulator too) from ``autograd.grad``/``backward(inputs=...)`` (the
    engine prunes to the wanted inputs, and the probe is never one)."""

    @staticmethod
    def forward(ctx: Any, run_function: Any, rng_state: Any, probe: Any, *args: Any) -> Any:
        ctx.run_function = run_function
        ctx.rng_state = rng_state
        ctx.probe_node = get_gradient_edge(probe).node if probe is not None else None
        ctx.slots = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        if ctx.probe_node is not None and not _core._will_engine_execute_node(ctx.probe_node):
            raise RuntimeError(_REENTRANT_GRAD_MSG)
        tensors = iter(ctx.saved_tensors)
        args = _detached([next(tensors) if a is None else a for a in ctx.slots])
        with _rng_state_as(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*args)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        pairs = [
            (o, g)
            for o, g in zip(outputs, grads, strict=False)
            if isinstance(o, Tensor) and o.requires_grad and g is not None
        ]
        if not pairs:
            raise RuntimeError(
                "ferrograd.utils.checkpoint: none of the outputs of the checkpointed function requires "
                "grad, so there is nothing to backpropagate through and the checkpoint is not needed"
            )
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None, *(a.grad if isinstance(a, Tensor) else None for a in args))


def _checkpoint_reentrant(function: Any, args: tuple[Any, ...], preserve_rng_state: bool) -> Any:
    wants_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if not wants_grad:
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)
    # The probe is a leaf only on the graph this call records, so it only
    # matters when an input requires grad (else no node is recorded).
    probe = _core.empty(0, requires_grad=True) if wants_grad else None
    rng_state = get_rng_state() if preserve_rng_state else None
    return _ReentrantCheckpoint.apply(function, rng_state, probe, *args)


# --- non-reentrant variant --------------------------------------------------


def _metadata(t: Tensor) -> tuple[Any, ...]:
    return (tuple(t.shape), t.dtype, t.device)


def _describe(meta: tuple[Any, ...]) -> str:
    shape, dtype, device = meta
    return f"shape={list(shape)}, dtype={dtype}, device={device}"


class _Dropped:
    """What the graph keeps in place of a saved tensor: its frame and its
    position among the tensors the region saved."""

    __slots__ = ("frame", "index")

    def __init__(self, frame: _Frame, index: int) -> None:
        self.frame = frame
        self.index = index


class _Frame:
    """One non-reentrant checkpoint call: what a rerun needs (the function,
    its inputs, the RNG state, the rerun context) and the metadata of each
    tensor the forward saved.

    Note [One rerun per backward call]: the first unpack in a backward call
    (identified by ``_current_graph_task_id``) reruns the region and keeps
    the rerun's tensors for that call; each unpack hands its tensor out and
    forgets it. A later call (``retain_graph=True``), or an unpack of a
    tensor already handed out, reruns again. Only the latest call's tensors
    are kept, so a backward that needs only some of them leaks nothing past
    the next one."""

    def __init__(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        rng_state: Tensor | None,
        rerun_context: contextlib.AbstractContextManager[Any],
        check: bool,
        early_stop: bool,
        debug: bool,
    ) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng_state = rng_state
        self.rerun_context = rerun_context
        self.check = check
        self.early_stop = early_stop
        self.debug = debug
        self.saved: list[tuple[Any, ...]] = []
        self.task: int | None = None
        self.rerun: dict[int, Tensor] = {}

    def pack(self, t: Tensor) -> _Dropped:
        self.saved.append(_metadata(t))
        return _Dropped(self, len(self.saved) - 1)

    def unpack(self, dropped: _Dropped) -> Tensor:
        task = _core._current_graph_task_id()
        if task != self.task or dropped.index not in self.rerun:
            self.task, self.rerun = task, self._recompute()
        return self.rerun.pop(dropped.index)

    def _recompute(self) -> dict[int, Tensor]:
        got: dict[int, Tensor] = {}
        mismatches: list[str] = []
        total = len(self.saved)

        def pack(t: Tensor) -> None:
            i = len(got)
            if i >= total:
                raise CheckpointError(
                    f"ferrograd.utils.checkpoint: the rerun of the checkpointed function saved more "
                    f"tensors for backward than the forward did ({total}); the function must run the "
                    f"same operations each time it is called"
                )
            if self.check and _metadata(t) != self.saved[i]:
                mismatches.append(
                    f"tensor {i}: forward saved {_describe(self.saved[i])}; "
                    f"rerun saved {_describe(_metadata(t))}"
                )
            got[i] = t.detach()
            if len(got) == total and self.early_stop:
                raise _StopRecomputation

        args = _detached(self.args)
        with contextlib.ExitStack() as stack:
            stack.enter_context(_rng_state_as(self.rng_state))
            stack.enter_context(enable_grad())
            stack.enter_context(self.rerun_context)
            stack.enter_context(saved_tensors_hooks(pack, lambda t: t))
            try:
                self.function(*args, **self.kwargs)
            except _StopRecomputation:
                pass
        if mismatches:
            shown = mismatches if self.debug else mismatches[:1]
            more = (
                ""
                if self.debug or len(mismatches) == 1
                else f" (and {len(mismatches) - 1} more; pass debug=True)"
            )
            raise CheckpointError(
                "ferrograd.utils.checkpoint: the rerun of the checkpointed function saved tensors whose "
                "metadata differs from the forward's:\n" + "\n".join(shown) + more
            )
        if len(got) < total:
            raise CheckpointError(
                f"ferrograd.utils.checkpoint: the rerun of the checkpointed function saved {len(got)} "
                f"tensors for backward where the forward saved {total}; the function must run the "
                f"same operations each time it is called"
            )
        return got


def _checkpoint_non_reentrant(
    function: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    context_fn: Callable[[], Any],
    check: bool,
    early_stop: bool,
    debug: bool,
    preserve_rng_state: bool,
) -> Any:
    forward_context, rerun_context = context_fn()
    rng_state = get_rng_state() if preserve_rng_state else None
    frame = _Frame(function, args, kwargs, rng_state, rerun_context, check, early_stop, debug)
    with forward_context, saved_tensors_hooks(frame.pack, lambda d: d.frame.unpack(d)):
        return function(*args, **kwargs)


# --- public entry points ----------------------------------------------------


def _resolve_reentrant(use_reentrant: bool | None, name: str) -> bool:
    """``use_reentrant``, warning (and picking the reentrant variant, as
    torch does) when the caller left it out."""
    if use_reentrant is None:
        warnings.warn(
            f"ferrograd.utils.checkpoint.{name}: pass use_reentrant explicitly. Without it the "
            "reentrant variant (use_reentrant=True) runs; use_reentrant=False is recommended "
            "(see the checkpoint guide for how the two differ).",
            stacklevel=3,
        )
        return True
    return bool(use_reentrant)


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], Any] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """Runs ``function(*args, **kwargs)`` without keeping the tensors its
    operations save for backward; backward runs it again to get them.

    The function must compute the same thing when run again (the RNG
    state is restored for the rerun, so dropout draws the same mask), and
    must not depend on global state that changes between forward and
    backward.

    Args:
        function (callable): the region to checkpoint.
        *args: its positional arguments.
        use_reentrant (bool): which variant to use; pass it explicitly
            (left out, a warning is given and ``True`` is used).
            ``False`` (recommended) works with ``autograd.grad``,
            keyword arguments, double backward and inputs that do not
            require grad; ``True`` only with a plain ``backward()``.
        context_fn (callable): non-reentrant only: returns two context
            managers, the first entered around the forward, the second
            around the rerun. Default: :func:`noop_context_fn`.
        determinism_check (str): non-reentrant only: ``"default"`` raises
            :class:`CheckpointError` when a tensor saved by the rerun has
            another shape, dtype or device than in the forward;
            ``"none"`` skips the check.
        debug (bool): non-reentrant only: report every mismatching tensor
            (not only the first) in the :class:`CheckpointError`.
        early_stop (bool): non-reentrant only: stop the rerun once every
            saved tensor is back. Overridden by
            :func:`set_checkpoint_early_stop`. Default: ``True``.
        preserve_rng_state (bool): stash the CPU generator's state before
            the forward and use it for the rerun. Default: ``True``.
        **kwargs: keyword arguments of ``function`` (non-reentrant only).

    Returns:
        what ``function`` returns.

    Example:
        >>> x = ferrograd.tensor([0.0, 1.0], requires_grad=True)
        >>> y = checkpoint(lambda t: (t.sin() * 2).exp(), x, use_reentrant=False)
        >>> y.sum().backward()
        >>> x.grad
        tensor([2.0000, 5.8151])
    """
    reentrant = _resolve_reentrant(use_reentrant, "checkpoint")
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got {determinism_check!r}"
        )
    if reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _checkpoint_reentrant(function, args, preserve_rng_state)
    if not callable(context_fn):
        raise TypeError(f"context_fn must be callable, got {type(context_fn).__name__}")
    stop = early_stop if _overrides.early_stop is None else _overrides.early_stop
    verbose = debug if _overrides.debug is None else _overrides.debug
    return _checkpoint_non_reentrant(
        function, args, kwargs, context_fn, determinism_check == "default", stop, verbose, preserve_rng_state
    )


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Runs ``functions`` (a ``Sequential`` or a list of callables) one
    after another on ``input``, split into ``segments`` consecutive
    groups; every group but the last is checkpointed (the last one's
    activations are needed at once by backward anyway).

    Args:
        functions (Sequential or list of callables): the stages, each
            taking the previous one's output.
        segments (int): how many groups to split them into (at least 1, at
            most ``len(functions)``).
        input (Tensor): the first stage's input.
        use_reentrant (bool): as in :func:`checkpoint` (left out, a warning
            is given and ``True`` is used).
        **kwargs: only ``preserve_rng_state`` (bool, default ``True``), as
            in :func:`checkpoint`.

    Returns:
        the last stage's output.

    Example:
        >>> model = ferrograd.nn.Sequential(ferrograd.nn.Tanh(), ferrograd.nn.Tanh())
        >>> x = ferrograd.tensor([0.5, -1.0], requires_grad=True)
        >>> y = checkpoint_sequential(model, 2, x, use_reentrant=False)
        >>> ferrograd.equal(y, model(x))
        True
    """
    reentrant = _resolve_reentrant(use_reentrant, "checkpoint_sequential")
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential

    stages = list(functions.children()) if isinstance(functions, Sequential) else list(functions)
    if isinstance(segments, bool) or not isinstance(segments, int):
        raise TypeError(f"checkpoint_sequential: segments must be an int, got {type(segments).__name__}")
    if not 1 <= segments <= max(len(stages), 1):
        raise ValueError(
            f"checkpoint_sequential: segments must be between 1 and the number of functions "
            f"({len(stages)}), got {segments}"
        )
    size = len(stages) // segments

    def run(group: list[Any]) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for stage in group:
                x = stage(x)
            return x

        return forward

    for start in range(0, size * (segments - 1), size):
        input = checkpoint(
            run(stages[start : start + size]), input, use_reentrant=reentrant, preserve_rng_state=preserve
        )
    return run(stages[size * (segments - 1) :])(input)
