"""ferrograd.optim: NAdam, RAdam, Adamax, Adadelta, ASGD and Rprop against NumPy implementations of
their documented algorithms (every option branch, float64 and float32), their state names and
dicts, complex parameters, differentiable steps and torch's argument errors."""

from __future__ import annotations

import copy

import ferrograd as fg
import numpy as np
import optim_util
import pytest
from conftest import to_np
from ferrograd import optim
from optim_util import ref_decay, run_steps, scripted_grads, stepped_once

# --- NumPy references, written from each algorithm's documented pseudo-code ---------------------
# torch keeps some scalars of the state (NAdam's mu_product, ASGD's eta and mu) in 0-dim float32
# tensors; the references round them to float32 where torch stores them.

f32 = np.float32


def ref_nadam(
    p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
    decoupled_weight_decay=False, maximize=False,
):  # fmt: skip
    b1, b2 = betas
    m, v = np.zeros_like(p), np.zeros_like(p)
    mu_product = f32(1.0)
    for t, g in enumerate(grads, start=1):
        p, g = ref_decay(p, g, lr, weight_decay, decoupled_weight_decay, maximize)
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product = f32(mu_product * f32(mu))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2**t)) + eps
        p = p - lr * (1 - mu) / (1 - float(mu_product)) * g / denom
        p = p - lr * mu_next / (1 - float(mu_product) * mu_next) * m / denom
    return p


def ref_radam(
    p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
    maximize=False,
):  # fmt: skip
    b1, b2 = betas
    m, v = np.zeros_like(p), np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(grads, start=1):
        p, g = ref_decay(p, g, lr, weight_decay, decoupled_weight_decay, maximize)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho_t > 5:
            rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * np.sqrt(1 - b2**t) / (np.sqrt(v) + eps) * rect
        else:
            p = p - lr * m_hat
    return p


def ref_adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False):
    b1, b2 = betas
    m, u = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p, g = ref_decay(p, g, lr, weight_decay, maximize=maximize)
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1**t) * m / u
    return p


def ref_adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    v, u = np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        p, g = ref_decay(p, g, lr, weight_decay, maximize=maximize)
        v = rho * v + (1 - rho) * g * g
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta
    return p


def ref_asgd(p, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False, ax=False):
    eta, mu = f32(lr), f32(1.0)
    avg = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        p, g = ref_decay(p, g, lr, weight_decay, maximize=maximize)
        p = p * (1 - lambd * float(eta)) - float(eta) * g
        avg = avg + float(mu) * (p - avg) if mu != 1 else p.copy()
        eta = f32(lr / (1 + lambd * lr * t) ** alpha)
        mu = f32(1 / max(1, t - t0))
    return avg if ax else p


