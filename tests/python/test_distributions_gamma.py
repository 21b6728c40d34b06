"""ferrograd.distributions, the gamma family and its relatives (Gamma, Chi2,
Beta, Dirichlet, StudentT, Poisson, Binomial): densities and masses against
formulas written here with ``math.lgamma``; mean, variance, entropy and cdf
against numerical integrals of those densities or sums over the support;
gradients by finite differences, ``vmap`` against a loop, shapes and
argument validation.

Oracles: quadrature after a substitution that makes the integrand decay
exponentially at both ends (``x = e^u`` on the half-line, ``x = lo + (hi -
lo) * sigmoid(u)`` on an interval, which also tames the integrable endpoint
singularities of densities with a shape below 1); ``digamma`` as a central
difference of ``math.lgamma`` where a closed form needs it.
"""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.distributions as D
import numpy as np
import pytest
from distribution_reference import integrate
from ferrograd.autograd import gradcheck
from gamma_reference import (
    beta_logpdf,
    binomial_logpmf,
    digamma,
    gamma_logpdf,
    lgamma,
    on_interval,
    on_positive,
    poisson_logpmf,
    student_logpdf,
)
from numpy_oracle import close, npy, t


def moments_and_entropy(logpdf, quad):
    """Mean, variance and entropy of the density ``exp(logpdf)`` by the quadrature ``quad``
    (which passes its integrand's arguments on to ``logpdf``)."""
    mean = quad(lambda *x: x[0] * np.exp(logpdf(*x)))
    var = quad(lambda *x: (x[0] - mean) ** 2 * np.exp(logpdf(*x)))
    ent = quad(lambda *x: -np.exp(logpdf(*x)) * logpdf(*x))
    return mean, var, ent


A = np.array([0.6, 1.0, 3.5])
B = np.array([0.8, 2.0, 1.3])
X = np.array([0.3, 1.7, 2.2])
U = np.array([0.15, 0.5, 0.85])


# Gamma / Chi2 ---------------------------------------------------------------------------------


def test_gamma_log_prob_matches_density():
    d = D.Gamma(t(A), t(B))
    close(d.log_prob(t(X)), gamma_logpdf(X, A, B), 1e-12)
    close(d.log_prob(X.tolist()), gamma_logpdf(X, A, B), 1e-12)  # numbers are accepted as torch does
    # At 0 the density is b for a = 1 and infinite for a < 1.
    close(D.Gamma(t([1.0, 0.5]), t([2.0, 1.0])).log_prob(t([0.0, 0.0])), [math.log(2.0), math.inf])


def test_gamma_moments_entropy_and_cdf_are_integrals():
    d = D.Gamma(t(A), t(B))
    for i in range(3):
        mean, var, ent = moments_and_entropy(lambda x, i=i: gamma_logpdf(x, A[i], B[i]), on_positive)
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-9)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-9)
        assert npy(d.entropy())[i] == pytest.approx(ent, rel=1e-9)
        cdf = on_interval(lambda x, _, i=i: np.exp(gamma_logpdf(x, A[i], B[i])), 0.0, X[i])
        assert npy(d.cdf(t(X)))[i] == pytest.approx(cdf, rel=1e-9)
    close(d.mode, np.maximum((A - 1) / B, 0.0))


def test_chi2_is_gamma_of_half_df():
    df = np.array([1.0, 3.0, 7.5])
    d = D.Chi2(t(df))
    assert isinstance(d, D.Gamma) and d.arg_constraints == {"df": D.constraints.positive}
    close(d.df, df)
    want = (df / 2 - 1) * np.log(X) - X / 2 - df / 2 * math.log(2) - lgamma(df / 2)
    close(d.log_prob(t(X)), want, 1e-12)
    close(d.mean, df)
    close(d.variance, 2 * df)
    e = d.expand((2, 3))
    assert type(e) is D.Chi2 and e.batch_shape == (2, 3)
    close(e.df, np.broadcast_to(df, (2, 3)))
    assert repr(D.Chi2(2.0)) == "Chi2()"


# Beta / Dirichlet --------------------------------------------------------------------------------


