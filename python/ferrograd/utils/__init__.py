"""``ferrograd.utils``: data loading."""

from . import data as data
