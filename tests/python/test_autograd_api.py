"""The autograd API surface, checked against torch's documented behaviour.

Tensor attributes (requires_grad, is_leaf, grad, grad_fn, retain_grad,
hooks, detach, data, _version, backward), graph nodes (name,
next_functions, metadata, hooks, saved values), ``autograd.backward`` and
``autograd.grad`` with every argument and torch's errors, the default
gradient layouts, grad modes, in-place ops with version counters, and hook
order. Expected values are derived by hand in the comments (the graphs use
only add, sub, mul, sum, clone, view, reshape, expand and copy_).
"""

from __future__ import annotations

import re

import ferrograd as torch
import pytest
from ferrograd.autograd import graph

pytestmark = pytest.mark.timeout(60)


def vals(t):
    return t.detach().tolist()


def leaf(*values, dtype=None):
    return torch.tensor(list(values), dtype=dtype, requires_grad=True)


# ---------------------------------------------------------------- Tensor


def test_requires_grad_flag_and_method():
    x = torch.tensor([1.0, 2.0])
    assert x.requires_grad is False
    assert x.requires_grad_() is x
    assert x.requires_grad is True
    x.requires_grad = False
    assert x.requires_grad is False
    y = leaf(1.0) * 2
    assert y.requires_grad is True  # has a grad_fn


def test_requires_grad_refused_for_integers_and_non_leaves():
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        torch.tensor([1, 2]).requires_grad_()
    y = leaf(1.0) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    y.requires_grad_(True)  # allowed: it already requires grad


def test_is_leaf_and_grad_fn():
    x = leaf(1.0, 2.0)
    c = torch.tensor([3.0])
    y = x * c
    assert x.is_leaf and c.is_leaf and not y.is_leaf
    assert x.grad_fn is None and c.grad_fn is None
    assert y.grad_fn.name() == "MulBackward0"
    with torch.no_grad():
        z = x * c
    assert z.is_leaf and not z.requires_grad and z.grad_fn is None


def test_repr_shows_grad_fn_and_requires_grad_like_torch():
    x = leaf(1.0, 2.0, 3.0)
    assert repr(x) == "tensor([1., 2., 3.], requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4., 6.], grad_fn=<MulBackward0>)"
    assert repr((x * 2).sum()) == "tensor(12., grad_fn=<SumBackward0>)"
    assert repr(x.detach()) == "tensor([1., 2., 3.])"
    d = torch.tensor([1.5], dtype=torch.float64, requires_grad=True)
    assert repr(d) == "tensor([1.5000], dtype=ferrograd.float64, requires_grad=True)"


def test_grad_is_settable_and_checked():
    x = leaf(1.0, 2.0)
    assert x.grad is None
    x.grad = torch.tensor([5.0, 6.0])
    assert vals(x.grad) == [5.0, 6.0]
    (x * 2).sum().backward()  # accumulates onto the assigned grad: 5+2, 6+2
    assert vals(x.grad) == [7.0, 8.0]
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = torch.zeros(3)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = torch.zeros(2, dtype=torch.float64)
    assert vals(x.grad) == [7.0, 8.0]  # a refused assignment changes nothing
    x.grad = None
    assert x.grad is None


def test_non_leaf_grad_is_none_without_retain_grad():
    x = leaf(1.0, 2.0)
    y = x * 3
    (y * y).sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert y.grad is None
    assert y.retains_grad is False


def test_retain_grad_keeps_non_leaf_gradient_and_accumulates():
    x = leaf(1.0, 2.0)
    y = x * 3
    y.retain_grad()
    y.retain_grad()  # idempotent
    assert y.retains_grad is True
    loss = (y * y).sum()  # d/dy = 2y = [6, 12]
    loss.backward(retain_graph=True)
    assert vals(y.grad) == [6.0, 12.0]
    assert vals(x.grad) == [18.0, 36.0]
    loss.backward()
    assert vals(y.grad) == [12.0, 24.0]
    assert x.retains_grad is False  # leaves never "retain"
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        torch.tensor([1.0]).retain_grad()


def test_tensor_hook_return_none_observes_and_tensor_replaces():
    x = leaf(1.0, 2.0)
    seen = []
    h1 = x.register_hook(lambda g: seen.append(vals(g)))
    h2 = x.register_hook(lambda g: g * 10)  # replaces: 2 * 10
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]]
    assert vals(x.grad) == [20.0, 20.0]
    h2.remove()
    h1.remove()
    h1.remove()  # removing twice is harmless
    x.grad = None
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]] and vals(x.grad) == [2.0, 2.0]


