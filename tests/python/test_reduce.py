"""Reductions and scans checked against NumPy (float64 oracles), on every
layout of ``cases()``, with torch's dtype rules, named tuples, ties, NaN,
empty tensors, errors and thread-count determinism."""

from __future__ import annotations

import math
import pickle

import ferrograd as fg
import numpy as np
import pytest
from conftest import FLOAT_DTYPES, assert_close, cases, to_np
from ferrograd import linalg_norms, return_types

DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2), ()]


def np_axis(dim):
    """NumPy's axis for a torch dim (an empty tuple means all dims)."""
    if dim == ():
        return None
    return dim


def rand(rng, shape, np_dtype):
    return rng.standard_normal(shape).astype(np_dtype)


def tol(np_dtype):
    if np_dtype == np.float32:
        return {"rtol": 1e-5, "atol": 1e-5}
    return {"rtol": 1e-10, "atol": 1e-12}


def oracle(fn, a, axis, keepdim):
    """``fn`` evaluated in float64, cast back to ``a``'s dtype."""
    return np.asarray(fn(a.astype(np.float64), axis=axis, keepdims=keepdim)).astype(a.dtype)


# ---------------------------------------------------------------- values vs NumPy


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
@pytest.mark.parametrize(
    "name,np_fn",
    [
        ("sum", np.sum),
        ("mean", np.mean),
        ("prod", np.prod),
        ("amax", np.max),
        ("amin", np.min),
        ("all", np.all),
        ("any", np.any),
    ],
)
def test_dim_reductions_match_numpy_on_every_layout(rng, fg_dt, np_dt, name, np_fn):
    a = rand(rng, (3, 4, 5), np_dt)
    if name == "prod":
        a = (1.0 + 0.3 * a).astype(np_dt)
    if name in ("all", "any"):
        a = np.where(np.abs(a) < 0.7, 0, a).astype(np_dt)
    for label, t, arr in cases(a):
        for dim in DIMS:
            for keepdim in (False, True):
                got = getattr(t, name)(dim, keepdim)
                if name in ("all", "any"):
                    want = np_fn(arr, axis=np_axis(dim), keepdims=keepdim)
                    assert_close(got, np.asarray(want))
                else:
                    want = oracle(np_fn, arr, np_axis(dim), keepdim)
                    assert got.dtype == fg_dt, (label, dim)
                    assert_close(got, want, **tol(np_dt))


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_var_std_match_numpy_with_corrections(rng, fg_dt, np_dt):
    a = rand(rng, (3, 4, 5), np_dt)
    for _label, t, arr in cases(a):
        for dim in [None, 1, -1, (0, 2)]:
            for keepdim in (False, True):
                for corr in (0, 1, 2):
                    ax = np_axis(dim)
                    want_v = np.var(arr.astype(np.float64), axis=ax, ddof=corr, keepdims=keepdim)
                    assert_close(t.var(dim, keepdim=keepdim, correction=corr),
                                 want_v.astype(np_dt), **tol(np_dt))
                    assert_close(t.std(dim, keepdim=keepdim, correction=corr),
                                 np.sqrt(want_v).astype(np_dt), **tol(np_dt))
        # unbiased= spelling and the positional `var(True)` form
        want = np.var(arr.astype(np.float64), ddof=0).astype(np_dt)
        assert_close(t.var(unbiased=False), want, **tol(np_dt))
        assert_close(t.var(False), want, **tol(np_dt))
        assert_close(t.std(1, True), np.std(arr.astype(np.float64), axis=1, ddof=1).astype(np_dt),
                     **tol(np_dt))


def test_var_correction_larger_than_count_gives_inf_or_nan():
    t = fg.tensor([1.0, 2.0, 4.0])
    assert math.isinf(t.var(correction=3).item())
    assert math.isinf(t.var(correction=5).item())
    assert math.isnan(fg.tensor([2.0, 2.0]).var(correction=2).item())
    assert math.isnan(fg.tensor([5.0]).var().item())
    assert fg.tensor([5.0]).var(unbiased=False).item() == 0.0


def test_var_mean_and_std_mean_return_plain_tuples(rng):
    a = rand(rng, (4, 6), np.float64)
    v, m = fg.var_mean(fg.tensor(a), 1)
    assert_close(v, np.var(a, axis=1, ddof=1))
    assert_close(m, np.mean(a, axis=1))
    s, m = fg.std_mean(fg.tensor(a), dim=0, keepdim=True, correction=0)
    assert_close(s, np.std(a, axis=0, keepdims=True))
    assert_close(m, np.mean(a, axis=0, keepdims=True))


