"""ferrograd.distributions, the last families (InverseGamma, FisherSnedecor,
NegativeBinomial, Kumaraswamy, LogisticNormal, GeneralizedPareto, Wishart,
LKJCholesky): densities against formulas written here with ``math.lgamma``
and NumPy; mean, variance, entropy and cdf against numerical integrals of
those densities or sums over the support; gradients by finite differences;
seeded samples against their laws; ``vmap`` against a loop, shapes and
argument validation.

Oracles: quadrature after substitutions that make the integrands decay fast
(``gamma_reference``, ``distribution_reference_more``); for LogisticNormal
the Jacobian of the inverse stick-breaking map by central differences; for
LKJCholesky the normalizing constant as a product of radial integrals over
balls; pathwise gradients against central differences of draws made again
from the same seed (the draws are then the same transformed noise).
"""

from __future__ import annotations

import math
import warnings

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from distribution_reference_more import gauss_legendre, integrate_from
from ferrograd.autograd import gradcheck
from gamma_reference import digamma, gamma_logpdf, lgamma, on_interval, on_positive
from numpy_oracle import close, npy, t

A = np.array([0.7, 2.5, 3.5])
B = np.array([1.5, 0.5, 2.0])
X = np.array([0.3, 1.2, 2.5])
U = np.array([0.15, 0.5, 0.85])


def moments_and_entropy(logpdf, quad):
    """Mean, variance and entropy of the density ``exp(logpdf)`` by the quadrature ``quad``."""
    mean = quad(lambda *x: x[0] * np.exp(logpdf(*x)))
    var = quad(lambda *x: (x[0] - mean) ** 2 * np.exp(logpdf(*x)))
    ent = quad(lambda *x: -np.exp(logpdf(*x)) * logpdf(*x))
    return mean, var, ent


def on_log_scale(fn, n=400_001):
    """``int_0^inf fn(x) dx`` with ``x = e^u`` over a range wide enough for heavy right tails."""
    u = np.linspace(-40.0, 120.0, n)
    x = np.exp(u)
    return np.trapezoid(fn(x) * x, u)


def pathwise_fd(make, theta, seed, h=1e-6):
    """The gradient of ``sum(rsample)`` in ``theta`` and its central difference over draws made
    again from the same seed."""
    leaf = t(theta, requires_grad=True)
    fg.manual_seed(seed)
    make(leaf).rsample((5,)).sum().backward()
    fd = []
    for i in range(len(theta)):
        sums = []
        for sign in (1, -1):
            shifted = np.array(theta, dtype=float)
            shifted[i] += sign * h
            fg.manual_seed(seed)
            sums.append(float(make(t(shifted)).rsample((5,)).sum()))
        fd.append((sums[0] - sums[1]) / (2 * h))
    return npy(leaf.grad), np.array(fd)


# InverseGamma ------------------------------------------------------------------------------------


def inverse_gamma_logpdf(x, a, b):
    return a * np.log(b) - lgamma(a) - (a + 1) * np.log(x) - b / x


def test_inverse_gamma_density_moments_entropy():
    d = D.InverseGamma(t(A), t(B))
    close(d.log_prob(t(X)), inverse_gamma_logpdf(X, A, B), 1e-12)
    # 1 / X has the gamma density of X times 1 / y^2.
    close(d.log_prob(t(X)), gamma_logpdf(1 / X, A, B) - 2 * np.log(X), 1e-12)
    for i in range(3):
        ent = moments_and_entropy(lambda x, i=i: inverse_gamma_logpdf(x, A[i], B[i]), on_log_scale)[2]
        assert npy(d.entropy())[i] == pytest.approx(ent, rel=1e-8)
    mean, var, _ = moments_and_entropy(lambda x: inverse_gamma_logpdf(x, 3.5, 2.0), on_log_scale)
    close(D.InverseGamma(t(3.5), 2.0).mean, mean, 1e-8)
    close(D.InverseGamma(t(3.5), 2.0).variance, var, 1e-8)
    close(d.mean, [math.inf, 0.5 / 1.5, 2.0 / 2.5])
    close(d.variance, [math.inf, 0.25 / (1.5**2 * 0.5), 4.0 / (2.5**2 * 1.5)])
    grid = np.linspace(0.01, 10, 200_001)
    for i in range(3):
        peak = grid[np.argmax(inverse_gamma_logpdf(grid, A[i], B[i]))]
        assert npy(d.mode)[i] == pytest.approx(peak, abs=1e-4)
    assert d.support is D.constraints.positive and d.has_rsample


