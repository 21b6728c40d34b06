"""ferrograd.compile against eager execution (and torch eager when installed).

Rows (ms per call, medians; each backend in a fresh subprocess):

- ``chain``: the 200-op elementwise chain on 16 elements (``(y*c + c).tanh() - c``
  50 times), forward + backward: ferrograd eager, ferrograd compiled, torch eager.
- ``fused``: ``((a*b + c).tanh() * a).sum()`` on 4M float32, forward + backward.
- ``rows``: 8 times ``softmax(-1).cumsum(-1)`` on a 1024x1024 float32
  matrix without grad: row kernels that do not fuse, where a replay that
  lets go of each intermediate reuses warm buffers.
- ``capture``: the first call (capture) of a 4-layer MLP 64-256-256-256-10
  forward + loss at batch 32, next to one eager call.
- ``service``: steps/s of T Python threads, each training its own
  16x64 -> 64 -> 10 MLP (zero_grad, forward, cross-entropy, backward and
  SGD step, the whole step compiled), one intra-op thread; the ratio of 2
  threads to 1 (target 1.7).

    python benches/bench_compile.py [--rounds 3] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from bench_service import steps_per_second
from common import machine, median_of


def _ms(fn, number: int, repeat: int = 9) -> float:
    return median_of(fn, number, repeat) * 1e3


def chain_forward(x, c):
    y = x
    for _ in range(50):
        y = (y * c + c).tanh() - c
    return y


def kernels(lib, compiled: bool) -> dict[str, float]:
    lib.manual_seed(0)
    leaf, c = lib.randn(16, requires_grad=True), lib.randn(16)

    def loss16(x, c):
        return chain_forward(x, c).sum()

    a, b, c4 = (lib.randn(4_000_000, requires_grad=True) for _ in range(3))

    def loss4m(a, b, c):
        return ((a * b + c).tanh() * a).sum()

    m = lib.randn(1024, 1024)

    def rowchain(x):
        for _ in range(8):
            x = x.softmax(-1).cumsum(-1)
        return x

    if compiled:
        loss16 = lib.compile(loss16)
        loss4m = lib.compile(loss4m)
        rowchain = lib.compile(rowchain)

    def chain():
        leaf.grad = None
        loss16(leaf, c).backward()

    def fused():
        for t in (a, b, c4):
            t.grad = None
        loss4m(a, b, c4).backward()

    def rows():
        with lib.no_grad():
            rowchain(m)

    return {"chain": _ms(chain, 50), "fused": _ms(fused, 2, 9), "rows": _ms(rows, 2, 9)}


def capture(lib) -> dict[str, float]:
    nn = lib.nn
    lib.manual_seed(0)
    sizes = [64, 256, 256, 256, 10]
    layers = []
    for i in range(4):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), nn.Tanh()]
    model = nn.Sequential(*layers[:-1])
    x, y = lib.randn(32, 64), lib.randint(0, 10, (32,))

    def step(x, y):
        return nn.functional.cross_entropy(model(x), y)

    eager = _ms(lambda: step(x, y), 20)
    times = []
    for _ in range(5):
        lib.compiler.reset()
        f = lib.compile(step)
        t = time.perf_counter()
        f(x, y)
        times.append((time.perf_counter() - t) * 1e3)
    return {"capture": statistics.median(times), "eager call": eager}


def service(lib, threads: int, seconds: float, compiled: bool) -> float:
    lib.set_num_threads(1)
    return steps_per_second(lib, threads, seconds, width=64, batch=16, compiled=compiled)


def child(backend: str, seconds: float) -> None:
    if backend == "torch":
        import torch as lib  # type: ignore[import-not-found]
    else:
        import ferrograd as lib
    lib.set_num_threads(2)
    out: dict[str, float] = {}
    if backend == "torch":
        out.update({f"torch {k}": v for k, v in kernels(lib, False).items()})
    else:
        out.update({f"eager {k}": v for k, v in kernels(lib, False).items()})
        out.update({f"compiled {k}": v for k, v in kernels(lib, True).items()})
        out.update(capture(lib))
        for t in (1, 2):
            out[f"service compiled {t} threads"] = service(lib, t, seconds, True)
            out[f"service eager {t} threads"] = service(lib, t, seconds, False)
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.seconds)
        return
    import importlib.util

    backends = ["ferrograd"] + (["torch"] if importlib.util.find_spec("torch") else [])
    runs: dict[str, list[float]] = {}
    for r in range(args.rounds):
        for b in backends if r % 2 == 0 else backends[::-1]:
            cmd = [sys.executable, __file__, "--child", b, "--seconds", str(args.seconds)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            res = json.loads(out.splitlines()[-1])
            for k, v in res.items():
                runs.setdefault(k, []).append(v)
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"machine: {machine()}; {args.rounds} rounds, medians; 2 intra-op threads (service: 1)")
    print("\n| row | value |\n|---|---|")
    for k, v in med.items():
        unit = "steps/s" if k.startswith("service") else "ms"
        print(f"| {k} | {v:.3f} {unit} |")
    print("\n| target | measured | goal |\n|---|---|---|")
    if "torch chain" in med:
        print(f"| compiled chain / torch eager | {med['compiled chain'] / med['torch chain']:.3f} | <= 0.1 |")
    print(f"| compiled fused / ferrograd eager | {med['compiled fused'] / med['eager fused']:.3f} | <= 0.5 |")
    print(f"| compiled rows / ferrograd eager | {med['compiled rows'] / med['eager rows']:.3f} | - |")
    s1, s2 = med["service compiled 1 threads"], med["service compiled 2 threads"]
    print(f"| service 2 threads / 1 thread (compiled) | {s2 / s1:.2f} | >= 1.7 |")
    print(f"| capture of a 4-layer MLP | {med['capture']:.2f} ms | <= 20 ms |")


if __name__ == "__main__":
    main()
