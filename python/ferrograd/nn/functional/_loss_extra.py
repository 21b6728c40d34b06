"""The sequence and multi-label losses of :mod:`ferrograd.nn.functional`:
``ctc_loss``, ``multilabel_margin_loss`` and ``linear_cross_entropy``.

``ctc_loss`` runs the CTC forward algorithm in log space, vectorised over
the batch: one step per time frame updates the log-probabilities of every
prefix of every extended label sequence at once (``logsumexp`` over the
three transitions into each state). It is built from differentiable ops, so
its gradient, double backward and forward mode follow from theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from ._linear import linear
from ._loss import cross_entropy
from ._padding import pad
from ._utils import _check_reduction, _checked_reduction, _route

# "log 0" in the CTC recursion: finite, so that no gradient ever meets
# inf - inf, and so negative that exp of it is 0 in any float dtype. Sums of
# up to ~1e8 such terms stay finite in float32. A total below half of it
# marks a target no alignment can produce (an infinite loss).
_LOG_ZERO = -1e30


def _lengths(lengths: Any, name: str, batch: int) -> list[int]:
    """``input_lengths``/``target_lengths`` (a tensor, a sequence or an int)
    as ``batch`` Python ints."""
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == _fg.bool:
            raise RuntimeError(f"{name} must be integral")
        values = [int(v) for v in lengths.reshape(-1).tolist()]
    elif isinstance(lengths, int):
        values = [lengths]
    elif isinstance(lengths, Sequence):
        values = [int(v) for v in lengths]
    else:
        kind = type(lengths).__name__
        raise TypeError(f"ctc_loss(): {name} must be a tensor or a tuple of ints, not {kind}")
    if len(values) != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    for v in values:
        if v < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {v}")
    return values


def _padded_targets(targets: Tensor, lengths: list[int], batch: int, unbatched: bool) -> Tensor:
    """The labels as an ``(N, max(lengths))`` long tensor, from padded
    ``(N, S)`` targets or the targets of all sequences concatenated."""
    width = max(lengths, default=0)
    if targets.dim() == 2 and not unbatched:
        if targets.shape[0] != batch or targets.shape[1] < width:
            raise RuntimeError(
                f"Expected tensor to have size at least {width} at dimension 1, but got size "
                f"{targets.shape[1]} for argument #2 'targets' of shape {list(targets.shape)}"
            )
        return targets.narrow(1, 0, width).long()
    flat = targets.reshape(-1).long()
    if flat.numel() != sum(lengths) and not (unbatched and flat.numel() >= sum(lengths)):
        raise RuntimeError(
            f"Expected tensor to have size {sum(lengths)} at dimension 0, but got size {flat.numel()} "
            "for argument #2 'targets'"
        )
    starts = [sum(lengths[:n]) for n in range(batch)]
    index = [[starts[n] + min(j, max(lengths[n] - 1, 0)) for j in range(width)] for n in range(batch)]
    if flat.numel() == 0:
        return _fg.zeros(batch, width, dtype=_fg.int64)
    return flat[_fg.tensor(index, dtype=_fg.int64).reshape(batch, width)]


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The Connectionist Temporal Classification loss: ``-log`` of the total
    probability of the alignments of each target sequence to its input
    sequence (paths through the target with blanks between and repeats
    collapsed).

    ``'mean'`` divides each sequence's loss by its target length (at least
    1) before averaging over the batch, as torch does. A target that no
    alignment can produce (too long for its input) has an infinite loss,
    or ``0`` with ``zero_infinity``, which also zeroes its gradient.

    The gradient is that of the loss with respect to ``log_probs`` as given
    (``-`` the posterior occupation of each label). torch's kernel returns
    the gradient for ``log_probs`` made by ``log_softmax`` (it adds
    ``exp(log_probs)``); through a ``log_softmax`` both give the same
    gradient of the logits.

    Args:
        log_probs (Tensor): log-probabilities ``(T, N, C)`` (time, batch,
            classes including the blank), or ``(T, C)`` unbatched;
            float32 or float64.
        targets (Tensor): the labels, padded ``(N, S)`` or concatenated
            ``(sum(target_lengths),)`` (``(S,)`` unbatched). They must not
            be the blank.
        input_lengths (Tensor or tuple of ints): the length of each input
            sequence, at most ``T``.
        target_lengths (Tensor or tuple of ints): the length of each target.
        blank (int): the blank label. Default: ``0``.
        {reduction_arg}
        zero_infinity (bool): replace infinite losses (and their gradients)
            by zero. Default: ``False``.

    Example:
        >>> logp = ferrograd.full((2, 1, 2), 0.5).log()  # T=2, N=1, C=2
        >>> F.ctc_loss(logp, ferrograd.tensor([[1]]), (2,), (1,), reduction="sum")  # 3 of 4 paths
        tensor(0.2877)
    """
    _check_reduction(reduction)
    if not isinstance(log_probs, Tensor) or not isinstance(targets, Tensor):
        raise TypeError("ctc_loss(): log_probs and targets must be tensors")
    if log_probs.dim() not in (2, 3):
        raise RuntimeError(
            f"ctc_loss: expected log_probs of 3 dimensions (T, N, C), or 2 unbatched (T, C), but got "
            f"shape {list(log_probs.shape)}"
        )
    if log_probs.dtype not in (_fg.float32, _fg.float64):
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for {log_probs.dtype}')
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    steps, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    in_lens = _lengths(input_lengths, "input_lengths", batch)
    tg_lens = _lengths(target_lengths, "target_lengths", batch)
    for v in in_lens:
        if v > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {v}")
    labels = _padded_targets(targets, tg_lens, batch, unbatched)
    width = labels.shape[1]
    pos = _fg.arange(width).unsqueeze(0)
    valid = pos < _fg.tensor(tg_lens, dtype=_fg.int64).unsqueeze(1)
    if bool((valid & ((labels < 0) | (labels >= classes))).any()):
        raise RuntimeError(f"ctc_loss: target labels must be in [0, {classes}) for {classes} classes")
    labels = labels.masked_fill(~valid, blank)

    # The extended sequence: blank, l1, blank, l2, ..., blank (2S + 1 states).
    states = 2 * width + 1
    ext = _fg.full((batch, states), blank, dtype=_fg.int64)
    if width:
        ext[:, 1::2] = labels
    # A label state may also be entered from two states back (skipping the
    # blank between) when it differs from the previous label.
    skip = _fg.zeros(batch, states, dtype=_fg.bool)
    if width > 1:
        skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    skip = skip & (ext != blank)
    emit = lp.gather(2, ext.unsqueeze(0).expand(steps, batch, states)).clamp_min(_LOG_ZERO)

    # alpha before the first frame: a virtual blank in state 0, so the first
    # step starts every path in state 0 or 1 with the same update as the rest.
    alpha = pad(_fg.zeros(batch, 1, dtype=lp.dtype), (0, states - 1), value=_LOG_ZERO)
    frames = _fg.tensor(in_lens, dtype=_fg.int64).unsqueeze(1)
    # One unbind (whose gradient is one stack), not a select per frame.
    emit_at = emit.unbind(0)
    for t in range(max(in_lens, default=0)):
        shifted = pad(alpha, (2, 0), value=_LOG_ZERO)
        from_prev = shifted.narrow(1, 1, states)
        from_skip = shifted.narrow(1, 0, states).masked_fill(~skip, _LOG_ZERO)
        step = _fg.stack([alpha, from_prev, from_skip]).logsumexp(0) + emit_at[t]
        alpha = _fg.where(frames > t, step, alpha)
    ends = 2 * _fg.tensor(tg_lens, dtype=_fg.int64).unsqueeze(1)
    last = alpha.gather(1, ends)
    before = alpha.gather(1, (ends - 1).clamp_min(0)).masked_fill(ends == 0, _LOG_ZERO)
    log_likelihood = _fg.cat([last, before], 1).logsumexp(1)
    impossible = log_likelihood.detach() < _LOG_ZERO / 2
    loss = _fg.where(impossible, 0.0 if zero_infinity else float("inf"), -log_likelihood)
    if reduction == "mean":
        per_label = loss / _fg.tensor(tg_lens, dtype=lp.dtype).clamp_min(1)
        return per_label.mean() if batch else per_label.sum()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class multi-label hinge loss: for each sample, ``sum_j sum_i
    max(0, 1 - (x[y_j] - x[i])) / C`` over its target classes ``y_j`` and
    the classes ``i`` that are not targets.

    ``target`` holds class indices, read up to the first ``-1`` (the rest
    is ignored); a class listed twice counts twice, as in torch.

    Args:
        input (Tensor): the scores, ``(C,)`` or ``(N, C)``.
        target (Tensor): long class indices shaped like ``input``,
            terminated by ``-1`` when fewer than ``C``.
        {legacy_reduction_args}

    Example:
        >>> x = ferrograd.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> F.multilabel_margin_loss(x, ferrograd.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if target.dtype != _fg.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f'"multilabel_margin_loss" not implemented for {input.dtype}')
    if input.dim() > 2 or (input.dim() == 1 and input.numel() == 0) or (
            input.dim() == 2 and input.shape[1] == 0 and input.shape[0] != 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    x = input.reshape(-1, input.shape[-1]) if input.dim() else input.reshape(1, 1)
    y = target.reshape(x.shape)
    classes = x.shape[1]
    # The targets are the entries before the first -1 of each row.
    valid = (y == -1).long().cumsum(1) == 0
    if bool((valid & ((y < 0) | (y >= classes))).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    listed = int(valid.sum(1).max()) if x.shape[0] else 0
    y, valid = y.narrow(1, 0, listed), valid.narrow(1, 0, listed)
    y = y.masked_fill(~valid, 0)
    is_target = ((y.unsqueeze(2) == _fg.arange(classes)) & valid.unsqueeze(2)).any(1)  # (N, C)
    picked = x.gather(1, y)  # (N, listed)
    hinge = (1.0 - picked.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0.0)  # (N, listed, C)
    counted = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = hinge.masked_fill(~counted, 0.0).sum((1, 2)) / classes
    if input.dim() < 2:
        loss = loss.reshape(())
    if reduction == "mean":
        return loss.sum() / max(loss.numel(), 1)
    return loss.sum() if reduction == "sum" else loss


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """:func:`cross_entropy` of the logits ``linear(input, linear_weight,
    linear_bias)``.

    A ``linear_weight`` of shape ``(C, d1, ..., dK, in_features)`` (with a
    batched ``(N, in_features)`` input and a bias, if any, of shape
    ``(C, d1, ..., dK)``) gives logits ``(N, C, d1, ..., dK)`` for a
    K-dimensional loss. The logits are computed whole: ``options``
    (torch's chunking strategy, which saves memory and gives the same
    values) is accepted and has no effect.

    Args:
        input (Tensor): the samples, ``(in_features,)`` or
            ``(N, in_features)``.
        linear_weight (Tensor): ``(C, in_features)`` or
            ``(C, d1, ..., dK, in_features)``.
        target (Tensor): class indices or class probabilities, as for
            :func:`cross_entropy`.

    Keyword args:
        linear_bias (Tensor, optional): the bias, shaped like
            ``linear_weight`` without its last dimension. Default: ``None``.
        weight (Tensor, optional): a rescaling weight per class. Default:
            ``None``.
        {reduction_arg}
        ignore_index (int, optional): a target class index that is ignored.
            Default: ``None`` (``-100``).
        label_smoothing (float): in ``[0, 1]``. Default: ``0.0``.
        options: accepted for compatibility (no effect). Default: ``None``.

    Example:
        >>> x = ferrograd.tensor([[1.0, 0.0]])
        >>> F.linear_cross_entropy(x, ferrograd.zeros(3, 2), ferrograd.tensor([2]))
        tensor(1.0986)
    """
    features = linear_weight.shape[-1] if linear_weight.dim() else 0
    if input.dim() == 0 or input.shape[-1] != features:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1] if input.dim() else 0} and {features}, respectively"
        )
    if linear_weight.dim() > 2:
        if input.dim() != 2:
            raise RuntimeError(
                f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                f"batched input, (N, {features}), got unbatched input with shape {tuple(input.shape)}"
            )
        out_shape = tuple(linear_weight.shape[:-1])
        if linear_bias is not None and tuple(linear_bias.shape) != out_shape:
            raise RuntimeError(f"expected linear_bias shape {out_shape}, got {tuple(linear_bias.shape)}")
        logits = linear(input, linear_weight.reshape(-1, features)).reshape(-1, *out_shape)
        if linear_bias is not None:
            logits = logits + linear_bias
    else:
        logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


_route(globals())
