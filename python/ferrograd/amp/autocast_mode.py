"""CPU autocast: regions in which the ops on ``_op_lists`` choose their own
precision (products and convolutions in bfloat16 or float16, losses,
reductions and decompositions in float32).

The state is per thread and lives in the extension (``_core._autocast_*``).
Module functions on the lists carry a cast policy (their ``_autocast``
slot), and the extension hands their calls to :func:`_autocast_call` while
autocast is on; the products among the Tensor methods cast in the extension
itself, and the other listed Tensor methods are wrapped here.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import ferrograd as _fg

from .. import _core
from ._op_lists import FP32, LOWER, PROMOTE

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]

_F = TypeVar("_F", bound=Callable[..., Any])

# Policy codes shared with the extension.
_LOWER, _FP32, _PROMOTE = 1, 2, 3

# Device types torch accepts in a device string; autocast runs on "cpu"
# here, and is disabled with a warning for the accelerators ferrograd lacks.
_KNOWN_DEVICES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
    "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)  # fmt: skip

# The Tensor methods the extension casts itself (the products).
_CAST_IN_EXTENSION = frozenset({
    "Tensor.mm", "Tensor.bmm", "Tensor.matmul", "Tensor.__matmul__", "Tensor.__rmatmul__", "Tensor.addmm",
    "Tensor.baddbmm", "Tensor.addbmm",
})  # fmt: skip


def _check_device(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type.split(":")[0] not in _KNOWN_DEVICES:
        known = ", ".join(_KNOWN_DEVICES)
        raise RuntimeError(f"Expected one of {known} device type at start of device string: {device_type}")
    return device_type


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on ``device_type`` (``"cpu"`` here).

    Args:
        device_type (str): a device type such as ``"cpu"`` or ``"cuda"``.

    Example:
        >>> ferrograd.amp.is_autocast_available("cpu")
        True
    """
    return _check_device(device_type) == "cpu"