# FisherSnedecor ----------------------------------------------------------------------------------

DF1 = np.array([1.0, 3.0, 6.5])
DF2 = np.array([2.5, 5.0, 9.0])


def fisher_logpdf(x, m, n):
    log_beta = lgamma(m / 2) + lgamma(n / 2) - lgamma((m + n) / 2)
    return (m / 2) * np.log(m / n) + (m / 2 - 1) * np.log(x) - (m + n) / 2 * np.log1p(m * x / n) - log_beta


def test_fisher_snedecor_density_and_moments():
    d = D.FisherSnedecor(t(DF1), t(DF2))
    close(d.log_prob(t(X)), fisher_logpdf(X, DF1, DF2), 1e-12)
    for i in range(3):
        mean, var, _ = moments_and_entropy(lambda x, i=i: fisher_logpdf(x, DF1[i], DF2[i]), on_log_scale)
        if DF2[i] > 2:
            assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-6)
        if DF2[i] > 4:
            assert npy(d.variance)[i] == pytest.approx(var, rel=1e-5)
    assert np.isnan(npy(d.variance)[0]) and np.isnan(npy(d.mode)[0])
    grid = np.linspace(1e-4, 5, 500_001)
    assert npy(d.mode)[2] == pytest.approx(grid[np.argmax(fisher_logpdf(grid, 6.5, 9.0))], abs=1e-4)
    close(D.FisherSnedecor(t(3.0), 2.0).mean, math.nan)
    with pytest.raises(NotImplementedError):
        d.entropy()


# NegativeBinomial --------------------------------------------------------------------------------

R = np.array([0.5, 2.0, 7.3])
P = np.array([0.2, 0.45, 0.7])


def negative_binomial_logpmf(k, r, p):
    return lgamma(k + r) - lgamma(k + 1) - lgamma(r) + k * np.log(p) + r * np.log1p(-p)


def test_negative_binomial_mass_and_moments():
    k = np.array([0.0, 3.0, 5.0])
    for d in (D.NegativeBinomial(t(R), probs=t(P)), D.NegativeBinomial(t(R), logits=t(np.log(P / (1 - P))))):
        close(d.log_prob(t(k)), negative_binomial_logpmf(k, R, P), 1e-10)
        support = np.arange(0.0, 3000.0)[:, None]
        mass = np.exp(negative_binomial_logpmf(support, R, P))
        close(mass.sum(0), np.ones(3), 1e-10)
        mean = (support * mass).sum(0)
        close(d.mean, mean, 1e-9)
        close(d.variance, ((support - mean) ** 2 * mass).sum(0), 1e-9)
        close(d.mode, np.argmax(mass, axis=0).astype(float))
    # r = 0 is the point mass at 0.
    close(D.NegativeBinomial(0.0, probs=0.3).log_prob(t([0.0, 2.0])), [0.0, -math.inf])
    assert D.NegativeBinomial(2.0, probs=0.3).support is D.constraints.nonnegative_integer
    with pytest.raises(NotImplementedError):
        D.NegativeBinomial(2.0, probs=0.3).entropy()


# Kumaraswamy -------------------------------------------------------------------------------------


def kumaraswamy_logpdf(x, a, b, xc=None):
    """The log-density; ``xc = 1 - x``, when given, keeps ``1 - x^a`` accurate near 1."""
    log_x = np.log(x) if xc is None else np.where(x < 0.5, np.log(x), np.log1p(-np.minimum(xc, 0.5)))
    return np.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log(-np.expm1(a * log_x))


def test_kumaraswamy_density_moments_entropy_mode():
    d = D.Kumaraswamy(t(A), t(B))
    close(d.log_prob(t(U)), kumaraswamy_logpdf(U, A, B), 1e-12)
    for i in range(3):
        mean, var, ent = moments_and_entropy(lambda x, xc, i=i: kumaraswamy_logpdf(x, A[i], B[i], xc), _unit)
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-8)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-7)
        assert npy(d.entropy())[i] == pytest.approx(ent, rel=1e-7, abs=1e-9)
    grid = np.linspace(1e-6, 1 - 1e-6, 1_000_001)
    assert np.isnan(npy(d.mode)[[0, 1]]).all()
    assert npy(d.mode)[2] == pytest.approx(grid[np.argmax(kumaraswamy_logpdf(grid, 3.5, 2.0))], abs=1e-5)
    close(D.Kumaraswamy(t([1.0, 2.0]), t([3.0, 1.0])).mode, [0.0, 1.0])