def test_beta_log_prob_matches_density():
    d = D.Beta(t(A), t(B))
    close(d.log_prob(t(U)), beta_logpdf(U, 1 - U, A, B), 1e-12)
    close(d.concentration1, A)
    close(d.concentration0, B)
    # Beta(1, 1) is uniform; Beta(2, 1) has density 2x.
    close(D.Beta(t([1.0, 2.0]), t([1.0, 1.0])).log_prob(t([0.3, 0.3])), [0.0, math.log(0.6)], 1e-12)


def test_beta_moments_and_entropy_are_integrals():
    d = D.Beta(t(A), t(B))
    for i in range(3):
        mean, var, ent = moments_and_entropy(
            lambda x, xc, i=i: beta_logpdf(x, xc, A[i], B[i]), lambda f: on_interval(f, 0.0, 1.0)
        )
        assert npy(d.mean)[i] == pytest.approx(mean, rel=1e-9)
        assert npy(d.variance)[i] == pytest.approx(var, rel=1e-9)
        assert npy(d.entropy())[i] == pytest.approx(ent, rel=1e-9, abs=1e-11)


def test_beta_and_dirichlet_modes():
    a, b = np.array([2.0, 5.0, 1.0]), np.array([3.0, 1.5, 4.0])
    close(D.Beta(t(a), t(b)).mode, (a - 1) / (a + b - 2))
    conc = np.array([[2.0, 3.0, 4.0], [0.5, 0.3, 0.9], [0.5, 1.0, 3.0]])
    mode = npy(D.Dirichlet(t(conc)).mode)
    close(mode[0], (conc[0] - 1) / (conc[0] - 1).sum())
    close(mode[1], [1.0, 0.0, 0.0])  # every a_i < 1: a vertex, the first as torch
    close(mode[2], [0.0, 0.0, 1.0])
    assert npy(D.Beta(0.5, 0.2).mode) == 1.0


def test_dirichlet_log_prob_by_stick_breaking():
    # (x1, x2, x3) ~ Dir(a1, a2, a3) iff x1 ~ Beta(a1, a2 + a3) and x2 / (1 - x1) ~ Beta(a2, a3),
    # independently: the density is the product times the Jacobian 1 / (1 - x1).
    conc = np.array([[0.8, 2.0, 3.5], [1.0, 1.0, 1.0]])
    x = np.array([[0.2, 0.5, 0.3], [0.1, 0.6, 0.3]])
    v = x[:, 1] / (1 - x[:, 0])
    want = (
        beta_logpdf(x[:, 0], 1 - x[:, 0], conc[:, 0], conc[:, 1] + conc[:, 2])
        + beta_logpdf(v, 1 - v, conc[:, 1], conc[:, 2])
        - np.log1p(-x[:, 0])
    )
    d = D.Dirichlet(t(conc))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    close(d.log_prob(t(x)), want, 1e-12)
    close(d.log_prob(t(x))[1], math.log(2.0), 1e-12)  # the uniform density on the 2-simplex


def test_dirichlet_moments_and_entropy():
    conc = np.array([[0.8, 2.0, 3.5], [1.5, 0.7, 4.0]])
    d = D.Dirichlet(t(conc))
    a0 = conc.sum(-1, keepdims=True)
    close(d.mean, conc / a0, 1e-12)
    close(d.variance, conc * (a0 - conc) / (a0**2 * (a0 + 1)), 1e-12)
    # -E[log p] with E[log x_i] = digamma(a_i) - digamma(a_0).
    mean_log = digamma(conc) - digamma(a0)
    log_beta = lgamma(conc).sum(-1) - lgamma(a0[:, 0])
    close(d.entropy(), log_beta - ((conc - 1) * mean_log).sum(-1), 1e-8)
    # The two-category Dirichlet is the Beta of its first coordinate.
    two = np.stack([A, B], -1)
    close(D.Dirichlet(t(two)).entropy(), npy(D.Beta(t(A), t(B)).entropy()), 1e-12)


# StudentT ---------------------------------------------------------------------------------------

DF = np.array([1.5, 3.0, 8.0])
LOC, SCALE = np.array([-0.5, 0.0, 2.0]), np.array([0.7, 1.0, 2.5])