def test_hook_on_non_leaf_changes_what_flows_upstream():
    x = leaf(1.0, 2.0)
    y = x * 3
    y.register_hook(lambda g: g + 1)  # dy = [1,1] -> [2,2]
    y.sum().backward()
    assert vals(x.grad) == [6.0, 6.0]


def test_hook_handle_is_a_context_manager():
    x = leaf(1.0)
    with x.register_hook(lambda g: g * 0):
        (x * 2).sum().backward()
    assert vals(x.grad) == [0.0]
    (x * 2).sum().backward()
    assert vals(x.grad) == [2.0]


def test_hook_refused_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        torch.tensor([1.0]).register_hook(lambda g: None)


def test_hook_changing_the_size_raises():
    x = leaf(1.0, 2.0)
    x.register_hook(lambda g: torch.zeros(3))
    with pytest.raises(RuntimeError, match="hook has changed the size"):
        (x * 2).sum().backward()


def test_post_accumulate_grad_hook_sees_updated_grad():
    x = leaf(1.0, 2.0)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda p: seen.append(vals(p.grad)))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[2.0, 2.0], [5.0, 5.0]]
    h.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_detach_shares_memory_and_version_without_history():
    x = leaf(1.0, 2.0)
    y = x * 2
    d = y.detach()
    assert d.requires_grad is False and d.is_leaf and d.grad_fn is None
    assert d.data_ptr() == y.data_ptr()
    d.add_(1)  # visible through y, and y's version moves with it
    assert vals(y) == [3.0, 5.0]
    assert y._version == d._version == 1


def test_detach_in_place():
    x = leaf(1.0, 2.0)
    y = x * 2
    assert y.detach_() is y
    assert y.requires_grad is False and y.is_leaf and y.grad_fn is None
    (y * x).sum().backward()  # y is now a constant: d/dx = y
    assert vals(x.grad) == [2.0, 4.0]


def test_data_get_and_set():
    x = leaf(1.0, 2.0)
    d = x.data
    assert d.requires_grad is False and d.data_ptr() == x.data_ptr()
    x.data = torch.tensor([7.0, 8.0])
    assert vals(x) == [7.0, 8.0] and x.requires_grad and x.is_leaf
    (x * x).sum().backward()
    assert vals(x.grad) == [14.0, 16.0]
    with pytest.raises(RuntimeError, match="shape"):
        x.data = torch.zeros(3)
    with pytest.raises(RuntimeError, match="dtype"):
        x.data = torch.zeros(2, dtype=torch.float64)


def test_version_counts_in_place_writes_shared_by_views():
    x = torch.zeros(4)
    assert x._version == 0
    x.add_(1)
    x.view(2, 2).add_(1)  # the view shares the counter
    x.copy_(torch.ones(4))
    assert x._version == 3
    assert x.view(4)._version == 3


def test_backward_gradient_argument_and_inputs():
    x = leaf(1.0, 2.0)
    w = leaf(3.0, 4.0)
    y = x * w
    y.backward(torch.tensor([1.0, 10.0]), retain_graph=True)  # dx = g*w, dw = g*x
    assert vals(x.grad) == [3.0, 40.0] and vals(w.grad) == [1.0, 20.0]
    y.backward(torch.tensor([1.0, 1.0]), inputs=[w])  # only w accumulates
    assert vals(x.grad) == [3.0, 40.0] and vals(w.grad) == [2.0, 22.0]
    z = x * w
    z.sum().backward(inputs=x)  # a single tensor is accepted too
    assert vals(x.grad) == [6.0, 44.0] and vals(w.grad) == [2.0, 22.0]


def test_backward_inputs_non_leaf_accumulates_into_its_grad():
    x = leaf(1.0, 2.0)
    y = x * 3
    (y * y).sum().backward(inputs=[y])  # 2y = [6, 12]
    assert vals(y.grad) == [6.0, 12.0]
    assert x.grad is None


def test_backward_inputs_empty_raises():
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])


def test_create_graph_gives_differentiable_grad():
    x = leaf(1.0, 2.0)
    y = (x * x * x).sum()  # dy/dx = 3x^2, d2y/dx2 = 6x
    y.backward(create_graph=True)
    assert vals(x.grad) == [3.0, 12.0]
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    (g2,) = torch.autograd.grad(x.grad.sum(), x)
    assert vals(g2) == [6.0, 12.0]


