"""Transformer blocks: ``TransformerEncoderLayer``, ``TransformerEncoder``,
``TransformerDecoderLayer``, ``TransformerDecoder`` and the full encoder-decoder
``Transformer``.

The blocks are compositions of :class:`MultiheadAttention`, ``Linear``,
``LayerNorm`` and ``Dropout``; there is no fused fast path, so results are
the same in training and evaluation apart from dropout.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from .._docs import fill_docs as _fill_docs
from .activation import GELU, MultiheadAttention, ReLU, _canonical_mask
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _activation_code(activation: Any) -> int:
    """torch's ``activation_relu_or_gelu`` flag: 1 for relu, 2 for gelu, else 0."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """A float causal mask: 0 on and below the diagonal, ``-inf`` above."""
    kwargs = {"dtype": dtype} if dtype is not None else {}
    return _fg.triu(_fg.full((sz, sz), float("-inf"), **kwargs), diagonal=1)


def _seq_len(x: Tensor, batch_first: bool) -> int:
    """The sequence length of a transformer input: ``(L, E)``, ``(L, N, E)`` or ``(N, L, E)``."""
    if x.dim() == 2:
        return int(x.shape[0])
    return int(x.shape[1 if batch_first else 0])


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None, size: int | None = None) -> bool:
    """Resolves an ``is_causal`` hint: a bool is returned as given; with ``None``,
    whether ``mask`` equals the causal mask of ``size`` (default: its second-last dim)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else int(mask.shape[-2])
    causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
    if tuple(mask.shape) != tuple(causal.shape):
        return False
    return bool((mask == causal).all())


def _feed_forward_and_norms(layer: Module, blocks: int, d_model: int, dim_feedforward: int, dropout: float,
                            layer_norm_eps: float, norm_first: bool, bias: bool, kw: dict[str, Any]) -> None:
    """Gives a transformer layer with ``blocks`` residual blocks, in torch's
    order, its feed-forward block (``linear1``, ``dropout``, ``linear2``),
    ``norm_first``, then ``norm1``... and ``dropout1``... (one of each per block)."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
    layer.norm_first = norm_first
    for i in range(1, blocks + 1):
        setattr(layer, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
    for i in range(1, blocks + 1):
        setattr(layer, f"dropout{i}", Dropout(dropout))


def _self_attention_block(layer: Module, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                          is_causal: bool = False) -> Tensor:
    """A transformer layer's self-attention block (its ``_sa_block``), before the residual."""
    x = layer.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                        is_causal=is_causal)[0]
    return layer.dropout1(x)


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: their attention modules
    (``attentions``, in torch's order), the feed-forward block, norms and
    dropouts, and the activation (``relu`` for a pickle without one)."""

    __constants__ = ["norm_first"]

    def _build(self, attentions: tuple[str, ...], d_model: int, nhead: int, dim_feedforward: int,
               dropout: float, activation: str | Callable[[Tensor], Tensor], layer_norm_eps: float,
               batch_first: bool, norm_first: bool, bias: bool, kw: dict[str, Any]) -> None:
        for name in attentions:
            attention = MultiheadAttention(
                d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
            )
            setattr(self, name, attention)
        _feed_forward_and_norms(self, len(attentions) + 1, d_model, dim_feedforward, dropout, layer_norm_eps,
                                norm_first, bias, kw)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("activation", F.relu)
        super().__setstate__(state)


class TransformerEncoderLayer(_TransformerLayer):
    r"""Self-attention followed by a feed-forward block, each wrapped in a
    residual connection and a ``LayerNorm`` (after the residual by default,
    before the block with ``norm_first=True``).

    Submodules follow torch's names: ``self_attn``, ``linear1``, ``dropout``,
    ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``.
    ``activation`` is ``'relu'``, ``'gelu'`` or any callable.

    {transformer_layer_args:S}

    Example:
        >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
        >>> layer(ferrograd.randn(3, 5, 8)).shape
        ferrograd.Size([3, 5, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self._build(("self_attn",), d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                    batch_first, norm_first, bias, {"device": device, "dtype": dtype})
        self.activation_relu_or_gelu = _activation_code(self.activation)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """Self-attention then the feed-forward block on ``src``, each with its residual and norm."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src_mask, "src_mask", src.dtype
        )
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    _sa_block = _self_attention_block

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _why_no_nested_tensor(layer: Any) -> str:
    """The reason torch's encoder gives for not using its nested-tensor fast path
    (ferrograd has none; the warning is kept so programs see the same messages)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``encoder_layer`` (in ``layers``),
    followed by ``norm`` when given.

    Args:
        encoder_layer (TransformerEncoderLayer): the layer to copy.
        num_layers (int): the number of copies.
        norm (Module, optional): applied to the last layer's output.
        enable_nested_tensor, mask_check: accepted for compatibility.

    Example:
        >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        >>> enc(ferrograd.randn(5, 3, 8)).shape
        ferrograd.Size([5, 3, 8])
    """

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Passes ``src`` through every layer in turn (then the final ``norm``, if any)."""
        src_key_padding_mask = _canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", mask, "mask", src.dtype
        )
        mask = _canonical_mask(mask, "mask", None, "", src.dtype)
        seq_len = _seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(
                output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoderLayer(_TransformerLayer):
    r"""Self-attention, attention over the encoder output (``memory``) and a
    feed-forward block, each with a residual connection and a ``LayerNorm``.

    {transformer_layer_args:T}

    Example:
        >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> layer(ferrograd.randn(4, 3, 8), ferrograd.randn(6, 3, 8)).shape
        ferrograd.Size([4, 3, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self._build(("self_attn", "multihead_attn"), d_model, nhead, dim_feedforward, dropout, activation,
                    layer_norm_eps, batch_first, norm_first, bias, {"device": device, "dtype": dtype})

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """Self-attention, attention to ``memory``, then feed-forward, each with residual and norm."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x

    _sa_block = _self_attention_block

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                   is_causal: bool = False) -> Tensor:
        x = self.multihead_attn(
            x,
            mem,
            mem,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            is_causal=is_causal,
            need_weights=False,
        )[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    r"""A stack of ``num_layers`` deep copies of ``decoder_layer``, followed by ``norm``.

    Args:
        decoder_layer (TransformerDecoderLayer): the layer to copy.
        num_layers (int): the number of copies.
        norm (Module, optional): applied to the last layer's output.

    Example:
        >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> dec = nn.TransformerDecoder(layer, num_layers=2)
        >>> dec(ferrograd.randn(4, 3, 8), ferrograd.randn(6, 3, 8)).shape
        ferrograd.Size([4, 3, 8])
    """

    __constants__ = ["norm"]

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Passes ``tgt`` through each layer (attending to ``memory``), then the final ``norm`` if any."""
        output = tgt
        tgt_is_causal = _detect_is_causal_mask(
            tgt_mask, tgt_is_causal, _seq_len(tgt, self.layers[0].self_attn.batch_first)
        )
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    r"""An encoder-decoder transformer: a :class:`TransformerEncoder` of
    ``num_encoder_layers`` layers and a :class:`TransformerDecoder` of
    ``num_decoder_layers`` layers, each stack followed by a ``LayerNorm``.
    The decoder attends to the encoder's output (``memory``).

    Submodules follow torch's names (``encoder.layers.0.self_attn``, ...,
    ``encoder.norm``, ``decoder.layers.0.multihead_attn``, ..., ``decoder.norm``),
    so ``state_dict`` keys match torch's. Every parameter with more than one
    dim is re-drawn with ``xavier_uniform_`` after construction (custom
    encoders and decoders included).

    Args:
        d_model (int): the model dim. Default: 512.
        nhead (int): the number of attention heads. Default: 8.
        num_encoder_layers (int): the number of encoder layers. Default: 6.
        num_decoder_layers (int): the number of decoder layers. Default: 6.
        dim_feedforward (int): the hidden size of the feed-forward blocks. Default: 2048.
        dropout (float): the dropout rate. Default: 0.1.
        activation (str or callable): of the feed-forward blocks. Default: ``relu``.
        custom_encoder (Module, optional): used instead of the default encoder.
        custom_decoder (Module, optional): used instead of the default decoder.
        layer_norm_eps (float): the norms' eps. Default: 1e-5.
        batch_first (bool): inputs are ``(N, S, E)`` instead of ``(S, N, E)``. Default: False.
        norm_first (bool): normalise before each block instead of after. Default: False.
        bias (bool): biases in the linear layers and norms. Default: True.
        device, dtype: of the parameters.

    Shape:
        ``src``: ``(S, N, E)`` (``(N, S, E)`` with ``batch_first=True``, or unbatched
        ``(S, E)``); ``tgt``: ``(T, N, E)``; output: the shape of ``tgt``.

    Example:
        >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
        ...                        dim_feedforward=16, batch_first=True)
        >>> src, tgt = ferrograd.randn(3, 5, 8), ferrograd.randn(3, 4, 8)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(4)
        >>> model(src, tgt, tgt_mask=mask).shape
        ferrograd.Size([3, 4, 8])
        >>> [k for k in model.state_dict() if k.startswith("decoder.layers.0.norm3")]
        ['decoder.layers.0.norm3.weight', 'decoder.layers.0.norm3.bias']
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Any | None = None,
                 custom_decoder: Any | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                      norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **kw),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **kw),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
            )
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """Encodes ``src`` into ``memory``, then decodes ``tgt`` attending to it.

        ``src_mask``/``tgt_mask``/``memory_mask`` are the attention masks of the
        encoder's self-attention, the decoder's self-attention and the decoder's
        attention to ``memory``; the ``*_key_padding_mask`` arguments mark padded
        positions of ``src``, ``tgt`` and ``memory`` (``(N, S)``, ``(N, T)``,
        ``(N, S)``); the ``*_is_causal`` hints say the matching mask is causal
        (``None`` checks the mask).
        """
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.shape[batch_dim] != tgt.shape[batch_dim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        r"""A square causal mask for a sequence of length ``sz``: ``0.0`` on and
        below the diagonal (positions that may be attended), ``-inf`` above.

        Example:
            >>> nn.Transformer.generate_square_subsequent_mask(3)
            tensor([[0., -inf, -inf],
                    [0., 0., -inf],
                    [0., 0., 0.]])
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


_fill_docs(globals())
