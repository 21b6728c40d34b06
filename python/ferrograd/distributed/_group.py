"""Process groups on MPI: running collectives, waiting with a timeout, and
telling the other ranks when one fails or leaves.

Every operation is started, in program order, by the calling thread as a
nonblocking MPI call on the tensor's own memory (the buffer protocol, no
copy). A synchronous call then polls its request to completion; an
asynchronous one (``async_op=True``) returns a :class:`Work` whose request
a progress thread drives (so communication proceeds while the caller
computes). Both wait with the group's timeout and watch a side channel on
which the other ranks post what would otherwise leave this one waiting:
a rank that dies of an uncaught exception, or that went on after its
backward pass stopped inside DDP (with the gradient reductions half
started, or before any of them), sends its error; a rank that leaves (it
destroyed the process group, or its script ended) says so. A failure, a
departure or a hang thus becomes a :class:`DistBackendError` naming the
rank or the operation instead of a process stuck forever.

When ``python -m ferrograd.distributed.run`` started the job, each rank
also tells the launcher when it joins, finishes or fails (one line of JSON
per event on a local socket), so that the launcher can report a rank whose
process ended without finishing, which MPI's launcher may not. This module
also checks that the world MPI formed has the size the launcher started.
"""

from __future__ import annotations

import array
import atexit
import collections
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from .. import _core

_FAIL_TAG = 7301
_ACK_TAG = 7302
_LEFT_TAG = 7303
# How long an operation may still complete after one of its ranks said it
# left: what that rank sent before leaving may still be on its way.
_LEFT_GRACE = 1.0

# Set by the launcher (run.py) for the ranks: the socket it listens on, and
# the number of processes it started.
MONITOR_ENV = "FERROGRAD_DIST_MONITOR"
WORLD_SIZE_ENV = "FERROGRAD_DIST_WORLD_SIZE"
# What launchers set to the number of processes they started (the world
# size), and to the number they started on this node (at most the world).
_SIZE_VARS = (WORLD_SIZE_ENV, "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE")


class DistError(RuntimeError):
    """Base class of the errors of ``ferrograd.distributed``."""


class DistBackendError(DistError):
    """A collective failed: another rank failed, the operation timed out,
    or the group is unusable after an earlier failure."""


class DistNetworkError(DistError):
    """The transport failed."""


for _cls in (DistError, DistBackendError, DistNetworkError):
    _cls.__module__ = "ferrograd.distributed"


_MPI: list[Any] = []


def _mpi() -> Any:
    if _MPI:
        return _MPI[0]
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - depends on the install
        raise RuntimeError(
            "ferrograd.distributed needs mpi4py and an MPI library: pip install 'ferrograd[mpi]' "
            "(mpi4py and the mpich wheel), or mpi4py built against your cluster's MPI"
        ) from e
    return MPI


class _State:
    """The process-wide state: the world group, the failure channel and
    the progress thread."""

    def __init__(self) -> None:
        self.world: ProcessGroup | None = None
        self.fail_comm: Any = None
        self.status: Any = None                # an MPI.Status for probing the failure channel
        self.failure: str | None = None        # what another rank reported
        self.failed_rank: int | None = None
        self.failed_alive = False              # the failed rank went on (it will not end the job)
        self.broken: str | None = None         # why this process's groups are unusable
        self.left: dict[int, tuple[str, float]] = {}  # rank -> (what it did, when this rank heard)
        self.farewells: list[Any] = []         # this rank's notices that it left, being sent
        self.report_sends: list[Any] = []      # this rank's failure report, being sent
        self.acks: list[Any] = []              # the other ranks' acknowledgements of it
        # DDP's reductions started inside a backward pass and not yet waited
        # (by the thread that started them).
        self.in_backward: dict[Work, int] = {}
        # DDP instances (by id) whose backward pass reached their outputs
        # and none of their parameters yet, by the thread that runs it.
        self.began: dict[int, int] = {}
        self.lock = threading.Lock()
        self.pending: collections.deque[Work] = collections.deque()
        self.wakeup = threading.Condition(self.lock)
        self.thread: threading.Thread | None = None
        self.threaded = False
        self.prev_excepthook: Callable[..., Any] | None = None
        self.group_count = 0
        self.pid = 0                           # the process that initialised MPI (not a forked child)
        self.rank = -1                         # in MPI's world
        self.monitor: socket.socket | None = None  # the connection to the launcher
        self.told_failure = False              # the launcher has heard that this rank failed