PAIRS = (("max", np.max, np.argmax), ("min", np.min, np.argmin))


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_max_min_with_dim_return_values_and_int64_indices(rng, fg_dt, np_dt):
    a = rand(rng, (3, 4, 5), np_dt)
    for _label, t, arr in cases(a):
        for dim in (0, 1, 2, -1):
            for keepdim in (False, True):
                for name, np_val, np_arg in PAIRS:
                    res = getattr(t, name)(dim, keepdim)
                    assert isinstance(res, getattr(return_types, name))
                    values, indices = res
                    assert indices.dtype == fg.int64 and values.dtype == fg_dt
                    assert_close(values, np_val(arr, axis=dim, keepdims=keepdim))
                    want_i = np_arg(arr, axis=dim)
                    if keepdim:
                        want_i = np.expand_dims(want_i, dim)
                    assert_close(indices, want_i.astype(np.int64))
                    assert res.values is res[0] and res.indices is res[1]


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_argmax_argmin_match_numpy(rng, fg_dt, np_dt):
    a = rand(rng, (3, 4, 5), np_dt)
    for _label, t, arr in cases(a):
        assert_close(t.argmax(), np.array(np.argmax(arr), dtype=np.int64))
        assert_close(t.argmin(), np.array(np.argmin(arr), dtype=np.int64))
        for dim in (0, 1, -1):
            assert_close(t.argmax(dim), np.argmax(arr, axis=dim).astype(np.int64))
            assert_close(t.argmin(dim=dim, keepdim=True),
                         np.expand_dims(np.argmin(arr, axis=dim), dim).astype(np.int64))
    t = fg.tensor(a)
    assert t.argmax(keepdim=True).shape == (1, 1, 1)


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_full_max_min_are_zero_dim(rng, fg_dt, np_dt):
    a = rand(rng, (6, 7), np_dt)
    for _label, t, arr in cases(a):
        mx, mn = t.max(), t.min()
        assert mx.shape == () and mx.dtype == fg_dt
        assert mx.item() == arr.max() and mn.item() == arr.min()


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_aminmax(rng, fg_dt, np_dt):
    a = rand(rng, (4, 5), np_dt)
    for _label, t, arr in cases(a):
        lo, hi = t.aminmax()
        assert lo.item() == arr.min() and hi.item() == arr.max()
        r = fg.aminmax(t, dim=1, keepdim=True)
        assert isinstance(r, return_types.aminmax)
        assert_close(r.min, arr.min(axis=1, keepdims=True))
        assert_close(r.max, arr.max(axis=1, keepdims=True))


def np_vector_norm(a, p, axis, keepdims):
    a = np.abs(a.astype(np.float64))
    if p == math.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    if p == -math.inf:
        return np.min(a, axis=axis, keepdims=keepdims)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(np.float64)
    return np.sum(a**p, axis=axis, keepdims=keepdims) ** (1.0 / p)


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
@pytest.mark.parametrize("p", [2, 1, 3, 0.5, math.inf, -math.inf, 0, -1.5])
def test_norm_matches_numpy(rng, fg_dt, np_dt, p):
    a = rand(rng, (3, 4, 5), np_dt)
    for _label, t, arr in cases(a):
        for dim in (None, 1, (0, 2), -1):
            for keepdim in (False, True):
                want = np_vector_norm(arr, p, np_axis(dim), keepdim).astype(np_dt)
                got = t.norm(p, dim, keepdim)
                assert got.dtype == fg_dt
                assert_close(got, want, **tol(np_dt))
                assert_close(linalg_norms.vector_norm(t, p, dim, keepdim), want, **tol(np_dt))


