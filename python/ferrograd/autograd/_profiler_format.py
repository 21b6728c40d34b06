"""How the profiler's events are shown: the formatted times and sizes, the
text table of ``EventList.table()`` and the Chrome trace of
``EventList.export_chrome_trace()``.

``profiler_util`` imports this module, so the event classes and constants
it needs are imported where they are used.
"""

from __future__ import annotations

import json
import math
import os
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .profiler_util import EventList

_US_PER_S = 1_000_000.0
_US_PER_MS = 1_000.0


def _format_time(time_us: float) -> str:
    """``2.924s``, ``1.700ms`` or ``949.776us``: the largest unit under which
    the value is at least 1."""
    if time_us >= _US_PER_S:
        return f"{time_us / _US_PER_S:.3f}s"
    if time_us >= _US_PER_MS:
        return f"{time_us / _US_PER_MS:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_in(time_us: float, unit: str | None) -> str:
    """A time in the unit a table was asked for (``s``, ``ms``, ``us``), or
    in the automatic unit."""
    if unit == "s":
        return f"{time_us / _US_PER_S:.3f}s"
    if unit == "ms":
        return f"{time_us / _US_PER_MS:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return _format_time(time_us)


def _format_time_share(time_us: float, total_us: float) -> str:
    """``time_us`` as a percentage of ``total_us`` (``NaN`` when nothing was
    timed at all)."""
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    """``60 B``, ``1.50 KB``, ``-40 B``: binary units, two decimals above a
    kilobyte."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


# --- the table ---------------------------------------------------------------


def _sort_attr(name: str) -> str:
    for device in ("cuda", "xpu", "privateuse1"):
        name = name.replace(device, "device")
    return name


def _build_table(
    events: EventList,
    *,
    sort_by: str | None,
    row_limit: int,
    max_src_column_width: int | None,
    max_name_column_width: int | None,
    max_shapes_column_width: int | None,
    header: str | None,
    profile_memory: bool,
    with_flops: bool,
    top_level_events_only: bool,
    time_unit: str | None,
) -> str:
    from .profiler_util import DeviceType

    if len(events) == 0:
        return ""
    use_device = events[0].use_device
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage > 0 for e in events)
    if has_device_time and not use_device:
        raise RuntimeError("use_device is None, but there is device performance data.")
    rows: list[Any] = list(events)
    if sort_by is not None:
        attr = _sort_attr(sort_by)
        rows.sort(key=lambda e: getattr(e, attr), reverse=True)

    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in rows)
    has_overloads = any(e.overload_name for e in rows)
    stacks = [e.stack for e in rows if e.stack]
    has_stack = bool(stacks)

    name_width = max(len(e.key) for e in rows) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in rows) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    src_width = 0
    if has_stack:
        src_width = max(len(frame) for stack in stacks for frame in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)
    number_width = 12

    device = use_device.upper() if use_device else "None"
    columns: list[tuple[str, int, str]] = [("Name", name_width, ">")]
    if has_overloads:
        columns.append(("Overload Name", name_width, ">"))
    titles = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        titles += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    if profile_memory:
        titles += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            titles += [f"{device} Mem", f"Self {device} Mem"]
    titles.append("# of Calls")
    show_node_id = any(e.node_id != -1 for e in rows)
    if show_node_id:
        titles.append("Node ID")
    columns += [(title, number_width, ">") for title in titles]
    if has_shapes:
        columns.append(("Input Shapes", shapes_width, ">"))
    if has_stack:
        columns.append(("Source Location", src_width, "<"))
    flops_scale = 1.0
    if with_flops:
        positive = [e.flops for e in rows if e.flops and e.flops > 0]
        if positive:
            flops_scale, flops_title = _flops_unit(min(positive))
            columns.append((f"Total {flops_title}", number_width, ">"))
        else:
            with_flops = False

    row_format = "".join("{:" + align + str(width) + "}  " for _, width, align in columns)
    separator = "".join("-" * width + "  " for _, width, _ in columns)
    line_length = sum(width + 2 for _, width, _ in columns) - 2

    total_self_cpu = sum(e.self_cpu_time_total for e in rows)
    total_self_device = 0.0
    for e in rows:
        if e.device_type == DeviceType.CPU and e.is_legacy:
            total_self_device += e.self_device_time_total
        elif e.device_type != DeviceType.CPU and not e.is_user_annotation:
            total_self_device += e.self_device_time_total

    lines: list[str] = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*(title for title, _, _ in columns)), separator]

    def trim_path(path: str) -> str:
        if len(path) > src_width:
            path = path[len(path) - src_width :]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    shown = 0
    for e in rows:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        e.self_cpu_percent = _format_time_share(e.self_cpu_time_total, total_self_cpu)
        e.total_cpu_percent = 0 if e.is_async else _format_time_share(e.cpu_time_total, total_self_cpu)
        values: list[Any] = [name]
        if has_overloads:
            overload = e.overload_name or ""
            if max_name_column_width is not None and len(overload) >= max_name_column_width - 3:
                overload = overload[: max_name_column_width - 3] + "..."
            values.append(overload)
        values += [
            e.self_cpu_percent,
            _format_time_in(e.self_cpu_time_total, time_unit),
            e.total_cpu_percent,
            _format_time_in(e.cpu_time_total, time_unit),
            _format_time_in(e.cpu_time, time_unit),
        ]
        if has_device_time:
            e.total_device_percent = _format_time_share(e.self_device_time_total, total_self_device)
            values += [
                _format_time_in(e.self_device_time_total, time_unit),
                e.total_device_percent,
                _format_time_in(e.device_time_total, time_unit),
                _format_time_in(e.device_time, time_unit),
            ]
        if profile_memory:
            values += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                values += [
                    _format_memory(e.device_memory_usage),
                    _format_memory(e.self_device_memory_usage),
                ]
        values.append(e.count)
        if show_node_id:
            values.append(e.node_id)
        if has_shapes:
            values.append(str(e.input_shapes)[:shapes_width])
        if has_stack:
            values.append(trim_path(e.stack[0]) if e.stack else "")
        if with_flops:
            values.append("--" if not e.flops or e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        lines.append(row_format.format(*values))
        if has_stack:
            blank = [""] * (len(columns) - 1 - int(with_flops))
            tail = [""] if with_flops else []
            for frame in (e.stack or [])[1:]:
                lines.append(row_format.format(*blank, trim_path(frame), *tail))
            lines.append(row_format.format(*blank, "", *tail))
    lines.append(separator)
    lines.append(f"Self CPU time total: {_format_time_in(total_self_cpu, time_unit)}")
    if has_device_time:
        lines.append(f"Self {device} time total: {_format_time_in(total_self_device, time_unit)}")
    return "".join(line + "\n" for line in lines)


def _flops_unit(flops: float) -> tuple[float, str]:
    """The scale and name of the unit that shows ``flops`` with 1 to 3
    digits before the point."""
    names = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    power = int(max(0.0, min(math.log10(flops) / 3, float(len(names) - 1))))
    return 10.0 ** (-3 * power), names[power]


# --- the Chrome trace ---------------------------------------------------------


def _write_chrome_trace(events: EventList, f: IO[str]) -> None:
    """Writes ``events`` as a Trace Event Format object: complete ("X")
    events for the spans, instant ("i") events for memory records, flow
    ("s"/"f") arrows from each forward op to the backward node it recorded,
    and thread/process names ("M"). Compact: one event per line, no
    indentation, only the arguments that carry information."""
    from .profiler_util import _EVALUATE_PREFIX, _SCOPE_BACKWARD_FUNCTION, _SCOPE_FUNCTION, FunctionEvent

    pid = os.getpid()
    names: dict[str, str] = {}

    def quoted(name: str) -> str:
        text = names.get(name)
        if text is None:
            text = names[name] = json.dumps(name)
        return text

    out: list[str] = [f'{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":"python"}}}}']
    threads = dict(events._thread_names)
    spans = [e for e in events if isinstance(e, FunctionEvent) and e.trace_name is not None]
    for e in spans:
        threads.setdefault(e.thread, f"thread {e.thread}")
    for _, thread, _ in events._memory_records:
        threads.setdefault(thread, f"thread {thread}")
    for tid in sorted(threads):
        out.append(
            f'{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},'
            f'"args":{{"name":{quoted(threads[tid])}}}}}'
        )
        out.append(
            f'{{"ph":"M","name":"thread_sort_index","pid":{pid},"tid":{tid},"args":{{"sort_index":{tid}}}}}'
        )

    forward: dict[tuple[int, int], FunctionEvent] = {}
    backward: list[FunctionEvent] = []
    for e in spans:
        start = e.time_range.start
        cat = "user_annotation" if e.is_user_annotation else "cpu_op"
        args = f'"External id":{e.id}'
        if e.sequence_nr >= 0:
            args += f',"Sequence number":{e.sequence_nr}'
            if e.fwd_thread:
                args += f',"Fwd thread id":{e.fwd_thread}'
            if e.scope == _SCOPE_BACKWARD_FUNCTION:
                backward.append(e)
            elif e.scope == _SCOPE_FUNCTION and not e.name.startswith(_EVALUATE_PREFIX):
                forward.setdefault((e.sequence_nr, e.thread), e)
        if e.input_dtypes is not None:
            dims = json.dumps(e.input_shapes or [], separators=(",", ":"))
            types = json.dumps(e.input_dtypes, separators=(",", ":"))
            args += f',"Input Dims":{dims},"Input type":{types}'
        out.append(
            f'{{"ph":"X","cat":"{cat}","name":{quoted(e.trace_name or e.name)},"pid":{pid},"tid":{e.thread},'
            f'"ts":{start:.3f},"dur":{e.time_range.end - start:.3f},"args":{{{args}}}}}'
        )

    total = 0
    for ts, thread, nbytes in sorted(events._memory_records, key=lambda r: r[0]):
        total += nbytes
        out.append(
            f'{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":{pid},'
            f'"tid":{thread},"ts":{ts:.3f},"args":{{"Bytes":{nbytes},"Total Allocated":{total}}}}}'
        )

    flow_id = 0
    for e in backward:
        # A node links to the op that recorded it: same sequence number, on
        # the thread the node names as its forward thread.
        fwd = forward.get((e.sequence_nr, e.fwd_thread or 0))
        if fwd is None:
            continue
        flow_id += 1
        out.append(
            f'{{"ph":"s","id":{flow_id},"pid":{pid},"tid":{fwd.thread},'
            f'"ts":{fwd.time_range.start:.3f},"cat":"fwdbwd","name":"fwdbwd"}}'
        )
        out.append(
            f'{{"ph":"f","id":{flow_id},"pid":{pid},"tid":{e.thread},'
            f'"ts":{e.time_range.start:.3f},"cat":"fwdbwd","name":"fwdbwd","bp":"e"}}'
        )

    f.write('{"schemaVersion":1,"displayTimeUnit":"ms"')
    for key, value in events._trace_metadata.items():
        f.write(f",{json.dumps(key)}:{value}")
    f.write(',"traceEvents":[\n')
    f.write(",\n".join(out))
    f.write("\n]}\n")
