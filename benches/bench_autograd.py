"""Autograd benchmarks: small-op overhead, engine cost per node, parallel
backward of independent branches, and forward+backward throughput from
several Python threads.

Run: ``python benches/bench_autograd.py`` (numbers go to docs/performance/autograd.md).
"""

from __future__ import annotations

import threading
import time

import ferrograd as fg
from bench_vs_torch import CHAIN_OPS, chain_forward
from common import best_of, machine, table


def small_chain():
    """``forward()``: a 200-op chain of elementwise ops (mul, add, tanh,
    sub) on a 16-element leaf."""
    fg.manual_seed(0)
    x = fg.randn(16, requires_grad=True)
    c = fg.randn(16)

    def forward():
        return chain_forward(x, c)

    return forward


def chain_per_op() -> tuple[float, float, float]:
    """The 200-op chain: microseconds per op for forward+backward, forward
    only, and without grad."""
    forward = small_chain()

    def fwd_bwd():
        forward().sum().backward()

    def no_grad():
        with fg.no_grad():
            forward()

    return (
        best_of(fwd_bwd, 50) / CHAIN_OPS * 1e6,
        best_of(forward, 50) / CHAIN_OPS * 1e6,
        best_of(no_grad, 50) / CHAIN_OPS * 1e6,
    )


def chain_with_saved_hooks() -> tuple[float, float]:
    """The 200-op chain of ``chain_per_op`` (forward+backward, microseconds
    per op) under identity Python saved-tensor hooks, and inside
    ``allow_mutation_on_saved_tensors`` (hooks written in Rust)."""
    forward = small_chain()

    def fwd_bwd():
        forward().sum().backward()

    def python_hooks():
        with fg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            fwd_bwd()

    def mutation_context():
        with fg.autograd.graph.allow_mutation_on_saved_tensors():
            fwd_bwd()

    return (
        best_of(python_hooks, 50) / CHAIN_OPS * 1e6,
        best_of(mutation_context, 50) / CHAIN_OPS * 1e6,
    )


def engine_per_node() -> float:
    """Backward of a 10,000-node chain of additions on one-element tensors,
    in microseconds per node (the engine's bookkeeping plus one tiny add)."""
    x = fg.ones(1, requires_grad=True)
    one = fg.ones(1)
    n = 10_000
    times = []
    for _ in range(5):
        y = x
        for _ in range(n):
            y = y + one
        s = y.sum()
        t0 = time.perf_counter()
        s.backward()
        times.append(time.perf_counter() - t0)
    return min(times) / (n + 2) * 1e6


def wide_graph(n: int = 48, branches: int = 8, depth: int = 6) -> tuple[float, float]:
    """Backward of ``branches`` independent chains of ``depth`` matmul+tanh
    layers (n x n, float32), with the parallel engine and with
    set_multithreading_enabled(False). Returns milliseconds per backward."""
    fg.manual_seed(0)
    xs = [fg.randn(n, n, requires_grad=True) for _ in range(branches)]
    ws = [[fg.randn(n, n) * (1.0 / n**0.5) for _ in range(depth)] for _ in range(branches)]

    def build():
        total = None
        for x, wl in zip(xs, ws, strict=True):
            h = x
            for w in wl:
                h = (h @ w).tanh()
            s = h.sum()
            total = s if total is None else total + s
        return total

    def timed(mt: bool) -> float:
        fg.autograd.set_multithreading_enabled(mt)
        try:
            best = float("inf")
            for _ in range(30):
                loss = build()
                t0 = time.perf_counter()
                loss.backward()
                best = min(best, time.perf_counter() - t0)
            return best * 1e3
        finally:
            fg.autograd.set_multithreading_enabled(True)

    return timed(True), timed(False)


def mlp_threads(threads: int, steps: int = 300) -> float:
    """Forward+backward steps per second of a small MLP (64 -> 128 -> 10,
    batch 32), run by ``threads`` Python threads at once, each with its own
    model."""
    fg.manual_seed(0)

    def worker(barrier: threading.Barrier, out: list[float]) -> None:
        w1 = fg.randn(64, 128, requires_grad=True)
        w2 = fg.randn(128, 10, requires_grad=True)
        x = fg.randn(32, 64)
        barrier.wait()
        t0 = time.perf_counter()
        for _ in range(steps):
            loss = ((x @ w1).tanh() @ w2).pow(2).mean()
            loss.backward()
        out.append(time.perf_counter() - t0)

    barrier = threading.Barrier(threads)
    out: list[float] = []
    ts = [threading.Thread(target=worker, args=(barrier, out)) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    return threads * steps / wall


def main() -> None:
    print(f"ferrograd {fg.__version__}, {fg.get_num_threads()} pool threads; {machine()}")
    total, fwd, nograd = chain_per_op()
    hooked, mutation = chain_with_saved_hooks()
    node = engine_per_node()
    wide = {n: wide_graph(n=n) for n in (48, 128)}
    rates = {k: mlp_threads(k) for k in (1, 2, 4)}
    rows = [
        ("200-op chain, 16 elements: forward+backward per op", f"{total:.2f} us", "< 2 us", ""),
        ("  forward only (recording) per op", f"{fwd:.2f} us", "", ""),
        ("  forward without grad per op", f"{nograd:.2f} us", "", ""),
        ("  forward+backward under identity Python saved-tensor hooks", f"{hooked:.2f} us", "", ""),
        ("  forward+backward in allow_mutation_on_saved_tensors", f"{mutation:.2f} us", "", ""),
        ("engine cost per node (10k-node add chain backward)", f"{node:.2f} us", "", ""),
        *[
            row
            for n, (mt, st) in wide.items()
            for row in (
                (f"8 branches x 6 ({n}x{n} matmul + tanh): backward, parallel", f"{mt:.2f} ms", "", ""),
                ("  same, multithreading disabled", f"{st:.2f} ms", ">= 1.6x", f"{st / mt:.2f}x"),
            )
        ],
        ("MLP fwd+bwd, 1 Python thread", f"{rates[1]:.0f} steps/s", "", "1.00x"),
        ("MLP, 2 Python threads", f"{rates[2]:.0f} steps/s", ">= 1.7x", f"{rates[2] / rates[1]:.2f}x"),
        ("MLP, 4 Python threads", f"{rates[4]:.0f} steps/s", "", f"{rates[4] / rates[1]:.2f}x"),
    ]
    print(table(rows, ("Benchmark", "ferrograd", "Target", "Ratio")))


if __name__ == "__main__":
    main()
