"""nn.Module, Parameter/Buffer, the containers and nn.utils, checked against
NumPy, hand-derived gradients and torch's documented formats."""

import copy
import math
import pickle
from collections import OrderedDict

import ferrograd as torch
import numpy as np
import pytest
from ferrograd import nn


class Lin(nn.Module):
    """y = x W^T, with a persistent and a non-persistent buffer."""

    def __init__(self, i, o, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.weight = nn.Parameter(torch.tensor(rng.standard_normal((o, i)), dtype=torch.float32))
        self.register_buffer("count", torch.zeros(1))
        self.register_buffer("scratch", torch.zeros(1), persistent=False)

    def forward(self, x):
        return x @ self.weight.t()

    def extra_repr(self):
        return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Lin(2, 3, seed=1)
        self.seq = nn.Sequential(Lin(3, 3, seed=2), nn.Sequential(Lin(3, 1, seed=3)))
        self.ml = nn.ModuleList([Lin(1, 1), Lin(1, 1)])
        self.md = nn.ModuleDict({"x": Lin(1, 2)})
        self.pl = nn.ParameterList([torch.zeros(2)])
        self.pd = nn.ParameterDict({"q": torch.ones(2)})

    def forward(self, x):
        return self.seq(self.a(x))


class Two(nn.Module):
    """Two inputs, two outputs: (k*x*y, x + 2y)."""

    def forward(self, x, y, k=1.0):
        return x * y * k, x + 2 * y


def np_of(t):
    return t.detach().numpy().copy()


# ---------------------------------------------------------------- Parameter


def test_parameter_shares_memory_and_is_a_leaf():
    data = torch.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    data.add_(1.0)  # an in-place change of the source shows through
    np.testing.assert_array_equal(np_of(p), [2.0, 3.0])
    assert not nn.Parameter(data, requires_grad=False).requires_grad


def test_parameter_repr_has_torch_prefix():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\n" + repr(torch.tensor([1.0, 2.0], requires_grad=True))


def test_parameter_default_is_empty_and_int_requires_grad_raises():
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError):
        nn.Parameter(torch.arange(3))
    assert not nn.Parameter(torch.arange(3), requires_grad=False).requires_grad


def test_parameter_grad_accumulates_and_is_returned_by_graph():
    p = nn.Parameter(torch.tensor([1.0, -2.0]))
    y = (p * p).sum()
    y.backward()
    np.testing.assert_allclose(np_of(p.grad), [2.0, -4.0])  # d(p^2)/dp = 2p


def test_parameter_deepcopy_and_pickle_make_independent_parameters():
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.Parameter and q.requires_grad
        np.testing.assert_array_equal(np_of(q), np_of(p))
        q.data.mul_(0)
        np.testing.assert_array_equal(np_of(p), [1.0, 2.0])


def test_buffer_is_a_marked_plain_tensor():
    b = nn.Buffer(torch.ones(2), persistent=False)
    assert type(b) is torch.Tensor and isinstance(b, nn.Buffer) and b.persistent is False
    assert not isinstance(torch.ones(2), nn.Buffer)
    m = nn.Module()
    m.run = b
    m.keep = nn.Buffer(torch.zeros(1))
    assert [n for n, _ in m.named_buffers()] == ["run", "keep"]
    assert list(m.state_dict()) == ["keep"]


# ---------------------------------------------------------------- registration


def test_registration_order_and_names():
    m = Net()
    names = [n for n, _ in m.named_parameters()]
    assert names == [
        "a.weight",
        "seq.0.weight",
        "seq.1.0.weight",
        "ml.0.weight",
        "ml.1.weight",
        "md.x.weight",
        "pl.0",
        "pd.q",
    ]
    assert [n for n, _ in m.named_children()] == ["a", "seq", "ml", "md", "pl", "pd"]
    assert [n for n, _ in m.named_modules()][:5] == ["", "a", "seq", "seq.0", "seq.1"]
    assert [n for n, _ in m.named_buffers()][:2] == ["a.count", "a.scratch"]
    assert [n for n, _ in m.named_parameters(prefix="net", recurse=False)] == []
    assert [n for n, _ in m.a.named_parameters(prefix="net")] == ["net.weight"]


