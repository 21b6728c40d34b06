"""Timing helpers shared by the Python benchmark scripts."""

from __future__ import annotations

import platform
import time


def best_of(fn, number: int, repeat: int = 7) -> float:
    """Best wall time of one call of ``fn`` (seconds), over ``repeat`` batches of ``number``."""
    fn()  # warm up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def machine() -> str:
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def table(rows: list[tuple[str, str, str, str]], header: tuple[str, str, str, str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
