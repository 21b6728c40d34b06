"""ferrograd.optim: each update rule against a NumPy implementation of the documented algorithm,
parameter groups, state and state dicts, hooks, and torch's argument errors."""

from __future__ import annotations

import copy
import warnings

import ferrograd as fg
import numpy as np
import optim_util
import pytest
from conftest import to_np
from ferrograd import optim
from optim_util import ref_decay, run_steps, scripted_grads, stepped_once

# --- NumPy references, written from each algorithm's documented pseudo-code ---------------------


def ref_sgd(p, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    buf = None
    for g in grads:
        p, g = ref_decay(p, g, lr, weight_decay, maximize=maximize)
        if momentum != 0:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(
    p,
    grads,
    lr=1e-3,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    maximize=False,
    decoupled_weight_decay=False,
):
    b1, b2 = betas
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    v_max = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p, g = ref_decay(p, g, lr, weight_decay, decoupled_weight_decay, maximize)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        if amsgrad:
            v_max = np.maximum(v_max, v)
            v_hat = v_max / (1 - b2**t)
        else:
            v_hat = v / (1 - b2**t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def ref_adamw(p, grads, weight_decay=1e-2, **kw):
    return ref_adam(p, grads, weight_decay=weight_decay, decoupled_weight_decay=True, **kw)


def ref_rmsprop(
    p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False, maximize=False
):
    v = np.zeros_like(p)
    g_avg = np.zeros_like(p)
    buf = np.zeros_like(p)
    for g in grads:
        p, g = ref_decay(p, g, lr, weight_decay, maximize=maximize)
        v = alpha * v + (1 - alpha) * g * g
        v_tilde = v
        if centered:
            g_avg = alpha * g_avg + (1 - alpha) * g
            v_tilde = v - g_avg * g_avg
        if momentum > 0:
            buf = momentum * buf + g / (np.sqrt(v_tilde) + eps)
            p = p - lr * buf
        else:
            p = p - lr * g / (np.sqrt(v_tilde) + eps)
    return p


def ref_adagrad(
    p,
    grads,
    lr=1e-2,
    lr_decay=0.0,
    weight_decay=0.0,
    initial_accumulator_value=0.0,
    eps=1e-10,
    maximize=False,
):
    state_sum = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(grads, start=1):
        p, g = ref_decay(p, g, lr, weight_decay, maximize=maximize)
        clr = lr / (1 + (t - 1) * lr_decay)
        state_sum = state_sum + g * g
        p = p - clr * g / (np.sqrt(state_sum) + eps)
    return p


REFERENCES = {
    optim.SGD: ref_sgd, optim.Adam: ref_adam, optim.AdamW: ref_adamw, optim.RMSprop: ref_rmsprop,
    optim.Adagrad: ref_adagrad,
}  # fmt: skip

test_update_rule_matches_numpy_reference = optim_util.update_rule_test(REFERENCES, [(3,), (2, 4)], 6)


@pytest.mark.parametrize("cls", list(REFERENCES))
def test_gradients_from_backward_of_a_quadratic_loss(cls):
    # loss = sum((w - c)^2 * s) has gradient 2 * s * (w - c); the reference uses that closed form.
    c = np.array([0.5, -1.0, 2.0])
    s = np.array([1.0, 3.0, 0.5])
    w = fg.tensor([0.0, 0.0, 0.0], dtype=fg.float64, requires_grad=True)
    opt = cls([w], lr=0.05)
    ref_w = np.zeros(3)
    ref_grads = []
    for _ in range(5):
        opt.zero_grad()
        loss = ((w - fg.tensor(c)) ** 2 * fg.tensor(s)).sum()
        loss.backward()
        ref_grads.append(2 * s * (to_np(w) - c))
        opt.step()
    # Replay the recorded gradients through the reference (each depended on the previous step).
    expected = REFERENCES[cls](ref_w, ref_grads, lr=0.05)
    np.testing.assert_allclose(to_np(w), expected, rtol=1e-12, atol=1e-14)
    assert w.is_leaf and w.grad_fn is None and w.requires_grad


def test_param_groups_use_their_own_learning_rates():
    a = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    b = fg.tensor([3.0], dtype=fg.float64, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["momentum"] == 0
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    ga, gb = scripted_grads(1, (2,), 3), scripted_grads(2, (1,), 3)
    run_steps(opt, [a, b], [ga, gb], np.float64)
    np.testing.assert_allclose(to_np(a), ref_sgd(np.array([1.0, 2.0]), ga, lr=0.1), rtol=1e-12)
    np.testing.assert_allclose(to_np(b), ref_sgd(np.array([3.0]), gb, lr=0.5, momentum=0.9), rtol=1e-12)
    assert "momentum_buffer" not in opt.state[a] and "momentum_buffer" in opt.state[b]


@pytest.mark.parametrize("cls", list(REFERENCES))
def test_params_without_grad_are_skipped(cls):
    a = fg.tensor([1.0, 2.0], requires_grad=True)
    b = fg.tensor([3.0, 4.0], requires_grad=True)
    opt = cls([a, b], lr=0.1, weight_decay=0.1)
    for _ in range(3):
        a.grad = fg.tensor([1.0, -1.0])
        opt.step()
    assert b.tolist() == [3.0, 4.0]
    assert a.tolist() != [1.0, 2.0]
    if cls is optim.Adagrad:
        # Adagrad builds its state up front; the skipped parameter's step count stays 0.
        assert opt.state[b]["step"].item() == 0.0 and opt.state[a]["step"].item() == 3.0
    else:
        assert b not in opt.state


def test_zero_grad_set_to_none_false_keeps_zero_grads_that_still_step_weight_decay():
    w = fg.tensor([1.0, -2.0], dtype=fg.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, weight_decay=0.5)
    w.grad = fg.tensor([1.0, 1.0], dtype=fg.float64)
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and w.grad.tolist() == [0.0, 0.0]
    opt.step()
    np.testing.assert_allclose(to_np(w), np.array([1.0, -2.0]) * (1 - 0.1 * 0.5))
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # nothing to update now
    np.testing.assert_allclose(to_np(w), np.array([1.0, -2.0]) * (1 - 0.1 * 0.5))


def test_zero_grad_detaches_a_grad_that_has_history():
    w = fg.ones(2, requires_grad=True)
    x = fg.ones(2, requires_grad=True)
    w.grad = x * 2
    optim.SGD([w]).zero_grad(set_to_none=False)
    assert w.grad.grad_fn is None and w.grad.tolist() == [0.0, 0.0]


def test_lr_as_zero_dim_tensor_gives_the_update_of_the_float_lr():
    # A float32 tensor lr enters Adam's and Adagrad's step sizes in float32, hence the tolerance.
    grads = scripted_grads(3, (3,), 4)
    results = []
    for lr in (0.125, fg.tensor(0.125)):
        for cls in (optim.SGD, optim.Adam, optim.RMSprop, optim.Adagrad):
            kw = dict(lr_decay=0.3) if cls is optim.Adagrad else {}
            w = fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64, requires_grad=True)
            run_steps(cls([w], lr=lr, **kw), [w], [grads], np.float64)
            results.append(w.tolist())
    np.testing.assert_allclose(results[:4], results[4:], rtol=1e-7)
    assert results[0] == results[4] and results[2] == results[6]  # SGD and RMSprop use lr exactly


@pytest.mark.parametrize("cls", [optim.Adam, optim.RMSprop, optim.Adagrad, optim.SGD])
def test_complex_params_update_like_their_real_view(cls):
    kw = dict(lr=0.1, momentum=0.5) if cls in (optim.SGD, optim.RMSprop) else dict(lr=0.1)
    optim_util.check_complex_like_real_view(cls, kw, steps=4)


def test_adamw_is_adam_with_decoupled_weight_decay_and_its_defaults():
    w = fg.zeros(2, requires_grad=True)
    group = optim.AdamW([w]).param_groups[0]
    assert group["weight_decay"] == 1e-2 and group["decoupled_weight_decay"] is True
    assert optim.Adam([w]).param_groups[0]["decoupled_weight_decay"] is False
    grads = scripted_grads(9, (2,), 4)
    outs = []
    for make in (
        lambda p: optim.AdamW(p, lr=0.1, weight_decay=0.3),
        lambda p: optim.Adam(p, lr=0.1, weight_decay=0.3, decoupled_weight_decay=True),
    ):
        p = fg.tensor([1.0, -1.0], dtype=fg.float64, requires_grad=True)
        run_steps(make([p]), [p], [grads], np.float64)
        outs.append(p.tolist())
    assert outs[0] == outs[1]


# --- state and state dicts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls,kw,keys",
    [
        (optim.SGD, dict(momentum=0.9), {"momentum_buffer"}),
        (optim.SGD, dict(), set()),
        (optim.Adam, dict(), {"step", "exp_avg", "exp_avg_sq"}),
        (optim.Adam, dict(amsgrad=True), {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}),
        (
            optim.RMSprop,
            dict(momentum=0.1, centered=True),
            {"step", "square_avg", "momentum_buffer", "grad_avg"},
        ),
        (optim.RMSprop, dict(), {"step", "square_avg"}),
        (optim.Adagrad, dict(), {"step", "sum"}),
    ],
)
def test_state_has_torch_names_and_a_float32_step_counter(cls, kw, keys):
    w = fg.zeros(2, dtype=fg.float64, requires_grad=True)
    opt = cls([w], **kw)
    for _ in range(3):
        w.grad = fg.ones(2, dtype=fg.float64)
        opt.step()
    assert set(opt.state[w].keys()) == keys
    if "step" in keys:
        step = opt.state[w]["step"]
        assert step.dim() == 0 and step.dtype == fg.float32 and step.item() == 3.0
    for name in keys - {"step"}:
        assert opt.state[w][name].dtype == fg.float64 and tuple(opt.state[w][name].shape) == (2,)


def test_step_counter_is_float64_when_that_is_the_default_dtype():
    old = fg.get_default_dtype()
    fg.set_default_dtype(fg.float64)
    try:
        w, opt = stepped_once(optim.Adam)
        assert opt.state[w]["step"].dtype == fg.float64
    finally:
        fg.set_default_dtype(old)


def test_state_dict_indexes_params_across_groups():
    a, b, c = (fg.zeros(n, requires_grad=True) for n in (1, 2, 3))
    opt = optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
    b.grad = fg.ones(2)
    c.grad = fg.ones(3)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.1, 0.5]
    assert sorted(sd["state"]) == [1, 2]  # ``a`` had no grad, so no state
    assert sd["state"][2]["exp_avg"] is opt.state[c]["exp_avg"]
    expected_keys = {
        "lr",
        "betas",
        "eps",
        "weight_decay",
        "amsgrad",
        "maximize",
        "foreach",
        "capturable",
        "differentiable",
        "fused",
        "decoupled_weight_decay",
        "params",
    }
    assert set(sd["param_groups"][0]) == expected_keys


