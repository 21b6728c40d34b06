"""ferrograd.optim: Adafactor and Muon against NumPy implementations of their documented
algorithms, their state and state dicts and torch's errors; SparseAdam's refusal of dense
gradients."""

from __future__ import annotations

import copy

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd import optim
from optim_util import run_steps, scripted_grads

# --- Adafactor ------------------------------------------------------------------------------------


def ref_adafactor(
    p, grads, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, maximize=False,
    machine_eps=2.0**-52,
):  # fmt: skip
    """Adafactor as documented: factored row/column means of g^2 for 2-D and larger parameters
    (over the last two dims), a full second moment otherwise."""
    eps1 = eps[0] if eps[0] is not None else machine_eps
    eps2 = eps[1]
    factored = p.ndim >= 2
    rows = np.zeros(p.shape[:-1] + (1,)) if factored else None
    cols = np.zeros(p.shape[:-2] + (1, p.shape[-1])) if factored else None
    v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        beta2_t = 1 - t**beta2_decay
        rho = min(lr, 1 / np.sqrt(t))
        alpha = max(eps2, np.sqrt(np.mean(p * p))) * rho
        p = p * (1 - lr * weight_decay)
        if factored:
            rows = beta2_t * rows + (1 - beta2_t) * np.mean(g * g, axis=-1, keepdims=True)
            cols = beta2_t * cols + (1 - beta2_t) * np.mean(g * g, axis=-2, keepdims=True)
            v_hat = rows @ cols / np.maximum(np.mean(rows, axis=-2, keepdims=True), eps1)
        else:
            v = beta2_t * v + (1 - beta2_t) * g * g
            v_hat = v
        u = g / np.maximum(np.sqrt(v_hat), eps1)
        u = u / max(1.0, np.sqrt(np.mean(u * u)) / d)
        p = p - alpha * u
    return p


ADAFACTOR_CASES = [
    dict(),
    dict(lr=0.1, weight_decay=0.1),
    dict(lr=0.5, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5),
    dict(lr=0.05, maximize=True, eps=(1e-30, 1e-3)),
]
ADAFACTOR_SHAPES = [(), (3,), (2, 4), (2, 3, 5)]


@pytest.mark.parametrize("kw", ADAFACTOR_CASES, ids=[str(kw) for kw in ADAFACTOR_CASES])
@pytest.mark.parametrize("dtype", [fg.float64, fg.float32], ids=["f64", "f32"])
def test_adafactor_matches_numpy_reference(kw, dtype):
    np_dtype = np.float64 if dtype == fg.float64 else np.float32
    rng = np.random.default_rng(1)
    starts = [np.asarray(rng.normal(size=s), dtype=np_dtype) for s in ADAFACTOR_SHAPES]
    grads = [scripted_grads(i, s, 8) for i, s in enumerate(ADAFACTOR_SHAPES)]
    params = [fg.tensor(x, requires_grad=True) for x in starts]
    run_steps(optim.Adafactor(params, **kw), params, grads, np_dtype)
    machine_eps = 2.0**-52 if dtype == fg.float64 else 2.0**-23
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == fg.float64 else dict(rtol=1e-5, atol=1e-6)
    for p, x0, g in zip(params, starts, grads, strict=True):
        expected = ref_adafactor(
            x0.astype(np.float64), [np.asarray(gi, dtype=np_dtype).astype(np.float64) for gi in g],
            machine_eps=machine_eps, **kw,
        )  # fmt: skip
        np.testing.assert_allclose(to_np(p), expected, **tol)


def test_adafactor_keeps_factored_state_for_matrices_and_full_state_for_vectors():
    m, v = fg.zeros(2, 3, 4, requires_grad=True), fg.zeros(5, requires_grad=True)
    opt = optim.Adafactor([m, v])
    m.grad, v.grad = fg.ones(2, 3, 4), fg.ones(5)
    opt.step()
    assert set(opt.state[m]) == {"step", "row_var", "col_var"}
    assert tuple(opt.state[m]["row_var"].shape) == (2, 3, 1)
    assert tuple(opt.state[m]["col_var"].shape) == (2, 1, 4)
    assert set(opt.state[v]) == {"step", "variance"}
    step = opt.state[v]["step"]
    assert step.dim() == 0 and step.dtype == fg.float32 and step.item() == 1.0
    group = opt.param_groups[0]
    assert {k: group[k] for k in group if k != "params"} == {
        "lr": 1e-2, "beta2_decay": -0.8, "eps": (None, 1e-3), "d": 1.0, "weight_decay": 0.0,
        "foreach": None, "maximize": False,
    }  # fmt: skip


