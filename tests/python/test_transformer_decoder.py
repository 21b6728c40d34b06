"""nn.TransformerDecoderLayer, nn.TransformerDecoder and nn.Transformer: outputs
against a NumPy implementation of the layers' formulas written here (with the
modules' weights), post-norm and pre-norm, batch_first, masks; state_dict keys
against torch's documented structure written out by hand; initialisation;
gradients against float64 central differences; argument errors."""

import warnings

import ferrograd as torch
import numpy as np
import pytest
from ferrograd import nn
from gradcheck_util import check_grad

RNG = np.random.default_rng(11)
# torch gives the same warnings: nested tensors unused, a float attn_mask next to a bool padding mask.
pytestmark = [
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
    pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask"),
]


def npy(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------
# NumPy reference, from the formulas
# ---------------------------------------------------------------------------


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention(p, prefix, q_in, kv_in, nhead, mask=None, key_padding=None):
    """Multi-head attention of sequence-first (L, N, E) inputs:
    softmax(Q K^T / sqrt(d) + mask) V per head, then the output projection."""
    w, b = p[prefix + "in_proj_weight"], p[prefix + "in_proj_bias"]
    e = q_in.shape[-1]
    q = q_in @ w[:e].T + b[:e]
    k = kv_in @ w[e:2 * e].T + b[e:2 * e]
    v = kv_in @ w[2 * e:].T + b[2 * e:]
    d = e // nhead
    lq, n, _ = q.shape
    lk = k.shape[0]
    out = np.zeros((lq, n, e))
    for i in range(n):
        for h in range(nhead):
            cols = slice(h * d, (h + 1) * d)
            scores = q[:, i, cols] @ k[:, i, cols].T / np.sqrt(d)
            if mask is not None:
                scores = scores + mask
            if key_padding is not None:
                scores = scores + np.where(key_padding[i], -np.inf, 0.0)[None, :]
            out[:, i, cols] = softmax(scores) @ v[:, i, cols]
    assert out.shape == (lq, n, e) and lk == v.shape[0]
    return out @ p[prefix + "out_proj.weight"].T + p[prefix + "out_proj.bias"]


def feed_forward(p, prefix, x):
    h = np.maximum(x @ p[prefix + "linear1.weight"].T + p[prefix + "linear1.bias"], 0.0)
    return h @ p[prefix + "linear2.weight"].T + p[prefix + "linear2.bias"]


def decoder_layer_ref(p, prefix, tgt, memory, nhead, norm_first, eps=1e-5, tgt_mask=None, memory_mask=None,
                      tgt_kpm=None, memory_kpm=None):
    def norm(i, x):
        return layer_norm(x, p[f"{prefix}norm{i}.weight"], p[f"{prefix}norm{i}.bias"], eps)

    def sa(x):
        return attention(p, prefix + "self_attn.", x, x, nhead, tgt_mask, tgt_kpm)

    def mha(x):
        return attention(p, prefix + "multihead_attn.", x, memory, nhead, memory_mask, memory_kpm)

    x = tgt
    if norm_first:
        x = x + sa(norm(1, x))
        x = x + mha(norm(2, x))
        x = x + feed_forward(p, prefix, norm(3, x))
    else:
        x = norm(1, x + sa(x))
        x = norm(2, x + mha(x))
        x = norm(3, x + feed_forward(p, prefix, x))
    return x


def encoder_layer_ref(p, prefix, src, nhead, norm_first, eps=1e-5, mask=None, kpm=None):
    def norm(i, x):
        return layer_norm(x, p[f"{prefix}norm{i}.weight"], p[f"{prefix}norm{i}.bias"], eps)

    def sa(x):
        return attention(p, prefix + "self_attn.", x, x, nhead, mask, kpm)

    x = src
    if norm_first:
        x = x + sa(norm(1, x))
        x = x + feed_forward(p, prefix, norm(2, x))
    else:
        x = norm(1, x + sa(x))
        x = norm(2, x + feed_forward(p, prefix, x))
    return x


def params(module):
    return {k: npy(v) for k, v in module.state_dict().items()}


def causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


# ---------------------------------------------------------------------------
# State dict keys, from torch's documented module structure
# ---------------------------------------------------------------------------

MHA_KEYS = ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
FF_KEYS = ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]


