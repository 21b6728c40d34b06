"""Learning-rate schedulers: adjust each parameter group's ``lr`` as training proceeds.

Most schedulers are *chainable*: ``get_lr`` computes the next lr from the group's current lr
(a recursive form), so several schedulers can act on the same optimizer one after the other.
Those that have one also provide ``_get_closed_form_lr``, used when ``step(epoch)`` is given an
explicit epoch.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from ._lr_scheduler_base import EPOCH_DEPRECATION_WARNING as EPOCH_DEPRECATION_WARNING
from ._lr_scheduler_base import (
    LRScheduler,
    _format_param,
    _param_groups_val_list,
    _update_param_group_val,
    _with_doc_pieces,
)
from ._lr_scheduler_base import _LRScheduler as _LRScheduler
from ._lr_scheduler_cyclic import CyclicLR
from ._lr_scheduler_plateau import ReduceLROnPlateau
from .optimizer import Optimizer

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]


class _LambdaScheduler(LRScheduler):
    """What :class:`LambdaLR` and :class:`MultiplicativeLR` share: a function of the epoch per
    parameter group (``lr_lambdas``), kept in the state dict only when it is a callable object
    (plain functions and lambdas cannot be saved; callable objects keep their attributes)."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        groups = len(optimizer.param_groups)
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * groups
        elif len(lr_lambda) != groups:
            raise ValueError(f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}")
        else:
            self.lr_lambdas = list(lr_lambda)
        self._check_lambdas()
        super().__init__(optimizer, last_epoch)

    def _check_lambdas(self) -> None:
        """Checks of ``lr_lambdas`` before the first step (none here)."""

    def state_dict(self) -> dict[str, Any]:
        """The scheduler state; lambdas are saved only when they are callable objects."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for fn, saved in zip(self.lr_lambdas, lr_lambdas, strict=True):
            if saved is not None:
                fn.__dict__.update(saved)


@_with_doc_pieces
class LambdaLR(_LambdaScheduler):
    """Set each group's lr to ``initial_lr * lr_lambda(epoch)``.

    Args:
        optimizer (Optimizer): wrapped optimizer.
        lr_lambda (Callable or list): a function of the epoch, or one per group.
        last_epoch (int): index of the last epoch (default: -1).

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5**epoch)
        >>> opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.5]
    """

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch: ``base_lr * lr_lambda(epoch)`` per group."""
        self._warn_if_called_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]


@_with_doc_pieces
class MultiplicativeLR(_LambdaScheduler):
    """Multiply each group's lr by ``lr_lambda(epoch)`` at every step (after the first).

    Args:
        {optimizer_arg}
        lr_lambda (callable or list of callables): ``epoch -> factor``, one per group or
            one for all.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.MultiplicativeLR(opt, lambda epoch: 0.5)
        >>> opt.step(); sched.step(); opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def _check_lambdas(self) -> None:
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch: each group's rate times ``lr_lambda(epoch)``."""
        self._warn_if_called_outside_step()
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [
            group["lr"] * fn(self.last_epoch)
            for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)
        ]


@_with_doc_pieces
class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs: ``lr = base * gamma ** (epoch // step_size)``.

    Args:
        {optimizer_arg}
        step_size (int): the period of the decay, in epochs.
        gamma (float): the factor. Default: 0.1.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.1)
        >>> for _ in range(3):
        ...     opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.1]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch, multiplied by ``gamma`` every ``step_size`` epochs."""
        self._warn_if_called_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


@_with_doc_pieces
class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone epoch (repeated milestones apply repeatedly).

    Args:
        {optimizer_arg}
        milestones (iterable of ints): the epochs at which to decay.
        gamma (float): the factor. Default: 0.1.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
        >>> lrs = []
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch, multiplied by ``gamma`` at each milestone."""
        self._warn_if_called_outside_step()
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs]


@_with_doc_pieces
class ConstantLR(LRScheduler):
    """Scale the lr by ``factor`` until epoch ``total_iters``, then restore it.

    Args:
        {optimizer_arg}
        factor (float): the scale until ``total_iters``. Default: 1/3.
        total_iters (int): the number of scaled epochs. Default: 5.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(
        self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch: scaled by ``factor`` until ``total_iters``."""
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


@_with_doc_pieces
class LinearLR(LRScheduler):
    """Scale the lr by a factor moving linearly from ``start_factor`` to ``end_factor`` over ``total_iters``.

    Args:
        {optimizer_arg}
        start_factor (float): the factor at epoch 0. Default: 1/3.
        end_factor (float): the factor from ``total_iters`` on. Default: 1.0.
        total_iters (int): the length of the ramp, in epochs. Default: 5.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(3):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch, on the ramp from ``start_factor`` to ``end_factor``."""
        self._warn_if_called_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        # Ratio of consecutive factors f(t) / f(t - 1), with f linear in t.
        delta = self.end_factor - self.start_factor
        ratio = 1.0 + delta / (self.total_iters * self.start_factor + (self.last_epoch - 1) * delta)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [
            base * (self.start_factor + (self.end_factor - self.start_factor) * frac)
            for base in self.base_lrs
        ]


