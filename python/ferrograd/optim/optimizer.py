"""The ``Optimizer`` base class: parameter groups, per-parameter state, hooks, state dicts.

Each algorithm (``sgd.py``, ``adam.py``, ...) subclasses :class:`Optimizer` and keeps its update
rule in one module-level function that takes lists of tensors (params, grads, state buffers) and
the hyper-parameters, like torch's ``_foreach``/``_single_tensor_*`` functions. That function
updates a group of real floating parameters with one call into the core (see ``_steps.py``), and
anything else (complex parameters, differentiable steps) with a loop of tensor ops that computes
the same values.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, TypeAlias, TypeVar

import ferrograd as _fg

from .._core import Tensor
from ..utils import _docs, _grads

__all__ = [
    "Optimizer",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
]

# One iterable of items (not a union of iterables), so that a list literal of
# parameter groups type-checks: their dicts' values differ in type.
ParamsT: TypeAlias = Iterable[Tensor | dict[str, Any] | tuple[str, Tensor]]
StateDict: TypeAlias = dict[str, Any]


class _RequiredParameter:
    """Marks a default that every parameter group must give itself (torch's ``required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class _HookHandle:
    """A handle whose ``remove()`` unregisters a hook from the ordered dict that holds it."""

    _next_id = 0

    def __init__(self, hooks: OrderedDict[int, Any]) -> None:
        self._hooks = hooks
        self.id = _HookHandle._next_id
        _HookHandle._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> _HookHandle:
        return self

    def __exit__(self, *args: object) -> None:
        self.remove()


_global_optimizer_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> _HookHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``.

    The hook may return ``None`` or a ``(new_args, new_kwargs)`` pair.

    Example:
        >>> handle = ferrograd.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: None)
        >>> handle.remove()
    """
    handle = _HookHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> _HookHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``."""
    handle = _HookHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _typename(obj: object) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _format_value(value: Any) -> Any:
    # torch formats a 0-dim tensor through its Python number (``f"{t}"`` calls ``item()``).
    if isinstance(value, Tensor) and value.dim() == 0:
        return value.item()
    return value


# --- helpers shared by the algorithm modules ---------------------------------------------------


def _closure_loss(closure: Any) -> Any:
    """What every ``step(closure)`` starts with: the closure's loss, computed
    with gradients enabled (None without a closure)."""
    if closure is None:
        return None
    with _fg.enable_grad():
        return closure()


def _get_value(x: Any) -> Any:
    """A hyper-parameter or step count as a Python number (tensors are read with ``item()``)."""
    return x.item() if isinstance(x, Tensor) else x


def _to_scalar(x: Any) -> Any:
    """A one-element tensor hyper-parameter as a 0-dim tensor; anything else unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _get_scalar_dtype() -> Any:
    """dtype of the ``step`` counters: float64 when that is the default dtype, else float32."""
    return _fg.float64 if _fg.get_default_dtype() == _fg.float64 else _fg.float32


def _check_lr(lr: Any) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_non_negative(value: Any, name: str) -> None:
    """torch's check of a hyper-parameter that must be at least 0 (NaN fails it too)."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def _check_betas(betas: tuple[Any, Any]) -> None:
    """torch's check of Adam-style ``betas``: each in ``[0, 1)``."""
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def _check_step_grad(group: dict[str, Any], state: dict[str, Any]) -> None:
    """torch's refusal of a ``step`` count that requires grad in a differentiable step."""
    if group["differentiable"] and state["step"].requires_grad:
        raise RuntimeError("`requires_grad` is not supported for `step` in differentiable mode")


# The options that most optimizers' ``__setstate__`` restores (see ``Optimizer._restored_options``).
_FLAGS_RESTORED = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}


