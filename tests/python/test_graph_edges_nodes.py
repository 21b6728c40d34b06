"""Gradient edges wherever torch takes them, calling a node directly, and
the warning for ``.grad`` of a non-leaf.

Oracles: closed-form derivatives of small polynomials, and the same
gradients computed with tensors instead of edges.
"""

from __future__ import annotations

import warnings

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.autograd.graph import GradientEdge, get_gradient_edge


def leaf(values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def test_edge_of_second_split_output_has_its_output_nr():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    a, b = x.split(2)
    e = get_gradient_edge(b)
    assert isinstance(e, GradientEdge)
    assert e.node.name() == "SplitBackward0"
    assert e.output_nr == 1
    y = (a * 2).sum() + (b * b).sum()
    gb, gx = torch.autograd.grad(y, [e, x])
    np.testing.assert_array_equal(gb.numpy(), [6.0, 8.0])  # d/db of b.b = 2b
    np.testing.assert_array_equal(gx.numpy(), [2.0, 2.0, 6.0, 8.0])


def test_single_edge_as_inputs():
    x = leaf([1.0, 2.0])
    z = x * 3
    (g,) = torch.autograd.grad((z * z).sum(), get_gradient_edge(z))
    np.testing.assert_array_equal(g.numpy(), [6.0, 12.0])


def test_edge_as_output_with_grad_outputs():
    x = leaf([1.0, 2.0, 3.0])
    z = x * x
    ones = torch.ones(3, dtype=torch.float64)
    (g,) = torch.autograd.grad(get_gradient_edge(z), x, grad_outputs=ones, retain_graph=True)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0, 6.0])
    # Mixed: a tensor output and an edge output, each with its grad_output.
    w = x.sin()
    gs = [torch.ones(3, dtype=torch.float64), torch.full((3,), 2.0, dtype=torch.float64)]
    (g2,) = torch.autograd.grad([w, get_gradient_edge(z)], x, grad_outputs=gs)
    np.testing.assert_allclose(g2.numpy(), np.cos([1.0, 2.0, 3.0]) + 4 * np.array([1.0, 2.0, 3.0]))


def test_edge_output_without_grad_outputs_must_be_scalar():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        torch.autograd.grad(get_gradient_edge(x * 2), x)
    s = (x * x).sum()
    (g,) = torch.autograd.grad(get_gradient_edge(s), x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


def test_backward_inputs_accept_edges():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    y = (x * w).sum()
    y.backward(inputs=[get_gradient_edge(x)])
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    assert w.grad is None
    # A non-leaf's edge: the gradient reaches its retain_grad.
    z = x * 2
    z.retain_grad()
    (z * 5).sum().backward(inputs=[get_gradient_edge(z)])
    np.testing.assert_array_equal(z.grad.numpy(), [5.0, 5.0])


def test_autograd_backward_with_edge_outputs():
    x = leaf([1.0, 2.0])
    z = x * x
    torch.autograd.backward(get_gradient_edge(z), grad_tensors=torch.ones(2, dtype=torch.float64))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_calling_a_node_runs_its_backward_once():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 5.0])
    node = (x * w).grad_fn
    gx, gw = node(torch.ones(2, dtype=torch.float64))
    np.testing.assert_array_equal(gx.detach().numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(gw.detach().numpy(), [1.0, 2.0])
    assert gx.requires_grad  # recorded under grad mode, as in torch
    scale = (x * 2.0).grad_fn
    with torch.no_grad():
        gs, gnone = scale(torch.full((2,), 4.0, dtype=torch.float64))
    np.testing.assert_array_equal(gs.numpy(), [8.0, 8.0])
    assert gnone is None
    assert x.grad is None  # nothing accumulated
    with pytest.raises(TypeError, match="expects 1 gradients"):
        node()


def test_grad_of_non_leaf_warns_and_is_none():
    x = leaf([1.0])
    z = x * 2
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor"):
        assert z.grad is None
    z.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert z.grad is None  # retains grad: no warning
        assert x.grad is None  # a leaf: no warning


def test_increment_version_on_a_list():
    x = leaf([1.0])
    z = x * 2
    v = (x._version, z._version)
    torch.autograd.graph.increment_version([x, z])
    assert (x._version, z._version) == (v[0] + 1, v[1] + 1)
