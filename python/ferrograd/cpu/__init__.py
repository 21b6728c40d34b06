"""``torch.cpu``: the ``torch.cuda`` calls of device-agnostic code, for the
one device ferrograd computes on. There is one CPU device, always available
and initialised; work is finished when a call returns, so synchronising
waits for nothing and streams and events only keep their bookkeeping.

>>> import ferrograd as torch
>>> torch.cpu.is_available(), torch.cpu.device_count(), torch.cpu.current_device()
(True, 1, 'cpu')
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from . import amp as amp

__all__ = [
    "Event", "Stream", "StreamContext", "current_device", "current_stream", "device_count",
    "is_available", "is_initialized", "set_device", "stream", "synchronize",
]  # fmt: skip


def is_available() -> bool:
    """Whether the CPU can be used: always."""
    return True


def is_initialized() -> bool:
    """Whether the CPU is initialised: always."""
    return True


def device_count() -> int:
    """The number of CPU devices (not cores): 1."""
    return 1


def current_device() -> str:
    """The current CPU device: ``"cpu"``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Selects the CPU device: there is only one, so nothing changes.

    Args:
        device (ferrograd.device, str or int): ignored.
    """


def synchronize(device: Any = None) -> None:
    """Waits for the CPU's pending work: every op has finished by the time
    it returns, so there is none.

    Args:
        device (ferrograd.device, str or int, optional): ignored.
    """


class Stream:
    """A CPU stream: ops run in call order, so it only stands in for a
    device stream in device-agnostic code.

    Args:
        priority (int): ignored. Default: ``-1``.
    """

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream: Stream) -> None:
        """Waits for another stream: nothing to wait for.

        Args:
            stream (Stream): ignored.
        """

    def record_event(self) -> None:
        """Records an event: nothing to record."""

    def wait_event(self, event: Event) -> None:
        """Waits for an event: it has always happened.

        Args:
            event (Event): ignored.
        """


class Event:
    """A CPU event: always complete."""

    def query(self) -> bool:
        """Whether the event completed: always."""
        return True

    def record(self, stream: Stream | None = None) -> None:
        """Records the event: nothing to record.

        Args:
            stream (Stream, optional): ignored.
        """

    def synchronize(self) -> None:
        """Waits for the event: it has completed."""

    def wait(self, stream: Stream | None = None) -> None:
        """Makes a stream wait for the event: it has completed.

        Args:
            stream (Stream, optional): ignored.
        """


_default_stream = Stream()
_current_stream = _default_stream


def current_stream(device: Any = None) -> Stream:
    """The stream ``stream(...)`` selected last (the default stream outside
    any).

    Args:
        device (ferrograd.device, str or int, optional): ignored.
    """
    return _current_stream


class StreamContext(AbstractContextManager["StreamContext"]):
    """Makes ``stream`` the current stream inside a ``with`` block (``None``
    changes nothing).

    Args:
        stream (Stream or None): the stream to select.
    """

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self) -> StreamContext:
        global _current_stream
        if self.stream is not None:
            self.prev_stream, _current_stream = _current_stream, self.stream
        return self

    def __exit__(self, *exc: object) -> None:
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream


def stream(stream: Stream | None) -> StreamContext:
    """A context manager that selects ``stream``.

    Args:
        stream (Stream or None): the stream to select.

    Example:
        >>> s = ferrograd.cpu.Stream()
        >>> with ferrograd.cpu.stream(s):
        ...     ferrograd.cpu.current_stream() is s
        True
    """
    return StreamContext(stream)
