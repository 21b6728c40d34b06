"""diff, gradient, trapezoid/trapz/cumulative_trapezoid, dist, cov, corrcoef,
nansum, nanmean, quantile/nanquantile, renorm, sum_to_size and the in-place
scans: values against NumPy, gradients against float64 finite differences,
and torch's errors for bad input."""

from __future__ import annotations

import warnings

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from numpy_oracle import close, t

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 5))
B = RNG.standard_normal((4, 5))


# ---------------------------------------------------------------------------
# diff / gradient


@pytest.mark.parametrize(("n", "dim"), [(1, -1), (2, 0), (3, 1), (0, 0), (7, 1)])
def test_diff_matches_numpy(n, dim):
    close(fg.diff(t(A), n=n, dim=dim), np.diff(A, n, axis=dim))


def test_diff_prepend_append_and_bool():
    pre, app = A[:, :2], A[:, :1]
    close(fg.diff(t(A), prepend=t(pre), append=t(app)), np.diff(A, prepend=pre, append=app))
    assert fg.diff(fg.tensor([True, False, False])).tolist() == [True, False]
    assert fg.diff(fg.tensor([1, 3, 6])).dtype == fg.int64


def test_diff_errors():
    with pytest.raises(RuntimeError, match="at least one-dimensional"):
        fg.diff(fg.tensor(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative"):
        fg.diff(t(A), n=-1)
    with pytest.raises(RuntimeError, match="same dimension as input"):
        fg.diff(t(A), prepend=fg.ones(5, dtype=fg.float64))


def test_diff_gradcheck():
    x, p = t(A, requires_grad=True), t(A[:, :1], requires_grad=True)
    assert gradcheck(lambda a, b: fg.diff(a, n=2, prepend=b), (x, p))


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dim", [0, 1])
def test_gradient_uniform_matches_numpy(edge_order, dim):
    (g,) = fg.gradient(t(A), spacing=0.5, dim=dim, edge_order=edge_order)
    close(g, np.gradient(A, 0.5, axis=dim, edge_order=edge_order))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates_matches_numpy(edge_order):
    x = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
    (g,) = fg.gradient(t(A), spacing=[t(x)], dim=1, edge_order=edge_order)
    close(g, np.gradient(A, x, axis=1, edge_order=edge_order))


def test_gradient_all_dims_with_steps_per_dim():
    got = fg.gradient(t(A), spacing=[1.0, 2.0])
    want = np.gradient(A, 1.0, 2.0)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want, strict=True):
        close(g, w)


def test_gradient_integer_input_gives_default_float():
    (g,) = fg.gradient(fg.tensor([1, 4, 9, 16]))
    assert g.dtype == fg.float32
    close(g, [3.0, 4.0, 6.0, 7.0])


def test_gradient_errors():
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        fg.gradient(t(A), edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        fg.gradient(fg.ones(2, dtype=fg.float64), edge_order=2)
    with pytest.raises(RuntimeError, match="list of length"):
        fg.gradient(t(A), spacing=[1.0])


def test_gradient_gradcheck():
    x = t(A, requires_grad=True)
    c = t([0.0, 0.5, 1.7, 2.0, 3.5], requires_grad=True)
    assert gradcheck(lambda a, s: fg.gradient(a, spacing=[s], dim=1, edge_order=2)[0], (x, c))
    assert gradcheck(lambda a: fg.gradient(a, spacing=[0.3, 2.0]), (x,))


# ---------------------------------------------------------------------------
# trapezoid / trapz / cumulative_trapezoid


def test_trapezoid_matches_numpy():
    x = np.cumsum(RNG.random(5))
    close(fg.trapezoid(t(A)), np.trapezoid(A))
    close(fg.trapezoid(t(A), dx=0.3, dim=0), np.trapezoid(A, dx=0.3, axis=0))
    close(fg.trapezoid(t(A), t(x)), np.trapezoid(A, x))
    xs = np.cumsum(RNG.random((4, 5)), axis=0)
    close(fg.trapezoid(t(A), t(xs), dim=0), np.trapezoid(A, xs, axis=0))
    close(fg.trapz(t(A), t(x)), np.trapezoid(A, x))
    close(fg.trapz(t(A), dx=2.0), np.trapezoid(A, dx=2.0))


def test_cumulative_trapezoid_is_running_trapezoid():
    x = np.cumsum(RNG.random(5))
    want = np.stack([np.trapezoid(A[:, : i + 2], x[: i + 2]) for i in range(4)], axis=1)
    close(fg.cumulative_trapezoid(t(A), t(x)), want)
    want = np.stack([np.trapezoid(A[: i + 2], dx=2.0, axis=0) for i in range(3)])
    close(fg.cumulative_trapezoid(t(A), dx=2.0, dim=0), want)


def test_trapezoid_edge_cases():
    assert fg.trapezoid(fg.arange(5)).item() == 8.0
    assert fg.trapezoid(fg.zeros(3, 0)).tolist() == [0.0, 0.0, 0.0]
    assert fg.cumulative_trapezoid(fg.zeros(3, 0)).shape == (3, 0)
    with pytest.raises(RuntimeError, match="one `x` value for each sample point"):
        fg.trapezoid(fg.ones(3, 2), fg.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        fg.trapezoid(fg.ones(3), fg.ones(3), dx=2)


def test_trapezoid_gradcheck():
    y, x = t(A, requires_grad=True), t(np.cumsum(RNG.random(5)), requires_grad=True)
    assert gradcheck(lambda a, b: fg.trapezoid(a, b), (y, x))
    assert gradcheck(lambda a, b: fg.cumulative_trapezoid(a, b), (y, x))
    assert gradgradcheck(lambda a: fg.trapezoid(a * a, dx=0.5, dim=0), (y,))


# ---------------------------------------------------------------------------
# dist / cov / corrcoef


@pytest.mark.parametrize("p", [0, 1, 2, 3.5, float("inf"), -float("inf")])
def test_dist_matches_numpy(p):
    d = np.abs(A - B).ravel()
    want = {0: np.count_nonzero(d), float("inf"): d.max(), -float("inf"): d.min()}.get(p)
    if want is None:
        want = (d**p).sum() ** (1 / p)
    close(fg.dist(t(A), t(B), p), want)


def test_dist_broadcasts_and_refuses_integers():
    close(fg.dist(t(A), t(B[0])), np.linalg.norm(A - B[0]))
    with pytest.raises(RuntimeError, match="floating point or complex"):
        fg.dist(fg.ones(3, dtype=fg.int64), fg.zeros(3, dtype=fg.int64))


def test_dist_gradcheck():
    assert gradcheck(lambda a, b: fg.dist(a, b, 3.0), (t(A, requires_grad=True), t(B, requires_grad=True)))


def test_cov_matches_numpy():
    fw = RNG.integers(0, 4, 5)
    aw = RNG.random(5)
    close(fg.cov(t(A)), np.cov(A))
    close(fg.cov(t(A), correction=0), np.cov(A, ddof=0))
    close(fg.cov(t(A), fweights=t(fw, fg.int64)), np.cov(A, fweights=fw))
    close(fg.cov(t(A), aweights=t(aw)), np.cov(A, aweights=aw))
    close(
        fg.cov(t(A), fweights=t(fw, fg.int64), aweights=t(aw), correction=0),
        np.cov(A, fweights=fw, aweights=aw, ddof=0),
    )
    close(fg.cov(t(A[0])), np.cov(A[0]))
    c = A + 1j * B
    close(fg.cov(t(c, fg.complex128)), np.cov(c))


def test_cov_errors_and_warning():
    with pytest.raises(RuntimeError, match="two or fewer dimensions"):
        fg.cov(fg.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="fweights to have integral dtype"):
        fg.cov(t(A), fweights=t(np.ones(5)))
    with pytest.raises(RuntimeError, match="aweights to have floating point dtype"):
        fg.cov(t(A), aweights=fg.ones(5, dtype=fg.int64))
    with pytest.raises(RuntimeError, match="fweights cannot be negative"):
        fg.cov(t(A), fweights=fg.tensor([1, -1, 1, 1, 1]))
    with pytest.raises(RuntimeError, match="same numel as there are observations"):
        fg.cov(t(A), fweights=fg.tensor([1, 1]))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert np.isnan(fg.cov(fg.tensor([1.0])).item())


def test_corrcoef_matches_numpy():
    close(fg.corrcoef(t(A)), np.corrcoef(A))
    c = A + 1j * B
    close(fg.corrcoef(t(c, fg.complex128)), np.corrcoef(c))
    assert fg.corrcoef(fg.arange(4)).item() == 1.0


def test_cov_corrcoef_gradcheck():
    x = t(A, requires_grad=True)
    aw = t(RNG.random(5) + 0.5, requires_grad=True)
    assert gradcheck(lambda a, w: fg.cov(a, aweights=w), (x, aw))
    assert gradcheck(fg.corrcoef, (x,))
    assert gradgradcheck(fg.cov, (x,))


# ---------------------------------------------------------------------------
# nansum / nanmean

N = A.copy()
N[0, 1] = np.nan
N[2, :] = np.nan


@pytest.mark.parametrize(("dim", "keepdim"), [(None, False), (1, False), (0, True), ((0, 1), True)])
def test_nansum_nanmean_match_numpy(dim, keepdim):
    axis = tuple(dim) if isinstance(dim, tuple) else dim
    close(fg.nansum(t(N), dim, keepdim), np.nansum(N, axis=axis, keepdims=keepdim))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.nanmean(N, axis=axis, keepdims=keepdim)
    close(fg.nanmean(t(N), dim, keepdim), want)
    close(t(N).nanmean(dim, keepdim), want)


def test_nansum_nanmean_dtypes_and_errors():
    assert fg.nansum(fg.arange(3), dtype=fg.float64).dtype == fg.float64
    assert fg.nanmean(t(N), dtype=fg.float32).dtype == fg.float32
    with pytest.raises(RuntimeError, match="does not support complex inputs"):
        fg.nansum(fg.tensor([1 + 1j]))
    with pytest.raises(RuntimeError, match="floating point or complex dtype but got Long"):
        fg.nanmean(fg.arange(3))
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        fg.nanmean(t(N), dtype=fg.int64)


def test_nansum_nanmean_gradcheck():
    x = t(N, requires_grad=True)
    g = fg.autograd.grad(fg.nanmean(x, 1).nansum(), x)[0]
    close(g, np.where(np.isnan(N), 0.0, 1.0 / np.maximum((~np.isnan(N)).sum(1, keepdims=True), 1)))
    assert gradcheck(lambda a: fg.nanmean(a, 0), (t(A, requires_grad=True),))


# ---------------------------------------------------------------------------
# quantile / nanquantile

METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]
Q = np.array([0.0, 0.1, 0.5, 0.75, 1.0])


@pytest.mark.parametrize("method", METHODS)
def test_quantile_matches_numpy(method):
    close(fg.quantile(t(A), t(Q), dim=1, interpolation=method), np.quantile(A, Q, axis=1, method=method))
    close(fg.quantile(t(A), 0.3, interpolation=method), np.quantile(A, 0.3, method=method))
    close(
        fg.quantile(t(A), t(Q), dim=0, keepdim=True, interpolation=method),
        np.quantile(A, Q, axis=0, keepdims=True, method=method),
    )
    close(
        fg.quantile(t(A), t(Q), keepdim=True, interpolation=method),
        np.quantile(A, Q, keepdims=True, method=method),
    )


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_matches_numpy(method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.nanquantile(N, Q, axis=1, method=method)
    close(fg.nanquantile(t(N), t(Q), dim=1, interpolation=method), want)
    # quantile itself: NaN for a slice holding NaN.
    close(fg.quantile(t(N), t(Q), dim=1, interpolation=method), np.quantile(N, Q, axis=1, method=method))


def test_quantile_nearest_ties_go_to_even_rank_and_0d_input():
    close(fg.quantile(t([0.0, 1.0, 2.0, 3.0]), t([0.5, 1 / 6]), interpolation="nearest"), [2.0, 0.0])
    assert fg.quantile(t(3.0), 0.5).item() == 3.0
    assert t(A).quantile(t(0.5), dim=0).shape == (5,)


def test_quantile_errors():
    with pytest.raises(RuntimeError, match="q must be in the range \\[0, 1\\] but got 1.5"):
        fg.quantile(t(A), 1.5)
    with pytest.raises(RuntimeError, match="q values must be in the range"):
        fg.quantile(t(A), t([1.5]))
    with pytest.raises(RuntimeError, match="same dtype as the input"):
        fg.quantile(t(A), fg.tensor([0.5]))
    with pytest.raises(RuntimeError, match="either float or double"):
        fg.quantile(fg.arange(3), 0.5)
    with pytest.raises(RuntimeError, match="interpolation must be one of"):
        fg.quantile(t(A), 0.5, interpolation="foo")
    with pytest.raises(RuntimeError, match="scalar or 1D tensor"):
        fg.quantile(t(A), t([[0.5]]))
    with pytest.raises(RuntimeError, match="non-empty"):
        fg.quantile(fg.ones(0), 0.5)


@pytest.mark.parametrize("method", METHODS)
def test_quantile_gradcheck(method):
    x = t(A, requires_grad=True)
    assert gradcheck(lambda a: fg.quantile(a, t([0.2, 0.5, 0.9]), dim=1, interpolation=method), (x,))
    assert gradcheck(lambda a: fg.nanquantile(a, 0.4, interpolation=method), (x,))


# ---------------------------------------------------------------------------
# renorm / sum_to_size / in-place scans


def _renorm_numpy(a, p, dim, maxnorm):
    moved = np.moveaxis(a, dim, 0)
    norms = (np.abs(moved.reshape(moved.shape[0], -1)) ** p).sum(1) ** (1 / p)
    scale = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return np.moveaxis(moved * scale.reshape(-1, *[1] * (a.ndim - 1)), 0, dim)


@pytest.mark.parametrize(("p", "dim", "maxnorm"), [(2, 0, 1.5), (1, 1, 1.0), (3.0, -1, 0.5)])
def test_renorm_matches_numpy(p, dim, maxnorm):
    close(fg.renorm(t(A), p, dim, maxnorm), _renorm_numpy(A, p, dim, maxnorm))
    x = t(A)
    assert x.renorm_(p, dim, maxnorm) is x
    close(x, _renorm_numpy(A, p, dim, maxnorm))


def test_deprecated_norms_match_numpy_and_warn():
    a = RNG.standard_normal((2, 3, 4))
    with pytest.warns(UserWarning, match="frobenius_norm is deprecated"):
        close(fg.frobenius_norm(t(a), (1, 2)), np.sqrt((a**2).sum((1, 2))))
    with pytest.warns(UserWarning, match="nuclear_norm is deprecated"):
        close(fg.nuclear_norm(t(a)), np.linalg.svd(a, compute_uv=False).sum(-1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(fg.nuclear_norm(t(a[0]), True), [[np.linalg.svd(a[0], compute_uv=False).sum()]])
        close(fg.nuclear_norm(t(a), (0, 2), keepdim=True),
              np.linalg.svd(a.transpose(1, 0, 2), compute_uv=False).sum(-1).reshape(1, 3, 1))
        close(fg.frobenius_norm(t(a), 0, keepdim=True), np.sqrt((a**2).sum(0, keepdims=True)))
        assert gradcheck(lambda v: fg.nuclear_norm(v), (t(a[0], requires_grad=True),))
        assert gradcheck(lambda v: fg.frobenius_norm(v, (0, 1)), (t(a[0], requires_grad=True),))


def test_renorm_errors_and_gradcheck():
    with pytest.raises(RuntimeError, match="maxnorm"):
        fg.renorm(t(A), 2, 0, -1.0)
    with pytest.raises(RuntimeError, match="non-positive-norm"):
        fg.renorm(t(A), 0, 0, 1.0)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        fg.renorm(t(A[0]), 2, 0, 1.0)
    assert gradcheck(lambda a: fg.renorm(a, 2, 0, 1.5), (t(A, requires_grad=True),))


def test_sum_to_size():
    x = t(A)
    close(x.sum_to_size(5), A.sum(0))
    close(x.sum_to_size(1, 5), A.sum(0, keepdims=True))
    close(x.sum_to_size((4, 1)), A.sum(1, keepdims=True))
    close(x.sum_to_size(4, 5), A)
    with pytest.raises(RuntimeError, match="is not expandable to size"):
        x.sum_to_size(3, 4, 5)
    assert gradcheck(lambda a: a.sum_to_size(1, 5), (t(A, requires_grad=True),))


def test_inplace_cumsum_cumprod():
    x = t(A)
    assert x.cumsum_(1) is x
    close(x, np.cumsum(A, 1))
    x = t(A)
    x.cumprod_(0)
    close(x, np.cumprod(A, 0))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        fg.arange(3).cumsum_(0, dtype=fg.float32)
    leaf = t(A, requires_grad=True)
    y = leaf * 1
    y.cumsum_(0)
    (g,) = fg.autograd.grad(y.sum(), leaf)
    close(g, np.arange(4, 0, -1.0)[:, None] * np.ones((4, 5)))