def test_shared_parameter_listed_once_unless_duplicates_kept():
    m = nn.Module()
    m.l1 = Lin(2, 2)
    m.l2 = Lin(2, 2)
    m.l2.weight = m.l1.weight
    assert len(list(m.parameters())) == 1
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["l1.weight", "l2.weight"]


def test_setattr_moves_names_between_kinds_and_delattr():
    m = nn.Module()
    m.x = torch.ones(1)  # a plain tensor is an ordinary attribute
    assert list(m.buffers()) == []
    m.x = nn.Parameter(torch.ones(1))
    assert [n for n, _ in m.named_parameters()] == ["x"] and "x" not in m.__dict__
    m.x = None  # keeps the parameter slot
    assert "x" in m._parameters and m.x is None
    m.register_buffer("b", torch.zeros(1))
    m.b = torch.ones(2)  # assigning to a buffer name replaces the buffer
    np.testing.assert_array_equal(np_of(m.b), [1.0, 1.0])
    m.c = Lin(1, 1)
    del m.c
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'c'"):
        _ = m.c


def test_registration_errors_match_torch():
    m = nn.Module()
    m.w = nn.Parameter(torch.ones(1))
    with pytest.raises(
        TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'w' \(torch.nn.Parameter"
    ):
        m.w = torch.ones(1)
    with pytest.raises(KeyError, match="buffer name can"):
        m.register_buffer("a.b", torch.ones(1))
    with pytest.raises(KeyError, match="attribute 'w' already exists"):
        m.register_buffer("w", torch.ones(1))
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'z'"):
        m.register_buffer("z", 3)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'q'"):
        m.register_parameter("q", _nonleaf_param())
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("k", 3)

    class NoInit(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(torch.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        NoInit()


def _nonleaf_param():
    # A Parameter object whose tensor has history (torch refuses to register it).
    p = nn.Parameter(torch.ones(1))
    q = p * 2
    q.__class__ = nn.Parameter
    return q


def test_get_submodule_parameter_buffer():
    m = Net()
    assert m.get_submodule("seq.1.0") is m.seq[1][0]
    assert m.get_parameter("seq.1.0.weight") is m.seq[1][0].weight
    assert m.get_buffer("a.count") is m.a.count
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        m.get_submodule("seq.5")
    with pytest.raises(AttributeError, match="`count` is not an nn.Parameter"):
        m.get_parameter("a.count")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        m.get_buffer("a.weight")


def test_dir_lists_members_but_not_numeric_names():
    m = Net()
    d = dir(m)
    assert {"a", "seq", "forward", "training"} <= set(d)
    assert "0" not in dir(m.seq) and d == sorted(d)


# ---------------------------------------------------------------- state_dict


def test_state_dict_keys_values_and_metadata():
    m = Net()
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == [
        "a.weight",
        "a.count",
        "seq.0.weight",
        "seq.0.count",
        "seq.1.0.weight",
        "seq.1.0.count",
        "ml.0.weight",
        "ml.0.count",
        "ml.1.weight",
        "ml.1.count",
        "md.x.weight",
        "md.x.count",
        "pl.0",
        "pd.q",
    ]
    assert sd._metadata[""] == {"version": 1} and sd._metadata["seq.1.0"] == {"version": 1}
    # Values are detached and share memory with the module.
    assert not sd["a.weight"].requires_grad and type(sd["a.weight"]) is torch.Tensor
    sd["a.weight"].zero_()
    np.testing.assert_array_equal(np_of(m.a.weight), np.zeros((3, 2)))
    assert m.state_dict(keep_vars=True)["a.weight"] is m.a.weight
    assert list(m.a.state_dict(prefix="p."))[0] == "p.weight"


def test_state_dict_round_trip_copies_values():
    src, dst = Net(), Net()
    for p in dst.parameters():
        p.data.fill_(7.0)
    expected = {k: np_of(v) for k, v in src.state_dict().items()}
    before = dst.a.weight
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert dst.a.weight is before  # copied in, not replaced
    for k, v in dst.state_dict().items():
        np.testing.assert_array_equal(np_of(v), expected[k])


def test_load_state_dict_strict_errors_list_keys():
    m = Lin(2, 3)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict({"weight": torch.zeros(3, 2), "extra": torch.ones(1)})
    assert str(e.value) == (
        'Error(s) in loading state_dict for Lin:\n\tMissing key(s) in state_dict: "count". '
        '\n\tUnexpected key(s) in state_dict: "extra". '
    )
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with shape"):
        m.load_state_dict({"weight": torch.zeros(2, 2), "count": torch.zeros(1)})
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1])


def test_load_state_dict_non_strict_returns_incompatible_keys():
    m = Net()
    w = np.arange(6, dtype=np.float32).reshape(3, 2)
    res = m.load_state_dict({"a.weight": torch.tensor(w), "seq.9.weight": torch.ones(1)}, strict=False)
    # Non-strict loading still reports every key it could not match.
    assert res.unexpected_keys == ["seq.9.weight"]
    assert res.missing_keys == [k for k in m.state_dict() if k != "a.weight"]
    np.testing.assert_array_equal(np_of(m.a.weight), w)
    assert repr(res).startswith("_IncompatibleKeys(missing_keys=['a.count',")


def test_load_state_dict_assign_replaces_tensors_keeping_requires_grad():
    m = Lin(2, 2)
    m.weight.requires_grad_(False)
    new = torch.ones(2, 2, dtype=torch.float64)
    m.load_state_dict({"weight": new, "count": torch.full((1,), 3.0)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.dtype == torch.float64
    assert not m.weight.requires_grad
    np.testing.assert_array_equal(np_of(m.count), [3.0])


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 0

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 5
    assert list(a.state_dict()) == ["_extra_state"]
    b.load_state_dict(a.state_dict())
    assert b.value == 5


# ---------------------------------------------------------------- modes, grads, apply


def test_train_eval_propagate_and_validate():
    m = Net()
    assert m.eval() is m
    assert all(not mod.training for mod in m.modules())
    m.seq.train()
    assert m.seq[1][0].training and not m.a.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")


def test_zero_grad_to_none_or_zeros_and_requires_grad_():
    m = Lin(2, 2)
    m(torch.ones(1, 2)).sum().backward()
    g = m.weight.grad
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is g
    np.testing.assert_array_equal(np_of(g), np.zeros((2, 2)))
    m.zero_grad()
    assert m.weight.grad is None
    m.requires_grad_(False)
    assert not m.weight.requires_grad


def test_apply_visits_children_before_parent():
    seen = []
    m = nn.Sequential(Lin(1, 1), nn.Sequential(Lin(1, 1)))
    assert m.apply(lambda mod: seen.append(mod)) is m
    assert seen == [m[0], m[1][0], m[1], m]


def test_to_double_converts_floats_only_and_grads():
    m = Lin(2, 2)
    m.register_buffer("idx", torch.zeros(1, dtype=torch.int64))
    m.weight.grad = torch.ones(2, 2)
    w = np_of(m.weight).astype(np.float64)
    m.double()
    assert m.weight.dtype == torch.float64 and m.weight.grad.dtype == torch.float64
    assert m.count.dtype == torch.float64 and m.idx.dtype == torch.int64
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    np.testing.assert_array_equal(np_of(m.weight), w)
    same = m.weight
    m.to(torch.float64)
    m.to("cpu")
    assert m.weight is same  # nothing to convert keeps the object
    with pytest.raises(TypeError, match="only accepts floating point or complex dtypes"):
        m.to(torch.int32)
    assert m.half().weight.dtype == torch.float16 and m.float().weight.dtype == torch.float32
    assert m.share_memory() is m and m.cpu() is m


# ---------------------------------------------------------------- calling and hooks


def test_call_runs_forward_and_missing_forward_raises():
    m = Lin(2, 1)
    x = np.array([[1.0, 2.0]], dtype=np.float32)
    np.testing.assert_allclose(np_of(m(torch.tensor(x))), x @ np_of(m.weight).T, rtol=1e-6)
    with pytest.raises(
        NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'
    ):
        nn.Module()(1)
    with pytest.raises(TypeError, match=r"takes 1 positional argument but 2 were given"):
        nn.Module(3)


def test_forward_hooks_order_replacement_and_removal():
    m = Two()
    log = []
    m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kw: (args, {"k": 3.0}), with_kwargs=True)
    h = m.register_forward_hook(lambda mod, args, out: (out[0] + 1, out[1]))
    m.register_forward_hook(lambda mod, args, kw, out: log.append(("post", kw)), with_kwargs=True)
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    a, b = m(x, y)
    # k*x*y + 1 with k replaced by 3; x + 2y untouched
    np.testing.assert_array_equal(np_of(a), 3 * np.array([3.0, 8.0]) + 1)
    np.testing.assert_array_equal(np_of(b), [7.0, 10.0])
    assert log == ["pre0", "pre1", ("post", {"k": 3.0})]
    h.remove()
    np.testing.assert_array_equal(np_of(m(x, y)[0]), 3 * np.array([3.0, 8.0]))


def test_forward_pre_hook_replaces_inputs_and_wraps_single_value():
    m = Lin(1, 1)
    m.weight.data.fill_(2.0)
    m.register_forward_pre_hook(lambda mod, args: args[0] * 5)
    np.testing.assert_array_equal(np_of(m(torch.ones(1, 1))), [[10.0]])


def test_pre_hook_with_kwargs_bad_return_raises():
    m = Two()
    m.register_forward_pre_hook(lambda mod, args, kw: 1, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(torch.ones(1), torch.ones(1))


def test_always_call_hook_runs_when_forward_raises():
    class Bad(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    m = Bad()
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("never"))
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert seen == [None]


def test_full_backward_hooks_see_hand_derived_gradients():
    # L = sum(2 * x*y) + sum(x + 2y) after the pre-hook doubles grad of out0:
    # dL/dx = 2y + 1, dL/dy = 2x + 2.
    m = Two()
    log = []
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2, go[1]))
    m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
    xv, yv = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    x = torch.tensor(xv, requires_grad=True)
    y = torch.tensor(yv, requires_grad=True)
    a, b = m(x, y)
    (a.sum() + b.sum()).backward()
    (gi, go) = log[0]
    np.testing.assert_array_equal(np_of(go[0]), [2.0, 2.0])
    np.testing.assert_array_equal(np_of(go[1]), [1.0, 1.0])
    np.testing.assert_array_equal(np_of(gi[0]), 2 * yv + 1)
    np.testing.assert_array_equal(np_of(gi[1]), 2 * xv + 2)
    np.testing.assert_array_equal(np_of(x.grad), 2 * yv + 1)


def test_full_backward_hook_replaces_grad_input_and_pads_non_tensors():
    class Scale(nn.Module):
        def forward(self, x, factor):
            return x * factor

    m = Scale()
    seen = []

    def hook(mod, gi, go):
        seen.append(gi)
        return (gi[0] * 10, None)

    m.register_full_backward_hook(hook)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    m(x, 3.0).sum().backward()
    assert len(seen[0]) == 2 and seen[0][1] is None
    np.testing.assert_array_equal(np_of(seen[0][0]), [3.0, 3.0])
    np.testing.assert_array_equal(np_of(x.grad), [30.0, 30.0])


def test_full_backward_hook_with_parameters_only():
    # Inputs need no grad: the hook still runs (on the output side) with None inputs.
    m = Lin(2, 1)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    m(torch.ones(1, 2)).sum().backward()
    gi, go = seen[0]
    assert gi == (None,)
    np.testing.assert_array_equal(np_of(go[0]), [[1.0]])
    np.testing.assert_array_equal(np_of(m.weight.grad), [[1.0, 1.0]])


# ---------------------------------------------------------------- repr


def test_module_repr_follows_torch_layout():
    m = nn.Module()
    m.a = Lin(2, 3)
    m.seq = nn.Sequential(Lin(3, 1), nn.Module())
    assert repr(Lin(2, 3)) == "Lin(in=2, out=3)"
    assert repr(nn.Module()) == "Module()"
    assert repr(m) == (
        "Module(\n"
        "  (a): Lin(in=2, out=3)\n"
        "  (seq): Sequential(\n"
        "    (0): Lin(in=3, out=1)\n"
        "    (1): Module()\n"
        "  )\n"
        ")"
    )


def test_multiline_extra_repr_with_children():
    class E(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Module()

        def extra_repr(self):
            return "alpha=1"

    assert repr(E()) == "E(\n  alpha=1\n  (c): Module()\n)"


def test_container_reprs():
    ml = nn.ModuleList([Lin(1, 1), Lin(1, 1), Lin(2, 1)])
    assert repr(ml) == "ModuleList(\n  (0-1): 2 x Lin(in=1, out=1)\n  (2): Lin(in=2, out=1)\n)"
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert repr(nn.ModuleDict({"x": nn.Module()})) == "ModuleDict(\n  (x): Module()\n)"
    pl = nn.ParameterList([torch.zeros(2, 3), torch.zeros(2, dtype=torch.float64)])
    assert repr(pl) == (
        "ParameterList(\n"
        f"    (0): Parameter containing: [{torch.float32} of size 2x3]\n"
        f"    (1): Parameter containing: [{torch.float64} of size 2]\n"
        ")"
    )
    pd = nn.ParameterDict({"a": torch.zeros(2, 3)})
    assert repr(pd) == "ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2x3])"


# ---------------------------------------------------------------- containers


def test_sequential_runs_in_order_and_list_operations():
    l1, l2, l3 = Lin(2, 3, 1), Lin(3, 2, 2), Lin(2, 1, 3)
    s = nn.Sequential(l1, l2, l3)
    x = np.ones((1, 2), np.float32)
    ref = x @ np_of(l1.weight).T @ np_of(l2.weight).T @ np_of(l3.weight).T
    np.testing.assert_allclose(np_of(s(torch.tensor(x))), ref, rtol=1e-5)
    assert len(s) == 3 and s[-1] is l3 and list(s) == [l1, l2, l3]
    tail = s[1:]
    assert type(tail) is nn.Sequential and list(tail) == [l2, l3]
    assert list(tail._modules) == ["1", "2"]  # a slice keeps the names
    extra = Lin(1, 1)
    s.insert(1, extra)
    assert list(s) == [l1, extra, l2, l3]
    assert s.pop(1) is extra and list(s._modules) == ["0", "1", "2"]
    s.append(extra).extend([Lin(1, 1)])
    assert len(s) == 5
    del s[3:]
    assert list(s) == [l1, l2, l3]
    both = s + nn.Sequential(extra)
    assert list(both) == [l1, l2, l3, extra]
    with pytest.raises(IndexError, match="index 7 is out of range"):
        s[7]
    named = nn.Sequential(OrderedDict([("first", l1), ("second", l2)]))
    assert [n for n, _ in named.named_children()] == ["first", "second"]


def test_module_list_and_dict():
    ml = nn.ModuleList([Lin(1, 1)])
    ml.append(Lin(1, 2))
    ml += [Lin(1, 3)]
    ml.insert(0, Lin(2, 2))
    assert [m.weight.shape[0] for m in ml] == [2, 1, 2, 3]
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2"] and ml[-1].weight.shape[0] == 3
    assert type(ml[:2]) is nn.ModuleList and len(ml[:2]) == 2
    with pytest.raises(TypeError, match="should be called with an iterable"):
        ml.extend(3)
    md = nn.ModuleDict([("b", Lin(1, 1)), ("a", Lin(1, 2))])
    assert list(md.keys()) == ["b", "a"] and "a" in md and len(md) == 2
    md["c"] = Lin(1, 3)
    assert md.pop("b").weight.shape[0] == 1 and list(md) == ["a", "c"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("x",)])


def test_parameter_list_and_dict_wrap_tensors():
    pl = nn.ParameterList([torch.zeros(1)])
    pl.append(nn.Parameter(torch.ones(2)))
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    assert len(pl[0:1]) == 1
    pd = nn.ParameterDict({"b": torch.zeros(1), "a": torch.ones(2)})
    assert list(pd.keys()) == ["a", "b"]  # a plain dict is added in sorted order
    pd["c"] = torch.ones(3)
    assert isinstance(pd["c"], nn.Parameter) and pd.get("zz") is None
    assert pd.pop("a").shape == (2,) and list(pd) == ["b", "c"]
    with pytest.raises(TypeError, match="not a string"):
        pd[1]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)


