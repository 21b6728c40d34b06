"""The recurrent layers of ferrograd.nn (RNN, LSTM, GRU and their cells) and
ferrograd.nn.utils.rnn: every layer against a NumPy float64 recurrence
written here gate by gate (multi-layer, bidirectional, batch_first,
proj_size, unbatched, packed sequences of unequal lengths against each
sequence run alone), gradients by gradcheck, torch's parameter names and
shapes written out by hand, dropout between layers, and the errors."""

import copy
import doctest
import pickle
import warnings

import ferrograd as torch
import ferrograd.nn.utils.rnn as rnn_utils
import numpy as np
import pytest
from ferrograd import nn
from ferrograd.autograd import gradcheck
from ferrograd.func import functional_call
from ferrograd.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)
from numpy_oracle import close, npy

RNG = np.random.default_rng(2024)


def randn(*shape, dtype=torch.float64):
    return torch.tensor(RNG.standard_normal(shape), dtype=dtype)


# ---------------------------------------------------------------------------
# NumPy reference: one step of each cell, then the stacked layers
# ---------------------------------------------------------------------------


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_step(mode, x, state, p):
    """One step for a batch ``x`` (B, I) from ``state`` (``(h,)`` or ``(h, c)``),
    with the weights ``p`` = {"w_ih", "w_hh", "b_ih", "b_hh", "w_hr"} (biases
    and w_hr may be None)."""
    h = state[0]
    gi = x @ p["w_ih"].T + (p["b_ih"] if p["b_ih"] is not None else 0.0)
    gh = h @ p["w_hh"].T + (p["b_hh"] if p["b_hh"] is not None else 0.0)
    if mode == "tanh":
        return (np.tanh(gi + gh),)
    if mode == "relu":
        return (np.maximum(gi + gh, 0.0),)
    if mode == "lstm":
        n = p["w_hh"].shape[0] // 4
        pre = gi + gh
        i = sigmoid(pre[:, 0 * n : 1 * n])  # input gate
        f = sigmoid(pre[:, 1 * n : 2 * n])  # forget gate
        g = np.tanh(pre[:, 2 * n : 3 * n])  # cell candidate
        o = sigmoid(pre[:, 3 * n : 4 * n])  # output gate
        c = f * state[1] + i * g
        h = o * np.tanh(c)
        if p["w_hr"] is not None:
            h = h @ p["w_hr"].T
        return (h, c)
    # gru: the reset gate multiplies the hidden part of n only, bias included
    n = p["w_hh"].shape[0] // 3
    r = sigmoid(gi[:, :n] + gh[:, :n])
    z = sigmoid(gi[:, n : 2 * n] + gh[:, n : 2 * n])
    cand = np.tanh(gi[:, 2 * n :] + r * gh[:, 2 * n :])
    return ((1.0 - z) * cand + z * h,)


def np_params(module, layer, reverse):
    sfx = f"_l{layer}" + ("_reverse" if reverse else "")
    get = lambda name: npy(getattr(module, name + sfx)) if hasattr(module, name + sfx) else None
    return {k: get(n) for k, n in
            [("w_ih", "weight_ih"), ("w_hh", "weight_hh"), ("b_ih", "bias_ih"), ("b_hh", "bias_hh"),
             ("w_hr", "weight_hr")]}  # fmt: skip


def np_mode(module):
    if isinstance(module, nn.LSTM):
        return "lstm"
    if isinstance(module, nn.GRU):
        return "gru"
    return module.nonlinearity


def np_forward(module, x, states):
    """The whole stack on ``x`` (T, B, I), from ``states`` (each (L*D, B, *)),
    without dropout; returns the output (T, B, D*P) and the final states."""
    mode = np_mode(module)
    directions = 2 if module.bidirectional else 1
    finals = [[] for _ in states]
    for layer in range(module.num_layers):
        outs = []
        for d in range(directions):
            p = np_params(module, layer, d == 1)
            k = layer * directions + d
            state = tuple(s[k] for s in states)
            order = range(x.shape[0] - 1, -1, -1) if d == 1 else range(x.shape[0])
            ys = [None] * x.shape[0]
            for t in order:
                state = np_step(mode, x[t], state, p)
                ys[t] = state[0]
            outs.append(np.stack(ys))
            for f, s in zip(finals, state, strict=True):
                f.append(s)
        x = np.concatenate(outs, axis=-1)
    return x, [np.stack(f) for f in finals]


