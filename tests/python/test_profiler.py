"""torch.autograd.profiler on real programs: what is recorded (ops,
backward nodes on the calling thread and on the engine's pool, user
ranges), on which thread, with which shapes, memory and stacks, and the
Chrome traces it writes. Expected counts come from the programs; the
structural checks (nesting, self times, flows) hold whatever the timings."""

from __future__ import annotations

import gzip
import inspect
import json
import threading
import warnings
from collections import Counter, defaultdict

import custom_functions
import ferrograd as torch
import pytest
from ferrograd import _core
from ferrograd.autograd import profiler
from ferrograd.autograd.profiler import profile, record_function

EVAL = "autograd::engine::evaluate_function: "
TOL_US = 0.001 + 1e-9  # 1 ns, in microseconds


# --- checkers shared with the other profiler test modules ----------------------


def validate_chrome_trace(obj):
    """Checks a Trace Event Format object as the profiler writes it: the
    required keys and types of each phase, non-negative times, complete
    events nesting properly per (pid, tid), and flow starts and finishes
    paired by id, each bound to a complete event. Returns counts."""
    assert isinstance(obj, dict), "a trace is a JSON object"
    events = obj["traceEvents"]
    assert isinstance(events, list)
    number = (int, float)
    spans = defaultdict(list)
    flows = defaultdict(dict)
    named_threads = set()
    counts = Counter()
    for ev in events:
        ph = ev["ph"]
        counts[ph] += 1
        assert isinstance(ev["name"], str), ev
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int), ev
        if ph == "X":
            assert isinstance(ev["cat"], str) and ev["cat"], ev
            assert isinstance(ev["ts"], number) and isinstance(ev["dur"], number), ev
            assert ev["ts"] >= 0 and ev["dur"] >= 0, ev
            assert isinstance(ev.get("args", {}), dict), ev
            spans[(ev["pid"], ev["tid"])].append(ev)
        elif ph == "i":
            assert ev["s"] in ("t", "p", "g"), ev
            assert isinstance(ev["ts"], number) and ev["ts"] >= 0, ev
            assert isinstance(ev["cat"], str), ev
            assert isinstance(ev["args"]["Bytes"], int), ev
        elif ph in ("s", "f"):
            assert isinstance(ev["id"], int) and isinstance(ev["cat"], str), ev
            assert isinstance(ev["ts"], number) and ev["ts"] >= 0, ev
            if ph == "f":
                assert ev["bp"] == "e", ev
            assert ph not in flows[ev["id"]], f"flow {ev['id']} has two {ph!r} events"
            flows[ev["id"]][ph] = ev
        elif ph == "M":
            assert ev["name"] in ("process_name", "thread_name", "thread_sort_index", "process_sort_index")
            assert isinstance(ev["args"], dict), ev
            if ev["name"] == "thread_name":
                assert isinstance(ev["args"]["name"], str)
                named_threads.add((ev["pid"], ev["tid"]))
        else:
            raise AssertionError(f"unexpected phase {ph!r}")
    for key, evs in spans.items():
        assert key in named_threads, f"thread {key} has no thread_name"
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_spans = []
        for ev in evs:
            end = ev["ts"] + ev["dur"]
            # Sorted by start: ev is inside the open span it ends within;
            # every open span it ends after must be over before it starts.
            while open_spans and end > open_spans[-1]["ts"] + open_spans[-1]["dur"] + TOL_US:
                top = open_spans.pop()
                assert ev["ts"] >= top["ts"] + top["dur"] - TOL_US, (
                    f"{ev['name']} [{ev['ts']}, +{ev['dur']}] crosses the end of {top['name']} "
                    f"[{top['ts']}, +{top['dur']}]"
                )
            open_spans.append(ev)

    def encloses(key, ts):
        return any(e["ts"] - TOL_US <= ts <= e["ts"] + e["dur"] + TOL_US for e in spans[key])

    for flow_id, pair in flows.items():
        assert set(pair) == {"s", "f"}, f"flow {flow_id} is not a start/finish pair"
        start, finish = pair["s"], pair["f"]
        assert start["ts"] <= finish["ts"] + TOL_US, f"flow {flow_id} goes back in time"
        assert encloses((start["pid"], start["tid"]), start["ts"]), f"flow {flow_id} starts on no span"
        assert encloses((finish["pid"], finish["tid"]), finish["ts"]), f"flow {flow_id} ends on no span"
    return {"X": counts["X"], "i": counts["i"], "M": counts["M"], "flows": len(flows)}


