"""CPU autocast (``ferrograd.autocast``): which ops change precision, the
values they give, gradients through the casts, nesting, threads, the
decorator and custom Function helpers.

Oracles: products of bfloat16-rounded inputs computed in float64 by NumPy
(bounded by bfloat16's rounding of the result), the same computation with
explicit casts (bitwise equal gradients), and the dtype rules of the lists.
"""

from __future__ import annotations

import threading
import warnings

import ferrograd as fg
import ferrograd.nn.functional as F
import numpy as np
import pytest
from ferrograd.amp import _op_lists

BF16_EPS = 2.0**-8


def _bf16(t):
    """The float64 values of ``t`` rounded to bfloat16."""
    return t.detach().to(fg.bfloat16).double().numpy()


def _close_bf16(out, want, k):
    # Products of k bfloat16 inputs accumulated in float32, rounded once to
    # bfloat16: relative error of the result about eps (plus accumulation).
    scale = np.abs(want).max() + 1e-30
    assert np.abs(out.double().numpy() - want).max() <= (2 * BF16_EPS + 1e-5 * k) * scale


def test_products_run_in_bfloat16_with_bfloat16_rounding():
    fg.manual_seed(0)
    a, b = fg.randn(5, 7), fg.randn(7, 3)
    batch1, batch2, c = fg.randn(2, 5, 7), fg.randn(2, 7, 3), fg.randn(5, 3)
    with fg.autocast("cpu"):
        outs = {
            "mm": (fg.mm(a, b), _bf16(a) @ _bf16(b)),
            "method": (a.mm(b), _bf16(a) @ _bf16(b)),
            "@": (a @ b, _bf16(a) @ _bf16(b)),
            "matmul": (fg.matmul(a, b), _bf16(a) @ _bf16(b)),
            "bmm": (batch1.bmm(batch2), _bf16(batch1) @ _bf16(batch2)),
            "addmm": (fg.addmm(c, a, b), _bf16(c) + _bf16(a) @ _bf16(b)),
            "baddbmm": (fg.baddbmm(c, batch1, batch2), _bf16(c) + _bf16(batch1) @ _bf16(batch2)),
            "addbmm": (c.addbmm(batch1, batch2), _bf16(c) + (_bf16(batch1) @ _bf16(batch2)).sum(0)),
            "linear": (F.linear(a, b.t(), c[0]), _bf16(a) @ _bf16(b) + _bf16(c[0])),
        }
    for name, (out, want) in outs.items():
        assert out.dtype == fg.bfloat16, name
        _close_bf16(out, want, 7)


def test_convolution_and_float16():
    fg.manual_seed(1)
    x, w = fg.randn(2, 3, 8, 8), fg.randn(4, 3, 3, 3)
    plain = F.conv2d(x.to(fg.float16).double(), w.to(fg.float16).double())
    with fg.autocast("cpu", dtype=fg.float16):
        y = F.conv2d(x, w)
        assert fg.get_autocast_dtype("cpu") == fg.float16
    assert y.dtype == fg.float16
    err = (y.double() - plain).abs().max().item()
    assert err <= 2 * 2.0**-11 * plain.abs().max().item() + 1e-3


def test_float32_ops_take_16_bit_inputs_up():
    fg.manual_seed(2)
    x, t = fg.randn(4, 5).bfloat16(), fg.randn(4, 5).bfloat16()
    m = (fg.randn(3, 3) + 3 * fg.eye(3)).bfloat16()
    with fg.autocast("cpu"):
        loss = F.mse_loss(x, t)
        ce = F.cross_entropy(x, fg.tensor([0, 1, 2, 3]))
        p = x.prod()
        inv = fg.linalg.inv(m)
        spec = fg.fft.rfft(x)
    assert loss.dtype == ce.dtype == p.dtype == inv.dtype == fg.float32
    assert spec.dtype == fg.complex64
    want = ((x.double() - t.double()) ** 2).mean().item()
    assert abs(loss.item() - want) <= 1e-6 * abs(want)
    np.testing.assert_allclose(inv.double().numpy(), np.linalg.inv(m.double().numpy()), rtol=1e-5, atol=1e-6)


def test_promote_list_and_untouched_ops():
    a, b = fg.ones(2, dtype=fg.bfloat16), fg.ones(2)
    with fg.autocast("cpu"):
        assert fg.cat([a, b]).dtype == fg.float32
        assert fg.stack([a, a]).dtype == fg.bfloat16
        assert fg.relu(b).dtype == fg.float32  # not on any list
        assert (a + b).dtype == fg.float32  # ordinary type promotion
        d = fg.ones(2, 2, dtype=fg.float64)
        assert (d @ d).dtype == fg.float64  # float64 is never cast
        assert fg.mm(fg.ones(2, 2, dtype=fg.int64), fg.ones(2, 2, dtype=fg.int64)).dtype == fg.int64
        # An explicit dtype= (or out=) turns autocast off for the call.
        assert a.prod(dtype=fg.bfloat16).dtype == fg.bfloat16
        assert fg.prod(a, dtype=fg.float64).dtype == fg.float64


