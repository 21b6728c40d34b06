"""``ferrograd.special`` and the special functions at the top level: values
against closed forms, series summed in the test and identities between
independent functions (Wronskians, recurrences, inverse pairs); derivatives
against float64 central differences; torch's edge cases and the functions
torch does not differentiate.
"""

from __future__ import annotations

import itertools
import math

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck

S = torch.special
EULER = 0.5772156649015329
F64 = torch.float64


def t(values):
    return torch.tensor(np.asarray(values, dtype=np.float64))


def close(got, want, rtol=1e-13, atol=0.0):
    np.testing.assert_allclose(np.asarray(got.numpy() if hasattr(got, "numpy") else got, dtype=np.float64),
                               np.asarray(want, dtype=np.float64), rtol=rtol, atol=atol)


X = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 30.0, 170.5])


def test_lgamma_closed_forms_and_recurrence():
    close(torch.lgamma(t([1.0, 2.0, 5.0, 0.5, -0.5])),
          [0.0, 0.0, math.log(24.0), 0.5 * math.log(math.pi), math.log(2 * math.sqrt(math.pi))])
    x = np.concatenate([X, -X[:5] - 0.25])
    close(torch.lgamma(t(x + 1)) - torch.lgamma(t(x)), np.log(np.abs(x)), rtol=1e-12, atol=1e-13)
    assert np.all(np.isposinf(torch.lgamma(t([0.0, -1.0, -2.0])).numpy()))
    assert torch.special.gammaln is not None


def test_digamma_polygamma_zeta():
    close(torch.digamma(t([1.0, 0.5])), [-EULER, -EULER - 2 * math.log(2.0)])
    close(torch.digamma(t(X + 1)) - torch.digamma(t(X)), 1 / X, rtol=1e-12)
    d = torch.digamma(t([0.0, -1.0, -2.0])).numpy()
    assert d[0] == -math.inf and np.isnan(d[1:]).all()
    close(torch.polygamma(1, t([1.0])), [math.pi**2 / 6])
    close(torch.polygamma(3, t([0.5])), [math.pi**4])
    for n in (1, 2, 3):
        step = (-1) ** n * math.factorial(n) / X ** (n + 1)
        close(torch.polygamma(n, t(X + 1)) - torch.polygamma(n, t(X)), step, rtol=1e-10, atol=1e-14)
    close(torch.polygamma(0, t(X)), torch.digamma(t(X)).numpy())
    close(S.zeta(t([2.0, 4.0]), 1.0), [math.pi**2 / 6, math.pi**4 / 90])
    s, q = t([2.0, 3.5, 6.0]), t([0.7, 2.0, 10.0])
    close(S.zeta(s, q) - S.zeta(s, q + 1), (q.numpy()) ** -s.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="negative n"):
        torch.polygamma(-1, t([1.0]))


def test_erf_family():
    y = np.linspace(-0.999, 0.999, 41)
    close(torch.erf(torch.erfinv(t(y))), y, rtol=1e-14, atol=1e-15)
    e = torch.erfinv(t([1.0, -1.0, 1.5])).numpy()
    assert e[0] == math.inf and e[1] == -math.inf and np.isnan(e[2])
    x = np.array([-3.0, -0.5, 0.0, 0.5, 3.0, 10.0])
    close(S.erfcx(t(x)), np.exp(x * x) * np.array([math.erfc(v) for v in x]), rtol=1e-12)
    big = np.array([1e3, 1e6])
    asym = 1 / (big * math.sqrt(math.pi)) * (1 - 1 / (2 * big**2) + 3 / (4 * big**4))
    close(S.erfcx(t(big)), asym, rtol=1e-12)
    x = np.array([-8.0, -2.0, 0.0, 1.0, 5.0])
    ref = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    close(S.ndtr(t(x)), ref, rtol=1e-14)
    # log Phi(x) = log1p(-Phi(-x)) above 0, where Phi(x) rounds near 1.
    upper = np.array([-0.5 * math.erfc(v / math.sqrt(2)) for v in x])
    close(S.log_ndtr(t(x)), np.where(x > 0, np.log1p(upper), np.log(ref)), rtol=1e-13)
    # ndtr rounds toward 1 in the upper tail: invert where it keeps the digits.
    close(S.ndtri(S.ndtr(t(x[:4]))), x[:4], rtol=1e-12)
    # Far in the lower tail Phi(-s) = phi(s) m(s), with Mills' ratio
    # m(s) = 1 / (s + 1 / (s + 2 / (s + ...))).
    s = 40.0
    frac = s
    for k in range(60, 0, -1):
        frac = s + k / frac
    want = -s * s / 2 - 0.5 * math.log(2 * math.pi) - math.log(frac)
    close(S.log_ndtr(t([-s])), [want], rtol=1e-14)