def norm_keys(*names):
    return [f"{n}.{w}" for n in names for w in ("weight", "bias")]


DECODER_LAYER_KEYS = (
    ["self_attn." + k for k in MHA_KEYS]
    + ["multihead_attn." + k for k in MHA_KEYS]
    + FF_KEYS
    + norm_keys("norm1", "norm2", "norm3")
)
ENCODER_LAYER_KEYS = ["self_attn." + k for k in MHA_KEYS] + FF_KEYS + norm_keys("norm1", "norm2")


def test_decoder_layer_state_dict_keys_and_submodules_are_torchs():
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    assert list(layer.state_dict()) == DECODER_LAYER_KEYS
    names = [n for n, _ in layer.named_children()]
    assert names == ["self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
                     "norm3", "dropout1", "dropout2", "dropout3"]
    assert tuple(layer.linear1.weight.shape) == (16, 8)
    assert tuple(layer.multihead_attn.in_proj_weight.shape) == (24, 8)


def test_decoder_layer_without_bias_has_no_bias_keys():
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, bias=False)
    assert list(layer.state_dict()) == [k for k in DECODER_LAYER_KEYS if not k.endswith("bias")]


def test_decoder_and_transformer_state_dict_keys_are_torchs():
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), num_layers=2, norm=nn.LayerNorm(8))
    want = [f"layers.{i}.{k}" for i in range(2) for k in DECODER_LAYER_KEYS] + norm_keys("norm")
    assert list(dec.state_dict()) == want
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=3, dim_feedforward=16)
    want = (
        [f"encoder.layers.{i}.{k}" for i in range(2) for k in ENCODER_LAYER_KEYS]
        + norm_keys("encoder.norm")
        + [f"decoder.layers.{i}.{k}" for i in range(3) for k in DECODER_LAYER_KEYS]
        + norm_keys("decoder.norm")
    )
    assert list(model.state_dict()) == want
    assert isinstance(model.encoder, nn.TransformerEncoder)
    assert isinstance(model.decoder, nn.TransformerDecoder)
    assert model.d_model == 8 and model.nhead == 2 and model.batch_first is False


def test_decoder_layers_are_independent_copies():
    layer = nn.TransformerDecoderLayer(8, 2, 16)
    dec = nn.TransformerDecoder(layer, num_layers=2)
    assert dec.layers[0] is not layer and dec.layers[0] is not dec.layers[1]
    with torch.no_grad():
        dec.layers[0].linear1.weight.fill_(1.0)
    assert not np.all(npy(dec.layers[1].linear1.weight) == 1.0)


# ---------------------------------------------------------------------------
# Forward against the NumPy reference
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_decoder_layer_matches_the_formulas(norm_first, batch_first):
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, norm_first=norm_first,
                                       batch_first=batch_first, dtype=torch.float64)
    tgt, memory = RNG.standard_normal((4, 3, 8)), RNG.standard_normal((5, 3, 8))
    tgt_kpm = np.zeros((3, 4), bool)
    tgt_kpm[2, 3] = True
    mem_kpm = np.zeros((3, 5), bool)
    mem_kpm[1, 3:] = True
    mem_mask = RNG.standard_normal((4, 5))
    args = (torch.tensor(tgt), torch.tensor(memory))
    if batch_first:
        args = tuple(a.transpose(0, 1) for a in args)
    got = layer(*args, tgt_mask=torch.tensor(causal(4)), memory_mask=torch.tensor(mem_mask),
                tgt_key_padding_mask=torch.tensor(tgt_kpm), memory_key_padding_mask=torch.tensor(mem_kpm))
    if batch_first:
        got = got.transpose(0, 1)
    want = decoder_layer_ref(params(layer), "", tgt, memory, 2, norm_first, tgt_mask=causal(4),
                             memory_mask=mem_mask, tgt_kpm=tgt_kpm, memory_kpm=mem_kpm)
    np.testing.assert_allclose(npy(got), want, rtol=1e-10, atol=1e-10)