def ref_rprop(p, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    etaminus, etaplus = etas
    lo, hi = step_sizes
    prev = np.zeros_like(p)
    size = np.full_like(p, lr)
    for g in grads:
        g = -g if maximize else g
        agree = g * prev
        size = np.where(agree > 0, np.minimum(size * etaplus, hi), size)
        size = np.where(agree < 0, np.maximum(size * etaminus, lo), size)
        g = np.where(agree < 0, 0.0, g)
        p = p - np.sign(g) * size
        prev = g
    return p


REFERENCES = {
    optim.NAdam: ref_nadam, optim.RAdam: ref_radam, optim.Adamax: ref_adamax,
    optim.Adadelta: ref_adadelta, optim.ASGD: ref_asgd, optim.Rprop: ref_rprop,
}  # fmt: skip

test_update_rule_matches_numpy_reference = optim_util.update_rule_test(REFERENCES, [(3,), (2, 4)], 8)


def test_asgd_ax_is_the_average_of_the_iterates_after_t0():
    grads = scripted_grads(4, (3,), 10)
    w = fg.tensor([1.0, -1.0, 0.5], dtype=fg.float64, requires_grad=True)
    opt = optim.ASGD([w], lr=0.1, t0=4)
    iterates = []
    for g in grads:
        w.grad = fg.tensor(g)
        opt.step()
        iterates.append(to_np(w))
    ax = to_np(opt.state[w]["ax"])
    # Step t uses the mu set after step t - 1, 1 / max(1, t - 1 - t0): ax follows p up to step
    # t0 + 2 and is then the running mean of the iterates from that step on.
    np.testing.assert_allclose(ax, np.mean(iterates[5:], axis=0), rtol=1e-6)
    expected = ref_asgd(np.array([1.0, -1.0, 0.5]), grads, lr=0.1, t0=4, ax=True)
    np.testing.assert_allclose(ax, expected, rtol=1e-12)
    assert opt.state[w]["mu"].item() == pytest.approx(1 / 6)
    assert opt.state[w]["eta"].item() == pytest.approx(0.1 / (1 + 1e-4 * 0.1 * 10) ** 0.75, rel=1e-7)


def test_rprop_steps_grow_while_the_sign_holds_and_shrink_on_a_flip():
    w = fg.tensor([0.0], dtype=fg.float64, requires_grad=True)
    opt = optim.Rprop([w], lr=0.1, etas=(0.5, 2.0), step_sizes=(0.01, 0.5))
    positions = []
    for g in [1.0, 1.0, 1.0, 1.0, -1.0, -1.0]:
        w.grad = fg.tensor([g], dtype=fg.float64)
        opt.step()
        positions.append(round(w.item(), 10))
    # steps 0.1, 0.2, 0.4, 0.5 (capped); the flip halves the size and skips; then 0.25 back.
    assert positions == [-0.1, -0.3, -0.7, -1.2, -1.2, -0.95]
    assert opt.state[w]["prev"].tolist() == [-1.0]


def test_radam_switches_to_the_rectified_step_when_rho_t_exceeds_five():
    # With beta2 = 0.6, rho_inf = 4: never rectified, always momentum SGD with bias correction.
    grads = scripted_grads(6, (2,), 5)
    w = fg.tensor([0.5, -0.5], dtype=fg.float64, requires_grad=True)
    run_steps(optim.RAdam([w], lr=0.1, betas=(0.9, 0.6)), [w], [grads], np.float64)
    m, p = np.zeros(2), np.array([0.5, -0.5])
    for t, g in enumerate(grads, start=1):
        m = 0.9 * m + 0.1 * g
        p = p - 0.1 * m / (1 - 0.9**t)
    np.testing.assert_allclose(to_np(w), p, rtol=1e-12)


# --- complex parameters, differentiable steps, lr tensors -----------------------------------------


@pytest.mark.parametrize("cls", list(REFERENCES))
def test_complex_params_update_like_their_real_view(cls):
    kw = dict(lr=0.05, weight_decay=0.1) if cls is not optim.Rprop else dict(lr=0.05)
    optim_util.check_complex_like_real_view(cls, kw, steps=5)


@pytest.mark.parametrize("cls", list(REFERENCES))
def test_differentiable_step_matches_the_plain_step_and_records_the_update(cls):
    grads = scripted_grads(8, (3,), 4)
    x0 = np.array([0.3, -0.2, 0.1])
    kw = dict(lr=0.05)
    plain = fg.tensor(x0, requires_grad=True)
    run_steps(cls([plain], **kw), [plain], [grads], np.float64)

    leaf = fg.tensor(x0, requires_grad=True)
    p = leaf * 1.0  # a non-leaf parameter, which only a differentiable optimizer accepts
    opt = cls([p], differentiable=True, **kw)
    for g in grads:
        p.grad = fg.tensor(g)
        opt.step()
    assert p.grad_fn is not None
    # NAdam's differentiable form takes its step sizes from the float32 ``mu_product`` tensor
    # (as torch's does), the plain one from its value: they agree to float32 rounding.
    rtol = 1e-7 if cls is optim.NAdam else 1e-12
    np.testing.assert_allclose(to_np(p), to_np(plain), rtol=rtol, atol=1e-15)
    p.sum().backward()
    assert leaf.grad is not None and np.all(np.isfinite(to_np(leaf.grad)))


@pytest.mark.parametrize("cls", list(REFERENCES))
def test_lr_as_zero_dim_tensor_gives_the_update_of_the_float_lr(cls):
    grads = scripted_grads(3, (3,), 4)
    results = []
    for lr in (0.125, fg.tensor(0.125)):
        w = fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64, requires_grad=True)
        run_steps(cls([w], lr=lr), [w], [grads], np.float64)
        results.append(w.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-7)


