"""A compiled forward replayed as one autograd node, CompiledFunctionBackward,
whose backward is a second captured program.

The oracle is eager ferrograd on the same inputs: the backward program runs
the same formulas in the engine's order, so gradients agree bitwise, except
where elementwise runs are fused (float rounding).
"""

from __future__ import annotations

import concurrent.futures

import ferrograd as torch
import numpy as np
import pytest
from test_compile import _chain, summed_run

F = torch.nn.functional


def _programs(cf):
    compiled = cf._compiled if isinstance(cf, torch.nn.Module) else cf._ferrograd_compiled
    return [e.program for e in compiled.programs()]


def _mlp(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16),
        torch.nn.Tanh(),
        torch.nn.Linear(16, 16),
        torch.nn.ReLU(),
        torch.nn.Linear(16, 4),
    ).double()


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


def test_a_compiled_classifier_loss_is_one_node_with_the_eager_gradients():
    model = _mlp(0)

    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    closs = torch.compile(loss_fn)
    rng = np.random.default_rng(1)
    for step in range(4):
        x = torch.tensor(rng.normal(size=(5, 8)))
        y = torch.tensor(rng.integers(0, 4, size=5))
        got = closs(x, y)
        if step >= 2:
            assert got.grad_fn.name() == "CompiledFunctionBackward"
        model.zero_grad()
        got.backward()
        mine = _grads(model)
        model.zero_grad()
        want = loss_fn(x, y)
        want.backward()
        assert got.item() == want.item()
        for a, b in zip(mine, _grads(model), strict=True):
            np.testing.assert_array_equal(a, b)
    (program,) = _programs(closs)
    assert program.backward_fallback() is None
    ops = program.backward_operations()
    assert "nll_loss_backward" in ops and "mm" in ops, ops


@pytest.mark.parametrize("seed", range(20))
def test_random_chains_differentiate_through_one_node(seed):
    f, names = _chain(seed)
    cf = torch.compile(f)
    g = np.random.default_rng(seed)
    c = torch.tensor(g.normal(size=(2, 3)))
    for call in range(4):
        data = g.normal(size=(2, 3))
        x = torch.tensor(data, requires_grad=True)
        loss, y = cf(x, c)
        (loss + (y * y).sum()).backward()
        x2 = torch.tensor(data, requires_grad=True)
        loss2, y2 = f(x2, c)
        (loss2 + (y2 * y2).sum()).backward()
        np.testing.assert_array_equal(y.detach().numpy(), y2.detach().numpy(), err_msg=str(names))
        np.testing.assert_allclose(
            x.grad.numpy(), x2.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=str(names)
        )
        if call >= 2:
            assert y.grad_fn.name() == "CompiledFunctionBackward", names
    (program,) = _programs(cf)
    assert program.backward_operations(), (names, program.backward_fallback())


def test_double_backward_through_a_compiled_forward_is_eager():
    model = _mlp(2)
    cmodel = torch.compile(model)
    rng = np.random.default_rng(3)

    def penalty(fwd, data):
        x = torch.tensor(data, requires_grad=True)
        out = fwd(x).sin().sum()
        (gx,) = torch.autograd.grad(out, x, create_graph=True)
        model.zero_grad()
        (gx * gx).sum().backward()
        return gx.detach().numpy(), _grads(model)

    for _ in range(3):
        data = rng.normal(size=(4, 8))
        got, want = penalty(cmodel, data), penalty(model, data)
        np.testing.assert_array_equal(got[0], want[0])
        # The second-order contributions reach the parameters along the
        # recomputed graph: summed in another order, within rounding.
        for a, b in zip(got[1], want[1], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert _programs(cmodel)[0].backward_operations()


def test_dropout_in_training_replays_as_one_node_with_the_eager_masks():
    torch.manual_seed(4)
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 12), torch.nn.Dropout(0.3), torch.nn.Linear(12, 2)
    ).double()
    cmodel = torch.compile(model)
    x = torch.randn(5, 6, dtype=torch.float64)
    for call in range(3):
        torch.manual_seed(10 + call)
        model.zero_grad()
        got = cmodel(x)
        got.sum().backward()
        mine = _grads(model)
        torch.manual_seed(10 + call)
        model.zero_grad()
        want = model(x)
        want.sum().backward()
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        for a, b in zip(mine, _grads(model), strict=True):
            np.testing.assert_array_equal(a, b)
    assert got.grad_fn.name() == "CompiledFunctionBackward"


