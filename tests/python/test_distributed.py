"""ferrograd.distributed across processes: each test starts
``tests/python/dist_worker.py`` on 2 to 4 MPI processes of this machine
(loopback and shared memory), with mpiexec or with ferrograd's launcher;
the worker checks its results against NumPy on every rank and exits
non-zero on a mismatch. The failure tests check what each rank and the
launcher report, and how fast."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")

from ferrograd.distributed.run import find_mpiexec  # noqa: E402

WORKER = str(Path(__file__).with_name("dist_worker.py"))
MPIEXEC = find_mpiexec()
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install 'ferrograd[mpi]')")


def launch(n: int, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert MPIEXEC is not None
    return subprocess.run([MPIEXEC, "-n", str(n), sys.executable, WORKER, *args], capture_output=True,
                          text=True, timeout=timeout)


def ok(p: subprocess.CompletedProcess[str], n: int, scenario: str) -> None:
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count(f"rank ok {scenario}") == n, p.stdout + p.stderr


def failed(p: subprocess.CompletedProcess[str]) -> str:
    """The output (stdout, then stderr) of a job that must have failed."""
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    return out


def rank_one_failure_heard_by_rank_zero(out: str) -> str:
    """What rank 0 reports of rank 1's failure, which it must have heard of
    within 5 s (the group timeout is 20 s)."""
    m = re.search(r"rank 0 got DistBackendError after ([\d.]+) s: rank 1 failed: (.*)", out)
    assert m, out
    assert float(m.group(1)) < 5, m.group(0)
    return m.group(2)


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_match_numpy_for_every_dtype(n):
    ok(launch(n, "collectives"), n, "collectives")


def test_collectives_use_the_tensor_memory():
    ok(launch(2, "zero_copy"), 2, "zero_copy")


@pytest.mark.parametrize("n", [2, 4])
def test_ddp_gradients_training_no_sync_unused_parameters_and_buffers(n):
    ok(launch(n, "ddp"), n, "ddp")


def test_bad_arguments_raise_torch_errors():
    ok(launch(2, "errors"), 2, "errors")


@pytest.mark.parametrize("n", [2, 4])
def test_a_failing_rank_is_reported_by_the_others(n):
    out = failed(launch(n, "fail", "raise", "20"))
    assert "ValueError: rank one fails on purpose" in out
    reports = re.findall(r"rank (\d+) got DistBackendError after ([\d.]+) s: rank 1 failed: ValueError", out)
    assert sorted(int(r) for r, _ in reports) == [r for r in range(n) if r != 1], out
    # Rank 1 raises 0.2 s in; the others hear of it well within the 20 s bound.
    assert all(float(t) < 10 for _, t in reports), reports


def test_a_rank_that_never_joins_times_out():
    out = failed(launch(2, "fail", "hang", "2", timeout=60))
    m = re.search(r"all_reduce on ProcessGroup\(WORLD, size=2\) timed out after 2 s \(rank 0 of 2\)", out)
    assert m, out


def test_launcher_runs_a_script_on_n_processes(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        "import sys\n"
        "import ferrograd as torch, ferrograd.distributed as dist\n"
        "dist.init_process_group('mpi')\n"
        "t = torch.ones(3) * (dist.get_rank() + 1)\n"
        "dist.all_reduce(t)\n"
        "sys.stdout.write(f'rank {dist.get_rank()} of {dist.get_world_size()} sum {t.tolist()}\\n')\n"
        "sys.stdout.write(f'threads {torch.get_num_threads()}\\n')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("FERROGRAD_NUM_THREADS", "RAYON_NUM_THREADS")}
    p = subprocess.run([sys.executable, "-m", "ferrograd.distributed.run", "-n", "3", str(script)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = sorted(line for line in p.stdout.splitlines() if line.startswith("rank"))
    assert lines == [f"rank {r} of 3 sum [6.0, 6.0, 6.0]" for r in range(3)]
    # The launcher shares the cores out among the ranks.
    threads = {line for line in p.stdout.splitlines() if line.startswith("threads")}
    assert threads == {f"threads {max(1, (os.cpu_count() or 1) // 3)}"}, p.stdout


def run_launcher(*args: str, timeout: float = 50) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ferrograd.distributed.run", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["exit", "destroy"])
def test_a_rank_that_leaves_early_fails_its_peers_collective_at_once(how):
    # Rank 1's script ends (or it destroys the group) while ranks 0 and 2
    # enter an all_reduce with it: they raise within the grace period, not
    # after the 20 s timeout.
    out = failed(launch(3, "leave", how, timeout=50))
    what = {"exit": r"exited \(its script ended", "destroy": "called destroy_process_group"}[how]
    reports = re.findall(rf"rank (\d+) got DistBackendError after ([\d.]+) s: all_reduce on "
                         rf"ProcessGroup\(WORLD, size=3\): rank 1 {what}", out)
    assert sorted(int(r) for r, _ in reports) == [0, 2], out
    assert all(float(t) < 10 for _, t in reports), reports


@pytest.mark.timeout(60)
def test_launcher_names_the_rank_whose_early_exit_failed_the_job():
    p = run_launcher("-n", "2", WORKER, "leave", "exit")
    assert p.returncode != 0, p.stdout + p.stderr
    assert re.search(r"ferrograd.distributed.run: the job failed: rank 0 failed: DistBackendError: "
                     r"all_reduce .*: rank 1 exited", p.stderr), p.stderr


@pytest.mark.timeout(60)
def test_launcher_reports_a_rank_whose_process_vanished_mid_job():
    # Rank 1 leaves through os._exit(0) (no exit handling at all) while the
    # others wait in an all_reduce: mpiexec stops them and may return 0;
    # the launcher still fails the job and names rank 1 (with the ranks
    # that ended in the same instant, if the order could not be told).
    p = run_launcher("-n", "3", WORKER, "leave", "vanish")
    assert p.returncode != 0, p.stdout + p.stderr
    m = re.search(r"the job failed: ranks? ([\d, ]+) ended while (its|their) process group was still "
                  r"initialized", p.stderr)
    assert m and 1 in [int(r) for r in m.group(1).split(",")], p.stderr


@pytest.mark.timeout(60)
def test_launcher_succeeds_when_ranks_end_normally_at_different_times():
    # No destroy_process_group: rank 1 ends first, the others go on in a
    # subgroup without it, then end.
    p = run_launcher("-n", "3", WORKER, "leave", "uneven")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("rank ok leave") == 3 and "the job failed" not in p.stderr, p.stdout + p.stderr


@pytest.mark.timeout(60)
@pytest.mark.parametrize("n, variable", [(2, "OMPI_COMM_WORLD_SIZE=3"), (None, "PMI_SIZE=4"),
                                         (None, "FERROGRAD_DIST_WORLD_SIZE=2"), (None, "MPI_LOCALNRANKS=2")])
def test_init_raises_when_the_launcher_started_another_number_of_processes(n, variable):
    # What an mpiexec of another MPI than mpi4py's looks like: its variables
    # say N processes, but each process forms a world of its own (here: a
    # variable set wrong, or a single process run with a launcher's variable).
    name, value = variable.split("=")
    env = {**os.environ, name: value}
    prefix = [MPIEXEC, "-n", str(n)] if n else []
    p = subprocess.run([*prefix, sys.executable, WORKER, "launch_size", variable], capture_output=True,
                       text=True, timeout=50, env=env)
    ok(p, n or 1, "launch_size")
    size = f"{n} processes" if n else "1 process"
    assert f"MPI formed a world of {size}, but the launcher started another number ({variable})" in p.stdout


@pytest.mark.timeout(60)
@pytest.mark.parametrize("same", [False, True])
def test_launcher_refuses_an_mpiexec_of_another_mpi(tmp_path, same):
    library = subprocess.run([sys.executable, "-m", "mpi4py", "--mpi-lib-version"], capture_output=True,
                             text=True, timeout=50).stdout
    open_mpi = "open mpi" in library.lower()
    claims = {True: "mpiexec (Open MPI) 5.0.3", False: "HYDRA build details:"}[open_mpi == same]
    fake = tmp_path / "mpiexec"
    fake.write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo "{claims}"; exit 0; fi\n'
                    'echo fake ran\n')
    fake.chmod(0o755)
    p = run_launcher("--mpiexec", str(fake), "-n", "2", WORKER, "collectives")
    if same:
        assert p.returncode == 0 and "fake ran" in p.stdout, p.stdout + p.stderr
        return
    assert p.returncode != 0 and "fake ran" not in p.stdout
    ours, theirs = ("Open MPI", "MPICH") if open_mpi else ("MPICH", "Open MPI")
    assert f"not starting: {fake} is {theirs}'s launcher, but mpi4py loads {ours}" in p.stderr, p.stderr


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["after", "handler", "step"])
def test_an_error_caught_inside_ddp_backward_fails_the_peers_at_once(mode):
    # Rank 1's backward raises after DDP started part of its gradient
    # reductions; it catches the error and, 0.3 s later, goes on. Rank 0,
    # waiting for the rest of the reductions, hears of it then (the group
    # timeout is 20 s).
    out = failed(launch(2, "ddp_caught", mode, timeout=50))
    heard = rank_one_failure_heard_by_rank_zero(out)
    detail = {
        "after": "its backward pass stopped before DistributedDataParallel finished reducing the gradients",
        "handler": "(it was handling ValueError: bad gradient on rank one)",
        "step": "RuntimeError: Expected to have finished reduction in the prior iteration",
    }[mode]
    assert detail in heard, heard
    if mode != "step":
        assert "rank 1 got DistBackendError: all_reduce: this rank (1) cannot go on: its backward" in out, out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["step", "collective", "hook"])
def test_an_error_caught_before_ddp_backward_reaches_a_parameter_fails_the_peers_at_once(mode):
    # Rank 1's backward raises before any parameter got its gradient, so
    # before DDP started any reduction (in a custom Function at the
    # module's output, or in a hook on the output); it catches the error
    # and, 0.3 s later, goes on to the next training step or a collective.
    # Its next iteration must not start reductions that would pair with
    # rank 0's, which wait for the iteration rank 1 gave up: rank 1's
    # forward raises, and rank 0 hears of it well within the 20 s timeout,
    # none of its reductions completed.
    out = failed(launch(2, "ddp_early", mode, timeout=50))
    stopped = "its backward pass stopped before DistributedDataParallel started reducing the gradients"
    assert stopped in rank_one_failure_heard_by_rank_zero(out), out
    assert "rank 0 started 4 reductions and completed 0" in out, out
    forward = ("rank 1 got RuntimeError at the next forward: Expected to have finished reduction in the "
               "prior iteration before starting a new one. The backward pass of the prior iteration raised")
    assert forward in out, out
    if mode == "collective":
        collective = "rank 1 got DistBackendError at the next collective: all_reduce: this rank (1)"
        assert f"{collective} cannot go on: {stopped}" in out, out
    assert "rank 1 got DistBackendError at a later collective: the process group is unusable" in out, out
