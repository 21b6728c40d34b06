"""Copying shape ops (cat, stack, flip, roll, repeat, tril/triu, diag...) against NumPy."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from conftest import cases
from conftest import check_against_numpy as check

DTYPES = [np.float32, np.float64, np.int64]


def sample(shape, dtype, rng):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


# ---------------------------------------------------------------- cat / stack


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_matches_numpy_on_every_layout(dtype, dim, rng):
    a = sample((3, 4), dtype, rng)
    other_shape = (2, 4) if dim == 0 else (3, 2)
    b = sample(other_shape, dtype, rng)
    for label, t, x in cases(a):
        for _, u, y in cases(b):
            out = fg.cat([t, u, t], dim)
            check(out, np.concatenate([x, y, x], axis=dim)), label


def test_cat_promotes_dtypes_like_torch():
    i64 = fg.tensor([[1, 2]])
    f32 = fg.tensor([[0.5, 1.5]])
    i32 = fg.tensor([[3, 4]], dtype=fg.int32)
    b = fg.tensor([[True, False]])
    assert fg.cat([i64, f32]).dtype == fg.float32
    assert fg.cat([i32, i64]).dtype == fg.int64
    assert fg.cat([b, i32]).dtype == fg.int32
    assert fg.cat([b, b]).dtype == fg.bool
    f64 = fg.tensor([[1.0]], dtype=fg.float64)
    out = fg.cat([f32, f64], dim=1)
    assert out.dtype == fg.float64
    check(out, np.array([[0.5, 1.5, 1.0]]))


def test_cat_skips_legacy_empty_1d_tensors_but_promotes_with_them():
    t = fg.tensor([[1, 2], [3, 4]])
    empty = fg.tensor([])  # shape (0,), float32
    out = fg.cat([empty, t, empty], dim=1)
    assert out.shape == (2, 2) and out.dtype == fg.float32
    check(out, np.array([[1, 2], [3, 4]], dtype=np.float32))
    only = fg.cat([empty, empty])
    assert only.shape == (0,)


def test_cat_aliases_and_results_are_fresh():
    t = fg.tensor([1.0, 2.0])
    for f in (fg.cat, fg.concat, fg.concatenate):
        out = f((t, t))
        check(out, np.array([1, 2, 1, 2], dtype=np.float32))
        assert out._base is None and out._version == 0
    out[0] = 9
    assert t.tolist() == [1.0, 2.0]


def test_cat_errors():
    a, b = fg.zeros(2, 3), fg.zeros(2, 4)
    with pytest.raises(RuntimeError, match="Expected size 3 but got size 4 for tensor number 1"):
        fg.cat([a, b], 0)
    with pytest.raises(RuntimeError, match="same number of dimensions: got 2 and 1"):
        fg.cat([a, fg.zeros(3)])
    with pytest.raises(RuntimeError, match="zero-dimensional tensor \\(at position 1\\)"):
        fg.cat([a, fg.tensor(1.0)])
    with pytest.raises(RuntimeError, match="non-empty"):
        fg.cat([])
    with pytest.raises(IndexError, match="Dimension out of range"):
        fg.cat([a, a], 2)
    with pytest.raises(TypeError):
        fg.cat([a, 1])
    with pytest.raises(TypeError):
        fg.cat(a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack_matches_numpy(dtype, dim, rng):
    a = sample((2, 3), dtype, rng)
    b = sample((2, 3), dtype, rng)
    for label, t, x in cases(a):
        out = fg.stack([t, fg.tensor(b)], dim=dim)
        check(out, np.stack([x, b], axis=dim)), label


def test_stack_errors():
    msg = r"equal size, but got \[2, 3\] at entry 0 and \[3\] at entry 1"
    with pytest.raises(RuntimeError, match=msg):
        fg.stack([fg.zeros(2, 3), fg.zeros(3)])
    with pytest.raises(RuntimeError, match="non-empty"):
        fg.stack([])
    with pytest.raises(IndexError):
        fg.stack([fg.zeros(2), fg.zeros(2)], dim=3)


def test_hstack_vstack_dstack_match_numpy(rng):
    v = rng.standard_normal(3).astype(np.float32)
    m = rng.standard_normal((2, 3)).astype(np.float32)
    check(fg.hstack([fg.tensor(v), fg.tensor(v)]), np.hstack([v, v]))
    check(fg.hstack([fg.tensor(m), fg.tensor(m)]), np.hstack([m, m]))
    check(fg.vstack([fg.tensor(v), fg.tensor(m)]), np.vstack([v, m]))
    check(fg.dstack([fg.tensor(m), fg.tensor(m)]), np.dstack([m, m]))
    check(fg.dstack([fg.tensor(v), fg.tensor(v)]), np.dstack([v, v]))


# ---------------------------------------------------------------- flip / roll


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dims", [(0,), (1,), (2,), (0, 2), (-1, 0, 1), ()])
def test_flip_matches_numpy(dtype, dims, rng):
    a = sample((2, 3, 4), dtype, rng)
    for label, t, x in cases(a):
        check(t.flip(dims), np.flip(x, dims) if dims else x), label
        check(fg.flip(t, dims), np.flip(x, dims) if dims else x), label


def test_flip_varargs_bool_and_errors():
    t = fg.tensor([[True, False, False], [False, True, True]])
    assert t.flip(0, 1).tolist() == [[True, True, False], [False, False, True]]
    assert t.flip(dims=[1]).tolist() == [[False, False, True], [True, True, False]]
    with pytest.raises(RuntimeError, match="appears multiple times"):
        t.flip(0, -2)
    with pytest.raises(IndexError):
        t.flip(2)


def test_fliplr_flipud_match_numpy(rng):
    a = rng.standard_normal((3, 4)).astype(np.float64)
    for _, t, x in cases(a):
        check(fg.fliplr(t), np.fliplr(x))
        check(fg.flipud(t), np.flipud(x))
    with pytest.raises(RuntimeError):
        fg.tensor([1.0]).fliplr()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shifts,dims",
    [(1, 0), (-1, 1), (7, 1), (-9, 0), ((1, 2), (0, 1)), ((2, -1), (1, 1)), (3, None), (-5, None)],
)
def test_roll_matches_numpy(dtype, shifts, dims, rng):
    a = sample((3, 4), dtype, rng)
    for label, t, x in cases(a):
        out = fg.roll(t, shifts, dims) if dims is not None else t.roll(shifts)
        check(out, np.roll(x, shifts, axis=dims)), label


def test_roll_errors_and_empty():
    t = fg.zeros(2, 3)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        t.roll((1, 2), 0)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        t.roll((1, 2))
    assert fg.zeros(0, 3).roll(1, 0).shape == (0, 3)


# ---------------------------------------------------------------- repeat / tile


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reps", [(1, 1), (2, 3), (2, 1, 2), (3, 1, 1, 2), (0, 2)])
def test_repeat_is_numpy_tile_for_torch_repeat(dtype, reps, rng):
    a = sample((2, 3), dtype, rng)
    for label, t, x in cases(a):
        check(t.repeat(*reps), np.tile(x, reps)), label
        check(t.repeat(reps), np.tile(x, reps)), label


def test_repeat_errors():
    with pytest.raises(RuntimeError, match="can not be smaller"):
        fg.zeros(2, 3).repeat(2)
    with pytest.raises(RuntimeError, match="negative"):
        fg.zeros(2, 3).repeat(2, -1)
    with pytest.raises(RuntimeError, match="overflows"):
        fg.zeros(2, 3).repeat(2**62, 2**62)


@pytest.mark.parametrize("reps", [(2,), (2, 2), (1, 2, 3)])
def test_tile_matches_numpy(reps, rng):
    a = rng.integers(0, 9, (2, 3))
    for _, t, x in cases(a):
        check(fg.tile(t, reps), np.tile(x, reps))
        check(t.tile(*reps), np.tile(x, reps))


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_interleave_matches_numpy_repeat(dtype, rng):
    a = sample((2, 3), dtype, rng)
    for _, t, x in cases(a):
        check(t.repeat_interleave(2), np.repeat(x, 2))
        check(t.repeat_interleave(2, dim=1), np.repeat(x, 2, axis=1))
        reps = np.array([1, 0, 3])
        check(fg.repeat_interleave(t, fg.tensor(reps), dim=1), np.repeat(x, reps, axis=1))
        check(t.repeat_interleave(fg.tensor([2, 1]), dim=0), np.repeat(x, [2, 1], axis=0))
    check(fg.repeat_interleave(fg.tensor([2, 0, 1])), np.repeat(np.arange(3), [2, 0, 1]))
    with pytest.raises(RuntimeError, match="same size as input"):
        fg.tensor([1, 2]).repeat_interleave(fg.tensor([1, 2, 3]))
    with pytest.raises(RuntimeError, match="negative"):
        fg.tensor([1, 2]).repeat_interleave(fg.tensor([1, -1]))


# ---------------------------------------------------------------- tril / triu / diag


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_tril_triu_match_numpy_batched(dtype, k, rng):
    a = sample((2, 3, 4), dtype, rng)
    for label, t, x in cases(a):
        check(fg.tril(t, k), np.tril(x, k)), label
        check(t.triu(diagonal=k), np.triu(x, k)), label


def test_tril_triu_in_place_bump_version_and_return_self(rng):
    a = rng.standard_normal((3, 3)).astype(np.float32)
    t = fg.tensor(a)
    v = t._version
    assert t.tril_(-1) is t
    assert t._version > v
    check(t, np.tril(a, -1))
    base = fg.tensor(a)
    view = base.t()
    view.triu_()
    check(base, np.triu(a.T).T)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fg.tensor([1.0, 2.0]).tril()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [-2, 0, 1, 4])
def test_diag_matches_numpy(dtype, k, rng):
    v = sample((3,), dtype, rng)
    m = sample((3, 4), dtype, rng)
    for _, t, x in cases(v):
        check(fg.diag(t, k), np.diag(x, k))
    for _, t, x in cases(m):
        out = t.diag(k)
        check(out, np.diag(x, k))
        assert out._base is None
    with pytest.raises(RuntimeError, match="1D or 2D"):
        fg.zeros(2, 2, 2).diag()
    with pytest.raises(RuntimeError, match="too large"):
        fg.zeros(2).diag(2**62)


def diag_embed_oracle(x, offset, dim1, dim2):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
    for idx in np.ndindex(*x.shape[:-1]):
        out[idx] = np.diag(x[idx], offset)
    nd = x.ndim + 1
    return np.moveaxis(out, [nd - 2, nd - 1], [dim1 % nd, dim2 % nd])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "offset,dim1,dim2", [(0, -2, -1), (1, -2, -1), (-1, 0, 2), (2, 2, 0), (0, 1, 0)]
)
def test_diag_embed_matches_oracle(dtype, offset, dim1, dim2, rng):
    a = sample((2, 3), dtype, rng)
    for label, t, x in cases(a):
        out = fg.diag_embed(t, offset, dim1, dim2)
        check(out, diag_embed_oracle(x, offset, dim1, dim2)), label
    with pytest.raises(RuntimeError, match="cannot be identical"):
        fg.zeros(2, 3).diag_embed(0, 1, 1)


def test_large_inputs_take_the_parallel_paths_and_match_numpy(rng):
    x = rng.standard_normal((300, 400)).astype(np.float64)
    for _, t, a in cases(x)[:3]:
        check(fg.cat([t, t], 1), np.concatenate([a, a], 1))
        check(t.flip(0, 1), np.flip(a, (0, 1)))
        check(t.roll((7, -3), (0, 1)), np.roll(a, (7, -3), (0, 1)))
        check(t.repeat(2, 1), np.tile(a, (2, 1)))
        check(t.tril(5), np.tril(a, 5))
