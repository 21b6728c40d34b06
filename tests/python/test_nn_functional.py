"""ferrograd.nn.functional against NumPy references written here (explicit
loops for convolution and pooling, formulas for norms and losses), float64
central finite differences (gradcheck / gradgradcheck, forward mode), and
torch's error types for bad input."""

from __future__ import annotations

import math
import warnings

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import ferrograd.nn.functional as F
import numpy as np
import pytest
from conftest import assert_close, cases, to_np
from ferrograd.autograd import gradcheck, gradgradcheck


def t64(a, grad=False):
    x = fg.tensor(np.asarray(a, dtype=np.float64))
    return x.requires_grad_(True) if grad else x


def away_from(a, points, gap=0.05):
    """Shift entries that sit within ``gap`` of a kink so finite differences stay valid."""
    a = np.array(a, dtype=np.float64)
    for p in points:
        near = np.abs(a - p) < gap
        a[near] = p + gap * 2
    return a


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(np.minimum(x * beta, threshold))) / beta)


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
ERF = np.vectorize(math.erf)

ACTIVATIONS = [
    ("relu", {}, lambda x: np.maximum(x, 0), [0.0]),
    ("relu6", {}, lambda x: np.clip(x, 0, 6), [0.0, 6.0]),
    ("leaky_relu", {"negative_slope": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x), [0.0]),
    ("elu", {"alpha": 1.5}, lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)), [0.0]),
    ("selu", {}, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x)), [0.0]),
    ("celu", {"alpha": 0.7}, lambda x: np.maximum(x, 0) + np.minimum(0, 0.7 * np.expm1(x / 0.7)), [0.0]),
    ("gelu", {}, lambda x: 0.5 * x * (1 + ERF(x / math.sqrt(2))), []),
    (
        "gelu",
        {"approximate": "tanh"},
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        [],
    ),
    ("silu", {}, lambda x: x * np_sigmoid(x), []),
    ("mish", {}, lambda x: x * np.tanh(np.log1p(np.exp(x))), []),
    ("softplus", {}, np_softplus, []),
    ("softplus", {"beta": 2.0, "threshold": 1.0}, lambda x: np_softplus(x, 2.0, 1.0), [0.5]),
    ("softsign", {}, lambda x: x / (1 + np.abs(x)), [0.0]),
    ("hardtanh", {"min_val": -0.5, "max_val": 1.2}, lambda x: np.clip(x, -0.5, 1.2), [-0.5, 1.2]),
    ("hardsigmoid", {}, lambda x: np.clip(x + 3, 0, 6) / 6, [-3.0, 3.0]),
    ("hardswish", {}, lambda x: x * np.clip(x + 3, 0, 6) / 6, [-3.0, 3.0]),
    ("sigmoid", {}, np_sigmoid, []),
    ("tanh", {}, np.tanh, []),
    ("logsigmoid", {}, lambda x: -np.logaddexp(0, -x), []),
    ("threshold", {"threshold": 0.3, "value": -2.0}, lambda x: np.where(x > 0.3, x, -2.0), [0.3]),
]


@pytest.mark.parametrize(("name", "kwargs", "ref", "kinks"), ACTIVATIONS, ids=lambda v: str(v)[:20])
def test_activation_matches_numpy_and_finite_differences(name, kwargs, ref, kinks, rng):
    a = away_from(rng.uniform(-5, 5, size=(3, 7)), kinks)
    a[0, :3] = [-40.0, 30.0, 60.0]  # far tails must stay finite
    out = getattr(F, name)(t64(a), **kwargs)
    assert_close(out, ref(a), rtol=1e-10, atol=1e-12)
    x = t64(a[1:], grad=True)
    assert gradcheck(lambda v: getattr(F, name)(v, **kwargs), (x,))


def test_activation_gradients_stay_finite_in_the_tails():
    x = t64([-1000.0, -50.0, 50.0, 1000.0], grad=True)
    for fn in (F.elu, F.celu, F.selu, F.softplus, F.logsigmoid, F.mish, F.silu):
        (g,) = fg.autograd.grad(fn(x).sum(), x)
        assert bool(fg.isfinite(g).all()), fn.__name__


def test_logsigmoid_gradient_at_zero_is_one_half():
    x = t64([0.0], grad=True)
    F.logsigmoid(x).sum().backward()
    assert x.grad.item() == pytest.approx(0.5)


@pytest.mark.parametrize("name", ["relu", "elu", "leaky_relu", "hardtanh", "selu", "silu", "threshold"])
def test_inplace_variant_writes_into_input_and_backpropagates(name, rng):
    a = away_from(rng.uniform(-3, 3, size=(4, 5)), [0.0, -1.0, 1.0])
    kwargs = {"threshold": 0.1, "value": 0.5} if name == "threshold" else {}
    expected = getattr(F, name)(t64(a), **kwargs)
    leaf = t64(a, grad=True)
    y = leaf * 1.0
    out = getattr(F, name)(y, inplace=True, **kwargs)
    assert out is y
    assert_close(y, to_np(expected))
    out.sum().backward()
    ref_leaf = t64(a, grad=True)
    getattr(F, name)(ref_leaf, **kwargs).sum().backward()
    assert_close(leaf.grad, to_np(ref_leaf.grad))


def test_inplace_on_leaf_requiring_grad_raises():
    with pytest.raises(RuntimeError):
        F.elu(t64([1.0, -1.0], grad=True), inplace=True)


def test_underscore_aliases_are_inplace():
    x = t64([-1.0, 2.0])
    assert F.relu_(x) is x and x.tolist() == [0.0, 2.0]
    x = t64([-1.0, 2.0])
    F.leaky_relu_(x, 0.5)
    assert x.tolist() == [-0.5, 2.0]


def np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family_matches_numpy(dim, rng):
    a = rng.normal(size=(3, 4, 5)) * 3
    assert_close(F.softmax(t64(a), dim), np_softmax(a, dim), rtol=1e-12)
    assert_close(F.log_softmax(t64(a), dim), np.log(np_softmax(a, dim)), rtol=1e-12)
    assert_close(F.softmin(t64(a), dim), np_softmax(-a, dim), rtol=1e-12)


def test_softmax_dtype_argument_casts_first():
    out = F.softmax(fg.tensor([1.0, 2.0]), dim=0, dtype=fg.float64)
    assert out.dtype == fg.float64


@pytest.mark.parametrize(("ndim", "implied"), [(1, 0), (2, 1), (3, 0), (4, 1)])
def test_softmax_without_dim_warns_and_uses_torchs_implicit_dim(ndim, implied, rng):
    a = rng.normal(size=(2, 3, 2, 3)[:ndim])
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(t64(a))
    assert_close(out, np_softmax(a, implied))