def zero_states(module, batch):
    directions = 2 if module.bidirectional else 1
    out = module.proj_size or module.hidden_size
    sizes = [out, module.hidden_size] if isinstance(module, nn.LSTM) else [out]
    return [np.zeros((module.num_layers * directions, batch, n)) for n in sizes]


def run(module, x, states=None):
    """Runs ``module`` on ``x`` with the given NumPy states; returns output and the list of final states."""
    hx = None
    if states is not None:
        tensors = [torch.tensor(s) for s in states]
        hx = tuple(tensors) if isinstance(module, nn.LSTM) else tensors[0]
    out, h = module(x, hx)
    return out, (list(h) if isinstance(module, nn.LSTM) else [h])


LAYERS = {
    "rnn_tanh": lambda **kw: nn.RNN(3, 5, **kw),
    "rnn_relu": lambda **kw: nn.RNN(3, 5, nonlinearity="relu", **kw),
    "lstm": lambda **kw: nn.LSTM(3, 5, **kw),
    "lstm_proj": lambda **kw: nn.LSTM(3, 5, proj_size=2, **kw),
    "gru": lambda **kw: nn.GRU(3, 5, **kw),
}


# ---------------------------------------------------------------------------
# Layers against the reference
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("num_layers", [1, 3])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_layer_matches_numpy_recurrence(kind, num_layers, bidirectional, bias):
    torch.manual_seed(0)
    m = LAYERS[kind](num_layers=num_layers, bidirectional=bidirectional, bias=bias, dtype=torch.float64)
    x = RNG.standard_normal((6, 4, 3))
    states = [RNG.standard_normal(s.shape) for s in zero_states(m, 4)]
    want, want_h = np_forward(m, x, states)
    out, h = run(m, torch.tensor(x), states)
    close(out, want)
    for got, exp in zip(h, want_h, strict=True):
        close(got, exp)
    # without an initial state: zeros
    out, h = run(m, torch.tensor(x))
    want, want_h = np_forward(m, x, zero_states(m, 4))
    close(out, want)
    for got, exp in zip(h, want_h, strict=True):
        close(got, exp)


@pytest.mark.parametrize("kind", list(LAYERS))
def test_batch_first_transposes_input_and_output_but_not_the_state(kind):
    m = LAYERS[kind](num_layers=2, bidirectional=True, batch_first=True, dtype=torch.float64)
    x = RNG.standard_normal((4, 6, 3))  # (N, L, I)
    states = [RNG.standard_normal(s.shape) for s in zero_states(m, 4)]
    want, want_h = np_forward(m, x.transpose(1, 0, 2), states)
    out, h = run(m, torch.tensor(x), states)
    assert out.shape == (4, 6, 2 * (m.proj_size or 5))
    close(out, want.transpose(1, 0, 2))
    for got, exp in zip(h, want_h, strict=True):
        close(got, exp)


@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input_is_a_batch_of_one(kind, batch_first):
    m = LAYERS[kind](num_layers=2, bidirectional=True, batch_first=batch_first, dtype=torch.float64)
    x = RNG.standard_normal((5, 3))
    states = [RNG.standard_normal(s.shape)[:, 0] for s in zero_states(m, 1)]
    want, want_h = np_forward(m, x[:, None], [s[:, None] for s in states])
    out, h = run(m, torch.tensor(x), states)
    close(out, want[:, 0])
    for got, exp in zip(h, want_h, strict=True):
        assert got.dim() == 2
        close(got, exp[:, 0])


