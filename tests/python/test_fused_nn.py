"""The fused layer_norm and nll_loss kernels (and cross entropy built on
nll_loss and log_softmax): values and gradients against NumPy formulas
derived by hand, float64 finite differences for every order and for
forward mode, batched gradients against per-row calls, bitwise agreement
across thread counts, the graph torch records, and torch's errors."""

from __future__ import annotations

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import ferrograd.nn.functional as F
import numpy as np
import pytest
from conftest import assert_close
from ferrograd.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def t(a, dtype=fg.float64, grad=False):
    x = fg.tensor(np.asarray(a)).to(dtype)
    return x.requires_grad_(True) if grad else x


# ---------------------------------------------------------------------------
# layer_norm
# ---------------------------------------------------------------------------


def ln_np(x, k, w, b, eps):
    """Forward and the hand-derived backward pieces over the last k axes."""
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    out = xhat * (1.0 if w is None else w) + (0.0 if b is None else b)
    return out, xhat, rstd, axes


def ln_grads_np(g, x, k, w, eps):
    """dx = rstd (gw - mean(gw) - x̂ mean(gw x̂)), dw = Σ g x̂, db = Σ g."""
    _, xhat, rstd, axes = ln_np(x, k, w, None, eps)
    gw = g * (1.0 if w is None else w)
    dx = rstd * (gw - gw.mean(axis=axes, keepdims=True) - xhat * (gw * xhat).mean(axis=axes, keepdims=True))
    lead = tuple(range(x.ndim - k))
    return dx, (g * xhat).sum(axis=lead), g.sum(axis=lead)


@pytest.mark.parametrize("shape,k", [((3, 5), 1), ((2, 3, 4), 2), ((7,), 1), ((64, 33, 40), 1)])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", [fg.float32, fg.float64])
def test_layer_norm_forward_and_backward_match_formulas(shape, k, affine, dtype, rng):
    x = rng.normal(size=shape) * 3 + 1
    ns = shape[len(shape) - k :]
    w = rng.normal(size=ns) if affine in ("both", "weight") else None
    b = rng.normal(size=ns) if affine in ("both", "bias") else None
    g = rng.normal(size=shape)
    xt = t(x, dtype, True)
    wt = None if w is None else t(w, dtype, True)
    bt = None if b is None else t(b, dtype, True)
    out = F.layer_norm(xt, ns, wt, bt, eps=1e-4)
    assert out.dtype == dtype and out.grad_fn.name() == "NativeLayerNormBackward0"
    want, *_ = ln_np(x, k, w, b, 1e-4)
    tol = 1e-4 if dtype == fg.float32 else 1e-10
    assert_close(out.detach().double(), want, rtol=tol, atol=tol)
    out.backward(t(g, dtype))
    dx, dw, db = ln_grads_np(g, x, k, w, 1e-4)
    assert_close(xt.grad.double(), dx, rtol=tol * 10, atol=tol * 10)
    if wt is not None:
        assert_close(wt.grad.double(), dw, rtol=tol * 10, atol=tol * 10)
    if bt is not None:
        assert_close(bt.grad.double(), db, rtol=tol * 10, atol=tol * 10)


