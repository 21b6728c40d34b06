"""One Python object per tensor and per graph node.

Every route from the core back to Python (``.grad``, ``grad_fn``,
``AccumulateGrad.variable``, ``_base``, hooks, saved tensors, tangents)
hands back the object Python already has, and attributes set on a tensor
live as long as the tensor. The expectations are torch's documented
behaviour; values are checked against closed forms.
"""

from __future__ import annotations

import gc
import threading
import weakref

import ferrograd as torch
import ferrograd.autograd.forward_ad as fwAD
import numpy as np
import pytest


def leaf(*values, dtype=torch.float64):
    return torch.tensor(list(values), dtype=dtype, requires_grad=True)


def test_grad_and_grad_fn_are_the_same_object_on_every_access():
    x = leaf(1.0, 2.0, 3.0)
    y = (x * 2).sin()
    y.sum().backward()
    assert x.grad is x.grad
    assert y.grad_fn is y.grad_fn
    g = x.grad
    gc.collect()
    assert x.grad is g
    np.testing.assert_allclose(g.numpy(), 2 * np.cos(2 * np.array([1.0, 2.0, 3.0])))


def test_accumulate_grad_variable_is_the_leaf():
    x = leaf(1.0, 2.0)
    y = x * 3
    acc = y.grad_fn.next_functions[0][0]
    assert acc.variable is x
    assert acc is y.grad_fn.next_functions[0][0]


def test_node_objects_are_shared_between_routes():
    x = leaf(1.0, 2.0)
    a = x.exp()
    b = a * 2
    assert b.grad_fn.next_functions[0][0] is a.grad_fn
    seen = {a.grad_fn: "exp"}
    assert seen[b.grad_fn.next_functions[0][0]] == "exp"


def test_base_of_a_view_is_the_base_object():
    x = torch.zeros(2, 3)
    v = x[:, 1]
    assert v._base is x
    assert v._base is v._base


def test_post_accumulate_hook_gets_the_users_tensor():
    x = leaf(1.0, 2.0)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t))
    (x * x).sum().backward()
    assert len(seen) == 1 and seen[0] is x


def test_accumulation_writes_into_the_existing_grad_object():
    x = leaf(1.0, 2.0, 3.0)
    (x * x).sum().backward()
    g = x.grad
    (x * 5).sum().backward()
    assert x.grad is g
    np.testing.assert_allclose(g.numpy(), 2 * np.array([1.0, 2.0, 3.0]) + 5)


def test_a_grad_set_by_the_user_keeps_its_strides_and_object():
    x = torch.zeros(3, 2, dtype=torch.float64, requires_grad=True)
    g = torch.zeros(2, 3, dtype=torch.float64).t()
    x.grad = g
    (x * torch.arange(6.0, dtype=torch.float64).reshape(3, 2)).sum().backward()
    assert x.grad is g
    assert g.stride() == (1, 3)
    np.testing.assert_array_equal(g.numpy(), np.arange(6.0).reshape(3, 2))


def test_create_graph_accumulation_makes_a_new_grad_as_torch_does():
    x = leaf(1.0, 2.0)
    (x * x).sum().backward(create_graph=True)
    g = x.grad
    (x * x).sum().backward(create_graph=True)
    assert x.grad is not g
    np.testing.assert_allclose(x.grad.detach().numpy(), 4 * np.array([1.0, 2.0]))


def test_saved_input_is_the_input_object():
    x = leaf(1.0, 2.0)
    w = leaf(3.0, 4.0)
    y = x * w
    assert y.grad_fn._saved_self is x
    assert y.grad_fn._saved_other is w


def test_unpack_dual_returns_the_tangent_object():
    p = torch.tensor([1.0, 2.0], dtype=torch.float64)
    t = torch.tensor([0.5, -1.0], dtype=torch.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, t)
        assert fwAD.unpack_dual(d).tangent is t


def test_custom_function_saved_inputs_come_back_as_the_same_objects():
    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
    y = Mul.apply(a, b)
    sa, sb = y.grad_fn.saved_tensors
    assert sa is a and sb is b


