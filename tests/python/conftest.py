"""Shared helpers for the pytest suites.

``layouts(arr)`` gives the same values as ``arr`` in tensors of different
memory layouts (contiguous, transposed, sliced with a step, expanded from a
smaller tensor), so each op is checked against NumPy on strided inputs too.
"""

from __future__ import annotations

import numpy as np
import pytest

import ferrograd as fg

FLOAT_DTYPES = [(fg.float32, np.float32), (fg.float64, np.float64)]


def to_np(t) -> np.ndarray:
    """The values of a tensor as a NumPy array (a copy)."""
    return np.array(t.detach().tolist() if t.dim() else t.item(), dtype=_np_dtype(t.dtype))


def _np_dtype(d):
    return {
        fg.float32: np.float32,
        fg.float64: np.float64,
        fg.int32: np.int32,
        fg.int64: np.int64,
        fg.bool: np.bool_,
    }[d]


def layouts(arr: np.ndarray):
    """Yields ``(label, tensor)`` pairs holding ``arr``'s values in several layouts."""
    yield "contiguous", fg.tensor(arr)
    if arr.ndim >= 2:
        base = fg.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)))
        t = base.transpose(-1, -2)
        assert not t.is_contiguous() or min(arr.shape[-2:]) <= 1
        yield "transposed", t
    if arr.ndim >= 1:
        wide = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2 + 1,), dtype=arr.dtype)
        wide[..., 1::2] = arr
        big = fg.tensor(wide)
        t = big.as_strided(arr.shape, tuple(s * 1 for s in _sliced_strides(big, arr)), 1)
        yield "sliced", t
        if arr.shape[0] > 0 and np.all(arr == arr[:1]):
            yield "expanded", fg.tensor(arr[:1]).expand(*arr.shape)
        else:
            # A broadcast operand: the first row expanded, compared against
            # the same expansion in NumPy by the caller via ``expanded(arr)``.
            pass


def _sliced_strides(big, arr):
    st = list(big.stride())
    st[-1] = 2
    return st


def expanded(arr: np.ndarray):
    """A tensor that is ``arr[:1]`` expanded to ``arr.shape`` and its NumPy twin."""
    row = arr[:1]
    return fg.tensor(row).expand(*arr.shape), np.broadcast_to(row, arr.shape)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, check_dtype=True):
    """Compares a tensor with a NumPy array (values, shape and dtype)."""
    got = to_np(actual)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    if check_dtype:
        assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
