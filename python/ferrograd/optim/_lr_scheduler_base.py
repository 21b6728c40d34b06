"""The base class of the learning-rate schedulers and the helpers every scheduler uses.

Part of ``ferrograd.optim.lr_scheduler``, which exports all of it.
"""

from __future__ import annotations

import inspect
import warnings
import weakref
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from .._core import Tensor
from ..utils import _docs
from .optimizer import Optimizer, _to_scalar

_C = TypeVar("_C", bound=type)


def _lr_scheduler_member(cls: _C) -> _C:
    """Makes a class defined in a private module a member of
    ``ferrograd.optim.lr_scheduler``, which exports it: the class and its
    methods get that ``__module__``, so pickles and reprs name the class as
    before, and the API reference documents its methods as its own."""
    module = "ferrograd.optim.lr_scheduler"
    cls.__module__ = module
    for member in vars(cls).values():
        for func in (member, getattr(member, "__func__", None), getattr(member, "fget", None)):
            if inspect.isfunction(func):
                func.__module__ = module
    return cls


# Sentences that most schedulers' docstrings share: a docstring line ``{name}`` of a class
# decorated with ``_with_doc_pieces`` stands for piece ``name``.
_DOC_PIECES = {
    "optimizer_arg": "optimizer (Optimizer): the optimizer whose learning rates to set.",
    "last_epoch_arg": (
        "last_epoch (int): the index of the last epoch when resuming; -1 starts afresh. Default: -1."
    ),
    "example_setup": (
        ">>> w = ferrograd.zeros(1, requires_grad=True)\n>>> opt = ferrograd.optim.SGD([w], lr=1.0)"
    ),
}
_with_doc_pieces = _docs.with_doc_pieces(_DOC_PIECES)

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch "
    "is different from None, the closed form is used instead of the new chainable form, where available."
)


def _copy(value: Any) -> Any:
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per parameter group: a scalar is repeated, a list must match the group count."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _param_groups_val_list(optimizer: Optimizer, key: str) -> list[Any]:
    """``group[key]`` of every group, copied when a tensor so callers cannot alias it."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _update_param_group_val(group: dict[str, Any], key: str, value: Any) -> None:
    # A tensor lr is updated in place, so whoever holds it (a compiled step) sees the change.
    if isinstance(group[key], Tensor):
        group[key].fill_(_to_scalar(value))
    else:
        group[key] = value


@_lr_scheduler_member
@_with_doc_pieces
class LRScheduler:
    r"""Base class of the learning-rate schedulers.

    Subclasses implement :meth:`get_lr`. Building a scheduler stores each group's starting lr
    as ``group["initial_lr"]`` (kept in ``base_lrs``) and performs the first step, which sets
    the lr for epoch 0.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are scheduled.
        last_epoch (int): index of the last epoch; ``-1`` (default) starts a new schedule. To
            resume, pass the saved epoch and make sure the groups hold ``initial_lr``.

    Example:
        {example_setup}
        >>> sched = ferrograd.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        >>> for _ in range(4):
        ...     opt.step()
        ...     sched.step()
        >>> sched.get_last_lr()
        [0.25]
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0."
                    )
        self.base_lrs: list[Any] = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._patch_optimizer_step()
        self._initial_step()

    def _patch_optimizer_step(self) -> None:
        """Mark the optimizer when its ``step`` runs, to detect schedulers stepped too early."""
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = weakref.ref(opt)
        func = opt.step.__func__  # type: ignore[attr-defined]

        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            o = opt_ref()
            o._opt_called = True  # type: ignore[union-attr]
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
        opt.step = wrapper  # type: ignore[method-assign]

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Everything in ``__dict__`` but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by :meth:`state_dict`."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates set by the last :meth:`step`, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list[Any]:
        """Compute the next learning rates (called by :meth:`step`; use :meth:`get_last_lr`)."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch and write the new lrs into the optimizer.

        Call it after ``optimizer.step()``. Passing ``epoch`` is deprecated (as in torch): it
        jumps to that epoch using the closed form where the scheduler has one.
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                    "initialization. Please, make sure to call `optimizer.step()` before "
                    "`lr_scheduler.step()`.",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
                    "and later, you should call them in the opposite order: `optimizer.step()` before "
                    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the "
                    "first value of the learning rate schedule.",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            self._set_lrs(self.get_lr)
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            self._set_lrs(closed_form if closed_form is not None else self.get_lr)

    def _set_lrs(self, compute: Callable[[], list[Any]]) -> None:
        """Sets each group's lr to what ``compute`` returns for the current epoch (run as part
        of a step, so ``get_lr`` does not warn) and keeps them for :meth:`get_last_lr`."""
        self._get_lr_called_within_step = True
        try:
            values = compute()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _update_param_group_val(group, "lr", lr)
        self._last_lr: list[Any] = _param_groups_val_list(self.optimizer, "lr")

    def _warn_if_called_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )


@_lr_scheduler_member
class _LRScheduler(LRScheduler):
    """Old name of :class:`LRScheduler`, kept for code that subclasses it."""