def test_output_nr_and_is_inference():
    x = leaf(1.0)
    assert x.output_nr == 0 and (x * 2).output_nr == 0
    assert x.is_inference() is False


def test_variable_is_tensor_with_flag():
    v = torch.autograd.Variable(torch.tensor([1.0, 2.0]), requires_grad=True)
    assert isinstance(v, torch.Tensor) and isinstance(v, torch.autograd.Variable)
    assert v.requires_grad and v.is_leaf
    (v * 2).sum().backward()
    assert vals(v.grad) == [2.0, 2.0]
    assert not torch.autograd.Variable(torch.ones(1)).requires_grad
    with pytest.raises(TypeError):
        torch.autograd.Variable([1.0])


# ---------------------------------------------------------------- Nodes


def test_nodes_are_graph_nodes_with_names_and_edges():
    x = leaf(1.0, 2.0)
    c = torch.tensor([3.0, 4.0])
    y = x * c
    z = (y + x).sum()
    assert isinstance(z.grad_fn, graph.Node) and isinstance(y.grad_fn, graph.Node)
    assert not isinstance(x, graph.Node)
    assert z.grad_fn.name() == "SumBackward0"
    ((add, nr),) = z.grad_fn.next_functions
    assert add.name() == "AddBackward0" and nr == 0
    (mul, _), (acc, _) = add.next_functions
    assert mul == y.grad_fn
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.variable.data_ptr() == x.data_ptr() and acc.variable.requires_grad
    acc_x, (none, zero) = mul.next_functions
    assert acc_x[0] == acc  # one accumulator per leaf
    assert none is None and zero == 0  # c needs no grad
    assert acc.next_functions == ()
    with pytest.raises(AttributeError):
        _ = mul.variable


def test_node_metadata_persists_across_accesses():
    y = leaf(1.0) * 2
    y.grad_fn.metadata["tag"] = 42
    assert y.grad_fn.metadata == {"tag": 42}
    assert y.grad_fn.metadata is y.grad_fn.metadata


def test_sequence_nr_increases_with_creation_order():
    x = leaf(1.0)
    a = x * 2
    b = a + 1
    assert b.grad_fn._sequence_nr() > a.grad_fn._sequence_nr()


def test_node_prehook_and_hook_replace_gradients():
    x = leaf(1.0, 2.0)
    y = x * 2
    calls = []

    def pre(grad_outputs):
        calls.append(("pre", vals(grad_outputs[0])))
        return (grad_outputs[0] * 5,)  # 1 -> 5 before MulBackward0

    def post(grad_inputs, grad_outputs):
        calls.append(("post", vals(grad_inputs[0]), vals(grad_outputs[0])))
        return (grad_inputs[0] + 1, grad_inputs[1])  # 10 -> 11

    y.grad_fn.register_prehook(pre)
    h = y.grad_fn.register_hook(post)
    y.sum().backward(retain_graph=True)
    assert calls == [("pre", [1.0, 1.0]), ("post", [10.0, 10.0], [5.0, 5.0])]
    assert vals(x.grad) == [11.0, 11.0]
    h.remove()
    x.grad = None
    y.sum().backward()
    assert vals(x.grad) == [10.0, 10.0]


def test_node_hook_returning_none_keeps_gradients():
    x = leaf(1.0, 2.0)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: None)
    y.grad_fn.register_prehook(lambda go: None)
    y.sum().backward()
    assert vals(x.grad) == [2.0, 2.0]


def test_node_hook_returning_wrong_count_raises():
    x = leaf(1.0, 2.0)
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="expected 1"):
        y.sum().backward()


def test_saved_values_and_freed_graph_error():
    x = leaf(1.0, 2.0)
    w = leaf(3.0, 4.0)
    y = x * w
    fn = y.grad_fn
    assert vals(fn._saved_self) == [1.0, 2.0]
    assert vals(fn._saved_other) == [3.0, 4.0]
    assert vals(fn._raw_saved_self.data) == [1.0, 2.0]
    assert fn._saved_self.data_ptr() == x.data_ptr()
    with pytest.raises(AttributeError):
        _ = fn._saved_nonexistent
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        _ = fn._saved_self
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t)


