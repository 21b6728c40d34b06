"""``Module``: the base class of every layer, with torch.nn.Module's
registration, traversal, state_dict, conversion and hook behaviour."""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypeVar

import ferrograd
from ferrograd._core import Tensor

from ...utils._grads import zero_grads as _zero_grads
from ..parameter import Buffer, Parameter
from ._hooks import _BackwardHook as _BackwardHook
from ._hooks import _BackwardHookFunction as _BackwardHookFunction
from ._hooks import _call_callee, _call_with_hooks, _callees
from ._state_dict import STRUCTURE_EPOCH, _copy_local_state, _load_state_dict

__all__ = ["Module", "RemovableHandle"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _typename(obj: Any) -> str:
    """torch.typename: ``torch.FloatTensor`` for tensors, the qualified
    class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    if module in ("builtins", "__builtin__", None):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _addindent(s: str, num_spaces: int) -> str:
    """Indents every line of ``s`` but the first by ``num_spaces``."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    pad = " " * num_spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


def _check_new_name(module: Module, kind: str, registry: str, name: Any) -> None:
    """The checks of ``register_buffer`` and ``register_parameter`` on the
    ``name`` of a new ``kind`` (``"buffer"`` or ``"parameter"``) that goes
    into the module's dict ``registry``."""
    STRUCTURE_EPOCH[0] += 1
    if registry not in module.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    elif not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    elif "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    elif name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    elif hasattr(module, name) and name not in getattr(module, registry):
        raise KeyError(f"attribute '{name}' already exists")


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the missing and unexpected keys."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class RemovableHandle:
    r"""A handle that removes a hook from the dicts it was registered in.

    Example:
        >>> m = nn.Identity()
        >>> h = m.register_forward_hook(lambda mod, args, out: out * 10)
        >>> m(ferrograd.ones(1))
        tensor([10.])
        >>> h.remove()
        >>> m(ferrograd.ones(1))
        tensor([1.])
    """

    _next_id = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        extras = extra_dict if isinstance(extra_dict, (list, tuple)) else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)

    def remove(self) -> None:
        """Unregisters the hook; calling it again does nothing."""
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *args: Any) -> None:
        self.remove()


def _add_hook(
    hooks: OrderedDict[int, Callable[..., Any]],
    hook: Callable[..., Any],
    prepend: bool,
    flags: Sequence[tuple[dict[int, bool], bool]] = (),
) -> RemovableHandle:
    """Registers ``hook`` in ``hooks`` (first when ``prepend``), marked in each dict of
    ``flags`` whose flag is set; the handle removes it from all of them."""
    STRUCTURE_EPOCH[0] += 1  # compiled calls guard on which modules have hooks
    handle = RemovableHandle(hooks, extra_dict=[d for d, _ in flags])
    hooks[handle.id] = hook
    for d, flag in flags:
        if flag:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class _Extras(dict):
    # A dict that a weakref can point to (``dict`` itself cannot be).
    pass


_P = ParamSpec("_P")
_R = TypeVar("_R", covariant=True)


