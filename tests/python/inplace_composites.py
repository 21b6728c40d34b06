"""The composite ops of the in-place/view program fuzzer
(``inplace_programs.py``): each as ferrograd (or torch) computes it,
``torch_composite``, and as NumPy computes it by its formula,
``numpy_composite`` (the oracle, which also rejects inputs near a kink
while programs are generated).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from linalg_reference import expm, householder_product, spread
from nn_composites import NN_COMPOSITES, NN_NDIMS, numpy_nn, torch_nn
from vision_composites import VISION_COMPOSITES, VISION_NDIMS, numpy_vision, torch_vision

COMPOSITES = [
    "cdist", "tensordot", "block_diag", "chain_matmul", "meshgrid", "cartesian_prod", "embedding_bag",
    "cholesky", "solve_triangular", "qr", "eigh", "svd", "slogdet", "lu_solve", "pinv", "lstsq",
    "matrix_exp", "eig", "householder_product", "lobpcg", "order_stat", "fused_add", "fft_filter",
    "binary_math", "special_math", *VISION_COMPOSITES, *NN_COMPOSITES,
]  # fmt: skip
OUT_OF_PLACE = ["sin", "tanh", "mul_slot", "scale", "square", *COMPOSITES]
# The slot dimensions an op accepts (an op not listed accepts any).
OP_NDIMS = {
    "cdist": (2, 3, 4), "tensordot": (1, 2, 3), "block_diag": (0, 1, 2), "chain_matmul": (2,),
    "cartesian_prod": (1, 2, 3, 4), "embedding_bag": (2,), "cholesky": (2, 3), "solve_triangular": (2, 3),
    "qr": (2, 3), "eigh": (2, 3), "svd": (2, 3), "slogdet": (2, 3), "lu_solve": (2, 3), "pinv": (2, 3),
    "lstsq": (2, 3), "matrix_exp": (2, 3), "eig": (2, 3), "householder_product": (2, 3), "lobpcg": (2, 3),
    "fused_add": (2, 3), "fft_filter": (1, 2, 3), "order_stat": (1, 2, 3, 4), **VISION_NDIMS, **NN_NDIMS,
}  # fmt: skip
# The composites whose results are column-major matrices, as torch's and
# ferrograd's LAPACK-style linalg results are.
COLUMN_MAJOR = (
    "cholesky", "solve_triangular", "qr", "eigh", "svd", "lu_solve", "lstsq", "householder_product",
)  # fmt: skip
# The orders of cdist (the constant of a cdist step).
CDIST_P = [1.0, 1.5, 2.0, 3.5, float("inf")]
SMOOTH_MARGIN = 1e-2


def first_row(t: Any) -> Any:
    """``t[0, ..., 0, :]``: a 1-D view of ``t`` (``t`` itself below 2-D)."""
    return t[(0,) * (t.ndim - 1)] if t.ndim > 1 else t


def torch_composite(T: Any, name: str, a: Any, c: float) -> Any:
    """Composite ``name`` of slot ``a`` with constant ``c`` on the tensor module ``T``."""
    if name in VISION_COMPOSITES:
        return torch_vision(T, name, a, c)
    if name in NN_COMPOSITES:
        return torch_nn(T, name, a, c)
    if name == "cdist":
        return T.cdist(a, a, p=c)
    if name == "tensordot":
        return T.tensordot(a, a.sin(), dims=([0], [0]))
    if name == "block_diag":
        return T.block_diag(a, a.sin())
    if name == "chain_matmul":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # deprecated in torch
            return T.chain_matmul(a, a.T.sin(), a)
    if name == "meshgrid":
        v = first_row(a)
        rows, cols = T.meshgrid(v, v.sin(), indexing="ij")
        return rows * cols
    if name == "cartesian_prod":
        v = first_row(a)
        return T.cartesian_prod(v, v.sin())
    if name == "embedding_bag":
        # The slot's rows as a table: bags [row 0] and [last row, row 0],
        # summed (c >= 0) or averaged.
        if T.__name__ == "torch":
            # torch's embedding_bag has no forward mode; the same bags by
            # indexing give torch's verdict on the program.
            second = a[-1] + a[0]
            return T.stack([a[0], second if c >= 0 else second / 2])
        rows = T.tensor([0, a.shape[0] - 1, 0])
        offsets = T.tensor([0, 1])
        mode = "sum" if c >= 0 else "mean"
        return T.nn.functional.embedding_bag(rows, a, offsets, mode=mode)
    if name == "cholesky":
        # The factor of a positive-definite matrix made from the slot's
        # rows (upper for c < 0).
        gram = a @ a.mT / a.shape[-1] + T.eye(a.shape[-2], dtype=a.dtype)
        return T.linalg.cholesky(gram, upper=c < 0)
    if name == "solve_triangular":
        # The slot solved against a triangle of a matrix with a diagonal
        # in (1, 3) made from its rows.
        m = (a @ a.mT).tanh() + 2 * T.eye(a.shape[-2], dtype=a.dtype)
        return T.linalg.solve_triangular(m, a, upper=c >= 0)
    # The factorizations take the slot moved well away from rank
    # deficiency and from repeated eigen/singular values (a diagonal
    # with distinct, spread entries added), and return products of
    # the factors that no sign choice changes.
    if name == "qr":
        q, r = T.linalg.qr(0.3 * a + T.tensor(spread(a.shape)))
        return q * r.diagonal(dim1=-2, dim2=-1).unsqueeze(-2)
    if name == "eigh":
        n = a.shape[-2]
        gram = 0.1 * (a @ a.mT) + T.tensor(spread((n, n)))
        w, v = T.linalg.eigh(gram)
        return v * v * w.unsqueeze(-2)
    if name == "svd":
        u, s, _ = T.linalg.svd(0.3 * a + T.tensor(spread(a.shape)), full_matrices=False)
        return u * u * s.unsqueeze(-2)
    if name == "slogdet":
        # The slot scaled by log det of a positive-definite matrix made
        # from its rows.
        gram = a @ a.mT + T.eye(a.shape[-2], dtype=a.dtype)
        return a * T.linalg.slogdet(gram).logabsdet[..., None, None]
    if name == "lu_solve":
        # The slot solved through the LU factors of a positive-definite
        # matrix made from its rows (with its adjoint for c < 0).
        gram = a @ a.mT + T.eye(a.shape[-2], dtype=a.dtype)
        lu, pivots = T.linalg.lu_factor(gram)
        return T.linalg.lu_solve(lu, pivots, a, adjoint=c < 0)
    if name == "pinv":
        return T.linalg.pinv(0.3 * a + T.tensor(spread(a.shape)))
    if name == "lstsq":
        # The slot's least-squares fit against itself by a well-conditioned
        # matrix of its shape.
        return T.linalg.lstsq(0.3 * a + T.tensor(spread(a.shape)), a).solution
    if name == "matrix_exp":
        return T.linalg.matrix_exp(0.1 * (a @ a.mT.sin()))
    if name == "eig":
        # A function of each eigenpair summed over the pairs (so free of
        # their order and of the eigenvectors' phases) of a matrix with
        # distinct eigenvalues made from the slot's rows.
        n = a.shape[-2]
        w, v = T.linalg.eig(0.1 * (a @ a.mT.sin()) + T.tensor(spread((n, n))))
        return ((v * v.conj()).real * w.real.unsqueeze(-2).tanh()).sum(-1)
    if name == "householder_product":
        # The slot (transposed when wide) as the reflectors, their scales
        # made from its first column.
        refl = a if a.shape[-2] >= a.shape[-1] else a.mT
        tau = refl[..., 0, :].tanh()
        return T.linalg.householder_product(refl, tau)
    if name == "lobpcg":
        # The top eigenpair (sign-free) of a matrix made from the slot's rows.
        n = a.shape[-2]
        gram = 0.1 * (a @ a.mT) + T.tensor(spread((n, n)))
        start = T.ones(*gram.shape[:-1], 1, dtype=a.dtype)
        w, v = T.lobpcg(gram, X=start, tol=1e-14, niter=100)
        return v * v * w.unsqueeze(-2)
    if name == "order_stat":  # topk of all but one of the last dim for c >= 0, else its median
        return a.topk(max(1, a.shape[-1] - 1)).values if c >= 0 else a.median(-1, keepdim=True).values
    if name == "fused_add":  # c * a column + 0.5 * a product: addmv (2-D), baddbmm (3-D)
        v = a[..., 0, :].sin()
        if a.ndim == 2:
            return T.addmv(a[..., 0], a, v, beta=c, alpha=0.5)
        return T.baddbmm(a[..., :1], a, v[..., None], beta=c, alpha=0.5)
    if name == "binary_math":  # hypot, logaddexp, logaddexp2, xlogy of the slot and functions of it
        return (T.hypot(a, 1.5 + a.sin()) + T.logaddexp(a, a.cos() * c) + 0.3 * T.logaddexp2(a, -a)
                + 0.5 * T.xlogy(a, a * a + 1))
    if name == "special_math":  # gamma, error-function and Bessel families on smooth domains
        u = a.tanh()
        S = T.special
        return (T.lgamma(a * a + 0.5) + 0.3 * T.digamma(a * a + 1) + T.erfinv(0.5 * u) + T.i0(u) + S.i1(u)
                + 0.1 * S.log_ndtr(a) + 0.2 * T.sinc(a) + S.entr(a * a + 0.1))
    if name == "fft_filter":
        # The slot filtered along its last dim through the half spectrum.
        weights = T.tensor(fft_weights(a.shape[-1], c), dtype=a.dtype)
        return T.fft.irfft(T.fft.rfft(a) * weights, n=a.shape[-1])
    raise ValueError(name)


def fft_weights(n: int, c: float) -> np.ndarray:
    """The filter of ``fft_filter``: one weight per non-negative frequency."""
    return 1.0 / (1.0 + np.arange(n // 2 + 1)) + 0.25 * c


def numpy_composite(be: Any, name: str, a: np.ndarray, c: float) -> np.ndarray:
    """The same composite by its formula in NumPy (``be``: the NumPy backend)."""
    if name in VISION_COMPOSITES:
        return numpy_vision(be, name, a, c)
    if name in NN_COMPOSITES:
        return numpy_nn(be, name, a, c)
    if name == "cdist":
        return numpy_cdist(be, a, c)
    if name == "order_stat":
        r = np.sort(a, -1)
        be.reject_if(a.shape[-1] > 1 and np.diff(r, axis=-1).min() < 1e-2, "topk near a tie")
        n = a.shape[-1]
        return r[..., ::-1][..., : max(1, n - 1)] if c >= 0 else r[..., (n - 1) // 2, None]
    if name == "fused_add":
        v = np.sin(a[..., 0, :])
        return c * a[..., 0] + 0.5 * a @ v if a.ndim == 2 else c * a[..., :1] + 0.5 * a @ v[..., None]
    if name == "fft_filter":
        n = a.shape[-1]
        return np.fft.irfft(np.fft.rfft(a) * fft_weights(n, c), n=n)
    if name == "tensordot":
        return np.tensordot(a, np.sin(a), axes=([0], [0]))
    if name == "block_diag":
        blocks = [np.reshape(b, (1, -1)) if b.ndim < 2 else b for b in (a, np.sin(a))]
        out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
        out[: blocks[0].shape[0], : blocks[0].shape[1]] = blocks[0]
        out[blocks[0].shape[0] :, blocks[0].shape[1] :] = blocks[1]
        return out
    if name == "chain_matmul":
        return np.linalg.multi_dot([a, np.sin(a.T), a])
    if name == "meshgrid":
        v = first_row(a)
        rows, cols = np.meshgrid(v, np.sin(v), indexing="ij")
        return rows * cols
    if name == "cartesian_prod":
        v = first_row(a)
        return np.stack([np.repeat(v, v.size), np.tile(np.sin(v), v.size)], axis=1)
    if name == "embedding_bag":
        second = a[-1] + a[0]
        return np.stack([a[0], second if c >= 0 else second / 2])
    if name == "cholesky":
        gram = a @ np.swapaxes(a, -1, -2) / a.shape[-1] + np.eye(a.shape[-2])
        low = np.linalg.cholesky(gram)
        return np.swapaxes(low, -1, -2) if c < 0 else low
    if name == "solve_triangular":
        m = np.tanh(a @ np.swapaxes(a, -1, -2)) + 2 * np.eye(a.shape[-2])
        return np.linalg.solve(np.triu(m) if c >= 0 else np.tril(m), a)
    if name == "qr":
        q, r = np.linalg.qr(0.3 * a + spread(a.shape))
        return q * np.diagonal(r, axis1=-2, axis2=-1)[..., None, :]
    if name == "eigh":
        n = a.shape[-2]
        w, v = np.linalg.eigh(0.1 * (a @ np.swapaxes(a, -1, -2)) + spread((n, n)))
        return v * v * w[..., None, :]
    if name == "svd":
        u, s, _ = np.linalg.svd(0.3 * a + spread(a.shape), full_matrices=False)
        return u * u * s[..., None, :]
    if name == "slogdet":
        gram = a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-2])
        return a * np.linalg.slogdet(gram)[1][..., None, None]
    if name == "lu_solve":
        gram = a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-2])
        return np.linalg.solve(gram, a)
    if name == "pinv":
        return np.linalg.pinv(0.3 * a + spread(a.shape))
    if name == "lstsq":
        return np.linalg.pinv(0.3 * a + spread(a.shape)) @ a
    if name == "matrix_exp":
        return expm(0.1 * (a @ np.sin(np.swapaxes(a, -1, -2))))
    if name == "eig":
        n = a.shape[-2]
        w, v = np.linalg.eig(0.1 * (a @ np.sin(np.swapaxes(a, -1, -2))) + spread((n, n)))
        return ((v * v.conj()).real * np.tanh(w.real)[..., None, :]).sum(-1)
    if name == "householder_product":
        refl = a if a.shape[-2] >= a.shape[-1] else np.swapaxes(a, -1, -2)
        return householder_product(refl, np.tanh(refl[..., 0, :]))
    if name == "lobpcg":
        n = a.shape[-2]
        be.reject_if(n < 3, "lobpcg: fewer than 3 rows")
        w, v = np.linalg.eigh(0.1 * (a @ np.swapaxes(a, -1, -2)) + spread((n, n)))
        return v[..., -1:] ** 2 * w[..., None, -1:]
    if name == "binary_math":
        return (np.hypot(a, 1.5 + np.sin(a)) + np.logaddexp(a, np.cos(a) * c) + 0.3 * np.logaddexp2(a, -a)
                + 0.5 * a * np.log(a * a + 1))
    if name == "special_math":
        u = np.tanh(a)
        lgamma = np.vectorize(math.lgamma, otypes=[float])
        log_ndtr = np.vectorize(lambda v: math.log(0.5 * math.erfc(-v / math.sqrt(2))), otypes=[float])
        entr = -(a * a + 0.1) * np.log(a * a + 0.1)
        return (lgamma(a * a + 0.5) + 0.3 * _digamma(a * a + 1) + _erfinv(0.5 * u) + _bessel_i(0, u)
                + _bessel_i(1, u) + 0.1 * log_ndtr(a) + 0.2 * np.sinc(a) + entr)
    raise ValueError(name)


def _digamma(x: np.ndarray) -> np.ndarray:
    """digamma for x >= 1: recurrence up to 10, then the asymptotic series."""
    x = np.array(x, dtype=float)
    acc = np.zeros_like(x)
    while (x < 10).any():
        low = x < 10
        acc = acc - np.where(low, 1 / x, 0.0)
        x = np.where(low, x + 1, x)
    inv2 = 1 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return acc + np.log(x) - 0.5 / x - series


def _erfinv(y: np.ndarray) -> np.ndarray:
    """erfinv on (-0.9, 0.9) by Newton's method on math.erf."""
    erf = np.vectorize(math.erf, otypes=[float])
    x = np.zeros_like(np.asarray(y, dtype=float))
    for _ in range(40):
        x = x - (erf(x) - y) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