def test_lstm_with_projection_has_projected_h_and_full_c():
    m = nn.LSTM(4, 6, num_layers=2, proj_size=3, bidirectional=True)
    out, (h, c) = m(torch.randn(7, 2, 4))
    assert out.shape == (7, 2, 6)
    assert h.shape == (4, 2, 3)
    assert c.shape == (4, 2, 6)


# ---------------------------------------------------------------------------
# Packed sequences
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(LAYERS))
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_packed_input_matches_each_sequence_run_alone(kind, batch_first, enforce_sorted):
    m = LAYERS[kind](num_layers=2, bidirectional=True, batch_first=batch_first, dtype=torch.float64)
    lengths = [6, 4, 4, 1] if enforce_sorted else [3, 6, 1, 4]
    seqs = [RNG.standard_normal((n, 3)) for n in lengths]
    states = [RNG.standard_normal(s.shape) for s in zero_states(m, len(seqs))]
    padded = pad_sequence([torch.tensor(s) for s in seqs], batch_first=batch_first)
    packed = pack_padded_sequence(padded, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    out, h = run(m, packed, states)
    assert isinstance(out, PackedSequence)
    assert torch.equal(out.batch_sizes, packed.batch_sizes)
    unpacked, got_lengths = pad_packed_sequence(out, batch_first=batch_first)
    assert got_lengths.tolist() == lengths
    if batch_first:
        unpacked = unpacked.transpose(0, 1)
    for b, seq in enumerate(seqs):
        want, want_h = np_forward(m, seq[:, None], [s[:, b : b + 1] for s in states])
        close(unpacked[: lengths[b], b], want[:, 0])
        close(unpacked[lengths[b] :, b], np.zeros_like(npy(unpacked[lengths[b] :, b])))
        for got, exp in zip(h, want_h, strict=True):
            close(got[:, b], exp[:, 0])


def test_packed_sequence_of_equal_lengths_matches_the_padded_run():
    m = nn.GRU(3, 4, num_layers=2, dtype=torch.float64)
    x = randn(5, 3, 3)
    out, h = m(x)
    pout, ph = m(pack_padded_sequence(x, [5, 5, 5]))
    close(pad_packed_sequence(pout)[0], npy(out))
    close(ph, npy(h))


# ---------------------------------------------------------------------------
# Cells
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "mode"),
    [(lambda b: nn.RNNCell(3, 5, bias=b), "tanh"), (lambda b: nn.RNNCell(3, 5, b, "relu"), "relu"),
     (lambda b: nn.LSTMCell(3, 5, bias=b), "lstm"), (lambda b: nn.GRUCell(3, 5, bias=b), "gru")],
)  # fmt: skip
@pytest.mark.parametrize("bias", [True, False])
def test_cell_matches_numpy_step(cell, mode, bias):
    m = cell(bias).double()
    p = {"w_ih": npy(m.weight_ih), "w_hh": npy(m.weight_hh), "w_hr": None,
         "b_ih": npy(m.bias_ih) if bias else None, "b_hh": npy(m.bias_hh) if bias else None}  # fmt: skip
    assert (m.bias_ih is None) == (not bias)
    x = RNG.standard_normal((4, 3))
    state = tuple(RNG.standard_normal((4, 5)) for _ in range(2 if mode == "lstm" else 1))
    hx = tuple(torch.tensor(s) for s in state) if mode == "lstm" else torch.tensor(state[0])
    want = np_step(mode, x, state, p)
    got = m(torch.tensor(x), hx)
    got = got if mode == "lstm" else (got,)
    for g, w in zip(got, want, strict=True):
        close(g, w)
    # unbatched: 1-D input and state
    hx1 = tuple(torch.tensor(s[1]) for s in state) if mode == "lstm" else torch.tensor(state[0][1])
    got1 = m(torch.tensor(x[1]), hx1)
    got1 = got1 if mode == "lstm" else (got1,)
    for g, w in zip(got1, want, strict=True):
        assert g.shape == (5,)
        close(g, w[1])
    # no state: zeros
    zeros = tuple(np.zeros((4, 5)) for _ in state)
    got0 = m(torch.tensor(x))
    got0 = got0 if mode == "lstm" else (got0,)
    for g, w in zip(got0, np_step(mode, x, zeros, p), strict=True):
        close(g, w)


