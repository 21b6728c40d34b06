"""The profiler's event containers (torch.autograd.profiler_util's API).

A profile is an :class:`EventList` of :class:`FunctionEvent` objects, one
per recorded span (an op call, a backward node run, a ``record_function``
range). ``EventList.key_averages()`` groups them into
:class:`FunctionEventAvg` rows; ``table()`` prints them as torch does;
``export_chrome_trace()`` writes a Trace Event Format file for
``chrome://tracing`` or Perfetto; ``export_stacks()`` writes collapsed
stacks for flame graphs.

Times are microseconds (floats) from the start of the profile. ferrograd
runs on the CPU only, so every device time and device memory figure is 0.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import warnings
from collections import defaultdict, namedtuple
from collections.abc import Iterator, Sequence
from enum import Enum
from typing import Any

from ._profiler_format import _build_table, _format_time, _write_chrome_trace
from ._profiler_format import _format_memory as _format_memory
from ._profiler_format import _format_time_share as _format_time_share

__all__ = [
    "DeviceType",
    "EventList",
    "FormattedTimesMixin",
    "Interval",
    "Kernel",
    "FunctionEvent",
    "FunctionEventAvg",
    "StringTable",
    "MemRecordsAcc",
]


class DeviceType(Enum):
    """The device an event ran on (torch.autograd.DeviceType's values)."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


# RecordScope values the events use (torch's at::RecordScope).
_SCOPE_FUNCTION = 0
_SCOPE_BACKWARD_FUNCTION = 1
_SCOPE_USER = 7

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"
_EVALUATE_PREFIX = "autograd::engine::evaluate_function: "


def _time_str(attr: str) -> property:
    return property(lambda self: _format_time(getattr(self, attr)))


def _deprecated_alias(old: str, new: str) -> property:
    """A read-only property ``old`` that warns (FutureWarning, as torch
    does) and returns ``new``."""

    def get(self: Any) -> Any:
        warnings.warn(f"`{old}` is deprecated. Use `{new}` instead.", FutureWarning, stacklevel=2)
        return getattr(self, new)

    return property(get)


class FormattedTimesMixin:
    """Time properties shared by :class:`FunctionEvent` and
    :class:`FunctionEventAvg`: per-call averages and their formatted
    strings. The class provides ``count`` and the ``*_time_total`` values."""

    cpu_time_str = _time_str("cpu_time")
    device_time_str = _time_str("device_time")
    cpu_time_total_str = _time_str("cpu_time_total")
    device_time_total_str = _time_str("device_time_total")
    self_cpu_time_total_str = _time_str("self_cpu_time_total")
    self_device_time_total_str = _time_str("self_device_time_total")

    @property
    def cpu_time(self) -> float:
        """The average CPU time of one call (us)."""
        count = self.count  # type: ignore[attr-defined]
        return 0.0 if count == 0 else self.cpu_time_total / count  # type: ignore[attr-defined]

    @property
    def device_time(self) -> float:
        """The average device time of one call (us): 0 on the CPU."""
        count = self.count  # type: ignore[attr-defined]
        return 0.0 if count == 0 else self.device_time_total / count  # type: ignore[attr-defined]

    cuda_time = _deprecated_alias("cuda_time", "device_time")


class Interval:
    """A time range in microseconds.

    Args:
        start (float): the start (us).
        end (float): the end (us).
    """

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        """The length of the range (us)."""
        return self.end - self.start

    def __repr__(self) -> str:
        return f"Interval(start={self.start}, end={self.end})"


Kernel = namedtuple("Kernel", ["name", "device", "duration"])
Kernel.__doc__ = """A device kernel launched by a CPU event.

Args:
    name (str): the kernel's name.
    device (int): the device index.
    duration (float): its run time (us).
"""


class FunctionEvent(FormattedTimesMixin):
    """One recorded span: an op call, a backward node run or a user range.

    ``time_range`` is in microseconds from the start of the profile;
    ``thread`` is the profiler's small id of the thread that ran it (the
    thread names are in the Chrome trace); ``cpu_parent`` / ``cpu_children``
    are the enclosing span and the directly enclosed spans on that thread.
    ``sequence_nr`` links a forward op with the backward node it recorded:
    the node's events carry the same number and, in ``fwd_thread``, the id
    of the thread that ran the forward op. ``scope`` is 1 for a backward
    node's own event (``MulBackward0``), 7 for ``record_function`` ranges
    and 0 otherwise. ``input_shapes`` / ``input_dtypes`` come with
    ``record_shapes``, ``stack`` (innermost frame first) with ``with_stack``,
    ``cpu_memory_usage`` with ``profile_memory``.

    Made by the profiler; the constructor is public for tools that build
    events from other traces.

    Args:
        id (int): the event's id.
        name (str): the op, node or range name.
        thread (int): the profiler's id of the thread that ran it.
        start_us (float): the start, in microseconds from the profile's start.
        end_us (float): the end, in microseconds.
        overload_name (str, optional): the op's overload name.
        fwd_thread (int, optional): for a backward node's event, the thread
            that ran the forward op.
        input_shapes (list, optional): the inputs' shapes (``record_shapes``).
        stack (list of str, optional): the Python frames, innermost first
            (``with_stack``).
        scope (int): 1 for a backward node's own event, 7 for a
            ``record_function`` range, 0 otherwise.
        use_device (str, optional): the profiled device, if any.
        cpu_memory_usage (int): bytes allocated minus freed while it ran.
        device_memory_usage (int): the same on the device (0 here).
        is_async (bool): the span may end on another thread.
        is_remote (bool): recorded on another process.
        sequence_nr (int): links a forward op with its backward node (-1: none).
        node_id (int): the node of a distributed run (-1: none).
        device_type (DeviceType): where it ran (``DeviceType.CPU``).
        device_index (int): the device's index.
        device_resource_id (int, optional): the stream or thread on the device.
        is_legacy (bool): made by the legacy profiler.
        flops (int, optional): the estimated floating-point operations
            (``with_flops``).
        trace_name (str, optional): the name used in traces.
        concrete_inputs (list, optional): the scalar inputs' values.
        kwinputs (dict, optional): the keyword inputs.
        is_user_annotation (bool): a ``record_function`` range.
        is_python_function (bool): a Python function's span.
        input_dtypes (list of str, optional): the inputs' dtypes
            (``record_shapes``).
        **extra: other fields, stored as attributes of the same name.
    """

    # Defaults shared by every instance; the constructor stores a field on
    # the instance only when it differs, which keeps building one event per
    # recorded span cheap.
    count = 1
    node_id = -1
    overload_name = ""
    concrete_inputs: list[Any] | None = None
    kwinputs: dict[str, Any] | None = None
    device_memory_usage = 0
    is_async = False
    is_remote = False
    device_type = DeviceType.CPU
    device_index = 0
    is_legacy = False
    is_python_function = False
    activity_type: str | None = None
    self_cpu_percent: Any = -1
    total_cpu_percent: Any = -1
    total_device_percent: Any = -1
    external_id = 0
    linked_correlation_id = 0
    flow_id: int | None = None
    flow_type: int | None = None
    flow_start: bool | None = None
    metadata_json: str | None = None
    python_id = -1
    python_parent_id = -1
    python_module_id = -1
    structured_input_shapes: list[Any] | None = None
    structured_input_strides: list[Any] | None = None

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_us: float,
        end_us: float,
        overload_name: str | None = None,
        fwd_thread: int | None = None,
        input_shapes: list[list[int]] | None = None,
        stack: list[str] | None = None,
        scope: int = 0,
        use_device: str | None = None,
        cpu_memory_usage: int = 0,
        device_memory_usage: int = 0,
        is_async: bool = False,
        is_remote: bool = False,
        sequence_nr: int = -1,
        node_id: int = -1,
        device_type: DeviceType = DeviceType.CPU,
        device_index: int = 0,
        device_resource_id: int | None = None,
        is_legacy: bool = False,
        flops: int | None = None,
        trace_name: str | None = None,
        concrete_inputs: list[Any] | None = None,
        kwinputs: dict[str, Any] | None = None,
        is_user_annotation: bool = False,
        is_python_function: bool = False,
        input_dtypes: list[str] | None = None,
        **extra: Any,
    ) -> None:
        self._set_fields(id, name, trace_name, thread, start_us, end_us, fwd_thread, input_shapes,
                         input_dtypes, stack, scope, use_device, cpu_memory_usage, sequence_nr, flops,
                         is_user_annotation)
        if device_resource_id is not None:
            self.device_resource_id = device_resource_id
        if overload_name is not None:
            self.overload_name = overload_name
        if node_id != -1:
            self.node_id = node_id
        if device_memory_usage:
            self.device_memory_usage = device_memory_usage
        if is_async:
            self.is_async = True
        if is_remote:
            self.is_remote = True
        if device_type is not DeviceType.CPU:
            self.device_type = device_type
        if device_index:
            self.device_index = device_index
        if is_legacy:
            self.is_legacy = True
        if concrete_inputs is not None:
            self.concrete_inputs = concrete_inputs
        if kwinputs is not None:
            self.kwinputs = kwinputs
        if is_python_function:
            self.is_python_function = True
        for key, value in extra.items():
            setattr(self, key, value)

    @classmethod
    def _recorded(cls, *fields: Any) -> FunctionEvent:
        """An event of a profile: the constructor's work without its keyword
        handling (one of these is built per recorded span). ``fields`` are
        :meth:`_set_fields`' arguments, in its order."""
        e = cls.__new__(cls)
        e._set_fields(*fields)
        return e

    def _set_fields(
        self,
        id: int,
        name: str,
        trace_name: str | None,
        thread: int,
        start_us: float,
        end_us: float,
        fwd_thread: int | None,
        input_shapes: list[list[int]] | None,
        input_dtypes: list[str] | None,
        stack: list[str] | None,
        scope: int,
        use_device: str | None,
        cpu_memory_usage: int,
        sequence_nr: int,
        flops: int | None,
        is_user_annotation: bool,
    ) -> None:
        """The fields every event has (the others are set only when they differ from
        the class defaults); ``device_resource_id`` starts as ``thread``."""
        self.id = id
        self.name = name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list[Kernel] = []
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes
        self.input_dtypes = input_dtypes
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.sequence_nr = sequence_nr
        self.device_resource_id = thread
        self.flops = flops
        self.is_user_annotation = is_user_annotation

    def append_kernel(self, name: str, device: int, duration: float) -> None:
        """Attaches a device kernel this CPU event launched."""
        if self.device_type != DeviceType.CPU:
            raise AssertionError("kernels attach to CPU events only")
        self.kernels.append(Kernel(name, device, duration))

    def append_cpu_child(self, child: FunctionEvent) -> None:
        """Adds a direct child (a span this one directly encloses)."""
        if not isinstance(child, FunctionEvent):
            raise AssertionError(f"a CPU child must be a FunctionEvent, got {type(child).__name__}")
        if self.device_type != DeviceType.CPU or child.device_type != DeviceType.CPU:
            raise AssertionError("CPU children link CPU events only")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        """Sets the innermost span enclosing this one."""
        if not isinstance(parent, FunctionEvent):
            raise AssertionError(f"a CPU parent must be a FunctionEvent, got {type(parent).__name__}")
        if self.device_type != DeviceType.CPU or parent.device_type != DeviceType.CPU:
            raise AssertionError("CPU parents link CPU events only")
        self.cpu_parent = parent

    @property
    def cpu_time_total(self) -> float:
        """The span's length (us)."""
        if self.device_type != DeviceType.CPU:
            return 0
        return self.time_range.end - self.time_range.start

    @property
    def self_cpu_time_total(self) -> float:
        """The span's length minus its direct children's (us)."""
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        children = sum(c.time_range.end - c.time_range.start for c in self.cpu_children)
        # Rounded to the picosecond: the times are differences of
        # nanosecond timestamps, so anything finer is float noise.
        return round(self.time_range.end - self.time_range.start - children, 6)

    @property
    def self_cpu_memory_usage(self) -> int:
        """Bytes allocated minus freed inside the span but outside its
        children."""
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self) -> int:
        if self.is_async or self.device_type != DeviceType.CPU:
            return 0
        return self.device_memory_usage - sum(c.device_memory_usage for c in self.cpu_children)

    @property
    def cuda_memory_usage(self) -> int:
        return self.device_memory_usage

    self_cuda_memory_usage = _deprecated_alias("self_cuda_memory_usage", "self_device_memory_usage")

    @property
    def device_time_total(self) -> float:
        """Time of the device kernels this event (and, unless legacy, its
        children) launched: 0 unless a device was profiled."""
        if self.is_async or not self.use_device:
            return 0
        if self.device_type != DeviceType.CPU:
            return self.time_range.end - self.time_range.start
        own = sum(k.duration for k in self.kernels)
        if self.is_legacy:
            return own
        return own + sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        if self.is_async or not self.use_device:
            return 0
        if self.device_type != DeviceType.CPU:
            return self.device_time_total
        return self.device_time_total - sum(c.device_time_total for c in self.cpu_children)

    cuda_time_total = _deprecated_alias("cuda_time_total", "device_time_total")
    self_cuda_time_total = _deprecated_alias("self_cuda_time_total", "self_device_time_total")

    @property
    def key(self) -> str:
        """What ``key_averages`` groups by: the name."""
        return self.name

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
            f"device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} "
            f"start_us={self.time_range.start} end_us={self.time_range.end} "
            f"cpu_children={[c.id for c in self.cpu_children]} {self.use_device}_time={self.device_time_str} "
            f"thread={self.thread} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} {self.use_device}_memory_usage="
            f"{self.device_memory_usage} is_async={self.is_async} is_remote={self.is_remote} "
            f"seq_nr={self.sequence_nr} is_legacy={self.is_legacy}>"
        )


