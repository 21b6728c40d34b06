"""``ferrograd.utils``: data loading and DLPack interchange."""

from . import data as data
from . import dlpack as dlpack