def test_layer_with_cell_weights_matches_cells_stepped_by_hand():
    lstm = nn.LSTM(3, 4, dtype=torch.float64)
    cell = nn.LSTMCell(3, 4, dtype=torch.float64)
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = randn(5, 2, 3)
    h, c = torch.zeros(2, 4, dtype=torch.float64), torch.zeros(2, 4, dtype=torch.float64)
    outs = []
    for t in range(5):
        h, c = cell(x[t], (h, c))
        outs.append(h)
    out, (hn, cn) = lstm(x)
    close(out, npy(torch.stack(outs)))
    close(hn[0], npy(h))
    close(cn[0], npy(c))


# ---------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------


def _functional(module):
    names = [n for n, _ in module.named_parameters()]

    def f(x, h0, *params):
        hx = h0
        if isinstance(module, nn.LSTM):
            hx = (h0, torch.full((h0.shape[0], h0.shape[1], module.hidden_size), 0.2, dtype=h0.dtype))
        out, h = functional_call(module, dict(zip(names, params, strict=True)), (x, hx))
        h = h if isinstance(h, tuple) else (h,)
        data = out.data if isinstance(out, PackedSequence) else out
        return (data, *h)

    return f


@pytest.mark.parametrize("kind", ["rnn_tanh", "lstm", "lstm_proj", "gru"])
@pytest.mark.parametrize("packed", [False, True])
def test_gradcheck_through_layers_directions_and_states(kind, packed):
    torch.manual_seed(1)
    m = LAYERS[kind](num_layers=2, bidirectional=True, dtype=torch.float64)
    # keep the sizes small for the finite differences
    x = randn(3, 2, 3).requires_grad_()
    h0 = randn(4, 2, m.proj_size or 5).requires_grad_()
    params = [p.detach().clone().requires_grad_() for p in m.parameters()]
    f = _functional(m)
    if packed:
        g = lambda x, h0, *ps: f(pack_padded_sequence(x, [3, 1], enforce_sorted=True), h0, *ps)
    else:
        g = f
    assert gradcheck(g, (x, h0, *params))


@pytest.mark.parametrize("cell", [nn.RNNCell, nn.LSTMCell, nn.GRUCell])
def test_gradcheck_cells(cell):
    m = cell(3, 4, dtype=torch.float64)
    names = [n for n, _ in m.named_parameters()]
    lstm = cell is nn.LSTMCell

    def f(x, h, *params):
        hx = (h, h * 0.5) if lstm else h
        out = functional_call(m, dict(zip(names, params, strict=True)), (x, hx))
        return out if lstm else (out,)

    x, h = randn(2, 3).requires_grad_(), randn(2, 4).requires_grad_()
    params = [p.detach().clone().requires_grad_() for p in m.parameters()]
    assert gradcheck(f, (x, h, *params))


def test_gradcheck_pack_and_pad_functions():
    x = randn(4, 3, 2).requires_grad_()

    def f(x):
        packed = pack_padded_sequence(x, [2, 4, 3], enforce_sorted=False)
        padded, _ = pad_packed_sequence(packed, batch_first=True, padding_value=1.5, total_length=5)
        return packed.data, padded

    assert gradcheck(f, (x,))
    seqs = (randn(2, 2).requires_grad_(), randn(4, 2).requires_grad_())
    assert gradcheck(lambda a, b: pad_sequence([a, b], padding_side="left"), seqs)


# ---------------------------------------------------------------------------
# Parameters: names, shapes, initialisation, state_dict
# ---------------------------------------------------------------------------


