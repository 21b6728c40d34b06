"""ferrograd against torch on the same workloads, side by side.

Each backend runs in a fresh subprocess (``import ferrograd as torch`` or
``import torch``), the two alternate within each round, and a workload's
number is the median over rounds of each child's median time; the table
gives both and their ratio. torch is never a dependency: without it only
ferrograd's column is printed.

Run: ``python benches/bench_vs_torch.py [--rounds N] [--only NAME ...]``
(numbers go to docs/performance.md). Workloads:

- ``profiler``: a 200-op elementwise chain on 16 elements, forward and
  backward, 8 chains per call; plain, inside
  ``autograd.profiler.profile()`` (entering, recording, leaving), and the
  same followed by ``key_averages().table()``; the profiled/plain overhead
  and the Chrome trace's size per event.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHAIN_OPS = 200
CHAINS = 8


def median_time(fn, number: int, repeat: int = 15) -> float:
    """Median over ``repeat`` batches of the mean time of one call (s)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def profiler_workload(torch) -> dict[str, float]:
    torch.manual_seed(0)
    leaves = [torch.randn(16, requires_grad=True) for _ in range(CHAINS)]
    c = torch.randn(16)

    def step():
        for x in leaves:
            y = x
            for _ in range(CHAIN_OPS // 4):
                y = (y * c + c).tanh() - c
            y.sum().backward()

    def profiled():
        with torch.autograd.profiler.profile():
            step()

    def profiled_table():
        with torch.autograd.profiler.profile() as p:
            step()
        p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)

    with torch.autograd.profiler.profile() as p:
        step()
    events = len(p.function_events)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        p.export_chrome_trace(path)
        trace_bytes = os.path.getsize(path)

    out = {}
    # Interleave so that drift hits every variant alike.
    variants = (("plain (ms)", step), ("profiled (ms)", profiled), ("profiled+table (ms)", profiled_table))
    for _ in range(3):
        for name, fn in variants:
            out.setdefault(name, []).append(median_time(fn, 3, repeat=7) * 1e3)
    res = {k: statistics.median(v) for k, v in out.items()}
    res["overhead (x)"] = res["profiled (ms)"] / res["plain (ms)"]
    res["overhead+table (x)"] = res["profiled+table (ms)"] / res["plain (ms)"]
    res["events"] = float(events)
    res["trace bytes/event"] = trace_bytes / max(events, 1)
    return res


WORKLOADS = {"profiler": profiler_workload}


def child(backend: str, names: list[str]) -> None:
    if backend == "torch":
        import torch  # type: ignore[import-not-found]

        torch.set_num_threads(2)
    else:
        import ferrograd as torch

        torch.set_num_threads(2)
    print(json.dumps({n: WORKLOADS[n](torch) for n in names}))


def run_child(backend: str, names: list[str]) -> dict:
    cmd = [sys.executable, __file__, "--child", backend, "--only", *names]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.only)
        return
    try:
        import importlib.util

        backends = ["ferrograd"] + (["torch"] if importlib.util.find_spec("torch") else [])
    except ValueError:
        backends = ["ferrograd"]
    results: dict[str, list[dict]] = {b: [] for b in backends}
    for r in range(args.rounds):
        order = backends if r % 2 == 0 else backends[::-1]
        for b in order:
            results[b].append(run_child(b, args.only))
    import platform

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{args.rounds} rounds, medians"
    )
    for name in args.only:
        print(f"\n## {name}\n")
        head = "| metric | ferrograd |" + (" torch | ferrograd / torch |" if "torch" in results else "")
        print(head)
        print("|---" * (head.count("|") - 1) + "|")
        for metric in results["ferrograd"][0][name]:
            ours = statistics.median(x[name][metric] for x in results["ferrograd"])
            row = f"| {metric} | {ours:.3f} |"
            if "torch" in results:
                theirs = statistics.median(x[name][metric] for x in results["torch"])
                row += f" {theirs:.3f} | {ours / theirs:.2f} |"
            print(row)


if __name__ == "__main__":
    main()