def test_layer_norm_saves_what_torch_saves(rng):
    x = t(rng.normal(size=(2, 3, 4)), grad=True)
    w, b = t(np.ones((3, 4)), grad=True), t(np.zeros((3, 4)), grad=True)
    fn = F.layer_norm(x, (3, 4), w, b).grad_fn
    assert fn._saved_normalized_shape == (3, 4)
    assert fn._saved_input is not None and fn._saved_weight is not None and fn._saved_bias is not None
    mean, rstd = fn._saved_result1, fn._saved_result2
    assert tuple(mean.shape) == (2, 1, 1) and tuple(rstd.shape) == (2, 1, 1)
    xs = x.detach().numpy().reshape(2, -1)
    assert_close(mean.reshape(-1), xs.mean(1), rtol=1e-12)
    assert_close(rstd.reshape(-1), 1 / np.sqrt(xs.var(1) + 1e-5), rtol=1e-10)
    assert [f.name() for f, _ in fn.next_functions] == ["torch::autograd::AccumulateGrad"] * 3


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_every_order_and_forward_mode(affine, rng):
    args = [t(rng.normal(size=(2, 3, 4)), grad=True)]
    if affine:
        args += [t(rng.normal(size=4), grad=True), t(rng.normal(size=4), grad=True)]
    fn = lambda x, *p: F.layer_norm(x, (4,), *p)  # noqa: E731
    assert gradcheck(fn, args, check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(fn, args, check_batched_grad=True)


def test_layer_norm_batched_gradients_equal_per_row_calls(rng):
    x = t(rng.normal(size=(3, 5)), grad=True)
    w, b = t(rng.normal(size=5), grad=True), t(rng.normal(size=5), grad=True)
    out = F.layer_norm(x, (5,), w, b)
    gs = t(rng.normal(size=(4, 3, 5)))
    batched = fg.autograd.grad(out, (x, w, b), gs, retain_graph=True, is_grads_batched=True)
    for i in range(4):
        rows = fg.autograd.grad(out, (x, w, b), gs[i], retain_graph=True)
        for got, want in zip(batched, rows, strict=True):
            assert_close(got[i], want, rtol=1e-12, atol=1e-12)


def test_layer_norm_forward_mode_tangent_matches_finite_difference(rng):
    x, w, b = rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=6)
    tx, tw, tb = rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=6)
    with fwAD.dual_level():
        out = F.layer_norm(
            fwAD.make_dual(t(x), t(tx)), (6,), fwAD.make_dual(t(w), t(tw)), fwAD.make_dual(t(b), t(tb))
        )
        tangent = fwAD.unpack_dual(out).tangent
    h = 1e-6
    plus, *_ = ln_np(x + h * tx, 1, w + h * tw, b + h * tb, 1e-5)
    minus, *_ = ln_np(x - h * tx, 1, w - h * tw, b - h * tb, 1e-5)
    assert_close(tangent, (plus - minus) / (2 * h), rtol=1e-6, atol=1e-7)


def test_layer_norm_bits_do_not_depend_on_thread_count(rng):
    x = rng.normal(size=(300, 256)).astype(np.float32)
    g = rng.normal(size=(300, 256)).astype(np.float32)
    runs = []
    before = fg.get_num_threads()
    try:
        for n in (1, 2):
            fg.set_num_threads(n)
            xt = t(x, fg.float32, True)
            w, b = fg.ones(256, requires_grad=True), fg.zeros(256, requires_grad=True)
            out = F.layer_norm(xt, (256,), w, b)
            out.backward(t(g, fg.float32))
            runs.append([a.detach().numpy().copy() for a in (out, xt.grad, w.grad, b.grad)])
    finally:
        fg.set_num_threads(before)
    for a, c in zip(*runs, strict=True):
        assert np.array_equal(a, c)


@pytest.mark.parametrize("dt", [fg.float16, fg.bfloat16])
def test_layer_norm_16_bit_inputs_compute_in_float32(dt, rng):
    x = rng.normal(size=(4, 8))
    xt = t(x, fg.float32).to(dt)
    for params in (fg.float32, dt):
        w = fg.ones(8, dtype=params, requires_grad=True)
        xg = xt.clone().requires_grad_(True)
        out = F.layer_norm(xg, (8,), w)
        assert out.dtype == dt
        want, *_ = ln_np(xt.float().double().numpy(), 1, None, None, 1e-5)
        assert_close(out.double(), want, rtol=2e-2, atol=2e-2)
        out.sum().backward()
        assert xg.grad.dtype == dt and w.grad.dtype == params


def test_layer_norm_errors_name_shapes_and_dtypes():
    x = fg.zeros(2, 3)
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        F.layer_norm(x.to(fg.complex64), (3,))
    with pytest.raises(NotImplementedError, match="\"LayerNormKernelImpl\" not implemented for 'Long'"):
        F.layer_norm(x.long(), (3,))
    with pytest.raises(RuntimeError, match="expect parameter to have scalar type of Float"):
        F.layer_norm(x, (3,), fg.ones(3, dtype=fg.float64))
    with pytest.raises(RuntimeError, match="all inputs must share same datatype"):
        F.layer_norm(x.double(), (3,), fg.ones(3))
    with pytest.raises(RuntimeError, match=r"weight of shape \[4\] and normalized_shape = \[3\]"):
        F.layer_norm(x, (3,), fg.ones(4))
    with pytest.raises(RuntimeError, match=r"bias of shape \[3, 1\] and normalized_shape = \[3\]"):
        F.layer_norm(x, (3,), None, fg.ones(3, 1))
    with pytest.raises(RuntimeError, match=r"but got input of size\[2, 3\]"):
        F.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match="at least 1-dimensional"):
        F.layer_norm(x, ())


