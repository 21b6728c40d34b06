"""Rprop: resilient backpropagation, steps from the sign of the gradient only."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from . import _steps
from .optimizer import _FLAGS_RESTORED, Optimizer, ParamsT, _check_lr, _get_value, _steps_by_group, _to_scalar

__all__ = ["Rprop", "rprop"]


@_steps_by_group
class Rprop(Optimizer):
    r"""Rprop: each coordinate keeps its own step size, grown while the gradient keeps its sign
    and shrunk when it flips.

    For each parameter with a gradient ``g`` (negated when ``maximize``), elementwise, with the
    step size ``s`` starting at ``lr`` and the previous gradient ``prev`` at 0::

        s = min(s * etaplus, max_step)   where g * prev > 0
        s = max(s * etaminus, min_step)  where g * prev < 0, and g = 0 there
        p = p - sign(g) * s
        prev = g

    Args:
        {params_arg}
        lr (float or Tensor): the initial step size (default: 1e-2).
        etas (tuple): ``(etaminus, etaplus)``, the factors that shrink and grow the step sizes;
            ``0 < etaminus < 1 < etaplus`` (default: (0.5, 1.2)).
        step_sizes (tuple): ``(min_step, max_step)``, the bounds of the step sizes
            (default: (1e-6, 50)).
        capturable (bool): accepted for compatibility.
        {foreach_arg:foreach}
        {maximize_arg}
        {differentiable_arg}

    State: ``step`` (a 0-dim float32 tensor), ``prev``, ``step_size``.

    Example:
        >>> w = ferrograd.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = ferrograd.optim.Rprop([w], lr=0.5)
        >>> for _ in range(2):
        ...     w.grad = ferrograd.tensor([3.0, -0.1])
        ...     opt.step()
        >>> w  # 0.5, then 0.5 * 1.2
        tensor([-0.1000, -0.9000], requires_grad=True)
    """

    _restored_options = _FLAGS_RESTORED
    _scalar_state = ("step",)

    _options = "lr etas step_sizes foreach maximize differentiable capturable"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
        foreach: bool | None = None, maximize: bool = False, differentiable: bool = False,
    ) -> None:  # fmt: skip
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads, states = self._group_states(group, "prev")
        for p, state in zip(params, states, strict=True):
            if "step_size" not in state:
                lr = float(_get_value(_to_scalar(group["lr"])))
                # A complex number steps as two independent reals: both parts start at lr.
                state["step_size"] = _fg.full_like(p, complex(lr, lr) if _fg.is_complex(p) else lr)
        return [params, grads, *self._state_lists(states, "prev", "step_size", "step")]

    def _step_group(self, group: dict[str, Any]) -> None:
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        options = self._group_options(group, "maximize differentiable")
        rprop(
            *self._init_group(group), step_size_min=step_size_min, step_size_max=step_size_max,
            etaminus=etaminus, etaplus=etaplus, **options,
        )  # fmt: skip


def rprop(
    params: list[Tensor], grads: list[Tensor], prevs: list[Tensor], step_sizes: list[Tensor],
    state_steps: list[Tensor], *, step_size_min: float, step_size_max: float, etaminus: float,
    etaplus: float, maximize: bool = False, differentiable: bool = False,
) -> None:  # fmt: skip
    """Functional Rprop over lists of tensors; see :class:`Rprop` for the update rule."""
    if _steps.core_ok(differentiable, params, grads, prevs, step_sizes):
        _steps.advance(state_steps)
        _steps.in_core(
            "rprop", params, grads, [prevs, step_sizes], [], etaminus=etaminus, etaplus=etaplus,
            step_size_min=step_size_min, step_size_max=step_size_max, maximize=maximize,
        )  # fmt: skip
        return
    for _, _, param, grad, prev, step_size in _steps.per_tensor(
        params, grads, state_steps, prevs, step_sizes, maximize=maximize
    ):
        agreement = grad * (prev.clone() if differentiable else prev)
        grew, flipped = agreement > 0, agreement < 0
        factor = _fg.where(grew, etaplus, _fg.where(flipped, etaminus, _fg.ones_like(step_size)))
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)

        # Where the sign flipped the last step overshot: no step now, and no flip seen next time.
        grad = _fg.where(flipped, _fg.zeros_like(grad), grad)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


# torch's name for the per-tensor loop, which ``rprop`` runs itself here.
_single_tensor_rprop = rprop
