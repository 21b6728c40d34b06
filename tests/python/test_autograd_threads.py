"""Autograd under concurrency: many Python threads running backward at once
(separate graphs, shared leaves, a shared retained graph, failing hooks),
bitwise-identical gradients whatever the engine's threading, and
thread-local grad modes.

Values are small integers or exact binary fractions, so every expected
gradient is exactly representable and sums are compared with ``==``.
"""

from __future__ import annotations

import threading

import ferrograd as torch
import numpy as np
import pytest
from ferrograd import _core

pytestmark = pytest.mark.timeout(60)

N_THREADS = 8
N_CALLS = 200


def vals(t):
    return t.detach().tolist()


def run_threads(target, n=N_THREADS):
    """Runs ``target(i)`` on ``n`` threads started together; re-raises the
    first failure and fails on a hang."""
    barrier = threading.Barrier(n)
    errors = []

    def wrap(i):
        try:
            barrier.wait(timeout=20)
            target(i)
        except BaseException as e:  # reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=50)
        assert not t.is_alive(), "a backward thread did not finish (deadlock?)"
    if errors:
        raise errors[0]


class HookError(Exception):
    pass


def test_many_threads_many_backward_calls():
    shared = torch.zeros(4, requires_grad=True)  # every thread accumulates here
    base = torch.tensor([1.0, 2.0, 3.0, 4.0])
    s_leaf = torch.tensor([1.0, -2.0, 0.5, 4.0], requires_grad=True)
    s_loss = ((s_leaf * 3) * (s_leaf * 3)).sum()  # one retained graph: d/ds = 18 s
    shared_calls = [0] * N_THREADS
    raised = [0] * N_THREADS

    def work(i):
        k = float(i + 1)
        for j in range(N_CALLS):
            kind = j % 5
            if kind == 0:  # a graph of its own: d/dp (p * p * k).sum() = 2 k p
                p = torch.tensor([float(j), 0.5, -1.0], requires_grad=True)
                (p * p * k).sum().backward()
                assert vals(p.grad) == [2 * k * j, k, -2 * k], (i, j)
            elif kind == 1:  # a shared leaf: adds k * base to shared.grad
                (shared * base * k).sum().backward()
                shared_calls[i] += 1
            elif kind == 2:  # a hook that raises: this call fails, no grad lands
                q = torch.tensor([1.0, 2.0], requires_grad=True)
                y = q * k

                def hook(g, tag=(i, j)):
                    raise HookError(tag)

                y.register_hook(hook)
                with pytest.raises(HookError) as info:
                    (y * y).sum().backward()
                assert info.value.args[0] == (i, j)
                assert q.grad is None
                raised[i] += 1
            elif kind == 3:  # grad() on one graph shared by every thread
                (g,) = torch.autograd.grad(s_loss, s_leaf, retain_graph=True)
                assert vals(g) == [18.0, -36.0, 9.0, 72.0], (i, j)
            else:  # double backward on its own graph: d2/dx2 (k x^3) = 6 k x
                x = torch.tensor([2.0, -1.0], requires_grad=True)
                (g1,) = torch.autograd.grad((x * x * x * k).sum(), x, create_graph=True)
                (g2,) = torch.autograd.grad(g1.sum(), x)
                assert vals(g1) == [12 * k, 3 * k] and vals(g2) == [12 * k, -6 * k], (i, j)

    run_threads(work)
    assert raised == [N_CALLS // 5] * N_THREADS
    total = sum((i + 1) * shared_calls[i] for i in range(N_THREADS))  # 40 * 36
    assert vals(shared.grad) == [total * v for v in (1.0, 2.0, 3.0, 4.0)]
    assert s_leaf.grad is None  # grad() never touches .grad


def test_threads_sharing_leaves_with_hooks_and_retain_grad():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    hook_calls = []
    lock = threading.Lock()

    def on_leaf(g):
        with lock:
            hook_calls.append(threading.get_ident())

    w.register_hook(on_leaf)

    def work(i):
        for _ in range(50):
            y = w * 2
            y.retain_grad()
            (y * y).sum().backward()  # d/dy = 2y = 4w; d/dw = 8w
            assert vals(y.grad) == [4.0, 8.0]

    run_threads(work, n=4)
    assert len(hook_calls) == 200
    assert vals(w.grad) == [1600.0, 3200.0]  # 200 * 8w


def _wide_graph(x, ws, vs, use_matmul):
    """Eight independent branches whose gradients meet at ``x``."""
    total = None
    for w, v in zip(ws, vs, strict=True):
        b = (x @ w).tanh() * v if use_matmul else (x * w) * (x * v)
        total = b if total is None else total + b
    return total.sum()


@pytest.mark.parametrize("use_matmul", [False, True], ids=["mul", "matmul_tanh"])
def test_gradients_bitwise_identical_across_threading(use_matmul):
    rng = np.random.default_rng(7)
    n = 256
    shape = (n, n)
    xs = rng.standard_normal(shape).astype(np.float32)
    ws = [torch.tensor(rng.standard_normal(shape).astype(np.float32)) for _ in range(8)]
    vs = [torch.tensor(rng.standard_normal(shape).astype(np.float32)) for _ in range(8)]
    if use_matmul:
        probe = torch.tensor(xs[:2, :2], requires_grad=True)
        try:
            if (probe @ probe).tanh().grad_fn is None:
                pytest.skip("matmul/tanh do not record history yet")
        except RuntimeError:
            pytest.skip("matmul/tanh do not record history yet")

    def run():
        x = torch.tensor(xs, requires_grad=True)
        _wide_graph(x, ws, vs, use_matmul).backward()
        return x.grad.numpy().copy()

    threads_before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        waves = _core._parallel_waves()
        parallel = run()
        assert _core._parallel_waves() > waves, "the wide graph did not run on the pool"
        with torch.autograd.set_multithreading_enabled(False):
            waves = _core._parallel_waves()
            serial = run()
            assert _core._parallel_waves() == waves
        torch.set_num_threads(1)
        waves = _core._parallel_waves()
        one_thread = run()
        assert _core._parallel_waves() == waves
    finally:
        torch.set_num_threads(threads_before)

    assert parallel.tobytes() == serial.tobytes() == one_thread.tobytes()
    if not use_matmul:  # an independent oracle: d/dx sum_i (x w_i)(x v_i) = sum_i 2 x w_i v_i
        expected = sum(2 * xs.astype(np.float64) * w.numpy() * v.numpy() for w, v in zip(ws, vs, strict=True))
        np.testing.assert_allclose(parallel, expected, rtol=1e-4, atol=1e-4)


def test_hooks_of_a_parallel_graph_run_on_the_calling_thread():
    n = 256
    x = torch.ones(n, n, requires_grad=True)
    ws = [torch.full((n, n), float(i + 1)) for i in range(8)]
    seen = []
    branches = []
    for w in ws:
        b = (x * w) * w
        b.register_hook(lambda g: seen.append(threading.get_ident()))
        branches.append(b)
    total = branches[0]
    for b in branches[1:]:
        total = total + b
    waves = _core._parallel_waves()
    total.sum().backward()
    assert _core._parallel_waves() > waves  # the hook-free nodes still ran on the pool
    assert seen == [threading.get_ident()] * 8
    expected = float(sum((i + 1) ** 2 for i in range(8)))  # d/dx sum_i x w_i^2
    assert x.grad.min().item() == x.grad.max().item() == expected


def test_concurrent_wide_backward_calls_agree():
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((128, 128)).astype(np.float32)
    ws = [torch.tensor(rng.standard_normal((128, 128)).astype(np.float32)) for _ in range(4)]
    results = [None] * 4

    def work(i):
        x = torch.tensor(xs, requires_grad=True)
        for _ in range(5):
            x.grad = None
            _wide_graph(x, ws, ws, False).backward()
        results[i] = x.grad.numpy().tobytes()

    run_threads(work, n=4)
    assert len(set(results)) == 1


def test_grad_mode_is_thread_local():
    x = torch.tensor([1.0], requires_grad=True)
    inside = threading.Event()
    checked = threading.Event()
    seen = {}

    def other():
        inside.wait(timeout=10)
        seen["enabled"] = torch.is_grad_enabled()
        seen["records"] = (x * 2).requires_grad
        seen["inference"] = torch.is_inference_mode_enabled()
        with torch.no_grad():  # does not leak back into the main thread
            checked.set()
            seen["own"] = torch.is_grad_enabled()
        seen["after"] = torch.is_grad_enabled()

    t = threading.Thread(target=other)
    t.start()
    with torch.no_grad():
        inside.set()
        checked.wait(timeout=10)
        assert not torch.is_grad_enabled()
    t.join(timeout=10)
    assert seen == {"enabled": True, "records": True, "inference": False, "own": False, "after": True}

    with torch.inference_mode():
        out = {}
        t = threading.Thread(
            target=lambda: out.update(
                inf=torch.is_inference_mode_enabled(), tensor=torch.ones(1).is_inference()
            )
        )
        t.start()
        t.join(timeout=10)
        assert torch.is_inference_mode_enabled()
    assert out == {"inf": False, "tensor": False}


def test_set_grad_enabled_in_one_thread_does_not_leak():
    def disable(i):
        torch.set_grad_enabled(False)  # left off on purpose: thread-local
        assert not torch.is_grad_enabled()

    run_threads(disable, n=4)
    assert torch.is_grad_enabled()
    x = torch.tensor([1.0], requires_grad=True)
    assert (x * 2).requires_grad
