"""The linear layers of :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import ferrograd as _fg
from ferrograd._core import Tensor

from ._utils import _route


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Applies ``x @ weight.T + bias``.

    Args:
        input (Tensor): the input, of shape ``(*, in_features)``.
        weight (Tensor): the weight, of shape ``(out_features, in_features)``
            (or ``(in_features,)``).
        bias (Tensor, optional): the bias, of shape ``(out_features,)``.
            Default: ``None``.

    Example:
        >>> F.linear(ferrograd.ones(1, 2), ferrograd.ones(3, 2)).shape
        ferrograd.Size([1, 3])
    """
    if bias is not None and input.dim() == 2 and weight.dim() == 2:
        return _fg.addmm(bias, input, weight.t())
    if input.dim() > 2 and weight.dim() == 2:
        # Leading dims folded into the rows: one product instead of a batch
        # of small ones (torch reports shape errors on the folded shapes too).
        rows = input.reshape(-1, input.shape[-1])
        flat = rows.mm(weight.t()) if bias is None else _fg.addmm(bias, rows, weight.t())
        return flat.reshape(*input.shape[:-1], weight.shape[0])
    out = input.matmul(weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Applies ``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``.

    Args:
        input1 (Tensor): the first input, of shape ``(*, in1)``.
        input2 (Tensor): the second input, of shape ``(*, in2)``.
        weight (Tensor): the weight, of shape ``(out, in1, in2)``.
        bias (Tensor, optional): the bias, of shape ``(out,)``. Default:
            ``None``.

    Example:
        >>> F.bilinear(ferrograd.ones(4, 2), ferrograd.ones(4, 3), ferrograd.ones(5, 2, 3)).shape
        ferrograd.Size([4, 5])
    """
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, but got {weight.dim()} dimensions")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError("bilinear(): input feature sizes do not match the weight")
    out = _fg.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


_route(globals())