def test_student_t_log_prob_matches_density():
    d = D.StudentT(t(DF), t(LOC), t(SCALE))
    x = np.array([-1.2, 0.4, 5.0])
    close(d.log_prob(t(x)), student_logpdf(x, DF, LOC, SCALE), 1e-12)
    # df = 1 is the Cauchy distribution.
    cauchy = math.log(2.0 / (math.pi * (4.0 + 0.25)))
    close(D.StudentT(t(1.0), t(0.5), t(2.0)).log_prob(t(1.0)), cauchy, 1e-12)
    close(D.StudentT(t(2.0)).log_prob(t(0.0)), math.log(1 / (2 * math.sqrt(2))), 1e-12)


def test_student_t_entropy_and_moments_are_integrals():
    d = D.StudentT(t(DF), t(LOC), t(SCALE))
    for i in range(3):
        mean, var, ent = moments_and_entropy(
            lambda x, i=i: student_logpdf(x, DF[i], LOC[i], SCALE[i]),
            lambda f, i=i: integrate(f, LOC[i], SCALE[i], n=1_000_001),
        )
        assert npy(d.entropy())[i] == pytest.approx(ent, rel=1e-6)
        assert npy(d.mean)[i] == pytest.approx(mean, abs=1e-6)
        if DF[i] > 2:
            assert npy(d.variance)[i] == pytest.approx(var, rel=1e-5)
    close(d.mode, LOC)


def test_student_t_undefined_moments():
    d = D.StudentT(t([0.8, 1.0, 1.5, 2.0, 2.5]), 1.0, 2.0)
    mean, var = npy(d.mean), npy(d.variance)
    assert np.isnan(mean[:2]).all() and (mean[2:] == 1.0).all()
    assert np.isnan(var[:2]).all() and np.isinf(var[2:4]).all() and var[4] == pytest.approx(4 * 2.5 / 0.5)
    # The unused branch of the variance does not leak NaN gradients.
    df = t([1.5, 2.0, 3.0], requires_grad=True)
    D.StudentT(df).variance[2].backward()
    close(df.grad, [0.0, 0.0, -2 / (3.0 - 2) ** 2])


# Poisson / Binomial -------------------------------------------------------------------------------

RATE = np.array([0.4, 3.3, 12.5])
K = np.arange(0, 200)


def test_poisson_mass_and_moments():
    d = D.Poisson(t(RATE))
    k = np.array([0.0, 2.0, 15.0])
    close(d.log_prob(t(k)), poisson_logpmf(k, RATE), 1e-12)
    close(D.Poisson(t([0.0, 0.0])).log_prob(t([0.0, 1.0])), [0.0, -math.inf])
    for i, rate in enumerate(RATE):
        pmf = np.exp(npy(D.Poisson(t(rate)).log_prob(t(K * 1.0))))
        assert pmf.sum() == pytest.approx(1.0, rel=1e-12)
        assert npy(d.mean)[i] == pytest.approx((K * pmf).sum(), rel=1e-12)
        assert npy(d.variance)[i] == pytest.approx(((K - rate) ** 2 * pmf).sum(), rel=1e-10)
        assert npy(d.mode)[i] == K[np.argmax(pmf)]
    with pytest.raises(NotImplementedError):
        d.entropy()  # as torch: the Poisson has no closed-form entropy


N = np.array([5.0, 12.0, 12.0])
PB = np.array([0.3, 0.55, 0.95])


def test_binomial_mass_entropy_moments():
    k = np.array([2.0, 12.0, 0.0])
    logits = np.log(PB) - np.log1p(-PB)
    for d in (D.Binomial(t(N), probs=t(PB)), D.Binomial(t(N), logits=t(logits))):
        close(d.log_prob(t(k)), binomial_logpmf(k, N, PB), 1e-10)
        close(d.mean, N * PB, 1e-12)
        close(d.variance, N * PB * (1 - PB), 1e-12)
    for i in range(3):
        d = D.Binomial(int(N[i]), probs=t(PB[i]))
        ks = np.arange(N[i] + 1)
        pmf = np.exp(binomial_logpmf(ks, N[i], PB[i]))
        close(d.log_prob(t(ks)), np.log(pmf), 1e-10)
        assert npy(d.entropy()) == pytest.approx(-(pmf * np.log(pmf)).sum(), rel=1e-10)
        assert npy(d.mode) == ks[np.argmax(pmf)]
    # Certain outcomes at p = 0 and p = 1 (up to the clamping of logits, as torch).
    close(D.Binomial(10, t([0.0, 1.0])).log_prob(t([0.0, 10.0])), [0.0, 0.0], 1e-5)
    close(D.Binomial(0, t([0.3])).entropy(), [0.0])


