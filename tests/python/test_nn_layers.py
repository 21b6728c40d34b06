"""The layer classes of ferrograd.nn: forward passes against NumPy references
written here, parameter names and default initialisation, running statistics,
train/eval behaviour, reprs in torch's format and constructor errors."""

import math

import ferrograd as torch
import numpy as np
import pytest
from ferrograd import nn
from ferrograd.autograd import gradcheck
from numpy_oracle import close, npy

RNG = np.random.default_rng(1234)


def randn(*shape, dtype=torch.float64):
    return torch.tensor(RNG.standard_normal(shape), dtype=dtype)


# ---------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------


def np_conv2d(x, w, b, stride=(1, 1), dilation=(1, 1), groups=1):
    """Direct cross-correlation over an already padded (N, C, H, W) input."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    per = o // groups
    for oc in range(o):
        g = oc // per
        xs = x[:, g * cg : (g + 1) * cg]
        for i in range(oh):
            for j in range(ow):
                patch = xs[
                    :, :, i * sh : i * sh + dh * (kh - 1) + 1 : dh, j * sw : j * sw + dw * (kw - 1) + 1 : dw
                ]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


def np_layer_norm(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def np_softmax(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def np_mha(q, k, v, w_in, b_in, w_out, b_out, heads, add_mask=None):
    """Sequence-first (L, N, E) multi-head attention; add_mask is (N, heads, L, S) or None.
    Returns the output and the per-head weights (N, heads, L, S)."""
    e = q.shape[-1]
    hd = e // heads
    qp = q @ w_in[:e].T + b_in[:e]
    kp = k @ w_in[e : 2 * e].T + b_in[e : 2 * e]
    vp = v @ w_in[2 * e :].T + b_in[2 * e :]

    def split(t):  # (L, N, E) -> (N, heads, L, hd)
        return t.reshape(t.shape[0], t.shape[1], heads, hd).transpose(1, 2, 0, 3)

    qh, kh, vh = split(qp), split(kp), split(vp)
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(hd)
    if add_mask is not None:
        scores = scores + add_mask
    weights = np_softmax(scores)
    ctx = weights @ vh  # (N, heads, L, hd)
    ctx = ctx.transpose(2, 0, 1, 3).reshape(q.shape[0], q.shape[1], e)
    return ctx @ w_out.T + b_out, weights


def mha_params(m):
    return (
        npy(m.in_proj_weight),
        npy(m.in_proj_bias),
        npy(m.out_proj.weight),
        npy(m.out_proj.bias),
    )


# ---------------------------------------------------------------------------
# Linear, Bilinear, Identity
# ---------------------------------------------------------------------------


def test_linear_forward_is_x_wt_plus_b_and_parameters_are_named_as_torch():
    m = nn.Linear(5, 3).double()
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [("weight", (3, 5)), ("bias", (3,))]
    x = randn(4, 5)
    close(m(x), npy(x) @ npy(m.weight).T + npy(m.bias))
    m2 = nn.Linear(5, 3, bias=False)
    assert m2.bias is None and list(m2.state_dict()) == ["weight"]


def test_linear_and_conv_default_init_lie_in_fan_in_bounds_with_uniform_spread():
    torch.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w = npy(lin.weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    # U(-a, a) has standard deviation a / sqrt(3).
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.abs(npy(lin.bias)).max() <= bound
    conv = nn.Conv2d(6, 8, (3, 5), groups=2)
    fan_in = 3 * 3 * 5
    assert np.abs(npy(conv.weight)).max() <= 1 / math.sqrt(fan_in)
    # A transposed conv's weight is (in, out / groups, k): fan_in reads dimension 1.
    convt = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(convt.weight.shape) == (4, 3, 3, 3)
    assert np.abs(npy(convt.bias)).max() <= 1 / math.sqrt(3 * 9)


def test_default_init_uses_the_same_draws_as_the_init_functions_in_order():
    torch.manual_seed(5)
    lin = nn.Linear(4, 3)
    torch.manual_seed(5)
    w = nn.init.kaiming_uniform_(torch.empty(3, 4), a=math.sqrt(5))
    b = nn.init.uniform_(torch.empty(3), -0.5, 0.5)
    assert torch.equal(lin.weight.detach(), w) and torch.equal(lin.bias.detach(), b)
    # MultiheadAttention draws out_proj (as a Linear) first, then xavier for in_proj_weight.
    torch.manual_seed(9)
    mha = nn.MultiheadAttention(4, 2)
    torch.manual_seed(9)
    ow = nn.init.kaiming_uniform_(torch.empty(4, 4), a=math.sqrt(5))
    nn.init.uniform_(torch.empty(4), -0.5, 0.5)
    iw = nn.init.xavier_uniform_(torch.empty(12, 4))
    assert torch.equal(mha.out_proj.weight.detach(), ow)
    assert torch.equal(mha.in_proj_weight.detach(), iw)
    assert not mha.in_proj_bias.detach().any() and not mha.out_proj.bias.detach().any()


def test_bilinear_forward_matches_einsum():
    m = nn.Bilinear(3, 4, 2).double()
    x1, x2 = randn(5, 3), randn(5, 4)
    ref = np.einsum("ni,oij,nj->no", npy(x1), npy(m.weight), npy(x2)) + npy(m.bias)
    close(m(x1, x2), ref)
    assert np.abs(npy(m.weight)).max() <= 1 / math.sqrt(3)


def test_identity_ignores_arguments_and_returns_input():
    x = randn(2, 3)
    assert nn.Identity(54, unused="x")(x) is x


def test_lazy_linear_sizes_itself_on_first_call():
    m = nn.LazyLinear(3)
    y = m(randn(2, 7, dtype=torch.float32))
    assert tuple(y.shape) == (2, 3) and tuple(m.weight.shape) == (3, 7)
    assert type(m) is nn.Linear and m.in_features == 7


# ---------------------------------------------------------------------------
# Convolutions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode,np_mode",
    [("zeros", "constant"), ("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")],
)
def test_conv2d_padding_modes_match_numpy_padding_then_correlation(mode, np_mode):
    m = nn.Conv2d(4, 6, (3, 2), padding=(2, 1), padding_mode=mode, groups=2, stride=(2, 1)).double()
    x = randn(2, 4, 6, 5)
    xp = np.pad(npy(x), ((0, 0), (0, 0), (2, 2), (1, 1)), mode=np_mode)
    close(m(x), np_conv2d(xp, npy(m.weight), npy(m.bias), stride=(2, 1), groups=2), 1e-9)


def test_conv2d_same_padding_keeps_spatial_size_with_asymmetric_split():
    m = nn.Conv2d(2, 3, (4, 3), padding="same", dilation=(1, 2)).double()
    x = randn(1, 2, 6, 7)
    y = m(x)
    assert tuple(y.shape) == (1, 3, 6, 7)
    # total padding d * (k - 1): rows 3 -> (1, 2), cols 4 -> (2, 2)
    xp = np.pad(npy(x), ((0, 0), (0, 0), (1, 2), (2, 2)))
    close(y, np_conv2d(xp, npy(m.weight), npy(m.bias), dilation=(1, 2)), 1e-9)
    valid = nn.Conv2d(2, 3, 3, padding="valid")
    assert tuple(valid(randn(1, 2, 6, 7, dtype=torch.float32)).shape) == (1, 3, 4, 5)


def test_conv1d_matches_numpy_and_accepts_unbatched_input():
    m = nn.Conv1d(3, 4, 3, stride=2, padding=1).double()
    x = randn(2, 3, 9)
    xp = np.pad(npy(x), ((0, 0), (0, 0), (1, 1)))[:, :, None, :]
    w = npy(m.weight)[:, :, None, :]
    close(m(x), np_conv2d(xp, w, npy(m.bias), stride=(1, 2))[:, :, 0, :], 1e-9)
    close(m(x[0]), npy(m(x))[0], 1e-12)


def test_conv_transpose2d_is_the_adjoint_of_conv2d():
    # <conv(x), y> = <x, conv_transpose(y)> for the same weight and no bias.
    ct = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, bias=False).double()
    conv = nn.Conv2d(4, 3, 3, stride=2, padding=1, bias=False).double()
    with torch.no_grad():
        conv.weight.copy_(ct.weight)
    y = randn(2, 3, 4, 5)
    out = ct(y)
    x = randn(*out.shape)
    lhs = float((conv(x) * y).sum())
    rhs = float((x * out).sum())
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))


def test_conv_transpose_output_size_selects_output_padding():
    m = nn.ConvTranspose2d(2, 2, 3, stride=2)
    x = randn(1, 2, 4, 4, dtype=torch.float32)
    assert tuple(m(x).shape) == (1, 2, 9, 9)
    assert tuple(m(x, output_size=[10, 10]).shape) == (1, 2, 10, 10)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(x, output_size=[12, 12])
    m1 = nn.ConvTranspose1d(2, 3, 2, stride=3)
    assert tuple(m1(randn(1, 2, 4, dtype=torch.float32), output_size=[1, 3, 12]).shape) == (1, 3, 12)


# ---------------------------------------------------------------------------
# Pooling, padding, resizing, shapes
# ---------------------------------------------------------------------------


def test_pooling_layers_match_numpy_windows():
    x = randn(2, 3, 6, 7)
    a = npy(x)
    ref_max = np.zeros((2, 3, 3, 3))
    ref_avg = np.zeros((2, 3, 3, 3))
    for i in range(3):
        for j in range(3):
            win = a[:, :, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2]
            ref_max[:, :, i, j] = win.max(axis=(2, 3))
            ref_avg[:, :, i, j] = win.mean(axis=(2, 3))
    close(nn.MaxPool2d(2)(x), ref_max)
    close(nn.AvgPool2d(2)(x), ref_avg)
    vals, idx = nn.MaxPool2d(2, return_indices=True)(x)
    flat = a.reshape(2, 3, -1)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, npy(idx).reshape(2, 3, -1), 2).reshape(vals.shape), npy(vals)
    )
    # Adaptive windows: [floor(i*L/out), ceil((i+1)*L/out)).
    ref = np.stack([a[..., (i * 7) // 3 : -((-(i + 1) * 7) // 3)].mean(-1) for i in range(3)], -1)
    close(nn.AdaptiveAvgPool2d((None, 3))(x), ref)
    ref1 = np.stack([a[:, 0, 0, (i * 7) // 2 : -((-(i + 1) * 7) // 2)].max(-1) for i in range(2)], -1)
    close(nn.AdaptiveMaxPool1d(2)(x[:, 0])[:, 0], ref1)
    close(
        nn.AdaptiveMaxPool2d((1, 2))(x)[:, 0, 0],
        np.stack([a[:, 0, :, :4].max((1, 2)), a[:, 0, :, 3:].max((1, 2))], -1),
    )
    y = nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False)(x[:, :, 0])
    p = np.pad(a[:, :, 0], ((0, 0), (0, 0), (1, 1)), constant_values=np.nan)
    ref_avg1 = np.stack([np.nanmean(p[..., 2 * i : 2 * i + 3], -1) for i in range(4)], -1)
    close(y, ref_avg1)


def test_padding_layers_match_numpy_pad():
    x = randn(1, 2, 3, 4)
    a = npy(x)
    close(nn.ZeroPad2d((1, 2, 0, 1))(x), np.pad(a, ((0, 0), (0, 0), (0, 1), (1, 2))))
    close(nn.ConstantPad2d(1, 3.5)(x), np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=3.5))
    close(nn.ReflectionPad2d(2)(x), np.pad(a, ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect"))
    close(nn.ReplicationPad2d((0, 1, 2, 0))(x), np.pad(a, ((0, 0), (0, 0), (2, 0), (0, 1)), mode="edge"))
    close(nn.ReflectionPad1d((1, 2))(x[0]), np.pad(a[0], ((0, 0), (0, 0), (1, 2)), mode="reflect"))


def test_upsample_nearest_and_bilinear_align_corners():
    x = randn(1, 1, 2, 3)
    a = npy(x)
    close(nn.Upsample(scale_factor=2)(x), a.repeat(2, axis=2).repeat(2, axis=3))
    y = nn.Upsample(size=(3, 5), mode="bilinear", align_corners=True)(x)
    # align_corners: output i samples input at i * (in - 1) / (out - 1).
    rows = np.array([np.interp(np.linspace(0, 2, 5), [0, 1, 2], r) for r in a[0, 0]])
    ref = np.array([np.interp(np.linspace(0, 1, 3), [0, 1], c) for c in rows.T]).T
    close(y[0, 0], ref)


def test_flatten_unflatten_pixel_shuffle_shapes_and_values():
    x = randn(2, 3, 4, 5)
    close(nn.Flatten()(x), npy(x).reshape(2, -1))
    close(nn.Flatten(0, 2)(x), npy(x).reshape(-1, 5))
    close(nn.Unflatten(1, (3, 4))(x.reshape(2, 12, 5)), npy(x))
    ps = nn.PixelShuffle(2)(randn(1, 8, 2, 3))
    assert tuple(ps.shape) == (1, 2, 4, 6)
    close(nn.PixelUnshuffle(2)(ps), npy(nn.PixelUnshuffle(2)(ps)))
    z = randn(1, 8, 2, 3)
    close(nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(z)), npy(z))


def test_distance_layers_match_numpy():
    x1, x2 = randn(4, 5), randn(4, 5)
    a, b = npy(x1), npy(x2)
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-8)
    close(nn.CosineSimilarity()(x1, x2), cos)
    close(nn.PairwiseDistance(p=3.0)(x1, x2), (np.abs(a - b + 1e-6) ** 3).sum(1) ** (1 / 3))


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------


def test_batchnorm_running_stats_follow_momentum_over_batches_and_eval_uses_them():
    m = nn.BatchNorm2d(3, momentum=0.3).double()
    with torch.no_grad():
        m.weight.copy_(torch.tensor([1.0, 2.0, -1.0]))
        m.bias.copy_(torch.tensor([0.0, 0.5, 1.0]))
    rm, rv = np.zeros(3), np.ones(3)
    for _ in range(3):
        x = randn(4, 3, 2, 5) * 2 + 1
        a = npy(x)
        y = m(x)
        mean = a.mean(axis=(0, 2, 3))
        var_b = a.var(axis=(0, 2, 3))
        ref = (a - mean[None, :, None, None]) / np.sqrt(var_b[None, :, None, None] + 1e-5)
        ref = ref * np.array([1, 2, -1.0])[None, :, None, None] + np.array([0, 0.5, 1.0])[None, :, None, None]
        close(y, ref, 1e-9)
        count = a.size / 3
        rm = 0.7 * rm + 0.3 * mean
        rv = 0.7 * rv + 0.3 * var_b * count / (count - 1)
    close(m.running_mean, rm, 1e-12)
    close(m.running_var, rv, 1e-12)
    assert int(m.num_batches_tracked) == 3 and m.num_batches_tracked.dtype == torch.int64
    m.eval()
    x = randn(2, 3, 2, 2)
    ref = (npy(x) - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5)
    ref = ref * np.array([1, 2, -1.0])[None, :, None, None] + np.array([0, 0.5, 1.0])[None, :, None, None]
    close(m(x), ref, 1e-9)
    assert int(m.num_batches_tracked) == 3


def test_batchnorm_momentum_none_is_a_cumulative_average():
    m = nn.BatchNorm1d(2, momentum=None).double()
    means = []
    for _ in range(4):
        x = randn(5, 2) + RNG.standard_normal()
        means.append(npy(x).mean(0))
        m(x)
    close(m.running_mean, np.mean(means, axis=0), 1e-12)


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    m = nn.BatchNorm1d(3, affine=False, track_running_stats=False).double().eval()
    assert m.running_mean is None and m.weight is None and list(m.state_dict()) == []
    x = randn(6, 3, 4)
    close(
        m(x),
        np_layer_norm(npy(x).transpose(1, 0, 2).reshape(3, -1), 1, 1e-5).reshape(3, 6, 4).transpose(1, 0, 2),
    )


def test_batchnorm_state_dict_keys_and_old_checkpoint_without_counter_loads():
    m = nn.BatchNorm1d(4)
    keys = ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert list(m.state_dict()) == keys
    sd = m.state_dict()
    old = {k: v.clone() for k, v in sd.items() if k != "num_batches_tracked"}
    old["running_mean"].fill_(2.0)
    old = type(sd)(old)
    old._metadata = {"": {"version": 1}}
    m2 = nn.BatchNorm1d(4)
    m2.load_state_dict(old)
    assert float(m2.running_mean[0]) == 2.0
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        m(randn(2, 4, 3, 3, dtype=torch.float32))


def test_layer_group_instance_rms_norm_match_numpy():
    x = randn(3, 4, 5)
    a = npy(x)
    ln = nn.LayerNorm([4, 5]).double()
    with torch.no_grad():
        ln.weight.copy_(randn(4, 5))
        ln.bias.copy_(randn(4, 5))
    close(ln(x), np_layer_norm(a, (1, 2), 1e-5) * npy(ln.weight) + npy(ln.bias))
    assert [n for n, _ in ln.named_parameters()] == ["weight", "bias"]
    gn = nn.GroupNorm(2, 4).double()
    ref = np_layer_norm(a.reshape(3, 2, 10), 2, 1e-5).reshape(3, 4, 5)
    close(gn(x), ref)
    inn = nn.InstanceNorm1d(4).double()
    close(inn(x), np_layer_norm(a, 2, 1e-5))
    close(inn(x[0]), np_layer_norm(a[0], 1, 1e-5))
    rms = nn.RMSNorm(5, eps=1e-6).double()
    close(rms(x), a / np.sqrt((a**2).mean(-1, keepdims=True) + 1e-6))
    lrn = nn.LocalResponseNorm(3, alpha=0.1, beta=0.5, k=2.0).double()
    sq = np.pad(a**2, ((0, 0), (1, 1), (0, 0)))
    div = (2.0 + 0.1 / 3 * (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:])) ** 0.5
    close(lrn(x), a / div)


def test_instance_norm_with_running_stats_updates_and_uses_them_in_eval():
    m = nn.InstanceNorm2d(2, momentum=0.5, track_running_stats=True).double()
    x = randn(3, 2, 4, 4)
    a = npy(x)
    m(x)
    mean = a.mean(axis=(2, 3)).mean(0)
    var = a.var(axis=(2, 3), ddof=1).mean(0)
    close(m.running_mean, 0.5 * mean, 1e-12)
    close(m.running_var, 0.5 + 0.5 * var, 1e-12)
    m.eval()
    rm, rv = npy(m.running_mean), npy(m.running_var)
    close(m(x), (a - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5))


# ---------------------------------------------------------------------------
# Dropout, Embedding
# ---------------------------------------------------------------------------


def test_dropout_scales_kept_values_in_training_and_is_identity_in_eval():
    torch.manual_seed(0)
    m = nn.Dropout(0.3)
    x = torch.ones(200, 100)
    y = npy(m(x))
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    m.eval()
    assert torch.equal(m(x), x)
    d2 = nn.Dropout2d(0.5)
    z = npy(d2(torch.ones(8, 16, 3, 3)))
    per_channel = z.reshape(8, 16, 9)
    # Whole channels are dropped or kept together.
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))


def test_embedding_padding_row_gets_zero_gradient_and_init_is_standard_normal():
    torch.manual_seed(1)
    emb = nn.Embedding(1000, 16, padding_idx=-1)
    assert emb.padding_idx == 999
    w = npy(emb.weight)
    assert not w[999].any()
    assert abs(w[:999].mean()) < 0.02 and abs(w[:999].std() - 1) < 0.02
    idx = torch.tensor([[1, 999, 3], [999, 1, 2]])
    out = emb(idx)
    close(out, w[npy(idx)], 0)
    (out * torch.arange(1.0, 17.0)).sum().backward()
    g = npy(emb.weight.grad)
    assert not g[999].any()
    np.testing.assert_allclose(g[1], 2 * np.arange(1.0, 17.0))


def test_embedding_from_pretrained_shares_weight_and_freezes():
    table = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad
    close(emb(torch.tensor([1, 0])), [[3.0, 4.0], [1.0, 2.0]], 0)
    table[0, 0] = 7.0
    assert float(emb.weight[0, 0]) == 7.0
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(torch.ones(3))


# ---------------------------------------------------------------------------
# Activations and losses
# ---------------------------------------------------------------------------


def _gelu(a):
    from math import erf

    return a * 0.5 * (1 + np.vectorize(erf)(a / math.sqrt(2)))


ACTIVATIONS = [
    (nn.ReLU(), lambda a: np.maximum(a, 0)),
    (nn.ReLU6(), lambda a: np.clip(a, 0, 6)),
    (nn.LeakyReLU(0.2), lambda a: np.where(a >= 0, a, 0.2 * a)),
    (nn.ELU(0.5), lambda a: np.where(a > 0, a, 0.5 * np.expm1(a))),
    (nn.SELU(), lambda a: 1.0507009873554805 * np.where(a > 0, a, 1.6732632423543772 * np.expm1(a))),
    (nn.CELU(2.0), lambda a: np.maximum(a, 0) + np.minimum(0, 2.0 * np.expm1(a / 2.0))),
    (nn.GELU(), _gelu),
    (
        nn.GELU("tanh"),
        lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3))),
    ),
    (nn.SiLU(), lambda a: a / (1 + np.exp(-a))),
    (nn.Mish(), lambda a: a * np.tanh(np.log1p(np.exp(a)))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda a: 1 / (1 + np.exp(-a))),
    (nn.Softplus(beta=2.0), lambda a: np.log1p(np.exp(2 * a)) / 2),
    (nn.Softsign(), lambda a: a / (1 + np.abs(a))),
    (nn.Hardtanh(-0.5, 1.5), lambda a: np.clip(a, -0.5, 1.5)),
    (nn.Hardsigmoid(), lambda a: np.clip(a + 3, 0, 6) / 6),
    (nn.Hardswish(), lambda a: a * np.clip(a + 3, 0, 6) / 6),
    (nn.LogSigmoid(), lambda a: -np.log1p(np.exp(-a))),
    (nn.Softmax(dim=1), lambda a: np_softmax(a, 1)),
    (nn.LogSoftmax(dim=-1), lambda a: np.log(np_softmax(a, -1))),
    (nn.Softmin(dim=0), lambda a: np_softmax(-a, 0)),
    (nn.GLU(dim=1), lambda a: a[:, :3] / (1 + np.exp(-a[:, 3:]))),
    (nn.Threshold(0.1, -2.0), lambda a: np.where(a > 0.1, a, -2.0)),
]


@pytest.mark.parametrize(
    "module,ref", ACTIVATIONS, ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else ""
)
def test_activation_layers_match_numpy_formulas(module, ref):
    x = randn(4, 6) * 3
    close(module(x), ref(npy(x)), 1e-9)


def test_inplace_activation_writes_into_its_input():
    x = randn(3, 4)
    a = npy(x).copy()
    y = nn.ReLU(inplace=True)(x)
    assert y is x
    close(x, np.maximum(a, 0))


def test_prelu_learns_one_slope_per_channel():
    m = nn.PReLU(3, init=0.1).double()
    with torch.no_grad():
        m.weight.copy_(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64))
    x = randn(2, 3, 4)
    a = npy(x)
    slopes = np.array([0.1, 0.2, 0.3])[None, :, None]
    close(m(x), np.where(a > 0, a, slopes * a))
    m(x).sum().backward()
    close(m.weight.grad, np.where(a > 0, 0, a).sum(axis=(0, 2)))
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        m(randn(2, 4))


def test_losses_match_numpy_formulas():
    x, y = randn(4, 5), randn(4, 5)
    a, b = npy(x), npy(y)
    d = a - b
    close(nn.MSELoss()(x, y), (d**2).mean())
    close(nn.L1Loss(reduction="sum")(x, y), np.abs(d).sum())
    close(
        nn.SmoothL1Loss(beta=0.5)(x, y), np.where(np.abs(d) < 0.5, 0.5 * d**2 / 0.5, np.abs(d) - 0.25).mean()
    )
    close(
        nn.HuberLoss(delta=0.7)(x, y), np.where(np.abs(d) < 0.7, 0.5 * d**2, 0.7 * (np.abs(d) - 0.35)).mean()
    )
    t = torch.tensor([0, 4, 2, 4])
    logp = np.log(np_softmax(a, 1))
    close(nn.CrossEntropyLoss()(x, t), -logp[np.arange(4), npy(t)].mean())
    w = torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0], dtype=torch.float64)
    ww = npy(w)[npy(t)]
    close(nn.CrossEntropyLoss(weight=w)(x, t), -(ww * logp[np.arange(4), npy(t)]).sum() / ww.sum())
    close(nn.NLLLoss(reduction="none")(x, t), -a[np.arange(4), npy(t)])
    p = 1 / (1 + np.exp(-a))
    q = (b > 0).astype(float)
    bce = -(q * np.log(p) + (1 - q) * np.log(1 - p))
    close(nn.BCELoss()(torch.tensor(p), torch.tensor(q)), bce.mean())
    close(nn.BCEWithLogitsLoss()(x, torch.tensor(q)), bce.mean(), 1e-9)
    pw = torch.tensor([1.0, 2.0, 3.0, 1.0, 0.5], dtype=torch.float64)
    bce_pw = -(npy(pw) * q * np.log(p) + (1 - q) * np.log(1 - p))
    close(nn.BCEWithLogitsLoss(pos_weight=pw)(x, torch.tensor(q)), bce_pw.mean(), 1e-9)
    tgt = np_softmax(b, 1)
    close(
        nn.KLDivLoss(reduction="batchmean")(torch.tensor(logp), torch.tensor(tgt)),
        (tgt * (np.log(tgt) - logp)).sum() / 4,
    )
    counts = np.abs(b).round()
    close(nn.PoissonNLLLoss()(x, torch.tensor(counts)), (np.exp(a) - counts * a).mean())
    sgn = np.sign(b)
    close(nn.MarginRankingLoss(0.3)(x, y, torch.tensor(sgn)), np.maximum(0, -sgn * d + 0.3).mean())
    close(
        nn.HingeEmbeddingLoss(1.5)(x, torch.tensor(sgn)), np.where(sgn > 0, a, np.maximum(0, 1.5 - a)).mean()
    )
    close(nn.SoftMarginLoss()(x, torch.tensor(sgn)), np.log1p(np.exp(-sgn * a)).mean())
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    s = np.array([1.0, -1.0, 1.0, -1.0])
    ref = np.where(s > 0, 1 - cos, np.maximum(0, cos - 0.1)).mean()
    close(nn.CosineEmbeddingLoss(0.1)(x, y, torch.tensor(s)), ref, 1e-8)


def test_weighted_loss_weight_is_a_buffer_and_legacy_flags_map_to_reduction():
    w = torch.ones(3)
    m = nn.CrossEntropyLoss(weight=w)
    assert list(m.state_dict()) == ["weight"] and m.weight is w
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"


# ---------------------------------------------------------------------------
# Attention and transformer blocks
# ---------------------------------------------------------------------------


def test_multihead_attention_parameter_names_and_shapes():
    m = nn.MultiheadAttention(8, 2)
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert shapes == {
        "in_proj_weight": (24, 8),
        "in_proj_bias": (24,),
        "out_proj.weight": (8, 8),
        "out_proj.bias": (8,),
    }
    m2 = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True, bias=False)
    shapes = {k: tuple(v.shape) for k, v in m2.state_dict().items()}
    assert shapes == {
        "q_proj_weight": (8, 8),
        "k_proj_weight": (8, 3),
        "v_proj_weight": (8, 5),
        "bias_k": (1, 1, 8),
        "bias_v": (1, 1, 8),
        "out_proj.weight": (8, 8),
    }
    assert m2.in_proj_weight is None and m2.in_proj_bias is None


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_matches_numpy_with_masks(batch_first):
    torch.manual_seed(2)
    m = nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
    with torch.no_grad():
        m.in_proj_bias.copy_(randn(24))
        m.out_proj.bias.copy_(randn(8))
    q, k, v = randn(3, 2, 8), randn(5, 2, 8), randn(5, 2, 8)
    bool_mask = torch.tensor(RNG.random((3, 5)) < 0.3)
    bool_mask[:, 0] = False  # every query keeps at least one key
    kpm = torch.tensor([[False, False, True, False, True], [False, True, False, False, False]])
    add = (
        np.where(npy(bool_mask), -np.inf, 0.0)[None, None]
        + np.where(npy(kpm), -np.inf, 0.0)[:, None, None, :]
    )
    ref_out, ref_w = np_mha(npy(q), npy(k), npy(v), *mha_params(m), 2, add)

    def bf(t):
        return t.transpose(0, 1) if batch_first else t

    out, w = m(bf(q), bf(k), bf(v), key_padding_mask=kpm, attn_mask=bool_mask)
    close(bf(out), ref_out, 1e-10)
    close(w, ref_w.mean(1), 1e-12)
    # A float mask is added to the scores; per-head weights on request.
    fmask = randn(3, 5)
    out, w = m(bf(q), bf(k), bf(v), attn_mask=fmask, average_attn_weights=False)
    ref_out, ref_w = np_mha(npy(q), npy(k), npy(v), *mha_params(m), 2, npy(fmask)[None, None])
    close(bf(out), ref_out, 1e-10)
    close(w, ref_w, 1e-12)
    out, w = m(bf(q), bf(k), bf(v), need_weights=False)
    assert w is None


def test_multihead_attention_unbatched_and_3d_mask():
    m = nn.MultiheadAttention(4, 2).double()
    q, k = randn(3, 4), randn(6, 4)
    mask3 = randn(2, 3, 6)
    out, w = m(q, k, k, attn_mask=mask3)
    ref_out, ref_w = np_mha(
        npy(q)[:, None], npy(k)[:, None], npy(k)[:, None], *mha_params(m), 2, npy(mask3)[None]
    )
    close(out, ref_out[:, 0], 1e-10)
    close(w, ref_w[0].mean(0), 1e-12)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask"):
        m(q[:, None], k[:, None], k[:, None], attn_mask=torch.zeros(2, 2, dtype=torch.float64))


def np_encoder_layer(layer, x, norm_first, act):
    """One encoder layer on sequence-first (L, N, E) NumPy input, dropout off."""
    sa = layer.self_attn

    def ln(z, mod):
        return np_layer_norm(z, -1, mod.eps) * npy(mod.weight) + npy(mod.bias)

    def attn(z):
        return np_mha(z, z, z, *mha_params(sa), sa.num_heads)[0]

    def ff(z):
        h = act(z @ npy(layer.linear1.weight).T + npy(layer.linear1.bias))
        return h @ npy(layer.linear2.weight).T + npy(layer.linear2.bias)

    if norm_first:
        x = x + attn(ln(x, layer.norm1))
        return x + ff(ln(x, layer.norm2))
    x = ln(x + attn(x), layer.norm1)
    return ln(x + ff(x), layer.norm2)


@pytest.mark.parametrize(
    "activation,norm_first,act",
    [("relu", False, lambda a: np.maximum(a, 0)), ("gelu", True, _gelu)],
)
def test_transformer_encoder_layer_matches_numpy_composition_in_eval(activation, norm_first, act):
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation=activation, norm_first=norm_first).double()
    with torch.no_grad():
        for p in (layer.norm1.weight, layer.norm2.bias, layer.self_attn.in_proj_bias):
            p.copy_(randn(*p.shape))
    layer.eval()
    x = randn(4, 3, 8)
    close(layer(x), np_encoder_layer(layer, npy(x), norm_first, act), 1e-9)
    layer_bf = nn.TransformerEncoderLayer(
        8, 2, 16, activation=activation, norm_first=norm_first, batch_first=True
    )
    layer_bf = layer_bf.double()
    layer_bf.load_state_dict(layer.state_dict())
    layer_bf.eval()
    close(layer_bf(x.transpose(0, 1)).transpose(0, 1), npy(layer(x)), 1e-12)


def test_transformer_encoder_layer_dropout_active_only_in_training():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5).double()
    x = randn(4, 2, 8)
    assert not torch.allclose(layer(x), layer(x))
    layer.eval()
    assert torch.equal(layer(x), layer(x))


def test_transformer_encoder_stacks_independent_deep_copies():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    enc = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8), enable_nested_tensor=False).double().eval()
    assert len(enc.layers) == 3 and enc.num_layers == 3
    assert enc.layers[0] is not layer and enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    with torch.no_grad():
        enc.layers[1].linear1.weight.add_(1.0)
    assert not torch.equal(enc.layers[0].linear1.weight, enc.layers[1].linear1.weight)
    assert "layers.2.self_attn.in_proj_weight" in enc.state_dict()
    x = randn(2, 5, 8)
    h = x
    for mod in enc.layers:
        h = mod(h)
    close(enc(x), npy(enc.norm(h)), 1e-12)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1)


def test_transformer_encoder_layer_rejects_unknown_activation():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


# ---------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------


def test_gradcheck_conv2d_layernorm_and_attention():
    conv = nn.Conv2d(2, 2, 2, padding=1, padding_mode="reflect").double()
    x = randn(1, 2, 3, 3).requires_grad_()
    assert gradcheck(
        lambda inp, w, b: torch.nn.functional.conv2d(
            torch.nn.functional.pad(inp, (1, 1, 1, 1), mode="reflect"), w, b
        ),
        (x, conv.weight, conv.bias),
    )
    assert gradcheck(lambda inp: conv(inp), (x,))
    ln = nn.LayerNorm(4).double()
    assert gradcheck(lambda inp: ln(inp), (randn(2, 4).requires_grad_(),))
    mha = nn.MultiheadAttention(4, 2).double()
    q = randn(2, 1, 4).requires_grad_()
    k = randn(3, 1, 4).requires_grad_()
    assert gradcheck(lambda a, b: mha(a, b, b)[0], (q, k))


def test_parameters_receive_gradients_through_layers():
    conv = nn.Conv2d(1, 2, 3).double()
    x = randn(1, 1, 4, 4)
    conv(x).sum().backward()
    # d/db of the summed output is the number of output positions.
    close(conv.bias.grad, [4.0, 4.0])
    # d/dW[o, 0, i, j] is the sum of the inputs seen at tap (i, j).
    a = npy(x)[0, 0]
    ref = np.array([[a[i : i + 2, j : j + 2].sum() for j in range(3)] for i in range(3)])
    close(conv.weight.grad[0, 0], ref)


# ---------------------------------------------------------------------------
# Printing, train/eval, errors
# ---------------------------------------------------------------------------


def test_repr_of_a_small_model_follows_torch_format():
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False),
        nn.BatchNorm2d(8),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(128, 10),
        nn.LogSoftmax(dim=1),
    )
    expected = """Sequential(
  (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)
  (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
  (2): ReLU(inplace=True)
  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
  (4): Dropout(p=0.25, inplace=False)
  (5): Flatten(start_dim=1, end_dim=-1)
  (6): Linear(in_features=128, out_features=10, bias=True)
  (7): LogSoftmax(dim=1)
)"""
    assert repr(model) == expected


@pytest.mark.parametrize(
    "module,text",
    [
        (
            nn.Conv1d(2, 4, 3, stride=2, groups=2, padding_mode="circular", padding=1),
            "Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), groups=2, padding_mode=circular)",
        ),
        (nn.Conv2d(2, 4, 3, padding="same"), "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=same)"),
        (
            nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1),
            "ConvTranspose2d(2, 4, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))",
        ),
        (nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
        (nn.AdaptiveAvgPool2d((None, 3)), "AdaptiveAvgPool2d(output_size=(None, 3))"),
        (nn.LayerNorm(8, bias=False), "LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=False)"),
        (nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"),
        (nn.RMSNorm([2, 3]), "RMSNorm((2, 3), eps=None, elementwise_affine=True)"),
        (
            nn.InstanceNorm1d(3),
            "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)",
        ),
        (nn.Embedding(10, 3, padding_idx=0, max_norm=1.0), "Embedding(10, 3, padding_idx=0, max_norm=1.0)"),
        (nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
        (nn.GELU("tanh"), "GELU(approximate='tanh')"),
        (nn.Hardtanh(), "Hardtanh(min_val=-1.0, max_val=1.0)"),
        (nn.Softplus(), "Softplus(beta=1.0, threshold=20.0)"),
        (nn.PReLU(3), "PReLU(num_parameters=3)"),
        (nn.ZeroPad2d(2), "ZeroPad2d((2, 2, 2, 2))"),
        (nn.ConstantPad2d((1, 2, 3, 4), 3.5), "ConstantPad2d(padding=(1, 2, 3, 4), value=3.5)"),
        (nn.Upsample(scale_factor=2), "Upsample(scale_factor=2.0, mode='nearest')"),
        (nn.Unflatten(1, (2, 5)), "Unflatten(dim=1, unflattened_size=(2, 5))"),
        (nn.MSELoss(), "MSELoss()"),
        (
            nn.MultiheadAttention(8, 2),
            "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
            "in_features=8, out_features=8, bias=True)\n)",
        ),
    ],
)
def test_extra_repr_matches_torch_printed_form(module, text):
    assert repr(module) == text


def test_train_and_eval_propagate_to_every_layer():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    layer.eval()
    assert all(not m.training for m in layer.modules())
    layer.train()
    assert all(m.training for m in layer.modules())


@pytest.mark.parametrize(
    "factory,exc,message",
    [
        (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
        (lambda: nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels must be divisible by groups"),
        (lambda: nn.Conv2d(4, 4, 3, groups=0), ValueError, "groups must be a positive integer"),
        (lambda: nn.Conv2d(2, 2, 3, padding="full"), ValueError, "Invalid padding string 'full'"),
        (lambda: nn.Conv2d(2, 2, 3, padding="same", stride=2), ValueError, "not supported for strided"),
        (lambda: nn.Conv2d(2, 2, 3, padding_mode="mirror"), ValueError, "padding_mode must be one of"),
        (
            lambda: nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"),
            ValueError,
            'Only "zeros" padding mode',
        ),
        (lambda: nn.MultiheadAttention(10, 3), AssertionError, "embed_dim must be divisible by num_heads"),
        (lambda: nn.MultiheadAttention(0, 3), ValueError, "embed_dim and num_heads must be greater than 0"),
        (lambda: nn.GroupNorm(3, 4), ValueError, r"num_channels \(4\) must be divisible by num_groups \(3\)"),
        (lambda: nn.Dropout(1.5), ValueError, "dropout probability has to be between 0 and 1, but got 1.5"),
        (
            lambda: nn.Embedding(3, 2, padding_idx=5),
            AssertionError,
            "Padding_idx must be within num_embeddings",
        ),
        (lambda: nn.Hardtanh(1.0, -1.0), AssertionError, "must be greater than min_val"),
        (lambda: nn.Unflatten(1, 5), TypeError, "unflattened_size must be a tuple of ints"),
        (lambda: nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2 supported"),
        (lambda: nn.TripletMarginLoss(margin=0.0), ValueError, "expected margin to be greater than 0"),
    ],
)
def test_bad_constructor_arguments_raise_torch_errors(factory, exc, message):
    with pytest.raises(exc, match=message):
        factory()


def test_instance_norm_affine_checks_channel_count():
    with pytest.raises(ValueError, match="to match num_features"):
        nn.InstanceNorm1d(3, affine=True)(randn(2, 4, 5))
