"""ferrograd.compile: replayed programs against eager execution.

The oracle is eager ferrograd on the same inputs: a replay runs the same
kernels in the same order, so values and gradients must agree bitwise.
Random chains reuse the transform test's op tables.
"""

from __future__ import annotations

import array
import concurrent.futures

import ferrograd as torch
import numpy as np
import pytest
from transform_programs import UNARY

NAMES = sorted(UNARY)


def _chain(seed: int):
    rng = np.random.default_rng(seed)
    names = [NAMES[int(i)] for i in rng.integers(0, len(NAMES), size=int(rng.integers(2, 8)))]
    mix = [int(m) for m in rng.integers(0, 3, size=len(names))]

    def f(x, c):
        for name, m in zip(names, mix, strict=False):
            x = UNARY[name](x)
            if m == 1:
                x = x * c
            elif m == 2:
                x = x + c.sum(-1, keepdim=True)
        return x.sum(), x

    return f, names


def _bits(t):
    return t.detach().numpy().tobytes()


class _Calls:
    """A call counter whose count the guards do not read: it lives in an
    ``array.array``, keyed by identity, so counting does not make a call
    record again."""

    __slots__ = ("_n",)

    def __init__(self):
        self._n = array.array("q", [0])

    @property
    def n(self):
        return self._n[0]

    @n.setter
    def n(self, v):
        self._n[0] = v


def _values_and_grads(f, shape, seed):
    g = np.random.default_rng(1000 + seed)
    x = torch.tensor(g.normal(size=shape), requires_grad=True)
    c = torch.tensor(g.normal(size=shape))
    loss, y = f(x, c)
    loss.backward()
    return _bits(loss), _bits(y), x.grad.numpy()


@pytest.mark.parametrize("seed", range(40))
def test_random_chains_replay_eager_values_and_gradients(seed):
    f, names = _chain(seed)
    cf = torch.compile(f)
    shapes = [(3,), (3,), (2, 4), (3,), (2, 4)]  # a changed shape records a second program
    for i, shape in enumerate(shapes):
        got, want = _values_and_grads(cf, shape, i), _values_and_grads(f, shape, i)
        # Values bitwise; gradients of fused runs within float rounding.
        assert got[:2] == want[:2], names
        np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-12, err_msg=str(names))
    entries = cf._ferrograd_compiled.programs()
    assert len(entries) == 2, names


def test_replay_does_not_run_the_python_function():
    calls = _Calls()

    def f(x):
        calls.n += 1
        return (x * x).tanh()

    cf = torch.compile(f)
    x = torch.randn(4)
    for _ in range(3):
        np.testing.assert_array_equal(cf(x).numpy(), torch.tanh(x * x).numpy())
    assert calls.n == 1


def test_a_call_that_changes_its_guards_is_not_replayed():
    seen = []  # a list is guarded by its contents, which every call changes

    def f(x):
        seen.append(len(seen))
        return x * len(seen)

    cf = torch.compile(f)
    x = torch.ones(2)
    for i in range(12):
        np.testing.assert_array_equal(cf(x).numpy(), np.full(2, i + 1.0))
    assert seen == list(range(12))
    assert not cf._ferrograd_compiled.programs()


def test_data_dependent_branches_become_value_guards_with_a_program_per_outcome():
    calls = _Calls()

    def f(x):
        calls.n += 1
        y = x * 3
        if (y.sum() > 0) and int((y > 1).sum()) + int(y.argmin()) < 3:  # a bool and integers read
            return y.tanh()
        return y - 1

    cf = torch.compile(f)
    values = ([1.0, 2.0, 0.5], [-3.0, 1.0, 0.0], [4.0, 0.5, 1.0], [-1.0, -2.0, 0.0], [0.1, 0.2, 9.0])
    for v in values * 2:
        x = torch.tensor(v, requires_grad=True)
        x2 = torch.tensor(v, requires_grad=True)
        got, want = cf(x), f(x2)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        got.sum().backward()
        want.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())
    # A program per set of values read: (True, 3, 2), (False), (True, 3, 1)
    # and (True, 1, 0); the second round replays them all.
    programs = cf._ferrograd_compiled.programs()
    assert len(programs) == 4 and all("value_guard" in p.ops for p in programs)
    assert calls.n == len(values) * 2 + 4  # the eager calls and the four captures


