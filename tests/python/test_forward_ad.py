"""forward_ad's API: dual levels, make_dual/unpack_dual and their errors,
tangents of views and in-place ops, the two mixed orders
(forward-over-reverse and reverse-over-forward) and threads.

Per-op tangents are checked by ``check_grad`` (gradcheck_util.py), which
runs a forward-mode check next to every reverse-mode one.
"""

from __future__ import annotations

import threading

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import numpy as np
import pytest
from ferrograd.autograd import functional as F

RNG = np.random.default_rng(77)


def T(a, **kw) -> fg.Tensor:
    return fg.tensor(np.asarray(a, dtype=np.float64), **kw)


def N(t) -> np.ndarray:
    return t.detach().numpy()


def test_level_index_and_tangent_lifetime():
    x, t = T([1.0, 2.0]), T([0.5, -1.0])
    with fwAD.dual_level() as level:
        assert level == 0
        y = fwAD.make_dual(x, t).exp()
        np.testing.assert_allclose(N(fwAD.unpack_dual(y).tangent), np.exp([1.0, 2.0]) * [0.5, -1.0])
    # After the level closes, the tangent is gone and a new level starts clean.
    assert fwAD.unpack_dual(y).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(y).tangent is None


def test_unpack_dual_returns_a_named_tuple_with_a_plain_primal():
    x, t = T([1.0, 2.0]), T([3.0, 4.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        u = fwAD.unpack_dual(d)
        assert isinstance(u, fwAD.UnpackedDualTensor)
        primal, tangent = u
        assert u.primal is primal and u.tangent is tangent
        np.testing.assert_array_equal(N(primal), [1.0, 2.0])
        np.testing.assert_array_equal(N(tangent), [3.0, 4.0])
        assert fwAD.unpack_dual(primal).tangent is None
        # The primal is a view of the dual: same memory.
        assert primal.data_ptr() == d.data_ptr() == x.data_ptr()
        # A plain tensor unpacks to itself and no tangent.
        assert fwAD.unpack_dual(x).tangent is None


def test_tangent_with_the_primal_layout_is_used_as_is_else_copied():
    x = T(RNG.standard_normal((2, 3)))
    t = T(RNG.standard_normal((2, 3)))
    with fwAD.dual_level():
        same = fwAD.unpack_dual(fwAD.make_dual(x, t)).tangent
        assert same.data_ptr() == t.data_ptr()
        tt = T(RNG.standard_normal((3, 2))).t()
        copied = fwAD.unpack_dual(fwAD.make_dual(x, tt)).tangent
        assert copied.data_ptr() != tt.data_ptr()
        np.testing.assert_array_equal(N(copied), N(tt))


def test_dual_level_as_decorator():
    @fwAD.dual_level()
    def jvp_of_square(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t) * fwAD.make_dual(x, t)).tangent

    np.testing.assert_allclose(N(jvp_of_square(T([3.0]), T([1.0]))), [6.0])
    assert fg._core._current_dual_level() == -1


def test_errors():
    x = T([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at the moment$"):
            fwAD.enter_dual_level()
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex, but got: "
                                             "ferrograd.int64"):
            fwAD.make_dual(fg.tensor([1, 2]), x)
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex, but got: "
                                             "ferrograd.int64"):
            fwAD.make_dual(x, fg.tensor([1, 2]))
        with pytest.raises(RuntimeError, match=r"different size .* Tensor is of size \[2\] while the given "
                                               r"forward gradient is of size \[3\]"):
            fwAD.make_dual(x, T([1.0, 2.0, 3.0]))
        with pytest.raises(TypeError, match="tangent must be a Tensor"):
            fwAD.make_dual(x, [1.0, 2.0])
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=3)
    with pytest.raises(RuntimeError, match="does not exist"):
        fwAD.exit_dual_level()
    # The failed calls left no level behind.
    assert fg._core._current_dual_level() == -1


def test_make_dual_is_differentiable_with_respect_to_the_primal():
    x = T([0.3, 0.7], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, T([1.0, 1.0]))
        (d.sin().sum()).backward()
    np.testing.assert_allclose(N(x.grad), np.cos([0.3, 0.7]))


