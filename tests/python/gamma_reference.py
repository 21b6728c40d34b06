"""Reference log-densities of the gamma-family distributions (written out
with ``math.lgamma``), ``digamma`` by a central difference, and quadratures
over the half-line and over intervals suited to them (test helper)."""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "beta_logpdf", "binomial_logpmf", "digamma", "gamma_logpdf", "lgamma", "on_interval", "on_positive",
    "poisson_logpmf", "student_logpdf",
]  # fmt: skip

lgamma = np.vectorize(math.lgamma)


def digamma(x, h=1e-5):
    """``d/dx lgamma(x)`` by a central difference (error about 1e-10)."""
    return (lgamma(np.asarray(x) + h) - lgamma(np.asarray(x) - h)) / (2 * h)


def on_positive(fn, n=200_001):
    """``int_0^inf fn(x) dx`` with ``x = e^u``."""
    u = np.linspace(-80.0, 8.0, n)
    x = np.exp(u)
    return np.trapezoid(fn(x) * x, u)


def on_interval(fn, lo, hi, n=200_001):
    """``int_lo^hi fn(x, hi - x) dx`` with ``x = lo + (hi - lo) sigmoid(u)``; ``fn``
    also gets the distance to ``hi``, exact near ``hi`` where ``hi - x`` would round to 0."""
    u = np.linspace(-80.0, 80.0, n)
    s, sc = 1 / (1 + np.exp(-u)), 1 / (1 + np.exp(u))
    return np.trapezoid(fn(lo + (hi - lo) * s, (hi - lo) * sc) * (hi - lo) * s * sc, u)


def gamma_logpdf(x, a, b):
    """The gamma log-density with shape ``a`` and rate ``b``."""
    return a * np.log(b) + (a - 1) * np.log(x) - b * x - lgamma(a)


def beta_logpdf(x, xc, a, b):
    """The beta log-density at ``x``, given ``xc = 1 - x`` separately."""
    return (a - 1) * np.log(x) + (b - 1) * np.log(xc) - (lgamma(a) + lgamma(b) - lgamma(a + b))


def student_logpdf(x, df, m, s):
    """The Student t log-density with ``df`` degrees of freedom, location ``m`` and scale ``s``."""
    y = (x - m) / s
    norm = lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * np.log(df * math.pi) - np.log(s)
    return norm - (df + 1) / 2 * np.log1p(y * y / df)


def poisson_logpmf(k, rate):
    """The Poisson log-mass."""
    return k * np.log(rate) - rate - lgamma(k + 1)


def binomial_logpmf(k, n, p):
    """The binomial log-mass of ``k`` successes in ``n`` trials."""
    log_choose = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)
    return log_choose + k * np.log(p) + (n - k) * np.log1p(-p)
