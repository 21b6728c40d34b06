"""``ferrograd.utils``: data loading, DLPack interchange and benchmarking."""

from . import benchmark as benchmark
from . import data as data
from . import dlpack as dlpack