_state = _State()


def _poll_channel() -> None:
    """Reads what the other ranks posted on the side channel: failure
    reports (the first one counts) and notices that ranks left. (The
    acknowledgements of this rank's own report go to the receives posted
    with it; anything else is dropped, so that it cannot hide what
    follows.)"""
    st = _state
    comm = st.fail_comm
    if comm is None:
        return
    MPI = _mpi()
    status = st.status
    while comm.iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
        rank, tag = status.Get_source(), status.Get_tag()
        if tag == _FAIL_TAG:
            report = comm.recv(source=rank, tag=_FAIL_TAG)
            if st.failure is None:
                st.failure = f"rank {report['rank']} failed: {report['error']}"
                st.failed_rank = report["rank"]
                st.failed_alive = bool(report.get("alive"))
        elif tag == _LEFT_TAG:
            what = comm.recv(source=rank, tag=_LEFT_TAG)
            st.left.setdefault(rank, (what, time.perf_counter()))
        else:
            comm.recv(source=rank, tag=tag)


def _check_failure() -> None:
    """Raises if another rank reported a failure (reading its report from
    the side channel) or if the groups are broken."""
    st = _state
    _poll_channel()
    if st.failure is not None:
        st.broken = st.broken or st.failure
        raise DistBackendError(st.failure)
    if st.broken is not None:
        raise DistBackendError(f"the process group is unusable after an earlier failure: {st.broken}")


