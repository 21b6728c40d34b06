"""Reverse-mode automatic differentiation (torch.autograd's API).

``backward`` accumulates gradients into leaves' ``.grad``; ``grad``
returns gradients without touching ``.grad``. Both run the Rust engine
with the GIL released.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _batched, _core
from .._batched_grad import batched_grad
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
    """Computes the gradients of ``tensors`` and accumulates them into the
    ``.grad`` of the graph's leaves.

    The engine walks the graph backwards from ``tensors`` once, summing the
    contributions of every path; gradients add to whatever ``.grad`` already
    holds (call ``zero_grad()`` or set ``.grad = None`` between steps). A
    non-scalar tensor needs its ``grad_tensors`` entry: the vector of the
    vector-Jacobian product. The work runs in the Rust engine with the GIL
    released.

    Args:
        tensors (Tensor or sequence of Tensors): the outputs to differentiate.
        grad_tensors (Tensor, Number or sequence of them, optional): the
            gradient with respect to each of ``tensors`` (``None`` for a
            scalar means ``1``). Default: ``None``.
        retain_graph (bool, optional): keep the graph's saved tensors so
            that backward can run through it again. Default: the value of
            ``create_graph``.
        create_graph (bool): record the backward pass itself, so that the
            gradients are differentiable (for higher-order derivatives).
            Default: ``False``.
        grad_variables (optional): old name of ``grad_tensors``.
        inputs (Tensor or sequence of Tensors, optional): accumulate into
            these tensors only, instead of every leaf. Default: ``None``.

    Example:
        >>> a = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> b = ferrograd.tensor([3.0, 4.0], requires_grad=True)
        >>> ferrograd.autograd.backward((a * b).sum())
        >>> a.grad, b.grad
        (tensor([3., 4.]), tensor([1., 2.]))
        >>> ferrograd.autograd.backward(a * b, grad_tensors=ferrograd.ones(2), inputs=[a])
        >>> a.grad
        tensor([6., 8.])
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outs = _as_tuple(tensors, "tensors")
    gs = _grads_for(outs, grad_tensors, "grad_tensors")
    if _batched.any_batched((outs, gs), {}):
        raise RuntimeError(
            "backward() called inside a vmap on a batched tensor. This is not supported, please use "
            "ferrograd.func.grad or ferrograd.func.vjp instead or call backward() outside of vmap."
        )
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
    """Computes and returns the gradients of ``outputs`` with respect to
    ``inputs``, without touching any ``.grad``.

    This is the functional counterpart of :func:`backward`: it returns the
    sum over ``outputs`` of the vector-Jacobian products
    ``grad_outputs[i]^T J_i``, where ``J_i`` is the Jacobian of
    ``outputs[i]`` with respect to ``inputs``. With
    ``create_graph=True`` the returned gradients are themselves part of a
    graph, so they can be differentiated again (double backward works for
    every op).

    Args:
        outputs (Tensor or sequence of Tensors): the outputs to differentiate.
        inputs (Tensor, GradientEdge or sequence of them): the tensors to
            differentiate with respect to.
        grad_outputs (Tensor, Number or sequence of them, optional): the
            gradient with respect to each output; ``None`` for a scalar
            output means ``1``. Default: ``None``.
        retain_graph (bool, optional): keep the graph's saved tensors for
            another backward pass. Default: the value of ``create_graph``.
        create_graph (bool): record the backward pass so the result can be
            differentiated again. Default: ``False``.
        only_inputs (bool): ignored (kept for compatibility). Default: ``True``.
        allow_unused (bool, optional): when ``False``, an input that no
            output depends on is an error; when ``True`` its gradient is
            ``None``. Default: ``None`` (``False``, or ``True`` when
            ``materialize_grads`` is set).
        is_grads_batched (bool): treat the first dimension of each
            ``grad_outputs`` tensor as a batch and compute one
            vector-Jacobian product per row, in one batched pass.
            Default: ``False``.
        materialize_grads (bool): return zeros instead of ``None`` for
            unused inputs. Default: ``False``.

    Returns:
        tuple of Tensors: one gradient per input (``None`` for unused inputs
            when ``allow_unused`` and not ``materialize_grads``).

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0], requires_grad=True)
        >>> ferrograd.autograd.grad((x ** 2).sum(), x)
        (tensor([2., 4., 6.]),)
        >>> (g,) = ferrograd.autograd.grad((x ** 3).sum(), x, create_graph=True)
        >>> g
        tensor([ 3., 12., 27.], grad_fn=<MulBackward0>)
        >>> ferrograd.autograd.grad(g.sum(), x)  # second derivative, 6 * x
        (tensor([ 6., 12., 18.]),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    outs = _as_tuple(outputs, "outputs")
    ins = _as_tuple(inputs, "inputs")
    gs = _grads_for(outs, grad_outputs, "grad_outputs")
    if _batched.any_batched((outs, ins, gs), {}):
        # Inside vmap: one gradient per row (see ``_batched_grad``).
        res = batched_grad(list(outs), list(ins), gs, retain_graph=retain_graph,
                           create_graph=create_graph, is_grads_batched=is_grads_batched,
                           materialize=materialize_grads, skip_constant=False)
        if not allow_unused and any(g is None for g in res):
            raise RuntimeError(
                "One of the differentiated Tensors appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior."
            )
        return tuple(res)
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
