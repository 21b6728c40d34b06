"""torch.profiler's profiler: activities, schedules and trace handlers on
top of the autograd profiler's recorder."""

from __future__ import annotations

import gzip
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

from ..autograd import profiler as prof
from ..autograd.profiler_util import EventList

__all__ = [
    "supported_activities",
    "ProfilerAction",
    "ProfilerActivity",
    "schedule",
    "tensorboard_trace_handler",
    "profile",
]

PROFILER_STEP_NAME = "ProfilerStep"

_warned: set[str] = set()


def _warn_once(message: str, stacklevel: int = 3) -> None:
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


class ProfilerActivity(Enum):
    """What a profiler records. ferrograd records ``CPU`` activity (ops,
    backward nodes, user ranges); the device activities exist for torch
    compatibility and record nothing.

    Example:
        >>> ProfilerActivity.CPU in supported_activities()
        True
    """

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


def supported_activities() -> set[ProfilerActivity]:
    """The activities this build can record: ``{ProfilerActivity.CPU}``.

    Example:
        >>> supported_activities()
        {<ProfilerActivity.CPU: 0>}
    """
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """Whether torch's Kineto library backs the profiler: never, in
    ferrograd (its own recorder does)."""
    return False


class ProfilerAction(Enum):
    """What the profiler does at a step, as a :func:`schedule` returns it:
    ``NONE`` (idle), ``WARMUP`` (running, results dropped), ``RECORD``, or
    ``RECORD_AND_SAVE`` (record, then call ``on_trace_ready``)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    """A schedule for :class:`profile`: after ``skip_first`` steps, cycles
    of ``wait`` idle steps, ``warmup`` steps and ``active`` recorded steps
    (the last one ``RECORD_AND_SAVE``, after which ``on_trace_ready``
    runs), ``repeat`` times (0: forever). ``skip_first_wait`` drops the
    first cycle's wait.

    Keyword args:
        wait (int): idle steps at the start of each cycle.
        warmup (int): warm-up steps (profiling on, results dropped); 0
            warns, as the first recorded step may then be skewed.
        active (int): recorded steps per cycle (at least 1).
        repeat (int): the number of cycles; 0 repeats until the profiler
            stops. Default: ``0``.
        skip_first (int): idle steps before the first cycle. Default: ``0``.
        skip_first_wait (int): nonzero skips the ``wait`` steps of the
            first cycle. Default: ``0``.

    Returns:
        callable: ``fn(step) -> ProfilerAction``.

    Example:
        >>> fn = schedule(wait=1, warmup=1, active=2, repeat=1)
        >>> [fn(step).name for step in range(5)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step >= repeat * cycle:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    """Without a schedule: record every step."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing each trace to ``dir_name`` as
    ``{worker_name}.{time_ns}.pt.trace.json`` (``.gz`` with ``use_gzip``),
    the layout TensorBoard's profiler plugin reads.

    Args:
        dir_name (str): the directory to write into (created if needed).
        worker_name (str, optional): the file-name prefix.
            Default: ``{hostname}_{pid}``.
        use_gzip (bool): compress the traces with gzip. Default: ``False``.
        use_python_export (bool): ignored (ferrograd has one trace
            writer). Default: ``False``.

    Returns:
        callable: the handler, ``handler(prof)``.

    Example:
        >>> import os, tempfile
        >>> log_dir = tempfile.mkdtemp()
        >>> with profile(on_trace_ready=tensorboard_trace_handler(log_dir, "worker0")):
        ...     y = ferrograd.ones(3) * 2
        >>> [name.endswith(".pt.trace.json") for name in os.listdir(log_dir)]
        [True]
    """

    def handler_fn(p: Any) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        p.export_chrome_trace(os.path.join(dir_name, file_name), use_python_export=use_python_export)

    return handler_fn


def _activity_set(activities: Iterable[Any] | None) -> set[ProfilerActivity]:
    if activities is None:
        return supported_activities()
    chosen: set[ProfilerActivity] = set()
    for item in activities:
        keys = list(item.keys()) if isinstance(item, dict) else [item]
        for key in keys:
            if not isinstance(key, ProfilerActivity):
                raise TypeError(f"Expected ProfilerActivity or dict, got {type(key)}")
            if key in chosen:
                raise ValueError(f"Activity {key} specified more than once")
            chosen.add(key)
    return chosen



def _warn_unrecorded(activities: set[ProfilerActivity]) -> None:
    """Warns (once each, pointing at the caller of the profiler's constructor) about the chosen
    activities that ferrograd does not record."""
    for activity in sorted(activities - supported_activities(), key=lambda a: a.value):
        message = f"ferrograd records CPU activity only; {activity} is ignored (no device runs in ferrograd)"
        _warn_once(message, stacklevel=4)


class _KinetoProfile:
    """The profiler without steps: ``start()`` / ``stop()`` around the code
    to record, then the same results as :class:`profile`."""

    def __init__(
        self, *, activities: Iterable[Any] | None = None, record_shapes: bool = False,
        profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
        with_modules: bool = False, experimental_config: Any = None, execution_trace_observer: Any = None,
        acc_events: bool = False, custom_trace_id_callback: Callable[[], str] | None = None,
    ) -> None:  # fmt: skip
        self.activities = _activity_set(activities)
        _warn_unrecorded(self.activities)
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.profiler: prof.profile | None = None
        self.use_device: str | None = None
        self.preset_metadata: dict[str, str] = {}
        self._trace_metadata: dict[str, str] = {}

    def _current(self, doing: str) -> prof.profile:
        """The profile of the current cycle; before there is one, an AssertionError saying
        that the profiler must be initialized before ``doing``."""
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {doing}")
        return self.profiler

    def start(self) -> None:
        self.prepare_trace()
        self.start_trace()

    def stop(self) -> None:
        self.stop_trace()

    def prepare_trace(self) -> None:
        if self.profiler is not None and not self.acc_events:
            _warn_once(
                "Warning: Profiler clears events at the end of each cycle. "
                "Only events from the current cycle will be reported. "
                "To keep events across cycles, set acc_events=True."
            )
        if self.profiler is None or not self.acc_events:
            self.profiler = prof.profile(
                use_cpu=ProfilerActivity.CPU in self.activities,
                record_shapes=self.record_shapes,
                with_flops=self.with_flops,
                profile_memory=self.profile_memory,
                with_stack=self.with_stack,
                with_modules=self.with_modules,
                use_kineto=True,
                experimental_config=self.experimental_config,
                acc_events=self.acc_events,
                custom_trace_id_callback=self.custom_trace_id_callback,
            )
        self.profiler._prepare_trace()

    def start_trace(self) -> None:
        if self.execution_trace_observer:
            self.execution_trace_observer.start()
        self._current("starting trace")._start_trace()
        for flag in ("profile_memory", "with_stack", "record_shapes", "with_modules", "with_flops"):
            if getattr(self, flag):
                self.add_metadata_json(flag, "1")
        for key, value in self.preset_metadata.items():
            self.add_metadata_json(key, value)

    def stop_trace(self) -> None:
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        self._current("stopping trace").__exit__(None, None, None)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Writes the last recorded cycle as a Chrome trace (gzip-compressed
        when ``path`` ends with ``.gz``)."""
        recorded = self._current("exporting chrome trace")._events()
        with recorded._extra_trace_metadata(self._trace_metadata) as events:
            if path.endswith(".gz"):
                from ..autograd.profiler_util import _write_chrome_trace

                with gzip.open(path, "wt", encoding="utf-8") as f:
                    _write_chrome_trace(events, f)
            else:
                events.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes collapsed stacks (needs ``with_stack=True``)."""
        self._current("exporting stacks").export_stacks(path, metric)

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The events grouped by name (and optionally input shapes, stack
        or overload name)."""
        return self._current("getting key averages").key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def events(self) -> EventList | None:
        """The unaggregated events of the last recorded cycle."""
        return self._current("accessing events").function_events

    def add_metadata(self, key: str, value: str) -> None:
        """Adds a string ``value`` under ``key`` at the top of the trace."""
        self._trace_metadata[key] = '"' + value.replace('"', '\\"') + '"'

    def add_metadata_json(self, key: str, value: str) -> None:
        """Adds ``value`` (JSON text) under ``key`` at the top of the trace."""
        self._trace_metadata[key] = value

    def preset_metadata_json(self, key: str, value: str) -> None:
        """Metadata added to the trace when recording starts."""
        self.preset_metadata[key] = value


class profile(_KinetoProfile):
    """Profiler context manager with steps and schedules.

    Without ``schedule`` it records from entry to exit. With one, call
    ``step()`` at the end of each iteration: the schedule says, per step
    number, whether to record (``RECORD``), record and then hand the trace
    to ``on_trace_ready`` (``RECORD_AND_SAVE``), warm up or stay idle; each
    step shows in the events as a ``ProfilerStep#N`` range. The results
    are read as with :class:`ferrograd.autograd.profiler.profile`
    (``key_averages()``, ``events()``, ``export_chrome_trace(path)``,
    ``export_stacks(path)``).

    Keyword args:
        activities (iterable of ProfilerActivity, optional): what to
            record; only ``ProfilerActivity.CPU`` records anything.
            Default: every supported activity.
        schedule (callable, optional): ``fn(step) -> ProfilerAction``, e.g.
            from :func:`schedule`. Default: ``None`` (record everything).
        on_trace_ready (callable, optional): called with the profiler
            after each recorded cycle, e.g.
            :func:`tensorboard_trace_handler`. Default: ``None``.
        record_shapes (bool): record the input shapes of ops.
            Default: ``False``.
        profile_memory (bool): record tensor allocations and frees.
            Default: ``False``.
        with_stack (bool): record the Python frames of each op.
            Default: ``False``.
        with_flops (bool): estimate FLOPs of matrix products and
            elementwise ops. Default: ``False``.
        with_modules (bool): accepted for compatibility. Default: ``False``.
        experimental_config: accepted for compatibility. Default: ``None``.
        execution_trace_observer (optional): an observer whose
            ``cleanup()`` runs on exit. Default: ``None``.
        acc_events (bool): keep the events of every cycle.
            Default: ``False``.
        use_cuda (bool, optional): deprecated; use ``activities``.
            Default: ``None``.
        custom_trace_id_callback (callable, optional): returns the id of
            each trace. Default: ``None``.

    Example:
        >>> saved = []
        >>> x = ferrograd.ones(3)
        >>> with profile(
        ...     activities=[ProfilerActivity.CPU],
        ...     schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
        ...     on_trace_ready=lambda p: saved.append(len(p.key_averages())),
        ... ) as p:
        ...     for step in range(5):
        ...         y = x * x
        ...         p.step()
        >>> len(saved)
        1
    """

    def __init__(
        self,
        *,
        activities: Iterable[Any] | None = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[..., Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: bool | None = None,
        custom_trace_id_callback: Callable[[], str] | None = None,
    ) -> None:
        chosen = _activity_set(activities)
        if use_cuda is not None:
            warnings.warn(
                "`use_cuda` is deprecated, use `activities` argument instead", FutureWarning, stacklevel=2
            )
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
            else:
                chosen.discard(ProfilerActivity.CUDA)
        if not chosen:
            raise AssertionError("No valid profiler activities found")
        super().__init__(
            activities=chosen, record_shapes=record_shapes, profile_memory=profile_memory,
            with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
            experimental_config=experimental_config, execution_trace_observer=execution_trace_observer,
            acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback,
        )  # fmt: skip
        if schedule:
            self.schedule = schedule
            self.record_steps = True
        else:
            self.schedule = _default_schedule_fn
            self.record_steps = False
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: prof.record_function | None = None
        A = ProfilerAction
        prepare, start, stop, ready = self.prepare_trace, self.start_trace, self.stop_trace, self._trace_ready

        def complain(message: str) -> Callable[[], None]:
            return lambda: warnings.warn(message, stacklevel=4)

        # What to do when the action changes from the key's first item to
        # its second (None: the profiler stops).
        self.action_map: dict[tuple[ProfilerAction, ProfilerAction | None], list[Callable[[], Any]]] = {
            (A.NONE, A.NONE): [],
            (A.NONE, A.WARMUP): [prepare],
            (A.NONE, A.RECORD): [prepare, start],
            (A.NONE, A.RECORD_AND_SAVE): [prepare, start],
            (A.WARMUP, A.NONE): [complain("Incorrect schedule: WARMUP followed by NONE"), start, stop],
            (A.WARMUP, A.WARMUP): [],
            (A.WARMUP, A.RECORD): [start],
            (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [complain("Incorrect schedule: RECORD followed by NONE"), stop],
            (A.RECORD, A.WARMUP): [complain("Incorrect schedule: RECORD followed by WARMUP"), stop],
            (A.RECORD, A.RECORD): [],
            (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prepare],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prepare, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (A.WARMUP, None): [start, stop],
            (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }
        prof.KinetoStepTracker.init_step_count(PROFILER_STEP_NAME)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.stop()
        prof.KinetoStepTracker.erase_step_count(PROFILER_STEP_NAME)
        if self.execution_trace_observer:
            self.execution_trace_observer.cleanup()

    def start(self) -> None:
        """Starts profiling (what entering the ``with`` block does)."""
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self._open_step()

    def stop(self) -> None:
        """Stops profiling (what leaving the ``with`` block does)."""
        self._close_step()
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """Marks the end of a step (iteration): the schedule's action for
        the next step number takes effect."""
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(previous, self.current_action)
        if self.record_steps:
            self._open_step()

    def _open_step(self) -> None:
        self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
        self.step_rec_fn.__enter__()

    def _close_step(self) -> None:
        if self.step_rec_fn is not None:
            rec, self.step_rec_fn = self.step_rec_fn, None
            rec.__exit__(None, None, None)

    def get_trace_id(self) -> str | None:
        """The id of the current trace (``None`` before the first cycle)."""
        return None if self.profiler is None else self.profiler.trace_id

    def set_custom_trace_id_callback(self, callback: Callable[[], str]) -> None:
        """Sets the function that names the following traces.

        Args:
            callback (callable): ``callback() -> str``.
        """
        self.custom_trace_id_callback = callback

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action: ProfilerAction, current_action: ProfilerAction | None) -> None:
        for action in self.action_map.get((prev_action, current_action), []):
            action()
