"""Finding the forward pre-hook that ``weight_norm``, ``spectral_norm`` or a
pruning method registered on one tensor of a module."""

from __future__ import annotations

from typing import Any

from ..modules.module import Module


def hook_key(module: Module, kind: type, name: str, attr: str = "name") -> Any:
    """The key in ``module._forward_pre_hooks`` of the hook of class
    ``kind`` whose ``attr`` is ``name``, or ``None`` when there is none."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and getattr(hook, attr) == name:
            return key
    return None


def pop_hook(module: Module, kind: type, name: str, missing: str, attr: str = "name") -> Any:
    """Unregisters and returns that hook; ``ValueError(missing)`` when there
    is none."""
    key = hook_key(module, kind, name, attr)
    if key is None:
        raise ValueError(missing)
    return module._forward_pre_hooks.pop(key)
