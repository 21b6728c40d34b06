"""What a weights-only load (``ferrograd.load``'s default) may call besides
containers: the allowlist of ferrograd globals and, for each callable, the
rule that checks its arguments and bounds what the call may allocate."""

from __future__ import annotations

import sys
from typing import Any

from . import _core, _unpickler


def _global_name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def _default_allowed() -> dict[str, Any]:
    """The globals a weights-only load resolves: containers, the ferrograd
    types a checkpoint holds, and nothing that can run code. Each is called
    only with arguments its rule (in ``_unpickler`` or :func:`_rules`)
    accepts."""
    import builtins
    import codecs
    import collections

    import ferrograd

    allowed: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        # protocol 2 writes ``bytes`` as a call to ``_codecs.encode``.
        "_codecs.encode": codecs.encode,
        "ferrograd._dtype_from_name": ferrograd._dtype_from_name,
        "ferrograd.device": _core.device,
        "ferrograd._size.Size": ferrograd.Size,
        "ferrograd._core._rebuild_tensor": _core._rebuild_tensor,
    }
    for name in ("set", "frozenset", "complex", "slice", "range", "bytearray", "list", "dict", "tuple"):
        allowed[f"builtins.{name}"] = getattr(builtins, name)
    for name in ("int", "float", "str", "bytes", "bool"):
        allowed[f"builtins.{name}"] = getattr(builtins, name)
    param, rebuild = _parameter_globals()
    if param is not None:
        allowed[_global_name(param)] = param
    # ``pickle.dump`` of a Parameter goes through this rebuild function; the
    # class it receives is itself resolved through this allowlist.
    if rebuild is not None:
        allowed[_global_name(rebuild)] = rebuild
    return allowed


def _parameter_globals() -> tuple[Any, Any]:
    import ferrograd

    param = getattr(getattr(ferrograd, "nn", None), "Parameter", None)
    if param is None:
        return None, None
    return param, getattr(sys.modules.get(param.__module__), "_rebuild_parameter", None)


# The rules of the ferrograd callables a weights-only load may call: each
# checks the positional arguments and returns the bytes the call may
# allocate (see _unpickler.CallRule).


def _ints(v: Any) -> bool:
    return isinstance(v, tuple | list) and all(type(n) is int for n in v)


def _dtype_rule(args: tuple[Any, ...]) -> int:
    if len(args) != 1 or not isinstance(args[0], str):
        raise _unpickler.refuse("ferrograd._dtype_from_name takes one dtype name")
    return 0


def _device_rule(args: tuple[Any, ...]) -> int:
    if not (1 <= len(args) <= 2 and isinstance(args[0], str | int) and all(type(a) is int for a in args[1:])):
        raise _unpickler.refuse("ferrograd.device takes a device name and an optional index")
    return 64


def _size_rule(args: tuple[Any, ...]) -> int:
    if len(args) != 1 or not _ints(args[0]):
        raise _unpickler.refuse("ferrograd.Size takes one tuple of ints")
    return 64 + 8 * len(args[0])


def _rebuild_tensor_rule(args: tuple[Any, ...]) -> int:
    # (data, dtype name, shape, strides, requires_grad), as Tensor.__reduce__
    # writes it; the rebuild checks that shape and strides fit the data, and
    # copies it once.
    if not (
        len(args) == 5
        and isinstance(args[0], bytes | bytearray)
        and isinstance(args[1], str)
        and _ints(args[2])
        and _ints(args[3])
        and isinstance(args[4], bool)
    ):
        raise _unpickler.refuse(
            "ferrograd._core._rebuild_tensor takes (bytes, dtype name, shape, strides, requires_grad)"
        )
    return 256 + len(args[0])


def _parameter_rule(args: tuple[Any, ...]) -> int:
    if not (
        len(args) <= 2
        and all(isinstance(a, _core.Tensor) for a in args[:1])
        and all(isinstance(a, bool) for a in args[1:])
    ):
        raise _unpickler.refuse("ferrograd.nn.Parameter takes a tensor and a bool")
    return 256


def _rebuild_parameter_rule(args: tuple[Any, ...]) -> int:
    # (data, requires_grad, cls, state): cls was resolved through the
    # allowlist; state holds attributes, never dunder names.
    if not 2 <= len(args) <= 4:
        raise _unpickler.refuse("ferrograd.nn.parameter._rebuild_parameter takes 2 to 4 arguments")
    data, requires_grad = args[0], args[1]
    cls = args[2] if len(args) > 2 else None
    state = args[3] if len(args) > 3 else None
    if not (
        isinstance(data, _core.Tensor)
        and isinstance(requires_grad, bool)
        and (cls is None or (isinstance(cls, type) and issubclass(cls, _core.Tensor)))
        and (state is None or (isinstance(state, dict) and all(_attribute_name(k) for k in state)))
    ):
        raise _unpickler.refuse(
            "ferrograd.nn.parameter._rebuild_parameter takes (tensor, bool, Tensor subclass, attribute dict)"
        )
    return 256 + 104 * len(state or ())


def _attribute_name(key: Any) -> bool:
    return isinstance(key, str) and not key.startswith("__")


def _rules() -> dict[Any, _unpickler.CallRule]:
    import ferrograd

    rules: dict[Any, _unpickler.CallRule] = {
        ferrograd._dtype_from_name: _dtype_rule,
        _core.device: _device_rule,
        ferrograd.Size: _size_rule,
        _core._rebuild_tensor: _rebuild_tensor_rule,
    }
    param, rebuild = _parameter_globals()
    if param is not None:
        rules[param] = _parameter_rule
    if rebuild is not None:
        rules[rebuild] = _rebuild_parameter_rule
    return rules
