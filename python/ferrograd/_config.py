"""Process-wide switches: the default device and deterministic algorithms.

ferrograd computes on the CPU only, so the default device is always the
CPU; setting it to the CPU is accepted and any other device is refused
with a clear error. Every ferrograd kernel is deterministic (results do not
depend on the number of threads), so ``use_deterministic_algorithms`` only
records the setting.
"""

from __future__ import annotations

from ._core import device

_deterministic = {"mode": False, "warn_only": False}


def _is_cpu(d: object) -> bool:
    if d is None:
        return True
    if isinstance(d, device):
        return d.type == "cpu"
    if isinstance(d, str):
        return d == "cpu" or d.startswith("cpu:")
    raise TypeError(f"set_default_device(): expected a device or a string, got {type(d).__name__}")


def set_default_device(device: device | str | None) -> None:
    """Sets the device new tensors are made on.

    ferrograd computes on the CPU only: ``"cpu"`` (or ``"cpu:N"``, a CPU
    :class:`ferrograd.device`, or None) is accepted and changes nothing; any
    other device raises ``RuntimeError``, so code that moves everything to a
    GPU fails early and clearly.

    Args:
        device (device or str or None): the device.

    Example:
        >>> ferrograd.set_default_device("cpu")
        >>> ferrograd.get_default_device()
        device(type='cpu')
    """
    if not _is_cpu(device):
        raise RuntimeError(
            f"ferrograd runs on the CPU only; cannot make {device!r} the default device"
        )


def get_default_device() -> device:
    """Returns the device new tensors are made on: always the CPU.

    Example:
        >>> ferrograd.get_default_device()
        device(type='cpu')
    """
    return device("cpu")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Requests (or stops requesting) deterministic algorithms.

    Every ferrograd kernel is already deterministic (results do not depend on
    the number of threads or on timing), so this only records the setting,
    which :func:`ferrograd.are_deterministic_algorithms_enabled` and
    :func:`ferrograd.is_deterministic_algorithms_warn_only_enabled` report.

    Args:
        mode (bool): whether deterministic algorithms are requested.

    Keyword args:
        warn_only (bool): torch's option to warn instead of raising for
            nondeterministic operations; recorded. Default: False.

    Example:
        >>> ferrograd.use_deterministic_algorithms(True)
        >>> ferrograd.are_deterministic_algorithms_enabled()
        True
        >>> ferrograd.use_deterministic_algorithms(False)
    """
    _deterministic["mode"] = bool(mode)
    _deterministic["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Returns True if :func:`ferrograd.use_deterministic_algorithms` was last
    called with ``mode=True`` (ferrograd's kernels are deterministic either
    way).

    Example:
        >>> ferrograd.are_deterministic_algorithms_enabled()
        False
    """
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Returns True if :func:`ferrograd.use_deterministic_algorithms` was last
    called with ``warn_only=True``.

    Example:
        >>> ferrograd.is_deterministic_algorithms_warn_only_enabled()
        False
    """
    return _deterministic["warn_only"]


__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_default_device",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_default_device",
    "use_deterministic_algorithms",
]
