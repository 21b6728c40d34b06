"""Custom autograd.Function: forward/backward styles, every ctx method,
errors, double backward, once_differentiable, legacy classes, threads,
and forward-mode AD through ``jvp``.

Oracles: NumPy values, hand-derived derivatives and float64 central finite
differences (``gradcheck_util.check_grad``)."""

from __future__ import annotations

import gc
import threading
import warnings
import weakref

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import numpy as np
import pytest
from custom_functions import Cube, Double, Square, last_entry_scaled, scaled_pair
from ferrograd.autograd import Function
from ferrograd.autograd.function import (
    BackwardCFunction,
    FunctionCtx,
    InplaceFunction,
    NestedIOFunction,
    once_differentiable,
)
from gradcheck_util import check_forward, check_grad


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        # Without save_for_forward, saved_tensors is what backward gets.
        (y,) = ctx.saved_tensors
        return t * y


class ScaleShift(Function):
    """(x * k + b, x.sum()) with a Python-number scale and an optional bias."""

    @staticmethod
    def forward(x, k, b=None):
        out = x * k
        if b is not None:
            out = out + b
        return out, x.sum()

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, k, _ = inputs
        ctx.k = k

    @staticmethod
    def backward(ctx, g_out, g_sum):
        gx = g_out * ctx.k + g_sum
        gb = g_out if ctx.needs_input_grad[2] else None
        return gx, None, gb


def leaf(values, dtype=fg.float64):
    return fg.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=True)


def in_place(update, grad_scale):
    """A Function that updates its input in place with ``update``, marks it
    dirty and returns it; its backward multiplies by ``grad_scale``."""

    class InPlace(Function):
        @staticmethod
        def forward(ctx, x):
            update(x)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * grad_scale

    return InPlace


class _OnceDifferentiableSquare(Square):
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        assert not fg.is_grad_enabled()
        return Square.backward(ctx, g)


RNG = np.random.default_rng(7)


def test_exp_values_gradient_and_node():
    a = RNG.uniform(-1, 1, size=5)
    x = leaf(a)
    y = Exp.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), np.exp(a), rtol=1e-14)
    assert y.requires_grad and not y.is_leaf
    node = y.grad_fn
    assert node.name() == "ExpBackward"
    assert type(node).__name__ == "ExpBackward"
    assert isinstance(node, fg.autograd.graph.Node)
    assert isinstance(node, BackwardCFunction) and isinstance(node, FunctionCtx)
    ((acc, nr),) = node.next_functions
    assert acc.name().endswith("AccumulateGrad") and nr == 0
    assert acc.variable.data_ptr() == x.data_ptr()
    v = RNG.uniform(-1, 1, size=5)
    y.backward(fg.tensor(v))
    np.testing.assert_allclose(x.grad.numpy(), v * np.exp(a), rtol=1e-14)


def test_exp_first_and_second_order_against_finite_differences():
    check_grad(lambda x: Exp.apply(x), [RNG.uniform(-1, 1, size=(2, 3))], second_order=True)


def test_exp_composes_with_builtin_ops_at_second_order():
    check_grad(lambda x, w: Exp.apply(x * w).sum(0) * w.sin(), [RNG.uniform(-1, 1, (2, 3))] * 2)


def test_setup_context_style_with_numbers_defaults_and_two_outputs():
    a, bb = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, 4)
    x, b = leaf(a), leaf(bb)
    out, s = ScaleShift.apply(x, 3.0, b)
    np.testing.assert_allclose(out.detach().numpy(), 3 * a + bb)
    np.testing.assert_allclose(s.item(), a.sum())
    assert out.grad_fn is not None and s.grad_fn == out.grad_fn
    assert out.output_nr == 0 and s.output_nr == 1
    (out.sum() * 2 + s * 5).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2 * 3.0 + 5))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 2.0))
    # The default for b is bound, so backward still returns three values.
    x.grad = None
    out, s = ScaleShift.apply(x, k=2.0)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))


def test_needs_input_grad_and_none_for_inputs_that_need_none():
    seen = {}

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b, scale):
            seen["forward"] = ctx.needs_input_grad
            ctx.save_for_backward(a, b)
            ctx.scale = scale
            return a * b * scale

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen["backward"] = ctx.needs_input_grad
            ga = g * b * ctx.scale if ctx.needs_input_grad[0] else None
            gb = g * a * ctx.scale if ctx.needs_input_grad[1] else None
            return ga, gb, None

    x = leaf([1.0, 2.0])
    c = fg.tensor([3.0, 4.0], dtype=fg.float64)
    Mul.apply(x, c, 0.5).sum().backward()
    assert seen["forward"] == (True, False, False) == seen["backward"]
    np.testing.assert_allclose(x.grad.numpy(), [1.5, 2.0])
    with fg.no_grad():
        y = Mul.apply(x, c, 2.0)
    assert seen["forward"] == (False, False, False)
    assert not y.requires_grad and y.grad_fn is None


