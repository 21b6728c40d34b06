"""nn.DataParallel as torch 2.13 has it on a machine without GPUs: a
wrapper whose forward calls the module, holding it as the submodule
``module`` (so state_dict keys gain ``module.``), with ``device_ids``
always empty and ``output_device``/``dim`` not stored. Values are checked
against NumPy."""

from __future__ import annotations

import inspect

import ferrograd as fg
import ferrograd.nn as nn
import numpy as np
import pytest
from conftest import assert_close, to_np


def test_forward_calls_the_wrapped_module():
    fg.manual_seed(0)
    lin = nn.Linear(3, 2)
    dp = nn.DataParallel(lin)
    x = np.arange(12.0).reshape(4, 3) / 5
    out = dp(fg.tensor(x, dtype=fg.float32))
    expected = x @ to_np(lin.weight).T.astype(np.float64) + to_np(lin.bias)
    assert tuple(out.shape) == (4, 2)
    assert_close(out, expected.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_positional_and_keyword_arguments_reach_the_module():
    class Affine(nn.Module):
        def forward(self, a, b=1.0, *, c=2.0):
            return a * b + c

    dp = nn.DataParallel(Affine())
    assert dp(fg.ones(2), 3.0).tolist() == [5.0, 5.0]
    assert dp(fg.ones(2), b=3.0, c=fg.tensor(1.0)).tolist() == [4.0, 4.0]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        dp()


def test_module_is_the_submodule_named_module_and_repr_shows_it():
    lin = nn.Linear(2, 3)
    dp = nn.DataParallel(lin)
    assert dp.module is lin
    assert [name for name, _ in dp.named_children()] == ["module"]
    assert repr(dp) == "DataParallel(\n  (module): Linear(in_features=2, out_features=3, bias=True)\n)"
    assert [p is q for p, q in zip(dp.parameters(), lin.parameters(), strict=True)] == [True, True]


def test_state_dict_keys_are_prefixed_and_load_round_trips():
    src = nn.DataParallel(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)))
    keys = list(src.state_dict())
    assert keys == [
        "module.0.weight", "module.0.bias", "module.1.weight", "module.1.bias",
        "module.1.running_mean", "module.1.running_var", "module.1.num_batches_tracked",
    ]  # fmt: skip
    dst = nn.DataParallel(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)))
    dst.load_state_dict(src.state_dict())
    assert to_np(dst.module[0].weight).tolist() == to_np(src.module[0].weight).tolist()
    # A bare module does not take the prefixed keys.
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "0.weight"'):
        nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)).load_state_dict(src.state_dict())


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"device_ids": [0]}, {"device_ids": [0, 1], "output_device": 0}, {"dim": 1}, {"device_ids": []}],
)
def test_device_arguments_are_accepted_and_dropped_as_torch_does_without_gpus(kwargs):
    dp = nn.DataParallel(nn.Linear(2, 2), **kwargs)
    assert dp.device_ids == []
    for name in ("output_device", "dim"):
        with pytest.raises(AttributeError, match=f"'DataParallel' object has no attribute '{name}'"):
            getattr(dp, name)


def test_signature_matches_torch():
    params = inspect.signature(nn.DataParallel.__init__).parameters
    assert list(params) == ["self", "module", "device_ids", "output_device", "dim"]
    assert [params[n].default for n in ("device_ids", "output_device", "dim")] == [None, None, 0]
    dp = nn.DataParallel(nn.Identity(), [0], 0, 1)  # all positional, as torch allows
    assert dp.device_ids == []


def test_backward_reaches_the_wrapped_parameters_and_modes_propagate():
    lin = nn.Linear(3, 2)
    dp = nn.DataParallel(lin)
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]])
    dp(fg.tensor(x, dtype=fg.float32)).sum().backward()
    # d/dW of sum(x W^T + b) is, for every output row, the column sums of x.
    assert_close(lin.weight.grad, np.tile(x.sum(0), (2, 1)).astype(np.float32), rtol=1e-6)
    assert_close(lin.bias.grad, np.array([2.0, 2.0], dtype=np.float32))
    dp.eval()
    assert not lin.training
    dp.train()
    assert lin.training


def test_hooks_of_the_wrapped_module_run():
    lin = nn.Linear(2, 2)
    seen = []
    lin.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
    nn.DataParallel(lin)(fg.ones(5, 2))
    assert seen == [(5, 2)]


def test_same_class_from_nn_and_nn_parallel():
    assert nn.parallel.DataParallel is nn.DataParallel
    assert issubclass(nn.DataParallel, nn.Module)
    assert "DataParallel" in nn.parallel.__all__
