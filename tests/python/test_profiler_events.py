"""The profiler's Python layer on recorded rows written by hand: building
FunctionEvents (parents, self times, memory, backward stacks), the table,
key_averages, collapsed stacks, the Chrome trace, nvprof databases and the
annotation context managers. Every expected value is worked out from the
rows, so none of these tests depends on timing."""

from __future__ import annotations

import json
import sqlite3
import types
import warnings

import pytest
from ferrograd.autograd import profiler
from ferrograd.autograd.profiler_util import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    Interval,
    MemRecordsAcc,
    StringTable,
    _format_memory,
    _format_time,
    _format_time_share,
)
from test_profiler import table_rows, validate_chrome_trace

_EVAL = "autograd::engine::evaluate_function: "
STACK_MUL = ["t.py(3): f", "t.py(9): <module>"]
STACK_SUM = ["t.py(4): f", "t.py(9): <module>"]


EVENT_FIELDS = (
    "name",
    "kind",
    "start_ns",
    "end_ns",
    "thread",
    "depth",
    "sequence_nr",
    "fwd_thread",
    "input_shapes",
    "input_dtypes",
    "stack",
    "bytes",
    "parent",
    "self_ns",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
)


def test_fake_events_have_the_fields_of_the_binding_record():
    from ferrograd import _core

    getters = {n: v for n, v in vars(_core._ProfilerEvent).items() if not n.startswith("_")}
    fields = {n for n, v in getters.items() if isinstance(v, types.GetSetDescriptorType)}
    assert fields == set(EVENT_FIELDS)


def row(
    name,
    kind,
    start,
    end,
    thread,
    *,
    seq=-1,
    fwd=0,
    shapes=None,
    dtypes=None,
    stack=None,
    nbytes=0,
    parent=-1,
    mem=0,
):
    # The fields of the binding's event record (`_core._ProfilerEvent`);
    # depth, self_ns and the self memory are not read by the Python layer.
    values = (name, kind, start, end, thread, 0, seq, fwd, shapes, dtypes, stack, nbytes, parent, 0, mem, 0)
    return types.SimpleNamespace(**dict(zip(EVENT_FIELDS, values, strict=True)))


class FakeResult:
    def __init__(self, rows, threads):
        self._rows = rows
        self._threads = threads

    def events(self):
        return list(self._rows)

    def threads(self):
        return list(self._threads)

    def trace_start_ns(self):
        return min((r.start_ns for r in self._rows), default=0)

    def __len__(self):
        return len(self._rows)


def scenario(stacks=True):
    """A forward pass on thread 1 (``outer`` range around ``mul`` and
    ``sum``, 24 + 4 bytes allocated inside them, 24 freed outside every
    span) and its backward on pool thread 2. Times in ns."""
    rows = [
        row("outer", "user", 0, 10_000, 1, mem=28),  # 0
        row(
            "aten::mul",
            "op",
            1_000,
            3_000,
            1,
            seq=5,
            shapes=[[2, 3], [2, 3]],
            dtypes=["float", "float"],
            stack=STACK_MUL if stacks else None,
            parent=0,
            mem=24,
        ),  # 1
        row("[memory]", "memory", 1_500, 1_500, 1, nbytes=24, parent=1),  # 2
        row(
            "aten::sum",
            "op",
            4_000,
            6_000,
            1,
            seq=6,
            shapes=[[2, 3]],
            dtypes=["float"],
            stack=STACK_SUM if stacks else None,
            parent=0,
            mem=4,
        ),  # 3
        row("[memory]", "memory", 4_500, 4_500, 1, nbytes=4, parent=3),  # 4
        row("[memory]", "memory", 12_000, 12_000, 1, nbytes=-24),  # 5
        row(_EVAL + "SumBackward0", "evaluate", 20_000, 26_000, 2, seq=6, fwd=1),  # 6
        row("SumBackward0", "backward", 20_500, 25_000, 2, seq=6, fwd=1, parent=6),  # 7
        row("aten::expand", "op", 21_000, 22_000, 2, shapes=[[1]], dtypes=["float"], parent=7),  # 8
        row(_EVAL + "MulBackward0", "evaluate", 27_000, 33_000, 2, seq=5, fwd=1),  # 9
        row("MulBackward0", "backward", 27_500, 32_000, 2, seq=5, fwd=1, parent=9),  # 10
        row(
            "aten::mul",
            "op",
            28_000,
            29_000,
            2,
            shapes=[[2, 3], [2, 3]],
            dtypes=["float", "float"],
            parent=10,
        ),  # 11
        row(
            "aten::mul", "op", 29_500, 31_000, 2, shapes=[[2, 3], []], dtypes=["float", "double"], parent=10
        ),  # 12
    ]
    return FakeResult(rows, [(1, "python main"), (2, "ferrograd-pool-1")])


