"""Differential run of random view/in-place programs (tests/python/inplace_programs.py).

Checks each program on ferrograd against NumPy and float64 central finite
differences; with --torch, also runs it on torch (installed by hand, never
a dependency) to learn which programs torch refuses with its "modified by
an inplace operation" error. Prints a summary and every disagreement.

    python scripts/fuzz_inplace_views.py --count 5000 --torch
    python scripts/fuzz_inplace_views.py --count 300 --torch \\
        --write-refusals tests/python/data/inplace_views_torch_refusals.json
"""

from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "python"))

import ferrograd  # noqa: E402
import inplace_programs as ip  # noqa: E402


def verdict(T, seed: int, keep_going: bool = False) -> tuple[str, str]:
    prog, x, w = ip.generate(seed)
    try:
        return ip.check_program(T, prog, x, w, seed, keep_going), ""
    except AssertionError as e:
        return "FAIL", str(e)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--torch", action="store_true", help="also run torch and compare refusals")
    ap.add_argument("--write-refusals", help="JSON file for the seeds torch refuses (needs --torch)")
    ap.add_argument("--show", type=int, default=3, help="failures printed in full")
    args = ap.parse_args()
    torch = None
    if args.torch:
        import torch  # noqa: PLC0415

    counts: collections.Counter = collections.Counter()
    refusals: dict[str, str] = {}
    shown = 0
    t0 = time.perf_counter()
    for seed in range(args.start, args.start + args.count):
        fv, fmsg = verdict(ferrograd, seed)
        tv, tmsg = verdict(torch, seed, keep_going=True) if torch is not None else ("-", "")
        counts[(fv, tv)] += 1
        if tv == "refused":
            refusals[str(seed)] = ip.program_digest(seed)
        bad = fv == "FAIL" or (fv == "refused" and tv not in ("refused", "-"))
        if bad:
            print(f"seed {seed}: ferrograd {fv}, torch {tv}")
            if shown < args.show:
                print(fmsg or ip.generate(seed)[0].source())
                shown += 1
        elif tv == "FAIL" and shown < args.show:
            print(f"seed {seed}: torch fails a check (ferrograd {fv}):\n{tmsg}")
            shown += 1
    dt = time.perf_counter() - t0
    print(f"\n{args.count} programs from seed {args.start} in {dt:.1f} s")
    for (fv, tv), n in sorted(counts.items()):
        print(f"  ferrograd {fv:8s} torch {tv:8s} {n}")
    if args.write_refusals:
        data = {"start": args.start, "count": args.count, "refused": refusals}
        pathlib.Path(args.write_refusals).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