def test_norm_defaults_and_fro(rng):
    a = rand(rng, (4, 5), np.float64)
    t = fg.tensor(a)
    assert_close(t.norm(), np.linalg.norm(a))
    assert_close(t.norm("fro"), np.linalg.norm(a))
    assert_close(t.norm("fro", dim=1), np.linalg.norm(a, axis=1))
    assert_close(t.norm("nuc"), np.linalg.norm(a, "nuc"))
    assert_close(fg.norm(t, 2, 0, True), np.linalg.norm(a, axis=0, keepdims=True))
    assert t.norm(dtype=fg.float32).dtype == fg.float32


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_logsumexp_matches_stable_numpy(rng, fg_dt, np_dt):
    a = (5 * rand(rng, (3, 4, 5), np_dt)).astype(np_dt)

    def np_lse(x, axis, keepdims):
        x = x.astype(np.float64)
        m = np.max(x, axis=axis, keepdims=True)
        s = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
        return s if keepdims else np.squeeze(s, axis=axis)

    for _label, t, arr in cases(a):
        for dim in (0, -1, (0, 2), (0, 1, 2)):
            for keepdim in (False, True):
                assert_close(t.logsumexp(dim, keepdim), np_lse(arr, dim, keepdim).astype(np_dt),
                             **tol(np_dt))


def test_logsumexp_is_stable_and_handles_infinities():
    t = fg.tensor([1000.0, 1000.0])
    assert t.logsumexp(0).item() == pytest.approx(1000.0 + math.log(2.0))
    t = fg.tensor([-1000.0, -1000.0])
    assert t.logsumexp(0).item() == pytest.approx(-1000.0 + math.log(2.0))
    assert fg.tensor([-math.inf, -math.inf]).logsumexp(0).item() == -math.inf
    assert fg.tensor([math.inf, 1.0]).logsumexp(0).item() == math.inf
    assert math.isnan(fg.tensor([math.nan, 1.0]).logsumexp(0).item())
    assert fg.zeros(0).logsumexp(0).item() == -math.inf
    r = fg.tensor([1, 2, 3]).logsumexp(0)
    assert r.dtype == fg.float32
    assert r.item() == pytest.approx(math.log(math.e + math.e**2 + math.e**3), rel=1e-6)


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_softmax_and_log_softmax_match_numpy(rng, fg_dt, np_dt):
    a = (4 * rand(rng, (3, 4, 5), np_dt)).astype(np_dt)
    for _label, t, arr in cases(a):
        x = arr.astype(np.float64)
        for dim in (0, 1, -1):
            m = x.max(axis=dim, keepdims=True)
            e = np.exp(x - m)
            s = e.sum(axis=dim, keepdims=True)
            assert_close(t.softmax(dim), (e / s).astype(np_dt), **tol(np_dt))
            assert_close(fg.log_softmax(t, dim), (x - m - np.log(s)).astype(np_dt), **tol(np_dt))


def test_softmax_is_stable_and_honours_dtype():
    t = fg.tensor([1000.0, 1001.0, 999.0])
    p = t.softmax(0)
    e = np.exp(np.array([-1.0, 0.0, -2.0]))
    assert_close(p, (e / e.sum()).astype(np.float32))
    shifted = np.array([-1.0, 0.0, -2.0])
    assert_close(t.log_softmax(0), (shifted - np.log(e.sum())).astype(np.float32))
    r = fg.tensor([1, 2, 3]).softmax(0, dtype=fg.float64)
    assert r.dtype == fg.float64
    assert r.sum().item() == pytest.approx(1.0)
    r = fg.softmax(fg.tensor([[1.0, 2.0]], dtype=fg.float32), 1, dtype=fg.float64)
    assert r.dtype == fg.float64


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
def test_cumsum_cumprod_match_numpy(rng, fg_dt, np_dt):
    a = rand(rng, (3, 4, 5), np_dt)
    for _label, t, arr in cases(a):
        for dim in (0, 1, 2, -1):
            assert_close(t.cumsum(dim), np.cumsum(arr.astype(np.float64), axis=dim).astype(np_dt),
                         **tol(np_dt))
            b = (1.0 + 0.2 * arr).astype(np_dt)
            assert_close(fg.cumprod(fg.tensor(b), dim),
                         np.cumprod(b.astype(np.float64), axis=dim).astype(np_dt), **tol(np_dt))
        assert_close(fg.cumprod(t, 1), np.cumprod(arr.astype(np.float64), axis=1).astype(np_dt),
                     **tol(np_dt))


