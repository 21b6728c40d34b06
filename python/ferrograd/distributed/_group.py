"""Process groups on MPI: running collectives, waiting with a timeout, and
telling the other ranks when one fails.

Every operation is started, in program order, by the calling thread as a
nonblocking MPI call on the tensor's own memory (the buffer protocol, no
copy). A synchronous call then polls its request to completion; an
asynchronous one (``async_op=True``) returns a :class:`Work` whose request
a progress thread drives (so communication proceeds while the caller
computes). Both wait with the group's timeout and watch a side channel on
which a rank that dies of an uncaught exception tells the others, so a
failure or a hang becomes a :class:`DistBackendError` naming the rank or
the operation instead of a process stuck forever.
"""

from __future__ import annotations

import array
import atexit
import collections
import os
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

_FAIL_TAG = 7301
_ACK_TAG = 7302


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
        self.failure: str | None = None        # what another rank reported
        self.failed_rank: int | None = None
        self.broken: str | None = None         # why this process's groups are unusable
        self.lock = threading.Lock()
        self.pending: collections.deque[Work] = collections.deque()
        self.wakeup = threading.Condition(self.lock)
        self.thread: threading.Thread | None = None
        self.threaded = False
        self.prev_excepthook: Callable[..., Any] | None = None
        self.group_count = 0


_state = _State()


def _check_failure() -> None:
    """Raises if another rank reported a failure (reading its report from
    the side channel) or if the groups are broken."""
    st = _state
    if st.fail_comm is not None and st.failure is None:
        MPI = _mpi()
        status = MPI.Status()
        if st.fail_comm.iprobe(source=MPI.ANY_SOURCE, tag=_FAIL_TAG, status=status):
            report = st.fail_comm.recv(source=status.Get_source(), tag=_FAIL_TAG)
            st.failure = f"rank {report['rank']} failed: {report['error']}"
            st.failed_rank = report["rank"]
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
                 status: Any = None) -> None:
        self._group = group
        self._name = name
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
        if _state.threaded:
            _wait(self._name, self._group, limit, self._done.is_set, self._done)
        else:
            _wait(self._name, self._group, limit, self._poll)
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
          event: threading.Event | None = None) -> None:
    """Waits until ``done`` holds, checking the failure channel, for at
    most ``limit`` seconds. Without ``event`` it polls ``done`` (an MPI
    test, which is what moves the operation forward) without pause, as a
    blocking MPI call would; with one (an operation the progress thread
    drives) it sleeps on the event."""
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
        if time.perf_counter() - start > limit:
            why = (f"{name} on {group!r} timed out after {limit:g} s (rank {group.rank()} of "
                   f"{group.size()}): some rank did not take part in it")
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
             async_op: bool, status: Any = None, check: tuple[int, ...] | None = None) -> Any:
        """Starts a nonblocking operation; waits for it (synchronous) or
        returns its Work (``status`` receives the request's MPI status).
        With ``check`` (what every rank must agree on: sizes, dtype, op,
        root), the ranks first compare it, and a mismatch raises on every
        rank before any data moves."""
        _check_failure()
        if check is not None and _CHECK:
            self._agree(name, check)
        request = start()
        if async_op:
            work = Work(self, name, request, finish, status)
            if _state.threaded:
                with _state.wakeup:
                    _state.pending.append(work)
                    _state.wakeup.notify()
            return work
        _wait(name, self, self._timeout, lambda: request.Test(status))
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
    the world group, the failure channel and the exit handling."""
    MPI = _mpi()
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
    comm = MPI.COMM_WORLD.Dup()
    st = _state
    st.fail_comm = MPI.COMM_WORLD.Dup()
    st.failure = None
    st.failed_rank = None
    st.broken = None
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


def _report_failure(exc: BaseException) -> None:
    """Tells every other rank that this one is dying of ``exc`` and waits
    (at most the world's timeout) until they have heard."""
    st = _state
    world = st.world
    if world is None or st.fail_comm is None or world.size() == 1 or isinstance(exc, DistBackendError):
        return
    me = world.rank()
    report = {"rank": me, "error": f"{type(exc).__name__}: {exc}"}
    peers = [r for r in range(world.size()) if r != me]
    try:
        sends = [st.fail_comm.isend(report, dest=r, tag=_FAIL_TAG) for r in peers]
        acks = [st.fail_comm.irecv(source=r, tag=_ACK_TAG) for r in peers]
    except Exception:  # noqa: BLE001  (nothing more can be done)
        return
    deadline = time.perf_counter() + min(world._timeout, 60.0)
    while time.perf_counter() < deadline:
        if all(r.test()[0] for r in acks):
            break
        time.sleep(1e-3)
    for s in sends:
        s.Test()


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
    hook = _state.prev_excepthook or sys.__excepthook__
    hook(exc_type, exc, tb)
    sys.stderr.flush()
    _report_failure(exc)
    _state.broken = _state.broken or f"{exc_type.__name__}: {exc}"


def _at_exit() -> None:
    """A process whose groups are broken (or with operations still running)
    cannot finalise MPI cleanly: it ends the whole job instead of hanging.
    When another rank failed, this one first tells it that it has heard
    (and printed its own error), and gives it until the timeout to end the
    job, so that every rank waiting in a collective reports the failure."""
    st = _state
    if st.world is None:
        return
    if (st.broken is None or st.world.size() == 1) and not st.pending:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    MPI = _mpi()
    if st.failed_rank is not None and st.fail_comm is not None:
        try:
            ack = st.fail_comm.isend(True, dest=st.failed_rank, tag=_ACK_TAG)
            deadline = time.perf_counter() + st.world._timeout
            while time.perf_counter() < deadline:
                ack.Test()
                time.sleep(1e-3)
        except Exception:  # noqa: BLE001  (the failed rank may be gone)
            pass
    MPI.COMM_WORLD.Abort(1)
