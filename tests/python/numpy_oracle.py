"""Building ferrograd tensors from NumPy arrays and comparing results with
NumPy references (test helper shared by the value tests)."""

from __future__ import annotations

import ferrograd as fg
import numpy as np


def t(a, dtype=fg.float64, requires_grad=False):
    """A ferrograd tensor with the values of the array-like ``a``."""
    return fg.tensor(np.asarray(a), dtype=dtype, requires_grad=requires_grad)


def npy(x):
    """The values of a tensor (any dtype, detached) as a NumPy array; other values pass through."""
    if isinstance(x, fg.Tensor):
        return np.asarray(x.detach().tolist()).reshape(tuple(x.shape))
    return np.asarray(x)


def close(x, want, tol=None):
    """``x`` (tensor or array) equals ``want`` in shape and, to ``tol`` (default 1e-10 relative
    and 1e-12 absolute), in value; NaN matches NaN."""
    got, want = npy(x), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol, atol = (1e-10, 1e-12) if tol is None else (tol, tol)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
