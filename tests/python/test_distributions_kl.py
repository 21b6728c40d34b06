"""ferrograd.distributions: KL divergences against numerical integrals and
sums written in the test, kl_divergence/register_kl dispatch, transforms and
TransformedDistribution / Independent."""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from distribution_reference import FAMILIES, integrate, normal_pdf
from ferrograd.autograd import gradcheck
from ferrograd.distributions import transforms as T
from numpy_oracle import close, npy, t

P_PARAMS = (np.array([-0.4, 0.8]), np.array([0.7, 1.5]))
Q_PARAMS = (np.array([0.3, -1.1]), np.array([1.2, 2.5]))
LOWER = {"HalfNormal": 0.0, "Exponential": 0.0, "LogNormal": 0.0}


def _kl_integral(pdf_p, pdf_q, center):
    def integrand(x):
        p, q = pdf_p(x), pdf_q(x)
        safe_p, safe_q = np.where(p > 0, p, 1.0), np.where(q > 0, q, 1.0)
        return np.where(p > 0, p * (np.log(safe_p) - np.log(safe_q)), 0.0)

    return integrate(integrand, center, 1.0, n=1_000_001)


def _uniform_covering(q_name):
    """Uniform parameters whose support lies inside q's (else KL is infinite)."""
    return (np.array([0.2, 1.0]), np.array([1.5, 0.5])) if q_name in LOWER else P_PARAMS


PAIRS = [(name, name) for name in sorted(FAMILIES) if name != "Cauchy"] + [
    ("Exponential", "Gumbel"), ("Exponential", "Normal"), ("Gumbel", "Normal"), ("Laplace", "Normal"),
    ("Normal", "Gumbel"), ("Normal", "Laplace"), ("Uniform", "Exponential"), ("Uniform", "Gumbel"),
    ("Uniform", "Normal"),
]  # fmt: skip


@pytest.mark.parametrize(("p_name", "q_name"), PAIRS)
def test_kl_matches_numerical_integral(p_name, q_name):
    make_p, pdf_p = FAMILIES[p_name]
    make_q, pdf_q = FAMILIES[q_name]
    pp = _uniform_covering(q_name) if p_name == "Uniform" else P_PARAMS
    qp = (P_PARAMS[0] - 1.0, P_PARAMS[1] + 2.0) if q_name == "Uniform" else Q_PARAMS
    got = npy(D.kl_divergence(make_p(*pp), make_q(*qp)))
    for i in range(2):
        center = pp[0][i] + pp[1][i] / 2 if p_name == "Uniform" else 0.0 if p_name in LOWER else pp[0][i]
        want = _kl_integral(
            lambda x, i=i: pdf_p(x, pp[0][i], pp[1][i]), lambda x, i=i: pdf_q(x, qp[0][i], qp[1][i]), center
        )
        assert got[i] == pytest.approx(want, rel=2e-4, abs=2e-5), (p_name, q_name, i)


@pytest.mark.parametrize(
    ("p_name", "q_name"),
    [("Normal", "Uniform"), ("Normal", "Exponential"), ("Laplace", "Uniform"), ("Laplace", "Exponential"),
     ("Gumbel", "Uniform"), ("Gumbel", "Exponential"), ("Exponential", "Uniform")],
)  # fmt: skip
def test_kl_is_infinite_where_q_misses_part_of_the_support(p_name, q_name):
    d = D.kl_divergence(FAMILIES[p_name][0](*P_PARAMS), FAMILIES[q_name][0](*Q_PARAMS))
    assert np.isinf(npy(d)).all() and d.shape == (2,)


def test_kl_uniform_uniform_and_uniform_exponential_infinite_cases():
    assert np.isinf(npy(D.kl_divergence(D.Uniform(0.0, 2.0), D.Uniform(0.5, 3.0))))
    assert np.isinf(npy(D.kl_divergence(D.Uniform(-1.0, 2.0), D.Exponential(1.0))))
    close(D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(0.0, 1.0)), 0.0)


