"""``ferrograd.nn.parallel``: data-parallel training across processes
(``DistributedDataParallel``) and, for code written for it,
``DataParallel`` (a pass-through on the CPU, as in torch)."""

from .data_parallel import DataParallel as DataParallel
from .distributed import DistributedDataParallel as DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