def test_a_floating_value_read_breaks_the_capture():
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x - 1

    cf = torch.compile(f)
    for v in ([1.0, 2.0], [-3.0, 1.0], [4.0, 0.5]):
        x = torch.tensor(v)
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    ex = torch._dynamo.explain(f)(torch.tensor([1.0]))
    assert ex.graph_count == 0 and ex.graph_break_count == 1
    with pytest.raises(torch._dynamo.exc.Unsupported, match="read into the host"):
        torch.compile(f, fullgraph=True)(torch.tensor([1.0]))


def test_print_and_hooks_break_the_capture():
    def f(x):
        print("side effect")
        return x + 1

    ex = torch._dynamo.explain(f)(torch.ones(2))
    assert ex.graph_count == 0 and "print" in ex.break_reasons[0]

    def g(x):
        y = x * 2
        y.register_hook(lambda grad: grad * 3)
        return y.sum()

    cg = torch.compile(g)
    for _ in range(2):
        x = torch.ones(2, requires_grad=True)
        cg(x).backward()
        np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_python_values_are_guarded():
    def f(x, k, mode):
        return x * k if mode == "mul" else x + k

    cf = torch.compile(f)
    x = torch.randn(3)
    for k, mode in ((2.0, "mul"), (3.0, "mul"), (2.0, "add"), (2.0, "mul")):
        np.testing.assert_array_equal(cf(x, k, mode).numpy(), f(x, k, mode).numpy())


SCALE = 2.0  # a global the function below reads


@pytest.mark.parametrize("seed", range(6))
def test_a_call_like_the_last_one_sees_every_change_a_guard_would(seed):
    # A call that sees what the last replayed call saw skips the guard key
    # (the memo of that call); each change below must still reach the
    # result, by the memo failing and the full path finding or capturing
    # the right program.
    global SCALE
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    m = torch.nn.Linear(3, 3)
    shift = 1.0

    def f(x, y):
        return (m(x * SCALE) + y * shift).tanh()

    cf = torch.compile(f)
    x, y = torch.randn(4, 3), torch.randn(4, 3)
    changes = ["none", "global", "closure", "shape", "alias", "requires_grad", "eval",
               "weight", "no_grad", "in_place"]
    for _ in range(40):
        change = changes[int(rng.integers(len(changes)))]
        args = (x, y)
        grad_mode = True
        if change == "global":
            SCALE = float(rng.choice([2.0, 3.0, -1.0]))
        elif change == "closure":
            shift = float(rng.choice([1.0, 0.5]))
        elif change == "shape":
            n = int(rng.integers(1, 4))
            x, y = torch.randn(n, 3), torch.randn(n, 3)
            args = (x, y)
        elif change == "alias":
            args = (x, x)
        elif change == "requires_grad":
            x.requires_grad_(not x.requires_grad)
        elif change == "eval":
            m.train(not m.training)
        elif change == "weight":
            m.weight = torch.nn.Parameter(torch.randn(3, 3))
        elif change == "no_grad":
            grad_mode = False
        elif change == "in_place":
            with torch.no_grad():
                y.add_(1.0)
        with torch.set_grad_enabled(grad_mode):
            got, want = cf(*args), f(*args)
        assert got.requires_grad == want.requires_grad, change
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy(), err_msg=change)
    SCALE = 2.0


def test_a_call_like_the_last_one_sees_optimizer_changes():
    torch.manual_seed(3)
    model, ref = _mlp(), _mlp()
    ref.load_state_dict(model.state_dict())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    x, y = torch.randn(5, 6), torch.randn(5, 1)
    run, ref_run = _stepper(model, opt, True), _stepper(ref, ref_opt, False)
    for i in range(8):
        for o in (opt, ref_opt):
            if i == 2:  # a number in the group changed in place
                o.param_groups[0]["lr"] = 0.05
            if i == 4:  # a new entry, and momentum state from the next step
                o.param_groups[0]["momentum"] = 0.9
            if i == 6:
                o.param_groups[0]["betas_like"] = (0.5, 0.25)
        assert run(x, y).item() == ref_run(x, y).item(), i
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def _bn_model():
    nn = torch.nn
    return nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.0), nn.BatchNorm1d(8), nn.Tanh())


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))


