"""ferrograd.amp.GradScaler, the two in-place ops it is built on, and
ferrograd.cpu. A scaled training loop is checked against the same loop
without scaling; the ops against NumPy and a step-by-step restatement of the
update rule; the bookkeeping (stages, state dicts, pickling) by its
documented properties.
"""

from __future__ import annotations

import doctest
import importlib
import math
import pickle
import random
import warnings

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd import nn, optim
from ferrograd.amp import _op_lists

X = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
Y = np.random.default_rng(1).standard_normal((6, 2)).astype(np.float32)


def _model(seed=0):
    fg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    return model, optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def _loss(model, step=0):
    return ((model(fg.tensor(X) * (1 + step / 10)) - fg.tensor(Y)) ** 2).mean()


def _params(model):
    return [to_np(p) for p in model.parameters()]


def _grads(model):
    return [to_np(p.grad) for p in model.parameters()]


def _inject(model, value):
    """Writes ``value`` into one gradient entry, as an overflowing backward would."""
    with fg.no_grad():
        next(iter(model.parameters())).grad[0, 0] = value


def _train(model, opt, scaler, steps, bad_step=None):
    """Runs ``steps`` scaled steps, with an inf gradient at ``bad_step``;
    returns the (scale, clean steps in a row) after each."""
    seen = []
    for step in range(steps):
        opt.zero_grad()
        scaler.scale(_loss(model, step)).backward()
        if step == bad_step:
            _inject(model, math.inf)
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), scaler._get_growth_tracker()))
    return seen


@pytest.mark.parametrize("init_scale", [2.0**16, 2.0**-3, 1000.0])
def test_scaled_loop_matches_unscaled_loop(init_scale):
    plain, plain_opt = _model()
    scaled, scaled_opt = _model()
    scaler = fg.amp.GradScaler("cpu", init_scale=init_scale)
    for step in range(5):
        plain_opt.zero_grad()
        _loss(plain, step).backward()
        scaled_opt.zero_grad()
        scaler.scale(_loss(scaled, step)).backward()
        # the gradients still carry the scale until unscale_ (float rounding
        # of sums with cancellation: tolerances relative to the largest entry)
        for g, s in zip(_grads(plain), _grads(scaled), strict=True):
            np.testing.assert_allclose(s, g * init_scale, rtol=1e-5, atol=1e-5 * np.abs(g).max() * init_scale)
        scaler.unscale_(scaled_opt)
        for g, s in zip(_grads(plain), _grads(scaled), strict=True):
            if math.log2(init_scale).is_integer():
                np.testing.assert_array_equal(s, g)  # scaling by 2**k is exact
            else:
                np.testing.assert_allclose(s, g, rtol=1e-5, atol=1e-5 * np.abs(g).max())
        plain_opt.step()
        assert scaler.step(scaled_opt) is None
        scaler.update()
        for p, s in zip(_params(plain), _params(scaled), strict=True):
            if math.log2(init_scale).is_integer():
                np.testing.assert_array_equal(s, p)
            else:
                np.testing.assert_allclose(s, p, rtol=1e-5, atol=1e-6)
    assert scaler.get_scale() == init_scale  # 5 clean steps < growth_interval


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_non_finite_gradient_skips_step_and_backs_off(bad):
    model, opt = _model()
    scaler = fg.amp.GradScaler(init_scale=1024.0, backoff_factor=0.25, growth_interval=100)
    # two clean steps, so the tracker is at 2 and momentum exists
    assert _train(model, opt, scaler, 2) == [(1024.0, 1), (1024.0, 2)]
    before = _params(model)
    momentum = [to_np(opt.state[p]["momentum_buffer"]) for p in model.parameters()]
    opt.zero_grad()
    scaler.scale(_loss(model)).backward()
    _inject(model, bad)
    assert scaler.step(opt) is None
    for b, a in zip(before, _params(model), strict=True):
        np.testing.assert_array_equal(a, b)
    for m, p in zip(momentum, model.parameters(), strict=True):
        np.testing.assert_array_equal(to_np(opt.state[p]["momentum_buffer"]), m)
    scaler.update()
    assert scaler.get_scale() == 256.0
    assert scaler._get_growth_tracker() == 0