def table_rows(table):
    """``{name: {column: cell}}`` for a profiler table (first row of each
    name), read by the column positions of the separator line."""
    lines = table.splitlines()
    sep = next(line for line in lines if line.startswith("-"))
    cols = []
    pos = 0
    while pos < len(sep):
        if sep[pos] == "-":
            end = sep.index(" ", pos) if " " in sep[pos:] else len(sep)
            cols.append((pos, end))
            pos = end
        else:
            pos += 1
    header_at = lines.index(sep) + 1
    headers = [lines[header_at][a:b].strip() for a, b in cols]
    rows = {}
    for line in lines[header_at + 2 :]:
        if line.startswith("-"):
            break
        cells = [line[a:b].strip() for a, b in cols]
        if cells[0] and cells[0] not in rows:
            rows[cells[0]] = dict(zip(headers, cells, strict=True))
    return rows


def export_trace(prof, path):
    prof.export_chrome_trace(str(path))
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    return trace, validate_chrome_trace(trace)


def check_structure(events):
    """Invariants of any recorded profile: children inside their parent's
    interval on its thread, 0 <= self <= total, and per thread the self
    times add up to the top-level spans' total."""
    self_sum = defaultdict(float)
    top_sum = defaultdict(float)
    for e in events:
        total = e.cpu_time_total
        assert -1e-6 <= e.self_cpu_time_total <= total + 1e-6, e
        self_sum[e.thread] += e.self_cpu_time_total
        if e.cpu_parent is None:
            top_sum[e.thread] += total
        else:
            p = e.cpu_parent
            assert p.thread == e.thread
            assert p.time_range.start <= e.time_range.start <= e.time_range.end <= p.time_range.end
            assert e in p.cpu_children
    for thread, total in top_sum.items():
        assert self_sum[thread] == pytest.approx(total, rel=1e-9, abs=1e-6)


def names(events):
    return Counter(e.name for e in events)


def leaf(*shape, dtype=None):
    return torch.rand(*shape, dtype=dtype, requires_grad=True)


@pytest.fixture(autouse=True)
def no_profiler_left_running():
    yield
    assert not _core._profiler_enabled()
    try:
        _core._profiler_stop()
    except RuntimeError:
        pass
    else:
        raise AssertionError("a test left the profiler running")


# --- what is recorded ----------------------------------------------------------------


def test_known_program_counts_and_structure(tmp_path):
    a, b = leaf(3, 4), leaf(3, 4)
    with profile() as prof:
        for _ in range(3):
            with record_function("forward"):
                c = (a * b).tanh().sum()
            c.backward()
    events = prof.function_events
    n = names(events)
    assert n["forward"] == 3
    for forward in (e for e in events if e.name == "forward"):
        assert [c.name for c in forward.cpu_children] == ["aten::mul", "aten::tanh", "aten::sum"]
    for node in ("MulBackward0", "TanhBackward0", "SumBackward0"):
        assert n[node] == 3
        assert n[EVAL + node] == 3
    assert n["torch::autograd::AccumulateGrad"] == 6  # two leaves, three passes
    assert n[EVAL + "torch::autograd::AccumulateGrad"] == 6
    # The forward muls are inside the ranges; any other mul ran inside a
    # backward node.
    for e in events:
        if e.name == "aten::mul" and e.cpu_parent.name != "forward":
            up = e.cpu_parent
            while up is not None and up.scope != 1:
                up = up.cpu_parent
            assert up is not None, "a mul outside the forward ranges and every backward node"

    main = events[0].thread
    pairs = {"MulBackward0": "aten::mul", "TanhBackward0": "aten::tanh", "SumBackward0": "aten::sum"}
    forward_ops = {
        (e.sequence_nr, e.thread): e
        for e in events
        if e.scope == 0 and e.sequence_nr >= 0 and not e.name.startswith(EVAL)
    }
    for e in events:
        if e.scope != 1:
            continue
        parent = e.cpu_parent
        assert parent is not None and parent.name == EVAL + e.name
        assert parent.sequence_nr == e.sequence_nr
        if e.name in pairs:
            assert e.fwd_thread == main
            fwd = forward_ops[(e.sequence_nr, e.fwd_thread)]
            assert fwd.name == pairs[e.name]
            assert fwd.time_range.end <= e.time_range.start

    check_structure(events)
    avg = prof.key_averages()
    counts = {x.key: x.count for x in avg}
    assert counts["MulBackward0"] == 3 and counts["forward"] == 3
    assert sum(counts.values()) == len(events)
    for x in avg:
        assert x.self_cpu_time_total <= x.cpu_time_total + 1e-6
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1, max_name_column_width=None)
    rows = table_rows(table)
    assert {name: int(r["# of Calls"]) for name, r in rows.items()} == counts
    share = sum(float(r["Self CPU %"].rstrip("%")) for r in rows.values())
    assert share == pytest.approx(100, abs=0.01 * len(rows))
    assert prof.self_cpu_time_total == pytest.approx(sum(x.self_cpu_time_total for x in avg))
    assert "CPU Mem" not in prof.table()

    trace, summary = export_trace(prof, tmp_path / "plain.json")
    # One arrow from each forward mul/tanh/sum to the node it recorded.
    assert summary["flows"] == 9
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == len(events)
    assert Counter(e["cat"] for e in spans)["user_annotation"] == 3


