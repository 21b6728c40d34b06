"""Custom differentiable operations (torch.autograd.function's API).

Subclass :class:`Function` with static ``forward`` and ``backward``
methods and call ``apply``::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

``apply`` runs ``forward`` with grad mode off and, when an input requires
grad, links the outputs to a graph node of the Rust engine whose backward
calls ``backward`` (on the thread that called backward, holding the GIL
only for the call). The node's Python face is ``ctx`` itself: an instance
of the class's backward class (``ExpBackward``), which is also what the
outputs' ``grad_fn`` returns.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from .. import _core
from .grad_mode import is_grad_enabled, no_grad

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "FunctionMeta",
    "InplaceFunction",
    "NestedIOFunction",
    "once_differentiable",
]


class FunctionCtx:
    """The methods ``forward``/``setup_context`` call on ``ctx``."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors (or None) for ``backward``, which reads them from
        ``ctx.saved_tensors``. Using them after an in-place change raises."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Saves tensors for ``jvp`` (forward-mode AD)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Any) -> None:
        """Declares inputs that ``forward`` modified in place; they must be
        returned as outputs."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs: Any) -> None:
        warnings.warn(
            "mark_shared_storage is deprecated. Tensors with shared storages are automatically tracked. "
            "Note that calls to `set_()` are not tracked",
            stacklevel=2,
        )

    def mark_non_differentiable(self, *args: Any) -> None:
        """Declares outputs that are not differentiable: they do not
        require grad, and ``backward`` receives zeros (or None) for them."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether undefined output gradients reach ``backward`` as zeros
        (True, the default) or as None."""
        self.materialize_grads = bool(value)


class BackwardCFunction(_core._FunctionBase, FunctionCtx):
    """The base of every Function's backward class (the class of ``ctx``)."""

    _forward_cls: Any

    def apply(self, *args: Any) -> Any:
        """Runs the Function's ``backward`` (or ``vjp``) on ``ctx``."""
        cls = self._forward_cls
        backward_fn = cls.backward
        vjp_fn = cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them."
            )
        user_fn = vjp_fn if vjp_fn is not Function.vjp else backward_fn
        return user_fn(self, *args)

    def apply_jvp(self, *args: Any) -> Any:
        """Runs the Function's ``jvp`` on ``ctx`` (forward-mode AD)."""
        return self._forward_cls.jvp(self, *args)


_FUNCTION_COUNTER = itertools.count()


class FunctionMeta(type):
    """Gives each Function class its backward class (``<Name>Backward``)."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls._autograd_function_id = next(_FUNCTION_COUNTER)  # type: ignore[attr-defined]
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(FunctionCtx, metaclass=FunctionMeta):
    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Computes the outputs: ``forward(ctx, *args, **kwargs)``, or
        ``forward(*args, **kwargs)`` when ``setup_context`` is defined."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Saves what backward needs, given the inputs and the output."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Returns one gradient (or None) per input of ``forward``."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Returns the tangents of the outputs (forward-mode AD)."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )


_SIGNATURES: dict[Any, tuple[inspect.Signature, int, bool]] = {}


def _bind_default_args(
    func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    """``args`` and ``kwargs`` as the positional tuple ``forward`` sees,
    with defaults filled in (the inputs ``setup_context`` receives)."""
    entry = _SIGNATURES.get(func)
    if entry is None:
        sig = inspect.signature(func)
        kinds = [p.kind for p in sig.parameters.values()]
        positional = sum(
            k in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) for k in kinds
        )
        entry = _SIGNATURES[func] = (sig, positional, inspect.Parameter.VAR_POSITIONAL in kinds)
    sig, positional, var_positional = entry
    if not kwargs and (len(args) == positional or (var_positional and len(args) > positional)):
        return args
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


class Function(_SingleLevelFunction):
    """Base class of custom differentiable operations; see the module
    documentation. Call ``MyFunction.apply(*args)``, never instantiate."""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. "
            "Instantiating an autograd function will raise an error in a future version.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """The batching rule under vmap."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Applies the Function: runs ``forward`` and records its node."""
        if cls.setup_context is not _SingleLevelFunction.setup_context:
            bound = _bind_default_args(cls.forward, args, kwargs)
            return _core._function_apply(cls, bound, None, True)
        return _core._function_apply(cls, args, kwargs or None, False)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorates ``backward``: it runs with grad mode off, and
    differentiating its results (double backward) raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        requires_grad = any(isinstance(a, _core.Tensor) and a.requires_grad for a in args)
        if not requires_grad:
            return outputs
        single = not isinstance(outputs, tuple)
        seq = (outputs,) if single else outputs
        # Detached leaves that require grad give the error node inputs to
        # hang on, so its outputs require grad and differentiating them
        # reaches the error.
        tensors = [
            o.detach().requires_grad_(True) if isinstance(o, _core.Tensor) and o.is_floating_point() else None
            for o in seq
        ]
        wrapped = _core._delayed_error(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            tensors,
        )
        result = tuple(w if w is not None else o for o, w in zip(seq, wrapped, strict=True))
        return result[0] if single else result

    return wrapper


