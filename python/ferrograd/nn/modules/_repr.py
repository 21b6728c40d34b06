"""Pieces of module reprs in torch's format: the settings a module shows
only when they differ from their defaults."""

from __future__ import annotations

from typing import Any


def changed_settings(module: Any, defaults: dict[str, Any]) -> str:
    """``", name=value"`` for each setting of ``module`` named in ``defaults``
    whose value differs from its default there (booleans and ``None`` by
    identity, as torch's reprs test them), in the order of ``defaults``."""
    parts = []
    for name, default in defaults.items():
        value = getattr(module, name)
        same = value is default if default is None or isinstance(default, bool) else value == default
        if not same:
            parts.append(f", {name}={value}")
    return "".join(parts)
