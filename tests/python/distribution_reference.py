"""Reference densities of the continuous univariate distribution families
(written out in NumPy) and a quadrature over the real line, shared by the
distribution tests (test helper)."""

from __future__ import annotations

import ferrograd.distributions as D
import numpy as np
from numpy_oracle import close, t

__all__ = ["FAMILIES", "POSITIVE", "integrate", "normal_pdf"]


def normal_pdf(x, m, s):
    """The normal density."""
    return np.exp(-((x - m) ** 2) / (2 * s * s)) / (s * np.sqrt(2 * np.pi))


def _lognormal(x, m, s):
    xp = np.where(x > 0, x, 1.0)
    return np.where(x > 0, normal_pdf(np.log(xp), m, s) / xp, 0.0)


def _gumbel(x, m, s):
    z = (x - m) / s
    return np.exp(-z - np.exp(np.minimum(-z, 700))) / s


# name -> (constructor from (loc, scale) arrays, NumPy density of (x, loc, scale))
FAMILIES = {
    "Normal": (lambda m, s: D.Normal(t(m), t(s)), normal_pdf),
    "Laplace": (lambda m, s: D.Laplace(t(m), t(s)), lambda x, m, s: np.exp(-np.abs(x - m) / s) / (2 * s)),
    "Cauchy": (lambda m, s: D.Cauchy(t(m), t(s)), lambda x, m, s: s / (np.pi * (s * s + (x - m) ** 2))),
    "Gumbel": (lambda m, s: D.Gumbel(t(m), t(s)), _gumbel),
    "LogNormal": (lambda m, s: D.LogNormal(t(m), t(s)), _lognormal),
    "HalfNormal": (
        lambda m, s: D.HalfNormal(t(s)),
        lambda x, m, s: np.where(x >= 0, 2 * normal_pdf(x, 0, s), 0.0),
    ),
    "Exponential": (
        lambda m, s: D.Exponential(t(s)),
        lambda x, m, s: np.where(x >= 0, s * np.exp(-s * x), 0.0),
    ),
    "Uniform": (
        lambda m, s: D.Uniform(t(m), t(m + s)),
        lambda x, m, s: np.where((x >= m) & (x < m + s), 1 / s, 0.0),
    ),
}
POSITIVE = {"LogNormal", "HalfNormal", "Exponential"}


def integrate(fn, center=0.0, width=1.0, n=400_001):
    """``int fn(x) dx`` over the real line, substituting ``x = center + width tan(u)``."""
    u = np.linspace(-np.pi / 2, np.pi / 2, n)[1:-1]
    x = center + width * np.tan(u)
    return np.trapezoid(fn(x) * width / np.cos(u) ** 2, u)


def check_gaussian_matrices(d, loc, cov):
    """A Gaussian family's covariance, precision, Cholesky factor, variance,
    mean and mode against NumPy's, from its mean ``loc`` and covariance
    ``cov``."""
    close(d.covariance_matrix, cov, 1e-10)
    close(d.precision_matrix, np.linalg.inv(cov), 1e-10)
    close(d.scale_tril, np.linalg.cholesky(cov), 1e-10)
    close(d.variance, np.diagonal(cov, axis1=-2, axis2=-1), 1e-10)
    close(d.mean, loc)
    close(d.mode, loc)
