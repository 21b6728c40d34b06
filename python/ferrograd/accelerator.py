"""``torch.accelerator`` on a machine without one: ferrograd computes on the
CPU only, which torch does not count as an accelerator.

>>> import ferrograd as torch
>>> torch.accelerator.is_available(), torch.accelerator.current_accelerator()
(False, None)
"""

from __future__ import annotations

from typing import Any


def is_available() -> bool:
    """Whether an accelerator can be used: never, in ferrograd."""
    return False


def current_accelerator(check_available: bool = False) -> Any:
    """The accelerator device type in use: ``None``."""
    return None


def device_count() -> int:
    """The number of accelerator devices: 0."""
    return 0


def synchronize(device: Any = None) -> None:
    """Waits for accelerator work to finish: there is none."""


__all__ = ["current_accelerator", "device_count", "is_available", "synchronize"]