# ---------------------------------------------------------------- copying


def test_deepcopy_of_module_is_independent_and_keeps_sharing():
    m = nn.Module()
    m.l1 = Lin(2, 2)
    m.l2 = Lin(2, 2)
    m.l2.weight = m.l1.weight
    c = copy.deepcopy(m)
    assert c.l1.weight is c.l2.weight and c.l1.weight is not m.l1.weight
    np.testing.assert_array_equal(np_of(c.l1.weight), np_of(m.l1.weight))
    c.l1.weight.data.zero_()
    assert np.abs(np_of(m.l1.weight)).sum() > 0


def test_pickle_round_trip_of_module():
    m = Net()
    r = pickle.loads(pickle.dumps(m))
    assert type(r) is Net and list(r.state_dict()) == list(m.state_dict())
    for (k, v), (_, w) in zip(m.state_dict().items(), r.state_dict().items(), strict=False):
        np.testing.assert_array_equal(np_of(v), np_of(w), err_msg=k)
    assert isinstance(r.a.weight, nn.Parameter) and r.a.weight.requires_grad
    assert list(r.state_dict(keep_vars=True))[0] == "a.weight"


# ---------------------------------------------------------------- nn.utils


def _params_with_grads(seed=0):
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(s) for s in [(3, 2), (4,), (1,)]]
    ps = []
    for g in grads:
        p = nn.Parameter(torch.zeros(*g.shape, dtype=torch.float64))
        p.grad = torch.tensor(g)
        ps.append(p)
    return ps, grads


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_matches_numpy(norm_type):
    ps, grads = _params_with_grads()
    flat = np.concatenate([g.ravel() for g in grads])
    total = (
        np.max(np.abs(flat))
        if norm_type == math.inf
        else np.sum(np.abs(flat) ** norm_type) ** (1 / norm_type)
    )
    max_norm = 0.5
    out = nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
    np.testing.assert_allclose(float(out), total, rtol=1e-12)
    coef = min(1.0, max_norm / (total + 1e-6))
    for p, g in zip(ps, grads, strict=False):
        np.testing.assert_allclose(np_of(p.grad), g * coef, rtol=1e-12)


