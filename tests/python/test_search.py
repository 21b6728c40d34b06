"""Searching and counting (searchsorted, bucketize, isin, unique,
unique_consecutive, bincount, histc, histogram, mode, cummax, cummin,
logcumsumexp) against NumPy, with derivatives against float64 central
differences and torch's errors.
"""

from __future__ import annotations

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(5)


def t(v, **kw):
    return torch.tensor(np.asarray(v), **kw)


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize_match_numpy(right):
    seq = np.sort(RNG.integers(0, 10, size=12)).astype(np.float64)
    vals = RNG.integers(-2, 12, size=(3, 5)).astype(np.float64)
    side = "right" if right else "left"
    got = torch.searchsorted(t(seq), t(vals), right=right).numpy()
    np.testing.assert_array_equal(got, np.searchsorted(seq, vals, side=side))
    assert torch.searchsorted(t(seq), t(vals), side=side).dtype == torch.int64
    assert torch.searchsorted(t(seq), t(vals), out_int32=True).dtype == torch.int32
    np.testing.assert_array_equal(torch.bucketize(t(vals), t(seq), right=right).numpy(),
                                  np.searchsorted(seq, vals, side=side))
    # One sorted row per row of values.
    rows = np.sort(RNG.normal(size=(3, 6)), axis=1)
    v = RNG.normal(size=(3, 4))
    got = torch.searchsorted(t(rows), t(v), right=right).numpy()
    want = [np.searchsorted(r, x, side=side) for r, x in zip(rows, v, strict=True)]
    np.testing.assert_array_equal(got, want)
    # An unsorted sequence with the order that sorts it.
    raw = RNG.normal(size=8)
    order = np.argsort(raw)
    got = torch.searchsorted(t(raw), t(v[0]), sorter=t(order)).numpy()
    np.testing.assert_array_equal(got, np.searchsorted(raw, v[0], sorter=order))
    # NaN goes above every number.
    assert torch.searchsorted(t([1.0, 3.0]), t([np.nan])).item() == 2
    assert torch.searchsorted(t([1, 3, 5]), 4).item() == 2


def test_searchsorted_errors():
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension"):
        torch.searchsorted(t(np.zeros((2, 3))), t(np.zeros((3, 1))))
    with pytest.raises(RuntimeError, match="side"):
        torch.searchsorted(t([1.0]), t([1.0]), side="middle")
    with pytest.raises(RuntimeError, match="sorter"):
        torch.searchsorted(t([1.0, 2.0]), t([1.0]), sorter=t([0, 5]))


def test_isin_matches_numpy():
    a = RNG.integers(0, 10, size=(4, 5))
    b = RNG.integers(0, 10, size=6)
    np.testing.assert_array_equal(torch.isin(t(a), t(b)).numpy(), np.isin(a, b))
    np.testing.assert_array_equal(torch.isin(t(a), t(b), invert=True).numpy(), np.isin(a, b, invert=True))
    np.testing.assert_array_equal(torch.isin(t(a), 3).numpy(), a == 3)


def test_unique_family_matches_numpy():
    x = RNG.integers(0, 6, size=(4, 5))
    vals, inv, counts = torch.unique(t(x), return_inverse=True, return_counts=True)
    wv, wi, wc = np.unique(x, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(vals.numpy(), wv)
    np.testing.assert_array_equal(inv.numpy(), wi.reshape(x.shape))
    np.testing.assert_array_equal(counts.numpy(), wc)
    assert isinstance(torch.unique(t(x)), torch.Tensor)
    # NaNs are each distinct and last.
    f = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    v, c = torch.unique(t(f), return_counts=True)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0, np.nan, np.nan])
    np.testing.assert_array_equal(c.numpy(), [1, 2, 1, 1])
    rows = np.array([[1, 2], [1, 2], [0, 5], [1, 0]])
    v, i, c = torch.unique(t(rows), dim=0, return_inverse=True, return_counts=True)
    wv, wi, wc = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), wv)
    np.testing.assert_array_equal(i.numpy(), wi.reshape(-1))
    np.testing.assert_array_equal(c.numpy(), wc)
    cols, ci = torch.unique(t(rows.T), dim=1, return_inverse=True)
    np.testing.assert_array_equal(cols.numpy(), wv.T)
    np.testing.assert_array_equal(ci.numpy(), wi.reshape(-1))
    run = np.array([1, 1, 2, 2, 3, 1, 1])
    v, i, c = torch.unique_consecutive(t(run), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3, 1])
    np.testing.assert_array_equal(i.numpy(), [0, 0, 1, 1, 2, 3, 3])
    np.testing.assert_array_equal(c.numpy(), [2, 2, 1, 2])
    np.testing.assert_array_equal(t(run).unique_consecutive().numpy(), [1, 2, 3, 1])