def test_lstm_parameter_names_and_shapes_are_torchs():
    # torch's documented names: weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k},
    # bias_hh_l{k}, weight_hr_l{k}, each with _reverse for the backward direction.
    m = nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5)
    expected = [
        ("weight_ih_l0", (80, 10)), ("weight_hh_l0", (80, 5)), ("bias_ih_l0", (80,)), ("bias_hh_l0", (80,)),
        ("weight_hr_l0", (5, 20)),
        ("weight_ih_l0_reverse", (80, 10)), ("weight_hh_l0_reverse", (80, 5)), ("bias_ih_l0_reverse", (80,)),
        ("bias_hh_l0_reverse", (80,)), ("weight_hr_l0_reverse", (5, 20)),
        ("weight_ih_l1", (80, 10)), ("weight_hh_l1", (80, 5)), ("bias_ih_l1", (80,)), ("bias_hh_l1", (80,)),
        ("weight_hr_l1", (5, 20)),
        ("weight_ih_l1_reverse", (80, 10)), ("weight_hh_l1_reverse", (80, 5)), ("bias_ih_l1_reverse", (80,)),
        ("bias_hh_l1_reverse", (80,)), ("weight_hr_l1_reverse", (5, 20)),
    ]  # fmt: skip
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == expected
    assert [[tuple(p.shape) for p in ws] for ws in m.all_weights][1] == [s for _, s in expected[5:10]]


def test_gru_and_rnn_parameter_names_and_shapes_are_torchs():
    gru = nn.GRU(4, 6, num_layers=2, bias=False)
    assert [(k, tuple(v.shape)) for k, v in gru.state_dict().items()] == [
        ("weight_ih_l0", (18, 4)), ("weight_hh_l0", (18, 6)),
        ("weight_ih_l1", (18, 6)), ("weight_hh_l1", (18, 6)),
    ]  # fmt: skip
    rnn = nn.RNN(4, 6, bidirectional=True, num_layers=2)
    assert [(k, tuple(v.shape)) for k, v in rnn.state_dict().items()] == [
        ("weight_ih_l0", (6, 4)), ("weight_hh_l0", (6, 6)), ("bias_ih_l0", (6,)), ("bias_hh_l0", (6,)),
        ("weight_ih_l0_reverse", (6, 4)), ("weight_hh_l0_reverse", (6, 6)), ("bias_ih_l0_reverse", (6,)),
        ("bias_hh_l0_reverse", (6,)),
        ("weight_ih_l1", (6, 12)), ("weight_hh_l1", (6, 6)), ("bias_ih_l1", (6,)), ("bias_hh_l1", (6,)),
        ("weight_ih_l1_reverse", (6, 12)), ("weight_hh_l1_reverse", (6, 6)), ("bias_ih_l1_reverse", (6,)),
        ("bias_hh_l1_reverse", (6,)),
    ]  # fmt: skip
    cell = nn.GRUCell(4, 6)
    assert [(k, tuple(v.shape)) for k, v in cell.state_dict().items()] == [
        ("weight_ih", (18, 4)), ("weight_hh", (18, 6)), ("bias_ih", (18,)), ("bias_hh", (18,)),
    ]  # fmt: skip
    assert list(nn.LSTMCell(2, 3, bias=False).state_dict()) == ["weight_ih", "weight_hh"]


def test_initialisation_is_uniform_in_one_over_sqrt_hidden_in_registration_order():
    torch.manual_seed(5)
    m = nn.LSTM(3, 16, num_layers=2)
    torch.manual_seed(5)
    for p in m.parameters():
        want = torch.empty(p.shape).uniform_(-0.25, 0.25)
        assert torch.equal(p.detach(), want)
    assert all(float(p.abs().max()) <= 0.25 for p in nn.GRUCell(3, 16).parameters())


def test_state_dict_round_trip_gives_the_same_outputs():
    a = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    b = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    b.load_state_dict(a.state_dict())
    x = torch.randn(4, 2, 3)
    assert torch.equal(a(x)[0], b(x)[0])


