"""``ferrograd.utils.checkpoint``: gradients through checkpointed regions
equal the plain ones bit for bit (the same ops run, the RNG state is
replayed), the region's forward runs again in backward, the graph keeps
fewer tensors, and the errors and warnings are torch's."""

from __future__ import annotations

import warnings

import ferrograd as fg
import numpy as np
import pytest
from ferrograd import nn
from ferrograd.autograd.graph import saved_tensors_hooks
from ferrograd.utils.checkpoint import (
    CheckpointError,
    checkpoint,
    checkpoint_sequential,
    noop_context_fn,
    set_checkpoint_early_stop,
)

VARIANTS = [True, False]


def _mlp(depth: int = 4, width: int = 8, p: float = 0.3) -> nn.Sequential:
    fg.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh(), nn.Dropout(p)]
    return nn.Sequential(*layers)


def _grads(model: nn.Module, x: fg.Tensor, run) -> tuple[np.ndarray, list[np.ndarray]]:
    """The loss value, x's gradient and the parameters' gradients after one
    backward of ``run(model, x)``, with the RNG seeded the same way."""
    model.zero_grad()
    x = x.detach().requires_grad_()
    fg.manual_seed(123)
    loss = (run(model, x) ** 2).sum()
    loss.backward()
    return loss.detach().numpy(), [x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()]


def _per_layer(use_reentrant: bool):
    def run(model, x):
        for layer in model:
            x = checkpoint(layer, x, use_reentrant=use_reentrant)
        return x

    return run


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_mlp_with_dropout_gradients_are_bitwise_equal(use_reentrant):
    model, x = _mlp(), fg.randn(5, 8)
    loss, plain = _grads(model, x, lambda m, t: m(t))
    loss_c, checked = _grads(model, x, _per_layer(use_reentrant))
    assert np.array_equal(loss, loss_c)
    for a, b in zip(plain, checked, strict=True):
        assert np.array_equal(a, b)
    # dropout really drew masks: some activations were zeroed
    fg.manual_seed(123)
    assert (model(x) == 0).any()


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_without_preserved_rng_state_the_masks_differ(use_reentrant):
    model, x = _mlp(depth=1, width=64, p=0.5), fg.randn(4, 64)
    _, plain = _grads(model, x, lambda m, t: m(t))

    def run(m, t):
        return checkpoint(m, t, use_reentrant=use_reentrant, preserve_rng_state=False)

    _, checked = _grads(model, x, run)
    assert not all(np.array_equal(a, b) for a, b in zip(plain, checked, strict=True))


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_the_rng_stream_after_backward_is_left_as_it_was(use_reentrant):
    x = fg.randn(6, requires_grad=True)
    y = checkpoint(lambda t: nn.functional.dropout(t, 0.5), x, use_reentrant=use_reentrant)
    state = fg.get_rng_state()
    y.sum().backward()
    assert fg.equal(fg.get_rng_state(), state)


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_forward_runs_again_in_backward(use_reentrant):
    calls = []

    def f(t):
        calls.append(fg.is_grad_enabled())
        return t.sin().exp()

    x = fg.tensor([0.1, 0.2, 0.3], requires_grad=True)
    y = checkpoint(f, x, use_reentrant=use_reentrant)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2 and calls[1]  # the rerun records a graph
    # reentrant: the forward itself runs without a graph
    assert calls[0] is (not use_reentrant)
    xn = x.detach().numpy()
    assert np.allclose(x.grad.numpy(), np.cos(xn) * np.exp(np.sin(xn)))


def _packs(run) -> int:
    count = [0]

    def pack(t):
        count[0] += 1
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        run()
    return count[0]


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_checkpointed_graph_saves_fewer_tensors(use_reentrant):
    model, x = _mlp(depth=4), fg.randn(3, 8, requires_grad=True)
    plain = _packs(lambda: model(x).sum())
    checked = _packs(lambda: _per_layer(use_reentrant)(model, x).sum())
    # plain: each block (Linear, Tanh, Dropout) saves at least its input,
    # weight, tanh output and dropout mask; checkpointed: at most each
    # layer's input (the reentrant Function saves it, the hooks drop all)
    assert plain >= 4 * len(model) // 3
    assert checked <= len(model) < plain
    if not use_reentrant:
        assert checked == 0


def test_non_reentrant_works_with_autograd_grad_and_inputs():
    w = fg.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = fg.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    y = checkpoint(lambda a, b: (a @ b).tanh(), x, w, use_reentrant=False)
    gx, gw = fg.autograd.grad(y.sum(), (x, w))
    xn, wn = x.detach().numpy(), w.detach().numpy()
    d = 1 - np.tanh(xn @ wn) ** 2
    assert np.allclose(gx.numpy(), d @ wn.T) and np.allclose(gw.numpy(), xn.T @ d)
    y2 = checkpoint(lambda a, b: (a @ b).tanh(), x, w, use_reentrant=False)
    y2.sum().backward(inputs=[w])
    assert x.grad is None and np.allclose(w.grad.numpy(), xn.T @ d)


