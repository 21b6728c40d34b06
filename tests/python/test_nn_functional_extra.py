"""``F.gumbel_softmax``, ``F.log_sigmoid``, ``F.conv_tbc``/``torch.conv_tbc``,
``F.multi_head_attention_forward`` and the ``Tensor.prelu`` and
``Tensor.hardshrink`` methods.

Oracles: properties of the samples (rows sum to 1, one-hot, the
straight-through gradient equal to the soft one, the formula with the
same seeded draws), NumPy formulas (``nn_reference``), the functional forms
the methods stand for, and float64 central differences.
"""

from __future__ import annotations

import warnings

import ferrograd as fg
import ferrograd.nn.functional as F
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import vmap
from nn_reference import conv_tbc, log_softmax, mha

pytestmark = pytest.mark.timeout(120)

RNG = np.random.default_rng(1)


# ---------------------------------------------------------------------------
# gumbel_softmax


def test_gumbel_softmax_rows_are_distributions():
    logits = fg.tensor(RNG.standard_normal((6, 5)))
    y = F.gumbel_softmax(logits, tau=0.7)
    assert (y.numpy() > 0).all()
    np.testing.assert_allclose(y.sum(-1).numpy(), 1.0, rtol=1e-12)
    cols = F.gumbel_softmax(logits, dim=0)
    np.testing.assert_allclose(cols.sum(0).numpy(), 1.0, rtol=1e-12)


def test_gumbel_softmax_is_the_softmax_of_the_perturbed_logits():
    logits = RNG.standard_normal((3, 4))
    fg.manual_seed(5)
    y = F.gumbel_softmax(fg.tensor(logits), tau=0.5)
    fg.manual_seed(5)
    g = -np.log(fg.empty(3, 4, dtype=fg.float64).exponential_().numpy())
    np.testing.assert_allclose(y.numpy(), np.exp(log_softmax((logits + g) / 0.5)), rtol=1e-12)


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient():
    logits = fg.tensor(RNG.standard_normal((4, 5)), requires_grad=True)
    weights = fg.tensor(RNG.standard_normal((4, 5)))
    fg.manual_seed(3)
    hard = F.gumbel_softmax(logits, tau=0.8, hard=True)
    (g_hard,) = fg.autograd.grad((hard * weights).sum(), logits)
    fg.manual_seed(3)
    soft = F.gumbel_softmax(logits, tau=0.8)
    (g_soft,) = fg.autograd.grad((soft * weights).sum(), logits)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0}
    np.testing.assert_array_equal(h.sum(-1), 1.0)
    np.testing.assert_array_equal(h.argmax(-1), soft.detach().numpy().argmax(-1))
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy(), rtol=1e-12, atol=1e-15)


def test_gumbel_softmax_draws_and_arguments():
    logits = fg.zeros(2, 3)
    a, b = F.gumbel_softmax(logits), F.gumbel_softmax(logits)
    assert not fg.equal(a, b)  # new draws each call
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.gumbel_softmax(logits, eps=1e-5)
    assert any("eps" in str(w.message) for w in caught)
    with pytest.raises(IndexError):
        F.gumbel_softmax(logits, dim=2)
    with pytest.raises(RuntimeError):
        F.gumbel_softmax(fg.tensor([1, 2]))  # integer logits cannot hold the draws
    batched = vmap(lambda t: F.gumbel_softmax(t, hard=True), randomness="different")(fg.zeros(3, 4))
    np.testing.assert_array_equal(batched.sum(-1).numpy(), 1.0)
    with pytest.raises(RuntimeError):
        vmap(F.gumbel_softmax)(fg.zeros(3, 4))  # randomness="error"


def test_log_sigmoid_is_logsigmoid():
    x = fg.tensor([-30.0, -1.0, 0.0, 2.0, 40.0], dtype=fg.float64)
    assert fg.equal(F.log_sigmoid(x), F.logsigmoid(x))


# ---------------------------------------------------------------------------
# conv_tbc


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_equals_the_formula(pad):
    x, w, b = RNG.standard_normal((6, 2, 3)), RNG.standard_normal((3, 3, 4)), RNG.standard_normal(4)
    got = F.conv_tbc(fg.tensor(x), fg.tensor(w), fg.tensor(b), pad)
    want = conv_tbc(x[1:-1], w, b, 0) if pad < 0 else conv_tbc(x, w, b, pad)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(fg.conv_tbc(fg.tensor(x), fg.tensor(w), fg.tensor(b), pad=pad).numpy(), want,
                               rtol=1e-12)


def test_conv_tbc_gradients():
    x, w, b = (fg.tensor(RNG.standard_normal(s), requires_grad=True) for s in ((5, 2, 3), (2, 3, 2), (2,)))
    assert gradcheck(lambda *a: F.conv_tbc(*a, 1), (x, w, b), check_forward_ad=True)
    assert gradgradcheck(lambda *a: F.conv_tbc(*a, 1), (x, w, b))


@pytest.mark.parametrize(("shapes", "pad", "match"), [
    (((5, 3), (2, 3, 4), (4,)), 0, "Input must have 3 dims"),
    (((5, 2, 3), (3, 4), (4,)), 0, "Weight tensor must have 3 dims"),
    (((5, 2, 3), (2, 3, 4), (2,)), 0, "Bias size must equal"),
    (((5, 2, 3), (2, 4, 4), (4,)), 0, "input channels"),
    (((2, 2, 3), (4, 3, 4), (4,)), 0, "kernel width 4 is larger"),
])  # fmt: skip
def test_conv_tbc_errors(shapes, pad, match):
    with pytest.raises(RuntimeError, match=match):
        F.conv_tbc(*(fg.zeros(*s) for s in shapes), pad)