def test_overflowing_loss_skips_step():
    model, opt = _model()
    scaler = fg.amp.GradScaler(init_scale=2.0**100)  # rounds to float32 exactly
    before = _params(model)
    scaler.scale(_loss(model) * 1e20).backward()  # 2**100 * 1e20 overflows float32
    scaler.step(opt)
    scaler.update()
    for b, a in zip(before, _params(model), strict=True):
        np.testing.assert_array_equal(a, b)
    assert scaler.get_scale() == 2.0**99


def test_scale_grows_after_growth_interval_clean_steps():
    model, opt = _model()
    scaler = fg.amp.GradScaler(init_scale=8.0, growth_factor=3.0, growth_interval=3)
    assert _train(model, opt, scaler, 8, bad_step=4) == [
        (8.0, 1), (8.0, 2), (24.0, 0), (24.0, 1), (12.0, 0), (12.0, 1), (12.0, 2), (36.0, 0),
    ]  # fmt: skip


def test_unscale_then_clip_then_step():
    plain, plain_opt = _model()
    scaled, scaled_opt = _model()
    scaler = fg.amp.GradScaler(init_scale=2.0**12)
    _loss(plain).backward()
    nn.utils.clip_grad_norm_(plain.parameters(), 0.1)
    plain_opt.step()
    scaler.scale(_loss(scaled)).backward()
    scaler.unscale_(scaled_opt)
    nn.utils.clip_grad_norm_(scaled.parameters(), 0.1)
    scaler.step(scaled_opt)  # does not unscale a second time
    scaler.update()
    for p, s in zip(_params(plain), _params(scaled), strict=True):
        np.testing.assert_array_equal(s, p)


def test_two_optimizers_share_one_update():
    model, _ = _model()
    first, second = list(model.children())[0], list(model.children())[2]
    opt1 = optim.SGD(first.parameters(), lr=0.1)
    opt2 = optim.SGD(second.parameters(), lr=0.1)
    scaler = fg.amp.GradScaler(init_scale=64.0)
    scaler.scale(_loss(model)).backward()
    with fg.no_grad():
        second.weight.grad[0, 0] = math.nan
    before = _params(model)
    scaler.step(opt1)  # clean: steps
    scaler.step(opt2)  # NaN: skipped
    scaler.update()  # one optimizer found a NaN: back off
    after = _params(model)
    assert not np.array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[2], before[2])
    assert scaler.get_scale() == 32.0


def test_stage_errors():
    model, opt = _model()
    scaler = fg.amp.GradScaler()
    with pytest.raises(AssertionError, match="scaler.scale"):
        scaler.unscale_(opt)
    scaler.scale(_loss(model)).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: None)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.step(opt)
    scaler.update()
    scaler.scale(_loss(model)).backward()
    scaler.unscale_(opt)  # a new iteration starts after update()
    with pytest.raises(AssertionError, match="prior to update"):
        fresh = fg.amp.GradScaler()
        fresh.scale(fg.tensor(1.0))
        fresh.update()


def test_float16_gradients_cannot_be_unscaled():
    w = nn.Parameter(fg.ones(2, dtype=fg.float16))
    w.grad = fg.ones(2, dtype=fg.float16)
    scaler = fg.amp.GradScaler()
    scaler.scale(fg.tensor(1.0))
    with pytest.raises(ValueError, match="FP16"):
        scaler.unscale_(optim.SGD([w], lr=0.1))


def test_disabled_scaler_is_a_pass_through():
    plain, plain_opt = _model()
    model, opt = _model()
    scaler = fg.amp.GradScaler(enabled=False)
    for step in range(3):
        _loss(plain, step).backward()
        plain_opt.step()
        loss = _loss(model, step)
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.unscale_(opt)
        scaler.unscale_(opt)  # no bookkeeping, so no error
        scaler.step(opt)
        scaler.update()
    for p, s in zip(_params(plain), _params(model), strict=True):
        np.testing.assert_array_equal(s, p)
    assert not scaler.is_enabled()
    assert scaler.get_scale() == 1.0
    assert scaler.state_dict() == {}
    scaler.load_state_dict({})