# --- state and state dicts ------------------------------------------------------------------------

STATE_NAMES = [
    (optim.NAdam, {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
    (optim.RAdam, {"step", "exp_avg", "exp_avg_sq"}),
    (optim.Adamax, {"step", "exp_avg", "exp_inf"}),
    (optim.Adadelta, {"step", "square_avg", "acc_delta"}),
    (optim.ASGD, {"step", "eta", "mu", "ax"}),
    (optim.Rprop, {"step", "prev", "step_size"}),
]


@pytest.mark.parametrize(("cls", "keys"), STATE_NAMES, ids=[c.__name__ for c, _ in STATE_NAMES])
def test_state_has_torch_names_with_0_dim_float32_scalars(cls, keys):
    w = fg.zeros(2, dtype=fg.float64, requires_grad=True)
    opt = cls([w])
    for _ in range(3):
        w.grad = fg.ones(2, dtype=fg.float64)
        opt.step()
    state = opt.state[w]
    assert set(state) == keys
    for name in keys:
        t = state[name]
        if name in ("step", "mu_product", "eta", "mu"):
            assert t.dim() == 0 and t.dtype == fg.float32
        else:
            assert t.dtype == fg.float64 and tuple(t.shape) == (2,)
    assert state["step"].item() == 3.0


GROUP_KEYS = {
    optim.NAdam: {"lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay",
                  "foreach", "maximize", "capturable", "differentiable"},
    optim.RAdam: {"lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "foreach", "maximize",
                  "capturable", "differentiable"},
    optim.Adamax: {"lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable",
                   "capturable"},
    optim.Adadelta: {"lr", "rho", "eps", "weight_decay", "foreach", "capturable", "maximize",
                     "differentiable"},
    optim.ASGD: {"lr", "lambd", "alpha", "t0", "weight_decay", "foreach", "maximize", "differentiable",
                 "capturable"},
    optim.Rprop: {"lr", "etas", "step_sizes", "capturable", "foreach", "maximize", "differentiable"},
}  # fmt: skip


@pytest.mark.parametrize("cls", list(GROUP_KEYS))
def test_param_groups_hold_torch_options_and_defaults(cls):
    group = cls([fg.zeros(1, requires_grad=True)]).param_groups[0]
    assert set(group) - {"params"} == GROUP_KEYS[cls]
    defaults = {
        optim.NAdam: dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, momentum_decay=4e-3),
        optim.RAdam: dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0),
        optim.Adamax: dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8),
        optim.Adadelta: dict(lr=1.0, rho=0.9, eps=1e-6),
        optim.ASGD: dict(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6),
        optim.Rprop: dict(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50)),
    }[cls]
    assert {k: group[k] for k in defaults} == defaults


test_loaded_optimizer_continues_exactly_like_the_original = optim_util.round_trip_test(REFERENCES, 0.02)


def test_old_checkpoints_with_number_scalars_load_as_tensors():
    _, opt = stepped_once(optim.NAdam)
    sd = copy.deepcopy(opt.state_dict())
    sd["state"][0]["step"] = 1
    sd["state"][0]["mu_product"] = float(sd["state"][0]["mu_product"])
    fresh = optim.NAdam([fg.zeros(2, requires_grad=True)])
    fresh.load_state_dict(sd)
    state = next(iter(fresh.state.values()))
    assert isinstance(state["step"], fg.Tensor) and isinstance(state["mu_product"], fg.Tensor)


# --- argument errors ------------------------------------------------------------------------------

P = [fg.zeros(2, requires_grad=True)]