def test_gradients_flow_back_in_the_parameters_dtype():
    fg.manual_seed(3)
    lin = fg.nn.Linear(6, 4)
    x, target = fg.randn(8, 6), fg.randn(8, 4)
    with fg.autocast("cpu"):
        out = lin(x)
        loss = F.mse_loss(out, target)
    assert out.dtype == fg.bfloat16 and loss.dtype == fg.float32
    loss.backward()
    assert lin.weight.grad.dtype == lin.bias.grad.dtype == fg.float32
    # The same computation with the casts written out gives the same bits.
    w, b = lin.weight.detach().requires_grad_(), lin.bias.detach().requires_grad_()
    manual = fg.addmm(b.bfloat16(), x.bfloat16(), w.bfloat16().t())
    F.mse_loss(manual.float(), target).backward()
    assert fg.equal(w.grad, lin.weight.grad) and fg.equal(b.grad, lin.bias.grad)


def test_nesting_disable_and_restore():
    assert not fg.is_autocast_enabled("cpu")
    a = fg.ones(2, 2)
    with fg.autocast("cpu"):
        assert fg.is_autocast_enabled("cpu")
        with fg.autocast("cpu", enabled=False):
            assert not fg.is_autocast_enabled("cpu")
            assert (a @ a).dtype == fg.float32
        assert (a @ a).dtype == fg.bfloat16
        with fg.autocast("cpu", dtype=fg.float16):
            assert (a @ a).dtype == fg.float16
        assert (a @ a).dtype == fg.bfloat16
    assert not fg.is_autocast_enabled("cpu") and (a @ a).dtype == fg.float32
    assert fg.get_autocast_dtype("cpu") == fg.bfloat16
    assert not fg.is_autocast_enabled()  # no argument: the CUDA state, as in torch


def test_state_is_per_thread():
    seen = []
    a = fg.ones(2, 2)

    def other():
        seen.append((fg.is_autocast_enabled("cpu"), (a @ a).dtype))

    with fg.autocast("cpu"):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        mine = (a @ a).dtype
    assert seen == [(False, fg.float32)] and mine == fg.bfloat16


def test_exceptions_restore_the_state():
    with pytest.raises(KeyError):
        with fg.autocast("cpu"):
            raise KeyError("x")
    assert not fg.is_autocast_enabled("cpu")


def test_decorator_and_deprecated_spellings():
    @fg.autocast("cpu")
    def f(a):
        return a @ a

    assert f(fg.ones(2, 2)).dtype == fg.bfloat16
    with pytest.warns(FutureWarning):
        ctx = fg.cpu.amp.autocast()
    with ctx:
        assert fg.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning):
        ctx = fg.cpu.amp.autocast(dtype=fg.float16)
    with ctx:
        assert (fg.ones(2, 2) @ fg.ones(2, 2)).dtype == fg.float16


def test_bad_device_and_dtype():
    with pytest.raises(ValueError, match="str"):
        fg.autocast(fg.device("cpu"))
    with pytest.raises(RuntimeError, match="device type"):
        fg.autocast("tpu")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with fg.autocast("cuda"):
            assert not fg.is_autocast_enabled("cpu")
        with fg.autocast("cpu", dtype=fg.float32):
            assert not fg.is_autocast_enabled("cpu")
    assert len(w) == 2 and all(issubclass(x.category, UserWarning) for x in w)


def test_custom_function_helpers():
    class Square(fg.autograd.Function):
        @staticmethod
        @fg.amp.custom_fwd(device_type="cpu", cast_inputs=fg.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x @ x  # autocast is off inside: stays float32

        @staticmethod
        @fg.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g @ x.t() + x.t() @ g

    x = fg.ones(2, 2, dtype=fg.bfloat16, requires_grad=True)
    with fg.autocast("cpu"):
        y = Square.apply(x)
    assert y.dtype == fg.float32
    y.sum().backward()
    assert x.grad.dtype == fg.bfloat16


def test_every_listed_name_is_reachable():
    for qual in _op_lists.LOWER | _op_lists.FP32 | _op_lists.PROMOTE:
        *path, name = qual.split(".")
        owner = fg.Tensor if path == ["Tensor"] else fg
        for part in path if path != ["Tensor"] else []:
            owner = getattr(owner, part)
        assert callable(getattr(owner, name)), qual