# What an average takes from the first event of its key.
_AVG_IDENTITY = (
    "key", "node_id", "is_async", "is_remote", "cpu_parent", "cpu_children", "overload_name",
    "input_shapes", "stack", "scope", "device_type", "is_legacy", "use_device",
)  # fmt: skip


class FunctionEventAvg(FormattedTimesMixin):
    """Totals over the events of one key (see ``EventList.key_averages``):
    ``count`` calls, summed times and memory; ``cpu_time`` is the average
    per call. The descriptive fields (``input_shapes``, ``stack``, ``scope``,
    ...) come from the first event added."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device: str | None = None
        self.cpu_time_total: float = 0
        self.device_time_total: float = 0
        self.self_cpu_time_total: float = 0
        self.self_device_time_total: float = 0
        self.input_shapes: Any = None
        self.overload_name: str | None = None
        self.stack: list[str] | None = None
        self.scope: int | None = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children: list[FunctionEvent] | None = None
        self.cpu_parent: FunctionEvent | None = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops: int | None = 0

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Adds one event (or another average) of the same key."""
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError(f"cannot add a {type(other).__name__} to a FunctionEventAvg")
        if self.key is None:
            # The first event of the key gives the average its identity.
            for attr in _AVG_IDENTITY:
                setattr(self, attr, getattr(other, attr))
            self.is_user_annotation = bool(other.is_user_annotation)
        elif other.key != self.key:
            raise AssertionError(f"cannot add an event of key {other.key!r} to the average of {self.key!r}")
        if type(other) is FunctionEvent and not other.is_async and other.device_type is DeviceType.CPU:
            # The properties' sums over the children, in one pass (this runs
            # once per event of a profile).
            span = other.time_range.end - other.time_range.start
            children_time = 0.0
            children_memory = 0
            children_device_memory = 0
            for child in other.cpu_children:
                children_time += child.time_range.end - child.time_range.start
                children_memory += child.cpu_memory_usage
                children_device_memory += child.device_memory_usage
            self.cpu_time_total += span
            self.self_cpu_time_total += round(span - children_time, 6)
            self.cpu_memory_usage += other.cpu_memory_usage
            self.self_cpu_memory_usage += other.cpu_memory_usage - children_memory
            self.device_memory_usage += other.device_memory_usage
            self.self_device_memory_usage += other.device_memory_usage - children_device_memory
            if other.use_device:
                self.device_time_total += other.device_time_total
                self.self_device_time_total += other.self_device_time_total
        else:
            self.cpu_time_total += other.cpu_time_total
            self.device_time_total += other.device_time_total
            self.self_cpu_time_total += other.self_cpu_time_total
            self.self_device_time_total += other.self_device_time_total
            self.cpu_memory_usage += other.cpu_memory_usage
            self.device_memory_usage += other.device_memory_usage
            self.self_cpu_memory_usage += other.self_cpu_memory_usage
            self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        device = self.use_device or "cuda"
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str}  self_{device}_time={self.self_device_time_total_str} "
            f"{device}_time={self.device_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage} {device}_memory_usage={self.device_memory_usage}>"
        )