def _unit(fn):
    return on_interval(fn, 0.0, 1.0)


# LogisticNormal ----------------------------------------------------------------------------------


def stick_inverse(y):
    """The NumPy inverse of the stick-breaking map: ``R^K`` coordinates of the first ``K`` of ``y``."""
    k = len(y)
    z = y / (1 - np.concatenate([[0.0], np.cumsum(y)[:-1]]))
    return np.log(z / (1 - z)) + np.log(k + 1 - np.arange(1, k + 1))


def logistic_normal_logpdf(y, loc, scale, h=1e-6):
    """The density of the first ``K`` coordinates of ``y``: the normal density of the inverse
    times its Jacobian determinant, by central differences."""
    y = np.asarray(y[:-1], dtype=float)
    jac = np.stack([(stick_inverse(y + h * e) - stick_inverse(y - h * e)) / (2 * h) for e in np.eye(len(y))])
    x = stick_inverse(y)
    normal = -0.5 * ((x - loc) / scale) ** 2 - np.log(scale) - 0.5 * np.log(2 * np.pi)
    return normal.sum() + np.log(abs(np.linalg.det(jac)))


def test_logistic_normal_density_and_samples():
    loc, scale = np.array([0.3, -0.5, 1.0]), np.array([0.7, 1.2, 0.4])
    d = D.LogisticNormal(t(loc), t(scale))
    assert d.batch_shape == () and d.event_shape == (4,) and d.support is D.constraints.simplex
    y = np.array([0.2, 0.3, 0.1, 0.4])
    assert float(d.log_prob(t(y))) == pytest.approx(logistic_normal_logpdf(y, loc, scale), rel=1e-7)
    close(d.loc, loc)
    close(d.scale, scale)
    fg.manual_seed(5)
    samples = npy(d.sample((20_000,)))
    assert samples.shape == (20_000, 4) and (samples > 0).all()
    close(samples.sum(-1), np.ones(20_000), 1e-12)
    x = np.stack([stick_inverse(s[:-1]) for s in samples[:2000]])
    assert np.abs(x.mean(0) - loc).max() < 0.1 and np.abs(x.std(0) / scale - 1).max() < 0.1
    # A scalar pair is one coordinate: a two-category event.
    assert D.LogisticNormal(0.0, 1.0).event_shape == (2,)


# GeneralizedPareto -------------------------------------------------------------------------------

GP_LOC = np.array([0.0, 1.0, 0.5])
GP_SCALE = np.array([1.5, 0.5, 2.0])
GP_CONC = np.array([-0.5, 0.0, 0.3])


def gp_logpdf(x, m, s, c):
    z = (x - m) / s
    if c == 0:
        return -np.log(s) - z
    return -np.log(s) - (1 / c + 1) * np.log1p(c * z)


def _gp_quad(i, fn):
    m, s, c = GP_LOC[i], GP_SCALE[i], GP_CONC[i]
    if c < 0:
        return gauss_legendre(fn, m, m - s / c, n=2000)
    return integrate_from(fn, m, width=s)


