"""``ferrograd.nn.parallel``: data-parallel training across processes."""

from .distributed import DistributedDataParallel as DistributedDataParallel

__all__ = ["DistributedDataParallel"]