@pytest.mark.parametrize("call", ["grad", "inputs"])
def test_reentrant_refuses_grad_and_backward_inputs(call):
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(fg.sin, x, use_reentrant=True).sum()
    with pytest.raises(RuntimeError, match="use_reentrant=True"):
        if call == "grad":
            fg.autograd.grad(y, x)
        else:
            y.backward(inputs=[x])


def test_reentrant_warns_when_no_input_requires_grad():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(fg.sin, fg.tensor([1.0]), use_reentrant=True)
    assert not y.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not checkpoint(fg.sin, fg.tensor([1.0]), use_reentrant=False).requires_grad


@pytest.mark.parametrize("fn", [checkpoint, checkpoint_sequential])
def test_missing_use_reentrant_warns_and_runs_reentrant(fn):
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant"):
        y = checkpoint(fg.sin, x) if fn is checkpoint else checkpoint_sequential([fg.sin, fg.cos], 2, x)
    with pytest.raises(RuntimeError, match="use_reentrant=True"):
        fg.autograd.grad(y.sum(), x)


def test_argument_errors_are_torchs():
    x = fg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale: t * scale, x, use_reentrant=True, scale=2.0)
    with pytest.raises(ValueError, match="context_fn"):
        checkpoint(fg.sin, x, use_reentrant=True, context_fn=lambda: noop_context_fn())
    with pytest.raises(ValueError, match="debug"):
        checkpoint(fg.sin, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(fg.sin, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential([fg.sin], 1, x, use_reentrant=False, foo=1)
    for bad in (0, 3):
        with pytest.raises(ValueError, match="segments"):
            checkpoint_sequential([fg.sin, fg.cos], bad, x, use_reentrant=False)


def test_non_reentrant_passes_keyword_arguments():
    x = fg.tensor([0.5, 1.5], requires_grad=True)
    calls = []

    def f(t, *, scale, shift=0.0):
        calls.append((scale, shift))
        return (t * scale + shift).exp()

    y = checkpoint(f, x, use_reentrant=False, scale=3.0, shift=-1.0)
    y.sum().backward()
    assert calls == [(3.0, -1.0)] * 2
    xn = x.detach().numpy()
    assert np.allclose(x.grad.numpy(), 3 * np.exp(3 * xn - 1))


def test_non_reentrant_detects_a_rerun_that_differs():
    state = {"n": 0}

    def shrinking(t):
        state["n"] += 1
        return t[: 3 - state["n"] + 1].sin()

    x = fg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(CheckpointError, match="shape"):
        checkpoint(shrinking, x, use_reentrant=False).sum().backward()
    assert issubclass(CheckpointError, RuntimeError)

    def more_ops(t):
        state["n"] += 1
        out = t.sin()
        return out.exp() if state["n"] > 1 else out

    state["n"] = 0
    with pytest.raises(CheckpointError, match="more tensors"):
        checkpoint(more_ops, x, use_reentrant=False, early_stop=False).sum().backward()

    def fewer_ops(t):
        state["n"] += 1
        out = t.sin()
        return out.exp() if state["n"] == 1 else out

    state["n"] = 0
    with pytest.raises(CheckpointError, match="saved 1 tensors"):
        checkpoint(fewer_ops, x, use_reentrant=False).sum().backward()


def test_early_stop_cuts_the_rerun_short():
    seen = []

    def f(t):
        a = t.sin()
        seen.append("after sin")
        b = a.exp()
        seen.append("after exp")
        return b + 1  # saves nothing

    x = fg.tensor([0.5], requires_grad=True)
    checkpoint(f, x, use_reentrant=False).sum().backward()
    assert seen == ["after sin", "after exp", "after sin"]
    seen.clear()
    with set_checkpoint_early_stop(False):
        y = checkpoint(f, x, use_reentrant=False)
    y.sum().backward()
    assert seen == ["after sin", "after exp"] * 2


def test_non_reentrant_retain_graph_reruns_per_backward():
    calls = [0]

    def f(t):
        calls[0] += 1
        return t.sin()

    x = fg.tensor([0.25, 1.0], requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert calls[0] == 3
    assert np.allclose(x.grad.numpy(), 2 * np.cos(x.detach().numpy()))
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_double_backward_through_non_reentrant():
    x = fg.tensor([0.3, -1.2, 2.0], dtype=fg.float64, requires_grad=True)
    assert fg.autograd.gradgradcheck(
        lambda t: checkpoint(lambda u: u.sin() * u.exp(), t, use_reentrant=False), (x,)
    )
    y = checkpoint(lambda u: u.sin(), x, use_reentrant=False).sum()
    (g,) = fg.autograd.grad(y, x, create_graph=True)
    (gg,) = fg.autograd.grad(g.sum(), x)
    assert np.allclose(gg.numpy(), -np.sin(x.detach().numpy()))


def test_nested_non_reentrant_checkpoints():
    x = fg.tensor([0.2, 0.4], dtype=fg.float64, requires_grad=True)

    def inner(t):
        return t.exp().sin()

    def outer(t):
        return checkpoint(inner, t.tanh(), use_reentrant=False) * t

    assert fg.autograd.gradcheck(lambda t: checkpoint(outer, t, use_reentrant=False), (x,))


def test_context_fn_wraps_forward_and_rerun():
    log = []

    class Tag:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            log.append(self.name)

        def __exit__(self, *exc):
            return False

    x = fg.tensor([1.0], requires_grad=True)
    y = checkpoint(fg.sin, x, use_reentrant=False, context_fn=lambda: (Tag("forward"), Tag("rerun")))
    assert log == ["forward"]
    y.backward()
    assert log == ["forward", "rerun"]


@pytest.mark.parametrize("use_reentrant", VARIANTS)
@pytest.mark.parametrize("segments", [1, 2, 3, 4])
def test_checkpoint_sequential_equals_plain_sequential(use_reentrant, segments):
    model, x = _mlp(depth=4), fg.randn(2, 8)
    loss, plain = _grads(model, x, lambda m, t: m(t))

    def run(m, t):
        return checkpoint_sequential(m, segments, t, use_reentrant=use_reentrant)

    loss_c, checked = _grads(model, x, run)
    assert np.array_equal(loss, loss_c)
    for a, b in zip(plain, checked, strict=True):
        assert np.array_equal(a, b)


def test_checkpoint_sequential_takes_a_list_of_callables():
    x = fg.tensor([0.5, 1.0], requires_grad=True)
    y = checkpoint_sequential([fg.sin, fg.exp, fg.tanh], 2, x, use_reentrant=False)
    y.sum().backward()
    xn = x.detach().numpy()
    e = np.exp(np.sin(xn))
    assert np.allclose(x.grad.numpy(), (1 - np.tanh(e) ** 2) * e * np.cos(xn))


@pytest.mark.parametrize("use_reentrant", VARIANTS)
def test_non_tensor_arguments_and_outputs_pass_through(use_reentrant):
    x = fg.tensor([1.0, 2.0], requires_grad=True)
    y, tag = checkpoint(lambda t, k, name: (t**k, name), x, 3, "cube", use_reentrant=use_reentrant)
    assert tag == "cube"
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)


def test_non_reentrant_gives_parameters_gradients_when_the_input_needs_none():
    model, x = _mlp(depth=2, p=0.0), fg.randn(3, 8)
    (model(x) ** 2).sum().backward()
    plain = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    (checkpoint(model, x, use_reentrant=False) ** 2).sum().backward()
    for a, p in zip(plain, model.parameters(), strict=True):
        assert np.array_equal(a, p.grad.numpy())


@pytest.mark.parametrize("debug", [False, True])
def test_debug_lists_every_mismatch(debug):
    from ferrograd.utils.checkpoint import set_checkpoint_debug_enabled

    state = {"n": 0}

    def f(t):
        state["n"] += 1
        u = t[: 4 - state["n"]]
        return u.sin() * u.exp()  # saves u (for sin), exp's output, and both factors

    x = fg.ones(3, requires_grad=True)
    with set_checkpoint_debug_enabled(debug):
        y = checkpoint(f, x, use_reentrant=False)
    with pytest.raises(CheckpointError) as info:
        y.sum().backward()
    message = str(info.value)
    assert ("tensor 1:" in message) is debug
    assert ("more; pass debug=True" in message) is (not debug)


def test_nested_reentrant_checkpoints_match_the_plain_gradient():
    def inner(t):
        return t.exp().sin()

    def outer(t):
        return checkpoint(inner, t.tanh(), use_reentrant=True) * t

    x = fg.tensor([0.2, 0.4], requires_grad=True)
    (inner(x.tanh()) * x).sum().backward()
    plain = x.grad.numpy().copy()
    x.grad = None
    with warnings.catch_warnings():
        # the inner call runs inside the outer no-grad forward
        warnings.simplefilter("ignore", UserWarning)
        checkpoint(outer, x, use_reentrant=True).sum().backward()
    assert np.array_equal(plain, x.grad.numpy())
