"""Compares two installed builds of ferrograd on the same workloads: run it
with each environment's Python (for example the manylinux2014 wheel built by
scripts/build_wheels.sh, linked by zig, against a `maturin develop` build)
and compare the lines. Each figure is the best of 15 runs.

    python benches/bench_wheel.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import ferrograd as torch


def best(fn: Callable[[], object], runs: int = 15) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    x, y = torch.ones(8), torch.ones(8)

    def small_ops() -> None:
        for _ in range(20_000):
            x + y

    a = torch.randn(512, 512, requires_grad=True)
    b = torch.randn(512, 512, requires_grad=True)

    def matmul_backward() -> None:
        (a @ b).tanh().sum().backward()

    z = torch.randn(4_000_000)
    print(
        f"{torch.__file__}\n"
        f"small add {best(small_ops) / 20_000 * 1e9:.0f} ns | "
        f"512x512 matmul+tanh fwd+bwd {best(matmul_backward) * 1e3:.2f} ms | "
        f"exp of 4M float32 {best(lambda: z.exp()) * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
