"""ferrograd.distributions: the KL pairs of the further families (kl_extra),
the further transforms and the biject_to/transform_to registries.

Oracles: KL divergences as numerical integrals of NumPy densities
(Gauss-Legendre on bounded supports, the trapezoid rule after ``x = c + w
tan(u)`` on half-lines) or, for the Gaussian pairs, the textbook formula
in dense NumPy algebra; Jacobian log-determinants against the log |det| of
a float64 central finite-difference Jacobian; constraints checked on the
images of random inputs.
"""

from __future__ import annotations

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from distribution_reference import normal_pdf
from distribution_reference_more import (
    continuous_bernoulli_pdf,
    gauss_legendre,
    integrate_from,
    pareto_pdf,
)
from ferrograd.autograd import gradcheck
from ferrograd.distributions import biject_to, constraints, transform_to
from ferrograd.distributions import transforms as T
from ferrograd.distributions.kl_extra import _kl_expfamily_expfamily
from ferrograd.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
from numpy_oracle import close, npy, t

CB_P, CB_Q = np.array([0.15, 0.4999, 0.8]), np.array([0.6, 0.3, 0.5])


def _kl_density(p, q):
    safe_p, safe_q = np.where(p > 0, p, 1.0), np.where(q > 0, q, 1.0)
    return np.where(p > 0, p * (np.log(safe_p) - np.log(safe_q)), 0.0)


def _kl_unit_interval(pdf_p, pdf_q):
    return gauss_legendre(lambda x: _kl_density(pdf_p(x), pdf_q(x)), 0.0, 1.0)


def _uniform_pdf(low, high):
    return lambda x: np.where((x >= low) & (x < high), 1 / (high - low), 0.0)


# Continuous Bernoulli ---------------------------------------------------------------------


def test_kl_continuous_bernoulli_pairs_match_integrals():
    p = D.ContinuousBernoulli(t(CB_P))
    rate, loc, scale, low, high = (
        [0.5, 1.0, 3.0],
        [0.0, 0.5, 2.0],
        [0.3, 1.0, 2.0],
        [-0.5, 0.0, -1.0],
        [1.5, 1.0, 1.0],
    )
    queries = {
        "ContinuousBernoulli": (
            D.ContinuousBernoulli(t(CB_Q)),
            lambda i: lambda x: continuous_bernoulli_pdf(x, CB_Q[i]),
        ),
        "Exponential": (D.Exponential(t(rate)), lambda i: lambda x: rate[i] * np.exp(-rate[i] * x)),
        "Normal": (D.Normal(t(loc), t(scale)), lambda i: lambda x: normal_pdf(x, loc[i], scale[i])),
        "Uniform": (D.Uniform(t(low), t(high)), lambda i: _uniform_pdf(low[i], high[i])),
    }
    for name, (q, pdf_q) in queries.items():
        got = npy(D.kl_divergence(p, q))
        for i in range(3):
            # The CB density is exact here, but p's closed forms use the Taylor expansion near 1/2.
            want = _kl_unit_interval(lambda x, i=i: continuous_bernoulli_pdf(x, CB_P[i]), pdf_q(i))
            assert got[i] == pytest.approx(want, rel=1e-6, abs=1e-8), (name, i)


def test_kl_uniform_continuous_bernoulli_and_infinite_supports():
    low, high = np.array([0.0, 0.2, 0.5]), np.array([0.5, 1.0, 0.9])
    got = npy(D.kl_divergence(D.Uniform(t(low), t(high)), D.ContinuousBernoulli(t(CB_Q))))
    for i in range(3):
        want = gauss_legendre(
            lambda x, i=i: _kl_density(
                _uniform_pdf(low[i], high[i])(x), continuous_bernoulli_pdf(x, CB_Q[i])
            ),
            low[i],
            high[i],
        )
        assert got[i] == pytest.approx(want, rel=1e-9)
    outside = D.kl_divergence(D.Uniform(t([-0.1, 0.5]), t([0.5, 1.2])), D.ContinuousBernoulli(t([0.3, 0.3])))
    assert np.isinf(npy(outside)).all()
    narrow = D.kl_divergence(D.ContinuousBernoulli(t([0.3, 0.3])), D.Uniform(t([0.1, 0.0]), t([1.0, 0.9])))
    assert np.isinf(npy(narrow)).all()


# Pareto ---------------------------------------------------------------------------------------

PARETO = (np.array([1.0, 0.8]), np.array([3.5, 4.0]))


