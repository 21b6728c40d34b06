"""Layouts of results and memory formats: an elementwise result takes the
layout its inputs share (transposed in, transposed out; channels-last in,
channels-last out), ``memory_format=`` arguments lay tensors out as asked,
and values never depend on layouts.

Oracles: NumPy for values; the definition of each format's strides
(written out below from the dim order each format names); properties
(results are dense, ``a.t().exp().t()`` is row-major); and
``reference_strides``, an independent statement of torch's rule for
elementwise results (TensorIterator's dim ordering), which agrees with
torch 2.13 on every layout ``draw_layout`` gives for seeds 0-2999 (for
elementwise ops, ``where``, ``to``, ``clone`` and ``empty_like``).
"""

from __future__ import annotations

import pickle

import ferrograd
import numpy as np
import pytest


def dense_in_order(shape, fastest_first):
    """Dense strides when the dims lie in memory in ``fastest_first`` order."""
    strides = [0] * len(shape)
    acc = 1
    for d in fastest_first:
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


def channels_last(shape):
    return dense_in_order(shape, [1, 3, 2, 0] if len(shape) == 4 else [1, 4, 3, 2, 0])


def row_major(shape):
    return dense_in_order(shape, list(range(len(shape)))[::-1])


def is_dense(shape, strides):
    dims = sorted((s, n) for n, s in zip(shape, strides, strict=True) if n != 1)
    expected = 1
    for s, n in dims:
        if s != expected:
            return False
        expected *= n
    return True


def reference_strides(shape, operands):
    """Torch's strides for a new elementwise result of ``shape`` over
    ``operands`` (``(shape, strides)`` pairs): kept when every operand has
    ``shape`` and all are row-major, all channels-last, or all dense with
    equal strides; otherwise the dims are sorted by the operands' strides
    (first operand with a strict preference wins; broadcast dims have
    none; equal strides put the larger dim outside) from row-major order,
    and laid out densely in that order."""
    n = len(shape)
    if n <= 1 or not operands:
        return row_major(shape)
    if all(tuple(s) == tuple(shape) for s, _ in operands):

        def is_fmt(s, st, want):
            return all(a == b for k, a, b in zip(s, st, want, strict=True) if k != 1)

        if all(is_fmt(s, st, row_major(s)) for s, st in operands):
            return row_major(shape)
        if n == 4 and all(is_fmt(s, st, channels_last(s)) for s, st in operands):
            return channels_last(shape)
        first = tuple(operands[0][1])
        if all(is_dense(s, st) and tuple(st) == first for s, st in operands):
            return first
    per_op = []
    for s, st in operands:
        lead = n - len(s)
        per_op.append([0 if i < lead or s[i - lead] != shape[i] else st[i - lead] for i in range(n)])

    def outside(a, b):
        for st in per_op:
            if st[a] == 0 or st[b] == 0:
                continue
            if st[a] != st[b]:
                return 1 if st[a] > st[b] else -1
            if shape[a] > shape[b]:
                return 1
        return 0

    perm = list(range(n))[::-1]
    for i in range(1, n):
        cur = i
        for j in range(i - 1, -1, -1):
            c = outside(perm[j], perm[cur])
            if c == 1:
                perm[j], perm[cur] = perm[cur], perm[j]
                cur = j
            elif c == -1:
                break
    return dense_in_order(shape, perm)


def preserved_strides(t):
    """The strides of a copy of ``t`` in ``preserve_format``: a dense
    layout's own strides, else those the rule gives ``t`` alone."""
    shape, strides = tuple(t.shape), t.stride()
    return strides if is_dense(shape, strides) else reference_strides(shape, [(shape, strides)])


def draw_layout(rng, shape):
    """A tensor of ``shape`` (float64, values from ``rng``) in a drawn
    layout: row-major, a permutation of a dense block, a stepped slice of
    one, or an expanded size-1 dim."""
    n = len(shape)
    kind = rng.integers(0, 4)
    if kind == 0 or n == 0:
        return ferrograd.tensor(rng.standard_normal(shape))
    perm = [int(p) for p in rng.permutation(n)]
    if kind == 1:
        base_shape = [shape[p] for p in perm]
        inv = [perm.index(i) for i in range(n)]
        return ferrograd.tensor(rng.standard_normal(base_shape)).permute(*inv)
    if kind == 2:
        d = int(rng.integers(0, n))
        big = list(shape)
        big[d] = shape[d] * 2
        t = draw_layout(rng, tuple(big))
        step = tuple(slice(None, None, 2) if i == d else slice(None) for i in range(n))
        return t.narrow(d, 0, 2 * shape[d])[step]
    small = [1 if rng.random() < 0.4 else s for s in shape]
    return draw_layout(rng, tuple(small)).expand(*shape)