def events(stacks=True, profile_memory=True, with_flops=False):
    return profiler._events_from_result(
        scenario(stacks), use_device=None, profile_memory=profile_memory, with_flops=with_flops
    )


def by_name(evts, name):
    return [e for e in evts if e.name == name]


# --- formatting -----------------------------------------------------------------


def test_time_memory_and_share_formats():
    assert _format_time(1700.0) == "1.700ms"
    assert _format_time(949.776) == "949.776us"
    assert _format_time(2_924_000.0) == "2.924s"
    assert _format_time(0.0) == "0.000us"
    assert _format_memory(60) == "60 B"
    assert _format_memory(1536) == "1.50 KB"
    assert _format_memory(-40) == "-40 B"
    assert _format_memory(-3 * 1024 * 1024) == "-3.00 MB"
    assert _format_memory(5 * 1024**3) == "5.00 GB"
    assert _format_time_share(1.0, 4.0) == "25.00%"
    assert _format_time_share(0.0, 0.0) == "NaN"


def test_interval_string_table_and_mem_records():
    assert Interval(2.5, 7.0).elapsed_us() == 4.5
    assert StringTable()["aten::mul"] == "aten::mul"
    records = [(30, "c"), (10, "a"), (20, "b"), (40, "d")]
    acc = MemRecordsAcc(records)
    assert [r[1] for r in acc.in_interval(10, 30)] == ["a", "b", "c"]
    assert list(acc.in_interval(41, 50)) == []


# --- events from rows ---------------------------------------------------------------


def test_rows_become_linked_events_with_microsecond_times():
    evts = events()
    # 10 spans, plus one event for the memory record outside every span.
    assert len(evts) == 11
    assert [e.name for e in evts][:4] == ["outer", "aten::mul", "aten::sum", "[memory]"]
    outer = evts[0]
    assert (outer.time_range.start, outer.time_range.end) == (0.0, 10.0)
    assert outer.is_user_annotation and outer.scope == 7
    assert [c.name for c in outer.cpu_children] == ["aten::mul", "aten::sum"]
    mul = by_name(evts, "aten::mul")[0]
    assert mul.cpu_parent is outer
    assert mul.sequence_nr == 5 and mul.thread == 1 and mul.fwd_thread == 0
    assert mul.input_shapes == [[2, 3], [2, 3]] and mul.input_dtypes == ["float", "float"]
    backward = by_name(evts, "MulBackward0")[0]
    assert backward.scope == 1 and backward.thread == 2 and backward.fwd_thread == 1
    assert backward.cpu_parent.name == _EVAL + "MulBackward0"
    assert sorted(c.id for c in backward.cpu_children) == sorted(e.id for e in by_name(evts, "aten::mul")[1:])
    # Ids are distinct; the events are ordered by start time.
    assert len({e.id for e in evts}) == len(evts)
    starts = [e.time_range.start for e in evts]
    assert starts == sorted(starts)


def test_self_times_are_durations_minus_direct_children():
    evts = events()
    expected_self = {
        "outer": 10 - 2 - 2,
        _EVAL + "SumBackward0": 6 - 4.5,
        "SumBackward0": 4.5 - 1,
        "aten::expand": 1,
        _EVAL + "MulBackward0": 6 - 4.5,
        "MulBackward0": 4.5 - 1 - 1.5,
        "[memory]": 0,
    }
    for name, want in expected_self.items():
        (e,) = by_name(evts, name)
        assert e.self_cpu_time_total == pytest.approx(want)
    assert [e.self_cpu_time_total for e in by_name(evts, "aten::mul")] == pytest.approx([2, 1, 1.5])
    # The self times add up to the top-level spans' total: 10 us on the
    # main thread, 6 + 6 us on the pool thread.
    assert evts.self_cpu_time_total == pytest.approx(22.0)
    top = [e for e in evts if e.cpu_parent is None]
    assert sum(e.cpu_time_total for e in top) == pytest.approx(22.0)


