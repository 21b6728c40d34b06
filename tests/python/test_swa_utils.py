"""ferrograd.optim.swa_utils: AveragedModel's SWA and EMA averages against NumPy means of the
parameter snapshots, buffers copied or averaged, update_bn's cumulative BatchNorm statistics, and
SWALR's annealing against its closed form."""

from __future__ import annotations

import math

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd import nn, optim
from ferrograd.optim import swa_utils


def make_model():
    fg.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).double()


def train_snapshots(model, averaged, steps=5, seed=0):
    """SGD steps on random batches; after each, ``averaged.update_parameters(model)``. Returns
    the parameter and buffer snapshots taken after each step."""
    rng = np.random.default_rng(seed)
    opt = optim.SGD(model.parameters(), lr=0.1)
    params, buffers = [], []
    for _ in range(steps):
        opt.zero_grad()
        x = fg.tensor(rng.normal(size=(6, 3)))
        (model(x) * fg.tensor([1.0, -2.0], dtype=fg.float64)).sum().backward()
        opt.step()
        averaged.update_parameters(model)
        params.append([to_np(p) for p in model.parameters()])
        buffers.append([to_np(b) for b in model.buffers()])
    return params, buffers


def test_swa_average_is_the_mean_of_the_snapshots():
    model = make_model()
    swa = swa_utils.AveragedModel(model)
    params, buffers = train_snapshots(model, swa)
    for i, p in enumerate(swa.module.parameters()):
        np.testing.assert_allclose(to_np(p), np.mean([snap[i] for snap in params], axis=0), rtol=1e-12)
    # Buffers are not averaged: they follow the model's latest.
    for i, b in enumerate(swa.module.buffers()):
        np.testing.assert_array_equal(to_np(b), buffers[-1][i])
    assert swa.n_averaged.item() == 5 and swa.n_averaged.dtype == fg.int64
    assert "n_averaged" in dict(swa.named_buffers())


def test_first_update_copies_and_the_model_is_deep_copied():
    model = nn.Linear(2, 1, bias=False)
    with fg.no_grad():
        model.weight.fill_(2.0)
    swa = swa_utils.AveragedModel(model)
    assert swa.module.weight is not model.weight
    with fg.no_grad():
        model.weight.fill_(5.0)
    swa.update_parameters(model)
    assert swa.module.weight.tolist() == [[5.0, 5.0]]
    assert swa(fg.ones(1, 2)).tolist() == [[10.0]]  # forward runs the averaged copy


@pytest.mark.parametrize("form", ["multi_avg_fn", "avg_fn"])
def test_ema_average_follows_the_recursion(form):
    decay = 0.8
    model = make_model()
    if form == "multi_avg_fn":
        ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(decay))
    else:
        ema = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(decay))
    params, _ = train_snapshots(model, ema)
    for i, p in enumerate(ema.module.parameters()):
        expected = params[0][i]
        for snap in params[1:]:
            expected = decay * expected + (1 - decay) * snap[i]
        np.testing.assert_allclose(to_np(p), expected, rtol=1e-12)


@pytest.mark.parametrize("form", ["default", "swa_avg_fn", "swa_multi_avg_fn"])
def test_use_buffers_averages_the_floating_buffers_too(form):
    model = make_model()
    kw = {
        "default": {},
        "swa_avg_fn": {"avg_fn": swa_utils.get_swa_avg_fn()},
        "swa_multi_avg_fn": {"multi_avg_fn": swa_utils.get_swa_multi_avg_fn()},
    }[form]
    swa = swa_utils.AveragedModel(model, use_buffers=True, **kw)
    params, buffers = train_snapshots(model, swa)
    for i, p in enumerate(swa.module.parameters()):
        np.testing.assert_allclose(to_np(p), np.mean([s[i] for s in params], axis=0), rtol=1e-12)
    names = [n for n, _ in model.named_buffers()]
    for i, (name, b) in enumerate(swa.module.named_buffers()):
        if name.endswith("num_batches_tracked"):
            continue
        assert name == names[i]
        np.testing.assert_allclose(to_np(b), np.mean([s[i] for s in buffers], axis=0), rtol=1e-12)


def test_only_one_of_avg_fn_and_multi_avg_fn():
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        swa_utils.AveragedModel(
            nn.Linear(1, 1), avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn()
        )


