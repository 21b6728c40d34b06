"""gradcheck and gradgradcheck.

Oracles: the checks must pass on built-in differentiable ops (whose
gradients the other suites compare with finite differences and NumPy) and
must fail on backward passes made wrong on purpose with hooks: a hook that
scales a gradient (wrong first derivative), one that detaches it (wrong
second derivative only), one that adds random noise (nondeterministic), one
that casts it to float32 (wrong dtype); and on custom Functions whose
backward mishandles undefined (None) output gradients. The entry a failure message names is
checked against the derivative computed here by hand.
"""

from __future__ import annotations

import math
import random
import re
import warnings

import ferrograd as fg
import pytest
from custom_functions import (
    Cube,
    Double,
    last_entry_scaled,
    no_gradient_at_all,
    scaled_pair,
    when_no_output_has_a_gradient,
)
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.autograd.gradcheck import GradcheckError

pytestmark = pytest.mark.timeout(60)


def leaf(*values: float, shape: tuple[int, ...] | None = None) -> fg.Tensor:
    t = fg.tensor(list(values), dtype=fg.float64)
    if shape is not None:
        t = t.reshape(shape)
    return t.detach().requires_grad_(True)


def rand_leaf(*shape: int, seed: int) -> fg.Tensor:
    gen = fg.Generator()
    gen.manual_seed(seed)
    return (fg.rand(shape, generator=gen, dtype=fg.float64) * 2 - 1).requires_grad_(True)


def scaled_grad(x: fg.Tensor, factor: float = 1.5) -> fg.Tensor:
    """``x`` in the forward pass; its gradient is multiplied by ``factor``."""
    y = x * 1
    y.register_hook(lambda g: g * factor)
    return y


# --- API shape ------------------------------------------------------------


def test_names_match_torch():
    import ferrograd.autograd.gradcheck as module_by_import  # noqa: F401  (the module, via sys.modules)

    assert fg.autograd.gradcheck is gradcheck
    assert fg.autograd.gradgradcheck is gradgradcheck
    assert issubclass(GradcheckError, RuntimeError)
    assert fg.autograd.gradcheck.GradcheckError is GradcheckError
    assert fg.autograd.gradcheck.gradgradcheck is gradgradcheck
    from ferrograd.autograd.gradcheck import gradcheck as from_module

    assert from_module is gradcheck


def test_keyword_only_arguments():
    x = leaf(0.5)
    with pytest.raises(TypeError):
        gradcheck(fg.sin, (x,), 1e-6)  # eps is keyword-only, as in torch
    assert gradgradcheck(fg.sin, (x,), None, eps=1e-6)


# --- passing on built-in ops ---------------------------------------------


PASSING = {
    "sin": (lambda x: x.sin(), [(2, 3)]),
    "exp_mul": (lambda x, y: x.exp() * y, [(3,), (3,)]),
    "matmul": (lambda a, b: a @ b, [(2, 3), (3, 2)]),
    "sum": (lambda x: x.sum(), [(2, 3)]),
    "softmax": (lambda x: x.softmax(-1), [(2, 3)]),
    "broadcast_div": (lambda x, y: x / (y * y + 1), [(2, 3), (3,)]),
    "tanh_pow": (lambda x: x.tanh() ** 3, [(5,)]),
}


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name", sorted(PASSING))
def test_gradcheck_passes_on_builtin_ops(name, fast_mode):
    fn, shapes = PASSING[name]
    inputs = tuple(rand_leaf(*s, seed=k) for k, s in enumerate(shapes))
    assert gradcheck(fn, inputs, fast_mode=fast_mode, check_batched_grad=True) is True


def test_non_contiguous_input_passes_and_is_restored():
    base = rand_leaf(3, 2, seed=7).detach()
    x = base.t().requires_grad_(True)  # strides (1, 2)
    assert not x.is_contiguous()
    before = x.detach().clone()
    version = x._version
    assert gradcheck(lambda t: (t * t).sum(0), (x,))
    assert gradcheck(lambda t: (t * t).sum(0), (x,), fast_mode=True)
    assert x.detach().equal(before)
    assert x._version == version