def test_adafactor_first_step_moves_each_entry_by_the_relative_step_size():
    # At t = 1, beta2_t = 0: V = g^2 exactly for a rank-1 |g|, so U = sign(g) and
    # RMS(U) = 1 (no clipping); the step is alpha = max(eps2, RMS(p)) * min(lr, 1).
    p0 = np.array([[3.0, -1.0], [2.0, 0.5]])
    w = fg.tensor(p0, requires_grad=True)
    opt = optim.Adafactor([w], lr=0.1)
    w.grad = fg.tensor([[2.0, -2.0], [1.0, 1.0]], dtype=fg.float64)
    opt.step()
    alpha = np.sqrt(np.mean(p0 * p0)) * 0.1
    np.testing.assert_allclose(to_np(w), p0 - alpha * np.sign([[2.0, -2.0], [1.0, 1.0]]), rtol=1e-12)


def test_adafactor_state_dict_round_trip_continues_identically():
    grads = [scripted_grads(3, (3, 2), 8), scripted_grads(4, (4,), 8)]
    params = [fg.ones(3, 2, requires_grad=True), fg.ones(4, requires_grad=True)]
    opt = optim.Adafactor(params, lr=0.05, weight_decay=0.1)
    run_steps(opt, params, [g[:4] for g in grads], np.float32)
    clones = [p.detach().clone().requires_grad_(True) for p in params]
    fresh = optim.Adafactor(clones)
    fresh.load_state_dict(copy.deepcopy(opt.state_dict()))
    assert fresh.param_groups[0]["lr"] == 0.05
    run_steps(opt, params, [g[4:] for g in grads], np.float32)
    run_steps(fresh, clones, [g[4:] for g in grads], np.float32)
    assert [p.tolist() for p in params] == [q.tolist() for q in clones]