def test_memory_usage_and_loose_memory_records():
    evts = events()
    outer = evts[0]
    assert outer.cpu_memory_usage == 28 and outer.self_cpu_memory_usage == 0
    assert by_name(evts, "aten::mul")[0].self_cpu_memory_usage == 24
    (loose,) = by_name(evts, "[memory]")
    assert loose.cpu_memory_usage == -24
    assert loose.time_range.start == loose.time_range.end == 12.0
    assert loose.trace_name is None  # not a span of the trace
    rows = table_rows(evts.key_averages().table())
    assert rows["outer"]["CPU Mem"] == "28 B"
    assert rows["outer"]["Self CPU Mem"] == "0 B"
    assert rows["[memory]"]["CPU Mem"] == "-24 B"
    assert "CPU Mem" not in table_rows(events(profile_memory=False).key_averages().table())["outer"]


def test_backward_events_take_the_forward_ops_stacks():
    evts = events()
    assert by_name(evts, "aten::mul")[0].stack == STACK_MUL
    # Everything under MulBackward0 ran for the forward mul (sequence 5 on
    # thread 1); everything under SumBackward0 for the sum.
    for name in ("MulBackward0",):
        assert by_name(evts, name)[0].stack == STACK_MUL
    assert [e.stack for e in by_name(evts, "aten::mul")[1:]] == [STACK_MUL, STACK_MUL]
    assert by_name(evts, "SumBackward0")[0].stack == STACK_SUM
    assert by_name(evts, "aten::expand")[0].stack == STACK_SUM
    # The evaluate events are outside the node's own span: no stack.
    assert by_name(evts, _EVAL + "MulBackward0")[0].stack == []


def test_same_name_only_child_folds_into_its_parent():
    rows = [
        row("aten::add", "op", 0, 10_000, 1),
        row("aten::add", "op", 1_000, 9_000, 1, parent=0),
        row("aten::copy_", "op", 2_000, 3_000, 1, parent=1),
        row("aten::sum", "op", 11_000, 20_000, 1),
        row("aten::sum", "op", 12_000, 13_000, 1, parent=3),
        row("aten::mul", "op", 14_000, 15_000, 1, parent=3),
    ]
    evts = profiler._events_from_result(
        FakeResult(rows, [(1, "main")]), use_device=None, profile_memory=False, with_flops=False
    )
    # The inner add was the outer add's only child: folded, its child
    # lifted. The inner sum has a sibling: kept.
    assert [e.name for e in evts] == ["aten::add", "aten::copy_", "aten::sum", "aten::sum", "aten::mul"]
    assert evts[1].cpu_parent is evts[0]
    assert evts[0].self_cpu_time_total == pytest.approx(9.0)
    assert [c.name for c in evts[2].cpu_children] == ["aten::sum", "aten::mul"]


def test_frames_of_ferrograds_own_python_layer_are_dropped():
    inner = profiler._PACKAGE_DIR + "_ops_pointwise.py(10): mul"
    rows = [row("aten::mul", "op", 0, 1_000, 1, stack=[inner, "user.py(3): main"])]
    (e,) = profiler._events_from_result(
        FakeResult(rows, [(1, "main")]), use_device=None, profile_memory=False, with_flops=False
    )
    assert e.stack == ["user.py(3): main"]


def test_flops_estimates():
    shapes = {
        "aten::mm": ([[8, 16], [16, 4]], 2 * 8 * 16 * 4),
        "aten::addmm": ([[8, 4], [8, 16], [16, 4]], 2 * 8 * 16 * 4),
        "aten::bmm": ([[2, 8, 16], [2, 16, 4]], 2 * 2 * 8 * 16 * 4),
        "aten::mul": ([[8, 16], []], 128),
        "aten::tanh": ([[8, 16]], 0),
    }
    rows = [
        row(name, "op", 1000 * i, 1000 * i + 500, 1, shapes=s, dtypes=["float"] * len(s))
        for i, (name, (s, _)) in enumerate(shapes.items())
    ]
    evts = profiler._events_from_result(
        FakeResult(rows, [(1, "main")]), use_device=None, profile_memory=False, with_flops=True
    )
    assert {e.name: e.flops for e in evts} == {name: f for name, (_, f) in shapes.items()}
    table = evts.key_averages().table()
    # The smallest positive count (128) sets the unit: FLOPs.
    header = table.splitlines()[1]
    assert header.split()[-2:] == ["Total", "FLOPs"]
    assert table_rows(table)["aten::mm"]["Total FLOPs"] == "1024.000"
    assert table_rows(table)["aten::tanh"]["Total FLOPs"] == "--"


# --- summaries -----------------------------------------------------------------------