class InplaceFunction(Function):
    """A Function that may work in place (``self.inplace``)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def _iter_tensors(obj: Any) -> Iterator[Any]:
    if isinstance(obj, _core.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_tensors(o)


def _iter_none_tensors(obj: Any) -> Iterator[Any]:
    if obj is None or isinstance(obj, _core.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_none_tensors(o)


def _unflatten(flat: Any, like: Any) -> Any:
    it = iter(flat)

    def rebuild(x: Any) -> Any:
        if isinstance(x, _core.Tensor):
            return next(it)
        if isinstance(x, (list, tuple)):
            return type(x)(rebuild(o) for o in x)
        return x

    return rebuild(like)


class _NestedApply(Function):
    """Runs a NestedIOFunction instance's forward/backward on flat tensors."""

    @staticmethod
    def forward(ctx: Any, owner: NestedIOFunction, *flat: Any) -> Any:
        owner._ctx = ctx
        result = owner.forward(*flat)
        return result

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        owner = ctx._owner
        owner._ctx = ctx
        return (None, *owner.backward(*grads))


class NestedIOFunction(Function):
    """A legacy Function object whose ``forward_extended`` and
    ``backward_extended`` take and return nested lists/tuples of tensors.
    Instantiate it and call the instance."""

    _ctx: Any = None

    def __call__(self, *args: Any) -> Any:
        return self._do_forward(*args)

    def _do_forward(self, *input: Any) -> Any:
        self._nested_input = input
        flat_input = tuple(_iter_tensors(input))
        flat_output = _NestedApply.apply(self, *flat_input)
        if not isinstance(flat_output, tuple):
            flat_output = (flat_output,)
        if self._ctx is not None:
            self._ctx._owner = self
        return _unflatten(flat_output, self._nested_output)

    def forward(self, *args: Any) -> Any:  # type: ignore[override]
        nested = _unflatten(args, self._nested_input)
        result = self.forward_extended(*nested)
        del self._nested_input
        self._nested_output = result
        return tuple(_iter_tensors(result))

    def backward(self, *gradients: Any) -> Any:  # type: ignore[override]
        nested_gradients = _unflatten(gradients, self._nested_output)
        result = self.backward_extended(*nested_gradients)
        return tuple(_iter_none_tensors(result))

    def save_for_backward(self, *args: Any) -> None:
        self._ctx.to_save = tuple(_iter_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self) -> Any:  # type: ignore[override]
        return _unflatten(self._ctx.saved_tensors, self._to_save_nested)

    def mark_dirty(self, *args: Any, **kwargs: Any) -> None:
        self._ctx.dirty_tensors = tuple(_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args: Any, **kwargs: Any) -> None:
        self._ctx.non_differentiable = tuple(_iter_tensors((args, kwargs)))

    def forward_extended(self, *input: Any) -> Any:
        """The forward computation on nested inputs."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> Any:
        """The backward computation on nested gradients."""
        raise NotImplementedError
