"""Anomaly detection (torch.autograd.anomaly_mode's API).

While anomaly mode is on (per thread), every recorded node keeps the stack
of the forward call that created it; when a node's backward fails, a
``UserWarning`` "Error detected in <Node>. Traceback of forward call that
caused the error: ..." shows that stack before the error propagates. With
``check_nan`` a backward output containing NaN raises RuntimeError
"Function '<Node>' returned nan values in its <i>th output.".
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import _core

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly mode on for the
    current thread; warns that it slows things down."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _core.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _core.is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        _core.set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: Any) -> None:
        _core.set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Sets anomaly mode for the current thread, as a function or as a
    context manager (which restores the previous mode on exit)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _core.is_anomaly_enabled()
        self.prev_check_nan = _core.is_anomaly_check_nan_enabled()
        _core.set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: Any) -> None:
        _core.set_anomaly_enabled(self.prev, self.prev_check_nan)