@pytest.mark.parametrize("rows,n", [(1, 9), (7, 33), (8, 16), (13, 40), (256, 1024), (1000, 3)])
def test_cumsum_along_the_last_dim_of_many_lines_is_the_float64_running_sum(rng, rows, n):
    # Lines scanned side by side (and staggered) must each keep their own
    # order: the float64 running sum, rounded once, bit for bit.
    for _, np_dt in FLOAT_DTYPES:
        a = rand(rng, (rows, n), np_dt)
        want = np.cumsum(a.astype(np.float64), axis=-1).astype(np_dt)
        np.testing.assert_array_equal(fg.tensor(a).cumsum(-1).numpy(), want)
        b = (1.0 + 0.01 * a).astype(np_dt)
        want = np.cumprod(b.astype(np.float64), axis=-1).astype(np_dt)
        np.testing.assert_array_equal(fg.tensor(b).cumprod(-1).numpy(), want)


def test_count_nonzero_matches_numpy(rng):
    a = rng.integers(-2, 3, size=(3, 4, 5))
    for _label, t, arr in cases(a):
        for dim in (None, 0, (1, 2), -1):
            got = t.count_nonzero(dim)
            assert got.dtype == fg.int64
            assert_close(got, np.asarray(np.count_nonzero(arr, axis=np_axis(dim))).astype(np.int64))


# ---------------------------------------------------------------- the code paths of the driver


@pytest.mark.parametrize("threads", [1, 2])
def test_large_reductions_take_every_path_and_match_numpy(rng, threads):
    old = fg.get_num_threads()
    fg.set_num_threads(threads)
    try:
        a = rand(rng, (300, 257), np.float32)
        a64 = a.astype(np.float64)
        t = fg.tensor(a)
        # rows (inner contiguous), tiles (outer dim), strided rows (transposed)
        assert_close(t.sum(1), a64.sum(1).astype(np.float32))
        assert_close(t.sum(0), a64.sum(0).astype(np.float32))
        assert_close(t.t().sum(0), a64.sum(1).astype(np.float32))
        assert_close(t.t().sum(1), a64.sum(0).astype(np.float32))
        assert_close(t.amax(0), a.max(0))
        v, i = t.max(0)
        assert_close(i, a.argmax(0).astype(np.int64))
        v, i = t.t().min(1)
        assert_close(i, a.argmin(0).astype(np.int64))
        # several reduced dims that do not coalesce: tiles and the copy path
        b = rand(rng, (20, 30, 40), np.float64)
        tb = fg.tensor(b)
        assert_close(tb.sum((0, 1)), b.sum((0, 1)))
        assert_close(tb.sum((0, 2)), b.sum((0, 2)))
        assert_close(tb.permute(2, 0, 1).sum((0, 2)), b.transpose(2, 0, 1).sum((0, 2)))
        assert_close(tb.permute(1, 2, 0).mean((0, 2)), b.transpose(1, 2, 0).mean((0, 2)))
        # few long rows: chunks split over threads
        c = rand(rng, (2, 100_000), np.float32)
        assert_close(fg.tensor(c).sum(1), c.astype(np.float64).sum(1).astype(np.float32))
        assert fg.tensor(c).argmax(1).tolist() == list(c.argmax(1))
        # scans along inner and outer dims (large enough to be split)
        d = rand(rng, (50, 40, 30), np.float64)
        td = fg.tensor(d)
        assert_close(td.cumsum(0), np.cumsum(d, 0))
        assert_close(td.cumsum(2), np.cumsum(d, 2))
        assert_close(td.permute(2, 1, 0).cumsum(1), np.cumsum(d.transpose(2, 1, 0), 1))
        # row-wise softmax split over threads
        e = np.exp(d - d.max(2, keepdims=True))
        assert_close(td.softmax(2), e / e.sum(2, keepdims=True))
    finally:
        fg.set_num_threads(old)


def test_float32_sum_of_a_million_is_accurate(rng):
    for a in (rng.random(1_000_000).astype(np.float32),
              rng.standard_normal(1_000_000).astype(np.float32) + 0.25):
        want = a.astype(np.float64).sum()
        got = fg.tensor(a).sum().item()
        assert abs(got - want) <= 1e-5 * abs(want)
        assert fg.tensor(a).mean().item() == pytest.approx(want / a.size, rel=1e-5)


def test_sum_is_bitwise_identical_for_any_thread_count(rng):
    a = rng.standard_normal(1_000_000).astype(np.float32)
    m = rng.standard_normal((1000, 500)).astype(np.float32)
    old = fg.get_num_threads()
    results = []
    try:
        for n in (1, 2, 3):
            fg.set_num_threads(n)
            t, tm = fg.tensor(a), fg.tensor(m)
            results.append((t.sum().numpy().tobytes(), tm.sum(0).numpy().tobytes(),
                            tm.sum(1).numpy().tobytes(), t.norm().numpy().tobytes()))
    finally:
        fg.set_num_threads(old)
    assert results[0] == results[1] == results[2]


