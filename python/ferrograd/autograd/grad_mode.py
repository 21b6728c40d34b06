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
    """Context manager and decorator that disables gradient recording on the
    current thread.

    Results computed inside have ``requires_grad=False`` even when their
    inputs require grad, and no graph is kept, which saves memory (use it
    for evaluation and for in-place parameter updates). The previous mode is
    restored on exit; the mode is thread-local, so other threads keep theirs.
    Also works on generator functions.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with ferrograd.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
        >>> @ferrograd.no_grad()
        ... def double(t):
        ...     return t * 2
        >>> double(x).requires_grad
        False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _core.is_grad_enabled()
        _core._set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        _core._set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that enables gradient recording on the
    current thread, for instance inside a :class:`no_grad` block.

    The previous mode is restored on exit. It has no effect inside
    :class:`inference_mode`, where recording stays off.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with ferrograd.no_grad():
        ...     with ferrograd.enable_grad():
        ...         y = x * 2
        >>> y.requires_grad
        True
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _core.is_grad_enabled()
        _core._set_grad_enabled(True)

    def __exit__(self, *exc: object) -> None:
        _core._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Turns gradient recording on or off for the current thread.

    Called as a function it takes effect immediately; used as a context
    manager (or decorator) it applies to the block and restores the previous
    mode on exit.

    Args:
        mode (bool): ``True`` to record gradients, ``False`` not to.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with ferrograd.set_grad_enabled(False):
        ...     y = x * 2
        >>> y.requires_grad, ferrograd.is_grad_enabled()
        (False, True)
    """

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
    """Context manager and decorator for code that will never need
    gradients: like :class:`no_grad`, and the tensors created inside are
    *inference tensors*.

    Inference tensors can never be saved for backward afterwards, nor be
    modified in place outside inference mode (clone one to use it in
    autograd). Can be used as ``@inference_mode`` or ``@inference_mode()``.

    Args:
        mode (bool): ``True`` to enter inference mode, ``False`` to make the
            block behave normally (handy to switch it by a flag).
            Default: ``True``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with ferrograd.inference_mode():
        ...     y = x * 2
        >>> y.requires_grad, y.is_inference()
        (False, True)
    """

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
    """Allows or forbids the backward engine to run independent nodes of a
    graph in parallel on ferrograd's thread pool.

    Unlike the grad modes this setting is process-wide. Called as a function
    it takes effect immediately; as a context manager it applies to the
    block and restores the previous setting on exit.

    Args:
        mode (bool): ``True`` to allow parallel backward, ``False`` to run
            every backward pass on one thread.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
        >>> with ferrograd.autograd.set_multithreading_enabled(False):
        ...     (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

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