def test_averaging_functions_by_hand():
    avg, cur = fg.tensor([1.0, 2.0]), fg.tensor([4.0, 8.0])
    assert swa_utils.get_swa_avg_fn()(avg, cur, fg.tensor(2)).tolist() == [2.0, 4.0]
    assert swa_utils.get_ema_avg_fn(0.75)(avg, cur, 1).tolist() == [1.75, 3.5]
    lists = [fg.tensor([1.0, 2.0])], [fg.tensor([4.0, 8.0])]
    swa_utils.get_swa_multi_avg_fn()(*lists, 2)
    assert lists[0][0].tolist() == [2.0, 4.0]
    swa_utils.get_ema_multi_avg_fn(0.5)(*lists, 3)
    assert lists[0][0].tolist() == [3.0, 6.0]


# --- update_bn ------------------------------------------------------------------------------------


def test_update_bn_recomputes_the_statistics_as_equal_weight_means():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3, momentum=0.3)).double()
    rng = np.random.default_rng(1)
    batches = [rng.normal(size=(8, 2)) for _ in range(4)]
    model.eval()
    with fg.no_grad():
        model[1].running_mean.fill_(7.0)  # stale statistics, to be discarded
    swa_utils.update_bn([(fg.tensor(b), fg.zeros(8)) for b in batches], model)  # (input, target) pairs

    w, bias = to_np(model[0].weight), to_np(model[0].bias)
    hidden = [b @ w.T + bias for b in batches]
    mean = np.mean([h.mean(0) for h in hidden], 0)
    np.testing.assert_allclose(to_np(model[1].running_mean), mean, rtol=1e-12)
    # The running variance averages each batch's unbiased variance.
    var = np.mean([h.var(0, ddof=1) for h in hidden], 0)
    np.testing.assert_allclose(to_np(model[1].running_var), var, rtol=1e-12)
    assert model[1].num_batches_tracked.item() == 4
    assert model[1].momentum == 0.3  # restored
    assert not model.training  # mode restored


def test_update_bn_leaves_a_model_without_batchnorm_alone():
    seen = []

    def loader():
        seen.append("iterated")
        yield fg.ones(1, 2)

    swa_utils.update_bn(loader(), nn.Linear(2, 2))
    assert seen == []  # not even iterated


# --- SWALR ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_anneals_from_the_current_lr_to_swa_lr(strategy, anneal_epochs):
    w, v = fg.zeros(1, requires_grad=True), fg.zeros(1, requires_grad=True)
    opt = optim.SGD([{"params": [w]}, {"params": [v], "lr": 0.3}], lr=1.0)
    swa_lrs = [0.05, 0.2]
    sched = swa_utils.SWALR(opt, swa_lr=swa_lrs, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    ramp = (lambda t: (1 - math.cos(math.pi * t)) / 2) if strategy == "cos" else (lambda t: t)
    seen = [sched.get_last_lr()]
    for _ in range(7):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr())
    for epoch, lrs in enumerate(seen):
        e = max(1, epoch) if anneal_epochs == 0 else epoch
        alpha = ramp(min(1.0, e / max(1, anneal_epochs)))
        for lr, start, swa_lr in zip(lrs, (1.0, 0.3), swa_lrs, strict=True):
            assert lr == pytest.approx(swa_lr * alpha + start * (1 - alpha), rel=1e-12)
    assert [g["swa_lr"] for g in opt.param_groups] == swa_lrs


def test_swalr_state_dict_round_trip_and_errors():
    opt = optim.SGD([fg.zeros(1, requires_grad=True)], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=5, anneal_strategy="linear")
    opt.step()
    sched.step()
    state = sched.state_dict()
    assert "anneal_func" not in state and state["_anneal_strategy"] == "linear"
    other = swa_utils.SWALR(optim.SGD([fg.zeros(1, requires_grad=True)], lr=1.0), swa_lr=0.5)
    other.load_state_dict(state)
    assert other.anneal_func(0.5) == 0.5 and other.anneal_epochs == 5

    with pytest.raises(ValueError, match="anneal_strategy must by one of 'cos' or 'linear', instead got x"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="x")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        swa_utils.SWALR(opt, swa_lr=[0.1, 0.2])
