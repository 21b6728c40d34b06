"""Property tests (hypothesis) of the tensor core against NumPy.

* Broadcasting: ``add``/``mul`` of random broadcast-compatible shapes equal
  NumPy's, on contiguous and strided operands; incompatible shapes raise
  RuntimeError naming both sizes.
* View arithmetic: chains of random view operations (permute, transpose,
  view/reshape to random factorisations, narrow, select, unsqueeze, squeeze,
  expand, diagonal, as_strided) give NumPy's values and shapes, NumPy's
  strides wherever NumPy also returns a view, NumPy's C-contiguity, and
  really alias the base: ``data_ptr`` and every reachable element lie in the
  base's buffer, and writes through the view land in the base.

Strides are compared on dims of size > 1 only: the stride of a size-1 dim
is never used to address memory, and NumPy and torch choose it differently.
"""

from __future__ import annotations

import math
import operator

import ferrograd as fg
import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from conftest import cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

DTYPES = [
    (fg.float32, np.float32),
    (fg.float64, np.float64),
    (fg.int64, np.int64),
    (fg.int32, np.int32),
    (fg.bool, np.bool_),
]


def values(rng: np.random.Generator, shape, ndt) -> np.ndarray:
    if ndt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(ndt, np.integer):
        return rng.integers(-100, 100, size=shape).astype(ndt)
    return rng.standard_normal(shape).astype(ndt)


def as_numpy(t) -> np.ndarray:
    """Values of a tensor through tolist (independent of its strides)."""
    dt = {fg.float32: np.float32, fg.float64: np.float64, fg.int64: np.int64,
          fg.int32: np.int32, fg.bool: np.bool_}[t.dtype]
    return np.array(t.tolist(), dtype=dt).reshape(tuple(t.shape))


# ---------------------------------------------------------- broadcasting


@pytest.mark.parametrize("op", ["add", "mul"])
@SETTINGS
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
    dtypes=st.sampled_from(DTYPES),
    layouts=st.tuples(st.integers(0, 3), st.integers(0, 3)),
    seed=st.integers(0, 2**32 - 1),
)
def test_broadcast_arithmetic_matches_numpy(op, shapes, dtypes, layouts, seed):
    if not hasattr(fg.Tensor, op):
        pytest.skip(f"Tensor.{op} is not bound in Python yet")
    fdt, ndt = dtypes
    rng = np.random.default_rng(seed)
    a_np, b_np = (values(rng, s, ndt) for s in shapes.input_shapes)
    # Any available layout (contiguous, transposed, sliced, expanded).
    a_cases, b_cases = cases(a_np), cases(b_np)
    _, a, a_np = a_cases[layouts[0] % len(a_cases)]
    _, b, b_np = b_cases[layouts[1] % len(b_cases)]
    got = getattr(a, op)(b)
    expected = {"add": np.add, "mul": np.multiply}[op](a_np, b_np)
    assert tuple(got.shape) == expected.shape == shapes.result_shape
    assert got.dtype == fdt
    np.testing.assert_allclose(as_numpy(got), expected, rtol=1e-6)


@st.composite
def incompatible_shapes(draw):
    a = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    dim = draw(st.integers(0, len(a) - 1))
    x = draw(st.integers(2, 6))
    y = draw(st.integers(2, 6).filter(lambda v: v != x))
    a = list(a)
    # b shares a's trailing dims from `dim` on (maybe fewer leading ones).
    lead = draw(st.integers(0, dim))
    b = list(a[lead:])
    a[dim], b[dim - lead] = x, y
    return tuple(a), tuple(b), x, y


@SETTINGS
@given(shapes=incompatible_shapes(), swap=st.booleans())
def test_incompatible_shapes_raise_runtime_error_naming_both_sizes(shapes, swap):
    a_shape, b_shape, x, y = shapes
    if swap:
        a_shape, b_shape, x, y = b_shape, a_shape, y, x
    with pytest.raises(ValueError):
        np.broadcast_shapes(a_shape, b_shape)  # the oracle agrees they clash
    a, b = fg.zeros(a_shape), fg.ones(b_shape)
    for op in (operator.add, fg.Tensor.add):
        with pytest.raises(RuntimeError) as err:
            op(a, b)
        assert f"({x})" in str(err.value) and f"({y})" in str(err.value)


