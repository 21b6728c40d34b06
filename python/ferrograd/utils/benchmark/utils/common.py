"""What a timing run produces: :class:`TaskSpec` (what was timed) and
:class:`Measurement` (the times), with the unit and rounding helpers that
their printed forms and :class:`~ferrograd.utils.benchmark.Compare` use.

torch computes the unit, the significant-figure estimate and the rounding
of :func:`trim_sigfig` on float32 tensors; the helpers here round through
float32 the same way, so that a value on the edge of a unit or of a digit
prints as it does under torch.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import struct
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
    "Measurement",
    "TaskSpec",
    "ordered_unique",
    "select_unit",
    "set_torch_threads",
    "trim_sigfig",
    "unit_to_english",
]

# A significant-figure estimate never claims more than this many digits.
_MAX_SIGNIFICANT_FIGURES = 4
# The confidence interval of a measurement is taken to be at least 25 ns.
_MIN_CONFIDENCE_INTERVAL = 25e-9
# IQR / median above which a measurement carries a warning, and above which
# the warning says the environment interfered.
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25

_UNIT_SCALES = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_UNIT_NAMES = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


def _f32(x: float) -> float:
    """``x`` rounded to the nearest float32 (what ``torch.tensor(x)`` stores)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _log10_f32(x: float) -> float:
    """``log10`` as a float32 tensor computes it: ``-inf`` for 0."""
    x = _f32(abs(x))
    return -math.inf if x == 0 else _f32(math.log10(x))


