"""ferrograd.distributions, discrete and multivariate families (Bernoulli,
Geometric, Categorical, OneHotCategorical, Multinomial, MultivariateNormal):
probability masses and moments against NumPy sums over the support written
in the test, gradients by finite differences, samples, shapes, and argument
validation."""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from distribution_reference import check_gaussian_matrices
from ferrograd.autograd import gradcheck
from numpy_oracle import close, npy, t

P = np.array([0.15, 0.5, 0.9])
PROBS = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]])


# Bernoulli / Geometric ---------------------------------------------------------------


def test_bernoulli_mass_entropy_moments():
    for d in (D.Bernoulli(probs=t(P)), D.Bernoulli(logits=t(np.log(P / (1 - P))))):
        close(d.log_prob(t([1.0, 0.0, 1.0])), np.log([P[0], 1 - P[1], P[2]]), 1e-12)
        close(d.entropy(), -(P * np.log(P) + (1 - P) * np.log1p(-P)), 1e-12)
        close(d.mean, P, 1e-12)
        close(d.variance, P * (1 - P), 1e-12)
        close(d.probs, P, 1e-12)
        close(d.logits, np.log(P) - np.log1p(-P), 1e-12)
    mode = npy(D.Bernoulli(probs=t(P)).mode)
    assert mode[0] == 0 and np.isnan(mode[1]) and mode[2] == 1


def test_bernoulli_enumerate_support_and_samples():
    d = D.Bernoulli(probs=t(P))
    assert d.has_enumerate_support
    close(d.enumerate_support(), np.array([[0.0] * 3, [1.0] * 3]))
    assert d.enumerate_support(expand=False).shape == (2, 1)
    fg.manual_seed(0)
    s = npy(d.sample((20_000,)))
    assert set(np.unique(s)) <= {0.0, 1.0}
    assert np.all(np.abs(s.mean(0) - P) < 6 * np.sqrt(P * (1 - P) / 20_000))


def test_geometric_mass_entropy_moments():
    k = np.arange(0, 4000)
    for i, p in enumerate(P):
        pmf = (1 - p) ** k * p
        d = D.Geometric(probs=t(P))
        close(d.log_prob(t(np.array([3.0, 3.0, 3.0])))[i], np.log((1 - p) ** 3 * p), 1e-12)
        assert npy(d.entropy())[i] == pytest.approx(-(pmf * np.log(pmf + (pmf == 0))).sum(), rel=1e-10)
        assert npy(d.mean)[i] == pytest.approx((k * pmf).sum(), rel=1e-10)
        assert npy(d.variance)[i] == pytest.approx(((k - (k * pmf).sum()) ** 2 * pmf).sum(), rel=1e-8)
    close(D.Geometric(probs=t([1.0])).log_prob(t([0.0])), [0.0])
    close(D.Geometric(logits=t(np.log(P / (1 - P)))).probs, P, 1e-12)


def test_geometric_samples():
    d = D.Geometric(probs=t(P))
    fg.manual_seed(4)
    s = npy(d.sample((20_000,)))
    assert np.all(s == np.floor(s)) and np.all(s >= 0)
    mean, var = (1 - P) / P, (1 - P) / P**2
    assert np.all(np.abs(s.mean(0) - mean) < 6 * np.sqrt(var / 20_000))


# Categorical family ----------------------------------------------------------------------


def test_categorical_mass_entropy():
    k = np.array([3, 0])
    for d in (D.Categorical(probs=t(PROBS * 3.0)), D.Categorical(logits=t(np.log(PROBS) + 2.0))):
        close(d.probs, PROBS, 1e-12)
        close(d.log_prob(t(k, dtype=fg.int64)), np.log(PROBS[[0, 1], k]), 1e-12)
        close(d.entropy(), -(PROBS * np.log(PROBS)).sum(-1), 1e-12)
        close(d.mode, np.array([3, 2]))
        assert np.isnan(npy(d.mean)).all() and d.mean.shape == (2,)
    close(D.Categorical(probs=t([0.0, 1.0])).entropy(), 0.0)


