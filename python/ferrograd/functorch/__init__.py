"""``ferrograd.functorch``: the deprecated ``functorch`` API, as torch 2.13
still ships it.

Scripts written for functorch run after ``import ferrograd.functorch as
functorch``. The transforms (``vmap``, ``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``) are
:mod:`ferrograd.func`'s; ``make_functional``,
``make_functional_with_buffers`` and ``combine_state_for_ensemble`` turn
modules into functions of their parameters (the ``torch.func`` way is
``functional_call`` and ``stack_module_state``). Every function here
emits the ``FutureWarning`` torch's functorch emits, naming its
``torch.func`` replacement. See docs/func.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import _core
from .. import func as _func
from ..nn.modules.module import Module
from ..utils import _docs
from ._make_functional import (
    FunctionalModule,
    FunctionalModuleWithBuffers,
    combine_state_for_ensemble_impl,
    make_functional_impl,
    make_functional_with_buffers_impl,
)

__all__ = [
    "FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble", "grad", "grad_and_value",
    "hessian", "jacfwd", "jacrev", "jvp", "make_functional", "make_functional_with_buffers", "vjp", "vmap",
]  # fmt: skip

__version__: str = _core.__version__

# Argument descriptions the transforms' docstrings share: a docstring line ``{name}`` of a
# function decorated with ``_with_doc_pieces`` stands for piece ``name``.
_DOC_PIECES = {
    "func_aux_arg": (
        "func (Callable): a function returning a one-element tensor (and an\n"
        "    auxiliary value when ``has_aux``)."
    ),
    "argnums_arg": "argnums (int or tuple of int): the arguments to differentiate.\n    Default: ``0``.",
    "has_aux_arg": "has_aux (bool): ``func`` returns ``(output, aux)``. Default:\n    ``False``.",
    "randomness_arg": (
        'randomness (str): ``"error"``, ``"different"`` or ``"same"``.\n    Default: ``"error"``.'
    ),
}
_with_doc_pieces = _docs.with_doc_pieces(_DOC_PIECES)


def _warn_deprecated(api: str, new_api: str | None = None) -> None:
    """The FutureWarning of ``functorch.<api>``, pointing at the caller of
    the public function that calls this."""
    new_api = new_api or f"torch.func.{api}"
    warnings.warn(
        "We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future version of "
        f"PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 release notes and/or the "
        "`torch.func` migration guide for more details https://pytorch.org/docs/main/func.migrating.html",
        FutureWarning,
        stacklevel=3,
    )


@_with_doc_pieces
def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """Deprecated: :func:`ferrograd.vmap` (the vectorizing map), with a
    ``FutureWarning``.

    Args:
        func (Callable): the function of one example.
        in_dims (int, None or nested tuple): the batch dim of each input.
            Default: ``0``.
        out_dims (int or tuple): where the batch dim goes in each output.
            Default: ``0``.
        {randomness_arg}

    Keyword args:
        chunk_size (int, optional): run the batch in chunks of this size.
            Default: ``None`` (all at once).

    Returns:
        Callable: the batched function.

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     batched_dot = vmap(ferrograd.dot)
        >>> x = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> batched_dot(x, ferrograd.tensor([[1.0, 1.0], [2.0, 0.0]]))
        tensor([3., 6.])
    """
    _warn_deprecated("vmap", "torch.vmap")
    return _func.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


@_with_doc_pieces
def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """Deprecated: :func:`ferrograd.func.grad`, with a ``FutureWarning``.

    Args:
        {func_aux_arg}
        {argnums_arg}
        {has_aux_arg}

    Returns:
        Callable: the gradient function.

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     g = grad(lambda x: (x ** 2).sum())
        >>> g(ferrograd.tensor([1.0, -2.0]))
        tensor([ 2., -4.])
    """
    _warn_deprecated("grad")
    return _func.grad(func, argnums, has_aux)


@_with_doc_pieces
def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """Deprecated: :func:`ferrograd.func.grad_and_value`, with a
    ``FutureWarning``.

    Args:
        {func_aux_arg}
        {argnums_arg}
        {has_aux_arg}

    Returns:
        Callable: a function returning ``(gradient, value)``.

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     gv = grad_and_value(lambda x: (x ** 2).sum())
        >>> gv(ferrograd.tensor([1.0, 3.0]))
        (tensor([2., 6.]), tensor(10.))
    """
    _warn_deprecated("grad_and_value")
    return _func.grad_and_value(func, argnums, has_aux)


@_with_doc_pieces
def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """Deprecated: :func:`ferrograd.func.vjp`, with a ``FutureWarning``.

    Args:
        func (Callable): the function.
        *primals: the point (tensors or nested tuples, lists and dicts of
            them).

    Keyword args:
        {has_aux_arg}

    Returns:
        tuple: ``(output, vjp_fn)`` (and ``aux`` when ``has_aux``).

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     out, vjp_fn = vjp(lambda x: x * 3.0, ferrograd.tensor([1.0, 2.0]))
        >>> vjp_fn(ferrograd.tensor([1.0, 10.0]))
        (tensor([ 3., 30.]),)
    """
    _warn_deprecated("vjp")
    return _func.vjp(func, *primals, has_aux=has_aux)


@_with_doc_pieces
def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> Any:
    """Deprecated: :func:`ferrograd.func.jvp`, with a ``FutureWarning``.

    Args:
        func (Callable): the function.
        primals (tuple): the point, one entry per argument of ``func``.
        tangents (tuple): the tangents, shaped as ``primals``.

    Keyword args:
        strict (bool): raise for outputs independent of the inputs
            (refused, as in torch). Default: ``False``.
        {has_aux_arg}

    Returns:
        tuple: ``(output, jvp_out)`` (and ``aux`` when ``has_aux``).

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     out, tangent = jvp(lambda x: x ** 2, (ferrograd.tensor([1.0, 2.0]),), (ferrograd.ones(2),))
        >>> tangent
        tensor([2., 4.])
    """
    _warn_deprecated("jvp")
    return _func.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


@_with_doc_pieces
def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """Deprecated: :func:`ferrograd.func.jacrev`, with a ``FutureWarning``.

    Args:
        func (Callable): the function.
        {argnums_arg}

    Keyword args:
        {has_aux_arg}
        chunk_size (int, optional): rows of the Jacobian per backward
            pass. Default: ``None`` (all at once).

    Returns:
        Callable: the Jacobian function.

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     jac = jacrev(lambda x: x ** 2)
        >>> jac(ferrograd.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    _warn_deprecated("jacrev")
    return _func.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size,
                        _preallocate_and_copy=_preallocate_and_copy)