def _check_fused(fused: bool | None, foreach: bool | None, differentiable: bool) -> None:
    """torch's checks of ``fused=True``, which is accepted (the step runs the same loop)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _real_views(param: Tensor, *tensors: Tensor | None) -> tuple[Any, ...]:
    """``param`` and ``tensors`` (a ``None`` stays ``None``) as their real views when ``param``
    is complex, else unchanged.

    Complex parameters are updated as pairs of real numbers, elementwise, as torch does.
    """
    if not _fg.is_complex(param):
        return (param, *tensors)
    return tuple(None if t is None else _fg.view_as_real(t) for t in (param, *tensors))


def _use_grad_for_differentiable(step: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``step`` with grad mode on only when the group asked for a differentiable step."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        with _fg.set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            return step(self, *args, **kwargs)

    return wrapper


_OptimizerT = TypeVar("_OptimizerT", bound="type[Optimizer]")


# Argument descriptions that the algorithms' docstrings share: a docstring line ``{name}`` (or
# ``{name:value}``, for the piece's ``<value>``) of a class decorated with ``_steps_by_group``
# stands for piece ``name`` (see ``utils/_docs.py``).
_DOC_PIECES = {
    "params_arg": "params (iterable): tensors, ``(name, tensor)`` pairs or parameter-group dicts.",
    "lr_arg": "lr (float or Tensor): learning rate (default: <value>).",
    "moments_args": (
        "betas (tuple): decay rates of the first and second moments (default: (0.9, 0.999)).\n"
        "eps (float): added to the denominator for stability (default: 1e-8)."
    ),
    "foreach_arg": "<value> (bool, optional): accepted for compatibility; the step runs the same either way.",
    "maximize_arg": "maximize (bool): ascend the objective instead of descending it.",
    "differentiable_arg": "differentiable (bool): run the step with autograd recording it.",
}


def _steps_by_group(cls: _OptimizerT) -> _OptimizerT:
    """Class decorator: give ``cls`` its ``step``, which computes the closure's loss and then
    updates the parameter groups one by one with ``cls._step_group(group)``, and fill its
    docstring's ``{name}`` lines from ``_DOC_PIECES``."""

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[no-untyped-def]
        """Perform one optimization step.

        Args:
            closure (Callable, optional): re-evaluates the model and returns the loss; it runs
                with gradients enabled and its result is returned.
        """
        loss = _closure_loss(closure)
        for group in self.param_groups:
            self._step_group(group)
        return loss

    step.__module__ = cls.__module__
    step.__qualname__ = f"{cls.__qualname__}.step"
    cls.step = _use_grad_for_differentiable(step)  # type: ignore[method-assign]
    return _docs.with_doc_pieces(_DOC_PIECES)(cls)