def test_tuple_inputs_and_outputs_with_non_tensor_arguments():
    x = rand_leaf(3, seed=1)
    y = rand_leaf(3, seed=2)
    frozen = rand_leaf(3, seed=3).detach()  # a tensor that does not require grad

    def fn(a, scale, b, c, label):
        assert scale == 3 and label == "tag"
        return a * scale * b + c, label, (b * c).exp()

    assert gradcheck(fn, (x, 3, y, frozen, "tag"))
    assert gradcheck(fn, [x, 3, y, frozen, "tag"], fast_mode=True)


def test_single_tensor_input():
    assert gradcheck(fg.cos, rand_leaf(4, seed=4))


# --- failing on wrong backward -------------------------------------------


def test_wrong_backward_raises_naming_output_input_and_entry():
    x = leaf(0.3, -1.2, 0.8, 2.0, shape=(2, 2))
    values = x.detach().reshape(-1).tolist()
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda t: scaled_grad(t).sin(), (x,))
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "\nanalytical:" in msg
    # d sin(x_k) / d x_k = cos(x_k); the hook makes it 1.5 cos(x_k), so the
    # largest error 0.5 |cos(x_k)| is at the k with the largest |cos|.
    k = max(range(4), key=lambda i: abs(math.cos(values[i])))
    assert f"Jacobian entry (row {k}, column {k})" in msg
    assert f"input element ({k // 2}, {k % 2})" in msg
    assert f"output element ({k // 2}, {k % 2})" in msg
    numerical = float(msg.split("numerical ")[-1].split(" vs")[0])
    analytical = float(msg.split("analytical ")[-1].split(" (")[0])
    assert numerical == pytest.approx(math.cos(values[k]), rel=1e-6)
    assert analytical == pytest.approx(1.5 * math.cos(values[k]), rel=1e-12)


def test_wrong_backward_returns_false_without_raising():
    x = rand_leaf(3, seed=5)
    assert gradcheck(lambda t: scaled_grad(t).sin(), (x,), raise_exception=False) is False
    assert gradcheck(lambda t: scaled_grad(t).sin(), (x,), raise_exception=False, fast_mode=True) is False


def test_mismatch_names_the_right_output_and_input():
    a = rand_leaf(2, seed=1)
    b = rand_leaf(3, seed=2)

    def fn(scale, p, q):
        # output 0 is right; output 1 has a wrong gradient w.r.t. q only.
        return (p * scale).sum() * q.sum(), scaled_grad(q).exp() + p.sum()

    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 1 with respect to input 1,"):
        gradcheck(fn, (2.0, a, b))
    with pytest.raises(GradcheckError) as info:
        gradcheck(fn, (2.0, a, b))
    # Input 1 counts the inputs that require grad; the note maps it back.
    assert "it is argument 2 of func" in str(info.value)
    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 1 with respect to input 1,"):
        gradcheck(fn, (2.0, a, b), fast_mode=True)


def test_small_error_within_tolerances_passes():
    x = rand_leaf(3, seed=6)
    fn = lambda t: scaled_grad(t, 1 + 1e-5).sin()  # noqa: E731
    assert gradcheck(fn, (x,))
    assert not gradcheck(fn, (x,), rtol=1e-7, atol=1e-8, raise_exception=False)


def test_fast_mode_failure_shows_slow_mode_jacobians():
    x = rand_leaf(2, 2, seed=8)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda t: scaled_grad(t).sin(), (x,), fast_mode=True)
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "recomputed in slow mode" in msg
    assert "The max per-element difference (slow mode) is:" in msg
    assert "The largest difference is at Jacobian entry" in msg


