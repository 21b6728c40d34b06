"""The loss functions of :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import math
import warnings
from typing import Any

import ferrograd as _fg
from ferrograd import _core
from ferrograd._core import Tensor

from ._activation import _log1p_exp, logsigmoid
from ._distance import pairwise_distance
from ._utils import (
    _check_reduction,
    _checked_reduction,
    _legacy_reduction,
    _reduce,
    _route,
    _warn_size_mismatch,
)


def _weighted(loss: Tensor, weight: Tensor | None) -> Tensor:
    return loss if weight is None else loss * weight


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error ``(x - y)^2``, optionally weighted, then reduced.

    {pointwise_loss_args}

    Example:
        >>> F.mse_loss(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([0.0, 0.0]))
        tensor(2.5000)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    return _reduce(_weighted((input - target).square(), weight), reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error ``|x - y|``, optionally weighted, then reduced.

    {pointwise_loss_args}

    Example:
        >>> F.l1_loss(ferrograd.tensor([1.0, -3.0]), ferrograd.tensor([0.0, 0.0]))
        tensor(2.)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    return _reduce(_weighted((input - target).abs(), weight), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = x - y``).

    Args:
        {input_target_args}
        {legacy_reduction_args}
        beta (float): where the loss turns from quadratic to linear. Default:
            ``1.0``.

    Example:
        >>> F.smooth_l1_loss(ferrograd.tensor([0.5, 3.0]), ferrograd.tensor([0.0, 0.0]), reduction="sum")
        tensor(2.6250)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _warn_size_mismatch(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    loss = _fg.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``.

    Args:
        {input_target_args}
        {reduction_arg}
        delta (float): where the loss turns from quadratic to linear. Default:
            ``1.0``.
        {elementwise_weight_arg}

    Example:
        >>> F.huber_loss(ferrograd.tensor([0.5, 3.0]), ferrograd.tensor([0.0, 0.0]), reduction="sum")
        tensor(2.6250)
    """
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = _fg.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(_weighted(loss, weight), reduction)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood: ``-weight[t] * input[n, t]`` for log-probabilities ``input``
    of shape ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)`` and class indices ``target``.

    ``'mean'`` divides by the sum of the weights of the non-ignored targets.

    Args:
        input (Tensor): log-probabilities, of shape ``(N, C)``, ``(C,)`` or
            ``(N, C, d1, ...)``.
        target (Tensor): class indices, of the shape of ``input`` without ``C``.
        {class_index_loss_args}

    Example:
        >>> logp = ferrograd.tensor([[-1.0, -2.0], [-3.0, -4.0]])
        >>> F.nll_loss(logp, ferrograd.tensor([1, 0]))
        tensor(2.5000)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if target.dtype == _fg.uint8:
        target = target.long()
    return _core._nll_loss(input, target, weight, reduction, int(ignore_index))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits ``input`` and ``target`` (class indices, or class
    probabilities of the same shape as ``input``), with optional label smoothing.

    Args:
        input (Tensor): the logits, of shape ``(N, C)``, ``(C,)`` or
            ``(N, C, d1, ...)``.
        target (Tensor): class indices (shape of ``input`` without ``C``) or
            class probabilities (shaped like ``input``).
        {class_index_loss_args}
        label_smoothing (float): in ``[0, 1]``: mix the target with the uniform
            distribution by this amount. Default: ``0.0``.

    Example:
        >>> F.cross_entropy(ferrograd.tensor([[0.0, 0.0]]), ferrograd.tensor([1]))
        tensor(0.6931)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = input.log_softmax(class_dim)
    num_classes = input.shape[class_dim]
    wshape = [1] * input.dim()
    wshape[class_dim] = num_classes
    if target.is_floating_point():
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1.0 - label_smoothing) + label_smoothing / num_classes
        per = logp * target
        if weight is not None:
            per = per * weight.reshape(wshape)
        losses = -per.sum(class_dim)
        if reduction == "mean":
            return losses.sum() / (input.numel() / num_classes if input.numel() else 0.0)
        return _reduce(losses, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    # Uniform part of the smoothed target: -sum_c w_c log p_c per element.
    per = logp if weight is None else logp * weight.reshape(wshape)
    keep = target != ignore_index
    smooth = (-per.sum(class_dim)).masked_fill(~keep, 0.0)
    if reduction == "none":
        smooth_red = smooth
    elif reduction == "sum":
        smooth_red = smooth.sum()
    elif weight is None:
        smooth_red = smooth.sum() / keep.sum()
    else:
        picked = target.masked_select(keep)
        smooth_red = smooth.sum() / weight.index_select(0, picked).sum()
    return (1.0 - label_smoothing) * nll + smooth_red * (label_smoothing / num_classes)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``-w (y log x + (1 - y) log(1 - x))`` for probabilities ``x``; each log is
    clamped at -100, as torch does.

    Args:
        input (Tensor): probabilities in ``[0, 1]``.
        {binary_target_args}

    Example:
        >>> F.binary_cross_entropy(ferrograd.tensor([0.5]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
            "is deprecated. Please ensure they have the same size."
        )
    if input.numel() > 0 and (bool((input < 0).any()) or bool((input > 1).any())):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = input.log().clamp_min(-100.0)
    log_1mx = (1.0 - input).log().clamp_min(-100.0)
    loss = -(target * log_x + (1.0 - target) * log_1mx)
    return _reduce(_weighted(loss, weight), reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)``, computed without overflow:
    ``(1 - y) x + (1 + (pw - 1) y) (log1p(exp(-|x|)) + max(-x, 0))``.

    Args:
        input (Tensor): the logits.
        {binary_target_args}
        pos_weight (Tensor, optional): a weight of the positive examples per
            class (broadcast along the last dim). Default: ``None``.

    Example:
        >>> F.binary_cross_entropy_with_logits(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    softplus_neg = _log1p_exp(-input)
    if pos_weight is None:
        loss = (1.0 - target) * input + softplus_neg
    else:
        loss = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * softplus_neg
    return _reduce(_weighted(loss, weight), reduction)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Pointwise KL divergence ``y (log y - x)`` for log-probabilities ``x``
    (``target`` in log space too with ``log_target=True``); ``'batchmean'``
    divides the sum by the batch size.

    Args:
        input (Tensor): log-probabilities.
        target (Tensor): probabilities (log-probabilities with ``log_target``).
        {size_average_arg}
        {reduce_arg}
        reduction (str): ``'none'``, ``'batchmean'`` (the mathematically right
            one), ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        log_target (bool): ``target`` holds log-probabilities. Default:
            ``False``.

    Example:
        >>> F.kl_div(ferrograd.tensor([-1.0]), ferrograd.tensor([0.0]), reduction="sum")
        tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy: 0 * log 0 is 0; the log argument is patched so no inf reaches the graph.
        safe = _fg.where(target == 0, _fg.ones_like(target), target)
        loss = target * safe.log() - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() > 0 else total
    return _reduce(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood: ``exp(x) - y x`` (``log_input``) or
    ``x - y log(x + eps)``, plus Stirling's term for ``y > 1`` when ``full``.

    Args:
        input (Tensor): the predicted rates (their logs when ``log_input``).
        target (Tensor): the observed counts.
        log_input (bool): ``input`` holds log-rates: loss ``exp(x) - y x``;
            otherwise ``x - y log(x + eps)``. Default: ``True``.
        full (bool): add the Stirling term ``y log y - y + 0.5 log(2 pi y)``.
            Default: ``False``.
        {size_average_arg}
        eps (float): added inside the log when not ``log_input``. Default:
            ``1e-08``.
        {reduce_arg}
        {reduction_arg}

    Example:
        >>> F.poisson_nll_loss(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(1.)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        safe = _fg.where(target > 1, target, _fg.ones_like(target))
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``.

    Args:
        input1 (Tensor): the first scores.
        input2 (Tensor): the second scores.
        target (Tensor): ``1`` where ``input1`` should rank higher, ``-1`` where
            ``input2`` should.
        margin (float): the margin. Default: ``0.0``.
        {legacy_reduction_args}

    Example:
        >>> F.margin_ranking_loss(ferrograd.tensor([1.0]), ferrograd.tensor([2.0]), ferrograd.tensor([1.0]))
        tensor(1.)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``x`` where ``y == 1`` and ``max(0, margin - x)`` where ``y == -1``.

    Args:
        input (Tensor): the input tensor.
        target (Tensor): ``1`` or ``-1`` per element.
        margin (float): the margin. Default: ``1.0``.
        {legacy_reduction_args}

    Example:
        >>> F.hinge_embedding_loss(ferrograd.tensor([0.3, 0.2]), ferrograd.tensor([1.0, -1.0]))
        tensor(0.5500)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    zeros = _fg.zeros_like(input)
    margin_part = _fg.where(target != 1, (margin - input).clamp_min(0.0), zeros)
    self_part = _fg.where(target != -1, input, zeros)
    return _reduce(margin_part + self_part, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-y x))``.

    Args:
        input (Tensor): the input tensor.
        target (Tensor): ``1`` or ``-1`` per element.
        {legacy_reduction_args}

    Example:
        >>> F.soft_margin_loss(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    z = -target * input
    loss = _log1p_exp(z)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y == 1`` and ``max(0, cos(x1, x2) - margin)`` where ``y == -1``.

    Args:
        input1 (Tensor): the first inputs, ``(N, D)`` or ``(D,)``.
        input2 (Tensor): the second inputs, shaped like ``input1``.
        target (Tensor): ``1`` (similar) or ``-1`` (dissimilar) per pair.
        margin (float): the margin for dissimilar pairs, in ``[-1, 1]``.
            Default: ``0.0``.
        {legacy_reduction_args}

    Example:
        >>> F.cosine_embedding_loss(ferrograd.tensor([[1.0, 0.0]]), ferrograd.tensor([[0.0, 1.0]]),
        ...                         ferrograd.tensor([1.0]))
        tensor(1.)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    dim = input1.dim() - 1
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = dot / (mag1 * mag2).sqrt()
    zeros = _fg.zeros_like(cos)
    loss = _fg.where(target == 1, 1.0 - cos, zeros) + _fg.where(
        target == -1, (cos - margin).clamp_min(0.0), zeros
    )
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm pairwise distance.

    Args:
        anchor (Tensor): the anchors, ``(N, D)`` or ``(D,)``.
        positive (Tensor): the positive examples.
        negative (Tensor): the negative examples.
        margin (float): the margin. Default: ``1.0``.
        p (float): the norm degree of the distance. Default: ``2``.
        eps (float): added to the differences, to avoid a zero norm. Default:
            ``1e-06``.
        {triplet_swap_arg}
        {legacy_reduction_args}

    Example:
        >>> a = ferrograd.tensor([[0.0, 0.0]])
        >>> F.triplet_margin_loss(a, a, ferrograd.tensor([[3.0, 4.0]]), margin=6.0, eps=0.0)
        tensor(1.)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _fg.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """:func:`triplet_margin_loss` with a custom ``distance_function`` (default pairwise L2).

    Args:
        anchor (Tensor): the anchors.
        positive (Tensor): the positive examples.
        negative (Tensor): the negative examples.

    Keyword args:
        distance_function (callable, optional): ``f(x1, x2)`` giving the
            distances. Default: :func:`pairwise_distance`.
        margin (float): the margin. Default: ``1.0``.
        {triplet_swap_arg}
        {reduction_arg}

    Example:
        >>> a, p, n = ferrograd.tensor([[0.0]]), ferrograd.tensor([[2.0]]), ferrograd.tensor([[1.0]])
        >>> F.triplet_margin_with_distance_loss(a, p, n)  # max(2 - 1 + 1, 0)
        tensor(2.)
    """
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(
            f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
        )
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _fg.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood ``0.5 (log var + (x - y)^2 / var)`` (plus
    ``0.5 log 2 pi`` when ``full``); ``var`` is clamped below at ``eps`` for the value
    only, as torch does.

    Args:
        input (Tensor): the predicted means.
        target (Tensor): the samples.
        var (Tensor or float): the predicted variances (broadcast against
            ``input``).
        full (bool): add the constant ``0.5 log(2 pi)``. Default: ``False``.
        eps (float): lower clamp of ``var``. Default: ``1e-06``.
        {reduction_arg}

    Example:
        >>> F.gaussian_nll_loss(ferrograd.tensor([1.0]), ferrograd.tensor([3.0]), ferrograd.tensor([2.0]))
        tensor(1.3466)
    """
    _check_reduction(reduction)
    if not isinstance(var, Tensor):
        var = _fg.full(tuple(input.shape), float(var), dtype=input.dtype)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # torch clamps a clone under no_grad: the value is clamped, the gradient is
    # the identity; adding a detached correction reproduces both.
    var = var + (var.clamp_min(eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target).square() / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss averaged over classes: ``-mean_c(y log s(x) + (1 - y) log s(-x))``.

    Args:
        input (Tensor): the logits, of shape ``(N, C)``.
        target (Tensor): ``0`` or ``1`` per class, shaped like ``input``.
        weight (Tensor, optional): a weight per class. Default: ``None``.
        {legacy_reduction_args}

    Example:
        >>> F.multilabel_soft_margin_loss(ferrograd.tensor([[0.0, 0.0]]), ferrograd.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge: ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``.

    Args:
        input (Tensor): the scores, of shape ``(N, C)`` or ``(C,)``.
        target (Tensor): the class indices.
        p (int): ``1`` or ``2``: the power of each hinge term. Default: ``1``.
        margin (float): the margin. Default: ``1.0``.
        {class_weight_arg}
        {legacy_reduction_args}

    Example:
        >>> F.multi_margin_loss(ferrograd.tensor([[0.1, 0.2, 0.4, 0.8]]), ferrograd.tensor([3]))
        tensor(0.3250)
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    y = target.reshape(-1)
    c = x.shape[1]
    picked = x.gather(1, y.unsqueeze(1))
    hinge = (margin - picked + x).clamp_min(0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight.index_select(0, y).unsqueeze(1)
    own = _fg.zeros(x.shape, dtype=_fg.bool).scatter_(1, y.unsqueeze(1), True)
    loss = hinge.masked_fill(own, 0.0).sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


_route(globals())