def test_inplace_op_updates_the_tangent():
    x, t = T([1.0, 2.0, 3.0]), T([1.0, 0.5, 0.25])
    want = 2 * N(x) * N(t)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.clone(), t)
        d.mul_(d)  # tangent 2 x t, written into t itself (used as is)
        np.testing.assert_allclose(N(fwAD.unpack_dual(d).tangent), want)
        np.testing.assert_allclose(N(t), want)
        d.fill_(4.0)  # a constant: zero tangent
        np.testing.assert_array_equal(N(fwAD.unpack_dual(d).tangent), [0.0, 0.0, 0.0])


def test_inplace_write_of_a_dual_into_a_view_gives_the_base_a_tangent():
    base = fg.zeros(5, dtype=fg.float64)
    view = base[1:4:2]
    with fwAD.dual_level():
        view.copy_(fwAD.make_dual(T([7.0, 8.0]), T([3.0, 4.0])))
        np.testing.assert_array_equal(N(fwAD.unpack_dual(base).tangent), [0.0, 3.0, 0.0, 4.0, 0.0])
        np.testing.assert_array_equal(N(fwAD.unpack_dual(view).tangent), [3.0, 4.0])
        # A view made before the write sees the base's tangent too.
        np.testing.assert_array_equal(N(fwAD.unpack_dual(base[3:]).tangent), [4.0, 0.0])
        # Writing through the base moves the view's tangent with it.
        base.mul_(2.0)
        np.testing.assert_array_equal(N(fwAD.unpack_dual(view).tangent), [6.0, 8.0])


@pytest.mark.parametrize(
    "op",
    [
        lambda a: fg.linalg.matrix_exp(0.3 * a),  # its formula slices a block matrix
        lambda a: fg.linalg.inv(a + 3 * fg.eye(4, dtype=fg.float64)).mT,  # column-major result
        lambda a: fg.linalg.eigh(a + a.mT).eigenvectors.mT,
    ],
)
def test_an_ops_tangent_has_its_outputs_strides_so_views_write_through(op):
    x, t = T(RNG.standard_normal((4, 4))), T(RNG.standard_normal((4, 4)))
    with fwAD.dual_level():
        y = op(fwAD.make_dual(x, t))
        tangent = fwAD.unpack_dual(y).tangent
        assert tangent.stride() == y.stride()
        before = N(tangent).copy()
        y.view(16)[::5] = 0.5  # the diagonal, a constant: its tangent becomes 0
        after = N(fwAD.unpack_dual(y).tangent)
    np.fill_diagonal(before, 0.0)
    np.testing.assert_array_equal(after, before)


def test_detach_drops_the_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(T([1.0]), T([1.0]))
        assert fwAD.unpack_dual(d.detach()).tangent is None
        assert fwAD.unpack_dual(d.exp().detach()).tangent is None


def test_no_grad_does_not_stop_forward_mode():
    with fwAD.dual_level(), fg.no_grad():
        d = fwAD.make_dual(T([2.0]), T([1.0]))
        np.testing.assert_allclose(N(fwAD.unpack_dual(d.log()).tangent), [0.5])


def test_reverse_over_forward_matches_finite_differences():
    # d/dx <w, J(x) t> for f(x) = tanh(x) * x
    x0, t, w = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(4)

    def tangent_dot(xv, requires_grad=False):
        x = T(xv, requires_grad=requires_grad)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, T(t))
            tan = fwAD.unpack_dual(d.tanh() * d).tangent
        return x, (tan * T(w)).sum()

    x, s = tangent_dot(x0, requires_grad=True)
    (g,) = fg.autograd.grad(s, x)
    eps = 1e-6
    fd = [
        (tangent_dot(x0 + eps * e)[1].item() - tangent_dot(x0 - eps * e)[1].item()) / (2 * eps)
        for e in np.eye(4)
    ]
    np.testing.assert_allclose(N(g), fd, rtol=1e-6, atol=1e-8)


def test_forward_over_reverse_hvp_equals_reverse_over_reverse():
    w = T(RNG.standard_normal((5, 5)))

    def f(x):
        return (w @ x).tanh().pow(2).sum()

    x, v = T(RNG.standard_normal(5)), T(RNG.standard_normal(5))
    xr = x.clone().requires_grad_()
    with fwAD.dual_level():
        d = fwAD.make_dual(xr, v)
        (g,) = fg.autograd.grad(f(d), d)
        hv_fwd = fwAD.unpack_dual(g).tangent
    _, hv_rev = F.hvp(f, x, v)
    np.testing.assert_allclose(N(hv_fwd), N(hv_rev), rtol=1e-10, atol=1e-12)