FAST_VS_SLOW = [
    (lambda x, y: x * y.sin(), True),
    (lambda x, y: (x @ y.reshape(3, 1)).exp(), True),
    (lambda x, y: scaled_grad(x) * y, False),
    (lambda x, y: (scaled_grad(x, 0.9) @ y.reshape(3, 1)).tanh(), False),
    (lambda x, y: x.sum() * scaled_grad(y, -1.0), False),
    (lambda x, y: scaled_grad(x, 1 + 1e-7) * y, True),  # within tolerances
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", range(len(FAST_VS_SLOW)))
def test_fast_mode_agrees_with_slow_mode(case, seed):
    fn, should_pass = FAST_VS_SLOW[case]
    inputs = (rand_leaf(2, 3, seed=seed), rand_leaf(3, seed=seed + 100))
    slow = gradcheck(fn, inputs, raise_exception=False)
    fast = gradcheck(fn, inputs, raise_exception=False, fast_mode=True)
    assert slow == fast == should_pass


def test_backward_not_multiplied_by_grad_output():
    # Right for every nonzero cotangent, nonzero for a zero one.
    def fn(x):
        y = x * 1
        y.register_hook(lambda g: g if bool((g != 0).any()) else g + 1)
        return y.sin()

    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(fn, (rand_leaf(3, seed=9),), check_undefined_grad=False)


# --- nondeterminism -------------------------------------------------------


def noisy(x: fg.Tensor, scale: float) -> fg.Tensor:
    y = x * 1
    # Relative noise: a zero gradient stays zero (backward stays linear).
    y.register_hook(lambda g: g * (1 + fg.rand(tuple(g.shape), dtype=g.dtype) * scale))
    return y


def test_nondeterministic_backward_is_caught():
    x = rand_leaf(3, seed=10)
    with pytest.raises(GradcheckError, match="Backward is not reentrant") as info:
        gradcheck(lambda t: noisy(t, 1e-9).sin(), (x,))
    assert "The tolerance for nondeterminism was 0.0." in str(info.value)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(lambda t: noisy(t, 1e-9).sin(), (x,), fast_mode=True)


def test_nondeterministic_backward_passes_with_nondet_tol():
    x = rand_leaf(3, seed=11)
    # The noise is below 1e-9 relative, far inside the tolerances.
    assert gradcheck(lambda t: noisy(t, 1e-9).sin(), (x,), nondet_tol=1e-6)
    assert gradcheck(lambda t: noisy(t, 1e-9).sin(), (x,), nondet_tol=1e-6, fast_mode=True)


# --- dtypes and input validation ------------------------------------------


def test_check_grad_dtypes_catches_gradient_of_other_dtype():
    x = rand_leaf(3, seed=12)
    # A hook on the input itself changes the gradient autograd.grad returns.
    x.register_hook(lambda g: g.float())
    with pytest.raises(GradcheckError, match="Gradient has dtype mismatch"):
        gradcheck(lambda t: t.sin(), (x,), check_grad_dtypes=True, atol=1e-3)
    with pytest.raises(GradcheckError, match="Gradient has dtype mismatch"):
        gradcheck(lambda t: t.sin(), (x,), check_grad_dtypes=True, atol=1e-3, fast_mode=True)
    # Without check_grad_dtypes the Jacobians agree (to float32 precision),
    # and the zero-grad_output check still sees the wrong dtype, as in torch.
    with pytest.raises(GradcheckError, match="grad is incorrect type"):
        gradcheck(lambda t: t.sin(), (x,), atol=1e-3, check_undefined_grad=False)


def test_float32_input_warns():
    x = fg.tensor([0.5, 1.5], dtype=fg.float32, requires_grad=True)
    y = rand_leaf(2, seed=13)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        gradcheck(lambda a, b: a * 2 + b, (x, y), eps=1e-3, atol=1e-2, raise_exception=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcheck(lambda b: b * 2, (y,))  # float64 only: no warning


def test_no_input_requiring_grad_raises_value_error():
    x = fg.tensor([1.0, 2.0], dtype=fg.float64)
    msg = (
        "gradcheck expects at least one input tensor to require gradient, "
        "but none of the them have requires_grad=True."
    )
    with pytest.raises(ValueError) as info:
        gradcheck(lambda t: t * 2, (x, 3))
    assert str(info.value) == msg


def test_overlapping_input_raises():
    x = fg.tensor([1.0], dtype=fg.float64).expand(3).requires_grad_(True)
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda t: t * 2, (x,))


def test_no_differentiable_outputs():
    x = rand_leaf(3, seed=14)
    # Outputs that do not require grad must not depend on the inputs.
    assert gradcheck(lambda t: fg.zeros(2, dtype=fg.float64), (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,), fast_mode=True)


def test_masked_is_refused_clearly_and_flag_combinations_checked():
    x = rand_leaf(2, seed=15)
    with pytest.raises(RuntimeError, match="masked=True needs sparse tensors"):
        gradcheck(fg.sin, (x,), masked=True)
    assert gradcheck(fg.sin, (x,), masked=False)
    with pytest.raises(AssertionError, match="requires check_forward_ad to be True"):
        gradcheck(fg.sin, (x,), check_batched_forward_grad=True)
    with pytest.raises(AssertionError):
        gradcheck(fg.sin, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_fwd_over_rev or check_rev_over_rev"):
        gradgradcheck(fg.sin, (x,), check_rev_over_rev=False)


# --- batched gradients and undefined gradients -----------------------------


def test_check_batched_grad_passes_with_unused_input():
    x = rand_leaf(2, 2, seed=16)
    unused = rand_leaf(3, seed=17)
    assert gradcheck(lambda a, b: (a @ a).sin(), (x, unused), check_batched_grad=True)


def test_undefined_output_grads_are_accepted():
    x = rand_leaf(3, seed=18)
    y = rand_leaf(3, seed=19)
    assert gradcheck(lambda a, b: (a * b).exp(), (x, y), check_undefined_grad=True)
    # Several outputs: undefined all at once, then one at a time.
    assert gradcheck(lambda a, b: (a.sin(), a * b, b.sum()), (x, y), check_undefined_grad=True)


def test_undefined_output_grad_check_catches_nonzero_input_grads():
    from ferrograd.autograd.gradcheck import _test_undefined_grad

    def fn(x):
        y = x * 1
        y.register_hook(lambda g: g + 1)  # nonzero even when nothing flows in
        return y.sin(), x.cos()

    with pytest.warns(UserWarning, match="Backwards compatibility"):
        with pytest.raises(GradcheckError, match="Expected all input grads to be undefined or zero"):
            _test_undefined_grad(fn, (rand_leaf(3, seed=20),))


# (2x, 3x); backward sees None for an output without gradient.
_TwoOutputs = scaled_pair(2, 3)
_OnesWhenAllUndefined = when_no_output_has_a_gradient(_TwoOutputs, lambda: fg.ones(3, dtype=fg.float64))
_RaisesWhenAllUndefined = when_no_output_has_a_gradient(_TwoOutputs, no_gradient_at_all)


def test_function_handling_undefined_grads_passes():
    assert gradcheck(_TwoOutputs.apply, (rand_leaf(3, seed=21),))


def test_function_with_nonzero_grads_for_undefined_outputs_fails():
    x = rand_leaf(3, seed=22)
    with pytest.warns(UserWarning, match="Backwards compatibility"):
        with pytest.raises(GradcheckError, match="Expected all input grads to be undefined or zero"):
            gradcheck(_OnesWhenAllUndefined.apply, (x,))
    assert gradcheck(_OnesWhenAllUndefined.apply, (x,), check_undefined_grad=False)


def test_function_failing_on_undefined_grads_fails():
    x = rand_leaf(3, seed=23)
    with pytest.warns(UserWarning, match="Backwards compatibility"):
        with pytest.raises(
            GradcheckError, match="Expected backward function to handle undefined output grads"
        ):
            gradcheck(_RaisesWhenAllUndefined.apply, (x,))
    with pytest.warns(UserWarning):
        assert gradcheck(_RaisesWhenAllUndefined.apply, (x,), raise_exception=False) is False


# --- gradgradcheck ---------------------------------------------------------


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda x: x.sin(), [(2, 2)]),
        (lambda x: x * x * x, [(3,)]),
        (lambda a, b: (a @ b).tanh(), [(2, 2), (2, 1)]),
        (lambda x: x.softmax(-1), [(2, 3)]),
        (lambda x, y: (x.exp() * y, (x * y).sum()), [(2,), (2,)]),
    ],
)
def test_gradgradcheck_passes_on_second_order_differentiable_ops(fn, shapes, fast_mode):
    inputs = tuple(rand_leaf(*s, seed=30 + k) for k, s in enumerate(shapes))
    assert gradgradcheck(fn, inputs, fast_mode=fast_mode) is True