def test_generalized_pareto_density_cdf_moments_entropy():
    d = D.GeneralizedPareto(t(GP_LOC), t(GP_SCALE), t(GP_CONC))
    x = np.array([0.5, 1.5, 2.0])
    close(d.log_prob(t(x)), [gp_logpdf(x[i], GP_LOC[i], GP_SCALE[i], GP_CONC[i]) for i in range(3)], 1e-12)
    for i in range(3):
        args = (GP_LOC[i], GP_SCALE[i], GP_CONC[i])
        cdf = gauss_legendre(lambda v, args=args: np.exp(gp_logpdf(v, *args)), GP_LOC[i], x[i])
        assert npy(d.cdf(t(x)))[i] == pytest.approx(cdf, rel=1e-10)
        quad = lambda f, i=i: _gp_quad(i, f)  # noqa: E731
        mean, var, ent = moments_and_entropy(lambda v, args=args: gp_logpdf(v, *args), quad)
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-6)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-5)
        assert npy(d.entropy())[i] == pytest.approx(ent, rel=1e-6)
    close(d.icdf(d.cdf(t(x))), x, 1e-10)
    close(d.mode, GP_LOC)
    close(d.support.upper_bound, [3.0, math.inf, math.inf])
    # c = -1 is the uniform on [loc, loc + scale], also at its upper end.
    close(D.GeneralizedPareto(t(0.0), 2.0, -1.0).log_prob(t([0.5, 2.0])), [-math.log(2.0)] * 2)
    close(D.GeneralizedPareto(t(0.0), 1.0, t([1.0, 0.6])).mean, [math.nan, 2.5])
    close(D.GeneralizedPareto(t(0.0), 1.0, t([0.5, 0.2])).variance, [math.nan, 1 / (0.64 * 0.6)])
    close(d.log_cdf(t(x)), np.log(npy(d.cdf(t(x)))), 1e-12)


def test_generalized_pareto_samples_follow_cdf():
    d = D.GeneralizedPareto(t(GP_LOC), t(GP_SCALE), t(GP_CONC))
    fg.manual_seed(7)
    n = 20_000
    samples = np.sort(npy(d.sample((n,))), axis=0)
    cdf = npy(d.cdf(t(samples)))
    assert np.max(np.abs(cdf - np.arange(1, n + 1)[:, None] / n)) < 0.02


# Wishart -----------------------------------------------------------------------------------------

COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, -0.3], [0.1, -0.3, 1.5]])


def multigammaln(a, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a + (1 - j) / 2) for j in range(1, p + 1))


def wishart_logpdf(x, df, cov):
    p = len(cov)
    _, logdet_x = np.linalg.slogdet(x)
    _, logdet_v = np.linalg.slogdet(cov)
    trace = np.trace(np.linalg.solve(cov, x))
    log_norm = df * p / 2 * math.log(2) + df / 2 * logdet_v + multigammaln(df / 2, p)
    return (df - p - 1) / 2 * logdet_x - trace / 2 - log_norm


def test_wishart_log_prob_matches_density():
    x = np.array([[3.0, 0.4, 0.2], [0.4, 2.0, 0.1], [0.2, 0.1, 4.0]])
    scale_tril = np.linalg.cholesky(COV)
    for kwargs in (
        {"covariance_matrix": t(COV)},
        {"precision_matrix": t(np.linalg.inv(COV))},
        {"scale_tril": t(scale_tril)},
    ):
        d = D.Wishart(t([4.5, 6.0]), **kwargs)
        assert d.batch_shape == (2,) and d.event_shape == (3, 3)
        close(d.log_prob(t(x)), [wishart_logpdf(x, df, COV) for df in (4.5, 6.0)], 1e-10)
        close(d.covariance_matrix, np.broadcast_to(COV, (2, 3, 3)), 1e-12)
        close(d.precision_matrix, np.broadcast_to(np.linalg.inv(COV), (2, 3, 3)), 1e-10)
    d = D.Wishart(t([4.5, 6.0]), covariance_matrix=t(COV))
    close(d.mean, np.array([4.5, 6.0])[:, None, None] * COV, 1e-12)
    close(d.mode, np.array([0.5, 2.0])[:, None, None] * COV, 1e-12)
    diag = np.diag(COV)
    close(d.variance, np.array([4.5, 6.0])[:, None, None] * (COV**2 + np.outer(diag, diag)), 1e-12)


