"""Weight averaging: Stochastic Weight Averaging (SWA) and exponential moving averages (EMA) of a
model's parameters, the SWA learning-rate schedule, and the BatchNorm statistics refresh that an
averaged model needs.

``AveragedModel`` keeps a copy of a model and folds the model's current parameters into it on
every ``update_parameters(model)``: an equal-weight running mean by default (SWA), or any rule
given as ``avg_fn`` (one tensor at a time) or ``multi_avg_fn`` (lists of tensors);
``get_ema_multi_avg_fn`` and ``get_ema_avg_fn`` give the EMA rule.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

import ferrograd as _fg

from .._core import Tensor
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ._lr_scheduler_base import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

# An averaging rule: (averaged tensors, current tensors, number averaged so far).
PARAM_LIST = list[Tensor] | tuple[Tensor, ...]


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The exponential moving average as a ``multi_avg_fn``: ``ema = decay * ema + (1 - decay) * p``
    for each pair of tensors, in place.

    Args:
        decay (float): the weight of the average so far (default: 0.999).

    Example:
        >>> ema, p = [ferrograd.tensor([1.0])], [ferrograd.tensor([3.0])]
        >>> ferrograd.optim.swa_utils.get_ema_multi_avg_fn(0.75)(ema, p, 1)
        >>> ema
        [tensor([1.5000])]
    """

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        with _fg.no_grad():
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                if _fg.is_floating_point(p_ema) or _fg.is_complex(p_ema):
                    p_ema.lerp_(p_model, 1 - decay)
                else:  # integer buffers: no lerp, computed out of place and copied back
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[PARAM_LIST, PARAM_LIST, Any], None]:
    """The equal-weight running mean as a ``multi_avg_fn``: after ``n`` averages, each averaged
    tensor moves ``1 / (n + 1)`` of the way to the current one, in place.

    Example:
        >>> avg, p = [ferrograd.tensor([1.0])], [ferrograd.tensor([4.0])]
        >>> ferrograd.optim.swa_utils.get_swa_multi_avg_fn()(avg, p, 2)  # mean of (1, 1, 4)
        >>> avg
        [tensor([2.])]
    """

    def swa_update(
        averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST, num_averaged: Any
    ) -> None:
        with _fg.no_grad():
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                if _fg.is_floating_point(p_avg) or _fg.is_complex(p_avg):
                    p_avg.lerp_(p_model, 1 / (_value(num_averaged) + 1))
                else:
                    p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The exponential moving average as an ``avg_fn``: returns ``decay * ema + (1 - decay) * p``.

    Args:
        decay (float): the weight of the average so far (default: 0.999).

    Example:
        >>> ema_fn = ferrograd.optim.swa_utils.get_ema_avg_fn(0.5)
        >>> ema_fn(ferrograd.tensor([1.0]), ferrograd.tensor([3.0]), 1)
        tensor([2.])
    """

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with _fg.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The equal-weight running mean as an ``avg_fn``: returns ``avg + (p - avg) / (n + 1)``.

    Example:
        >>> swa_fn = ferrograd.optim.swa_utils.get_swa_avg_fn()
        >>> swa_fn(ferrograd.tensor([1.0]), ferrograd.tensor([4.0]), 2)
        tensor([2.])
    """

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with _fg.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _value(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


class AveragedModel(Module):
    r"""A copy of a model whose parameters are averaged over the models passed to
    :meth:`update_parameters`: SWA (the default), EMA or any given rule.

    The first ``update_parameters(model)`` copies ``model``'s parameters; each later one folds
    them in with the averaging rule and the count of models averaged so far (the buffer
    ``n_averaged``). Buffers (such as BatchNorm's running statistics) are copied from ``model``
    on every update unless ``use_buffers=True``, which averages them like the parameters. The
    averaged model's BatchNorm statistics then usually need :func:`update_bn`.

    Args:
        model (Module): the model to average; it is deep-copied.
        device (str, optional): where to keep the copy (``"cpu"`` only).
        avg_fn (Callable, optional): ``avg_fn(averaged, current, num_averaged)`` returning the
            new average of one tensor.
        multi_avg_fn (Callable, optional): ``multi_avg_fn(averaged_list, current_list,
            num_averaged)`` updating lists of tensors in place. At most one of ``avg_fn`` and
            ``multi_avg_fn``; with neither, the equal-weight running mean.
        use_buffers (bool): average the buffers too, instead of copying them (default: False).

    Example:
        >>> model = nn.Linear(1, 1, bias=False)
        >>> swa = optim.swa_utils.AveragedModel(model)
        >>> for w in [1.0, 2.0, 6.0]:
        ...     with ferrograd.no_grad():
        ...         _ = model.weight.fill_(w)
        ...     swa.update_parameters(model)
        >>> swa.module.weight, swa.n_averaged
        (Parameter containing:
        tensor([[3.]], requires_grad=True), tensor(3))
    """

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
        multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Any], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _fg.tensor(0, dtype=_fg.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and, with ``use_buffers``, buffers) into the average.

        Args:
            model (Module): a model of the same structure as the averaged one.
        """
        averaged_it: Iterable[Tensor] = self.parameters()
        current_it: Iterable[Tensor] = model.parameters()
        if self.use_buffers:
            averaged_it = itertools.chain(self.module.parameters(), self.module.buffers())
            current_it = itertools.chain(model.parameters(), model.buffers())
        averaged = []
        current = []
        first = int(self.n_averaged) == 0
        with _fg.no_grad():
            for p_averaged, p_model in zip(averaged_it, current_it, strict=False):
                averaged.append(p_averaged.detach())
                current.append(p_model.detach())
                if first:
                    averaged[-1].copy_(current[-1])

            if not first:
                if self.avg_fn is not None:
                    for p_averaged, p_model in zip(averaged, current, strict=True):
                        p_averaged.copy_(self.avg_fn(p_averaged, p_model, self.n_averaged))
                else:
                    # A ``multi_avg_fn`` gets the tensors grouped by dtype, as torch groups them
                    # by device and dtype; the default is the equal-weight mean.
                    by_dtype: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
                    for p_averaged, p_model in zip(averaged, current, strict=True):
                        lists = by_dtype.setdefault(p_averaged.dtype, ([], []))
                        lists[0].append(p_averaged)
                        lists[1].append(p_model)
                    if self.multi_avg_fn is not None:
                        for averaged_list, current_list in by_dtype.values():
                            self.multi_avg_fn(averaged_list, current_list, self.n_averaged)
                    else:
                        swa = get_swa_avg_fn()
                        for averaged_list, current_list in by_dtype.values():
                            for p_averaged, p_model in zip(averaged_list, current_list, strict=True):
                                p_averaged.copy_(swa(p_averaged, p_model, self.n_averaged))

            if not self.use_buffers:
                # Buffers are not averaged: keep them equal to the source model's.
                for b_averaged, b_model in zip(self.module.buffers(), model.buffers(), strict=False):
                    b_averaged.detach().copy_(b_model.detach())
            self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    r"""Recompute the running statistics of every BatchNorm layer of ``model`` with one pass over
    ``loader``.

    The statistics are reset and then accumulated as an equal-weight average over the batches
    (each layer's ``momentum`` is ``None`` during the pass and restored after). The model runs
    in training mode, under ``no_grad``, and is put back into its previous mode. A model without
    BatchNorm layers is left alone.

    Args:
        loader (iterable): batches of inputs; a list or tuple batch contributes its first entry
            (as ``(input, target)`` pairs from a ``DataLoader`` do).
        model (Module): the model whose BatchNorm statistics to recompute.
        device (str, optional): where to move each input first.

    Example:
        >>> model = nn.BatchNorm1d(1)
        >>> batches = [ferrograd.tensor([[0.0], [2.0]]), ferrograd.tensor([[4.0], [6.0]])]
        >>> optim.swa_utils.update_bn(batches, model)
        >>> model.running_mean  # the mean of the two batch means
        tensor([3.])
    """
    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return

    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with _fg.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    r"""Anneal each group's lr to a fixed ``swa_lr`` over ``anneal_epochs`` epochs, then hold it:
    the schedule that SWA uses while it averages.

    At epoch ``e`` the lr is ``swa_lr * a + lr0 * (1 - a)`` with ``a = f(min(1, e /
    anneal_epochs))`` and ``f`` the ``"cos"`` ramp ``(1 - cos(pi t)) / 2`` or the ``"linear"``
    one ``t``; ``lr0`` is recovered from the current lr, so the schedule can follow another one.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates to set.
        swa_lr (float or list): the target lr, for all groups or per group.
        anneal_epochs (int): epochs to reach ``swa_lr``; 0 switches at once (default: 10).
        anneal_strategy (str): ``"cos"`` or ``"linear"`` (default: ``"cos"``).
        last_epoch (int): the index of the last epoch when resuming; -1 starts afresh.

    Example:
        >>> w = ferrograd.zeros(1, requires_grad=True)
        >>> opt = ferrograd.optim.SGD([w], lr=1.0)
        >>> sched = ferrograd.optim.swa_utils.SWALR(opt, swa_lr=0.2, anneal_epochs=4,
        ...                                         anneal_strategy="linear")
        >>> lrs = []
        >>> for _ in range(5):
        ...     opt.step()
        ...     sched.step()
        ...     lrs.append(round(sched.get_last_lr()[0], 4))
        >>> lrs
        [0.8, 0.6, 0.4, 0.2, 0.2]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr the anneal started from, given the current ``lr`` at ramp value ``alpha``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch of the anneal."""
        self._warn_if_called_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # Undo the previous epoch's mix to find each group's starting lr, then mix anew.
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        start_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, start_lrs, strict=True)
        ]

    def state_dict(self) -> dict[str, Any]:
        """The scheduler state: everything but the optimizer and the anneal function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