class Work:
    """The handle of an operation started with ``async_op=True`` (and of
    :func:`isend` and :func:`irecv`): the operation runs while the program
    goes on, and :meth:`wait` completes it.

    Made by the collectives, never directly.
    """

    def __init__(self, group: ProcessGroup, name: str, request: Any, finish: Callable[[], Any] | None,
                 status: Any = None, members: list[int] | None = None) -> None:
        self._group = group
        self._name = name
        self._members = group._global if members is None else members
        self._request = request
        self._finish = finish
        self._status = status
        self._done = threading.Event()
        self._finished = False
        self._error: BaseException | None = None
        self._result: Any = None

    def _complete(self) -> None:
        """Runs the post-processing once the request has completed (on the
        thread that waits)."""
        if self._finished:
            return
        self._finished = True
        if self._finish is not None:
            try:
                self._result = self._finish()
            except BaseException as e:  # noqa: BLE001  (reported by wait())
                self._error = e

    def is_completed(self) -> bool:
        """Whether the operation has completed (does not wait)."""
        if not self._done.is_set() and not _state.threaded and self._request.Test(self._status):
            self._done.set()
        return self._done.is_set()

    def is_success(self) -> bool:
        """Returns whether the operation has completed without error (does not
        wait).
        """
        return self.is_completed() and self._error is None

    def exception(self) -> BaseException | None:
        """Returns the error the operation failed with, or ``None``."""
        return self._error

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Waits for the operation to complete and returns ``True``.

        Raises ``DistBackendError`` if another rank failed or the time ran out.

        Args:
            timeout (timedelta, optional): the longest wait.
                Default: ``None`` (the group's timeout).
        """
        limit = self._group._timeout if timeout is None else timeout.total_seconds()
        _state.in_backward.pop(self, None)
        if _state.threaded:
            _wait(self._name, self._group, limit, self._done.is_set, self._done, self._members)
        else:
            _wait(self._name, self._group, limit, self._poll, members=self._members)
        self._complete()
        if self._error is not None:
            raise self._error
        return True

    def _poll(self) -> bool:
        if self._request.Test(self._status):
            self._done.set()
        return self._done.is_set()

    def result(self) -> Any:
        """Waits for the operation and returns its result (what the operation
        produced, or ``None``).
        """
        self.wait()
        return self._result

    def __repr__(self) -> str:
        return f"Work({self._name}, completed={self._done.is_set()})"


def _wait(name: str, group: ProcessGroup, limit: float, done: Callable[[], bool],
          event: threading.Event | None = None, members: list[int] | None = None) -> None:
    """Waits until ``done`` holds, checking the failure channel, for at
    most ``limit`` seconds. Without ``event`` it polls ``done`` (an MPI
    test, which is what moves the operation forward) without pause, as a
    blocking MPI call would; with one (an operation the progress thread
    drives) it sleeps on the event. ``members`` are the global ranks the
    operation needs (default: the whole group); if one of them has left,
    the wait ends after a short grace period."""
    start = time.perf_counter()
    checks = 0
    while not _done(name, done):
        if event is not None:
            event.wait(1e-3)
        else:
            checks += 1
            if checks & 255:
                continue
        _check_failure()
        if _state.left:
            _check_left(name, group, start, group._global if members is None else members)
        if time.perf_counter() - start > limit:
            why = (f"{name} on {group!r} timed out after {limit:g} s (rank {group.rank()} of "
                   f"{group.size()}): some rank did not take part in it")
            _state.broken = why
            raise DistBackendError(why)


def _check_left(name: str, group: ProcessGroup, start: float, members: list[int]) -> None:
    """Raises if a rank the operation needs has left (more than the grace
    period ago, counted from when the wait started or this rank heard)."""
    now = time.perf_counter()
    for rank in members:
        if rank in _state.left:
            what, heard = _state.left[rank]
            if now - max(start, heard) > _LEFT_GRACE:
                why = f"{name} on {group!r}: rank {rank} {what} before taking part in it"
                _state.broken = why
                raise DistBackendError(why)


def _done(name: str, done: Callable[[], bool]) -> bool:
    try:
        return done()
    except _mpi().Exception as e:
        raise DistBackendError(f"{name}: MPI error: {e}") from e


def _progress_loop() -> None:
    """Drives the requests of asynchronous operations in order."""
    st = _state
    while True:
        with st.wakeup:
            while not st.pending:
                st.wakeup.wait()
            work = st.pending[0]
        try:
            work._request.Wait(work._status)
        except BaseException as e:  # noqa: BLE001
            work._error = e
        with st.lock:
            st.pending.popleft()
        work._done.set()


class ProcessGroup:
    """A set of ranks that run collectives together (an MPI communicator).

    Made by :func:`init_process_group` (the default group) and
    :func:`new_group`; pass it as the ``group`` argument of the
    collectives.
    """

    def __init__(self, comm: Any, global_ranks: list[int], timeout: float, name: str) -> None:
        self._comm = comm
        self._global = global_ranks
        self._timeout = timeout
        self._name = name

    def rank(self) -> int:
        """Returns this process's rank within the group."""
        return int(self._comm.Get_rank())

    def size(self) -> int:
        """Returns the number of processes in the group."""
        return int(self._comm.Get_size())

    def __repr__(self) -> str:
        return f"ProcessGroup({self._name}, size={self.size()})"

    def _run(self, name: str, start: Callable[[], Any], finish: Callable[[], Any] | None,
             async_op: bool, status: Any = None, check: tuple[int, ...] | None = None,
             members: list[int] | None = None) -> Any:
        """Starts a nonblocking operation; waits for it (synchronous) or
        returns its Work (``status`` receives the request's MPI status).
        With ``check`` (what every rank must agree on: sizes, dtype, op,
        root), the ranks first compare it, and a mismatch raises on every
        rank before any data moves. ``members``: the global ranks the
        operation needs (default: the whole group)."""
        if _state.in_backward or _state.began:
            _check_abandoned(name)
        _check_failure()
        if check is not None and _CHECK:
            self._agree(name, check)
        request = start()
        if async_op:
            work = Work(self, name, request, finish, status, members)
            if _state.threaded:
                with _state.wakeup:
                    _state.pending.append(work)
                    _state.wakeup.notify()
            return work
        _wait(name, self, self._timeout, lambda: request.Test(status), members=members)
        return finish() if finish is not None else None


    def _agree(self, name: str, check: tuple[int, ...]) -> None:
        """Gathers every rank's (operation, *check) and raises ValueError on
        all of them if they differ (the group stays usable)."""
        mine = array.array("q", (_KINDS.setdefault(name, len(_KINDS) + 1), *check))
        k = len(mine)
        everyone = array.array("q", bytes(8 * k * self.size()))
        request = self._comm.Iallgather(mine, everyone)
        _wait(name, self, self._timeout, request.Test)
        rows = [tuple(everyone[i * k:(i + 1) * k]) for i in range(self.size())]
        if all(r == rows[0] for r in rows):
            return
        names = {v: n for n, v in _KINDS.items()}
        described = "; ".join(f"rank {self._global[i]}: {names.get(r[0], '?')} {_describe(r[1:])}"
                              for i, r in enumerate(rows))
        raise ValueError(f"{name}: the ranks of {self!r} called mismatched collectives ({described})")


# Operation names as numbers, for the agreement check (the same on every
# rank: the table is filled in call order, which agrees when the calls do).
_KINDS: dict[str, int] = {n: i for i, n in enumerate(
    ("all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "reduce",
     "gather", "scatter", "barrier"), start=1)}
_CHECK = os.environ.get("FERROGRAD_DIST_CHECK", "1") != "0"
DTYPE_CODES: dict[str, int] = {f"ferrograd.{n}": i for i, n in enumerate(
    ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
     "complex64", "complex128"), start=1)}