def detached_grad(x: fg.Tensor) -> fg.Tensor:
    """``x`` in the forward pass; the gradient flowing back through it is
    right but detached, so a double backward does not see how it was made."""
    y = x * 1
    y.register_hook(lambda g: g.detach())
    return y


def test_gradgradcheck_fails_when_only_second_order_is_wrong():
    x = rand_leaf(3, seed=40)
    fn = lambda t: detached_grad(t * t).sin()  # noqa: E731
    assert gradcheck(fn, (x,))  # first order is right
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input"):
        gradgradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,), raise_exception=False) is False
    assert gradgradcheck(fn, (x,), raise_exception=False, fast_mode=True) is False


def test_gradgradcheck_with_given_grad_outputs():
    x = rand_leaf(2, 2, seed=41)
    go = rand_leaf(2, 2, seed=42)
    assert gradgradcheck(lambda t: t.exp() * t, (x,), (go,))
    # A grad_output that does not require grad is passed through, not checked.
    assert gradgradcheck(lambda t: t.exp() * t, (x,), go.detach())


def test_gradgradcheck_non_contiguous_grad_outputs():
    from ferrograd.autograd.gradcheck import _random_grad_output

    like = fg.zeros(2, 3, dtype=fg.float64)
    gen = fg.Generator()
    gen.manual_seed(0)
    g = _random_grad_output(like, gen, True)
    assert not g.is_contiguous() and g.requires_grad and g.is_leaf
    assert tuple(g.shape) == (2, 3) and g.dtype == fg.float64
    assert bool(((g >= -1) & (g < 1)).all())
    gen.manual_seed(0)
    assert _random_grad_output(like, gen, False).is_contiguous()

    x = rand_leaf(2, 3, seed=43)
    assert gradgradcheck(lambda t: (t * t).sin(), (x,), gen_non_contig_grad_outputs=True)
    fn = lambda t: detached_grad(t * t).sin()  # noqa: E731
    assert not gradgradcheck(fn, (x,), gen_non_contig_grad_outputs=True, raise_exception=False)