ADAFACTOR_ERRORS = [
    (dict(lr=-1), "Learning rate should be >= 0 but is: -1"),
    (dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    (dict(eps=(-1, 1e-3)), "epsilon1 should be >= 0 but is: -1"),
    (dict(eps=(None, -1)), "epsilon2 should be >= 0 but is: -1"),
    (dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (dict(weight_decay=-1), "weight_decay should be >= 0 but is: -1"),
]


@pytest.mark.parametrize(("kw", "message"), ADAFACTOR_ERRORS, ids=[m for _, m in ADAFACTOR_ERRORS])
def test_adafactor_argument_errors(kw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        optim.Adafactor([fg.zeros(2, requires_grad=True)], **kw)


def test_adafactor_refuses_complex_parameters():
    z = fg.zeros(2, dtype=fg.complex64, requires_grad=True)
    opt = optim.Adafactor([z])
    z.grad = fg.ones(2, dtype=fg.complex64)
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        opt.step()


# --- Muon -----------------------------------------------------------------------------------------


def ref_newton_schulz(u, coefficients=(3.4445, -4.775, 2.0315), steps=5, eps=1e-7):
    a, b, c = coefficients
    tall = u.shape[0] > u.shape[1]
    x = u.T if tall else u
    x = x / max(np.linalg.norm(x), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def ref_muon(p, grads, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True, adjust_lr_fn=None):
    """Muon as documented, with the momentum as the exponential average torch keeps (its scale
    differs from the plain sum's, its direction does not, and NS removes the scale)."""
    buf = np.zeros_like(p)
    rows, cols = p.shape
    for g in grads:
        buf = momentum * buf + (1 - momentum) * g
        u = (1 - momentum) * g + momentum * buf if nesterov else buf
        if adjust_lr_fn == "match_rms_adamw":
            adjusted = 0.2 * np.sqrt(max(rows, cols)) * lr
        else:
            adjusted = lr * np.sqrt(max(1, rows / cols))
        p = p * (1 - lr * weight_decay) - adjusted * ref_newton_schulz(u)
    return p, buf


MUON_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9, nesterov=False, weight_decay=0.0),
    dict(lr=0.05, adjust_lr_fn="match_rms_adamw"),
]


@pytest.mark.parametrize("kw", MUON_CASES, ids=[str(kw) for kw in MUON_CASES])
@pytest.mark.parametrize("shape", [(3, 5), (6, 2), (4, 4)])
def test_muon_matches_numpy_reference_to_bfloat16_precision(kw, shape):
    rng = np.random.default_rng(0)
    p0 = rng.normal(size=shape)
    grads = [rng.normal(size=shape) for _ in range(4)]
    w = fg.tensor(p0, requires_grad=True)
    opt = optim.Muon([w], **kw)
    run_steps(opt, [w], [grads], np.float64)
    expected, buf = ref_muon(p0, grads, **kw)
    # The momentum is exact; the orthogonalization runs in bfloat16 (8 bits of mantissa).
    np.testing.assert_allclose(to_np(opt.state[w]["momentum_buffer"]), buf, rtol=1e-12)
    np.testing.assert_allclose(to_np(w), expected, atol=0.03 * np.abs(expected - p0).max())
    assert w.dtype == fg.float64


def test_muon_update_is_orthogonal_with_a_converging_iteration():
    # The cubic Newton-Schulz map X -> 1.5 X - 0.5 X X^T X converges to the orthogonal polar
    # factor; with no momentum or decay, the step is -lr * that factor.
    rng = np.random.default_rng(2)
    g = rng.normal(size=(3, 5))
    w = fg.zeros(3, 5, dtype=fg.float64, requires_grad=True)
    opt = optim.Muon(
        [w], lr=1.0, momentum=0.0, weight_decay=0.0, ns_coefficients=(1.5, -0.5, 0.0), ns_steps=30
    )
    w.grad = fg.tensor(g)
    opt.step()
    update = -to_np(w)
    np.testing.assert_allclose(update @ update.T, np.eye(3), atol=3e-2)
    u_svd, _, vt = np.linalg.svd(g, full_matrices=False)
    np.testing.assert_allclose(update, u_svd @ vt, atol=3e-2)


def test_muon_state_defaults_and_round_trip():
    w = fg.zeros(2, 3, requires_grad=True)
    opt = optim.Muon([w])
    group = opt.param_groups[0]
    assert {k: group[k] for k in group if k != "params"} == {
        "lr": 1e-3, "weight_decay": 0.1, "momentum": 0.95, "nesterov": True,
        "ns_coefficients": (3.4445, -4.775, 2.0315), "eps": 1e-7, "ns_steps": 5, "adjust_lr_fn": None,
    }  # fmt: skip
    grads = scripted_grads(5, (2, 3), 8)
    run_steps(opt, [w], [grads[:4]], np.float32)
    assert set(opt.state[w]) == {"momentum_buffer"}
    clone = w.detach().clone().requires_grad_(True)
    fresh = optim.Muon([clone])
    fresh.load_state_dict(copy.deepcopy(opt.state_dict()))
    run_steps(opt, [w], [grads[4:]], np.float32)
    run_steps(fresh, [clone], [grads[4:]], np.float32)
    assert w.tolist() == clone.tolist()


def test_muon_errors():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters whereas we found a parameter"):
        optim.Muon([fg.zeros(2, requires_grad=True)])
    m = [fg.zeros(2, 2, requires_grad=True)]
    with pytest.raises(ValueError, match="Learning rate should be >= 0 but is: -1"):
        optim.Muon(m, lr=-1)
    with pytest.raises(ValueError, match="weight decay should be >= 0 but is: -1"):
        optim.Muon(m, weight_decay=-1)
    with pytest.raises(ValueError, match="momentum should be >= 0 but is: -1"):
        optim.Muon(m, momentum=-1)
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        optim.Muon(m, adjust_lr_fn="x")
    z = fg.zeros(2, 2, dtype=fg.complex64, requires_grad=True)
    opt = optim.Muon([z])
    z.grad = fg.ones(2, 2, dtype=fg.complex64)
    with pytest.raises(RuntimeError, match="Muon does not support complex parameters"):
        opt.step()


# --- SparseAdam -----------------------------------------------------------------------------------


def test_sparse_adam_refuses_dense_gradients_as_torch_does():
    w = fg.zeros(2, requires_grad=True)
    opt = optim.SparseAdam([w], lr=0.01)
    assert opt.step(lambda: 3.0) == 3.0  # no gradient yet: nothing to refuse
    w.grad = fg.ones(2)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider"):
        opt.step()
    group = opt.param_groups[0]
    assert {k: group[k] for k in group if k != "params"} == {
        "lr": 0.01, "betas": (0.9, 0.999), "eps": 1e-8, "maximize": False,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(lr=0.0), "Invalid learning rate: 0.0"),
        (dict(eps=0.0), "Invalid epsilon value: 0.0"),
        (dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ],
)
def test_sparse_adam_argument_errors(kw, message):
    with pytest.raises(ValueError, match=message):
        optim.SparseAdam([fg.zeros(2, requires_grad=True)], **kw)