def test_state_dict_round_trip_and_pickle():
    model, opt = _model()
    scaler = fg.amp.GradScaler(init_scale=512.0, growth_factor=4.0, backoff_factor=0.125, growth_interval=5)
    _train(model, opt, scaler, 3, bad_step=0)
    state = scaler.state_dict()
    assert state == {"scale": 64.0, "growth_factor": 4.0, "backoff_factor": 0.125, "growth_interval": 5,
                     "_growth_tracker": 2}  # fmt: skip
    fresh = fg.amp.GradScaler()
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    assert fresh.get_growth_factor() == 4.0 and fresh.get_backoff_factor() == 0.125
    assert fresh.get_growth_interval() == 5
    # loading into a scaler whose tensors exist overwrites them
    used = fg.amp.GradScaler()
    used.scale(fg.tensor(1.0))
    used.load_state_dict(state)
    assert used.state_dict() == state
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.state_dict() == state
    assert clone._scale is None  # made again by the next scale()
    assert clone.scale(fg.tensor(2.0)).item() == 128.0
    with pytest.raises(RuntimeError, match="empty"):
        fresh.load_state_dict({})
    scaler.scale(_loss(model)).backward()
    scaler.unscale_(opt)
    with pytest.raises(AssertionError, match="pickled"):
        pickle.dumps(scaler)


