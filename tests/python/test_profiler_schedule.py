"""torch.profiler's API: the schedule state machine (which steps are
recorded, when on_trace_ready runs), tensorboard_trace_handler's files,
activities and the traces of the new API."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import warnings

import ferrograd as torch
import pytest
from ferrograd import _core
from ferrograd.profiler import (
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)
from ferrograd.profiler import profiler as new_api
from test_profiler import export_trace, validate_chrome_trace

N, W, R, S = ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE

pytestmark = pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")


@pytest.fixture(autouse=True)
def no_profiler_left_running():
    yield
    assert not _core._profiler_enabled()


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        (dict(wait=1, warmup=1, active=2), [N, W, R, S, N, W, R, S, N, W]),
        (dict(wait=1, warmup=1, active=2, repeat=1), [N, W, R, S, N, N, N, N, N, N]),
        (dict(wait=0, warmup=1, active=1, repeat=2, skip_first=2), [N, N, W, S, W, S, N, N, N, N]),
        (
            dict(wait=2, warmup=1, active=1, repeat=2, skip_first=1, skip_first_wait=1),
            [N, W, S, N, N, W, S, N, N, N],
        ),
        (dict(wait=0, warmup=2, active=3), [W, W, R, R, S, W, W, R, R, S]),
    ],
)
def test_schedule_actions(kwargs, expected):
    fn = schedule(**kwargs)
    assert [fn(step) for step in range(10)] == expected


def test_schedule_argument_checks():
    with pytest.raises(AssertionError, match="active=0"):
        schedule(wait=1, warmup=1, active=0)
    with pytest.raises(AssertionError, match="wait=-1"):
        schedule(wait=-1, warmup=1, active=1)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        fn = schedule(wait=1, warmup=0, active=1)
    assert [fn(i) for i in range(4)] == [N, S, N, S]
    with pytest.raises(AssertionError, match="non-negative"):
        fn(-1)


def steps_recorded(p):
    """The ``ProfilerStep#k`` numbers in the current events and the count
    of ``aten::mul`` ops."""
    events = p.events()
    steps = sorted(int(e.trace_name.split("#")[1]) for e in events if e.name == "ProfilerStep*")
    return steps, sum(e.name == "aten::mul" for e in events)


def run_steps(sched, n):
    calls = []
    x = torch.ones(4)
    with profile(
        schedule=sched, on_trace_ready=lambda p: calls.append((p.step_num, *steps_recorded(p)))
    ) as p:
        for _ in range(n):
            x * 2
            p.step()
    return p, calls


def test_steps_recorded_and_trace_ready_calls():
    # N W R S N W R S: steps 2-3 and 6-7 are recorded; the handler runs
    # when step() leaves each RECORD_AND_SAVE step.
    p, calls = run_steps(schedule(wait=1, warmup=1, active=2), 8)
    assert calls == [(4, [2, 3], 2), (8, [6, 7], 2)]
    assert p.step_num == 8 and p.current_action == N


def test_repeat_and_skip_first():
    p, calls = run_steps(schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1), 8)
    assert calls == [(5, [3, 4], 2)]


def test_exit_while_recording_saves_the_trace():
    # W R R, then the exit during step 3 (RECORD_AND_SAVE): recorded steps
    # 1-3, of which the loop ran a mul in 1 and 2.
    p, calls = run_steps(schedule(wait=0, warmup=1, active=3), 3)
    assert calls == [(3, [1, 2, 3], 2)]


def test_exit_during_warmup_saves_nothing():
    p, calls = run_steps(schedule(wait=1, warmup=5, active=1), 3)
    assert calls == []
    assert len(p.events()) == 0


def test_incorrect_schedule_warns_and_drops_the_cycle():
    actions = [R, R, N, N]
    calls = []
    x = torch.ones(2)
    with pytest.warns(UserWarning, match="RECORD followed by NONE"):
        with profile(schedule=lambda step: actions[min(step, 3)], on_trace_ready=calls.append) as p:
            for _ in range(3):
                x * 2
                p.step()
    assert calls == []
    assert steps_recorded(p) == ([0, 1], 2)


def test_without_schedule_everything_is_recorded():
    x = torch.ones(2)
    calls = []
    with profile(on_trace_ready=calls.append) as p:
        for _ in range(3):
            x * 2
            p.step()
    assert calls == [p]
    assert steps_recorded(p) == ([], 3)
    assert p.key_averages()[0].key == "aten::mul"


def test_start_stop_without_context_manager():
    x = torch.ones(2)
    p = profile(activities=[ProfilerActivity.CPU])
    p.start()
    x * 2
    p.stop()
    assert steps_recorded(p) == ([], 1)


def test_tensorboard_trace_handler_files(tmp_path):
    log = tmp_path / "log" / "run1"
    handler = tensorboard_trace_handler(str(log), worker_name="worker0", use_gzip=True)
    x = torch.ones(3)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2), on_trace_ready=handler) as p:
        for _ in range(6):
            x * x
            p.step()
    files = sorted(os.listdir(log))
    assert len(files) == 2
    for name in files:
        assert re.fullmatch(r"worker0\.\d+\.pt\.trace\.json\.gz", name), name
        with gzip.open(log / name, "rt") as f:
            trace = json.load(f)
        summary = validate_chrome_trace(trace)
        assert summary["X"] == 2  # the recorded step and its mul
        assert {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"} >= {"aten::mul"}
    default = tensorboard_trace_handler(str(tmp_path / "default"))
    with profile() as q:
        x * 2
    default(q)
    (name,) = os.listdir(tmp_path / "default")
    assert name.startswith(f"{socket.gethostname()}_{os.getpid()}.") and name.endswith(".pt.trace.json")


def test_new_api_trace_with_shapes_memory_and_backward(tmp_path):
    a = torch.rand(8, 8, requires_grad=True)
    with profile(
        activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True, with_stack=True
    ) as p:
        with record_function("model"):
            loss = (a * a).sum()
        loss.backward()
    p.add_metadata("run", "smoke")
    trace, summary = export_trace(p, tmp_path / "trace.json.gz")
    assert trace["run"] == "smoke"
    assert trace["record_shapes"] == 1 and trace["profile_memory"] == 1
    assert summary["flows"] == 2  # mul -> MulBackward0, sum -> SumBackward0
    assert summary["i"] >= 1
    names = {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {
        "model",
        "aten::mul",
        "MulBackward0",
        "autograd::engine::evaluate_function: MulBackward0",
    } <= names
    plain, _ = export_trace(p, tmp_path / "trace.json")
    assert plain["traceEvents"] == trace["traceEvents"]
    stacks = tmp_path / "stacks.txt"
    p.export_stacks(str(stacks))
    assert "test_profiler_schedule.py" in stacks.read_text()


def test_activities(monkeypatch):
    assert supported_activities() == {ProfilerActivity.CPU}
    assert kineto_available() is False
    monkeypatch.setattr(new_api, "_warned", set())
    x = torch.ones(2)
    with pytest.warns(UserWarning, match="CPU activity only"):
        p = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with p:
        x * 2
    assert steps_recorded(p) == ([], 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        only_device = profile(activities=[ProfilerActivity.CUDA])
    with pytest.raises(AssertionError, match="No activities"):
        with only_device:
            pass
    with pytest.raises(ValueError, match="more than once"):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CPU])
    with pytest.warns(FutureWarning, match="use_cuda"):
        profile(use_cuda=False)


def test_nested_new_api_profile_raises():
    with profile() as outer:
        with pytest.raises(RuntimeError):
            with profile():
                pass
        torch.ones(2) * 2
    assert steps_recorded(outer) == ([], 1)
