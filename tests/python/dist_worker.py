"""One rank of the multi-process tests (tests/python/test_distributed.py
starts it with ``mpiexec -n N python dist_worker.py <scenario>``).

Every rank can compute every rank's inputs (they depend on the rank and the
dtype only), so each checks its results against NumPy on its own and exits
non-zero (through the uncaught assertion) on a mismatch."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from datetime import timedelta

import ferrograd as torch
import ferrograd.distributed as dist
import numpy as np
from mpi4py import MPI

DTYPES = {
    "bool": (torch.bool, np.bool_), "uint8": (torch.uint8, np.uint8), "int8": (torch.int8, np.int8),
    "int16": (torch.int16, np.int16), "int32": (torch.int32, np.int32), "int64": (torch.int64, np.int64),
    "float16": (torch.float16, np.float16), "bfloat16": (torch.bfloat16, np.float32),
    "float32": (torch.float32, np.float32), "float64": (torch.float64, np.float64),
    "complex64": (torch.complex64, np.complex64), "complex128": (torch.complex128, np.complex128),
}  # fmt: skip


def say(line: str) -> None:
    """One write per line, so lines of different ranks do not interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def data(rank: int, name: str, shape=(3, 5)) -> np.ndarray:
    """Rank ``rank``'s input in dtype ``name``: small values, exact in every dtype."""
    g = np.random.default_rng(1000 * rank + len(name))
    npdt = DTYPES[name][1]
    if name == "bool":
        return g.random(shape) < 0.5
    if name in ("uint8", "int8"):
        return g.integers(1, 4, shape).astype(npdt)
    v = g.integers(-3, 4, shape).astype(np.float64)
    if name.startswith("complex"):
        v = v + 1j * g.integers(-3, 4, shape)
    if name == "uint8":
        v = np.abs(v)
    return v.astype(npdt)


@contextlib.contextmanager
def timing_backend_errors(r: int):
    """Says how long the block ran before it raised DistBackendError, and
    lets the error go on half a second later: the rank's exit takes the
    whole job down, and a peer failing at the same moment gets its own
    report out first."""
    start = time.perf_counter()
    try:
        yield
    except dist.DistBackendError as e:
        say(f"rank {r} got DistBackendError after {time.perf_counter() - start:.2f} s: {e}")
        time.sleep(0.5)
        raise


def tensor(a: np.ndarray, name: str):
    return torch.tensor(a, dtype=DTYPES[name][0])


def as_np(t) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def close(got, want, name: str, what: str) -> None:
    got = as_np(got)
    if name in ("float16", "bfloat16"):
        ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-2, atol=1e-2)
    elif name.startswith(("float", "complex")):
        ok = np.allclose(got, want, rtol=1e-6, atol=1e-6)
    else:
        ok = np.array_equal(got, want.astype(got.dtype))
    assert ok, f"rank {dist.get_rank()}: {what} [{name}]: got\n{got}\nwant\n{want}"


def reduce_np(arrays: list[np.ndarray], op: dist.ReduceOp, name: str) -> np.ndarray:
    stack = np.stack(arrays)
    if name == "bool":
        return stack.any(0) if op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX) else stack.all(0)
    if op is dist.ReduceOp.SUM:
        return stack.sum(0)
    if op is dist.ReduceOp.AVG:
        return stack.sum(0) / len(arrays)
    if op is dist.ReduceOp.PRODUCT:
        return stack.prod(0)
    if op is dist.ReduceOp.MAX:
        return stack.max(0)
    return stack.min(0)


def ops_for(name: str) -> list[dist.ReduceOp]:
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT]
    if not name.startswith("complex"):
        ops += [dist.ReduceOp.MAX, dist.ReduceOp.MIN]
    if name.startswith(("float", "complex", "bfloat")):
        ops.append(dist.ReduceOp.AVG)
    return ops