def test_binomial_total_count_broadcasts_and_enumerates():
    d = D.Binomial(t([[2.0], [3.0]]), probs=t([0.2, 0.6, 0.9]))
    assert d.batch_shape == (2, 3) and d.total_count.dtype == fg.float64
    close(d.mean, np.array([[2.0], [3.0]]) * [0.2, 0.6, 0.9])
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        d.enumerate_support()
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
        d.entropy()
    e = D.Binomial(3, probs=t([0.2, 0.6]))
    assert e.has_enumerate_support and e.total_count.dtype == fg.float64
    close(e.enumerate_support(), np.array([[0.0] * 2, [1.0] * 2, [2.0] * 2, [3.0] * 2]))
    assert e.enumerate_support(expand=False).shape == (4, 1)
    support = e.enumerate_support()
    close(e.log_prob(support).exp().sum(0), [1.0, 1.0], 1e-12)
    assert D.Binomial(fg.tensor([4, 4]), probs=fg.tensor([0.5, 0.5])).total_count.dtype == fg.float32


# Gradients --------------------------------------------------------------------------------------


def _p(values):
    return t(values, requires_grad=True)


def test_gradcheck_continuous_log_prob_entropy_cdf():
    a, b, x, u = _p(A), _p(B), _p(X), _p(U)
    assert gradcheck(lambda a, b, x: D.Gamma(a, b).log_prob(x), (a, b, x))
    assert gradcheck(lambda a, b: D.Gamma(a, b).entropy(), (a, b))
    assert gradcheck(lambda b, x: D.Gamma(t(A), b).cdf(x), (b, x))
    assert gradcheck(lambda a: D.Chi2(a).log_prob(t(X)), (a,))
    assert gradcheck(lambda a, b, u: D.Beta(a, b).log_prob(u), (a, b, u))
    assert gradcheck(lambda a, b: D.Beta(a, b).entropy(), (a, b))
    conc, simplex = _p([[0.8, 2.0, 3.5]]), _p([[0.2, 0.5, 0.3]])
    assert gradcheck(lambda c, s: D.Dirichlet(c).log_prob(s / s.sum(-1, keepdim=True)), (conc, simplex))
    assert gradcheck(lambda c: D.Dirichlet(c).entropy(), (conc,))
    df, loc, scale = _p(DF), _p(LOC), _p(SCALE)
    assert gradcheck(lambda df, m, s, x: D.StudentT(df, m, s).log_prob(x), (df, loc, scale, x))
    assert gradcheck(lambda df, s: D.StudentT(df, 0.0, s).entropy(), (df, scale))


def test_gradcheck_discrete_log_prob():
    rate, p = _p(RATE), _p(PB)
    assert gradcheck(lambda r: D.Poisson(r).log_prob(t([0.0, 2.0, 15.0])), (rate,))
    assert gradcheck(lambda p: D.Binomial(t(N), probs=p).log_prob(t([2.0, 12.0, 0.0])), (p,))
    assert gradcheck(lambda p: D.Binomial(12, logits=p).entropy(), (p,))


def test_vmap_log_prob_equals_loop():
    from ferrograd.func import vmap

    batch = t(np.array([[0.7, 1.3, 2.0], [1.5, 0.4, 3.0]]))
    x = t(U)
    cases = [
        (lambda a: D.Gamma(a, 2.0).log_prob(x)),
        (lambda a: D.Chi2(a).log_prob(x)),
        (lambda a: D.Beta(a, 1.5).log_prob(x)),
        (lambda a: D.Dirichlet(a).log_prob(x / x.sum())),
        (lambda a: D.StudentT(a, 0.5).log_prob(x)),
        (lambda a: D.Poisson(a).log_prob(t([0.0, 1.0, 4.0]))),
        (lambda a: D.Binomial(5, logits=a).log_prob(t([0.0, 1.0, 4.0]))),
        (lambda a: D.Gamma(a, 2.0).entropy()),
        (lambda a: D.Beta(a, 1.5).entropy()),
    ]
    for fn in cases:
        close(vmap(fn)(batch), np.stack([npy(fn(row)) for row in batch]), 1e-12)
    with pytest.raises(ValueError, match="Expected parameter concentration"):
        vmap(lambda a: D.Gamma(a, 1.0).log_prob(x))(t([[1.0, 1.0, 1.0], [1.0, -1.0, 1.0]]))


