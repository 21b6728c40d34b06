"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state for the
length of a ``with`` block. Exported as ``ferrograd.optim.swap_in_optimizer_params_and_state``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from .._core import Tensor
from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]


@contextmanager
def swap_in_optimizer_params_and_state(
    optimizer: Optimizer, swapin_parameters: Mapping[str, Tensor], swapin_optim_state: dict[str, Any]
) -> Iterator[None]:
    """Temporarily replace an optimizer's parameters and state; restore them on exit.

    Inside the block every optimizer API (``step``, ``state_dict``, hooks) sees the given
    parameters, in place of the live ones and in the same order, and the state and per-group
    options of ``swapin_optim_state``. ``load_state_dict`` would replace only the state; this also
    swaps the parameters, so ``step()`` updates the given tensors. The state tensors are shared,
    so in-place updates (a step's moments and counters) land in ``swapin_optim_state``; other
    changes (a key added, a tensor replaced) are dropped on exit.

    Args:
        optimizer (Optimizer): the live optimizer; its state must already exist (after a step).
        swapin_parameters (Mapping): name to tensor, in the order of the optimizer's parameters
            (``model.named_parameters()`` order, usually).
        swapin_optim_state (dict): a ``state_dict()``-shaped dict: ``"state"`` keyed by the
            packed parameter indices and ``"param_groups"`` with each group's options.

    Example:
        >>> w = ferrograd.zeros(2, requires_grad=True)
        >>> opt = ferrograd.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = ferrograd.ones(2)
        >>> opt.step()
        >>> other = ferrograd.zeros(2, requires_grad=True)
        >>> other.grad = ferrograd.ones(2)
        >>> state = {"state": {0: {"momentum_buffer": ferrograd.zeros(2)}},
        ...          "param_groups": [{**opt.state_dict()["param_groups"][0], "lr": 1.0}]}
        >>> with ferrograd.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, state):
        ...     opt.step()
        >>> other, w  # the swapped-in tensor stepped with lr 1; the live one did not move
        (tensor([-1., -1.], requires_grad=True), tensor([-0.1000, -0.1000], requires_grad=True))
    """
    if len(optimizer.state) == 0:
        raise RuntimeError("swap_in_optimizer_params_and_state requires initialized optimizer state.")
    params = list(swapin_parameters.values())
    packed_groups = swapin_optim_state["param_groups"]
    live_groups = optimizer.param_groups
    if len(params) != sum(len(g["params"]) for g in live_groups) or len(packed_groups) != len(live_groups):
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires the explicit parameter state to match "
            "optimizer.param_groups ordering."
        )

    groups = []
    param_of_index: dict[Any, Tensor] = {}
    remaining = iter(params)
    for live, packed in zip(live_groups, packed_groups, strict=True):
        group = {key: value for key, value in packed.items() if key != "params"}
        group["params"] = [next(remaining) for _ in live["params"]]
        param_of_index.update(zip(packed["params"], group["params"], strict=True))
        groups.append(group)
    # Each parameter's state dict is copied, its tensors shared: in-place edits reach the caller's.
    state: defaultdict[Any, Any] = defaultdict(dict)
    for index, p_state in swapin_optim_state["state"].items():
        state[param_of_index.get(index, index)] = dict(p_state)

    live_state = optimizer.state
    optimizer.param_groups, optimizer.state = groups, state
    try:
        yield
    finally:
        optimizer.param_groups, optimizer.state = live_groups, live_state
