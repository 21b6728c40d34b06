"""The autograd profiler (torch.autograd.profiler's API).

``with profile() as prof:`` records every op the block runs on the calling
thread (named as torch's aten ops), every backward node the engine runs on
its behalf (on whichever pool thread runs it) and every
``record_function`` range; ``prof.key_averages().table()`` summarises
them and ``prof.export_chrome_trace(path)`` writes a timeline.

Leaving the block only stops the recorder: the Python objects describing
the events are built the first time a result is asked for, so the block's
own cost stays close to that of the recorded ops.

ferrograd runs on the CPU only: device options are accepted, warned about
and ignored, and :class:`emit_nvtx` / :class:`emit_itt` annotate nothing
outside ferrograd's own recorder.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import uuid
import warnings
from collections import defaultdict
from collections.abc import Callable
from contextlib import ContextDecorator
from typing import Any, Literal

from .. import _core
from ..utils import _docs
from .profiler_util import (
    _SCOPE_BACKWARD_FUNCTION,
    _SCOPE_FUNCTION,
    _SCOPE_USER,
    MEMORY_EVENT_NAME,
    EventList,
    FunctionEvent,
    MemRecordsAcc,
    StringTable,
    _rewrite_name,
)
from .profiler_util import DeviceType as DeviceType

__all__ = [
    "profile",
    "record_function",
    "emit_itt",
    "emit_nvtx",
    "load_nvprof",
    "EnforceUnique",
    "parse_nvprof_trace",
    "KinetoStepTracker",
    "EventList",
    "FunctionEvent",
    "MemRecordsAcc",
]

_DEVICE_OPTIONS = ("cuda", "xpu", "mtia", "hpu")


class profile:
    """Context manager that records ops, backward nodes and
    ``record_function`` ranges, and holds the results.

    Args:
        enabled (bool): ``False`` makes the context manager a no-op (``with
            profile(enabled=False) as p`` binds ``p`` to ``None``).
            Default: ``True``.

    Keyword args:
        use_cuda (bool): accepted for torch compatibility (deprecated
            there); ``True`` warns and is ignored. Default: ``False``.
        use_device (str, optional): accepted for torch compatibility;
            ferrograd has no device, so a device other than ``"cpu"`` is
            warned about and ignored. Default: ``None``.
        record_shapes (bool): record each op's input shapes and dtypes.
            Default: ``False``.
        with_flops (bool): estimate the FLOPs of matrix products and
            elementwise ``mul``/``add`` from their input shapes (implies
            ``record_shapes``). Default: ``False``.
        profile_memory (bool): record tensor allocations and frees; each
            event's ``cpu_memory_usage`` is the bytes allocated minus freed
            while it ran. Default: ``False``.
        with_stack (bool): record the Python frames calling each op.
            Default: ``False``.
        with_modules (bool): accepted for torch compatibility.
            Default: ``False``.
        use_kineto (bool): accepted for torch compatibility.
            Default: ``False``.
        use_cpu (bool): must stay ``True`` (ferrograd records CPU work
            only). Default: ``True``.
        experimental_config: accepted for torch compatibility.
            Default: ``None``.
        acc_events (bool): keep the events of earlier runs of this profile.
            Default: ``False``.
        custom_trace_id_callback (callable, optional): returns the trace id
            of each run (a random hex string by default).

    Only the thread that entered the profile is recorded, with the backward
    work the engine runs for it on its pool threads; other Python threads
    are not recorded. One profile runs at a time per process: starting a
    second raises ``RuntimeError``. :class:`ferrograd.profiler.profile` is
    the newer interface, with schedules and trace handlers.

    Example:
        >>> x = ferrograd.ones(3, requires_grad=True)
        >>> with profile() as prof:
        ...     with record_function("loss"):
        ...         y = (x * 2).sum()
        ...     y.backward()
        >>> [e.name for e in prof.function_events][:4]
        ['loss', 'aten::mul', 'aten::_to_copy', 'aten::sum']
        >>> "MulBackward0" in {e.key for e in prof.key_averages()}
        True
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
        experimental_config: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Any = None,
    ) -> None:
        self.enabled = enabled
        self._function_events: EventList | None = None
        self._old_function_events: EventList | None = None
        self._needs_processing = False
        self._result: Any = None
        self.entered = False
        self.use_device: str | None = None
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.acc_events = acc_events
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn(
                "The attribute `use_cuda` will be deprecated soon, "
                "please use ``use_device = 'cuda'`` instead.",
                FutureWarning,
                stacklevel=2,
            )
            use_device = "cuda"
        self.use_device = _checked_device(use_device)
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.experimental_config = experimental_config
        self.custom_trace_id_callback = custom_trace_id_callback
        self.trace_id = ""
        if not use_cpu:
            if not use_kineto:
                raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
            raise AssertionError(
                "No activities specified for the profiler (ferrograd records CPU activity only)"
            )

    def default_trace_id(self) -> str:
        """A new random trace id (32 hex digits)."""
        return f"{uuid.uuid4().int:032X}"

    def create_trace_id(self) -> str:
        """The trace id of a new run: ``custom_trace_id_callback()`` when
        given, else :meth:`default_trace_id`."""
        if self.custom_trace_id_callback:
            return self.custom_trace_id_callback()
        return self.default_trace_id()

    # Typed for an enabled profile: a disabled one (enabled=False) gives
    # None, as torch's does.
    def __enter__(self) -> profile:
        if not self.enabled:
            return None  # type: ignore[return-value]
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def _prepare_trace(self) -> None:
        self.entered = True
        self.trace_id = self.create_trace_id()

    def _start_trace(self) -> None:
        self.entered = True
        _core._profiler_start(self.record_shapes, self.profile_memory, self.with_stack)

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> Literal[False]:
        if not self.enabled:
            return False
        if self._function_events is not None and self.acc_events:
            self._old_function_events = self._function_events
        self._function_events = None
        self._result = _core._profiler_stop()
        self._needs_processing = True
        if self.acc_events:
            self._ensure_function_events()
        return False

    def __repr__(self) -> str:
        return self._describe(repr)

    def __str__(self) -> str:
        return self._describe(str)

    def _describe(self, text: Callable[[EventList], str]) -> str:
        """``repr`` or ``str`` of the events, once the profile has finished."""
        if self._needs_processing:
            self._ensure_function_events()
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return text(self._function_events)

    def _ensure_function_events(self) -> None:
        """Builds the events of the last run (once)."""
        if self._function_events is not None and not self._needs_processing:
            return
        self._needs_processing = False
        if self._result is None:
            events = EventList(
                use_device=self.use_device,
                profile_memory=self.profile_memory,
                with_flops=self.with_flops,
            )
        else:
            events = _events_from_result(
                self._result,
                use_device=self.use_device,
                profile_memory=self.profile_memory,
                with_flops=self.with_flops,
            )
        if self._old_function_events is not None and self.acc_events:
            events.extend(self._old_function_events)
            events._memory_records.extend(self._old_function_events._memory_records)
            for tid, name in self._old_function_events._thread_names.items():
                events._thread_names.setdefault(tid, name)
            self._old_function_events = None
        self._function_events = events

    def _events(self) -> EventList:
        self._ensure_function_events()
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events

    @property
    def function_events(self) -> EventList:  # None for a disabled profile, as in torch
        """Every recorded event (an :class:`EventList`); ``None`` for a
        disabled profile."""
        if not self.enabled:
            return None  # type: ignore[return-value]
        if self._function_events is None or self._needs_processing:
            self._ensure_function_events()
        return self._function_events

    def events(self) -> EventList:
        """Same as :attr:`function_events`."""
        return self.function_events

    def table(
        self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
        max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:  # fmt: skip
        """Formats the events as a text table; see :meth:`EventList.table`
        for the arguments.

        Returns:
            str: the table.
        """
        return self._events().table(
            sort_by, row_limit, max_src_column_width, max_name_column_width, max_shapes_column_width, header,
            top_level_events_only,
        )

    def export_chrome_trace(
        self, path: str, metadata: dict[str, str] | None = None, use_python_export: bool = False
    ) -> None:
        """Writes the events as a Chrome trace (JSON, viewable in
        ``chrome://tracing`` or Perfetto); see
        :meth:`EventList.export_chrome_trace`.

        Args:
            path (str): the file to write.
            metadata (dict, optional): top-level keys of the trace mapped to
                JSON text. Default: ``None``.
            use_python_export (bool): chooses between torch's two writers;
                ferrograd has one, so it is ignored. Default: ``False``.
        """
        with self._events()._extra_trace_metadata(metadata or {}) as events:
            events.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes the recorded stacks in collapsed form, for flame graphs
        (see :meth:`EventList.export_stacks`); needs ``with_stack=True``.

        Args:
            path (str): the file to write.
            metric (str): the time to weigh each stack by.
                Default: ``"self_cpu_time_total"``.
        """
        events = self._events()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        events.export_stacks(path, metric)

    def key_averages(
        self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:  # fmt: skip
        """Groups the events by name and averages them; see
        :meth:`EventList.key_averages`.

        Args:
            group_by_input_shape (bool): also group by input shapes (needs
                ``record_shapes=True``). Default: ``False``.
            group_by_stack_n (int): also group by the top ``n`` stack
                frames (needs ``with_stack=True``). Default: ``0``.
            group_by_overload_name (bool): also group by overload name.
                Default: ``False``.

        Returns:
            EventList: one :class:`FunctionEventAvg` per group.
        """
        return self._events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self) -> Any:
        """The sum of all events, as one :class:`FunctionEventAvg`."""
        return self._events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self CPU time (us)."""
        return self._events().self_cpu_time_total


def _checked_device(use_device: str | None) -> str | None:
    """``None``: the CPU is always profiled and there is no other device."""
    if use_device is None or use_device == "cpu":
        return None
    if use_device in _DEVICE_OPTIONS:
        name = use_device.upper()
        warnings.warn(f"{name} is not available, disabling {name} profiling", stacklevel=3)
    else:
        warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=3)
    return None