# Shapes, expand, validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "value"),
    [
        (lambda: D.Gamma(t(A), t(B)), X),
        (lambda: D.Chi2(t(A)), X),
        (lambda: D.Beta(t(A), t(B)), U),
        (lambda: D.StudentT(t(DF), t(LOC), t(SCALE)), X),
        (lambda: D.Poisson(t(RATE)), np.array([0.0, 1.0, 3.0])),
        (lambda: D.Binomial(12, probs=t(PB)), np.array([0.0, 1.0, 3.0])),
        (lambda: D.Binomial(12, logits=t(PB)), np.array([0.0, 1.0, 3.0])),
    ],
)
def test_shapes_and_expand(make, value):
    d = make()
    assert d.batch_shape == (3,) and d.event_shape == ()
    e = d.expand((4, 3))
    assert type(e) is type(d) and e.batch_shape == (4, 3) and e._validate_args == d._validate_args
    close(e.log_prob(t(value)), np.broadcast_to(npy(d.log_prob(t(value))), (4, 3)))
    close(e.mean, np.broadcast_to(npy(d.mean), (4, 3)))
    assert d.log_prob(t(np.stack([value, value]))).shape == (2, 3)
    with pytest.raises(RuntimeError):
        d.expand((2,))


def test_parameter_broadcasting_and_scalar_batches():
    assert D.Gamma(t([1.0, 2.0]), t([[1.0], [2.0], [3.0]])).batch_shape == (3, 2)
    assert D.Gamma(1.0, 2.0).batch_shape == () and D.Gamma(1.0, 2.0).rate.dtype == fg.get_default_dtype()
    b = D.Beta(2.0, 3.0)
    assert b.batch_shape == () and b.concentration1.dtype == fg.get_default_dtype()
    assert D.Beta(t(2.0), 3.0).batch_shape == () and D.Beta(t([2.0, 1.0]), 3.0).batch_shape == (2,)
    assert D.StudentT(t([1.0, 2.0]), t([[0.0], [1.0]])).batch_shape == (2, 2)
    d = D.Dirichlet(t(np.ones((2, 3))))
    e = d.expand((4, 2))
    assert e.batch_shape == (4, 2) and e.event_shape == (3,) and e.concentration.shape == (4, 2, 3)
    be = D.Beta(t(A), t(B)).expand((2, 3))
    assert be.concentration1.shape == (2, 3) and be._dirichlet.batch_shape == (2, 3)
    assert D.StudentT(t(DF)).expand((2, 3))._chi2.batch_shape == (2, 3)
    assert D.Binomial(t([3.0, 4.0]), probs=t([0.5, 0.5])).expand((2, 2)).total_count.shape == (2, 2)


@pytest.mark.parametrize(
    ("make", "param", "constraint"),
    [
        (lambda: D.Gamma(t([1.0, -1.0]), 1.0), "concentration", "GreaterThan"),
        (lambda: D.Gamma(1.0, 0.0), "rate", "GreaterThan"),
        (lambda: D.Chi2(t([-2.0])), "df", "GreaterThan"),
        (lambda: D.Beta(0.0, 1.0), "concentration", "IndependentConstraint"),
        (lambda: D.Dirichlet(t([1.0, -1.0])), "concentration", "IndependentConstraint"),
        (lambda: D.StudentT(t([1.0]), 0.0, -1.0), "scale", "GreaterThan"),
        (lambda: D.StudentT(1.0, math.nan), "loc", r"Real\(\)"),
        (lambda: D.Poisson(t([-0.5])), "rate", "GreaterThanEq"),
        (lambda: D.Binomial(t([2.5]), probs=0.5), "total_count", "IntegerGreaterThan"),
        (lambda: D.Binomial(-1, probs=0.5), "total_count", "IntegerGreaterThan"),
        (lambda: D.Binomial(3, probs=t([1.5])), "probs", "Interval"),
    ],
)
def test_invalid_parameters_raise_value_error(make, param, constraint):
    message = f"Expected parameter {param} .* to satisfy the constraint {constraint}"
    with pytest.raises(ValueError, match=message):
        make()