def test_saved_tensors_version_check_and_freeing():
    x = leaf([1.0, 2.0])
    h = x * 1
    y = Square.apply(h)
    with fg.no_grad():
        h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()

    y = Square.apply(x * 1)
    ctx = y.grad_fn
    assert len(ctx.saved_tensors) == 1
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2 * np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        _ = ctx.saved_tensors


def test_saved_output_comes_back_attached_and_graph_is_freed():
    x = leaf([0.3, -0.2])
    y = Exp.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert saved.grad_fn == y.grad_fn
    ref = weakref.ref(y.grad_fn)
    del y, saved
    gc.collect()
    assert ref() is None


def test_save_for_backward_rejects_non_tensors():
    class Bad(Double):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

    with pytest.raises(
        TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"
    ):
        Bad.apply(leaf([1.0]))


def test_arbitrary_ctx_attributes_and_none_saved():
    class Affine(Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.shape = tuple(x.shape)
            ctx.note = {"w": float(w.sum())}
            ctx.save_for_backward(None, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            none, w = ctx.saved_tensors
            assert none is None and ctx.shape == (3,) and ctx.note["w"] == 6.0
            return g * w, None

    x = leaf([1.0, 1.0, 1.0])
    Affine.apply(x, fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2.0, 3.0])


def test_mark_dirty_in_place_custom_op():
    class AddOne_(in_place(lambda x: x.add_(1), grad_scale=3)):  # a deliberately visible factor
        pass

    a = leaf([1.0, 2.0])
    h = a * 2
    out = AddOne_.apply(h)
    assert out.data_ptr() == h.data_ptr()
    np.testing.assert_allclose(h.detach().numpy(), [3.0, 5.0])
    assert h.grad_fn.name() == "AddOne_Backward"
    (h * h).sum().backward()
    # d/da of (3*(2a+1))... backward factor 3 applied to 2*h, then MulBackward(2).
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.array([3.0, 5.0]) * 3 * 2)

    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        AddOne_.apply(leaf([1.0]))


def test_mark_dirty_on_a_view_rebases_its_base():
    Double_ = in_place(lambda x: x.mul_(2), grad_scale=2)
    a = leaf([1.0, 2.0, 3.0, 4.0])
    base = a * 1
    Double_.apply(base[1:3])
    np.testing.assert_allclose(base.detach().numpy(), [1.0, 4.0, 6.0, 4.0])
    assert base.grad_fn.name() == "CopySlices"
    base.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 2.0, 2.0, 1.0])


def test_mark_dirty_errors():
    class NotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="were not returned as output"):
        NotReturned.apply(leaf([1.0]) * 1)

    class NotInput(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 1
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Only input Tensors should be given to ctx.mark_dirty"):
        NotInput.apply(leaf([1.0]))


def test_mark_non_differentiable_and_materialized_zeros():
    received = {}

    class WithArgmax(Function):
        @staticmethod
        def forward(ctx, x):
            m = x.amax()
            idx = x.argmax()
            scaled = m * 1.0
            ctx.mark_non_differentiable(scaled)
            ctx.save_for_backward(idx)
            return x * 2, scaled, idx

        @staticmethod
        def backward(ctx, g, g_scaled, g_idx):
            received["g_scaled"] = g_scaled
            received["g_idx"] = g_idx
            return g * 2

    a = np.array([3.0, 1.0, 2.0])
    x = leaf(a)
    y, scaled, idx = WithArgmax.apply(x)
    assert not scaled.requires_grad and scaled.grad_fn is None and scaled.item() == 3.0
    assert not idx.requires_grad and idx.item() == 0
    w = np.array([10.0, 20.0, 30.0])
    (y * fg.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * w)
    # Non-differentiable outputs get zero gradients (materialized).
    assert received["g_scaled"].item() == 0.0 and received["g_scaled"].dtype == fg.float64
    assert received["g_idx"].item() == 0

    class FloatFlag(Function):
        @staticmethod
        def forward(ctx, x):
            flag = (x > 0).to(fg.float64)
            ctx.mark_non_differentiable(flag)
            return x * 2, flag

        @staticmethod
        def backward(ctx, g, g_flag):
            return g * 2

    y, flag = FloatFlag.apply(x)
    assert y.requires_grad and not flag.requires_grad


def test_set_materialize_grads_false_passes_none():
    received = []
    base = scaled_pair(2, 3)  # set_materialize_grads(False) in forward

    class Pair(base):
        @staticmethod
        def backward(ctx, g1, g2):
            received.append((g1, g2))
            return base.backward(ctx, g1, g2)

    x = leaf([1.0, 2.0])
    a, _ = Pair.apply(x)
    a.sum().backward()
    g1, g2 = received[-1]
    assert g2 is None and g1 is not None
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_materialize_default_gives_zeros_for_unused_outputs():
    received = []

    class Pair(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            received.append(g2)
            return g1 * 2 + g2 * 3

    x = leaf([1.0, 2.0])
    a, _ = Pair.apply(x)
    a.sum().backward()
    assert received[-1] is not None
    np.testing.assert_array_equal(received[-1].numpy(), [0.0, 0.0])


def test_backward_result_errors():
    def make(result_fn, nin=1):
        class F(Function):
            @staticmethod
            def forward(ctx, x, *rest):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return result_fn(g)

        return F

    x = leaf([1.0, 2.0])
    with pytest.raises(
        RuntimeError, match=r"returned an incorrect number of gradients \(expected 1, got 2\)"
    ):
        make(lambda g: (g, g)).apply(x).sum().backward()
    with pytest.raises(
        RuntimeError,
        match=r"returned an invalid gradient at index 0 - got \[3\] but expected shape compatible with \[2\]",
    ):
        make(lambda g: fg.ones(3, dtype=fg.float64)).apply(x).sum().backward()
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got int\)"):
        make(lambda g: 3).apply(x).sum().backward()
    with pytest.raises(
        RuntimeError, match="different than None at position 2, but the corresponding forward"
    ):
        make(lambda g: (g, g)).apply(x, 5).sum().backward()
    # Extra trailing Nones are accepted.
    x.grad = None
    make(lambda g: (g * 4, None, None)).apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])
    # A broadcastable gradient is summed to the input's shape, as for built-in nodes.
    x.grad = None
    make(lambda g: fg.ones(3, 2, dtype=fg.float64)).apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    # Returning None for an input that requires grad leaves no gradient.
    x.grad = None
    make(lambda g: None).apply(x).sum().backward()
    assert x.grad is None