def collectives() -> None:
    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    for name in DTYPES:
        inputs = [data(k, name) for k in range(n)]
        for op in ops_for(name):
            t = tensor(inputs[r], name)
            dist.all_reduce(t, op)
            close(t, reduce_np(inputs, op, name), name, f"all_reduce {op.name}")
            t = tensor(inputs[r], name)
            dist.reduce(t, dst=n - 1, op=op)
            close(t, reduce_np(inputs, op, name) if r == n - 1 else inputs[r], name, f"reduce {op.name}")
        t = tensor(inputs[r], name)
        dist.broadcast(t, src=1)
        close(t, inputs[1], name, "broadcast")
        outs = [torch.zeros(3, 5, dtype=DTYPES[name][0]) for _ in range(n)]
        dist.all_gather(outs, tensor(inputs[r], name))
        for k in range(n):
            close(outs[k], inputs[k], name, "all_gather")
        out = torch.zeros(3 * n, 5, dtype=DTYPES[name][0])
        dist.all_gather_into_tensor(out, tensor(inputs[r], name))
        close(out, np.concatenate(inputs), name, "all_gather_into_tensor")
        big = [data(k, name, (n * 2, 5)) for k in range(n)]
        out = torch.zeros(2, 5, dtype=DTYPES[name][0])
        dist.reduce_scatter_tensor(out, tensor(big[r], name))
        close(out, reduce_np(big, dist.ReduceOp.SUM, name)[2 * r:2 * r + 2], name, "reduce_scatter_tensor")
        gl = [torch.zeros(3, 5, dtype=DTYPES[name][0]) for _ in range(n)] if r == 0 else None
        dist.gather(tensor(inputs[r], name), gl, dst=0)
        if r == 0:
            for k in range(n):
                close(gl[k], inputs[k], name, "gather")
        t = torch.zeros(3, 5, dtype=DTYPES[name][0])
        dist.scatter(t, [tensor(inputs[k], name) for k in range(n)] if r == 0 else None, src=0)
        close(t, inputs[r], name, "scatter")
    # Point to point, a ring; then any-source receive.
    t = torch.full((4,), float(r))
    dist.send(t, dst=(r + 1) % n) if r % 2 == 0 else None
    got = torch.zeros(4)
    sender = dist.recv(got, src=(r - 1) % n)
    dist.send(t, dst=(r + 1) % n) if r % 2 == 1 else None
    assert sender == (r - 1) % n and got.tolist() == [float((r - 1) % n)] * 4
    if r == 0:
        seen = set()
        for _ in range(n - 1):
            buf = torch.zeros(1)
            seen.add(dist.recv(buf))
            assert buf.item() == 10.0
        assert seen == set(range(1, n))
    else:
        dist.send(torch.tensor([10.0]), dst=0)
    # Asynchronous handles: several in flight, waited in any order.
    works = [dist.all_reduce(torch.full((100_000,), float(k + r)), async_op=True) for k in range(3)]
    for w in reversed(works):
        assert w.wait() is True and w.is_completed() and w.is_success()
    t = torch.full((1000,), float(r + 1))
    w = dist.all_reduce(t, dist.ReduceOp.AVG, async_op=True)
    w.wait()
    assert t[0].item() == (n + 1) / 2
    # Subgroups: even ranks.
    evens = list(range(0, n, 2))
    g = dist.new_group(evens)
    if r in evens:
        t = torch.tensor([float(r)])
        dist.all_reduce(t, group=g)
        assert t.item() == sum(evens) and dist.get_world_size(g) == len(evens)
        assert dist.get_rank(g) == evens.index(r)
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
        assert dist.all_reduce(torch.ones(1), group=g) is None
    # Objects, through ferrograd.save / load(weights_only=True).
    objs = [{"step": 3, "w": torch.arange(3.0)}, "text"] if r == 1 else [None, None]
    dist.broadcast_object_list(objs, src=1)
    assert objs[0]["step"] == 3 and objs[0]["w"].tolist() == [0.0, 1.0, 2.0] and objs[1] == "text"
    gathered = [None] * n
    dist.all_gather_object(gathered, {"rank": r, "t": torch.full((r + 1,), r)})
    assert [o["rank"] for o in gathered] == list(range(n))
    assert [o["t"].tolist() for o in gathered] == [[k] * (k + 1) for k in range(n)]
    dist.barrier()
    dist.destroy_process_group()