def test_all_weights_flatten_parameters_repr_copy_and_dtype_conversion():
    m = nn.GRU(3, 4, num_layers=2)
    assert len(m.all_weights) == 2 and m.all_weights[1][0] is m.weight_ih_l1
    m.flatten_parameters()
    assert repr(m) == "GRU(3, 4, num_layers=2)"
    assert repr(nn.LSTM(3, 4, 2, False, True, 0.5, True, 2)) == (
        "LSTM(3, 4, proj_size=2, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)"
    )
    cell = nn.RNNCell(3, 4, bias=False, nonlinearity="relu")
    assert repr(cell) == "RNNCell(3, 4, bias=False, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"
    x = torch.randn(5, 2, 3)
    for other in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert torch.equal(other(x)[0], m(x)[0])
    m.double()
    assert m(x.double())[0].dtype == torch.float64
    assert m.all_weights[0][0].dtype == torch.float64


# ---------------------------------------------------------------------------
# Dropout between layers
# ---------------------------------------------------------------------------


def test_dropout_applies_between_layers_not_after_the_last_and_only_in_training():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = nn.RNN(3, 4, num_layers=2, dropout=1.0, dtype=torch.float64)
    x = randn(5, 2, 3)
    out, h = m(x)
    # the second layer saw zeros: its output is the recurrence of its biases alone
    second = nn.RNN(3, 4, dtype=torch.float64)
    with torch.no_grad():
        second.weight_ih_l0.copy_(torch.zeros(4, 3, dtype=torch.float64))
        for name in ("weight_hh", "bias_ih", "bias_hh"):
            getattr(second, name + "_l0").copy_(getattr(m, name + "_l1"))
    close(out, npy(second(x)[0]))
    assert float(out.abs().sum()) > 0  # the last layer's output is not dropped
    m.eval()
    want, want_h = np_forward(m, npy(x), zero_states(m, 2))
    out, h = m(x)
    close(out, want)
    close(h, want_h[0])


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda: nn.GRU(3, 4, dropout=1.5), ValueError, "dropout should be a number in range"),
        (lambda: nn.GRU(3, 4, dropout=True), ValueError, "dropout should be a number in range"),
        (lambda: nn.RNN(3, 0), ValueError, "hidden_size must be greater than zero"),
        (lambda: nn.RNN(0, 3), ValueError, "input_size must be greater than zero"),
        (lambda: nn.RNN(3, 2.0), TypeError, "hidden_size should be of type int, got: float"),
        (lambda: nn.LSTM(3, 4, bias=1), TypeError, "bias should be of type bool, got: int"),
        (lambda: nn.LSTM(3, 4, num_layers=0), ValueError, "num_layers must be greater than zero"),
        (lambda: nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller than hidden_size"),
        (lambda: nn.LSTM(3, 4, proj_size=-1), ValueError, "proj_size should be a positive integer or zero"),
        (lambda: nn.GRU(3, 4, proj_size=1), ValueError, "proj_size argument is only supported for LSTM"),
        (lambda: nn.RNN(3, 4, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
        (lambda: nn.RNNBase("CELL", 3, 4), ValueError, "Unrecognized RNN mode: CELL"),
    ],
)
def test_constructor_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: nn.RNN(3, 4)(torch.randn(2, 2, 2, 3)), ValueError,
         r"RNN: Expected input to be 2D or 3D, got 4D tensor instead"),
        (lambda: nn.LSTM(3, 4)(torch.randn(3)), ValueError, "LSTM: Expected input to be 2D or 3D, got 1D"),
        (lambda: nn.RNN(3, 4)(torch.randn(5, 2, 2)), RuntimeError,
         r"input.size\(-1\) must be equal to input_size. Expected 3, got 2"),
        (lambda: nn.GRU(3, 4, bidirectional=True)(torch.randn(5, 2, 3), torch.randn(1, 2, 4)), RuntimeError,
         r"Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"),
        (lambda: nn.RNN(3, 4, batch_first=True)(torch.randn(2, 5, 3), torch.randn(1, 5, 4)), RuntimeError,
         r"Expected hidden size \(1, 2, 4\), got \[1, 5, 4\]"),
        (lambda: nn.RNN(3, 4)(torch.randn(5, 2, 3), torch.randn(2, 4)), RuntimeError,
         "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
        (lambda: nn.GRU(3, 4)(torch.randn(5, 3), torch.randn(1, 1, 4)), RuntimeError,
         "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
        (lambda: nn.LSTM(3, 4)(torch.randn(5, 2, 3), (torch.randn(2, 4), torch.randn(1, 2, 4))), RuntimeError,
         r"hx and cx should also be 3-D but got \(2-D, 3-D\) tensors"),
        (lambda: nn.LSTM(3, 4, proj_size=2)(torch.randn(5, 2, 3), (torch.randn(1, 2, 2),) * 2),
         RuntimeError, r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 2\]"),
        (lambda: nn.LSTM(3, 4)(torch.randn(5, 2, 3), (torch.randn(1, 2, 3), torch.randn(1, 2, 4))),
         RuntimeError, r"Expected hidden\[0\] size \(1, 2, 4\), got \[1, 2, 3\]"),
        (lambda: nn.GRU(3, 4)(torch.randn(5, 2, 3, dtype=torch.float64)), ValueError,
         r"RNN input dtype \(ferrograd.float64\) does not match weight dtype \(ferrograd.float32\)"),
        (lambda: nn.GRU(2, 4)(pack_sequence([torch.ones(3, 2), torch.ones(1, 2)]), torch.randn(1, 3, 4)),
         RuntimeError, r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"),
        (lambda: nn.RNNCell(3, 4)(torch.randn(1, 2, 3)), ValueError, "RNNCell: Expected input to be 1D"),
        (lambda: nn.GRUCell(3, 4)(torch.randn(2, 3), torch.randn(1, 2, 4)), ValueError,
         "GRUCell: Expected hidden to be 1D or 2D, got 3D instead"),
        (lambda: nn.LSTMCell(3, 4)(torch.randn(2, 3), (torch.randn(2, 4), torch.randn(1, 2, 4))), ValueError,
         r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D instead"),
        (lambda: nn.RNNCell(3, 4)(torch.randn(2, 5)), RuntimeError,
         "input has inconsistent input_size: got 5 expected 3"),
        (lambda: nn.GRUCell(3, 4)(torch.randn(2, 3), torch.randn(3, 4)), RuntimeError,
         "Input batch size 2 doesn't match hidden0 batch size 3"),
        (lambda: nn.LSTMCell(3, 4)(torch.randn(2, 3), (torch.randn(2, 4), torch.randn(2, 5))), RuntimeError,
         "hidden1 has inconsistent hidden_size: got 5, expected 4"),
    ],
)  # fmt: skip
def test_forward_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------------------
# nn.utils.rnn
# ---------------------------------------------------------------------------


def test_pack_padded_sequence_lays_out_steps_and_records_the_order():
    seq = torch.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
    p = pack_padded_sequence(seq, torch.tensor([2, 1, 3]), batch_first=True, enforce_sorted=False)
    assert p.data.tolist() == [4, 1, 3, 5, 2, 6]
    assert p.batch_sizes.tolist() == [3, 2, 1] and p.batch_sizes.dtype == torch.int64
    assert p.sorted_indices.tolist() == [2, 0, 1]
    assert p.unsorted_indices.tolist() == [1, 2, 0]
    data, batch_sizes, sorted_indices, unsorted_indices = p  # a named tuple
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    padded, lengths = pad_packed_sequence(p, batch_first=True)
    assert padded.tolist() == seq.tolist() and lengths.tolist() == [2, 1, 3]
    # equal lengths keep their order (a stable sort)
    q = pack_padded_sequence(torch.zeros(3, 4), [2, 3, 2, 3], enforce_sorted=False)
    assert q.sorted_indices.tolist() == [1, 3, 0, 2]


def test_pad_packed_sequence_padding_value_and_total_length():
    p = pack_sequence([torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0])])
    padded, lengths = pad_packed_sequence(p, padding_value=-1.0, total_length=5)
    assert padded.tolist() == [[1.0, 4.0], [2.0, -1.0], [3.0, -1.0], [-1.0, -1.0], [-1.0, -1.0]]
    assert lengths.tolist() == [3, 1]
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        pad_packed_sequence(p, total_length=2)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_numpy(batch_first, side):
    seqs = [RNG.standard_normal((n, 2, 3)) for n in (2, 5, 3)]
    got = pad_sequence([torch.tensor(s) for s in seqs], batch_first, 7.0, side)
    want = np.full((3, 5, 2, 3), 7.0)
    for b, s in enumerate(seqs):
        if side == "right":
            want[b, : len(s)] = s
        else:
            want[b, 5 - len(s) :] = s
    close(got, want if batch_first else want.transpose(1, 0, 2, 3))


