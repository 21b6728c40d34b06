"""The composite linalg functions (vecdot, cross, matrix_power, multi_dot,
vander, matrix_rank, cond, diagonal): values against NumPy, derivatives
against float64 central differences, the error cases."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck


def t64(a):
    return fg.tensor(np.asarray(a, dtype=np.float64))


def test_vecdot_and_cross_match_numpy():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((2, 1, 3))
    np.testing.assert_allclose(fg.linalg.vecdot(t64(x), t64(y)).numpy(), np.sum(x * y, -1), rtol=1e-12)
    xc = x + 1j * rng.standard_normal((4, 3))
    got = fg.linalg.vecdot(fg.tensor(xc), fg.tensor(xc), dim=0).numpy()
    np.testing.assert_allclose(got, np.sum(xc.conj() * xc, 0), rtol=1e-12)
    np.testing.assert_allclose(fg.linalg.cross(t64(x), t64(y)).numpy(), np.cross(x, y), rtol=1e-12)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    np.testing.assert_allclose(
        fg.linalg.cross(t64(a), t64(b), dim=0).numpy(), np.cross(a, b, axis=0), rtol=1e-12
    )


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5, 8])
def test_matrix_power_matches_numpy(n):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 3)) * 0.5 + np.eye(3)
    got = fg.linalg.matrix_power(t64(a), n).numpy()
    want = np.stack([np.linalg.matrix_power(m, n) for m in a])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert fg.equal(fg.matrix_power(t64(a), n), fg.linalg.matrix_power(t64(a), n))


def test_matrix_power_of_integers():
    a = fg.tensor([[1, 1], [1, 0]])
    assert (
        fg.linalg.matrix_power(a, 10).tolist()
        == np.linalg.matrix_power(np.array([[1, 1], [1, 0]]), 10).tolist()
    )


@pytest.mark.parametrize(
    "shapes",
    [
        [(3, 4), (4, 5)],
        [(4,), (4, 5), (5, 2)],
        [(10, 100), (100, 5), (5, 50)],
        [(3, 2), (2, 6), (6, 1), (1,)],
        [(3,), (3,)],
    ],
)
def test_multi_dot_matches_numpy(shapes):
    rng = np.random.default_rng(2)
    mats = [rng.standard_normal(s) for s in shapes]
    got = fg.linalg.multi_dot([t64(m) for m in mats]).numpy()
    np.testing.assert_allclose(got, np.linalg.multi_dot(mats), rtol=1e-10)


def test_vander_and_diagonal_match_numpy():
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    np.testing.assert_allclose(
        fg.linalg.vander(t64(x)).numpy(), np.stack([np.vander(r, increasing=True) for r in x])
    )
    np.testing.assert_allclose(fg.linalg.vander(t64(x[0]), N=5).numpy(), np.vander(x[0], 5, increasing=True))
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(fg.linalg.diagonal(t64(a), offset=1).numpy(), np.diagonal(a, 1, -2, -1))


def test_matrix_rank_and_cond_match_numpy():
    rng = np.random.default_rng(3)
    low = rng.standard_normal((2, 5, 2)) @ rng.standard_normal((2, 2, 4))
    np.testing.assert_array_equal(fg.linalg.matrix_rank(t64(low)).numpy(), np.linalg.matrix_rank(low))
    sym = low @ np.swapaxes(low, -1, -2)
    assert fg.linalg.matrix_rank(t64(sym), hermitian=True).tolist() == [2, 2]
    assert fg.linalg.matrix_rank(t64(np.diag([1.0, 1e-3, 1e-9])), atol=1e-4).item() == 2
    assert fg.linalg.matrix_rank(t64(np.diag([1.0, 1e-3, 1e-9])), rtol=1e-2).item() == 1
    assert fg.linalg.matrix_rank(t64(low)).dtype == fg.int64
    a = rng.standard_normal((3, 4, 4))
    for p in (None, 2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc"):
        got = fg.linalg.cond(t64(a), p).numpy()
        np.testing.assert_allclose(got, np.linalg.cond(a, p), rtol=1e-9)
    wide = rng.standard_normal((3, 5))
    np.testing.assert_allclose(fg.linalg.cond(t64(wide)).item(), np.linalg.cond(wide), rtol=1e-10)


def test_composites_differentiate():
    x = fg.randn(3, 3, dtype=fg.float64, requires_grad=True)
    y = fg.randn(2, 1, 3, dtype=fg.float64, requires_grad=True)
    assert gradcheck(lambda x, y: fg.linalg.vecdot(x, y), (x, y), check_forward_ad=True)
    assert gradcheck(lambda x, y: fg.linalg.cross(x, y), (x, y), check_forward_ad=True)
    a = (fg.randn(3, 3, dtype=fg.float64) * 0.3 + fg.eye(3, dtype=fg.float64)).requires_grad_()
    for n in (-2, 0, 3):
        assert gradcheck(lambda a, n=n: fg.linalg.matrix_power(a, n), (a,), check_forward_ad=True)
    assert gradgradcheck(lambda a: fg.linalg.matrix_power(a, 3), (a,))
    b = fg.randn(3, 4, dtype=fg.float64, requires_grad=True)
    v = fg.randn(4, dtype=fg.float64, requires_grad=True)
    assert gradcheck(lambda a, b, v: fg.linalg.multi_dot([a, b, v]), (a, b, v), check_forward_ad=True)
    w = fg.randn(4, dtype=fg.float64, requires_grad=True)
    assert gradcheck(lambda w: fg.linalg.vander(w, N=4), (w,), check_forward_ad=True)
    assert gradcheck(lambda a: fg.linalg.cond(a), (a,), check_forward_ad=True)
    assert gradcheck(lambda a: fg.linalg.cond(a, "fro"), (a,))


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: fg.linalg.vander(fg.tensor([1.0]), N=1), "N must be greater than 1"),
        (
            lambda: fg.linalg.cross(fg.ones(2, 3), fg.ones(2, 4)),
            "dimension -1 must have length 3. Got 3 and 4",
        ),
        (lambda: fg.linalg.multi_dot([fg.ones(2, 3)]), "expected at least 2 tensors but got 1"),
        (
            lambda: fg.linalg.multi_dot([fg.ones(2, 3), fg.ones(3), fg.ones(3)]),
            "tensor 1 must be 2D but got 1D",
        ),
        (
            lambda: fg.linalg.multi_dot([fg.ones(2, 3), fg.ones(4, 5)]),
            r"shapes \[2, 3\] and \[4, 5\] cannot be",
        ),
        (lambda: fg.linalg.matrix_power(fg.ones(2, 3), 2), "square matrices, but they are 2 by 3"),
        (lambda: fg.linalg.vecdot(fg.ones(3), fg.ones(3, dtype=fg.float64)), "same dtype"),
        (lambda: fg.linalg.cond(fg.ones(2, 3), 1), r"cond\(ord=1\): A must be batches of square"),
    ],
)
def test_errors_match_torch(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()