def test_glu_gates_first_half_by_sigmoid_of_second(rng):
    a = rng.normal(size=(3, 6, 2))
    assert_close(F.glu(t64(a), 1), a[:, :3] * np_sigmoid(a[:, 3:]), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(t64(np.zeros((3, 5))))


def test_softmax_gradgradcheck(rng):
    x = t64(rng.normal(size=(3, 4)), grad=True)
    assert gradgradcheck(lambda v: F.softmax(v, 1), (x,))
    assert gradcheck(lambda v: F.log_softmax(v, 0), (x,), check_forward_ad=True)


def test_gelu_gradgradcheck(rng):
    x = t64(rng.normal(size=(2, 5)), grad=True)
    assert gradgradcheck(F.gelu, (x,))
    assert gradgradcheck(lambda v: F.gelu(v, approximate="tanh"), (x,))


# ---------------------------------------------------------------------------
# Linear, dropout, embedding, one_hot, pad, distances
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_matches_numpy(shape, with_bias, rng):
    x, w, b = rng.normal(size=shape), rng.normal(size=(3, 5)), rng.normal(size=3)
    out = F.linear(t64(x), t64(w), t64(b) if with_bias else None)
    assert_close(out, x @ w.T + (b if with_bias else 0), rtol=1e-12)
    args = (t64(x, True), t64(w, True), t64(b, True))
    assert gradcheck(lambda a, ww, bb: F.linear(a, ww, bb if with_bias else None), args)


def test_bilinear_matches_einsum_and_gradcheck(rng):
    x1, x2 = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    w, b = rng.normal(size=(5, 3, 2)), rng.normal(size=5)
    expected = np.einsum("ni,oij,nj->no", x1, w, x2) + b
    assert_close(F.bilinear(t64(x1), t64(x2), t64(w), t64(b)), expected, rtol=1e-12)
    assert gradcheck(F.bilinear, (t64(x1, True), t64(x2, True), t64(w, True), t64(b, True)))


def test_dropout_zeroes_a_fraction_p_and_scales_survivors():
    fg.manual_seed(0)
    out = F.dropout(fg.ones(200_000), p=0.3)
    values = to_np(out)
    assert abs((values == 0).mean() - 0.3) < 0.005
    np.testing.assert_allclose(values[values != 0], 1 / 0.7, rtol=1e-6)


def test_dropout_is_reproducible_from_the_global_seed_and_keeps_gradient_mask():
    fg.manual_seed(11)
    a = F.dropout(fg.ones(50), p=0.5)
    fg.manual_seed(11)
    x = fg.ones(50, requires_grad=True)
    b = F.dropout(x, p=0.5)
    assert a.tolist() == b.tolist()
    b.sum().backward()
    assert x.grad.tolist() == b.detach().tolist()


def test_dropout_edge_probabilities_and_eval_mode():
    x = fg.ones(10)
    assert F.dropout(x, p=1.0).tolist() == [0.0] * 10
    assert F.dropout(x, p=0.5, training=False) is x
    assert F.dropout(x, p=0.0) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


def test_dropout_inplace_modifies_input():
    fg.manual_seed(1)
    x = fg.ones(100)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x and 0 < int((x == 0).sum()) < 100


@pytest.mark.parametrize(("fn", "shape"), [(F.dropout1d, (4, 6, 9)), (F.dropout2d, (4, 6, 3, 3))])
def test_feature_dropout_drops_whole_channels(fn, shape):
    fg.manual_seed(3)
    out = to_np(fn(fg.ones(*shape), p=0.5))
    per_channel = out.reshape(shape[0], shape[1], -1)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))  # constant over each channel
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert 0 < (per_channel[..., 0] == 0).sum() < shape[0] * shape[1]


def test_embedding_looks_up_rows(rng):
    w = rng.normal(size=(6, 3))
    idx = np.array([[0, 5, 2], [2, 2, 1]])
    assert_close(F.embedding(fg.tensor(idx), t64(w)), w[idx])


def test_embedding_padding_row_gets_no_gradient(rng):
    w = t64(rng.normal(size=(5, 2)), grad=True)
    idx = fg.tensor([[0, 4, 4], [1, 4, 0]])
    F.embedding(idx, w, padding_idx=-1).sum().backward()
    expected = np.zeros((5, 2))
    for i in [0, 1, 0]:
        expected[i] += 1
    assert_close(w.grad, expected)


def test_embedding_scale_grad_by_freq_divides_by_counts(rng):
    w = t64(rng.normal(size=(4, 2)), grad=True)
    F.embedding(fg.tensor([1, 1, 1, 3]), w, scale_grad_by_freq=True).sum().backward()
    assert_close(w.grad, np.array([[0, 0], [1, 1], [0, 0], [1, 1]], dtype=np.float64))


def test_embedding_max_norm_renormalises_looked_up_rows_in_place(rng):
    w0 = rng.normal(size=(4, 3)) * 3
    w = t64(w0)
    out = F.embedding(fg.tensor([0, 2]), w, max_norm=1.0)
    norms = np.linalg.norm(w0, axis=1)
    expected = w0.copy()
    for r in (0, 2):
        if norms[r] > 1.0:
            expected[r] *= 1.0 / (norms[r] + 1e-7)
    assert_close(w, expected, rtol=1e-9)
    assert_close(out, expected[[0, 2]], rtol=1e-9)


def test_embedding_gradcheck(rng):
    w = t64(rng.normal(size=(5, 3)), grad=True)
    # No padding_idx here: the padding row does change the output, only its gradient is cut.
    assert gradcheck(lambda ww: F.embedding(fg.tensor([[1, 3], [3, 0]]), ww), (w,))


def test_one_hot_matches_numpy_and_infers_classes():
    idx = np.array([[0, 3], [2, 1]])
    out = F.one_hot(fg.tensor(idx))
    assert out.dtype == fg.int64
    assert_close(out, np.eye(4, dtype=np.int64)[idx])
    assert tuple(F.one_hot(fg.tensor([1]), 5).shape) == (1, 5)