def test_key_averages_counts_and_totals():
    evts = events()
    avg = {a.key: a for a in evts.key_averages()}
    assert avg["aten::mul"].count == 3
    assert avg["aten::mul"].cpu_time_total == pytest.approx(2 + 1 + 1.5)
    assert avg["aten::mul"].self_cpu_time_total == pytest.approx(4.5)
    assert avg["aten::mul"].cpu_time == pytest.approx(1.5)
    assert avg["aten::mul"].cpu_time_str == "1.500us"
    assert avg["aten::mul"].input_shapes == ""
    assert avg["MulBackward0"].count == 1
    # First-appearance order.
    assert [a.key for a in evts.key_averages()][:3] == ["outer", "aten::mul", "aten::sum"]
    by_shape = evts.key_averages(group_by_input_shape=True)
    muls = [a for a in by_shape if a.key == "aten::mul"]
    assert sorted((str(a.input_shapes), a.count) for a in muls) == [
        ("[[2, 3], [2, 3]]", 2),
        ("[[2, 3], []]", 1),
    ]
    by_stack = evts.key_averages(group_by_stack_n=1)
    assert sorted((a.stack[0] if a.stack else "", a.count) for a in by_stack if a.key == "aten::mul") == [
        ("t.py(3): f", 3)
    ]
    total = evts.total_average()
    assert total.key == "Total" and total.count == len(evts)
    assert total.self_cpu_time_total == pytest.approx(22.0)


def test_table_columns_and_values():
    evts = events()
    table = evts.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1)
    lines = table.splitlines()
    assert lines[0] == lines[2] == lines[-2]
    assert set(lines[0]) == {"-", " "}
    assert lines[1].split("  ") and [h.strip() for h in lines[1].split("  ") if h.strip()] == [
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "CPU Mem",
        "Self CPU Mem",
        "# of Calls",
    ]
    assert lines[-1] == "Self CPU time total: 22.000us"
    rows = table_rows(table)
    assert rows["outer"]["Self CPU"] == "6.000us"
    assert rows["outer"]["CPU total"] == "10.000us"
    assert rows["outer"]["Self CPU %"] == f"{6 / 22 * 100:.2f}%"
    assert rows["outer"]["CPU total %"] == f"{10 / 22 * 100:.2f}%"
    assert rows["aten::mul"]["# of Calls"] == "3"
    assert rows["aten::mul"]["CPU time avg"] == "1.500us"
    # Sorted by self time, descending: outer (6 us) first.
    assert next(iter(rows)) == "outer"
    assert sum(float(r["Self CPU %"].rstrip("%")) for r in rows.values()) == pytest.approx(
        100, abs=0.01 * len(rows)
    )
    assert list(table_rows(evts.key_averages().table(row_limit=2))) == ["outer", "aten::mul"]


def test_table_shapes_stacks_names_and_top_level():
    evts = events()
    shapes = table_rows(evts.key_averages(group_by_input_shape=True).table())
    assert "Input Shapes" in next(iter(shapes.values()))
    stack_table = evts.key_averages(group_by_stack_n=2).table()
    assert "Source Location" in stack_table.splitlines()[1]
    assert "t.py(3): f" in stack_table and "t.py(9): <module>" in stack_table
    narrow = evts.key_averages().table(max_name_column_width=20)
    assert "autograd::engine:..." in narrow
    top = evts.table(top_level_events_only=True, header="Forward and backward")
    top_lines = top.splitlines()
    assert top_lines[1] == "Forward and backward"
    assert top_lines[3] == "This report only display top-level ops statistics"
    names = list(table_rows(top))
    assert names == ["outer", "[memory]", _EVAL + "SumBackward0", _EVAL + "MulBackward0"]
    assert evts.key_averages().table(time_unit="ms").splitlines()[-1] == "Self CPU time total: 0.022ms"
    assert EventList().table() == ""


def test_export_stacks_writes_collapsed_stacks(tmp_path):
    evts = events()
    path = tmp_path / "stacks.txt"
    evts.export_stacks(str(path), "self_cpu_time_total")
    mul = "t.py(9):_<module>;t.py(3):_f"
    sm = "t.py(9):_<module>;t.py(4):_f"
    # One line per event with a stack and a self time of at least 1 us, in
    # event order: mul 2, sum 2, SumBackward0 3, expand 1, MulBackward0 2,
    # the backward muls 1 and 1 (1.5 truncated).
    assert path.read_text().splitlines() == [
        f"{mul} 2",
        f"{sm} 2",
        f"{sm} 3",
        f"{sm} 1",
        f"{mul} 2",
        f"{mul} 1",
        f"{mul} 1",
    ]
    assert "self_cpu_time_total" in evts.supported_export_stacks_metrics()
    with pytest.raises(ValueError, match="metric should be one of"):
        evts.export_stacks(str(path), "wall_time")