# ---------------------------------------------------------------- dtype rules


@pytest.mark.parametrize("dt", [fg.int32, fg.int64, fg.bool])
def test_integer_and_bool_sums_and_products_widen_to_int64(dt):
    t = fg.tensor([[1, 0, 3], [4, 5, 1]], dtype=dt)
    a = np.array([[1, 0, 3], [4, 5, 1]]).astype(bool if dt == fg.bool else np.int64)
    assert t.sum().dtype == fg.int64 and t.sum().item() == int(a.sum())
    assert_close(t.sum(0), a.sum(0).astype(np.int64))
    assert t.prod().dtype == fg.int64 and t.prod(1).tolist() == a.astype(np.int64).prod(1).tolist()
    assert t.cumsum(1).dtype == fg.int64
    assert t.cumsum(1).tolist() == np.cumsum(a.astype(np.int64), 1).tolist()
    assert t.cumprod(0).tolist() == np.cumprod(a.astype(np.int64), 0).tolist()
    assert t.amax().dtype == dt and t.amax(0).dtype == dt


def test_dtype_argument_of_sum_prod_mean_cumsum():
    t = fg.tensor([1, 2, 3], dtype=fg.int32)
    assert t.sum(dtype=fg.int32).dtype == fg.int32
    assert t.sum(dtype=fg.float64).dtype == fg.float64 and t.sum(dtype=fg.float64).item() == 6.0
    assert fg.tensor([1.7, 2.9]).sum(dtype=fg.int64).item() == 3  # truncated before summing
    assert t.prod(dtype=fg.float32).dtype == fg.float32
    assert t.mean(dtype=fg.float64).item() == 2.0
    assert fg.tensor([1.0, 2.0]).mean(dtype=fg.float64).dtype == fg.float64
    assert t.cumsum(0, dtype=fg.float32).dtype == fg.float32
    assert fg.tensor([True, True]).cumsum(0).tolist() == [1, 2]


def test_integer_sum_wraps_like_int64():
    t = fg.tensor([2**62, 2**62, 2**62])
    assert t.sum().item() == -(2**63) + 2**62


def test_mean_of_integers_is_runtime_error_like_torch():
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input dtype "
                       r"must be either a floating point or complex dtype. Got: Long"):
        fg.tensor([1, 2]).mean()
    with pytest.raises(RuntimeError, match="Got: Bool"):
        fg.tensor([True]).mean()
    with pytest.raises(RuntimeError, match="Optional dtype must be"):
        fg.tensor([1.0]).mean(dtype=fg.int64)


@pytest.mark.parametrize("op", [lambda t: t.var(), lambda t: t.std(0), lambda t: t.norm(),
                                lambda t: t.softmax(0), lambda t: t.log_softmax(0),
                                lambda t: linalg_norms.vector_norm(t),
                                lambda t: linalg_norms.matrix_norm(t.reshape(1, 2))])
def test_float_only_ops_reject_integer_tensors(op):
    with pytest.raises(RuntimeError):
        op(fg.tensor([1, 2]))


def test_argmax_of_bool_is_runtime_error_but_max_works():
    t = fg.tensor([False, True, True])
    with pytest.raises(RuntimeError):
        t.argmax()
    v, i = t.max(0)
    assert v.item() is True and i.item() == 1
    assert t.any().dtype == fg.bool and t.all().item() is False


def test_all_any_results_are_bool_for_every_dtype():
    for dt in (fg.float32, fg.float64, fg.int32, fg.int64, fg.bool):
        t = fg.tensor([[1, 0], [1, 1]], dtype=dt)
        assert t.all().dtype == fg.bool and t.all().item() is False
        assert t.all(1).tolist() == [False, True]
        assert t.any(0, keepdim=True).tolist() == [[True, True]]
    assert fg.tensor([math.nan]).all().item() is True


# ---------------------------------------------------------------- ties and NaN