# --- from recorded rows to FunctionEvents -------------------------------------

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_frame_kept: dict[str, bool] = {}


def _keep_frame(entry: str) -> bool:
    """Whether a stack entry (``path/file.py(12): func``) is the caller's
    code rather than ferrograd's own Python layer."""
    kept = _frame_kept.get(entry)
    if kept is None:
        path = entry.rpartition("): ")[0].rpartition("(")[0] or entry
        if not path.startswith("<"):
            path = os.path.abspath(path)
        kept = _frame_kept[entry] = not path.startswith(_PACKAGE_DIR)
    return kept


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _estimate_flops(name: str, shapes: list[list[int]]) -> int:
    """Floating point operations of matrix products (2 per multiply-add)
    and of elementwise ``mul``/``add`` (one per element), from input shapes."""
    try:
        if name == "aten::mm" and len(shapes[0]) == 2 and len(shapes[1]) == 2:
            (m, k), (_, n) = shapes[0], shapes[1]
            return 2 * m * k * n
        if name == "aten::addmm" and len(shapes[1]) == 2 and len(shapes[2]) == 2:
            (m, k), (_, n) = shapes[1], shapes[2]
            return 2 * m * k * n
        if name == "aten::bmm" and len(shapes[0]) == 3 and len(shapes[1]) == 3:
            (b, m, k), (_, _, n) = shapes[0], shapes[1]
            return 2 * b * m * k * n
        if name == "aten::baddbmm" and len(shapes[1]) == 3 and len(shapes[2]) == 3:
            (b, m, k), (_, _, n) = shapes[1], shapes[2]
            return 2 * b * m * k * n
        if name in ("aten::mul", "aten::add") and shapes:
            return _numel(shapes[0])
    except (IndexError, ValueError):
        return 0
    return 0