def test_function_event_avg_add_checks_keys():
    a = FunctionEvent(1, "x", 1, 0.0, 2.0)
    b = FunctionEvent(2, "y", 1, 3.0, 4.0)
    avg = FunctionEventAvg()
    avg += a
    assert avg.key == "x" and avg.count == 1 and avg.cpu_time_total == 2.0
    with pytest.raises(AssertionError):
        avg.add(b)
    with pytest.raises(AssertionError):
        avg.add("x")


def test_event_list_links_children_by_interval():
    evts = EventList(
        [
            FunctionEvent(1, "a", 1, 0.0, 10.0),
            FunctionEvent(2, "b", 1, 1.0, 3.0),
            FunctionEvent(3, "c", 1, 3.0, 4.0),
            FunctionEvent(4, "d", 2, 1.0, 2.0),
            FunctionEvent(5, "e", 1, 9.0, 12.0),
        ]
    )
    avg = evts.key_averages()
    assert [c.name for c in evts[0].cpu_children] == ["b", "c"]
    assert evts[3].cpu_parent is None  # another thread
    assert evts[4].cpu_parent is None  # overlaps a's end: not inside it
    assert {a.key: a.self_cpu_time_total for a in avg}["a"] == pytest.approx(7.0)


# --- Chrome trace ------------------------------------------------------------------------


def test_chrome_trace_from_rows(tmp_path):
    evts = events()
    path = tmp_path / "trace.json"
    evts.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    summary = validate_chrome_trace(trace)
    assert summary["X"] == 10  # the spans, not the loose memory record's event
    assert summary["i"] == 3  # every memory record
    assert summary["flows"] == 2
    spans = {(e["name"], e["tid"], e["ts"]): e for e in trace["traceEvents"] if e["ph"] == "X"}
    outer = spans[("outer", 1, 0.0)]
    assert outer["cat"] == "user_annotation" and outer["dur"] == 10.0
    mul = spans[("aten::mul", 1, 1.0)]
    assert mul["cat"] == "cpu_op"
    assert mul["args"]["Sequence number"] == 5
    assert mul["args"]["Input Dims"] == [[2, 3], [2, 3]]
    assert mul["args"]["Input type"] == ["float", "float"]
    bwd = spans[("MulBackward0", 2, 27.5)]
    assert bwd["args"]["Sequence number"] == 5 and bwd["args"]["Fwd thread id"] == 1
    # Each flow starts at a forward op and ends at the backward node with
    # its sequence number.
    starts = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e for e in trace["traceEvents"] if e["ph"] == "f"}
    linked = sorted((starts[i]["ts"], ends[i]["ts"], ends[i]["tid"]) for i in starts)
    assert linked == [(1.0, 27.5, 2), (4.0, 20.5, 2)]
    memory = [e for e in trace["traceEvents"] if e["ph"] == "i"]
    assert [(e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in memory] == [
        (24, 24),
        (4, 28),
        (-24, 4),
    ]
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert names == {1: "python main", 2: "ferrograd-pool-1"}
    # Compact: well under torch's ~230 bytes per event.
    assert len(path.read_bytes()) / len(trace["traceEvents"]) < 160


def test_validate_chrome_trace_rejects_bad_traces():
    good = {
        "schemaVersion": 1,
        "traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0.0, "dur": 10.0},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 2.0, "dur": 3.0},
        ],
    }
    validate_chrome_trace(good)
    overlap = json.loads(json.dumps(good))
    overlap["traceEvents"][2]["dur"] = 9.0  # 2..11 crosses a's end at 10
    with pytest.raises(AssertionError):
        validate_chrome_trace(overlap)
    negative = json.loads(json.dumps(good))
    negative["traceEvents"][1]["dur"] = -1.0
    with pytest.raises(AssertionError):
        validate_chrome_trace(negative)
    unmatched = json.loads(json.dumps(good))
    unmatched["traceEvents"].append(
        {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 0.0, "cat": "fwdbwd", "name": "fwdbwd"}
    )
    with pytest.raises(AssertionError):
        validate_chrome_trace(unmatched)


# --- nvprof ------------------------------------------------------------------------------