def draw_shape(rng, ndim):
    return tuple(int(rng.integers(1, 4)) for _ in range(ndim))


@pytest.mark.parametrize("seed", range(40))
def test_unary_and_binary_results_follow_the_rule_and_keep_values(seed):
    rng = np.random.default_rng(seed)
    shape = draw_shape(rng, int(rng.integers(1, 5)))
    a = draw_layout(rng, shape)
    # b broadcasts: some leading dims dropped, some dims of size 1.
    drop = int(rng.integers(0, len(shape) + 1))
    b_shape = tuple(1 if rng.random() < 0.3 else s for s in shape[drop:])
    b = draw_layout(rng, b_shape)
    for out, ops, want in [
        (a.exp(), [a], np.exp(a.numpy())),
        (a * b, [a, b], a.numpy() * b.numpy()),
        (b - a, [b, a], b.numpy() - a.numpy()),
        (ferrograd.where(a > 0, a, b), [a > 0, a, b], np.where(a.numpy() > 0, a.numpy(), b.numpy())),
    ]:
        assert out.stride() == reference_strides(shape, [(tuple(t.shape), t.stride()) for t in ops])
        assert is_dense(out.shape, out.stride())
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=0)
    # Copies and casts preserve: a dense input's own strides, else the rule.
    for out, want in [
        (a.to(ferrograd.float32), a.numpy().astype(np.float32)),
        (a.clone(), a.numpy()),
        (ferrograd.empty_like(a).copy_(a), a.numpy()),
    ]:
        assert out.stride() == preserved_strides(a)
        np.testing.assert_array_equal(out.numpy(), want)


def test_transposed_and_channels_last_inputs_give_results_laid_out_like_them():
    x = ferrograd.randn(4, 6).t()
    y = x.exp()
    assert y.stride() == x.stride() and not y.is_contiguous()
    assert y.t().is_contiguous()
    with pytest.raises(RuntimeError):
        y.view(-1)
    assert y.t().view(-1).shape == (24,)
    c = ferrograd.randn(2, 3, 4, 5).contiguous(memory_format=ferrograd.channels_last)
    bias = ferrograd.randn(3, 1, 1)
    for out in (c + 1, c.relu(), c * c, c + bias, c + ferrograd.randn(2, 3, 4, 5)):
        assert out.is_contiguous(memory_format=ferrograd.channels_last)
        assert out.stride() == channels_last(c.shape)
    # The first operand with a preference decides when layouts differ.
    assert (ferrograd.randn(2, 3, 4, 5) + c).is_contiguous()


def test_gradients_of_channels_last_and_transposed_leaves_keep_their_layout():
    w = ferrograd.randn(2, 3, 4, 5, dtype=ferrograd.float64)
    w = w.contiguous(memory_format=ferrograd.channels_last).requires_grad_()
    ((w * 2).sin() * w).sum().backward()
    assert w.grad.stride() == w.stride()
    wv = w.detach().numpy()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.cos(2 * wv) * wv + np.sin(2 * wv))
    p = ferrograd.randn(4, 6).t().detach().requires_grad_()
    (p.exp() * p).sum().backward()
    assert p.grad.stride() == p.stride()


@pytest.mark.parametrize("fmt_name", ["channels_last", "channels_last_3d"])
def test_contiguous_clone_and_to_lay_out_in_a_format(fmt_name):
    fmt = getattr(ferrograd, fmt_name)
    shape = (2, 3, 4, 5) if fmt_name == "channels_last" else (2, 3, 4, 5, 2)
    x = ferrograd.randn(*shape, dtype=ferrograd.float64, requires_grad=True)
    y = x.contiguous(memory_format=fmt)
    assert y.stride() == channels_last(shape) and y.is_contiguous(memory_format=fmt)
    assert not y.is_contiguous() and x.is_contiguous(memory_format=ferrograd.contiguous_format)
    assert y.grad_fn is not None and y.contiguous(memory_format=fmt) is y
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    (y * ferrograd.arange(y.numel(), dtype=y.dtype).view(shape)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(x.numel()).reshape(shape))
    assert y.contiguous().stride() == row_major(shape)
    assert x.clone(memory_format=fmt).stride() == channels_last(shape)
    assert y.clone().stride() == y.stride()
    assert y.clone(memory_format=ferrograd.contiguous_format).is_contiguous()
    z = x.detach().to(memory_format=fmt)
    assert z.stride() == channels_last(shape)
    assert z.to(memory_format=fmt) is z
    w = x.detach().to(ferrograd.float32, memory_format=fmt)
    assert w.dtype == ferrograd.float32 and w.stride() == channels_last(shape)
    assert w.to(ferrograd.float64).stride() == w.stride()


