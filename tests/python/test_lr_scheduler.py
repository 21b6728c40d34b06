"""ferrograd.optim.lr_scheduler: lr sequences against closed forms, ReduceLROnPlateau on scripted
metrics, composition, state dicts and torch's errors."""

from __future__ import annotations

import copy
import math
import warnings
from bisect import bisect_right

import ferrograd as fg
import pytest
from ferrograd import optim
from ferrograd.optim import lr_scheduler as S

BASE = (1.0, 0.3)  # the two groups' starting lrs


def make_opt(cls=optim.SGD, **kw):
    a, b = fg.zeros(1, requires_grad=True), fg.zeros(1, requires_grad=True)
    return cls([{"params": [a]}, {"params": [b], "lr": BASE[1]}], lr=BASE[0], **kw)


def lr_sequence(opt, sched, steps):
    """lrs at epochs 0..steps, stepping the optimizer before the scheduler as torch advises."""
    seq = [list(sched.get_last_lr())]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(list(sched.get_last_lr()))
    return seq


def assert_matches(seq, closed_form, rel=1e-12, abs_=1e-15):
    for epoch, lrs in enumerate(seq):
        for base, lr in zip(BASE, lrs, strict=True):
            assert lr == pytest.approx(closed_form(base, epoch), rel=rel, abs=abs_), (epoch, base)


def test_step_lr_follows_base_times_gamma_to_the_epoch_over_step_size():
    opt = make_opt()
    seq = lr_sequence(opt, S.StepLR(opt, step_size=3, gamma=0.5), 30)
    assert_matches(seq, lambda base, e: base * 0.5 ** (e // 3))
    assert [g["lr"] for g in opt.param_groups] == seq[-1]


def test_multistep_lr_counts_passed_milestones_with_repeats():
    milestones = [2, 5, 5, 9]
    opt = make_opt()
    seq = lr_sequence(opt, S.MultiStepLR(opt, milestones, gamma=0.3), 15)
    assert_matches(seq, lambda base, e: base * 0.3 ** bisect_right(sorted(milestones), e))


def test_exponential_lr():
    opt = make_opt()
    seq = lr_sequence(opt, S.ExponentialLR(opt, gamma=0.9), 40)
    assert_matches(seq, lambda base, e: base * 0.9**e, rel=1e-11)


@pytest.mark.parametrize("eta_min", [0.0, 0.01])
def test_cosine_annealing_recursive_form_matches_the_closed_form_over_several_periods(eta_min):
    t_max = 7

    def closed(base, e):
        return eta_min + (base - eta_min) * (1 + math.cos(math.pi * e / t_max)) / 2

    opt = make_opt()
    seq = lr_sequence(opt, S.CosineAnnealingLR(opt, T_max=t_max, eta_min=eta_min), 3 * t_max + 2)
    assert_matches(seq, closed, rel=1e-9, abs_=1e-12)
    assert seq[t_max][0] == pytest.approx(eta_min, abs=1e-12)


def test_lambda_lr_scales_the_initial_lr_per_group():
    opt = make_opt()
    sched = S.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.5**e])
    seq = lr_sequence(opt, sched, 10)
    for e, (lr0, lr1) in enumerate(seq):
        assert lr0 == pytest.approx(BASE[0] / (e + 1))
        assert lr1 == pytest.approx(BASE[1] * 0.5**e)


def test_lambda_lr_rejects_a_wrong_number_of_lambdas():
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(make_opt(), [lambda e: 1.0])


def test_multiplicative_lr_multiplies_by_the_lambda_from_epoch_one_on():
    opt = make_opt()
    seq = lr_sequence(opt, S.MultiplicativeLR(opt, lambda e: 1.0 - 0.01 * e), 12)
    assert_matches(seq, lambda base, e: base * math.prod(1.0 - 0.01 * k for k in range(1, e + 1)))
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        S.MultiplicativeLR(make_opt(), 0.5)