def _flatten(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The tensors among the arguments and inside list/tuple arguments."""
    found = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, _core.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(x for x in a if isinstance(x, _core.Tensor))
    return found


def _autocast_call(kind: int, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Runs ``fn`` (an op of policy ``kind``) with its tensor arguments cast,
    and autocast suspended while it runs. Calls with an explicit ``out=`` or
    ``dtype=`` are not autocast, as in torch."""
    if kwargs.get("out") is not None or kwargs.get("dtype") is not None:
        return fn(*args, **kwargs)
    tensors = _flatten(args, kwargs)
    if tensors:
        cast = iter(_core._autocast_cast(kind, tensors))
        swap = {id(t): next(cast) for t in tensors}

        def sub(a: Any) -> Any:
            if isinstance(a, _core.Tensor):
                return swap.get(id(a), a)
            if isinstance(a, (list, tuple)) and any(isinstance(x, _core.Tensor) for x in a):
                return type(a)(sub(x) for x in a)
            return a

        args = tuple(sub(a) for a in args)
        kwargs = {k: sub(v) for k, v in kwargs.items()}
    _core._autocast_suspend(1)
    try:
        return fn(*args, **kwargs)
    finally:
        _core._autocast_suspend(-1)


def _method(kind: int, original: Callable[..., Any]) -> Callable[..., Any]:
    """A Tensor method that casts its arguments while autocast is on."""

    @functools.wraps(original)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _core._autocast_active():
            return _autocast_call(kind, original, self, *args, **kwargs)
        return original(self, *args, **kwargs)

    return method


def _install() -> None:
    """Gives every listed op its cast policy (once, at import)."""
    _core._set_autocast_hook(_autocast_call)
    import ferrograd.nn.functional  # noqa: F401  (the listed functions live there)

    for kind, names in ((_LOWER, LOWER), (_FP32, FP32), (_PROMOTE, PROMOTE)):
        for qual in sorted(names):
            *path, name = qual.split(".")
            if path == ["Tensor"]:
                if qual not in _CAST_IN_EXTENSION:
                    setattr(_core.Tensor, name, _method(kind, getattr(_core.Tensor, name)))
                continue
            owner: Any = _fg
            for part in path:
                owner = getattr(owner, part)
            fn = getattr(owner, name)
            if type(fn) is not _core.routed_function:
                raise RuntimeError(f"autocast: {qual} is not a routed function")
            fn._autocast = kind


class autocast:
    """A context manager (or decorator) in which ops run in the precision
    autocast chooses for each: on the CPU, products and convolutions in
    ``dtype`` (bfloat16 by default), losses, reductions and decompositions
    in float32, and the joins (``cat``, ``stack``) in the widest input type.

    Gradients flow back through the casts, so each parameter's ``.grad``
    keeps the parameter's own dtype. Regions nest; an inner
    ``autocast(..., enabled=False)`` turns it off, and the state is per
    thread. With ``cache_enabled``, the cast of a parameter (a leaf that
    requires grad) is made once per outermost region and reused.

    Args:
        device_type (str): ``"cpu"``. Other accelerators are not present:
            autocast for them is disabled with a warning, as torch does
            without the device.
        dtype (ferrograd.dtype, optional): the lower precision,
            ``bfloat16`` or ``float16``. Default: the thread's autocast
            dtype (initially ``bfloat16``).
        enabled (bool): whether autocast is on in the region. Default: True.
        cache_enabled (bool, optional): whether parameter casts are cached.
            Default: the current setting (initially True).

    Example:
        >>> w = ferrograd.ones(3, 2, requires_grad=True)
        >>> with ferrograd.autocast("cpu", dtype=ferrograd.bfloat16):
        ...     y = ferrograd.ones(4, 3) @ w
        >>> y.dtype
        ferrograd.bfloat16
        >>> y.float().sum().backward()
        >>> w.grad.dtype
        ferrograd.float32
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _check_device(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._enabled = bool(enabled)
        self._cache_enabled = _core._autocast_is_cache_enabled() if cache_enabled is None else cache_enabled
        if self.device != "cpu":
            if self._enabled:
                warnings.warn(f"User provided device_type of '{self.device}', but the device is not "
                              "available. Disabling autocast.", stacklevel=2)
            self._enabled = False
        elif self._enabled and self.fast_dtype not in (_fg.bfloat16, _fg.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                          stacklevel=2)
            self._enabled = False

    def __enter__(self) -> None:
        self.prev = _core._autocast_is_enabled() if self.device == "cpu" else False
        self.prev_dtype = _core._autocast_get_dtype()
        self.prev_cache_enabled = _core._autocast_is_cache_enabled()
        if self.device != "cpu":
            return
        _core._autocast_set_enabled(self._enabled)
        if self._enabled:
            _core._autocast_set_dtype(self.fast_dtype)
        _core._autocast_increment_nesting()
        _core._autocast_set_cache_enabled(self._cache_enabled)

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if self.device != "cpu":
            return False
        _core._autocast_decrement_nesting()  # the outermost exit drops the cached casts
        _core._autocast_set_enabled(self.prev)
        _core._autocast_set_dtype(self.prev_dtype)
        _core._autocast_set_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: _F) -> _F:
        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device, dtype=self.fast_dtype, enabled=self._enabled,
                          cache_enabled=self._cache_enabled):
                return func(*args, **kwargs)

        return decorated  # type: ignore[return-value]


# ----------------------------------------------------------- state queries


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on in this thread for ``device_type``.

    Without an argument it answers for CUDA, as torch does (always False
    here); pass ``"cpu"`` for the CPU state.

    Args:
        device_type (str, optional): the device type. Default: ``"cuda"``.

    Example:
        >>> with ferrograd.autocast("cpu"):
        ...     ferrograd.is_autocast_enabled("cpu")
        True
    """
    if device_type is None:
        return False
    return _check_device(device_type) == "cpu" and _core._autocast_is_enabled()


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turns autocast on or off for ``device_type`` in this thread (what
    :class:`autocast` does on entry and exit).

    Args:
        device_type (str): the device type (``"cpu"``).
        enabled (bool): the new state.
    """
    if _check_device(device_type) == "cpu":
        _core._autocast_set_enabled(bool(enabled))


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype autocast uses for ``device_type`` in this
    thread (``bfloat16`` for the CPU unless set otherwise; ``float16`` for
    the other device types).

    Args:
        device_type (str): the device type.

    Example:
        >>> ferrograd.get_autocast_dtype("cpu")
        ferrograd.bfloat16
    """
    return _core._autocast_get_dtype() if _check_device(device_type) == "cpu" else _fg.float16


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Sets the dtype autocast uses for ``device_type`` in this thread.

    Args:
        device_type (str): the device type (``"cpu"``).
        dtype (ferrograd.dtype): the lower precision.
    """
    if _check_device(device_type) == "cpu":
        _core._autocast_set_dtype(dtype)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.", DeprecationWarning,
                  stacklevel=3)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return _core._autocast_is_enabled()


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled("cpu", enabled)``.

    Args:
        enabled (bool): the new state.
    """
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    _core._autocast_set_enabled(bool(enabled))


def get_autocast_cpu_dtype() -> Any:
    """Deprecated: ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return _core._autocast_get_dtype()


def set_autocast_cpu_dtype(dtype: Any) -> None:
    """Deprecated: ``set_autocast_dtype("cpu", dtype)``.

    Args:
        dtype (ferrograd.dtype): the lower precision.
    """
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    _core._autocast_set_dtype(dtype)


def autocast_increment_nesting() -> int:
    """Counts one more autocast region entered in this thread; returns the
    depth."""
    return _core._autocast_increment_nesting()


def autocast_decrement_nesting() -> int:
    """Counts one autocast region left in this thread; returns the depth
    (the parameter-cast cache is dropped when it reaches 0)."""
    return _core._autocast_decrement_nesting()


def clear_autocast_cache() -> None:
    """Drops this thread's cached parameter casts."""
    _core._autocast_clear_cache()


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches parameter casts in this thread."""
    return _core._autocast_is_cache_enabled()


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Sets whether autocast caches parameter casts in this thread.

    Args:
        enabled (bool): the new setting.
    """
    _core._autocast_set_cache_enabled(bool(enabled))


# ------------------------------------------------- custom Function helpers


def custom_fwd(fwd: Any = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorates the ``forward`` of a custom ``autograd.Function`` for use
    inside autocast regions.

    Without ``cast_inputs`` the forward runs under the surrounding autocast
    state, which is recorded so that :func:`custom_bwd` runs the backward
    under the same state. With ``cast_inputs``, inside an autocast region
    the forward's floating tensor arguments are cast to ``cast_inputs`` and
    it runs with autocast off.

    Args:
        fwd (callable, optional): the forward (when used without arguments).
        device_type (str): the device type (``"cpu"``).
        cast_inputs (ferrograd.dtype, optional): the dtype to run in.
    """
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    _check_device(device_type)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_on = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not autocast_on:
            return fwd(*args, **kwargs)

        def cast(v: Any) -> Any:
            if isinstance(v, _core.Tensor) and v.is_floating_point():
                return v.to(cast_inputs)
            if isinstance(v, (list, tuple)):
                return type(v)(cast(x) for x in v)
            if isinstance(v, dict):
                return {k: cast(x) for k, x in v.items()}
            return v

        with autocast(device_type, enabled=False):
            return fwd(*cast(args), **cast(kwargs))

    return decorate_fwd


def custom_bwd(bwd: Any = None, *, device_type: str) -> Any:
    """Decorates the ``backward`` of a custom ``autograd.Function`` so that
    it runs under the autocast state its :func:`custom_fwd` forward saw.

    Args:
        bwd (callable, optional): the backward (when used without arguments).
        device_type (str): the device type (``"cpu"``).
    """
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    _check_device(device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)

    return decorate_bwd