class _Forward(Protocol[_P, _R]):
    """What a module's ``forward`` takes and returns, for typing ``module(...)``."""

    def forward(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...


def _forward_unimplemented(self: Module, *input: Any) -> Any:
    """The computation of the module; every subclass defines it.

    Call the module (``module(x)``) rather than ``forward`` directly, so that
    its hooks run.
    """
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


def _member(mod: Module, name: str, is_kind: Callable[[Any], bool], kind: str) -> Any:
    """``mod``'s attribute ``name``, which ``is_kind`` must accept (torch's errors otherwise)."""
    if not hasattr(mod, name):
        raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
    value = getattr(mod, name)
    if not is_kind(value):
        raise AttributeError(f"`{name}` is not {kind}")
    return value


def _floating_cast(name: str, dtype: str) -> Any:
    """The ``Module`` method ``name``: floating point parameters and buffers cast to ``dtype``."""

    def cast(self: Module) -> Module:
        return self._cast_floating(getattr(ferrograd, dtype))

    cast.__name__, cast.__qualname__ = name, f"Module.{name}"
    cast.__doc__ = f"Casts floating point parameters and buffers to ``{dtype}``."
    return cast


class Module:
    r"""Base class for all neural network modules.

    Subclasses call ``super().__init__()`` and then assign parameters,
    buffers and submodules as attributes; they are registered in that order
    and found by :meth:`parameters`, :meth:`state_dict`, :meth:`to` and the
    rest.

    Example:
        >>> class Scale(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = nn.Parameter(ferrograd.ones(2))
        ...     def forward(self, x):
        ...         return self.w * x
        >>> Scale()(ferrograd.tensor([1.0, 2.0]))
        tensor([1., 2.], grad_fn=<MulBackward0>)
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        # Plain attribute writes: our own ``__setattr__`` reads these dicts.
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", _Extras())
        setattr_("_forward_hooks_always_called", _Extras())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", _Extras())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------
    # Registration

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        r"""Adds a buffer: state that is not a parameter, saved in
        :meth:`state_dict` unless ``persistent=False``.

        Example:
            >>> m = nn.Module()
            >>> m.register_buffer("running_mean", ferrograd.zeros(3))
            >>> m.running_mean, list(m.state_dict())
            (tensor([0., 0., 0.]), ['running_mean'])
        """
        _check_new_name(self, "buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        r"""Adds a parameter (or ``None``) under ``name``.

        Example:
            >>> m = nn.Module()
            >>> m.register_parameter("bias", nn.Parameter(ferrograd.zeros(3)))
            >>> [name for name, _ in m.named_parameters()]
            ['bias']
        """
        _check_new_name(self, "parameter", "_parameters", name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' "
                "as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        r"""Adds a child module (or ``None``) under ``name``.

        Example:
            >>> seq = nn.Sequential(nn.Linear(2, 2))
            >>> seq.add_module("act", nn.ReLU())
            >>> seq
            Sequential(
              (0): Linear(in_features=2, out_features=2, bias=True)
              (act): ReLU()
            )
        """
        STRUCTURE_EPOCH[0] += 1
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        elif not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        elif hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        elif "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        elif name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        r"""Alias for :meth:`add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        r"""The submodule at the dotted path ``target`` (``""`` is ``self``).

        Example:
            >>> net = nn.Sequential()
            >>> net.add_module("block", nn.Sequential(nn.Linear(2, 3), nn.ReLU()))
            >>> net.get_submodule("block.0")
            Linear(in_features=2, out_features=3, bias=True)
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            mod = _member(mod, item, lambda m: isinstance(m, Module), "an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        r"""Sets the submodule at the dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        r"""The parameter at the dotted path ``target`` (``"block.0.weight"``)."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        return _member(mod, param_name, lambda p: isinstance(p, Parameter), "an nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        r"""The buffer at the dotted path ``target``."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        return _member(mod, buffer_name, lambda _: buffer_name in mod._buffers, "a buffer")

    def get_extra_state(self) -> Any:
        r"""Extra state to put in :meth:`state_dict`; override together with
        :meth:`set_extra_state`."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state: Any) -> None:
        r"""Restores what :meth:`get_extra_state` returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # ------------------------------------------------------------------
    # Attribute access

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        STRUCTURE_EPOCH[0] += 1
        def remove_from(*dicts_or_sets: Any) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(torch.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)"
                        )
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    remove_from(self.__dict__, self._parameters, self._modules)
                    self.register_buffer(name, value, persistent)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        STRUCTURE_EPOCH[0] += 1
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = (
            list(dir(self.__class__))
            + list(self.__dict__.keys())
            + list(self._parameters.keys())
            + list(self._modules.keys())
            + list(self._buffers.keys())
        )
        # Names that are not identifiers (Sequential's "0") are left out.
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # Modules pickled by an older layout lack some of the hook dicts.
        defaults: dict[str, Callable[[], Any]] = {
            "_forward_pre_hooks": OrderedDict,
            "_forward_pre_hooks_with_kwargs": _Extras,
            "_forward_hooks": OrderedDict,
            "_forward_hooks_with_kwargs": _Extras,
            "_forward_hooks_always_called": _Extras,
            "_backward_pre_hooks": OrderedDict,
            "_backward_hooks": OrderedDict,
            "_state_dict_hooks": OrderedDict,
            "_state_dict_pre_hooks": OrderedDict,
            "_load_state_dict_pre_hooks": OrderedDict,
            "_load_state_dict_post_hooks": OrderedDict,
            "_non_persistent_buffers_set": set,
        }
        for k, make in defaults.items():
            if k not in self.__dict__:
                self.__dict__[k] = make()
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # ------------------------------------------------------------------
    # Traversal

    def _named_members(
        self, get_members_fn: Callable, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        # Tensors are compared by identity (``==`` on tensors is elementwise).
        memo: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k), v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        r"""The module's parameters (and, with ``recurse``, its descendants').

        Example:
            >>> model = nn.Linear(3, 2)
            >>> sum(p.numel() for p in model.parameters())
            8
        """
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        r"""``(name, parameter)`` pairs, names dotted from this module
        (``"block.0.weight"``); a shared parameter appears once unless
        ``remove_duplicate=False``."""
        yield from self._named_members(
            lambda module: module._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        r"""The module's buffers (and, with ``recurse``, its descendants')."""
        for _name, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        r"""``(name, buffer)`` pairs, as :meth:`named_parameters`."""
        yield from self._named_members(
            lambda module: module._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self) -> Iterator[Module]:
        r"""The immediate child modules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        r"""``(name, child)`` pairs of the immediate children, each child once."""
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        r"""This module and all its descendants, depth first, each once."""
        for _name, module in self.named_modules():
            yield module

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        r"""``(name, module)`` pairs for this module (name ``prefix``) and its
        descendants, depth first.

        Example:
            >>> net = nn.Sequential()
            >>> net.add_module("block", nn.Sequential(nn.Linear(2, 2), nn.ReLU()))
            >>> [name for name, _ in net.named_modules()]
            ['', 'block', 'block.0', 'block.1']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            submodule_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ------------------------------------------------------------------
    # Modes and gradients

    def train(self, mode: bool = True) -> Module:
        r"""Sets training mode (``mode=True``) or evaluation mode on this
        module and its descendants; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        r"""Evaluation mode: ``self.train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        r"""Sets ``requires_grad`` of every parameter; returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        r"""Resets the gradients of all parameters: to ``None`` (default), or
        to zeros in place with ``set_to_none=False``."""
        _zero_grads(self.parameters(), set_to_none)

    def share_memory(self) -> Module:
        r"""Returns ``self`` (ferrograd tensors already live in process memory)."""
        return self

    # ------------------------------------------------------------------
    # Conversion

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)

        for key, param in self._parameters.items():
            if param is None:
                continue
            with ferrograd.no_grad():
                param_applied = fn(param)
            out_param = self._swap_in(param, param_applied)
            if out_param is not param:
                self._parameters[key] = out_param
            if param.grad is not None:
                with ferrograd.no_grad():
                    grad_applied = fn(param.grad)
                if out_param is param:
                    if grad_applied is not param.grad:
                        param.grad = self._swap_in(param.grad, grad_applied)
                else:
                    out_param.grad = grad_applied.requires_grad_(param.grad.requires_grad)

        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    @staticmethod
    def _swap_in(old: Tensor, new: Tensor) -> Tensor:
        # torch swaps the new data into the old object (``old.data = new``);
        # ferrograd's ``.data =`` copies and needs the same shape and dtype,
        # so a converted dtype or layout gets a new Parameter instead.
        if new is old:
            return old
        if new.shape == old.shape and new.dtype == old.dtype and new.stride() == old.stride():
            old.data = new
            return old
        if isinstance(old, Parameter):
            return type(old)(new, old.requires_grad)
        return new

    def apply(self, fn: Callable[[Module], None]) -> Module:
        r"""Calls ``fn`` on every submodule (children first, then ``self``);
        returns ``self``.

        Example:
            >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
            >>> _ = net.apply(lambda m: print(type(m).__name__))
            Linear
            ReLU
            Sequential
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        r"""Converts floating point (and complex) parameters and buffers to a
        dtype, or moves them to a device (only the CPU exists).

        ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)``,
        each also by keyword; returns ``self``. ``memory_format=`` (e.g.
        ``ferrograd.channels_last``) lays out the 4-D and 5-D parameters and
        buffers in that format.

        Example:
            >>> model = nn.Linear(2, 2)
            >>> model.to(ferrograd.float64).weight.dtype
            ferrograd.float64
        """
        memory_format = kwargs.pop("memory_format", None)
        if memory_format is not None and not isinstance(memory_format, ferrograd.memory_format):
            raise TypeError(
                "to() received an invalid combination of arguments: memory_format must be "
                f"ferrograd.memory_format, not {type(memory_format).__name__}"
            )
        device, dtype = _parse_to(*args, **kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )

        def convert(t: Tensor) -> Tensor:
            if device is not None:
                t = t.to(device)
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                if t.is_complex() and not dtype.is_complex:
                    return t
                t = t.to(dtype)
            if memory_format is not None and t.dim() in (4, 5):
                t = t.to(memory_format=memory_format)
            return t

        return self._apply(convert)

    def cpu(self) -> Module:
        r"""Returns ``self`` (everything is on the CPU)."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type: Any) -> Module:
        r"""Casts all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def _cast_floating(self, dtype: Any) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    float = _floating_cast("float", "float32")
    double = _floating_cast("double", "float64")
    half = _floating_cast("half", "float16")
    bfloat16 = _floating_cast("bfloat16", "bfloat16")

    # ------------------------------------------------------------------
    # state_dict

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Any]:
        r"""An ``OrderedDict`` of parameters and persistent buffers, keyed by
        dotted names (``"block.0.weight"``); values are detached (they share
        memory with the module) unless ``keep_vars=True``.

        Example:
            >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1, bias=False))
            >>> list(net.state_dict())
            ['0.weight', '0.bias', '2.weight']
        """
        if args:
            # torch's old positional form: (destination, prefix, keep_vars).
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead.", FutureWarning, stacklevel=2
            )
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        persistent_buffers = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_state = {
            k: v
            for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
            if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        _copy_local_state(self, state_dict, prefix, local_state, assign, strict, missing_keys, error_msgs)

        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)

        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix) :].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        r"""Copies parameters and buffers from ``state_dict`` into this module
        and its descendants.

        With ``strict=True`` (default) missing or unexpected keys raise
        ``RuntimeError``; a shape mismatch always does. With ``assign=True``
        the state dict's tensors become the module's (parameters keep the
        module's ``requires_grad``) instead of being copied in.

        Returns:
            ``NamedTuple`` with ``missing_keys`` and ``unexpected_keys``.

        Example:
            >>> net, other = nn.Linear(2, 2), nn.Linear(2, 2)
            >>> net.load_state_dict(other.state_dict())
            <All keys matched successfully>
            >>> ferrograd.equal(net.weight, other.weight)
            True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys = _load_state_dict(self, state_dict, strict, assign)
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------------
    # Hooks

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        r"""Registers ``hook(module, args)`` (or ``hook(module, args, kwargs)``
        with ``with_kwargs=True``) to run before :meth:`forward`. A non-None
        result replaces the arguments: a tuple (a single value is wrapped), or
        ``(args, kwargs)`` with ``with_kwargs``.

        Example:
            >>> m = nn.Identity()
            >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
            >>> m(ferrograd.tensor([1.0, 2.0]))
            tensor([2., 4.])
            >>> h.remove()
        """
        return _add_hook(
            self._forward_pre_hooks, hook, prepend, [(self._forward_pre_hooks_with_kwargs, with_kwargs)]
        )

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        r"""Registers ``hook(module, args, output)`` (or ``hook(module, args,
        kwargs, output)`` with ``with_kwargs=True``) to run after
        :meth:`forward`; a non-None result replaces the output. With
        ``always_call=True`` the hook also runs when ``forward`` raises.

        Example:
            >>> m = nn.Identity()
            >>> h = m.register_forward_hook(lambda mod, args, out: out + 1)
            >>> m(ferrograd.tensor([1.0, 2.0]))
            tensor([2., 3.])
            >>> h.remove()
        """
        flags = [
            (self._forward_hooks_with_kwargs, with_kwargs),
            (self._forward_hooks_always_called, always_call),
        ]
        return _add_hook(self._forward_hooks, hook, prepend, flags)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        r"""Registers ``hook(module, grad_output)``, called when the
        gradients of the module's outputs are known; a non-None result (a
        tuple as long as ``grad_output``) replaces them.
        """
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        r"""Registers ``hook(module, grad_input, grad_output)``, called when
        the gradients of the module's inputs are computed. ``grad_input`` and
        ``grad_output`` are tuples with one entry per positional input and per
        output (``None`` for non-tensors and for tensors without gradient); a
        non-None result replaces ``grad_input``.

        Example:
            >>> m = nn.Linear(2, 1)
            >>> h = m.register_full_backward_hook(lambda mod, gi, go: print(go))
            >>> m(ferrograd.ones(1, 2)).sum().backward()
            (tensor([[1.]]),)
            >>> h.remove()
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        return _add_hook(self._backward_hooks, hook, prepend)

    # ------------------------------------------------------------------
    # Calling

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        forward_call = self.forward
        if self._backward_hooks or self._backward_pre_hooks or self._forward_hooks or self._forward_pre_hooks:
            return _call_with_hooks(self, forward_call, args, kwargs)
        if _callees.table is not None:  # inside a compiled function's eager part
            return _call_callee(self, forward_call, args, kwargs)
        return forward_call(*args, **kwargs)

    if TYPE_CHECKING:
        # `module(x)` takes the arguments of the module's `forward` and
        # returns its result type.
        def __call__(self: _Forward[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R: ...
    else:
        __call__ = _call_impl

    # ------------------------------------------------------------------
    # Printing

    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        r"""Extra text shown inside this module's repr (override it); one
        line or several."""
        return ""

    def __repr__(self) -> str:
        extra_lines: list[str] = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


def _parse_to(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """(device, dtype) from the forms ``Module.to`` accepts."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    tensor = kwargs.pop("tensor", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: unexpected {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            tensor = a
        elif isinstance(a, ferrograd.dtype):
            dtype = a
        elif isinstance(a, (str, ferrograd.device, int)) and not isinstance(a, bool):
            device = a
        elif isinstance(a, bool):
            continue  # non_blocking
        else:
            raise TypeError(f"to() received an invalid combination of arguments: got {type(a).__name__}")
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    if device is not None:
        device = ferrograd.device(device)
        if device.type != "cpu":
            raise RuntimeError(f"ferrograd runs on the CPU only; got device {device}")
    return device, dtype