def test_saved_output_comes_back_with_its_node():
    # clone then mul by itself saves an input that is an output of CloneBackward0.
    x = leaf(1.0, 2.0)
    c = x.clone()
    y = c * c
    s = y.grad_fn._saved_self
    assert s.grad_fn == c.grad_fn and vals(s) == [1.0, 2.0]


def test_gradient_edge_as_grad_input():
    x = leaf(1.0, 2.0)
    m = x * 3
    edge = graph.get_gradient_edge(m)
    assert isinstance(edge, graph.GradientEdge)
    assert edge.node == m.grad_fn and edge.output_nr == 0
    out = (m * m).sum()  # d/dm = 2m = [6, 12]
    gm, gx = torch.autograd.grad(out, [edge, x])
    assert vals(gm) == [6.0, 12.0] and vals(gx) == [18.0, 36.0]
    leaf_edge = graph.get_gradient_edge(x)
    assert leaf_edge.node.name() == "torch::autograd::AccumulateGrad"
    with pytest.raises(RuntimeError, match="does not require gradients"):
        graph.get_gradient_edge(torch.ones(1))


def test_increment_version_makes_saved_tensor_stale():
    x = leaf(1.0, 2.0)
    c = x.clone()
    y = c * c
    assert c._version == 0
    graph.increment_version(c)
    assert c._version == 1
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()


# ---------------------------------------------------------- backward / grad


def test_autograd_backward_several_roots_and_grad_tensors():
    x = leaf(1.0, 2.0)
    a = x * 2
    b = x * 3
    torch.autograd.backward([a, b], [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])])
    assert vals(x.grad) == [2.0, 3.0]
    torch.autograd.backward([(x * 1).sum(), (x * x).sum()])  # 1 + 2x
    assert vals(x.grad) == [5.0, 8.0]


def test_autograd_backward_rejects_non_tensor_grad_tensors():
    x = leaf(1.0, 2.0)
    with pytest.raises(TypeError):
        torch.autograd.backward((x * x).sum(), object())


def test_grad_does_not_touch_dot_grad():
    x = leaf(1.0, 2.0)
    (g,) = torch.autograd.grad((x * x).sum(), x)
    assert vals(g) == [2.0, 4.0] and x.grad is None
    assert isinstance(torch.autograd.grad((x * 2).sum(), [x]), tuple)


def test_grad_with_grad_outputs_and_retain_graph():
    x = leaf(1.0, 2.0)
    w = leaf(3.0, 4.0)
    y = x * w
    gx, gw = torch.autograd.grad(y, [x, w], torch.tensor([2.0, 1.0]), retain_graph=True)
    assert vals(gx) == [6.0, 4.0] and vals(gw) == [2.0, 2.0]
    (gx,) = torch.autograd.grad([y], [x], [torch.tensor([1.0, 1.0])])
    assert vals(gx) == [3.0, 4.0]
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        torch.autograd.grad(y, [x], torch.ones(2))


def test_grad_create_graph_second_and_third_order():
    x = leaf(2.0)
    y = (x * x * x * x).sum()  # 4x^3, 12x^2, 24x at x = 2: 32, 48, 48
    (g1,) = torch.autograd.grad(y, x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    assert (vals(g1), vals(g2), vals(g3)) == ([32.0], [48.0], [48.0])


def test_grad_unused_inputs():
    x = leaf(1.0, 2.0)
    u = leaf(5.0)
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        torch.autograd.grad((x * 2).sum(), [x, u], retain_graph=True)
    gx, gu = torch.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert vals(gx) == [2.0, 2.0] and gu is None
    gx, gu = torch.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    assert vals(gu) == [0.0] and gu.dtype == u.dtype
    with pytest.raises(ValueError, match="allow_unused"):
        torch.autograd.grad((x * 2).sum(), [x, u], allow_unused=False, materialize_grads=True)


def test_grad_is_grads_batched_gives_jacobian_rows():
    x = leaf(1.0, 2.0, 3.0)
    w = torch.tensor([2.0, 3.0, 4.0])
    y = x * w  # Jacobian diag(w)
    (jac,) = torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True)
    assert vals(jac) == [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 4.0]]
    with pytest.raises(RuntimeError, match="batch dimension"):
        torch.autograd.grad(x * w, x, torch.ones(3), is_grads_batched=True)


def test_backward_twice_without_retain_graph_raises():
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"backward through the graph a second time.*retain_graph=True"):
        y.backward()
    assert vals(x.grad) == [2.0, 4.0]


