"""``ferrograd.utils``: data loading, DLPack interchange, benchmarking, safetensors files and
activation checkpointing."""

from . import benchmark as benchmark
from . import data as data
from . import dlpack as dlpack
from . import safetensors as safetensors


def __getattr__(name: str) -> object:
    # ``checkpoint`` builds on ``ferrograd.autograd``, which imports this
    # package while it initialises: load it on first use instead.
    if name == "checkpoint":
        import importlib

        return importlib.import_module(f"{__name__}.checkpoint")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
