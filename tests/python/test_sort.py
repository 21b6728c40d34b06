"""sort, argsort, msort, topk and kthvalue: values and indices against
NumPy's stable sort, gradients against float64 central differences, and
torch's errors."""

import ferrograd
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)
SHAPES = [(5,), (3, 4), (2, 3, 4)]


def _desc_order(a: np.ndarray, axis: int) -> np.ndarray:
    """Stable descending order: equal elements keep their order."""
    return np.argsort(-a, axis=axis, kind="stable")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_matches_numpy_on_every_dim(shape, descending):
    # Small integers make ties, which a stable sort keeps in order.
    a = RNG.integers(-3, 4, size=shape).astype(np.float64)
    for dim in range(-len(shape), len(shape)):
        v, i = ferrograd.sort(ferrograd.tensor(a), dim=dim, descending=descending)
        want_i = _desc_order(a, dim) if descending else np.argsort(a, axis=dim, kind="stable")
        np.testing.assert_array_equal(i.numpy(), want_i)
        np.testing.assert_array_equal(v.numpy(), np.take_along_axis(a, want_i, axis=dim))
        assert i.dtype == ferrograd.int64 and v.is_contiguous() and i.is_contiguous()
        np.testing.assert_array_equal(
            ferrograd.argsort(ferrograd.tensor(a), dim, descending).numpy(), want_i
        )


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.bool_])
def test_sort_keeps_the_dtype(dtype):
    a = (RNG.integers(0, 2, size=(4, 6)) if dtype == np.bool_ else RNG.integers(0, 9, size=(4, 6)))
    a = a.astype(dtype)
    v, i = ferrograd.tensor(a).sort(descending=True)
    want_i = _desc_order(a.astype(np.int64), -1)
    np.testing.assert_array_equal(i.numpy(), want_i)
    np.testing.assert_array_equal(v.numpy(), np.take_along_axis(a, want_i, axis=-1))
    assert v.numpy().dtype == a.dtype


def test_nan_sorts_above_every_number():
    x = ferrograd.tensor([2.0, float("nan"), -float("inf"), float("inf"), 1.0])
    v, i = x.sort()
    assert np.isnan(v.numpy()[-1]) and i.tolist() == [2, 4, 0, 3, 1]
    v, i = x.sort(descending=True)
    assert np.isnan(v.numpy()[0]) and i.tolist() == [1, 3, 0, 4, 2]


def test_msort_topk_kthvalue_against_numpy():
    a = RNG.standard_normal((4, 7))
    t = ferrograd.tensor(a)
    np.testing.assert_array_equal(ferrograd.msort(t).numpy(), np.sort(a, axis=0))
    for k in (1, 3, 7):
        for largest in (True, False):
            r = t.topk(k, dim=1, largest=largest)
            order = _desc_order(a, 1) if largest else np.argsort(a, axis=1, kind="stable")
            np.testing.assert_array_equal(r.indices.numpy(), order[:, :k])
            np.testing.assert_array_equal(r.values.numpy(), np.take_along_axis(a, order[:, :k], 1))
        r = ferrograd.kthvalue(t, k, 1)
        np.testing.assert_array_equal(r.values.numpy(), np.sort(a, axis=1)[:, k - 1])
        np.testing.assert_array_equal(r.indices.numpy(), np.argsort(a, axis=1)[:, k - 1])
    r = t.kthvalue(2, 0, keepdim=True)
    assert r.values.shape == (1, 7)
    np.testing.assert_array_equal(r.values.numpy()[0], np.sort(a, axis=0)[1])
    v, i = ferrograd.topk(t, 2, dim=0)
    np.testing.assert_array_equal(v.numpy(), -np.sort(-a, axis=0)[:2])


def test_zero_dim_and_empty_inputs():
    s = ferrograd.tensor(5.0)
    for v, i in (s.sort(), s.topk(1), s.kthvalue(1)):
        assert v.shape == () and v.item() == 5.0 and i.item() == 0
    v, i = ferrograd.tensor([]).sort()
    assert v.shape == (0,) and i.dtype == ferrograd.int64