def test_setters_and_update_with_new_scale():
    scaler = fg.amp.GradScaler(init_scale=3.0)
    assert scaler.get_scale() == 3.0  # before the first scale()
    scaler.set_growth_factor(5.0)
    scaler.set_backoff_factor(0.2)
    scaler.set_growth_interval(1)
    assert scaler.get_growth_factor() == 5.0 and scaler.get_backoff_factor() == 0.2
    assert scaler.get_growth_interval() == 1
    w = nn.Parameter(fg.ones(1))
    opt = optim.SGD([w], lr=0.1)
    scaler.scale(w.sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 15.0
    scaler.update(6.0)
    assert scaler.get_scale() == 6.0
    source = fg.tensor([7.0])
    scaler.update(source)
    source.fill_(1.0)  # copied, not kept
    assert scaler.get_scale() == 7.0
    for bad in (fg.ones(2), fg.ones(1, requires_grad=True)):
        with pytest.raises(AssertionError, match="new_scale"):
            scaler.update(bad)


def test_scale_keeps_structure():
    scaler = fg.amp.GradScaler(init_scale=4.0)
    a, b, c = fg.tensor(1.0), fg.tensor([2.0, 3.0]), fg.tensor(-1.0)
    out = scaler.scale([a, (b, [c])])
    assert isinstance(out, list) and isinstance(out[1], tuple) and isinstance(out[1][1], list)
    np.testing.assert_array_equal(to_np(out[1][0]), [8.0, 12.0])
    assert out[0].item() == 4.0 and out[1][1][0].item() == -4.0
    lazy = scaler.scale(iter([a, b]))
    assert [to_np(t).tolist() for t in lazy] == [4.0, [8.0, 12.0]]
    for bad in (3, "loss", [a, None]):
        with pytest.raises(ValueError, match="Tensor or an iterable"):
            scaler.scale(bad)


def test_scaled_loss_keeps_autograd_and_dtype():
    w = nn.Parameter(fg.tensor([1.0, 2.0]))
    scaled = fg.amp.GradScaler(init_scale=16.0).scale((w * 3).sum())
    assert scaled.dtype == fg.float32 and scaled.grad_fn is not None
    scaled.backward()
    np.testing.assert_array_equal(to_np(w.grad), [48.0, 48.0])


def test_bad_construction():
    with pytest.raises(AssertionError, match="growth factor"):
        fg.amp.GradScaler(growth_factor=1.0)
    with pytest.raises(AssertionError, match="backoff factor"):
        fg.amp.GradScaler(backoff_factor=1.0)
    with pytest.raises(RuntimeError, match="CPU only"):
        fg.amp.GradScaler("mps")
    with pytest.raises(TypeError, match="device"):
        fg.amp.GradScaler(3)
    assert fg.amp.GradScaler(fg.device("cpu")).is_enabled()
    with pytest.warns(UserWarning, match="CUDA is not available"):
        cuda = fg.amp.GradScaler("cuda")
    assert not cuda.is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not fg.amp.GradScaler("cuda", enabled=False).is_enabled()


def test_cpu_amp_grad_scaler_is_deprecated_alias():
    with pytest.warns(FutureWarning, match=r"torch\.amp\.GradScaler\('cpu'"):
        scaler = fg.cpu.amp.GradScaler(init_scale=32.0, growth_interval=7)
    assert isinstance(scaler, fg.amp.GradScaler)
    assert scaler.state_dict() == {"scale": 32.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                   "growth_interval": 7, "_growth_tracker": 0}  # fmt: skip


class _SelfScalingSGD(optim.SGD):
    """An optimizer that unscales and skips by itself (the contract of
    ``_step_supports_amp_scaling``): it reads ``grad_scale``/``found_inf``."""

    _step_supports_amp_scaling = True

    def step(self, closure=None):
        self.seen = (self.grad_scale, self.found_inf.item())
        if self.found_inf.item():
            return "skipped"
        with fg.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    p.grad.div_(self.grad_scale)
        super().step()
        return "stepped"


class _ScalerKwargSGD(optim.SGD):
    _step_supports_amp_scaling = True

    def step(self, closure=None, grad_scaler=None):
        self.scaler_seen = grad_scaler
        return "called"


def test_optimizer_that_supports_amp_scaling():
    plain, plain_opt = _model()
    model, _ = _model()
    opt = _SelfScalingSGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = fg.amp.GradScaler(init_scale=256.0)
    _loss(plain).backward()
    plain_opt.step()
    scaler.scale(_loss(model)).backward()
    assert scaler.step(opt) == "stepped"
    assert opt.seen[0].item() == 256.0 and opt.seen[1] == 0.0
    assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
    for p, s in zip(_params(plain), _params(model), strict=True):
        np.testing.assert_array_equal(s, p)
    scaler.update()
    opt.zero_grad()
    scaler.scale(_loss(model)).backward()
    _inject(model, math.nan)
    assert scaler.step(opt) == "skipped"
    scaler.update()
    assert scaler.get_scale() == 128.0
    # after an explicit unscale_, the optimizer sees no scale to divide by
    opt.zero_grad()
    scaler.scale(_loss(model)).backward()
    scaler.unscale_(opt)
    scaler_opt = _ScalerKwargSGD(model.parameters(), lr=0.1)
    with pytest.warns(FutureWarning, match="stop passing itself"):
        assert scaler.step(scaler_opt) == "called"
    assert scaler_opt.scaler_seen is scaler


# -- the two ops ---------------------------------------------------------------------------------


def _bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest, ties to even), as float32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    out = bits.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def _expected_unscaled(values: np.ndarray, dtype, inv: np.float32) -> np.ndarray:
    if dtype == fg.float64:
        return values * np.float64(inv)
    product = values.astype(np.float32) * inv
    if dtype == fg.float16:
        return product.astype(np.float16).astype(np.float32)
    if dtype == fg.bfloat16:
        return _bf16_round(product)
    return product