def test_formats_of_the_wrong_rank_and_bad_arguments_raise_torchs_errors():
    x = ferrograd.randn(3, 4)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        x.contiguous(memory_format=ferrograd.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d format"):
        x.clone(memory_format=ferrograd.channels_last_3d)
    with pytest.raises(RuntimeError, match="required rank 4"):
        ferrograd.empty_like(x, memory_format=ferrograd.channels_last)
    with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
        ferrograd.empty(2, 3, memory_format=ferrograd.preserve_format)
    with pytest.raises(TypeError, match="must be ferrograd.memory_format, not int"):
        x.contiguous(memory_format=1)
    assert not x.is_contiguous(memory_format=ferrograd.channels_last)
    assert x.contiguous(memory_format=ferrograd.preserve_format) is x


def test_empty_and_like_factories_take_the_layout_asked_for():
    shape = (2, 3, 4, 5)
    assert ferrograd.empty(*shape, memory_format=ferrograd.channels_last).stride() == channels_last(shape)
    assert ferrograd.empty(shape).stride() == row_major(shape)
    t = ferrograd.randn(4, 6).t()
    sparse = ferrograd.randn(6, 8).t()[::2]  # (4, 6) with strides (2, 8)
    for make in (ferrograd.empty_like, ferrograd.zeros_like, ferrograd.ones_like, ferrograd.rand_like,
                 ferrograd.randn_like, lambda u: ferrograd.full_like(u, 2.5),
                 lambda u: ferrograd.randint_like(u, 5)):  # fmt: skip
        assert make(t).stride() == t.stride()
        assert make(sparse).stride() == preserved_strides(sparse)
        assert make(t.contiguous()).is_contiguous()
    assert ferrograd.zeros_like(t, memory_format=ferrograd.contiguous_format).is_contiguous()
    np.testing.assert_array_equal(ferrograd.full_like(t, 2.5).numpy(), np.full((6, 4), 2.5))


def test_random_like_factories_fill_memory_in_order():
    # A transposed result holds the draws of a row-major one in memory order:
    # the same values as drawing the untransposed shape and transposing.
    like = ferrograd.empty(3, 5).t()
    ferrograd.manual_seed(7)
    a = ferrograd.rand_like(like)
    ferrograd.manual_seed(7)
    b = ferrograd.rand(3, 5).t()
    assert a.stride() == like.stride()
    assert ferrograd.equal(a, b)


def test_module_to_channels_last_converts_four_dim_parameters_only():
    conv = ferrograd.nn.Conv2d(3, 4, 3)
    x = ferrograd.randn(2, 3, 6, 6)
    before = conv(x)
    assert conv.to(memory_format=ferrograd.channels_last) is conv
    assert conv.weight.stride() == channels_last(tuple(conv.weight.shape))
    assert conv.bias.stride() == (1,)
    assert isinstance(conv.weight, ferrograd.nn.Parameter) and conv.weight.requires_grad
    np.testing.assert_allclose(conv(x).detach().numpy(), before.detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="memory_format"):
        conv.to(memory_format="channels_last")


def test_memory_format_objects():
    fmts = [ferrograd.contiguous_format, ferrograd.channels_last, ferrograd.channels_last_3d,
            ferrograd.preserve_format]  # fmt: skip
    assert all(isinstance(f, ferrograd.memory_format) for f in fmts)
    assert len(set(fmts)) == 4
    assert repr(ferrograd.channels_last) == "ferrograd.channels_last"
    for f in fmts:
        assert pickle.loads(pickle.dumps(f)) is f


def test_in_place_writes_into_dense_layouts_keep_values():
    # The flat loop over a dense, non-row-major destination must match NumPy.
    x = ferrograd.randn(2, 3, 4, 5, dtype=ferrograd.float64).contiguous(memory_format=ferrograd.channels_last)
    ref = x.numpy().copy()
    b = ferrograd.randn(2, 3, 4, 5, dtype=ferrograd.float64).contiguous(memory_format=ferrograd.channels_last)
    x.add_(b)
    x.mul_(ferrograd.randn(3, 1, 1, dtype=ferrograd.float64).expand(3, 4, 5) * 0 + 2)
    x.exp_()
    np.testing.assert_allclose(x.numpy(), np.exp((ref + b.numpy()) * 2))
    assert x.stride() == channels_last(tuple(x.shape))