def _series_i(nu, x):
    return sum((x / 2) ** (2 * k + nu) / (math.factorial(k) * math.factorial(k + nu)) for k in range(80))


def _series_j(nu, x):
    return sum((-1) ** k * (x / 2) ** (2 * k + nu) / (math.factorial(k) * math.factorial(k + nu))
               for k in range(80))


def test_modified_bessel_against_series_and_wronskian():
    x = np.array([0.0, 0.3, 1.0, 4.0, 12.0])
    close(torch.i0(t(x)), [_series_i(0, v) for v in x], rtol=1e-13)
    close(S.i1(t(x)), [_series_i(1, v) for v in x], rtol=1e-13)
    close(S.i0e(t(-x)), [math.exp(-v) * _series_i(0, v) for v in x], rtol=1e-13)
    close(S.i1e(t(-x)), [-math.exp(-v) * _series_i(1, v) for v in x], rtol=1e-13)
    close(S.modified_bessel_i0(t(x)), torch.i0(t(x)).numpy())
    z = t([0.05, 0.7, 2.0, 9.0, 40.0])
    # I0 K1 + I1 K0 = 1 / x, in scaled form so nothing overflows.
    w = S.i0e(z) * S.scaled_modified_bessel_k1(z) + S.i1e(z) * S.scaled_modified_bessel_k0(z)
    close(w, 1 / z.numpy(), rtol=1e-13)
    close(S.modified_bessel_k0(z[:4]), S.scaled_modified_bessel_k0(z[:4]).numpy() * np.exp(-z.numpy()[:4]),
          rtol=1e-13)


def test_bessel_first_and_second_kind():
    x = np.array([0.0, 0.5, 2.0, 7.5, 12.0])
    close(S.bessel_j0(t(x)), [_series_j(0, v) for v in x], rtol=1e-9, atol=1e-12)
    close(S.bessel_j1(t(x)), [_series_j(1, v) for v in x], rtol=1e-9, atol=1e-12)
    z = t([0.1, 1.0, 3.3, 20.0, 150.0])
    wr = S.bessel_j1(z) * S.bessel_y0(z) - S.bessel_j0(z) * S.bessel_y1(z)
    close(wr, 2 / (math.pi * z.numpy()), rtol=1e-12)
    y = S.bessel_y0(t([0.0, -1.0])).numpy()
    assert y[0] == -math.inf and np.isnan(y[1])
    close(S.spherical_bessel_j0(t([0.0, 1e-9, 2.0])), [1.0, 1.0, math.sin(2.0) / 2.0], rtol=1e-15)


def test_airy_ai_value_at_zero_and_differential_equation():
    ai0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))
    close(S.airy_ai(t([0.0])), [ai0], rtol=1e-14)
    h = 1e-3
    for x0 in (-6.0, -1.5, 0.7, 3.0):
        v = S.airy_ai(t([x0 - h, x0, x0 + h])).numpy()
        second = (v[0] - 2 * v[1] + v[2]) / h**2
        assert second == pytest.approx(x0 * v[1], abs=2e-6)