def test_exceptions_keep_their_type():
    class Raise(Double):
        @staticmethod
        def backward(ctx, g):
            raise KeyError("from backward")

    class RaiseForward(Double):
        @staticmethod
        def forward(ctx, x):
            raise ValueError("from forward")

    x = leaf([1.0])
    with pytest.raises(KeyError, match="from backward"):
        Raise.apply(x).sum().backward()
    with pytest.raises(ValueError, match="from forward"):
        RaiseForward.apply(x)
    assert fg.is_grad_enabled()


def test_exception_from_custom_backward_inside_parallel_backward():
    class Fail(Double):
        @staticmethod
        def backward(ctx, g):
            raise LookupError("branch failed")

    w = fg.randn(128, 128, dtype=fg.float64, requires_grad=True)
    branches = []
    for i in range(6):
        h = (w @ w).tanh()
        if i == 3:
            h = Fail.apply(h)
        branches.append(h.sum())
    total = sum(branches[1:], branches[0])
    before = fg._core._parallel_waves()
    with pytest.raises(LookupError, match="branch failed"):
        total.backward()
    assert fg._core._parallel_waves() > before


def test_returned_input_is_a_new_tensor_with_history():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = leaf([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and y.data_ptr() == x.data_ptr()
    assert y.grad_fn.name() == "IdentityBackward" and x.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_non_tensor_and_integer_outputs_pass_through():
    class Stats(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 7, x.argmax(), None

        @staticmethod
        def backward(ctx, g, g_int, g_arg, g_none):
            assert g_int is None and g_none is None
            return g * 2

    x = leaf([1.0, 3.0])
    y, seven, am, nothing = Stats.apply(x)
    assert seven == 7 and nothing is None and am.item() == 1 and not am.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_double_backward_through_differentiable_backward():
    a = np.array([0.5, -1.5, 2.0])
    x = leaf(a)
    (g,) = fg.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * a**2)
    (g2,) = fg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), 6 * a)
    check_grad(lambda t: Cube.apply(t), [a.reshape(1, 3)], second_order=True)


def test_once_differentiable():
    x = leaf([1.0, -2.0])
    y = _OnceDifferentiableSquare.apply(x)
    # The cotangent requires grad, so the result must be differentiable.
    v = leaf([1.0, 1.0])
    (g,) = fg.autograd.grad(y, x, v, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [2.0, -4.0])
    assert g.requires_grad and g.grad_fn.name() == "DelayedError"
    with pytest.raises(
        RuntimeError, match="trying to differentiate twice a function that was marked with @once"
    ):
        g.sum().backward()
    # Without create_graph nothing is wrapped.
    y2 = _OnceDifferentiableSquare.apply(x)
    (g,) = fg.autograd.grad(y2.sum(), x)
    assert not g.requires_grad