def test_layer_norm_empty_inputs():
    out = F.layer_norm(fg.zeros(0, 3, requires_grad=True), (3,))
    assert tuple(out.shape) == (0, 3)
    out.sum().backward()


# ---------------------------------------------------------------------------
# nll_loss and cross entropy
# ---------------------------------------------------------------------------


def nll_grad_np(g, shape, target, weight, ignore_index, reduction):
    """d loss / d input: -w[t] at each row's target (times g, over the total weight for mean)."""
    c = shape[1] if len(shape) > 1 else shape[0]
    flat = np.asarray(target).reshape(-1)
    w = np.ones(c) if weight is None else weight
    keep = flat != ignore_index
    total = w[np.where(keep, flat, 0)][keep].sum()
    gflat = np.broadcast_to(np.asarray(g, dtype=np.float64).reshape(-1), flat.shape)
    rows = np.zeros((len(flat), c))
    for r, tr in enumerate(flat):
        if tr != ignore_index:
            rows[r, tr] = -w[tr] * gflat[r] / (total if reduction == "mean" else 1.0)
    if len(shape) == 1:
        return rows.reshape(shape)
    moved = rows.reshape((shape[0], *shape[2:], c))
    return np.moveaxis(moved, -1, 1)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (5,)])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_gradient_matches_formula(reduction, shape, weighted, rng):
    c = shape[1] if len(shape) > 1 else shape[0]
    x = t(rng.normal(size=shape), grad=True)
    tshape = (shape[0], *shape[2:]) if len(shape) > 1 else ()
    target = rng.integers(0, c, size=tshape)
    if target.ndim:
        target.reshape(-1)[::4] = 2  # ignored below
    w = rng.uniform(0.2, 2.0, size=c) if weighted else None
    out = F.nll_loss(x, fg.tensor(target), None if w is None else t(w), ignore_index=2, reduction=reduction)
    if len(shape) <= 2:
        assert out.grad_fn.name() == "NllLossBackward0"
    g = rng.normal(size=tuple(out.shape))
    out.backward(t(g))
    assert_close(x.grad, nll_grad_np(g, shape, target, w, 2, reduction), rtol=1e-12, atol=1e-14)


def test_nll_loss_saves_what_torch_saves(rng):
    x = t(rng.normal(size=(3, 4)), grad=True)
    fn = F.nll_loss(x, fg.tensor([1, 2, 3]), t([1.0, 2.0, 0.5, 1.5]), ignore_index=2).grad_fn
    assert fn._saved_reduction == 1 and fn._saved_ignore_index == 2
    assert float(fn._saved_total_weight) == 2.0 + 1.5
    assert fn._saved_target.tolist() == [1, 2, 3]


def test_cross_entropy_records_log_softmax_then_nll(rng):
    out = F.cross_entropy(t(rng.normal(size=(2, 3)), grad=True), fg.tensor([0, 2]))
    assert out.grad_fn.name() == "NllLossBackward0"
    assert [f.name() for f, _ in out.grad_fn.next_functions] == ["LogSoftmaxBackward0"]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_every_order_and_forward_mode(reduction, rng):
    x = t(rng.normal(size=(4, 3)), grad=True)
    target, w = fg.tensor([0, 2, -100, 1]), t([0.5, 1.0, 2.0])
    fn = lambda v: F.nll_loss(v, target, w, reduction=reduction)  # noqa: E731
    assert gradcheck(fn, (x,), check_forward_ad=True, check_batched_grad=True)
    assert gradgradcheck(fn, (x,))
    ce = lambda v: F.cross_entropy(v, target, w, reduction=reduction)  # noqa: E731
    assert gradcheck(ce, (x,), check_forward_ad=True)
    assert gradgradcheck(ce, (x,), check_batched_grad=True)


def test_nll_loss_all_ignored_and_empty_batches():
    x = fg.zeros(3, 4, requires_grad=True)
    assert np.isnan(float(F.nll_loss(x, fg.tensor([-100] * 3))))
    assert float(F.nll_loss(x, fg.tensor([-100] * 3), reduction="sum")) == 0.0
    empty = fg.zeros(0, 4, requires_grad=True)
    assert np.isnan(float(F.nll_loss(empty, fg.zeros(0, dtype=fg.int64))))
    F.nll_loss(empty, fg.zeros(0, dtype=fg.int64), reduction="sum").backward()
    assert tuple(empty.grad.shape) == (0, 4)