def test_ties_pick_the_first_index():
    t = fg.tensor([1.0, 3.0, 3.0, 2.0, 3.0])
    assert t.argmax().item() == 1 and t.max(0).indices.item() == 1
    t = fg.tensor([2, 0, 5, 0, 0])
    assert t.argmin().item() == 1 and t.min(0).indices.item() == 1
    m = fg.tensor([[7, 7, 1], [0, 4, 4], [2, 2, 2]])
    assert m.argmax(1).tolist() == [0, 1, 0]
    assert m.max(0).indices.tolist() == [0, 0, 1]
    # ties across chunk boundaries of a long row
    big = np.zeros(70_000, dtype=np.float32)
    big[[5_000, 20_000, 69_000]] = 1.0
    assert fg.tensor(big).argmax().item() == 5_000
    assert fg.tensor(-big).argmin().item() == 5_000


def test_rows_equal_to_the_identity_report_the_first_index():
    inf = math.inf
    t = fg.tensor([-inf, -inf, -inf])
    assert t.argmax().item() == 0
    v, i = t.max(0)
    assert v.item() == -inf and i.item() == 0
    assert fg.tensor([inf, inf]).argmin().item() == 0
    assert fg.tensor([-(2**63), -(2**63)]).argmax().item() == 0
    assert fg.tensor([2**63 - 1] * 3).min(0).indices.item() == 0
    m = np.full((3, 16), -np.inf, dtype=np.float32)
    m[2, 5] = 1.0
    assert fg.tensor(m).argmax(0).tolist() == [0] * 5 + [2] + [0] * 10


def test_nan_propagates_through_max_min_and_argmax():
    nan = math.nan
    t = fg.tensor([1.0, nan, 5.0, nan])
    assert math.isnan(t.max().item()) and math.isnan(t.min().item())
    assert math.isnan(t.amax().item()) and math.isnan(t.amin(0).item())
    assert t.argmax().item() == 1 and t.argmin().item() == 1
    v, i = t.max(0)
    assert math.isnan(v.item()) and i.item() == 1
    m = fg.tensor([[1.0, 2.0], [nan, 0.0]])
    assert m.argmax(0).tolist() == [1, 0]
    assert m.argmin(1).tolist() == [0, 0]
    assert math.isnan(m.sum().item()) and math.isnan(m.norm(math.inf).item())
    big = np.ones(100_000, dtype=np.float32)
    big[77_777] = np.nan
    assert fg.tensor(big).argmax().item() == 77_777
    assert math.isnan(fg.tensor(big).amax().item())


def test_binary_max_min_are_elementwise_with_broadcasting_and_promotion(rng):
    a = rand(rng, (3, 4), np.float32)
    b = rand(rng, (4,), np.float32)
    for _label, t, arr in cases(a):
        assert_close(t.max(fg.tensor(b)), np.maximum(arr, b))
        assert_close(fg.min(t, fg.tensor(b)), np.minimum(arr, b))
    r = fg.max(fg.tensor([1, 5]), fg.tensor([2.5, 0.5]))
    assert r.dtype == fg.float32 and r.tolist() == [2.5, 5.0]
    r = fg.tensor([1.0, math.nan, 2.0]).max(fg.tensor([math.nan, 0.0, 1.0]))
    assert np.isnan(to_np(r)[:2]).all() and to_np(r)[2] == 2.0


# ---------------------------------------------------------------- empty and 0-dim


def test_empty_reductions_follow_torch():
    e = fg.zeros(0)
    assert e.sum().item() == 0.0 and e.prod().item() == 1.0
    assert math.isnan(e.mean().item())
    assert fg.zeros(0, dtype=fg.int64).sum().dtype == fg.int64
    assert e.all().item() is True and e.any().item() is False
    assert e.count_nonzero().item() == 0
    assert e.norm().item() == 0.0
    assert math.isnan(e.var().item())
    assert e.cumsum(0).shape == (0,)
    z = fg.zeros(0, 3)
    assert_close(z.sum(0), np.zeros(3, dtype=np.float32))
    assert_close(z.prod(0), np.ones(3, dtype=np.float32))
    assert z.sum(1).shape == (0,)
    assert z.amax(1).shape == (0,) and z.max(1).values.shape == (0,)
    assert z.argmax(1).shape == (0,)
    assert z.softmax(0).shape == (0, 3)


@pytest.mark.parametrize("op", [lambda t: t.max(), lambda t: t.min(), lambda t: t.amax(),
                                lambda t: t.amin(), lambda t: t.argmax(), lambda t: t.argmin(),
                                lambda t: t.aminmax()])
def test_max_like_of_empty_without_dim_is_runtime_error(op):
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified|empty"):
        op(fg.zeros(0, 3))


