"""``ferrograd.utils.benchmark``: timing statements and comparing the times.

The Python part of ``torch.utils.benchmark``: :class:`Timer` runs a
statement in blocks and returns a :class:`Measurement` (median, IQR and a
printed summary); :class:`Compare` prints many measurements as tables.
torch's C++ statements, Callgrind instruction counts and fuzzers are not
available. See docs/profiler.md ("Timing code") for a guide.
"""

from .utils.common import (
    Measurement,
    TaskSpec,
    ordered_unique,
    select_unit,
    set_torch_threads,
    trim_sigfig,
    unit_to_english,
)
from .utils.compare import Colorize, Compare
from .utils.timer import Language, Timer, timer

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "ordered_unique",
    "select_unit",
    "set_torch_threads",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]