def test_categorical_shapes_and_samples():
    d = D.Categorical(probs=t(PROBS))
    assert d.batch_shape == (2,) and d.event_shape == ()
    assert d.sample((5, 3)).shape == (5, 3, 2) and d.sample().dtype == fg.int64
    close(d.enumerate_support(), np.array([[0, 0], [1, 1], [2, 2], [3, 3]]))
    assert d.expand((4, 2)).sample().shape == (4, 2)
    assert d.log_prob(t(np.array([[1], [2], [3]]), dtype=fg.int64)).shape == (3, 2)
    fg.manual_seed(2)
    s = npy(d.sample((40_000,)))
    freq = np.stack([(s == j).mean(0) for j in range(4)], -1)
    assert np.all(np.abs(freq - PROBS) < 6 * np.sqrt(PROBS * (1 - PROBS) / 40_000))


def test_one_hot_categorical():
    d = D.OneHotCategorical(probs=t(PROBS))
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    close(d.log_prob(t(np.eye(4)[[3, 0]])), np.log(PROBS[[0, 1], [3, 0]]), 1e-12)
    close(d.mean, PROBS)
    close(d.variance, PROBS * (1 - PROBS))
    close(d.mode, np.eye(4)[[3, 2]])
    close(d.entropy(), -(PROBS * np.log(PROBS)).sum(-1), 1e-12)
    s = npy(d.sample((6,)))
    assert s.shape == (6, 2, 4) and np.all(s.sum(-1) == 1)
    assert d.enumerate_support().shape == (4, 2, 4)
    close(d.enumerate_support(expand=False)[:, 0], np.eye(4))
    assert d.expand((3, 2)).sample().shape == (3, 2, 4)


def test_one_hot_straight_through_gradient():
    logits = t(np.log(PROBS), requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    s = d.rsample()
    assert np.all(npy(s).sum(-1) == 1)
    (s * t(np.arange(4.0))).sum().backward()
    # d/dlogits of sum_j j * softmax(logits)_j = p * (j - E[j]).
    j = np.arange(4.0)
    close(logits.grad, PROBS * (j - (PROBS * j).sum(-1, keepdims=True)), 1e-12)


def test_multinomial_mass_entropy_moments():
    n = 5
    d = D.Multinomial(n, probs=t(PROBS))
    counts = np.array([[5, 0, 0, 0], [1, 1, 2, 1]])
    want = [
        math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in row) + float((row * np.log(p)).sum())
        for row, p in zip(counts, PROBS, strict=True)
    ]
    close(d.log_prob(t(counts * 1.0)), want, 1e-12)
    close(d.mean, n * PROBS)
    close(d.variance, n * PROBS * (1 - PROBS))
    # Entropy by summing over every count vector with total n.
    grids = np.stack(np.meshgrid(*[np.arange(n + 1)] * 4, indexing="ij"), -1).reshape(-1, 4)
    grids = grids[grids.sum(-1) == n]
    for b in range(2):
        lp = npy(D.Multinomial(n, probs=t(PROBS[b])).log_prob(t(grids * 1.0)))
        assert npy(d.entropy())[b] == pytest.approx(-(np.exp(lp) * lp).sum(), rel=1e-10)
        assert np.exp(lp).sum() == pytest.approx(1.0, rel=1e-12)
    close(D.Multinomial(2, probs=t([0.0, 1.0])).log_prob(t([0.0, 2.0])), 0.0)


def test_multinomial_samples():
    d = D.Multinomial(7, probs=t(PROBS))
    fg.manual_seed(1)
    s = npy(d.sample((20_000,)))
    assert s.shape == (20_000, 2, 4) and np.all(s.sum(-1) == 7)
    assert np.all(np.abs(s.mean(0) - 7 * PROBS) < 6 * np.sqrt(7 * PROBS * (1 - PROBS) / 20_000))
    assert d.expand((3, 2)).sample().shape == (3, 2, 4)
    with pytest.raises(NotImplementedError):
        D.Multinomial(fg.tensor(3), probs=t(PROBS))


