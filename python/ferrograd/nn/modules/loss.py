"""Loss layers. Each stores its options and calls the functional form;
``size_average``/``reduce`` are torch's deprecated spelling of ``reduction``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ferrograd._core import Tensor

from .. import functional as F
from .._docs import fill_docs as _fill_docs
from .distance import PairwiseDistance
from .module import Module

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CTCLoss",
    "CosineEmbeddingLoss",
    "CrossEntropyLoss",
    "GaussianNLLLoss",
    "HingeEmbeddingLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MSELoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "NLLLoss",
    "PoissonNLLLoss",
    "SmoothL1Loss",
    "SoftMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
]


class _Loss(Module):
    reduction: str

    def __init__(
        self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        self.reduction = F._legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        # A buffer, so it follows .to()/.double() and is saved in state_dict.
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    r"""Mean (or sum) absolute error ``|x - y|``.

    Args:
        {short_legacy_loss_reduction_args}

    Example:
        >>> nn.L1Loss()(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([0.0, 0.0]))
        tensor(1.5000)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.l1_loss` with this module's settings."""
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    r"""Mean (or sum) squared error ``(x - y)^2``.

    Args:
        {short_legacy_loss_reduction_args}

    Example:
        >>> nn.MSELoss()(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([0.0, 0.0]))
        tensor(2.5000)
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.mse_loss` with this module's settings."""
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    r"""``0.5 d^2 / beta`` for ``|d| < beta``, else ``|d| - 0.5 beta``.

    Args:
        beta (float): where the loss changes from quadratic to linear. Default: 1.0.
        {legacy_loss_reduction_args}

    Example:
        >>> nn.SmoothL1Loss()(ferrograd.tensor([0.5, 3.0]), ferrograd.zeros(2))
        tensor(1.3125)
    """

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.smooth_l1_loss` with this module's settings."""
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""``0.5 d^2`` for ``|d| < delta``, else ``delta (|d| - 0.5 delta)``.

    Args:
        {loss_reduction_arg}
        delta (float): where the loss changes from quadratic to linear. Default: 1.0.

    Example:
        >>> nn.HuberLoss(delta=2.0)(ferrograd.tensor([3.0]), ferrograd.zeros(1))
        tensor(4.)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.huber_loss` with this module's settings."""
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    r"""Negative log likelihood of class indices given log-probabilities ``(N, C, ...)``.

    Args:
        weight (Tensor, optional): a weight per class, shape ``(C,)``.
        ignore_index (int): a target value that contributes nothing. Default: -100.
        {legacy_loss_reduction_args}

    Shape:
        Input ``(N, C)`` or ``(N, C, d1, ...)`` log-probabilities; target ``(N)`` or
        ``(N, d1, ...)`` class indices.

    Example:
        >>> logp = ferrograd.log(ferrograd.tensor([[0.5, 0.5]]))
        >>> nn.NLLLoss()(logp, ferrograd.tensor([1]))
        tensor(0.6931)
    """

    __constants__ = ["ignore_index", "reduction"]

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.nll_loss` with this module's settings."""
        return F.nll_loss(
            input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )


class CrossEntropyLoss(_WeightedLoss):
    r"""``log_softmax`` followed by ``NLLLoss``; the target may also hold class
    probabilities. ``label_smoothing`` mixes the target with the uniform distribution.

    Args:
        weight (Tensor, optional): a weight per class, shape ``(C,)``.
        ignore_index (int): a target value that contributes nothing. Default: -100.
        {loss_reduction_arg}
        label_smoothing (float): mix the target with the uniform distribution by this
            amount, in ``[0, 1]``. Default: 0.0.
        size_average, reduce: deprecated forms of ``reduction``; leave them None.

    Shape:
        Input ``(N, C)`` or ``(N, C, d1, ...)`` logits; target of class indices ``(N)`` /
        ``(N, d1, ...)``, or probabilities shaped like the input.

    Example:
        >>> nn.CrossEntropyLoss()(ferrograd.zeros(1, 4), ferrograd.tensor([2]))
        tensor(1.3863)
    """

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.cross_entropy` with this module's settings."""
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class BCELoss(_WeightedLoss):
    r"""Binary cross entropy of probabilities: ``-(y log x + (1 - y) log(1 - x))``,
    with the logs clamped at -100 as torch does.

    Args:
        weight (Tensor, optional): a weight broadcast over the elements.
        {short_legacy_loss_reduction_args}

    Example:
        >>> nn.BCELoss()(ferrograd.tensor([0.5]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.binary_cross_entropy` with this module's settings."""
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""``sigmoid`` followed by ``BCELoss``, computed stably; ``pos_weight`` scales
    the positive term per class.

    Args:
        weight (Tensor, optional): a weight broadcast over the batch.
        {loss_reduction_arg}
        pos_weight (Tensor, optional): a weight for the positive term, per class.
        size_average, reduce: deprecated forms of ``reduction``; leave them None.

    Shape:
        Input and target of the same shape ``(*)``.

    Example:
        >>> nn.BCEWithLogitsLoss()(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies the functional form with this module's settings.

        See :func:`ferrograd.nn.functional.binary_cross_entropy_with_logits`.
        """
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class KLDivLoss(_Loss):
    r"""``y (log y - x)`` for log-probabilities ``x`` (and ``y`` given in log space
    when ``log_target``). Use ``reduction='batchmean'`` for the mathematical KL.

    Args:
        reduction (str): ``'none'`` (one loss per element), ``'mean'`` or ``'sum'``.
            Default: ``'mean'``. ``'batchmean'`` divides the sum by the batch size.
        log_target (bool): the target holds log-probabilities. Default: False.
        size_average, reduce: deprecated forms of ``reduction``; leave them None.

    Example:
        >>> p = ferrograd.tensor([[0.5, 0.5]])
        >>> nn.KLDivLoss(reduction="batchmean")(p.log(), p)
        tensor(0.)
    """

    __constants__ = ["reduction"]

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.kl_div` with this module's settings."""
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    r"""Poisson negative log likelihood: ``exp(x) - y x`` for log-rates (or
    ``x - y log(x + eps)``), plus Stirling's term when ``full``.

    Args:
        log_input (bool): the input holds log-rates (else rates). Default: True.
        full (bool): add the Stirling term of ``log(y!)``. Default: False.
        eps (float): added inside the log when ``log_input`` is False. Default: 1e-8.
        {legacy_loss_reduction_args}

    Example:
        >>> nn.PoissonNLLLoss()(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(1.)
    """

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: bool | None = None,
        eps: float = 1e-8,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.poisson_nll_loss` with this module's settings."""
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )


class GaussianNLLLoss(_Loss):
    r"""Gaussian negative log likelihood ``0.5 (log var + (x - y)^2 / var)``.

    Args:
        full (bool): add the constant ``0.5 log(2 pi)``. Default: False.
        eps (float): the lower clamp of the variance. Default: 1e-6.
        {loss_reduction_arg}

    Example:
        >>> nn.GaussianNLLLoss()(ferrograd.zeros(2), ferrograd.zeros(2), ferrograd.ones(2))
        tensor(0.)
    """

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.gaussian_nll_loss` with this module's settings."""
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    r"""``x`` where ``y = 1`` and ``max(0, margin - x)`` where ``y = -1``.

    Args:
        margin (float): the margin for ``y = -1``. Default: 1.0.
        {legacy_loss_reduction_args}

    Example:
        >>> nn.HingeEmbeddingLoss()(ferrograd.tensor([0.3, 0.3]), ferrograd.tensor([1.0, -1.0]))
        tensor(0.5000)
    """

    __constants__ = ["margin", "reduction"]

    def __init__(
        self,
        margin: float = 1.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.hinge_embedding_loss` with this module's settings."""
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    r"""Two-class logistic loss ``log(1 + exp(-y x))``.

    Args:
        {short_legacy_loss_reduction_args}

    Example:
        >>> nn.SoftMarginLoss()(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.soft_margin_loss` with this module's settings."""
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    r"""Multi-class multi-label hinge loss: ``sum_j sum_i max(0, 1 - (x[y_j] - x[i])) / C``
    over the target classes ``y_j`` (``target`` read up to its first ``-1``)
    and the other classes ``i``.

    Args:
        {short_legacy_loss_reduction_args}

    Example:
        >>> x = ferrograd.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> nn.MultiLabelMarginLoss()(x, ferrograd.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.multilabel_margin_loss` with this module's settings."""
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class CTCLoss(_Loss):
    r"""The Connectionist Temporal Classification loss between sequences of
    log-probabilities and unsegmented target sequences.

    Args:
        blank (int): the blank label. Default: 0.
        reduction (str): ``'none'``, ``'mean'`` (each loss divided by its target
            length, then averaged) or ``'sum'``. Default: ``'mean'``.
        zero_infinity (bool): replace infinite losses (targets too long for
            their inputs) and their gradients by zero. Default: False.

    Shape:
        log_probs ``(T, N, C)`` or ``(T, C)``; targets ``(N, S)`` padded or
        ``(sum(target_lengths),)``; input_lengths and target_lengths ``(N,)``
        tensors or tuples; output a scalar, or ``(N,)`` with ``'none'``.

    Example:
        >>> logp = ferrograd.full((2, 1, 2), 0.5).log()
        >>> nn.CTCLoss(reduction="sum")(logp, ferrograd.tensor([[1]]), (2,), (1,))
        tensor(0.2877)
    """

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.ctc_loss` with this module's settings."""
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    r"""One-versus-all logistic loss over ``C`` classes, averaged over the classes.

    Args:
        weight (Tensor, optional): a weight per class.
        {short_legacy_loss_reduction_args}

    Example:
        >>> nn.MultiLabelSoftMarginLoss()(ferrograd.zeros(1, 2), ferrograd.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.multilabel_soft_margin_loss` with this module's settings."""
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    r"""``1 - cos(x1, x2)`` where ``y = 1`` and ``max(0, cos(x1, x2) - margin)`` where ``y = -1``.

    Args:
        margin (float): the margin for ``y = -1``, in ``[-1, 1]``. Default: 0.0.
        {legacy_loss_reduction_args}

    Example:
        >>> x = ferrograd.tensor([[1.0, 0.0]])
        >>> nn.CosineEmbeddingLoss()(x, x, ferrograd.tensor([1.0]))
        tensor(0.)
    """

    __constants__ = ["margin", "reduction"]

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.cosine_embedding_loss` with this module's settings."""
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_Loss):
    r"""``max(0, -y (x1 - x2) + margin)``.

    Args:
        margin (float): the margin. Default: 0.0.
        {legacy_loss_reduction_args}

    Example:
        >>> nn.MarginRankingLoss()(ferrograd.tensor([1.0]), ferrograd.tensor([2.0]), ferrograd.tensor([1.0]))
        tensor(1.)
    """

    __constants__ = ["margin", "reduction"]

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.margin_ranking_loss` with this module's settings."""
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    r"""Multi-class hinge loss ``sum_{i != y} max(0, margin - x_y + x_i)^p / C``.

    Args:
        p (int): 1 or 2. Default: 1.
        margin (float): the margin. Default: 1.0.
        weight (Tensor, optional): a weight per class.
        {legacy_loss_reduction_args}

    Example:
        >>> nn.MultiMarginLoss()(ferrograd.tensor([[0.1, 0.2, 0.4, 0.8]]), ferrograd.tensor([3]))
        tensor(0.3250)
    """

    __constants__ = ["p", "margin", "reduction"]

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead"
            )
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.multi_margin_loss` with this module's settings."""
        return F.multi_margin_loss(
            input, target, p=self.p, margin=self.margin, weight=self.weight, reduction=self.reduction
        )


class TripletMarginLoss(_Loss):
    r"""``max(d(a, p) - d(a, n) + margin, 0)`` with the ``p``-norm distance.

    Args:
        margin (float): the margin. Default: 1.0.
        p (float): the norm of the distance. Default: 2.0.
        eps (float): added to the differences before the norm. Default: 1e-6.
        swap (bool): use the smaller of ``d(a, n)`` and ``d(p, n)``. Default: False.
        {legacy_loss_reduction_args}

    Example:
        >>> a = ferrograd.zeros(1, 2)
        >>> nn.TripletMarginLoss()(a, a, a).item() > 0
        True
    """

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.triplet_margin_loss` with this module's settings."""
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )


class TripletMarginWithDistanceLoss(_Loss):
    r"""Triplet loss with a user distance function (``PairwiseDistance()`` by default).

    Args:
        distance_function (callable, optional): ``d(x1, x2)`` returning a distance per
            row. Default: :class:`PairwiseDistance`.
        margin (float): the margin. Default: 1.0.
        swap (bool): use the smaller of ``d(a, n)`` and ``d(p, n)``. Default: False.
        {loss_reduction_arg}

    Example:
        >>> a = ferrograd.zeros(1, 2)
        >>> nn.TripletMarginWithDistanceLoss()(a, a, a).item() > 0
        True
    """

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.distance_function: Any = (
            distance_function if distance_function is not None else PairwiseDistance()
        )
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """Applies the functional form with this module's settings.

        See :func:`ferrograd.nn.functional.triplet_margin_with_distance_loss`.
        """
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


_fill_docs(globals())