def test_jvp_vmap_and_backward_vjp_defaults():
    assert Exp.generate_vmap_rule is False
    with pytest.raises(NotImplementedError, match="jvp function for custom autograd.Function"):
        ScaleShift.jvp(None, None)
    with pytest.raises(NotImplementedError, match="override the vmap staticmethod"):
        Exp.vmap(None, None)

    class Both(Double):
        @staticmethod
        def vjp(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(leaf([1.0])).sum().backward()

    class VjpOnly(Function):
        """Double with its backward given as ``vjp`` instead, and a jvp."""

        forward = staticmethod(Double.forward)
        vjp = staticmethod(Double.backward)

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    x = leaf([1.0])
    VjpOnly.apply(x).sum().backward()
    assert x.grad.item() == 2.0


def test_instantiation_is_deprecated_and_legacy_call_refused():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Exp()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        f(leaf([1.0]))


def test_inplace_function_flag():
    with pytest.warns(DeprecationWarning):
        f = InplaceFunction(inplace=True)
    assert f.inplace is True and isinstance(f, Function)


def test_nested_io_function():
    class NestedAddMul(NestedIOFunction):
        def forward_extended(self, pair, scale):
            a, b = pair
            self.save_for_backward(a, (b,))
            self.scale = scale
            return (a + b) * scale, [a * b]

        def backward_extended(self, g_sum, g_list):
            a, (b,) = self.saved_tensors
            (g_prod,) = g_list
            s = self.scale
            return (g_sum * s + g_prod * b, g_sum * s + g_prod * a), None

    a, b = leaf([1.0, 2.0]), leaf([3.0, 5.0])
    with pytest.warns(DeprecationWarning):
        fn = NestedAddMul()
    s, (p,) = fn((a, b), 2.0)
    np.testing.assert_allclose(s.detach().numpy(), [8.0, 14.0])
    np.testing.assert_allclose(p.detach().numpy(), [3.0, 10.0])
    (s.sum() + p.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0 + 3.0, 2.0 + 5.0])
    np.testing.assert_allclose(b.grad.numpy(), [2.0 + 1.0, 2.0 + 2.0])


def test_node_hooks_and_metadata_on_the_context():
    seen = []
    x = leaf([1.0, 2.0])
    y = Exp.apply(x)
    y.grad_fn.metadata["tag"] = "mine"
    y.grad_fn.register_hook(lambda gin, gout: seen.append((gin[0].numpy().copy(), gout[0].numpy().copy())))
    assert y.grad_fn.metadata["tag"] == "mine"
    y.sum().backward()
    ((gin, gout),) = seen
    np.testing.assert_allclose(gout, [1.0, 1.0])
    np.testing.assert_allclose(gin, np.exp([1.0, 2.0]))


def test_float32_inputs_and_dtype_cast():
    class Half(Function):
        @staticmethod
        def forward(ctx, x):
            return x / 2

        @staticmethod
        def backward(ctx, g):
            return (g / 2).to(fg.float64)

    x = fg.tensor([1.0, 2.0], requires_grad=True)
    Half.apply(x).sum().backward()
    assert x.grad.dtype == fg.float32
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.5])


def test_custom_functions_from_eight_threads():
    a = RNG.uniform(-1, 1, size=16)
    shared = leaf(a)
    errors = []
    results = [None] * 8
    n_iter = 40

    def work(k):
        try:
            own = leaf(np.full(16, 0.1 * k))
            for _ in range(n_iter):
                out, s = ScaleShift.apply(shared, float(k), own)
                (Exp.apply(out).sum() + s).backward()
            results[k] = own.grad.numpy().copy()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    expected_shared = np.zeros(16)
    for k in range(8):
        e = np.exp(k * a + 0.1 * k)
        np.testing.assert_allclose(results[k], n_iter * e, rtol=1e-12)
        expected_shared += n_iter * (k * e + 1)
    np.testing.assert_allclose(shared.grad.numpy(), expected_shared, rtol=1e-12)


def test_concurrent_backward_through_one_retained_custom_graph():
    x = leaf(RNG.uniform(-1, 1, size=8))
    y = Exp.apply(x * 2).sum()
    grads = [None] * 8

    def work(k):
        (grads[k],) = fg.autograd.grad(y, x, retain_graph=True)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    expected = 2 * np.exp(2 * x.detach().numpy())
    for g in grads:
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-14)


class _SinCos(Function):
    """Two outputs, a number argument and a tensor that needs no grad."""

    @staticmethod
    def forward(ctx, x, w, k):
        ctx.save_for_backward(x, w)
        ctx.k = k
        return (x * w).sin() * k, (x * w).cos()

    @staticmethod
    def backward(ctx, gs, gc):
        x, w = ctx.saved_tensors
        common = gs * ctx.k * (x * w).cos() - gc * (x * w).sin()
        gx = common * w if ctx.needs_input_grad[0] else None
        gw = common * x if ctx.needs_input_grad[1] else None
        return gx, gw, None


class _WrongCube(Cube):
    """The derivative is off by 10% at the last element only."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x * last_entry_scaled(x, 1.1)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_and_gradgradcheck_accept_correct_functions(fast_mode):
    x = fg.tensor(RNG.uniform(0.5, 1.5, (2, 3)), dtype=fg.float64, requires_grad=True)
    w = fg.tensor(RNG.uniform(-1, 1, (2, 3)), dtype=fg.float64, requires_grad=True)
    assert fg.autograd.gradcheck(Cube.apply, (x,), fast_mode=fast_mode)
    assert fg.autograd.gradgradcheck(Cube.apply, (x,), fast_mode=fast_mode)
    assert fg.autograd.gradcheck(_SinCos.apply, (x, w, 2.5), fast_mode=fast_mode)
    assert fg.autograd.gradgradcheck(_SinCos.apply, (x, w, 2.5), fast_mode=fast_mode)
    assert fg.autograd.gradcheck(Exp.apply, (x,), fast_mode=fast_mode, check_batched_grad=True)
    assert fg.autograd.gradgradcheck(Exp.apply, (x,), fast_mode=fast_mode)
    # Forward mode through jvp, and forward-over-reverse through backward
    # (Exp's backward reads its saved output).
    for fn in (Cube.apply, Exp.apply):
        assert fg.autograd.gradcheck(
            fn, (x,), fast_mode=fast_mode, check_forward_ad=True, check_batched_forward_grad=True
        )
        assert fg.autograd.gradgradcheck(fn, (x,), fast_mode=fast_mode, check_fwd_over_rev=True)


def test_gradcheck_catches_a_wrong_custom_backward_and_says_where():
    a = RNG.uniform(0.5, 1.5, (2, 3))
    x = fg.tensor(a, dtype=fg.float64, requires_grad=True)
    with pytest.raises(fg.autograd.gradcheck.GradcheckError) as info:
        fg.autograd.gradcheck(_WrongCube.apply, (x,))
    msg = str(info.value)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    # Only d y[1,2] / d x[1,2] is wrong: flat row and column 5.
    assert "(row 5, column 5)" in msg and "input element (1, 2)" in msg
    assert f"analytical {float(3 * a[1, 2] ** 2 * 1.1):.10f}"[:22] in msg
    assert fg.autograd.gradcheck(_WrongCube.apply, (x,), raise_exception=False) is False
    assert fg.autograd.gradcheck(_WrongCube.apply, (x,), fast_mode=True, raise_exception=False) is False


def test_gradgradcheck_fails_for_once_differentiable_functions():
    x = fg.tensor(RNG.uniform(-1, 1, 4), dtype=fg.float64, requires_grad=True)
    assert fg.autograd.gradcheck(_OnceDifferentiableSquare.apply, (x,))
    # The first derivative is cut off from the inputs, so its Jacobian is
    # zero where the true second derivative (2 * v) is not.
    with pytest.raises(fg.autograd.gradcheck.GradcheckError, match="Jacobian mismatch for output 0"):
        fg.autograd.gradgradcheck(_OnceDifferentiableSquare.apply, (x,))


# ---------------------------------------------------------------------------
# Forward-mode AD: Function.jvp


class _MulSin(Function):
    """x * sin(y), written with ferrograd ops in every method."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.fwd_grad_enabled = fg._core._is_fwd_grad_enabled()
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        return x * y.sin()

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y.sin(), g * x * y.cos()

    @staticmethod
    def jvp(ctx, tx, ty):
        assert not fg._core._is_fwd_grad_enabled()
        x, y = ctx.saved_tensors
        return tx * y.sin() + x * y.cos() * ty


def _mul_sin_np(x, y):
    return x * np.sin(y)


def _fd_along(f, arrays, tangents, eps=1e-6):
    """(f(a + eps t) - f(a - eps t)) / (2 eps), in float64 NumPy."""
    plus = f(*[a + eps * t for a, t in zip(arrays, tangents, strict=True)])
    minus = f(*[a - eps * t for a, t in zip(arrays, tangents, strict=True)])
    return (plus - minus) / (2 * eps)


def _t(a):
    return fg.tensor(np.asarray(a, dtype=np.float64), dtype=fg.float64)