@_with_doc_pieces
def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """Deprecated: :func:`ferrograd.func.jacfwd`, with a ``FutureWarning``.

    Args:
        func (Callable): the function.
        {argnums_arg}
        {has_aux_arg}

    Keyword args:
        {randomness_arg}

    Returns:
        Callable: the Jacobian function.

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     jac = jacfwd(lambda x: x.sum() * x)
        >>> jac(ferrograd.tensor([1.0, 2.0]))
        tensor([[4., 1.],
                [2., 5.]])
    """
    _warn_deprecated("jacfwd")
    return _func.jacfwd(func, argnums, has_aux, randomness=randomness)


@_with_doc_pieces
def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """Deprecated: :func:`ferrograd.func.hessian`, with a
    ``FutureWarning``.

    Args:
        func (Callable): a function returning a one-element tensor.
        {argnums_arg}

    Returns:
        Callable: the Hessian function.

    Example:
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     hess = hessian(lambda x: (x ** 3).sum())
        >>> hess(ferrograd.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    _warn_deprecated("hessian")
    return _func.hessian(func, argnums)


def make_functional(model: Module, disable_autograd_tracking: bool = False) -> tuple[FunctionalModule, Any]:
    """Deprecated (use :func:`ferrograd.func.functional_call`): turns a
    module without buffers into a function of its parameters.

    The model is deep-copied: ``fmodel(params, *args, **kwargs)`` runs the
    copy with ``params`` as its parameters, and changes to the original
    model later do not reach it. ``params`` are the copy's parameters, in
    ``named_parameters()`` order (a tied parameter appears once and is
    used for all its names). Emits a ``FutureWarning``.

    Args:
        model (nn.Module): the module; it must have no buffers (use
            :func:`make_functional_with_buffers`).
        disable_autograd_tracking (bool): return detached parameters
            (``requires_grad=False``), for use with :func:`grad` and the
            other transforms only. Default: ``False``.

    Returns:
        tuple: ``(fmodel, params)``, a :class:`FunctionalModule` and a
            tuple of tensors.

    Example:
        >>> lin = nn.Linear(2, 1)
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     fmodel, params = make_functional(lin)
        >>> x = ferrograd.tensor([[1.0, 2.0]])
        >>> ferrograd.equal(fmodel(params, x), lin(x)), fmodel.param_names
        (True, ('weight', 'bias'))
    """
    _warn_deprecated("make_functional", "torch.func.functional_call")
    return make_functional_impl(model, disable_autograd_tracking)


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False) -> tuple[Any, ...]:
    """Deprecated (use :func:`ferrograd.func.functional_call`): turns a
    module into a function of its parameters and buffers.

    As :func:`make_functional`, and ``buffers`` are the copy's buffers in
    ``named_buffers()`` order; ``fmodel(params, buffers, *args,
    **kwargs)`` runs the copy with both. Emits a ``FutureWarning``.

    Args:
        model (nn.Module): the module.
        disable_autograd_tracking (bool): return detached parameters
            (``requires_grad=False``). Default: ``False``.

    Returns:
        tuple: ``(fmodel, params, buffers)``, a
            :class:`FunctionalModuleWithBuffers` and two tuples of tensors.

    Example:
        >>> bn = nn.BatchNorm1d(2).eval()
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     fmodel, params, buffers = make_functional_with_buffers(bn)
        >>> fmodel.buffer_names
        ('running_mean', 'running_var', 'num_batches_tracked')
        >>> fmodel(params, buffers, ferrograd.tensor([[3.0, 4.0]])).detach()
        tensor([[3.0000, 4.0000]])
    """
    _warn_deprecated("make_functional_with_buffers", "torch.func.functional_call")
    return make_functional_with_buffers_impl(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: Sequence[Module]) -> tuple[Any, ...]:
    """Deprecated (use :func:`ferrograd.func.stack_module_state`): the
    parameters and buffers of several models of the same class, stacked
    along a new dim 0, for running an ensemble with :func:`vmap`.

    Returns the :class:`FunctionalModuleWithBuffers` of the first model
    and the stacked tensors, which are new leaves that do not require grad
    (call ``requires_grad_()`` on them to train the ensemble). Emits a
    ``FutureWarning``.

    Args:
        models (sequence of nn.Module): at least one model; all of the
            same class and all in training or all in eval mode.

    Returns:
        tuple: ``(fmodel, params, buffers)``; ``params[i]`` has the shape of
            the models' ``i``-th parameter with ``len(models)`` in front.

    Raises:
        RuntimeError: for no models, models of different classes, or a mix
            of training and eval modes.

    Example:
        >>> models = [nn.Linear(2, 1) for _ in range(3)]
        >>> with warnings.catch_warnings(action="ignore", category=FutureWarning):
        ...     fmodel, params, buffers = combine_state_for_ensemble(models)
        ...     ensemble = vmap(fmodel, in_dims=(0, 0, None))
        >>> [tuple(p.shape) for p in params], buffers
        ([(3, 1, 2), (3, 1)], ())
        >>> ensemble(params, buffers, ferrograd.ones(4, 2)).shape
        ferrograd.Size([3, 4, 1])
    """
    _warn_deprecated("combine_state_for_ensemble", "torch.func.stack_module_state")
    return combine_state_for_ensemble_impl(models)