def _describe(check: tuple[int, ...]) -> str:
    numel, dtype, extra = (tuple(check) + (0, 0, 0))[:3]
    names = {v: n for n, v in DTYPE_CODES.items()}
    return f"{numel} elements of {names.get(dtype, '-')} (op/root {extra})"


def init_world(timeout: timedelta) -> ProcessGroup:
    """Initialises MPI (thread level 'multiple' when the library has it),
    the world group, the failure channel, the exit handling and the
    connection to the launcher."""
    MPI = _mpi()
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
    st = _state
    st.pid = os.getpid()
    _connect_monitor(MPI.COMM_WORLD.Get_rank())
    # Before the first collective call: a rank stuck in it has started.
    _tell_launcher("start")
    comm = MPI.COMM_WORLD.Dup()
    st.fail_comm = MPI.COMM_WORLD.Dup()
    st.status = MPI.Status()
    st.failure = None
    st.failed_rank = None
    st.failed_alive = False
    st.broken = None
    st.left = {}
    st.in_backward = {}
    st.began = {}
    st.report_sends = []
    st.acks = []
    st.told_failure = False
    st.threaded = (MPI.Query_thread() == MPI.THREAD_MULTIPLE
                   and os.environ.get("FERROGRAD_DIST_PROGRESS", "thread") == "thread")
    if st.threaded and st.thread is None:
        st.thread = threading.Thread(target=_progress_loop, name="ferrograd-dist-progress", daemon=True)
        st.thread.start()
    world = ProcessGroup(comm, list(range(comm.Get_size())), timeout.total_seconds(), "WORLD")
    st.world = world
    if st.prev_excepthook is None:
        st.prev_excepthook = sys.excepthook
        sys.excepthook = _excepthook
        atexit.register(_at_exit)
    return world


