"""Custom differentiable operations (torch.autograd.function's API).

Subclass :class:`Function` with static ``forward`` and ``backward``
methods and call ``apply``::

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.factor = factor
            return x * factor

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None  # no gradient for ``factor``

``apply`` runs ``forward`` with grad mode off and, when an input requires
grad, links the outputs to a graph node of the Rust engine whose backward
calls ``backward`` (on the thread that called backward, holding the GIL
only for the call). The node's Python face is ``ctx`` itself: an instance
of the class's backward class (``ScaleBackward``), which is also what the
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
from typing import TYPE_CHECKING, Any

from .. import _core
from .._batched import active_levels as _batched_levels
from .._batched import any_batched as _batched_any
from ..utils import _docs
from ._function_vmap import apply_batched as _apply_batched
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

# The example Function of ``Function``'s and ``save_for_backward``'s docstrings, where a line
# ``{exp_example}`` stands for it.
_with_doc_pieces = _docs.with_doc_pieces(
    {
        "exp_example": """\
>>> class Exp(ferrograd.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         y = x.exp()
...         ctx.save_for_backward(y)
...         return y
...     @staticmethod
...     def backward(ctx, grad):
...         (y,) = ctx.saved_tensors
...         return grad * y
>>> x = ferrograd.tensor([0.0, 1.0], requires_grad=True)""",
    }
)


class FunctionCtx:
    """The methods ``forward`` and ``setup_context`` call on ``ctx``.

    ``ctx`` is the Function's graph node (an instance of its
    ``<Name>Backward`` class); what is stored on it in ``forward`` is what
    ``backward`` sees. Besides these methods, ``ctx`` has
    ``saved_tensors`` and ``needs_input_grad`` (one bool per input), and
    any attribute may be set on it for non-tensor state.
    """

    if TYPE_CHECKING:
        # What the graph node gives ctx at run time, for type checkers.
        @property
        def saved_tensors(self) -> tuple[_core.Tensor, ...]: ...

        @property
        def needs_input_grad(self) -> tuple[bool, ...]: ...

        # Any attribute may be set on ctx (``ctx.scale = 2.0``) and read back.
        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...

    @_with_doc_pieces
    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors for ``backward``, which reads them back from
        ``ctx.saved_tensors``.

        Call it at most once, from ``forward`` (or ``setup_context``), with
        inputs, outputs or intermediate tensors. Saving through this method
        (rather than as an attribute of ``ctx``) lets the engine check that
        they were not modified in place before backward (that raises), free
        them after backward, and apply saved-tensor hooks.

        Args:
            *tensors (Tensor or None): the tensors to save.

        Example:
            {exp_example}
            >>> Exp.apply(x).sum().backward()
            >>> x.grad
            tensor([1.0000, 2.7183])
        """
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Saves tensors for ``jvp`` (forward-mode AD), which reads them
        back from ``ctx.saved_tensors``.

        Args:
            *tensors (Tensor or None): the tensors to save.
        """
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Any) -> None:
        """Declares the inputs that ``forward`` modified in place.

        Call it once, from ``forward``, with every such input; each must
        also be returned as an output. The engine then bumps their version
        counters and rebases their history on the Function's node.

        Args:
            *args (Tensor): the inputs modified in place.

        Example:
            >>> class AddOne(ferrograd.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         ctx.mark_dirty(x)
            ...         return x.add_(1)
            ...     @staticmethod
            ...     def backward(ctx, grad):
            ...         return grad
            >>> a = ferrograd.tensor([1.0, 2.0], requires_grad=True).clone()
            >>> AddOne.apply(a)
            tensor([2., 3.], grad_fn=<AddOneBackward>)
        """
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs: Any) -> None:
        """Deprecated and does nothing but warn: shared storage is tracked
        automatically."""
        warnings.warn(
            "mark_shared_storage is deprecated. Tensors with shared storages are automatically tracked. "
            "Note that calls to `set_()` are not tracked",
            stacklevel=2,
        )

    def mark_non_differentiable(self, *args: Any) -> None:
        """Declares outputs that are not differentiable (indices, masks...).

        Call it from ``forward`` with outputs only. Those outputs do not
        require grad, and ``backward`` still receives an argument for each
        of them: zeros (or ``None`` after ``set_materialize_grads(False)``).

        Args:
            *args (Tensor): the outputs that are not differentiable.

        Example:
            >>> class MaxWithIndex(ferrograd.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         i = x.argmax()
            ...         ctx.mark_non_differentiable(i)
            ...         ctx.save_for_backward(x, i)
            ...         return x.max(), i
            ...     @staticmethod
            ...     def backward(ctx, grad_value, grad_index):
            ...         x, i = ctx.saved_tensors
            ...         return ferrograd.zeros_like(x).index_fill(0, i.reshape(1), 1.0) * grad_value
            >>> x = ferrograd.tensor([3.0, 1.0, 2.0], requires_grad=True)
            >>> value, index = MaxWithIndex.apply(x)
            >>> index.requires_grad
            False
            >>> value.backward()
            >>> x.grad
            tensor([1., 0., 0.])
        """
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Chooses how ``backward`` receives the gradient of an output that
        did not take part in the loss: as a tensor of zeros (``True``, the
        default) or as ``None`` (``False``, which saves allocating zeros).

        Args:
            value (bool): whether to materialise missing gradients as zeros.

        Example:
            >>> class Pair(ferrograd.autograd.Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         ctx.set_materialize_grads(False)
            ...         return x * 2, x * 3
            ...     @staticmethod
            ...     def backward(ctx, grad_a, grad_b):
            ...         print("grad_b:", grad_b)
            ...         return grad_a * 2
            >>> x = ferrograd.tensor([1.0], requires_grad=True)
            >>> a, b = Pair.apply(x)
            >>> a.sum().backward()
            grad_b: None
        """
        self.materialize_grads = bool(value)


_CORE_SAVED_TENSORS = _core._FunctionBase.saved_tensors


class BackwardCFunction(_core._FunctionBase, FunctionCtx):
    """The base class of every Function's backward class ``<Name>Backward``,
    whose instance is both ``ctx`` and the outputs' ``grad_fn``.

    Not used directly: :class:`Function`'s metaclass makes one subclass per
    Function.
    """

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
    """The metaclass of :class:`Function`: it gives each Function class its
    backward class ``<Name>Backward`` (a :class:`BackwardCFunction`), the
    type of ``ctx`` and of the outputs' ``grad_fn``."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls._autograd_function_id = next(_FUNCTION_COUNTER)  # type: ignore[attr-defined]
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(FunctionCtx, metaclass=FunctionMeta):
    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Computes the outputs of the Function; override it.

        Its signature is ``forward(ctx, *args, **kwargs)``, or
        ``forward(*args, **kwargs)`` (no ``ctx``) when the class also
        defines ``setup_context``. It runs with grad mode off and may return
        a tensor or a tuple of tensors (and other objects).

        Args:
            ctx: the context to save state on (see :class:`FunctionCtx`).
            *args: the arguments given to ``apply``.
        """
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Saves what ``backward`` needs; override it to keep ``forward``
        free of ``ctx``.

        Args:
            ctx: the context to save state on.
            inputs (tuple): the arguments given to ``apply`` (defaults
                filled in).
            output: what ``forward`` returned.
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Computes the gradients of the inputs from those of the outputs;
        override it (or its alias ``vjp``).

        Args:
            ctx: the context ``forward`` saved state on.
            *grad_outputs (Tensor or None): one gradient per output of
                ``forward``.

        Returns:
            one gradient (a Tensor or ``None``) per argument of ``forward``;
                a single value when ``forward`` took one argument.
        """
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Computes the tangents of the outputs from those of the inputs
        (forward-mode AD); override it to use the Function inside
        :mod:`ferrograd.autograd.forward_ad` or :func:`ferrograd.func.jvp`.

        Args:
            ctx: the context; ``ctx.saved_tensors`` returns what
                ``save_for_forward`` stored.
            *grad_inputs (Tensor or None): one tangent per argument of
                ``forward`` (zeros for tensors without one).

        Returns:
            one tangent (a Tensor or ``None``) per output of ``forward``.
        """
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


@_with_doc_pieces
class Function(_SingleLevelFunction):
    """Base class for custom differentiable operations.

    Subclass it with a static ``forward`` and a static ``backward`` (and
    optionally ``setup_context``, ``jvp`` for forward-mode AD, ``vmap`` or
    ``generate_vmap_rule = True`` for :func:`ferrograd.func.vmap`), then call
    ``MyFunction.apply(*args)``; never instantiate the class.

    ``forward(ctx, *args)`` runs with grad mode off and returns the outputs.
    When an input requires grad, the outputs get a graph node of the Rust
    engine (``ctx``, an instance of ``MyFunctionBackward``); during backward
    it calls ``backward(ctx, *grad_outputs)``, which returns one gradient per
    ``forward`` argument (``None`` for non-tensors and inputs that need none).
    ``backward`` is written with tensor ops, so it is differentiable itself
    unless decorated with :func:`once_differentiable`.

    Example:
        {exp_example}
        >>> y = Exp.apply(x)
        >>> y
        tensor([1.0000, 2.7183], grad_fn=<ExpBackward>)
        >>> y.sum().backward()
        >>> x.grad
        tensor([1.0000, 2.7183])
    """

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
        """Applies the Function: runs ``forward`` and, when an input
        requires grad, records the node whose backward calls ``backward``.

        Inside a dual level (forward-mode AD), when an argument has a
        tangent, ``jvp`` then gives the outputs theirs; under ``vmap`` the
        Function's batching rule runs instead.

        Args:
            *args: the arguments of ``forward`` (after ``ctx``).
            **kwargs: keyword arguments of ``forward``.

        Returns:
            what ``forward`` returned, linked to the graph.
        """
        if _batched_levels() and _batched_any(args, kwargs):
            return _apply_batched(Function, cls, args, kwargs)
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
    """Decorator for a Function's ``backward`` that is not itself
    differentiable.

    The decorated ``backward`` runs with grad mode off, so it may use any
    code (even non-differentiable ops). When double backward is requested
    (``create_graph=True`` with gradients that require grad), its results
    carry a node that raises if anything differentiates through them.

    Args:
        fn (callable): the ``backward(ctx, *grad_outputs)`` staticmethod body.

    Example:
        >>> class Square(ferrograd.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     @ferrograd.autograd.once_differentiable
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> x = ferrograd.tensor([3.0], requires_grad=True)
        >>> v = ferrograd.ones(1, requires_grad=True)
        >>> (g,) = ferrograd.autograd.grad(Square.apply(x), x, grad_outputs=v, create_graph=True)
        >>> g
        tensor([6.], grad_fn=<DelayedError>)
        >>> g.sum().backward()
        Traceback (most recent call last):
          ...
        RuntimeError: trying to differentiate twice a function that was marked with @once_differentiable
    """

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
    """A :class:`Function` whose ``forward`` may work in place, as told by
    the ``inplace`` attribute.

    Args:
        inplace (bool): stored as ``self.inplace``. Default: ``False``.
    """

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
    """A legacy style of Function whose ``forward_extended`` and
    ``backward_extended`` take and return nested lists and tuples of
    tensors.

    Unlike :class:`Function`, it is instantiated and the instance is
    called; ``save_for_backward``, ``mark_dirty`` and
    ``mark_non_differentiable`` are methods of the instance. Kept for
    compatibility; prefer :class:`Function`.
    """

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
