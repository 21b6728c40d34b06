"""Scaled dot-product attention, for :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import math

import ferrograd as _fg
from ferrograd._core import Tensor

from ._dropout import dropout
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


_route(globals())
