"""Recurrent layers: ``RNN``, ``LSTM`` and ``GRU`` over whole sequences, and
``RNNCell``, ``LSTMCell`` and ``GRUCell`` for one step.

Everything is composed from ``linear``, ``sigmoid``, ``tanh``, ``relu``,
slicing, ``cat`` and ``stack``, so gradients (of any order) come from the
ops' own derivative rules. A layer first applies its input weights to the
whole sequence in one ``linear`` (``gi = x W_ih^T + b_ih`` for every step),
then runs the recurrence one step at a time, where only ``h W_hh^T + b_hh``
is left to compute.

Parameter names, shapes, gate order and initialisation are torch's, so a
torch ``state_dict`` loads and gives the same outputs:

- layer ``k`` (and ``k_reverse`` for the backward direction) has
  ``weight_ih_l{k}`` ``(G * H, I_k)``, ``weight_hh_l{k}`` ``(G * H, P)``,
  ``bias_ih_l{k}`` and ``bias_hh_l{k}`` ``(G * H,)``, and with
  ``proj_size`` ``weight_hr_l{k}`` ``(P, H)``; ``G`` is 1 (RNN), 4 (LSTM)
  or 3 (GRU), ``P`` is ``proj_size`` or else ``hidden_size``, and ``I_k``
  is ``input_size`` for the first layer, ``D * P`` after it (``D`` the
  number of directions);
- the gate blocks are stacked along the first dim in the order
  ``i, f, g, o`` (LSTM) and ``r, z, n`` (GRU);
- every parameter is drawn from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``
  in registration order.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._repr import changed_settings
from .linear import _factory
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

# The state a recurrence carries from step to step: ``(h,)``, or ``(h, c)`` for the LSTM.
_State = tuple[Tensor, ...]
# One step: (input projection gi, state, W_hh, b_hh, W_hr) -> new state, output first.
_Step = Callable[[Tensor, _State, Tensor, Tensor | None, Tensor | None], _State]


def _tanh_step(gi: Tensor, state: _State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None) -> _State:
    """``h' = tanh(gi + h W_hh^T + b_hh)``."""
    return (_fg.tanh(gi + F.linear(state[0], w_hh, b_hh)),)


def _relu_step(gi: Tensor, state: _State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None) -> _State:
    """``h' = relu(gi + h W_hh^T + b_hh)``."""
    return (F.relu(gi + F.linear(state[0], w_hh, b_hh)),)


def _lstm_step(gi: Tensor, state: _State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None) -> _State:
    """The LSTM step on the gate blocks ``i, f, g, o`` of ``gi + h W_hh^T + b_hh``:
    ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``, ``h' = sigmoid(o) tanh(c')``,
    then ``h' W_hr^T`` when the layer projects."""
    h, c = state
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = _fg.sigmoid(f) * c + _fg.sigmoid(i) * _fg.tanh(g)
    h = _fg.sigmoid(o) * _fg.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_step(gi: Tensor, state: _State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None) -> _State:
    """The GRU step on the blocks ``r, z, n`` of ``gi`` and of ``gh = h W_hh^T + b_hh``:
    ``r = sigmoid(gi_r + gh_r)``, ``z = sigmoid(gi_z + gh_z)``,
    ``n = tanh(gi_n + r gh_n)`` (the reset gate scales ``W_hn h + b_hn``
    only), ``h' = (1 - z) n + z h``."""
    (h,) = state
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = _fg.sigmoid(i_r + h_r)
    z = _fg.sigmoid(i_z + h_z)
    n = _fg.tanh(i_n + r * h_n)
    return (n + z * (h - n),)