def test_named_parameters_are_kept_as_param_names():
    a, b = fg.zeros(1, requires_grad=True), fg.zeros(2, requires_grad=True)
    opt = optim.SGD([("weight", a), ("bias", b)], lr=0.1)
    assert opt.param_groups[0]["params"][0] is a
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]


test_loaded_optimizer_continues_exactly_like_the_original = optim_util.round_trip_test(REFERENCES, 0.05)


def test_load_state_dict_casts_floating_state_to_the_param_dtype_but_keeps_step():
    _, opt = stepped_once(optim.Adam)
    w64 = fg.zeros(2, dtype=fg.float64, requires_grad=True)
    other = optim.Adam([w64])
    other.load_state_dict(opt.state_dict())
    state = other.state[w64]
    assert state["exp_avg"].dtype == fg.float64 and state["exp_avg_sq"].dtype == fg.float64
    assert state["step"].dtype == fg.float32
    np.testing.assert_allclose(to_np(state["exp_avg"]), [0.1, 0.1], rtol=1e-6)


def test_load_state_dict_rejects_mismatched_groups():
    a, b = fg.zeros(1, requires_grad=True), fg.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([a]).load_state_dict(optim.SGD([{"params": [a]}, {"params": [b]}]).state_dict())
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([a, b]).load_state_dict(optim.SGD([a]).state_dict())


