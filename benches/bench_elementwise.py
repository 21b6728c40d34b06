"""Elementwise and reduction throughput, and per-op overhead, against NumPy.

Run with the release wheel installed:  python benches/bench_elementwise.py
Prints a Markdown table (ferrograd and NumPy from the same run, and the ratio).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import ferrograd as fg  # noqa: E402
from common import best_of, machine, table  # noqa: E402


def main() -> None:
    rows = []
    rng = np.random.default_rng(0)

    # Per-op overhead: a + b on 16 float32 elements (lower is better).
    a16 = rng.standard_normal(16).astype(np.float32)
    b16 = rng.standard_normal(16).astype(np.float32)
    ta, tb = fg.tensor(a16), fg.tensor(b16)
    t_fg = best_of(lambda: ta + tb, 200_000)
    t_np = best_of(lambda: a16 + b16, 200_000)
    rows.append(("a + b, 16 float32 (ns/op)", f"{t_fg * 1e9:.0f}", f"{t_np * 1e9:.0f}",
                 f"{t_np / t_fg:.2f}x"))

    # Large binary op: 4M float32, result freshly allocated (GB/s moved: 2 reads + 1 write).
    n = 4 * 1024 * 1024
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    ta, tb = fg.tensor(a), fg.tensor(b)
    gb = 3 * n * 4 / 1e9
    t_fg = best_of(lambda: ta + tb, 50)
    t_np = best_of(lambda: a + b, 50)
    rows.append(("a + b, 4M float32 (GB/s)", f"{gb / t_fg:.1f}", f"{gb / t_np:.1f}",
                 f"{t_np / t_fg:.2f}x"))

    # In-place binary op: 4M float32 (2 reads + 1 write, no allocation).
    t_fg = best_of(lambda: ta.add_(tb), 50)
    t_np = best_of(lambda: np.add(a, b, out=a), 50)
    rows.append(("a += b, 4M float32 (GB/s)", f"{gb / t_fg:.1f}", f"{gb / t_np:.1f}",
                 f"{t_np / t_fg:.2f}x"))

    # Full sum of 4M float32 (GB/s read).
    if hasattr(ta, "sum"):
        gbs = n * 4 / 1e9
        t_fg = best_of(lambda: ta.sum(), 50)
        t_np = best_of(lambda: a.sum(), 50)
        rows.append(("sum, 4M float32 (GB/s)", f"{gbs / t_fg:.1f}", f"{gbs / t_np:.1f}",
                     f"{t_np / t_fg:.2f}x"))

    # Large allocating op: 32M float32, where fresh pages cost a fault each.
    n = 32 * 1024 * 1024
    a = np.ones(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    ta, tb = fg.tensor(a), fg.tensor(b)
    gb = 3 * n * 4 / 1e9
    t_np = best_of(lambda: a + b, 5, repeat=5)
    t_fg = best_of(lambda: ta + tb, 5, repeat=5)
    rows.append(("a + b, 32M float32, buffer cache (GB/s)", f"{gb / t_fg:.1f}", f"{gb / t_np:.1f}",
                 f"{t_np / t_fg:.2f}x"))
    fg._core._set_cache_limit(0)
    try:
        t_nc = best_of(lambda: ta + tb, 5, repeat=5)
    finally:
        fg._core._set_cache_limit(1024 << 20)
    rows.append(("a + b, 32M float32, cache off (GB/s)", f"{gb / t_nc:.1f}", f"{gb / t_np:.1f}",
                 f"{t_np / t_nc:.2f}x"))

    print(f"machine: {machine()}; ferrograd threads: {fg.get_num_threads()}; "
          f"numpy {np.__version__}")
    print(table(rows, ("workload", "ferrograd", "NumPy", "speed vs NumPy")))


if __name__ == "__main__":
    main()