_STEPS: dict[str, _Step] = {
    "RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": _lstm_step, "GRU": _gru_step,
}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _recur(step: _Step, gis: list[Tensor], batch_sizes: list[int], state: _State, reverse: bool,
           w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None) -> tuple[list[Tensor], _State]:
    """Runs ``step`` over the steps' input projections ``gis`` (step ``t``
    of shape ``(batch_sizes[t], G * H)``), forwards or backwards, from
    ``state`` (rows for ``batch_sizes[0]`` sequences).

    Note [Packed recurrences]: ``batch_sizes`` never increases, and the rows
    of step ``t`` are the first ``batch_sizes[t]`` sequences. Forwards, a
    sequence that ends leaves the state at its last row: its final state is
    set aside, and the rows still running are the first ones. Backwards,
    sequences join at their own last step, starting from their rows of the
    initial state, appended after the rows already running. Either way the
    final state has every sequence's row in batch order.

    Returns the output of each step (the state's first tensor) and the final state.
    """
    outputs: list[Tensor] = [gis[0]] * len(gis)
    if not reverse:
        ended: list[_State] = []
        rows = batch_sizes[0]
        for t, gi in enumerate(gis):
            b = batch_sizes[t]
            if b < rows:
                ended.append(tuple(s[b:rows] for s in state))
                state = tuple(s[:b] for s in state)
                rows = b
            state = step(gi, state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        if ended:
            pieces = [state, *reversed(ended)]
            state = tuple(_fg.cat([p[j] for p in pieces], 0) for j in range(len(state)))
        return outputs, state
    initial = state
    rows = batch_sizes[-1]
    if rows < batch_sizes[0]:
        state = tuple(s[:rows] for s in state)
    for t in range(len(gis) - 1, -1, -1):
        b = batch_sizes[t]
        if b > rows:
            state = tuple(_fg.cat([s, s0[rows:b]], 0) for s, s0 in zip(state, initial, strict=True))
            rows = b
        state = step(gis[t], state, w_hh, b_hh, w_hr)
        outputs[t] = state[0]
    return outputs, state


class RNNBase(Module):
    r"""What :class:`RNN`, :class:`LSTM` and :class:`GRU` share: the
    parameters of every layer and direction, their initialisation, the
    checks of inputs and hidden states, and the layer-by-layer recurrence.

    Args:
        mode (str): ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.
        input_size (int): the features of each input step.
        hidden_size (int): the features of the hidden state.
        num_layers (int): stacked recurrent layers, each reading the
            previous one's output. Default: 1.
        bias (bool): learn ``bias_ih`` and ``bias_hh``. Default: ``True``.
        batch_first (bool): inputs and outputs are ``(N, L, *)`` instead of
            ``(L, N, *)`` (hidden states keep the batch in dim 1). Default: ``False``.
        dropout (float): the probability of dropout on each layer's output
            except the last's, in training. Default: 0.
        bidirectional (bool): run a second recurrence backwards over each
            sequence and concatenate the two outputs. Default: ``False``.
        proj_size (int): LSTM only: project ``h`` to this size with
            ``weight_hr``. Default: 0 (no projection).
        device, dtype: of the parameters.

    Example:
        >>> nn.RNNBase("GRU", 4, 8, num_layers=2).weight_hh_l1.shape
        ferrograd.Size([24, 8])
    """

    __constants__ = [
        "mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional",
        "proj_size",
    ]  # fmt: skip

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element "
                "being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        kw = _factory(device, dtype)
        gates = _GATES[mode] * hidden_size
        out_size = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                in_size = input_size if layer == 0 else out_size * directions
                shapes: dict[str, tuple[int, ...]] = {
                    "weight_ih": (gates, in_size), "weight_hh": (gates, out_size),
                }
                if bias:
                    shapes.update(bias_ih=(gates,), bias_hh=(gates,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                names = [name + suffix for name in shapes]
                for name, shape in zip(names, shapes.values(), strict=True):
                    setattr(self, name, Parameter(_fg.empty(shape, **kw)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws every parameter from ``U(-k, k)`` with ``k = 1/sqrt(hidden_size)``."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """Does nothing: torch packs the weights into one buffer for cuDNN; on
        the CPU, as here, its call is a no-op too."""

    @property
    def _flat_weights(self) -> list[Parameter | None]:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in order: layer 0 (then
        layer 0 reverse), layer 1, ...; within one, ``weight_ih, weight_hh``,
        the biases and ``weight_hr`` (those that exist)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _weights(self, index: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None, Tensor | None]:
        """``(W_ih, W_hh, b_ih, b_hh, W_hr)`` of layer ``index // D``, direction ``index % D``."""
        directions = 2 if self.bidirectional else 1
        suffix = f"_l{index // directions}" + ("_reverse" if index % directions else "")
        w_ih, w_hh = getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix)
        b_ih = getattr(self, "bias_ih" + suffix) if self.bias else None
        b_hh = getattr(self, "bias_hh" + suffix) if self.bias else None
        w_hr = getattr(self, "weight_hr" + suffix) if self.proj_size > 0 else None
        return w_ih, w_hh, b_ih, b_hh, w_hr

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        """Raises unless ``input`` has the parameters' dtype, 3 dims (2 when
        packed) and ``input_size`` features.

        Args:
            input (Tensor): the (batched) input, or a packed sequence's ``data``.
            batch_sizes (Tensor, optional): a packed sequence's batch sizes, or ``None``.
        """
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight_dtype}). "
                f"Convert input: input.to({weight_dtype}), or convert model: model.to({input.dtype})"
            )
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. "
                f"Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        """``(num_layers * D, N, proj_size or hidden_size)``: the shape ``h_0`` must have.

        Args:
            input (Tensor): the (batched) input, or a packed sequence's ``data``.
            batch_sizes (Tensor, optional): a packed sequence's batch sizes, or ``None``.
        """
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        return self.num_layers * directions, batch, self.proj_size if self.proj_size > 0 else self.hidden_size

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """Raises ``RuntimeError`` (``msg`` filled with the two shapes) unless
        ``hx`` has shape ``expected_hidden_size``.

        Args:
            hx (Tensor): a hidden state.
            expected_hidden_size (tuple of int): the shape it must have.
            msg (str): the message, with two ``{}`` for the shapes.
        """
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        """Checks the input and the initial hidden state together.

        Args:
            input (Tensor): the (batched) input, or a packed sequence's ``data``.
            hidden (Tensor): ``h_0``.
            batch_sizes (Tensor, optional): a packed sequence's batch sizes, or ``None``.
        """
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        """``hx`` with its batch dim (1) reordered by ``permutation`` (unchanged for ``None``).

        Args:
            hx (Tensor): a hidden state ``(num_layers * D, N, *)``.
            permutation (Tensor, optional): the new order of the batch.
        """
        return hx if permutation is None else hx.index_select(1, permutation)

    def _forward(self, input: Tensor | PackedSequence, hx: Any, name: str) -> tuple[Any, _State]:
        """The recurrence of every layer and direction, with torch's checks.
        ``hx`` is a tensor (``(h_0, c_0)`` for the LSTM) or ``None``; returns
        the output (a ``PackedSequence`` for one) and the final state."""
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        sorted_indices = unsorted_indices = None
        if isinstance(input, PackedSequence):
            x, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes: list[int] | None = [int(n) for n in batch_sizes_t.tolist()]
            batched = True
        else:
            x, batch_sizes, batch_sizes_t = input, None, None
            if x.dim() not in (2, 3):
                kind = " tensor" if name == "RNN" else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {x.dim()}D{kind} instead")
            batched = x.dim() == 3
            if not batched:
                x = x.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                dims = [h.dim() for h in hx] if lstm else [hx.dim()]
                want = 3 if batched else 2
                if any(d != want for d in dims):
                    what = "hx and cx" if lstm else "hx"
                    got = f"({dims[0]}-D, {dims[1]}-D) tensors" if lstm else f"{dims[0]}-D tensor"
                    kind = "batched 3-D" if batched else "unbatched 2-D"
                    raise RuntimeError(f"For {kind} input, {what} should also be {want}-D but got {got}")
                if not batched:
                    hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        if hx is None:
            batch = batch_sizes[0] if batch_sizes is not None else x.size(0 if self.batch_first else 1)
            out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            sizes = [out_size, self.hidden_size] if lstm else [out_size]
            hx = tuple(_fg.zeros(self.num_layers * directions, batch, n, dtype=x.dtype) for n in sizes)
            self.check_input(x, batch_sizes_t)
        else:
            self.check_forward_args(x, hx, batch_sizes_t)
            hx = self.permute_hidden(hx, sorted_indices)
            if not lstm:
                hx = (hx,)
        if batch_sizes is None and self.batch_first:
            x = x.transpose(0, 1)
        out, state = self._layers(x, batch_sizes, tuple(hx))
        if isinstance(input, PackedSequence):
            result: Any = PackedSequence(out, batch_sizes_t, sorted_indices, unsorted_indices)
        else:
            result = out.transpose(0, 1) if self.batch_first else out
            if not batched:
                result = result.squeeze(0 if self.batch_first else 1)
                state = tuple(s.squeeze(1) for s in state)
        if unsorted_indices is not None:
            state = tuple(s.index_select(1, unsorted_indices) for s in state)
        return result, state

    def _layers(self, x: Tensor, batch_sizes: list[int] | None, hx: _State) -> tuple[Tensor, _State]:
        """Runs the layers on ``x``, ``(L, N, I)`` or, packed, ``(sum(batch_sizes), I)``,
        from ``hx`` (each ``(num_layers * D, N, *)``); returns the last layer's
        output and the stacked final states."""
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        packed = batch_sizes is not None
        sizes = batch_sizes if batch_sizes is not None else [int(x.shape[1])] * int(x.shape[0])
        if not sizes:
            raise RuntimeError(f"{type(self).__name__}: the input sequence is empty")
        finals: list[list[Tensor]] = [[] for _ in hx]
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(index)
                gi = F.linear(x, w_ih, b_ih)
                gis = list(gi.split(sizes, 0)) if packed else list(gi.unbind(0))
                state0 = tuple(h[index] for h in hx)
                steps, state = _recur(step, gis, sizes, state0, direction == 1, w_hh, b_hh, w_hr)
                outputs.append(_fg.cat(steps, 0) if packed else _fg.stack(steps, 0))
                for final, s in zip(finals, state, strict=True):
                    final.append(s)
            x = outputs[0] if directions == 1 else _fg.cat(outputs, -1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, tuple(_fg.stack(final, 0) for final in finals)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr (those not at their defaults)."""
        defaults = {
            "proj_size": 0, "num_layers": 1, "bias": True, "batch_first": False, "dropout": 0,
            "bidirectional": False,
        }  # fmt: skip
        return f"{self.input_size}, {self.hidden_size}" + changed_settings(self, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # modules pickled before projections existed have no proj_size
        state.setdefault("proj_size", 0)
        super().__setstate__(state)


def _no_proj_size(cls: str, kwargs: dict[str, Any]) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{cls}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


_SHAPES = r"""
    Shape:
        Input: ``(L, N, H_in)``, ``(N, L, H_in)`` with ``batch_first``,
        ``(L, H_in)`` unbatched, or a :class:`~ferrograd.nn.utils.rnn.PackedSequence`.
        ``h_0`` and ``h_n``: ``(D * num_layers, N, H_out)``
        (``(D * num_layers, H_out)`` unbatched; the batch stays in dim 1
        with ``batch_first``), zeros when ``h_0`` is not given. Output:
        ``(L, N, D * H_out)`` (likewise reordered or packed as the input),
        the last layer's ``h_t`` at every step, both directions
        concatenated. ``D`` is 2 when bidirectional, else 1.
"""


class RNN(RNNBase):
    r"""A multi-layer Elman RNN: each layer computes, for each step ``t``,

    ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``

    (``relu`` instead of ``tanh`` with ``nonlinearity='relu'``), ``x_t`` being
    the input for the first layer and the previous layer's ``h_t`` (after
    dropout in training) for the others.

    Args:
        input_size (int): the features of each input step ``H_in``.
        hidden_size (int): the features of the hidden state ``H_out``.
        num_layers (int): stacked layers. Default: 1.
        nonlinearity (str): ``'tanh'`` or ``'relu'``. Default: ``'tanh'``.
        {stack_args}
        device, dtype: of the parameters.

    {shapes}

    Example:
        >>> rnn = nn.RNN(10, 20, num_layers=2)
        >>> output, h_n = rnn(ferrograd.randn(5, 3, 10), ferrograd.randn(2, 3, 20))
        >>> output.shape, h_n.shape
        (ferrograd.Size([5, 3, 20]), ferrograd.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        _no_proj_size("RNN", kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype)

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        """Returns ``(output, h_n)``; ``output`` is packed when ``input`` is.

        Args:
            input (Tensor or PackedSequence): the sequences.
            hx (Tensor, optional): ``h_0``. Default: zeros.
        """
        output, state = self._forward(input, hx, "RNN")
        return output, state[0]


class LSTM(RNNBase):
    r"""A multi-layer long short-term memory RNN: each layer computes, for
    each step ``t``, with ``σ`` the sigmoid and ``*`` the elementwise product,

    ``i_t = σ(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)`` (input gate),
    ``f_t = σ(W_if x_t + b_if + W_hf h_{t-1} + b_hf)`` (forget gate),
    ``g_t = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)`` (cell candidate),
    ``o_t = σ(W_io x_t + b_io + W_ho h_{t-1} + b_ho)`` (output gate),
    ``c_t = f_t * c_{t-1} + i_t * g_t``, ``h_t = o_t * tanh(c_t)``.

    ``weight_ih_l{k}`` stacks ``W_ii, W_if, W_ig, W_io`` (``(4 * hidden_size,
    *)``), and likewise the others. With ``proj_size > 0``, ``h_t`` is
    further multiplied by ``weight_hr_l{k}`` (``h_t = W_hr h_t``), so ``h``
    and the output have ``proj_size`` features while ``c`` keeps ``hidden_size``.

    Args:
        input_size (int): the features of each input step ``H_in``.
        hidden_size (int): the features of the cell state ``H_cell``.
        num_layers (int): stacked layers. Default: 1.
        {stack_args}
        proj_size (int): project ``h`` to this size (``H_out``); 0 for none. Default: 0.
        device, dtype: of the parameters.

    {shapes}
        ``c_0`` and ``c_n`` are ``(D * num_layers, N, H_cell)``. ``H_out`` is
        ``proj_size`` if set, else ``hidden_size``.

    Example:
        >>> lstm = nn.LSTM(10, 20, batch_first=True, proj_size=5)
        >>> output, (h_n, c_n) = lstm(ferrograd.randn(3, 7, 10))
        >>> output.shape, h_n.shape, c_n.shape
        (ferrograd.Size([3, 7, 5]), ferrograd.Size([1, 3, 5]), ferrograd.Size([1, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        """``(num_layers * D, N, hidden_size)``: the shape ``c_0`` must have.

        Args:
            input (Tensor): the (batched) input, or a packed sequence's ``data``.
            batch_sizes (Tensor, optional): a packed sequence's batch sizes, or ``None``.
        """
        layers, batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return layers, batch, self.hidden_size

    def check_forward_args(  # type: ignore[override]
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None
    ) -> None:
        """Checks the input and both initial states.

        Args:
            input (Tensor): the (batched) input, or a packed sequence's ``data``.
            hidden (tuple of Tensor): ``(h_0, c_0)``.
            batch_sizes (Tensor, optional): a packed sequence's batch sizes, or ``None``.
        """
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(  # type: ignore[override]
        self, hx: tuple[Tensor, Tensor], permutation: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        """Both states with their batch dim reordered by ``permutation``.

        Args:
            hx (tuple of Tensor): ``(h, c)``.
            permutation (Tensor, optional): the new order of the batch.
        """
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input: Tensor | PackedSequence,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Any, tuple[Tensor, Tensor]]:
        """Returns ``(output, (h_n, c_n))``; ``output`` is packed when ``input`` is.

        Args:
            input (Tensor or PackedSequence): the sequences.
            hx (tuple of Tensor, optional): ``(h_0, c_0)``. Default: zeros.
        """
        output, (h, c) = self._forward(input, hx, "LSTM")
        return output, (h, c)


class GRU(RNNBase):
    r"""A multi-layer gated recurrent unit RNN: each layer computes, for each
    step ``t``, with ``σ`` the sigmoid and ``*`` the elementwise product,

    ``r_t = σ(W_ir x_t + b_ir + W_hr h_{t-1} + b_hr)`` (reset gate),
    ``z_t = σ(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)`` (update gate),
    ``n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))``,
    ``h_t = (1 - z_t) * n_t + z_t * h_{t-1}``.

    ``weight_ih_l{k}`` stacks ``W_ir, W_iz, W_in`` (``(3 * hidden_size, *)``),
    and likewise the others.

    Args:
        input_size (int): the features of each input step ``H_in``.
        hidden_size (int): the features of the hidden state ``H_out``.
        num_layers (int): stacked layers. Default: 1.
        {stack_args}
        device, dtype: of the parameters.

    {shapes}

    Example:
        >>> output, h_n = nn.GRU(10, 20, bidirectional=True)(ferrograd.randn(5, 10))
        >>> [tuple(t.shape) for t in (output, h_n)]
        [(5, 40), (2, 20)]
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        _no_proj_size("GRU", kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)

    def forward(self, input: Tensor | PackedSequence, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        """Returns ``(output, h_n)``; ``output`` is packed when ``input`` is.

        Args:
            input (Tensor or PackedSequence): the sequences.
            hx (Tensor, optional): ``h_0``. Default: zeros.
        """
        output, state = self._forward(input, hx, "GRU")
        return output, state[0]


# The arguments every stacked recurrent layer takes, in the Args sections.
_STACK_ARGS = """\
        bias (bool): learn ``bias_ih_l{k}`` and ``bias_hh_l{k}``. Default: ``True``.
        batch_first (bool): inputs and outputs are ``(N, L, *)``. Default: ``False``.
        dropout (float): dropout on each layer's output but the last's, in
            training. Default: 0.
        bidirectional (bool): add a backward recurrence (``_reverse``
            parameters). Default: ``False``.
"""
for _cls in (RNN, LSTM, GRU):
    doc = (_cls.__doc__ or "").replace("        {stack_args}\n", _STACK_ARGS)
    _cls.__doc__ = doc.replace("    {shapes}\n", _SHAPES.lstrip("\n"))


class RNNCellBase(Module):
    r"""What the cells share: ``weight_ih`` ``(num_chunks * hidden_size,
    input_size)``, ``weight_hh`` ``(num_chunks * hidden_size, hidden_size)``
    and, with ``bias``, ``bias_ih`` and ``bias_hh`` ``(num_chunks *
    hidden_size,)``, all drawn from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

    Args:
        input_size (int): the features of the input.
        hidden_size (int): the features of the hidden state.
        bias (bool): learn ``bias_ih`` and ``bias_hh``.
        num_chunks (int): the number of gate blocks (1, 4 or 3).
        device, dtype: of the parameters.

    Example:
        >>> nn.RNNCellBase(3, 4, bias=False, num_chunks=2).weight_ih.shape
        ferrograd.Size([8, 3])
    """

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_fg.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_fg.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_fg.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_fg.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws every parameter from ``U(-k, k)`` with ``k = 1/sqrt(hidden_size)``."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr (those not at their defaults)."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _step(self, name: str, step: _Step, input: Tensor, hx: Any) -> _State:
        """Checks ``input`` and the states ``hx`` (a tensor, a pair, or
        ``None`` for zeros), adds the batch dim of unbatched ones, runs one
        ``step`` and removes that dim again."""
        states = 2 if step is _lstm_step else 1
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        given = None if hx is None else (tuple(hx) if states == 2 else (hx,))
        if given is not None:
            for i, h in enumerate(given):
                if h.dim() not in (1, 2):
                    what = f"hx[{i}]" if states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if given is None:
            zeros = _fg.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            given = (zeros,) * states
        elif not batched:
            given = tuple(h.unsqueeze(0) for h in given)
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}"
            )
        for i, h in enumerate(given):
            if input.size(0) != h.size(0):
                raise RuntimeError(
                    f"Input batch size {input.size(0)} doesn't match hidden{i} batch size {h.size(0)}"
                )
            if h.size(1) != self.hidden_size:
                raise RuntimeError(
                    f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected {self.hidden_size}"
                )
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        out = step(gi, given, self.weight_hh, self.bias_hh, None)
        return out if batched else tuple(s.squeeze(0) for s in out)


_CELL_SHAPES = r"""
    Shape:
        ``input``: ``(N, input_size)`` or ``(input_size,)``; ``hx`` and the
        result: ``(N, hidden_size)`` or ``(hidden_size,)``, zeros when ``hx``
        is not given.
"""


class RNNCell(RNNCellBase):
    r"""One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``
    (``relu`` with ``nonlinearity='relu'``).

    Args:
        input_size (int): the features of the input.
        hidden_size (int): the features of the hidden state.
        bias (bool): learn ``bias_ih`` and ``bias_hh``. Default: ``True``.
        nonlinearity (str): ``'tanh'`` or ``'relu'``. Default: ``'tanh'``.
        device, dtype: of the parameters.

    {shapes}

    Example:
        >>> cell = nn.RNNCell(10, 20)
        >>> hx = ferrograd.zeros(3, 20)
        >>> for x in ferrograd.randn(6, 3, 10):
        ...     hx = cell(x, hx)
        >>> hx.shape
        ferrograd.Size([3, 20])
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """Returns ``h'``.

        Args:
            input (Tensor): ``x``.
            hx (Tensor, optional): ``h``. Default: zeros.
        """
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        step = _tanh_step if self.nonlinearity == "tanh" else _relu_step
        return self._step("RNNCell", step, input, hx)[0]


class LSTMCell(RNNCellBase):
    r"""One LSTM step, with the gate blocks ``i, f, g, o`` of
    ``x W_ih^T + b_ih + h W_hh^T + b_hh``:
    ``c' = σ(f) * c + σ(i) * tanh(g)`` and ``h' = σ(o) * tanh(c')``.

    Args:
        input_size (int): the features of the input.
        hidden_size (int): the features of the hidden and cell states.
        bias (bool): learn ``bias_ih`` and ``bias_hh``. Default: ``True``.
        device, dtype: of the parameters.

    {shapes}

    Example:
        >>> cell = nn.LSTMCell(10, 20)
        >>> h, c = cell(ferrograd.randn(3, 10))
        >>> h.shape, c.shape
        (ferrograd.Size([3, 20]), ferrograd.Size([3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        """Returns ``(h', c')``.

        Args:
            input (Tensor): ``x``.
            hx (tuple of Tensor, optional): ``(h, c)``. Default: zeros.
        """
        h, c = self._step("LSTMCell", _lstm_step, input, hx)
        return h, c


class GRUCell(RNNCellBase):
    r"""One GRU step, with the blocks ``r, z, n`` of ``gi = x W_ih^T + b_ih``
    and ``gh = h W_hh^T + b_hh``: ``r = σ(gi_r + gh_r)``,
    ``z = σ(gi_z + gh_z)``, ``n = tanh(gi_n + r * gh_n)`` and
    ``h' = (1 - z) * n + z * h``.

    Args:
        input_size (int): the features of the input.
        hidden_size (int): the features of the hidden state.
        bias (bool): learn ``bias_ih`` and ``bias_hh``. Default: ``True``.
        device, dtype: of the parameters.

    {shapes}

    Example:
        >>> cell = nn.GRUCell(10, 20)
        >>> cell(ferrograd.randn(10), ferrograd.zeros(20)).shape
        ferrograd.Size([20])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        """Returns ``h'``.

        Args:
            input (Tensor): ``x``.
            hx (Tensor, optional): ``h``. Default: zeros.
        """
        return self._step("GRUCell", _gru_step, input, hx)[0]


for _cls in (RNNCell, LSTMCell, GRUCell):
    _cls.__doc__ = (_cls.__doc__ or "").replace("    {shapes}\n", _CELL_SHAPES.lstrip("\n"))
del _cls