def test_load_state_dict_converts_a_number_step_from_old_checkpoints():
    _, opt = stepped_once(optim.Adam)
    sd = copy.deepcopy(opt.state_dict())
    sd["state"][0]["step"] = 1
    fresh = optim.Adam([fg.zeros(2, requires_grad=True)])
    fresh.load_state_dict(sd)
    step = next(iter(fresh.state.values()))["step"]
    assert isinstance(step, fg.Tensor) and step.item() == 1.0


# --- step, closure, hooks, repr ------------------------------------------------------------------


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    w = fg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    seen = []

    def closure():
        seen.append(fg.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with fg.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert loss.item() == 5.0
    np.testing.assert_allclose(to_np(w), [0.8, 1.6], rtol=1e-6)
    assert opt.step() is None


def test_step_hooks_run_in_order_and_can_be_removed():
    w = fg.zeros(1, requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    events = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: events.append(("pre", o is opt)))
    post = opt.register_step_post_hook(lambda o, args, kwargs: events.append(("post", w.item())))
    w.grad = fg.ones(1)
    opt.step()
    assert events == [("pre", True), ("post", -1.0)]
    pre.remove()
    post.remove()
    opt.step()
    assert len(events) == 2


def test_step_pre_hook_can_replace_the_arguments():
    w = fg.zeros(1, requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": lambda: "from hook"}))
    assert opt.step() == "from hook"


def test_global_step_hooks_apply_to_every_optimizer():
    from ferrograd.optim.optimizer import register_optimizer_step_post_hook

    names = []
    handle = register_optimizer_step_post_hook(lambda o, a, k: names.append(type(o).__name__))
    try:
        w = fg.zeros(1, requires_grad=True)
        optim.SGD([w]).step()
        optim.Adam([w]).step()
    finally:
        handle.remove()
    optim.SGD([w]).step()
    assert names == ["SGD", "Adam"]


def test_repr_lists_each_group_with_sorted_options():
    # The layout torch prints: a header, one block per group, options sorted, "params" left out.
    w = fg.zeros(1, requires_grad=True)
    text = repr(optim.SGD([{"params": [w], "lr": 0.5}], lr=0.1, momentum=0.9))
    assert text == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
        "    fused: None\n    lr: 0.5\n    maximize: False\n    momentum: 0.9\n    nesterov: False\n"
        "    weight_decay: 0\n)"
    )


def test_optimizer_state_is_keyed_by_tensor_identity():
    a, b = fg.zeros(2, requires_grad=True), fg.zeros(2, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    a.grad, b.grad = fg.ones(2), fg.full((2,), 2.0)
    opt.step()
    assert len(opt.state) == 2
    assert opt.state[a]["momentum_buffer"].tolist() == [1.0, 1.0]
    assert opt.state[b]["momentum_buffer"].tolist() == [2.0, 2.0]


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make,exc,message",
    [
        (lambda p: optim.SGD(p, lr=-1), ValueError, "Invalid learning rate: -1"),
        (lambda p: optim.SGD(p, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
        (lambda p: optim.SGD(p, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (
            lambda p: optim.SGD(p, nesterov=True),
            ValueError,
            "Nesterov momentum requires a momentum and zero dampening",
        ),
        (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True), ValueError, "Nesterov momentum"),
        (lambda p: optim.SGD(p, lr=fg.tensor([0.1, 0.2])), ValueError, "Tensor lr must be 1-element"),
        (lambda p: optim.Adam(p, lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
        (lambda p: optim.Adam(p, eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
        (lambda p: optim.Adam(p, betas=(1.0, 0.999)), ValueError, "Invalid beta parameter at index 0: 1.0"),
        (lambda p: optim.Adam(p, betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
        (lambda p: optim.Adam(p, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (
            lambda p: optim.Adam(p, betas=(0.9, fg.tensor(0.99))),
            ValueError,
            "betas must be either both floats",
        ),
        (lambda p: optim.Adam(p, fused=True, foreach=True), RuntimeError, "`fused` and `foreach` cannot be"),
        (
            lambda p: optim.Adam(p, fused=True, differentiable=True),
            RuntimeError,
            "does not support `differentiable`",
        ),
        (lambda p: optim.AdamW(p, betas=(0.9, 1.0)), ValueError, "Invalid beta parameter at index 1: 1.0"),
        (lambda p: optim.RMSprop(p, alpha=-0.1), ValueError, "Invalid alpha value: -0.1"),
        (lambda p: optim.RMSprop(p, momentum=-1), ValueError, "Invalid momentum value: -1"),
        (lambda p: optim.RMSprop(p, eps=-1), ValueError, "Invalid epsilon value: -1"),
        (lambda p: optim.Adagrad(p, lr_decay=-1), ValueError, "Invalid lr_decay value: -1"),
        (
            lambda p: optim.Adagrad(p, initial_accumulator_value=-1),
            ValueError,
            "Invalid initial_accumulator_value",
        ),
        (lambda p: optim.Adagrad(p, eps=-1), ValueError, "Invalid epsilon value: -1"),
    ],
)
def test_invalid_hyper_parameters_raise_torch_errors(make, exc, message):
    optim_util.check_invalid(lambda: make([fg.zeros(1, requires_grad=True)]), exc, message)


def test_invalid_param_collections_raise_torch_errors():
    a, b = fg.zeros(1, requires_grad=True), fg.zeros(1, requires_grad=True)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got"):
        optim.SGD(a)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([])
    with pytest.raises(TypeError, match="ordering of tensors in sets will change"):
        optim.SGD([{"params": {a}}])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        optim.SGD([a, 3])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([a * 2])
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.SGD([("w", a), b])
    with pytest.raises(ValueError, match="cannot add param group without names"):
        optim.SGD([{"params": [("w", a)]}, {"params": [b]}])


def test_add_param_group_rejects_overlap_and_missing_required_options():
    from ferrograd.optim.optimizer import Optimizer, required

    a, b = fg.zeros(1, requires_grad=True), fg.zeros(1, requires_grad=True)
    opt = optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([b])
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0
    with pytest.raises(ValueError, match="didn't specify a value of required optimization parameter lr"):
        Optimizer([a], {"lr": required})
    assert repr(required) == "<required parameter>"


def test_duplicate_params_in_one_group_warn():
    a = fg.zeros(1, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optim.SGD([a, a])
    assert any("duplicate parameters" in str(w.message) for w in caught)


def test_differentiable_step_records_the_update_in_the_graph():
    # p1 = p0 - lr * (g + wd * p0) with g held constant, so d(sum p1)/d(p0) = 1 - lr * wd.
    w0 = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    p = w0.clone()
    opt = optim.SGD([p], lr=0.1, weight_decay=0.5, differentiable=True)
    p.grad = fg.tensor([0.3, -0.3], dtype=fg.float64)
    opt.step()
    (g,) = fg.autograd.grad(p.sum(), w0)
    np.testing.assert_allclose(to_np(g), [0.95, 0.95], rtol=1e-12)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w0.clone()])


@pytest.mark.parametrize("amsgrad", [False, True])
def test_differentiable_adam_matches_the_plain_step(amsgrad):
    grads = scripted_grads(4, (3,), 4)
    outs = []
    for differentiable in (False, True):
        w0 = fg.tensor([1.0, -1.0, 0.5], dtype=fg.float64, requires_grad=True)
        p = w0.clone() if differentiable else w0
        run_steps(
            optim.Adam([p], lr=0.1, amsgrad=amsgrad, differentiable=differentiable), [p], [grads], np.float64
        )
        outs.append(p.tolist())
    # The differentiable form computes the bias corrections in float32 from the step tensor.
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5)
