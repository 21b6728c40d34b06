"""``DistributedDataParallel``: data-parallel training over
``ferrograd.distributed``.

Each process holds a replica of the module and runs forward and backward
on its own shard of the batch; gradients are averaged across processes
during backward, so after ``loss.backward()`` every replica holds the
gradient of the mean loss over the whole batch and the optimizer steps
stay in lockstep.

The parameters are split into buckets (reverse registration order, which
is roughly the order backward produces their gradients, at most
``bucket_cap_mb`` each). A post-accumulate-grad hook on every parameter
copies its gradient into its bucket's flat buffer; when the bucket is full
its all-reduce starts asynchronously, so communication overlaps the rest
of backward. Buckets start in index order on every rank (MPI needs the
same order of collectives everywhere, and backward's order can differ
between ranks). The hook that completes the last bucket waits for the
reductions and writes the averaged gradients back, so they are ready when
``backward()`` returns.

A hook on each forward's outputs tells DDP that their backward began, so
that a backward which raised before any parameter got its gradient (and
whose exception was caught) is not mistaken for a forward without a
backward: see Note [A backward that stopped before reaching DDP].
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from ... import _core
from ... import distributed as dist
from ...autograd.graph import get_gradient_edge
from ...distributed import _group
from ...utils._pytree import tree_flatten
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

Tensor = _core.Tensor

_NOT_FINISHED = "Expected to have finished reduction in the prior iteration before starting a new one. "


class _Bucket:
    """Parameters whose gradients are reduced together in one flat buffer."""

    __slots__ = ("index", "params", "offsets", "buffer", "expected", "ready", "work")

    def __init__(self, index: int, params: list[Any]) -> None:
        self.index = index
        self.params = params
        self.offsets: list[int] = []
        total = 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = _core.zeros(total, dtype=params[0].dtype)
        self.expected = len(params)
        self.ready = 0
        self.work: Any = None

    def view(self, i: int) -> Tensor:
        """Parameter ``i``'s slot, shaped like the parameter."""
        p = self.params[i]
        return self.buffer[self.offsets[i]:self.offsets[i] + p.numel()].view(tuple(p.shape))


