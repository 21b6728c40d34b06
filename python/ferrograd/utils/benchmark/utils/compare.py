""":class:`Compare`: prints many measurements as tables, in torch's layout.

One table per label. Its rows are the measurements' row names (sub label,
else statement), grouped under a ``N threads:`` line per thread count and,
where the measurements come from several envs, tagged ``(env)``; its
columns are their descriptions. All the times of a table are in one unit,
the one that suits its smallest median.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence

from . import common

__all__ = ["Colorize", "Compare"]

# ANSI escapes of the colorized tables.
_BEST = "\033[92m"
_GOOD = "\033[34m"
_BAD = "\033[2m\033[91m"
_VERY_BAD = "\033[31m"
_BOLD = "\033[1m"
_END = "\033[0m"

_HIGH_VARIANCE_NOTE = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100."

Cell = common.Measurement | None


class Colorize(enum.Enum):
    """How :class:`Compare` colors its cells: not at all, against the best
    cell of the column (within a thread count) or of the row.

    Example:
        >>> Colorize("rowwise")
        <Colorize.ROWWISE: 'rowwise'>
    """

    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _env_name(env: str | None) -> str:
    return "Unspecified env" if env is None else env


def _color(segment: str, value: float, best: float) -> str:
    # Green: within 1% (or 100 ns) of the best; blue: within 10%; red at 2x
    # (dimmed) and 5x the best.
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + segment + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + segment + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + segment + _END * 2
    if value >= best * 2:
        return _BAD + segment + _END * 2
    return segment


class _ColumnFormat:
    """The number format of one column: as many integer digits as its
    largest value needs and one decimal, or, when trimming, the decimals
    that the least precise of its measurements supports."""

    def __init__(self, cells: Sequence[Cell], scale: float, trim: bool, highlight: bool) -> None:
        present = [m for m in cells if m is not None]
        self.trim = trim
        self.highlight = highlight and any(m.has_warnings for m in present)
        digits = [int(math.ceil(common._log10_f32(m.median / scale))) for m in present]
        if trim:
            decimals = min(max(m.significant_figures - d, 0) for m, d in zip(present, digits, strict=True))
        else:
            decimals = 1
        self.decimals = decimals
        self.width = max(digits) + decimals + (1 if decimals else 0)

    def format(self, value: float, sigfigs: int, spread: float | None) -> str:
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        note = f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None else ""
        return f"{value:>{self.width}.{self.decimals}f}" + f"{note:>{7 if self.highlight else 0}}"

    def blank(self) -> str:
        return " " * len(self.format(1, 1, None))


class _Table:
    """One label's measurements, laid out."""

    def __init__(
        self, results: list[common.Measurement], colorize: Colorize, trim: bool, highlight: bool
    ) -> None:
        self.results = results
        self.label = results[0].label
        self.colorize = colorize
        self.highlight = highlight
        self.unit, self.scale = common.select_unit(min(m.median for m in results))

        def row_key(m: common.Measurement) -> tuple[int, str | None, str]:
            return m.num_threads, m.env, m.as_row_name

        rows = common.ordered_unique(row_key(m) for m in results)
        # By thread count, then env; rows otherwise in order of appearance.
        rows.sort(key=lambda k: (k[0], k[1] is not None, k[1] or ""))
        self.row_keys: list[tuple[int, str | None, str]] = rows
        self.col_keys: list[str | None] = common.ordered_unique(m.description for m in results)
        rindex = {k: i for i, k in enumerate(rows)}
        cindex = {k: j for j, k in enumerate(self.col_keys)}
        self.grid: list[list[Cell]] = [[None] * len(self.col_keys) for _ in rows]
        for m in results:
            self.grid[rindex[row_key(m)]][cindex[m.description]] = m

        # Rows are grouped by thread count; a column's best value (for
        # colorizing) is taken within a group.
        self.group_of: list[int] = []
        group = -1
        for i, (threads, _, _) in enumerate(rows):
            if i == 0 or threads != rows[i - 1][0]:
                group += 1
            self.group_of.append(group)
        self.formats = [
            _ColumnFormat([row[j] for row in self.grid], self.scale, trim, highlight)
            for j in range(len(self.col_keys))
        ]

    def _row_name(self, i: int, envs: set[str | None]) -> str:
        threads, env, name = self.row_keys[i]
        tag = ""
        if len(envs) > 1:
            width = max(len(_env_name(e)) for e in envs)
            new_group = i == 0 or self.row_keys[i - 1][0] != threads
            if new_group or self.row_keys[i - 1][1] != env:
                tag = f"({_env_name(env)})"
            tag = tag.ljust(width + 4)
        else:
            tag = " " * 4
        return "  " + tag + name

    def _best(self, i: int, j: int) -> float | None:
        if self.colorize == Colorize.ROWWISE:
            return min(m.median for m in self.grid[i] if m is not None)
        group = [
            row[j]
            for k, row in enumerate(self.grid)
            if self.group_of[k] == self.group_of[i] and row[j] is not None
        ]
        return min(m.median for m in group) if group else None

    def render(self) -> str:
        envs = {m.env for m in self.results}
        header = ["", *("" if d is None else d for d in self.col_keys)]
        body: list[list[str]] = []
        for i, row in enumerate(self.grid):
            cells = [self._row_name(i, envs)]
            for m, fmt in zip(row, self.formats, strict=True):
                if m is None:
                    cells.append(fmt.blank())
                else:
                    spread = m.iqr / m.median if m.has_warnings else None
                    cells.append(fmt.format(m.median / self.scale, m.significant_figures, spread))
            body.append(cells)
        widths = [max(len(r[j]) for r in [header, *body]) for j in range(len(header))]
        head = "  |  ".join(s.center(w) for s, w in zip(header, widths, strict=True))
        lines = [head]
        for i, (cells, row) in enumerate(zip(body, self.grid, strict=True)):
            if i == 0 or self.group_of[i] != self.group_of[i - 1]:
                lines.append(f"{self.row_keys[i][0]} threads: ".ljust(len(head), "-"))
            out = [cells[0].ljust(widths[0])]
            for j, (text, m) in enumerate(zip(cells[1:], row, strict=True)):
                text = text.center(widths[j + 1])
                if self.colorize != Colorize.NONE and m is not None:
                    best = self._best(i, j)
                    if best is not None:
                        text = _color(text, m.median, best)
                out.append(text)
            lines.append("  |  ".join(out))
        title = f" {self.label or ''} ".center(len(head) - 2, "-")
        footer = f"Times are in {common.unit_to_english(self.unit)}s ({self.unit}).\n"
        if self.highlight and any(m.has_warnings for m in self.results):
            footer += _HIGH_VARIANCE_NOTE + "\n"
        return f"[{title}]\n" + "\n".join(lines) + "\n\n" + footer


