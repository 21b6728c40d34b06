"""Data-parallel training of the digits CNN across processes.

    python -m ferrograd.distributed.run -n 2 examples/ddp_train.py
    mpiexec -n 4 python examples/ddp_train.py --epochs 12

Each rank trains on its share of every epoch (DistributedSampler), and
DistributedDataParallel averages the gradients during backward, so the
replicas stay identical. The data is scikit-learn's bundled digits
(``pip install 'ferrograd[mpi,demo]'``). Rank 0 prints the loss and the
test accuracy.
"""

from __future__ import annotations

import argparse
import time

import ferrograd as torch
import ferrograd.distributed as dist
from ferrograd import nn
from ferrograd.nn.parallel import DistributedDataParallel as DDP
from ferrograd.utils.data import DataLoader, DistributedSampler, TensorDataset


class DigitNet(nn.Module):
    """Two 3x3 convolutions and a small classifier for 8x8 digits."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank")
    args = parser.parse_args()

    from sklearn import datasets

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()

    digits = datasets.load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.int64)
    split = int(0.8 * len(y))
    train = TensorDataset(x[:split], y[:split])
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, seed=0)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(rank)               # replicas start apart; DDP copies rank 0's weights
    model = DDP(DigitNet())
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total, count = torch.zeros(2), 0
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += torch.tensor([loss.item() * len(yb), len(yb)])
            count += 1
        dist.all_reduce(total)             # the epoch's mean loss over every rank's samples
        if rank == 0:
            print(f"epoch {epoch + 1}: loss {total[0].item() / total[1].item():.4f} "
                  f"({count} steps per rank, {world} ranks)", flush=True)
    elapsed = time.perf_counter() - start

    # Every replica holds the same weights; rank 0 evaluates.
    checksums: list[float] = [0.0] * world
    dist.all_gather_object(checksums, sum(p.detach().double().sum().item() for p in model.parameters()))
    if rank == 0:
        with torch.no_grad():
            pred = model.module(x[split:]).argmax(1)
        acc = (pred == y[split:]).float().mean().item()
        print(f"test accuracy {acc:.3f} after {elapsed:.1f} s; replicas identical: "
              f"{len(set(checksums)) == 1}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
