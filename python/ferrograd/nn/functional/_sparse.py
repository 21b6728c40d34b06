"""Embedding lookup, bags of embeddings and one-hot encoding, for :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import warnings

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


def _is_index(t: Tensor) -> bool:
    return t.dtype in (_fg.int64, _fg.int32)


def _check_index_dtype(t: Tensor) -> None:
    if not _is_index(t):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {t.type()} instead (while checking arguments for embedding_bag)"
        )


def _bag_bounds(offsets: Tensor, n: int, include_last_offset: bool) -> list[tuple[int, int]]:
    """The ``[start, end)`` range of positions of the flat input in each bag."""
    offs = [int(o) for o in offsets.tolist()]
    if include_last_offset and not offs:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if offs and offs[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
            f"position 0. However, got {offs[0]}"
        )
    if offs and offs[-1] > n:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {offs[-1]}"
        )
    if include_last_offset:
        ends, offs = offs[1:], offs[:-1]
    else:
        ends = offs[1:] + [n] if offs else []
    bounds = list(zip(offs, ends, strict=True))
    if any(end < start for start, end in bounds):
        raise RuntimeError("embedding_bag: offsets must be non-decreasing")
    return bounds


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, averages or takes the maximum of bags of rows of ``weight``,
    without materialising the rows of every bag as ``embedding`` would.

    A 2-D ``input`` of shape ``(B, L)`` is ``B`` bags of ``L`` indices each. A
    1-D ``input`` is the indices of all bags one after another, and bag ``i``
    starts at position ``offsets[i]`` (and ends where the next starts, or at
    the end of ``input``). Indices equal to ``padding_idx`` are left out of
    their bag (and of its count, for ``'mean'``); an empty bag gives zeros.
    Gradients flow to ``weight`` and ``per_sample_weights``; with ``'max'``,
    each output element's gradient goes to the first row holding the maximum.

    Args:
        input (Tensor): integer indices, ``(B, L)`` or 1-D.
        weight (Tensor): the embedding matrix, of shape
            ``(num_embeddings, embedding_dim)``.
        offsets (Tensor, optional): for a 1-D ``input``, the start position of
            each bag; must be ``None`` for a 2-D one. Default: ``None``.
        max_norm (float, optional): rows looked up with a larger norm are
            renormalised in place to this norm. Default: ``None``.
        norm_type (float): the ``p`` of the norm for ``max_norm``. Default:
            ``2``.
        scale_grad_by_freq (bool): divide each row's gradient by how often it
            occurs in ``input`` (not with ``'max'``). Default: ``False``.
        mode (str): ``'sum'``, ``'mean'`` or ``'max'``. Default: ``'mean'``.
        sparse (bool): must be ``False`` (sparse gradients are not supported).
            Default: ``False``.
        per_sample_weights (Tensor, optional): a weight for each index, of the
            shape of ``input`` and the dtype of ``weight``, multiplying its row
            before the sum; only with ``mode='sum'``. Default: ``None``.
        include_last_offset (bool): ``offsets`` has one more entry than there
            are bags: the end of the last bag. Default: ``False``.
        padding_idx (int, optional): indices equal to this (negative counts
            from the end) are left out of their bags. Default: ``None``.

    Returns:
        Tensor: ``(B, embedding_dim)``, one row per bag.

    Example:
        >>> w = ferrograd.arange(8.0).reshape(4, 2)
        >>> idx = ferrograd.tensor([0, 2, 1, 3, 3])
        >>> F.embedding_bag(idx, w, ferrograd.tensor([0, 2, 2]), mode="sum")
        tensor([[ 4.,  6.],
                [ 0.,  0.],
                [14., 17.]])
        >>> F.embedding_bag(ferrograd.tensor([[0, 1], [3, 1]]), w, mode="max", padding_idx=1)
        tensor([[0., 1.],
                [6., 7.]])
    """
    if _is_index(weight) and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, "
            "...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                f"length sequences. However, found offsets of type {type(offsets)}"
            )
        _check_index_dtype(input)
        rows_per_bag = int(input.shape[1])
        if rows_per_bag == 0:
            raise RuntimeError("step must be nonzero")
        bounds = [(b * rows_per_bag, (b + 1) * rows_per_bag) for b in range(int(input.shape[0]))]
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        bounds = []
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
            f"mode='sum' (got mode='{mode}'). Please open a feature request on GitHub."
        )
    if sparse:
        raise RuntimeError("embedding_bag: sparse gradients are not supported by ferrograd")
    _check_index_dtype(input)
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
            f"'per_sample_weights'; but type {weight.type()} does not equal {per_sample_weights.type()} "
            "(while checking arguments for embedding_bag)"
        )
    flat = input.long()
    n, num = int(flat.numel()), int(weight.shape[0])
    if offsets is not None:
        _check_index_dtype(offsets)
        bounds = _bag_bounds(offsets, n, include_last_offset)
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, "
                f"but got {padding_idx}"
            )
        padding_idx %= num
    if n > 0:
        bad = ((flat < 0) | (flat >= num)).nonzero()
        if bad.numel() > 0:
            at = int(bad[0, 0])
            raise RuntimeError(
                f"Index {at} of input takes value {int(flat[at])} which is not in the valid range [0, {num})"
            )
    # The bags tile the input from position 0, so position p of the first
    # sum(sizes) is in bag bag_of[p]; padding positions are then dropped.
    bags = len(bounds)
    sizes = _fg.tensor([e - s for s, e in bounds], dtype=_fg.int64)
    bag_of = _fg.repeat_interleave(_fg.arange(bags), sizes)
    pos = _fg.arange(int(bag_of.numel()))
    if padding_idx is not None:
        keep = (flat.index_select(0, pos) != padding_idx).nonzero().reshape(-1)
        pos, bag_of = pos.index_select(0, keep), bag_of.index_select(0, keep)
    rows = embedding(flat, weight, None, max_norm, norm_type, scale_grad_by_freq).index_select(0, pos)
    dim = int(weight.shape[1])
    counts = _fg.zeros(bags, dtype=_fg.int64).index_add_(0, bag_of, _fg.ones(bag_of.shape, dtype=_fg.int64))
    longest = int(counts.max()) if bags > 0 else 0
    if mode == "max" and longest > 0:
        # Bags laid out in a (bags, longest, dim) block, the gaps at -inf.
        first = _fg.cumsum(counts, 0) - counts
        slot = bag_of * longest + _fg.arange(int(bag_of.numel())) - first.index_select(0, bag_of)
        filled = _fg.zeros(bags * longest, dtype=_fg.bool).index_fill_(0, slot, True)
        block = _fg.zeros((bags * longest, dim), dtype=weight.dtype).index_add(0, slot, rows)
        block = _fg.where(filled.unsqueeze(1), block, float("-inf")).reshape(bags, longest, dim)
        best = block.max(dim=1)[0]
        return _fg.where((counts > 0).unsqueeze(1), best, 0.0)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.index_select(0, pos).unsqueeze(1)
    out = _fg.zeros((bags, dim), dtype=weight.dtype).index_add(0, bag_of, rows)
    if mode == "mean":
        out = out / counts.clamp(min=1).to(weight.dtype).unsqueeze(1)
    return out


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