def test_kl_cauchy_matches_integral():
    got = npy(
        D.kl_divergence(D.Cauchy(t(P_PARAMS[0]), t(P_PARAMS[1])), D.Cauchy(t(Q_PARAMS[0]), t(Q_PARAMS[1])))
    )
    pdf = FAMILIES["Cauchy"][1]
    for i in range(2):
        want = _kl_integral(
            lambda x, i=i: pdf(x, P_PARAMS[0][i], P_PARAMS[1][i]),
            lambda x, i=i: pdf(x, Q_PARAMS[0][i], Q_PARAMS[1][i]),
            P_PARAMS[0][i],
        )
        assert got[i] == pytest.approx(want, rel=1e-4)


def test_kl_discrete_pairs_match_sums():
    p, q = np.array([0.2, 0.7, 0.0]), np.array([0.6, 0.1, 0.5])
    want = p * np.log(np.where(p > 0, p / q, 1.0)) + (1 - p) * np.log((1 - p) / (1 - q))
    close(D.kl_divergence(D.Bernoulli(t(p)), D.Bernoulli(t(q))), want, 1e-12)
    assert np.isinf(npy(D.kl_divergence(D.Bernoulli(t([0.3])), D.Bernoulli(t([1.0]))))).all()
    k = np.arange(6000)
    gp, gq = np.array([0.3, 0.6]), np.array([0.5, 0.2])
    want = []
    for a, b in zip(gp, gq, strict=True):
        lp, lq = k * np.log1p(-a) + np.log(a), k * np.log1p(-b) + np.log(b)
        want.append((np.exp(lp) * (lp - lq)).sum())
    close(D.kl_divergence(D.Geometric(t(gp)), D.Geometric(t(gq))), want, 1e-10)
    cp, cq = np.array([[0.1, 0.6, 0.3], [0.5, 0.5, 0.0]]), np.array([[0.3, 0.3, 0.4], [0.2, 0.2, 0.6]])
    want = (cp * np.log(np.where(cp > 0, cp / cq, 1.0))).sum(-1)
    close(D.kl_divergence(D.Categorical(t(cp)), D.Categorical(t(cq))), want, 1e-12)
    close(D.kl_divergence(D.OneHotCategorical(t(cp)), D.OneHotCategorical(t(cq))), want, 1e-12)
    assert np.isinf(npy(D.kl_divergence(D.Categorical(t(cq)), D.Categorical(t(cp))))[1])


def test_kl_multivariate_normal():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 3, 3)), rng.normal(size=(3, 3))
    s1, s2 = a @ a.transpose(0, 2, 1) + np.eye(3), b @ b.T + 0.5 * np.eye(3)
    m1, m2 = rng.normal(size=(2, 3)), rng.normal(size=3)
    diff = m2 - m1
    inv2 = np.linalg.inv(s2)
    want = 0.5 * (np.trace(inv2 @ s1, axis1=-2, axis2=-1) + np.einsum("bi,ij,bj->b", diff, inv2, diff) - 3
                  + np.linalg.slogdet(s2)[1] - np.linalg.slogdet(s1)[1])  # fmt: skip
    got = D.kl_divergence(
        D.MultivariateNormal(t(m1), t(s1)), D.MultivariateNormal(t(m2), precision_matrix=t(inv2))
    )
    close(got, want, 1e-10)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(
            D.MultivariateNormal(fg.zeros(2), fg.eye(2)), D.MultivariateNormal(fg.zeros(3), fg.eye(3))
        )


def test_kl_independent_and_transformed():
    p, q = D.Normal(t(P_PARAMS[0]), t(P_PARAMS[1])), D.Normal(t(Q_PARAMS[0]), t(Q_PARAMS[1]))
    close(D.kl_divergence(D.Independent(p, 1), D.Independent(q, 1)), npy(D.kl_divergence(p, q)).sum())
    ln = D.kl_divergence(
        D.LogNormal(t(P_PARAMS[0]), t(P_PARAMS[1])), D.LogNormal(t(Q_PARAMS[0]), t(Q_PARAMS[1]))
    )
    close(ln, npy(D.kl_divergence(p, q)))  # KL is invariant under the shared bijection exp
    with pytest.raises(NotImplementedError):
        D.kl_divergence(
            D.Independent(D.Normal(fg.zeros(2, 2), 1.0), 1), D.Independent(D.Normal(fg.zeros(2, 2), 1.0), 2)
        )