def _pareto_kl(log_q, i):
    # With q's log-density written out: its density underflows in the far tail, where p log q does not.
    s, a = PARETO[0][i], PARETO[1][i]
    return integrate_from(lambda x: pareto_pdf(x, s, a) * (np.log(pareto_pdf(x, s, a)) - log_q(x)), s, s)


def test_kl_pareto_pairs_match_integrals():
    p = D.Pareto(t(PARETO[0]), t(PARETO[1]))
    q_scale, q_alpha = np.array([0.5, 0.8]), np.array([2.0, 5.0])
    rate, loc, scale = np.array([0.7, 2.0]), np.array([1.0, -0.5]), np.array([1.5, 2.5])
    queries = [
        (D.Pareto(t(q_scale), t(q_alpha)), lambda i: lambda x: np.log(pareto_pdf(x, q_scale[i], q_alpha[i]))),
        (D.Exponential(t(rate)), lambda i: lambda x: np.log(rate[i]) - rate[i] * x),
        (
            D.Normal(t(loc), t(scale)),
            lambda i: (
                lambda x: -((x - loc[i]) ** 2) / (2 * scale[i] ** 2) - np.log(scale[i] * np.sqrt(2 * np.pi))
            ),
        ),
    ]
    for q, log_q in queries:
        got = npy(D.kl_divergence(p, q))
        for i in range(2):
            assert got[i] == pytest.approx(_pareto_kl(log_q(i), i), rel=1e-6), (type(q).__name__, i)
    low, high = np.array([1.0, 2.0]), np.array([3.0, 2.5])
    got = npy(D.kl_divergence(D.Uniform(t(low), t(high)), D.Pareto(t(q_scale), t(q_alpha))))
    for i in range(2):
        want = gauss_legendre(
            lambda x, i=i: _kl_density(1 / (high[i] - low[i]), pareto_pdf(x, q_scale[i], q_alpha[i])),
            low[i],
            high[i],
        )
        assert got[i] == pytest.approx(want, rel=1e-9)


def test_kl_pareto_infinite_cases():
    # q's support starts above p's, or p's mean/variance is infinite.
    assert np.isinf(npy(D.kl_divergence(D.Pareto(t([1.0]), t([3.0])), D.Pareto(t([2.0]), t([3.0])))))
    assert np.isinf(npy(D.kl_divergence(D.Pareto(t([1.0]), t([0.9])), D.Exponential(t([1.0])))))
    assert np.isinf(npy(D.kl_divergence(D.Pareto(t([1.0]), t([1.5])), D.Normal(t([0.0]), t([1.0])))))
    assert np.isinf(npy(D.kl_divergence(D.Uniform(t([0.5]), t([2.0])), D.Pareto(t([1.0]), t([2.0])))))


INFINITE_PAIRS = [
    (lambda: D.ContinuousBernoulli(t([0.3, 0.6])), lambda: D.Pareto(t([0.5, 1.0]), t([2.0, 3.0]))),
    (lambda: D.Exponential(t([1.0, 2.0])), lambda: D.ContinuousBernoulli(t([0.3, 0.6]))),
    (lambda: D.Exponential(t([1.0, 2.0])), lambda: D.Pareto(t([0.5, 1.0]), t([2.0, 3.0]))),
    (lambda: D.Pareto(t([0.5, 1.0]), t([2.0, 3.0])), lambda: D.ContinuousBernoulli(t([0.3, 0.6]))),
    (lambda: D.Pareto(t([0.5, 1.0]), t([2.0, 3.0])), lambda: D.Uniform(t([0.0, 0.0]), t([5.0, 9.0]))),
] + [
    (lambda cls=cls: cls(t([0.0, 1.0]), t([1.0, 2.0])), lambda q=q: q)
    for cls in (D.Gumbel, D.Laplace, D.Normal)
    for q in (D.ContinuousBernoulli(t([0.3, 0.6])), D.Pareto(t([0.5, 1.0]), t([2.0, 3.0])))
]


@pytest.mark.parametrize("pair", INFINITE_PAIRS)
def test_kl_is_infinite_where_q_misses_part_of_the_support(pair):
    make_p, make_q = pair
    d = D.kl_divergence(make_p(), make_q())
    assert d.shape == (2,) and np.isinf(npy(d)).all()


# Low-rank multivariate normal ----------------------------------------------------------------

