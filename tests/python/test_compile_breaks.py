"""ferrograd.compile at graph breaks: a function whose capture breaks is cut
into compiled pieces around the statement that broke it.

The oracle is the uncompiled function on the same inputs: the pieces replay
the same kernels in the same order and the breaking statements run eagerly,
so values agree bitwise and gradients within float rounding (fused runs
add the same products in another order).
"""

from __future__ import annotations

import concurrent.futures
import io
import linecache

import ferrograd as torch
import numpy as np
import pytest
from test_compile import _bits, _Calls
from test_compile import _values_and_grads as _run
from transform_programs import UNARY

NAMES = sorted(UNARY)
SINK = io.StringIO()


@torch.compiler.disable
def eager_scale(x):
    return x * 1.25


# Statements that break a capture, each followed by what keeps it honest.
BREAKS = [
    "    print('mean', float(x.mean()), file=SINK)\n",
    "    if x.sum().item() > 0:\n        x = x * 1.5\n    else:\n        x = x - 0.5\n",
    "    x = eager_scale(x)\n",
    "    n = len(x.detach().tolist())\n    x = x + n\n",
]


def _define(src: str, name: str):
    """A function from source text that ``inspect`` can read back."""
    filename = f"<compile-breaks-{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns: dict = {}
    names = {"U": UNARY, "SINK": SINK, "eager_scale": eager_scale, "torch": torch}
    exec(compile(src, filename, "exec"), names, ns)
    return ns[name]


def _program(seed: int):
    """A random chain of table ops with graph breaks between some of them."""
    rng = np.random.default_rng(seed)
    lines = ["def f(x, c):\n"]
    breaks = 0
    for _ in range(int(rng.integers(3, 9))):
        if rng.random() < 0.35:
            lines.append(BREAKS[int(rng.integers(0, len(BREAKS)))])
            breaks += 1
            continue
        name = NAMES[int(rng.integers(0, len(NAMES)))]
        mix = ("", " * c", " + c.sum(-1, keepdim=True)")[int(rng.integers(0, 3))]
        lines.append(f"    x = U[{name!r}](x){mix}\n")
    if breaks == 0:
        lines.insert(int(rng.integers(1, len(lines) + 1)), BREAKS[seed % len(BREAKS)])
    lines.append("    return x.sum(), x\n")
    src = "".join(lines)
    return _define(src, "f"), src


@pytest.mark.parametrize("seed", range(30))
def test_random_chains_with_breaks_match_eager(seed):
    f, src = _program(seed)
    cf = torch.compile(f)
    # Each call finds at most one more break, per kind of input.
    shapes = [(3,), (3,), (2, 4)] + [(3,), (2, 4)] * 6
    for i, shape in enumerate(shapes):
        got, want = _run(cf, shape, i), _run(f, shape, i)
        assert got[:2] == want[:2], src
        np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-12, err_msg=src)
    c = cf._ferrograd_compiled
    # The function was cut, and its pieces were captured.
    assert c.splits and c.programs(), src


def test_pieces_replay_without_running_their_python_code():
    before, after = _Calls(), _Calls()
    out = io.StringIO()

    def step(x):
        before.n += 1
        y = (x * 2).tanh()
        print("y", file=out)
        after.n += 1
        return (y * x).sum()

    cstep = torch.compile(step)
    for i in range(5):
        x = torch.full((3,), 0.1 * i, requires_grad=True)
        x2 = x.detach().clone().requires_grad_()
        got, want = cstep(x), step(x2)
        assert _bits(got) == _bits(want)
        got.backward()
        want.backward()
        np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    # Each call printed (the print runs eagerly); the statements around it
    # ran in Python on the capturing calls only: the first (which found the
    # break) and the second (which captured the pieces), plus the 5 eager calls.
    assert out.getvalue().count("y\n") == 10
    assert (before.n, after.n) == (7, 7)
    assert len(cstep._ferrograd_compiled.programs()) == 2


def test_a_training_step_that_logs_its_loss_replays_the_step():
    torch.manual_seed(3)

    def make():
        return torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))

    model, ref = make(), make()
    ref.load_state_dict(model.state_dict())
    logs: list[float] = []

    def stepper(m, opt):
        def step(x, y):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            logs.append(round(loss.item(), 12))
            return loss

        return step

    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05)
    cstep, step = torch.compile(stepper(model, opt)), stepper(ref, ref_opt)
    g = torch.Generator().manual_seed(0)
    for _ in range(6):
        x, y = torch.randn(5, 6, generator=g), torch.randn(5, 1, generator=g)
        assert _bits(cstep(x, y)) == _bits(step(x, y))
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert logs[0::2] == logs[1::2]
    progs = cstep._ferrograd_compiled.programs()
    assert progs and "backward_recorded" in progs[0].ops


