"""Shared helpers for the pytest suites.

``layouts(arr)`` gives the same values as ``arr`` in tensors of different
memory layouts (contiguous, transposed, sliced with a step, expanded from a
smaller tensor), so each op is checked against NumPy on strided inputs too.
"""

from __future__ import annotations

import ferrograd as fg
import numpy as np
import pytest

FLOAT_DTYPES = [(fg.float32, np.float32), (fg.float64, np.float64)]


def to_np(t) -> np.ndarray:
    """The values of a tensor as a NumPy array (a copy)."""
    values = t.detach().tolist() if t.dim() else t.item()
    return np.array(values, dtype=_np_dtype(t.dtype)).reshape(tuple(t.shape))


def _np_dtype(d):
    return {
        fg.float32: np.float32,
        fg.float64: np.float64,
        fg.float16: np.float16,
        fg.bfloat16: np.float32,  # NumPy has no bfloat16; its values widen exactly
        fg.uint8: np.uint8,
        fg.int8: np.int8,
        fg.int16: np.int16,
        fg.int32: np.int32,
        fg.int64: np.int64,
        fg.bool: np.bool_,
        fg.complex64: np.complex64,
        fg.complex128: np.complex128,
    }[d]


def cases(arr: np.ndarray):
    """``(label, tensor, ndarray)`` triples: the tensor holds the ndarray's values.

    Layouts: ``contiguous``; ``transposed`` (last two dims swapped, so not
    contiguous); ``sliced`` (every other element of a wider buffer, i.e. a
    step-2 slice with a storage offset); ``expanded`` (the first row expanded
    along dim 0 with stride 0; its ndarray is the same broadcast in NumPy).
    Compare ``op(tensor)`` with ``np_op(ndarray)`` for each triple.
    """
    arr = np.asarray(arr)
    out = [("contiguous", fg.tensor(arr), arr)]
    if arr.ndim >= 2:
        base = fg.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)))
        out.append(("transposed", base.transpose(-1, -2), arr))
    if arr.ndim >= 1 and arr.size > 0:
        wide = np.zeros(arr.shape[:-1] + (arr.shape[-1] * 2 + 1,), dtype=arr.dtype)
        wide[..., 1::2] = arr
        big = fg.tensor(wide)
        strides = list(big.stride())
        strides[-1] = 2
        out.append(("sliced", big.as_strided(arr.shape, tuple(strides), 1), arr))
        row = arr[:1]
        out.append(("expanded", fg.tensor(row).expand(*arr.shape), np.broadcast_to(row, arr.shape)))
    return out


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, check_dtype=True):
    """Compares a tensor with a NumPy array (values, shape and dtype)."""
    got = to_np(actual)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    if check_dtype:
        assert got.dtype == expected.dtype, f"dtype {got.dtype} != {expected.dtype}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def check_against_numpy(out, expected):
    """Values, dtype and shape (including empty shapes) against NumPy."""
    expected = np.asarray(expected)
    assert tuple(out.shape) == expected.shape, f"shape {tuple(out.shape)} != {expected.shape}"
    if expected.size == 0:
        assert out.numpy().dtype == expected.dtype
        return
    assert_close(out, expected)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
