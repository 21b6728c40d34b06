"""ferrograd.distributed against mpi4py, and DDP's overlap of communication
with backward.

    python -m ferrograd.distributed.run -n 2 benches/bench_distributed.py [--rounds 7]

1. all_reduce (SUM, float32, in place) of N bytes: ``dist.all_reduce`` on a
   ferrograd tensor against mpi4py's ``Allreduce(IN_PLACE, ...)`` on a
   NumPy array of the same size, alternating in rounds; medians.
2. DDP on an MLP (4 x 1024 float32 layers, batch 64 per rank): time of a
   forward+backward with DDP (bucketed all-reduces overlapping backward),
   of the same forward+backward alone (no communication), and of
   backward followed by one all-reduce per bucket after it (no overlap).
   Also the per-bucket all-reduce cost, for a scaling model.

Rank 0 prints Markdown tables.
"""

from __future__ import annotations

import argparse
import statistics
import time

import ferrograd as torch
import ferrograd.distributed as dist
import numpy as np
from ferrograd import nn
from ferrograd.nn.parallel import DistributedDataParallel as DDP
from mpi4py import MPI


def timed(fn, repeat: int) -> float:
    dist.barrier()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    dist.barrier()
    return (time.perf_counter() - start) / repeat


def bandwidth(rounds: int) -> list[tuple[int, float, float]]:
    comm = MPI.COMM_WORLD
    rows = []
    for nbytes in (1 << 10, 1 << 14, 1 << 17, 1 << 20, 1 << 22, 1 << 24, 1 << 26):
        n = nbytes // 4
        t = torch.ones(n)
        a = np.ones(n, dtype=np.float32)
        repeat = max(3, min(2000, (64 << 20) // nbytes))
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(timed(lambda t=t: dist.all_reduce(t), repeat))
            theirs.append(timed(lambda a=a: comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM), repeat))
        rows.append((nbytes, statistics.median(ours), statistics.median(theirs)))
    return rows


def mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024))


def overlap(rounds: int, bucket_mb: float) -> dict[str, float]:
    x = torch.randn(64, 1024)
    plain = mlp()
    wrapped = DDP(mlp(), bucket_cap_mb=bucket_mb, gradient_as_bucket_view=True)
    buckets = [b.buffer for b in wrapped._buckets]

    def alone() -> None:
        plain.zero_grad()
        plain(x).square().mean().backward()

    def after() -> None:
        # The same result without DDP: backward, then each gradient
        # averaged in place (no overlap, no copies).
        alone()
        for p in plain.parameters():
            dist.all_reduce(p.grad, dist.ReduceOp.AVG)

    def with_ddp() -> None:
        # zero_grad(set_to_none=False) keeps each .grad a view into its
        # bucket, so backward accumulates straight into the buckets.
        wrapped.zero_grad(set_to_none=False)
        wrapped(x).square().mean().backward()

    def with_ddp_copy() -> None:
        # torch's default zero_grad (set_to_none): fresh gradients, copied
        # into the buckets by the hooks.
        wrapped.zero_grad()
        wrapped(x).square().mean().backward()

    def reduce_only() -> None:
        for b in buckets:
            dist.all_reduce(b, dist.ReduceOp.AVG)

    cases = {"alone": alone, "after": after, "ddp": with_ddp, "ddp_copy": with_ddp_copy,
             "reduce": reduce_only}
    out: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(rounds):
        for k, fn in cases.items():
            out[k].append(timed(fn, 10))
    res = {k: statistics.median(v) for k, v in out.items()}
    res["buckets"] = len(buckets)
    res["bytes"] = sum(b.numel() * 4 for b in buckets)
    return res


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--bucket-mb", type=float, default=25)
    args = p.parse_args()
    dist.init_process_group("mpi")
    world = dist.get_world_size()
    rows = bandwidth(args.rounds)
    ov = overlap(args.rounds, args.bucket_mb)
    if dist.get_rank() != 0:
        return
    print(f"## all_reduce, float32 SUM, {world} ranks, {torch.get_num_threads()} threads per rank\n")
    print("| bytes | ferrograd us | mpi4py (NumPy) us | ratio | ferrograd GB/s |")
    print("|---|---|---|---|---|")
    for nbytes, ours, theirs in rows:
        print(f"| {nbytes} | {ours * 1e6:.1f} | {theirs * 1e6:.1f} | {ours / theirs:.3f} | "
              f"{nbytes / ours / 1e9:.2f} |")
    print(f"\n## DDP, MLP 4 x 1024 float32 ({ov['bytes'] / 2**20:.0f} MiB of gradients, "
          f"{ov['buckets']} buckets of <= {args.bucket_mb} MiB), batch 64 per rank, {world} ranks\n")
    print("| step | ms |")
    print("|---|---|")
    print(f"| forward+backward alone (no communication) | {ov['alone'] * 1e3:.2f} |")
    print(f"| forward+backward, then each gradient all-reduced (AVG) after it | {ov['after'] * 1e3:.2f} |")
    print(f"| DDP forward+backward, gradients as bucket views | {ov['ddp'] * 1e3:.2f} |")
    print(f"| DDP forward+backward, zero_grad(set_to_none=True): copies into buckets | "
          f"{ov['ddp_copy'] * 1e3:.2f} |")
    print(f"| all-reduce (AVG) of every bucket alone | {ov['reduce'] * 1e3:.2f} |")
    per_bucket = ov["reduce"] / ov["buckets"]
    mib = ov["bytes"] / ov["buckets"] / 2**20
    print(f"\nper-bucket all-reduce: {per_bucket * 1e3:.2f} ms for {mib:.1f} MiB")


if __name__ == "__main__":
    main()