def test_nll_loss_unreduced_result_is_not_a_view():
    # An unbatched input's unreduced loss is a fresh 0-dim tensor that takes in-place ops twice.
    x = fg.tensor([-1.0, -2.0, -3.0], requires_grad=True)
    loss = F.nll_loss(x, fg.tensor(1), reduction="none")
    assert loss.shape == () and not loss._is_view()
    loss.mul_(2.0)
    loss.add_(1.0)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, -2.0, 0.0])


def test_nll_loss_errors_match_torch():
    x = fg.zeros(3, 4)
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        F.nll_loss(x, fg.tensor([0, -1, 1]))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.nll_loss(x, fg.tensor([0, 1, 1]), fg.ones(4, requires_grad=True))
    with fg.no_grad():
        F.nll_loss(x, fg.tensor([0, 1, 1]), fg.ones(4, requires_grad=True))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.nll_loss(x.double(), fg.tensor([0, 1, 1]), fg.ones(4))
    with pytest.raises(RuntimeError, match=r"or no classes but got weight tensor of shape: \[5\]"):
        F.nll_loss(x, fg.tensor([0, 1, 1]), fg.ones(5))
    with pytest.raises(NotImplementedError, match="\"nll_loss_out_frame\" not implemented for 'Long'"):
        F.nll_loss(x.long(), fg.tensor([0, 1, 1]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        F.nll_loss(x, fg.tensor([[0, 1, 1]]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 5\], got \[2, 4\]"):
        F.nll_loss(fg.zeros(2, 3, 5), fg.zeros(2, 4, dtype=fg.int64))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.nll_loss(x, fg.tensor([0, 1, 1], dtype=fg.int32))


# ---------------------------------------------------------------------------
# softmax / log_softmax backward rows
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape,dim", [((5, 7), -1), ((300, 200), 1), ((4, 6, 3), 1), ((9,), 0)])
@pytest.mark.parametrize("dtype", [fg.float32, fg.float64])
def test_softmax_gradients_match_formulas(log, shape, dim, dtype, rng):
    x = rng.normal(size=shape) * 2
    g = rng.normal(size=shape)
    xt = t(x, dtype, True)
    out = (F.log_softmax if log else F.softmax)(xt, dim)
    out.backward(t(g, dtype))
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    p = e / e.sum(axis=dim, keepdims=True)
    # d log_softmax: g - p Σg; d softmax: p (g - Σ g p).
    want = g - p * g.sum(axis=dim, keepdims=True) if log else p * (g - (g * p).sum(axis=dim, keepdims=True))
    tol = 1e-5 if dtype == fg.float32 else 1e-12
    assert_close(xt.grad.double(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "name", ["softmax", "log_softmax", "layer_norm", "cross_entropy"],
)
def test_forward_over_reverse_without_create_graph_carries_tangents(name, rng):
    # A backward pass run on dual tensors gives its gradient a tangent even
    # without create_graph: the fused backward kernels must not drop it.
    # Oracle: central differences of the gradient along the tangent.
    fns = {
        "softmax": lambda a: a.softmax(-1),
        "log_softmax": lambda a: a.log_softmax(-1),
        "layer_norm": lambda a: F.layer_norm(a, (5,)),
        "cross_entropy": lambda a: F.cross_entropy(a, fg.tensor([1, 3, 0])),
    }
    fn = fns[name]
    xa, ta, va = rng.standard_normal((3, 5)), rng.standard_normal((3, 5)), rng.standard_normal((3, 5))

    def vjp(a):
        x = fg.tensor(a).requires_grad_()
        y = fn(x)
        v = fg.tensor(va) if y.dim() else fg.tensor(1.0, dtype=fg.float64)
        return fg.autograd.grad(y, x, v)[0].numpy()

    with fwAD.dual_level():
        xd = fwAD.make_dual(fg.tensor(xa).requires_grad_(), fg.tensor(ta))
        y = fn(xd)
        v = fg.tensor(va) if y.dim() else fg.tensor(1.0, dtype=fg.float64)
        (g,) = fg.autograd.grad(y, xd, v)
        tangent = fwAD.unpack_dual(g).tangent
    eps = 1e-6
    expected = (vjp(xa + eps * ta) - vjp(xa - eps * ta)) / (2 * eps)
    if name == "cross_entropy":
        # The gradient of log_softmax's output is constant here: nll's
        # backward gives it no tangent, log_softmax's backward then does.
        assert tangent is not None
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-6, atol=1e-8)