def test_implicit_grad_only_for_scalar_outputs():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        torch.autograd.grad(x * 2, x)
    one = (x * 2).sum().reshape(1)  # a one-element tensor is fine, as in torch
    one.backward()
    assert vals(x.grad) == [2.0, 2.0]


def test_output_without_grad_raises():
    msg = "element 0 of tensors does not require grad and does not have a grad_fn"
    with pytest.raises(RuntimeError, match=msg):
        torch.tensor([1.0]).sum().backward()
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        torch.autograd.backward([(x * 2).sum(), torch.tensor(1.0)])
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad((x * 2).sum(), torch.ones(1))


def test_grad_outputs_shape_mismatch_raises():
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match=re.escape("Mismatch in shape: grad_output[0] has a shape of")):
        torch.autograd.grad(x * 2, x, torch.ones(3))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(torch.ones(2, 1))


def test_grad_outputs_count_mismatch_raises():
    x = leaf(1.0)
    with pytest.raises(RuntimeError):
        torch.autograd.grad([x * 2], [x], [torch.ones(1), torch.ones(1)])


def test_grad_broadcast_inputs_are_summed_to_shape():
    x = leaf(1.0, 2.0, 3.0)  # (3,)
    r = torch.ones(2, 1, requires_grad=True)  # (2, 1)
    y = (x * r).sum()  # dx = sum over rows of r = 2; dr = sum(x) = 6
    gx, gr = torch.autograd.grad(y, [x, r])
    assert vals(gx) == [2.0, 2.0, 2.0] and vals(gr) == [[6.0], [6.0]]


# ------------------------------------------------ default gradient layouts


def _transposed_leaf():
    return torch.zeros(3, 2).t().requires_grad_()  # shape (2, 3), strides (1, 2)


C = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_layout_rule_1_first_grad_has_the_leaf_strides():
    a = _transposed_leaf()
    assert a.stride() == (1, 2) and not a.is_contiguous()
    (a * torch.tensor(C)).sum().backward()
    assert a.grad.stride() == a.stride()
    assert vals(a.grad) == C


def test_layout_rule_1_with_create_graph_keeps_strides_and_graph():
    a = _transposed_leaf()
    c = torch.tensor(C, requires_grad=True)
    (a * c).sum().backward(create_graph=True)
    assert a.grad.stride() == a.stride() and vals(a.grad) == C
    assert a.grad.requires_grad  # da = c: it depends on c
    (gc,) = torch.autograd.grad(a.grad.sum(), c)
    assert vals(gc) == [[1.0] * 3] * 2


def test_layout_rule_2_in_place_accumulation_keeps_the_grad_object():
    a = _transposed_leaf()
    c = torch.tensor(C)
    (a * c).sum().backward()
    g = a.grad
    ptr, strides = g.data_ptr(), g.stride()
    (a * c).sum().backward()
    assert a.grad.data_ptr() == ptr and a.grad.stride() == strides
    assert vals(g) == [[2 * v for v in row] for row in C]  # the old handle sees the sum


def test_layout_rule_2_contiguous_leaf():
    x = torch.zeros(2, 3, requires_grad=True)
    c = torch.tensor(C)
    (x * c).sum().backward()
    ptr = x.grad.data_ptr()
    (x * c * 2).sum().backward()
    assert x.grad.data_ptr() == ptr and x.grad.stride() == (3, 1)
    assert vals(x.grad) == [[3 * v for v in row] for row in C]


def test_layout_rule_3_create_graph_replaces_grad_with_new_tensor():
    a = _transposed_leaf()
    c = torch.tensor(C, requires_grad=True)
    (a * c).sum().backward()
    old = a.grad
    ptr = old.data_ptr()
    (a * c).sum().backward(create_graph=True)
    assert a.grad.data_ptr() != ptr
    assert vals(old) == C  # the previous .grad was not modified
    assert vals(a.grad) == [[2 * v for v in row] for row in C]
    assert a.grad.grad_fn is not None  # old + new, recorded


def test_layout_rule_4_assigned_grad_is_used_as_is():
    a = _transposed_leaf()
    mine = torch.zeros(2, 3)  # contiguous, unlike a
    a.grad = mine
    (a * torch.tensor(C)).sum().backward()
    assert a.grad.data_ptr() == mine.data_ptr() and a.grad.stride() == (3, 1)
    assert vals(mine) == C


# ------------------------------------------------------------ grad modes