def make_nvprof_db(path):
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY, flags INT, timestamp INT,
            id INT, objectKind INT, objectId BLOB, name INT, domain INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (_id_ INTEGER PRIMARY KEY, cbid INT, start INT,
            end INT, processId INT, threadId INT, correlationId INT, returnValue INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (_id_ INTEGER PRIMARY KEY, start INT,
            end INT, correlationId INT, name INT);
        INSERT INTO StringTable VALUES (1, 'aten::mm'), (2, 'aten::relu'), (3, 'gemm_kernel'),
            (4, 'relu_kernel'), (5, 'memcpy_helper');
        -- two ranges: mm [100, 200] and relu [300, 360]; end markers have name 0
        INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (timestamp, id, name) VALUES
            (100, 1, 1), (200, 1, 0), (300, 2, 2), (360, 2, 0);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (_id_, cbid, start, end, correlationId) VALUES
            (1, 211, 110, 120, 11), (2, 211, 130, 140, 12), (3, 211, 310, 320, 13),
            (4, 211, 400, 410, 14);
        INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (start, end, correlationId, name) VALUES
            (150, 175, 11, 3), (180, 190, 12, 3), (330, 334, 13, 4), (420, 430, 14, 5);
        """
    )
    conn.commit()
    conn.close()


def test_load_nvprof_reads_ranges_and_their_kernels(tmp_path):
    path = str(tmp_path / "trace.nvvp")
    make_nvprof_db(path)
    evts = profiler.load_nvprof(path)
    assert isinstance(evts, EventList)
    assert [(e.id, e.name, e.time_range.start, e.time_range.end) for e in evts] == [
        (1, "aten::mm", 100, 200),
        (2, "aten::relu", 300, 360),
    ]
    # The launch at 400 is outside every range: its kernel is not attached.
    assert [(k.name, k.duration) for k in evts[0].kernels] == [("gemm_kernel", 25), ("gemm_kernel", 10)]
    assert [(k.name, k.duration) for k in evts[1].kernels] == [("relu_kernel", 4)]
    assert profiler.parse_nvprof_trace(path)[1].name == "aten::relu"
    assert "Node ID" in evts.key_averages().table()


def test_load_nvprof_rejects_duplicate_ranges(tmp_path):
    path = str(tmp_path / "dup.nvvp")
    make_nvprof_db(path)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (timestamp, id, name) VALUES (150, 1, 2)")
    conn.commit()
    conn.close()
    with pytest.raises(RuntimeError, match="duplicate key"):
        profiler.load_nvprof(path)


def test_enforce_unique():
    seen = profiler.EnforceUnique()
    seen.see(1, 2)
    seen.see(2, 1)
    with pytest.raises(RuntimeError, match=r"duplicate key: \(1, 2\)"):
        seen.see(1, 2)


# --- annotations and steps ---------------------------------------------------------------


@pytest.mark.parametrize("cls", [profiler.emit_nvtx, profiler.emit_itt])
def test_emit_annotations_warn_once_and_run_the_block(cls, monkeypatch):
    monkeypatch.setattr(profiler, "_annotation_warned", set())
    ran = []
    with pytest.warns(UserWarning, match="ferrograd's own"):
        with cls() as ctx:
            ran.append(1)
    assert ctx is not None and ran == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with cls(record_shapes=True):
            ran.append(2)
        with cls(enabled=False) as off:
            assert off is None
    assert ran == [1, 2]
    nested = cls()
    with nested:
        with pytest.raises(RuntimeError, match="not reentrant"):
            nested.__enter__()


def test_kineto_step_tracker(monkeypatch):
    tracker = profiler.KinetoStepTracker
    monkeypatch.setattr(tracker, "_current_step", 0)
    monkeypatch.setattr(tracker, "_step_dict", __import__("collections").defaultdict(int))
    tracker.init_step_count("ProfilerStep")
    tracker.init_step_count("Optimizer")
    assert tracker.increment_step("ProfilerStep") == 1
    # A second requester stepping alongside does not advance the global step.
    assert tracker.increment_step("Optimizer") == 1
    assert tracker.increment_step("ProfilerStep") == 2
    assert tracker.increment_step("Optimizer") == 2
    assert tracker.current_step() == 2
    assert tracker.erase_step_count("Optimizer") is True
    assert tracker.erase_step_count("Optimizer") is False
    # A requester that starts counting later starts at the global step.
    tracker.init_step_count("late")
    assert tracker.increment_step("late") == 3
    with pytest.warns(UserWarning, match="increased more than 1"):
        tracker._step_dict["late"] += 1
        assert tracker.increment_step("late") == 5