class StringTable(defaultdict):
    """Display names of recorded names. ferrograd records readable names
    (no mangled C++ symbols), so a name maps to itself."""

    def __missing__(self, key: str) -> str:
        self[key] = key
        return key


def _record_start_ns(record: Any) -> int:
    first = record[0] if isinstance(record, (list, tuple)) else record
    start = getattr(first, "start_ns", None)
    if start is not None:
        return int(start() if callable(start) else start)
    return int(first)


class MemRecordsAcc:
    """Memory records indexed by time, to find those inside an interval.

    A record is a sequence whose first item is its start time in
    nanoseconds (an int, or an object with a ``start_ns()`` method).

    Args:
        mem_records (sequence): the records, in any order.
    """

    def __init__(self, mem_records: Sequence[Any]) -> None:
        self._mem_records = mem_records
        order = sorted(range(len(mem_records)), key=lambda i: _record_start_ns(mem_records[i]))
        self._indices = order
        self._start_nses = [_record_start_ns(mem_records[i]) for i in order]

    def in_interval(self, start_ns: int, end_ns: int) -> Iterator[Any]:
        """The records that start within ``[start_ns, end_ns]``."""
        lo = bisect.bisect_left(self._start_nses, start_ns)
        hi = bisect.bisect_right(self._start_nses, end_ns)
        for k in range(lo, hi):
            yield self._mem_records[self._indices[k]]