@pytest.mark.parametrize("which", ["both", "x", "y"])
def test_jvp_tangent_matches_finite_differences(which):
    a, b = RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (2, 3))
    ta = RNG.standard_normal((2, 3)) if which != "y" else np.zeros((2, 3))
    tb = RNG.standard_normal((2, 3)) if which != "x" else np.zeros((2, 3))
    x, y = leaf(a), leaf(b)
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, _t(ta)) if which != "y" else x
        dy = fwAD.make_dual(y, _t(tb)) if which != "x" else y
        out = _MulSin.apply(dx, dy)
        primal, tangent = fwAD.unpack_dual(out)
        np.testing.assert_allclose(primal.detach().numpy(), _mul_sin_np(a, b), rtol=1e-14)
        want = _fd_along(_mul_sin_np, [a, b], [ta, tb])
        np.testing.assert_allclose(tangent.detach().numpy(), want, rtol=1e-7, atol=1e-9)
        # The reverse graph is recorded as usual; forward ran with forward
        # AD off (its ops computed no tangents).
        assert out.grad_fn.name() == "_MulSinBackward"
        assert out.grad_fn.fwd_grad_enabled is False
        assert fg._core._is_fwd_grad_enabled()
    # Outside the level nothing changes.
    out = _MulSin.apply(x, y)
    assert fwAD.unpack_dual(out).tangent is None


def test_jvp_against_check_forward_in_every_layout():
    # Tangents, <v, J t> == <J^T v, t> and reverse-over-forward, by finite
    # differences.
    check_forward(lambda x, y: _MulSin.apply(x, y), [RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (2, 3))])
    check_forward(lambda x: Exp.apply(x), [RNG.uniform(-1, 1, (3, 2))])


def test_save_for_forward_is_what_saved_tensors_returns_in_jvp():
    seen = {}

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(w)
            ctx.save_for_forward(w * 2, None)
            return x * w

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            seen["backward"] = len(ctx.saved_tensors)
            return g * w, None

        @staticmethod
        def jvp(ctx, tx, tw):
            w2, nothing = ctx.saved_tensors
            seen["jvp"] = (nothing, tw)
            return tx * w2 / 2

    x = leaf([1.0, 2.0])
    w = _t([3.0, -1.0])
    with fwAD.dual_level():
        out = Scale.apply(fwAD.make_dual(x, _t([1.0, 10.0])), w)
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.detach().numpy(), [3.0, -10.0])
    # w has no tangent: zeros (materialized), and None for the saved None.
    nothing, tw = seen["jvp"]
    assert nothing is None
    np.testing.assert_array_equal(tw.numpy(), [0.0, 0.0])
    # After jvp, saved_tensors is backward's again.
    assert len(out.grad_fn.saved_tensors) == 1 and out.grad_fn.saved_for_forward is None
    out.sum().backward()
    assert seen["backward"] == 1
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -1.0])


def test_jvp_gets_none_without_materialize_and_for_non_tensor_arguments():
    received = []

    class Affine(Function):
        @staticmethod
        def forward(ctx, x, b, k, materialize):
            ctx.set_materialize_grads(materialize)
            return x * k + b

        @staticmethod
        def backward(ctx, g):
            return g, g, None, None

        @staticmethod
        def jvp(ctx, tx, tb, tk, tm):
            received.append((tx, tb, tk, tm))
            return tx * 2 if tb is None else tx * 2 + tb

    x, b = leaf([1.0, 2.0]), _t([0.5, 0.5])
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, _t([1.0, -1.0]))
        for materialize in (True, False):
            out = Affine.apply(dx, b, 2.0, materialize)
            np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.detach().numpy(), [2.0, -2.0])
    (tx1, tb1, tk1, tm1), (tx2, tb2, tk2, tm2) = received
    np.testing.assert_array_equal(tb1.numpy(), [0.0, 0.0])
    assert tk1 is None and tm1 is None
    assert tb2 is None and tk2 is None and tm2 is None
    np.testing.assert_array_equal(tx1.numpy(), [1.0, -1.0])