def test_no_grad_context_and_decorator():
    x = leaf(1.0)
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad and torch.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf(1.0)
    with torch.no_grad():
        with torch.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad

        @torch.enable_grad()
        def f(t):
            return t * 2

        assert f(x).requires_grad


def test_set_grad_enabled_function_context_and_decorator():
    x = leaf(1.0)
    try:
        torch.set_grad_enabled(False)
        assert not torch.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.set_grad_enabled(False)
    def f(t):
        return t * 2

    assert torch.is_grad_enabled()  # decorating does not switch the mode
    assert not f(x).requires_grad
    assert torch.is_grad_enabled()


def test_grad_mode_restored_when_block_raises():
    with pytest.raises(ValueError):
        with torch.no_grad():
            raise ValueError
    assert torch.is_grad_enabled()


def test_grad_mode_decorates_generators():
    x = leaf(1.0)

    @torch.no_grad()
    def gen():
        yield (x * 2).requires_grad
        yield torch.is_grad_enabled()

    g = gen()
    assert next(g) is False
    assert torch.is_grad_enabled()  # restored between steps
    assert next(g) is False


def test_inference_mode_makes_inference_tensors():
    x = leaf(1.0, 2.0)
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        t = torch.ones(2)
        y = x * 2
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
    assert t.is_inference() and y.is_inference() and not y.requires_grad
    assert not x.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * t
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        t.add_(1)
    with torch.inference_mode():
        t.add_(1)  # allowed inside
    assert vals(t) == [2.0, 2.0]
    (x + t).sum().backward()  # add saves nothing: inference tensors may take part
    assert vals(x.grad) == [1.0, 1.0]
    u = t.clone()  # the documented workaround
    assert not u.is_inference()
    (x * u).sum().backward()
    assert vals(x.grad) == [3.0, 3.0]


def test_inference_mode_false_and_decorator():
    with torch.inference_mode(False):
        assert not torch.is_inference_mode_enabled()
        assert not torch.ones(1).is_inference()

    @torch.inference_mode()
    def f():
        return torch.ones(1)

    @torch.inference_mode
    def g():
        return torch.ones(1)

    assert f().is_inference() and g().is_inference()
    assert not torch.is_inference_mode_enabled()


def test_set_multithreading_enabled_function_and_context():
    from ferrograd import _core

    assert _core.is_multithreading_enabled()
    with torch.autograd.set_multithreading_enabled(False):
        assert not _core.is_multithreading_enabled()
        x = leaf(1.0, 2.0)
        (x * 2).sum().backward()
        assert vals(x.grad) == [2.0, 2.0]
    assert _core.is_multithreading_enabled()


# ------------------------------------------------- in-place and versions


def test_modified_saved_tensor_raises_naming_versions():
    x = leaf(1.0, 2.0)
    c = x.clone()
    y = c * c
    c.add_(1)
    msg = (
        r"one of the variables needed for gradient computation has been modified by an inplace "
        r"operation: \[ferrograd.FloatTensor \[2\]\], which is output 0 of CloneBackward0, "
        r"is at version 1; expected version 0 instead"
    )
    with pytest.raises(RuntimeError, match=msg):
        y.sum().backward()


def test_in_place_on_unsaved_tensor_is_fine():
    x = leaf(1.0, 2.0)
    c = x.clone()
    y = c + 1  # add saves nothing
    c.add_(5)
    y.sum().backward()
    assert vals(x.grad) == [1.0, 1.0]


def test_in_place_on_leaf_requiring_grad_raises():
    x = leaf(1.0, 2.0)
    msg = "a leaf Variable that requires grad is being used in an in-place operation"
    with pytest.raises(RuntimeError, match=msg):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x.view(2, 1).add_(1)
    assert vals(x) == [1.0, 2.0] and x._version == 0
    with torch.no_grad():
        x.add_(1)  # what optimizers do
    assert vals(x) == [2.0, 3.0] and x.is_leaf and x.requires_grad


def test_in_place_on_non_leaf_records_history():
    x = leaf(1.0, 2.0)
    w = leaf(3.0, 4.0)
    c = x.clone()
    c.add_(w * w)  # c = x + w^2
    assert c.grad_fn.name() == "AddBackward0" and c._version == 1
    (c * torch.tensor([1.0, 10.0])).sum().backward()
    assert vals(x.grad) == [1.0, 10.0] and vals(w.grad) == [6.0, 80.0]


