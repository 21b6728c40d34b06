"""``python -m ferrograd --tour``: a short tour of the tensor core and autograd.

Prints each step with its result, checks a few results against NumPy, and
times a handful of operations against NumPy on this machine.
"""

from __future__ import annotations

import os
import time

import numpy as np

import ferrograd as torch


def _step(title: str) -> None:
    print(f"\n== {title}")


def _time(fn, number: int) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def main() -> None:
    print(f"ferrograd {torch.__version__}: {torch.get_num_threads()} worker threads")

    _step("tensors, dtypes and torch's type promotion")
    a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    i = torch.arange(3)
    print("a =", a)
    print("a + i  ->", (a + i).dtype, "(int64 promotes to the float dtype)")
    print("i * 2  ->", (i * 2).dtype, "(a Python int keeps int64)")
    print("i / 2  ->", i / 2, "(true division gives floats)")

    _step("views share memory: no copies")
    t = a.t()
    print("a.t() is a view:", t._is_view(), "strides", t.stride(), "contiguous:", t.is_contiguous())
    row = a[1]
    row[0] = 40.0
    print("writing a[1][0] = 40 through a view changes a:", a.tolist()[1])
    print("a version counter (bumped by the in-place write):", a._version)

    _step("NumPy interop without copies")
    n = np.arange(6, dtype=np.float64).reshape(2, 3)
    f = torch.from_numpy(n)
    f.mul_(10)
    print("from_numpy + mul_(10) updates the array:", n.tolist())
    print("tensor.numpy() shares memory:", np.shares_memory(f.numpy(), n))

    _step("reductions, broadcasting and linear algebra")
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    w = torch.randn(3, 2)
    y = (x @ w).relu()
    print("relu(x @ w) =", y)
    print("softmax rows sum to one:", y.softmax(dim=1).sum(dim=1))
    ref = np.maximum(x.numpy() @ w.numpy(), 0)
    print("matches NumPy:", np.allclose(y.numpy(), ref, atol=1e-6))
    A = torch.tensor([[4.0, 1.0], [2.0, 3.0]], dtype=torch.float64)
    eye = (torch.linalg.inv(A) @ A).round(decimals=6)
    print("det(A) =", torch.linalg.det(A).item(), " inv(A) @ A =", eye)
    print("einsum('ij,jk->ik') == matmul:", torch.allclose(torch.einsum("ij,jk->ik", x, w), x @ w))

    _step("autograd: gradients, graphs and higher derivatives")
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x * x).sum()
    print("y = sum(x**3):", y)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    print("dy/dx (3x^2) =", g)
    (h,) = torch.autograd.grad(g.sum(), x)
    print("d2y/dx2 (6x) =", h)
    print("graph of dy/dx:", g.grad_fn.name(), "<-", [n.name() for n, _ in g.grad_fn.next_functions if n])

    _step("autograd: fit y = sin(x) with a 1-32-1 tanh network")
    torch.manual_seed(0)
    xs = torch.linspace(-3, 3, 64).reshape(64, 1)
    ys = xs.sin()
    w1 = torch.randn(1, 32).requires_grad_()
    b1 = (torch.randn(32) * 0.1).requires_grad_()
    w2 = (torch.randn(32, 1) * 0.2).requires_grad_()
    b2 = torch.zeros(1, requires_grad=True)
    params = [w1, b1, w2, b2]
    for step in range(1501):
        pred = (xs @ w1 + b1).tanh() @ w2 + b2
        loss = ((pred - ys) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.05 * p.grad
                p.grad = None
        if step % 500 == 0:
            print(f"step {step:5d}  mean squared error {loss.item():.5f}")
    err = np.abs(pred.detach().numpy() - np.sin(xs.numpy())).max()
    print(f"largest error after training: {err:.3f}")

    _step("profiler: where one training step spends its time")
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        with torch.autograd.profiler.record_function("forward"):
            pred = (xs @ w1 + b1).tanh() @ w2 + b2
            loss = ((pred - ys) ** 2).mean()
        with torch.autograd.profiler.record_function("backward"):
            loss.backward()
        with torch.autograd.profiler.record_function("update"), torch.no_grad():
            for p in params:
                p -= 0.05 * p.grad
                p.grad = None
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
    trace = os.path.abspath("ferrograd_trace.json")
    prof.export_chrome_trace(trace)
    print(f"Chrome trace of the step ({len(prof.function_events)} events) written to {trace}")

    _step("speed against NumPy on this machine")
    s16a, s16b = torch.ones(16), torch.ones(16)
    n16a, n16b = np.ones(16, np.float32), np.ones(16, np.float32)
    print(f"a + b on 16 elements: ferrograd {_time(lambda: s16a + s16b, 20000) * 1e9:.0f} ns, "
          f"NumPy {_time(lambda: n16a + n16b, 20000) * 1e9:.0f} ns")
    big_a, big_b = torch.rand(4_000_000), torch.rand(4_000_000)
    np_a, np_b = big_a.numpy(), big_b.numpy()
    print(f"a + b on 4M elements: ferrograd {_time(lambda: big_a + big_b, 20) * 1e3:.2f} ms, "
          f"NumPy {_time(lambda: np_a + np_b, 20) * 1e3:.2f} ms")
    m1, m2 = torch.rand(512, 512), torch.rand(512, 512)
    n1, n2 = m1.numpy(), m2.numpy()
    print(f"512x512 matmul: ferrograd {_time(lambda: m1 @ m2, 10) * 1e3:.2f} ms, "
          f"NumPy {_time(lambda: n1 @ n2, 10) * 1e3:.2f} ms")

