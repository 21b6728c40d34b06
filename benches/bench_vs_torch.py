"""ferrograd against torch on the same workloads, side by side.

Each backend runs in a fresh subprocess (``import ferrograd as torch`` or
``import torch``), the two alternate within each round, and a workload's
number is the median over rounds of each child's median time. The ratio
column is the median over rounds of each round's ratio: the two children
of a round run one right after the other, so a slow spell of the host
weighs on both sides of a round's ratio instead of on one side of a
ratio of medians. torch is never a dependency: without it only
ferrograd's column is printed.

Run: ``python benches/bench_vs_torch.py [--rounds N] [--only NAME ...]
[--threads N ...]`` (numbers go to docs/performance/). ``--threads``
sets both libraries' intra-op threads (default: all cores); several values
give a thread-scaling run, one table per count. Workloads:

- ``kernels``: single large-tensor kernels (``tanh`` on 4M float32,
  ``exp``/``sigmoid``/``sin``/``log`` on 512x512, ``sum`` on 4M).
- ``special``: ``erf``, ``erfcx``, ``ndtr``, ``log_ndtr``, ``ndtri``,
  ``erfinv``, ``lgamma`` and ``digamma`` on 512x512 float64.
- ``pow``: ``x.pow(y)``, ``x.pow(2.5)`` and ``2.5 ** y`` on 512x512
  float32 and float64.
- ``graphs``: forward+backward on large tensors (a 4M elementwise graph, 4
  matmul layers of 512 with relu or tanh, 8 independent branches of 3
  256x256 layers), an MLP 784-512-256-10 training step at batch 64, a
  gradient-penalty step (double backward) and the 200-op small chain.
- ``dtypes``: the 16-bit floats against float32 on 1M-element ``add``,
  ``tanh`` and ``sum`` and a 256x256 ``matmul`` (each 16-bit op computes
  in float32 and rounds once).
- ``nn``: training steps written with ``nn``/``optim``: an MLP
  784-512-256-10 with Adam at batch 64, LeNet-5 (two Conv2d+MaxPool2d, three
  Linear) with Adam at batch 64 on 28x28, and a 2-layer
  TransformerEncoder (d=128, 4 heads, seq 64, batch 16) forward+backward;
  and their fused pieces alone: layer_norm forward+backward on
  [16,64,128], cross_entropy forward+backward on [1024,100] logits, and
  dropout (p=0.1, torch's Mersenne Twister stream) on [16,64,512].
- ``optim``: one step of each of ``torch.optim``'s elementwise optimizers (SGD
  with momentum, Adam, AdamW with amsgrad, Adagrad, RMSprop plain and
  centered with momentum, NAdam, RAdam, Adamax, Adadelta, ASGD, Rprop) over
  the 535K float32 parameters of an MLP 784-512-256-10, gradients fixed.
- ``func``: the ``torch.func`` transforms on ``tanh(W @ x)`` with
  ``x`` in R^128 (``jacrev``, ``jacfwd``, ``vjp``, ``jvp``), ``grad`` and
  ``hessian`` of its squared norm, and per-model gradients of a small MLP
  through ``functional_call``.
- ``fft``: ``rfft`` and the ``rfft``/``irfft`` round trip through a filter,
  forward and forward+backward, on 1x4096, 64x1024 and 256x256 (2-D), and
  a complex64 ``fft`` of 64x1024.
- ``io``: checkpoints of a 64 MB state dict: ``save``, ``load``,
  ``load(mmap=True)`` and the safetensors functions.
- ``profiler``: a 200-op elementwise chain on 16 elements, forward and
  backward, 8 chains per call; plain, inside
  ``autograd.profiler.profile()`` (entering, recording, leaving), and the
  same followed by ``key_averages().table()``; the profiled/plain overhead
  and the Chrome trace's size per event.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from common import machine, median_of

CHAIN_OPS = 200
CHAINS = 8


def chain_forward(x, c):
    """The 200-op elementwise chain (mul, add, tanh, sub) from leaf ``x``."""
    y = x
    for _ in range(CHAIN_OPS // 4):
        y = (y * c + c).tanh() - c
    return y


def profiler_workload(torch) -> dict[str, float]:
    torch.manual_seed(0)
    leaves = [torch.randn(16, requires_grad=True) for _ in range(CHAINS)]
    c = torch.randn(16)

    def step():
        for x in leaves:
            chain_forward(x, c).sum().backward()

    def profiled():
        with torch.autograd.profiler.profile():
            step()

    def profiled_table():
        with torch.autograd.profiler.profile() as p:
            step()
        p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)

    with torch.autograd.profiler.profile() as p:
        step()
    events = len(p.function_events)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        p.export_chrome_trace(path)
        trace_bytes = os.path.getsize(path)

    out = {}
    # Interleave so that drift hits every variant alike.
    variants = (("plain (ms)", step), ("profiled (ms)", profiled), ("profiled+table (ms)", profiled_table))
    for _ in range(3):
        for name, fn in variants:
            out.setdefault(name, []).append(median_of(fn, 3, repeat=7) * 1e3)
    res = {k: statistics.median(v) for k, v in out.items()}
    res["overhead (x)"] = res["profiled (ms)"] / res["plain (ms)"]
    res["overhead+table (x)"] = res["profiled+table (ms)"] / res["plain (ms)"]
    res["events"] = float(events)
    res["trace bytes/event"] = trace_bytes / max(events, 1)
    return res


def _ms(fn, number: int, repeat: int = 9) -> float:
    return median_of(fn, number, repeat) * 1e3


def kernels_workload(torch) -> dict[str, float]:
    """Single large-tensor kernels (ms)."""
    torch.manual_seed(0)
    big = torch.randn(4_000_000)
    m = torch.rand(512, 512) + 0.5
    out = {"tanh 4M": _ms(big.tanh, 5), "sum 4M": _ms(big.sum, 50)}
    for name in ("exp", "sigmoid", "sin", "log"):
        out[f"{name} 512x512"] = _ms(getattr(m, name), 50)
    # Dense inputs in other layouts: results keep the layout, one flat loop.
    out["exp 512x512 transposed"] = _ms(m.t().exp, 50)
    c = torch.randn(8, 64, 32, 32).contiguous(memory_format=torch.channels_last)
    out["add 8x64x32x32 channels_last"] = _ms(lambda: c + c, 20)
    return out


def dtypes_workload(torch) -> dict[str, float]:
    """float32, float16 and bfloat16 throughput on the same kernels (ms)."""
    torch.manual_seed(0)
    out = {}
    for name in ("float32", "float16", "bfloat16"):
        dt = getattr(torch, name)
        a, b = torch.randn(1_000_000).to(dt), torch.randn(1_000_000).to(dt)
        m = torch.randn(256, 256).to(dt)
        out[f"add 1M {name}"] = _ms(lambda a=a, b=b: a + b, 20)
        out[f"tanh 1M {name}"] = _ms(a.tanh, 10)
        out[f"sum 1M {name}"] = _ms(a.sum, 20)
        out[f"matmul 256 {name}"] = _ms(lambda m=m: m @ m, 10)
    return out


def complex_workload(torch) -> dict[str, float]:
    """complex64 kernels and products (ms), and complex64 matmul GFLOP/s."""
    torch.manual_seed(0)
    a = torch.complex(torch.randn(1_000_000), torch.randn(1_000_000))
    b = torch.complex(torch.randn(1_000_000), torch.randn(1_000_000))
    out = {
        "mul 1M complex64": _ms(lambda: a * b, 20),
        "exp 1M complex64": _ms(a.exp, 5),
        "abs 1M complex64": _ms(a.abs, 20),
        "sum 1M complex64": _ms(a.sum, 20),
    }
    n = 512
    m = torch.complex(torch.randn(n, n), torch.randn(n, n))
    ms = _ms(lambda: m @ m, 5)
    out[f"matmul {n} complex64"] = ms
    # A complex multiply-add is 8 real flops.
    out[f"matmul {n} complex64 GFLOP/s"] = 8 * n**3 / (ms * 1e-3) / 1e9
    z = torch.complex(torch.randn(256, 256), torch.randn(256, 256)).requires_grad_()

    def backward():
        (z @ z).abs().sum().backward()

    out["abs(z@z).sum() backward 256 complex64"] = _ms(backward, 5)
    return out


def _layers(torch, n: int, width: int, act: str):
    torch.manual_seed(0)
    x = torch.randn(width, width)
    ws = [(torch.randn(width, width) * 0.05).requires_grad_() for _ in range(n)]

    def step():
        h = x
        for w in ws:
            h = getattr(h @ w * 0.05, act)() if act == "relu" else (h @ w).tanh()
        h.sum().backward()
        for w in ws:
            w.grad = None

    return step


def graphs_workload(torch) -> dict[str, float]:
    """Forward+backward graphs on large tensors and training steps (ms)."""
    torch.manual_seed(0)
    a, b, c = (torch.randn(4_000_000, requires_grad=True) for _ in range(3))

    def elementwise():
        ((a * b + c).tanh() * a).sum().backward()
        a.grad = b.grad = c.grad = None

    h0 = torch.randn(256, 256)
    branches = [[(torch.randn(256, 256) * 0.06).requires_grad_() for _ in range(3)] for _ in range(8)]

    def wide():
        total = 0
        for ws in branches:
            h = h0
            for w in ws:
                h = (h @ w).tanh()
            total = total + h.sum()
        total.backward()
        for ws in branches:
            for w in ws:
                w.grad = None

    sizes = [784, 512, 256, 10]
    params = []
    for i, o in zip(sizes[:-1], sizes[1:], strict=True):
        params += [(torch.randn(i, o) * (1 / i) ** 0.5).requires_grad_(), torch.zeros(o, requires_grad=True)]
    xb = torch.randn(64, 784)
    yb = torch.randint(0, 10, (64,))

    def mlp_logits(x):
        h = x
        for k in range(0, len(params), 2):
            h = h @ params[k] + params[k + 1]
            if k + 2 < len(params):
                h = h.relu()
        return h

    def mlp_step():
        logp = mlp_logits(xb).log_softmax(dim=1)
        loss = -logp.gather(1, yb.unsqueeze(1)).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None

    small = [(torch.randn(32, 32) * 0.2).requires_grad_() for _ in range(3)]
    xs = torch.randn(64, 32)

    def penalty():
        x = xs.clone().requires_grad_()
        h = x
        for w in small:
            h = (h @ w).tanh()
        out = h.sum()
        (g,) = torch.autograd.grad(out, x, create_graph=True)
        loss = out + ((g.norm(dim=1) - 1) ** 2).mean()
        loss.backward()
        for w in small:
            w.grad = None

    leaf = torch.randn(16, requires_grad=True)
    cc = torch.randn(16)

    def chain():
        chain_forward(leaf, cc).sum().backward()

    return {
        "((a*b+c).tanh()*a).sum() fwd+bwd 4M": _ms(elementwise, 2),
        "4 layers (h@W*0.05).relu() 512 fwd+bwd": _ms(_layers(torch, 4, 512, "relu"), 3),
        "4 layers (h@W).tanh() 512 fwd+bwd": _ms(_layers(torch, 4, 512, "tanh"), 3),
        "8 branches x 3 (h@W).tanh() 256 fwd+bwd": _ms(wide, 5),
        "MLP 784-512-256-10 step, batch 64": _ms(mlp_step, 20),
        "gradient penalty (double backward), 32-wide MLP": _ms(penalty, 50),
        "200-op chain, 16 elements, fwd+bwd": _ms(chain, 50),
    }


def nn_workload(torch) -> dict[str, float]:
    """Training steps written with ``nn``, ``nn.functional`` and ``optim`` (ms)."""
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    def step_fn(model, opt, x, y, loss_fn):
        def step():
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()

        return step

    mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    mlp_step = step_fn(
        mlp, torch.optim.Adam(mlp.parameters()), torch.randn(64, 784), torch.randint(0, 10, (64,)),
        F.cross_entropy,
    )
    lenet = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
    )
    lenet_step = step_fn(
        lenet, torch.optim.Adam(lenet.parameters()), torch.randn(64, 1, 28, 28),
        torch.randint(0, 10, (64,)), F.cross_entropy,
    )
    layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=512, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    xt = torch.randn(16, 64, 128)

    def transformer():
        encoder(xt).square().mean().backward()
        encoder.zero_grad()

    # The fused pieces of those steps on their own.
    xl = torch.randn(16, 64, 128, requires_grad=True)
    wl, bl = torch.ones(128, requires_grad=True), torch.zeros(128, requires_grad=True)
    gl = torch.randn(16, 64, 128)
    logits, target = torch.randn(1024, 100, requires_grad=True), torch.randint(0, 100, (1024,))
    hidden = torch.randn(16, 64, 512)

    return {
        "MLP 784-512-256-10 step (nn + Adam), batch 64": _ms(mlp_step, 20),
        "LeNet-5 step (Conv2d, MaxPool2d, Adam), batch 64, 28x28": _ms(lenet_step, 10),
        "2-layer TransformerEncoder fwd+bwd, d=128, seq 64, batch 16": _ms(transformer, 5),
        "layer_norm fwd+bwd [16,64,128]": _ms(lambda: F.layer_norm(xl, (128,), wl, bl).backward(gl), 20),
        "cross_entropy fwd+bwd [1024,100]": _ms(lambda: F.cross_entropy(logits, target).backward(), 20),
        "dropout(p=0.1) [16,64,512]": _ms(lambda: F.dropout(hidden, 0.1), 20),
    }  # fmt: skip


def optim_workload(torch) -> dict[str, float]:
    """One optimizer step over the parameters of an MLP 784-512-256-10 (535K float32 in six
    tensors), gradients fixed, for each algorithm (ms)."""
    torch.manual_seed(0)
    shapes = [(512, 784), (512,), (256, 512), (256,), (10, 256), (10,)]
    params = [torch.randn(*s).mul_(0.01).requires_grad_() for s in shapes]
    for p in params:
        p.grad = torch.randn(*p.shape)
    optim = torch.optim
    optimizers = {
        "SGD momentum=0.9": lambda ps: optim.SGD(ps, lr=1e-3, momentum=0.9),
        "Adam": lambda ps: optim.Adam(ps),
        "AdamW amsgrad": lambda ps: optim.AdamW(ps, amsgrad=True),
        "Adagrad": lambda ps: optim.Adagrad(ps),
        "RMSprop": lambda ps: optim.RMSprop(ps),
        "RMSprop centered momentum=0.9": lambda ps: optim.RMSprop(ps, momentum=0.9, centered=True),
        "NAdam": lambda ps: optim.NAdam(ps),
        "RAdam": lambda ps: optim.RAdam(ps),
        "Adamax": lambda ps: optim.Adamax(ps),
        "Adadelta": lambda ps: optim.Adadelta(ps),
        "ASGD": lambda ps: optim.ASGD(ps),
        "Rprop": lambda ps: optim.Rprop(ps),
    }
    out = {}
    for name, make in optimizers.items():
        opt = make(params)
        opt.step()  # the state is created on the first step
        out[f"{name} step, 535K float32"] = _ms(opt.step, 10)
    return out


def autocast_workload(torch) -> dict[str, float]:
    """A training step (forward, cross-entropy, backward) of an MLP 784-512-256-10 on a batch
    of 256, in float32 and under CPU autocast to bfloat16 (ms)."""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    x, y = torch.randn(256, 784), torch.randint(0, 10, (256,))

    def step(enabled):
        def run():
            model.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()

        return run

    return {
        "MLP step float32, batch 256": _ms(step(False), 10),
        "MLP step autocast bfloat16, batch 256": _ms(step(True), 10),
    }


def func_workload(torch) -> dict[str, float]:
    """``torch.func`` transforms (ms)."""
    fn = torch.func
    torch.manual_seed(0)
    W, x = torch.randn(128, 128) / 12, torch.randn(128)

    def f(x):
        return (W @ x).tanh()

    def g(x):
        return ((W @ x).tanh() ** 2).sum()

    mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    params = {k: v.detach() for k, v in mlp.named_parameters()}
    xb, yb = torch.randn(16, 32), torch.randn(16, 1)

    def loss(p):
        return ((fn.functional_call(mlp, p, (xb,)) - yb) ** 2).mean()

    W64, x64 = torch.randn(64, 64) / 8, torch.randn(64)

    def g64(x):
        return ((W64 @ x).tanh() ** 2).sum()

    # Per-sample gradients: vmap(grad(loss)) over a batch of 64 examples.
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    net_params = {k: v.detach() for k, v in net.named_parameters()}
    xs, ys = torch.randn(64, 784), torch.randint(0, 10, (64,))

    def sample_loss(p, x, y):
        out = fn.functional_call(net, p, (x.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, y.unsqueeze(0))

    per_sample = fn.vmap(fn.grad(sample_loss), in_dims=(None, 0, 0))
    x_batch = torch.randn(64, 128)

    # Per-operation cost under vmap: 14 small ops on 8 rows of 16.
    w16, rows = torch.randn(16, 16), torch.randn(8, 16)

    def chain(r):
        y = r.sin() * 2 + r
        y = y.exp().sum(0, keepdim=True) - y
        y = (w16 @ y).tanh().softmax(0)
        y = y.reshape(4, 4).transpose(0, 1).sum(1)
        return y.mean() + y.max()

    vchain = fn.vmap(chain)

    return {
        "jacrev tanh(W x), x in R^128": _ms(lambda: fn.jacrev(f)(x), 50),
        "jacfwd tanh(W x), x in R^128": _ms(lambda: fn.jacfwd(f)(x), 50),
        "vjp tanh(W x) (forward + one product)": _ms(lambda: fn.vjp(f, x)[1](x), 200),
        "jvp tanh(W x)": _ms(lambda: fn.jvp(f, (x,), (x,)), 200),
        "grad of sum(tanh(W x)^2)": _ms(lambda: fn.grad(g)(x), 200),
        "hessian of sum(tanh(W x)^2) (128x128)": _ms(lambda: fn.hessian(g)(x), 10),
        "grad of MLP loss via functional_call": _ms(lambda: fn.grad(loss)(params), 100),
        "hessian of sum(tanh(W x)^2), x in R^64": _ms(lambda: fn.hessian(g64)(x64), 20),
        "per-sample grads, MLP 784-128-10, batch 64 (vmap(grad))":
            _ms(lambda: per_sample(net_params, xs, ys), 10),
        "vmap of tanh(W x) over a batch of 64": _ms(lambda: fn.vmap(f)(x_batch), 100),
        "vmap of a chain of 14 small ops, 8 rows of 16": _ms(lambda: vchain(rows), 200),
    }


def _spd_cases(torch):
    """``(n, tag, A, B)`` for the linalg rows: a symmetric positive-definite
    float64 ``A`` requiring grad and four right-hand sides, at 64, 256, 1024
    and a batch of 8 x 64."""
    torch.manual_seed(0)
    for shape in ((64, 64), (256, 256), (1024, 1024), (8, 64, 64)):
        n = shape[-1]
        x = torch.randn(*shape, dtype=torch.float64)
        a = (x @ x.mT / n + torch.eye(n, dtype=torch.float64)).requires_grad_()
        b = torch.randn(*shape[:-1], 4, dtype=torch.float64)
        yield n, "x".join(map(str, shape)), a, b


def linalg_workload(torch) -> dict[str, float]:
    """Decompositions and solves, forward and forward + backward (ms)."""
    out = {}
    for n, tag, a, b in _spd_cases(torch):
        reps = 2 if n >= 1024 else 20
        out[f"cholesky {tag}"] = _ms(lambda a=a: torch.linalg.cholesky(a.detach()), reps)
        out[f"cholesky fwd+bwd {tag}"] = _ms(lambda a=a: torch.linalg.cholesky(a).sum().backward(), reps)
        low = torch.linalg.cholesky(a.detach())
        out[f"solve_triangular {tag}, 4 rhs"] = _ms(
            lambda low=low, b=b: torch.linalg.solve_triangular(low, b, upper=False), reps)
        out[f"solve fwd+bwd {tag}, 4 rhs"] = _ms(
            lambda a=a, b=b: torch.linalg.solve(a, b).sum().backward(), reps)
        out[f"lu_factor {tag}"] = _ms(lambda a=a: torch.linalg.lu_factor(a.detach()), reps)
        out[f"inv {tag}"] = _ms(lambda a=a: torch.linalg.inv(a.detach()), reps)
        out[f"det fwd+bwd {tag}"] = _ms(lambda a=a: torch.linalg.det(a).sum().backward(), reps)
        # Sign-free losses, so both libraries differentiate the same thing.
        out[f"qr fwd+bwd {tag}"] = _ms(lambda a=a: _qr_loss(torch, a).backward(), reps)
        out[f"eigh fwd+bwd {tag}"] = _ms(lambda a=a: _eigh_loss(torch, a).backward(), reps)
        out[f"svd fwd+bwd {tag}"] = _ms(lambda a=a: _svd_loss(torch, a).backward(), reps)
    return out


def linalg_solvers_workload(torch) -> dict[str, float]:
    """Least squares, pseudo-inverse, matrix exponential and general
    eigenvalues, forward and forward + backward (ms); 1024 rows only for
    lstsq (the others' backward at 1024 takes seconds in both)."""
    out = {}
    for n, tag, a, b in _spd_cases(torch):
        reps = 2 if n >= 1024 else 10
        out[f"lstsq {tag}, 4 rhs"] = _ms(lambda a=a, b=b: torch.linalg.lstsq(a.detach(), b), reps)
        out[f"lstsq fwd+bwd {tag}, 4 rhs"] = _ms(
            lambda a=a, b=b: torch.linalg.lstsq(a, b).solution.sum().backward(), reps)
        if n >= 1024:
            continue
        out[f"pinv fwd+bwd {tag}"] = _ms(lambda a=a: torch.linalg.pinv(a).sum().backward(), reps)
        out[f"matrix_exp fwd+bwd {tag}"] = _ms(
            lambda a=a: torch.linalg.matrix_exp(a).sum().backward(), reps)
        out[f"eigvals fwd+bwd {tag}"] = _ms(
            lambda a=a: torch.linalg.eigvals(a).real.sum().backward(), reps)
    return out


def _qr_loss(torch, a):
    q, r = torch.linalg.qr(a)
    return (q * r.diagonal(dim1=-2, dim2=-1).unsqueeze(-2)).sum()


def _eigh_loss(torch, a):
    w, v = torch.linalg.eigh(a)
    return (v * v * w.unsqueeze(-2)).sum()


def _svd_loss(torch, a):
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    return (u @ vh).sum() + s.sum()


def io_workload(torch) -> dict[str, float]:
    """Checkpoints of a 64 MB state dict (16 float32 matrices of 1024x1024),
    in a temporary directory whose files stay in the page cache (ms):
    ``save``/``load`` in torch's zip format, ``load(mmap=True)``, and the
    safetensors functions (``ferrograd.utils.safetensors`` against the
    ``safetensors`` package's ``safetensors.torch``; NaN when it is not
    installed), each load also summed so that the data is read."""
    try:
        import importlib

        st = importlib.import_module("ferrograd.utils.safetensors" if torch.__name__ == "ferrograd"
                                     else "safetensors.torch")
    except ImportError:
        st = None
    torch.manual_seed(0)
    sd = {f"layer{i}.weight": torch.randn(1024, 1024) for i in range(16)}

    def total(d):
        return sum(float(t.sum()) for t in d.values())

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        pt, sf = os.path.join(tmp, "m.pt"), os.path.join(tmp, "m.safetensors")
        out["save 64MB"] = _ms(lambda: torch.save(sd, pt), 1, 5)
        out["load 64MB"] = _ms(lambda: torch.load(pt), 1, 5)
        out["load 64MB + sum"] = _ms(lambda: total(torch.load(pt)), 1, 5)
        out["load mmap 64MB + sum"] = _ms(lambda: total(torch.load(pt, mmap=True)), 1, 5)
        rows = {
            "safetensors save_file 64MB": lambda: st.save_file(sd, sf),
            "safetensors load_file 64MB": lambda: st.load_file(sf),
            "safetensors load_file 64MB + sum": lambda: total(st.load_file(sf)),
        }
        for name, fn in rows.items():
            out[name] = _ms(fn, 1, 5) if st is not None else float("nan")
    return out


def sort_workload(torch) -> dict[str, float]:
    """Sorting and selection along the last dim, forward and forward +
    backward (ms)."""
    torch.manual_seed(0)
    out = {}
    for rows, n in ((1, 1_000_000), (1000, 1000), (10_000, 32)):
        x = torch.randn(rows, n)
        xg = x.clone().requires_grad_()
        tag = f"{rows}x{n}"
        out[f"sort {tag}"] = _ms(lambda x=x: torch.sort(x), 3)
        out[f"sort fwd+bwd {tag}"] = _ms(lambda x=xg: torch.sort(x).values.sum().backward(), 3)
        out[f"topk 8 {tag}"] = _ms(lambda x=x: torch.topk(x, 8), 3)
        out[f"median {tag}"] = _ms(lambda x=x: torch.median(x, -1), 3)
    return out


def special_workload(torch) -> dict[str, float]:
    """The error-function and gamma families on 512x512 float64 (ms):
    arguments where each function's branches all take part."""
    torch.manual_seed(0)
    z = torch.rand(512, 512, dtype=torch.float64) * 8 - 4
    p = torch.rand(512, 512, dtype=torch.float64) * 0.9 + 0.05
    sp = torch.special
    rows = {
        "erf": (torch.erf, z),
        "erfcx": (sp.erfcx, z),
        "ndtr": (sp.ndtr, z),
        "log_ndtr": (sp.log_ndtr, z),
        "ndtri": (sp.ndtri, p),
        "erfinv": (torch.erfinv, p * 2 - 1),
        "lgamma": (torch.lgamma, z * 4),
        "digamma": (torch.digamma, z * 4),
    }
    return {f"{name} 512x512 float64": _ms(lambda f=f, a=a: f(a), 3) for name, (f, a) in rows.items()}


def pow_workload(torch) -> dict[str, float]:
    """``pow`` on 512x512 float32 and float64 (ms): bases uniform in
    [0.1, 3), exponents uniform in [-2, 2), a tensor or a Python number on
    either side."""
    torch.manual_seed(0)
    out = {}
    for name in ("float32", "float64"):
        dt = getattr(torch, name)
        x = torch.rand(512, 512, dtype=dt) * 2.9 + 0.1
        y = torch.rand(512, 512, dtype=dt) * 4 - 2
        out[f"x.pow(y) {name}"] = _ms(lambda x=x, y=y: x.pow(y), 50)
        out[f"x.pow(2.5) {name}"] = _ms(lambda x=x: x.pow(2.5), 50)
        out[f"2.5 ** y {name}"] = _ms(lambda y=y: 2.5**y, 50)
    return out


def fft_workload(torch) -> dict[str, float]:
    """Real transforms: ``rfft`` then ``irfft`` along the last dim (1x4096,
    64x1024) and ``rfft2``/``irfft2`` of 256x256, forward alone and
    forward + backward of the round trip scaled by a filter (ms)."""
    torch.manual_seed(0)
    out = {}
    for shape in ((1, 4096), (64, 1024)):
        x = torch.randn(*shape)
        xg = x.clone().requires_grad_()
        w = torch.rand(shape[-1] // 2 + 1)
        n = shape[-1]
        tag = f"{shape[0]}x{shape[1]}"
        out[f"rfft {tag}"] = _ms(lambda x=x: torch.fft.rfft(x), 20)
        out[f"rfft+irfft fwd+bwd {tag}"] = _ms(
            lambda x=xg, w=w, n=n: torch.fft.irfft(torch.fft.rfft(x) * w, n=n).pow(2).sum().backward(), 10)
    x = torch.randn(256, 256)
    xg = x.clone().requires_grad_()
    w = torch.rand(256, 129)
    out["rfft2 256x256"] = _ms(lambda: torch.fft.rfft2(x), 20)
    out["rfft2+irfft2 fwd+bwd 256x256"] = _ms(
        lambda: torch.fft.irfft2(torch.fft.rfft2(xg) * w, s=(256, 256)).pow(2).sum().backward(), 10)
    z = torch.randn(64, 1024, dtype=torch.complex64)
    out["fft complex64 64x1024"] = _ms(lambda: torch.fft.fft(z), 20)
    return out


WORKLOADS = {
    "profiler": profiler_workload,
    "kernels": kernels_workload,
    "special": special_workload,
    "pow": pow_workload,
    "graphs": graphs_workload,
    "dtypes": dtypes_workload,
    "complex": complex_workload,
    "nn": nn_workload,
    "optim": optim_workload,
    "autocast": autocast_workload,
    "func": func_workload,
    "linalg": linalg_workload,
    "linalg_solvers": linalg_solvers_workload,
    "sort": sort_workload,
    "fft": fft_workload,
    "io": io_workload,
}


def child(backend: str, names: list[str], threads: int) -> None:
    if backend == "torch":
        import torch  # type: ignore[import-not-found]
    else:
        import ferrograd as torch
    torch.set_num_threads(threads)
    print(json.dumps({n: WORKLOADS[n](torch) for n in names}))


def run_child(backend: str, names: list[str], threads: int) -> dict:
    cmd = [sys.executable, __file__, "--child", backend, "--threads", str(threads), "--only", *names]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--threads", type=int, nargs="*", default=[os.cpu_count() or 1],
                    help="intra-op threads of both libraries; several values give a thread-scaling run")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.only, args.threads[0])
        return
    for threads in args.threads:
        compare(args.only, args.rounds, threads)


