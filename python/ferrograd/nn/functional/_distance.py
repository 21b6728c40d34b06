"""Normalisation of vectors and distances between them, for
:mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import ferrograd as _fg
from ferrograd._core import Tensor

from ._utils import _route


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """Divides by the ``p``-norm along ``dim``, clamped below by ``eps``.

    Args:
        input (Tensor): the input tensor.
        p (float): the exponent of the norm. Default: ``2.0``.
        dim (int or tuple of ints): the dimension(s) of the vectors. Default:
            ``1``.
        eps (float): lower bound of the norm, to avoid dividing by zero.
            Default: ``1e-12``.
        out (Tensor, optional): the output tensor. Default: ``None``.

    Example:
        >>> F.normalize(ferrograd.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    norm = _fg.linalg.vector_norm(input, p, dim=dim, keepdim=True).clamp_min(eps)
    result = input / norm
    if out is not None:
        return out.copy_(result)
    return result


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcasting).

    Args:
        x1 (Tensor): the first input.
        x2 (Tensor): the second input (broadcast against ``x1``).
        dim (int): the dimension of the vectors. Default: ``1``.
        eps (float): lower bound of each norm, to avoid dividing by zero.
            Default: ``1e-08``.

    Example:
        >>> F.cosine_similarity(ferrograd.tensor([[1.0, 0.0]]), ferrograd.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    x1, x2 = _fg.broadcast_tensors(x1, x2)
    n1 = _fg.linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clamp_min(eps)
    n2 = _fg.linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``p``-norm of ``x1 - x2 + eps`` over the last dimension.

    Args:
        x1 (Tensor): the first input.
        x2 (Tensor): the second input (broadcast against ``x1``).
        p (float): the norm degree. Default: ``2.0``.
        eps (float): added to the difference, to avoid a zero norm. Default:
            ``1e-06``.
        keepdim (bool): keep the last dim with size 1. Default: ``False``.

    Example:
        >>> F.pairwise_distance(ferrograd.tensor([[0.0, 0.0]]), ferrograd.tensor([[3.0, 4.0]]), eps=0.0)
        tensor([5.])
    """
    dim = max(x1.dim(), x2.dim()) - 1
    diff = x1 - x2 + eps
    if dim < 0:
        return diff.abs()
    return _fg.linalg.vector_norm(diff, p, dim=dim, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distances between every pair of rows of a 2-D input,
    in the order of the upper triangle of the distance matrix (row ``i``
    against rows ``j > i``).

    Args:
        input (Tensor): an ``N x M`` tensor of ``N`` points.
        p (float): the norm degree, at least 0. Default: ``2.0``.

    Example:
        >>> F.pdist(ferrograd.tensor([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
        tensor([ 5., 10.,  5.])
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows, cols = _fg.triu_indices(n, n, offset=1)
    return _fg.linalg.vector_norm(input[rows] - input[cols], p, dim=-1)


_route(globals())