# ---------------------------------------------------------------------------
# multi_head_attention_forward


def mha_inputs(embed: int = 6, heads: int = 2):
    q, k = RNG.standard_normal((3, 2, embed)), RNG.standard_normal((4, 2, embed))
    v = RNG.standard_normal((4, 2, embed))
    w_in, b_in = RNG.standard_normal((3 * embed, embed)), RNG.standard_normal(3 * embed)
    w_out, b_out = RNG.standard_normal((embed, embed)), RNG.standard_normal(embed)
    return q, k, v, heads, w_in, b_in, w_out, b_out


def test_multi_head_attention_forward_equals_the_formula():
    q, k, v, heads, w_in, b_in, w_out, b_out = mha_inputs()
    out, weights = F.multi_head_attention_forward(
        fg.tensor(q), fg.tensor(k), fg.tensor(v), 6, heads, fg.tensor(w_in), fg.tensor(b_in), None, None,
        False, 0.0, fg.tensor(w_out), fg.tensor(b_out))
    want_out, want_w = mha(q, k, v, heads, w_in, b_in, w_out, b_out)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-10)
    np.testing.assert_allclose(weights.numpy(), want_w, rtol=1e-10)
    one, one_w = F.multi_head_attention_forward(
        fg.tensor(q[:, 0]), fg.tensor(k[:, 0]), fg.tensor(v[:, 0]), 6, heads, fg.tensor(w_in),
        fg.tensor(b_in), None, None, False, 0.0, fg.tensor(w_out), fg.tensor(b_out), need_weights=True)
    np.testing.assert_allclose(one.numpy(), want_out[:, 0], rtol=1e-10)
    np.testing.assert_allclose(one_w.numpy(), want_w[0], rtol=1e-10)


def test_multihead_attention_module_calls_the_functional_form():
    fg.manual_seed(0)
    layer = fg.nn.MultiheadAttention(6, 3, add_bias_kv=True, batch_first=True).double()
    x = fg.tensor(RNG.standard_normal((2, 4, 6)))
    mask = fg.tensor(RNG.random((4, 4)) < 0.3)
    out, w = layer(x, x, x, attn_mask=mask, average_attn_weights=False)
    xt = x.transpose(0, 1)
    ref, ref_w = F.multi_head_attention_forward(
        xt, xt, xt, 6, 3, layer.in_proj_weight, layer.in_proj_bias, layer.bias_k, layer.bias_v, False, 0.0,
        layer.out_proj.weight, layer.out_proj.bias, attn_mask=mask, average_attn_weights=False)
    np.testing.assert_allclose(out.detach().numpy(), ref.transpose(0, 1).detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.detach().numpy(), ref_w.detach().numpy(), rtol=1e-12)


def test_multi_head_attention_forward_gradients_and_static_keys():
    q, k, v, heads, w_in, b_in, w_out, b_out = mha_inputs(4, 2)
    leaves = [fg.tensor(a, requires_grad=True) for a in (q, k, v, w_in)]
    static_k = fg.tensor(RNG.standard_normal((4, 5, 2)), requires_grad=True)

    def f(q_, k_, v_, w_):
        return F.multi_head_attention_forward(q_, k_, v_, 4, heads, w_, fg.tensor(b_in), None, None, True,
                                              0.0, fg.tensor(w_out), fg.tensor(b_out), need_weights=False)[0]

    def with_static(q_, sk):
        return F.multi_head_attention_forward(
            q_, q_, q_, 4, heads, leaves[3], None, None, None, False, 0.0, fg.tensor(w_out), None,
            static_k=sk, static_v=sk.sin())[0]

    assert gradcheck(f, tuple(leaves))
    assert gradcheck(with_static, (leaves[0], static_k))


@pytest.mark.parametrize(("change", "match"), [
    ({"embed_dim_to_check": 5}, "was expecting embedding dimension of 5"),
    ({"num_heads": 4}, "not divisible by num_heads"),
    ({"in_proj_weight": None}, "in_proj_weight is None"),
    ({"use_separate_proj_weight": True}, "q_proj_weight is None"),
    ({"static_k": fg.zeros(3, 4, 3)}, "static_k.size"),
])  # fmt: skip
def test_multi_head_attention_forward_errors(change, match):
    q, k, v, heads, w_in, b_in, w_out, b_out = mha_inputs()
    args = {"query": fg.tensor(q), "key": fg.tensor(k), "value": fg.tensor(v), "embed_dim_to_check": 6,
            "num_heads": heads, "in_proj_weight": fg.tensor(w_in), "in_proj_bias": fg.tensor(b_in),
            "bias_k": None, "bias_v": None, "add_zero_attn": False, "dropout_p": 0.0,
            "out_proj_weight": fg.tensor(w_out), "out_proj_bias": fg.tensor(b_out)}
    args.update(change)
    with pytest.raises(AssertionError, match=match):
        F.multi_head_attention_forward(**args)


# ---------------------------------------------------------------------------
# Tensor methods of functional forms


def test_prelu_and_hardshrink_methods_equal_the_functions():
    x = fg.tensor(RNG.standard_normal((2, 3, 4)))
    w = fg.tensor(RNG.uniform(0.1, 0.5, 3))
    assert fg.equal(x.prelu(w), F.prelu(x, w))
    assert fg.equal(x.hardshrink(), F.hardshrink(x))
    assert fg.equal(x.hardshrink(0.9), F.hardshrink(x, 0.9))
    assert fg.equal(fg.prelu(x, w), F.prelu(x, w))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        x.prelu(fg.ones(2))