def test_decoder_layer_boolean_masks_are_minus_infinity():
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=12, dropout=0.0, dtype=torch.float64)
    tgt, memory = RNG.standard_normal((4, 2, 8)), RNG.standard_normal((3, 2, 8))
    bool_mask = np.triu(np.ones((4, 4), bool), 1)
    got = layer(torch.tensor(tgt), torch.tensor(memory), tgt_mask=torch.tensor(bool_mask))
    want = decoder_layer_ref(params(layer), "", tgt, memory, 2, False, tgt_mask=causal(4))
    np.testing.assert_allclose(npy(got), want, rtol=1e-10, atol=1e-10)


def test_decoder_layer_unbatched_input():
    layer = nn.TransformerDecoderLayer(8, 4, dim_feedforward=12, dropout=0.0, dtype=torch.float64)
    tgt, memory = RNG.standard_normal((4, 8)), RNG.standard_normal((6, 8))
    got = layer(torch.tensor(tgt), torch.tensor(memory))
    want = decoder_layer_ref(params(layer), "", tgt[:, None], memory[:, None], 4, False)[:, 0]
    np.testing.assert_allclose(npy(got), want, rtol=1e-10, atol=1e-10)


def test_decoder_layer_gelu_and_callable_activation():
    gelu = nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, activation="gelu", dtype=torch.float64)
    own = nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, activation=torch.nn.functional.gelu,
                                     dtype=torch.float64)
    own.load_state_dict(gelu.state_dict())
    tgt, memory = torch.randn(3, 2, 8, dtype=torch.float64), torch.randn(4, 2, 8, dtype=torch.float64)
    assert torch.allclose(gelu(tgt, memory), own(tgt, memory))
    relu = nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, dtype=torch.float64)
    relu.load_state_dict(gelu.state_dict())
    assert not torch.allclose(gelu(tgt, memory), relu(tgt, memory))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerDecoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("with_norm", [False, True])
def test_decoder_stack_matches_layer_by_layer(with_norm):
    norm = nn.LayerNorm(8, dtype=torch.float64) if with_norm else None
    layer = nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, dtype=torch.float64)
    dec = nn.TransformerDecoder(layer, num_layers=2, norm=norm)
    with torch.no_grad():
        for p in dec.parameters():
            p.copy_(torch.tensor(RNG.standard_normal(tuple(p.shape))))
    tgt, memory = RNG.standard_normal((4, 2, 8)), RNG.standard_normal((5, 2, 8))
    got = dec(torch.tensor(tgt), torch.tensor(memory), tgt_mask=torch.tensor(causal(4)))
    p = params(dec)
    want = tgt
    for i in range(2):
        want = decoder_layer_ref(p, f"layers.{i}.", want, memory, 2, False, tgt_mask=causal(4))
    if with_norm:
        want = layer_norm(want, p["norm.weight"], p["norm.bias"], 1e-5)
    np.testing.assert_allclose(npy(got), want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_encoder_then_decoder_formulas(norm_first):
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=12,
                           dropout=0.0, norm_first=norm_first, batch_first=True, dtype=torch.float64)
    src, tgt = RNG.standard_normal((2, 5, 8)), RNG.standard_normal((2, 4, 8))
    src_kpm = np.zeros((2, 5), bool)
    src_kpm[0, 4] = True
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    got = model(torch.tensor(src), torch.tensor(tgt), tgt_mask=tgt_mask,
                src_key_padding_mask=torch.tensor(src_kpm), memory_key_padding_mask=torch.tensor(src_kpm))
    p = params(model)
    mem = src.transpose(1, 0, 2)
    for i in range(2):
        mem = encoder_layer_ref(p, f"encoder.layers.{i}.", mem, 2, norm_first, kpm=src_kpm)
    mem = layer_norm(mem, p["encoder.norm.weight"], p["encoder.norm.bias"], 1e-5)
    out = tgt.transpose(1, 0, 2)
    for i in range(2):
        out = decoder_layer_ref(p, f"decoder.layers.{i}.", out, mem, 2, norm_first, tgt_mask=causal(4),
                                memory_kpm=src_kpm)
    out = layer_norm(out, p["decoder.norm.weight"], p["decoder.norm.bias"], 1e-5)
    np.testing.assert_allclose(npy(got), out.transpose(1, 0, 2), rtol=1e-9, atol=1e-9)