def zero_copy() -> None:
    """The buffer MPI reads and writes is the tensor's own memory."""
    from ferrograd.distributed._group import _state

    dist.init_process_group("mpi")

    world = _state.world
    real = world._comm
    seen: list[int] = []

    class Spy:
        def __getattr__(self, name):
            attr = getattr(real, name)
            if not name.startswith("I"):
                return attr

            def call(*args, **kwargs):
                for a in args:
                    if isinstance(a, torch.Tensor):
                        seen.append(MPI.buffer(a).address)
                return attr(*args, **kwargs)

            return call

    world._comm = Spy()
    t = torch.ones(1 << 20)
    dist.all_reduce(t)
    assert seen == [t.data_ptr()], (seen, t.data_ptr())
    assert t[0].item() == dist.get_world_size()
    out = torch.zeros(2 * dist.get_world_size())
    x = torch.ones(2)
    seen.clear()
    dist.all_gather_into_tensor(out, x)
    assert seen == [x.data_ptr(), out.data_ptr()]
    world._comm = real
    dist.destroy_process_group()


def fail(mode: str, timeout: float) -> None:
    dist.init_process_group("mpi", timeout=timedelta(seconds=timeout))
    r = dist.get_rank()
    if r == 1:
        if mode == "raise":
            time.sleep(0.2)
            raise ValueError("rank one fails on purpose")
        time.sleep(60)  # never joins
    with timing_backend_errors(r):
        dist.all_reduce(torch.ones(8))
    say(f"rank {r} finished the all_reduce")


def leave(mode: str) -> None:
    """Rank 1 leaves early: its script ends (``exit``), it destroys the
    group and lingers (``destroy``), or its process vanishes without any
    exit handling (``vanish``, os._exit). The others then enter an
    all_reduce with it. With ``uneven``, rank 1 ends normally while the
    others still work among themselves (a subgroup without it)."""
    dist.init_process_group("mpi", timeout=timedelta(seconds=20))
    r, n = dist.get_rank(), dist.get_world_size()
    if mode == "uneven":
        t = torch.ones(2)
        dist.all_reduce(t)
        others = dist.new_group([k for k in range(n) if k != 1])
        if r == 1:
            return
        time.sleep(0.5)  # rank 1 has left by now
        t = torch.ones(2)
        dist.all_reduce(t, group=others)
        assert t.tolist() == [n - 1.0] * 2
        return
    if r == 1:
        time.sleep(0.2)
        if mode == "exit":
            sys.exit(0)
        if mode == "vanish":
            os._exit(0)
        dist.destroy_process_group()
        time.sleep(5)
        say(f"rank {r} ok {mode}")
        return
    with timing_backend_errors(r):
        dist.all_reduce(torch.ones(8))
    say(f"rank {r} finished the all_reduce")


def launch_size(expected: str) -> None:
    """The launcher's variables (``expected``: the one the test set wrong)
    disagree with the world MPI forms: init_process_group raises, and
    works again once the variable is gone."""
    try:
        dist.init_process_group("mpi")
    except RuntimeError as e:
        assert "MPI formed a world of" in str(e) and expected in str(e), str(e)
        say(f"rank raised RuntimeError: {e}")
    else:
        raise AssertionError("launcher size mismatch not detected")
    assert not dist.is_initialized()
    del os.environ[expected.split("=")[0]]
    dist.init_process_group("mpi")
    t = torch.ones(1)
    dist.all_reduce(t)
    assert t.item() == dist.get_world_size()
    dist.destroy_process_group()


