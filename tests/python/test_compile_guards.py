"""Guards of compiled functions on what they read besides their arguments.

Each case compiles a function that reads a Python value somewhere other
than its arguments (an attribute of a slotted object, an element of a
list held by an object, a global read by a helper function, a default
value...), calls it until it replays, changes that value in place or by
rebinding, and checks the next calls against NumPy: a replay of the
program captured before the change would give the old value.
"""

from __future__ import annotations

import functools

import ferrograd as torch
import numpy as np
import pytest
from ferrograd import _compile

XN = np.random.default_rng(5).normal(size=(4, 3))


class _Slotted:
    __slots__ = ("scale", "items")

    def __init__(self):
        self.scale = 1.0
        self.items = [1.0, 2.0]


class _Plain:
    pass


class _WithClassSetting:
    factor = 1.0


class _Scaler:
    def __init__(self):
        self.k = 2.0

    def __call__(self, x):
        return x * self.k


def _deep():
    root = _Plain()
    node = root
    for _ in range(4):
        node.child = _Plain()
        node = node.child
    node.v = 1.0
    return root


SCALE = 2.0
ACT = torch.relu
NPA = np.array([1.0, 2.0])
NPS = np.float64(2.0)


def _helper(x):
    return x * SCALE


def _outer_helper(x):
    return _helper(x) + 1.0


def _scaled(x, k):
    return x * k * SCALE


PARTIAL = functools.partial(_scaled, k=1.0)


def _cases():
    """(name, function, changes): each change mutates what the function
    reads and returns the NumPy oracle of its result on ``XN``."""
    s = _Slotted()
    obj = _Plain()
    obj.scales, obj.table = [1.0, 2.0], {"k": 2.0}
    deep = _deep()
    inst = _WithClassSetting()
    scaler = _Scaler()

    def set_global(name, v):
        globals()[name] = v

    def defaults(x, acc=[1.0]):  # noqa: B006 - the mutable default is the point
        return x * acc[0]

    def kwdefaults(x, *, opts={"s": 1.0}):  # noqa: B006
        return x * opts["s"]

    def change_class():
        _WithClassSetting.factor = 4.0
        return XN * 4.0

    return [
        ("slotted attribute", lambda x: x * s.scale,
         [lambda: setattr(s, "scale", 5.0) or XN * 5.0]),
        ("list held by a slotted object", lambda x: x * s.items[0],
         [lambda: s.items.__setitem__(0, 7.0) or XN * 7.0]),
        ("list held by an object", lambda x: x * obj.scales[1],
         [lambda: obj.scales.__setitem__(1, 9.0) or XN * 9.0]),
        ("dict held by an object", lambda x: x * obj.table["k"],
         [lambda: obj.table.__setitem__("k", 11.0) or XN * 11.0]),
        ("five levels of objects", lambda x: x * deep.child.child.child.child.v,
         [lambda: setattr(deep.child.child.child.child, "v", 3.0) or XN * 3.0]),
        ("an attribute of the object's class", lambda x: x * inst.factor, [change_class]),
        ("a callable object's attribute", lambda x: scaler(x),
         [lambda: setattr(scaler, "k", 5.0) or XN * 5.0]),
        ("a global function rebound", lambda x: ACT(x),
         [lambda: set_global("ACT", torch.tanh) or np.tanh(XN),
          lambda: set_global("ACT", torch.relu) or np.maximum(XN, 0.0)]),
        ("a global read by a called function", _outer_helper,
         [lambda: set_global("SCALE", 7.0) or XN * 7.0 + 1.0,
          lambda: set_global("SCALE", 2.0) or XN * 2.0 + 1.0]),
        ("a global read in a generator expression", lambda x: sum(x * SCALE for _ in range(2)),
         [lambda: set_global("SCALE", 5.0) or 2 * (XN * 5.0),
          lambda: set_global("SCALE", 2.0) or 2 * (XN * 2.0)]),
        ("a partial of a function of the user's", lambda x: PARTIAL(x),
         [lambda: set_global("SCALE", 7.0) or XN * 7.0,
          lambda: PARTIAL.keywords.__setitem__("k", 3.0) or XN * 21.0,
          lambda: set_global("SCALE", 2.0) or XN * 6.0]),
        ("a mutable default", defaults,
         [lambda: defaults.__defaults__[0].__setitem__(0, 8.0) or XN * 8.0]),
        ("a keyword-only default", kwdefaults,
         [lambda: kwdefaults.__kwdefaults__["opts"].__setitem__("s", 4.0) or XN * 4.0]),
        ("a NumPy array changed in place", lambda x: x * float(NPA[0]),
         [lambda: NPA.__setitem__(0, 5.0) or XN * 5.0]),
        ("a NumPy scalar rebound", lambda x: x * float(NPS),
         [lambda: set_global("NPS", np.float64(3.0)) or XN * 3.0]),
    ]


@pytest.mark.parametrize("case", range(len(_cases())))
def test_a_changed_value_read_outside_the_arguments_is_not_replayed_stale(case):
    global SCALE, ACT, NPS
    name, f, changes = _cases()[case]
    saved = (SCALE, ACT, NPS, NPA.copy(), _WithClassSetting.factor)
    try:
        cf = torch.compile(f)
        x = torch.tensor(XN)
        want = f(x).numpy()
        for _ in range(3):  # capture, then replays through the memo
            np.testing.assert_array_equal(cf(x).numpy(), want, err_msg=name)
        for k, change in enumerate(changes):
            expected = change()
            for _ in range(2):
                np.testing.assert_allclose(cf(x).numpy(), expected, rtol=1e-12, atol=1e-12,
                                           err_msg=f"{name}, change {k}")
    finally:
        PARTIAL.keywords["k"] = 1.0
        SCALE, ACT, NPS = saved[:3]
        NPA[:] = saved[3]
        _WithClassSetting.factor = saved[4]


def test_compiled_callable_objects_guard_their_attributes():
    scaler = _Scaler()
    cs = torch.compile(scaler)
    x = torch.tensor(XN)
    for k in (2.0, 2.0, 3.0, 3.0, 0.5):
        scaler.k = k
        np.testing.assert_allclose(cs(x).numpy(), XN * k, rtol=1e-12)


def test_only_the_users_functions_have_their_reads_guarded():
    # ferrograd's own functions and the standard library's are guarded by
    # identity: their globals are their machinery, not settings.
    import json

    assert _compile._user_reads(torch.autograd.functional.jacobian) is None
    assert _compile._user_reads(json.dumps) is None
    assert _compile._user_reads(_outer_helper) == ("_helper",)
    assert "SCALE" in _compile._user_reads(_helper)


SET = {1.0}