def _bessel_i(nu: int, x: np.ndarray) -> np.ndarray:
    """The modified Bessel function I_nu by its power series (small |x|)."""
    return sum((x / 2) ** (2 * k + nu) / (math.factorial(k) * math.factorial(k + nu)) for k in range(30))


def numpy_cdist(be: Any, a: np.ndarray, p: float) -> np.ndarray:
    """p-norm distances between the rows of ``a`` (batched over its
    leading dimensions); while generating, rejects inputs near a kink of
    the distance between different rows."""
    d = np.abs(a[..., :, None, :] - a[..., None, :, :])
    rows = a.shape[-2]
    if be.generating and rows > 1 and a.shape[-1]:
        apart = d[..., ~np.eye(rows, dtype=bool), :]  # pairs of different rows
        if p in (1.0, 1.5):
            be.reject_if(apart.min() < SMOOTH_MARGIN, "cdist: a coordinate difference near 0")
        elif p == np.inf:
            top = np.sort(apart, axis=-1)
            gap = top[..., -1] - (top[..., -2] if a.shape[-1] > 1 else 0.0)
            be.reject_if(gap.min() < SMOOTH_MARGIN, "cdist: the largest difference near a tie")
        distance = np.sqrt((apart**2).sum(-1))
        be.reject_if(distance.min() < SMOOTH_MARGIN, "cdist: two rows near each other")
    if p == np.inf:
        return d.max(-1, initial=0.0)
    return (d**p).sum(-1) ** (1 / p)
