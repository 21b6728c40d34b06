""":class:`Timer`: runs a statement in blocks of runs and returns the times
as a :class:`~ferrograd.utils.benchmark.Measurement`.

The statement and setup are Python source, compiled by :mod:`timeit` (so
the garbage collector is off while a block runs, as with ``timeit``);
torch's C++ statements and its Valgrind (Callgrind) instruction counts are
not available in ferrograd.
"""

from __future__ import annotations

import enum
import textwrap
import timeit as _timeit_module
from collections.abc import Callable
from typing import Any, NoReturn

from . import common

__all__ = ["Language", "Timer", "timer"]


def timer() -> float:
    """The current time in seconds (:func:`timeit.default_timer`), after
    waiting for the accelerator when there is one (ferrograd runs on the
    CPU, so it never waits).

    Example:
        >>> t0 = timer()
        >>> timer() >= t0
        True
    """
    import ferrograd

    if ferrograd.accelerator.is_available():
        ferrograd.accelerator.synchronize()
    return _timeit_module.default_timer()


class Language(enum.Enum):
    """The language of a :class:`Timer`'s statement: ferrograd times
    ``PYTHON`` statements; ``CPP`` is torch's C++ timing, not available.

    Example:
        >>> Timer("pass", language="python")._language
        <Language.PYTHON: 0>
    """

    PYTHON = 0
    CPP = 1