def test_missing_jvp_raises_not_implemented_in_forward_mode():
    x = leaf([1.0, 2.0])
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, _t([1.0, 1.0]))
        with pytest.raises(
            NotImplementedError,
            match="You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD",
        ):
            Double.apply(dx)
        # Forward AD is back on for this thread after the error.
        assert fg._core._is_fwd_grad_enabled()
        # Without tangents on the inputs, jvp is not needed.
        assert fwAD.unpack_dual(Double.apply(x)).tangent is None
    Double.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_jvp_result_errors():
    def make(result):
        class F(Function):
            @staticmethod
            def forward(ctx, x):
                idx = x.argmax()
                flag = x * 0
                ctx.mark_non_differentiable(flag)
                return x * 2, flag, idx, "label"

            @staticmethod
            def backward(ctx, *grads):
                return grads[0] * 2

            @staticmethod
            def jvp(ctx, t):
                return result(t)

        return F

    x = leaf([1.0, 3.0])
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, _t([1.0, 1.0]))
        with pytest.raises(
            RuntimeError,
            match=r"Function's jvp returned an invalid number of forward gradients \(expected 4 but got 1\)",
        ):
            make(lambda t: t * 2).apply(dx)
        with pytest.raises(RuntimeError, match=r"expected 4 but got 5"):
            make(lambda t: (t * 2, None, None, None, None)).apply(dx)
        for pos in (1, 2):
            with pytest.raises(
                RuntimeError,
                match=f"jvp returned a gradient at position {pos}, but the corresponding forward output "
                "is not a differentiable Tensor",
            ):
                make(lambda t, pos=pos: tuple(t if k in (0, pos) else None for k in range(4))).apply(dx)
        with pytest.raises(RuntimeError, match="at position 3, but the corresponding forward output"):
            make(lambda t: (t, None, None, t)).apply(dx)
        with pytest.raises(RuntimeError, match="object of type float at position 0"):
            make(lambda t: (1.0, None, None, None)).apply(dx)
        with pytest.raises(RuntimeError, match="different size than that of the original Tensor"):
            make(lambda t: (t[:1], None, None, None)).apply(dx)
        y, flag, idx, label = make(lambda t: (t * 2, None, None, None)).apply(dx)
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.detach().numpy(), [2.0, 2.0])
        assert fwAD.unpack_dual(flag).tangent is None and label == "label" and idx.item() == 1


def test_forward_over_reverse_through_the_function():
    # The backward, written with ferrograd ops, runs on dual tensors: the
    # tangent of the gradient is the directional derivative of the vjp.
    a, b = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, 4)
    ta, tb = RNG.standard_normal(4), RNG.standard_normal(4)
    v, tv = RNG.standard_normal(4), RNG.standard_normal(4)

    def vjp_np(x, y, v):
        return np.concatenate([v * np.sin(y), v * x * np.cos(y)])

    with fwAD.dual_level():
        dx = fwAD.make_dual(leaf(a), _t(ta))
        dy = fwAD.make_dual(leaf(b), _t(tb))
        dv = fwAD.make_dual(_t(v), _t(tv))
        out = _MulSin.apply(dx, dy)
        gx, gy = fg.autograd.grad(out, (dx, dy), dv, create_graph=True)
        got = np.concatenate([fwAD.unpack_dual(g).tangent.detach().numpy() for g in (gx, gy)])
        values = np.concatenate([g.detach().numpy() for g in (gx, gy)])
    np.testing.assert_allclose(values, vjp_np(a, b, v), rtol=1e-13)
    want = _fd_along(vjp_np, [a, b, v], [ta, tb, tv])
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_forward_over_reverse_with_a_saved_output():
    # Exp saves its output: backward gets a copy attached to the node, which
    # carries the output's tangent while the level is open.
    a, ta, v = RNG.uniform(-1, 1, 3), RNG.standard_normal(3), RNG.standard_normal(3)
    with fwAD.dual_level():
        dx = fwAD.make_dual(leaf(a), _t(ta))
        y = Exp.apply(dx)
        (saved,) = y.grad_fn.saved_tensors
        np.testing.assert_allclose(fwAD.unpack_dual(saved).tangent.detach().numpy(), ta * np.exp(a))
        (g,) = fg.autograd.grad(y, dx, _t(v), create_graph=True)
        got = fwAD.unpack_dual(g).tangent.detach().numpy()
    np.testing.assert_allclose(got, v * np.exp(a) * ta, rtol=1e-13)
    # After the level, the saved output has no tangent.
    (saved,) = y.grad_fn.saved_tensors
    assert fwAD.unpack_dual(saved).tangent is None
    with fwAD.dual_level():
        (saved,) = y.grad_fn.saved_tensors
        assert fwAD.unpack_dual(saved).tangent is None


def test_reverse_over_forward_through_the_function():
    # jvp uses differentiable ops, so the tangent has a graph back to the
    # primals and to the input tangent.
    a, b = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    ta, tb, w = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)

    def tangent_dot(x, y):
        return np.sum(w * (ta * np.sin(y) + x * np.cos(y) * tb))

    x, y = leaf(a), leaf(b)
    tx = leaf(ta)
    with fwAD.dual_level():
        out = _MulSin.apply(fwAD.make_dual(x, tx), fwAD.make_dual(y, _t(tb)))
        tangent = fwAD.unpack_dual(out).tangent
    assert tangent.requires_grad
    gx, gy, gt = fg.autograd.grad(tangent, (x, y, tx), _t(w))
    eps = 1e-6
    for got, k in ((gx, 0), (gy, 1)):
        want = np.zeros(3)
        for i in range(3):
            p = [a.copy(), b.copy()]
            m = [a.copy(), b.copy()]
            p[k][i] += eps
            m[k][i] -= eps
            want[i] = (tangent_dot(*p) - tangent_dot(*m)) / (2 * eps)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-7, atol=1e-9)
    # d <w, J t> / dt = J^T w.
    np.testing.assert_allclose(gt.numpy(), w * np.sin(b), rtol=1e-13)