def test_gradgradcheck_is_reproducible():
    x = rand_leaf(3, seed=44)
    fn = lambda t: detached_grad(t * t).sin()  # noqa: E731
    messages = set()
    for _ in range(2):
        with pytest.raises(GradcheckError) as info:
            gradgradcheck(fn, (x,))
        messages.add(str(info.value))
    assert len(messages) == 1


def test_gradgradcheck_batched_grad():
    x = rand_leaf(2, 2, seed=45)
    assert gradgradcheck(lambda t: (t @ t).sin(), (x,), check_batched_grad=True)


def test_global_random_state_is_untouched():
    fg.manual_seed(123)
    expected = fg.rand(3)
    fg.manual_seed(123)
    gradcheck(lambda t: t.sin(), (rand_leaf(2, seed=46),), fast_mode=True, check_batched_grad=True)
    gradgradcheck(lambda t: t.sin(), (rand_leaf(2, seed=47),))
    assert fg.rand(3).equal(expected)


def test_python_float_inputs_are_rejected_like_torch():
    # Only tensors are differentiated; plain numbers are passed through.
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (random.random(),))


# --- forward mode: check_forward_ad, check_batched_forward_grad, fwd over rev


FORWARD_PASSING = {
    "sin_mul": (lambda x, y: x.sin() * y, [(2, 3), (2, 3)]),
    "two_outputs": (lambda x, y: (x.exp() - y, (x * y).tanh()), [(3,), (3,)]),
    "output_of_one_input": (lambda x, y: (x.sin(), y.exp() + 1), [(2,), (3,)]),
    "broadcast": (lambda x, y: x * y + x.cos(), [(2, 3), (3,)]),
    "scalar": (lambda x: (x * x).sin(), [()]),
}


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name", sorted(FORWARD_PASSING))
def test_check_forward_ad_passes_on_builtin_ops(name, fast_mode):
    fn, shapes = FORWARD_PASSING[name]
    inputs = tuple(rand_leaf(*s, seed=30 + k) for k, s in enumerate(shapes))
    assert gradcheck(fn, inputs, check_forward_ad=True, fast_mode=fast_mode) is True
    assert gradcheck(fn, inputs, check_forward_ad=True, check_backward_ad=False, fast_mode=fast_mode)
    kwargs = {"check_forward_ad": True, "check_batched_forward_grad": True, "fast_mode": fast_mode}
    assert gradcheck(fn, inputs, **kwargs)


def test_batched_forward_grad_with_broadcasting():
    x, y = rand_leaf(2, 3, seed=30), rand_leaf(3, seed=31)
    assert gradcheck(lambda a, b: a * b, (x, y), check_forward_ad=True, check_batched_forward_grad=True)


