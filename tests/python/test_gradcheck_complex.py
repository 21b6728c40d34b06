"""gradcheck and gradgradcheck with complex inputs and outputs.

Oracles: torch's convention that autograd gives a complex input
``z = x + 1j y`` of a real loss ``L`` the gradient ``dL/dx + 1j dL/dy``
(so ``z * z`` has gradient ``g * conj(2 z)``), and the behaviour and
messages of torch 2.13's gradcheck: a complex output is checked through its
imaginary part and then its real part, a complex input in forward mode
through its imaginary part and then its real part, and a mismatch names the
part it was found in. The checks must pass on built-in complex ops and on
custom Functions written with the convention, and fail on custom Functions
whose backward or jvp breaks it (a missing conj, the conj of the right
gradient, a dropped imaginary part, a factor on one part only); the entry a
failure message names is checked against the derivative computed here by
hand.
"""

from __future__ import annotations

import re
import warnings

import ferrograd as fg
import pytest
from custom_functions import Square, no_gradient_at_all, scaled_pair, when_no_output_has_a_gradient
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.autograd.gradcheck import GradcheckError

pytestmark = pytest.mark.timeout(120)

IMAG_OUT = "While considering the imaginary part of complex outputs only, "
REAL_OUT = "While considering the real part of complex outputs only, "
IMAG_IN = "While considering the imaginary part of complex inputs only, "
REAL_IN = "While considering the real part of complex inputs only, "


def cleaf(*values: complex) -> fg.Tensor:
    return fg.tensor(list(values), dtype=fg.complex128).requires_grad_(True)


def rand_leaf(*shape: int, seed: int) -> fg.Tensor:
    gen = fg.Generator()
    gen.manual_seed(seed)
    return (fg.rand(shape, generator=gen, dtype=fg.float64) * 2 - 1).requires_grad_(True)


def crand_leaf(*shape: int, seed: int) -> fg.Tensor:
    """Complex values whose parts are uniform in [-1, 1)."""
    gen = fg.Generator()
    gen.manual_seed(seed)
    re_part = fg.rand(shape, generator=gen, dtype=fg.float64) * 2 - 1
    im_part = fg.rand(shape, generator=gen, dtype=fg.float64) * 2 - 1
    return fg.complex(re_part, im_part).requires_grad_(True)


def scaled_grad(x: fg.Tensor, factor: float = 1.5) -> fg.Tensor:
    """``x`` in the forward pass; its gradient is multiplied by ``factor``."""
    y = x * 1
    y.register_hook(lambda g: g * factor)
    return y


def mismatch(i: int, j: int, prefix: str = "", forward: bool = False) -> str:
    """The first line of a Jacobian mismatch message."""
    what = "Jacobian computed with forward mode mismatch" if forward else "Jacobian mismatch"
    return f"{prefix}{what} for output {i} with respect to input {j},"


def first_line(info: pytest.ExceptionInfo) -> str:
    return str(info.value).splitlines()[0]


def largest_entry(msg: str) -> tuple[int, complex, complex]:
    """The flat input element, numerical and analytical values of the
    entry a slow-mode message names (for 1-d inputs)."""
    pattern = r"\(input element \((\d+),\), output element \(\d+,\)\): numerical (\S+) vs analytical (\S+) "
    m = re.search(pattern, msg)
    assert m is not None, msg
    return int(m.group(1)), complex(m.group(2)), complex(m.group(3))


def fast_mode_numbers(msg: str) -> tuple[complex, complex]:
    """The ``v^T J u`` numbers of a fast-mode message."""
    n = re.search(r"^numerical:(.*)$", msg, re.M)
    a = re.search(r"^analytical:(.*)$", msg, re.M)
    assert n is not None and a is not None, msg
    return complex(n.group(1)), complex(a.group(1))


# --- custom Functions --------------------------------------------------------


class _Square(Square):
    """z * z with torch's convention: gradient g * conj(2 z), tangent 2 z t."""

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * (2 * z).conj()

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.saved_tensors
        return 2 * z * t


class _SquareMissingConj(_Square):
    """The holomorphic derivative 2 z without the conj torch's convention needs."""

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z