def test_argument_errors():
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet(t(1.0))
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet([1.0, 2.0])
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Binomial(3, probs=0.5, logits=0.0)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Binomial(3)
    with pytest.raises(ValueError, match="Input arguments must all be"):
        D.Gamma("a", 1.0)


@pytest.mark.parametrize(
    ("d", "value"),
    [
        (D.Gamma(2.0, 1.0), -1.0),
        (D.Chi2(2.0), -0.5),
        (D.Beta(2.0, 2.0), 1.5),
        (D.StudentT(2.0), math.nan),
        (D.Poisson(2.0), 1.5),
        (D.Poisson(2.0), -1.0),
        (D.Binomial(3, probs=0.5), 4.0),
        (D.Binomial(3, probs=0.5), 0.5),
    ],
)
def test_out_of_support_values_raise_value_error(d, value):
    with pytest.raises(ValueError, match="Expected value argument .* to be within the support"):
        d.log_prob(fg.tensor(value))


def test_out_of_support_and_shape_errors_for_vectors():
    with pytest.raises(ValueError, match="to be within the support"):
        D.Dirichlet(t([1.0, 2.0, 3.0])).log_prob(t([0.3, 0.3, 0.3]))
    with pytest.raises(ValueError, match="right-most size"):
        D.Dirichlet(t([1.0, 2.0, 3.0])).log_prob(t([0.5, 0.5]))
    with pytest.raises(ValueError, match="not broadcastable"):
        D.Gamma(t(A), 1.0).log_prob(t([1.0, 2.0]))
    # Without validation the density is evaluated as the formula gives it.
    assert npy(D.Gamma(2.0, 1.0, validate_args=False).log_prob(t(-1.0))) != 0


# Samples and pathwise gradients --------------------------------------------------------------


def test_sample_shapes_supports_and_graphs():
    conc = t(A, requires_grad=True)
    cases = [
        (D.Gamma(conc, t(B)), (3,)),
        (D.Chi2(conc), (3,)),
        (D.Beta(conc, t(B)), (3,)),
        (D.StudentT(conc, t(LOC), t(SCALE)), (3,)),
        (D.Dirichlet(conc.expand(2, 3)), (2, 3)),
    ]
    for d, shape in cases:
        assert d.sample((4, 5)).shape == (4, 5) + shape and not d.sample().requires_grad
        assert d.rsample((4,)).shape == (4,) + shape and d.rsample().requires_grad
        assert d.expand((2,) + tuple(d.batch_shape)).rsample((6,)).shape == (6, 2) + shape
        assert d.sample().dtype == fg.float64
    s = npy(D.Dirichlet(t(np.array([[0.3, 1.0, 4.0], [2.0, 2.0, 2.0]]))).sample((500,)))
    assert s.shape == (500, 2, 3) and np.all(s >= 0) and np.allclose(s.sum(-1), 1.0, atol=1e-12)
    s = npy(D.Beta(t(A), t(B)).sample((500,)))
    assert np.all((s >= 0) & (s <= 1))
    p = npy(D.Poisson(t([0.0, 2.5])).sample((300,)))
    assert p.shape == (300, 2) and np.all(p == np.floor(p)) and np.all(p[:, 0] == 0)
    b = npy(D.Binomial(t([[4.0], [9.0]]), probs=t([0.0, 0.4, 1.0])).sample((300,)))
    assert b.shape == (300, 2, 3) and np.all(b == np.floor(b)) and np.all((b >= 0) & (b <= [[4.0], [9.0]]))
    assert np.all(b[..., 0] == 0) and np.all(b[..., 2] == np.array([4.0, 9.0]))


def test_small_concentrations_draw_positive_values():
    # In float32 most draws of Gamma(0.01) underflow; they are raised to the smallest normal number.
    fg.manual_seed(0)
    s = D.Gamma(fg.tensor([0.01]), fg.tensor([1.0])).rsample((2000,))
    assert bool((s >= fg.finfo(fg.float32).tiny).all())
    assert bool(D.Gamma(fg.tensor([0.01]), fg.tensor([1.0])).log_prob(s).isfinite().all())