def test_module_train_eval_and_state():
    torch.manual_seed(0)
    m = _bn_model()
    cm = torch.compile(m)
    assert cm._orig_mod is m
    assert [k.removeprefix("_orig_mod.") for k in cm.state_dict()] == list(m.state_dict())
    assert [p is q for p, q in zip(cm.parameters(), m.parameters(), strict=False)] == [True] * 4
    ref = _bn_model()
    ref.load_state_dict(m.state_dict())
    x = torch.randn(5, 4)
    for mode in ("train", "eval", "train"):
        getattr(cm, mode)()
        getattr(ref, mode)()
        for _ in range(2):
            a, b = cm(x), ref(x)
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
            # The running statistics are updated in place on replay too.
            np.testing.assert_array_equal(m[2].running_mean.numpy(), ref[2].running_mean.numpy())
        a.sum().backward()
        b.sum().backward()
        np.testing.assert_allclose(m[0].weight.grad.numpy(), ref[0].weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_optimizer_updates_are_seen_by_the_replay():
    torch.manual_seed(1)
    m = torch.nn.Linear(3, 2)
    cm = torch.compile(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(4, 3)
    for _ in range(3):
        opt.zero_grad()
        out = cm(x)
        np.testing.assert_array_equal(out.detach().numpy(), (x @ m.weight.T + m.bias).detach().numpy())
        out.pow(2).sum().backward()
        opt.step()


def test_a_replaced_parameter_recaptures():
    m = torch.nn.Linear(2, 2)
    cm = torch.compile(m)
    x = torch.randn(1, 2)
    cm(x)
    m.weight = torch.nn.Parameter(torch.zeros(2, 2))
    np.testing.assert_array_equal(cm(x).detach().numpy(), m.bias.detach().numpy()[None])


def test_compiled_steps_from_eight_threads_match_eager():
    torch.manual_seed(2)
    models = [_mlp() for _ in range(8)]
    refs = [_mlp() for _ in range(8)]
    for m, r in zip(models, refs, strict=False):
        r.load_state_dict(m.state_dict())
    xs = [torch.randn(5, 6) for _ in range(8)]

    def work(i):
        cm = torch.compile(models[i])
        for _ in range(20):
            models[i].zero_grad()
            cm(xs[i]).pow(2).mean().backward()
            with torch.no_grad():
                for p in models[i].parameters():
                    p -= 0.05 * p.grad

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))  # re-raises a worker's error
    for i in range(8):
        for _ in range(20):
            refs[i].zero_grad()
            refs[i](xs[i]).pow(2).mean().backward()
            with torch.no_grad():
                for p in refs[i].parameters():
                    p -= 0.05 * p.grad
        for p, q in zip(models[i].parameters(), refs[i].parameters(), strict=False):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_reset_and_disable():
    calls = _Calls()

    def f(x):
        calls.n += 1
        return x + 1

    cf = torch.compile(f)
    x = torch.ones(2)
    cf(x)
    cf(x)
    torch.compiler.reset()
    cf(x)
    assert calls.n == 2
    g = torch.compile(torch.compiler.disable(f))
    g(x)
    g(x)
    assert calls.n == 4
    assert not torch.compiler.is_compiling()


def _common_ops(x, w):
    """Factories, comparisons, detach and hand-written in-place methods."""
    mask = (x > 0) & (w.abs() < 2)
    y = torch.where(mask, x * w, torch.zeros_like(x)) + torch.ones(x.shape[-1]) * torch.arange(x.shape[-1])
    z = y.clone()
    z.mul_(2).clamp_(-3, 3)
    z.copy_(z - torch.full_like(z, 0.5))
    target = (x * 2).detach()
    return torch.nn.functional.mse_loss(z, target) + (y - 1).pow(2).mean()


def test_factories_comparisons_and_in_place_methods_are_captured():
    cf = torch.compile(_common_ops)
    g = np.random.default_rng(5)
    for _ in range(4):
        x = torch.tensor(g.normal(size=(3, 4)), requires_grad=True)
        w = torch.tensor(g.normal(size=(3, 4)), requires_grad=True)
        x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        got, want = cf(x, w), _common_ops(x2, w2)
        assert _bits(got) == _bits(want)
        got.backward()
        want.backward()
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-12, atol=1e-14)
    progs = cf._ferrograd_compiled.programs()
    assert len(progs) == 1 and {"full_of", "detached", "arange_scalars"} <= set(progs[0].ops)


def test_random_sampling_replays_the_eager_draws():
    def f(x):
        noise = torch.randn(x.shape) + torch.rand(x.shape) * torch.randint(0, 5, x.shape)
        return torch.nn.functional.dropout(x + noise, p=0.3)

    ex = torch._dynamo.explain(f)(torch.zeros(3))
    assert ex.graph_count == 1 and {"normal", "rand", "randint", "empty_of", "bernoulli_"} <= set(
        ex.ops_per_graph[0]
    )
    cf = torch.compile(f)
    x = torch.ones(50)
    for seed in (3, 3, 4):
        # The same generator draws, in the same order: the eager values.
        torch.manual_seed(seed)
        a = cf(x)
        torch.manual_seed(seed)
        np.testing.assert_array_equal(a.numpy(), f(x).numpy())
    # A given generator cannot be named by the program: eager.
    g = torch.Generator().manual_seed(1)
    assert torch._dynamo.explain(lambda x: x + torch.randn(x.shape, generator=g))(x).graph_count == 0


def test_a_dropout_training_step_replays_with_the_eager_masks():
    nn = torch.nn

    def make():
        torch.manual_seed(6)
        return nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Dropout(0.25), nn.Linear(32, 1))

    model, ref = make(), make()
    x, y = torch.randn(9, 6), torch.randn(9, 1)
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    run, ref_run = _stepper(model, opt, True), _stepper(ref, ref_opt, False)
    for step in range(5):
        torch.manual_seed(100 + step)
        got = run(x, y).item()
        torch.manual_seed(100 + step)
        assert got == ref_run(x, y).item()
    assert len(_replays(run)) == 1
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def summed_run(reduce):
    """An elementwise run ending in a full ``sum`` or ``mean``: one fused loop."""

    def f(a, b, c):
        return getattr((a * b + c).tanh() * a - (c / b).sigmoid(), reduce)()

    return f


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elementwise_runs_fuse_with_eager_values_and_gradients(dtype, reduce):
    dt = getattr(torch, dtype)
    f = summed_run(reduce)
    cf = torch.compile(f)
    g = np.random.default_rng(7)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for n in (5, 3000, 70_000):
        leaves = [torch.tensor(g.uniform(0.5, 2.0, size=n), dtype=dt, requires_grad=True) for _ in range(3)]
        twins = [t.detach().clone().requires_grad_() for t in leaves]
        got, want = cf(*leaves), f(*twins)
        np.testing.assert_allclose(got.item(), want.item(), rtol=rtol)
        got.backward()
        want.backward()
        for a, b in zip(leaves, twins, strict=True):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol)
    ops = [e.ops for e in cf._ferrograd_compiled.programs()]
    # The sum or mean joins the loop: the elements are never written.
    assert ops and all(o == ["fused_elementwise"] for o in ops), ops


def test_fused_runs_over_large_tensors_write_the_eager_elements_and_gradients():
    # Results and gradients of 8 MiB and more are written around the caches.
    def f(a, b, c):
        return (a * b + c).tanh() * a - (c / b).exp().neg() + b

    cf = torch.compile(f)
    g = np.random.default_rng(11)
    n = 2_300_000
    leaves = [torch.tensor(g.uniform(0.5, 2.0, size=n), dtype=torch.float32) for _ in range(3)]
    leaves = [t.requires_grad_() for t in leaves]
    twins = [t.detach().clone().requires_grad_() for t in leaves]
    got, want = cf(*leaves), f(*twins)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    w = torch.tensor(g.normal(size=n), dtype=torch.float32)
    (got * w).sum().backward()
    (want * w).sum().backward()
    for a, b in zip(leaves, twins, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert [e.ops for e in cf._ferrograd_compiled.programs()] == [["fused_elementwise"]]


def test_a_sum_joins_the_loop_only_when_nothing_else_reads_the_elements():
    def shared(a, b):
        y = (a * b).exp()
        return y.sum(), y  # the elements are a result too

    def converted(a, b):
        return (a * b).exp().sum(dtype=torch.float64)  # another dtype: the unfused operations run

    def converted_mean(a, b):
        return (a * b).exp().mean(dtype=torch.float64)

    def per_row(a, b):
        return (a * b).exp().view(200, 200).mean(1)  # not a full reduction: stays a row of its own

    g = np.random.default_rng(8)
    cases = (
        (shared, ["fused_elementwise", "sum"]),
        (converted, ["fused_elementwise"]),
        (converted_mean, ["fused_elementwise"]),
        (per_row, ["fused_elementwise", "view", "mean"]),
    )
    for f, ops in cases:
        cf = torch.compile(f)
        for _ in range(2):
            a, b = (torch.tensor(g.normal(size=40_000), dtype=torch.float32) for _ in range(2))
            a, b = a.requires_grad_(), b.requires_grad_()
            a2, b2 = (t.detach().clone().requires_grad_() for t in (a, b))
            got, want = cf(a, b), f(a2, b2)
            got = got if isinstance(got, tuple) else (got,)
            want = want if isinstance(want, tuple) else (want,)
            for x, y in zip(got, want, strict=True):
                assert x.dtype == y.dtype
                np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-5)
            got[0].sum().backward()
            want[0].sum().backward()
            np.testing.assert_allclose(a.grad.numpy(), a2.grad.numpy(), rtol=1e-5)
        assert [e.ops for e in cf._ferrograd_compiled.programs()] == [ops]


def test_a_fused_mean_takes_second_derivatives():
    def f(x, w):
        return (x * x * w).tanh().mean()

    cf = torch.compile(f)
    x, w = torch.randn(5, 4, dtype=torch.float64, requires_grad=True), torch.randn(5, 4, dtype=torch.float64)
    hess = []
    for fn in (cf, f):
        (gx,) = torch.autograd.grad(fn(x, w), x, create_graph=True)
        (hx,) = torch.autograd.grad(gx.sum(), x)
        hess.append(hx.numpy())
    # d2/dx2 of mean(tanh(w x^2)) by hand: (2w sech^2 u - 8 w^2 x^2 tanh u sech^2 u) / n, u = w x^2.
    xn, wn = x.detach().numpy(), w.numpy()
    u = wn * xn * xn
    sech2 = 1 / np.cosh(u) ** 2
    want = (2 * wn * sech2 - 8 * wn**2 * xn**2 * np.tanh(u) * sech2) / xn.size
    np.testing.assert_allclose(hess[0], want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hess[1], want, rtol=1e-10, atol=1e-12)
    assert [e.ops for e in cf._ferrograd_compiled.programs()] == [["fused_elementwise"]]


def test_fused_runs_take_second_derivatives():
    def f(x, w):
        return (x * x * w).tanh().exp()

    cf = torch.compile(f)
    x, w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True), torch.randn(4, 3, dtype=torch.float64)

    def hess_diag(fn):
        (gx,) = torch.autograd.grad(fn(x, w).sum(), x, create_graph=True)
        (hx,) = torch.autograd.grad(gx.sum(), x)
        return hx.numpy()

    np.testing.assert_allclose(hess_diag(cf), hess_diag(f), rtol=1e-10)
    xt = torch.randn(3, 4, dtype=torch.float64).t()  # another layout: the unfused operations run
    np.testing.assert_array_equal(cf(xt, w).numpy(), f(xt, w).numpy())


def _stepper(model, opt, compiled):
    """A training step of ``model`` with ``opt`` (compiled or not)."""

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return torch.compile(step) if compiled else step


def _train(model, opt, x, y, steps, compiled):
    run = _stepper(model, opt, compiled)
    losses = [run(x, y).item() for _ in range(steps)]
    return losses, run


def _replays(run):
    return [e.ops for e in run._ferrograd_compiled.programs()]


