"""What the ferrograd.optim tests share (test helper): scripted gradients, stepping an optimizer
through them, the NumPy references' common prologue, and the checks that every algorithm goes
through (its update rule against a NumPy reference, a state-dict round trip, complex parameters
against their real view)."""

from __future__ import annotations

import copy

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd import optim

# The option branches of every algorithm that the update tests step through: each test module
# takes the cases of the algorithms it has references for (test_optim_core_steps.py takes all).
UPDATE_CASES = [
    (optim.SGD, dict(lr=0.1)),
    (optim.SGD, dict(lr=0.1, weight_decay=0.05)),
    (optim.SGD, dict(lr=0.05, momentum=0.9)),
    (optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    (optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True)),
    (optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True, weight_decay=0.1)),
    (optim.Adam, dict(lr=0.01)),
    (optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    (optim.Adam, dict(lr=0.01, amsgrad=True)),
    (optim.Adam, dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.05)),
    (optim.Adam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (optim.AdamW, dict(lr=0.01)),
    (optim.AdamW, dict(lr=0.01, weight_decay=0.2, amsgrad=True, maximize=True)),
    (optim.RMSprop, dict(lr=0.01)),
    (optim.RMSprop, dict(lr=0.01, alpha=0.9, weight_decay=0.1)),
    (optim.RMSprop, dict(lr=0.01, centered=True)),
    (optim.RMSprop, dict(lr=0.01, momentum=0.7)),
    (optim.RMSprop, dict(lr=0.01, momentum=0.7, centered=True, maximize=True, eps=1e-4)),
    (optim.Adagrad, dict(lr=0.1)),
    (optim.Adagrad, dict(lr=0.1, lr_decay=0.2)),
    (optim.Adagrad, dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6)),
    (optim.Adagrad, dict(lr=0.1, lr_decay=0.1, maximize=True)),
    (optim.NAdam, dict(lr=0.01)),
    (optim.NAdam, dict(lr=0.01, betas=(0.8, 0.95), eps=1e-4, weight_decay=0.1, momentum_decay=0.05)),
    (optim.NAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    (optim.RAdam, dict(lr=0.01)),  # rho_t <= 5 for the first steps: momentum SGD
    (optim.RAdam, dict(lr=0.01, betas=(0.9, 0.6))),  # rectified from step 2 on
    (optim.RAdam, dict(lr=0.01, betas=(0.8, 0.7), weight_decay=0.1, eps=1e-3)),
    (optim.RAdam, dict(lr=0.01, betas=(0.8, 0.7), weight_decay=0.1, decoupled_weight_decay=True,
                       maximize=True)),  # fmt: skip
    (optim.Adamax, dict(lr=0.01)),
    (optim.Adamax, dict(lr=0.01, betas=(0.5, 0.7), eps=1e-3, weight_decay=0.1)),
    (optim.Adamax, dict(lr=0.01, weight_decay=0.1, maximize=True)),
    (optim.Adadelta, dict()),
    (optim.Adadelta, dict(lr=0.5, rho=0.5, eps=1e-3, weight_decay=0.1)),
    (optim.Adadelta, dict(maximize=True, weight_decay=0.05)),
    (optim.ASGD, dict(lr=0.05)),
    (optim.ASGD, dict(lr=0.1, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1)),
    (optim.ASGD, dict(lr=0.1, t0=3, maximize=True)),
    (optim.Rprop, dict(lr=0.05)),
    (optim.Rprop, dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.02, 0.2))),
    (optim.Rprop, dict(lr=0.1, maximize=True)),
    # Branches the core's rules take that the cases above do not reach.
    (optim.SGD, dict(lr=0.1, weight_decay=0.05, maximize=True)),
    (optim.Adam, dict(lr=0.01, betas=(0.3, 0.6), eps=1e-4)),  # lerp from the far end
    (optim.RMSprop, dict(lr=0.01, alpha=0.3, centered=True)),  # lerp from the far end
    (optim.RAdam, dict(lr=0.01, betas=(0.9, 0.9))),  # momentum SGD, then rectified from step 6
    (optim.RAdam, dict(lr=0.01, betas=(0.6, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
]

# The optimizers (and options) that the state-dict round trip tests continue.
ROUND_TRIP_CASES = [
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (optim.AdamW, dict(lr=0.01)),
    (optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (optim.Adagrad, dict(lr=0.1, lr_decay=0.1)),
    (optim.NAdam, dict(lr=0.01, weight_decay=0.1)),
    (optim.RAdam, dict(lr=0.01, betas=(0.9, 0.7))),
    (optim.Adamax, dict(lr=0.01)),
    (optim.Adadelta, dict(lr=0.5)),
    (optim.ASGD, dict(lr=0.05, t0=2)),
    (optim.Rprop, dict(lr=0.05)),
]


def case_id(case):
    """A pytest id for an ``(optimizer class, keyword arguments)`` case."""
    cls, kw = case
    return cls.__name__ + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


def scripted_grads(seed, shape, steps):
    """``steps`` standard normal gradients of ``shape`` from seed ``seed``."""
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for _ in range(steps)]


def run_steps(opt, params, grads_per_param, np_dtype):
    """Step ``opt`` once per scripted gradient, each parameter getting its own list's entries."""
    for step in range(len(grads_per_param[0])):
        for p, grads in zip(params, grads_per_param, strict=True):
            p.grad = fg.tensor(np.asarray(grads[step], dtype=np_dtype))
        opt.step()


def stepped_once(cls):
    """A parameter (two float32 zeros) and an optimizer of ``cls`` over it after one step with
    gradient ones."""
    w = fg.zeros(2, requires_grad=True)
    opt = cls([w])
    w.grad = fg.ones(2)
    opt.step()
    return w, opt


def ref_decay(p, g, lr, weight_decay, decoupled_weight_decay=False, maximize=False):
    """The documented start of a step: the gradient negated to maximize, then weight decay added
    to it (L2) or, decoupled, applied to the parameter. Returns ``(p, g)``."""
    g = -g if maximize else g
    if decoupled_weight_decay:
        return p * (1 - lr * weight_decay), g
    return p, g + weight_decay * p


def update_rule_test(references, shapes, steps):
    """The test that every case of ``UPDATE_CASES`` with a reference in ``references`` (a dict
    from optimizer class to NumPy function) steps as that reference does, in float64 and float32
    (see :func:`check_update_rule`)."""
    cases = [c for c in UPDATE_CASES if c[0] in references]

    @pytest.mark.parametrize("case", cases, ids=[case_id(c) for c in cases])
    @pytest.mark.parametrize("dtype", [fg.float64, fg.float32], ids=["f64", "f32"])
    def test_update_rule_matches_numpy_reference(case, dtype):
        check_update_rule(case, dtype, references, shapes, steps)

    return test_update_rule_matches_numpy_reference


def check_update_rule(case, dtype, references, shapes, steps):
    """Step ``cls(params, **kw)`` on parameters of ``shapes`` through ``steps`` scripted gradients
    and compare each parameter with ``references[cls]`` run in float64 on the same values."""
    cls, kw = case
    np_dtype = np.float64 if dtype == fg.float64 else np.float32
    rng = np.random.default_rng(7)
    starts = [rng.normal(size=s).astype(np_dtype) for s in shapes]
    grads = [[g.astype(np_dtype) for g in scripted_grads(i, s, steps)] for i, s in enumerate(shapes)]
    params = [fg.tensor(x, requires_grad=True) for x in starts]
    opt = cls(params, **kw)
    run_steps(opt, params, grads, np_dtype)
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == fg.float64 else dict(rtol=2e-5, atol=2e-6)
    for p, x0, g in zip(params, starts, grads, strict=True):
        assert p.dtype == dtype
        expected = references[cls](x0.astype(np.float64), [gi.astype(np.float64) for gi in g], **kw)
        np.testing.assert_allclose(to_np(p), expected, **tol)


def round_trip_test(classes, second_lr):
    """The test that each case of ``ROUND_TRIP_CASES`` for one of ``classes`` continues exactly
    after a state-dict round trip (see :func:`check_round_trip`)."""
    cases = [c for c in ROUND_TRIP_CASES if c[0] in classes]

    @pytest.mark.parametrize("case", cases, ids=[case_id(c) for c in cases])
    def test_loaded_optimizer_continues_exactly_like_the_original(case):
        check_round_trip(case, second_lr)

    return test_loaded_optimizer_continues_exactly_like_the_original


def check_round_trip(case, second_lr):
    """An optimizer rebuilt from a deep copy of another's state dict (with default
    hyper-parameters, a second group at ``second_lr``) continues exactly like the original."""
    cls, kw = case
    grads = [scripted_grads(11, (3,), 8), scripted_grads(12, (2, 2), 8)]
    first = [[g[:4] for g in grads], [g[4:] for g in grads]]
    params = [fg.tensor([1.0, 2.0, 3.0], requires_grad=True), fg.ones(2, 2, requires_grad=True)]
    opt = cls([{"params": params[:1]}, {"params": params[1:], "lr": second_lr}], **kw)
    run_steps(opt, params, first[0], np.float32)

    saved = copy.deepcopy(opt.state_dict())
    clones = [p.detach().clone().requires_grad_(True) for p in params]
    fresh = cls([{"params": clones[:1]}, {"params": clones[1:]}])  # default hyper-parameters
    fresh.load_state_dict(saved)
    assert [g["lr"] for g in fresh.param_groups] == [kw["lr"], second_lr]

    run_steps(opt, params, first[1], np.float32)
    run_steps(fresh, clones, first[1], np.float32)
    for p, q in zip(params, clones, strict=True):
        assert p.tolist() == q.tolist()


def check_complex_like_real_view(cls, kw, steps):
    """A complex parameter steps as its real view (pairs of reals) does, ``steps`` times."""
    rng = np.random.default_rng(5)
    z0 = rng.normal(size=3) + 1j * rng.normal(size=3)
    gz = [rng.normal(size=3) + 1j * rng.normal(size=3) for _ in range(steps)]
    z = fg.tensor(z0.tolist(), dtype=fg.complex128, requires_grad=True)
    r = fg.tensor(np.stack([z0.real, z0.imag], -1), dtype=fg.float64, requires_grad=True)
    opt_z, opt_r = cls([z], **kw), cls([r], **kw)
    for g in gz:
        z.grad = fg.tensor(g.tolist(), dtype=fg.complex128)
        r.grad = fg.tensor(np.stack([g.real, g.imag], -1), dtype=fg.float64)
        opt_z.step()
        opt_r.step()
    got = np.array(z.detach().tolist())
    np.testing.assert_allclose(np.stack([got.real, got.imag], -1), to_np(r), rtol=1e-12, atol=1e-14)


def check_invalid(make, exc, message):
    """``make()`` raises ``exc`` with ``message`` (taken literally)."""
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")):
        make()
