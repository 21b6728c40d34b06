"""``ferrograd.utils``: data loading, DLPack interchange, benchmarking and safetensors files."""

from . import benchmark as benchmark
from . import data as data
from . import dlpack as dlpack
from . import safetensors as safetensors
