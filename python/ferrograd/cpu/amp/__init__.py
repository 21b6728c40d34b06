"""``torch.cpu.amp``: the deprecated CPU spellings of :mod:`ferrograd.amp`."""

from __future__ import annotations

import warnings
from typing import Any

from ... import _core
from ...amp import autocast_mode as _autocast_mode
from ...amp import grad_scaler as _grad_scaler

__all__ = ["GradScaler", "autocast"]


def _deprecated(name: str) -> None:
    warnings.warn(
        f"`torch.cpu.amp.{name}(args...)` is deprecated. "
        f"Please use `torch.amp.{name}('cpu', args...)` instead.",
        FutureWarning,
        stacklevel=3,
    )


class autocast(_autocast_mode.autocast):
    """Deprecated: ``ferrograd.cpu.amp.autocast(args...)`` is
    ``ferrograd.autocast("cpu", args...)`` and warns (``FutureWarning``), as
    in torch.

    Args:
        enabled (bool): whether autocast is on in the region. Default: True.
        dtype (ferrograd.dtype): the lower precision. Default: ``bfloat16``.
        cache_enabled (bool): whether parameter casts are cached.
            Default: True.
    """

    def __init__(self, enabled: bool = True, dtype: _core.dtype = _core.bfloat16,
                 cache_enabled: bool = True) -> None:
        _deprecated("autocast")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_grad_scaler.GradScaler):
    """Deprecated: ``ferrograd.cpu.amp.GradScaler(args...)`` is
    ``ferrograd.amp.GradScaler("cpu", args...)`` and warns
    (``FutureWarning``), as in torch.

    Args:
        init_scale (float): the initial scale. Default: ``2.0**16``.
        growth_factor (float): the factor of a growth. Default: ``2.0``.
        backoff_factor (float): the factor of a back-off. Default: ``0.5``.
        growth_interval (int): the clean steps in a row before a growth.
            Default: ``2000``.
        enabled (bool): whether the scaler scales. Default: ``True``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _deprecated("GradScaler")
        # The arguments of ferrograd.amp.GradScaler after its device.
        super().__init__("cpu", *args, **kwargs)