@pytest.mark.parametrize(
    ("values", "kwargs", "exc", "match"),
    [
        ([1.0], {}, RuntimeError, "only applicable to index tensor of type LongTensor"),
        ([-1], {}, RuntimeError, "Class values must be non-negative"),
        ([3], {"num_classes": 3}, RuntimeError, "Class values must be smaller than num_classes"),
    ],
)
def test_one_hot_rejects_bad_indices(values, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        F.one_hot(fg.tensor(values), **kwargs)


NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("mode", list(NP_MODE))
@pytest.mark.parametrize(
    ("shape", "pads"), [((2, 3, 5), (1, 2)), ((2, 3, 4, 5), (2, 0, 1, 2)), ((3, 4, 5, 3), (0, 1, 2, 1, 1, 0))]
)
def test_pad_matches_numpy_pad(mode, shape, pads, rng):
    a = rng.normal(size=shape)
    widths = [(0, 0)] * (len(shape) - len(pads) // 2)
    widths += [(pads[2 * k], pads[2 * k + 1]) for k in reversed(range(len(pads) // 2))]
    if mode == "constant":
        expected = np.pad(a, widths, mode="constant", constant_values=2.5)
        out = F.pad(t64(a), pads, value=2.5)
    else:
        expected = np.pad(a, widths, mode=NP_MODE[mode])
        out = F.pad(t64(a), pads, mode=mode)
    assert_close(out, expected)


def test_pad_negative_amounts_crop(rng):
    a = rng.normal(size=(2, 5, 6))
    out = F.pad(t64(a), (-1, 2, 1, -2), value=-1.0)
    expected = np.pad(a[:, :3, 1:], [(0, 0), (1, 0), (0, 2)], constant_values=-1.0)
    assert_close(out, expected)


@pytest.mark.parametrize("mode", list(NP_MODE))
def test_pad_gradcheck(mode, rng):
    x = t64(rng.normal(size=(1, 2, 3, 4)), grad=True)
    assert gradcheck(lambda v: F.pad(v, (2, 1, 1, 2), mode=mode), (x,))


def test_pad_rejects_reflection_wider_than_input():
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input"):
        F.pad(fg.zeros(1, 1, 3), (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(fg.zeros(1, 1, 3), (1,))
    # Non-constant modes pad k dims of a (k+1)- or (k+2)-D input only, as torch.
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D input"):
        F.pad(fg.zeros(2, 3, 4, 5), (1, 1), mode="replicate")


@pytest.mark.parametrize(("p", "dim"), [(2.0, 1), (1.0, 0), (3.0, -1)])
def test_normalize_divides_by_clamped_norm(p, dim, rng):
    a = rng.normal(size=(3, 4))
    a[0] = 0.0
    norm = np.maximum((np.abs(a) ** p).sum(axis=dim, keepdims=True) ** (1 / p), 1e-12)
    assert_close(F.normalize(t64(a), p=p, dim=dim), a / norm, rtol=1e-10)


def test_cosine_similarity_and_pairwise_distance_match_numpy(rng):
    a, b = rng.normal(size=(4, 5)), rng.normal(size=(1, 5))
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert_close(F.cosine_similarity(t64(a), t64(b)), cos, rtol=1e-10)
    dist = (np.abs(a - b + 1e-6) ** 1.5).sum(-1) ** (1 / 1.5)
    assert_close(F.pairwise_distance(t64(a), t64(b), p=1.5), dist, rtol=1e-10)
    kd = F.pairwise_distance(t64(a), t64(b), keepdim=True)
    assert tuple(kd.shape) == (4, 1)
    assert gradcheck(F.cosine_similarity, (t64(a, True), t64(b, True)))
    assert gradcheck(F.pairwise_distance, (t64(a, True), t64(b, True)))


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------

REDUCTIONS = ["mean", "sum", "none"]


def np_reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](loss)


def huber_np(d, delta):
    a = np.abs(d)
    return np.where(a < delta, 0.5 * a * a, delta * (a - 0.5 * delta))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_regression_losses_match_numpy(reduction, rng):
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    d = x - y
    cases = [
        (F.mse_loss(t64(x), t64(y), reduction=reduction), d**2),
        (F.l1_loss(t64(x), t64(y), reduction=reduction), np.abs(d)),
        (F.smooth_l1_loss(t64(x), t64(y), reduction=reduction, beta=0.6), huber_np(d, 0.6) / 0.6),
        (F.smooth_l1_loss(t64(x), t64(y), reduction=reduction, beta=0.0), np.abs(d)),
        (F.huber_loss(t64(x), t64(y), reduction=reduction, delta=0.6), huber_np(d, 0.6)),
    ]
    for got, per_element in cases:
        assert_close(got, np_reduce(per_element, reduction), rtol=1e-12)


def test_weighted_mse_and_l1_multiply_before_reducing(rng):
    x, y, w = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.uniform(size=4)
    assert_close(F.mse_loss(t64(x), t64(y), weight=t64(w)), np.mean(w * (x - y) ** 2), rtol=1e-12)
    assert_close(F.l1_loss(t64(x), t64(y), weight=t64(w), reduction="sum"), np.sum(w * np.abs(x - y)))


def test_regression_loss_broadcast_warns():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(fg.zeros(3), fg.zeros(3, 1))


def test_legacy_size_average_and_reduce_map_to_reduction(rng):
    x, y = rng.normal(size=5), rng.normal(size=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(F.l1_loss(t64(x), t64(y), size_average=False), np.abs(x - y).sum())
        assert_close(F.l1_loss(t64(x), t64(y), reduce=False), np.abs(x - y))


def nll_np(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    """Reference NLL over (N, C, *d) or (C,) input by explicit iteration."""
    logp = np.asarray(logp)
    if logp.ndim == 1:
        logp, target = logp[None], np.asarray(target)[None]
    c = logp.shape[1]
    w = np.ones(c) if weight is None else weight
    moved = np.moveaxis(logp, 1, -1).reshape(-1, c)
    flat = np.asarray(target).reshape(-1)
    losses, weights = np.zeros(len(flat)), np.zeros(len(flat))
    for i, t in enumerate(flat):
        if t != ignore_index:
            losses[i] = -w[t] * moved[i, t]
            weights[i] = w[t]
    if reduction == "none":
        return losses.reshape(np.asarray(target).shape)
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / weights.sum()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3)])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_matches_reference(reduction, shape, weighted, rng):
    logp = rng.normal(size=shape)
    target = rng.integers(0, shape[1], size=(shape[0], *shape[2:]))
    target.reshape(-1)[::3] = -100
    w = rng.uniform(0.2, 1.5, size=shape[1]) if weighted else None
    out = F.nll_loss(t64(logp), fg.tensor(target), t64(w) if weighted else None, reduction=reduction)
    expected = nll_np(logp, target, w, reduction=reduction)
    if reduction == "none":
        expected = expected.reshape(target.shape)
    assert_close(out, expected, rtol=1e-12)


def test_nll_loss_unbatched_input():
    logp = np.log(np.array([0.2, 0.5, 0.3]))
    assert_close(F.nll_loss(t64(logp), fg.tensor(1)), np.array(-logp[1]), rtol=1e-12)


def ce_np(logits, target, weight=None, ignore_index=-100, reduction="mean", smoothing=0.0):
    """Reference cross entropy: log-softmax over dim 1, then smoothed NLL."""
    logp = logits - logits.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    c = logits.shape[1]
    w = np.ones(c) if weight is None else weight
    moved = np.moveaxis(logp, 1, -1).reshape(-1, c)
    flat = target.reshape(-1)
    losses, denom = np.zeros(len(flat)), 0.0
    for i, t in enumerate(flat):
        if t == ignore_index:
            continue
        nll = -w[t] * moved[i, t]
        uniform = -(w * moved[i]).sum() / c
        losses[i] = (1 - smoothing) * nll + smoothing * uniform
        denom += w[t]
    if reduction == "none":
        return losses.reshape(target.shape)
    return losses.sum() if reduction == "sum" else losses.sum() / denom


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_with_class_indices_matches_reference(reduction, smoothing, weighted, rng):
    logits = rng.normal(size=(4, 5, 3)) * 2
    target = rng.integers(0, 5, size=(4, 3))
    target[0, 1] = target[2, 2] = 1  # ignored below
    w = rng.uniform(0.2, 1.5, size=5) if weighted else None
    out = F.cross_entropy(
        t64(logits),
        fg.tensor(target),
        weight=t64(w) if weighted else None,
        ignore_index=1,
        reduction=reduction,
        label_smoothing=smoothing,
    )
    assert_close(out, ce_np(logits, target, w, 1, reduction, smoothing), rtol=1e-10)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_with_class_probabilities_matches_reference(reduction, rng):
    logits = rng.normal(size=(4, 3))
    probs = rng.dirichlet(np.ones(3), size=4)
    w = rng.uniform(0.5, 1.5, size=3)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    smoothed = probs * 0.9 + 0.1 / 3
    per = -(w * smoothed * logp).sum(1)
    out = F.cross_entropy(t64(logits), t64(probs), weight=t64(w), reduction=reduction, label_smoothing=0.1)
    assert_close(out, np_reduce(per, reduction), rtol=1e-10)


def test_cross_entropy_gradgradcheck_and_forward_mode(rng):
    logits = t64(rng.normal(size=(3, 4)), grad=True)
    target = fg.tensor([0, 3, 1])
    fn = lambda v: F.cross_entropy(v, target, label_smoothing=0.1)  # noqa: E731
    assert gradcheck(fn, (logits,), check_forward_ad=True)
    assert gradgradcheck(fn, (logits,))
    probs = t64(rng.dirichlet(np.ones(4), size=3))
    assert gradcheck(lambda v: F.cross_entropy(v, probs), (logits,), check_forward_ad=True)


def test_nll_and_cross_entropy_reject_bad_targets():
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(fg.zeros(3, 4), fg.tensor([0, 1, 7]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.cross_entropy(fg.zeros(3, 4), fg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(fg.zeros(3, 4), fg.zeros(3, 4), ignore_index=1)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(fg.zeros(2, 3), fg.zeros(2))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.nll_loss(fg.zeros(2, 3), fg.tensor([0, 1]), reduction="foo")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_matches_formula_and_clamps_logs(reduction, rng):
    p, y, w = rng.uniform(0.01, 0.99, size=(3, 4)), rng.uniform(size=(3, 4)), rng.uniform(size=4)
    per = -w * (y * np.log(p) + (1 - y) * np.log(1 - p))
    assert_close(
        F.binary_cross_entropy(t64(p), t64(y), t64(w), reduction=reduction), np_reduce(per, reduction)
    )
    # log(0) is clamped at -100, so a confident wrong prediction costs exactly 100.
    edge = F.binary_cross_entropy(t64([0.0, 1.0]), t64([1.0, 0.0]), reduction="none")
    assert edge.tolist() == [100.0, 100.0]
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(t64([1.5]), t64([1.0]))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(fg.zeros(3), fg.zeros(3, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_matches_stable_formula(reduction, rng):
    x = rng.normal(size=(3, 4)) * 30  # large logits must not overflow
    y, w, pw = rng.uniform(size=(3, 4)), rng.uniform(size=4), rng.uniform(0.5, 3, size=4)
    log_sig, log_one_minus = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    per = -w * (pw * y * log_sig + (1 - y) * log_one_minus)
    out = F.binary_cross_entropy_with_logits(t64(x), t64(y), t64(w), reduction=reduction, pos_weight=t64(pw))
    assert_close(out, np_reduce(per, reduction), rtol=1e-10)
    xs = t64(rng.normal(size=(3, 4)), grad=True)
    assert gradcheck(
        lambda v, yy: F.binary_cross_entropy_with_logits(v, yy, pos_weight=t64(pw)), (xs, t64(y, True))
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_matches_formula(reduction, log_target, rng):
    logq = np.log(rng.dirichlet(np.ones(5), size=3))
    p = rng.dirichlet(np.ones(5), size=3)
    p[0, 2] = 0.0  # 0 * log 0 counts as 0
    if log_target:
        target = np.log(p + 1e-3)
        per = np.exp(target) * (target - logq)
    else:
        target = p
        per = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0) - p * logq
    expected = per.sum() / 3 if reduction == "batchmean" else np_reduce(per, reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = F.kl_div(t64(logq), t64(target), reduction=reduction, log_target=log_target)
    assert_close(out, expected, rtol=1e-10)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(t64(logq), t64(target), log_target=log_target)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_and_margin_losses_match_formulas(reduction, rng):
    x, y = rng.normal(size=6), rng.uniform(0, 4, size=6)
    stirling = np.where(y > 1, y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y), 0.0)
    got = F.poisson_nll_loss(t64(x), t64(y), full=True, reduction=reduction)
    assert_close(got, np_reduce(np.exp(x) - y * x + stirling, reduction), rtol=1e-10)
    rate = np.abs(x) + 0.1
    got = F.poisson_nll_loss(t64(rate), t64(y), log_input=False, reduction=reduction)
    assert_close(got, np_reduce(rate - y * np.log(rate + 1e-8), reduction), rtol=1e-10)
    x2, sign = rng.normal(size=6), np.where(rng.normal(size=6) > 0, 1.0, -1.0)
    got = F.margin_ranking_loss(t64(x), t64(x2), t64(sign), margin=0.3, reduction=reduction)
    assert_close(got, np_reduce(np.maximum(0, -sign * (x - x2) + 0.3), reduction))
    got = F.hinge_embedding_loss(t64(x), t64(sign), margin=0.5, reduction=reduction)
    assert_close(got, np_reduce(np.where(sign == 1, x, np.maximum(0, 0.5 - x)), reduction))
    got = F.soft_margin_loss(t64(x), t64(sign), reduction=reduction)
    assert_close(got, np_reduce(np.log1p(np.exp(-sign * x)), reduction), rtol=1e-12)


def test_loss_gradients_against_finite_differences(rng):
    x = t64(away_from(rng.normal(size=(3, 4)), [0.0]), grad=True)
    y = t64(rng.normal(size=(3, 4)), grad=True)
    assert gradcheck(lambda a, b: F.mse_loss(a, b), (x, y))
    assert gradcheck(lambda a, b: F.smooth_l1_loss(a, b, beta=0.01), (x, y))
    assert gradcheck(lambda a, b: F.huber_loss(a, b, delta=0.01, reduction="sum"), (x, y))
    p = t64(rng.uniform(0.1, 0.9, size=(3, 4)), grad=True)
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b), (p, t64(rng.uniform(size=(3, 4)), True)))
    logq = t64(rng.normal(size=(3, 4)), grad=True)
    tgt = t64(rng.uniform(0.1, 1, size=(3, 4)), grad=True)
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="batchmean"), (logq, tgt))
    logp = t64(rng.normal(size=(4, 3, 2)), grad=True)
    assert gradcheck(
        lambda v: F.nll_loss(v, fg.tensor([[0, 2], [1, 1], [2, 0], [0, -100]]), t64([0.5, 1.0, 2.0])), (logp,)
    )


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------


def norm_np(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


@pytest.mark.parametrize("normalized_shape", [(5,), (4, 5)])
def test_layer_norm_matches_formula(normalized_shape, rng):
    x = rng.normal(size=(3, 4, 5))
    w, b = rng.normal(size=normalized_shape), rng.normal(size=normalized_shape)
    axes = tuple(range(3 - len(normalized_shape), 3))
    out = F.layer_norm(t64(x), normalized_shape, t64(w), t64(b), eps=1e-3)
    assert_close(out, norm_np(x, axes, 1e-3) * w + b, rtol=1e-10)
    assert_close(F.layer_norm(t64(x), normalized_shape), norm_np(x, axes, 1e-5), rtol=1e-10)


def test_layer_norm_gradgradcheck_and_forward_mode(rng):
    args = (
        t64(rng.normal(size=(2, 3, 4)), True),
        t64(rng.normal(size=4), True),
        t64(rng.normal(size=4), True),
    )
    fn = lambda x, w, b: F.layer_norm(x, (4,), w, b)  # noqa: E731
    assert gradcheck(fn, args, check_forward_ad=True)
    assert gradgradcheck(fn, args)


def test_layer_norm_rejects_mismatched_shape():
    with pytest.raises(
        RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\]"
    ):
        F.layer_norm(fg.zeros(2, 3, 4), (5,))


def test_rms_norm_matches_formula(rng):
    x, w = rng.normal(size=(3, 4)), rng.normal(size=4)
    expected = x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * w
    assert_close(F.rms_norm(t64(x), (4,), t64(w), eps=1e-6), expected, rtol=1e-10)


def test_group_norm_matches_formula_and_gradcheck(rng):
    x, w, b = rng.normal(size=(2, 6, 3, 2)), rng.normal(size=6), rng.normal(size=6)
    grouped = x.reshape(2, 3, -1)
    expected = norm_np(grouped, (2,), 1e-5).reshape(x.shape) * w[:, None, None] + b[:, None, None]
    assert_close(F.group_norm(t64(x), 3, t64(w), t64(b)), expected, rtol=1e-10)
    assert gradcheck(lambda v: F.group_norm(v, 2), (t64(x[:1, :4], True),))
    with pytest.raises(
        RuntimeError, match="Expected number of channels in input to be divisible by num_groups"
    ):
        F.group_norm(fg.zeros(2, 6, 4), 4)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 2, 3)])
def test_batch_norm_training_normalises_and_updates_running_stats(shape, rng):
    x = rng.normal(size=shape) * 2 + 1
    w, b = rng.normal(size=3), rng.normal(size=3)
    rm0, rv0 = rng.normal(size=3), rng.uniform(0.5, 2, size=3)
    rm, rv = t64(rm0), t64(rv0)
    axes = (0, *range(2, len(shape)))
    bshape = (1, 3) + (1,) * (len(shape) - 2)
    out = F.batch_norm(t64(x), rm, rv, t64(w), t64(b), training=True, momentum=0.2, eps=1e-4)
    expected = norm_np(x, axes, 1e-4) * w.reshape(bshape) + b.reshape(bshape)
    assert_close(out, expected, rtol=1e-10)
    assert_close(rm, 0.8 * rm0 + 0.2 * x.mean(axis=axes), rtol=1e-12)
    assert_close(rv, 0.8 * rv0 + 0.2 * x.var(axis=axes, ddof=1), rtol=1e-12)


def test_batch_norm_eval_uses_running_stats(rng):
    x, rm, rv = rng.normal(size=(4, 3, 2)), rng.normal(size=3), rng.uniform(0.5, 2, size=3)
    out = F.batch_norm(t64(x), t64(rm), t64(rv), training=False, eps=1e-3)
    assert_close(out, (x - rm[:, None]) / np.sqrt(rv[:, None] + 1e-3), rtol=1e-12)


def test_batch_norm_gradcheck_and_single_value_error(rng):
    args = (
        t64(rng.normal(size=(4, 3, 2)), True),
        t64(rng.normal(size=3), True),
        t64(rng.normal(size=3), True),
    )
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), args)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(fg.zeros(1, 3), None, None, training=True)


def test_instance_norm_normalises_each_plane_and_averages_running_updates(rng):
    x = rng.normal(size=(2, 3, 4, 3))
    rm, rv = t64(np.zeros(3)), t64(np.ones(3))
    out = F.instance_norm(t64(x), rm, rv, momentum=0.5)
    assert_close(out, norm_np(x, (2, 3), 1e-5), rtol=1e-10)
    assert_close(rm, 0.5 * x.mean(axis=(2, 3)).mean(0), rtol=1e-12)
    assert_close(rv, 0.5 + 0.5 * x.var(axis=(2, 3), ddof=1).mean(0), rtol=1e-12)


def test_local_response_norm_matches_loop(rng):
    x = rng.normal(size=(2, 5, 3))
    size, alpha, beta, k = 3, 0.2, 0.7, 1.5
    expected = np.empty_like(x)
    for c in range(5):
        lo, hi = max(0, c - size // 2), min(5, c + (size - 1) // 2 + 1)
        div = (k + alpha / size * (x[:, lo:hi] ** 2).sum(1)) ** beta
        expected[:, c] = x[:, c] / div
    assert_close(F.local_response_norm(t64(x), size, alpha, beta, k), expected, rtol=1e-10)


# ---------------------------------------------------------------------------
# Convolution (explicit loops as the reference)
# ---------------------------------------------------------------------------


def conv_np(x, w, b, stride, padding, dilation, groups):
    """N-d cross-correlation by looping over every output position."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, c_in = x.shape[:2]
    c_out, cg = w.shape[:2]
    kernel = w.shape[2:]
    out_sizes = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((n, c_out, *out_sizes))
    og = c_out // groups
    for o in range(c_out):
        g = o // og
        for pos in np.ndindex(*out_sizes):
            for k in np.ndindex(*kernel):
                idx = tuple(pos[i] * stride[i] + k[i] * dilation[i] for i in range(nd))
                patch = xp[(slice(None), slice(g * cg, (g + 1) * cg), *idx)]
                out[(slice(None), o, *pos)] += patch @ w[(o, slice(None), *k)]
    if b is not None:
        out += b.reshape(1, -1, *([1] * nd))
    return out


def conv_transpose_np(x, w, b, stride, padding, output_padding, groups, dilation):
    """Transposed convolution by scattering every input element through the kernel."""
    nd = x.ndim - 2
    n, c_in = x.shape[:2]
    og = w.shape[1]
    kernel = w.shape[2:]
    sizes = [
        (x.shape[2 + i] - 1) * stride[i]
        - 2 * padding[i]
        + dilation[i] * (kernel[i] - 1)
        + output_padding[i]
        + 1
        for i in range(nd)
    ]
    full = np.zeros((n, og * groups, *[s + 2 * p for s, p in zip(sizes, padding, strict=True)]))
    cg = c_in // groups
    for c in range(c_in):
        g = c // cg
        for pos in np.ndindex(*x.shape[2:]):
            for k in np.ndindex(*kernel):
                idx = tuple(pos[i] * stride[i] + k[i] * dilation[i] for i in range(nd))
                if all(idx[i] < full.shape[2 + i] for i in range(nd)):
                    full[(slice(None), slice(g * og, (g + 1) * og), *idx)] += (
                        x[(slice(None), c, *pos)][:, None] * w[(c, slice(None), *k)][None]
                    )
    crop = tuple(slice(p, p + s) for p, s in zip(padding, sizes, strict=True))
    out = full[(slice(None), slice(None), *crop)]
    if b is not None:
        out = out + b.reshape(1, -1, *([1] * nd))
    return out


CONV2D_CASES = [
    # (x shape, w shape, stride, padding, dilation, groups)
    ((2, 3, 6, 5), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((1, 4, 7, 6), (6, 2, 3, 2), (2, 1), (1, 2), (1, 2), 2),
    ((2, 4, 5, 5), (4, 1, 2, 2), (1, 2), (1, 1), (2, 1), 4),
    ((1, 2, 4, 4), (3, 2, 1, 1), (3, 3), (0, 0), (1, 1), 1),
]


@pytest.mark.parametrize(("xs", "ws", "stride", "padding", "dilation", "groups"), CONV2D_CASES)
def test_conv2d_matches_loop_reference(xs, ws, stride, padding, dilation, groups, rng):
    x, w, b = rng.normal(size=xs), rng.normal(size=ws), rng.normal(size=ws[0])
    out = F.conv2d(t64(x), t64(w), t64(b), stride, padding, dilation, groups)
    assert_close(out, conv_np(x, w, b, stride, padding, dilation, groups), rtol=1e-10, atol=1e-12)


def test_conv2d_same_and_valid_padding_strings(rng):
    x, w = rng.normal(size=(1, 2, 5, 6)), rng.normal(size=(3, 2, 4, 3))
    same = F.conv2d(t64(x), t64(w), padding="same", dilation=(1, 2))
    assert tuple(same.shape) == (1, 3, 5, 6)
    # 'same' pads d*(k-1) in total, the extra cell on the right/bottom.
    xp = np.pad(x, [(0, 0), (0, 0), (1, 2), (2, 2)])
    assert_close(same, conv_np(xp, w, None, (1, 1), (0, 0), (1, 2), 1), rtol=1e-10, atol=1e-12)
    valid = F.conv2d(t64(x), t64(w), padding="valid")
    assert_close(valid, conv_np(x, w, None, (1, 1), (0, 0), (1, 1), 1), rtol=1e-10, atol=1e-12)


def test_conv1d_conv3d_and_unbatched_inputs_match_loops(rng):
    x, w, b = rng.normal(size=(2, 4, 9)), rng.normal(size=(6, 2, 3)), rng.normal(size=6)
    got = F.conv1d(t64(x), t64(w), t64(b), stride=2, padding=1, dilation=2, groups=2)
    assert_close(got, conv_np(x, w, b, (2,), (1,), (2,), 2), rtol=1e-10, atol=1e-12)
    unbatched = F.conv1d(t64(x[0]), t64(w), t64(b), stride=2, padding=1, dilation=2, groups=2)
    assert_close(unbatched, to_np(got)[0])
    x3, w3 = rng.normal(size=(1, 2, 3, 4, 3)), rng.normal(size=(2, 2, 2, 2, 2))
    got3 = F.conv3d(t64(x3), t64(w3), stride=(1, 2, 1), padding=1)
    assert_close(got3, conv_np(x3, w3, None, (1, 2, 1), (1, 1, 1), (1, 1, 1), 1), rtol=1e-10, atol=1e-12)


def test_conv2d_gradgradcheck_and_forward_mode(rng):
    x = t64(rng.normal(size=(1, 2, 4, 4)), True)
    w = t64(rng.normal(size=(2, 1, 2, 2)), True)
    b = t64(rng.normal(size=2), True)
    fn = lambda a, ww, bb: F.conv2d(a, ww, bb, stride=(2, 1), padding=1, dilation=(1, 2), groups=2)  # noqa: E731
    assert gradcheck(fn, (x, w, b), check_forward_ad=True)
    assert gradgradcheck(fn, (x, w, b))


def test_conv2d_forward_mode_tangent_is_linear_in_input_tangent(rng):
    # conv is linear in x, so the tangent of conv(x + eps*t) is conv(t) exactly.
    x, w, tx = rng.normal(size=(1, 2, 5, 5)), rng.normal(size=(3, 2, 3, 3)), rng.normal(size=(1, 2, 5, 5))
    with fwAD.dual_level():
        dual = fwAD.make_dual(t64(x), t64(tx))
        tangent = fwAD.unpack_dual(F.conv2d(dual, t64(w), padding=1)).tangent
    assert_close(tangent, conv_np(tx, w, None, (1, 1), (1, 1), (1, 1), 1), rtol=1e-10, atol=1e-12)


CONVT_CASES = [
    # (x shape, w shape, stride, padding, output_padding, groups, dilation)
    ((2, 3, 3, 4), (3, 2, 3, 3), (1, 1), (0, 0), (0, 0), 1, (1, 1)),
    ((1, 4, 3, 3), (4, 3, 3, 2), (2, 3), (1, 0), (1, 2), 2, (1, 2)),
    ((1, 2, 4, 3), (2, 1, 2, 2), (2, 2), (1, 1), (0, 1), 1, (2, 1)),
]


@pytest.mark.parametrize(
    ("xs", "ws", "stride", "padding", "output_padding", "groups", "dilation"), CONVT_CASES
)
def test_conv_transpose2d_matches_scatter_reference(
    xs, ws, stride, padding, output_padding, groups, dilation, rng
):
    x, w, b = rng.normal(size=xs), rng.normal(size=ws), rng.normal(size=ws[1] * groups)
    out = F.conv_transpose2d(t64(x), t64(w), t64(b), stride, padding, output_padding, groups, dilation)
    expected = conv_transpose_np(x, w, b, stride, padding, output_padding, groups, dilation)
    assert_close(out, expected, rtol=1e-10, atol=1e-12)


def test_conv_transpose_is_the_adjoint_of_conv(rng):
    # <conv(x), y> == <x, conv_transpose(y)> for matching stride/padding/dilation.
    x, w = rng.normal(size=(1, 3, 7, 6)), rng.normal(size=(4, 3, 3, 2))
    y_shape = tuple(F.conv2d(t64(x), t64(w), stride=2, padding=1, dilation=(1, 2)).shape)
    y = rng.normal(size=y_shape)
    lhs = (to_np(F.conv2d(t64(x), t64(w), stride=2, padding=1, dilation=(1, 2))) * y).sum()
    back = F.conv_transpose2d(t64(y), t64(w), stride=2, padding=1, dilation=(1, 2), output_padding=(0, 1))
    assert tuple(back.shape) == x.shape
    assert lhs == pytest.approx((to_np(back) * x).sum(), rel=1e-10)


def test_conv_transpose_gradcheck(rng):
    args = (t64(rng.normal(size=(1, 2, 3, 2)), True), t64(rng.normal(size=(2, 2, 2, 2)), True))
    assert gradcheck(lambda a, w: F.conv_transpose2d(a, w, stride=2, padding=1, output_padding=1), args)
    args1 = (t64(rng.normal(size=(1, 2, 4)), True), t64(rng.normal(size=(2, 1, 3)), True))
    assert gradcheck(lambda a, w: F.conv_transpose1d(a, w, stride=2, groups=2), args1)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda: F.conv2d(fg.zeros(1, 2, 5, 5), fg.zeros(4, 3, 3, 3)),
            RuntimeError,
            "to have 3 channels, but got 2",
        ),
        (
            lambda: F.conv2d(fg.zeros(2, 3), fg.zeros(4, 3, 3, 3)),
            RuntimeError,
            r"Expected 3D \(unbatched\) or 4D",
        ),
        (
            lambda: F.conv2d(fg.zeros(1, 3, 2, 2), fg.zeros(4, 3, 3, 3)),
            RuntimeError,
            "Kernel size can't be greater",
        ),
        (
            lambda: F.conv2d(fg.zeros(1, 3, 5, 5), fg.zeros(4, 3, 3, 3), stride=2, padding="same"),
            RuntimeError,
            "padding='same' is not supported for strided convolutions",
        ),
        (
            lambda: F.conv2d(fg.zeros(1, 3, 5, 5), fg.zeros(4, 3, 3, 3), padding="foo"),
            RuntimeError,
            "Invalid padding",
        ),
        (
            lambda: F.conv2d(fg.zeros(1, 4, 5, 5), fg.zeros(3, 2, 3, 3), groups=2),
            RuntimeError,
            "expected weight to be divisible by 2 at dimension 0",
        ),
        (
            lambda: F.conv_transpose2d(fg.zeros(1, 3, 5, 5), fg.zeros(3, 2, 3, 3), output_padding=1),
            RuntimeError,
            "output padding must be smaller than either stride or dilation",
        ),
    ],
)
def test_conv_rejects_bad_arguments(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------------------
# Pooling, unfold/fold, interpolate (loops as the reference)
# ---------------------------------------------------------------------------


def pool_out_size(size, k, s, p, d, ceil):
    span = size + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


def max_pool2d_np(x, k, s, p, d, ceil):
    n, c, h, w = x.shape
    oh, ow = (pool_out_size(sz, k[i], s[i], p[i], d[i], ceil) for i, sz in enumerate((h, w)))
    out, idx = np.full((n, c, oh, ow), -np.inf), np.zeros((n, c, oh, ow), dtype=np.int64)
    for i, j in np.ndindex(oh, ow):
        for a, b in np.ndindex(*k):
            r, q = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + b * d[1]
            if 0 <= r < h and 0 <= q < w:
                better = x[:, :, r, q] > out[:, :, i, j]
                out[:, :, i, j] = np.where(better, x[:, :, r, q], out[:, :, i, j])
                idx[:, :, i, j] = np.where(better, r * w + q, idx[:, :, i, j])
    return out, idx


@pytest.mark.parametrize(
    ("k", "s", "p", "d", "ceil"),
    [
        ((2, 2), (2, 2), (0, 0), (1, 1), False),
        ((3, 2), (2, 1), (1, 1), (1, 2), False),
        ((3, 3), (2, 2), (1, 0), (1, 1), True),
    ],
)
def test_max_pool2d_values_and_indices_match_loops(k, s, p, d, ceil, rng):
    x = rng.normal(size=(2, 3, 7, 6))
    values, indices = F.max_pool2d(t64(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    ref_values, ref_indices = max_pool2d_np(x, k, s, p, d, ceil)
    assert_close(values, ref_values)
    assert_close(indices, ref_indices)


def test_max_pool2d_gradient_goes_to_the_max_and_default_stride_is_kernel(rng):
    x = rng.normal(size=(1, 2, 4, 6))
    leaf = t64(x, True)
    out = F.max_pool2d(leaf, (2, 3))
    assert tuple(out.shape) == (1, 2, 2, 2)
    out.sum().backward()
    _, idx = max_pool2d_np(x, (2, 3), (2, 3), (0, 0), (1, 1), False)
    expected = np.zeros(x.shape).reshape(1, 2, -1)
    for c in range(2):
        expected[0, c, idx[0, c].reshape(-1)] = 1.0
    assert_close(leaf.grad, expected.reshape(x.shape))
    assert gradcheck(lambda v: F.max_pool2d(v, 3, 2, 1, ceil_mode=True), (t64(x, True),))


def test_max_pool1d_matches_loop(rng):
    x = rng.normal(size=(2, 3, 9))
    values, indices = F.max_pool1d(t64(x), 3, 2, 1, ceil_mode=True, return_indices=True)
    ref_v, ref_i = max_pool2d_np(x[:, :, None, :], (1, 3), (1, 2), (0, 1), (1, 1), True)
    assert_close(values, ref_v[:, :, 0])
    assert_close(indices, ref_i[:, :, 0])


def avg_pool2d_np(x, k, s, p, ceil, count_include_pad, divisor_override=None):
    n, c, h, w = x.shape
    oh, ow = (pool_out_size(sz, k[i], s[i], p[i], 1, ceil) for i, sz in enumerate((h, w)))
    out = np.zeros((n, c, oh, ow))
    for i, j in np.ndindex(oh, ow):
        r0, q0 = i * s[0] - p[0], j * s[1] - p[1]
        r1, q1 = min(r0 + k[0], h + p[0]), min(q0 + k[1], w + p[1])
        padded_count = (r1 - r0) * (q1 - q0)
        rr0, qq0, rr1, qq1 = max(r0, 0), max(q0, 0), min(r1, h), min(q1, w)
        total = x[:, :, rr0:rr1, qq0:qq1].sum(axis=(2, 3))
        if divisor_override:
            div = divisor_override
        elif count_include_pad:
            div = padded_count
        else:
            div = (rr1 - rr0) * (qq1 - qq0)
        out[:, :, i, j] = total / div
    return out


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize(
    ("k", "s", "p", "ceil"), [((2, 2), (2, 2), (0, 0), False), ((3, 2), (2, 1), (1, 1), True)]
)
def test_avg_pool2d_matches_loops(count_include_pad, k, s, p, ceil, rng):
    x = rng.normal(size=(2, 3, 7, 6))
    out = F.avg_pool2d(t64(x), k, s, p, ceil_mode=ceil, count_include_pad=count_include_pad)
    assert_close(out, avg_pool2d_np(x, k, s, p, ceil, count_include_pad), rtol=1e-12)


def test_avg_pool_divisor_override_and_1d_form(rng):
    x = rng.normal(size=(1, 2, 5, 6))
    got = F.avg_pool2d(t64(x), (2, 3), padding=1, divisor_override=4)
    assert_close(got, avg_pool2d_np(x, (2, 3), (2, 3), (1, 1), False, True, 4), rtol=1e-12)
    x1 = rng.normal(size=(2, 3, 8))
    got1 = F.avg_pool1d(t64(x1), 3, 2, 1, True, False)
    ref1 = avg_pool2d_np(x1[:, :, None], (1, 3), (1, 2), (0, 1), True, False)[:, :, 0]
    assert_close(got1, ref1, rtol=1e-12)
    assert gradcheck(
        lambda v: F.avg_pool2d(v, 3, 2, 1, ceil_mode=True, count_include_pad=False), (t64(x, True),)
    )


def test_pool_rejects_oversized_padding_and_bad_rank():
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(fg.zeros(1, 3, 5, 5), 3, padding=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.avg_pool2d(fg.zeros(1, 3, 5, 5), 3, padding=2)
    with pytest.raises(RuntimeError, match=r"non-empty 3D or 4D \(batch mode\) tensor expected for input"):
        F.max_pool2d(fg.zeros(3, 5), 3)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool2d(fg.zeros(1, 1, 2, 2), 3)


def adaptive_np(x, out_hw, reducer):
    h, w = x.shape[-2:]
    oh, ow = out_hw
    out = np.zeros((*x.shape[:-2], oh, ow))
    for i, j in np.ndindex(oh, ow):
        r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        q0, q1 = (j * w) // ow, -(-((j + 1) * w) // ow)
        out[..., i, j] = reducer(x[..., r0:r1, q0:q1], axis=(-2, -1))
    return out


@pytest.mark.parametrize("out_hw", [(3, 4), (1, 1), (7, 6), (4, 5)])
def test_adaptive_pools_match_loops(out_hw, rng):
    x = rng.normal(size=(2, 3, 7, 6))
    assert_close(F.adaptive_avg_pool2d(t64(x), out_hw), adaptive_np(x, out_hw, np.mean), rtol=1e-12)
    values, indices = F.adaptive_max_pool2d(t64(x), out_hw, return_indices=True)
    assert_close(values, adaptive_np(x, out_hw, np.max))
    flat = x.reshape(2, 3, -1)
    assert_close(
        fg.tensor(np.take_along_axis(flat, to_np(indices).reshape(2, 3, -1), 2)),
        to_np(values).reshape(2, 3, -1),
    )


def test_adaptive_pool_gradcheck(rng):
    x = t64(rng.normal(size=(1, 2, 5, 4)), True)
    assert gradcheck(lambda v: F.adaptive_avg_pool2d(v, (3, 3)), (x,))
    assert gradcheck(lambda v: F.adaptive_max_pool2d(v, (2, 3)), (x,))


def unfold_np(x, k, d, p, s):
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])])
    n, c = x.shape[:2]
    oh = (xp.shape[2] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow))
    for a, b, i, j in np.ndindex(k[0], k[1], oh, ow):
        cols[:, :, a, b, i, j] = xp[:, :, i * s[0] + a * d[0], j * s[1] + b * d[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def test_unfold_matches_loops_and_fold_is_its_adjoint(rng):
    x = rng.normal(size=(2, 3, 5, 6))
    k, d, p, s = (2, 3), (2, 1), (1, 1), (1, 2)
    cols = F.unfold(t64(x), k, d, p, s)
    assert_close(cols, unfold_np(x, k, d, p, s))
    y = rng.normal(size=tuple(cols.shape))
    folded = F.fold(t64(y), (5, 6), k, d, p, s)
    assert tuple(folded.shape) == x.shape
    assert (to_np(cols) * y).sum() == pytest.approx((to_np(folded) * x).sum(), rel=1e-10)
    assert gradcheck(lambda v: F.fold(v, (3, 3), 2), (t64(rng.normal(size=(1, 8, 4)), True),))
    assert gradcheck(lambda v: F.unfold(v, 2, padding=1), (t64(rng.normal(size=(1, 2, 3, 3)), True),))


def test_fold_sums_overlapping_blocks():
    out = F.fold(fg.ones(1, 4, 4), (3, 3), 2)[0, 0]
    counts = np.zeros((3, 3))
    for i, j in np.ndindex(2, 2):
        counts[i : i + 2, j : j + 2] += 1
    assert_close(out, counts.astype(np.float32))


def bilinear_np(x, oh, ow, align_corners):
    h, w = x.shape[-2:]

    def coords(o, size):
        if align_corners:
            src = np.arange(o) * ((size - 1) / (o - 1) if o > 1 else 0.0)
        else:
            src = np.maximum((np.arange(o) + 0.5) * size / o - 0.5, 0)
        i0 = np.minimum(np.floor(src).astype(int), size - 1)
        return i0, np.minimum(i0 + 1, size - 1), src - i0

    r0, r1, lr = coords(oh, h)
    c0, c1, lc = coords(ow, w)
    top = x[..., r0, :][..., c0] * (1 - lc) + x[..., r0, :][..., c1] * lc
    bottom = x[..., r1, :][..., c0] * (1 - lc) + x[..., r1, :][..., c1] * lc
    return top * (1 - lr)[:, None] + bottom * lr[:, None]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(5, 9), (2, 3)])
def test_interpolate_bilinear_matches_formula(align_corners, size, rng):
    x = rng.normal(size=(2, 3, 4, 6))
    out = F.interpolate(t64(x), size=size, mode="bilinear", align_corners=align_corners)
    assert_close(out, bilinear_np(x, *size, align_corners), rtol=1e-12)


def test_interpolate_nearest_picks_floor_of_scaled_index(rng):
    x = rng.normal(size=(1, 2, 3, 5))
    out = F.interpolate(t64(x), size=(7, 4), mode="nearest")
    rows = np.floor(np.arange(7) * 3 / 7).astype(int)
    cols = np.floor(np.arange(4) * 5 / 4).astype(int)
    assert_close(out, x[:, :, rows][:, :, :, cols])
    doubled = F.interpolate(t64(x), scale_factor=2)
    assert_close(doubled, x.repeat(2, axis=2).repeat(2, axis=3))
    assert gradcheck(lambda v: F.interpolate(v, size=(4, 7), mode="bilinear"), (t64(x, True),))


# ---------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------


def sdpa_np(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    return np_softmax(scores, -1) @ v


def test_scaled_dot_product_attention_matches_formula(rng):
    q, k, v = rng.normal(size=(2, 3, 6, 4)), rng.normal(size=(2, 3, 5, 4)), rng.normal(size=(2, 3, 5, 2))
    float_mask = rng.normal(size=(6, 5))
    got = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=t64(float_mask))
    assert_close(got, sdpa_np(q, k, v, float_mask), rtol=1e-10)
    bool_mask = rng.uniform(size=(6, 5)) > 0.3
    bool_mask[:, 0] = True
    got = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=fg.tensor(bool_mask), scale=0.7)
    assert_close(got, sdpa_np(q, k, v, bool_mask, scale=0.7), rtol=1e-10)
    k6, v6 = rng.normal(size=(2, 3, 6, 4)), rng.normal(size=(2, 3, 6, 2))
    got = F.scaled_dot_product_attention(t64(q), t64(k6), t64(v6), is_causal=True)
    assert_close(got, sdpa_np(q, k6, v6, causal=True), rtol=1e-10)


def test_sdpa_grouped_query_attention_repeats_key_value_heads(rng):
    q, k, v = rng.normal(size=(1, 4, 3, 2)), rng.normal(size=(1, 2, 3, 2)), rng.normal(size=(1, 2, 3, 2))
    got = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), enable_gqa=True)
    assert_close(got, sdpa_np(q, np.repeat(k, 2, axis=1), np.repeat(v, 2, axis=1)), rtol=1e-10)


def test_sdpa_gradcheck_and_mask_with_causal_error(rng):
    args = tuple(t64(rng.normal(size=(1, 3, 2)), True) for _ in range(3))
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), args)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(*args, attn_mask=fg.ones(3, 3, dtype=fg.bool), is_causal=True)


# ---------------------------------------------------------------------------
# Further activations, dropouts, losses and layers
# ---------------------------------------------------------------------------


def test_shrink_activations_match_numpy(rng):
    a = away_from(rng.uniform(-2, 2, size=(4, 5)), [-0.4, 0.4])
    assert_close(F.hardshrink(t64(a), 0.4), np.where(np.abs(a) > 0.4, a, 0.0))
    assert_close(F.softshrink(t64(a), 0.4), np.where(a > 0.4, a - 0.4, np.where(a < -0.4, a + 0.4, 0.0)))
    assert_close(F.tanhshrink(t64(a)), a - np.tanh(a), rtol=1e-12)
    assert gradcheck(lambda v: F.softshrink(v, 0.4), (t64(a, True),))
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(t64(a), -1.0)


def test_rrelu_uses_mean_slope_in_eval_and_bounded_random_slopes_in_training(rng):
    a = away_from(rng.uniform(-2, 2, size=(50, 40)), [0.0])
    assert_close(F.rrelu(t64(a), 0.1, 0.3), np.where(a > 0, a, 0.2 * a), rtol=1e-12)
    fg.manual_seed(0)
    out = to_np(F.rrelu(t64(a), 0.1, 0.3, training=True))
    slopes = out[a < 0] / a[a < 0]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    np.testing.assert_array_equal(out[a > 0], a[a > 0])


def test_alpha_dropout_keeps_zero_mean_unit_variance():
    fg.manual_seed(2)
    x = fg.randn(400_000, dtype=fg.float64)
    values = to_np(F.alpha_dropout(x, 0.2, training=True))
    assert abs(values.mean()) < 0.01 and abs(values.std() - 1.0) < 0.01
    # Dropped units all take the same value a * (-alpha) + b.
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha**2 * 0.2 + 1) * 0.8)
    dropped = -alpha * a + alpha * a * 0.2
    assert abs((np.isclose(values, dropped)).mean() - 0.2) < 0.005
    assert F.alpha_dropout(x, 0.2) is x  # training defaults to False


def test_pixel_shuffle_and_unshuffle_are_inverse_rearrangements(rng):
    a = rng.normal(size=(2, 8, 3, 2))
    out = F.pixel_shuffle(t64(a), 2)
    expected = a.reshape(2, 2, 2, 2, 3, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 6, 4)
    assert_close(out, expected)
    assert_close(F.pixel_unshuffle(out, 2), a)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(fg.zeros(1, 3, 2, 2), 2)
    shuffled = F.channel_shuffle(t64(a), 2)
    assert_close(shuffled, a.reshape(2, 2, 4, 3, 2).transpose(0, 2, 1, 3, 4).reshape(a.shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_embedding_and_ranking_losses_match_formulas(reduction, rng):
    x1, x2, x3 = rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    y = np.where(rng.normal(size=5) > 0, 1.0, -1.0)
    cos = (x1 * x2).sum(1) / np.sqrt(((x1**2).sum(1) + 1e-12) * ((x2**2).sum(1) + 1e-12))
    per = np.where(y == 1, 1 - cos, np.maximum(cos - 0.2, 0))
    got = F.cosine_embedding_loss(t64(x1), t64(x2), t64(y), margin=0.2, reduction=reduction)
    assert_close(got, np_reduce(per, reduction), rtol=1e-12)
    dist = lambda u, v: (np.abs(u - v + 1e-6) ** 1.5).sum(-1) ** (1 / 1.5)  # noqa: E731
    per = np.maximum(2.0 + dist(x1, x2) - np.minimum(dist(x1, x3), dist(x2, x3)), 0)
    got = F.triplet_margin_loss(t64(x1), t64(x2), t64(x3), margin=2.0, p=1.5, swap=True, reduction=reduction)
    assert_close(got, np_reduce(per, reduction), rtol=1e-10)
    l1 = lambda u, v: (u - v).abs().sum(-1)  # noqa: E731
    got = F.triplet_margin_with_distance_loss(
        t64(x1), t64(x2), t64(x3), distance_function=l1, reduction=reduction
    )
    per = np.maximum(1.0 + np.abs(x1 - x2).sum(-1) - np.abs(x1 - x3).sum(-1), 0)
    assert_close(got, np_reduce(per, reduction), rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gaussian_multilabel_and_multi_margin_losses_match_formulas(reduction, rng):
    x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    var = rng.uniform(0, 2, size=5)
    v = np.maximum(var, 0.1)[:, None]
    per = 0.5 * (np.log(v) + (x - y) ** 2 / v) + 0.5 * np.log(2 * np.pi)
    got = F.gaussian_nll_loss(t64(x), t64(y), t64(var), full=True, eps=0.1, reduction=reduction)
    assert_close(got, np_reduce(per, reduction), rtol=1e-12)
    labels, w = (rng.uniform(size=(5, 4)) > 0.5).astype(float), rng.uniform(size=4)
    per = -(w * (labels * -np.logaddexp(0, -x) + (1 - labels) * -np.logaddexp(0, x))).mean(1)
    got = F.multilabel_soft_margin_loss(t64(x), t64(labels), weight=t64(w), reduction=reduction)
    assert_close(got, np_reduce(per, reduction), rtol=1e-12)
    target = np.array([0, 3, 2, 1, 1])
    per = np.zeros(5)
    for n in range(5):
        for i in range(4):
            if i != target[n]:
                per[n] += w[target[n]] * max(0.0, 0.7 - x[n, target[n]] + x[n, i]) ** 2 / 4
    got = F.multi_margin_loss(t64(x), fg.tensor(target), p=2, margin=0.7, weight=t64(w), reduction=reduction)
    assert_close(got, np_reduce(per, reduction), rtol=1e-12)


def test_gaussian_nll_rejects_bad_variance():
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(fg.zeros(3, 2), fg.zeros(3, 2), fg.ones(4))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(fg.zeros(3, 2), fg.zeros(3, 2), -fg.ones(3, 2))


def test_lp_pool_and_max_unpool_match_loops(rng):
    x = rng.uniform(0.1, 2, size=(2, 3, 6, 4))
    expected = np.zeros((2, 3, 3, 2))
    for i, j in np.ndindex(3, 2):
        expected[:, :, i, j] = ((x[:, :, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2] ** 3).sum(axis=(2, 3))) ** (
            1 / 3
        )
    assert_close(F.lp_pool2d(t64(x), 3, 2), expected, rtol=1e-10)
    values, idx = F.max_pool2d(t64(x), 2, return_indices=True)
    restored = to_np(F.max_unpool2d(values, idx, 2))
    ref = np.zeros_like(x).reshape(2, 3, -1)
    np.put_along_axis(ref, to_np(idx).reshape(2, 3, -1), to_np(values).reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(restored, ref.reshape(x.shape))
    assert gradcheck(lambda v: F.max_unpool2d(v, idx, 2), (t64(to_np(values), True),))


def test_3d_pooling_and_transposed_convolution_match_loops(rng):
    x = rng.normal(size=(1, 2, 3, 4, 3))
    got = F.avg_pool3d(t64(x), 2, stride=1)
    expected = np.zeros((1, 2, 2, 3, 2))
    for i, j, k in np.ndindex(2, 3, 2):
        expected[:, :, i, j, k] = x[:, :, i : i + 2, j : j + 2, k : k + 2].mean(axis=(2, 3, 4))
    assert_close(got, expected, rtol=1e-12)
    got_max = F.max_pool3d(t64(x), 2, stride=1)
    for i, j, k in np.ndindex(2, 3, 2):
        expected[:, :, i, j, k] = x[:, :, i : i + 2, j : j + 2, k : k + 2].max(axis=(2, 3, 4))
    assert_close(got_max, expected)
    w = rng.normal(size=(2, 3, 2, 2, 2))
    out = F.conv_transpose3d(t64(x), t64(w), stride=2, padding=1)
    ref = conv_transpose_np(x, w, None, (2, 2, 2), (1, 1, 1), (0, 0, 0), 1, (1, 1, 1))
    assert_close(out, ref, rtol=1e-10, atol=1e-12)


def test_conv_and_pool_accept_strided_inputs(rng):
    x = rng.normal(size=(2, 3, 5, 6))
    w = rng.normal(size=(4, 3, 2, 3))
    for _, tensor, arr in cases(x):
        got = F.conv2d(tensor, t64(w), stride=(1, 2), padding=(1, 0))
        assert_close(got, conv_np(arr, w, None, (1, 2), (1, 0), (1, 1), 1), rtol=1e-10, atol=1e-12)
        ref_pool, _ = max_pool2d_np(arr, (2, 2), (1, 2), (1, 0), (1, 1), False)
        assert_close(F.max_pool2d(tensor, 2, (1, 2), (1, 0)), ref_pool)


def test_pooling_accepts_an_empty_batch_but_not_empty_channels():
    assert tuple(F.max_pool2d(fg.zeros(0, 3, 5, 5), 2).shape) == (0, 3, 2, 2)
    assert tuple(F.avg_pool2d(fg.zeros(0, 3, 5, 5), 2).shape) == (0, 3, 2, 2)
    assert tuple(F.conv2d(fg.zeros(0, 3, 5, 5), fg.zeros(4, 3, 3, 3)).shape) == (0, 4, 3, 3)
    with pytest.raises(RuntimeError, match="non-empty 3D or 4D"):
        F.max_pool2d(fg.zeros(1, 0, 5, 5), 2)
