"""Matrix-product throughput against the machine's FMA peak.

For float32 n x n x n products, prints GFLOP/s on one thread and on all
threads, per core, and as a share of the peak a core could reach, with
torch.mm beside it when torch is importable (never required). The peak is
``FMA units x float32 lanes x 2 flops x clock``: the lanes come from the
widest vector extension the CPU reports (AVX-512: 16, AVX2: 8, else 4;
8 where AVX-512 instructions run as two halves on 256-bit units, as on
AMD Zen 4), the clock from the CPU's maximum frequency (in a virtual
machine often the nominal clock, below what a busy core boosts to; give
the real one with ``--ghz``), and the FMA units per core (2 on most
server and desktop cores) can be given with ``--fma-units``; all three
are printed.

    python benches/bench_products.py [--sizes 256 512 1024 2048] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def cpu_info() -> tuple[str, int, float]:
    """The CPU's model name, float32 lanes an FMA unit completes per cycle and
    maximum clock (GHz)."""
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    fields = [line.split(":", 1) for line in text.splitlines() if ":" in line]

    def field(name: str, default: str = "") -> str:
        return next((v.strip() for k, v in fields if k.strip() == name), default)

    flags = field("flags").split()
    model = field("model name", "unknown CPU")
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    if lanes == 16 and field("vendor_id") == "AuthenticAMD" and field("cpu family") == "25":
        # Zen 4 (family 19h) splits each 512-bit operation over two cycles.
        lanes = 8
        model += " (Zen 4: AVX-512 on 256-bit units)"
    ghz = 0.0
    max_freq = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if max_freq.exists():
        ghz = int(max_freq.read_text()) / 1e6
    else:
        mhz = [float(v) for k, v in fields if k.strip() == "cpu MHz"]
        ghz = max(mhz) / 1e3 if mhz else 0.0
    return model, lanes, ghz


def gflops(lib, n: int, threads: int, repeat: int) -> float:
    lib.set_num_threads(threads)
    a, b = lib.randn(n, n), lib.randn(n, n)
    # Warm up (the pool's threads wake, the allocator settles), then time
    # batches of calls long enough (about 20 ms) that a small product's
    # wake-up and timer costs do not decide its rate; best batch.
    t0 = time.perf_counter()
    lib.mm(a, b)
    calls = max(1, int(0.02 / max(time.perf_counter() - t0, 1e-6)))
    for _ in range(calls):
        lib.mm(a, b)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            lib.mm(a, b)
        best = min(best, (time.perf_counter() - t0) / calls)
    return 2 * n**3 / best / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[256, 512, 1024, 2048])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fma-units", type=int, default=2)
    ap.add_argument("--ghz", type=float, default=None, help="clock under load (default: the reported one)")
    args = ap.parse_args()
    import ferrograd as fg

    libs = {"ferrograd": fg}
    try:
        import torch  # type: ignore[import-not-found]

        libs["torch"] = torch
    except ImportError:
        pass
    cores = os.cpu_count() or 1
    model, lanes, ghz = cpu_info()
    ghz = args.ghz or ghz
    peak = args.fma_units * lanes * 2 * ghz
    print(f"CPU: {model}; {cores} cores; {lanes} float32 lanes per cycle x {args.fma_units} FMA units "
          f"x 2 flops x {ghz:.2f} GHz = {peak:.0f} GFLOP/s per core")
    head = "| n | threads |" + "".join(f" {k} GFLOP/s | per core | of peak |" for k in libs)
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    above = False
    for n in args.sizes:
        for threads in sorted({1, cores}):
            row = f"| {n} | {threads} |"
            for lib in libs.values():
                g = gflops(lib, n, threads, args.repeat)
                share = f"{g / threads / peak:.0%}" if peak else "?"
                above = above or bool(peak) and g / threads > peak
                row += f" {g:.0f} | {g / threads:.0f} | {share} |"
            print(row, flush=True)
    if above:
        print(f"Above 100% of peak: the cores run faster than the reported {ghz:.2f} GHz "
              "(give their clock with --ghz).")


if __name__ == "__main__":
    main()