def test_exit_keeps_the_recording_and_events_are_built_on_demand():
    x = leaf(5)
    with profile() as prof:
        (x * 2).sum().backward()
    assert prof._function_events is None  # nothing built yet
    assert len(prof._result) > 0
    events = prof.function_events
    assert prof.function_events is events  # built once
    assert names(events)["aten::mul"] >= 1


def test_backward_on_pool_threads_is_recorded(tmp_path):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        x = leaf(256, 256)
        ws = [torch.rand(256, 256) for _ in range(6)]
        waves = _core._parallel_waves()
        with profile() as prof:
            total = None
            for w in ws:
                y = (x * w).sin()
                total = y if total is None else total + y
            total.sum().backward()
        assert _core._parallel_waves() > waves, "the wide graph did not run on the pool"
    finally:
        torch.set_num_threads(before)
    events = prof.function_events
    main = next(e.thread for e in events if e.name == "aten::mul")
    backward = [e for e in events if e.scope == 1]
    assert names(backward)["MulBackward0"] == 6 and names(backward)["SinBackward0"] == 6
    assert names(backward)["AddBackward0"] == 5
    pool_threads = {e.thread for e in backward} - {main}
    assert pool_threads, "no backward node was recorded on a pool thread"
    for e in backward:
        if e.name != "torch::autograd::AccumulateGrad":
            assert e.fwd_thread == main
    check_structure(events)
    trace, summary = export_trace(prof, tmp_path / "pool.json")
    assert summary["flows"] == 6 + 6 + 5 + 1  # mul, sin, add nodes and the sum
    tids = {e["tid"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert pool_threads <= tids
    thread_names = {
        e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"
    }
    assert all(thread_names[t] for t in tids)


def test_only_the_profiling_thread_is_recorded():
    stop = threading.Event()
    seen = []
    errors = []

    def worker():
        try:
            seen.append(_core._profiler_enabled())
            y = leaf(50)
            while not stop.is_set():
                with record_function("worker"):
                    (y * 3).sum().backward()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    x = leaf(50)
    with profile() as prof:
        assert _core._profiler_enabled()
        for t in threads:
            t.start()
        for _ in range(20):
            (x * 2).sum().backward()
        stop.set()
        for t in threads:
            t.join()
    assert not errors
    assert seen == [False, False, False]
    n = names(prof.function_events)
    assert n["worker"] == 0
    assert n["MulBackward0"] == 20
    assert n[EVAL + "SumBackward0"] == 20
    check_structure(prof.function_events)


def test_record_function_nesting_decorator_and_recursion():
    @record_function("deco")
    def add_one(t):
        return t + 1

    @record_function("rec")
    def recurse(t, k):
        return t if k == 0 else recurse(t * 2, k - 1)

    x = torch.ones(4)
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner") as rf:
                x * 2
        add_one(x)
        add_one(x)
        recurse(x, 2)
    assert isinstance(rf, record_function)
    events = prof.function_events
    (outer,) = [e for e in events if e.name == "outer"]
    (inner,) = [e for e in events if e.name == "inner"]
    assert inner.cpu_parent is outer
    assert [c.name for c in inner.cpu_children] == ["aten::mul"]
    deco = [e for e in events if e.name == "deco"]
    assert len(deco) == 2
    assert all([c.name for c in d.cpu_children] == ["aten::add"] for d in deco)
    recs = [e for e in events if e.name == "rec"]
    assert len(recs) == 3  # k = 2, 1, 0: each call inside the previous one
    assert recs[1].cpu_parent is recs[0] and recs[2].cpu_parent is recs[1]
    assert names(events)["aten::mul"] == 1 + 2
    assert all(e.is_user_annotation for e in deco + recs)
    check_structure(events)


def test_record_function_outside_a_profile_and_futures():
    with record_function("nothing") as rf:
        torch.ones(2) * 2
    assert rf.record is not None
    with profile() as prof:
        rf = record_function("async")
        rf.__enter__()
        fut = object()
        assert rf._call_end_callbacks_on_future(fut) is fut
        with pytest.raises(RuntimeError, match="only be called once"):
            rf._call_end_callbacks_on_future(fut)
        rf.__exit__(None, None, None)  # already ended: nothing to do
        torch.ones(2) * 2
    events = prof.function_events
    (ranged,) = [e for e in events if e.name == "async"]
    assert ranged.cpu_children == []  # closed before the mul ran


def test_record_function_in_a_custom_backward():
    class Double(custom_functions.Double):
        @staticmethod
        def backward(ctx, grad):
            with record_function("double_backward"):
                return custom_functions.Double.backward(ctx, grad)

    x = leaf(6)
    with profile() as prof:
        Double.apply(x).sum().backward()
    events = prof.function_events
    (ranged,) = [e for e in events if e.name == "double_backward"]
    assert "aten::mul" in [c.name for c in ranged.cpu_children]
    up = ranged.cpu_parent
    while up is not None and up.scope != 1:
        up = up.cpu_parent
    assert up is not None and "Double" in up.name
    assert x.grad.tolist() == [2.0] * 6


def test_record_shapes():
    a, b = torch.rand(2, 3), torch.rand(2, 3)
    v = torch.rand(4, dtype=torch.float64)
    with profile(record_shapes=True) as prof:
        a * b
        a * b
        v * v
        a.sum()
    events = prof.function_events
    muls = [e for e in events if e.name == "aten::mul"]
    assert [m.input_shapes for m in muls] == [[[2, 3], [2, 3]], [[2, 3], [2, 3]], [[4], [4]]]
    assert [m.input_dtypes for m in muls] == [["float", "float"]] * 2 + [["double", "double"]]
    (total,) = [e for e in events if e.name == "aten::sum"]
    assert total.input_shapes[0] == [2, 3]
    grouped = prof.key_averages(group_by_input_shape=True)
    assert sorted((str(g.input_shapes), g.count) for g in grouped if g.key == "aten::mul") == [
        ("[[2, 3], [2, 3]]", 2),
        ("[[4], [4]]", 1),
    ]
    assert "Input Shapes" in grouped.table()
    assert "Input Shapes" not in prof.key_averages().table()

    with profile() as plain:
        a * b
    assert all(e.input_shapes == [] for e in plain.function_events)
    assert "Input Shapes" not in plain.key_averages(group_by_input_shape=True).table()


def test_profile_memory_attributes_allocations_to_ops(tmp_path):
    x32 = torch.ones(1000)
    x64 = torch.ones(1000, dtype=torch.float64)
    with profile(profile_memory=True, record_shapes=True) as prof:
        y = x32 * x32  # 1000 float32: 4000 bytes
        z = x64 * x64  # 1000 float64: 8000 bytes
        del y  # freed outside any op
        fresh = torch.ones(1000)
    events = prof.function_events
    muls = [e for e in events if e.name == "aten::mul"]
    assert [m.cpu_memory_usage for m in muls] == [4000, 8000]
    assert [m.self_cpu_memory_usage for m in muls] == [4000, 8000]
    freed = [e for e in events if e.name == "[memory]" and e.cpu_memory_usage < 0]
    assert [f.cpu_memory_usage for f in freed] == [-4000]
    # The top-level events account for every byte allocated and freed in
    # the block: 4000 + 8000 - 4000 + 4000.
    assert sum(e.cpu_memory_usage for e in events if e.cpu_parent is None) == 12000
    rows = table_rows(prof.key_averages().table())
    assert rows["aten::mul"]["CPU Mem"] == "11.72 KB"
    assert rows["aten::mul"]["Self CPU Mem"] == "11.72 KB"
    check_structure(events)
    trace, summary = export_trace(prof, tmp_path / "memory.json")
    memory = [e for e in trace["traceEvents"] if e["ph"] == "i"]
    assert [e["args"]["Bytes"] for e in memory] == [4000, 8000, -4000, 4000]
    assert [e["args"]["Total Allocated"] for e in memory] == [4000, 12000, 8000, 12000]
    mul_args = [e["args"] for e in trace["traceEvents"] if e.get("name") == "aten::mul"]
    assert [a["Input Dims"] for a in mul_args] == [[[1000], [1000]], [[1000], [1000]]]
    assert [a["Input type"] for a in mul_args] == [["float", "float"], ["double", "double"]]
    del z, fresh


def test_with_stack_names_the_calling_line(tmp_path):
    x = leaf(3)
    with profile(with_stack=True) as prof:
        line = inspect.currentframe().f_lineno + 1
        y = x * 2
        y.sum().backward()
    events = prof.function_events
    (mul,) = [e for e in events if e.name == "aten::mul" and e.sequence_nr >= 0]
    assert mul.stack[0] == f"{__file__}({line}): test_with_stack_names_the_calling_line"
    assert not any(profiler._PACKAGE_DIR in frame for e in events for frame in e.stack)
    (node,) = [e for e in events if e.name == "MulBackward0"]
    assert node.stack == mul.stack  # the backward node shows where its forward op ran
    table = prof.key_averages(group_by_stack_n=3).table()
    assert f"test_profiler.py({line})" in table
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    lines = path.read_text().splitlines()
    for entry in lines:
        frames, value = entry.rsplit(" ", 1)
        assert int(value) > 0 and " " not in frames
    leafs = [entry.rsplit(" ", 1)[0].split(";")[-1] for entry in lines]
    assert all(frame.startswith(__file__) for frame in leafs)
    with profile() as no_stack:
        x * 2
    with pytest.raises(AssertionError, match="with_stack=True"):
        no_stack.export_stacks(str(path))


# --- the context manager ----------------------------------------------------------


def test_disabled_profile_records_nothing():
    x = torch.ones(3)
    p = profile(enabled=False)
    with p as bound:
        assert not _core._profiler_enabled()
        x * 2
    assert bound is None
    assert p.function_events is None
    assert len(p.key_averages()) == 0 and p.table() == ""


def test_exception_inside_the_block_stops_the_profiler():
    x = torch.ones(3)
    with pytest.raises(ValueError, match="boom"):
        with profile() as prof:
            x * 2
            raise ValueError("boom")
    assert not _core._profiler_enabled()
    assert names(prof.function_events)["aten::mul"] == 1
    with profile() as again:
        x + 1
    assert names(again.function_events)["aten::add"] == 1


def test_nested_profile_raises_and_the_outer_one_keeps_recording():
    x = torch.ones(3)
    with profile() as outer:
        with pytest.raises(RuntimeError):
            with profile():
                pass
        x * 2
    assert names(outer.function_events)["aten::mul"] == 1
    reused = profile()
    with reused:
        pass
    with pytest.raises(RuntimeError, match="not reentrant"):
        reused.__enter__()


def test_device_options_warn_and_are_ignored():
    with (
        pytest.warns(FutureWarning, match="use_cuda"),
        pytest.warns(UserWarning, match="CUDA is not available"),
    ):
        p = profile(use_cuda=True)
    assert p.use_device is None
    with pytest.warns(UserWarning, match="CUDA is not available"):
        profile(use_device="cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert profile(use_device="cpu").use_device is None
    with pytest.raises(AssertionError):
        profile(use_cpu=False)


def test_acc_events_keeps_earlier_runs():
    x = torch.ones(3)
    prof = profile(acc_events=True)
    prof._prepare_trace()
    for _ in range(2):
        prof._start_trace()
        x * 2
        prof.__exit__(None, None, None)
    assert names(prof.function_events)["aten::mul"] == 2


def test_table_and_repr_of_a_profile():
    with profile() as prof:
        torch.ones(3) * 2
    text = str(prof)
    assert "aten::mul" in text and text.splitlines()[-1].startswith("Self CPU time total: ")
    assert prof.table() == prof.function_events.table()
    assert prof.total_average().key == "Total"
    assert "<FunctionEvent" in repr(prof)