# --- the base class ------------------------------------------------------------------------------


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): tensors to optimize, ``(name, tensor)`` pairs (as from
            ``named_parameters()``), or dicts defining parameter groups (each with a ``"params"``
            entry and optional per-group hyper-parameters).
        defaults (dict): default values of the optimization options, used by groups that do not
            give their own.

    ``state`` maps each parameter tensor (hashed by identity) to a dict of its buffers.

    Example:
        >>> w = ferrograd.zeros(3, requires_grad=True)
        >>> opt = ferrograd.optim.SGD([w], lr=0.1)
        >>> w.grad = ferrograd.ones(3)
        >>> opt.step()
        >>> w
        tensor([-0.1000, -0.1000, -0.1000], requires_grad=True)
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {_typename(params)}"
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # Pickling keeps everything but the hooks, as torch does.
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    # What ``__setstate__`` gives an optimizer pickled by an older version: the options its groups
    # may lack (with their values) and the state entries such versions stored as Python numbers
    # (now 0-dim tensors).
    _restored_options: dict[str, Any] = {}
    _scalar_state: tuple[str, ...] = ()
    # The options of an algorithm class's groups (its ``defaults``), separated by spaces, in the
    # order of torch's groups.
    _options = ""

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        self._set_missing_options(self._restored_options, self._scalar_state)

    def _set_missing_options(self, options: dict[str, Any], scalar_state: tuple[str, ...] = ()) -> None:
        """What ``__setstate__`` adds to an optimizer pickled by an older version: the ``options``
        a group lacks, and tensors for the state entries named in ``scalar_state`` (``step``, ...)
        that old checkpoints stored as Python numbers."""
        for group in self.param_groups:
            for key, value in options.items():
                group.setdefault(key, value)
        for p_state in self.state.values():
            if not isinstance(p_state, dict):
                continue
            for name in scalar_state:
                if name in p_state and not isinstance(p_state[name], Tensor):
                    p_state[name] = _fg.tensor(float(p_state[name]), dtype=_get_scalar_dtype())

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {_format_value(group[key])}\n"
        return text + ")"

    # --- step and its hooks ----------------------------------------------------------------------

    def _patch_step_function(self) -> None:
        """Wrap the concrete class's ``step`` once so that every call runs the step hooks."""
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        # Only the most derived class's ``step`` is wrapped (once), so a subclass whose ``step``
        # is inherited shares the wrapped function instead of wrapping it again.
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = Optimizer._with_step_hooks(cls.step)  # type: ignore[method-assign]

    @staticmethod
    def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(step)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self = args[0]
            name = f"Optimizer.step#{self.__class__.__name__}.step"
            with _fg.autograd.profiler.record_function(name):
                for pre_hook in itertools.chain(
                    _global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()
                ):
                    result = pre_hook(self, args, kwargs)
                    if result is not None:
                        if isinstance(result, tuple) and len(result) == 2:
                            args, kwargs = result
                        else:
                            raise RuntimeError(
                                f"{step} must return None or a tuple of (new_args, new_kwargs), "
                                f"but got {result}."
                            )
                out = step(*args, **kwargs)
                for post_hook in itertools.chain(
                    self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()
                ):
                    post_hook(self, args, kwargs)
                return out

        wrapper.hooked = True  # type: ignore[attr-defined]
        return wrapper

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Register ``hook(optimizer, args, kwargs)`` to run before this optimizer's ``step``.

        The hook may return ``None`` or a ``(new_args, new_kwargs)`` pair used for the step.
        """
        handle = _HookHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Register ``hook(optimizer, args, kwargs)`` to run after this optimizer's ``step``."""
        handle = _HookHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _HookHandle:
        """Register ``hook(optimizer)`` to run before ``state_dict()`` builds its result."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> _HookHandle:
        """Register ``hook(optimizer, state_dict)``; a returned dict replaces the result."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> _HookHandle:
        """Register ``hook(optimizer, state_dict)``; a returned dict is loaded instead."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> _HookHandle:
        """Register ``hook(optimizer)`` to run after ``load_state_dict``."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _register(
        hooks: OrderedDict[int, Callable[..., Any]], hook: Callable[..., Any], prepend: bool
    ) -> _HookHandle:
        handle = _HookHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step; subclasses implement the update rule."""
        raise NotImplementedError

    def _step_group(self, group: dict[str, Any]) -> None:
        """The update of one parameter group, for the ``step`` that ``_steps_by_group`` gives
        a subclass."""
        raise NotImplementedError

    # --- what the algorithm classes share ------------------------------------------------------

    @staticmethod
    def _check_options(**options: Any) -> None:
        """torch's checks of a constructor's hyper-parameters, in the order given: ``lr`` with
        :func:`_check_lr`, ``betas`` with :func:`_check_betas`, any other (named as torch's message
        names it, e.g. ``epsilon``) with :func:`_check_non_negative`."""
        for name, value in options.items():
            if name == "lr":
                _check_lr(value)
            elif name == "betas":
                _check_betas(value)
            else:
                _check_non_negative(value, name)

    def _defaults(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """A constructor's ``defaults`` dict: those of its ``arguments`` (its ``locals()``) named in
        the class's ``_options``, in that order."""
        return {name: arguments[name] for name in self._options.split()}

    @staticmethod
    def _state_lists(states: list[dict[str, Any]], *names: str | None) -> list[list[Any]]:
        """For each of ``names``, that entry of every state in ``states`` (for a ``None`` name, an
        empty list): the state lists that a functional step takes."""
        return [[] if name is None else [state[name] for state in states] for name in names]

    @staticmethod
    def _group_options(group: dict[str, Any], names: str) -> dict[str, Any]:
        """The options ``names`` (separated by spaces) of a parameter group, as keyword arguments
        of a functional step."""
        return {name: group[name] for name in names.split()}

    # --- groups, gradients -----------------------------------------------------------------------

    @staticmethod
    def _params_with_grad(group: dict[str, Any]) -> tuple[list[Tensor], list[Tensor]]:
        """The parameters of ``group`` that have a gradient, in order, and those gradients:
        what every group's update starts from."""
        params = [p for p in group["params"] if p.grad is not None]
        return params, [p.grad for p in params]

    def _group_states(
        self, group: dict[str, Any], *names: str | None
    ) -> tuple[list[Tensor], list[Tensor], list[dict[str, Any]]]:
        """The parameters of ``group`` that have a gradient, their gradients and their states.

        A state still empty is created first: a ``step`` count and, under each of ``names``
        (``None`` names none), zeros like the parameter. Each state then goes through
        ``_check_state``.
        """
        params, grads = self._params_with_grad(group)
        states = []
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _fg.tensor(0.0, dtype=_get_scalar_dtype())
                for name in filter(None, names):
                    state[name] = _fg.zeros_like(p)
            self._check_state(group, state)
            states.append(state)
        return params, grads, states

    def _check_state(self, group: dict[str, Any], state: dict[str, Any]) -> None:
        """Checks of a parameter's state before a step (none here; subclasses add theirs)."""

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group, filling options it does not give from ``defaults``.

        Example:
            >>> a, b = ferrograd.zeros(2, requires_grad=True), ferrograd.zeros(2, requires_grad=True)
            >>> opt = ferrograd.optim.SGD([a], lr=0.1)
            >>> opt.add_param_group({"params": [b], "lr": 0.01})
            >>> [g["lr"] for g in opt.param_groups]
            [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)

        tensors: list[Any] = []
        names: list[Any] = []
        for entry in param_group["params"]:
            if isinstance(entry, tuple):
                names.append(entry[0])
                tensors.append(entry[1])
            else:
                tensors.append(entry)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {_typename(param)}"
                )
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)

        if len(tensors) != len(set(tensors)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will "
                "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )

        seen: set[Tensor] = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors.

        Args:
            set_to_none (bool): set ``.grad`` to ``None`` (default) instead of filling it with
                zeros. Optimizers skip parameters whose grad is ``None`` but do step (weight decay,
                momentum) parameters whose grad is zero.
        """
        params = itertools.chain.from_iterable(group["params"] for group in self.param_groups)
        with _fg.autograd.profiler.record_function(self._zero_grad_profile_name):
            _grads.zero_grads(params, set_to_none)

    # --- state dicts -----------------------------------------------------------------------------

    def state_dict(self) -> StateDict:
        """Return the optimizer state as a dict with ``"state"`` and ``"param_groups"``.

        Parameters are replaced by integer indices, numbered across groups in order, so the dict
        does not refer to the tensors being optimized. The state buffers are returned as they are
        (not copied); ``copy.deepcopy`` the result to snapshot it.

        Example:
            >>> w = ferrograd.zeros(2, requires_grad=True)
            >>> opt = ferrograd.optim.SGD([w], lr=0.1, momentum=0.9)
            >>> w.grad = ferrograd.ones(2)
            >>> opt.step()
            >>> opt.state_dict()["state"]
            {0: {'momentum_buffer': tensor([1., 1.])}}
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        index_of: dict[int, int] = {}
        start = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index_of.setdefault(id(p), i)
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        result: StateDict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            replaced = post_hook(self, result)
            if replaced is not None:
                result = replaced
        return result

    @staticmethod
    def _cast_state_value(param: Tensor, value: Tensor, key: Any, group: dict[str, Any] | None) -> Tensor:
        # 'step' keeps its own dtype (float32 counter) unless the group runs fused/capturable,
        # where it must be float32 next to the param; other floating buffers follow the param.
        if key == "step":
            if group is not None and (group.get("fused") or group.get("capturable")):
                return value.to(dtype=_fg.float32)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load optimizer state produced by :meth:`state_dict`.

        Groups are matched by position and must hold the same number of parameters. Floating
        state tensors are cast to their parameter's dtype (the ``step`` counter keeps its own).
        Per-group options (such as ``lr``) come from ``state_dict``.

        Example:
            >>> w = ferrograd.zeros(2, requires_grad=True)
            >>> opt = ferrograd.optim.Adam([w], lr=0.1)
            >>> fresh = ferrograd.optim.Adam([w])
            >>> fresh.load_state_dict(opt.state_dict())
            >>> fresh.param_groups[0]["lr"]
            0.1
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            replaced = pre_hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups, strict=True)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )

        id_map = dict(
            zip(
                itertools.chain.from_iterable(g["params"] for g in saved_groups),
                itertools.chain.from_iterable(g["params"] for g in groups),
                strict=True,
            )
        )
        group_of_index = {i: g for g in state_dict["param_groups"] for i in g["params"]}

        def cast(param: Tensor, value: Any, group: dict[str, Any] | None, key: Any = None) -> Any:
            if isinstance(value, Tensor):
                return Optimizer._cast_state_value(param, value, key, group)
            if isinstance(value, dict):
                return {k: cast(param, v, group, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, group) for v in value)
            return value

        state: defaultdict[Any, Any] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = cast(param, value, group_of_index.get(key))
            else:
                # State not tied to a parameter is kept as is, for compatibility.
                state[key] = value

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups, strict=True)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)