def test_linear_lr_interpolates_the_factor_then_holds():
    opt = make_opt()
    seq = lr_sequence(opt, S.LinearLR(opt, start_factor=0.2, end_factor=0.9, total_iters=6), 12)
    assert_matches(seq, lambda base, e: base * (0.2 + (0.9 - 0.2) * min(e, 6) / 6))


def test_constant_lr_scales_until_total_iters():
    opt = make_opt()
    seq = lr_sequence(opt, S.ConstantLR(opt, factor=0.25, total_iters=4), 8)
    assert_matches(seq, lambda base, e: base * (0.25 if e < 4 else 1.0))


def test_polynomial_lr():
    opt = make_opt()
    seq = lr_sequence(opt, S.PolynomialLR(opt, total_iters=8, power=2.0), 12)
    assert_matches(seq, lambda base, e: base * (1 - min(e, 8) / 8) ** 2, abs_=1e-14)


def onecycle_reference(step, total, max_lr, pct, div=25.0, final_div=1e4, anneal="cos", three=False):
    """lr and momentum of the 1cycle policy from its description (phase boundaries at step ends)."""
    initial = max_lr / div
    minimum = initial / final_div

    def anneal_fn(start, end, frac):
        if anneal == "cos":
            return end + (start - end) * (1 + math.cos(math.pi * frac)) / 2
        return start + (end - start) * frac

    up_end = pct * total - 1
    if three:
        phases = [
            (up_end, initial, max_lr, 0.95, 0.85),
            (2 * pct * total - 2, max_lr, initial, 0.85, 0.95),
            (total - 1, initial, minimum, 0.95, 0.95),
        ]
    else:
        phases = [(up_end, initial, max_lr, 0.95, 0.85), (total - 1, max_lr, minimum, 0.85, 0.95)]
    start = 0.0
    for i, (end, lr0, lr1, m0, m1) in enumerate(phases):
        if step <= end or i == len(phases) - 1:
            frac = (step - start) / (end - start)
            return anneal_fn(lr0, lr1, frac), anneal_fn(m0, m1, frac)
        start = end


@pytest.mark.parametrize("anneal", ["cos", "linear"])
@pytest.mark.parametrize("three", [False, True])
def test_one_cycle_lr_and_momentum_follow_the_phases(anneal, three):
    total = 20
    opt = make_opt(momentum=0.9)
    sched = S.OneCycleLR(
        opt, max_lr=[1.0, 2.0], total_steps=total, pct_start=0.25, anneal_strategy=anneal, three_phase=three
    )
    seq = [sched.get_last_lr()]
    moms = [opt.param_groups[0]["momentum"]]
    for _ in range(total - 1):
        opt.step()
        sched.step()
        seq.append(sched.get_last_lr())
        moms.append(opt.param_groups[0]["momentum"])
    for step, (lrs, mom) in enumerate(zip(seq, moms, strict=True)):
        for max_lr, lr in zip([1.0, 2.0], lrs, strict=True):
            want_lr, want_m = onecycle_reference(step, total, max_lr, 0.25, anneal=anneal, three=three)
            assert lr == pytest.approx(want_lr, rel=1e-12)
        assert mom == pytest.approx(want_m, rel=1e-12)
    assert seq[0][0] == pytest.approx(1.0 / 25)  # starts at max_lr / div_factor
    assert seq[-1][0] == pytest.approx(1.0 / 25 / 1e4)  # ends at initial / final_div_factor
    assert max(lr for lr, _ in seq) == pytest.approx(1.0)
    opt.step()
    sched.step()  # step total_steps is still allowed (pct > 1 extrapolates)
    with pytest.raises(ValueError, match="Tried to step 21 times. The specified number of total steps is 20"):
        sched.step()


