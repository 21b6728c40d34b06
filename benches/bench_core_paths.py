"""Three paths every program takes, for comparing two builds side by side.

A 512x512 product, four `(h @ W * 0.05).relu()` layers of 512 at batch 64
forward and backward, and the 200-op elementwise chain on 16 elements
forward and backward; best times in ms. Run it with the Python of each
build in turn (alternating, two rounds or more):

    python benches/bench_core_paths.py

Times go to docs/performance/build.md.
"""

from __future__ import annotations

import ferrograd as fg
from common import best_of, machine


def main() -> None:
    a, b = fg.randn(512, 512), fg.randn(512, 512)
    weights = [fg.randn(512, 512, requires_grad=True) for _ in range(4)]
    h0 = fg.randn(64, 512)
    x, c = fg.randn(16, requires_grad=True), fg.randn(16)

    def layers() -> None:
        h = h0
        for w in weights:
            h = (h @ w * 0.05).relu()
        h.sum().backward()

    def chain() -> None:
        y = x
        for _ in range(50):
            y = (y * c + c).tanh() - c
        y.sum().backward()

    print(machine())
    print(f"512x512 matmul {best_of(lambda: a @ b, 1, 30) * 1e3:.3f} ms")
    print(f"4-layer relu chain {best_of(layers, 1, 10) * 1e3:.3f} ms")
    print(f"200-op chain {best_of(chain, 1, 30) * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
