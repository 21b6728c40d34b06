"""A service under load: T Python threads, each training its own small model
(an MLP 512 -> 512 -> 10 on batches of 64: forward, cross-entropy, backward,
SGD step), with the default thread pool and with one intra-op thread.

Prints steps per second for every thread count and both pool settings, the
ratio default / one-thread (the target is at least 0.9: the default should
be as good as the best manual setting), and torch's numbers beside them
when torch is importable (never required). Each configuration runs in a
fresh subprocess.

    python benches/bench_service.py [--threads 1 2 8] [--seconds 2] [--torch]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time


def steps_per_second(
    lib, threads: int, seconds: float, width: int = 512, batch: int = 64, compiled: bool = False
) -> float:
    """Steps/s of ``threads`` Python threads, each training its own MLP
    ``width -> width -> 10`` on batches of ``batch`` (forward, cross-entropy,
    backward, SGD step; with ``compiled``, the whole step through ``lib.compile``)."""
    nn = lib.nn
    barrier = threading.Barrier(threads + 1)
    counts = [0] * threads
    stop = threading.Event()

    def worker(i: int) -> None:
        lib.manual_seed(i)
        model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        x, y = lib.randn(batch, width), lib.randint(0, 10, (batch,))

        def step(x, y):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        if compiled:
            step = lib.compile(step)
        for _ in range(3):  # warm up
            step(x, y)
        barrier.wait()
        n = 0
        while not stop.is_set():
            step(x, y)
            n += 1
        counts[i] = n

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()
    return sum(counts) / (time.perf_counter() - start)


def child(backend: str, threads: int, pool: str, seconds: float) -> float:
    if backend == "torch":
        import torch as lib
    else:
        import ferrograd as lib
    if pool == "one":
        lib.set_num_threads(1)
    return steps_per_second(lib, threads, seconds)


def run(backend: str, threads: int, pool: str, seconds: float) -> float:
    cmd = [sys.executable, __file__, "--child", backend, str(threads), pool, str(seconds)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2, 8])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3, help="runs per configuration (the median is shown)")
    ap.add_argument("--torch", action="store_true", help="also run torch, when it is importable")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        backend, threads, pool, seconds = args.child
        print(json.dumps(child(backend, int(threads), pool, float(seconds))))
        return
    backends = ["ferrograd"]
    if args.torch:
        try:
            import torch  # noqa: F401

            backends.append("torch")
        except ImportError:
            pass
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print("| backend | Python threads | default pool (steps/s) | one intra-op thread (steps/s) "
          "| default / one |")
    print("|---|---|---|---|---|")
    for backend in backends:
        for t in args.threads:
            runs: dict[str, list[float]] = {"default": [], "one": []}
            for r in range(args.rounds):  # the two settings alternate, against drift
                for pool in ("default", "one") if r % 2 == 0 else ("one", "default"):
                    runs[pool].append(run(backend, t, pool, args.seconds))
            rates = {pool: sorted(v)[len(v) // 2] for pool, v in runs.items()}
            print(f"| {backend} | {t} | {rates['default']:,.0f} | {rates['one']:,.0f} | "
                  f"{rates['default'] / rates['one']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