def test_kl_gradients():
    m, s = t(P_PARAMS[0], requires_grad=True), t(P_PARAMS[1], requires_grad=True)
    q = D.Gumbel(t(Q_PARAMS[0]), t(Q_PARAMS[1]))
    for p_cls in (D.Normal, D.Gumbel):
        assert gradcheck(lambda m, s, p_cls=p_cls: D.kl_divergence(p_cls(m, s), q), (m, s))
    laplace = D.Laplace(t(Q_PARAMS[0]), t(Q_PARAMS[1]))
    assert gradcheck(lambda m, s: D.kl_divergence(D.Normal(m, s), laplace), (m, s))


def test_unregistered_pair_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Laplace(0.0, 1.0), D.Bernoulli(0.3))
    # Two exponential families meet in the Bregman fallback, which needs one family.
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.3))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Cauchy(0.0, 1.0), D.Normal(0.0, 1.0))


def test_register_kl_most_specific_match_wins():
    class A(D.Normal):
        pass

    class B(A):
        pass

    @D.register_kl(A, D.Normal)
    def _kl_a_normal(p, q):
        return fg.full(p.batch_shape, 1.0)

    @D.register_kl(B, D.Normal)
    def _kl_b_normal(p, q):
        return fg.full(p.batch_shape, 2.0)

    assert npy(D.kl_divergence(A(0.0, 1.0), D.Normal(0.0, 1.0))) == 1.0
    assert npy(D.kl_divergence(B(0.0, 1.0), D.Normal(0.0, 1.0))) == 2.0
    # A subclass pair without its own registration falls back to Normal-Normal.
    assert npy(D.kl_divergence(D.Normal(0.0, 1.0), A(0.0, 1.0))) == 0.0

    @D.register_kl(D.Normal, B)
    def _kl_normal_b(p, q):
        return fg.full(p.batch_shape, 3.0)

    with pytest.warns(RuntimeWarning, match="Ambiguous"):
        D.kl_divergence(B(0.0, 1.0), B(0.0, 1.0))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# Transforms ------------------------------------------------------------------------


def _scalar_jacobian(transform, x):
    xs = t(x, requires_grad=True)
    (g,) = fg.autograd.grad(transform(xs).sum(), xs)
    return np.log(np.abs(npy(g)))


X = np.array([-1.3, -0.2, 0.4, 2.1])


@pytest.mark.parametrize(
    ("transform", "x"),
    [
        (T.ExpTransform(), X),
        (T.AffineTransform(0.5, -3.0), X),
        (T.AffineTransform(t([1.0, 2, 3, 4]), t([0.5, -1, 2, 3])), X),
        (T.SigmoidTransform(), X),
        (T.TanhTransform(), X),
        (T.PowerTransform(2.5), np.abs(X) + 0.1),
        (T.ExpTransform().inv, np.abs(X) + 0.1),
        (T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.TanhTransform()]), X),
    ],
)
def test_transform_jacobian_and_inverse(transform, x):
    y = transform(t(x))
    close(transform.log_abs_det_jacobian(t(x), y), _scalar_jacobian(transform, x), 1e-10)
    close(transform.inv(y), x, 1e-8)
    assert transform.inv.inv is transform


def test_transform_properties():
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(0.0, 2.0) == T.AffineTransform(0.0, 2.0)
    assert T.ExpTransform().sign == 1 and T.AffineTransform(0.0, -2.0).sign == -1
    assert T.ExpTransform().codomain is D.constraints.positive
    abs_t = T.AbsTransform()
    close(abs_t(t([-2.0, 3.0])), [2.0, 3.0])
    soft = T.SoftmaxTransform()
    y = soft(t([[1.0, 2.0, 3.0]]))
    close(y, [np.exp([1.0, 2, 3]) / np.exp([1.0, 2, 3]).sum()], 1e-12)
    close(soft(soft.inv(y)), npy(y), 1e-12)
    compose = T.ComposeTransform([T.SoftmaxTransform(), T.ExpTransform()])
    assert compose.domain.event_dim == 1 and compose.codomain.event_dim == 1
    affine = T.AffineTransform(t([0.0, 1.0]), t([2.0, 3.0]), event_dim=1)
    close(affine.log_abs_det_jacobian(fg.zeros(5, 2, dtype=fg.float64), None), np.full(5, np.log(6.0)))
    cached = T.ExpTransform(cache_size=1)
    x = t([0.3])
    assert cached.inv(cached(x)) is x
    with pytest.raises(ValueError):
        T.ExpTransform(cache_size=2)