def _clean(code: str) -> str:
    # Dedented, without a leading newline or trailing whitespace, so that
    # triple-quoted code compiles and prints as written.
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times a Python statement, torch's ``torch.utils.benchmark.Timer``.

    Like :class:`timeit.Timer`, it runs ``setup`` and then ``stmt`` in a
    loop, with ``globals`` as the namespace; unlike it, it warms up first,
    runs with ferrograd's thread count set to ``num_threads`` (restored
    after), returns a :class:`~ferrograd.utils.benchmark.Measurement` of
    many blocks of runs rather than one number, and carries labels for
    printing and for :class:`~ferrograd.utils.benchmark.Compare`.

    The name ``torch`` is ferrograd in the namespace (unless ``globals``
    binds it), so statements written for torch run unchanged.

    Args:
        stmt (str): the statement to time.
        setup (str): code run before each block of runs, to define what
            ``stmt`` uses.
        global_setup (str): C++ only; must be empty.
        timer (Callable[[], float]): returns the current time in seconds.
        globals (dict, optional): the namespace of ``stmt`` and ``setup``
            (copied: names they assign do not leak into it).
        label (str, optional): names what ``stmt`` computes, e.g.
            ``"ReLU(x + 1)"``; a ``Compare`` makes one table per label.
        sub_label (str, optional): tells apart measurements with the same
            label, e.g. ``"float"``; a ``Compare`` row.
        description (str, optional): a ``Compare`` column, e.g. the input
            size.
        env (str, optional): the environment (e.g. ``"before"``,
            ``"after"``); measurements from different envs are never merged.
        num_threads (int): ferrograd's thread count while timing (default
            1, torch's default too).
        language (Language or str): ``"python"`` (``"py"``,
            ``Language.PYTHON``); C++ is not available.

    Raises:
        ValueError: ``stmt`` is not a string, ``global_setup`` is given, or
            the language is not Python.

    Example:
        >>> calls = []
        >>> t = Timer("f()", globals={"f": lambda: calls.append(1)})
        >>> m = t.timeit(200)
        >>> len(calls)  # 2 warm-up runs, then 200 timed ones
        202
        >>> m.number_per_run, len(m.raw_times)
        (200, 1)
        >>> Timer("torch.ones(3).sum()").timeit(100)  # doctest: +SKIP
        <ferrograd.utils.benchmark.utils.common.Measurement object at 0x7f...>
        torch.ones(3).sum()
          1.52 us
          1 measurement, 100 runs , 1 thread
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = _timeit_module.default_timer,
        globals: dict[str, Any] | None = None,
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Language | str = Language.PYTHON,
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError(f"Timer times a statement given as a str, got {type(stmt).__name__}.")
        if language in (Language.CPP, "cpp", "c++"):
            raise ValueError("C++ timing (language='cpp') is not supported by ferrograd; time Python code.")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`; put this code in `setup` instead."
            )
        import ferrograd

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", ferrograd)
        self._language = Language.PYTHON
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = _timeit_module.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        # One block: setup, then `number` runs; never reported as 0 seconds.
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Runs ``stmt`` ``number`` times in one block, as
        :meth:`timeit.Timer.timeit` does, after a warm-up block of
        ``max(number // 100, 2)`` runs.

        Args:
            number (int): how many times to run ``stmt``.

        Returns:
            Measurement: one raw time, for ``number`` runs.

        Example:
            >>> m = Timer("x * 2", globals={"x": 3}).timeit(1000)
            >>> m.number_per_run, len(m.times)
            (1000, 1)
        """
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(int(number // 100), 2))
            raw = self._timeit(number)
        return common.Measurement(number_per_run=number, raw_times=[raw], task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Raises ``NotImplementedError``, as torch's ``Timer.repeat`` does:
        :meth:`blocked_autorange` measures replicates instead."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], NoReturn] | None = None) -> None:
        """Raises ``NotImplementedError``, as torch's ``Timer.autorange``
        does: see :meth:`blocked_autorange`."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(
        self,
        number: int,
        stop: Callable[[list[float]], bool],
        min_run_time: float,
        max_run_time: float | None = None,
        callback: Callable[[int, float], Any] | None = None,
    ) -> list[float]:
        # Blocks of `number` runs until `min_run_time` is spent and `stop`
        # agrees, or `max_run_time` is passed.
        total = 0.0
        times: list[float] = []
        done = False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not done:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                done = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        # The smallest power of ten of runs whose block takes at least
        # min_run_time / 1000 with the timer's own overhead under 0.01% of
        # it (or that takes over min_run_time by itself).
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(
        self,
        callback: Callable[[int, float], Any] | None = None,
        min_run_time: float = 0.2,
    ) -> common.Measurement:
        """Times blocks of runs until ``min_run_time`` seconds are spent.

        The block size is found first: the number of runs (a power of ten)
        grows until a block takes at least ``min_run_time / 1000`` and the
        timer's own overhead is at most 0.01% of it. Then blocks of that
        size run, ``setup`` before each, until their total time reaches
        ``min_run_time``; each block's time is one raw time.

        Args:
            callback (Callable[[int, float], None], optional): called after
                each block with its number of runs and its time.
            min_run_time (float): the total time of the measured blocks, in
                seconds.

        Returns:
            Measurement: one raw time per block.

        Example:
            >>> m = Timer("sum(range(100))").blocked_autorange(min_run_time=0.01)
            >>> sum(m.raw_times) >= 0.01
            True
            >>> m  # doctest: +SKIP
            <ferrograd.utils.benchmark.utils.common.Measurement object at 0x7f...>
            sum(range(100))
              Median: 531.94 ns
              IQR:    3.27 ns (530.37 to 533.64)
              19 measurements, 1000 runs per measurement, 1 thread
        """
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda _: True, min_run_time=min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> common.Measurement:
        """Like :meth:`blocked_autorange`, but keeps timing blocks until the
        times are steady: at least 4 blocks, ``min_run_time`` spent and
        ``iqr / median`` below ``threshold``, or ``max_run_time`` passed.

        The block size is chosen as :meth:`blocked_autorange` chooses it
        for a ``min_run_time`` of 0.05 s.

        Args:
            threshold (float): the ``iqr / median`` to reach.
            min_run_time (float): the least total time, in seconds.
            max_run_time (float): the most total time, in seconds.
            callback (Callable[[int, float], None], optional): called after
                each block with its number of runs and its time.

        Returns:
            Measurement: one raw time per block.

        Example:
            >>> m = Timer("sum(range(100))").adaptive_autorange(max_run_time=0.2)
            >>> len(m.raw_times) >= 4 or sum(m.raw_times) > 0.2
            True
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def steady(times: list[float]) -> bool:
            if len(times) <= 3:
                return False
            m = common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
            return m.meets_confidence(threshold=threshold)

        times = self._measurement_loop(number, steady, min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(
        self,
        number: int = 100,
        *,
        repeats: int | None = None,
        collect_baseline: bool = True,
        retain_out_file: bool = False,
    ) -> Any:
        """Raises ``OSError`` (the error torch raises where Valgrind cannot
        run): ferrograd does not collect Callgrind instruction counts.

        Raises:
            OSError: always.
        """
        raise OSError(
            "Valgrind is not supported by ferrograd: Timer.collect_callgrind is unavailable; "
            "use blocked_autorange or adaptive_autorange for wall times."
        )
