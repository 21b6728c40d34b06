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
    """Context manager (and decorator) that turns anomaly detection on for
    the current thread, to find which forward op a failing backward comes
    from.

    Inside it, every recorded node keeps the stack of the forward call that
    created it; when a node's backward raises, a warning prints that stack
    first. With ``check_nan``, a backward output containing NaN raises
    RuntimeError naming the node. It slows everything down (and warns so
    on creation): use it for debugging only.

    Args:
        check_nan (bool): raise when a backward output contains NaN.
            Default: ``True``.

    Example:
        >>> x = ferrograd.tensor([0.0, 1.0], requires_grad=True)
        >>> with ferrograd.autograd.detect_anomaly():
        ...     y = (x.sqrt() * 0).sum()
        ...     y.backward()  # d sqrt(x) / dx is inf at 0, and inf * 0 is NaN
        Traceback (most recent call last):
          ...
        RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

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
    """Turns anomaly detection (see :class:`detect_anomaly`) on or off for
    the current thread.

    Called as a function it takes effect immediately; as a context manager
    it applies to the block and restores the previous mode on exit.

    Args:
        mode (bool): ``True`` to turn anomaly detection on.
        check_nan (bool): raise when a backward output contains NaN.
            Default: ``True``.

    Example:
        >>> with ferrograd.autograd.set_detect_anomaly(True):
        ...     print(ferrograd.is_anomaly_enabled())
        True
        >>> ferrograd.is_anomaly_enabled()
        False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _core.is_anomaly_enabled()
        self.prev_check_nan = _core.is_anomaly_check_nan_enabled()
        _core.set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: Any) -> None:
        _core.set_anomaly_enabled(self.prev, self.prev_check_nan)
