"""Sampling programs whose outputs must equal torch's CPU generator bit for bit.

Each case is a seed and a list of calls ``f(L, g)``: ``L`` is the library
(ferrograd here; torch in ``scripts/capture_torch_random.py``, which records
the reference outputs into ``data/torch_random_streams.json``) and ``g`` is
the generator to pass as ``generator=`` (``None`` to use the default one).
The calls of one case run in order on one stream, so each case also checks
the stream position every call leaves behind.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

Call = Callable[[Any, Any], Any]

# Sizes around each switch of torch's kernels: normal_ takes 16-element
# Box-Muller blocks from 16 elements on (with the last block redone when
# the size is not a multiple of 16) and one value at a time below.
NORMAL_SIZES = (1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 48, 100, 1001)
BIG = 100_003  # compared through a digest, to keep the data small


def _kw(L, g, **kw):
    if g is not None:
        kw["generator"] = g
    return kw


def _dt(L, name: str):
    return getattr(L, name)


def _cases() -> dict[str, tuple[int, bool, list[Call]]]:
    cases: dict[str, tuple[int, bool, list[Call]]] = {}
    for dt in ("float32", "float64"):
        for n in NORMAL_SIZES:
            cases[f"randn_{dt}_{n}"] = (0, False, [lambda L, g, n=n, dt=dt: L.randn(n, dtype=_dt(L, dt))])
        cases[f"randn_{dt}_big"] = (3, False, [lambda L, g, dt=dt: L.randn(BIG, dtype=_dt(L, dt))])
        for n in (1, 5, 16, 1000):
            cases[f"rand_{dt}_{n}"] = (1, False, [lambda L, g, n=n, dt=dt: L.rand(n, dtype=_dt(L, dt))])
        cases[f"rand_{dt}_big"] = (4, False, [lambda L, g, dt=dt: L.rand(BIG, dtype=_dt(L, dt))])
        cases[f"randn_{dt}_2d_seeds"] = (2**40 + 17, False, [
            lambda L, g, dt=dt: L.randn(3, 7, dtype=_dt(L, dt)),
            lambda L, g, dt=dt: L.randn(5, 5, dtype=_dt(L, dt)),
        ])
        cases[f"normal__{dt}"] = (5, False, [
            lambda L, g, dt=dt: L.empty(40, dtype=_dt(L, dt)).normal_(1.5, 2.5),
            lambda L, g, dt=dt: L.empty(9, dtype=_dt(L, dt)).normal_(-3.0, 0.25),
            lambda L, g, dt=dt: L.empty(6, 5, dtype=_dt(L, dt)).t().normal_(0.5, 2.0),
        ])
        cases[f"uniform__{dt}"] = (6, False, [
            lambda L, g, dt=dt: L.empty(33, dtype=_dt(L, dt)).uniform_(-3.7, 2.1),
            lambda L, g, dt=dt: L.empty(4, 6, dtype=_dt(L, dt)).t().uniform_(10.0, 10.5),
            lambda L, g, dt=dt: L.empty(3, dtype=_dt(L, dt)).uniform_(),
        ])
        cases[f"normal_scalar_{dt}"] = (7, False, [
            lambda L, g, dt=dt: L.normal(2.0, 3.0, size=(5, 7), dtype=_dt(L, dt)),
            lambda L, g, dt=dt: L.normal(0.0, 1.0, size=(3,), dtype=_dt(L, dt)),
        ])
        cases[f"normal_tensor_{dt}"] = (8, False, [
            lambda L, g, dt=dt: L.normal(
                L.arange(20, dtype=_dt(L, dt)), L.full((20,), 0.5, dtype=_dt(L, dt))
            ),
            lambda L, g, dt=dt: L.normal(L.arange(6, dtype=_dt(L, dt)), 2.0),
            lambda L, g, dt=dt: L.normal(1.0, L.full((4,), 3.0, dtype=_dt(L, dt))),
        ])
        cases[f"like_{dt}"] = (9, False, [
            lambda L, g, dt=dt: L.rand_like(L.zeros(3, 7, dtype=_dt(L, dt))),
            lambda L, g, dt=dt: L.randn_like(L.zeros(3, 7, dtype=_dt(L, dt))),
            lambda L, g, dt=dt: L.randn_like(L.zeros(2, dtype=_dt(L, dt))),
        ])
        cases[f"exponential__{dt}"] = (10, False, [
            lambda L, g, dt=dt: L.empty(50, dtype=_dt(L, dt)).exponential_(2.5),
            lambda L, g, dt=dt: L.empty(4, 3, dtype=_dt(L, dt)).t().exponential_(),
        ])
        cases[f"bernoulli_{dt}"] = (11, False, [
            lambda L, g, dt=dt: L.bernoulli(L.linspace(0, 1, 50, dtype=_dt(L, dt))),
            lambda L, g, dt=dt: L.empty(50, dtype=_dt(L, dt)).bernoulli_(0.3),
            lambda L, g, dt=dt: L.zeros(40, dtype=_dt(L, dt)).bernoulli(0.7),
            lambda L, g, dt=dt: L.zeros(3, 4, dtype=_dt(L, dt)).bernoulli_(
                L.tensor([0.1, 0.5, 0.9, 1.0], dtype=_dt(L, dt))
            ),
            lambda L, g, dt=dt: L.zeros(3, 4, dtype=L.int64).bernoulli_(
                L.tensor([0.2, 0.4, 0.6, 0.8], dtype=_dt(L, dt))
            ),
        ])
        # Past the word batches and several regenerations of the state.
        cases[f"bernoulli_{dt}_big"] = (13, False, [
            lambda L, g, dt=dt: L.empty(BIG, dtype=_dt(L, dt)).bernoulli_(0.37),
            lambda L, g, dt=dt: L.empty(3, 1001, dtype=_dt(L, dt)).t().bernoulli_(0.9),
        ])
        cases[f"multinomial_{dt}"] = (12, False, [
            lambda L, g, dt=dt: L.multinomial(
                L.tensor([[0.1, 0.5, 0.0, 2.0], [1, 1, 1, 1]], dtype=_dt(L, dt)), 20, True
            ),
            lambda L, g, dt=dt: L.multinomial(
                L.tensor([[0.1, 0.5, 0.0, 2.0, 3.0], [1, 2, 3, 4, 5]], dtype=_dt(L, dt)), 3
            ),
            lambda L, g, dt=dt: L.multinomial(L.tensor([0.1, 0.5, 0.0, 2.0, 3.0], dtype=_dt(L, dt)), 1, True),
            lambda L, g, dt=dt: L.multinomial(L.arange(1, 101, dtype=_dt(L, dt)), 100),
            lambda L, g, dt=dt: L.multinomial(L.tensor([1e7] + [0.4] * 999, dtype=_dt(L, dt)), 300, True),
        ])
    # The 16-bit floats (bfloat16 compared through its exact float32 value,
    # which NumPy can hold).
    for dt in ("float16", "bfloat16"):
        for n in (1, 3, 15, 16, 17, 33, 1000):
            cases[f"randn_{dt}_{n}"] = (
                0,
                False,
                [lambda L, g, n=n, dt=dt: L.randn(n, dtype=_dt(L, dt)).float()],
            )
        cases[f"rand_{dt}"] = (1, False, [
            lambda L, g, dt=dt: L.rand(1000, dtype=_dt(L, dt)).float(),
            lambda L, g, dt=dt: L.rand(5, dtype=_dt(L, dt)).float(),
        ])
        cases[f"normal__{dt}"] = (5, False, [
            lambda L, g, dt=dt: L.empty(40, dtype=_dt(L, dt)).normal_(1.5, 2.5).float(),
            lambda L, g, dt=dt: L.empty(9, dtype=_dt(L, dt)).normal_(-3.0, 0.25).float(),
            lambda L, g, dt=dt: L.empty(6, 5, dtype=_dt(L, dt)).t().normal_(0.5, 2.0).float(),
        ])
        cases[f"uniform__{dt}"] = (6, False, [
            lambda L, g, dt=dt: L.empty(33, dtype=_dt(L, dt)).uniform_(-3.7, 2.1).float(),
            lambda L, g, dt=dt: L.empty(4, 6, dtype=_dt(L, dt)).t().uniform_(10.0, 10.5).float(),
        ])
        cases[f"like_{dt}"] = (9, False, [
            lambda L, g, dt=dt: L.rand_like(L.zeros(3, 7, dtype=_dt(L, dt))).float(),
            lambda L, g, dt=dt: L.randn_like(L.zeros(3, 7, dtype=_dt(L, dt))).float(),
        ])
        cases[f"random_16_{dt}"] = (13, False, [
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_().float(),
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(5, 100).float(),
            lambda L, g, dt=dt: L.randint(-50, 50, (9,), dtype=_dt(L, dt)).float(),
        ])
    for dt in ("int16", "int8", "uint8"):
        cases[f"random_narrow_{dt}"] = (13, False, [
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(),
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(5, 100),
            lambda L, g, dt=dt: L.randint(0, 100, (9,), dtype=_dt(L, dt)),
        ])
    for dt in ("int64", "int32", "float32", "float64", "bool"):
        cases[f"random__{dt}"] = (13, False, [
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(),
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(2),
            lambda L, g, dt=dt: L.empty(5, 4, dtype=_dt(L, dt)).t().random_(0, 2),
        ])
    for dt in ("int64", "int32", "float32", "float64"):
        cases[f"random_ranges_{dt}"] = (14, False, [
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(5, 100),
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(100),
            lambda L, g, dt=dt: L.empty(20, dtype=_dt(L, dt)).random_(-7, None),
        ])
    cases["random__full_int64"] = (15, False, [
        lambda L, g: L.empty(20, dtype=L.int64).random_(-(2**63), None),
    ])
    # One 32-bit word per value below a range of 2**28, 64 bits from there.
    ranges = ((0, 10), (-5, 7), (0, 2**28 - 1), (0, 2**28), (0, 2**31), (0, 2**32 - 1),
              (0, 2**32), (0, 2**32 + 1),
              (-(2**40), 2**40), (0, 2**62), (-(2**63), 2**63 - 1))
    cases["randint_ranges"] = (16, False, [
        (lambda L, g, lo=lo, hi=hi: L.randint(lo, hi, (30,))) for lo, hi in ranges
    ] + [
        lambda L, g: L.randint(-100, 100, (30,), dtype=L.int32),
        lambda L, g: L.randint(0, 2, (30,), dtype=L.bool),
        lambda L, g: L.randint(3, 10, (4, 5), dtype=L.float32),
        lambda L, g: L.randint(-(2**40), 2**40, (7,), dtype=L.float64),
        lambda L, g: L.randint_like(L.zeros(3, 3, dtype=L.int64), 50),
    ])
    for n in (0, 1, 2, 3, 10, 1000, 4096, BIG):
        cases[f"randperm_{n}"] = (17, False, [lambda L, g, n=n: L.randperm(n)])
    cases["randperm_dtypes"] = (18, False, [
        lambda L, g: L.randperm(20, dtype=L.int32),
        lambda L, g: L.randperm(20, dtype=L.float32),
        lambda L, g: L.randperm(20, dtype=L.float64),
    ])
    mixed: list[Call] = [
        lambda L, g: L.rand(3, **_kw(L, g)),
        lambda L, g: L.randn(5, **_kw(L, g)),  # leaves a cached normal
        lambda L, g: L.randint(0, 100, (7,), **_kw(L, g)),
        lambda L, g: L.randn(1, **_kw(L, g)),  # uses it
        lambda L, g: L.randperm(9, **_kw(L, g)),
        lambda L, g: L.rand(2, dtype=L.float64, **_kw(L, g)),
        lambda L, g: L.randn(33, **_kw(L, g)),
        lambda L, g: L.randn(3, dtype=L.float64, **_kw(L, g)),
        lambda L, g: L.multinomial(L.ones(5), 3, **_kw(L, g)),
        lambda L, g: L.empty(18).normal_(**_kw(L, g)),
        lambda L, g: L.empty(7).uniform_(-1, 1, **_kw(L, g)),
        lambda L, g: L.empty(6).exponential_(**_kw(L, g)),
        lambda L, g: L.empty(6).bernoulli_(0.5, **_kw(L, g)),
        lambda L, g: L.empty(6, dtype=L.int64).random_(**_kw(L, g)),
        lambda L, g: L.randn(1, dtype=L.float64, **_kw(L, g)),
        lambda L, g: L.randn(640, **_kw(L, g)),  # crosses a regeneration
        lambda L, g: L.rand(1, **_kw(L, g)),
    ]
    for seed in (0, 1, 42, 2**32 + 5, 2**64 - 1):
        cases[f"mixed_default_{seed}"] = (seed, False, mixed)
        cases[f"mixed_generator_{seed}"] = (seed, True, mixed)
    return cases


CASES = _cases()


def run_case(L, name: str) -> tuple[list[Any], Any]:
    """Runs case ``name`` on library ``L``; returns its outputs and the
    generator used (``L.default_generator`` or a private one)."""
    seed, private, calls = CASES[name]
    if private:
        g = L.Generator().manual_seed(seed)
        # The default generator must not be touched: seed it elsewhere.
        L.manual_seed(seed + 1 if seed < 2**64 - 1 else 0)
    else:
        L.manual_seed(seed)
        g = None
    outs = [f(L, g) for f in calls]
    return outs, (g if private else L.default_generator)


def encode(values: np.ndarray, limit: int = 512) -> dict[str, Any]:
    """A bitwise record of an array: its dtype, shape, and raw bytes (or,
    when there are more than ``limit``, their SHA-256 and the first 64)."""
    raw = np.ascontiguousarray(values).tobytes()
    rec: dict[str, Any] = {"dtype": str(values.dtype), "shape": list(values.shape)}
    if len(raw) <= limit:
        rec["b64"] = base64.b64encode(raw).decode()
    else:
        rec["sha256"] = hashlib.sha256(raw).hexdigest()
        rec["head_b64"] = base64.b64encode(raw[:64]).decode()
    return rec


def state_digest(state_bytes: bytes) -> str:
    return hashlib.sha256(state_bytes).hexdigest()
