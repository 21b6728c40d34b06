"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode`` and ``set_multithreading_enabled``.

Each is a context manager and a function decorator. The modes are
thread-local (they live in the Rust core), except multithreading, which is
process-wide as in torch.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _core

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "set_multithreading_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]

is_grad_enabled = _core.is_grad_enabled
is_inference_mode_enabled = _core.is_inference_mode_enabled


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generators)."""

    def __call__(self, func: F) -> F:
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                with self.clone():
                    try:
                        response = gen.send(None)
                    except StopIteration as e:
                        return e.value
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:  # forwarded into the generator
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            try:
                                response = gen.send(request)
                            except StopIteration as e:
                                return e.value

            return gen_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __enter__(self) -> None:
        raise NotImplementedError  # overridden by every mode below

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError  # overridden by every mode below


class no_grad(_DecoratorContextManager):
    """Disables gradient recording on this thread inside the block."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _core.is_grad_enabled()
        _core._set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        _core._set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording on this thread inside the block."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _core.is_grad_enabled()
        _core._set_grad_enabled(True)

    def __exit__(self, *exc: object) -> None:
        _core._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode to ``mode``: immediately when called as a function, and
    for the block when used as a context manager (restored on exit)."""

    def __init__(self, mode: bool) -> None:
        self.prev = _core.is_grad_enabled()
        self.mode = bool(mode)
        _core._set_grad_enabled(self.mode)

    def __call__(self, func: F) -> F:
        _core._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _core._set_grad_enabled(self.mode)

    def __exit__(self, *exc: object) -> None:
        _core._set_grad_enabled(self.prev)

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Inference mode: no recording, and tensors made inside are inference
    tensors that can never take part in autograd."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.prev: tuple[bool, bool] = (False, True)

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        # Used as a bare decorator: @inference_mode
        return cls()(mode)

    def __enter__(self) -> None:
        self.prev = _core._set_inference_mode(self.mode)
        if not self.mode:
            _core._set_grad_enabled(self.prev[1])

    def __exit__(self, *exc: object) -> None:
        _core._restore_inference_mode(*self.prev)

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Whether backward may run independent nodes in parallel on
    ferrograd's pool (process-wide): immediately when called, and for the
    block when used as a context manager."""

    def __init__(self, mode: bool) -> None:
        self.prev = _core.is_multithreading_enabled()
        self.mode = bool(mode)
        _core.set_multithreading_enabled(self.mode)

    def __enter__(self) -> None:
        _core.set_multithreading_enabled(self.mode)

    def __exit__(self, *exc: object) -> None:
        _core.set_multithreading_enabled(self.prev)

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)