def check_world(world: ProcessGroup, world_size: int | None, rank: int | None) -> None:
    """init_process_group's checks of the world MPI formed: against the
    launcher's variables (:func:`check_launch_size`), then against the
    asked ``world_size`` and ``rank`` (or torchrun's ``WORLD_SIZE`` and
    ``RANK``; ValueError naming both on a mismatch)."""
    check_launch_size(world.size())
    expected = {"world_size": world_size if world_size not in (None, -1) else _env_int("WORLD_SIZE"),
                "rank": rank if rank not in (None, -1) else _env_int("RANK")}
    actual = {"world_size": world.size(), "rank": world.rank()}
    for key, want in expected.items():
        if want is not None and want != actual[key]:
            raise ValueError(
                f"init_process_group: {key}={want} was asked for, but MPI started this process as "
                f"rank {actual['rank']} of {actual['world_size']} (launch with "
                f"mpiexec -n <world_size> python ...)"
            )


def _env_int(name: str) -> int | None:
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else None


def check_launch_size(size: int) -> None:
    """Raises RuntimeError when a launcher's variables say it started
    another number of processes than the world MPI formed (``size``): the
    mark of an ``mpiexec`` from another MPI than mpi4py's, under which
    every process forms a world of its own and trains alone."""
    wrong = [f"{var}={n}" for var in _SIZE_VARS if (n := _env_size(var)) is not None and n != size]
    wrong += [f"{var}={n}" for var in _LOCAL_SIZE_VARS if (n := _env_size(var)) is not None and n > size]
    if not wrong:
        return
    library = " ".join((_mpi().Get_library_version().strip().splitlines() or ["unknown"])[0].split())
    raise RuntimeError(
        f"init_process_group: MPI formed a world of {size} process{'' if size == 1 else 'es'}, but the "
        f"launcher started another number ({', '.join(wrong)}). mpi4py's MPI library ({library}) is not "
        "the MPI of the launcher that started this process, so each process would run on its own. Start "
        "the job with the mpiexec of mpi4py's MPI (python -m ferrograd.distributed.run finds the one "
        "installed beside Python), or use an mpi4py built for the launcher's MPI."
    )


