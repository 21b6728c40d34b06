//! Modified Bessel functions of orders 0 and 1: the first kind `i0`, `i1`,
//! the second kind `k0`, `k1`, and their exponentially scaled forms
//! (`i0e = exp(-|x|) i0`, `k0e = exp(x) k0`, ...).
//!
//! Methods (all sums of positive terms except where noted):
//!
//! * `I` for `|x| < 20`: the power series `sum (x^2/4)^k / (k! (k+nu)!)`;
//!   from 20 on, the asymptotic expansion
//!   `I_nu(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k` (its smallest
//!   term there is below `exp(-40)`).
//! * `K` for `x <= 1`: the logarithmic series (DLMF 10.31.1); the
//!   subtraction there costs at most a few ulps on that range.
//! * `K` for `x > 1`: the trapezoidal rule on
//!   `exp(x) K_nu(x) = int_0^inf exp(-2x sinh^2(t/2)) cosh(nu t) dt`. The
//!   integrand is analytic in a strip and decays doubly exponentially, so
//!   the rule converges geometrically in `1/h`; with `h = min(0.2, 0.7 /
//!   sqrt(x))` the discretisation error is below `exp(-39)` and 13 to 25
//!   nodes suffice for every `x`. It yields the scaled function directly.
//!
//! `airy` reuses the quadrature for `K_(1/3)`.

use super::bessel::ln_half;
use std::f64::consts::PI;

/// Euler's constant gamma.
const EULER: f64 = 0.577_215_664_901_532_9;

/// `I_nu(x)` for `nu` 0 or 1 and `0 <= x < 20`, from the power series.
fn i_series(nu: f64, x: f64) -> f64 {
    let q = 0.25 * x * x;
    let mut term = if nu == 0.0 { 1.0 } else { 0.5 * x };
    let mut sum = term;
    let mut k = 0.0;
    while term > 0.5 * f64::EPSILON * sum {
        k += 1.0;
        term *= q / (k * (k + nu));
        sum += term;
    }
    sum
}

/// `sqrt(2 pi x) e^(-x) I_nu(x)` for `x >= 20`, from the asymptotic series.
fn i_asymptotic_sum(nu: f64, x: f64) -> f64 {
    let mu = 4.0 * nu * nu;
    let mut term: f64 = 1.0;
    let mut sum = 1.0;
    let mut k = 0.0;
    loop {
        let odd = 2.0 * k + 1.0;
        // t_(k+1) = -t_k (mu - (2k+1)^2) / (8 (k+1) x)
        let next = -term * (mu - odd * odd) / (8.0 * (k + 1.0) * x);
        if next.abs() >= term.abs() || next.abs() < 1e-18 * sum {
            break;
        }
        term = next;
        sum += term;
        k += 1.0;
    }
    sum
}

/// `exp(-x) I_nu(x)` for `x >= 0`.
fn i_scaled(nu: f64, x: f64) -> f64 {
    if x < 20.0 {
        i_series(nu, x) * (-x).exp()
    } else {
        i_asymptotic_sum(nu, x) / (2.0 * PI * x).sqrt()
    }
}

/// `I_nu(x)` for finite `x >= 0`, overflowing only where the value does.
fn i_unscaled(nu: f64, x: f64) -> f64 {
    if x < 20.0 {
        return i_series(nu, x);
    }
    // e^x in two halves so that it does not overflow before the value.
    let half = (0.5 * x).exp();
    half * (half * i_asymptotic_sum(nu, x) / (2.0 * PI * x).sqrt())
}

/// The modified Bessel function of the first kind of order 0.
///
/// Even; 1 at 0; NaN at `+-inf` (torch.special.i0's value) and NaN.
pub fn i0(x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::NAN;
    }
    i_unscaled(0.0, a)
}

/// `exp(-|x|) i0(x)`; 0 at `+-inf`.
pub fn i0e(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return a;
    }
    if a.is_infinite() {
        return 0.0;
    }
    i_scaled(0.0, a)
}

/// The modified Bessel function of the first kind of order 1.
///
/// Odd; NaN at `+-inf` (torch.special.i1's value) and NaN.
pub fn i1(x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::NAN;
    }
    i_unscaled(1.0, a).copysign(x)
}

/// `exp(-|x|) i1(x)`; odd, `+-0` at `+-inf`.
pub fn i1e(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return a;
    }
    if a.is_infinite() {
        return 0.0_f64.copysign(x);
    }
    i_scaled(1.0, a).copysign(x)
}