def _quantile(sorted_values: tuple[float, ...], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolating linearly between
    the two nearest ranks (``torch.quantile``'s and NumPy's default)."""
    position = q * (len(sorted_values) - 1)
    lo = math.floor(position)
    hi = min(lo + 1, len(sorted_values) - 1)
    weight = position - lo
    below, above = sorted_values[lo], sorted_values[hi]
    if weight < 0.5:
        return below + weight * (above - below)
    return above - (1 - weight) * (above - below)


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a :class:`~ferrograd.utils.benchmark.Timer` times: its statement,
    setup and labels (everything but its globals).

    Task specs are hashable; :meth:`Measurement.merge` groups replicates by
    them.

    Args:
        stmt (str): the timed statement.
        setup (str): the code run before it.
        global_setup (str): C++ only in torch; always ``""`` here.
        label (str, optional): the name of what is compared.
        sub_label (str, optional): tells apart measurements with the same
            label (a row of a :class:`~ferrograd.utils.benchmark.Compare`).
        description (str, optional): a column of a ``Compare``.
        env (str, optional): the environment the measurement ran in.
        num_threads (int): ferrograd's thread count while timing.

    Example:
        >>> spec = TaskSpec(stmt="x + y", setup="pass", sub_label="float")
        >>> spec.title
        'x + y: float'
    """

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (or the one-line statement) and the sub label, for
        printing; a statement of several lines is indented under ``stmt:``."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        """The setup as printed: empty for ``pass``, indented under
        ``setup:`` when it has several lines."""
        if not self.setup or self.setup == "pass":
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The title, description and setup, one section after another (a
        section of several lines is followed by a blank line)."""
        sections = [s for s in (self.title, self.description or "", self.setup_str()) if s]
        return "\n".join(s + "\n" if "\n" in s else s for s in sections)


_TASKSPEC_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of one timed statement: ``raw_times[i]`` is how long block
    ``i`` of ``number_per_run`` runs took, in seconds.

    The statistics are per run (each raw time divided by
    ``number_per_run``); the quartiles interpolate linearly between ranks,
    as ``numpy.quantile`` does. The fields of :attr:`task_spec` (``stmt``,
    ``label``, ``num_threads``...) read as attributes of the measurement.
    ``repr`` prints a summary in torch's layout; its first line is the
    default object repr, naming this module
    (``ferrograd.utils.benchmark.utils.common``) where torch names
    ``torch.utils.benchmark.utils.common``.

    Args:
        number_per_run (int): how many times the statement ran per block.
        raw_times (list[float]): the time of each block, in seconds.
        task_spec (TaskSpec): what was timed.
        metadata (dict, optional): anything the caller wants to keep with
            the measurement (not used here).

    Example:
        >>> m = Measurement(10, [1.0e-4, 1.2e-4, 1.1e-4, 1.3e-4], TaskSpec("x + y", "pass"))
        >>> round(m.median * 1e6, 6), round(m.iqr * 1e6, 6)
        (11.5, 1.5)
        >>> m
        <ferrograd.utils.benchmark.utils.common.Measurement object at 0x...>
        x + y
          Median: 11.50 us
          IQR:    1.50 us (10.75 to 12.25)
          4 measurements, 10 runs per measurement, 1 thread
          WARNING: Interquartile range is 13.0% of the median measurement.
                   This could indicate system fluctuation.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: the task spec's fields.
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        self._median = _quantile(self._sorted_times, 0.5)
        self._mean = math.fsum(self._sorted_times) / len(self._sorted_times)
        self._p25 = _quantile(self._sorted_times, 0.25)
        self._p75 = _quantile(self._sorted_times, 0.75)
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, message: str) -> None:
        percent = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {percent:.1f}% of the median measurement.\n"
            f"           {message}",
        )

    @property
    def times(self) -> list[float]:
        """The time of one run in each block: ``raw_times`` divided by
        ``number_per_run``."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        """The median of :attr:`times`."""
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        """The mean of :attr:`times`."""
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        """The interquartile range of :attr:`times` (75th minus 25th
        percentile)."""
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """A rough estimate (1 to 4) of how many digits of the median are
        meaningful.

        It takes the 90% confidence interval of the mean of the middle half
        of the times (at least 25 ns) and counts how many powers of ten the
        median is above it. :class:`~ferrograd.utils.benchmark.Compare` uses
        it when trimming significant figures.

        Example:
            >>> Measurement(1, [1e-5] * 4, TaskSpec("f()", "pass")).significant_figures
            2
        """
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4 : int(math.ceil(_f32(3 * n / 4)))]
        values = [_f32(t) for t in middle]
        mean = math.fsum(values) / len(values)
        std = _f32(math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values)))
        sqrt_n = _f32(math.sqrt(len(values)))
        interval = max(1.645 * std / sqrt_n, _MIN_CONFIDENCE_INTERVAL)
        figures = int(math.floor(_log10_f32(self._median / interval)))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        """Whether the IQR is at least 10% of the median (the printed forms
        then flag the measurement)."""
        self._lazy_init()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether ``iqr / median`` is below ``threshold``.

        Example:
            >>> m = Measurement(1, [1.0, 1.1, 1.2, 1.3], TaskSpec("f()", "pass"))
            >>> m.meets_confidence(0.1), m.meets_confidence(0.2)
            (False, True)
        """
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        """:attr:`TaskSpec.title` of the task spec."""
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        """The task spec's ``env`` (``None`` when none was given, as in
        torch)."""
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        """The name of the measurement's row in a ``Compare`` table: the sub
        label, else the statement."""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        threads = self.task_spec.num_threads
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
            f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}"
        )
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Merges replicates: one measurement per distinct task spec, in
        order of first appearance, holding the per-run times of all of them
        (``number_per_run=1``, no metadata).

        Example:
            >>> spec = TaskSpec("f()", "pass")
            >>> a = Measurement(2, [4e-6, 6e-6], spec)
            >>> b = Measurement(1, [1e-6], spec)
            >>> [merged] = Measurement.merge([a, b])
            >>> merged.number_per_run, [round(t * 1e6, 6) for t in merged.raw_times]
            (1, [2.0, 3.0, 1.0])
        """
        groups: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [
            Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
            for spec, times in groups.items()
        ]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``"ns"``, ``"us"``, ``"ms"`` or ``"s"``) in which ``t``
    seconds reads as 1 to 999, and its scale in seconds.

    Example:
        >>> select_unit(2.5e-5)
        ('us', 1e-06)
        >>> select_unit(3.0)
        ('s', 1.0)
    """
    if t <= 0:
        return "ns", _UNIT_SCALES["ns"]
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(_log10_f32(t) // 3), "s")
    return unit, _UNIT_SCALES[unit]


def unit_to_english(u: str) -> str:
    """The English name of a unit from :func:`select_unit`.

    Example:
        >>> unit_to_english("us")
        'microsecond'
    """
    return _UNIT_NAMES[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (half to even, through
    float32 as torch does it).

    Example:
        >>> trim_sigfig(3.14159, 2)
        3.1000001430511475
        >>> f"{trim_sigfig(1234.5, 2):.1f}"
        '1200.0'
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    if x == 0:
        return 0.0
    magnitude = int(math.ceil(_log10_f32(x)))
    scale = 10 ** (magnitude - int(n))
    return _f32(float(round(_f32(x / scale))) * _f32(scale))


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    """The distinct elements, in order of first appearance.

    Example:
        >>> ordered_unique([3, 1, 3, 2, 1])
        [3, 1, 2]
    """
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Sets ferrograd's thread count (:func:`ferrograd.set_num_threads`) to
    ``n`` inside the ``with`` block, and restores it after.

    Example:
        >>> before = ferrograd.get_num_threads()
        >>> with set_torch_threads(1):
        ...     ferrograd.get_num_threads()
        1
        >>> ferrograd.get_num_threads() == before
        True
    """
    import ferrograd

    prior = ferrograd.get_num_threads()
    try:
        ferrograd.set_num_threads(n)
        yield
    finally:
        ferrograd.set_num_threads(prior)