def test_wishart_of_one_dimension_is_a_gamma_and_entropy():
    # p = 1: X = v * Chi2(df) is Gamma(df / 2, 1 / (2 v)).
    df, v = np.array([0.7, 3.0]), 2.5
    with pytest.warns(UserWarning, match="Low df"):
        d = D.Wishart(t(df), covariance_matrix=t([[v]]))
    x = np.array([1.3, 4.0])
    close(d.log_prob(t(x)[:, None, None]), gamma_logpdf(x, df / 2, 1 / (2 * v)), 1e-12)
    ent = [
        moments_and_entropy(lambda y, a=a: gamma_logpdf(y, a / 2, 1 / (2 * v)), on_positive)[2] for a in df
    ]
    close(d.entropy(), ent, 1e-8)
    # The entropy's multivariate digamma against central differences of lgamma.
    p, nu = 3, 4.5
    mvdigamma = sum(digamma(nu / 2 - j / 2) for j in range(p))
    logdet = np.linalg.slogdet(COV)[1]
    want = (p + 1) / 2 * (p * math.log(2) + logdet) + multigammaln(nu / 2, p) - (nu - p - 1) / 2 * mvdigamma
    got = float(D.Wishart(nu, covariance_matrix=t(COV)).entropy())
    assert got == pytest.approx(want + nu * p / 2, rel=1e-8)


def test_wishart_samples():
    d = D.Wishart(t([4.5, 8.0]), covariance_matrix=t(COV))
    fg.manual_seed(11)
    samples = npy(d.sample((20_000,)))
    assert samples.shape == (20_000, 2, 3, 3)
    close(samples, np.swapaxes(samples, -1, -2), 1e-12)
    assert (np.linalg.eigvalsh(samples) > 0).all()
    mean = samples.mean(0)
    sd = np.sqrt(npy(d.variance) / 20_000)
    assert (np.abs(mean - npy(d.mean)) < 5 * sd).all()
    entropy = -npy(d.log_prob(t(samples))).mean(0)
    close(entropy, npy(d.entropy()), 0.05)


def test_wishart_singular_draws_are_redrawn():
    with pytest.warns(UserWarning, match="Low df"):
        d = D.Wishart(fg.tensor(1.05, dtype=fg.float64), covariance_matrix=fg.eye(2, dtype=fg.float64))
    fg.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = d.sample((200,))
    assert samples.shape == (200, 2, 2)


# LKJCholesky -------------------------------------------------------------------------------------


def lkj_log_normalizer(dim, eta):
    """``log`` of the integral of ``prod_{i>=2} L_ii^(dim - i + 2 eta - 2)`` over the strictly lower
    entries: row ``i`` ranges over the unit ball of dimension ``i - 1`` with ``L_ii = sqrt(1 - r^2)``,
    integrated radially (``r = sin(theta)``, smooth at ``r = 1``) times the area of the unit sphere."""
    total = 0.0
    for i in range(2, dim + 1):
        k, e = i - 1, dim - i + 2 * eta - 2
        area = 2 * math.pi ** (k / 2) / math.gamma(k / 2)
        radial = gauss_legendre(
            lambda th, k=k, e=e: np.sin(th) ** (k - 1) * np.cos(th) ** (e + 1), 0.0, math.pi / 2, n=4000
        )
        total += math.log(area * radial)
    return total


def lkj_logpdf(chol, eta):
    dim = len(chol)
    exponents = dim - np.arange(2, dim + 1) + 2 * eta - 2
    return (exponents * np.log(np.diag(chol)[1:])).sum() - lkj_log_normalizer(dim, eta)


def random_corr_cholesky(rng, dim):
    a = rng.normal(size=(dim, dim + 2))
    chol = np.linalg.cholesky(a @ a.T)
    return chol / np.linalg.norm(chol, axis=-1, keepdims=True)


def test_lkj_log_prob_matches_density():
    rng = np.random.default_rng(0)
    for dim, eta in ((2, 0.5), (3, 1.0), (3, 2.5), (5, 1.7)):
        chol = random_corr_cholesky(rng, dim)
        got = float(D.LKJCholesky(dim, t(eta)).log_prob(t(chol)))
        assert got == pytest.approx(lkj_logpdf(chol, eta), rel=1e-6), (dim, eta)
    # dim = 2: the correlation r has (1 + r) / 2 ~ Beta(eta, eta).
    r, eta = 0.35, 1.8
    chol = np.array([[1.0, 0.0], [r, math.sqrt(1 - r * r)]])
    log_beta = 2 * math.lgamma(eta) - math.lgamma(2 * eta)
    want = (eta - 1) * math.log((1 + r) / 2 * (1 - r) / 2) - log_beta - math.log(2)
    assert float(D.LKJCholesky(2, t(eta)).log_prob(t(chol))) == pytest.approx(want, rel=1e-12)