def test_incomplete_gamma():
    x = np.array([0.0, 0.3, 1.0, 4.0, 25.0])
    close(torch.igamma(t(np.ones(5)), t(x)), 1 - np.exp(-x), rtol=1e-13, atol=1e-16)
    for n in (2, 5):
        ref = 1 - np.exp(-x) * sum(x**k / math.factorial(k) for k in range(n))
        close(S.gammainc(t(np.full(5, float(n))), t(x)), ref, rtol=1e-11, atol=1e-15)
    a = t([0.5, 3.0, 40.0, 0.01])
    z = t([2.0, 0.1, 41.0, 3.0])
    close(S.gammainc(a, z) + S.gammaincc(a, z), np.ones(4), rtol=1e-14)


def _cheb_u(n, x):
    prev, cur = np.ones_like(x), 2 * x
    if n == 0:
        return prev
    for _ in range(n - 1):
        prev, cur = cur, 2 * x * cur - prev
    return cur


@pytest.mark.parametrize("n", [0, 1, 2, 5, 9])
def test_orthogonal_polynomials_against_numpy(n):
    x = np.array([-0.9, -0.3, 0.0, 0.4, 0.8])
    unit = np.zeros(n + 1)
    unit[n] = 1.0
    P = np.polynomial
    close(S.chebyshev_polynomial_t(t(x), n), P.chebyshev.chebval(x, unit), rtol=1e-12, atol=1e-13)
    close(S.chebyshev_polynomial_u(t(x), n), _cheb_u(n, x), rtol=1e-12, atol=1e-13)
    # V_n = U_n - U_{n-1} and W_n = U_n + U_{n-1}.
    u_prev = _cheb_u(n - 1, x) if n else np.zeros_like(x)
    close(S.chebyshev_polynomial_v(t(x), n), _cheb_u(n, x) - u_prev, rtol=1e-12, atol=1e-13)
    close(S.chebyshev_polynomial_w(t(x), n), _cheb_u(n, x) + u_prev, rtol=1e-12, atol=1e-13)
    shifted = S.shifted_chebyshev_polynomial_t(t((x + 1) / 2), n)
    close(shifted, P.chebyshev.chebval(x, unit), rtol=1e-11, atol=1e-12)
    close(S.hermite_polynomial_h(t(x), n), P.hermite.hermval(x, unit), rtol=1e-12, atol=1e-12)
    close(S.hermite_polynomial_he(t(x), n), P.hermite_e.hermeval(x, unit), rtol=1e-12, atol=1e-12)
    close(S.laguerre_polynomial_l(t(x), n), P.laguerre.lagval(x, unit), rtol=1e-12, atol=1e-13)
    close(S.legendre_polynomial_p(t(x), n), P.legendre.legval(x, unit), rtol=1e-12, atol=1e-13)
    assert S.legendre_polynomial_p(t(x), -1).abs().max().item() == 0.0


def test_simple_functions():
    close(S.entr(t([-0.5, 0.0, 0.5])), [-math.inf, 0.0, -0.5 * math.log(0.5)])
    close(torch.sinc(t([0.0, 0.5, 2.5])), [1.0, 2 / math.pi, 1 / (2.5 * math.pi)], rtol=1e-15, atol=1e-16)
    close(S.logit(t([0.25, 0.5])), [math.log(1 / 3), 0.0], atol=1e-16)
    close(S.logit(t([0.0, 1.0]), eps=0.1), [math.log(1 / 9), math.log(9)], rtol=1e-14)
    close(S.multigammaln(t([2.5, 4.0]), 3),
          [3 / 2 * math.log(math.pi) + sum(math.lgamma(v - i / 2) for i in range(3)) for v in (2.5, 4.0)])
    with pytest.raises(RuntimeError, match="greater than"):
        torch.mvlgamma(t([0.5]), 3)
    close(S.xlog1py(t([0.0, 2.0]), t([-1.0, 1.0])), [0.0, 2 * math.log(2.0)])
    close(S.expit(t([0.0])), [0.5])
    close(S.round(t([1.25]), decimals=1), [1.2])