@pytest.mark.parametrize("shape", SHAPES)
def test_gradients_against_central_differences(shape):
    # Distinct values: the sort is smooth around them.
    a = ferrograd.tensor(RNG.permutation(int(np.prod(shape))).reshape(shape) * 0.37 + RNG.random(shape) * 0.1)
    a.requires_grad_(True)
    dim = len(shape) - 1 if len(shape) < 2 else 0
    n = shape[dim]

    def fns(x):
        return (
            x.sort(dim, descending=True).values * ferrograd.arange(n, dtype=x.dtype).reshape(
                [n if d == dim else 1 for d in range(x.ndim)]
            ),
            x.topk(max(1, n - 1), dim).values,
            x.kthvalue(max(1, n // 2), dim).values,
        )

    assert gradcheck(fns, (a,), check_forward_ad=True)
    assert gradgradcheck(fns, (a,))


def test_gradient_goes_back_to_each_position():
    x = ferrograd.tensor([[0.5, -1.0, 2.0], [3.0, 1.0, 0.0]], requires_grad=True)
    v, i = x.sort(1)
    w = ferrograd.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (v * w).sum().backward()
    want = np.zeros((2, 3))
    np.put_along_axis(want, i.numpy(), w.numpy(), axis=1)
    np.testing.assert_array_equal(x.grad.numpy(), want)
    assert v.grad_fn.name() == "SortBackward0"


def test_errors_are_torchs():
    x = ferrograd.tensor([3.0, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(-1)
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range for dimension 0"):
        x.kthvalue(0)
    with pytest.raises(RuntimeError, match="Sort does not support complex dtypes on CPU"):
        ferrograd.tensor([1 + 1j]).sort()
    with pytest.raises(IndexError):
        x.sort(dim=2)


def test_median_and_nanmedian_against_numpy():
    a = RNG.standard_normal((5, 6))
    t = ferrograd.tensor(a)
    # The lower median: the smaller middle value of an even count.
    assert t.median().item() == np.sort(a.ravel())[(a.size - 1) // 2]
    for dim in (0, 1, -1):
        r = t.median(dim)
        k = (a.shape[dim] - 1) // 2
        np.testing.assert_array_equal(r.values.numpy(), np.take(np.sort(a, axis=dim), k, axis=dim))
        np.testing.assert_array_equal(r.indices.numpy(), np.take(np.argsort(a, axis=dim), k, axis=dim))
    a[1, 2] = a[1, 4] = a[3, 0] = np.nan
    a[4, :] = np.nan
    t = ferrograd.tensor(a)
    assert np.isnan(t.median().item())
    r = t.median(1, keepdim=True)
    assert r.values.shape == (5, 1)
    assert np.isnan(r.values.numpy()[[1, 3, 4], 0]).all()
    assert r.indices.numpy()[[1, 3, 4], 0].tolist() == [2, 0, 0]
    r = t.nanmedian(1)
    for row in range(4):
        numbers = np.sort(a[row][~np.isnan(a[row])])
        assert r.values.numpy()[row] == numbers[(numbers.size - 1) // 2]
        assert a[row, r.indices.numpy()[row]] == r.values.numpy()[row]
    assert np.isnan(r.values.numpy()[4])
    assert t.nanmedian().item() == np.sort(a[~np.isnan(a)])[(np.sum(~np.isnan(a)) - 1) // 2]


def test_median_gradients_against_central_differences():
    distinct = RNG.permutation(20).reshape(4, 5) * 0.3 + RNG.random((4, 5)) * 0.1
    a = ferrograd.tensor(distinct, requires_grad=True)
    assert gradcheck(lambda x: (x.median(), x.median(0).values, x.nanmedian(1, True).values), (a,),
                     check_forward_ad=True)
    with pytest.raises(IndexError, match="Expected reduction dim 1 to have non-zero size"):
        ferrograd.zeros(2, 0).median(1)
