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
    "use_deterministic_algorithms", "set_default_device", "set_anomaly_enabled",
    # Per-thread autocast state (a region left open would recast later calls).
    "set_autocast_enabled", "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_cpu_dtype",
    "autocast_increment_nesting", "autocast_decrement_nesting", "set_autocast_cache_enabled",
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


# Shapes whose element count overflows 64 bits: torch's errors, never a
# tensor that reports a wrapped numel, never a panic.
B32 = 1 << 32
OVERFLOWING_SHAPES = {
    "expand": lambda: fg.ones(1).expand(B32, B32),
    "expand_as_sizes": lambda: fg.ones(1, 1).expand((B32, B32)),
    "broadcast_to": lambda: fg.ones(1).broadcast_to((B32, B32)),
    "expand_then_zero_dim": lambda: fg.ones(1).expand(B32, B32, 0),
    "view": lambda: fg.ones(4).view(B32, B32, -1),
    "reshape": lambda: fg.ones(4).reshape(B32, B32, -1),
    "unflatten": lambda: fg.ones(0).unflatten(0, (B32, B32, 0)),
    "as_strided": lambda: fg.ones(4).as_strided((B32, B32), (1, 1)),
    "as_strided_extent": lambda: fg.ones(4).as_strided((B32, 4), (1 << 40, 1)),
    "repeat": lambda: fg.ones(2, 2).repeat(B32, B32),
    "tile": lambda: fg.ones(2, 2).tile((B32, B32)),
    "cat": lambda: fg.cat([fg.ones(1).expand(1 << 62)] * 3),
    "matmul_batch": lambda: fg.matmul(fg.ones(1, 1, 2, 2).expand(B32, 1, 2, 2),
                                      fg.ones(1, 1, 2, 2).expand(1, B32, 2, 2)),
    "broadcast_add": lambda: fg.ones(1, 1).expand(B32 >> 1, 1) + fg.ones(1, 1).expand(1, B32),
    "zeros": lambda: fg.zeros(B32, B32),
    "full": lambda: fg.full((B32, B32), 1.0),
    "randn": lambda: fg.randn(B32, B32),
    "arange": lambda: fg.arange(0, 1 << 62),
    "clone_of_big_expand": lambda: fg.ones(1).expand(1 << 31, 1 << 31).clone(),
    "sum_of_big_expand": lambda: fg.ones(1).expand(1 << 62, 2).sum(),
}


@pytest.mark.parametrize("name", list(OVERFLOWING_SHAPES))
def test_shapes_whose_size_overflows_raise_runtime_error(name):
    with pytest.raises(RuntimeError, match="overflow|out of bounds|invalid|allocate|multiply up"):
        OVERFLOWING_SHAPES[name]()


def test_expand_to_an_overflowing_shape_raises_torchs_error():
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        fg.ones(1).expand(B32, B32)
    # The largest products that fit are views, as in torch.
    big = fg.ones(1).expand(1 << 31, 1 << 31)
    assert big.numel() == 1 << 62 and big.stride() == (0, 0)


@pytest.mark.parametrize("on_pool", [False, True])
@pytest.mark.parametrize("work", [1, 1 << 20])
def test_a_panic_in_a_kernel_reaches_python_as_runtime_error(on_pool, work):
    # Inline and on the thread pool, with the GIL held (small work) and
    # released (large work): an Exception, never pyo3's PanicException.
    with pytest.raises(RuntimeError, match="kernel panic forced for a test"):
        fg._core._panic_in_kernel(on_pool, work)
    # The pool still runs work afterwards.
    x = fg.ones(1 << 16)
    assert float((x * 2).sum()) == 2.0 * (1 << 16)
