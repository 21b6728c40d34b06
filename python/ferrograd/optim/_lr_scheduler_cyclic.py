"""``CyclicLR``: the lr cycles between two bounds (and the momentum against it), stepped after
every batch.

Part of ``ferrograd.optim.lr_scheduler``, which exports it.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial
from typing import Any, Literal

from ._lr_scheduler_base import (
    LRScheduler,
    _format_param,
    _lr_scheduler_member,
    _update_param_group_val,
    _with_doc_pieces,
)
from .optimizer import Optimizer


def _triangular_scale_fn(x: float) -> float:
    return 1.0


def _triangular2_scale_fn(x: float) -> float:
    return 1 / (2.0 ** (x - 1))


def _exp_range_scale_fn(gamma: float, x: float) -> float:
    return gamma**x


@_lr_scheduler_member
@_with_doc_pieces
class CyclicLR(LRScheduler):
    r"""Cycle each group's lr between ``base_lr`` and ``max_lr`` (cyclical learning rates).

    A cycle rises linearly for ``step_size_up`` steps and falls for ``step_size_down``. At
    step ``n``, with ``T = step_size_up + step_size_down``::

        cycle = floor(1 + n / T)
        x = 1 + n / T - cycle                       (the position in the cycle, in [0, 1))
        h = x / r  if x <= r  else  (x - 1) / (r - 1),   r = step_size_up / T
        lr = base_lr + (max_lr - base_lr) * h * scale_fn(cycle or n)

    ``mode`` picks ``scale_fn``: ``"triangular"`` (1), ``"triangular2"`` (halved every cycle:
    ``1 / 2 ** (cycle - 1)``) or ``"exp_range"`` (``gamma ** n``, by iteration); a custom
    ``scale_fn`` overrides it and ``scale_mode`` says whether it takes the cycle number or the
    step. With ``cycle_momentum``, the momentum (or Adam's ``beta1``) moves the other way:
    ``max_momentum - (max_momentum - base_momentum) * h * scale_fn(...)``. Step it after every
    batch.

    Args:
        {optimizer_arg}
        base_lr (float or list): the lower bound of the lr, for all groups or per group; it
            becomes the groups' lr when the scheduler is built.
        max_lr (float or list): the upper bound of the cycle (reached only with a scale of 1).
        step_size_up (int): steps in the rising half of a cycle (default: 2000).
        step_size_down (int, optional): steps in the falling half (default: ``step_size_up``).
        mode (str): ``"triangular"``, ``"triangular2"`` or ``"exp_range"``; ignored when
            ``scale_fn`` is given (default: ``"triangular"``).
        gamma (float): the base of ``"exp_range"``'s scale (default: 1.0).
        scale_fn (Callable, optional): a custom scale, a function of one argument with values
            in ``[0, 1]`` for arguments ``>= 0``.
        scale_mode (str): ``"cycle"`` or ``"iterations"``: what a custom ``scale_fn`` takes
            (default: ``"cycle"``).
        cycle_momentum (bool): move the momentum (or ``beta1``) opposite to the lr
            (default: True).
        base_momentum (float or list): the momentum at the lr's peak (default: 0.8).
        max_momentum (float or list): the momentum at ``base_lr``; it becomes the groups'
            momentum when the scheduler is built (default: 0.9).
        {last_epoch_arg}

    Example:
        >>> w = ferrograd.zeros(1, requires_grad=True)
        >>> opt = ferrograd.optim.SGD([w], lr=1.0, momentum=0.9)
        >>> sched = ferrograd.optim.lr_scheduler.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
        >>> lrs = []
        >>> for _ in range(6):
        ...     lrs.append(round(sched.get_last_lr()[0], 4))
        ...     opt.step()
        ...     sched.step()
        >>> lrs
        [0.1, 0.3, 0.5, 0.3, 0.1, 0.3]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: Literal["triangular", "triangular2", "exp_range"] = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: Literal["cycle", "iterations"] = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.8,
        max_momentum: float | list[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer

        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _update_param_group_val(group, "lr", lr)

        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size

        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref: Callable[[float], float]
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups, strict=True
                ):
                    self._set_momentum(group, m_momentum)
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum

        super().__init__(optimizer, last_epoch)
        # The bounds given here, even when the groups held an ``initial_lr`` from before.
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        """The built-in scale of ``mode`` (and its ``scale_mode``), unless a custom one was given."""
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = _triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = _triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(_exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude scale at cycle number or step ``x`` (per ``scale_mode``).

        Args:
            x (float): the cycle number (from 1) or the step count.
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def _set_momentum(self, group: dict[str, Any], momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def get_lr(self) -> list[Any]:
        """The learning rates for the current step; also sets the cycled momentum."""
        self._warn_if_called_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            height = x / self.step_ratio
        else:
            height = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)

        lrs = [
            base_lr + (max_lr - base_lr) * height * scale
            for base_lr, max_lr in zip(self.base_lrs, self.max_lrs, strict=True)
        ]
        if self.cycle_momentum:
            # Side effect, as in torch: the momentum moves against the lr.
            for group, base_m, max_m in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums, strict=True
            ):
                self._set_momentum(group, max_m - (max_m - base_m) * height * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The scheduler state; a custom ``scale_fn`` is saved only as a callable object's
        attributes (functions and lambdas cannot be)."""
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        state_dict["_scale_fn_custom"] = fn
        if fn is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()