OPTIMIZERS = {
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.05),
    "sgd-momentum": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True),
    "adam": lambda ps: torch.optim.Adam(ps, lr=0.01),
    "adam-amsgrad": lambda ps: torch.optim.Adam(ps, lr=0.01, amsgrad=True, weight_decay=0.1),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.01),
    "adamax": lambda ps: torch.optim.Adamax(ps, lr=0.01),
    "radam": lambda ps: torch.optim.RAdam(ps, lr=0.01),
    "adagrad": lambda ps: torch.optim.Adagrad(ps, lr=0.05, lr_decay=0.01),
    "rmsprop": lambda ps: torch.optim.RMSprop(ps, lr=0.01, momentum=0.5),
    "adadelta": lambda ps: torch.optim.Adadelta(ps),
    "rprop": lambda ps: torch.optim.Rprop(ps, lr=0.01),
    "nadam": lambda ps: torch.optim.NAdam(ps, lr=0.01),
    "nadamw": lambda ps: torch.optim.NAdam(ps, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    # t0=2: the average starts following the iterates' mean within the six steps.
    "asgd": lambda ps: torch.optim.ASGD(ps, lr=0.05, lambd=0.01, t0=2, weight_decay=0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_whole_training_step_replays_the_eager_updates(name):
    make_opt = OPTIMIZERS[name]
    torch.manual_seed(3)
    model, ref = _mlp(), _mlp()
    ref.load_state_dict(model.state_dict())
    x, y = torch.randn(7, 6), torch.randn(7, 1)
    opt, ref_opt = make_opt(model.parameters()), make_opt(ref.parameters())
    got, run = _train(model, opt, x, y, 6, compiled=True)
    want, _ = _train(ref, ref_opt, x, y, 6, compiled=False)
    assert got == want
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
        for k, v in opt.state[p].items():
            np.testing.assert_array_equal(np.asarray(v), np.asarray(ref_opt.state[q][k]), err_msg=k)
    programs = _replays(run)
    assert len(programs) == 1 and "backward_recorded" in programs[0], programs
    assert {"optimizer_step", "optimizer_step_counted"} & set(programs[0]), programs


def test_a_compiled_step_sees_learning_rate_changes_and_frozen_parameters():
    torch.manual_seed(4)
    model, ref = _mlp(), _mlp()
    ref.load_state_dict(model.state_dict())
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(ref.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    ref_sched = torch.optim.lr_scheduler.StepLR(ref_opt, step_size=2, gamma=0.5)
    x, y = torch.randn(5, 6), torch.randn(5, 1)
    run, ref_run = _stepper(model, opt, True), _stepper(ref, ref_opt, False)
    for i in range(6):
        if i == 3:  # freezing a parameter changes what backward reaches
            model[0].bias.requires_grad_(False)
            ref[0].bias.requires_grad_(False)
        assert run(x, y).item() == ref_run(x, y).item()
        sched.step()
        ref_sched.step()
    # Three learning rates and a frozen bias: four programs.
    assert len(_replays(run)) == 4
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_gradient_accumulation_and_grad_reads_replay():
    w = torch.ones(3, requires_grad=True)
    w_ref = torch.ones(3, requires_grad=True)

    def f(x, w):
        # Reads .grad before backward: the program checks it is (still) absent or present.
        g = w.grad
        (x * w).sum().backward()
        return x * 2 if g is None else x + g

    cf = torch.compile(f)
    for i in range(4):
        x = torch.full((3,), float(i + 1))
        np.testing.assert_array_equal(cf(x, w).numpy(), f(x, w_ref).numpy())
        np.testing.assert_array_equal(w.grad.numpy(), w_ref.grad.numpy())
        if i == 1:
            w.grad = None
            w_ref.grad = None


def test_whole_compiled_steps_from_eight_threads_match_eager():
    torch.manual_seed(5)
    models = [_mlp() for _ in range(8)]
    refs = [_mlp() for _ in range(8)]
    for m, r in zip(models, refs, strict=True):
        r.load_state_dict(m.state_dict())
    data = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(8)]

    def work(i):
        opt = torch.optim.SGD(models[i].parameters(), lr=0.05, momentum=0.5)
        return _train(models[i], opt, *data[i], 15, compiled=True)[0]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(work, range(8)))
    for i in range(8):
        opt = torch.optim.SGD(refs[i].parameters(), lr=0.05, momentum=0.5)
        assert got[i] == _train(refs[i], opt, *data[i], 15, compiled=False)[0]
        for p, q in zip(models[i].parameters(), refs[i].parameters(), strict=True):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_vmap_and_grad_over_a_compiled_function():
    from ferrograd.func import grad, vmap

    def f(x):
        return (x.sin() * x).sum()

    cf = torch.compile(f)
    g = np.random.default_rng(15)
    cf(torch.tensor(g.normal(size=3)))  # a program for unbatched rows
    for _ in range(3):
        xn = g.normal(size=(4, 3))
        x = torch.tensor(xn)
        # Oracles: NumPy's row sums and the hand-derived gradient.
        np.testing.assert_allclose(vmap(cf)(x).numpy(), (np.sin(xn) * xn).sum(1), rtol=1e-12)
        want = np.cos(xn) * xn + np.sin(xn)
        np.testing.assert_allclose(vmap(grad(cf))(x).numpy(), want, rtol=1e-12)
        np.testing.assert_allclose(grad(cf)(x).numpy(), want, rtol=1e-12)


class _Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.scale = 1.0

    def forward(self, x):
        return self.lin(x) * self.scale


def test_a_changed_module_setting_or_a_new_hook_is_not_replayed_stale():
    torch.manual_seed(16)
    m = _Scaled()
    cm = torch.compile(m)
    x = torch.randn(4, 3)
    w, b = m.lin.weight.detach().numpy(), m.lin.bias.detach().numpy()
    base = x.numpy() @ w.T + b  # NumPy oracle of the layer
    for scale in (1.0, 3.0, 1.0, 2, -0.5):
        m.scale = scale
        got = cm(x)
        assert _bits(got) == _bits(m(x))
        np.testing.assert_allclose(got.detach().numpy(), base * scale, rtol=1e-5, atol=1e-6)
    # Dropout's probability is a setting too: 0 keeps every element, 1 none.
    d = torch.nn.Dropout(0.5)
    cd = torch.compile(d)
    ones = torch.ones(64)
    cd(ones)
    d.p = 0.0
    np.testing.assert_array_equal(cd(ones).numpy(), np.ones(64))
    d.p = 1.0
    np.testing.assert_array_equal(cd(ones).numpy(), np.zeros(64))
    # A forward hook registered after the program was recorded runs.
    m.scale = 1.0
    cm(x)
    h = m.lin.register_forward_hook(lambda mod, args, out: out * 10)
    np.testing.assert_allclose(cm(x).detach().numpy(), base * 10, rtol=1e-5, atol=1e-5)
    h.remove()
    np.testing.assert_allclose(cm(x).detach().numpy(), base, rtol=1e-5, atol=1e-6)


class _Settings:
    pass


class _Configured(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = _Settings()
        self.cfg.k = 1.0
        self.ks = [1.0]

    def forward(self, x):
        return x * self.cfg.k * self.ks[0]


def test_values_read_through_objects_dicts_and_lists_are_guarded():
    cfg = _Settings()
    cfg.scale = 1.0
    cfg.inner = _Settings()
    cfg.inner.power = 1
    table = {"shift": 0.0}

    def f(x):
        return (x * cfg.scale + table["shift"]) ** cfg.inner.power

    cf = torch.compile(f)
    xn = np.random.default_rng(17).normal(size=5)
    x = torch.tensor(xn)
    for scale, shift, power in ((1.0, 0.0, 1), (3.0, 0.0, 1), (3.0, -2.0, 1), (3.0, -2.0, 2), (1.0, 0.0, 1)):
        cfg.scale, table["shift"], cfg.inner.power = scale, shift, power
        np.testing.assert_allclose(cf(x).numpy(), (xn * scale + shift) ** power, rtol=1e-14)  # NumPy oracle
    m = _Configured()
    cm = torch.compile(m)
    for k, j in ((1.0, 1.0), (5.0, 1.0), (5.0, 7.0), (1.0, 1.0)):
        m.cfg.k = k
        m.ks[0] = j  # changed in place: no assignment to the module
        np.testing.assert_array_equal(cm(x).numpy(), xn * k * j)
    assert cf._ferrograd_compiled.programs() and cm._compiled.programs()


def test_optimizer_hooks_registered_after_a_capture_run():
    from ferrograd.optim.optimizer import register_optimizer_step_pre_hook

    def step(w, opt):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()

    w = torch.nn.Parameter(torch.ones(3))
    opt = torch.optim.SGD([w], lr=0.1)
    cstep = torch.compile(step)
    cstep(w, opt)
    cstep(w, opt)
    seen = []
    h = opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
    cstep(w, opt)
    assert seen == ["post"]
    h.remove()
    g = register_optimizer_step_pre_hook(lambda o, args, kwargs: seen.append("global"))
    cstep(w, opt)
    g.remove()
    cstep(w, opt)
    assert seen == ["post", "global"]
    # Oracle: five steps of w -= 0.1 * 2w from ones.
    np.testing.assert_allclose(w.detach().numpy(), np.full(3, 0.8**5), rtol=1e-6)