def _events_from_result(
    result: Any, *, use_device: str | None, profile_memory: bool, with_flops: bool
) -> EventList:
    """One FunctionEvent per recorded span (and per memory record outside
    every span), linked to their parents, ordered by start time."""
    # Building many objects that live on would trigger the cyclic garbage
    # collector over and over (each pass walking every event built so far):
    # it is paused meanwhile, which makes the build several times faster.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _build_events(result, use_device, profile_memory, with_flops)
    finally:
        if paused:
            gc.enable()


def _build_events(result: Any, use_device: str | None, profile_memory: bool, with_flops: bool) -> EventList:
    rows = result.events()
    base = result.trace_start_ns()
    events = EventList(use_device=use_device, profile_memory=profile_memory, with_flops=with_flops)
    events._thread_names = dict(result.threads())
    by_row: list[FunctionEvent | None] = [None] * len(rows)
    loose_memory: list[tuple[int, int, int]] = []
    memory = events._memory_records
    scopes = {"backward": _SCOPE_BACKWARD_FUNCTION, "user": _SCOPE_USER}
    keep = _keep_frame
    recorded = FunctionEvent._recorded
    next_id = 0
    for i, row in enumerate(rows):
        name, kind, start, end, thread = row.name, row.kind, row.start_ns, row.end_ns, row.thread
        seq, fwd, stack, nbytes, parent = row.sequence_nr, row.fwd_thread, row.stack, row.bytes, row.parent
        shapes, dtypes = row.input_shapes, row.input_dtypes
        if kind == "memory":
            memory.append(((start - base) / 1000.0, thread, nbytes))
            if parent < 0:
                loose_memory.append((start, thread, nbytes))
            continue
        next_id += 1
        if stack:
            stack = [frame for frame in stack if keep(frame)]
        event = recorded(
            next_id,
            _rewrite_name(name, with_wildcard=True),
            name,
            thread,
            (start - base) / 1000.0,
            (end - base) / 1000.0,
            fwd,
            [] if shapes is None else shapes,
            dtypes,
            [] if stack is None else stack,
            scopes.get(kind, _SCOPE_FUNCTION),
            use_device,
            row.cpu_memory_usage,
            seq,
            _estimate_flops(name, shapes) if with_flops and shapes else 0,
            kind == "user",
        )
        if parent >= 0:
            up = by_row[parent]
            if up is not None:
                up.cpu_children.append(event)
                event.cpu_parent = up
        by_row[i] = event
    ordered: list[FunctionEvent] = [e for e in by_row if e is not None]
    for start, thread, nbytes in loose_memory:
        next_id += 1
        at = (start - base) / 1000.0
        ordered.append(
            FunctionEvent(
                next_id,
                MEMORY_EVENT_NAME,
                thread,
                at,
                at,
                fwd_thread=thread,
                input_shapes=[],
                stack=[],
                use_device=use_device,
                cpu_memory_usage=nbytes,
            )
        )
    ordered.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
    events.extend(ordered)
    events._links_known = True
    events._build_tree()
    return events