def test_what_falls_back_says_why_and_still_matches_eager():
    # amax saves where its maxima are, a buffer its kernel makes: the
    # backward program cannot read it, so the program replays operation by
    # operation.
    def f(x):
        return x.tanh().amax(1)

    cf = torch.compile(f)
    data = np.random.default_rng(5).normal(size=(4, 6))
    for _ in range(3):
        x, x2 = torch.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        cf(x).sum().backward()
        f(x2).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())
    (program,) = _programs(cf)
    assert program.backward_operations() is None
    assert "made during the capture" in program.backward_fallback()


def test_compiled_forwards_from_eight_threads_match_eager():
    model = _mlp(6)
    cmodel = torch.compile(model)
    params = list(model.parameters())

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(10):
            data = rng.normal(size=(3, 8))
            x, x2 = torch.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
            (g1,) = torch.autograd.grad(cmodel(x).pow(2).sum(), [x])
            (g2,) = torch.autograd.grad(model(x2).pow(2).sum(), [x2])
            np.testing.assert_array_equal(g1.numpy(), g2.numpy())
            gp1 = torch.autograd.grad(cmodel(x).sum(), params)
            gp2 = torch.autograd.grad(model(x2).sum(), params)
            for a, b in zip(gp1, gp2, strict=True):
                np.testing.assert_array_equal(a.numpy(), b.numpy())

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    assert _programs(cmodel)[0].backward_operations()


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_summed_run_writes_its_derivatives_with_the_forward(dtype, reduce):
    dt = getattr(torch, dtype)
    cf = torch.compile(summed_run(reduce))
    rng = np.random.default_rng(3)
    rtol = 2e-5 if dtype == "float32" else 1e-11
    n = 50_000
    for scale in (1.0, 1.0, 1.0, -2.5, 1.0, 0.0):
        arrays = [rng.uniform(0.5, 2.0, size=n) for _ in range(3)]
        leaves = [torch.tensor(v, dtype=dt, requires_grad=True) for v in arrays]
        got = cf(*leaves)
        got.backward(torch.tensor(scale, dtype=dt))
        # By hand: u = a b + c, v = c / b, loss = sum(tanh(u) a - sigmoid(v)).
        a, b, c = (np.asarray(torch.tensor(v, dtype=dt).numpy(), dtype=np.float64) for v in arrays)
        t, s = np.tanh(a * b + c), _sigmoid(c / b)
        ds = s * (1 - s)
        want = [t + a * b * (1 - t * t), a * a * (1 - t * t) + ds * c / b**2, a * (1 - t * t) - ds / b]
        k = scale / (n if reduce == "mean" else 1)
        for leaf, w in zip(leaves, want, strict=True):
            np.testing.assert_allclose(leaf.grad.numpy(), k * w, rtol=rtol, atol=rtol * abs(k))
        np.testing.assert_allclose(got.item(), getattr(np, reduce)(t * a - s), rtol=rtol)
    (program,) = _programs(cf)
    assert program.backward_operations() == ["fused_elementwise_scale"]


def test_derivatives_a_retained_graph_keeps_are_not_handed_out():
    def f(a, b, c):
        return ((a * b + c).tanh() * a).sum()

    cf = torch.compile(f)
    rng = np.random.default_rng(4)
    for _ in range(3):
        leaves = [torch.tensor(rng.normal(size=300), requires_grad=True) for _ in range(3)]
        loss = cf(*leaves)
    first = torch.autograd.grad(loss, leaves, retain_graph=True)
    want = [g.numpy().copy() for g in first]
    for g in first:
        g.mul_(3.0)  # the graph's copies stay as they were
    again = torch.autograd.grad(loss, leaves, retain_graph=True)
    for g, w in zip(again, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w)
    loss.backward(retain_graph=True)
    loss.backward()
    for leaf, w in zip(leaves, want, strict=True):
        np.testing.assert_array_equal(leaf.grad.numpy(), w + w)
    assert loss.grad_fn.name() == "CompiledFunctionBackward"