class _SquareRealPartTwice(_Square):
    """Right for the imaginary part of grad_output, twice too large for its real part."""

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return 2 * g.real * (2 * z).conj() + 1j * g.imag * (2 * z).conj()


class _SquareWrongJvp(_Square):
    """Right backward; the jvp uses conj(z) instead of z."""

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.saved_tensors
        return 2 * z.conj() * t


class _SquareJvpWrongOnRealTangents(_Square):
    """Right backward; the jvp is right for imaginary tangents and 1.5 times
    too large along real ones."""

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.saved_tensors
        return 2 * z * (1.5 * t.real + 1j * t.imag)


class _SquareCutSecondOrder(_Square):
    """A right first derivative computed from a detached z: its own
    derivative is missing."""

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * (2 * z.detach()).conj()

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.saved_tensors
        return 2 * z * t


class _AbsConjGrad(fg.autograd.Function):
    """|z| whose backward returns the conj of the right gradient g z / |z|."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z.abs()

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * (z / z.abs()).conj()


C = 2 - 1j


class _ScaleDropsImag(fg.autograd.Function):
    """C * z whose backward keeps only the real part of the right g * conj(C)."""

    @staticmethod
    def forward(ctx, z):
        return z * C

    @staticmethod
    def backward(ctx, g):
        right = g * C.conjugate()
        return fg.complex(right.real, fg.zeros_like(right.real))


class _SmallScaleWithOffset(fg.autograd.Function):
    """1e-3 * z whose gradient is off by ``OFFSET * g`` (every diagonal entry
    of the Jacobian of each part off by ``OFFSET``)."""

    OFFSET = 0.0

    @staticmethod
    def forward(ctx, z):
        return z * 1e-3

    @staticmethod
    def backward(ctx, g):
        return g * (1e-3 + _SmallScaleWithOffset.OFFSET)


class _RealToComplex(fg.autograd.Function):
    """x * (1 + 2j) for a real x; the gradient is Re(g * (1 - 2j)), the tangent t * (1 + 2j)."""

    @staticmethod
    def forward(ctx, x):
        return x * (1 + 2j)

    @staticmethod
    def backward(ctx, g):
        return (g * (1 - 2j)).real

    @staticmethod
    def jvp(ctx, t):
        return t * (1 + 2j)


class _RealToComplexNoConj(_RealToComplex):
    """Backward without the conj: Re(g * (1 + 2j))."""

    @staticmethod
    def backward(ctx, g):
        return (g * (1 + 2j)).real


class _RealToComplexConjJvp(_RealToComplex):
    """Right backward; the jvp multiplies by 1 - 2j."""

    @staticmethod
    def jvp(ctx, t):
        return t * (1 - 2j)


# (2 z, 1j * z); backward sees None for an output without gradient.
_TwoComplexOutputs = scaled_pair(2, 1j)
_RaisesWhenAllUndefined = when_no_output_has_a_gradient(_TwoComplexOutputs, no_gradient_at_all)


# --- passing on correct functions ------------------------------------------


PASSING = {
    "square": (lambda z: z * z, ["c3"]),
    "abs": (lambda z: z.abs(), ["c3"]),
    "exp_conj": (lambda z: z.exp().conj(), ["c3"]),
    "angle_sgn": (lambda z: (z.angle(), z.sgn()), ["c3"]),
    "real_imag": (lambda z: z.real * z.imag + fg.view_as_real(z).sum(), ["c3"]),
    "mixed": (lambda x, z: x * z.exp() + z.conj() * x.sin(), ["r3", "c3"]),
    "mixed_outputs": (lambda x, z: (x.sin(), z * x, (z * z).abs().sum()), ["r3", "c3"]),
    "real_to_complex": (lambda r, t: fg.polar(r.exp(), t) * fg.complex(t, r), ["r3", "r3"]),
    "matmul": (lambda a, b: a @ b, ["c2x3", "c3x2"]),
    "reductions": (lambda z: ((z * z).sum(), z.exp().mean()), ["c2x3"]),
    "square_function": (_Square.apply, ["c3"]),
    "real_to_complex_function": (_RealToComplex.apply, ["r3"]),
}


def make_inputs(specs: list[str], seed: int) -> tuple[fg.Tensor, ...]:
    out = []
    for k, spec in enumerate(specs):
        shape = tuple(int(s) for s in spec[1:].split("x"))
        maker = crand_leaf if spec[0] == "c" else rand_leaf
        out.append(maker(*shape, seed=seed + k))
    return tuple(out)


MODES = {
    "slow": {},
    "fast": {"fast_mode": True},
    "forward": {"check_forward_ad": True},
    "forward_fast": {"check_forward_ad": True, "fast_mode": True},
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(PASSING))
def test_gradcheck_passes_on_correct_complex_functions(name, mode):
    fn, specs = PASSING[name]
    assert gradcheck(fn, make_inputs(specs, seed=10), **MODES[mode]) is True


GG_MODES = {
    "rev_over_rev": {},
    "fast": {"fast_mode": True},
    "fwd_over_rev": {"check_fwd_over_rev": True},
    "fwd_over_rev_fast": {"check_fwd_over_rev": True, "fast_mode": True},
}


@pytest.mark.parametrize("mode", list(GG_MODES))
@pytest.mark.parametrize(
    "name", ["square", "abs", "exp_conj", "mixed", "mixed_outputs", "matmul", "square_function"]
)
def test_gradgradcheck_passes_on_correct_complex_functions(name, mode):
    fn, specs = PASSING[name]
    assert gradgradcheck(fn, make_inputs(specs, seed=20), **GG_MODES[mode]) is True


def test_batched_checks_pass_with_complex_inputs_and_outputs():
    x, z = rand_leaf(3, seed=30), crand_leaf(3, seed=31)
    fn = PASSING["mixed"][0]
    assert gradcheck(fn, (x, z), check_batched_grad=True) is True
    assert gradcheck(fn, (x, z), check_forward_ad=True, check_batched_forward_grad=True) is True
    assert gradgradcheck(fn, (x, z), check_batched_grad=True) is True


def test_inputs_are_restored_after_the_check():
    z = crand_leaf(2, 2, seed=32)
    x = rand_leaf(2, seed=33)
    before_z, before_x = z.detach().clone(), x.detach().clone()
    for kwargs in ({}, {"fast_mode": True}, {"check_forward_ad": True}):
        assert gradcheck(lambda a, b: a.exp() * b, (z, x), **kwargs)
        assert z.tolist() == before_z.tolist()
        assert x.tolist() == before_x.tolist()


def test_complex_arguments_that_do_not_require_grad_are_passed_through():
    c = crand_leaf(3, seed=34).detach()
    x = rand_leaf(3, seed=35)
    assert gradcheck(lambda k, t: k * t.exp(), (c, x), check_forward_ad=True)
    assert gradcheck(lambda k, t: k * t.exp(), (c, x), check_forward_ad=True, fast_mode=True)


def test_gradgradcheck_draws_complex_grad_outputs_for_complex_outputs():
    from ferrograd.autograd.gradcheck import _random_grad_output

    gen = fg.Generator()
    gen.manual_seed(0)
    like = fg.zeros(2, 3, dtype=fg.complex128)
    for noncontiguous in (False, True):
        g = _random_grad_output(like, gen, noncontiguous)
        assert g.dtype == fg.complex128 and tuple(g.shape) == (2, 3)
        assert g.requires_grad and g.is_leaf
        assert g.is_contiguous() is not noncontiguous
        parts = fg.view_as_real(g.detach())
        assert bool(((parts >= -1) & (parts < 1)).all())
        assert bool((g.imag != 0).any())
    z = crand_leaf(2, 3, seed=36)
    assert gradgradcheck(lambda t: (t * t).exp(), (z,), gen_non_contig_grad_outputs=True)
    assert gradgradcheck(lambda t: (t * t).exp(), (z,), (crand_leaf(2, 3, seed=37),))


def test_complex64_input_warns_and_needs_looser_tolerances():
    z = fg.tensor([1 + 2j, -0.5 + 0.3j], dtype=fg.complex64).requires_grad_(True)
    with pytest.warns(
        UserWarning, match="Input #0 requires gradient and is not a double precision floating point"
    ):
        assert gradcheck(lambda t: t * t, (z,), eps=1e-3, atol=1e-2, rtol=1e-2)
    with pytest.warns(UserWarning, match="is not a double precision"):
        assert gradcheck(lambda t: t * t, (z,), raise_exception=False) is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradcheck(lambda t: t * t, (cleaf(1 + 2j, -0.5 + 0.3j),))


def test_no_differentiable_outputs_with_a_complex_input():
    z = crand_leaf(3, seed=38)
    for kwargs in ({}, {"fast_mode": True}):
        assert gradcheck(lambda t: fg.ones(3, dtype=fg.complex128), (z,), **kwargs)
        # A detached output that still depends on z: the numerical gradient is not zero.
        with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
            gradcheck(lambda t: t.detach() * 2, (z,), **kwargs)


def test_undefined_grads_of_complex_outputs():
    z = crand_leaf(3, seed=39)
    assert gradcheck(_TwoComplexOutputs.apply, (z,))
    with pytest.warns(UserWarning, match="Backwards compatibility"):
        with pytest.raises(
            GradcheckError, match="Expected backward function to handle undefined output grads"
        ):
            gradcheck(_RaisesWhenAllUndefined.apply, (z,))


# --- failing on wrong backward formulas ------------------------------------


def test_missing_conj_fails_on_the_imaginary_part_of_the_output():
    z = cleaf(1 + 2j, -0.5 + 0.3j, 0.7 - 1.6j)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_SquareMissingConj.apply, (z,))
    assert first_line(info) == mismatch(0, 0, IMAG_OUT)
    msg = str(info.value)
    assert "dtype=ferrograd.complex128" in msg.split("analytical:")[0]  # a complex numerical Jacobian
    # Im(z^2) = 2xy has gradient 2y + 2xj = 1j * conj(2z); the wrong one is
    # 1j * 2z, off by 4|y|: largest at the element with the largest |Im z|.
    k, numerical, analytical = largest_entry(msg)
    values = z.tolist()
    assert k == max(range(3), key=lambda i: abs(values[i].imag))
    assert numerical == pytest.approx(1j * (2 * values[k]).conjugate(), rel=1e-6)
    assert analytical == pytest.approx(1j * 2 * values[k], rel=1e-12)
    assert gradcheck(_SquareMissingConj.apply, (z,), raise_exception=False) is False
    assert gradcheck(_Square.apply, (z,)) is True


def test_missing_conj_fails_in_fast_mode_with_complex_projections():
    z = crand_leaf(4, seed=40)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_SquareMissingConj.apply, (z,), fast_mode=True)
    assert first_line(info) == mismatch(0, 0, IMAG_OUT)
    msg = str(info.value)
    # u = (ur, ui) over the real and imaginary parts of z: the numerical
    # v^T (J_x ur + 1j J_y ui) = v.(2y ur) + 1j v.(2x ui); the wrong backward
    # flips the sign of the real part only.
    numerical, analytical = fast_mode_numbers(msg)
    assert numerical.imag != 0
    assert analytical == pytest.approx(-numerical.conjugate(), rel=1e-6)
    assert "recomputed in slow mode" in msg
    assert gradcheck(_SquareMissingConj.apply, (z,), fast_mode=True, raise_exception=False) is False


@pytest.mark.parametrize("offset, passes", [(5e-6, True), (3e-4, False)])
def test_fast_mode_tolerance_for_complex_inputs_follows_slow_mode(offset, passes, monkeypatch):
    # The Jacobian entries are about 1e-3, so rtol hardly matters: an error
    # below atol = 1e-5 per entry passes in both modes, one 30 times larger
    # fails in both (fast mode scales atol by (sum(ur) + sum(ui)) * sum(v)).
    monkeypatch.setattr(_SmallScaleWithOffset, "OFFSET", offset)
    z = crand_leaf(3, seed=52)
    for kwargs in ({}, {"fast_mode": True}):
        assert gradcheck(_SmallScaleWithOffset.apply, (z,), raise_exception=False, **kwargs) is passes


def test_conj_of_the_right_gradient_fails_without_a_prefix_for_a_real_output():
    z = cleaf(1 + 2j, -0.5 + 0.3j)
    for kwargs in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError) as info:
            gradcheck(_AbsConjGrad.apply, (z,), **kwargs)
        # The output is real: no part is named, though the input is complex.
        assert first_line(info) == mismatch(0, 0)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_AbsConjGrad.apply, (z,))
    k, numerical, analytical = largest_entry(str(info.value))
    w = z.tolist()[k]
    assert numerical == pytest.approx(w / abs(w), rel=1e-6)
    assert analytical == pytest.approx((w / abs(w)).conjugate(), rel=1e-12)


def test_wrong_real_part_fails_on_the_real_part_of_the_output():
    z = cleaf(1 + 2j, -0.5 + 0.3j)
    for kwargs in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError) as info:
            gradcheck(_SquareRealPartTwice.apply, (z,), **kwargs)
        assert first_line(info) == mismatch(0, 0, REAL_OUT)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_SquareRealPartTwice.apply, (z,))
    # Re(z^2) = x^2 - y^2 has gradient 2x - 2yj = conj(2z); twice that is reported.
    k, numerical, analytical = largest_entry(str(info.value))
    w = z.tolist()[k]
    assert numerical == pytest.approx((2 * w).conjugate(), rel=1e-6)
    assert analytical == pytest.approx(2 * (2 * w).conjugate(), rel=1e-12)


def test_dropped_imaginary_part_fails():
    z = crand_leaf(3, seed=41)
    assert gradcheck(lambda t: t * C, (z,))
    for kwargs in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError) as info:
            gradcheck(_ScaleDropsImag.apply, (z,), **kwargs)
        assert first_line(info) == mismatch(0, 0, IMAG_OUT)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_ScaleDropsImag.apply, (z,))
    # Im(C z) for C = 2 - 1j: gradient 1j * conj(C) = -1 + 2j at every diagonal entry.
    _, numerical, analytical = largest_entry(str(info.value))
    assert numerical == pytest.approx(-1 + 2j, rel=1e-6)
    assert analytical == -1


def test_real_input_complex_output_missing_conj():
    x = rand_leaf(3, seed=42)
    assert gradcheck(_RealToComplex.apply, (x,))
    for kwargs in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError) as info:
            gradcheck(_RealToComplexNoConj.apply, (x,), **kwargs)
        assert first_line(info) == mismatch(0, 0, IMAG_OUT)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_RealToComplexNoConj.apply, (x,))
    msg = str(info.value)
    # A real input: real Jacobians, d Im(x (1 + 2j)) / dx = 2, the wrong one -2.
    assert "complex" not in msg.split("The largest")[0].split(",", 1)[1]
    _, numerical, analytical = largest_entry(msg)
    assert numerical == pytest.approx(2, rel=1e-6)
    assert analytical == -2


def test_mismatch_names_the_original_output_and_input():
    x, z = rand_leaf(3, seed=43), crand_leaf(3, seed=44)

    def fn(scale, p, q):
        # output 0 is real and right; output 1 is complex and wrong w.r.t. q.
        return (p * scale).sin(), _SquareMissingConj.apply(q) * scale + p.sum()

    for kwargs in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError) as info:
            gradcheck(fn, (2.0, x, z), **kwargs)
        assert first_line(info) == mismatch(1, 1, IMAG_OUT)
        assert "it is argument 2 of func" in str(info.value)


def test_prefix_names_only_complex_outputs():
    x, z = rand_leaf(3, seed=45), crand_leaf(3, seed=46)

    def fn(p, q):
        # output 0 is real and wrong; output 1 is complex and right.
        return scaled_grad(p).sin() + q.abs(), q * q

    for kwargs in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError) as info:
            gradcheck(fn, (x, z), **kwargs)
        assert first_line(info) == mismatch(0, 0)


# --- failing on wrong jvp formulas -----------------------------------------


def test_wrong_jvp_fails_on_the_imaginary_part_of_the_input():
    z = cleaf(1 + 2j, -0.5 + 0.3j, 0.7 - 1.6j)
    assert gradcheck(_SquareWrongJvp.apply, (z,)) is True  # reverse mode alone is right
    kwargs = {"check_forward_ad": True, "check_backward_ad": False, "check_undefined_grad": False}
    with pytest.raises(GradcheckError) as info:
        gradcheck(_SquareWrongJvp.apply, (z,), **kwargs)
    expected = mismatch(0, 0, IMAG_IN, forward=True)
    assert first_line(info) == expected
    # Moving Im z by t changes z^2 by 2z * 1j t; the jvp gives 2 conj(z) * 1j t.
    k, numerical, analytical = largest_entry(str(info.value))
    w = z.tolist()[k]
    assert numerical == pytest.approx(2j * w, rel=1e-6)
    assert analytical == pytest.approx(2j * w.conjugate(), rel=1e-12)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_SquareWrongJvp.apply, (z,), fast_mode=True, **kwargs)
    assert first_line(info) == expected
    assert "one forward-mode pass" in str(info.value)
    assert gradcheck(_SquareWrongJvp.apply, (z,), check_forward_ad=True, raise_exception=False) is False


def test_jvp_wrong_on_real_tangents_fails_on_the_real_part_of_the_input():
    z = crand_leaf(3, seed=47)
    for kwargs in ({}, {"fast_mode": True}):
        with pytest.raises(GradcheckError) as info:
            gradcheck(_SquareJvpWrongOnRealTangents.apply, (z,), check_forward_ad=True, **kwargs)
        expected = mismatch(0, 0, REAL_IN, forward=True)
        assert first_line(info) == expected
    assert gradcheck(_Square.apply, (z,), check_forward_ad=True)


def test_wrong_jvp_of_a_real_input_has_no_prefix():
    x = rand_leaf(3, seed=48)
    assert gradcheck(_RealToComplexConjJvp.apply, (x,)) is True
    kwargs = {"check_forward_ad": True, "check_backward_ad": False, "check_undefined_grad": False}
    with pytest.raises(GradcheckError) as info:
        gradcheck(_RealToComplexConjJvp.apply, (x,), **kwargs)
    assert first_line(info) == mismatch(0, 0, forward=True)
    _, numerical, analytical = largest_entry(str(info.value))
    assert numerical == pytest.approx(1 + 2j, rel=1e-6)
    assert analytical == 1 - 2j


def test_forward_mode_prefix_names_only_complex_inputs():
    x, z = rand_leaf(3, seed=49), crand_leaf(3, seed=50)
    kwargs = {"check_forward_ad": True, "check_backward_ad": False, "check_undefined_grad": False}

    def wrong_for_q(p, flag, q):
        return p.exp() * 2 + _SquareWrongJvp.apply(q) * flag

    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_for_q, (x, 3.0, z), **kwargs)
    assert first_line(info) == mismatch(0, 1, IMAG_IN, forward=True)
    assert "it is argument 2 of func" in str(info.value)

    def wrong_for_p(p, q):
        return _RealToComplexConjJvp.apply(p) + q * q

    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_for_p, (x, z), **kwargs)
    assert first_line(info) == mismatch(0, 0, forward=True)


# --- gradgradcheck ---------------------------------------------------------


def test_gradgradcheck_fails_when_only_the_second_order_is_wrong():
    z = crand_leaf(3, seed=51)
    assert gradcheck(_SquareCutSecondOrder.apply, (z,), check_forward_ad=True) is True
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(_SquareCutSecondOrder.apply, (z,))
    # Output 0 is the (complex) gradient w.r.t. z, input 0 is z.
    assert first_line(info) == mismatch(0, 0, IMAG_OUT)
    assert gradgradcheck(_SquareCutSecondOrder.apply, (z,), fast_mode=True, raise_exception=False) is False
    kwargs = {"check_fwd_over_rev": True, "check_rev_over_rev": False, "check_undefined_grad": False}
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(_SquareCutSecondOrder.apply, (z,), **kwargs)
    assert first_line(info) == mismatch(0, 0, IMAG_IN, forward=True)
    assert gradgradcheck(_Square.apply, (z,), **kwargs) is True