def test_rsample_follows_torchs_construction():
    # Gamma: a standard gamma draw over the rate; StudentT: a randn draw first, then the chi-squared one.
    fg.manual_seed(3)
    got = npy(D.Gamma(t(A), t(B)).rsample((4,)))
    fg.manual_seed(3)
    close(got, npy(fg._standard_gamma(t(A).expand(4, 3))) / B, 1e-12)
    fg.manual_seed(5)
    got = npy(D.StudentT(t(DF), t(LOC), t(SCALE)).rsample((4,)))
    fg.manual_seed(5)
    eps = npy(fg.randn(4, 3, dtype=fg.float64))
    chi2 = npy(fg._standard_gamma(t(DF / 2).expand(4, 3))) / 0.5
    close(got, LOC + SCALE * eps / np.sqrt(chi2 / DF), 1e-12)
    fg.manual_seed(8)
    a = npy(D.Beta(t(A), t(B)).sample((3,)))
    fg.manual_seed(8)
    close(a, npy(D.Beta(t(A), t(B)).sample((3,))))


def _sample_mean_var(d, n, seed):
    fg.manual_seed(seed)
    s = npy(d.sample((n,)))
    return s, s.mean(0), s.var(0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: D.Gamma(t(A), t(B)),
        lambda: D.Chi2(t(A * 2)),
        lambda: D.Beta(t(A), t(B)),
        lambda: D.StudentT(t([4.5, 6.0, 9.0]), t(LOC), t(SCALE)),
        lambda: D.Poisson(t(RATE)),
        lambda: D.Binomial(t(N), probs=t(PB)),
        lambda: D.Dirichlet(t(np.array([[0.6, 1.0, 3.5], [2.0, 0.8, 1.3]]))),
    ],
)
def test_sample_mean_and_variance(make):
    d = make()
    n = 40_000
    _, mean, var = _sample_mean_var(d, n, seed=21)
    want_mean, want_var = npy(d.mean), npy(d.variance)
    assert np.all(np.abs(mean - want_mean) < 6 * np.sqrt(want_var / n)), (mean, want_mean)
    assert np.all(np.abs(var - want_var) < 0.08 * want_var), (var, want_var)


@pytest.mark.parametrize("make", [lambda: D.Gamma(t(A), t(B)), lambda: D.Chi2(t([0.7, 2.0, 9.0]))])
def test_gamma_samples_follow_the_cdf(make):
    d = make()
    s, _, _ = _sample_mean_var(d, 20_000, seed=4)
    xs = np.sort(s, 0)
    cdf = npy(d.cdf(t(xs)))
    ks = np.max(np.abs(cdf - np.arange(1, len(xs) + 1)[:, None] / len(xs)), 0)
    assert np.all(ks < 0.02), ks  # the 1e-6 quantile of the KS statistic is about 0.017


def test_beta_samples_follow_the_cdf():
    a, b = np.array([0.6, 2.5]), np.array([1.8, 0.9])
    s, _, _ = _sample_mean_var(D.Beta(t(a), t(b)), 20_000, seed=6)
    for i in range(2):
        for q in (0.1, 0.3, 0.5, 0.8):
            cdf = on_interval(lambda x, xc, i=i: np.exp(beta_logpdf(x, 1 - x, a[i], b[i])), 0.0, q)
            assert abs((s[:, i] <= q).mean() - cdf) < 6 * np.sqrt(cdf * (1 - cdf) / len(s))


def _pathwise(build, param, f, n=100_000, seed=0):
    """Per-draw derivatives ``d f(X_j) / d param`` of ``n`` draws, each from its own copy of the
    parameter (a batch of ``n`` equal values), as mean and standard error."""
    leaf = t(np.full(n, param), requires_grad=True)
    fg.manual_seed(seed)
    f(build(leaf).rsample()).sum().backward()
    g = npy(leaf.grad)
    return g.mean(), g.std() / np.sqrt(n)


def _central(fn, x, h=1e-5):
    return (fn(x + h) - fn(x - h)) / (2 * h)