@_with_doc_pieces
class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch.

    Args:
        {optimizer_arg}
        gamma (float): the factor per epoch.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        >>> opt.step(); sched.step(); opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch, multiplied by ``gamma`` each epoch."""
        self._warn_if_called_outside_step()
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


@_with_doc_pieces
class PolynomialLR(LRScheduler):
    """Decay the lr as ``base * (1 - min(epoch, total_iters) / total_iters) ** power``.

    Args:
        {optimizer_arg}
        total_iters (int): the epoch at which the lr reaches zero. Default: 5.
        power (float): the exponent of the decay. Default: 1.0.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=1.0)
        >>> opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.75]
    """

    def __init__(
        self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch, on the polynomial decay to zero at ``total_iters``."""
        self._warn_if_called_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        decay = (
            (1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)
        ) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - frac) ** self.power for base in self.base_lrs]


@_with_doc_pieces
class CosineAnnealingLR(LRScheduler):
    r"""Anneal the lr along a cosine from ``initial_lr`` (epoch 0) to ``eta_min`` (epoch ``T_max``).

    The lr is updated recursively from the current one, as torch does, so it composes with
    other schedulers; on its own it follows
    ``eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2`` and, past ``T_max``,
    climbs back up along the same cosine.

    Args:
        {optimizer_arg}
        T_max (int): the number of epochs from the initial lr to ``eta_min``.
        eta_min (float): the lowest lr. Default: 0.0.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
        >>> opt.step(); sched.step()
        >>> round(sched.get_last_lr()[0], 6)
        0.5
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current epoch, on the cosine curve from the base rate to ``eta_min``."""
        self._warn_if_called_outside_step()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            # Resuming at a later epoch: jump there with the closed form.
            return [
                self.eta_min
                + (base - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                for base in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            # Leaving the minimum: the ratio form would divide by zero there.
            return [
                group["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base, group in zip(self.base_lrs, groups, strict=True)
            ]
        ratio = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        )
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [
            self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]


@_with_doc_pieces
class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts (SGDR).

    ``lr = eta_min + (base - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2`` where ``T_cur`` counts
    epochs since the last restart and the period ``T_i`` starts at ``T_0`` and is multiplied by
    ``T_mult`` at each restart. ``step(epoch)`` accepts fractional epochs.

    Args:
        {optimizer_arg}
        T_0 (int): the length of the first cycle, in epochs.
        T_mult (int): the factor by which each cycle is longer than the last. Default: 1.
        eta_min (float): the lowest lr. Default: 0.0.
        {last_epoch_arg}

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
        >>> opt.step(); sched.step(); opt.step(); sched.step()
        >>> sched.get_last_lr()
        [1.0]
    """

    def __init__(
        self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The learning rates for the current step, on the current cosine cycle."""
        self._warn_if_called_outside_step()
        cosine = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * cosine for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance by one epoch, or jump to ``epoch`` (may be fractional, e.g. ``epoch + i / iters``)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # Number of whole periods before ``epoch``: T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch.
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._set_lrs(self.get_lr)


def _check_no_plateau_and_same_optimizer(owner: str, optimizer: Any, schedulers: Sequence[Any]) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs "
                f"to be specified when calling `step`, but got one at index {i} in the given schedulers "
                "sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                f"{scheduler.__class__.__name__} at index {i} has {scheduler.optimizer}, which is different "
                f"from {optimizer.__class__.__name__}."
            )


def _nested_state_dict(scheduler: Any) -> dict[str, Any]:
    state = {k: v for k, v in scheduler.__dict__.items() if k not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in scheduler._schedulers]
    return state


def _nested_load_state_dict(scheduler: Any, state_dict: dict[str, Any]) -> None:
    saved = state_dict.pop("_schedulers")
    scheduler.__dict__.update(state_dict)
    state_dict["_schedulers"] = saved  # leave the caller's dict as it was
    for s, s_state in zip(scheduler._schedulers, saved, strict=True):
        s.load_state_dict(s_state)


@_with_doc_pieces
class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at the ``milestones`` epochs.

    At a milestone the next scheduler restarts from its own epoch 0.

    Args:
        {optimizer_arg}
        schedulers (list of LRScheduler): the schedulers, in order, all of ``optimizer``.
        milestones (list of ints): the epochs at which to switch (one fewer than schedulers).
        {last_epoch_arg}

    Example:
        >>> from ferrograd.optim import lr_scheduler as S
        {example_setup}
        >>> warm = S.LinearLR(opt, start_factor=0.5, total_iters=2)
        >>> decay = S.ExponentialLR(opt, gamma=0.5)
        >>> sched = S.SequentialLR(opt, [warm, decay], milestones=[2])
        >>> lrs = [sched.get_last_lr()[0]]
        >>> for _ in range(4):
        ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
        >>> lrs
        [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int], last_epoch: int = -1
    ) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_no_plateau_and_same_optimizer(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number "
                f"of milestone points, but got number of schedulers {len(schedulers)} and the number of "
                f"milestones to be equal to {len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Building the sub-schedulers stepped the lr already; undo that and start the first one.
        for group in self.optimizer.param_groups:
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Roll back the epoch counter of every (nested) sub-scheduler by one."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for s in target._schedulers:
                self.recursive_undo(s)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the scheduler that is active at the next epoch."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The state of this scheduler and of each sub-scheduler."""
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        _nested_load_state_dict(self, state_dict)


@_with_doc_pieces
class ChainedScheduler(LRScheduler):
    """Step several schedulers together at every step, so their effects multiply.

    Args:
        schedulers (sequence of LRScheduler): the schedulers to step together.
        optimizer (Optimizer, optional): their optimizer. Default: the first scheduler's.

    Example:
        >>> from ferrograd.optim import lr_scheduler as S
        {example_setup}
        >>> a = S.ConstantLR(opt, factor=0.5, total_iters=2)
        >>> b = S.ExponentialLR(opt, gamma=0.5)
        >>> sched = S.ChainedScheduler([a, b])
        >>> opt.step(); sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None:
        name = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_no_plateau_and_same_optimizer(name, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every chained scheduler once, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def state_dict(self) -> dict[str, Any]:
        """The state of this scheduler and of each chained scheduler."""
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        _nested_load_state_dict(self, state_dict)


@_with_doc_pieces
class OneCycleLR(LRScheduler):
    r"""The 1cycle policy: warm the lr up to ``max_lr``, then anneal it far below the start.

    The lr starts at ``max_lr / div_factor``, rises to ``max_lr`` over the first ``pct_start``
    of ``total_steps``, then falls to ``initial_lr / final_div_factor``. With ``three_phase``
    it first comes back down to the initial lr symmetrically and then anneals to the minimum.
    With ``cycle_momentum`` the momentum (or Adam's ``beta1``) moves inversely between
    ``max_momentum`` and ``base_momentum``. ``anneal_strategy`` is ``"cos"`` or ``"linear"``.
    Step it after every batch.

    Args:
        {optimizer_arg}
        max_lr (float or list of floats): the peak lr, per group or for all.
        total_steps (int, optional): the length of the cycle; else ``epochs * steps_per_epoch``.
        epochs (int, optional): with ``steps_per_epoch``, gives ``total_steps``.
        steps_per_epoch (int, optional): with ``epochs``, gives ``total_steps``.
        pct_start (float): the fraction of the cycle spent rising. Default: 0.3.
        anneal_strategy (str): ``'cos'`` or ``'linear'``. Default: ``'cos'``.
        cycle_momentum (bool): move the momentum (or ``beta1``) opposite to the lr. Default: True.
        base_momentum (float or list): the momentum at the lr peak. Default: 0.85.
        max_momentum (float or list): the momentum at the lr's low points. Default: 0.95.
        div_factor (float): the initial lr is ``max_lr / div_factor``. Default: 25.0.
        final_div_factor (float): the final lr is ``initial_lr / final_div_factor``. Default: 1e4.
        three_phase (bool): come back down to the initial lr before the final anneal. Default: False.
        {last_epoch_arg}

    Example:
        >>> w = ferrograd.zeros(1, requires_grad=True)
        >>> opt = ferrograd.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> sched = ferrograd.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
        >>> round(sched.get_last_lr()[0], 6)  # max_lr / div_factor
        0.04
    """

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer

        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        # Each phase anneals group[start_*] to group[end_*] and ends at step ``end_step``.
        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                self._phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                self._phase(
                    float(2 * pct_start * self.total_steps) - 2,
                    "max_lr",
                    "initial_lr",
                    "base_momentum",
                    "max_momentum",
                ),
                self._phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                self._phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                self._phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]

        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            if "momentum" not in self.optimizer.defaults and "betas" not in self.optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in self.optimizer.defaults
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(
                    max_momentums, base_momentums, optimizer.param_groups, strict=True
                ):
                    if self.use_beta1:
                        group["betas"] = (m_momentum, *group["betas"][1:])
                    else:
                        group["momentum"] = m_momentum
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _phase(end_step: float, start_lr: str, end_lr: str, start_m: str, end_m: str) -> dict[str, Any]:
        return {
            "end_step": end_step,
            "start_lr": start_lr,
            "end_lr": end_lr,
            "start_momentum": start_m,
            "end_momentum": end_m,
        }

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        """Straight line from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def get_lr(self) -> list[Any]:
        """The learning rates for the current step of the one-cycle schedule."""
        self._warn_if_called_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps is {self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                # Side effect, as in torch: the momentum moves along with the lr.
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs
