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

Forward-mode AD: inside a dual level, when an argument has a tangent,
``forward`` runs with forward AD off on this thread, then ``jvp(ctx,
*tangents)`` (one tangent per argument; zeros for tensors without one,
None with ``ctx.set_materialize_grads(False)`` and for non-tensors) maps
the tangents to one tangent (or None) per output. Inside ``jvp``,
``ctx.saved_tensors`` returns what ``ctx.save_for_forward`` stored.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from .. import _core
from .._batched import active_levels as _batched_levels
from .._batched import any_batched as _batched_any
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
        """Saves tensors for ``jvp`` (forward-mode AD), which reads them
        from ``ctx.saved_tensors``."""
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


_CORE_SAVED_TENSORS = _core._FunctionBase.saved_tensors


class BackwardCFunction(_core._FunctionBase, FunctionCtx):
    """The base of every Function's backward class (the class of ``ctx``)."""

    _forward_cls: Any
    # While ``jvp`` runs: what ``save_for_forward`` stored, which
    # ``saved_tensors`` then returns (as in torch).
    _jvp_saved: Any = None
    # After forward AD: per output, a detached alias carrying the output's
    # tangent (or None), see _keep_output_tangents.
    _fw_output_holders: Any = None

    @property
    def saved_tensors(self) -> Any:
        """The tensors given to ``save_for_backward`` (inside ``jvp``: to
        ``save_for_forward``, when it was called)."""
        if self._jvp_saved is not None:
            return self._jvp_saved
        saved = _CORE_SAVED_TENSORS.__get__(self)
        if self._fw_output_holders is not None and _core._current_dual_level() >= 0:
            saved = tuple(self._with_output_tangent(t) for t in saved)
        return saved

    def _with_output_tangent(self, t: Any) -> Any:
        # A saved output comes back as a new tensor attached to this node,
        # without the output's tangent; give it the tangent (while the level
        # that made it is open) so backward formulas see a dual tensor
        # (forward-over-reverse).
        if isinstance(t, _core.Tensor) and t.grad_fn is self:
            holder = self._fw_output_holders[t.output_nr]
            tangent = None if holder is None else _core._fw_grad(holder)
            if tangent is not None:
                _core._set_fw_grad(t, tangent)
        return t

    saved_variables = saved_tensors

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
        """The batching rule under vmap: override it to give the Function
        its own. Called with ``info`` (``info.batch_size``,
        ``info.randomness``), ``in_dims`` (per argument, the dim of the
        vmapped level's batch, or ``None``) and the arguments with that
        dim in place; returns ``(outputs, out_dims)``. Without an override
        (and without ``generate_vmap_rule = True``) the Function cannot
        run under vmap."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Applies the Function: runs ``forward`` and records its node.
        Inside a dual level, when an argument has a tangent, ``jvp`` then
        gives the outputs theirs (see :func:`_apply_forward_ad`)."""
        if _batched_levels() and _batched_any(args, kwargs):
            from ._function_vmap import apply_batched

            return apply_batched(cls, args, kwargs)
        setup_context = cls.setup_context is not _SingleLevelFunction.setup_context
        if setup_context:
            args = _bind_default_args(cls.forward, args, kwargs)
            kwargs = {}
        if _core._current_dual_level() >= 0:
            tangents = [_core._fw_grad(a) if isinstance(a, _core.Tensor) else None for a in args]
            if any(t is not None for t in tangents):
                return _apply_forward_ad(cls, args, kwargs or None, setup_context, tangents)
        return _core._function_apply(cls, args, kwargs or None, setup_context)


class _CtxCapture:
    """Stands in for a Function class in ``_core._function_apply``, which
    reads only ``_backward_cls``, ``forward`` and ``setup_context`` from
    it, to keep what forward-mode AD needs after the call: the ``ctx`` it
    creates and the object ``forward`` returned."""

    __slots__ = ("_cls", "ctx", "raw_output")

    def __init__(self, cls: Any) -> None:
        self._cls = cls
        self.ctx: Any = None
        self.raw_output: Any = None

    def _backward_cls(self) -> Any:
        self.ctx = self._cls._backward_cls()
        return self.ctx

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self.raw_output = self._cls.forward(*args, **kwargs)
        return self.raw_output

    @property
    def setup_context(self) -> Any:
        return self._cls.setup_context


def _apply_forward_ad(
    cls: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None,
    setup_context: bool,
    tangents: list[Any],
) -> Any:
    """``Function.apply`` when an argument has a tangent: ``forward`` and
    then ``jvp`` run with forward AD off on this thread (ops inside compute
    no tangents of their own), and the tangents ``jvp`` returns become the
    outputs' tangents."""
    capture = _CtxCapture(cls)
    previous = _core._set_fwd_grad_enabled(False)
    try:
        result = _core._function_apply(capture, args, kwargs, setup_context)
        outputs = result if isinstance(result, tuple) else (result,)
        raw = capture.raw_output
        raw_outputs = raw if isinstance(raw, tuple) else (raw,)
        ctx = capture.ctx
        non_diff = ctx.non_differentiable or ()
        differentiable = [
            isinstance(o, _core.Tensor)
            and (o.is_floating_point() or o.is_complex())
            and not any(r is nd for nd in non_diff)
            for o, r in zip(outputs, raw_outputs, strict=True)
        ]
        out_tangents = _run_jvp(cls, ctx, args, tangents, outputs, differentiable)
    finally:
        _core._set_fwd_grad_enabled(previous)
    dirty = ctx.dirty_tensors or ()
    for out, r, g in zip(outputs, raw_outputs, out_tangents, strict=True):
        if g is None:
            continue
        if any(r is d for d in dirty) and any(g is t for a, t in zip(args, tangents, strict=True) if a is r):
            # jvp updated the input's tangent in place and returned it.
            continue
        # An input modified in place (mark_dirty) gets the returned tangent
        # as its own, like any output.
        _core._set_fw_grad(out, g)
    if any(ctx.needs_input_grad):
        _keep_output_tangents(ctx, outputs)
    return result


def _keep_output_tangents(ctx: Any, outputs: tuple[Any, ...]) -> None:
    """Keeps each output's tangent on a detached alias of the output, for
    the saved copies of outputs that ``saved_tensors`` hands to backward.
    The alias is a dual tensor of the open level, so its tangent goes away
    with the level, as the output's does."""
    holders = []
    for out in outputs:
        tangent = _core._fw_grad(out) if isinstance(out, _core.Tensor) else None
        if tangent is None:
            holders.append(None)
            continue
        holder = out.detach()
        _core._set_fw_grad(holder, tangent)
        holders.append(holder)
    if any(h is not None for h in holders):
        ctx._fw_output_holders = holders


def _run_jvp(
    cls: Any,
    ctx: Any,
    args: tuple[Any, ...],
    tangents: list[Any],
    outputs: tuple[Any, ...],
    differentiable: list[bool],
) -> list[Any]:
    """Calls ``cls.jvp(ctx, *tangents)`` and checks what it returns: one
    tangent (or None) per output. In a batched level (tangents with a
    leading batch dim) ``jvp`` runs once per row and the rows are stacked."""
    n_outputs = len(outputs)
    materialize = ctx.materialize_grads

    def call(ts: list[Any]) -> tuple[Any, ...]:
        grads = [
            t if t is not None or not (materialize and isinstance(a, _core.Tensor)) else _core.zeros_like(a)
            for a, t in zip(args, ts, strict=True)
        ]
        result = cls.jvp(ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != n_outputs:
            raise RuntimeError(
                "Function's jvp returned an invalid number of forward gradients "
                f"(expected {n_outputs} but got {len(result)})"
            )
        for i, g in enumerate(result):
            if g is None:
                continue
            if not isinstance(g, _core.Tensor):
                raise RuntimeError(
                    f"Function's jvp returned an object of type {type(g).__name__} at position {i}: "
                    "expected a Tensor or None"
                )
            if not differentiable[i]:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {i}, but the corresponding forward "
                    "output is not a differentiable Tensor. You should return None at that position instead."
                )
        return result

    # A tangent has one more dim than its primal in a batched level.
    batch = None
    for a, t in zip(args, tangents, strict=True):
        if t is not None:
            batch = t.shape[0] if t.dim() == a.dim() + 1 else None
            break
    saved = ctx.saved_for_forward
    ctx._jvp_saved = saved
    try:
        if batch is None:
            return list(call(tangents))
        rows = [call([None if t is None else t[r] for t in tangents]) for r in range(batch)]
    finally:
        ctx._jvp_saved = None
        ctx.saved_for_forward = None
    stacked: list[Any] = []
    for k, out in enumerate(outputs):
        column = [row[k] for row in rows]
        if all(g is None for g in column):
            stacked.append(None)
            continue
        stacked.append(
            _core.stack([_core.zeros(tuple(out.shape), dtype=out.dtype) if g is None else g for g in column])
        )
    return stacked


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
            o.detach().requires_grad_(True)
            if isinstance(o, _core.Tensor) and (o.is_floating_point() or o.is_complex())
            else None
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