# --- record_function -----------------------------------------------------------


class record_function(ContextDecorator):
    """Context manager and decorator that labels a block of code (or every
    call of a function) in the profile: the range shows as an event named
    ``name`` enclosing the ops it ran. Costs one check when no profiler is
    recording.

    Args:
        name (str): the label of the range.
        args (str, optional): extra text recorded with the range.
            Default: ``None``.

    Example:
        >>> x = ferrograd.ones(3)
        >>> with profile() as prof:
        ...     with record_function("square"):
        ...         y = x * x
        >>> [e.name for e in prof.function_events]
        ['square', 'aten::mul']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record: Any = None

    def _recreate_cm(self) -> record_function:
        # A decorated function gets a fresh range per call, so recursive or
        # concurrent calls each close their own.
        return record_function(self.name, self.args)

    def __enter__(self) -> record_function:
        self.record = _core._record_function_enter(self.name)
        return self

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        if not self.run_callbacks_on_exit:
            return
        record = self.record
        if record is None:
            raise AssertionError("record_function exited without being entered")
        record.end()

    def _call_end_callbacks_on_future(self, fut: Any) -> Any:
        """For a range around an asynchronous call: closes the range (the
        recorder's ranges belong to the thread that opened them, so it ends
        now rather than when ``fut`` completes) and returns ``fut``."""
        if not self.run_callbacks_on_exit:
            raise RuntimeError("_call_end_callbacks_on_future can only be called once.")
        self.run_callbacks_on_exit = False
        record = self.record
        if record is None:
            raise AssertionError("record_function must be entered before _call_end_callbacks_on_future")
        record.end()
        return fut


# --- emit_nvtx / emit_itt ------------------------------------------------------

_annotation_warned: set[str] = set()


# The arguments of emit_nvtx and emit_itt, described once: a docstring line
# ``{external_annotation_args}`` stands for them.
_with_doc_pieces = _docs.with_doc_pieces(
    {
        "external_annotation_args": """\