@pytest.mark.parametrize("seed", range(12))
def test_foreach_check_and_unscale_against_numpy(seed):
    r = random.Random(seed)
    rng = np.random.default_rng(seed)
    dtypes = [r.choice([fg.float32, fg.float64, fg.float16, fg.bfloat16]) for _ in range(r.randint(0, 4))]
    arrays = []
    for _ in dtypes:
        a = rng.standard_normal(r.randint(0, 6)) * 10 ** r.uniform(-2, 3)
        if a.size and r.random() < 0.4:
            a[r.randrange(a.size)] = r.choice([np.inf, -np.inf, np.nan])
        arrays.append(a)
    grads = [fg.tensor(a).to(d) for a, d in zip(arrays, dtypes, strict=True)]
    stored = [to_np(g) for g in grads]  # the values after rounding to each dtype
    inv = np.float32(r.choice([0.5, 2.0**-14, 1 / 3, 0.7, 1.0]))
    preset = r.choice([0.0, -3.0])
    found_inf = fg.tensor(preset)
    result = fg._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, fg.tensor(float(inv)))
    assert result is None
    any_bad = any(not np.isfinite(s).all() for s in stored)
    assert found_inf.item() == (1.0 if any_bad else preset)
    for g, s, d in zip(grads, stored, dtypes, strict=True):
        assert g.dtype == d
        expected = _expected_unscaled(s, d, inv).astype(np.float64)
        np.testing.assert_array_equal(to_np(g).astype(np.float64), expected)


def test_foreach_check_reads_values_before_unscaling():
    grads = [fg.tensor([3e38, 1.0]), fg.tensor([1e300], dtype=fg.float64)]
    found_inf = fg.zeros(1)
    fg._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, fg.tensor(10.0))
    assert found_inf.item() == 0.0  # 3e38 was finite; its unscaled value is not
    assert math.isinf(grads[0][0].item()) and grads[1].item() == 1e301
    strided = fg.ones(6)[::2]
    fg._amp_foreach_non_finite_check_and_unscale_((strided,), found_inf, fg.tensor(0.25))
    np.testing.assert_array_equal(to_np(strided), [0.25] * 3)


def test_foreach_check_and_unscale_errors():
    op = fg._amp_foreach_non_finite_check_and_unscale_
    ok, half = fg.zeros(()), fg.tensor(0.5)
    with pytest.raises(TypeError, match="tuple of Tensors"):
        op(fg.ones(2), ok, half)
    with pytest.raises(TypeError, match="element 1"):
        op([fg.ones(2), 1.0], ok, half)
    with pytest.raises(RuntimeError, match="int64"):
        op([fg.ones(2, dtype=fg.int64)], ok, half)
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor"):
        op([fg.ones(2)], fg.zeros((), dtype=fg.float64), half)
    with pytest.raises(RuntimeError, match=r"found_inf must be a 1-element tensor, got shape \[2\]"):
        op([fg.ones(2)], fg.zeros(2), half)
    with pytest.raises(RuntimeError, match="inv_scale must be a float tensor"):
        op([fg.ones(2)], ok, fg.tensor(0.5, dtype=fg.float64))
    with pytest.raises(TypeError, match="inv_scale"):
        op([fg.ones(2)], ok, 0.5)


def _update_reference(scale, tracker, found, growth, backoff, interval):
    """The update rule restated: float64 products rounded once to float32."""
    if found != 0 or math.isnan(found):
        return float(np.float32(scale * backoff)), 0
    tracker += 1
    if tracker != interval:
        return scale, tracker
    with np.errstate(over="ignore"):
        grown = float(np.float32(scale * growth))
    return (grown if math.isfinite(grown) else scale), 0


@pytest.mark.parametrize("seed", range(4))
def test_update_scale_follows_the_rule(seed):
    r = random.Random(seed)
    scale_t, tracker_t = fg.tensor(float(2.0**r.randint(-10, 20))), fg.tensor(0, dtype=fg.int32)
    scale, tracker = scale_t.item(), 0
    growth, backoff, interval = r.uniform(1.01, 4.0), r.uniform(0.05, 0.99), r.randint(1, 4)
    for _ in range(60):
        found = r.choice([0.0, 0.0, 0.0, 1.0, math.nan, -2.0])
        out = fg._amp_update_scale_(scale_t, tracker_t, fg.tensor(found), growth, backoff, interval)
        assert out is scale_t
        scale, tracker = _update_reference(scale, tracker, found, growth, backoff, interval)
        assert (scale_t.item(), tracker_t.item()) == (scale, tracker)
        assert scale_t.dtype == fg.float32 and tracker_t.dtype == fg.int32