class _TwoLinear(torch.nn.Module):
    """``after(b(between(a(x))))`` with ``a`` a Linear(4, 4) and ``b`` a
    Linear(4, 1): a scenario puts its failure between them or after them."""

    def __init__(self, between=None, after=None):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 1)
        self.between = between or (lambda y: y)
        self.after = after or (lambda y: y)

    def forward(self, x):
        return self.after(self.b(self.between(self.a(x))))


class _FailOnRankOne(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        if dist.get_rank() == 1:
            raise ValueError("bad gradient on rank one")
        return grad


def ddp_caught(mode: str) -> None:
    """Rank 1's backward raises after DDP started some of its gradient
    reductions; rank 1 catches the error and goes on: to a collective
    (``after``), to a collective while still handling the error
    (``handler``), or to the next training step (``step``). The others,
    waiting for the rest of the reductions, must hear of it at once."""
    from ferrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi", timeout=timedelta(seconds=20))
    r = dist.get_rank()

    def go_on() -> None:
        try:
            dist.all_reduce(torch.ones(1))
        except dist.DistBackendError as e:
            say(f"rank {r} got DistBackendError: {e}")
            raise

    torch.manual_seed(0)
    model = DDP(_TwoLinear(between=_FailOnRankOne.apply), bucket_cap_mb=1e-5)   # a bucket per parameter
    try:
        with timing_backend_errors(r):
            model(torch.ones(2, 4)).sum().backward()
    except ValueError:
        assert r == 1 and model._next >= 1  # b's reductions started before the error
        time.sleep(0.3)
        if mode == "handler":
            go_on()
    if mode == "step":
        model(torch.ones(2, 4))
    go_on()


class _FailOnceOnRankOne(torch.autograd.Function):
    failures = 1

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        if dist.get_rank() == 1 and _FailOnceOnRankOne.failures:
            _FailOnceOnRankOne.failures -= 1
            raise ValueError("bad gradient on rank one")
        return grad


def ddp_early(mode: str) -> None:
    """Rank 1's backward raises before any parameter received its gradient
    (so before DDP started any reduction): in a custom Function at the
    module's output (``step``, ``collective``), or in a hook on the
    module's output, which is the loss (``hook``). Rank 1 catches the error
    and, 0.3 s later, goes on: to the next training step (``step``,
    ``hook``) or to a collective (``collective``). Rank 0, waiting in the
    reductions of the iteration rank 1 gave up, must hear of it at once,
    and none of its reductions may complete (rank 1's next iteration would
    pair with them)."""
    from ferrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi", timeout=timedelta(seconds=20))
    r = dist.get_rank()

    def fail_in_hook(grad):
        raise ValueError("bad gradient on rank one")

    def step(first: bool):
        loss = model(torch.ones(2, 4))
        if mode == "hook" and r == 1 and first:
            loss.register_hook(fail_in_hook)
        else:
            loss = loss.sum()
        loss.backward()

    def say_error(what, e):
        say(f"rank {r} got {type(e).__name__} at {what}: {e}")

    torch.manual_seed(0)
    after = (lambda y: y.sum()) if mode == "hook" else _FailOnceOnRankOne.apply
    model = DDP(_TwoLinear(after=after), bucket_cap_mb=1e-5)   # a bucket per parameter
    try:
        with timing_backend_errors(r):
            step(True)
    except dist.DistBackendError:
        works = [b.work for b in model._buckets]
        done = sum(w.is_completed() for w in works)
        say(f"rank {r} started {len(works)} reductions and completed {done}")
        raise
    except ValueError:
        assert r == 1 and model._next == 0 and all(p.grad is None for p in model.parameters())
    if r != 1:
        raise AssertionError("rank 0's backward completed: it reduced with another iteration of rank 1")
    time.sleep(0.3)
    if mode == "collective":
        try:
            dist.all_reduce(torch.ones(1))
        except dist.DistBackendError as e:
            say_error("the next collective", e)
        else:
            raise AssertionError("the collective after the stopped backward ran")
    try:
        step(False)
    except RuntimeError as e:
        say_error("the next forward", e)
    else:
        raise AssertionError("the next iteration ran")
    assert model._next == 0   # no reduction of this iteration started either
    try:
        dist.all_reduce(torch.ones(1))
    except dist.DistBackendError as e:
        say_error("a later collective", e)
        # Rank 0 heard of the failure when this rank went on; leave it time
        # to print its report before this rank's exit ends the job.
        time.sleep(1.0)
        raise


def errors() -> None:
    dist.init_process_group("mpi")
    n = dist.get_world_size()
    for bad, exc, text in [
        (lambda: dist.all_reduce(torch.ones(4, 2).t()), RuntimeError, "contiguous"),
        (lambda: dist.all_reduce([1.0]), TypeError, "of type Tensor"),
        (lambda: dist.all_reduce(torch.ones(2, dtype=torch.int32), dist.ReduceOp.AVG), ValueError, "AVG"),
        (lambda: dist.all_reduce(torch.ones(2, dtype=torch.complex64), dist.ReduceOp.MAX), ValueError,
         "complex"),
        (lambda: dist.all_gather([torch.ones(2)], torch.ones(2)), ValueError, "tensor_list"),
        (lambda: dist.all_gather_into_tensor(torch.ones(3), torch.ones(2)), ValueError, f"{n} x 2"),
        (lambda: dist.broadcast(torch.ones(2), src=n), ValueError, "not part of"),
        (lambda: dist.init_process_group("mpi"), ValueError, "twice"),
        (lambda: dist.send(torch.ones(1), dst=0, tag=-1), ValueError, "tag"),
    ]:
        try:
            bad()
        except exc as e:
            assert text in str(e), (text, str(e))
        else:
            raise AssertionError(f"no {exc.__name__} ({text})")
    # Mismatched collectives raise on every rank before any data moves,
    # and the group stays usable.
    r = dist.get_rank()
    for bad, text in [
        (lambda: dist.all_reduce(torch.ones(4 if r == 0 else 8)), "4 elements"),
        (lambda: dist.all_reduce(torch.ones(4, dtype=torch.float32 if r == 0 else torch.float64)), "float64"),
        (lambda: dist.all_reduce(torch.ones(4), dist.ReduceOp.SUM if r == 0 else dist.ReduceOp.MAX),
         "op/root"),
        (lambda: dist.broadcast(torch.ones(3), src=r % 2), "broadcast"),
        (lambda: dist.barrier() if r == 0 else dist.all_reduce(torch.ones(1)), "barrier"),
    ]:
        try:
            bad()
        except ValueError as e:
            assert "mismatched collectives" in str(e) and text in str(e), str(e)
        else:
            raise AssertionError(f"mismatch not detected ({text})")
    t = torch.ones(3)
    dist.all_reduce(t)
    assert t.tolist() == [float(n)] * 3
    if r == 0:
        dist.send(torch.ones(2), dst=1)
    elif r == 1:
        try:
            dist.recv(torch.zeros(5), src=0)
        except ValueError as e:
            assert "received 8 bytes into a tensor of 20 bytes" in str(e), str(e)
        else:
            raise AssertionError("short message accepted")
    dist.destroy_process_group()
    try:
        dist.get_rank()
    except ValueError as e:
        assert "has not been initialized" in str(e)
    else:
        raise AssertionError("get_rank after destroy")
    try:
        dist.init_process_group("mpi", world_size=n + 1)
    except ValueError as e:
        assert f"world_size={n + 1}" in str(e)
    else:
        raise AssertionError("world_size mismatch")
    try:
        dist.init_process_group("nccl")
    except RuntimeError as e:
        assert "nccl" in str(e)
    else:
        raise AssertionError("nccl accepted")


def _mlp(dtype):
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)).to(dtype)