class DistributedDataParallel(Module):
    """Wraps ``module`` for data-parallel training across the processes of
    ``process_group`` (the default group when None).

    Args:
        module: the module to replicate (the same architecture on every
            rank; shapes are checked at construction).
        broadcast_buffers: copy rank 0's buffers (e.g. BatchNorm running
            statistics) to every rank at the start of each forward.
        process_group: the group to reduce over.
        bucket_cap_mb: the largest bucket, in MiB (default 25).
        find_unused_parameters: after each forward, find the parameters the
            outputs do not depend on and count them as ready (their
            gradients contribute zeros), so a forward that skips some of
            the module does not leave reductions waiting.
        gradient_as_bucket_view: make each ``param.grad`` a view into its
            bucket's buffer, saving a copy per gradient and its memory.
        device_ids, output_device, dim, check_reduction, static_graph:
            accepted for compatibility (CPU only; no effect).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, **kwargs: Any) -> None:
        super().__init__()
        if not dist.is_initialized():
            raise ValueError(
                "Default process group has not been initialized, please make sure to call "
                "init_process_group."
            )
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self._world = dist.get_world_size(process_group)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that "
                "requires a gradient."
            )
        self._param_names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._check_same_model()
        if init_sync:
            for p in self._params:
                dist.broadcast(p.detach(), src=self._root(), group=process_group)
            for b in module.buffers():
                dist.broadcast(b.detach(), src=self._root(), group=process_group)
        self._buckets = self._make_buckets()
        self._where: dict[int, tuple[_Bucket, int]] = {}
        for bucket in self._buckets:
            for i, p in enumerate(bucket.params):
                self._where[id(p)] = (bucket, i)
                if gradient_as_bucket_view:
                    view = bucket.view(i)
                    if p.grad is not None:
                        view.copy_(p.grad)
                    p.grad = view
        self._lock = threading.Lock()
        self._next = 0             # the next bucket to start reducing
        self._pending = False      # this iteration's backward has not been reduced yet
        self._backward_seen = False  # a gradient hook ran since the last forward
        self._began = False        # this forward's backward reached its outputs (and will reach a parameter)
        self._generation = 0       # forwards prepared so far (their output hooks carry it)
        self._checked_task = -1    # the backward whose reach the output hooks last checked
        self._fired: set[int] = set()
        self._handles = [p.register_post_accumulate_grad_hook(self._hook) for p in self._params]

    # ------------------------------------------------------------------ setup

    def _root(self) -> int:
        return dist.get_global_rank(self.process_group, 0) if self.process_group is not None else 0

    def _check_same_model(self) -> None:
        mine = [(n, tuple(p.shape), str(p.dtype))
                for n, p in zip(self._param_names, self._params, strict=True)]
        everyone: list[Any] = [None] * self._world
        dist.all_gather_object(everyone, mine, group=self.process_group)
        reference = everyone[0]
        for rank, theirs in enumerate(everyone):
            if len(theirs) != len(reference):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {rank} has {len(theirs)} params, "
                    f"while rank 0 has inconsistent {len(reference)} params."
                )
            for (n0, s0, d0), (n1, s1, d1) in zip(reference, theirs, strict=True):
                if (s0, d0) != (s1, d1):
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but parameter {n1!r} has shape "
                        f"{list(s1)} ({d1}) on rank {rank} and {n0!r} has shape {list(s0)} ({d0}) on rank 0."
                    )

    def _make_buckets(self) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        current: list[Any] = []
        size = 0
        for p in reversed(self._params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > self.bucket_bytes_cap or p.dtype != current[0].dtype):
                buckets.append(_Bucket(len(buckets), current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(len(buckets), current))
        return buckets

    # --------------------------------------------------------------- forward

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Runs the wrapped module; backward averages its gradients across processes."""
        # A forward whose backward never ran (an evaluation with grad
        # enabled) is fine; one whose backward reduced only some buckets,
        # or stopped before reaching any parameter, is not.
        if self._pending and self._began and not self._backward_seen:
            _group.report_stopped_backward(id(self))
            raise RuntimeError(
                _NOT_FINISHED + "The backward pass of the prior iteration raised an exception after it "
                "reached this module's outputs and before any parameter received its gradient, and the "
                "exception was caught: this rank reduced none of that iteration's gradients, while the other "
                "ranks wait in those reductions. They were told that this rank failed, and the process group "
                "is unusable."
            )
        if self._pending and self._backward_seen:
            missing = [self._param_names[k] for k, p in enumerate(self._params) if id(p) not in self._fired]
            raise RuntimeError(
                _NOT_FINISHED + "This error indicates that your module has parameters that were not used in "
                "producing loss. You can enable unused parameter detection by passing the keyword argument "
                "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
                "making sure all `forward` function outputs participate in calculating loss. "
                f"Parameters that did not receive a gradient: {missing}"
            )
        if self.broadcast_buffers and self.require_backward_grad_sync:
            for b in self.module.buffers():
                dist.broadcast(b.detach(), src=self._root(), group=self.process_group)
        out = self.module(*inputs, **kwargs)
        self._prepare(out)
        return out

    def _prepare(self, out: Any) -> None:
        """Resets the buckets for the backward of this forward's outputs."""
        for bucket in self._buckets:
            bucket.ready = 0
            bucket.work = None
            bucket.expected = len(bucket.params)
        self._next = 0
        self._fired = set()
        self._backward_seen = False
        self._pending = False
        with self._lock:
            # Hooks of earlier forwards' outputs no longer count.
            self._generation += 1
            self._began = False
            self._checked_task = -1
            _group.backward_reached(id(self))
        if not self.require_backward_grad_sync or not _core.is_grad_enabled():
            return
        self._pending = True
        outputs = [t for t in tree_flatten(out)[0] if isinstance(t, Tensor) and t.requires_grad]
        if self.find_unused_parameters:
            reached = {id(t) for t in _core._reached_leaves(outputs)} if outputs else set()
            for p in self._params:
                if id(p) not in reached:
                    # Ready now, with a zero contribution.
                    bucket, i = self._where[id(p)]
                    bucket.view(i).zero_()
                    self._fired.add(id(p))
                    bucket.ready += 1
            with self._lock:
                self._start_ready_buckets()
            if self._next == len(self._buckets):
                self._finish()     # nothing is left for backward to reduce
        if self._pending:
            self._watch_backward(outputs)

    # Note [A backward that stopped before reaching DDP]
    # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    # A backward that raises before any parameter got its gradient (in a
    # custom Function's backward, or a hook, between the outputs and the
    # first parameter) leaves no trace in the gradient hooks: without one,
    # the next forward would look like the forward after an evaluation,
    # and the next backward's reductions would pair with the other ranks'
    # reductions of the iteration this rank gave up (mixing the gradients
    # of two iterations). So each forward hooks the gradients of its
    # outputs. A tensor hook rather than a hook on their grad_fn: tensor
    # hooks run before the node's pre-hooks (as in torch), this one before
    # any a user adds to the outputs later, and only where a gradient
    # arrives.
    #
    # When the hook runs and the backward will run a parameter's gradient
    # accumulator (not so for autograd.grad, whose inputs' gradients are
    # captured, or backward(inputs=) without parameters), DDP marks the iteration as begun, here and in
    # ``_group`` (by thread); the first gradient hook clears the mark. A
    # mark still set at the next forward, or at an operation on that
    # thread outside backward, means the backward stopped: the rank tells
    # the others (their waits raise) and raises itself. The engine is asked
    # about one parameter, the first expected to get its gradient: each
    # question walks the graph, and asking about every parameter would walk
    # it once per parameter in each backward that reaches none (as the
    # attack steps of adversarial training do). A mark set wrongly raises
    # at the next forward; a mark missed only misses a failure.
    #
    # What this cannot tell: a backward that raised before it reached the
    # outputs (in the loss, computed outside the module) looks like no
    # backward at all, and so does one that does not reach that first
    # parameter (unused in this forward without find_unused_parameters,
    # or left out of backward(inputs=)); one that reached the outputs and
    # delivered no gradient to any parameter without raising (a custom
    # Function returning None for every path to them) looks like one that
    # stopped.
    #
    # The hooks run on the thread that called backward, while a forward may
    # run on another: the generation (bumped under ``_lock`` by each
    # forward) keeps a late hook of an older forward's graph from marking
    # the new iteration. No handles are kept: a handle holds its tensor, so
    # keeping it until the next forward would keep the graph of an
    # evaluation (its saved activations) alive as long; a hook of an older
    # generation does nothing, and goes with its graph. Leaves among the
    # outputs are skipped: their gradient goes to DDP's hooks directly (a
    # parameter), or outside the module, and a hook on a leaf would stay
    # for its lifetime.

    def _watch_backward(self, outputs: list[Tensor]) -> None:
        """Hooks the gradients of this forward's outputs (Note [A backward
        that stopped before reaching DDP])."""
        me = weakref.ref(self)
        generation = self._generation

        def began(grad: Tensor) -> None:
            ddp = me()
            if ddp is not None:
                ddp._backward_began(generation)

        for t in outputs:
            if t.grad_fn is not None:
                t.register_hook(began)

    def _backward_began(self, generation: int) -> None:
        task = _core._current_graph_task_id()
        with self._lock:
            if (generation != self._generation or self._began or self._backward_seen or not self._pending
                    or not self.require_backward_grad_sync or task == self._checked_task):
                return
            self._checked_task = task     # once per backward, not per output
            first = next((p for b in self._buckets for p in b.params
                          if p.requires_grad and id(p) not in self._fired), None)
            # Run, not captured: autograd.grad with respect to the
            # parameters accumulates nothing and DDP reduces nothing then.
            if first is not None and _core._will_engine_run_node(get_gradient_edge(first).node):
                self._began = True
                _group.backward_began(id(self))

    # -------------------------------------------------------------- backward

    def _hook(self, p: Tensor) -> None:
        if not self.require_backward_grad_sync or not self._pending:
            return
        bucket, i = self._where[id(p)]
        with self._lock:
            if not self._backward_seen:
                self._backward_seen = True
                _group.backward_reached(id(self))
            if id(p) in self._fired:
                name = self._param_names[self._index(p)]
                raise RuntimeError(
                    f"Expected to mark a variable ready only once. Parameter {name!r} "
                    "received a gradient twice in one iteration (a second backward through the same "
                    "forward, or a parameter used by two DDP instances)."
                )
            self._fired.add(id(p))
            slot = bucket.view(i)
            if p.grad is None:
                slot.zero_()
            elif p.grad.data_ptr() != slot.data_ptr():
                slot.copy_(p.grad)
                if self.gradient_as_bucket_view:
                    p.grad = slot
            bucket.ready += 1
            self._start_ready_buckets()
            last = self._next == len(self._buckets)
            if not last:
                # Without a progress thread, each hook moves the started
                # reductions on (MPI progresses inside its calls).
                for b in self._buckets[:self._next]:
                    b.work.is_completed()
        if last:
            self._finish()

    def _index(self, p: Tensor) -> int:
        return next(k for k, q in enumerate(self._params) if q is p)

    def _start_ready_buckets(self) -> None:
        """Starts the all-reduces of the ready buckets, in index order."""
        while self._next < len(self._buckets):
            bucket = self._buckets[self._next]
            if bucket.ready < bucket.expected:
                break
            # The buckets' sizes and order agree on every rank (the model
            # was compared at construction): no per-call agreement check.
            bucket.work = dist._all_reduce(bucket.buffer, dist.ReduceOp.SUM, self.process_group, True, False)
            self._next += 1

    def _finish(self) -> None:
        """Waits for every bucket's reduction and hands out the averages."""
        for bucket in self._buckets:
            bucket.work.wait()
            bucket.buffer.div_(self._world)
            for i, p in enumerate(bucket.params):
                slot = bucket.view(i)
                if p.grad is None or p.grad.data_ptr() != slot.data_ptr():
                    if self.gradient_as_bucket_view:
                        p.grad = slot
                    elif p.grad is None:
                        p.grad = slot.clone()
                    else:
                        p.grad.copy_(slot)
        self._pending = False

    # ------------------------------------------------------------------ misc

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside this block accumulate gradients locally
        without reducing them; the first backward after it reduces the
        accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def __del__(self) -> None:
        for h in getattr(self, "_handles", ()):
            with contextlib.suppress(Exception):
                h.remove()
        with contextlib.suppress(Exception):
            _group.backward_reached(id(self))
