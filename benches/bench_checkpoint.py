"""Activation checkpointing benchmark: one training step (forward, backward,
SGD update) of a 16-layer MLP (each layer Linear -> Tanh -> Dropout(0.1),
width 256, batch 4096, float32), plain and with every layer checkpointed
(reentrant and non-reentrant). Reports the peak resident memory the step
adds (``ru_maxrss`` after the first step minus before it; each variant runs
in a fresh process, since ``ru_maxrss`` is a process-wide high-water mark
and the Rust allocations are invisible to tracemalloc) and the best step
time.

Run: ``python benches/bench_checkpoint.py`` (numbers go to
docs/performance/training.md).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

import ferrograd as fg
from common import best_of, machine, table
from ferrograd import nn
from ferrograd.utils.checkpoint import checkpoint

DEPTH, WIDTH, BATCH = 16, 256, 4096
VARIANTS = {"plain": None, "reentrant": True, "non-reentrant": False}


def _maxrss_mib() -> float:
    # ru_maxrss is in KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(variant: str, repeat: int) -> dict[str, float]:
    """Peak memory added by the first step (MiB) and best step time (s)."""
    fg.manual_seed(0)
    layers = [nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh(), nn.Dropout(0.1)) for _ in range(DEPTH)]
    opt = fg.optim.SGD([p for layer in layers for p in layer.parameters()], lr=1e-3)
    # the reentrant variant needs an input that requires grad (else no layer
    # records a graph), so every variant gets one
    x = fg.randn(BATCH, WIDTH, requires_grad=True)
    use_reentrant = VARIANTS[variant]

    def step() -> None:
        h = x
        for layer in layers:
            h = layer(h) if use_reentrant is None else checkpoint(layer, h, use_reentrant=use_reentrant)
        loss = (h**2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    before = _maxrss_mib()
    step()
    peak = _maxrss_mib() - before
    return {"peak_mib": peak, "step_s": best_of(step, 1, repeat)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=list(VARIANTS), help="measure one variant (in this process)")
    parser.add_argument("--repeat", type=int, default=5, help="timed steps per variant")
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(measure(args.variant, args.repeat)))
        return
    rows = []
    results = {}
    for variant in VARIANTS:
        out = subprocess.run(
            [sys.executable, __file__, "--variant", variant, "--repeat", str(args.repeat)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        results[variant] = r = json.loads(out.strip().splitlines()[-1])
        rows.append((variant, f"{r['peak_mib']:.0f}", f"{r['step_s'] * 1e3:.0f}", ""))
    base = results["plain"]
    rows = [
        (v, peak, ms, f"{results[v]['peak_mib'] / base['peak_mib']:.2f}x mem, "
         f"{results[v]['step_s'] / base['step_s']:.2f}x time")
        for v, peak, ms, _ in rows
    ]  # fmt: skip
    print(f"# {DEPTH}-layer MLP, width {WIDTH}, batch {BATCH}, float32; {machine()}")
    print(table(rows, ("variant", "peak added (MiB)", "step (ms)", "vs plain")))


if __name__ == "__main__":
    main()