def _batch(n_ranks: int, rows: int, dtype, seed: int = 0):
    g = np.random.default_rng(seed)
    x = torch.tensor(g.standard_normal((rows * n_ranks, 6)), dtype=dtype)
    y = torch.tensor(g.standard_normal((rows * n_ranks, 3)), dtype=dtype)
    return x, y


def ddp() -> None:
    """DDP gradients equal the single-process gradients of the full batch;
    training follows the same loss curve; no_sync accumulates; unused
    parameters; buffers; mismatched models."""
    from ferrograd.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    rows = 4
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 1e-6)):
        for view in (False, True):
            torch.manual_seed(100 + r)          # replicas start different: DDP broadcasts rank 0's
            model, ref = _mlp(dtype), _mlp(dtype)
            wrapped = DDP(model, bucket_cap_mb=0.0005, gradient_as_bucket_view=view)
            assert len(wrapped._buckets) > 1
            ref.load_state_dict(model.state_dict())
            x, y = _batch(n, rows, dtype)
            mine = slice(rows * r, rows * (r + 1))
            ((wrapped(x[mine]) - y[mine]) ** 2).mean().backward()
            ((ref(x) - y) ** 2).mean().backward()
            for (name, p), q in zip(model.named_parameters(), ref.parameters(), strict=True):
                err = ((p.grad - q.grad).abs().max() / q.grad.abs().max()).item()
                assert err < tol, (dtype, view, name, err)
            # no_sync: two micro-batches, reduced once.
            model.zero_grad()
            ref.zero_grad()
            x2, y2 = _batch(n, rows, dtype, seed=1)
            with wrapped.no_sync():
                ((wrapped(x[mine]) - y[mine]) ** 2).mean().backward()
            ((wrapped(x2[mine]) - y2[mine]) ** 2).mean().backward()
            (((ref(x) - y) ** 2).mean() + ((ref(x2) - y2) ** 2).mean()).backward()
            for p, q in zip(model.parameters(), ref.parameters(), strict=True):
                err = ((p.grad - q.grad).abs().max() / q.grad.abs().max()).item()
                assert err < tol, ("no_sync", dtype, view, err)

    # Training: 2+ ranks on shards follow the full-batch run step for step.
    torch.manual_seed(7)
    model, ref = _mlp(torch.float64), _mlp(torch.float64)
    ref.load_state_dict(model.state_dict())
    wrapped = DDP(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    x, y = _batch(n, rows, torch.float64, seed=3)
    mine = slice(rows * r, rows * (r + 1))
    for _ in range(5):
        opt.zero_grad()
        local = ((wrapped(x[mine]) - y[mine]) ** 2).mean()
        local.backward()
        opt.step()
        opt_ref.zero_grad()
        full = ((ref(x) - y) ** 2).mean()
        full.backward()
        opt_ref.step()
        total = local.detach().clone()
        dist.all_reduce(total, dist.ReduceOp.AVG)
        assert abs(total.item() - full.item()) < 1e-12, (total.item(), full.item())
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        assert (p - q).abs().max().item() < 1e-12

    # Backward passes that reach the outputs and no parameter, and end
    # normally, are not taken for stopped ones: an evaluation with grad
    # enabled, gradients with respect to the input only (autograd.grad,
    # backward(inputs=)), a backward inside no_sync that raised on rank 1
    # (in a hook on the output, which DDP would see outside no_sync). Then
    # a gradient penalty (autograd.grad with create_graph, then backward
    # through it) on a backward run by another thread: the gradients are
    # the average of every shard's.
    model.zero_grad()
    xin = x[mine].clone().requires_grad_(True)
    wrapped(xin)
    (gx,) = torch.autograd.grad(wrapped(xin).sum(), xin)
    assert gx.shape == xin.shape and all(p.grad is None for p in model.parameters())
    # autograd.grad with respect to the parameters: DDP reduces nothing (as
    # in torch) and the next forward goes on.
    gp = torch.autograd.grad(wrapped(xin).sum(), list(model.parameters()))
    assert len(gp) == len(list(model.parameters())) and all(p.grad is None for p in model.parameters())
    wrapped(xin).sum().backward(inputs=[xin])
    def fail_on_rank_one(grad):
        if r == 1:
            raise ValueError("bad gradient on rank one")

    with wrapped.no_sync():
        out = wrapped(xin)
        out.register_hook(fail_on_rank_one)
        try:
            out.sum().backward()
        except ValueError:
            assert r == 1
    model.zero_grad()
    xin.grad = None

    def penalized(net, rows):
        xk = x[rows].clone().requires_grad_(True)
        out = net(xk)
        (g,) = torch.autograd.grad(out.sum(), xk, create_graph=True)
        return ((out - y[rows]) ** 2).mean() + (g ** 2).sum()

    errors: list[BaseException] = []

    def train_step():
        try:
            penalized(wrapped, mine).backward()
        except BaseException as e:  # noqa: BLE001  (raised again on the main thread)
            errors.append(e)

    worker = threading.Thread(target=train_step)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]
    ref.load_state_dict(model.state_dict())
    ref.zero_grad()
    for k in range(n):
        (penalized(ref, slice(rows * k, rows * (k + 1))) / n).backward()
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        assert (p.grad - q.grad).abs().max().item() < 1e-12, "gradient penalty"
    wrapped(x[mine]).sum().backward()

    # Unused parameters.
    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Linear(4, 4)
            self.head = torch.nn.Linear(4, 1)
            self.unused = torch.nn.Linear(4, 1)

        def forward(self, x):
            return self.head(self.body(x))

    torch.manual_seed(0)
    heads = DDP(TwoHeads(), find_unused_parameters=True)
    heads(torch.ones(2, 4)).sum().backward()
    assert heads.module.unused.weight.grad is not None and heads.module.unused.weight.grad.abs().sum() == 0
    assert heads.module.body.weight.grad.abs().sum() > 0
    strict = DDP(TwoHeads())
    strict(torch.ones(2, 4)).sum().backward()
    try:
        strict(torch.ones(2, 4))
    except RuntimeError as e:
        assert "Expected to have finished reduction" in str(e) and "unused.weight" in str(e)
    else:
        raise AssertionError("unused parameters were not reported")

    # Buffers follow rank 0 at each forward.
    torch.manual_seed(0)
    bn = DDP(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)))
    bn(torch.full((4, 3), float(r)) + torch.arange(12.0).reshape(4, 3))
    stats = [None] * n
    dist.all_gather_object(stats, bn.module[1].running_mean.tolist())
    bn(torch.ones(4, 3))   # broadcasts rank 0's statistics before running
    after = [None] * n
    dist.all_gather_object(after, bn.module[1].running_mean.tolist())
    assert stats[0] != stats[1] and all(a == after[0] for a in after)

    # A replica with other shapes is refused on every rank.
    try:
        DDP(torch.nn.Linear(3, 3 + (r == 1)))
    except RuntimeError as e:
        assert "DDP expects same model across all ranks" in str(e) and "rank 1" in str(e), str(e)
    else:
        raise AssertionError("mismatched replicas accepted")
    dist.destroy_process_group()


if __name__ == "__main__":
    scenario = sys.argv[1]
    if scenario == "collectives":
        collectives()
    elif scenario == "zero_copy":
        zero_copy()
    elif scenario == "fail":
        fail(sys.argv[2], float(sys.argv[3]))
    elif scenario == "errors":
        errors()
    elif scenario == "ddp":
        ddp()
    elif scenario == "leave":
        leave(sys.argv[2])
    elif scenario == "launch_size":
        launch_size(sys.argv[2])
    elif scenario == "ddp_caught":
        ddp_caught(sys.argv[2])
    elif scenario == "ddp_early":
        ddp_early(sys.argv[2])
    else:
        raise SystemExit(f"unknown scenario {scenario}")
    say(f"rank ok {scenario}")
