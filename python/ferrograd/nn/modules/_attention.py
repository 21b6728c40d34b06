"""The computation of :class:`~ferrograd.nn.MultiheadAttention`: the checks
of its inputs, its masks and the attention of its heads, from tensor ops (the
functional module has no ``multi_head_attention_forward``)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F

if TYPE_CHECKING:
    from .activation import MultiheadAttention


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


def _mha_attention(
    module: MultiheadAttention,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    need_weights: bool,
    attn_mask: Tensor | None,
    average_attn_weights: bool,
    is_causal: bool,
    is_batched: bool,
) -> tuple[Tensor, Tensor | None]:
    """Attention over sequence-first ``(L, N, E)`` inputs (or unbatched ``(L, E)``)."""
    heads, hd = module.num_heads, module.head_dim
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != module.embed_dim:
        raise AssertionError(
            f"was expecting embedding dimension of {module.embed_dim}, but got {embed_dim}"
        )
    if tuple(key.shape[:2]) != tuple(value.shape[:2]):
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

    q, k, v = module._in_projection(query, key, value)
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
    if module.bias_k is not None and module.bias_v is not None:
        k = _fg.cat([k, module.bias_k.repeat(1, bsz, 1)])
        v = _fg.cat([v, module.bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))

    # (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * heads, hd).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * heads, hd).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * heads, hd).transpose(0, 1)
    if module.add_zero_attn:
        k = _fg.cat([k, _fg.zeros((bsz * heads, 1, hd), dtype=k.dtype)], dim=1)
        v = _fg.cat([v, _fg.zeros((bsz * heads, 1, hd), dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
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

    dropout_p = module.dropout if module.training else 0.0
    scores = (q * math.sqrt(1.0 / hd)).bmm(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    out = weights.bmm(v)  # (N * heads, L, head_dim)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, module.out_proj.weight, module.out_proj.bias).reshape(tgt_len, bsz, embed_dim)
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
