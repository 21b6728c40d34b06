"""ferrograd matmul against NumPy (OpenBLAS) on the same machine, same run.

Prints GFLOP/s for float32 square products of size 512 and 1024 and the
ratio ferrograd / NumPy. Build the extension in release mode first
(``maturin develop --release``); a debug build is far slower.

    python benches/bench_matmul.py [--repeat 10] [--backend gemm|matrixmultiply]
        [--sizes 512 1024] [--shapes 64x784x128t ...] [--threads N]

``--shapes MxKxN`` times ``[M, K] @ [K, N]`` products instead; a trailing
``t`` stores the right operand transposed (``x @ w.T`` with ``w`` of shape
``[N, K]``, the layout of a linear layer).

NumPy's thread count follows OpenBLAS (``OPENBLAS_NUM_THREADS``).
"""

from __future__ import annotations

import argparse
import time

import ferrograd as fg
import numpy as np


def best_seconds(fs, repeat: int) -> list[float]:
    """The fastest of ``repeat`` timed calls of each function, after one
    warm-up call each. Each function is timed in a block of its own, after a
    pause: OpenBLAS's threads keep spinning for a while after a call, and if
    calls were interleaved they would steal the cores of the next contender."""
    best = []
    for f in fs:
        time.sleep(0.5)
        f()
        b = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            f()
            b = min(b, time.perf_counter() - t0)
        best.append(b)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--backend", choices=["gemm", "matrixmultiply"], default="gemm")
    p.add_argument("--sizes", type=int, nargs="+", default=[512, 1024])
    p.add_argument("--shapes", nargs="+", default=None, help="MxKxN products, 't' suffix: b transposed")
    p.add_argument("--threads", type=int, default=None, help="ferrograd pool size")
    args = p.parse_args()
    if args.threads:
        fg.set_num_threads(args.threads)
    fg._core._set_gemm_backend(args.backend)
    rng = np.random.default_rng(0)
    print(f"ferrograd threads: {fg.get_num_threads()}, backend: {args.backend}")
    shapes = [_parse(s) for s in args.shapes] if args.shapes else [(n, n, n, False) for n in args.sizes]
    print(f"{'product':>14} {'numpy GFLOP/s':>14} {'ferrograd GFLOP/s':>18} {'ratio':>7}",
          f"{'ferrograd ms':>13}")
    for m, k, n, trans in shapes:
        a = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k) if trans else (k, n)).astype(np.float32)
        b = w.T if trans else w
        ta, tw = fg.tensor(a), fg.tensor(w)
        tb = tw.t() if trans else tw
        flops = 2.0 * m * k * n
        t_np, t_fg = best_seconds(
            [lambda a=a, b=b: a @ b, lambda ta=ta, tb=tb: ta @ tb], args.repeat
        )
        diff = np.abs((ta @ tb).numpy() - a @ b).max()
        assert diff < 1e-2 * np.sqrt(k), f"results differ by {diff}"
        g_np, g_fg = flops / t_np / 1e9, flops / t_fg / 1e9
        name = f"{m}x{k}x{n}{'t' if trans else ''}"
        print(f"{name:>14} {g_np:>14.1f} {g_fg:>18.1f} {g_fg / g_np:>7.2f} {t_fg * 1e3:>13.3f}")


def _parse(spec: str) -> tuple[int, int, int, bool]:
    trans = spec.endswith("t")
    m, k, n = (int(v) for v in spec.rstrip("t").split("x"))
    return m, k, n, trans


if __name__ == "__main__":
    main()
