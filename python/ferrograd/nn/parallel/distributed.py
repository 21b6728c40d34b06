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
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from ... import _core
from ... import distributed as dist
from ...utils._pytree import tree_flatten
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

Tensor = _core.Tensor


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
        # enabled) is fine; one whose backward reduced only some buckets
        # is not.
        if self._pending and self._backward_seen:
            missing = [self._param_names[k] for k, p in enumerate(self._params) if id(p) not in self._fired]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. "
                "This error indicates that your module has parameters that were not used in producing "
                "loss. You can enable unused parameter detection by passing the keyword argument "
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
        if not self.require_backward_grad_sync or not _core.is_grad_enabled():
            return
        self._pending = True
        if self.find_unused_parameters:
            leaves = [t for t in tree_flatten(out)[0] if isinstance(t, Tensor) and t.requires_grad]
            reached = {id(t) for t in _core._reached_leaves(leaves)} if leaves else set()
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

    # -------------------------------------------------------------- backward

    def _hook(self, p: Tensor) -> None:
        if not self.require_backward_grad_sync or not self._pending:
            return
        bucket, i = self._where[id(p)]
        with self._lock:
            self._backward_seen = True
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
