"""Reference densities (written out in NumPy from their textbook definitions)
of the distribution families in test_distributions_more*.py, and quadratures
over bounded intervals and half-lines (test helper)."""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "concrete_pdf", "continuous_bernoulli_pdf", "gauss_legendre", "half_cauchy_pdf", "integrate_from",
    "logistic_relaxed_pdf", "mvn_logpdf", "pareto_pdf", "relaxed_bernoulli_pdf", "von_mises_pdf",
    "weibull_pdf",
]  # fmt: skip


def half_cauchy_pdf(x, s):
    return np.where(x >= 0, 2 / (np.pi * s * (1 + (x / s) ** 2)), 0.0)


def weibull_pdf(x, lam, k):
    xp = np.where(x > 0, x, 1.0)
    return np.where(x > 0, (k / lam) * (xp / lam) ** (k - 1) * np.exp(-((xp / lam) ** k)), 0.0)


def pareto_pdf(x, s, a):
    xp = np.where(x >= s, x, 1.0)
    return np.where(x >= s, a * s**a / xp ** (a + 1), 0.0)


def von_mises_pdf(x, m, k):
    return np.exp(k * np.cos(x - m)) / (2 * np.pi * np.i0(k))


def continuous_bernoulli_pdf(x, p):
    """``C(p) p^x (1 - p)^(1 - x)`` with ``C = 2 atanh(1 - 2p) / (1 - 2p)`` (2 at 1/2)."""
    p = np.asarray(p, dtype=float)
    u = 1 - 2 * p
    safe = np.where(u == 0, 0.5, u)  # any value off the 0/0 (and inside atanh's domain)
    c = np.where(u == 0, 2.0, 2 * np.arctanh(safe) / safe)
    return c * p**x * (1 - p) ** (1 - x)


def logistic_relaxed_pdf(y, temperature, logit):
    """The density of ``(logit(U) + logit) / temperature``: a scaled logistic."""
    z = logit - temperature * y
    return temperature * np.exp(z) / (1 + np.exp(z)) ** 2


def relaxed_bernoulli_pdf(x, temperature, logit):
    """``sigmoid`` of the above: the change of variables by ``y = log(x / (1 - x))``."""
    return logistic_relaxed_pdf(np.log(x / (1 - x)), temperature, logit) / (x * (1 - x))


def concrete_pdf(x, temperature, probs):
    """Maddison et al.'s concrete density on the simplex, over the first
    ``K - 1`` coordinates: ``(K-1)! T^(K-1) prod(a_k x_k^(-T-1)) / (sum a_i x_i^(-T))^K``."""
    k = len(probs)
    num = np.prod(probs * x ** (-temperature - 1), axis=-1)
    den = np.sum(probs * x ** (-temperature), axis=-1) ** k
    return math.factorial(k - 1) * temperature ** (k - 1) * num / den


def mvn_logpdf(x, mean, cov):
    """The multivariate normal log-density with a dense covariance."""
    diff = x - mean
    _, logdet = np.linalg.slogdet(cov)
    maha = np.einsum("...i,...i->...", diff, np.linalg.solve(cov, diff[..., None])[..., 0])
    return -0.5 * (len(mean) * np.log(2 * np.pi) + logdet + maha)


@functools.cache
def _legendre(n):
    return np.polynomial.legendre.leggauss(n)


def gauss_legendre(fn, a, b, n=400):
    """``int_a^b fn(x) dx`` by Gauss-Legendre quadrature (exact for smooth ``fn``)."""
    nodes, weights = _legendre(n)
    x = 0.5 * (b - a) * nodes + 0.5 * (b + a)
    return 0.5 * (b - a) * np.sum(weights * fn(x))


def integrate_from(fn, lower, width=1.0, n=400_001):
    """``int_lower^inf fn(x) dx``, substituting ``x = lower + width tan(u)``."""
    u = np.linspace(0, np.pi / 2, n)[:-1]
    x = lower + width * np.tan(u)
    return np.trapezoid(fn(x) * width / np.cos(u) ** 2, u)
