"""Module functions that ``vmap`` takes over while it runs.

Each public function of ``ferrograd``, ``ferrograd.nn.functional`` and
``ferrograd.linalg`` is a ``_core.routed_function``: outside ``vmap`` it
calls the implementation directly; while a ``vmap`` runs it calls the
batching dispatcher, made on first use by the dispatcher factory that
``func._vmap`` installs here when it is imported (``set_dispatcher``; this
module imports nothing from ``func``). The choice is made per call in
Rust, so names bound before ``vmap`` (``from ferrograd import cat``) batch
like module attributes, and no module is modified while ``vmap`` runs.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Mapping
from typing import Any

from . import _core

# Functions that never see batched tensors and are not random ops: left as
# they are (state, configuration, creation from data, serialization).
NO_DISPATCH = frozenset({
    "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "set_default_dtype",
    "get_default_dtype", "set_num_threads", "get_num_threads", "is_grad_enabled", "set_grad_enabled",
    "is_inference_mode_enabled", "set_default_device", "get_default_device", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "load", "save", "vmap",
    "promote_types", "broadcast_shapes", "tensor", "as_tensor", "from_numpy", "from_dlpack", "zeros", "ones",
    "empty", "full", "arange", "eye", "linspace", "logspace", "compile", "no_grad", "enable_grad",
    "inference_mode",
})  # fmt: skip

# The routed function of each implementation (by id), for ``vmap`` of an
# implementation reached another way (``vmap(ferrograd.Tensor.sum)``).
BY_IMPLEMENTATION: dict[int, Any] = {}


# The vmap dispatcher factory (``func._vmap.dispatcher``), installed by
# ``func._vmap`` when it is imported. A routed function calls it only while
# a vmap runs, so only after ``func._vmap`` (which runs every vmap) has been
# imported; the no-vmap path never reads it.
_dispatcher: Callable[[str, Callable[..., Any]], Any] | None = None


def set_dispatcher(factory: Callable[[str, Callable[..., Any]], Any]) -> None:
    """Installs ``factory(qual, fn)``, which makes the vmap dispatcher of
    the module function ``qual`` implemented by ``fn``."""
    global _dispatcher
    _dispatcher = factory


def _factory(qual: str, fn: Callable[..., Any]) -> Callable[[], Any]:
    def make() -> Any:
        if _dispatcher is None:
            raise RuntimeError(f"{qual}: no vmap dispatcher is installed (ferrograd.func._vmap not imported)")
        return _dispatcher(qual, fn)

    return make


def torch_errors(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` (a function written in Python) raising torch's exception types
    for arguments of a type it cannot take: Python's own errors from
    inside it (an ``AttributeError`` from a number where a tensor belongs,
    an ``OverflowError`` from a negative size) become the ``TypeError`` and
    ``RuntimeError`` torch raises from its argument parser."""
    if getattr(fn, "_torch_errors", False):
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            kinds = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"{name}(): an argument of type ({kinds}) is not accepted: {e}") from e
        except OverflowError as e:
            raise RuntimeError(f"{name}(): {e}") from e

    call._torch_errors = True  # type: ignore[attr-defined]
    return call


def route(name: str, fn: Callable[..., Any], module: str, prefix: str = "", doc: str | None = None) -> Any:
    """The routed function of ``fn``, named ``name`` in module ``module``
    (vmap rule name ``prefix + name``), with docstring ``doc`` (default:
    ``fn``'s)."""
    impl = torch_errors(fn, name) if isinstance(fn, types.FunctionType) else fn
    routed = _core.routed_function(impl, _factory(prefix + name, impl))
    routed.__name__ = routed.__qualname__ = name
    routed.__module__ = module
    routed.__doc__ = doc if doc is not None else getattr(fn, "__doc__", None)
    BY_IMPLEMENTATION.setdefault(id(fn), routed)
    return routed


def route_module(
    namespace: dict[str, Any], module: str, prefix: str, docs: Mapping[str, str] | None = None
) -> None:
    """Replaces the public functions in ``namespace`` (a module's globals,
    module name ``module``, rule prefix ``prefix``) by routed functions.

    A routed function takes its docstring from ``docs`` when ``docs`` has
    its name (how module functions that are Tensor methods or aliases get
    their own module-level docs), else from its implementation. Every name
    in ``docs`` must be routed (a doc for a function left as it is would be
    lost silently).
    """
    for name, fn in list(namespace.items()):
        if (name.startswith("_") or name in NO_DISPATCH or not callable(fn)
                or isinstance(fn, (type, types.ModuleType)) or type(fn) is _core.routed_function):
            continue
        namespace[name] = route(name, fn, module, prefix, docs[name] if docs and name in docs else None)
    unrouted = [name for name in docs or () if type(namespace.get(name)) is not _core.routed_function]
    if unrouted:
        raise RuntimeError(f"docs for functions {module} does not route: {unrouted}")
