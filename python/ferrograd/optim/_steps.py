"""What the functional update steps (``adam``, ``rmsprop``, ...) share.

A group of real floating parameters whose gradients and state tensors suit it (:func:`core_ok`)
is updated by one call into the core (:func:`in_core`, the update rules of ``ferrograd::optim``),
element by element with the GIL released. Any other group (complex parameters, differentiable
steps) runs the algorithm's loop of tensor ops, one parameter at a time; :func:`per_tensor` is
how each such loop starts. Both compute the same values: float32 parameters in float32, float64
ones in float64, and the per-step numbers (bias corrections, step sizes) in float64.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .. import _core
from .._core import Tensor
from .optimizer import _get_value, _real_views, _to_scalar


def core_ok(differentiable: bool, params: list[Tensor], *lists: list[Any]) -> bool:
    """Whether a step can run as one call of the core (:func:`in_core`): not differentiable, and
    every parameter a real floating tensor whose gradient and state tensors (the entries of
    ``lists``; ``None`` entries are skipped) are contiguous and share its shape and dtype."""
    if differentiable:
        return False
    for i, p in enumerate(params):
        if not p.is_floating_point() or not p.is_contiguous():
            return False
        for lst in lists:
            t = lst[i]
            if t is None:
                continue
            if t.dtype != p.dtype or t.shape != p.shape or not t.is_contiguous() or t.requires_grad:
                return False
    return True


def in_core(
    rule: str, params: list[Tensor], grads: list[Tensor], states: list[list[Tensor]],
    scalars: list[list[float]], **options: Any,
) -> None:  # fmt: skip
    """One step of the core's update ``rule`` (``"adam"``, ...; the rules of
    ``ferrograd::optim::Update``) over a group whose lists passed :func:`core_ok`.

    ``states[j][i]`` is parameter ``i``'s ``j``-th state tensor, ``scalars[j][i]`` its ``j``-th
    per-parameter number (step count, ...); ``options`` are the hyper-parameters by name
    (numbers, flags or one-element tensors, all passed as floats).
    """
    numbers = {name: float(_get_value(_to_scalar(value))) for name, value in options.items()}
    _core._optimizer_step(rule, params, grads, states, scalars, numbers)


def counted(
    rule: str, params: list[Tensor], grads: list[Tensor], states: list[list[Tensor]],
    state_steps: list[Tensor], products: list[Tensor] | None = None, **options: Any,
) -> None:  # fmt: skip
    """:func:`in_core` for a rule whose per-parameter numbers live in tensors: the core adds one
    to every count tensor of ``state_steps`` and uses the new counts; for NAdam it multiplies
    each momentum product tensor of ``products`` by the step's coefficient and uses the new
    product; for ASGD ``products`` holds every ``eta`` tensor, then every ``mu``, whose values
    the step uses and which it then sets for the next step. No number is read into Python (a
    compiled step replays the whole update)."""
    numbers = {name: float(_get_value(_to_scalar(value))) for name, value in options.items()}
    _core._optimizer_step(rule, params, grads, states, [], numbers, state_steps, products)


def count(state_steps: list[Tensor]) -> list[float]:
    """Add one to every step count tensor; return the new counts."""
    advance(state_steps)
    return [float(step_t) for step_t in state_steps]


def advance(state_steps: list[Tensor]) -> None:
    """Add one to every step count tensor."""
    for step_t in state_steps:
        step_t += 1


def per_tensor(
    params: list[Tensor], grads: list[Tensor], state_steps: list[Tensor] | None, *state_lists: list[Any],
    maximize: bool, weight_decay: Any = 0, decoupled_lr: Any = None,
) -> Iterator[tuple[Any, ...]]:  # fmt: skip
    """What each per-tensor update loop starts with, for every parameter in turn.

    The parameter's step count (its entry of ``state_steps``, when given) is counted up; its
    gradient is negated to maximize; a nonzero ``weight_decay`` is added to the gradient
    (``grad + weight_decay * param``) or, given ``decoupled_lr`` (the learning rate), applied to
    the parameter (``param * (1 - lr * weight_decay)``).

    Yields ``(i, step, param, grad, *states)``: the index, the step count tensor (``None``
    without ``state_steps``), the parameter, its gradient and its entry of each of
    ``state_lists`` (``None`` for an empty list), as real views when the parameter is complex.
    """
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t = None
        if state_steps is not None:
            step_t = state_steps[i]
            step_t += 1
        if weight_decay != 0:
            if decoupled_lr is not None:
                param.mul_(_get_value(1 - decoupled_lr * weight_decay))
            else:
                grad = grad.add(param, alpha=weight_decay)
        states = (states[i] if states else None for states in state_lists)
        yield (i, step_t, *_real_views(param, grad, *states))