# ---------------------------------------------------------- view algebra


def factorisation(draw, numel: int, shape_len_max: int = 4):
    """A random shape with product ``numel``, one entry maybe -1."""
    if numel == 0:
        dims = draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
        if 0 not in dims:
            dims[draw(st.integers(0, len(dims) - 1))] = 0
        return dims
    factors = []
    n = numel
    p = 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    factors = draw(st.permutations(factors))
    k = draw(st.integers(1, shape_len_max))
    dims = [1] * k
    for f in factors:
        dims[draw(st.integers(0, k - 1))] *= f
    if draw(st.booleans()):
        dims[draw(st.integers(0, k - 1))] = -1
    return dims


def sub(dim: int, ndim: int, item):
    """An index tuple applying ``item`` along ``dim``."""
    return (slice(None),) * dim + (item, Ellipsis)


def nocopy_reshape(a: np.ndarray, shape):
    """NumPy's reshape when it can be a view, else None."""
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        return None


@st.composite
def view_step(draw, t, a):
    """One random view op applied to tensor ``t`` and its NumPy twin ``a``.

    Returns ``(tensor, ndarray, is_numpy_view)``; when the op must fail it
    returns ``(thunk, None, expected_exception)`` instead.
    """
    nd = a.ndim
    kinds = ["permute", "view", "reshape", "unsqueeze", "squeeze", "expand"]
    if nd >= 1:
        kinds += ["transpose", "narrow", "select"]
    if nd >= 2:
        kinds += ["diagonal"]
    kind = draw(st.sampled_from(kinds))
    if kind == "permute":
        perm = draw(st.permutations(range(nd)))
        return t.permute(*perm), np.transpose(a, perm), True
    if kind == "transpose":
        d0, d1 = draw(st.integers(-nd, nd - 1)), draw(st.integers(-nd, nd - 1))
        return t.transpose(d0, d1), np.swapaxes(a, d0, d1), True
    if kind in ("view", "reshape"):
        target = factorisation(draw, a.size)
        nv = nocopy_reshape(a, target)
        if kind == "view":
            if nv is None:
                return (lambda: t.view(*target)), None, RuntimeError
            return t.view(*target), nv, True
        return t.reshape(target), np.reshape(a, target), nv is not None
    if kind == "narrow":
        dim = draw(st.integers(0, nd - 1))
        n = a.shape[dim]
        start = draw(st.integers(-n, n)) if n else 0
        s = start + n if start < 0 else start
        length = draw(st.integers(0, n - s))
        return t.narrow(dim, start, length), a[sub(dim, nd, slice(s, s + length))], True
    if kind == "select":
        dim = draw(st.integers(0, nd - 1))
        n = a.shape[dim]
        if n == 0:
            return (lambda: t.select(dim, 0)), None, IndexError
        index = draw(st.integers(-n, n - 1))
        return t.select(dim, index), a[sub(dim, nd, index)], True
    if kind == "unsqueeze":
        dim = draw(st.integers(-nd - 1, nd))
        return t.unsqueeze(dim), np.expand_dims(a, dim), True
    if kind == "squeeze":
        if nd == 0 or draw(st.booleans()):
            return t.squeeze(), np.squeeze(a), True
        dim = draw(st.integers(-nd, nd - 1))
        return t.squeeze(dim), (np.squeeze(a, axis=dim) if a.shape[dim] == 1 else a), True
    if kind == "expand":
        lead = draw(st.lists(st.integers(0, 3), max_size=2))
        sizes = [draw(st.integers(0, 3)) if n == 1 else draw(st.sampled_from([n, -1]))
                 for n in a.shape]
        target = [*lead, *sizes]
        np_target = [*lead, *(n if s == -1 else s for s, n in zip(sizes, a.shape, strict=True))]
        return t.expand(*target), np.broadcast_to(a, np_target), True
    # diagonal
    d1 = draw(st.integers(0, nd - 1))
    d2 = draw(st.integers(0, nd - 1).filter(lambda d: d != d1))
    offset = draw(st.integers(-3, 3))
    return t.diagonal(offset, d1, d2), np.diagonal(a, offset, d1, d2), True


def nested(shape, strides) -> bool:
    """Dims sorted by stride each step over the whole span of the smaller
    ones: the non-overlap rule ferrograd's in-place kernels check. (Layouts
    whose dims interleave, e.g. strides (3, 2) over shape (2, 3), can also be
    overlap-free; torch writes those, ferrograd refuses them for now.)"""
    span = 0
    for s, n in sorted((s, n) for s, n in zip(strides, shape, strict=True) if n != 1):
        if s <= span:
            return False
        span += s * (n - 1)
    return True


def check_alias(view, base, base_np: np.ndarray, expected_ids: np.ndarray):
    """``view`` addresses only ``base``'s buffer, and writes through it land
    on exactly the base elements whose ids (initial values) it shows."""
    if view.numel() == 0:
        return
    item = base.element_size()
    lo, hi = base.data_ptr(), base.data_ptr() + base.numel() * item
    first = view.data_ptr()
    last = first + item * sum((n - 1) * s for n, s in zip(view.shape, view.stride(), strict=True))
    assert lo <= first and last < hi
    ids = expected_ids.ravel()
    if len(np.unique(ids)) != ids.size:
        # Overlapping (e.g. expanded) views cannot be written.
        with pytest.raises(RuntimeError, match="more than one element"):
            view.add_(1)
        return
    if not nested(view.shape, view.stride()):
        return
    before = as_numpy(base).ravel().copy()
    view.add_(1000)
    want = before.copy()
    want[ids] += 1000
    np.testing.assert_array_equal(as_numpy(base).ravel(), want)
    view.add_(-1000)


def check_layout(t, a: np.ndarray, numpy_view: bool):
    assert tuple(t.shape) == a.shape
    np.testing.assert_array_equal(as_numpy(t), a)
    if a.size > 0 and numpy_view:
        item = a.itemsize
        for n, got, ns in zip(a.shape, t.stride(), a.strides, strict=True):
            if n > 1:
                assert got == ns // item, (t.stride(), a.strides, a.shape)
        assert t.is_contiguous() == a.flags.c_contiguous


@SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
    steps=st.integers(1, 3),
    data=st.data(),
)
def test_chained_views_match_numpy_and_alias_the_base(shape, steps, data):
    base_np = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    base = fg.tensor(base_np)
    t, a, all_views = base, base_np, True
    for _ in range(steps):
        nt, na, is_view = data.draw(view_step(t, a))
        if na is None:
            with pytest.raises(is_view):
                nt()
            return
        t, a = nt, na
        all_views = all_views and is_view
        check_layout(t, a, all_views)
    if all_views:
        check_alias(t, base, base_np, a)


@SETTINGS
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5),
    data=st.data(),
)
def test_view_refuses_exactly_when_numpy_must_copy(shape, data):
    base_np = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    t = fg.tensor(base_np)
    perm = data.draw(st.permutations(range(len(shape))))
    t, a = t.permute(*perm), np.transpose(base_np, perm)
    target = factorisation(data.draw, a.size)
    nv = nocopy_reshape(a, target)
    if nv is None:
        with pytest.raises(RuntimeError, match="view size is not compatible|reshape"):
            t.view(*target)
    else:
        check_layout(t.view(*target), nv, True)


@SETTINGS
@given(
    numel=st.integers(1, 40),
    ndim=st.integers(0, 3),
    data=st.data(),
)
def test_as_strided_within_bounds_matches_numpy(numel, ndim, data):
    base_np = np.arange(numel, dtype=np.int64)
    base = fg.tensor(base_np)
    offset = data.draw(st.integers(0, numel - 1))
    size = [data.draw(st.integers(0, 4)) for _ in range(ndim)]
    stride = [data.draw(st.integers(0, 6)) for _ in range(ndim)]
    reach = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True) if n > 0)
    if 0 not in size and reach >= numel:
        with pytest.raises(RuntimeError, match="out of bounds"):
            base.as_strided(size, stride, offset)
        return
    t = base.as_strided(size, stride, offset)
    a = np.lib.stride_tricks.as_strided(
        base_np[offset:], shape=size, strides=[s * 8 for s in stride], writeable=False
    )
    assert tuple(t.stride()) == tuple(stride) and t.storage_offset() == offset
    check_layout(t, a, True)
    check_alias(t, base, base_np, a)
