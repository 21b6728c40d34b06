"""Custom autograd Functions shared by the test modules.

Each is small and has hand-written derivatives, so a test knows exactly
what it computes; a test about one method subclasses one and overrides
that method alone."""

from __future__ import annotations

import ferrograd as fg
from ferrograd.autograd import Function


def last_entry_scaled(x, factor):
    """Ones shaped like ``x`` but ``factor`` at its last element: what a
    deliberately wrong derivative multiplies the right one by."""
    scale = fg.ones_like(x)
    scale.view(-1)[-1] = factor
    return scale


class Double(Function):
    """``2 x``; a backward and no jvp."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Square(Function):
    """``x * x``, saving ``x`` for its backward ``2 g x``; no jvp."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


class Cube(Function):
    """``x ** 3``, saving ``x`` for its backward ``3 g x^2`` and its jvp
    ``3 t x^2`` (both differentiable)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * t * x * x


def scaled_pair(a, b):
    """A Function returning ``(a x, b x)`` for the numbers ``a`` and ``b``
    (real or complex). Its forward turns materialized gradients off, so its
    backward sees None for an output without gradient: it returns the sum
    of ``g * conj(k)`` over the gradients it gets, None when it gets none."""

    class ScaledPair(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * a, x * b

        @staticmethod
        def backward(ctx, ga, gb):
            parts = [g * k.conjugate() for g, k in ((ga, a), (gb, b)) if g is not None]
            return sum(parts[1:], parts[0]) if parts else None

    return ScaledPair


def when_no_output_has_a_gradient(base, respond):
    """``base`` (a Function) whose backward returns ``respond()`` instead
    when every output gradient is None."""

    class Responding(base):
        @staticmethod
        def backward(ctx, *grads):
            if all(g is None for g in grads):
                return respond()
            return base.backward(ctx, *grads)

    return Responding


def no_gradient_at_all():
    """A ``respond`` for :func:`when_no_output_has_a_gradient` that raises."""
    raise RuntimeError("no gradient at all")