DIFFERENTIABLE = {
    "lgamma": (torch.lgamma, (0.3, 4.0)),
    "digamma": (torch.digamma, (0.3, 4.0)),
    "polygamma2": (lambda x: torch.polygamma(2, x), (0.3, 4.0)),
    "erfinv": (torch.erfinv, (-0.9, 0.9)),
    "i0": (torch.i0, (-3.0, 3.0)),
    "sinc": (torch.sinc, (-2.0, 2.0)),
    "entr": (S.entr, (0.1, 2.0)),
    "ndtri": (S.ndtri, (0.05, 0.95)),
    "log_ndtr": (S.log_ndtr, (-6.0, 3.0)),
    "erfcx": (S.erfcx, (-1.0, 5.0)),
    "i0e": (S.i0e, (-3.0, 3.0)),
    "i1": (S.i1, (-3.0, 3.0)),
    "i1e": (S.i1e, (-3.0, 3.0)),
    "mvlgamma": (lambda x: torch.mvlgamma(x, 2), (1.0, 4.0)),
    "logit": (S.logit, (0.1, 0.9)),
    "ndtr": (S.ndtr, (-3.0, 3.0)),
    "zeta_q": (lambda q: S.zeta(3.0, q), (0.5, 3.0)),
    "igamma_x": (lambda x: torch.igamma(2.5, x), (0.2, 5.0)),
    "igammac_x": (lambda x: torch.igammac(2.5, x), (0.2, 5.0)),
}


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_derivatives_against_finite_differences(name):
    fn, (lo, hi) = DIFFERENTIABLE[name]
    x = torch.tensor(np.random.default_rng(3).uniform(lo, hi, size=5), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradcheck(fn, (x,), check_forward_ad=True, check_backward_ad=False)
    if name not in ("zeta_q", "igamma_x", "igammac_x"):
        assert gradgradcheck(fn, (x,))


def test_derivatives_torch_leaves_undefined_are_refused():
    s = t([2.0, 3.0]).requires_grad_()
    with pytest.raises(NotImplementedError, match="zeta"):
        S.zeta(s, 1.5).sum().backward()
    a = t([2.0]).requires_grad_()
    with pytest.raises(NotImplementedError, match="igamma"):
        torch.igamma(a, t([1.0])).sum().backward()
    # The Bessel functions and polynomials are not differentiable in torch.
    x = t([1.0, 2.0]).requires_grad_()
    for fn in (S.bessel_j0, S.modified_bessel_k1, S.airy_ai, lambda v: S.hermite_polynomial_h(v, 3)):
        assert not fn(x).requires_grad


@pytest.mark.parametrize("fn", [torch.lgamma, torch.digamma, S.i1e, S.bessel_j1, S.erfcx])
def test_dtypes_follow_the_input(fn):
    x32 = torch.tensor([0.5, 2.0], dtype=torch.float32)
    assert fn(x32).dtype == torch.float32
    close(fn(x32), fn(x32.double()).numpy(), rtol=1e-6)
    assert fn(torch.tensor([1, 2])).dtype == torch.get_default_dtype()


def test_inplace_forms_and_methods():
    x = t([0.5, 3.0])
    for name in ("lgamma", "digamma", "erfinv", "i0", "sinc"):
        y = torch.tensor([0.25, 0.5], dtype=F64)
        want = getattr(torch, name)(y)
        assert getattr(y, name + "_")() is y
        close(y, want.numpy(), rtol=0)
    y = x.clone()
    y.polygamma_(1)
    close(y, torch.polygamma(1, x).numpy(), rtol=0)
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2]).lgamma_()


def test_every_torch_special_name_is_present():
    names = [
        "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc",
        "erfcx",
        "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1",
        "i1e",
        "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
        "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi",
        "round",
        "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0",
        "xlog1py", "xlogy", "zeta",
        *(f"{k}_polynomial_{v}" for k, v in itertools.product(["chebyshev", "shifted_chebyshev"], "tuvw")),
        "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
    ]
    assert [n for n in names if not callable(getattr(S, n, None))] == []