class Noisy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 8)
        self.b = torch.nn.Linear(8, 2)
        self.drop = torch.nn.Dropout(0.0)
        self.seen = io.StringIO()

    def forward(self, x):
        h = self.drop(self.a(x)).relu()
        print(h.shape, file=self.seen)
        if self.training:
            h = h * 2
        return self.b(h)


def test_a_module_forward_with_a_print_is_cut_into_pieces():
    torch.manual_seed(4)
    m, ref = Noisy(), Noisy()
    ref.load_state_dict(m.state_dict())
    cm = torch.compile(m)
    x = torch.randn(3, 4)
    for mode in ("train", "train", "eval", "eval", "train"):
        getattr(cm, mode)()
        getattr(ref, mode)()
        got, want = cm(x), ref(x)
        assert _bits(got) == _bits(want)
        got.pow(2).sum().backward()
        want.pow(2).sum().backward()
    for p, q in zip(m.parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    assert m.seen.getvalue() == ref.seen.getvalue()
    assert cm._compiled.splits and cm._compiled.programs()


def test_two_breaks_cut_twice_and_explain_reports_them():
    def f(x):
        y = x.exp()
        print("one", file=SINK)
        z = y * x
        print("two", file=SINK)
        return z.sum()

    cf = torch.compile(f)
    x = torch.randn(4)
    for _ in range(4):
        assert _bits(cf(x)) == _bits(f(x))
    c = cf._ferrograd_compiled
    ops = [p.ops for p in c.programs()]
    assert len(ops) == 3 and ops[0] == ["exp"] and ops[-1] == ["sum"]
    reasons = c.break_reasons()
    assert len(reasons) == 2 and all("print" in r for r in reasons)
    ex = torch._dynamo.explain(f)(x)
    assert ex.graph_break_count == 1 and ex.graph_count == 0  # the call that found the first break


def test_functions_that_cannot_be_cut_run_eagerly_whole():
    total = [0]

    def counts(x):
        nonlocal_total = total
        y = x + 1
        print("n", file=SINK)
        nonlocal_total[0] += 1
        return y

    def uses_locals(x):
        y = x + 1
        print("l", file=SINK)
        return locals()["y"]

    for fn in (uses_locals,):
        cf = torch.compile(fn)
        for _ in range(3):
            assert _bits(cf(torch.ones(2))) == _bits(fn(torch.ones(2)))
        assert not cf._ferrograd_compiled.splits
    # A function whose file was edited after it was loaded is not cut by
    # the new text.
    edited = _define("def g(x):\n    y = x + 1\n    print('g', file=SINK)\n    return y\n", "g")
    linecache.cache["<compile-breaks-g>"] = (0, None, ["def g(x):\n", "    y = x - 1\n",
                                                        "    print('g', file=SINK)\n", "    return y\n"],
                                             "<compile-breaks-g>")
    cg = torch.compile(edited)
    for _ in range(3):
        np.testing.assert_array_equal(cg(torch.ones(2)).numpy(), [2.0, 2.0])
    assert not cg._ferrograd_compiled.splits
    ccounts = torch.compile(counts)
    for _ in range(3):
        assert _bits(ccounts(torch.ones(2))) == _bits(counts(torch.ones(2)))
    assert total[0] == 6  # the cut function still runs its Python statements after the print


def test_cut_functions_from_eight_threads_match_eager():
    f, src = _program(7)
    cf = torch.compile(f)
    shapes = [(3,), (2, 4)] * 5

    def work(i):
        return [_run(cf, s, i * 10 + k) for k, s in enumerate(shapes)]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(work, range(8)))
    for i in range(8):
        for k, s in enumerate(shapes):
            want = _run(f, s, i * 10 + k)
            assert got[i][k][:2] == want[:2], src
            np.testing.assert_allclose(got[i][k][2], want[2], rtol=1e-10, atol=1e-12)


def test_a_closure_made_by_a_piece_sees_each_calls_values():
    def f(x):
        print("start", file=SINK)
        s = x.sum()
        g = lambda t: t * s  # noqa: E731  (made anew by every call, over that call's s)
        print("mid", file=SINK)
        return g(x)

    cf = torch.compile(f)
    for v in (1.0, 2.0, 3.0, 4.0, 5.0):
        x = torch.full((2,), v)
        np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())


