"""ferrograd.optim: every optimizer's one-call step in the core against its per-tensor loop of
tensor ops (the path that complex parameters and differentiable steps take), bit for bit, for
each option branch, in float32 and float64, on parameters small and large enough to be updated
in parallel chunks; the 16-bit floats; and the core call's argument errors."""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import optim_util
import pytest
from ferrograd import _core, optim
from ferrograd.optim import _steps
from optim_util import case_id

CASES = optim_util.UPDATE_CASES

# The last one has more elements than the core updates in one piece (it splits it into chunks).
SHAPES = [(3,), (2, 4), (40_000,)]
STEPS = 8


def scripted(np_dtype):
    """Starting values and gradients per parameter: normal values with some exact zeros (a
    zero gradient and a sign flip are separate cases of Rprop)."""
    rng = np.random.default_rng(3)
    starts = [rng.normal(size=s).astype(np_dtype) for s in SHAPES]
    grads = []
    for s in SHAPES:
        per_step = []
        for _ in range(STEPS):
            g = rng.normal(size=s)
            g[rng.random(size=s) < 0.1] = 0.0
            per_step.append(g.astype(np_dtype))
        grads.append(per_step)
    return starts, grads


def run(cls, kw, np_dtype, *, core):
    """The parameters and the states after ``STEPS`` steps, and how many core calls ran."""
    starts, grads = scripted(np_dtype)
    params = [fg.tensor(x, requires_grad=True) for x in starts]
    opt = cls(params, **kw)
    calls = []
    in_core, in_core_counted, core_ok = _steps.in_core, _steps.counted, _steps.core_ok

    def watched(f):
        def call(*args, **kwargs):
            calls.append(args[0])
            return f(*args, **kwargs)

        return call

    _steps.in_core, _steps.counted = watched(in_core), watched(in_core_counted)
    if not core:
        _steps.core_ok = lambda *args: False
    try:
        for step in range(STEPS):
            for p, g in zip(params, grads, strict=True):
                p.grad = fg.tensor(g[step])
            opt.step()
    finally:
        _steps.in_core, _steps.counted, _steps.core_ok = in_core, in_core_counted, core_ok
    states = [{k: v.detach().numpy().copy() for k, v in opt.state[p].items()} for p in params]
    return [p.detach().numpy().copy() for p in params], states, calls


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
@pytest.mark.parametrize("np_dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_core_step_equals_the_per_tensor_loop_bit_for_bit(case, np_dtype):
    cls, kw = case
    params, states, calls = run(cls, kw, np_dtype, core=True)
    want_params, want_states, loop_calls = run(cls, kw, np_dtype, core=False)
    assert len(calls) == STEPS and loop_calls == []
    for got, want in zip(params, want_params, strict=True):
        assert got.dtype == np_dtype
        np.testing.assert_array_equal(got, want)
    for got, want in zip(states, want_states, strict=True):
        assert got.keys() == want.keys()
        for name in got:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.parametrize("cls", sorted({c for c, _ in CASES}, key=lambda c: c.__name__))
@pytest.mark.parametrize("dtype", [fg.float16, fg.bfloat16], ids=["f16", "bf16"])
def test_16_bit_parameters_step_in_the_core_computing_in_float32(cls, dtype):
    # Each step computes in float32 and rounds once per stored value, so the parameters stay
    # within a few 16-bit roundings of a float32 run from the same (rounded) start.
    kw = dict(lr=0.01) if cls is not optim.Adadelta else dict()
    rng = np.random.default_rng(0)
    start = fg.tensor(rng.normal(size=64)).to(dtype)
    grads = [fg.tensor(rng.normal(size=64)).to(dtype) for _ in range(3)]
    results = []
    for dt in (dtype, fg.float32):
        p = start.to(dt).clone().requires_grad_(True)
        opt = cls([p], **kw)
        for g in grads:
            p.grad = g.to(dt)
            opt.step()
        assert p.dtype == dt
        results.append(p.detach().float().numpy())
    eps16 = 2.0**-10 if dtype == fg.float16 else 2.0**-7
    np.testing.assert_allclose(results[0], results[1], rtol=4 * eps16, atol=4 * eps16)


def test_a_group_with_a_complex_parameter_runs_the_per_tensor_loop():
    a = fg.zeros(2, requires_grad=True)
    z = fg.zeros(2, dtype=fg.complex64, requires_grad=True)
    opt = optim.Adam([a, z], lr=0.1)
    a.grad, z.grad = fg.ones(2), fg.ones(2, dtype=fg.complex64)
    calls = []
    in_core = _steps.in_core
    _steps.in_core = lambda *args, **kwargs: calls.append(args)
    try:
        opt.step()
    finally:
        _steps.in_core = in_core
    # The loop ran: Adam's first step moves each weight by lr against its gradient's sign (the
    # imaginary parts, with zero gradients, stay).
    assert calls == []
    np.testing.assert_allclose(a.tolist(), [-0.1, -0.1], rtol=1e-6)
    np.testing.assert_allclose(fg.view_as_real(z.detach()).tolist(), [[-0.1, 0.0]] * 2, rtol=1e-6)


def test_core_step_argument_errors():
    p, g = fg.zeros(2), fg.ones(2)
    options = dict(lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=0.0)
    with pytest.raises(ValueError, match="unknown optimizer update 'adagard'"):
        _core._optimizer_step("adagard", [p], [g], [[fg.zeros(2)]], [[1.0]], options)
    with pytest.raises(TypeError, match="missing hyper-parameter 'lr_decay'"):
        _core._optimizer_step("adagrad", [p], [g], [[fg.zeros(2)]], [[1.0]], {"lr": 0.1})
    with pytest.raises(TypeError, match="unknown hyper-parameter 'momentum'"):
        _core._optimizer_step("adagrad", [p], [g], [[fg.zeros(2)]], [[1.0]], {**options, "momentum": 0.9})
    with pytest.raises(RuntimeError, match="expected one gradient per parameter, 1 state lists"):
        _core._optimizer_step("adagrad", [p], [g], [], [[1.0]], options)
    with pytest.raises(RuntimeError, match="contiguous tensors of one shape and dtype"):
        _core._optimizer_step("adagrad", [p], [g], [[fg.zeros(3)]], [[1.0]], options)
    with pytest.raises(RuntimeError, match="must not share memory"):
        _core._optimizer_step("adagrad", [p], [g], [[p]], [[1.0]], options)
    assert p.tolist() == [0.0, 0.0]
