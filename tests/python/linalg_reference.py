"""NumPy references for the linalg functions NumPy lacks: the matrix
exponential and the product of Householder reflections; and ``spread``, the
diagonal that moves a test matrix away from rank deficiency."""

from __future__ import annotations

import numpy as np


def expm(a: np.ndarray) -> np.ndarray:
    """The matrix exponential of each matrix of ``a`` by its Taylor series
    after halving below norm 1/2, squared back."""
    norm = np.abs(a).sum(-2).max() if a.size else 0.0
    s = max(0, int(np.ceil(np.log2(max(norm, 1e-300) * 2))))
    x = a / 2.0**s
    term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    total = term.copy()
    for k in range(1, 30):
        term = term @ x / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


def householder_product(refl: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^T``
    with ``v_i`` column ``i`` of ``refl`` below the diagonal and 1 on it."""
    m, n = refl.shape[-2:]
    v = np.tril(refl, -1) + np.eye(m, n)
    q = np.broadcast_to(np.eye(m, n), refl.shape).copy()
    for i in reversed(range(tau.shape[-1])):
        vi = v[..., :, i : i + 1]
        q = q - (vi * tau[..., i, None, None]) @ (np.swapaxes(vi, -1, -2) @ q)
    return q


def spread(shape: tuple) -> np.ndarray:
    """A matrix of the last two dims of ``shape`` with 2, 4, 6, ... on its
    diagonal and zeros elsewhere."""
    rows, cols = shape[-2:]
    out = np.zeros((rows, cols))
    k = min(rows, cols)
    out[np.arange(k), np.arange(k)] = 2.0 * np.arange(1, k + 1)
    return out