class Block(torch.nn.Module):
    """A module whose forward breaks a capture twice (a print, a branch on
    a value read into Python)."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
        self.seen = io.StringIO()

    def forward(self, x):
        h = self.a(x).tanh()
        big = x[0, 0].item() > 0.5
        print("branch", big, file=self.seen)
        if big:
            h = h * 2
        return self.b(h).relu()


class Outer(torch.nn.Module):
    def __init__(self, nested: bool) -> None:
        super().__init__()
        self.pre, self.post = torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)
        self.block = Block()
        self.body = torch.nn.Sequential(torch.nn.Identity(), self.block) if nested else self.block

    def forward(self, x):
        h = self.pre(x).sigmoid()
        h = self.body(h)
        return self.post(h).exp()


@pytest.mark.parametrize("nested", [False, True])
def test_a_break_inside_a_called_module_cuts_that_modules_forward(nested):
    torch.manual_seed(11)
    m, ref = Outer(nested), Outer(nested)
    ref.load_state_dict(m.state_dict())
    cm = torch.compile(m)
    for i in range(8):
        x = torch.randn(5, 3) * (1 + i)
        got, want = cm(x), ref(x)
        assert _bits(got) == _bits(want)
        got.sum().backward()
        want.sum().backward()
    for p, q in zip(m.parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    log = ref.block.seen.getvalue()
    assert "True" in log and "False" in log  # both branches ran
    assert m.block.seen.getvalue() == log
    # The block's own statements run as compiled pieces: its tanh and its
    # relu are in programs, which they are not when the calling statement
    # runs eagerly whole.
    ops = [op for p in cm._compiled.programs() for op in p.ops]
    assert "tanh" in ops and "relu" in ops and "exp" in ops, ops
    reasons = cm._compiled.break_reasons()
    assert any("print" in r for r in reasons)


def test_a_called_module_runs_compiled_only_inside_the_compiled_call():
    torch.manual_seed(12)
    m = Outer(False)
    cm = torch.compile(m)
    for _ in range(3):
        cm(torch.randn(5, 3))
    before = len(cm._compiled.programs())
    assert before > 0 and cm._compiled.callees
    # Called on its own (a batch size the compiled call has not seen), the
    # block runs eagerly: nothing is captured for it.
    m.block(torch.randn(7, 4))
    assert len(cm._compiled.programs()) == before
    cm(torch.randn(7, 3))
    assert len(cm._compiled.programs()) > before
    torch.compiler.reset()
    assert not cm._compiled.callees and not cm._compiled.programs()


class _Cube(torch.autograd.Function):
    """x^3 with its derivative written by hand; counts its backward calls."""

    calls = 0

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        _Cube.calls += 1
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


def test_a_custom_function_breaks_the_capture_and_keeps_its_backward():
    def f(x, w):
        h = (x * w).tanh()
        y = _Cube.apply(h)
        return (y * 2).sum()

    cf = torch.compile(f)
    g = np.random.default_rng(13)
    for i in range(4):
        x = torch.tensor(g.normal(size=(3, 4)), requires_grad=True)
        w = torch.tensor(g.normal(size=(4,)), requires_grad=True)
        got = cf(x, w)
        got.backward()
        assert _Cube.calls == 2 * i + 1  # the compiled call's node ran its backward
        # Oracle: d/dx sum(2 tanh(xw)^3) = 6 t^2 (1 - t^2) w, from NumPy.
        t = np.tanh(x.detach().numpy() * w.detach().numpy())
        np.testing.assert_allclose(got.item(), 2 * (t**3).sum(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), 6 * t**2 * (1 - t**2) * w.detach().numpy(), rtol=1e-10)
        x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
        f(x2, w2).backward()
        np.testing.assert_array_equal(w.grad.numpy(), w2.grad.numpy())
    reasons = cf._ferrograd_compiled.break_reasons()
    assert any("_Cube" in r for r in reasons), reasons
    # Without gradients the Function's forward is ordinary recorded ops.
    cn = torch.compile(f)
    with torch.no_grad():
        x, w = torch.randn(3, 4), torch.randn(4)
        for _ in range(3):
            assert _bits(cn(x, w)) == _bits(f(x, w))
    assert cn._ferrograd_compiled.programs() and not cn._ferrograd_compiled.break_reasons()


def test_saved_tensor_hooks_see_what_eager_saves():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    def inside(x):
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = (x * x).sin()
        return y.sum()

    def plain(x):
        return (x * x).sin().sum()

    g = np.random.default_rng(14)
    for f, around in ((inside, False), (plain, True)):
        cf = torch.compile(f)
        for _ in range(3):
            x = torch.tensor(g.normal(size=(3, 4)), requires_grad=True)
            x2 = x.detach().requires_grad_()
            cf(x).sum()  # a call without hooks around it first
            del packed[:]
            if around:
                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    got, want = cf(x), None
                n_got = len(packed)
                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    want = f(x2)
            else:
                got = cf(x)
                n_got = len(packed)
                want = f(x2)
            # The pack hook ran as often as in eager, on the same shapes.
            assert n_got > 0 and n_got * 2 == len(packed) and packed[:n_got] == packed[n_got:]
            got.backward()
            want.backward()
            np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())
            # Oracle: d/dx sum(sin(x^2)) = 2x cos(x^2).
            xn = x.detach().numpy()
            np.testing.assert_allclose(x.grad.numpy(), 2 * xn * np.cos(xn * xn), rtol=1e-12)
