"""Adafactor: Adam-like steps from a factored (row and column) second moment, with relative step
sizes and update clipping. ``ferrograd.optim.Adafactor``; the module is private, as torch's is."""

from __future__ import annotations

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from .optimizer import Optimizer, ParamsT, _get_scalar_dtype, _get_value, _steps_by_group, _to_scalar

__all__ = ["Adafactor", "adafactor"]

# The machine epsilon of each floating dtype (by name): the default ``eps1``.
_MACHINE_EPS = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}


def _machine_eps(dtype: Any) -> float:
    return _MACHINE_EPS[str(dtype).rsplit(".", 1)[-1]]


@_steps_by_group
class Adafactor(Optimizer):
    r"""Adafactor: adaptive steps with a second moment stored in sublinear memory.

    For each parameter ``p`` with a gradient ``g`` (negated when ``maximize``), at step ``t``::

        beta2_t = 1 - t ** beta2_decay
        rho_t = min(lr, 1 / sqrt(t))
        alpha_t = max(eps2, RMS(p)) * rho_t
        p = p * (1 - lr * weight_decay)
        if p has 2 or more dims (over its last two, batched over the others):
            R = beta2_t * R + (1 - beta2_t) * mean(g * g, over the last dim)     (a column)
            C = beta2_t * C + (1 - beta2_t) * mean(g * g, over dim -2)           (a row)
            V = R @ C / max(mean(R), eps1)
        else:
            V = beta2_t * V + (1 - beta2_t) * g * g
        U = g / max(sqrt(V), eps1)
        p = p - alpha_t * U / max(1, RMS(U) / d)

    ``RMS(x)`` is ``sqrt(mean(x * x))``. As in torch, ``lr`` bounds the relative step size
    and scales the (decoupled) weight decay, and ``eps1`` guards the variance estimate and the
    update rather than being added to the factors.

    Args:
        params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): the largest relative step size, and the weight decay's factor
            (default: 1e-2).
        beta2_decay (float): the exponent of ``t`` in ``1 - beta2_t``; at most 0
            (default: -0.8).
        eps (tuple): ``(eps1, eps2)``; ``eps1`` guards the denominators (``None``: the machine
            epsilon of the parameter's dtype), ``eps2`` is the smallest parameter scale
            (default: (None, 1e-3)).
        d (float): the clipping threshold of ``RMS(U)``; at least 1 (default: 1.0).
        weight_decay (float): the decoupled weight decay coefficient (default: 0.0).
        foreach (bool, optional): accepted for compatibility; the update runs the same
            per-tensor loop either way.
        maximize (bool): ascend the objective instead of descending it.

    State: ``step`` (a 0-dim float32 tensor) and, for parameters of 2 or more dims,
    ``row_var`` (the gradient's shape with the last dim 1) and ``col_var`` (with dim -2 equal
    to 1), else ``variance``.

    Example:
        >>> w = ferrograd.tensor([[1.0, -1.0], [2.0, 0.5]], requires_grad=True)
        >>> opt = ferrograd.optim.Adafactor([w], lr=0.1)
        >>> w.grad = ferrograd.tensor([[1.0, 1.0], [1.0, 1.0]])
        >>> opt.step()  # U = 1 everywhere; alpha = RMS(w) * 0.1
        >>> w
        tensor([[ 0.8750, -1.1250],
                [ 1.8750,  0.3750]], requires_grad=True)
        >>> sorted(opt.state[w])
        ['col_var', 'row_var', 'step']
    """

    _restored_options = {"foreach": None, "maximize": False}
    _scalar_state = ("step",)

    _options = "lr beta2_decay eps d weight_decay foreach maximize"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
        foreach: bool | None = None, maximize: bool = False,
    ) -> None:  # fmt: skip
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, self._defaults(locals()))

    def _init_group(self, group: dict[str, Any]) -> list[list[Any]]:
        params, grads = self._params_with_grad(group)
        row_vars: list[Tensor | None] = []
        col_vars: list[Tensor | None] = []
        variances: list[Tensor | None] = []
        steps = []
        for p, grad in zip(params, grads, strict=True):
            if _fg.is_complex(p):
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _fg.tensor(0.0, dtype=_get_scalar_dtype())
                if grad.dim() > 1:
                    # The factors: one mean per row (a column vector) and per column (a row).
                    state["row_var"] = _fg.zeros(*grad.shape[:-1], 1, dtype=grad.dtype)
                    state["col_var"] = _fg.zeros(*grad.shape[:-2], 1, grad.shape[-1], dtype=grad.dtype)
                else:
                    state["variance"] = _fg.zeros_like(grad)
            row_vars.append(state.get("row_var"))
            col_vars.append(state.get("col_var"))
            variances.append(state.get("variance"))
            steps.append(state["step"])
        return [params, grads, row_vars, col_vars, variances, steps]

    def _step_group(self, group: dict[str, Any]) -> None:
        eps1, eps2 = group["eps"]
        options = self._group_options(group, "d lr beta2_decay weight_decay maximize")
        adafactor(*self._init_group(group), eps1=eps1, eps2=eps2, **options)


def adafactor(
    params: list[Tensor], grads: list[Tensor], row_vars: list[Tensor | None],
    col_vars: list[Tensor | None], variances: list[Tensor | None], state_steps: list[Tensor], *, d: float,
    lr: float | Tensor, beta2_decay: float, weight_decay: float, eps1: float | None, eps2: float,
    maximize: bool = False,
) -> None:  # fmt: skip
    """Functional Adafactor over lists of tensors; see :class:`Adafactor` for the update rule.

    ``row_vars`` and ``col_vars`` hold ``None`` for parameters of fewer than 2 dims,
    ``variances`` for the others.
    """
    # A Rust foreach kernel would take these same lists and replace the loop below.
    lr = _get_value(_to_scalar(lr))
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t = state_steps[i]
        step_t += 1
        step = _get_value(step_t)
        eps = eps1 if eps1 is not None else _machine_eps(param.dtype)

        one_minus_beta2 = step**beta2_decay
        rho = min(lr, 1 / (step**0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho

        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)

        row_var, col_var = row_vars[i], col_vars[i]
        if row_var is not None and col_var is not None:
            grad_sq = grad * grad
            row_var.lerp_(grad_sq.mean(dim=-1, keepdim=True), one_minus_beta2)
            col_var.lerp_(grad_sq.mean(dim=-2, keepdim=True), one_minus_beta2)
            # The rank-1 estimate: outer product of the factors over the mean of the rows' means.
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps))
        else:
            variance = variances[i]
            assert variance is not None
            variance.lerp_(grad * grad, one_minus_beta2)
            var_estimate = variance.clone()

        # max(sqrt(V), eps1) as the reciprocal square root of max(V, eps1^2).
        update = var_estimate.clamp_(min=eps * eps).rsqrt_()
        update.mul_(grad)
        clip = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / clip)


# torch's name for the per-tensor loop, which ``adafactor`` runs itself here.
_single_tensor_adafactor = adafactor