def test_in_place_on_full_view_of_non_leaf_uses_copy_slices():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    k = leaf(2.0, 3.0, 4.0, 5.0)
    w = torch.tensor([1.0, 2.0, 3.0, 4.0])
    base = x * 1
    v = base.view(2, 2)
    v.add_((k * k).view(2, 2))
    assert base.grad_fn.name() == "CopySlices"
    assert v.grad_fn is not None and v._version == base._version == 1
    (base * w).sum().backward(retain_graph=True)
    # Out of place: (x + k^2) * w -> dx = w, dk = 2 k w.
    assert vals(x.grad) == [1.0, 2.0, 3.0, 4.0]
    assert vals(k.grad) == [4.0, 12.0, 24.0, 40.0]
    # The view's own history goes through the base's new history.
    x.grad = None
    k.grad = None
    (v.sum() * 1).backward()
    assert vals(x.grad) == [1.0] * 4 and vals(k.grad) == [4.0, 6.0, 8.0, 10.0]


def test_in_place_on_partial_view_of_non_leaf_matches_out_of_place():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    base = x * 1
    v = base[1:3]
    if v.grad_fn is None:
        pytest.skip("slicing does not record history yet")
    k = leaf(2.0, 3.0)
    w = torch.tensor([1.0, 2.0, 3.0, 4.0])
    v.add_(k * k)
    assert base.grad_fn.name() == "CopySlices"
    (base * w).sum().backward()
    assert vals(x.grad) == [1.0, 2.0, 3.0, 4.0]
    assert vals(k.grad) == [8.0, 18.0]  # 2 k w[1:3]


def test_copy_into_view_of_non_leaf():
    x = leaf(1.0, 2.0, 3.0, 4.0)
    s = leaf(9.0, 8.0, 7.0, 6.0)
    base = x * 1
    base.view(2, 2).copy_(s.view(2, 2) * 2)  # base = 2 s: no gradient reaches x
    (base * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert vals(x.grad) == [0.0] * 4
    assert vals(s.grad) == [2.0, 4.0, 6.0, 8.0]


# ----------------------------------------------------------------- hooks


def test_hook_order_as_documented():
    order = []
    x = leaf(1.0, 2.0)
    y = x * 2
    z = y * 3
    y.grad_fn.register_hook(lambda gi, go: order.append("node post-hook"))
    y.retain_grad()
    y.grad_fn.register_prehook(lambda go: order.append("node pre-hook"))
    y.register_hook(lambda g: order.append("tensor pre-hook"))
    x.register_post_accumulate_grad_hook(lambda p: order.append(("post-accumulate", vals(p.grad))))
    x.register_hook(lambda g: order.append(("leaf hook", x.grad)))
    z.sum().backward()
    assert order == [
        "tensor pre-hook",
        "node pre-hook",
        "node post-hook",
        ("leaf hook", None),  # before accumulation
        ("post-accumulate", [6.0, 6.0]),
    ]


def test_retain_grad_sees_tensor_hook_result():
    # Tensor pre-hooks run before retain_grad, so .grad holds the hooked value.
    x = leaf(1.0, 2.0)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 7)
    y.sum().backward()
    assert vals(y.grad) == [7.0, 7.0] and vals(x.grad) == [14.0, 14.0]


def test_hooks_run_on_the_calling_thread():
    import threading

    x = leaf(1.0, 2.0)
    seen = []
    y = x * 2
    y.register_hook(lambda g: seen.append(threading.get_ident()))
    x.register_hook(lambda g: seen.append(threading.get_ident()))
    y.grad_fn.register_hook(lambda gi, go: seen.append(threading.get_ident()))
    y.sum().backward()
    assert seen == [threading.get_ident()] * 3


@pytest.mark.parametrize("where", ["tensor", "leaf", "prehook", "posthook", "post_accumulate"])
def test_exception_in_hook_reaches_caller_with_its_type(where):
    x = leaf(1.0, 2.0)
    w = leaf(3.0, 4.0)
    y = x * 2

    def boom(*args):
        raise KeyError("boom in " + where)

    handle = {
        "tensor": lambda: y.register_hook(boom),
        "leaf": lambda: x.register_hook(boom),
        "prehook": lambda: y.grad_fn.register_prehook(boom),
        "posthook": lambda: y.grad_fn.register_hook(boom),
        "post_accumulate": lambda: x.register_post_accumulate_grad_hook(boom),
    }[where]()
    loss = (y * w).sum()
    with pytest.raises(KeyError, match="boom in " + where):
        loss.backward(retain_graph=True)
    assert torch.is_grad_enabled()
    if where != "post_accumulate":
        assert x.grad is None  # failed before anything reached x
    handle.remove()
    x.grad = None
    w.grad = None
    loss.backward()  # the graph is intact: dx = 2w, dw = 2x
    assert vals(x.grad) == [6.0, 8.0] and vals(w.grad) == [2.0, 4.0]