def test_check_forward_ad_with_non_tensor_arguments_and_non_contiguous_inputs():
    x = rand_leaf(3, seed=40)
    frozen = rand_leaf(3, seed=41).detach()
    nc = rand_leaf(3, 2, seed=42).detach().t().requires_grad_(True)
    assert not nc.is_contiguous()
    before = nc.detach().clone()

    def fn(a, scale, c, label, m):
        assert scale == 3 and label == "tag"
        return a * scale + c, label, (m * m).exp()

    for fast_mode in (False, True):
        assert gradcheck(
            fn, (x, 3, frozen, "tag", nc), check_forward_ad=True, check_batched_forward_grad=True,
            fast_mode=fast_mode,
        )
    assert nc.detach().equal(before)
    # No level is left open.
    assert fg._core._current_dual_level() == -1


def test_forward_ad_is_independent_of_a_wrong_backward():
    # The forward check runs func on dual tensors made from detached inputs,
    # which do not require grad: no backward graph, no hook.
    def scaled_when_differentiable(t):
        return (scaled_grad(t) if t.requires_grad else t).sin()

    x = rand_leaf(3, seed=43)
    assert gradcheck(scaled_when_differentiable, (x,), check_forward_ad=True, check_backward_ad=False)
    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 0"):
        gradcheck(scaled_when_differentiable, (x,), check_forward_ad=True)


class _SinWrongJvp(fg.autograd.Function):
    """sin with a correct backward and a jvp off by 10% at the last element
    (in the setup_context style)."""

    @staticmethod
    def forward(x):
        return x.sin()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * x.cos() * last_entry_scaled(x, 1.1)


def test_wrong_jvp_fails_naming_forward_mode_and_the_entry():
    x = rand_leaf(2, 3, seed=44)
    assert gradcheck(_SinWrongJvp.apply, (x,))  # reverse mode alone is right
    with pytest.raises(GradcheckError) as info:
        gradcheck(_SinWrongJvp.apply, (x,), check_forward_ad=True)
    msg = str(info.value)
    assert msg.startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0")
    # Only d y[1,2] / d x[1,2] is wrong: flat row and column 5.
    assert "(row 5, column 5) (input element (1, 2), output element (1, 2))" in msg
    wrong = 1.1 * math.cos(x[1, 2].item())
    assert f"analytical {wrong!r}"[:20] in msg
    assert gradcheck(_SinWrongJvp.apply, (x,), check_forward_ad=True, raise_exception=False) is False

    with pytest.raises(GradcheckError) as info:
        gradcheck(_SinWrongJvp.apply, (x,), check_forward_ad=True, fast_mode=True)
    msg = str(info.value)
    assert msg.startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0")
    assert "J u for a random unit vector u" in msg and "one forward-mode pass" in msg
    assert "(row 5, column 5) (input element (1, 2), output element (1, 2))" in msg


def test_wrong_jvp_names_the_right_output_and_input():
    x, y = rand_leaf(3, seed=45), rand_leaf(2, 3, seed=46)
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda a, b: (a.exp(), _SinWrongJvp.apply(b)), (x, y), check_forward_ad=True)
    msg = str(info.value)
    assert "forward mode mismatch for output 1 with respect to input 1" in msg


def test_function_without_jvp_raises_not_implemented():
    x = rand_leaf(3, seed=47)
    assert gradcheck(Double.apply, (x,))
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        gradcheck(Double.apply, (x,), check_forward_ad=True)
    assert fg._core._current_dual_level() == -1