RNG = np.random.default_rng(0)
N = 4
LR_P = (RNG.normal(size=(2, N)), RNG.normal(size=(2, N, 2)), RNG.uniform(0.5, 1.5, size=N))
LR_Q = (RNG.normal(size=N), RNG.normal(size=(N, 3)), RNG.uniform(0.5, 1.5, size=(2, N)))
MVN_Q = (RNG.normal(size=N), np.tril(RNG.normal(size=(N, N)), -1) + np.diag(RNG.uniform(0.8, 1.6, size=N)))


def _gauss_kl(mp, cp, mq, cq):
    """``1/2 (tr(Cq^-1 Cp) + (mq - mp)^T Cq^-1 (mq - mp) - n + log det Cq - log det Cp)``."""
    d = mq - mp
    inv = np.linalg.inv(cq)
    return 0.5 * (
        np.trace(inv @ cp) + d @ inv @ d - len(mp) + np.linalg.slogdet(cq)[1] - np.linalg.slogdet(cp)[1]
    )


def _lr_dense(loc, factor, diag, i):
    f = factor[i] if factor.ndim == 3 else factor
    dg = diag[i] if diag.ndim == 2 else diag
    m = loc[i] if loc.ndim == 2 else loc
    return m, f @ f.T + np.diag(dg)


def test_kl_lowrank_pairs_match_the_dense_formula():
    p = D.LowRankMultivariateNormal(*map(t, LR_P))
    q = D.LowRankMultivariateNormal(*map(t, LR_Q))
    mvn = D.MultivariateNormal(t(MVN_Q[0]), scale_tril=t(MVN_Q[1]))
    mvn_dense = (MVN_Q[0], MVN_Q[1] @ MVN_Q[1].T)
    cases = [
        (p, q, lambda i: (*_lr_dense(*LR_P, i), *_lr_dense(*LR_Q, i))),
        (q, p, lambda i: (*_lr_dense(*LR_Q, i), *_lr_dense(*LR_P, i))),
        (p, mvn, lambda i: (*_lr_dense(*LR_P, i), *mvn_dense)),
        (mvn, q, lambda i: (*mvn_dense, *_lr_dense(*LR_Q, i))),
    ]
    for a, b, dense in cases:
        got = npy(D.kl_divergence(a, b))
        assert got.shape == (2,)
        for i in range(2):
            assert got[i] == pytest.approx(_gauss_kl(*dense(i)), rel=1e-10), (
                type(a).__name__,
                type(b).__name__,
            )
    close(D.kl_divergence(p, p), np.zeros(2), 1e-10)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(p, D.MultivariateNormal(fg.zeros(3, dtype=fg.float64), fg.eye(3, dtype=fg.float64)))


def test_kl_gradients():
    def cb(lp, lq):
        return D.kl_divergence(D.ContinuousBernoulli(logits=lp), D.ContinuousBernoulli(logits=lq))

    assert gradcheck(cb, (t([-1.0, 2.0], requires_grad=True), t([0.5, -0.3], requires_grad=True)))

    def pareto(sp, ap, sq, aq):
        return D.kl_divergence(D.Pareto(sp, ap), D.Pareto(sq, aq))

    args = [t(v, requires_grad=True) for v in ([1.0, 2.0], [3.0, 2.5], [0.5, 1.0], [2.0, 4.0])]
    assert gradcheck(pareto, args)

    def lowrank(loc, factor, diag):
        return D.kl_divergence(
            D.LowRankMultivariateNormal(loc, factor, diag), D.LowRankMultivariateNormal(*map(t, LR_Q))
        )

    assert gradcheck(lowrank, [t(v, requires_grad=True) for v in LR_P])


# The exponential-family fallback ------------------------------------------------------------