def test_lkj_samples_are_correlation_cholesky_factors():
    conc = np.array([0.5, 2.0])
    d = D.LKJCholesky(4, t(conc))
    assert d.batch_shape == (2,) and d.event_shape == (4, 4) and not d.has_rsample
    fg.manual_seed(3)
    samples = npy(d.sample((20_000,)))
    assert samples.shape == (20_000, 2, 4, 4)
    close(np.triu(samples, 1), np.zeros_like(samples))
    assert (np.diagonal(samples, axis1=-2, axis2=-1) > 0).all()
    close(np.linalg.norm(samples, axis=-1), np.ones((20_000, 2, 4)), 1e-12)
    assert bool(D.constraints.corr_cholesky.check(t(samples)).all())
    # Each off-diagonal correlation has (1 + r) / 2 ~ Beta(b, b), b = eta - 1 + dim / 2: variance
    # 1 / (2 eta + dim - 1), the same for every entry (the law is exchangeable).
    corr = samples @ np.swapaxes(samples, -1, -2)
    for j, eta in enumerate(conc):
        off = corr[:, j][:, np.tril_indices(4, -1)[0], np.tril_indices(4, -1)[1]]
        assert np.abs(off.mean(0)).max() < 0.03
        assert np.abs(off.var(0) * (2 * eta + 3) - 1).max() < 0.06


# Shared: gradients, pathwise draws, vmap, shapes, validation ------------------------------------


def test_gradcheck_log_prob():
    a, b = t(A, requires_grad=True), t(B, requires_grad=True)
    x, u = t(X, requires_grad=True), t(U, requires_grad=True)
    assert gradcheck(lambda a, b, x: D.InverseGamma(a, b).log_prob(x), (a, b, x))
    assert gradcheck(lambda a, b: D.InverseGamma(a, b).entropy(), (a, b))
    assert gradcheck(lambda a, b, x: D.FisherSnedecor(a, b).log_prob(x), (a, b, x))
    assert gradcheck(lambda r, p: D.NegativeBinomial(r, probs=p).log_prob(t([0.0, 3.0, 5.0])), (b, u))
    assert gradcheck(lambda r, p: D.NegativeBinomial(r, logits=p).log_prob(t([0.0, 3.0, 5.0])), (b, x))
    assert gradcheck(lambda a, b, u: D.Kumaraswamy(a, b).log_prob(u), (a, b, u))
    assert gradcheck(lambda a, b: D.Kumaraswamy(a, b).entropy(), (a, b))
    y = t([0.2, 0.3, 0.1, 0.4], requires_grad=True)
    assert gradcheck(lambda m, s, y: D.LogisticNormal(m, s).log_prob(y / y.sum()), (x, a, y))
    m, c = t(GP_LOC, requires_grad=True), t(GP_CONC + 0.05, requires_grad=True)
    assert gradcheck(lambda m, s, c: D.GeneralizedPareto(m, s, c).log_prob(t([0.5, 1.5, 2.0])), (m, b, c))
    assert gradcheck(lambda m, s, c: D.GeneralizedPareto(m, s, c).cdf(t([0.5, 1.5, 2.0])), (m, b, c))
    assert gradcheck(lambda u: D.GeneralizedPareto(t(GP_LOC), t(GP_SCALE), t(GP_CONC)).icdf(u), (u,))
    tril = t(np.linalg.cholesky(COV), requires_grad=True)
    value = t(np.array([[3.0, 0.4, 0.2], [0.4, 2.0, 0.1], [0.2, 0.1, 4.0]]), requires_grad=True)
    df = t([4.5], requires_grad=True)
    assert gradcheck(lambda df, tr, v: D.Wishart(df, scale_tril=tr.tril()).log_prob(v), (df, tril, value))
    assert gradcheck(lambda df, tr: D.Wishart(df, scale_tril=tr.tril()).entropy(), (df, tril))
    chol = t(random_corr_cholesky(np.random.default_rng(1), 3), requires_grad=True)
    unit_rows = lambda v: v.tril() / v.tril().norm(dim=-1, keepdim=True)  # noqa: E731  (in the support)
    eta = t([1.5], requires_grad=True)
    assert gradcheck(lambda e, v: D.LKJCholesky(3, e).log_prob(unit_rows(v)), (eta, chol))