def test_counting_matches_numpy():
    x = RNG.integers(0, 7, size=30)
    np.testing.assert_array_equal(torch.bincount(t(x)).numpy(), np.bincount(x))
    np.testing.assert_array_equal(torch.bincount(t(x), minlength=12).numpy(), np.bincount(x, minlength=12))
    w = RNG.normal(size=30)
    np.testing.assert_allclose(torch.bincount(t(x), t(w)).numpy(), np.bincount(x, w), rtol=1e-12)
    assert torch.bincount(t(x), t(w).float()).dtype == torch.float32
    with pytest.raises(RuntimeError, match="non-negative"):
        torch.bincount(t([1, -1]))
    v = RNG.normal(size=200)
    np.testing.assert_array_equal(torch.histc(t(v), bins=7, min=-1, max=1).numpy(),
                                  np.histogram(v[(v >= -1) & (v <= 1)], bins=7, range=(-1, 1))[0])
    np.testing.assert_array_equal(torch.histc(t(v), bins=5).numpy(), np.histogram(v, bins=5)[0])
    hist, edges = torch.histogram(t(v), bins=6, range=(-2.0, 2.0), weight=t(np.abs(v)), density=True)
    wh, we = np.histogram(v, bins=6, range=(-2, 2), weights=np.abs(v), density=True)
    np.testing.assert_allclose(hist.numpy(), wh, rtol=1e-12)
    np.testing.assert_allclose(edges.numpy(), we, rtol=1e-15)
    custom = np.array([-3.0, -0.5, 0.0, 0.7, 3.0])
    np.testing.assert_array_equal(torch.histogram(t(v), t(custom)).hist.numpy(), np.histogram(v, custom)[0])


def test_running_extrema_and_mode():
    x = RNG.integers(0, 5, size=(3, 8)).astype(np.float64)
    for dim in (0, 1):
        v, i = torch.cummax(t(x), dim)
        np.testing.assert_array_equal(v.numpy(), np.maximum.accumulate(x, axis=dim))
        np.testing.assert_array_equal(np.take_along_axis(x, i.numpy(), dim), v.numpy())
        v, i = torch.cummin(t(x), dim)
        np.testing.assert_array_equal(v.numpy(), np.minimum.accumulate(x, axis=dim))
    # Ties take the later position.
    np.testing.assert_array_equal(torch.cummax(t([1.0, 3.0, 3.0, 2.0]), 0).indices.numpy(), [0, 1, 2, 2])
    values, idx = torch.mode(t(x), 1)
    for r in range(3):
        counts = {val: np.sum(x[r] == val) for val in x[r]}
        best = min(k for k, c in counts.items() if c == max(counts.values()))
        assert values[r].item() == best and idx[r].item() == np.nonzero(x[r] == best)[0][-1]
    assert torch.mode(t(x), 1, keepdim=True).values.shape == (3, 1)
    y = RNG.normal(size=(3, 6))
    np.testing.assert_allclose(torch.logcumsumexp(t(y), 1).numpy(), np.logaddexp.accumulate(y, axis=1),
                               rtol=1e-14)
    big = torch.logcumsumexp(t([-1000.0, 0.0, 1000.0]), 0).numpy()
    np.testing.assert_allclose(big, [-1000.0, 0.0, 1000.0])
    with pytest.raises(NotImplementedError):
        torch.logcumsumexp(t([1, 2]), 0)


