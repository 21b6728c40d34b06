"""``torch.cuda`` as a CPU-only build presents it.

ferrograd runs on the CPU only, so no CUDA device ever exists: the queries
answer accordingly, the calls that only matter when a device exists
(seeding, synchronising, freeing cached memory) do nothing, and the calls
that need a device raise the AssertionError a CPU-only torch raises.

>>> import ferrograd as torch
>>> device = "cuda" if torch.cuda.is_available() else "cpu"
>>> device
'cpu'
"""

from __future__ import annotations

from typing import Any

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _no_device() -> AssertionError:
    return AssertionError(_NOT_COMPILED)


def is_available() -> bool:
    """Whether a CUDA device can be used: never, in ferrograd."""
    return False


def device_count() -> int:
    """The number of CUDA devices: 0."""
    return 0


def is_initialized() -> bool:
    """Whether CUDA was initialised: never."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether bfloat16 runs on the current CUDA device: there is none."""
    return False


def init() -> None:
    """Initialises CUDA: raises, as a CPU-only torch does."""
    raise _no_device()


def current_device() -> int:
    """Raises: no CUDA device exists."""
    raise _no_device()


def set_device(device: Any) -> None:
    """Raises: no CUDA device exists."""
    raise _no_device()


def get_device_name(device: Any = None) -> str:
    """Raises: no CUDA device exists."""
    raise _no_device()


def get_device_properties(device: Any = None) -> Any:
    """Raises: no CUDA device exists."""
    raise _no_device()


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """Raises: no CUDA device exists."""
    raise _no_device()


def manual_seed(seed: int) -> None:
    """Seeds the CUDA generators: there are none, so nothing happens (as in
    torch without a device)."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    """Seeds every CUDA generator: nothing to seed."""
    int(seed)


def seed() -> None:
    """Reseeds the CUDA generator: nothing to seed."""


def seed_all() -> None:
    """Reseeds every CUDA generator: nothing to seed."""


def synchronize(device: Any = None) -> None:
    """Waits for CUDA work to finish: there is none."""


def empty_cache() -> None:
    """Frees cached CUDA memory: there is none."""


def memory_allocated(device: Any = None) -> int:
    """Bytes of CUDA memory held by tensors: 0."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """Peak bytes of CUDA memory held by tensors: 0."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """Bytes of CUDA memory held by the caching allocator: 0."""
    return 0


def reset_peak_memory_stats(device: Any = None) -> None:
    """Resets CUDA peak-memory counters: there are none."""


__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "init",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "synchronize",
]