def test_unpad_and_unpack_invert_pad_and_pack():
    seqs = [randn(n, 2) for n in (2, 5, 3)]
    back = unpad_sequence(pad_sequence(seqs), torch.tensor([2, 5, 3]))
    assert all(torch.equal(a, b) for a, b in zip(back, seqs, strict=True))
    back = unpad_sequence(pad_sequence(seqs, batch_first=True), [2, 5, 3], batch_first=True)
    assert all(torch.equal(a, b) for a, b in zip(back, seqs, strict=True))
    back = unpack_sequence(pack_sequence(seqs, enforce_sorted=False))
    assert all(torch.equal(a, b) for a, b in zip(back, seqs, strict=True))


def test_packed_sequence_conversions_and_construction():
    p = pack_sequence([torch.tensor([1, 2]), torch.tensor([3])])
    assert p.to(torch.int64) is p
    assert p.double().data.dtype == torch.float64 and p.float().data.dtype == torch.float32
    assert p.cpu() is p and not p.is_cuda and not p.is_pinned()
    q = PackedSequence((p.data, p.batch_sizes), sorted_indices=torch.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]
    assert invert_permutation(torch.tensor([2, 0, 3, 1])).tolist() == [1, 3, 0, 2]
    assert invert_permutation(None) is None
    with pytest.raises(RuntimeError, match="not available"):
        p.cuda()


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: pack_padded_sequence(torch.randn(4, 3, 2), [2, 4, 3]), RuntimeError,
         "must be sorted in decreasing order when `enforce_sorted` is True"),
        (lambda: pack_padded_sequence(torch.randn(4, 3, 2), [4, 3, 0]), RuntimeError,
         "Length of all samples has to be greater than 0"),
        (lambda: pack_padded_sequence(torch.randn(4, 3, 2), [4, 3]), RuntimeError,
         r"Expected `len\(lengths\)` to be equal to batch_size, but got 2 \(batch_size=3\)"),
        (lambda: pack_padded_sequence(torch.randn(4, 2), [5, 3]), RuntimeError, "exceeds the 4 steps"),
        (lambda: pad_sequence([torch.ones(2)], padding_side="up"), RuntimeError,
         "Expected padding_side to be one of left or right, but got up."),
        (lambda: pad_sequence([]), RuntimeError, "received an empty list of sequences"),
        (lambda: pad_sequence(3), RuntimeError, "Expected iterable for input sequences"),
    ],
)  # fmt: skip
def test_sequence_utility_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_nn_utils_rnn_docstring_examples_run():
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    result = doctest.testmod(rnn_utils, extraglobs={"ferrograd": torch}, optionflags=flags)
    assert result.attempted > 0 and result.failed == 0


def test_torch_names_resolve():
    assert torch.nn.utils.rnn.pad_sequence is pad_sequence
    assert nn.modules.LSTM is nn.LSTM and nn.modules.RNNCellBase is nn.RNNCellBase
    assert isinstance(nn.GRU(2, 3), nn.RNNBase) and isinstance(nn.GRUCell(2, 3), nn.RNNCellBase)