def test_exception_in_hook_inside_grad_with_create_graph_restores_mode():
    x = leaf(1.0)
    y = x * 2

    def boom(g):
        raise IndexError("no")

    y.register_hook(boom)
    loss = y.sum()
    with torch.no_grad():
        with pytest.raises(IndexError):
            torch.autograd.grad(loss, x, create_graph=True)
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()


def test_reentrant_grad_inside_hook():
    x = leaf(1.0, 2.0)
    q = leaf(3.0, 4.0)
    inner = []

    def hook(g):
        with torch.enable_grad():
            (gq,) = torch.autograd.grad((q * q).sum(), q)  # 2q
        inner.append(vals(gq))
        return g * gq  # 1 * 2q

    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    assert inner == [[6.0, 8.0]]
    assert vals(x.grad) == [12.0, 16.0]  # 2 * 2q
    assert q.grad is None


def test_reentrant_backward_inside_hook_accumulates():
    x = leaf(1.0, 2.0)
    q = leaf(3.0)

    def hook(g):
        with torch.enable_grad():
            (q * 5).sum().backward()
        return None

    y = x * 2
    y.register_hook(hook)
    y.sum().backward()
    assert vals(q.grad) == [5.0] and vals(x.grad) == [2.0, 2.0]


# ------------------------------------------------------ multi-grad hooks


def test_multi_grad_hook_all_gets_every_participating_grad_once():
    a = leaf(1.0, 2.0)
    b = leaf(3.0, 4.0)
    c = leaf(5.0)
    calls = []
    h = graph.register_multi_grad_hook((a, b, c), lambda gs: calls.append(gs))
    (a * b).sum().backward()  # c takes no part: its slot is None
    assert len(calls) == 1
    ga, gb, gc = calls[0]
    assert vals(ga) == [3.0, 4.0] and vals(gb) == [1.0, 2.0] and gc is None
    (a * b * c).sum().backward(inputs=[a, c])  # only a and c are computed
    assert len(calls) == 2
    ga, gb, gc = calls[1]
    assert vals(ga) == [15.0, 20.0] and gb is None and vals(gc) == [11.0]
    h.remove()
    (a * b).sum().backward()
    assert len(calls) == 2


def test_multi_grad_hook_all_with_grad_and_non_leaves():
    x = leaf(1.0, 2.0)
    m = x * 2
    n = x * 3
    calls = []
    graph.register_multi_grad_hook([m, n], lambda gs: calls.append([vals(g) for g in gs]))
    (gx,) = torch.autograd.grad((m * n).sum(), x)  # dm = n = 3x, dn = m = 2x
    assert calls == [[[3.0, 6.0], [2.0, 4.0]]]
    assert vals(gx) == [12.0, 24.0]


def test_multi_grad_hook_any_fires_once_per_backward():
    a = leaf(1.0)
    b = leaf(2.0)
    calls = []
    graph.register_multi_grad_hook((a, b), lambda g: calls.append(vals(g)), mode="any")
    (a * b).sum().backward()
    (a * b).sum().backward()
    assert len(calls) == 2 and all(c in ([2.0], [1.0]) for c in calls)
    with pytest.raises(ValueError, match="mode"):
        graph.register_multi_grad_hook((a, b), print, mode="some")


def test_graph_task_queries_outside_backward():
    from ferrograd import _core

    assert _core._current_graph_task_id() == -1
    with pytest.raises(RuntimeError, match="during the backward pass"):
        _core._will_engine_execute_node((leaf(1.0) * 2).grad_fn)


def test_overlapping_view_of_a_base_modified_in_place_sums_aliases():
    # e aliases each element of b twice; after b.mul_(2), e's history is
    # regenerated onto b's new history: d sum(e) / dx = 2 rows * 2.
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    e = b.expand(2, 3)
    b.mul_(2)
    assert e.grad_fn.name() == "AsStridedBackward0"
    e.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    assert e.tolist() == [[2.0, 4.0, 6.0], [2.0, 4.0, 6.0]]