def test_discrete_gradients():
    p = t(P, requires_grad=True)
    assert gradcheck(lambda p: D.Bernoulli(probs=p).log_prob(t([1.0, 0.0, 1.0])), (p,))
    assert gradcheck(lambda p: D.Bernoulli(logits=p).entropy(), (p,))
    assert gradcheck(lambda p: D.Geometric(probs=p).log_prob(t([2.0, 0.0, 5.0])), (p,))
    assert gradcheck(lambda p: D.Geometric(probs=p).entropy(), (p,))
    q = t(PROBS, requires_grad=True)
    assert gradcheck(lambda q: D.Categorical(probs=q).log_prob(t([3, 1], dtype=fg.int64)), (q,))
    assert gradcheck(lambda q: D.Categorical(logits=q).entropy(), (q,))
    assert gradcheck(lambda q: D.Multinomial(4, probs=q).log_prob(t([[1.0, 0, 2, 1], [0, 0, 4, 0]])), (q,))
    assert gradcheck(lambda q: D.Multinomial(3, logits=q).entropy(), (q,))


# MultivariateNormal ------------------------------------------------------------------------

RNG = np.random.default_rng(0)
A = RNG.normal(size=(2, 3, 3))
COV = A @ A.transpose(0, 2, 1) + np.eye(3)
MEAN = RNG.normal(size=(2, 3))


def _mvn_logpdf(x, m, c):
    diff = x - m
    sol = np.linalg.solve(c, diff[..., None])[..., 0]
    return -0.5 * ((diff * sol).sum(-1) + np.linalg.slogdet(c)[1] + 3 * np.log(2 * np.pi))


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_mvn_density_entropy_and_matrices(kind):
    mat = {
        "covariance_matrix": COV,
        "precision_matrix": np.linalg.inv(COV),
        "scale_tril": np.linalg.cholesky(COV),
    }
    d = D.MultivariateNormal(t(MEAN), **{kind: t(mat[kind])})
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = RNG.normal(size=(4, 2, 3))
    close(d.log_prob(t(x)), _mvn_logpdf(x, MEAN, COV), 1e-10)
    close(d.entropy(), 0.5 * (3 * (1 + np.log(2 * np.pi)) + np.linalg.slogdet(COV)[1]), 1e-10)
    check_gaussian_matrices(d, MEAN, COV)


def test_mvn_broadcasting_expand_and_samples():
    d = D.MultivariateNormal(t(MEAN[0]), t(COV))  # loc broadcast over the covariance batch
    assert d.batch_shape == (2,) and d.loc.shape == (2, 3)
    e = d.expand((4, 2))
    assert e.batch_shape == (4, 2) and e.rsample((5,)).shape == (5, 4, 2, 3)
    fg.manual_seed(9)
    s = npy(D.MultivariateNormal(t(MEAN), t(COV)).sample((40_000,)))
    for b in range(2):
        centered = s[:, b] - MEAN[b]
        emp = centered.T @ centered / len(s)
        assert np.all(np.abs(emp - COV[b]) < 0.08 * np.sqrt(np.outer(np.diag(COV[b]), np.diag(COV[b]))))
        assert np.all(np.abs(s[:, b].mean(0) - MEAN[b]) < 6 * np.sqrt(np.diag(COV[b]) / 40_000))


def test_mvn_rsample_uses_randn_noise():
    d = D.MultivariateNormal(t(MEAN), t(COV))
    fg.manual_seed(6)
    got = npy(d.rsample((3,)))
    fg.manual_seed(6)
    eps = npy(fg.randn(3, 2, 3, dtype=fg.float64))
    close(got, MEAN + np.einsum("bij,sbj->sbi", np.linalg.cholesky(COV), eps), 1e-10)


def test_mvn_gradients():
    m = t(MEAN, requires_grad=True)
    a = t(A[0], requires_grad=True)
    x = t(RNG.normal(size=(2, 3)))

    def cov(a):
        return a @ a.mT + fg.eye(3, dtype=fg.float64)

    assert gradcheck(lambda m, a: D.MultivariateNormal(m, cov(a)).log_prob(x), (m, a))
    assert gradcheck(lambda m, a: D.MultivariateNormal(m, precision_matrix=cov(a)).log_prob(x), (m, a))
    assert gradcheck(lambda m, a: D.MultivariateNormal(m, scale_tril=cov(a).tril()).entropy(), (m, a))

    def draw(m, a):
        fg.manual_seed(2)
        return D.MultivariateNormal(m, cov(a)).rsample((2,))

    assert gradcheck(draw, (m, a))