@pytest.mark.parametrize(
    ("make", "theta"),
    [
        (lambda r: D.InverseGamma(t(A), r), B),
        (lambda a: D.Kumaraswamy(a[:3], a[3:]), np.concatenate([A, B])),
        (lambda m: D.LogisticNormal(m[:3], m[3:]), np.concatenate([X, B])),
        (
            lambda p: D.GeneralizedPareto(p[:3], p[3:6], p[6:]),
            np.concatenate([GP_LOC, GP_SCALE, GP_CONC + 0.05]),
        ),
        (
            lambda s: D.Wishart(t(4.5), scale_tril=s.reshape(2, 2).tril() + t(np.eye(2))),
            np.array([0.5, 0.0, 0.3, 0.2]),
        ),
    ],
)
def test_rsample_pathwise_gradient_is_the_derivative_of_the_draw(make, theta):
    grad, fd = pathwise_fd(make, theta, seed=4)
    close(grad, fd, 1e-5)


def test_rsample_gradient_in_gamma_shapes_matches_mean_derivative():
    # Gamma draws in the shape parameter use implicit gradients: compare on average.
    n = 200_000
    a = t([3.5], requires_grad=True)
    fg.manual_seed(9)
    D.InverseGamma(a, t([2.0])).rsample((n,)).mean().backward()
    assert float(a.grad) == pytest.approx(-2.0 / 2.5**2, rel=0.05)  # d/da of b / (a - 1)
    df2 = t([9.0], requires_grad=True)
    fg.manual_seed(9)
    D.FisherSnedecor(t([6.5]), df2).rsample((n,)).mean().backward()
    assert float(df2.grad) == pytest.approx(-2.0 / 7.0**2, rel=0.1)  # d/dn of n / (n - 2)


def test_seeded_sample_statistics():
    fg.manual_seed(21)
    n = 40_000
    cases = [
        (D.InverseGamma(t([3.5, 5.0]), t([2.0, 1.0])), None),
        (D.FisherSnedecor(t([6.5, 3.0]), t([9.0, 12.0])), None),
        (D.NegativeBinomial(t(R), probs=t(P)), None),
        (D.Kumaraswamy(t(A), t(B)), None),
    ]
    for d, _ in cases:
        samples = npy(d.sample((n,)))
        assert samples.shape == (n,) + tuple(d.batch_shape)
        sd = np.sqrt(npy(d.variance) / n)
        assert (np.abs(samples.mean(0) - npy(d.mean)) < 6 * sd).all(), type(d).__name__
    counts = npy(D.NegativeBinomial(t(R), probs=t(P)).sample((10,)))
    close(counts, np.round(counts))


def test_vmap_log_prob_equals_loop():
    from ferrograd.func import vmap

    batch = t(np.array([[0.7, 1.3, 2.0], [1.5, 0.4, 3.0]]))
    x, u = t(X), t(U)
    chol = t(random_corr_cholesky(np.random.default_rng(2), 3))
    cases = [
        lambda a: D.InverseGamma(a, 2.0).log_prob(x),
        lambda a: D.FisherSnedecor(a, 3.0).log_prob(x),
        lambda a: D.NegativeBinomial(a, probs=0.4).log_prob(t([0.0, 1.0, 4.0])),
        lambda a: D.Kumaraswamy(a, 1.5).log_prob(u),
        lambda a: D.LogisticNormal(a, 1.0).log_prob(t([0.2, 0.3, 0.1, 0.4])),
        lambda a: D.GeneralizedPareto(0.0, a, 0.2).log_prob(x),
        lambda a: D.Wishart(a + 3.0, covariance_matrix=t(COV)).log_prob(t(COV)),
        lambda a: D.LKJCholesky(3, a).log_prob(chol),
    ]
    for fn in cases:
        close(vmap(fn)(batch), np.stack([npy(fn(row)) for row in batch]), 1e-12)


