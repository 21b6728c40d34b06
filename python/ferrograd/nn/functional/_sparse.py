"""Embedding lookup and one-hot encoding, for :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import ferrograd as _fg
from ferrograd._core import Tensor

from ._utils import _route


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Looks up rows of ``weight`` at the integer indices ``input``.

    The row at ``padding_idx`` receives no gradient. With ``max_norm``, the
    looked-up rows of ``weight`` are renormalised in place first.

    Args:
        input (Tensor): integer indices, of any shape.
        weight (Tensor): the embedding matrix, of shape
            ``(num_embeddings, embedding_dim)``.
        padding_idx (int, optional): the row at this index gets no gradient.
            Default: ``None``.
        max_norm (float, optional): rows looked up with a larger norm are
            renormalised in place to this norm. Default: ``None``.
        norm_type (float): the ``p`` of the norm for ``max_norm``. Default:
            ``2.0``.
        scale_grad_by_freq (bool): divide each row's gradient by how often it
            occurs in the batch. Default: ``False``.
        sparse (bool): must be ``False`` (sparse gradients are not supported).
            Default: ``False``.

    Example:
        >>> w = ferrograd.arange(6.0).reshape(3, 2)
        >>> F.embedding(ferrograd.tensor([2, 0]), w)
        tensor([[4., 5.],
                [0., 1.]])
    """
    if sparse:
        raise RuntimeError("embedding: sparse gradients are not supported by ferrograd")
    if input.dtype not in (_fg.int64, _fg.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {input.dtype} instead (while checking arguments for embedding)"
        )
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    flat = input.reshape(-1).long()
    if flat.numel() > 0 and (int(flat.min()) < 0 or int(flat.max()) >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        with _fg.no_grad():
            rows = _fg.tensor(sorted(set(flat.tolist())), dtype=_fg.int64)
            if rows.numel() > 0:
                selected = weight.index_select(0, rows)
                norms = _fg.linalg.vector_norm(selected, norm_type, dim=1, keepdim=True)
                scale = _fg.where(norms > max_norm, max_norm / (norms + 1e-7), _fg.ones_like(norms))
                weight.index_copy_(0, rows, selected * scale)
    out = weight.index_select(0, flat)
    if scale_grad_by_freq:
        # Same value, gradient divided by the index's count in this batch.
        counts = _fg.zeros(num, dtype=weight.dtype).index_add_(
            0, flat, _fg.ones(flat.shape, dtype=weight.dtype)
        )
        inv = (1.0 / counts.index_select(0, flat)).unsqueeze(1)
        out = out * inv + (out * (1.0 - inv)).detach()
    if padding_idx is not None:
        pad_mask = (flat == padding_idx).unsqueeze(1)
        out = _fg.where(pad_mask, out.detach(), out)
    return out.reshape(*input.shape, weight.shape[1])


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Returns an int64 tensor with a trailing dimension of size ``num_classes``
    holding 1 at each index of ``tensor``.

    Args:
        tensor (Tensor): class indices (int64).
        num_classes (int): the number of classes; ``-1`` uses the largest index
            plus one. Default: ``-1``.

    Example:
        >>> F.one_hot(ferrograd.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    if tensor.dtype != _fg.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _fg.zeros(*tensor.shape, num_classes, dtype=_fg.int64)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1
    elif int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = _fg.zeros(*tensor.shape, num_classes, dtype=_fg.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


_route(globals())