def _rewrite_name(name: str, with_wildcard: bool = False) -> str:
    """The name an event is shown and grouped under: the steps of
    ``torch.profiler.profile`` (``ProfilerStep#3``) group as
    ``ProfilerStep*``."""
    if with_wildcard and name.startswith("ProfilerStep#"):
        return "ProfilerStep*"
    return name


def _filter_name(name: str) -> bool:
    """Whether an event of this name is bookkeeping, not shown."""
    return name in (MEMORY_EVENT_NAME, OUT_OF_MEMORY_EVENT_NAME)


class EventList(list):
    """A list of :class:`FunctionEvent` (or, from ``key_averages``,
    :class:`FunctionEventAvg`) with the profiler's summaries and exports.

    Profilers return one (``prof.function_events``,
    ``prof.key_averages()``); it is a plain ``list`` otherwise.

    Args:
        *args: the events, as for ``list``.

    Keyword args:
        use_device (str, optional): the profiled device. Default: ``None``.
        profile_memory (bool): show memory columns in :meth:`table`.
            Default: ``False``.
        with_flops (bool): show FLOPs columns in :meth:`table`.
            Default: ``False``.

    Example:
        >>> x = ferrograd.ones(3)
        >>> with ferrograd.autograd.profiler.profile() as prof:
        ...     y = x * x
        ...     z = x * x
        >>> [(e.key, e.count) for e in prof.key_averages()]
        [('aten::mul', 2)]
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False
        # Set when the events come from a profile: whether each event's
        # cpu_parent/cpu_children are already linked, the recording threads'
        # names, every memory record as (ts_us, thread, bytes) and extra
        # top-level trace metadata (key -> JSON text).
        self._links_known = False
        self._thread_names: dict[int, str] = {}
        self._memory_records: list[tuple[float, int, int]] = []
        self._trace_metadata: dict[str, str] = {}

    def __str__(self) -> str:
        return self.table()

    @contextlib.contextmanager
    def _extra_trace_metadata(self, metadata: dict[str, str]) -> Iterator[EventList]:
        """The events, with ``metadata`` (key -> JSON text) added to their trace's top-level
        keys until the block ends."""
        saved = self._trace_metadata
        self._trace_metadata = {**saved, **metadata}
        try:
            yield self
        finally:
            self._trace_metadata = saved

    # --- structure -------------------------------------------------------

    def _build_tree(self) -> None:
        if not self._links_known:
            self._populate_cpu_children()
        self._remove_dup_nodes()
        self._set_backward_stacktraces()
        self._tree_built = True

    def _populate_cpu_children(self) -> None:
        """Links each synchronous CPU event to the innermost event of the
        same thread (and node) whose interval contains it."""
        sync = [e for e in self if not e.is_async and e.device_type == DeviceType.CPU]
        sync.sort(key=lambda e: (e.thread, e.node_id))
        for _, group in itertools.groupby(sync, key=lambda e: (e.thread, e.node_id)):
            ordered = sorted(group, key=lambda e: (e.time_range.start, -e.time_range.end))
            open_spans: list[FunctionEvent] = []
            for event in ordered:
                while open_spans:
                    top = open_spans[-1]
                    inside = event.time_range.start < top.time_range.end and (
                        event.time_range.end <= top.time_range.end
                    )
                    if inside:
                        if event.cpu_parent is not None:
                            raise AssertionError(f"event {event.key} already has a CPU parent")
                        top.append_cpu_child(event)
                        event.set_cpu_parent(top)
                        break
                    open_spans.pop()
                open_spans.append(event)

    def _remove_dup_nodes(self) -> None:
        """Folds an event into its parent when the parent has the same name
        and no other child (a wrapper calling itself), as torch shows them."""
        while True:
            dropped: set[int] = set()
            for event in self:
                parent = event.cpu_parent
                if parent is None or id(event) in dropped:
                    continue
                if parent.name == event.name and len(parent.cpu_children) == 1:
                    parent.cpu_children = event.cpu_children
                    parent.kernels = event.kernels
                    for child in event.cpu_children:
                        child.cpu_parent = parent
                    dropped.add(id(event))
            if not dropped:
                return
            kept = [e for e in self if id(e) not in dropped]
            self.clear()
            self.extend(kept)

    def _set_backward_stacktraces(self) -> None:
        """Gives every event run under a backward node the Python stack of
        the forward op that recorded that node (matched by sequence number
        and forward thread)."""
        if not any(e.stack for e in self):
            return
        backward_of: dict[int, FunctionEvent | None] = {}

        def backward_ancestor(event: FunctionEvent) -> FunctionEvent | None:
            chain = []
            found: FunctionEvent | None = None
            node: FunctionEvent | None = event
            while node is not None:
                key = id(node)
                if key in backward_of:
                    found = backward_of[key]
                    break
                if node.scope == _SCOPE_BACKWARD_FUNCTION:
                    found = node
                    backward_of[key] = node
                    break
                chain.append(key)
                node = node.cpu_parent
            for key in chain:
                backward_of[key] = found
            return found

        forward_stacks: dict[tuple[int, int | None], list[str]] = {}
        for event in self:
            if event.stack is not None and backward_ancestor(event) is None:
                forward_stacks.setdefault((event.sequence_nr, event.thread), event.stack)
        for event in self:
            node = backward_ancestor(event)
            if node is not None:
                event.stack = forward_stacks.get((node.sequence_nr, node.fwd_thread), [])

    # --- summaries -------------------------------------------------------

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of the events' self CPU times (us)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(
        self,
        group_by_input_shapes: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
        *,
        group_by_input_shape: bool | None = None,
    ) -> EventList:
        """Groups the events: one :class:`FunctionEventAvg` per event name,
        in order of first appearance; also split by input shapes, by the
        innermost ``group_by_stack_n`` stack frames or by overload name when
        asked.

        Args:
            group_by_input_shapes (bool): also group by input shapes.
                Default: ``False``.
            group_by_stack_n (int): also group by this many innermost stack
                frames. Default: ``0``.
            group_by_overload_name (bool): also group by overload name.
                Default: ``False``.

        Keyword args:
            group_by_input_shape (bool, optional): another spelling of
                ``group_by_input_shapes``. Default: ``None``.

        Returns:
            EventList: the groups.
        """
        if group_by_input_shape is not None:
            group_by_input_shapes = group_by_input_shape
        if not self._tree_built:
            self._build_tree()
        stats: dict[tuple[Any, ...], FunctionEventAvg] = {}
        for event in self:
            key: tuple[Any, ...] = (
                event.key,
                event.node_id,
                event.device_type,
                event.is_legacy,
                bool(event.is_user_annotation),
            )
            if group_by_overload_name:
                key += (event.overload_name,)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple((event.stack or [])[:group_by_stack_n])
            avg = stats.get(key)
            if avg is None:
                avg = stats[key] = FunctionEventAvg()
            avg.add(event)
        result = EventList(
            stats.values(),
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )
        for avg in result:
            avg.stack = (avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return result

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one :class:`FunctionEventAvg` keyed
        ``"Total"``."""
        total = FunctionEventAvg()
        for event in self:
            total.key = None
            total.add(event)
        total.key = "Total"
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """The events as a text table, one row per event (in list order, or
        descending by the ``sort_by`` attribute: ``cpu_time_total``,
        ``self_cpu_time_total``, ``cpu_time``, ``cpu_memory_usage``,
        ``self_cpu_memory_usage``, ``count``, ...). ``row_limit=-1`` shows
        every row; ``top_level_events_only`` skips events that have a parent;
        ``time_unit`` (``s``, ``ms``, ``us``) fixes the unit of the times.

        Args:
            sort_by (str, optional): the attribute to sort by, descending.
                Default: ``None`` (list order).
            row_limit (int): the most rows shown; ``-1`` for all.
                Default: ``100``.
            max_src_column_width (int): width of the source column.
                Default: ``75``.
            max_name_column_width (int): width of the name column.
                Default: ``55``.
            max_shapes_column_width (int): width of the input-shapes
                column. Default: ``80``.
            header (str, optional): a title line above the table.
                Default: ``None``.
            top_level_events_only (bool): show only events without a
                parent. Default: ``False``.
            time_unit (str, optional): ``"s"``, ``"ms"`` or ``"us"``.
                Default: ``None`` (chosen per value).

        Returns:
            str: the table.
        """
        return _build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    # --- exports ---------------------------------------------------------

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events as a Chrome trace (Trace Event Format JSON), for
        ``chrome://tracing`` or https://ui.perfetto.dev.

        Args:
            path (str): the file to write.
        """
        with open(path, "w", encoding="utf-8") as f:
            _write_chrome_trace(self, f)

    def supported_export_stacks_metrics(self) -> list[str]:
        """The ``metric`` values :meth:`export_stacks` accepts."""
        return [
            "self_cpu_time_total",
            "self_cuda_time_total",
            "self_xpu_time_total",
            "self_privateuse1_time_total",
        ]

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes one collapsed-stack line per event that has a stack:
        ``outer;...;inner value`` (the root frame first, then the value of
        ``metric`` as an integer), the input of flamegraph.pl and speedscope.
        Events whose value is 0 are left out.

        Args:
            path (str): the file to write.
            metric (str): one of :meth:`supported_export_stacks_metrics`.
                Default: ``"self_cpu_time_total"``.
        """
        metrics = self.supported_export_stacks_metrics()
        if metric not in metrics:
            raise ValueError("metric should be one of: " + str(metrics))
        attr = metric
        for device in ("cuda", "xpu", "privateuse1"):
            attr = attr.replace(device, "device")
        escape = str.maketrans(" ;\t\n", "____")
        with open(path, "w", encoding="utf-8") as f:
            for event in self:
                if not event.stack:
                    continue
                value = int(getattr(event, attr))
                if value > 0:
                    frames = ";".join(frame.translate(escape) for frame in reversed(event.stack))
                    f.write(f"{frames} {value}\n")