def test_attributes_live_as_long_as_the_tensor():
    x = leaf(1.0, 2.0)
    (x * x).sum().backward()
    x.grad.tag = "first"
    gc.collect()
    assert x.grad.tag == "first"
    assert x.grad.__dict__ == {"tag": "first"}
    # A tensor only the graph still holds keeps its attributes too.
    a = x * 2
    a.note = {"layer": 3}
    y = a.sin()
    del a
    gc.collect()
    assert y.grad_fn._saved_self.note == {"layer": 3}
    with pytest.raises(AttributeError):
        _ = x.missing
    del x.grad.tag
    with pytest.raises(AttributeError):
        _ = x.grad.tag


def test_subclass_instances_keep_their_type_while_the_graph_holds_them():
    class Param(torch.Tensor):
        pass

    p = Param([1.0, 2.0]).requires_grad_()
    p.label = "w"
    assert type(p) is Param
    acc = torch.autograd.graph.get_gradient_edge(p).node
    ref = weakref.ref(p)
    del p
    gc.collect()
    var = acc.variable
    assert type(var) is Param and var is ref()
    assert var.label == "w"
    del var, acc
    gc.collect()
    assert ref() is None


def test_plain_objects_are_freed_at_once_and_kept_ones_by_the_collector():
    t = torch.ones(3)
    r = weakref.ref(t)
    del t
    assert r() is None
    u = torch.ones(3)
    u.tag = 1
    ru = weakref.ref(u)
    del u
    gc.collect()
    assert ru() is None


def test_kept_object_with_a_reference_to_itself_is_collected():
    u = torch.ones(3)
    u.me = u
    ru = weakref.ref(u)
    del u
    gc.collect()
    assert ru() is None

    class Sub(torch.Tensor):
        pass

    s = Sub([1.0])
    s.me = s
    rs = weakref.ref(s)
    del s
    gc.collect()
    assert rs() is None


def test_collections_while_tensors_are_made_and_kept():
    # A collection may start while a new object is allocated; tensors with
    # attributes and subclass instances must survive it intact.
    class Sub(torch.Tensor):
        pass

    old = gc.get_threshold()
    gc.set_threshold(5, 2, 2)
    try:
        kept = []
        for i in range(3000):
            x = torch.ones(4, requires_grad=True)
            x.tag = i
            y = Sub([float(i)])
            (x * 2).sum().backward()
            x.grad.step = i
            if i % 100 == 0:
                kept.append((x, y))
        assert [k[0].tag for k in kept] == list(range(0, 3000, 100))
        assert [k[0].grad.step for k in kept] == list(range(0, 3000, 100))
        assert [k[1].tolist() for k in kept] == [[float(i)] for i in range(0, 3000, 100)]
    finally:
        gc.set_threshold(*old)


@pytest.mark.timeout(60)
def test_identity_across_threads():
    x = leaf(1.0, 2.0, 3.0)
    (x * x).sum().backward()
    grads, nodes = [], []
    y = x.exp()

    def worker():
        for _ in range(200):
            grads.append(x.grad)
            nodes.append(y.grad_fn)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(g is x.grad for g in grads)
    assert all(n is y.grad_fn for n in nodes)


@pytest.mark.timeout(60)
def test_backward_on_threads_returns_each_threads_own_objects():
    errors = []

    def worker():
        try:
            for _ in range(100):
                x = leaf(1.0, 2.0)
                x.owner = threading.get_ident()
                y = (x * 3).sum()
                y.backward()
                acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
                assert acc.variable is x
                assert acc.variable.owner == threading.get_ident()
                np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import resource

    return pages * resource.getpagesize()


@pytest.mark.timeout(300)
def test_no_growth_over_100000_create_backward_free_cycles():
    def cycle(i):
        x = torch.ones(8, requires_grad=True)
        y = (x * 2.0).sin()
        if i % 3 == 0:
            y.tag = i  # kept by its tensor: freed by the collector
        s = y.sum()
        _ = s.grad_fn.next_functions[0][0]
        s.backward()
        x.grad.seen = True
        return x.grad is x.grad

    for i in range(2000):
        cycle(i)
    gc.collect()
    objects_before = len(gc.get_objects())
    rss_before = _rss_bytes()
    ok = all([cycle(i) for i in range(100_000)])
    gc.collect()
    objects_after = len(gc.get_objects())
    rss_after = _rss_bytes()
    assert ok
    assert objects_after - objects_before < 100, (objects_before, objects_after)
    assert rss_after - rss_before < 16 * 1024 * 1024, (rss_before, rss_after)