class _MulOnlyRightWithAMissingTangent(fg.autograd.Function):
    """x * y whose jvp is right when a tangent is missing (None), and wrong
    when both inputs have one."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.set_materialize_grads(False)
        ctx.save_for_forward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        raise AssertionError("not used")

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        if tx is None:
            return x * ty
        if ty is None:
            return tx * y
        return tx * y + x * ty * 2


def test_tangent_of_an_undefined_input_must_act_as_zero():
    x, y = rand_leaf(3, seed=48), rand_leaf(3, seed=49)
    kwargs = {"check_forward_ad": True, "check_backward_ad": False}
    # The Jacobians (one input dual at a time) are right ...
    assert gradcheck(_MulOnlyRightWithAMissingTangent.apply, (x, y), check_undefined_grad=False, **kwargs)
    # ... but a zero tangent does not act as a missing one.
    with pytest.raises(GradcheckError, match="Mismatch in tangent values for output 0 when input 0 has an"):
        gradcheck(_MulOnlyRightWithAMissingTangent.apply, (x, y), **kwargs)


def _sin_with_wrong_batched_rule(a):
    """sin, whose tangent is right in an ordinary dual level and twice too
    large in a batched one."""
    primal, tangent = fg.autograd.forward_ad.unpack_dual(a)
    out = primal.sin()
    if tangent is None:
        return out
    scale = 2.0 if tangent.dim() > primal.dim() else 1.0
    return fg.autograd.forward_ad.make_dual(out, tangent * primal.cos() * scale)


def test_batched_forward_grad_passes_for_pointwise_ops_and_functions():
    x, y = rand_leaf(2, 3, seed=50), rand_leaf(2, 3, seed=51)
    for fn in (
        lambda a, b: a.sin() * b.exp(),
        lambda a, b: ((a - b).tanh(), a.cos() + b),
        lambda a, b: _SinCosMul.apply(a, b),
    ):
        assert gradcheck(fn, (x, y), check_forward_ad=True, check_batched_forward_grad=True)


def test_batched_forward_grad_catches_a_wrong_batched_rule():
    x = rand_leaf(4, seed=52)
    kwargs = {"check_forward_ad": True, "check_backward_ad": False}
    assert gradcheck(_sin_with_wrong_batched_rule, (x,), **kwargs)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_sin_with_wrong_batched_rule, (x,), check_batched_forward_grad=True, **kwargs)
    msg = str(info.value)
    assert msg.startswith("For output 0 and input 0:")
    assert "batched forward-mode AD" in msg and "Got:" in msg and "Expected:" in msg


class _SinCosMul(fg.autograd.Function):
    """sin(x) * y, every method written with differentiable ops."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x.sin() * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * x.cos() * y, g * x.sin()

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        return tx * x.cos() * y + x.sin() * ty


class _CubeCutSecondOrder(Cube):
    """x ** 3 with a right first derivative whose backward detaches x:
    the gradient has the right value but not the right derivative."""

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        x = x.detach()
        return 3 * g * x * x


@pytest.mark.parametrize("fast_mode", [False, True])
def test_fwd_over_rev_passes_for_second_order_differentiable_functions(fast_mode):
    x, y = rand_leaf(2, 3, seed=53), rand_leaf(2, 3, seed=54)
    for fn in (lambda a, b: a.sin() * b, lambda a, b: (a * b).exp() - a.tanh(), _SinCosMul.apply):
        assert gradgradcheck(fn, (x, y), check_fwd_over_rev=True, fast_mode=fast_mode)
        assert gradgradcheck(
            fn, (x, y), check_fwd_over_rev=True, check_rev_over_rev=False, check_undefined_grad=False,
            fast_mode=fast_mode,
        )
    assert gradgradcheck(
        lambda a, b: a.sin() * b, (x, y), check_fwd_over_rev=True, gen_non_contig_grad_outputs=True
    )


def test_fwd_over_rev_fails_for_a_backward_wrong_at_second_order():
    x = rand_leaf(3, seed=55)
    v = rand_leaf(3, seed=56)
    kwargs = {"check_fwd_over_rev": True, "check_rev_over_rev": False, "check_undefined_grad": False}
    assert gradcheck(_CubeCutSecondOrder.apply, (x,), check_forward_ad=True)
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(_CubeCutSecondOrder.apply, (x,), (v,), **kwargs)
    msg = str(info.value)
    # Output 0 is the gradient w.r.t. x, input 0 is x: the missing term is
    # the diagonal 6 * x * v; the analytical Jacobian has nothing there.
    assert msg.startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0")
    missing = [6 * a * b for a, b in zip(x.tolist(), v.tolist(), strict=True)]
    r = max(range(3), key=lambda k: abs(missing[k]))
    assert f"(row {r}, column {r})" in msg
    numerical = float(re.search(r"numerical (\S+) vs analytical 0.0 ", msg).group(1))
    assert numerical == pytest.approx(missing[r], rel=1e-6)
    fast = gradgradcheck(_CubeCutSecondOrder.apply, (x,), raise_exception=False, fast_mode=True, **kwargs)
    assert fast is False
    # Reverse over reverse sees the same mistake.
    assert gradgradcheck(_CubeCutSecondOrder.apply, (x,), raise_exception=False) is False
