"""Attention for :mod:`ferrograd.nn.functional`: scaled dot-product
attention and ``multi_head_attention_forward``, the computation of
:class:`~ferrograd.nn.MultiheadAttention` (which calls it with its
parameters), with the checks of its inputs and masks."""

from __future__ import annotations

import math
import warnings
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from ._dropout import dropout
from ._linear import linear
from ._padding import pad
from ._utils import _route


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(Q K^T * scale + mask) V`` over ``(..., L, E)`` queries and
    ``(..., S, E)`` keys; a boolean ``attn_mask`` marks the positions allowed to attend.

    Args:
        query (Tensor): of shape ``(*, L, E)``.
        key (Tensor): of shape ``(*, S, E)``.
        value (Tensor): of shape ``(*, S, Ev)``.
        attn_mask (Tensor, optional): a boolean mask (``True`` = attend) or an
            additive float mask, broadcast to ``(*, L, S)``. Default: ``None``.
        dropout_p (float): dropout probability on the attention weights.
            Default: ``0.0``.
        is_causal (bool): mask out keys after each query position. Default:
            ``False``.
        scale (float, optional): the scale of the scores. Default: ``None``
            (``1 / sqrt(E)``).
        enable_gqa (bool): allow fewer key/value heads than query heads
            (grouped-query attention). Default: ``False``.

    Example:
        >>> q = k = v = ferrograd.ones(1, 2, 4)
        >>> F.scaled_dot_product_attention(q, k, v).shape
        ferrograd.Size([1, 2, 4])
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
        )
    length, source = query.shape[-2], key.shape[-2]
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        heads = query.shape[-3]
        if heads % key.shape[-3] != 0:
            raise RuntimeError("number of query heads must be a multiple of the number of key/value heads")
        key = key.repeat_interleave(heads // key.shape[-3], dim=-3)
        value = value.repeat_interleave(heads // value.shape[-3], dim=-3)
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    if is_causal:
        allowed = _fg.ones(length, source, dtype=_fg.bool).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == _fg.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights.matmul(value)


def _canonical_mask(mask: Tensor | None, name: str, other: Tensor | None, other_name: str, dtype: Any) -> Any:
    """A boolean mask (True = masked out) becomes an additive float mask with
    ``-inf`` at the masked positions; a float mask is returned unchanged."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _fg.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and other.dtype != mask.dtype:
        warnings.warn(
            f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if not is_float:
        mask = _fg.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    return mask


def _mha_is_batched(
    query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any, attn_mask: Any, heads: int
) -> bool:
    """Checks the ranks of the inputs and masks; True for ``(L, N, E)`` inputs."""
    d = query.dim()
    if d not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor"
        )
    which = "batched (3-D)" if d == 3 else "unbatched (2-D)"
    if key.dim() != d or value.dim() != d:
        raise AssertionError(
            f"For {which} `query`, expected `key` and `value` to be {d}-D"
            f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != d - 1:
        raise AssertionError(
            f"For {which} `query`, expected `key_padding_mask` to be `None` or {d - 1}-D"
            f" but found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None and attn_mask.dim() not in (2, 3):
        raise AssertionError(
            f"For {which} `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
            f" but found {attn_mask.dim()}-D tensor instead"
        )
    if d == 2 and attn_mask is not None and attn_mask.dim() == 3:
        expected = (heads, query.shape[0], key.shape[0])
        if tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return d == 3


def _in_projection(query: Tensor, key: Tensor, value: Tensor, embed_dim: int, in_proj_weight: Tensor | None,
                   in_proj_bias: Tensor | None, separate: tuple[Tensor | None, ...] | None,
                   ) -> tuple[Tensor, Tensor, Tensor]:
    """The query, key and value projections, by the packed ``(3E, E)``
    weight or by the ``separate`` three."""
    e = embed_dim
    b = in_proj_bias
    bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
    if separate is None:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:
            # Self-attention: one product with the packed weight, then views.
            q, k, v = linear(query, in_proj_weight, b).chunk(3, dim=-1)
            return q, k, v
        wq, wk, wv = in_proj_weight[:e], in_proj_weight[e : 2 * e], in_proj_weight[2 * e :]
    else:
        for name, w in zip(("q", "k", "v"), separate, strict=True):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        wq, wk, wv = separate
    return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)


def _static(t: Tensor, static: Tensor | None, name: str, rows: int, head_dim: int) -> Tensor:
    """The projected keys or values ``t`` (``(N * heads, S, head_dim)``), or
    the ``static`` ones that replace them."""
    if static is None:
        return t
    if static.shape[0] != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None, static_k: Tensor | None = None, static_v: Tensor | None = None,
    average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over sequence-first inputs, the forward pass of
    :class:`~ferrograd.nn.MultiheadAttention`: ``concat(head_1, ..., head_h) W_o``
    with ``head_i = softmax(Q_i K_i^T / sqrt(d) + mask) V_i``.

    Returns ``(attn_output, attn_weights)``: the output shaped like
    ``query`` and the attention weights ``(N, L, S)`` (averaged over the
    heads; ``(N, heads, L, S)`` with ``average_attn_weights=False``; no
    ``N`` when unbatched), or ``None`` without ``need_weights``.

    Args:
        query (Tensor): ``(L, N, E)`` or unbatched ``(L, E)``.
        key (Tensor): ``(S, N, E_k)`` or ``(S, E_k)``.
        value (Tensor): ``(S, N, E_v)`` or ``(S, E_v)``.
        embed_dim_to_check (int): the expected ``E`` of ``query``.
        num_heads (int): the number of heads; must divide ``E``.
        in_proj_weight (Tensor, optional): the packed ``(3E, E)`` query, key
            and value projections (unused with ``use_separate_proj_weight``).
        in_proj_bias (Tensor, optional): their packed ``(3E,)`` bias.
        bias_k (Tensor, optional): a ``(1, 1, E)`` key appended to every
            sequence.
        bias_v (Tensor, optional): the value appended with it.
        add_zero_attn (bool): append a zero key and value to every sequence.
        dropout_p (float): dropout on the attention weights while ``training``.
        out_proj_weight (Tensor): the ``(E, E)`` output projection.
        out_proj_bias (Tensor, optional): its bias.
        training (bool): apply the dropout. Default: ``True``.
        key_padding_mask (Tensor, optional): ``(N, S)`` (or ``(S,)``):
            ``True`` (or an added float) marks keys to ignore. Default: ``None``.
        need_weights (bool): also return the attention weights. Default: ``True``.
        attn_mask (Tensor, optional): ``(L, S)`` or ``(N * heads, L, S)``:
            ``True`` (or an added float) marks positions not to attend.
            Default: ``None``.
        use_separate_proj_weight (bool): project with ``q_proj_weight``,
            ``k_proj_weight`` and ``v_proj_weight``. Default: ``False``.
        q_proj_weight (Tensor, optional): the ``(E, E)`` query projection.
        k_proj_weight (Tensor, optional): the ``(E, E_k)`` key projection.
        v_proj_weight (Tensor, optional): the ``(E, E_v)`` value projection.
        static_k (Tensor, optional): ``(N * heads, S, E / heads)`` keys used
            instead of the projected ones. Default: ``None``.
        static_v (Tensor, optional): the values used with them. Default: ``None``.
        average_attn_weights (bool): average the returned weights over the
            heads. Default: ``True``.
        is_causal (bool): a hint that ``attn_mask`` is the causal mask, which
            is then required (and used). Default: ``False``.

    Example:
        >>> e = 4
        >>> x = ferrograd.ones(3, 2, e)
        >>> out, w = F.multi_head_attention_forward(
        ...     x, x, x, e, 2, ferrograd.ones(3 * e, e), None, None, None, False, 0.0,
        ...     ferrograd.eye(e), None)
        >>> out.shape, w.shape
        (ferrograd.Size([3, 2, 4]), ferrograd.Size([2, 3, 3]))
    """
    is_batched = _mha_is_batched(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    heads = num_heads
    hd = embed_dim // heads
    if hd * heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                f"{tuple(value.shape[:2])}"
            )
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", attn_mask, "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    # As torch's: with a mask present, is_causal is only a hint and the mask is used.
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)

    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _in_projection(query, key, value, embed_dim, in_proj_weight, in_proj_bias, separate)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, "
                    f"but should be {(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        else:
            expected = (bsz * heads, tgt_len, src_len)
            if tuple(attn_mask.shape) != expected:
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {expected}."
                )
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key or value.")
        k = _fg.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _fg.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * heads, hd).transpose(0, 1)
    k = _static(k.reshape(k.shape[0], bsz * heads, hd).transpose(0, 1), static_k, "static_k", bsz * heads, hd)
    v = _static(v.reshape(v.shape[0], bsz * heads, hd).transpose(0, 1), static_v, "static_v", bsz * heads, hd)
    if add_zero_attn:
        k = _fg.cat([k, _fg.zeros((bsz * heads, 1, hd), dtype=k.dtype)], dim=1)
        v = _fg.cat([v, _fg.zeros((bsz * heads, 1, hd), dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise RuntimeError(
                f"Expected key_padded_mask.shape == {(bsz, src_len)}, "
                f"but got {tuple(key_padding_mask.shape)}"
            )
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, heads, -1, -1)
        kpm = kpm.reshape(bsz * heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    scores = (q * math.sqrt(1.0 / hd)).bmm(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(dim=-1)
    if training and dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    out = weights.bmm(v)  # (N * heads, L, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights


_route(globals())