ERRORS = [
    (lambda: optim.NAdam(P, lr=-1), "Invalid learning rate: -1"),
    (lambda: optim.NAdam(P, eps=-1), "Invalid epsilon value: -1"),
    (lambda: optim.NAdam(P, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda: optim.NAdam(P, betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    (lambda: optim.NAdam(P, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda: optim.NAdam(P, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda: optim.RAdam(P, lr=-1), "Invalid learning rate: -1"),
    (lambda: optim.RAdam(P, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda: optim.RAdam(P, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda: optim.Adamax(P, eps=-1), "Invalid epsilon value: -1"),
    (lambda: optim.Adamax(P, lr=fg.tensor([1.0, 2.0])), "Tensor lr must be 1-element"),
    (lambda: optim.Adadelta(P, rho=1.5), "Invalid rho value: 1.5"),
    (lambda: optim.Adadelta(P, eps=-1), "Invalid epsilon value: -1"),
    (lambda: optim.ASGD(P, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda: optim.Rprop(P, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda: optim.Rprop(P, etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
    (lambda: optim.Rprop(P, lr=-1), "Invalid learning rate: -1"),
]


@pytest.mark.parametrize(("make", "message"), ERRORS, ids=[m for _, m in ERRORS])
def test_invalid_hyper_parameters_raise_torch_errors(make, message):
    optim_util.check_invalid(make, ValueError, message)


@pytest.mark.parametrize("cls", list(REFERENCES))
def test_foreach_and_capturable_are_accepted_and_step_the_same(cls):
    grads = scripted_grads(2, (3,), 3)
    results = []
    for kw in (dict(), dict(foreach=True, capturable=True)):
        w = fg.tensor([1.0, 2.0, 3.0], dtype=fg.float64, requires_grad=True)
        opt = cls([w], lr=0.1, **kw)
        run_steps(opt, [w], [grads], np.float64)
        results.append(w.tolist())
    assert opt.param_groups[0]["foreach"] is True and opt.param_groups[0]["capturable"] is True
    assert results[0] == results[1]


# --- swap_in_optimizer_params_and_state -------------------------------------------------------------


def test_swap_in_runs_the_optimizer_on_other_params_and_state_and_restores_it():
    live = [fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)]
    opt = optim.Adam(live, lr=0.1)
    live[0].grad = fg.ones(2, dtype=fg.float64)
    opt.step()
    live_value, live_state = live[0].tolist(), opt.state
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0]["lr"] = 0.5
    other = fg.tensor([1.0, 2.0], dtype=fg.float64, requires_grad=True)
    other.grad = fg.tensor([1.0, -1.0], dtype=fg.float64)

    with optim.swap_in_optimizer_params_and_state(opt, {"w": other}, saved):
        assert opt.param_groups[0]["params"][0] is other and opt.param_groups[0]["lr"] == 0.5
        opt.step()
        opt.state[other]["extra"] = 1  # not an in-place tensor edit: dropped

    # The second Adam step, with lr 0.5 and the saved moments, on the swapped-in tensor.
    expected = ref_adam_second_step(np.array([1.0, 2.0]), [np.ones(2), np.array([1.0, -1.0])], lr=0.5)
    np.testing.assert_allclose(to_np(other), expected, rtol=1e-12)
    assert saved["state"][0]["step"].item() == 2.0 and "extra" not in saved["state"][0]
    assert opt.param_groups[0]["params"][0] is live[0] and opt.param_groups[0]["lr"] == 0.1
    assert opt.state is live_state and live[0].tolist() == live_value


def ref_adam_second_step(p, grads, lr, b1=0.9, b2=0.999, eps=1e-8):
    """Adam's moments over both gradients, and only the second step's update applied to ``p``."""
    m, v = np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
    return p - lr * (m / (1 - b1**2)) / (np.sqrt(v / (1 - b2**2)) + eps)


def test_swap_in_errors_match_torch():
    w = fg.zeros(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with optim.swap_in_optimizer_params_and_state(opt, {"w": w}, opt.state_dict()):
            pass
    w.grad = fg.ones(2)
    opt.step()
    extra = fg.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="to match optimizer.param_groups ordering"):
        with optim.swap_in_optimizer_params_and_state(opt, {"w": w, "x": extra}, opt.state_dict()):
            pass