def test_transformer_unbatched_and_custom_parts():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12,
                           dropout=0.0)
    assert tuple(model(torch.randn(5, 8), torch.randn(3, 8)).shape) == (3, 8)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 12), 1, enable_nested_tensor=False)
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 12), 1)
    custom = nn.Transformer(d_model=8, nhead=2, custom_encoder=enc, custom_decoder=dec)
    assert custom.encoder is enc and custom.decoder is dec
    assert list(custom.state_dict()) == [f"encoder.layers.0.{k}" for k in ENCODER_LAYER_KEYS] + [
        f"decoder.layers.0.{k}" for k in DECODER_LAYER_KEYS
    ]


def test_generate_square_subsequent_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(npy(mask), causal(4))
    assert mask.dtype == torch.float32
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=torch.float64).dtype == torch.float64


# ---------------------------------------------------------------------------
# Initialisation
# ---------------------------------------------------------------------------


def test_transformer_draws_xavier_uniform_for_every_matrix():
    # xavier_uniform_ draws from U(-a, a), a = sqrt(6 / (fan_in + fan_out)); vectors keep their init.
    torch.manual_seed(0)
    model = nn.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=64)
    for name, p in model.named_parameters():
        values = npy(p)
        if p.dim() > 1:
            bound = np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            assert np.abs(values).max() <= bound, name
            assert np.abs(values).max() > 0.8 * bound, name  # spread over the interval
        elif "norm" in name and name.endswith("weight"):
            assert np.all(values == 1.0), name
        elif "norm" in name or "in_proj_bias" in name or "out_proj.bias" in name:
            assert np.all(values == 0.0), name
    # linear1.weight of a plain layer is kaiming_uniform_(a=sqrt(5)): bound 1/sqrt(fan_in), narrower
    # than xavier's for (64, 16); the Transformer's must reach past it.
    w = npy(model.encoder.layers[0].linear1.weight)
    assert np.abs(w).max() > 1.0 / np.sqrt(16)


def test_transformer_init_follows_the_seed():
    torch.manual_seed(3)
    a = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12)
    torch.manual_seed(3)
    b = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name


# ---------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_gradients_match_finite_differences(norm_first):
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0, norm_first=norm_first,
                                       dtype=torch.float64)
    mask = torch.tensor(causal(3))

    def fn(tgt, memory, w):
        return torch.func.functional_call(
            layer, {"multihead_attn.in_proj_weight": w}, (tgt, memory), {"tgt_mask": mask}
        )

    arrays = [RNG.standard_normal((3, 2, 4)), RNG.standard_normal((5, 2, 4)),
              npy(layer.multihead_attn.in_proj_weight)]
    check_grad(fn, arrays, forward=False, second_order=False, layouts=("contiguous",), atol=1e-5, rtol=1e-4)


def test_transformer_backward_reaches_every_parameter():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12,
                           dropout=0.0)
    model(torch.randn(5, 2, 8), torch.randn(3, 2, 8), tgt_mask=model.generate_square_subsequent_mask(3)).sum(
    ).backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None]
    assert not missing


# ---------------------------------------------------------------------------
# Causal hints and errors
# ---------------------------------------------------------------------------


def test_causal_hint_needs_a_mask():
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 12), 1)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        dec(torch.randn(3, 2, 8), torch.randn(4, 2, 8), tgt_is_causal=True)
    # A causal mask with the hint gives what the mask alone gives.
    dec.eval()
    tgt, memory = torch.randn(3, 2, 8), torch.randn(4, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    hinted = dec(tgt, memory, tgt_mask=mask, tgt_is_causal=True)
    assert torch.allclose(hinted, dec(tgt, memory, tgt_mask=mask))


def test_transformer_shape_errors():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(torch.randn(5, 2, 8), torch.randn(3, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(torch.randn(5, 2, 8), torch.randn(3, 2, 4))


def test_transformer_construction_warns_as_torchs_about_nested_tensors():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12)
    assert any("self_attn.batch_first was not True" in str(w.message) for w in caught)


def test_dropout_is_active_only_in_training():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=12,
                           dropout=0.5)
    src, tgt = torch.randn(5, 2, 8), torch.randn(3, 2, 8)
    model.eval()
    assert torch.equal(model(src, tgt), model(src, tgt))
    model.train()
    assert not torch.equal(model(src, tgt), model(src, tgt))
