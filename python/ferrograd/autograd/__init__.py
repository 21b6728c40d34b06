"""Reverse-mode automatic differentiation (torch.autograd's API).

``backward`` accumulates gradients into leaves' ``.grad``; ``grad``
returns gradients without touching ``.grad``. Both run the Rust engine
with the GIL released.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _core
from . import anomaly_mode, forward_ad, function, functional, grad_mode, graph, profiler, profiler_util
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, NestedIOFunction, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .profiler_util import DeviceType
from .variable import Variable

__all__ = [
    "DeviceType",
    "Function",
    "NestedIOFunction",
    "Variable",
    "anomaly_mode",
    "detect_anomaly",
    "forward_ad",
    "function",
    "functional",
    "once_differentiable",
    "profiler",
    "profiler_util",
    "set_detect_anomaly",
    "backward",
    "enable_grad",
    "grad",
    "grad_mode",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_grad_enabled",
    "set_multithreading_enabled",
]


def _as_tuple(x: Any, what: str) -> tuple[Any, ...]:
    if type(x) is tuple:
        return x
    if x is None:
        return ()
    if isinstance(x, _core.Tensor) or isinstance(x, graph.GradientEdge):
        return (x,)
    if isinstance(x, Sequence) or hasattr(x, "__iter__"):
        return tuple(x)
    raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _grads_for(outputs: tuple[Any, ...], grads: Any, what: str) -> list[Any]:
    if grads is None:
        return [None] * len(outputs)
    gs = list(_as_tuple(grads, what))
    if len(gs) != len(outputs):
        raise RuntimeError(
            f"{what} has {len(gs)} elements but there are {len(outputs)} outputs (they must match)"
        )
    for i, g in enumerate(gs):
        if g is not None and not isinstance(g, _core.Tensor):
            if isinstance(g, (int, float)):
                gs[i] = _core.full_like(outputs[i], g)
            else:
                raise TypeError(f"{what}[{i}] must be a Tensor or None, got {type(g).__name__}")
    return gs


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulates the gradients of ``tensors`` into the ``.grad`` of the
    leaves (or of ``inputs`` only, when given)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    outs = _as_tuple(tensors, "tensors")
    gs = _grads_for(outs, grad_tensors, "grad_tensors")
    ins = None if inputs is None else list(_as_tuple(inputs, "inputs"))
    if ins is not None and len(ins) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _core._run_backward(list(outs), gs, retain_graph, create_graph, ins)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple,
    ``None`` for unused inputs when ``allow_unused``)."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    outs = _as_tuple(outputs, "outputs")
    ins = _as_tuple(inputs, "inputs")
    gs = _grads_for(outs, grad_outputs, "grad_outputs")
    res = _core._grad(
        list(outs),
        list(ins),
        gs,
        retain_graph,
        create_graph,
        bool(allow_unused),
        is_grads_batched,
        materialize_grads,
    )
    return tuple(res)
