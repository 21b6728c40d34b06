"""Timing helpers shared by the Python benchmark scripts."""

from __future__ import annotations

import platform
import statistics
import time


def batch_times(fn, number: int, repeat: int) -> list[float]:
    """Mean wall time of one call of ``fn`` (seconds) in each of ``repeat``
    batches of ``number`` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return times


def best_of(fn, number: int, repeat: int = 7) -> float:
    """Best wall time of one call of ``fn`` (seconds), over ``repeat`` batches of ``number``."""
    return min(batch_times(fn, number, repeat))


def median_of(fn, number: int, repeat: int = 15) -> float:
    """Median wall time of one call of ``fn`` (seconds), over ``repeat`` batches of ``number``."""
    return statistics.median(batch_times(fn, number, repeat))


def machine() -> str:
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def table(rows: list[tuple[str, str, str, str]], header: tuple[str, str, str, str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