def test_setup_context_style_function_with_jvp():
    class ScaleShiftFwd(ScaleShift):
        @staticmethod
        def setup_context(ctx, inputs, output):
            _, k, b = inputs
            ctx.k = k
            ctx.has_b = b is not None
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, tx, tk, tb):
            assert tk is None
            (x,) = ctx.saved_tensors
            assert x.shape == tx.shape
            t_out = tx * ctx.k
            if tb is not None:
                t_out = t_out + tb
            # jvp runs with forward AD off: any op works here.
            return t_out, tx.sum()

    a, bb = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    ta, tb = RNG.standard_normal(3), RNG.standard_normal(3)
    with fwAD.dual_level():
        dx = fwAD.make_dual(leaf(a), _t(ta))
        db = fwAD.make_dual(leaf(bb), _t(tb))
        out, s = ScaleShiftFwd.apply(dx, 3.0, db)
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.detach().numpy(), 3 * ta + tb, rtol=1e-14)
        np.testing.assert_allclose(fwAD.unpack_dual(s).tangent.item(), ta.sum(), rtol=1e-12)
        # Defaults are bound: jvp gets a tangent for b even when b is left out.
        out, _ = ScaleShiftFwd.apply(dx, k=2.0)
        np.testing.assert_allclose(fwAD.unpack_dual(out).tangent.detach().numpy(), 2 * ta, rtol=1e-14)


def test_input_returned_unchanged_gets_the_tangent_jvp_gives():
    class IdAndDouble(Function):
        @staticmethod
        def forward(ctx, x):
            return x, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 2 * g2

        @staticmethod
        def jvp(ctx, t):
            return t, t * 2

    x = leaf([1.0, -2.0])
    with fwAD.dual_level():
        dx = fwAD.make_dual(x, _t([0.5, 1.0]))
        same, double = IdAndDouble.apply(dx)
        assert same is not dx and same.data_ptr() == dx.data_ptr()
        np.testing.assert_allclose(fwAD.unpack_dual(same).tangent.detach().numpy(), [0.5, 1.0])
        np.testing.assert_allclose(fwAD.unpack_dual(double).tangent.detach().numpy(), [1.0, 2.0])


@pytest.mark.parametrize("in_place_tangent", [True, False])
def test_mark_dirty_with_forward_ad(in_place_tangent):
    class Scale_(Function):
        @staticmethod
        def forward(ctx, x, k):
            x.mul_(k)
            ctx.mark_dirty(x)
            ctx.k = k
            return x

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

        @staticmethod
        def jvp(ctx, t, _):
            return t.mul_(ctx.k) if in_place_tangent else t * ctx.k

    class AddInto_(Function):
        """x += y in place; x may have no tangent of its own."""

        @staticmethod
        def forward(ctx, x, y):
            x.add_(y)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g

        @staticmethod
        def jvp(ctx, tx, ty):
            return tx.add_(ty) if in_place_tangent else tx + ty

    a = leaf([1.0, 2.0])
    with fwAD.dual_level():
        h = a * 1
        dh = fwAD.make_dual(h, _t([1.0, -1.0]))
        out = Scale_.apply(dh, 3.0)
        assert out is dh
        np.testing.assert_allclose(dh.detach().numpy(), [3.0, 6.0])
        np.testing.assert_allclose(fwAD.unpack_dual(dh).tangent.detach().numpy(), [3.0, -3.0])
        # dh is a view of h: h's history is rebased through the view.
        assert h.grad_fn.name() == "CopySlices"
        # The input modified in place had no tangent: it gets y's.
        z = a * 2
        y = fwAD.make_dual(_t([0.5, 0.5]), _t([2.0, 4.0]))
        out = AddInto_.apply(z, y)
        assert out is z
        np.testing.assert_allclose(z.detach().numpy(), [2.5, 4.5])
        np.testing.assert_allclose(fwAD.unpack_dual(z).tangent.detach().numpy(), [2.0, 4.0])
    (dh * 1 + z).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0 + 2.0, 3.0 + 2.0])


def test_jvp_in_a_batched_level_runs_row_by_row():
    a, b = RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (2, 3))
    ts = RNG.standard_normal((4, 2, 3))
    x, y = leaf(a), leaf(b)
    fg._core._enter_dual_level(batch=4)
    try:
        out = _MulSin.apply(fwAD.make_dual(x, _t(ts)), y)
        got = fwAD.unpack_dual(out).tangent.detach().numpy()
    finally:
        fg._core._exit_dual_level()
    assert got.shape == (4, 2, 3)
    np.testing.assert_allclose(got, ts * np.sin(b), rtol=1e-14)