def test_one_cycle_cycles_adam_beta1_and_keeps_beta2():
    opt = make_opt(optim.Adam, betas=(0.9, 0.99))
    sched = S.OneCycleLR(opt, max_lr=1.0, epochs=2, steps_per_epoch=5)
    assert sched.total_steps == 10
    for step in range(1, 10):
        opt.step()
        sched.step()
        beta1, beta2 = opt.param_groups[1]["betas"]
        assert beta1 == pytest.approx(onecycle_reference(step, 10, 1.0, 0.3)[1], rel=1e-12)
        assert beta2 == 0.99


def test_one_cycle_argument_errors():
    opt = make_opt()
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        S.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start, but got 1.5"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        S.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        S.OneCycleLR(opt, max_lr=[1.0], total_steps=5)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.OneCycleLR(make_opt(optim.Adagrad), max_lr=1.0, total_steps=5)


def test_cosine_warm_restarts_follow_sgdr_periods():
    t0, mult, eta_min = 3, 2, 0.05
    opt = make_opt()
    seq = lr_sequence(opt, S.CosineAnnealingWarmRestarts(opt, T_0=t0, T_mult=mult, eta_min=eta_min), 30)

    def closed(base, e):
        t_i, t_cur = t0, e
        while t_cur >= t_i:  # walk through the completed periods
            t_cur -= t_i
            t_i *= mult
        return eta_min + (base - eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2

    assert_matches(seq, closed)


def test_cosine_warm_restarts_accepts_fractional_epochs():
    opt = make_opt()
    sched = S.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=1)
    sched.step(5.5)  # 1.5 epochs into the second period
    assert sched.get_last_lr()[0] == pytest.approx((1 + math.cos(math.pi * 1.5 / 4)) / 2)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        sched.step(-1)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)


def test_sequential_lr_switches_schedulers_at_milestones():
    opt = make_opt()
    warm = S.LinearLR(opt, start_factor=0.1, total_iters=3)
    cos = S.CosineAnnealingLR(opt, T_max=8)
    decay = S.ExponentialLR(opt, gamma=0.8)
    sched = S.SequentialLR(opt, [warm, cos, decay], milestones=[4, 12])
    seq = lr_sequence(opt, sched, 20)

    def closed(base, e):
        if e < 4:
            return base * (0.1 + 0.9 * min(e, 3) / 3)
        if e < 12:
            return base * (1 + math.cos(math.pi * (e - 4) / 8)) / 2
        return base * 0.8 ** (e - 12)

    assert_matches(seq, closed, rel=1e-9, abs_=1e-12)


def test_chained_scheduler_multiplies_the_effects():
    opt = make_opt()
    sched = S.ChainedScheduler(
        [S.ConstantLR(opt, factor=0.5, total_iters=3), S.ExponentialLR(opt, gamma=0.9)]
    )
    seq = lr_sequence(opt, sched, 10)
    assert_matches(seq, lambda base, e: base * (0.5 if e < 3 else 1.0) * 0.9**e)


def test_composite_schedulers_reject_plateau_and_foreign_optimizers():
    opt, other = make_opt(), make_opt()
    plateau = S.ReduceLROnPlateau(opt)
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        S.ChainedScheduler([plateau])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        S.SequentialLR(opt, [S.StepLR(opt, 2), S.StepLR(other, 2)], milestones=[3])
    with pytest.raises(ValueError, match="number of milestones to be equal to 2"):
        S.SequentialLR(opt, [S.StepLR(opt, 2), S.StepLR(opt, 2)], milestones=[3, 4])


# --- ReduceLROnPlateau ----------------------------------------------------------------------------


def plateau_lrs(metrics, **kw):
    opt = make_opt()
    sched = S.ReduceLROnPlateau(opt, **kw)
    out = []
    for m in metrics:
        sched.step(m)
        out.append(sched.get_last_lr()[0])
    return out


def test_plateau_reduces_after_more_than_patience_bad_epochs():
    # Epoch 1 sets the best; epochs 2, 3 are bad (1, 2 <= patience); epoch 4 is the third: reduce.
    lrs = plateau_lrs([5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0], patience=2, factor=0.5)
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]