def test_tangents_are_seen_from_other_threads():
    x, t = T(RNG.standard_normal(3)), T(RNG.standard_normal(3))
    out = {}
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)

        def work():
            out["t"] = fwAD.unpack_dual(d.sin()).tangent

        th = threading.Thread(target=work)
        th.start()
        th.join()
    np.testing.assert_allclose(N(out["t"]), np.cos(N(x)) * N(t))


def test_batched_level_matches_rows():
    x = T(RNG.standard_normal(4))
    ts = RNG.standard_normal((3, 4))
    w = T(RNG.standard_normal((2, 4)))

    def f(d):
        return (w @ d.sin()).exp()

    fg._core._enter_dual_level(3)
    try:
        batched = N(fwAD.unpack_dual(f(fwAD.make_dual(x, T(ts)))).tangent)
    finally:
        fg._core._exit_dual_level()
    rows = []
    for r in range(3):
        with fwAD.dual_level():
            rows.append(N(fwAD.unpack_dual(f(fwAD.make_dual(x, T(ts[r])))).tangent))
    np.testing.assert_allclose(batched, np.stack(rows), rtol=1e-12)


def test_clone_of_a_transposed_tensor_keeps_strides_history_and_tangent():
    a = RNG.standard_normal((3, 2))
    x = T(a).t().detach().requires_grad_()
    t = T(RNG.standard_normal((3, 2))).t()
    with fwAD.dual_level():
        y = fwAD.make_dual(x, t).clone()
        assert y.stride() == x.stride()
        assert y.grad_fn.name() == "CloneBackward0"
        np.testing.assert_array_equal(N(fwAD.unpack_dual(y).tangent), N(t))
        (y * y).sum().backward()
    np.testing.assert_allclose(N(x.grad), 2 * a.T)


def test_make_dual_keeps_a_tangent_of_another_floating_dtype():
    # As torch 2.13: the tangent keeps its dtype on the dual, and the
    # formulas promote it with the primal (the output's tangent takes the
    # output's dtype). Oracle: the chain rule by hand in float64.
    xv, tv = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    with fwAD.dual_level():
        t = fg.tensor(tv, dtype=fg.float32)
        d = fwAD.make_dual(fg.tensor(xv, dtype=fg.float64), t)
        assert fwAD.unpack_dual(d).tangent is t
        y = (d.sin() * 3).exp()
        tangent = fwAD.unpack_dual(y).tangent
        assert tangent.dtype == fg.float64
        want = np.exp(3 * np.sin(xv)) * 3 * np.cos(xv) * tv
        np.testing.assert_allclose(tangent.numpy(), want, rtol=1e-12)
        primal = fg.tensor([1 + 1j, 2.0], dtype=fg.complex128)
        z = fwAD.make_dual(primal, fg.tensor([1.0, 0.5], dtype=fg.float32))
        w = fwAD.unpack_dual(z * z).tangent
        np.testing.assert_allclose(w.numpy(), 2 * np.array([1 + 1j, 2.0]) * np.array([1.0, 0.5]), rtol=1e-7)


_ROWS = [row[1] for row in fg._core._unary_rows()]


@pytest.mark.parametrize("name", _ROWS)
def test_a_float32_tangent_gives_what_its_float64_copy_gives(name):
    # The tangent's values are exact in float32, so promoting it first or
    # inside the formula must give the same bits.
    x = np.array([0.3, 0.7, 0.55])
    if name in ("acosh", "arccosh"):
        x = x + 1.5
    t = np.array([0.5, -1.25, 2.0])
    with fwAD.dual_level():
        got = fwAD.unpack_dual(getattr(fwAD.make_dual(fg.tensor(x), fg.tensor(t, dtype=fg.float32)), name)())
        want = fwAD.unpack_dual(getattr(fwAD.make_dual(fg.tensor(x), fg.tensor(t)), name)())
        assert got.tangent.dtype == want.tangent.dtype == fg.float64
        np.testing.assert_array_equal(got.tangent.numpy(), want.tangent.numpy())
