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


def _is_cpu(d) -> bool:
    if d is None:
        return True
    if isinstance(d, device):
        return d.type == "cpu"
    if isinstance(d, str):
        return d == "cpu" or d.startswith("cpu:")
    raise TypeError(f"set_default_device(): expected a device or a string, got {type(d).__name__}")


def set_default_device(device) -> None:
    """Sets the device new tensors are made on: only ``"cpu"`` (or None)."""
    if not _is_cpu(device):
        raise RuntimeError(
            f"ferrograd runs on the CPU only; cannot make {device!r} the default device"
        )


def get_default_device() -> device:
    """The device new tensors are made on: ``device(type='cpu')``."""
    return device("cpu")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Records the setting; ferrograd's kernels are deterministic anyway."""
    _deterministic["mode"] = bool(mode)
    _deterministic["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic algorithms were requested with ``warn_only``."""
    return _deterministic["warn_only"]


__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_default_device",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_default_device",
    "use_deterministic_algorithms",
]
