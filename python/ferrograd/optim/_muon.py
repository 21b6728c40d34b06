"""Muon: momentum whose update is orthogonalized by a Newton-Schulz iteration, for 2-D weights.
``ferrograd.optim.Muon``; the module is private, as torch's is."""

from __future__ import annotations

import math

# Callable is the type of ``step``'s closure: imported here, where the API reference looks up the
# names in the signature of the ``step`` that ``_steps_by_group`` gives the class.
from collections.abc import Callable  # noqa: F401
from typing import Any

import ferrograd as _fg

from .._core import Tensor
from .optimizer import Optimizer, ParamsT, _get_value, _steps_by_group, _to_scalar

__all__ = ["Muon", "muon"]

_ADJUST_LR_FNS = ("original", "match_rms_adamw")


@_steps_by_group
class Muon(Optimizer):
    r"""Muon: SGD with momentum whose update matrix is replaced by its nearest orthogonal matrix.

    For each 2-D parameter ``p`` (``A x B``) with a gradient ``g``::

        b = momentum * b + (1 - momentum) * g
        u = (1 - momentum) * g + momentum * b    if nesterov  else  b
        o = NS(u)
        p = p * (1 - lr * weight_decay)
        p = p - adjusted_lr * o

    ``NS`` runs ``ns_steps`` Newton-Schulz iterations in bfloat16 on ``X = u / max(|u|, eps)``
    (transposed to be wide): ``X = a X + (b X X^T + c (X X^T)^2) X`` with
    ``(a, b, c) = ns_coefficients``, which drives the singular values of ``X`` towards 1. The
    momentum is an exponential average, so its scale (which ``NS`` removes) differs from the
    plain sum ``b = momentum * b + g``, but not its direction. ``adjusted_lr`` is
    ``lr * sqrt(max(1, A / B))`` for ``"original"`` (the default) and
    ``0.2 * lr * sqrt(max(A, B))`` for ``"match_rms_adamw"``, which gives updates the RMS of
    AdamW's.

    Muon is meant for the 2-D weights of hidden layers; optimize biases, embeddings and other
    parameters with a standard method such as :class:`~ferrograd.optim.AdamW`.

    Args:
        params (iterable): 2-D tensors, ``(name, tensor)`` pairs or parameter-group dicts.
        lr (float or Tensor): learning rate (default: 1e-3).
        weight_decay (float): decoupled weight decay (default: 0.1).
        momentum (float): momentum factor (default: 0.95).
        nesterov (bool): use Nesterov momentum (default: True).
        ns_coefficients (tuple): ``(a, b, c)`` of the Newton-Schulz polynomial
            (default: (3.4445, -4.775, 2.0315)).
        eps (float): the smallest norm ``u`` is divided by (default: 1e-7).
        ns_steps (int): Newton-Schulz iterations (default: 5).
        adjust_lr_fn (str, optional): ``"original"`` or ``"match_rms_adamw"``; ``None`` means
            ``"original"``.

    State: ``momentum_buffer``.

    Example:
        >>> w = ferrograd.zeros(2, 3, requires_grad=True)
        >>> opt = ferrograd.optim.Muon([w], lr=0.1, momentum=0.0, weight_decay=0.0)
        >>> w.grad = ferrograd.tensor([[2.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
        >>> opt.step()  # the orthogonal factor is [[1, 0, 0], [0, 1, 0]], up to NS's accuracy
        >>> [[round(v, 1) for v in row] for row in w.tolist()]
        [[-0.1, 0.0, 0.0], [0.0, -0.1, 0.0]]
    """

    _options = "lr weight_decay momentum nesterov ns_coefficients eps ns_steps adjust_lr_fn"

    def __init__(
        self, params: ParamsT, lr: float | Tensor = 1e-3, weight_decay: float = 0.1,
        momentum: float = 0.95, nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315), eps: float = 1e-7,
        ns_steps: int = 5, adjust_lr_fn: str | None = None,
    ) -> None:  # fmt: skip
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in _ADJUST_LR_FNS:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, self._defaults(locals()))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}"
                    )

    def _init_group(self, group: dict[str, Any]) -> list[list[Tensor]]:
        params, grads = self._params_with_grad(group)
        bufs = []
        for p, grad in zip(params, grads, strict=True):
            if _fg.is_complex(p):
                raise RuntimeError("Muon does not support complex parameters")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _fg.zeros_like(grad)
            bufs.append(state["momentum_buffer"])
        return [params, grads, bufs]

    def _step_group(self, group: dict[str, Any]) -> None:
        options = self._group_options(
            group, "lr weight_decay momentum nesterov ns_coefficients ns_steps eps adjust_lr_fn"
        )
        muon(*self._init_group(group), **options)


def _newton_schulz_orthogonalize(
    update: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float
) -> Tensor:
    """The orthogonal polar factor of a matrix, approximately: ``ns_steps`` iterations of the
    quintic Newton-Schulz map in bfloat16, on the matrix scaled to norm at most 1."""
    a, b, c = ns_coefficients
    x = update.bfloat16()
    tall = update.shape[0] > update.shape[1]
    if tall:  # iterate on the wide orientation, where X X^T is the smaller Gram matrix
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        poly = _fg.addmm(gram, gram, gram, beta=b, alpha=c)  # b G + c G^2
        x = _fg.addmm(x, poly, x, beta=a)  # a X + (b G + c G^2) X
    return x.T if tall else x


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape: Any) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols)) * lr
    return lr


def muon(
    params: list[Tensor], grads: list[Tensor], momentum_bufs: list[Tensor], *, lr: float | Tensor,
    weight_decay: float, momentum: float, nesterov: bool, ns_coefficients: tuple[float, float, float],
    ns_steps: int, eps: float, adjust_lr_fn: str | None,
) -> None:  # fmt: skip
    """Functional Muon over lists of tensors; see :class:`Muon` for the update rule."""
    lr_value = float(_get_value(_to_scalar(lr)))
    for param, grad, buf in zip(params, grads, momentum_bufs, strict=True):
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if nesterov else buf
        update = _newton_schulz_orthogonalize(update, ns_coefficients, ns_steps, eps)
        param.mul_(1 - lr_value * weight_decay)
        param.add_(update, alpha=-_adjusted_lr(lr_value, adjust_lr_fn, param.shape))


# torch's name for the per-tensor loop, which ``muon`` runs itself here.
_single_tensor_muon = muon
