"""Sampling throughput of the CPU generator: rand, randn and normal_ on
large float32 tensors, the per-call cost on a small one, and the rejection
samplers (poisson, binomial, gamma, Dirichlet) on a million draws.

Run with the release wheel installed:  python benches/bench_random.py
Prints a Markdown table of ferrograd's times (and torch's, from the same
run, when torch happens to be importable; it is never required).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ferrograd as fg  # noqa: E402
from common import best_of, machine  # noqa: E402


def workloads(lib):
    big = lib.empty(10_000_000)
    rates = lib.rand(1_000_000) * 30  # both Poisson regimes (below and above 10)
    counts, probs = lib.full((1_000_000,), 50.0), lib.rand(1_000_000)
    shapes_small, shapes = lib.full((1_000_000,), 0.5), lib.full((1_000_000,), 5.0)
    conc = lib.rand(100_000, 10) + 0.5
    return [
        ("rand(1e6) float32", lambda: lib.rand(1_000_000), 20),
        ("rand(1e7) float32", lambda: lib.rand(10_000_000), 3),
        ("randn(1e6) float32", lambda: lib.randn(1_000_000), 20),
        ("randn(1e7) float32", lambda: lib.randn(10_000_000), 3),
        ("normal_(1e7) float32, in place", lambda: big.normal_(), 3),
        ("randn(1e6) float64", lambda: lib.randn(1_000_000, dtype=lib.float64), 10),
        ("randn(8) float32 (us/call)", lambda: lib.randn(8), 20_000),
        ("poisson(1e6), rates in [0, 30)", lambda: lib.poisson(rates), 3),
        ("binomial(1e6), 50 trials", lambda: lib.binomial(counts, probs), 3),
        ("_standard_gamma(1e6), alpha 0.5", lambda: lib._standard_gamma(shapes_small), 3),
        ("_standard_gamma(1e6), alpha 5", lambda: lib._standard_gamma(shapes), 3),
        ("_sample_dirichlet(1e5 x 10)", lambda: lib._sample_dirichlet(conc), 3),
    ]


def main() -> None:
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        torch = None
    fg.manual_seed(0)
    ours = [(name, best_of(fn, number)) for name, fn, number in workloads(fg)]
    theirs = None
    if torch is not None:
        torch.manual_seed(0)
        theirs = [best_of(fn, number) for _, fn, number in workloads(torch)]
    print(f"machine: {machine()}, threads: {fg.get_num_threads()}")
    header = "| workload | ferrograd (ms) |" + (" torch (ms) | torch / ferrograd |" if theirs else "")
    print(header)
    print("|---|---|" + ("---|---|" if theirs else ""))
    for i, (name, t) in enumerate(ours):
        scale = 1e6 if "us/call" in name else 1e3
        row = f"| {name} | {t * scale:.3f} |"
        if theirs:
            row += f" {theirs[i] * scale:.3f} | {theirs[i] / t:.2f}x |"
        print(row)


if __name__ == "__main__":
    main()