def test_plateau_improvements_reset_the_bad_epoch_count():
    lrs = plateau_lrs([5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0], patience=1, factor=0.5)
    assert lrs == [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]


def test_plateau_relative_threshold_needs_a_significant_improvement():
    # In rel mode a metric must fall below best * (1 - threshold) = 10 * 0.9 = 9 to count.
    lrs = plateau_lrs([10.0, 9.5, 9.2, 8.9], patience=1, factor=0.5, threshold=0.1)
    assert lrs == [1.0, 1.0, 0.5, 0.5]


def test_plateau_max_mode_with_absolute_threshold():
    # Improvement means metric > best + 0.5.
    lrs = plateau_lrs(
        [1.0, 1.4, 1.6, 1.7, 1.8], mode="max", threshold_mode="abs", threshold=0.5, patience=1, factor=0.1
    )
    assert lrs == pytest.approx([1.0, 1.0, 1.0, 1.0, 0.1])
    # Only a strict improvement counts: equal to best - threshold is a bad epoch.
    lrs = plateau_lrs([2.0, 1.5, 1.5], threshold_mode="abs", threshold=0.5, patience=1, factor=0.5)
    assert lrs == [1.0, 1.0, 0.5]


def test_plateau_cooldown_ignores_bad_epochs_after_a_reduction():
    lrs = plateau_lrs([1.0] * 8, patience=0, cooldown=2, factor=0.5)
    # Reduce at epoch 2; epochs 3 and 4 are cooldown; epoch 5 is bad again and reduces.
    assert lrs == [1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125]


def test_plateau_respects_min_lr_per_group_and_eps():
    opt = make_opt()
    sched = S.ReduceLROnPlateau(opt, patience=0, factor=0.5, min_lr=[0.4, 0.2])
    for m in [1.0] * 6:
        sched.step(m)
    assert sched.get_last_lr() == [0.4, 0.2]
    # A reduction smaller than eps is skipped.
    assert plateau_lrs([1.0, 1.0, 1.0], patience=0, factor=0.9, eps=0.2) == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        S.ReduceLROnPlateau(make_opt(), min_lr=[0.1])


