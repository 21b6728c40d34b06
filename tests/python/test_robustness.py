"""Bad input never crashes: random calls raise only torch's exception types.

Every public ``Tensor`` method and module function is called with random
arguments (tensors of every dtype and of 0 to 3 dims, transposed views,
numbers, huge and negative ints, NaN, lists, tuples, slices, strings,
dtypes, ``None``). Each call must either succeed or raise one of the
exception types torch raises for bad input; a Rust panic would surface as
``pyo3_runtime.PanicException`` (a ``BaseException``) and fail the test.
"""

from __future__ import annotations

import random

import ferrograd as fg
import pytest

ALLOWED = (RuntimeError, IndexError, TypeError, ValueError)
DTYPES = [fg.float32, fg.float64, fg.int64, fg.int32, fg.bool]
SKIP = {
    "set_num_threads", "set_default_dtype", "manual_seed", "seed", "set_rng_state",
    "Tensor", "dtype", "device", "Size", "Generator", "numpy",
    # File I/O (a random string is a path); torch raises AttributeError for
    # objects that are not files.
    "save", "load",
}  # fmt: skip


def _tensor(r: random.Random):
    shape = [r.choice([0, 1, 2, 3]) for _ in range(r.choice([0, 1, 1, 2, 2, 3]))]
    t = (fg.randn(*shape) * 3) if shape else fg.tensor(r.uniform(-3, 3))
    t = t.to(r.choice(DTYPES))
    if t.dim() >= 2 and r.random() < 0.3:
        t = t.transpose(0, 1)
    return t


def _arg(r: random.Random):
    x = r.random()
    if x < 0.3:
        return _tensor(r)
    if x < 0.45:
        return r.choice([0, 1, -1, 2, -2, 3, 5, 1 << 40, -(1 << 40)])
    if x < 0.55:
        return r.choice([0.5, -1.5, 0.0, float("nan"), float("inf")])
    if x < 0.6:
        return r.choice([True, False])
    if x < 0.65:
        return None
    if x < 0.75:
        return [r.choice([0, 1, -1, 2]) for _ in range(r.randint(0, 3))]
    if x < 0.8:
        return tuple(r.choice([0, 1, -1, 2]) for _ in range(r.randint(0, 3)))
    if x < 0.85:
        return slice(r.choice([None, 0, 1, -1]), r.choice([None, 2, -1]), r.choice([None, 1, 2]))
    if x < 0.9:
        return r.choice(["a", "ij,jk->ik", "fro", "sum"])
    return r.choice([fg.float32, fg.int64, fg.bool, Ellipsis])


def _methods():
    return sorted(
        n for n in dir(fg.Tensor)
        if n not in SKIP and (not n.startswith("__") or n in ("__getitem__", "__setitem__"))
    )


def _functions():
    return sorted(
        n for n in dir(fg)
        if not n.startswith("_") and n not in SKIP and callable(getattr(fg, n))
    )


@pytest.mark.parametrize("seed", range(4))
def test_random_calls_raise_only_torch_exception_types(seed):
    r = random.Random(seed)
    methods, functions = _methods(), _functions()
    for _ in range(1500):
        if r.random() < 0.6:
            t = _tensor(r)
            try:
                f = getattr(t, r.choice(methods))
            except ALLOWED:
                continue
            if not callable(f):
                continue
        else:
            f = getattr(fg, r.choice(functions))
        args = [_arg(r) for _ in range(r.randint(0, 3))]
        try:
            f(*args)
        except ALLOWED:
            pass


ZERO_DIM_ARGS = [(), (0,), (-1,), (0, 0), (0, -1), (1, 0), ([0],), (0, fg.tensor(0)),
                 (0, fg.tensor([0]), fg.tensor([1.0]))]


@pytest.mark.parametrize("make", [lambda: fg.tensor(2.5), lambda: fg.tensor(3), lambda: fg.zeros(2, 0)])
def test_dim_arguments_on_degenerate_tensors_never_panic(make):
    for name in _methods():
        for args in ZERO_DIM_ARGS:
            try:
                f = getattr(make(), name)
                if callable(f):
                    f(*args)
            except ALLOWED:
                pass


HUGE = [1 << 40, -(1 << 40), 1 << 62]


@pytest.mark.parametrize("huge", HUGE)
def test_huge_sizes_and_counts_raise_instead_of_aborting(huge):
    arg_sets = [(huge,), (0, huge), (huge, 0), ((huge,),), ([huge, 1],), (fg.tensor([huge]),)]
    for name in _methods():
        for args in arg_sets:
            try:
                f = getattr(fg.ones(2, 2), name)
                if callable(f):
                    f(*args)
            except ALLOWED:
                pass
    for name in _functions():
        for args in [(huge,), (0, huge), ((huge,),), (0, 1, (huge,)), (fg.ones(3), huge)]:
            try:
                getattr(fg, name)(*args)
            except ALLOWED:
                pass