def compare(names: list[str], rounds: int, threads: int) -> None:
    """Runs the workloads ``names`` in ``rounds`` alternating rounds of fresh
    subprocesses with ``threads`` intra-op threads and prints the medians."""
    try:
        import importlib.util

        backends = ["ferrograd"] + (["torch"] if importlib.util.find_spec("torch") else [])
    except ValueError:
        backends = ["ferrograd"]
    results: dict[str, list[dict]] = {b: [] for b in backends}
    for r in range(rounds):
        order = backends if r % 2 == 0 else backends[::-1]
        for b in order:
            results[b].append(run_child(b, names, threads))
    print(f"machine: {machine()}; {rounds} rounds, medians; {threads} intra-op threads")
    for name in names:
        print(f"\n## {name}\n")
        head = "| metric | ferrograd |" + (" torch | ferrograd / torch |" if "torch" in results else "")
        print(head)
        print("|---" * (head.count("|") - 1) + "|")
        for metric in results["ferrograd"][0][name]:
            ours = statistics.median(x[name][metric] for x in results["ferrograd"])
            row = f"| {metric} | {ours:.3f} |"
            if "torch" in results:
                theirs = statistics.median(x[name][metric] for x in results["torch"])
                ratio = statistics.median(
                    a[name][metric] / b[name][metric]
                    for a, b in zip(results["ferrograd"], results["torch"], strict=True)
                )
                row += f" {theirs:.3f} | {ratio:.2f} |"
            print(row)


if __name__ == "__main__":
    main()