/// `exp(x) K_nu(x)` for `x > 1` (any real `nu` with `|nu| <= 1`) by the
/// trapezoidal rule described in the module header.
pub fn k_scaled_quadrature(nu: f64, x: f64) -> f64 {
    let h = (0.7 / x.sqrt()).min(0.2);
    // Node t = 0 has weight 1/2 (the integrand is even).
    let mut sum = 0.5;
    let mut j = 0.0;
    loop {
        j += 1.0;
        let t = j * h;
        let s = (0.5 * t).sinh();
        let term = (-2.0 * x * s * s).exp() * (nu * t).cosh();
        sum += term;
        if term <= 1e-18 * sum {
            break;
        }
    }
    h * sum
}

/// `(K0(x), K1(x))` for `0 < x <= 1` from the logarithmic series.
fn k_series(x: f64) -> (f64, f64) {
    let q = 0.25 * x * x;
    let log_term = ln_half(x);
    // t0 = q^k / (k!)^2, t1 = q^k / (k! (k+1)!); harmonic = H_k.
    let (mut t0, mut t1) = (1.0, 1.0);
    let (mut sum0, mut sum1) = (0.0, 1.0);
    let mut harmonic = 0.0;
    let mut k = 0.0;
    while t0 > 1e-18 {
        k += 1.0;
        t0 *= q / (k * k);
        t1 *= q / (k * (k + 1.0));
        harmonic += 1.0 / k;
        sum0 += harmonic * t0;
        sum1 += (2.0 * harmonic + 1.0 / (k + 1.0)) * t1;
    }
    let i0 = i_series(0.0, x);
    let i1 = i_series(1.0, x);
    // K0 = -(ln(x/2) + gamma) I0 + sum_k H_k t0
    let k0 = -(log_term + EULER) * i0 + sum0;
    // K1 = 1/x + ln(x/2) I1 - x/4 sum_k (psi(k+1) + psi(k+2)) t1, with
    // psi(k+1) + psi(k+2) = H_k + H_(k+1) - 2 gamma and sum_k t1 = 2 I1 / x.
    let k1 = 1.0 / x + log_term * i1 - 0.25 * x * (sum1 - 2.0 * EULER * (2.0 * i1 / x));
    (k0, k1)
}

/// `K_nu(x)` or `exp(x) K_nu(x)` (when `scaled`) for `nu` 0 or 1, with
/// torch's edge cases: NaN below 0 and for NaN, `+inf` at `+-0`, 0 at `+inf`.
fn k_order(nu: f64, x: f64, scaled: bool) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::INFINITY;
    }
    if x.is_infinite() {
        return 0.0;
    }
    if x <= 1.0 {
        let (k0, k1) = k_series(x);
        let k = if nu == 0.0 { k0 } else { k1 };
        return if scaled { k * x.exp() } else { k };
    }
    let k = k_scaled_quadrature(nu, x);
    if scaled {
        k
    } else {
        k * (-x).exp()
    }
}

/// The modified Bessel function of the second kind of order 0.
///
/// NaN for `x < 0` and NaN, `+inf` at `+-0`, 0 at `+inf`, as
/// torch.special.modified_bessel_k0.
pub fn k0(x: f64) -> f64 {
    k_order(0.0, x, false)
}

/// `exp(x) k0(x)`, with `k0`'s edge cases.
pub fn k0e(x: f64) -> f64 {
    k_order(0.0, x, true)
}

/// The modified Bessel function of the second kind of order 1.
///
/// NaN for `x < 0` and NaN, `+inf` at `+-0` and where `1/x` overflows, 0 at
/// `+inf` (torch gives NaN at the smallest subnormals; here the value is
/// the overflow to `+inf`).
pub fn k1(x: f64) -> f64 {
    k_order(1.0, x, false)
}

/// `exp(x) k1(x)`, with `k1`'s edge cases.
pub fn k1e(x: f64) -> f64 {
    k_order(1.0, x, true)
}