class Compare:
    """Prints measurements side by side, torch's
    ``torch.utils.benchmark.Compare``.

    Replicates (measurements of the same task spec) are merged first. Each
    label gets a table whose rows are the sub labels (else statements) per
    thread count and whose columns are the descriptions; the times are
    medians, in the unit that suits the table's smallest median. A
    measurement without a description sits in an unnamed column (torch
    fails on those).

    Args:
        results (list[Measurement]): the measurements to show.

    Raises:
        ValueError: an element is not a ``Measurement``.

    Example:
        >>> def m(times, sub_label, description):
        ...     spec = TaskSpec("f(x)", "pass", label="add", sub_label=sub_label, description=description)
        ...     return Measurement(1, times, spec)
        >>> results = [
        ...     m([1.0e-5, 1.1e-5, 1.2e-5], "float", "n=10"),
        ...     m([2.0e-5, 2.1e-5, 2.2e-5], "float", "n=100"),
        ...     m([3.0e-5, 3.1e-5, 3.2e-5], "int", "n=10"),
        ... ]
        >>> Compare(results).print()
        [----------- add ------------]
                     |  n=10  |  n=100
        1 threads: -------------------
              float  |  11.0  |   21.0
              int    |  31.0  |
        <BLANKLINE>
        Times are in microseconds (us).
        <BLANKLINE>
    """

    def __init__(self, results: Iterable[common.Measurement]) -> None:
        self._results: list[common.Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results: Iterable[common.Measurement]) -> None:
        """Adds measurements to those shown.

        Raises:
            ValueError: an element is not a ``Measurement``.
        """
        results = list(results)
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Rounds each time to its
        :attr:`~ferrograd.utils.benchmark.Measurement.significant_figures`
        and each column to the decimals its least precise time supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colors the cells (ANSI escapes) against the best of their column
        within a thread count, or of their row with ``rowwise=True``: green
        within 1% of the best, blue within 10%, red from 2x (dim) and 5x.

        Args:
            rowwise (bool): compare within rows instead of columns.
        """
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Marks the times whose IQR is at least 10% of their median with
        ``(! XX%)`` (XX: IQR / median in percent), and explains the mark
        under the table."""
        self._highlight_warnings = True

    def print(self) -> None:
        """Prints the tables (``print(str(self))``)."""
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict[str | None, list[common.Measurement]] = {}
        for m in common.Measurement.merge(self._results):
            by_label.setdefault(m.label, []).append(m)
        return [
            _Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
            for group in by_label.values()
        ]