@pytest.mark.parametrize("op", [lambda t: t.max(0), lambda t: t.amax(0), lambda t: t.argmin(0),
                                lambda t: t.min(dim=0)])
def test_max_like_over_an_empty_dim_is_index_error(op):
    with pytest.raises(IndexError, match="to have non-zero size"):
        op(fg.zeros(0, 3))


def test_inf_norm_of_empty_is_runtime_error():
    with pytest.raises(RuntimeError, match="identity"):
        fg.zeros(0).norm(math.inf)
    with pytest.raises(RuntimeError):
        linalg_norms.vector_norm(fg.zeros(0), -1)


def test_zero_dim_tensors_reduce_to_zero_dim():
    s = fg.tensor(3.5)
    for dim in (None, 0, -1):
        assert s.sum(dim).shape == () and s.sum(dim).item() == 3.5
    assert s.sum(0, keepdim=True).shape == ()
    v, i = s.max(0)
    assert v.item() == 3.5 and i.item() == 0 and i.shape == ()
    assert s.argmax().item() == 0
    assert s.softmax(0).item() == 1.0 and s.log_softmax(-1).item() == 0.0
    assert s.cumsum(0).item() == 3.5
    assert math.isnan(s.var().item()) and s.std(correction=0).item() == 0.0
    with pytest.raises(IndexError):
        s.sum(1)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize("op", [
    lambda t: t.sum(3), lambda t: t.sum((0, -4)), lambda t: t.mean(5), lambda t: t.max(3),
    lambda t: t.argmax(-4), lambda t: t.amax(3), lambda t: t.var(3), lambda t: t.cumsum(3),
    lambda t: t.softmax(-4), lambda t: t.logsumexp(3), lambda t: t.norm(2, 3),
    lambda t: t.count_nonzero(7), lambda t: t.all(3),
])
def test_bad_dims_are_index_errors(op):
    t = fg.zeros(2, 3, 4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        op(t)


def test_repeated_dims_are_runtime_errors():
    with pytest.raises(RuntimeError, match="appears multiple times"):
        fg.zeros(2, 3).sum((0, -2))


def test_bad_argument_types_are_type_errors():
    t = fg.zeros(2, 3)
    with pytest.raises(TypeError):
        t.sum("a")
    with pytest.raises(TypeError):
        t.sum(dtype="nope")
    with pytest.raises(TypeError):
        t.argmax((0, 1))
    with pytest.raises(TypeError):
        t.cumsum(1.5)


# ---------------------------------------------------------------- named tuples and module forms


def test_named_tuple_structure():
    t = fg.tensor([[1.0, 4.0], [3.0, 2.0]])
    r = t.max(1)
    assert type(r).__name__ == "max" and isinstance(r, tuple) and len(r) == 2
    assert type(r) is return_types.max
    values, indices = r
    assert values.tolist() == [4.0, 3.0] and indices.tolist() == [1, 0]
    assert indices.dtype == fg.int64
    assert r._fields == ("values", "indices")
    assert repr(r).startswith("ferrograd.return_types.max(\nvalues=tensor(")
    r2 = pickle.loads(pickle.dumps(r))
    assert type(r2) is return_types.max and r2.indices.tolist() == [1, 0]
    m = fg.min(t, dim=0, keepdim=True)
    assert type(m) is return_types.min and m.values.shape == (1, 2)
    with pytest.raises(TypeError):
        return_types.max((1, 2, 3))


def test_module_level_forms():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = fg.tensor(a)
    assert_close(fg.sum(t, dim=1), a.sum(1))
    assert_close(fg.sum(t, 0, True), a.sum(0, keepdims=True))
    assert_close(fg.mean(t), np.array(a.mean(), dtype=np.float32))
    assert_close(fg.prod(t, 1), a.astype(np.float64).prod(1).astype(np.float32))
    assert_close(fg.amax(t, (0, 1)), np.array(11.0, dtype=np.float32))
    assert_close(fg.amin(t, dim=-1), a.min(1))
    assert fg.max(t).item() == 11.0 and fg.min(t).item() == 0.0
    assert fg.max(t, 1).indices.tolist() == [3, 3, 3]
    assert fg.argmax(t, dim=0).tolist() == [2, 2, 2, 2]
    assert fg.argmin(t).item() == 0
    assert_close(fg.var(t, 1), a.var(1, ddof=1))
    assert_close(fg.std(t), np.array(a.std(ddof=1), dtype=np.float32))
    assert_close(fg.logsumexp(t, 1), np.log(np.exp(a.astype(np.float64)).sum(1)).astype(np.float32))
    assert_close(fg.softmax(t, dim=0).sum(0), np.ones(4, dtype=np.float32))
    assert_close(fg.cumsum(t, dim=1), np.cumsum(a, 1))
    assert fg.all(t).item() is False and fg.any(t, 1).tolist() == [True, True, True]
    assert fg.count_nonzero(t).item() == 11


# ---------------------------------------------------------------- linalg norms


@pytest.mark.parametrize("fg_dt,np_dt", FLOAT_DTYPES)
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norms_match_numpy(rng, fg_dt, np_dt, ord):
    a = rand(rng, (5, 3), np_dt)
    for _label, t, arr in cases(a):
        want = np.linalg.norm(arr.astype(np.float64), ord)
        got = linalg_norms.matrix_norm(t, ord)
        assert got.dtype == fg_dt
        assert_close(got, np.array(want, dtype=np_dt), **tol(np_dt))
        assert_close(linalg_norms.norm(t, ord), np.array(want, dtype=np_dt), **tol(np_dt))
        assert_close(linalg_norms.norm(t.t(), ord),
                     np.array(np.linalg.norm(arr.T.astype(np.float64), ord), dtype=np_dt),
                     **tol(np_dt))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_batched_matrix_norms_over_chosen_dims(rng, ord):
    a = rand(rng, (4, 2, 6), np.float64)
    t = fg.tensor(a)
    for dims in ((0, 2), (2, 0), (-1, -3)):
        want = np.linalg.norm(a, ord, axis=dims)
        assert_close(linalg_norms.matrix_norm(t, ord, dims), want, rtol=1e-9)
        want_k = np.linalg.norm(a, ord, axis=dims, keepdims=True)
        assert_close(linalg_norms.norm(t, ord, dims, keepdim=True), want_k, rtol=1e-9)


def test_spectral_norms_of_ill_conditioned_matrix_keep_relative_accuracy():
    # Singular values 1 and 1e-9 by construction (rotations around a diagonal).
    c, s = math.cos(0.3), math.sin(0.3)
    u = np.array([[c, -s], [s, c]])
    v = np.array([[math.cos(1.1), -math.sin(1.1)], [math.sin(1.1), math.cos(1.1)]])
    a = u @ np.diag([1.0, 1e-9]) @ v.T
    t = fg.tensor(a)
    assert linalg_norms.matrix_norm(t, 2).item() == pytest.approx(1.0, rel=1e-12)
    assert linalg_norms.matrix_norm(t, -2).item() == pytest.approx(1e-9, rel=1e-6)
    assert linalg_norms.matrix_norm(t, "nuc").item() == pytest.approx(1.0 + 1e-9, rel=1e-12)


def test_linalg_norm_dispatch_rules(rng):
    a = rand(rng, (2, 3, 4), np.float64)
    t = fg.tensor(a)
    assert_close(linalg_norms.norm(t), np.linalg.norm(a.ravel()))
    assert_close(linalg_norms.norm(t, dim=1), np.linalg.norm(a, axis=1))
    assert_close(linalg_norms.norm(t, 3, dim=(2,)), np.sum(np.abs(a) ** 3, axis=2) ** (1 / 3))
    assert_close(linalg_norms.norm(t, dim=(0, 1)), np.linalg.norm(a, axis=(0, 1)))
    v = fg.tensor(a[0, 0])
    assert_close(linalg_norms.norm(v, math.inf), np.array(np.abs(a[0, 0]).max()))
    with pytest.raises(RuntimeError, match="1D or 2D"):
        linalg_norms.norm(t, 2)
    with pytest.raises(RuntimeError, match="length 1 or 2"):
        linalg_norms.norm(t, dim=(0, 1, 2))
    with pytest.raises(RuntimeError):
        linalg_norms.vector_norm(t, "fro")
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        linalg_norms.matrix_norm(v)
    with pytest.raises(RuntimeError, match="dims must be different"):
        linalg_norms.matrix_norm(t, dim=(1, -2))
    with pytest.raises(RuntimeError):
        linalg_norms.matrix_norm(t, 3)
    with pytest.raises(IndexError):
        linalg_norms.matrix_norm(t, dim=(0, 5))