#[cfg(test)]
mod tests {
    use super::super::assert_close;
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.besseli(0, x),
    // mp.besseli(1, x), mp.besselk(0, x), mp.besselk(1, x).
    const REF: [(f64, f64, f64, f64, f64); 10] = [
        (
            1e-300,
            1.0,
            5e-301,
            690.8914594138721,
            9.999999999999999e299,
        ),
        (
            1e-05,
            1.000000000025,
            5.0000000000625004e-06,
            11.628856980944363,
            99999.99993935571,
        ),
        (
            0.7,
            1.1263030183068092,
            0.37187967777700864,
            0.6605198599151016,
            1.050283535312918,
        ),
        (
            1.0,
            1.2660658777520084,
            0.565159103992485,
            0.42102443824070834,
            0.6019072301972346,
        ),
        (
            1.0000001,
            1.2660659342679224,
            0.5651591740831646,
            0.4210243780499904,
            0.6019071279040789,
        ),
        (
            5.5,
            42.69464515184779,
            38.58816461632739,
            0.0021387085659502875,
            0.0023255690088490053,
        ),
        (
            19.99,
            43135797.87064526,
            42042635.9277871,
            5.800371200486227e-10,
            5.94372291903157e-10,
        ),
        (
            20.01,
            43984910.8348573,
            42871359.80820023,
            5.682707974572402e-10,
            5.823012979072235e-10,
        ),
        (
            150.0,
            4.543597466270579e63,
            4.528426729115812e63,
            7.336371406107646e-67,
            7.36078548876807e-67,
        ),
        (
            710.0,
            3.345334558619656e306,
            3.3429778585097626e306,
            2.10509745556884e-310,
            2.1065793973053e-310,
        ),
    ];

    // mpmath at 30 digits, rounded to double: the same times exp(-x) for I
    // and exp(x) for K.
    const SCALED_REF: [(f64, f64, f64, f64, f64); 6] = [
        (
            1e-300,
            1.0,
            5e-301,
            690.8914594138721,
            9.999999999999999e299,
        ),
        (
            0.5,
            0.6450352704491501,
            0.1564208031848717,
            1.5241093857739094,
            2.731009708211786,
        ),
        (
            3.0,
            0.2430003541618254,
            0.19682671329730086,
            0.6977615980438517,
            0.8065634801287869,
        ),
        (
            1000.0,
            0.012617240455891257,
            0.012610930256928629,
            0.03962832160075422,
            0.03964813081296021,
        ),
        (
            1e10,
            3.9894228040641945e-06,
            3.989422803864723e-06,
            1.2533141372998339e-05,
            1.2533141373624996e-05,
        ),
        (
            1e300,
            3.9894228040143264e-151,
            3.9894228040143264e-151,
            1.2533141373155002e-150,
            1.2533141373155002e-150,
        ),
    ];

    #[test]
    fn modified_bessel_matches_mpmath() {
        for &(x, wi0, wi1, wk0, wk1) in &REF {
            // K at 710 is subnormal and keeps fewer bits.
            let k_tol = if x > 700.0 { 1e-11 } else { 2e-15 };
            assert_close(i0(x), wi0, 2e-15, x);
            assert_close(i1(x), wi1, 2e-15, x);
            assert_close(k0(x), wk0, k_tol, x);
            assert_close(k1(x), wk1, k_tol, x);
        }
        for &(x, wi0, wi1, wk0, wk1) in &SCALED_REF {
            assert_close(i0e(x), wi0, 2e-15, x);
            assert_close(i1e(x), wi1, 2e-15, x);
            assert_close(k0e(x), wk0, 2e-15, x);
            assert_close(k1e(x), wk1, 2e-15, x);
        }
    }

    #[test]
    fn wronskian_holds() {
        // I0(x) K1(x) + I1(x) K0(x) = 1 / x, checked on the scaled forms.
        for i in 1..800 {
            let x = 0.0371 * f64::from(i);
            let w = i0e(x) * k1e(x) + i1e(x) * k0e(x);
            assert!((w * x - 1.0).abs() <= 3e-15, "{x}");
        }
    }

    #[test]
    fn edge_cases_follow_torch() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        for f in [i0, i0e, i1, i1e, k0, k0e, k1, k1e] {
            assert!(f(nan).is_nan());
        }
        assert!(i0(inf).is_nan() && i0(-inf).is_nan());
        assert!(i1(inf).is_nan() && i1(-inf).is_nan());
        assert_eq!(i0e(-inf), 0.0);
        assert!(i1e(-inf) == 0.0 && i1e(-inf).is_sign_negative());
        assert_eq!(i0(-2.5), i0(2.5));
        assert_eq!(i1(-2.5), -i1(2.5));
        assert_eq!(i0(0.0), 1.0);
        assert!(i1(-0.0) == 0.0 && i1(-0.0).is_sign_negative());
        assert_eq!(i0(714.0), inf);
        for f in [k0, k0e, k1, k1e] {
            assert_eq!(f(0.0), inf);
            assert_eq!(f(-0.0), inf);
            assert!(f(-1.0).is_nan());
            assert!(f(-inf).is_nan());
            assert_eq!(f(inf), 0.0);
        }
        assert_eq!(k1(5e-324), inf);
    }
}