def test_update_scale_keeps_a_scale_that_would_overflow():
    scale, tracker = fg.tensor(3e38), fg.tensor(1, dtype=fg.int32)
    fg._amp_update_scale_(scale, tracker, fg.zeros(()), 2.0, 0.5, 2)
    assert scale.item() == float(np.float32(3e38)) and tracker.item() == 0
    # an interval the tracker never reaches: it keeps counting
    fg._amp_update_scale_(scale, tracker, fg.zeros(()), 2.0, 0.5, 0)
    assert tracker.item() == 1


def test_update_scale_errors():
    op = fg._amp_update_scale_
    s, t, f = fg.tensor(1.0), fg.tensor(0, dtype=fg.int32), fg.zeros(())
    with pytest.raises(RuntimeError, match="growth_tracker must be a int tensor"):
        op(s, fg.tensor(0), f, 2.0, 0.5, 1)
    with pytest.raises(RuntimeError, match="current_scale must be a float tensor"):
        op(fg.tensor(1.0, dtype=fg.float64), t, f, 2.0, 0.5, 1)
    with pytest.raises(RuntimeError, match="current_scale must be a 1-element"):
        op(fg.ones(2), t, f, 2.0, 0.5, 1)
    with pytest.raises(RuntimeError, match="found_inf must be a 1-element"):
        op(s, t, fg.zeros(3), 2.0, 0.5, 1)
    with pytest.raises(TypeError, match="scale_growth_factor"):
        op(s, t, f, "2", 0.5, 1)
    with pytest.raises(TypeError, match="growth_interval"):
        op(s, t, f, 2.0, 0.5, 1.0)
    with pytest.raises(RuntimeError, match="requires grad"):
        op(fg.tensor(1.0, requires_grad=True), t, f, 2.0, 0.5, 1)


# -- ferrograd.cpu, the op lists, the examples -----------------------------------------------------


def test_cpu_module():
    import ferrograd.cpu
    import ferrograd.cpu.amp  # noqa: F401

    assert ferrograd.cpu.is_available() and ferrograd.cpu.is_initialized()
    assert ferrograd.cpu.device_count() == 1 and ferrograd.cpu.current_device() == "cpu"
    assert ferrograd.cpu.synchronize() is None and ferrograd.cpu.set_device("cpu") is None
    stream = ferrograd.cpu.Stream()
    default = ferrograd.cpu.current_stream()
    with ferrograd.cpu.stream(stream):
        assert ferrograd.cpu.current_stream() is stream
        with ferrograd.cpu.stream(None):
            assert ferrograd.cpu.current_stream() is stream
    assert ferrograd.cpu.current_stream() is default
    assert ferrograd.cpu.Event().query()


def _resolve(name):
    obj = fg
    for part in name.split("."):
        obj = fg.Tensor if part == "Tensor" else getattr(obj, part, None)
    return obj


def test_op_list_names_are_ferrograd_callables():
    lists = (_op_lists.LOWER, _op_lists.FP32, _op_lists.PROMOTE)
    assert all(isinstance(names, frozenset) and names for names in lists)
    assert not (lists[0] & lists[1] or lists[0] & lists[2] or lists[1] & lists[2])
    missing = sorted(n for names in lists for n in names if not callable(_resolve(n)))
    assert missing == []


@pytest.mark.parametrize("modname", ["ferrograd.amp.grad_scaler", "ferrograd.cpu"])
def test_docstring_examples(modname):
    module = importlib.import_module(modname)
    globs = {**vars(module), "ferrograd": fg, "nn": nn, "optim": optim, "np": np}
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    tests = [t for t in doctest.DocTestFinder().find(module, modname, globs=globs) if t.examples]
    assert tests
    for test in tests:
        fg.manual_seed(0)
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
