"""Jacobian and Hessian benchmarks (autograd.functional).

- jacobian of f(x) = tanh(W @ x), x in R^128, W 128x128: ``jacobian`` with
  vectorize=False and vectorize=True (both one batched backward pass in the
  Rust engine) and strategy="forward-mode" (one forward pass with a batch of
  128 tangents), against a Python loop of ``autograd.grad`` calls over the
  rows (what a row-by-row implementation does);
- hessian of f(x) = tanh(W @ x).pow(2).sum(), x in R^64: ``hessian``
  (reverse-over-reverse, and forward-over-reverse with
  outer_jacobian_strategy="forward-mode") against a Python loop of ``hvp``
  calls over the basis vectors.

Microseconds per call. Run: ``python benches/bench_functional.py`` (numbers
go to docs/performance/autograd.md).
"""

from __future__ import annotations

import ferrograd as fg
from common import best_of, machine, table
from ferrograd.autograd.functional import hessian, hvp, jacobian


def jacobian_rows() -> tuple[float, float, float, float]:
    fg.manual_seed(0)
    w = fg.randn(128, 128, dtype=fg.float64) / 12
    x = fg.randn(128, dtype=fg.float64)

    def f(v):
        return (w @ v).tanh()

    def loop():
        xr = x.detach().requires_grad_()
        y = f(xr)
        eye = fg.eye(128, dtype=fg.float64)
        rows = [fg.autograd.grad(y, xr, eye[i], retain_graph=True)[0] for i in range(128)]
        return fg.stack(rows)

    def unvectorized():
        return jacobian(f, x)

    def vectorized():
        return jacobian(f, x, vectorize=True)

    def forward_mode():
        return jacobian(f, x, vectorize=True, strategy="forward-mode")

    fns = (vectorized, unvectorized, loop, forward_mode)
    return tuple(best_of(fn, 10) * 1e6 for fn in fns)  # type: ignore[return-value]


def hessian_rows() -> tuple[float, float, float]:
    fg.manual_seed(1)
    w = fg.randn(64, 64, dtype=fg.float64) / 8
    x = fg.randn(64, dtype=fg.float64)

    def f(v):
        return (w @ v).tanh().pow(2).sum()

    def full():
        return hessian(f, x)

    def forward_over_reverse():
        return hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")

    def loop():
        eye = fg.eye(64, dtype=fg.float64)
        return fg.stack([hvp(f, x, eye[i])[1] for i in range(64)])

    return best_of(full, 10) * 1e6, best_of(loop, 3) * 1e6, best_of(forward_over_reverse, 10) * 1e6


def main() -> None:
    print(f"ferrograd {fg.__version__}, {fg.get_num_threads()} pool threads; {machine()}")
    vec, unvec, loop, fwd = jacobian_rows()
    hess, hloop, hfwd = hessian_rows()
    rows = [
        ("jacobian, tanh(W @ x), x in R^128, vectorize=False", f"{unvec:.0f} us", "", f"{loop / unvec:.1f}x"),
        ("  vectorize=True", f"{vec:.0f} us", ">= 5x the loop", f"{loop / vec:.1f}x"),
        ("  strategy=\"forward-mode\"", f"{fwd:.0f} us", "", f"{loop / fwd:.1f}x"),
        ("  Python loop of autograd.grad over rows", f"{loop:.0f} us", "", "1.0x"),
        (
            "hessian, tanh(W @ x).pow(2).sum(), x in R^64",
            f"{hess:.0f} us",
            ">= 3x the loop",
            f"{hloop / hess:.1f}x",
        ),
        ("  outer_jacobian_strategy=\"forward-mode\"", f"{hfwd:.0f} us", "", f"{hloop / hfwd:.1f}x"),
        ("  Python loop of hvp over basis vectors", f"{hloop:.0f} us", "", "1.0x"),
    ]
    print(table(rows, ("Benchmark", "ferrograd", "Target", "Speedup")))


if __name__ == "__main__":
    main()