@pytest.mark.parametrize(
    ("make", "value"),
    [
        (lambda: D.InverseGamma(t(A), t(B)), X),
        (lambda: D.FisherSnedecor(t(DF1), t(DF2)), X),
        (lambda: D.NegativeBinomial(t(R), probs=t(P)), np.array([0.0, 1.0, 3.0])),
        (lambda: D.NegativeBinomial(t(R), logits=t(P)), np.array([0.0, 1.0, 3.0])),
        (lambda: D.Kumaraswamy(t(A), t(B)), U),
        (lambda: D.GeneralizedPareto(t(GP_LOC), t(GP_SCALE), t(GP_CONC)), np.array([0.5, 1.5, 2.0])),
    ],
)
def test_shapes_and_expand(make, value):
    d = make()
    assert d.batch_shape == (3,) and d.event_shape == ()
    e = d.expand((4, 3))
    assert type(e) is type(d) and e.batch_shape == (4, 3)
    close(e.log_prob(t(value)), np.broadcast_to(npy(d.log_prob(t(value))), (4, 3)), 1e-12)
    assert d.sample((2,)).shape == (2, 3) and e.sample().shape == (4, 3)
    with pytest.raises(RuntimeError):
        d.expand((2,))


def test_matrix_and_simplex_shapes_and_expand():
    d = D.LogisticNormal(t(np.zeros((2, 3))), 1.0)
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    e = d.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.rsample((3,)).shape == (3, 5, 2, 4)
    w = D.Wishart(t([4.0, 5.0]), covariance_matrix=t(COV)).expand((3, 2))
    assert w.batch_shape == (3, 2) and w.rsample((2,)).shape == (2, 3, 2, 3, 3)
    close(w.mean[1], npy(D.Wishart(t([4.0, 5.0]), covariance_matrix=t(COV)).mean), 1e-12)
    k = D.LKJCholesky(3, t([1.0, 2.0])).expand((4, 2))
    assert k.batch_shape == (4, 2) and k.sample((2,)).shape == (2, 4, 2, 3, 3)
    chol = t(random_corr_cholesky(np.random.default_rng(3), 3))
    close(k.log_prob(chol)[2], npy(D.LKJCholesky(3, t([1.0, 2.0])).log_prob(chol)), 1e-12)


@pytest.mark.parametrize(
    ("make", "param"),
    [
        (lambda: D.InverseGamma(t([1.0, -1.0]), 1.0), "concentration"),
        (lambda: D.InverseGamma(1.0, t([0.0])), "rate"),
        (lambda: D.FisherSnedecor(t([-1.0]), 1.0), "df1"),
        (lambda: D.NegativeBinomial(t([-1.0]), probs=0.5), "total_count"),
        (lambda: D.NegativeBinomial(1.0, probs=t([1.0])), "probs"),
        (lambda: D.Kumaraswamy(1.0, t([0.0])), "concentration0"),
        (lambda: D.LogisticNormal(t([0.0]), t([-1.0])), "scale"),
        (lambda: D.GeneralizedPareto(0.0, t([-1.0]), 0.5), "scale"),
        (lambda: D.Wishart(t(3.0), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])), "covariance_matrix"),
        (lambda: D.LKJCholesky(3, t([0.0])), "concentration"),
    ],
)
def test_invalid_parameters_raise_value_error(make, param):
    with pytest.raises(ValueError, match=f"Expected parameter {param}"):
        make()


def test_argument_errors_and_support_validation():
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.NegativeBinomial(1.0)
    with pytest.raises(ValueError, match="Exactly one of"):
        D.Wishart(3.0, covariance_matrix=t(COV), scale_tril=t(np.eye(3)))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        D.Wishart(3.0, covariance_matrix=t([1.0]))
    with pytest.raises(ValueError, match="square"):
        D.Wishart(3.0, covariance_matrix=t(np.ones((2, 3))))
    with pytest.raises(ValueError, match="greater than ndim - 1"):
        D.Wishart(t([1.5]), covariance_matrix=t(COV))
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        D.LKJCholesky(1)
    with pytest.raises(TypeError, match="dim must be an int"):
        D.LKJCholesky(2.5)
    with pytest.raises(ValueError, match="within the support"):
        D.InverseGamma(1.0, 1.0, validate_args=True).log_prob(t([-1.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.NegativeBinomial(2.0, probs=0.5, validate_args=True).log_prob(t([1.5]))
    with pytest.raises(ValueError, match="within the support"):
        D.GeneralizedPareto(0.0, 1.0, -0.5, validate_args=True).log_prob(t([2.5]))
    with pytest.raises(ValueError, match="within the support"):
        D.LKJCholesky(2, validate_args=True).log_prob(t(np.eye(2) * 2))
