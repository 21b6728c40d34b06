"""The fused backward kernels on 4M float32 elements: the time of
`autograd.grad` of one op's output (a ones gradient) for the ops whose
backward runs a fused formula. Best of 15, in ms.

    python benches/bench_fused_backward.py

Times go to docs/performance/build.md.
"""

from __future__ import annotations

import ferrograd as fg
from common import best_of, machine

N = 1 << 22


def main() -> None:
    x = fg.randn(N, requires_grad=True)
    z = fg.randn(N, requires_grad=True)
    g = fg.ones(N)
    ops = {
        "tanh": lambda: x.tanh(),
        "sigmoid": lambda: x.sigmoid(),
        "asinh": lambda: x.asinh(),
        "atan2": lambda: fg.atan2(x, z),
        "div": lambda: x / z,
    }
    print(machine())
    for name, op in ops.items():
        y = op()
        ms = best_of(lambda y=y: fg.autograd.grad(y, [x], g, retain_graph=True), 1, 15) * 1e3
        print(f"{name:8s} backward {ms:.2f} ms")


if __name__ == "__main__":
    main()