def test_transformed_distribution_density_and_cdf():
    base = D.Normal(t([0.2, -0.5]), t([0.8, 1.4]))
    d = D.TransformedDistribution(base, [T.AffineTransform(1.0, -2.0), T.ExpTransform()])
    assert d.batch_shape == (2,) and d.support is D.constraints.positive and d.has_rsample
    y = np.array([0.7, 3.0])
    # y = exp(1 - 2 x): x = (1 - log y) / 2, |dy/dx| = 2 y
    x = (1 - np.log(y)) / 2
    close(d.log_prob(t(y)), np.log(normal_pdf(x, np.array([0.2, -0.5]), np.array([0.8, 1.4])))
          - np.log(2 * y), 1e-12)  # fmt: skip
    # The map decreases, so P(Y <= y) = P(X >= x).
    close(d.cdf(t(y)), 1 - npy(base.cdf(t(x))), 1e-12)
    close(d.icdf(d.cdf(t(y))), y, 1e-10)
    assert d.sample((3,)).shape == (3, 2) and d.expand((4, 2)).sample().shape == (4, 2)
    soft = D.TransformedDistribution(D.Normal(fg.zeros(3), 1.0), [T.SoftmaxTransform()])
    assert soft.event_shape == (3,) and soft.batch_shape == ()
    with pytest.raises(ValueError):
        D.TransformedDistribution(base, [lambda x: x])


def test_independent():
    base = D.Normal(t(np.zeros((2, 3))), 1.0)
    d = D.Independent(base, 1)
    assert d.batch_shape == (2,) and d.event_shape == (3,) and d.has_rsample
    x = np.random.default_rng(0).normal(size=(4, 2, 3))
    close(d.log_prob(t(x)), npy(base.log_prob(t(x))).sum(-1), 1e-12)
    close(d.entropy(), npy(base.entropy()).sum(-1), 1e-12)
    close(d.mean, np.zeros((2, 3)))
    assert d.rsample((5,)).shape == (5, 2, 3) and d.expand((4, 2)).sample().shape == (4, 2, 3)
    assert d.support.event_dim == 1
    assert not d.has_enumerate_support


def test_constraints_check():
    C = D.constraints
    close(C.simplex.check(t([[0.5, 0.5], [0.2, 0.2]])), [True, False])
    close(C.integer_interval(0, 3).check(t([0.0, 1.5, 3.0, 4.0])), [True, False, True, False])
    close(C.nonnegative_integer.check(t([0.0, 2.0, -1.0])), [True, True, False])
    close(C.boolean.check(t([0.0, 1.0, 0.5])), [True, True, False])
    close(C.unit_interval.check(t([0.0, 1.0, 1.5])), [True, True, False])
    close(C.interval(-1, 1).check(t([-1.0, 2.0])), [True, False])
    close(C.half_open_interval(0, 1).check(t([0.0, 1.0])), [True, False])
    close(C.greater_than(2.0).check(t([2.0, 3.0])), [False, True])
    close(C.greater_than_eq(2.0).check(t([2.0, 1.0])), [True, False])
    close(C.less_than(2.0).check(t([2.0, 1.0])), [False, True])
    close(C.real.check(t([math.inf, math.nan])), [True, False])
    close(C.positive_definite.check(t([[[2.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])), [True, False])
    close(C.lower_cholesky.check(t([[[1.0, 0.0], [3.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]])), [True, False])
    close(C.one_hot.check(t([[0.0, 1.0], [1.0, 1.0]])), [True, False])
    close(C.real_vector.check(t([[0.0, math.nan], [1.0, 1.0]])), [False, True])
    close(C.multinomial(3).check(t([[1.0, 2.0], [2.0, 2.0]])), [True, False])
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError):
        C.dependent.check(t([1.0]))