class _Holder(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.arr = np.array([1.0])

    def forward(self, x):
        return self.fn(x) * float(self.arr[0])


def test_module_attributes_that_are_functions_arrays_or_sets_are_guarded():
    global SET, SCALE
    x = torch.tensor(XN)
    m = _Holder(torch.relu)
    cm = torch.compile(m)
    cs = torch.compile(lambda x: x * sum(SET))
    try:
        for step in range(6):
            if step == 2:
                m.fn = torch.tanh
            if step == 3:
                m.arr[0] = 5.0  # changed in place
            if step == 4:
                m.fn = _helper  # a function of the user's: what it reads too
            if step == 5:
                SCALE = 3.0
                SET.add(2.0)
            act = {0: np.maximum(XN, 0), 1: np.maximum(XN, 0)}.get(step, np.tanh(XN))
            if step >= 4:
                act = XN * SCALE
            arr = 5.0 if step >= 3 else 1.0
            for _ in range(2):
                np.testing.assert_allclose(cm(x).detach().numpy(), act * arr, rtol=1e-12, err_msg=str(step))
                np.testing.assert_allclose(cs(x).numpy(), XN * sum(SET), rtol=1e-12, err_msg=str(step))
    finally:
        SET, SCALE = {1.0}, 2.0


def test_random_draws_and_clocks_in_python_are_not_replayed():
    import random
    import time

    x = torch.tensor(XN)
    rng = np.random.default_rng(0)
    draws = {
        "random.random": lambda x: x * random.random(),
        "random.uniform": lambda x: x * random.uniform(1, 2),
        "np.random.rand": lambda x: x * float(np.random.rand()),
        "a NumPy Generator": lambda x: x * float(rng.normal()),
    }
    for name, f in draws.items():
        cf = torch.compile(f)
        for seed in range(4):
            random.seed(seed)
            np.random.seed(seed)
            state = rng.bit_generator.state
            want = f(x).numpy()
            random.seed(seed)
            np.random.seed(seed)
            rng.bit_generator.state = state
            # Oracle: the eager call drawing the same number.
            np.testing.assert_array_equal(cf(x).numpy(), want, err_msg=f"{name}, seed {seed}")
    ct = torch.compile(lambda x: x * float(time.perf_counter_ns() % 1000003))
    seen = {ct(x).numpy().tobytes() for _ in range(4)}
    assert len(seen) == 4  # each call reads the clock again


def test_leaves_and_storage_offsets_read_by_the_function_are_guarded():
    def by_leaf(x):
        return x * 2 if x.is_leaf else x * 3

    cl = torch.compile(by_leaf)
    leaf = torch.tensor(XN, requires_grad=True)
    inner = torch.tensor(XN, requires_grad=True) * 1
    for t, factor in ((leaf, 2), (leaf, 2), (inner, 3), (inner, 3), (leaf, 2)):
        np.testing.assert_array_equal(cl(t).detach().numpy(), XN * factor)
    # unfold makes its windows with as_strided at the input's offset: a
    # slice further along the same storage must give its own windows.
    sig = np.arange(80.0).reshape(10, 8)
    base = torch.tensor(sig)
    cw = torch.compile(lambda x: x.unfold(0, 3, 1).sum(-1))
    for i in range(0, 10, 2):
        flat = sig[i:i + 2].reshape(-1)
        want = flat[:-2] + flat[1:-1] + flat[2:]  # NumPy: windows of 3, summed
        np.testing.assert_array_equal(cw(base[i:i + 2].reshape(-1)).numpy(), want, err_msg=str(i))


def test_memory_addresses_and_version_counters_break_the_capture():
    x = torch.tensor(XN)
    for f in (lambda x: x * (x.data_ptr() % 7), lambda x: x * x._version):
        cf = torch.compile(f)
        for _ in range(3):
            np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
            x.add_(0.0)  # a new version
        assert any("Python" in r for r in cf._ferrograd_compiled.break_reasons())


def test_grad_mode_turned_on_inside_a_no_grad_call_records_the_graph():
    def f(x):
        with torch.enable_grad():
            return x * 2

    cf = torch.compile(f)
    x = torch.tensor(XN, requires_grad=True)
    for _ in range(4):
        with torch.no_grad():
            y = cf(x)
        assert y.requires_grad and y.grad_fn is not None
        (g,) = torch.autograd.grad(y.sum(), x)
        np.testing.assert_array_equal(g.numpy(), np.full_like(XN, 2.0))  # d(2x)/dx


class _Trainer:
    def __init__(self):
        self.cfg = _Plain()
        self.cfg.scale = 2.0
        self.unread_history_of_losses = []

    def step(self, x):
        return x * self.cfg.scale


def test_attributes_no_code_reads_are_not_keyed():
    # Only names that compiled code (or the object's class) loads are
    # keyed: appending to a list nothing reads records no new program,
    # while a setting the step reads does.
    t = _Trainer()
    cf = torch.compile(t.step)
    x = torch.tensor(XN)
    for i in range(4):
        t.unread_history_of_losses.append(float(i))
        np.testing.assert_array_equal(cf(x).numpy(), XN * 2.0)
    assert len(cf._ferrograd_compiled.programs()) == 1
    t.cfg.scale = 3.0
    np.testing.assert_array_equal(cf(x).numpy(), XN * 3.0)
    assert len(cf._ferrograd_compiled.programs()) == 2