def _env_size(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None


def close_world() -> None:
    """``destroy_process_group()`` of the default group: tells the other
    ranks and the launcher that this rank left, and frees the world."""
    st = _state
    world = st.world
    if world is None:
        return
    leave("called destroy_process_group", ending=False)
    if st.broken is None:
        world._comm.Free()
    st.world = None


def leave(what: str, ending: bool) -> None:
    """Tells the other ranks that this one takes part in nothing more of
    the current world (``what`` it did: it destroyed the process group, or
    its script ended), without waiting for them: their operations that
    need it then fail after a grace period instead of waiting for the
    timeout. Tells the launcher that this rank finished. A rank whose
    backward pass stopped half way reports that failure instead."""
    st = _state
    world = st.world
    if world is None or st.broken is not None:
        return
    _check_abandoned(what, ending=ending, raise_=False)
    if st.broken is not None:
        return
    if world.size() > 1 and st.fail_comm is not None:
        _poll_channel()
        me = world.rank()
        st.farewells += [st.fail_comm.isend(what, dest=r, tag=_LEFT_TAG)
                         for r in range(world.size()) if r != me and r not in st.left]
    _tell_launcher("done")


def track_backward(work: Work) -> None:
    """Remembers a reduction DDP started inside a backward pass (one of its
    bucket reductions, which skip the agreement check). DDP waits for all
    of them before that backward returns; one still unwaited when the
    thread starts an operation outside backward means the backward
    stopped half way (see :func:`_check_abandoned`)."""
    if _core._current_graph_task_id() >= 0:
        _state.in_backward[work] = threading.get_ident()


def backward_began(owner: int) -> None:
    """Remembers that a backward pass on this thread reached the outputs of
    DDP instance ``owner`` (its id) and will reach its parameters. DDP
    forgets it (:func:`backward_reached`) when the first parameter gets its
    gradient; still remembered when the thread starts an operation outside
    backward, it means the backward stopped before any gradient reached DDP
    (see :func:`_check_abandoned`)."""
    _state.began[owner] = threading.get_ident()


def backward_reached(owner: int) -> None:
    """Forgets :func:`backward_began` of DDP instance ``owner``: its backward
    reached a parameter, or a new forward started."""
    _state.began.pop(owner, None)


# Why a rank cannot go on, as its peers and the launcher hear it.
_STOPPED_MIDWAY = ("its backward pass stopped before DistributedDataParallel finished reducing the gradients "
                   "(an exception raised inside backward was caught and the rank went on, leaving {} "
                   "unfinished)")
_STOPPED_EARLY = ("its backward pass stopped before DistributedDataParallel started reducing the gradients "
                  "(an exception raised inside backward, before any parameter received its gradient, was "
                  "caught and the rank went on)")


def _check_abandoned(name: str, ending: bool = False, raise_: bool = True) -> None:
    """Reports this rank's failure when its backward pass stopped (an
    exception raised inside it was caught) inside DDP: after DDP started
    some of the gradient reductions, or after it reached DDP's outputs but
    before any parameter received its gradient. Either way the other ranks
    wait in reductions this rank will never start, and its next operations
    would pair with theirs. The other ranks' waits then raise at once,
    naming this rank; so does this operation (``name``), unless ``raise_``
    is false."""
    st = _state
    thread = threading.get_ident()
    mine = [w for w, t in list(st.in_backward.items()) if t == thread]
    began = [k for k, t in list(st.began.items()) if t == thread]
    if not (mine or began) or _core._current_graph_task_id() >= 0:
        return
    for w in mine:
        st.in_backward.pop(w, None)
    for k in began:
        st.began.pop(k, None)
    if mine:
        why = _STOPPED_MIDWAY.format(f"{len(mine)} reduction{'' if len(mine) == 1 else 's'}")
    else:
        why = _STOPPED_EARLY
    why = _abandon(why, ending)
    if raise_:
        raise DistBackendError(f"{name}: this rank ({st.rank}) cannot go on: {why}; the other ranks were "
                               "told, and the process group is unusable")


def report_stopped_backward(owner: int) -> None:
    """DDP's forward found that the previous backward pass reached its
    outputs (DDP instance ``owner``) and stopped before any parameter
    received its gradient: reports it as :func:`_check_abandoned` does,
    unless an operation already did."""
    if _state.began.pop(owner, None) is not None:
        _abandon(_STOPPED_EARLY, ending=False)


def _abandon(why: str, ending: bool) -> str:
    """Tells the launcher and the other ranks that this rank cannot go on
    (``why``, with the error being handled, if any) and marks the groups
    unusable; returns what was told."""
    st = _state
    handling = sys.exc_info()[1]
    if handling is not None:
        why += f" (it was handling {type(handling).__name__}: {handling})"
    _tell_launcher("fail", why)
    _report(why, alive=not ending)
    st.broken = st.broken or why
    return why


def _report(error: str, alive: bool) -> bool:
    """Sends this rank's failure to every other rank that has not left, and
    posts the receives of their acknowledgements. ``alive``: this rank
    goes on (it will not end the job itself). Returns whether it was
    sent."""
    st = _state
    world = st.world
    if world is None or st.fail_comm is None or world.size() == 1 or st.report_sends:
        return False
    try:
        _poll_channel()
        me = world.rank()
        peers = [r for r in range(world.size()) if r != me and r not in st.left]
        report = {"rank": me, "error": error, "alive": alive}
        st.report_sends = [st.fail_comm.isend(report, dest=r, tag=_FAIL_TAG) for r in peers]
        st.acks = [st.fail_comm.irecv(source=r, tag=_ACK_TAG) for r in peers]
    except Exception:  # noqa: BLE001  (nothing more can be done)
        return False
    return True


def _await(requests: list[Any], limit: float) -> None:
    """Tests ``requests`` until all completed (removing those that did) or
    ``limit`` seconds passed."""
    deadline = time.perf_counter() + limit
    while requests and time.perf_counter() < deadline:
        requests[:] = [r for r in requests if not r.Test()]
        if requests:
            time.sleep(1e-3)


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
    """Prints the error, then tells the launcher and every other rank that
    this one is dying of it, and waits (at most the world's timeout, or a
    minute) until the other ranks have heard."""
    hook = _state.prev_excepthook or sys.__excepthook__
    hook(exc_type, exc, tb)
    sys.stderr.flush()
    st = _state
    if os.getpid() != st.pid:
        return
    error = f"{exc_type.__name__}: {exc}"
    _tell_launcher("fail", error)
    if not isinstance(exc, DistBackendError) and _report(error, alive=False) and st.world is not None:
        _await(st.acks, min(st.world._timeout, 60.0))
    st.broken = st.broken or error


def _at_exit() -> None:
    """At the end of the script: a rank whose world is in order tells the
    others and the launcher that it left. One whose groups are broken (or
    with operations still running) cannot finalise MPI cleanly: it ends
    the whole job instead of hanging. When another rank failed, this one
    first tells it that it has heard (and printed its own error), and
    gives it until the timeout to end the job, so that every rank waiting
    in a collective reports the failure; a failed rank that went on will
    not end the job, so this one does. A rank that failed itself ends the
    job once every other rank has heard (or a minute has passed)."""
    st = _state
    if os.getpid() != st.pid or _mpi().Is_finalized():
        return  # a forked child (MPI belongs to the parent), or MPI was finalised by hand
    world = st.world
    if world is not None and st.broken is None and not st.pending:
        leave("exited (its script ended with the process group still initialized)", ending=True)
        # A failure report read on the way out is acknowledged below.
        st.broken = st.broken or st.failure
    _await(st.farewells, 10.0)  # on their way before MPI is finalised
    if world is None or ((st.broken is None or world.size() == 1) and not st.pending):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    if not st.told_failure:
        _tell_launcher("fail", st.broken or "asynchronous operations were still running at exit")
    MPI = _mpi()
    _await(st.acks, min(world._timeout, 60.0))
    if st.failed_rank is not None and st.fail_comm is not None:
        try:
            ack = st.fail_comm.isend(True, dest=st.failed_rank, tag=_ACK_TAG)
            deadline = time.perf_counter() + (1.0 if st.failed_alive else world._timeout)
            while time.perf_counter() < deadline:
                if ack.Test() and st.failed_alive:
                    break
                time.sleep(1e-3)
        except Exception:  # noqa: BLE001  (the failed rank may be gone)
            pass
    elif not st.report_sends:
        # Nobody coordinates (a timeout, a rank that left): the other ranks
        # stuck in the same operation get a moment to print their errors.
        time.sleep(_LEFT_GRACE)
    MPI.COMM_WORLD.Abort(1)


# ---------------------------------------------------------------------------
# The launcher's view (python -m ferrograd.distributed.run): one line of
# JSON per event ("start", "done", "fail") on the socket it listens on.
# ---------------------------------------------------------------------------


def _connect_monitor(rank: int) -> None:
    st = _state
    st.rank = rank
    path = os.environ.get(MONITOR_ENV)
    if st.monitor is not None or not path or not hasattr(socket, "AF_UNIX"):
        return
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(5.0)
        conn.connect(path)
    except OSError:  # not on the launcher's machine, or the launcher is gone
        conn.close()
        return
    st.monitor = conn


def _tell_launcher(event: str, text: str = "") -> None:
    st = _state
    if st.monitor is None or os.getpid() != st.pid:
        return
    if event == "fail":
        st.told_failure = True
    line = json.dumps({"event": event, "rank": st.rank, "text": text}) + "\n"
    try:
        st.monitor.sendall(line.encode())
    except OSError:
        _forget_monitor()


def _forget_monitor() -> None:
    """Closes this process's connection to the launcher (in a forked child:
    its copy, so that the launcher sees the parent's end when it ends)."""
    conn, _state.monitor = _state.monitor, None
    if conn is not None:
        conn.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_monitor)
