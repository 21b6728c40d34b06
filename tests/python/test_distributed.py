"""ferrograd.distributed across processes: each test starts
``tests/python/dist_worker.py`` on 2 or 4 MPI processes of this machine
(loopback and shared memory); the worker checks its results against NumPy
on every rank and exits non-zero on a mismatch."""

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
    p = launch(n, "fail", "raise", "20")
    out = p.stdout + p.stderr
    assert p.returncode != 0
    assert "ValueError: rank one fails on purpose" in out
    reports = re.findall(r"rank (\d+) got DistBackendError after ([\d.]+) s: rank 1 failed: ValueError", out)
    assert sorted(int(r) for r, _ in reports) == [r for r in range(n) if r != 1], out
    # Rank 1 raises 0.2 s in; the others hear of it well within the 20 s bound.
    assert all(float(t) < 10 for _, t in reports), reports


def test_a_rank_that_never_joins_times_out():
    p = launch(2, "fail", "hang", "2", timeout=60)
    out = p.stdout + p.stderr
    assert p.returncode != 0
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