def test_mvn_argument_errors():
    with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
        D.MultivariateNormal(fg.tensor(0.0), fg.eye(1))
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(fg.zeros(2))
    with pytest.raises(ValueError, match="Exactly one of"):
        D.MultivariateNormal(fg.zeros(2), fg.eye(2), scale_tril=fg.eye(2))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        D.MultivariateNormal(fg.zeros(2), fg.ones(2))
    with pytest.raises(ValueError, match="PositiveDefinite"):
        D.MultivariateNormal(fg.zeros(2), fg.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="LowerCholesky"):
        D.MultivariateNormal(fg.zeros(2), scale_tril=fg.tensor([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="right-most size"):
        D.MultivariateNormal(fg.zeros(2), fg.eye(2)).log_prob(fg.zeros(3))


# Validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "param", "constraint"),
    [
        (lambda: D.Normal(fg.zeros(2), fg.tensor([1.0, -1.0])), "scale", r"GreaterThan\(lower_bound=0.0\)"),
        (lambda: D.Normal(fg.tensor([math.nan]), 1.0), "loc", r"Real\(\)"),
        (lambda: D.Exponential(fg.tensor([0.0])), "rate", "GreaterThan"),
        (lambda: D.Bernoulli(probs=fg.tensor([1.5])), "probs", "Interval"),
        (lambda: D.Categorical(probs=fg.tensor([-0.5, 1.0])), "probs", r"Simplex\(\)"),
        (lambda: D.Uniform(1.0, 0.0), "low", "LessThan"),
        (lambda: D.Laplace(0.0, -2.0), "scale", "GreaterThan"),
        (lambda: D.HalfNormal(-1.0), "scale", "GreaterThan"),
        (lambda: D.LogNormal(0.0, 0.0), "scale", "GreaterThan"),
        (lambda: D.Gumbel(0.0, -1.0), "scale", "GreaterThan"),
    ],
)
def test_invalid_parameters_raise_value_error(make, param, constraint):
    with pytest.raises(
        ValueError, match=f"Expected parameter {param} .* to satisfy the constraint {constraint}"
    ):
        make()


def test_invalid_geometric_probability():
    with pytest.raises(ValueError, match="Expected parameter probs .* to be positive"):
        D.Geometric(probs=fg.tensor([0.0]))


@pytest.mark.parametrize(
    ("d", "value"),
    [
        (D.Exponential(1.0), -1.0),
        (D.Bernoulli(0.3), 0.5),
        (D.Geometric(0.3), 1.5),
        (D.Uniform(0.0, 1.0), 2.0),
        (D.HalfNormal(1.0), -0.5),
        (D.LogNormal(0.0, 1.0), 0.0),
        (D.Normal(0.0, 1.0), math.nan),
    ],
)
def test_out_of_support_values_raise_value_error(d, value):
    with pytest.raises(ValueError, match="Expected value argument .* to be within the support"):
        d.log_prob(fg.tensor(value))


def test_value_shape_and_type_errors():
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(1.0)
    with pytest.raises(ValueError, match="not broadcastable"):
        D.Normal(fg.zeros(3), 1.0).log_prob(fg.zeros(2))
    with pytest.raises(ValueError, match="Expected value argument"):
        D.Categorical(fg.ones(3)).log_prob(fg.tensor(3))
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli(probs=0.3, logits=0.1)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Categorical(probs=fg.tensor(1.0))
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(D.Normal(fg.zeros(2), 1.0), 2)


def test_validate_args_switches():
    assert D.Exponential(1.0, validate_args=False).log_prob(fg.tensor(-1.0)).isfinite()
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)  # accepted
        assert not D.Normal(0.0, 1.0)._validate_args
        with pytest.raises(ValueError):
            D.Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)


def test_repr_shows_parameters():
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Exponential(fg.ones(2))) == "Exponential(rate: ferrograd.Size([2]))"
