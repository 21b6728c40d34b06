"""autograd.grad(..., is_grads_batched=True) runs one batched backward pass;
it must equal the stack of one backward per grad_output row, for nodes
with batched formulas (elementwise ops, products, reshapes, sums) and for
nodes the engine runs row by row (everything else, custom Functions)."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest
from custom_functions import Cube

RNG = np.random.default_rng(3)


def t(*shape, grad=True):
    return fg.tensor(RNG.uniform(0.5, 1.5, shape), dtype=fg.float64, requires_grad=grad)


CASES = {
    "unary": (lambda x: x.tanh().exp().sqrt(), [(2, 3)]),
    "binary_broadcast": (lambda x, y: x * y - x / (y + 1) + y**x, [(2, 3), (3,)]),
    "dot": (lambda x, y: x @ y, [(4,), (4,)]),
    "mv": (lambda w, x: (w @ x).sin(), [(3, 4), (4,)]),
    "vm": (lambda x, w: x @ w, [(3,), (3, 4)]),
    "mm": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "bmm_fallback": (lambda a, b: a @ b, [(2, 2, 3), (3, 2)]),
    "reshape_sum": (lambda x: x.reshape(3, 2).sum(0) * x.sum(), [(2, 3)]),
    "sum_keepdim": (lambda x: x.sum(1, keepdim=True) * x, [(2, 3)]),
    "transpose_permute": (
        lambda x: x.transpose(0, 2).permute(2, 0, 1).transpose(-1, -2).mT * 2,
        [(2, 3, 4)],
    ),
    "t_of_vector_and_matrix": (lambda v, m: v.t() * m.t().sum(0) + m.t()[1], [(3,), (3, 2)]),
    "expand": (lambda x, y: x.expand(2, 3, 4) * y.expand(3, 4), [(3, 1), (4,)]),
    "mean": (lambda x: x.mean(1, keepdim=True) * x.mean(0) + x.mean(), [(3, 4)]),
    "squeeze_unsqueeze": (lambda x: x.unsqueeze(1).squeeze(0) * x.unsqueeze(-1), [(1, 3)]),
    "num_unary": (lambda x: (-x).abs().relu() * (x - 1).abs(), [(2, 3)]),
    "softmax_where_clamp": (
        lambda x, y: (
            x.softmax(1) * x.log_softmax(-1) + fg.where(x > 1, x, y).clamp(0.7, 1.2) * y.clamp(min=0.9)
        ),
        [(2, 3), (3,)],
    ),
    "softmax_0d": (lambda x: x.sum().softmax(0) * x, [(3,)]),
    "row_by_row_nodes": (lambda x: x.softmax(0).cumsum(0) * x.flip(0), [(5,)]),
    "custom_function": (lambda x, y: Cube.apply(x * y).log(), [(2, 3), (3,)]),
}


# Cases whose every node has a batched formula (no node runs row by row).
FULLY_BATCHED = {
    "unary",
    "binary_broadcast",
    "dot",
    "mv",
    "vm",
    "mm",
    "reshape_sum",
    "sum_keepdim",
    "transpose_permute",
    "expand",
    "mean",
    "squeeze_unsqueeze",
    "num_unary",
    "softmax_where_clamp",
}


@pytest.mark.parametrize("name", list(CASES))
def test_batched_equals_loop_of_single_calls(name):
    fn, shapes = CASES[name]
    xs = [t(*s) for s in shapes]
    out = fn(*xs)
    b = 5
    v = fg.tensor(RNG.standard_normal((b, *out.shape)), dtype=fg.float64)
    before = fg._core._row_by_row_nodes()
    batched = fg.autograd.grad(out, xs, v, retain_graph=True, is_grads_batched=True)
    row_by_row = fg._core._row_by_row_nodes() - before
    assert (row_by_row == 0) == (name in FULLY_BATCHED), row_by_row
    for k, x in enumerate(xs):
        rows = [fg.autograd.grad(out, xs, v[r], retain_graph=True)[k] for r in range(b)]
        expected = np.stack([r.numpy() for r in rows])
        assert batched[k].shape == (b, *x.shape)
        np.testing.assert_allclose(batched[k].numpy(), expected, rtol=1e-12, atol=1e-12)


def test_batched_jacobian_of_tanh_of_matvec_matches_the_closed_form():
    w = t(16, 16, grad=False)
    x = t(16)
    y = (w @ x).tanh()
    (jac,) = fg.autograd.grad(y, x, fg.eye(16, dtype=fg.float64), is_grads_batched=True)
    yn = y.detach().numpy()
    np.testing.assert_allclose(jac.numpy(), (1 - yn**2)[:, None] * w.numpy(), rtol=1e-12)


def test_batched_with_create_graph_gives_a_differentiable_jacobian():
    x = t(3)
    y = x.sin() * x.sum()
    (jac,) = fg.autograd.grad(y, x, fg.eye(3, dtype=fg.float64), create_graph=True, is_grads_batched=True)
    assert jac.requires_grad
    # J_ij = cos(x_i) S delta_ij + sin(x_i) with S = sum(x), so
    # sum_ij J_ij = S sum_i cos(x_i) + n sum_i sin(x_i).
    (g,) = fg.autograd.grad(jac.sum(), x)
    xn = x.detach().numpy()
    s = xn.sum()
    expected = np.cos(xn).sum() - s * np.sin(xn) + len(xn) * np.cos(xn)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)


def test_batched_multiple_outputs_and_unused_input():
    x, y, unused = t(3), t(3), t(2)
    a, b = x * y, (x + 1).log()
    va = fg.tensor(RNG.standard_normal((4, 3)), dtype=fg.float64)
    vb = fg.tensor(RNG.standard_normal((4, 3)), dtype=fg.float64)
    gx, gy, gu = fg.autograd.grad((a, b), (x, y, unused), (va, vb), is_grads_batched=True, allow_unused=True)
    xn, yn = x.detach().numpy(), y.detach().numpy()
    np.testing.assert_allclose(gx.numpy(), va.numpy() * yn + vb.numpy() / (xn + 1), rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), va.numpy() * xn, rtol=1e-12)
    assert gu is None
    (gm,) = fg.autograd.grad(a, unused, va, is_grads_batched=True, materialize_grads=True)
    assert gm.shape == (4, 2) and not gm.any().item()


def test_batched_shape_mismatch_error():
    x = t(3)
    with pytest.raises(RuntimeError, match="is_grads_batched=True"):
        fg.autograd.grad(x * 2, x, fg.ones(4, 2, dtype=fg.float64), is_grads_batched=True)