@pytest.mark.parametrize("name", ["cummax", "cummin", "mode", "logcumsumexp"])
def test_derivatives(name):
    fn = {
        "cummax": lambda v: torch.cummax(v, 1).values,
        "cummin": lambda v: torch.cummin(v, 0).values,
        "mode": lambda v: torch.mode(v.round(), 1).values * v.sum(),
        "logcumsumexp": lambda v: torch.logcumsumexp(v, 1),
    }[name]
    x = torch.tensor(RNG.normal(size=(3, 4)) * 2, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradcheck(fn, (x,), check_forward_ad=True, check_backward_ad=False)
    assert gradgradcheck(fn, (x,))
    if name == "logcumsumexp":
        # Gradients of positive, negative and mixed sign, and leading -inf
        # inputs (outputs of -inf), to second order.
        assert gradgradcheck(fn, (x,), grad_outputs=(torch.tensor(RNG.uniform(0.5, 1, (3, 4))),))
        assert gradgradcheck(fn, (x,), grad_outputs=(torch.tensor(-RNG.uniform(0.5, 1, (3, 4))),))
        # Batched tangents and gradients (vmap of jvp / of vjp) scan the data's dim, not the batch's.
        from ferrograd.func import jacfwd, jacrev

        xd = x.detach()
        for d in (0, 1, -1):
            f = lambda v, d=d: torch.logcumsumexp(v, d)  # noqa: E731
            np.testing.assert_allclose(jacfwd(f)(xd).numpy(), jacrev(f)(xd).numpy(), atol=1e-12)
        # linearize pushes tangents through the double backward from a zero cotangent.
        from ferrograd.func import linearize, vmap

        _, jvp_fn = linearize(lambda v: torch.logcumsumexp(v, 1), xd)
        basis = torch.eye(xd.numel(), dtype=torch.float64).reshape(-1, *xd.shape)
        want = jacfwd(lambda v: torch.logcumsumexp(v, 1))(xd).reshape(*xd.shape, -1).movedim(-1, 0)
        np.testing.assert_allclose(vmap(jvp_fn)(basis).numpy(), want.numpy(), atol=1e-12)
        s = torch.tensor(0.7, dtype=torch.float64)
        assert jacfwd(lambda v: torch.logcumsumexp(v, 0))(s).item() == 1.0
        assert jacrev(lambda v: torch.logcumsumexp(v, 0))(s).item() == 1.0
        ninf = torch.tensor([[-np.inf, -np.inf, 0.0, 0.0]] * 3, dtype=torch.float64)
        assert gradgradcheck(lambda v: torch.logcumsumexp(v + ninf, 1), (x,))
        lead = torch.tensor([-np.inf, 0.3, -np.inf, 1.2], dtype=torch.float64, requires_grad=True)
        torch.logcumsumexp(lead, 0).sum().backward()
        y = np.logaddexp.accumulate([-np.inf, 0.3, -np.inf, 1.2])
        want = [0.0, *(np.exp(v - y[k:]).sum() for k, v in list(enumerate([0.3, -np.inf, 1.2], 1)))]
        np.testing.assert_allclose(lead.grad.numpy(), np.nan_to_num(want), rtol=1e-14)


def test_histogramdd_matches_numpy():
    pts = RNG.normal(size=(40, 3))
    for kw in ({"bins": 4}, {"bins": [2, 3, 5]}, {"bins": 3, "range": [-1, 1, -2, 2, 0, 1]}):
        want, want_edges = np.histogramdd(pts, bins=kw["bins"], range=None if "range" not in kw
                                          else np.reshape(kw["range"], (3, 2)))
        got = torch.histogramdd(t(pts), **kw)
        np.testing.assert_allclose(got.hist.numpy(), want)
        for e, w in zip(got.bin_edges, want_edges, strict=True):
            np.testing.assert_allclose(e.numpy(), w, rtol=1e-12)
    weights = RNG.uniform(size=40)
    edges = [np.array([-3.0, 0.0, 3.0]), np.array([-1.0, 0.5, 1.0, 2.0]), np.array([-5.0, 5.0])]
    want, _ = np.histogramdd(pts, bins=edges, weights=weights, density=True)
    got = torch.histogramdd(t(pts), bins=[t(e) for e in edges], weight=t(weights), density=True)
    np.testing.assert_allclose(got.hist.numpy(), want, rtol=1e-12)
    # Leading dims are flattened into points.
    np.testing.assert_allclose(torch.histogramdd(t(pts.reshape(2, 20, 3)), bins=2).hist.numpy(),
                               np.histogramdd(pts, bins=2)[0])
    with pytest.raises(RuntimeError, match="range should have 6"):
        torch.histogramdd(t(pts), bins=2, range=[0, 1])
    with pytest.raises(RuntimeError, match="expected 3 sequences"):
        torch.histogramdd(t(pts), bins=[2, 2])