def test_plateau_accepts_zero_dim_tensor_metrics_and_validates_options():
    assert plateau_lrs([fg.tensor(2.0), fg.tensor(2.0)], patience=0, factor=0.5) == [1.0, 0.5]
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        S.ReduceLROnPlateau(make_opt(), factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        S.ReduceLROnPlateau(make_opt(), mode="avg")
    with pytest.raises(ValueError, match="threshold mode pct is unknown!"):
        S.ReduceLROnPlateau(make_opt(), threshold_mode="pct")


# --- base class behaviour -------------------------------------------------------------------------


def test_scheduler_records_initial_lr_and_base_lrs():
    opt = make_opt()
    sched = S.StepLR(opt, step_size=1, gamma=0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == list(BASE)
    assert sched.base_lrs == list(BASE)
    assert sched.last_epoch == 0
    opt.step()
    sched.step()
    assert sched.last_epoch == 1 and [g["initial_lr"] for g in opt.param_groups] == list(BASE)


def test_resuming_with_last_epoch_requires_initial_lr():
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        S.StepLR(make_opt(), step_size=2, last_epoch=3)


@pytest.mark.parametrize(
    "make",
    [
        lambda o: S.StepLR(o, step_size=3, gamma=0.5),
        lambda o: S.CosineAnnealingLR(o, T_max=6, eta_min=0.01),
        lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=30),
        lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
        lambda o: S.SequentialLR(o, [S.LinearLR(o, total_iters=3), S.ExponentialLR(o, 0.9)], [4]),
        lambda o: S.ChainedScheduler([S.ConstantLR(o, total_iters=5), S.ExponentialLR(o, 0.9)]),
    ],
    ids=["step", "cosine", "onecycle", "warm_restarts", "sequential", "chained"],
)
def test_scheduler_state_dict_round_trip_continues_the_same_sequence(make):
    opt = make_opt(momentum=0.9)
    sched = make(opt)
    lr_sequence(opt, sched, 7)
    saved_sched = copy.deepcopy(sched.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    assert "optimizer" not in saved_sched
    expected = lr_sequence(opt, sched, 10)

    opt2 = make_opt(momentum=0.9)
    sched2 = make(opt2)
    sched2.load_state_dict(saved_sched)
    opt2.load_state_dict(saved_opt)  # after the scheduler, so the loaded lrs win
    assert lr_sequence(opt2, sched2, 10) == expected


def test_plateau_state_dict_round_trip():
    opt = make_opt()
    sched = S.ReduceLROnPlateau(opt, patience=1, factor=0.5, cooldown=1)
    metrics = [3.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    for m in metrics[:4]:
        sched.step(m)
    saved, saved_opt = copy.deepcopy(sched.state_dict()), copy.deepcopy(opt.state_dict())
    rest = []
    for m in metrics[4:]:
        sched.step(m)
        rest.append(sched.get_last_lr())
    opt2 = make_opt()
    sched2 = S.ReduceLROnPlateau(opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    rest2 = []
    for m in metrics[4:]:
        sched2.step(m)
        rest2.append(sched2.get_last_lr())
    assert rest2 == rest and sched2.num_bad_epochs == sched.num_bad_epochs


def test_lambda_state_dict_keeps_callable_object_attributes_but_not_functions():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate**epoch

    opt = make_opt()
    sched = S.LambdaLR(opt, [Decay(0.5), lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    other = S.LambdaLR(make_opt(), [Decay(0.9), lambda e: 1.0])
    other.load_state_dict(state)
    assert other.lr_lambdas[0].rate == 0.5


def test_closed_form_is_used_when_step_is_given_an_epoch():
    opt = make_opt()
    sched = S.StepLR(opt, step_size=3, gamma=0.5)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        sched.step(7)
    assert sched.get_last_lr() == [BASE[0] * 0.25, BASE[1] * 0.25]
    assert sched.last_epoch == 7


def test_warns_when_scheduler_steps_before_the_optimizer():
    opt = make_opt()
    sched = S.ExponentialLR(opt, gamma=0.5)
    with pytest.warns(
        UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"
    ):
        sched.step()
    opt2 = make_opt()
    sched2 = S.ExponentialLR(opt2, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt2.step()
        sched2.step()


def test_tensor_lr_is_updated_in_place_and_get_last_lr_returns_copies():
    a = fg.zeros(1, requires_grad=True)
    lr = fg.tensor(1.0)
    opt = optim.SGD([a], lr=lr)
    sched = S.StepLR(opt, step_size=1, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == 0.5
    last = sched.get_last_lr()[0]
    assert isinstance(last, fg.Tensor) and last is not lr and last.item() == 0.5


def test_scheduler_needs_an_optimizer():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        S.StepLR([], step_size=1)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1."):
        S.ConstantLR(make_opt(), factor=2.0)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        S.LinearLR(make_opt(), start_factor=0.0)


# --- CyclicLR -------------------------------------------------------------------------------------


def cyclic_closed_form(n, base, peak, up, down, scale):
    """The triangular cycle of CyclicLR at step n, from its documented formula."""
    total = up + down
    cycle = math.floor(1 + n / total)
    x = 1 + n / total - cycle
    height = x / (up / total) if x <= up / total else (x - 1) / (up / total - 1)
    return base + (peak - base) * height * scale(cycle, n)


@pytest.mark.parametrize(
    ("mode", "scale"),
    [
        ("triangular", lambda cycle, n: 1.0),
        ("triangular2", lambda cycle, n: 1 / 2 ** (cycle - 1)),
        ("exp_range", lambda cycle, n: 0.95**n),
    ],
)
@pytest.mark.parametrize(("up", "down"), [(4, None), (3, 5)])
def test_cyclic_lr_follows_the_documented_cycle(mode, scale, up, down):
    opt = make_opt(momentum=0.9)
    sched = S.CyclicLR(
        opt, base_lr=[0.1, 0.01], max_lr=[1.0, 0.05], step_size_up=up, step_size_down=down, mode=mode,
        gamma=0.95,
    )  # fmt: skip
    seq = lr_sequence(opt, sched, 30)
    down = up if down is None else down
    for n, lrs in enumerate(seq):
        for lr, base, peak in zip(lrs, (0.1, 0.01), (1.0, 0.05), strict=True):
            expected = cyclic_closed_form(n, base, peak, up, down, scale)
            assert lr == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_cyclic_lr_cycles_the_momentum_against_the_lr():
    opt = make_opt(momentum=0.5)
    sched = S.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
    assert [g["momentum"] for g in opt.param_groups] == [0.9, 0.9]
    momenta = []
    for _ in range(5):
        opt.step()
        sched.step()
        momenta.append(round(opt.param_groups[0]["momentum"], 12))
    assert momenta == [0.85, 0.8, 0.85, 0.9, 0.85]
    assert opt.param_groups[0]["base_momentum"] == 0.8 and opt.param_groups[0]["max_momentum"] == 0.9


def test_cyclic_lr_cycles_adam_beta1_and_keeps_beta2():
    opt = make_opt(cls=optim.Adam, betas=(0.5, 0.99))
    sched = S.CyclicLR(opt, base_lr=1e-3, max_lr=1e-2, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["betas"] == pytest.approx((0.85, 0.99))


def test_cyclic_lr_custom_scale_fn_by_cycle_or_iteration():
    by = {"cycle": lambda c, n: 1 / (c + 1), "iterations": lambda c, n: 1 / (n + 1)}
    for scale_mode, expected in by.items():
        opt = make_opt(momentum=0.9)
        sched = S.CyclicLR(
            opt, base_lr=0.1, max_lr=1.0, step_size_up=2, scale_fn=lambda x: 1 / (x + 1),
            scale_mode=scale_mode,
        )  # fmt: skip
        for n, lrs in enumerate(lr_sequence(opt, sched, 12)):
            assert lrs[0] == pytest.approx(cyclic_closed_form(n, 0.1, 1.0, 2, 2, expected), rel=1e-12)


class HalfPower:
    def __init__(self):
        self.base = 0.5

    def __call__(self, x):
        return self.base**x


def test_cyclic_lr_state_dict_keeps_callable_objects_but_not_functions():
    opt = make_opt(momentum=0.9)
    sched = S.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2, scale_fn=HalfPower())
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert state["_scale_fn_custom"] == {"base": 0.5} and "_scale_fn_ref" not in state
    other_opt = make_opt(momentum=0.9)
    fn = HalfPower()
    fn.base = 0.9
    other = S.CyclicLR(other_opt, base_lr=0.1, max_lr=1.0, step_size_up=2, scale_fn=fn)
    other.load_state_dict(copy.deepcopy(state))
    assert fn.base == 0.5 and other.last_epoch == 3
    for _ in range(4):
        for o, s in ((opt, sched), (other_opt, other)):
            o.step()
            s.step()
        assert other.get_last_lr() == sched.get_last_lr()

    plain = S.CyclicLR(make_opt(momentum=0.9), 0.1, 1.0, scale_fn=lambda x: 1.0)
    assert plain.state_dict()["_scale_fn_custom"] is None


def test_cyclic_lr_errors():
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        S.CyclicLR(make_opt(momentum=0.9), 0.1, 1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1 with `cycle_momentum`"):
        S.CyclicLR(make_opt(cls=optim.Adagrad), 0.1, 1.0)
    with pytest.raises(ValueError, match="base_lr must have the same length as optimizer.param_groups"):
        S.CyclicLR(make_opt(momentum=0.9), [0.1], 1.0)
    sched = S.CyclicLR(make_opt(cls=optim.Adagrad), 0.1, 1.0, cycle_momentum=False)
    assert sched.get_last_lr() == [0.1, 0.1]