class _Rate(D.ExponentialFamily):
    """A test family: the exponential distribution, through its natural parameter only."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    _mean_carrier_measure = 0

    def __init__(self, rate):
        self.rate = rate
        super().__init__(rate.shape)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()


def test_bregman_kl_and_entropy_of_an_exponential_family():
    a, b = np.array([0.5, 2.0]), np.array([1.5, 0.7])
    rate_q = t(b, requires_grad=True)
    kl = D.kl_divergence(_Rate(t(a)), _Rate(rate_q))
    # KL(Exp(a) || Exp(b)) = log(a / b) + b / a - 1, H(Exp(a)) = 1 - log a
    close(kl, np.log(a / b) + b / a - 1, 1e-12)
    close(_Rate(t(a)).entropy(), 1 - np.log(a), 1e-12)
    kl.sum().backward()
    close(rate_q.grad, 1 / a - 1 / b, 1e-12)  # differentiable in q (p's parameters are detached)
    # The fallback agrees with the closed forms of the registered families.
    pairs = [
        (D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Normal(t([0.5, -1.0]), t([0.7, 1.5]))),
        (D.Bernoulli(t([0.2, 0.9])), D.Bernoulli(t([0.5, 0.4]))),
        (D.Exponential(t(a)), D.Exponential(t(b))),
        (D.ContinuousBernoulli(t([0.2, 0.9])), D.ContinuousBernoulli(t([0.6, 0.3]))),
    ]
    for p, q in pairs:
        close(_kl_expfamily_expfamily(p, q), npy(D.kl_divergence(p, q)), 1e-9)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        _kl_expfamily_expfamily(D.Normal(0.0, 1.0), D.Exponential(1.0))


# Transforms ---------------------------------------------------------------------------------------


def _apply(transform, x):
    return npy(transform(t(x)))


def _fd_log_abs_det(fn, x, h=1e-6):
    """``log |det J|`` of ``fn: R^n -> R^n`` at ``x`` by central differences."""
    x = np.asarray(x, dtype=float)
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        cols.append((fn(x + e.reshape(x.shape)) - fn(x - e.reshape(x.shape))).ravel() / (2 * h))
    return np.linalg.slogdet(np.stack(cols, 1))[1]


X3 = np.array([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]])
LOWER4 = np.tril_indices(4, -1)
X6 = np.array([[0.3, -1.2, 0.8, 1.5, 0.1, -0.4], [-0.2, 0.5, 2.0, -1.0, 0.7, 0.05]])

# name -> (transform, input batch (rows are events), the map whose Jacobian is square, in NumPy)
JACOBIAN_CASES = {
    "Softplus": (T.SoftplusTransform(), X3, None),
    "StickBreaking": (T.StickBreakingTransform(), X3, lambda y: y[..., :-1]),
    "CorrCholesky": (T.CorrCholeskyTransform(), X6, lambda y: y[..., LOWER4[0], LOWER4[1]]),
    "Independent": (T.IndependentTransform(T.ExpTransform(), 1), X3, None),
    "Cat": (T.CatTransform([T.ExpTransform(), T.SoftplusTransform()], dim=-1, lengths=[1, 2]), X3, None),
    "Stack": (T.StackTransform([T.ExpTransform(), T.SoftplusTransform(), T.TanhTransform()], -1), X3, None),
    "CumulativeDistribution": (T.CumulativeDistributionTransform(D.Normal(t(0.5), t(2.0))), X3, None),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JACOBIAN_CASES))
def test_log_abs_det_jacobian_matches_finite_differences(name):
    transform, x, square = JACOBIAN_CASES[name]
    y = transform(t(x))
    got = npy(transform.log_abs_det_jacobian(t(x), y))
    for row in range(x.shape[0]):

        def fn(v):
            out = _apply(transform, v)
            return out if square is None else square(out)

        want = _fd_log_abs_det(fn, x[row])
        total = got[row] if got.ndim == 1 else got[row].sum()
        assert total == pytest.approx(want, abs=1e-6), (name, row)


@pytest.mark.parametrize("name", sorted(JACOBIAN_CASES))
def test_inverse_round_trip_and_gradcheck(name):
    transform, x, _ = JACOBIAN_CASES[name]
    y = transform(t(x))
    close(transform.inv(y), x, 1e-9)
    close(transform.inv.log_abs_det_jacobian(y, t(x)), -npy(transform.log_abs_det_jacobian(t(x), y)), 1e-12)
    assert transform.inv.inv is transform
    xs = t(x, requires_grad=True)
    assert gradcheck(lambda v: transform.log_abs_det_jacobian(v, transform(v)), (xs,))


def test_matrix_transforms():
    x = np.array([[0.4, 9.0, 9.0], [-1.0, -0.3, 9.0], [0.5, 2.0, 0.1]])
    lower = T.LowerCholeskyTransform()
    y = npy(lower(t(x)))
    close(y, np.tril(x, -1) + np.diag(np.exp(np.diag(x))))
    close(lower.inv(t(y)), np.tril(x), 1e-12)  # the upper triangle is lost
    assert bool(constraints.lower_cholesky.check(t(y)))
    pd = T.PositiveDefiniteTransform()
    close(pd(t(x)), y @ y.T, 1e-12)
    close(pd.inv(pd(t(x))), np.tril(x), 1e-10)
    assert bool(constraints.positive_definite.check(pd(t(x))))
    corr = T.CorrCholeskyTransform()(t(X6))
    assert bool(constraints.corr_cholesky.check(corr).all())
    full = npy(corr @ corr.mT)
    close(
        np.diagonal(full, axis1=-2, axis2=-1), np.ones((2, 4)), 1e-12
    )  # unit diagonal: a correlation matrix
    assert not T.LowerCholeskyTransform().bijective and T.CorrCholeskyTransform().bijective


def test_transform_shapes_and_errors():
    assert T.StickBreakingTransform().forward_shape((2, 3)) == (2, 4)
    assert T.StickBreakingTransform().inverse_shape((2, 4)) == (2, 3)
    assert T.CorrCholeskyTransform().forward_shape((5, 6)) == (5, 4, 4)
    assert T.CorrCholeskyTransform().inverse_shape((4, 4)) == (6,)
    with pytest.raises(ValueError, match="lower-diagonal"):
        T.CorrCholeskyTransform().forward_shape((5,))
    with pytest.raises(ValueError, match="not square"):
        T.CorrCholeskyTransform().inverse_shape((3, 4))
    reshape = T.ReshapeTransform((6,), (2, 3))
    x = t(np.arange(12.0).reshape(2, 6))
    assert reshape(x).shape == (2, 2, 3) and reshape.inv(reshape(x)).shape == (2, 6)
    close(reshape.log_abs_det_jacobian(x, reshape(x)), np.zeros(2))
    assert reshape.forward_shape((5, 6)) == (5, 2, 3) and reshape.inverse_shape((2, 3)) == (6,)
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((6,), (4,))
    with pytest.raises(ValueError, match="Shape mismatch"):
        reshape.forward_shape((5, 4))
    cat = T.CatTransform([T.ExpTransform(), T.ExpTransform()], dim=0, lengths=[1, 1])
    with pytest.raises(ValueError, match="must equal length 2"):
        cat(t([1.0, 2.0, 3.0]))
    with pytest.raises(IndexError, match="out of range"):
        T.CatTransform([T.ExpTransform()], dim=3)(t([1.0]))
    with pytest.raises(ValueError, match="lengths"):
        T.CatTransform([T.ExpTransform()], lengths=[1, 2])
    with pytest.raises(TypeError):
        T.StackTransform([T.ExpTransform(), "exp"])
    with pytest.raises(ValueError, match="must equal len"):
        T.StackTransform([T.ExpTransform()], dim=0)(t([1.0, 2.0]))
    # Slicing a batch dimension keeps the Jacobian terms apart.
    batch_cat = T.CatTransform([T.ExpTransform(), T.SoftplusTransform()], dim=0, lengths=[1, 1])
    xb = t(X3[:, :2])
    close(
        batch_cat.log_abs_det_jacobian(xb, batch_cat(xb)), [X3[0, :2], -np.log1p(np.exp(-X3[1, :2]))], 1e-12
    )


def test_transform_caching_and_equality():
    t1 = T.SoftplusTransform(cache_size=1)
    x = t([0.5, -1.0])
    y = t1(x)
    assert t1.inv(y) is x and t1(x) is y
    assert (
        T.SoftplusTransform() == T.SoftplusTransform() and T.StickBreakingTransform() != T.SoftplusTransform()
    )
    for tr in (
        T.IndependentTransform(T.ExpTransform(), 1),
        T.ReshapeTransform((2,), (2, 1)),
        T.CatTransform([T.ExpTransform()]),
        T.StackTransform([T.ExpTransform()]),
        T.CumulativeDistributionTransform(D.Normal(0.0, 1.0)),
    ):
        cached = tr.with_cache(1)
        assert cached._cache_size == 1 and type(cached) is type(tr) and cached.with_cache(1) is cached


def test_stick_breaking_transformed_distribution_lies_on_the_simplex():
    base = D.Independent(D.Normal(fg.zeros(3, dtype=fg.float64), 1.0), 1)
    d = D.TransformedDistribution(base, T.StickBreakingTransform())
    assert d.event_shape == (4,)
    fg.manual_seed(0)
    y = d.sample((5,))
    assert bool(constraints.simplex.check(y).all())
    x = T.StickBreakingTransform().inv(y)
    close(
        d.log_prob(y),
        npy(base.log_prob(x)) - npy(T.StickBreakingTransform().log_abs_det_jacobian(x, y)),
        1e-9,
    )


# Constraint registries ------------------------------------------------------------------------

REGISTERED = [
    (constraints.real, (3,)), (constraints.real_vector, (2, 3)), (constraints.positive, (3,)),
    (constraints.nonnegative, (3,)), (constraints.greater_than(2.0), (3,)),
    (constraints.greater_than_eq(-1.0), (3,)), (constraints.less_than(3.0), (3,)),
    (constraints.interval(-1.0, 2.0), (3,)), (constraints.unit_interval, (3,)),
    (constraints.half_open_interval(0.0, 5.0), (3,)), (constraints.simplex, (2, 3)),
    (constraints.corr_cholesky, (2, 6)), (constraints.independent(constraints.positive, 1), (2, 3)),
    (constraints.cat([constraints.positive, constraints.real], 0, [2, 1]), (3,)),
    (constraints.stack([constraints.positive, constraints.unit_interval], -1), (3, 2)),
]  # fmt: skip


@pytest.mark.parametrize(("constraint", "shape"), REGISTERED, ids=[repr(c) for c, _ in REGISTERED])
def test_biject_to_and_transform_to_land_in_the_constraint(constraint, shape):
    x = t(RNG.normal(size=shape))
    for registry in (biject_to, transform_to):
        transform = registry(constraint)
        y = transform(x)
        assert bool(constraint.check(y).all()), (registry, constraint)
    bijection = biject_to(constraint)
    assert bijection.bijective
    close(bijection.inv(bijection(x)), npy(x), 1e-8)


@pytest.mark.parametrize(
    "constraint",
    [constraints.lower_cholesky, constraints.positive_definite, constraints.positive_semidefinite],
)
def test_transform_to_matrix_constraints(constraint):
    x = t(RNG.normal(size=(2, 3, 3)))
    assert bool(constraint.check(transform_to(constraint)(x)).all())
    with pytest.raises(NotImplementedError, match="Cannot transform"):
        biject_to(constraint)


def test_registry_dispatch_and_registration():
    assert isinstance(biject_to(constraints.simplex), T.StickBreakingTransform)
    assert isinstance(transform_to(constraints.simplex), T.SoftmaxTransform)
    assert isinstance(biject_to(constraints.unit_interval), T.SigmoidTransform)
    bounds = biject_to(constraints.interval(t([0.0, -2.0]), t([1.0, 2.0])))
    y = npy(bounds(t([0.0, 0.0])))
    close(y, [0.5, 0.0], 1e-12)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean"):
        biject_to(constraints.boolean)
    registry = D.constraint_registry.ConstraintRegistry()
    registry.register(constraints.positive, lambda c: T.SoftplusTransform())
    assert isinstance(registry(constraints.greater_than(0.0)), T.SoftplusTransform)  # by class
    with pytest.raises(TypeError, match="Constraint subclass or instance"):
        registry.register(int, lambda c: None)


def test_stack_and_tril_helpers():
    check = constraints.stack([constraints.positive, constraints.unit_interval], dim=0).check(
        t([[1.0, -1.0], [0.5, 2.0]])
    )
    close(check, np.array([[True, False], [True, False]]))
    vectors = [constraints.real_vector, constraints.real_vector]
    # (torch's rule: a negative dim reaching past the parts' event dimensions adds one)
    assert (
        constraints.stack(vectors, dim=0).event_dim == 1 and constraints.stack(vectors, dim=-2).event_dim == 2
    )
    with pytest.raises(ValueError, match="constraints"):
        constraints.stack([constraints.positive], dim=0).check(t([1.0, 2.0]))
    vec = RNG.normal(size=(2, 6))
    mat = npy(vec_to_tril_matrix(t(vec), diag=-1))
    want = np.zeros((2, 4, 4))
    rows, cols = np.tril_indices(4, -1)
    want[:, rows, cols] = vec
    close(mat, want)
    close(tril_matrix_to_vec(t(mat), diag=-1), vec)
    close(vec_to_tril_matrix(t(np.arange(1.0, 7.0))), np.array([[1, 0, 0], [2, 3, 0], [4, 5, 6]]))
    with pytest.raises(ValueError, match="lower triangular"):
        vec_to_tril_matrix(t(np.ones(5)), diag=-1)
    with pytest.raises(ValueError, match="lower triangular"):
        vec_to_tril_matrix(t(np.ones(1 << 20)), diag=-1)
