"""``torch.backends``: the switches scripts commonly set. ferrograd has no
cuDNN, MPS or MKL-DNN backend, so the flags are kept (a script may set and
read them) but change nothing, and the ``is_available`` queries say False.
"""

from __future__ import annotations

import types
from typing import Any


# Any: scripts set and read the flags as plain attributes.
def _flags(name: str, doc: str, **flags: object) -> Any:
    mod = types.ModuleType(f"{__name__}.{name}", doc)
    for key, value in flags.items():
        setattr(mod, key, value)
    mod.is_available = lambda: False
    return mod


cudnn = _flags(
    "cudnn",
    "cuDNN switches (kept, without effect: ferrograd has no cuDNN).",
    enabled=True,
    deterministic=False,
    benchmark=False,
    allow_tf32=True,
)
cudnn.version = lambda: None

mps = _flags("mps", "Apple MPS: not available in ferrograd.")
mps.is_built = lambda: False

mkldnn = _flags("mkldnn", "oneDNN switches (kept, without effect).", enabled=True)

cuda = types.ModuleType(f"{__name__}.cuda", "CUDA switches (kept, without effect).")
cuda.is_built = lambda: False
cuda.matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True)

__all__ = ["cuda", "cudnn", "mkldnn", "mps"]