Args:
    enabled (bool): ``False`` makes the block a plain no-op (no
        warning). Default: ``True``.
    record_shapes (bool): accepted for compatibility. Default: ``False``.""",
    }
)


class _ExternalAnnotations:
    _tool = ""
    _label = ""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._label} annotation context manager is not reentrant")
        self.entered = True
        if self._tool not in _annotation_warned:
            _annotation_warned.add(self._tool)
            warnings.warn(
                f"ferrograd does not use {self._tool}: {type(self).__name__} emits no {self._label} "
                "ranges; ops and record_function ranges are recorded only by ferrograd's own "
                "profiler (torch.autograd.profiler.profile / torch.profiler.profile)",
                UserWarning,
                stacklevel=2,
            )
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> Literal[False]:
        self.entered = False
        return False


@_with_doc_pieces
class emit_nvtx(_ExternalAnnotations):
    """Accepted for torch compatibility: torch wraps each op in an NVTX
    range for nvprof / Nsight; ferrograd has no NVTX library, so the block
    runs normally and entering warns once.

    {external_annotation_args}
    """

    _tool = "NVTX"
    _label = "NVTX"


@_with_doc_pieces
class emit_itt(_ExternalAnnotations):
    """Accepted for torch compatibility: torch wraps each op in an ITT range
    for Intel VTune; ferrograd has no ITT library, so the block runs
    normally and entering warns once.

    {external_annotation_args}
    """

    _tool = "ITT"
    _label = "ITT"


# --- nvprof databases ---------------------------------------------------------


class EnforceUnique:
    """A set of keys that raises ``RuntimeError`` when a key is seen twice
    (used when reading trace databases).

    Example:
        >>> seen = EnforceUnique()
        >>> seen.see(1, "a")
        >>> seen.see(1, "a")
        Traceback (most recent call last):
          ...
        RuntimeError: duplicate key: (1, 'a')
    """

    def __init__(self) -> None:
        self.seen: set[tuple[Any, ...]] = set()

    def see(self, *key: Any) -> None:
        """Records ``key``; raises ``RuntimeError`` if it was seen before."""
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


def load_nvprof(path: str) -> EventList:
    """Reads the marker ranges of an nvprof trace database into an
    :class:`EventList` (see :func:`parse_nvprof_trace`).

    Args:
        path (str): the SQLite file nvprof wrote.
    """
    return EventList(parse_nvprof_trace(path))


_CUDA_LAUNCH_KERNEL_CBID = 211


def parse_nvprof_trace(path: str) -> list[FunctionEvent]:
    """Reads an nvprof SQLite database: one FunctionEvent per marker range
    (a start marker with a name and the end marker of the same id), with the
    kernels launched inside it attached; sorted by start time. Times are
    the database's timestamps as stored.

    Args:
        path (str): the SQLite file nvprof wrote.

    Returns:
        list of FunctionEvent: the ranges.
    """
    conn = sqlite3.connect(path)
    try:
        conn.row_factory = sqlite3.Row
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        names = StringTable()
        strings: dict[int, str] = {}
        for r in conn.execute("SELECT _id_ AS id, value FROM StringTable"):
            strings[r["id"]] = names[r["value"]]

        ranges: dict[int, FunctionEvent] = {}
        unique = EnforceUnique()
        marker_ranges = (
            "SELECT opening.id AS marker_id, opening.name AS name, "
            "opening.timestamp AS start_time, closing.timestamp AS end_time "
            "FROM CUPTI_ACTIVITY_KIND_MARKER AS opening "
            "JOIN CUPTI_ACTIVITY_KIND_MARKER AS closing ON opening.id = closing.id "
            "WHERE opening.name != 0 AND closing.name = 0"
        )
        for r in conn.execute(marker_ranges):
            unique.see(r["marker_id"])
            ranges[r["marker_id"]] = FunctionEvent(
                id=r["marker_id"],
                node_id=0,
                name=strings[r["name"]],
                start_us=r["start_time"],
                end_us=r["end_time"],
                thread=0,
            )

        kernel_tables = [
            t for t in ("CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL", "CUPTI_ACTIVITY_KIND_KERNEL") if t in tables
        ]
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
            unique = EnforceUnique()
            for table in kernel_tables:
                launches = (
                    "SELECT opening.id AS marker_id, runtime._id_ AS runtime_id, runtime.cbid AS cbid, "
                    "kernel.start AS kernel_start, kernel.end AS kernel_end, kernel.name AS kernel_name "
                    "FROM CUPTI_ACTIVITY_KIND_MARKER AS opening "
                    "JOIN CUPTI_ACTIVITY_KIND_MARKER AS closing ON opening.id = closing.id "
                    "JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS runtime "
                    "ON opening.timestamp < runtime.start AND runtime.end < closing.timestamp "
                    f"JOIN {table} AS kernel ON kernel.correlationId = runtime.correlationId "
                    "WHERE opening.name != 0 AND closing.name = 0"
                )
                for r in conn.execute(launches):
                    unique.see(r["marker_id"], r["runtime_id"])
                    if r["cbid"] != _CUDA_LAUNCH_KERNEL_CBID:
                        raise AssertionError(
                            f"runtime call {r['runtime_id']} launched a kernel with callback id "
                            f"{r['cbid']}, expected {_CUDA_LAUNCH_KERNEL_CBID} (cudaLaunchKernel)"
                        )
                    kernel_name = r["kernel_name"]
                    if isinstance(kernel_name, int):
                        kernel_name = strings.get(kernel_name, str(kernel_name))
                    ranges[r["marker_id"]].append_kernel(kernel_name, 0, r["kernel_end"] - r["kernel_start"])
    finally:
        conn.close()
    return sorted(ranges.values(), key=lambda e: e.time_range.start)


# --- steps ---------------------------------------------------------------------


class KinetoStepTracker:
    """The global step count of profiler steps and optimizer steps.

    Each requester (``"ProfilerStep"``, an optimizer) counts its own steps;
    the global step is the largest count, so two requesters stepping once
    per iteration advance it once."""

    _current_step = 0
    _step_dict: dict[str, int] = defaultdict(int)

    @classmethod
    def init_step_count(cls, requester: str) -> None:
        """Starts counting for ``requester`` at the current global step."""
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester: str) -> bool:
        """Stops counting for ``requester``; whether it was counted."""
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester: str) -> int:
        """Counts one step of ``requester``; returns the global step."""
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new_step = max(cls._step_dict.values())
        if new_step > cls._current_step:
            if new_step - cls._current_step > 1:
                warnings.warn(
                    "Profiler step count has increased more than 1 - "
                    f"current_step = {cls._current_step} step dict =  {dict(cls._step_dict)}",
                    stacklevel=2,
                )
            cls._current_step = new_step
        return cls._current_step

    @classmethod
    def current_step(cls) -> int:
        """The global step."""
        return cls._current_step