def test_clip_grad_norm_leaves_small_grads_and_checks_nonfinite():
    ps, grads = _params_with_grads()
    nn.utils.clip_grad_norm_(ps, 1e6)
    for p, g in zip(ps, grads, strict=False):
        np.testing.assert_array_equal(np_of(p.grad), g)
    ps[0].grad[0, 0] = math.nan
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(torch.ones(1))], 1.0)) == 0.0


def test_get_total_norm_and_clip_grads_with_norm():
    ps, grads = _params_with_grads(1)
    total = nn.utils.get_total_norm([p.grad for p in ps])
    np.testing.assert_allclose(float(total), np.linalg.norm(np.concatenate([g.ravel() for g in grads])))
    nn.utils.clip_grads_with_norm_(ps, 0.1, total)
    np.testing.assert_allclose(float(nn.utils.get_total_norm([p.grad for p in ps])), 0.1, rtol=1e-4)


def test_clip_grad_value_clamps():
    ps, grads = _params_with_grads(2)
    nn.utils.clip_grad_value_(ps, 0.3)
    for p, g in zip(ps, grads, strict=False):
        np.testing.assert_array_equal(np_of(p.grad), np.clip(g, -0.3, 0.3))


def test_parameters_to_vector_round_trip():
    m = Net()
    vec = nn.utils.parameters_to_vector(m.parameters())
    expected = np.concatenate([np_of(p).ravel() for p in m.parameters()])
    np.testing.assert_array_equal(np_of(vec), expected)
    new = np.arange(vec.numel(), dtype=np.float32)
    nn.utils.vector_to_parameters(torch.tensor(new), m.parameters())
    np.testing.assert_array_equal(np_of(nn.utils.parameters_to_vector(m.parameters())), new)
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        nn.utils.vector_to_parameters([1.0], m.parameters())
