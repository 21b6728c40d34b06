"""Custom autograd.Function benchmark: a chain of 200 applications of a
Python Function (Exp-like, saving its output) on a 16-element tensor,
forward+backward, in microseconds per application; compared with the same
chain of the built-in ``exp`` (also under anomaly mode, which records a
stack per node) and with the forward passes alone.

Run: ``python benches/bench_custom_function.py`` (numbers go to
docs/performance/autograd.md).
"""

from __future__ import annotations

import ferrograd as fg
from common import best_of, machine, table
from ferrograd.autograd import Function


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = fg.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g.mul(y)


class ExpSetupContext(Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


N = 200


def per_application(step) -> tuple[float, float]:
    """(forward+backward, forward only) microseconds per application."""
    x = fg.full((16,), -1e-3, requires_grad=True)

    def forward():
        y = x
        for _ in range(N):
            y = step(y)
        return y

    def fwd_bwd():
        forward().sum().backward()

    return best_of(fwd_bwd, 20) / N * 1e6, best_of(forward, 20) / N * 1e6


def main() -> None:
    print(f"ferrograd {fg.__version__}, {fg.get_num_threads()} pool threads; {machine()}")
    custom = per_application(Exp.apply)
    setup = per_application(ExpSetupContext.apply)
    builtin = per_application(fg.exp)
    with fg.autograd.set_detect_anomaly(True):
        anomaly = per_application(fg.exp)
    rows = [
        ("Function (ctx style), forward+backward per application", f"{custom[0]:.2f} us", "", ""),
        ("  forward only", f"{custom[1]:.2f} us", "", ""),
        ("Function (setup_context style), forward+backward", f"{setup[0]:.2f} us", "", ""),
        ("  forward only", f"{setup[1]:.2f} us", "", ""),
        ("built-in exp, forward+backward", f"{builtin[0]:.2f} us", "", f"{custom[0] / builtin[0]:.1f}x"),
        ("  forward only", f"{builtin[1]:.2f} us", "", ""),
        ("built-in exp under anomaly mode, forward+backward", f"{anomaly[0]:.2f} us", "", ""),
        ("  forward only (records a Python stack per node)", f"{anomaly[1]:.2f} us", "", ""),
    ]
    print(table(rows, ("Benchmark (200-application chain, 16 float32)", "ferrograd", "Target", "Ratio")))


if __name__ == "__main__":
    main()
