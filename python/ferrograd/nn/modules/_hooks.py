"""How a :class:`~ferrograd.nn.Module` call runs its hooks: the forward
pre-hooks and hooks around ``forward``, and the full backward (pre-)hooks
on identity nodes through which the module's tensor inputs and outputs
pass."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ferrograd
from ferrograd._core import Tensor
from ferrograd.autograd import Function

if TYPE_CHECKING:
    from .module import Module


class _BackwardHookFunction(Function):
    """The identity, as one graph node: a hook on it sees exactly the
    gradients flowing into (or out of) a module's tensors."""

    @staticmethod
    def forward(ctx: Any, *tensors: Tensor) -> tuple[Tensor, ...]:
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        # Gradients stay materialised, so a tensor input that does not
        # require grad shows zeros in ``grad_input``, as in torch.
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        return grads


class _BackwardHook:
    """Runs a module's full backward (pre-)hooks.

    The module's tensor inputs go through one identity node and its tensor
    outputs through another. A pre-hook on the output node sees the
    gradients of the outputs (``grad_output``) and may replace them; a hook
    on the input node sees the gradients of the inputs (``grad_input``) once
    backward has gone through the module, calls the user's hooks with both,
    and may replace ``grad_input``.
    """

    def __init__(self, module: Module, user_hooks: list[Callable], user_pre_hooks: list[Callable]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.input_tensors_index: list[int] | None = None
        self.n_outputs = 0
        self.output_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for i, v in zip(indices, values, strict=False):
            res[i] = v
        return tuple(res)

    @staticmethod
    def _unpack_none(indices: list[int], values: Any) -> tuple[Any, ...]:
        return tuple(values[i] for i in indices)

    def _run_user_hooks(
        self, hooks: list[Callable], full: tuple[Any, ...], *rest: Any, what: str
    ) -> tuple[Any, ...]:
        """Calls ``hook(module, full, *rest)`` for each hook in turn; a non-None
        result (a single value is wrapped) replaces ``full`` and must be as
        long, or ``RuntimeError`` says ``what``."""
        for hook in hooks:
            res = hook(self.module, full, *rest)
            if res is None:
                continue
            if not isinstance(res, tuple):
                res = (res,)
            if len(res) != len(full):
                raise RuntimeError(f"{what}, got {len(res)}, but expected {len(full)}")
            full = res
        return full

    @staticmethod
    def _wrap(args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[int] | None, Any]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (ferrograd.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None, None
        wrapped = _BackwardHookFunction.apply(*tensors)
        if isinstance(wrapped, Tensor):
            wrapped = (wrapped,)
        grad_fn = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
        out = list(args)
        for i, t in zip(index, wrapped, strict=False):
            out[i] = t
        return tuple(out), index, grad_fn

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        self.n_inputs = len(args)
        new_args, index, grad_fn = self._wrap(args)
        if index is None:
            return args
        self.input_tensors_index = index

        def hook(grad_inputs: tuple[Any, ...], _grad_outputs: tuple[Any, ...]) -> Any:
            if not self.user_hooks:
                return None
            full = self._pack_with_none(index, grad_inputs, self.n_inputs)
            full = self._run_user_hooks(
                self.user_hooks,
                full,
                self.grad_outputs,
                what="Backward hook returned an invalid number of grad_input",
            )
            self.grad_outputs = None
            return self._unpack_none(index, full)

        grad_fn.register_hook(hook)
        return new_args

    def setup_output_hook(self, result: Any) -> Any:
        single = isinstance(result, Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, tuple):
            return result
        self.n_outputs = len(outputs)
        new_outputs, index, grad_fn = self._wrap(outputs)
        if index is None:
            return result
        self.output_tensors_index = index

        def pre_hook(grad_outputs: tuple[Any, ...]) -> Any:
            full = self._pack_with_none(index, grad_outputs, self.n_outputs)
            full = self._run_user_hooks(
                self.user_pre_hooks, full, what="Backward pre hook returned an invalid number of grad_output"
            )
            self.grad_outputs = full
            # With no input that requires grad, backward never reaches the
            # input node: the hooks run here, with no grad_input.
            if self.input_tensors_index is None:
                grad_inputs = (None,) * self.n_inputs
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not all(r is None for r in res):
                        raise RuntimeError(
                            "Backward hook for Modules where no input requires gradient "
                            "should always return None or None for all gradients."
                        )
                self.grad_outputs = None
            return self._unpack_none(index, full)

        grad_fn.register_prehook(pre_hook)
        return new_outputs[0] if single else new_outputs


def _run_forward_hook(
    module: Module, hook_id: int, hook: Callable[..., Any], args: tuple[Any, ...], kwargs: Any, result: Any
) -> Any:
    """Calls a forward hook (with ``kwargs`` when it was registered
    ``with_kwargs=True``); its result, or ``result`` when it returns None."""
    if hook_id in module._forward_hooks_with_kwargs:
        hook_result = hook(module, args, kwargs, result)
    else:
        hook_result = hook(module, args, result)
    return result if hook_result is None else hook_result


def _call_with_hooks(
    module: Module, forward_call: Callable[..., Any], args: tuple[Any, ...], kwargs: Any
) -> Any:
    """``module(*args, **kwargs)`` for a module with hooks: the forward
    pre-hooks, ``forward`` and the forward hooks, with the backward hooks'
    identity nodes around ``forward``; when any of it raises, the forward
    hooks registered ``always_call=True`` that have not run yet still run."""
    result = None
    called_always_called_hooks: set[int] = set()

    def inner() -> Any:
        nonlocal result, args, kwargs
        for hook_id, hook in list(module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                args_kwargs_result = hook(module, args, kwargs)
                if args_kwargs_result is not None:
                    if not (isinstance(args_kwargs_result, tuple) and len(args_kwargs_result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple "
                            f"of (new_args, new_kwargs), but got {args_kwargs_result}."
                        )
                    args, kwargs = args_kwargs_result
            else:
                args_result = hook(module, args)
                if args_result is not None:
                    if not isinstance(args_result, tuple):
                        args_result = (args_result,)
                    args = args_result

        bw_hook = None
        if module._backward_hooks or module._backward_pre_hooks:
            bw_hook = _BackwardHook(
                module, list(module._backward_hooks.values()), list(module._backward_pre_hooks.values())
            )
            args = bw_hook.setup_input_hook(args)

        result = forward_call(*args, **kwargs)
        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called:
                called_always_called_hooks.add(hook_id)
            result = _run_forward_hook(module, hook_id, hook, args, kwargs, result)

        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a "
                    f"tuple of Tensors but received {type(result)}",
                    stacklevel=4,
                )
            result = bw_hook.setup_output_hook(result)
        return result

    try:
        return inner()
    except Exception:
        for hook_id, hook in list(module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called and hook_id not in called_always_called_hooks:
                try:
                    result = _run_forward_hook(module, hook_id, hook, args, kwargs, result)
                except Exception as e:
                    warnings.warn(
                        "module forward hook with ``always_call=True`` raised an exception "
                        f"that was silenced as another error was raised in forward: {e}",
                        stacklevel=3,
                    )
        raise


class _Callees(threading.local):
    # While a compiled function runs a part of itself eagerly (the
    # statement where its capture broke): the ``forward`` code objects of
    # the modules whose own forward broke that capture, mapped to how to
    # run them compiled (``ferrograd._compile``). None otherwise.
    table: dict[Any, Callable[[Any, tuple, dict], Any]] | None = None


_callees = _Callees()


def _call_callee(module: Any, forward_call: Callable, args: tuple, kwargs: dict) -> Any:
    """Calls ``module`` (without hooks) while ``_callees.table`` is set:
    compiled when its ``forward`` is in the table, plainly otherwise."""
    table = _callees.table or {}
    run = table.get(getattr(getattr(forward_call, "__func__", None), "__code__", None))
    if run is not None:
        return run(module, args, kwargs)
    return forward_call(*args, **kwargs)
