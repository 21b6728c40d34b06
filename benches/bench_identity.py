"""Cost of giving every tensor and node one Python object: the paths that
make or look up objects, timed in one process.

Run: ``python benches/bench_identity.py`` (numbers go to docs/performance/autograd.md).
To compare two builds, run it once in each build's environment; ``--json``
prints the raw numbers.
"""

from __future__ import annotations

import gc
import json
import sys

import ferrograd as fg
from bench_autograd import CHAIN_OPS, small_chain
from common import best_of, machine, table


def per_call_ns(fn, number: int) -> float:
    return best_of(fn, number) * 1e9


def measure() -> dict[str, float]:
    chain = small_chain()
    a = fg.randn(16)
    b = fg.randn(16)
    x = fg.randn(16, requires_grad=True)

    def fwd_bwd():
        chain().sum().backward()

    def no_grad():
        with fg.no_grad():
            chain()

    (x * 2).sum().backward()
    y = (x * 2).sin()
    node = y.grad_fn

    def grad_access():
        return x.grad

    def grad_fn_access():
        return y.grad_fn

    def next_functions():
        return node.next_functions

    tagged = fg.randn(16)
    try:
        tagged.label = "w"
    except AttributeError:  # builds without attributes on tensors
        tagged = None

    def attr_read():
        return tagged.label

    gc.collect()
    out = {
        "a + b, 16 float32 (ns)": per_call_ns(lambda: a + b, 20000),
        "200-op chain forward+backward, per op (ns)": per_call_ns(fwd_bwd, 50) / CHAIN_OPS,
        "200-op chain under no_grad, per op (ns)": per_call_ns(no_grad, 50) / CHAIN_OPS,
        "x.grad, object alive (ns)": per_call_ns(grad_access, 20000),
        "y.grad_fn, object alive (ns)": per_call_ns(grad_fn_access, 20000),
        "node.next_functions (ns)": per_call_ns(next_functions, 20000),
    }
    if tagged is not None:
        out["attribute set on a tensor, read (ns)"] = per_call_ns(attr_read, 20000)
    return out


def main() -> None:
    results = measure()
    if "--json" in sys.argv:
        print(json.dumps(results))
        return
    print(machine())
    rows = [(k, f"{v:,.0f}", "", "") for k, v in results.items()]
    print(table(rows, ("workload", "ferrograd", "", "")))


if __name__ == "__main__":
    main()