@pytest.mark.parametrize(
    ("build", "param", "f", "expectation"),
    [
        # Gamma(a, b): E[X] = a / b, E[X^2] = a (a + 1) / b^2; b enters by scaling.
        (lambda a: D.Gamma(a, 1.7), 0.6, lambda x: x, lambda a: a / 1.7),
        (lambda a: D.Gamma(a, 1.7), 3.5, lambda x: x * x, lambda a: a * (a + 1) / 1.7**2),
        (lambda b: D.Gamma(2.2, b), 0.8, lambda x: x * x, lambda b: 2.2 * 3.2 / b**2),
        (lambda k: D.Chi2(k), 3.0, lambda x: x * x, lambda k: k * (k + 2)),
        # Beta(a, b): E[X] = a / (a + b), E[X^2] = a (a + 1) / ((a + b)(a + b + 1)).
        pytest.param(
            lambda a: D.Beta(a, 1.5), 0.7, lambda x: x, lambda a: a / (a + 1.5)
        ),
        pytest.param(
            lambda b: D.Beta(2.0, b),
            0.9,
            lambda x: x * x,
            lambda b: 6.0 / ((2 + b) * (3 + b)),
        ),
        # StudentT(df): E[X^2] = df / (df - 2) for df > 2 (the draw uses the chi-squared pathwise gradient).
        (lambda df: D.StudentT(df), 6.0, lambda x: x * x, lambda df: df / (df - 2)),
    ],
)
def test_pathwise_gradient_of_an_expectation(build, param, f, expectation):
    mean, se = _pathwise(build, param, f)
    want = _central(expectation, param)
    assert abs(mean - want) < 6 * se + 1e-3 * abs(want), (mean, se, want)


def test_dirichlet_pathwise_gradient():
    # E[sum_i w_i X_i^2] = sum_i w_i a_i (a_i + 1) / (a0 (a0 + 1)); its gradient in each a_j.
    conc, w = np.array([0.7, 1.5, 3.0]), np.array([1.0, -2.0, 0.5])
    n = 100_000
    leaf = t(np.broadcast_to(conc, (n, 3)).copy(), requires_grad=True)
    fg.manual_seed(1)
    x = D.Dirichlet(leaf).rsample()
    (x * x * t(w)).sum().backward()
    g = npy(leaf.grad)

    def expectation(a):
        return (w * a * (a + 1)).sum() / (a.sum() * (a.sum() + 1))

    for j in range(3):
        want = _central(lambda v, j=j: expectation(np.where(np.arange(3) == j, v, conc)), conc[j])
        se = g[:, j].std() / np.sqrt(n)
        assert abs(g[:, j].mean() - want) < 6 * se + 1e-3 * abs(want), (j, g[:, j].mean(), se, want)


def test_standard_gamma_grad_is_the_implicit_derivative():
    # dx/da = -(dF/da)(a, x) / p(x; a) for the distribution function F(a, x) = P(a, x).
    a = np.array([0.3, 0.8, 1.0, 2.5, 7.0, 30.0])
    x = np.array([0.05, 1.2, 0.4, 3.0, 5.5, 33.0])
    h = 1e-6

    def cdf(alpha):
        return npy(fg.special.gammainc(t(alpha), t(x)))

    want = -(cdf(a + h) - cdf(a - h)) / (2 * h) / np.exp(gamma_logpdf(x, a, 1.0))
    close(fg._standard_gamma_grad(t(a), t(x)), want, 1e-6)


def test_dirichlet_grad_is_the_tangent_field_of_the_beta_marginal():
    a, total = np.array([0.6, 2.0, 3.0, 0.7]), np.array([1.5, 5.0, 3.5, 2.2])
    x = np.array([0.2, 0.45, 0.9, 0.95])
    b, h = total - a, 1e-5

    def cdf(alpha, i):
        return on_interval(lambda v, _: np.exp(beta_logpdf(v, 1 - v, alpha, b[i])), 0.0, x[i])

    dx_da = [
        -(cdf(a[i] + h, i) - cdf(a[i] - h, i)) / (2 * h) / np.exp(beta_logpdf(x[i], 1 - x[i], a[i], b[i]))
        for i in range(4)
    ]
    close(fg._dirichlet_grad(t(x), t(a), t(total)), np.array(dx_da) / (1 - x), 1e-6)
