"""``python -m ferrograd``: train a small convolutional network on
handwritten digits with ``nn``, ``optim`` and ``utils.data``.

The data is scikit-learn's bundled digits (1,797 8x8 images, no download).
The demo trains for a few epochs with a progress bar, prints a profiler
table of one training step, checks a Hessian-vector product of the loss
against finite differences of gradients, writes a loss/accuracy plot, and
ends with the test accuracy. It needs the demo extras (scikit-learn, tqdm,
matplotlib: ``pip install scikit-learn tqdm matplotlib``).
``python -m ferrograd --tour`` instead runs a tour of the tensor core.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time

import ferrograd as torch
from ferrograd import nn
from ferrograd.nn import functional as F
from ferrograd.utils.data import DataLoader, TensorDataset, random_split

EPOCHS = 12
EXTRAS = "scikit-learn tqdm matplotlib"


def _extras():
    try:
        import matplotlib
        import sklearn.datasets
        import tqdm
    except ImportError as e:
        sys.exit(f"the demo needs scikit-learn, tqdm and matplotlib ({e}): pip install {EXTRAS}")
    matplotlib.use("Agg")
    return sklearn.datasets, tqdm.tqdm


class DigitNet(nn.Module):
    """Two 3x3 convolutions, a 2x2 max pool and two linear layers."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 10)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def _accuracy(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    right = total = 0
    with torch.no_grad():
        for x, y in loader:
            right += (model(x).argmax(dim=1) == y).sum().item()
            total += len(y)
    model.train()
    return right / total


def _hvp_check(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> None:
    """H v by double backward against central differences of gradients, on a
    float64 copy of the model in eval mode (no dropout: the loss is then a
    fixed function of the parameters)."""
    model = copy.deepcopy(model).double().eval()
    x = x.double()
    params = list(model.parameters())
    v = [torch.randn_like(p) for p in params]

    def grads(create_graph: bool = False):
        loss = F.cross_entropy(model(x), y)
        return torch.autograd.grad(loss, params, create_graph=create_graph)

    g = grads(create_graph=True)
    hv = torch.autograd.grad(sum((gi * vi).sum() for gi, vi in zip(g, v, strict=True)), params)
    eps = 1e-6
    with torch.no_grad():
        for p, vi in zip(params, v, strict=True):
            p.add_(vi, alpha=eps)
    g_plus = grads()
    with torch.no_grad():
        for p, vi in zip(params, v, strict=True):
            p.sub_(vi, alpha=2 * eps)
    g_minus = grads()
    with torch.no_grad():
        for p, vi in zip(params, v, strict=True):
            p.add_(vi, alpha=eps)
    fd = [(a - b) / (2 * eps) for a, b in zip(g_plus, g_minus, strict=True)]
    norm = sum((h * h).sum() for h in hv).sqrt().item()
    err = sum(((h - f) ** 2).sum() for h, f in zip(hv, fd, strict=True)).sqrt().item()
    print(f"Hessian-vector product of the loss: |Hv| = {norm:.4f}, "
          f"relative difference to finite differences of gradients {err / norm:.1e}")  # fmt: skip


def _plot(losses: list[float], accs: list[float]) -> str:
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.5))
    a1.plot(range(1, len(losses) + 1), losses, marker="o")
    a1.set(xlabel="epoch", ylabel="training loss", title="loss")
    a2.plot(range(1, len(accs) + 1), [100 * a for a in accs], marker="o", color="tab:green")
    a2.set(xlabel="epoch", ylabel="test accuracy (%)", title="accuracy")
    fig.tight_layout()
    path = os.path.join(tempfile.gettempdir(), "ferrograd_digits.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def train() -> None:
    datasets, tqdm = _extras()
    t0 = time.perf_counter()
    torch.manual_seed(0)
    digits = datasets.load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.int64)
    train_set, test_set = random_split(TensorDataset(images, labels), [0.8, 0.2])
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=256)
    print(f"ferrograd {torch.__version__}, {torch.get_num_threads()} threads: "
          f"{len(train_set)} training and {len(test_set)} test images of 8x8 digits")  # fmt: skip

    model = DigitNet()
    print(model)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=EPOCHS)
    losses, accs = [], []
    for epoch in range(1, EPOCHS + 1):
        total, count = 0.0, 0
        bar = tqdm(train_loader, desc=f"epoch {epoch:2d}/{EPOCHS}", leave=False, mininterval=0.5)
        for x, y in bar:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            total += loss.item() * len(y)
            count += len(y)
            bar.set_postfix(loss=f"{total / count:.4f}")
        sched.step()
        losses.append(total / count)
        accs.append(_accuracy(model, test_loader))
        print(f"epoch {epoch:2d}: training loss {losses[-1]:.4f}, test accuracy {100 * accs[-1]:.1f}%")

    x, y = next(iter(train_loader))
    with torch.profiler.profile() as prof:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    print("\none training step, by operator:")
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=12))
    _hvp_check(model, x, y)
    print(f"loss and accuracy plot: {_plot(losses, accs)}")
    print(f"trained in {time.perf_counter() - t0:.1f} s")
    print(f"test accuracy: {100 * _accuracy(model, test_loader):.1f}%")


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m ferrograd", description=__doc__.splitlines()[0])
    ap.add_argument("--tour", action="store_true", help="a tour of the tensor core instead of training")
    args = ap.parse_args()
    if args.tour:
        from ._tour import main as tour

        tour()
    else:
        train()


if __name__ == "__main__":
    main()
