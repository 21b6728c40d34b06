"""Modules turned into functions of their parameters (and buffers), as
functorch's ``make_functional``, ``make_functional_with_buffers`` and
``combine_state_for_ensemble`` give them.

The returned ``fmodel`` holds a deep copy of the model; each call runs
that copy through :func:`ferrograd.func.functional_call` with the
parameters (and buffers) it is given, matched to names by position.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from .. import _core
from ..func._functional_call import functional_call
from ..nn.modules.module import Module
from ..utils import _docs

Tensor = _core.Tensor

__all__ = [
    "FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble_impl",
    "make_functional_impl", "make_functional_with_buffers_impl",
]  # fmt: skip


def _bind(api: str, names: tuple[str, ...], values: Iterable[Tensor], kind: str) -> dict[str, Tensor]:
    """``names`` zipped with ``values``; the counts must agree."""
    values = tuple(values)
    if len(values) != len(names):
        raise RuntimeError(
            f"{api}: expected {len(names)} {kind} (in the order of {list(names)}), got {len(values)}"
        )
    return dict(zip(names, values, strict=True))


# Text the two functional modules' docstrings share: a docstring line ``{name}`` of a class or
# method decorated with ``_with_doc_pieces`` stands for piece ``name``.
_DOC_PIECES = {
    "stateless_model_arg": (
        "stateless_model (nn.Module): the module to run (a copy of the\n    original model)."
    ),
    "param_names_arg": (
        "param_names (tuple of str): the dotted parameter names, in the\n    order ``params`` are given."
    ),
    "params_arg": "params (iterable of Tensor): one tensor per name in\n    ``param_names``, in that order.",
    "model_args": "*args: the model's positional arguments.\n**kwargs: the model's keyword arguments.",
    "returns_model_output": "Returns:\n    what the model returns.",
}
_with_doc_pieces = _docs.with_doc_pieces(_DOC_PIECES)


@_with_doc_pieces
class FunctionalModule(Module):
    """A module run as a function of its parameters: what
    :func:`make_functional` returns.

    ``fmodel(params, *args, **kwargs)`` calls the wrapped copy of the
    model with ``params`` (one tensor per name in ``param_names``, in that
    order) in place of its parameters.

    Args:
        {stateless_model_arg}
        {param_names_arg}

    Example:
        >>> lin = nn.Linear(2, 1)
        >>> fmodel = FunctionalModule(lin, ("weight", "bias"))
        >>> fmodel((ferrograd.tensor([[1.0, 2.0]]), ferrograd.tensor([0.5])), ferrograd.tensor([[1.0, 1.0]]))
        tensor([[3.5000]])
    """

    def __init__(self, stateless_model: Module, param_names: Sequence[str]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)

    @_with_doc_pieces
    def forward(self, params: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        """Runs the model with ``params`` as its parameters.

        Args:
            {params_arg}
            {model_args}

        {returns_model_output}

        Example:
            >>> lin = nn.Linear(2, 1)
            >>> fmodel = FunctionalModule(lin, ("weight", "bias"))
            >>> fmodel.forward((ferrograd.ones(1, 2), ferrograd.zeros(1)), ferrograd.tensor([[2.0, 3.0]]))
            tensor([[5.]])
        """
        values = _bind("FunctionalModule", self.param_names, params, "parameters")
        return functional_call(self.stateless_model, values, args, kwargs)


@_with_doc_pieces
class FunctionalModuleWithBuffers(Module):
    """A module run as a function of its parameters and buffers: what
    :func:`make_functional_with_buffers` and
    :func:`combine_state_for_ensemble` return.

    ``fmodel(params, buffers, *args, **kwargs)`` calls the wrapped copy of
    the model with ``params`` and ``buffers`` (matched by position to
    ``param_names`` and ``buffer_names``) in place of its own. Buffers the
    model updates in place (batch norm's running statistics in training
    mode) are updated in the given tensors.

    Args:
        {stateless_model_arg}
        {param_names_arg}
        buffer_names (tuple of str): the dotted buffer names, in the order
            ``buffers`` are given.

    Example:
        >>> lin = nn.Linear(2, 1)
        >>> fmodel = FunctionalModuleWithBuffers(lin, ("weight", "bias"), ())
        >>> fmodel((ferrograd.ones(1, 2), ferrograd.zeros(1)), (), ferrograd.tensor([[2.0, 3.0]]))
        tensor([[5.]])
    """

    def __init__(self, stateless_model: Module, param_names: Sequence[str],
                 buffer_names: Sequence[str]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)
        self.buffer_names = tuple(buffer_names)

    @_with_doc_pieces
    def forward(self, params: Iterable[Tensor], buffers: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        """Runs the model with ``params`` and ``buffers`` as its parameters
        and buffers.

        Args:
            {params_arg}
            buffers (iterable of Tensor): one tensor per name in
                ``buffer_names``, in that order.
            {model_args}

        {returns_model_output}

        Example:
            >>> lin = nn.Linear(2, 1)
            >>> fmodel = FunctionalModuleWithBuffers(lin, ("weight", "bias"), ())
            >>> fmodel.forward((ferrograd.ones(1, 2), ferrograd.ones(1)), (), ferrograd.tensor([[2.0, 3.0]]))
            tensor([[6.]])
        """
        values = _bind("FunctionalModuleWithBuffers", self.param_names, params, "parameters")
        values.update(_bind("FunctionalModuleWithBuffers", self.buffer_names, buffers, "buffers"))
        return functional_call(self.stateless_model, values, args, kwargs)


def _check_module(model: Any, api: str) -> None:
    if not isinstance(model, Module):
        raise TypeError(f"{api}(model): expected an nn.Module, got {type(model).__name__}")


def _params_of(copied: Module, disable_autograd_tracking: bool) -> tuple[tuple[str, ...], tuple[Tensor, ...]]:
    # Tied parameters appear once, under their first name; functional_call
    # (tie_weights=True) gives the other names the same tensor.
    named = list(copied.named_parameters())
    names = tuple(n for n, _ in named)
    params = tuple(p.detach() if disable_autograd_tracking else p for _, p in named)
    return names, params


def make_functional_impl(model: Module, disable_autograd_tracking: bool = False) -> tuple[Any, ...]:
    """:func:`make_functional` without the deprecation warning."""
    _check_module(model, "make_functional")
    if any(True for _ in model.buffers()):
        raise RuntimeError(
            "make_functional(model): `model` has buffers. Please use "
            "make_functional_with_buffers(model) instead."
        )
    copied = copy.deepcopy(model)
    names, params = _params_of(copied, disable_autograd_tracking)
    return FunctionalModule(copied, names), params


def make_functional_with_buffers_impl(model: Module,
                                      disable_autograd_tracking: bool = False) -> tuple[Any, ...]:
    """:func:`make_functional_with_buffers` without the deprecation warning."""
    _check_module(model, "make_functional_with_buffers")
    copied = copy.deepcopy(model)
    names, params = _params_of(copied, disable_autograd_tracking)
    named_buffers = list(copied.named_buffers())
    buffer_names = tuple(n for n, _ in named_buffers)
    buffers = tuple(b for _, b in named_buffers)
    return FunctionalModuleWithBuffers(copied, names, buffer_names), params, buffers


def combine_state_for_ensemble_impl(models: Sequence[Module]) -> tuple[Any, ...]:
    """:func:`combine_state_for_ensemble` without the deprecation warning."""
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "combine_state_for_ensemble: Expected all models to have the same training/eval mode."
        )
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same class.")
    made = [make_functional_with_buffers_impl(m) for m in models]
    fmodel = made[0][0]
    # Stacked state is detached: new leaves that do not require grad.
    params = tuple(_core.stack([p.detach() for p in ps]) for ps in zip(*(m[1] for m in made), strict=True))
    buffers = tuple(_core.stack([b.detach() for b in bs]) for bs in zip(*(m[2] for m in made), strict=True))
    return fmodel, params, buffers
