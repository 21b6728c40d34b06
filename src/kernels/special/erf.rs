//! The error function family: `erf`, `erfc`, the scaled `erfcx(x) =
//! exp(x^2) erfc(x)`, and the standard normal `ndtr` and `log_ndtr`.
//!
//! Everything rests on two expansions:
//!
//! * for `|x| < 1`, `erf(x) = 2/sqrt(pi) x exp(-x^2) S(x)` with the
//!   all-positive series `S(x) = sum_k (2x^2)^k / (1 3 5 ... (2k+1))`
//!   (no cancellation);
//! * for `x >= 1`, Laplace's continued fraction for `erfcx` in its even
//!   (contracted) form,
//!   `erfcx(x) = x/sqrt(pi) / (x^2 + 1/2 - a_1 / (x^2 + 5/2 - a_2 / ...))`
//!   with `a_n = n (2n - 1) / 2`, evaluated backward from a depth of
//!   `100 / x^2 + 8` (truncation below 1e-17 on the whole range).
//!
//! `exp(-x^2)` is formed from `x^2` split exactly into `hi + lo` (with a
//! fused multiply-add), so the tails keep full relative accuracy where a
//! rounded `x * x` would cost `x^2` ulps.

use std::f64::consts::FRAC_2_SQRT_PI;

/// `1 / sqrt(pi)`.
const FRAC_1_SQRT_PI: f64 = 0.5 * FRAC_2_SQRT_PI;

/// `S(x) = sum_k (2x^2)^k / (1 3 5 ... (2k+1))` for `|x| < 1`.
fn positive_series(x: f64) -> f64 {
    let two_x2 = 2.0 * x * x;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut k = 0.0;
    while term > 0.5 * f64::EPSILON * sum {
        k += 1.0;
        term *= two_x2 / (2.0 * k + 1.0);
        sum += term;
    }
    sum
}

/// `x^2` as an unevaluated sum `hi + lo` (exact).
pub fn square_split(x: f64) -> (f64, f64) {
    let hi = x * x;
    (hi, x.mul_add(x, -hi))
}

/// `exp(-scale x^2)` for `scale` 1 or 1/2, with `x^2` taken exactly.
pub fn gaussian(x: f64, scale: f64) -> f64 {
    let (hi, lo) = square_split(x);
    let e = (-scale * hi).exp();
    if e == 0.0 {
        // Also x infinite, where lo is NaN.
        return 0.0;
    }
    e * (1.0 - scale * lo)
}

/// `erfcx(x)` for `x >= 1` from the contracted continued fraction.
fn erfcx_fraction(x: f64) -> f64 {
    if x > 1e8 {
        // The fraction is 1 / (x sqrt(pi)) (1 - 1/(2x^2) + ...), and the
        // correction is below an ulp here (x^2 would overflow further on).
        return FRAC_1_SQRT_PI / x;
    }
    let y = x * x;
    let depth = (100.0 / y + 8.0).ceil();
    let mut tail = 0.0;
    let mut n = depth;
    while n >= 1.0 {
        let a = 0.5 * n * (2.0 * n - 1.0);
        tail = a / (y + 0.5 + 2.0 * n - tail);
        n -= 1.0;
    }
    FRAC_1_SQRT_PI * x / (y + 0.5 - tail)
}

/// `erfcx(x)` for `0 <= x < 1`: `exp(x^2) - 2x/sqrt(pi) S(x)`.
fn erfcx_small(x: f64) -> f64 {
    (x * x).exp() - FRAC_2_SQRT_PI * x * positive_series(x)
}

/// The scaled complementary error function `erfcx(x) = exp(x^2) erfc(x)`.
///
/// Accurate for large positive `x` (where it tends to `1/(x sqrt(pi))`);
/// `+inf` once `exp(x^2)` overflows for negative `x` (below about -26.6),
/// 0 at `+inf`, NaN for NaN, as torch.special.erfcx.
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x >= 1.0 {
        return erfcx_fraction(x);
    }
    if x >= 0.0 {
        return erfcx_small(x);
    }
    // erfc(x) = 2 - erfc(-x), so erfcx(x) = 2 exp(x^2) - erfcx(-x).
    let (hi, lo) = square_split(x);
    let e = hi.exp();
    if e.is_infinite() {
        return f64::INFINITY;
    }
    2.0 * e * (1.0 + lo) - erfcx(-x)
}

/// The error function.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    if a < 1.0 {
        return FRAC_2_SQRT_PI * x * (-x * x).exp() * positive_series(x);
    }
    (1.0 - erfcx_fraction(a) * gaussian(a, 1.0)).copysign(x)
}

/// The complementary error function `1 - erf(x)`, accurate in the upper
/// tail (down to its underflow near `x = 27.2`).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 1.0 {
        if x > -1.0 {
            return 1.0 - erf(x);
        }
        return 2.0 - erfc(-x);
    }
    if x == f64::INFINITY {
        return 0.0;
    }
    erfcx_fraction(x) * gaussian(x, 1.0)
}

/// The lower tail `Phi(x)` for `x <= 0`, as `erfc(-x / sqrt 2) / 2` with
/// the Gaussian factor `exp(-x^2 / 2)` taken from the exact square of `x`
/// (the rounding of `x / sqrt 2` only enters the slowly varying `erfcx`).
fn lower_tail(x: f64) -> f64 {
    let t = -x * std::f64::consts::FRAC_1_SQRT_2;
    if t < 1.0 {
        return 0.5 * (1.0 - erf(t));
    }
    0.5 * erfcx_fraction(t) * gaussian(x, 0.5)
}

/// The standard normal cumulative distribution function
/// `Phi(x) = (1 + erf(x / sqrt 2)) / 2`.
///
/// 0 at `-inf`, 1 at `+inf`, NaN for NaN (torch.special.ndtr); the lower
/// tail keeps full relative accuracy down to underflow.
pub fn ndtr(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x <= 0.0 {
        if x == f64::NEG_INFINITY {
            return 0.0;
        }
        return lower_tail(x);
    }
    1.0 - lower_tail(-x)
}

/// `ln Phi(x)`, the log of the standard normal CDF, accurate in both
/// tails: `ln(erfcx(t) / 2) - x^2 / 2` with `t = -x / sqrt 2` below -1, and
/// `ln(1 - Phi(-x))` through `ln_1p` above 0.
///
/// `-inf` at `-inf` (and where `x^2` overflows), `-0.0` at `+inf`, NaN
/// for NaN, as torch.special.log_ndtr.
pub fn log_ndtr(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 0.0 {
        return (-lower_tail(-x)).ln_1p();
    }
    if x > -1.0 {
        return lower_tail(x).ln();
    }
    let (hi, lo) = square_split(x);
    if hi.is_infinite() {
        return f64::NEG_INFINITY;
    }
    let t = -x * std::f64::consts::FRAC_1_SQRT_2;
    ((0.5 * erfcx_fraction(t)).ln() - 0.5 * lo) - 0.5 * hi
}

#[cfg(test)]
mod tests {
    use super::super::assert_close;
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.erfc(x) * mp.exp(x**2)
    // (for x = 1e9 and 1e300 its asymptotic series, which mp.erfc cannot reach).
    const ERFCX_REF: [(f64, f64); 12] = [
        (0.0, 1.0),
        (1e-10, 0.999999999887162),
        (0.5, 0.6156903441929259),
        (0.999, 0.4278569426214168),
        (1.0, 0.427583576155807),
        (3.7, 0.1474349975371851),
        (30.0, 0.01879588886141675),
        (1e9, 5.641895835477563e-10),
        (1e300, 5.641895835477562e-301),
        (-0.5, 1.952360489182557),
        (-3.0, 16205.988853999586),
        (-26.0, 7.657724931490568e293),
    ];

    #[test]
    fn erfcx_matches_mpmath() {
        for &(x, want) in &ERFCX_REF {
            assert_close(erfcx(x), want, 2e-15, x);
        }
    }

    // mpmath at 30 digits, rounded to double: mp.erf(x), mp.erfc(x).
    const ERF_REF: [(f64, f64, f64); 7] = [
        (1e-300, 1.1283791670955126e-300, 1.0),
        (0.3, 0.3286267594591274, 0.6713732405408726),
        (-0.99, -0.8385080695553698, 1.8385080695553697),
        (1.5, 0.9661051464753108, 0.033894853524689274),
        (5.9, 0.9999999999999999, 7.190409783550478e-17),
        (-2.2, -0.9981371537020182, 1.998137153702018),
        (26.5, 1.0, 2.2109076642637343e-307),
    ];

    #[test]
    fn erf_and_erfc_match_mpmath() {
        for &(x, want_erf, want_erfc) in &ERF_REF {
            assert_close(erf(x), want_erf, 5e-16, x);
            assert_close(erfc(x), want_erfc, 2e-15, x);
        }
    }

    // mpmath at 30 digits, rounded to double: mp.ncdf(x) and its log (as
    // mp.log1p(-mp.ncdf(-x)) for x > 0).
    const NDTR_REF: [(f64, f64, f64); 10] = [
        (0.0, 0.5, -std::f64::consts::LN_2),
        (1.0, 0.8413447460685429, -0.17275377902344988),
        (-1.0, 0.15865525393145705, -1.8410216450092636),
        (-1.4, 0.08075665923377107, -2.516314852988329),
        (2.5, 0.9937903346742238, -0.006229025485860002),
        (-7.5, 3.1908916729108963e-14, -31.075890902890002),
        (-38.0, 2.88542835e-316, -726.5572160188201),
        (-40.0, 0.0, -804.6084420137538),
        (9.0, 1.0, -1.1285884059538405e-19),
        (-1e10, 0.0, -5e19),
    ];

    #[test]
    fn ndtr_and_log_ndtr_match_mpmath() {
        for &(x, want, want_log) in &NDTR_REF {
            // Subnormal results keep fewer bits.
            let tol = if want < 1e-300 { 1e-10 } else { 2e-15 };
            assert_close(ndtr(x), want, tol, x);
            assert_close(log_ndtr(x), want_log, 2e-15, x);
        }
    }

    #[test]
    fn erf_identities_hold() {
        for i in 0..400 {
            let x = -6.0 + 0.03 * f64::from(i);
            assert!((erf(x) + erfc(x) - 1.0).abs() <= 3e-16, "{x}");
            assert!((erf(-x) + erf(x)).abs() == 0.0, "{x}");
            let phi = ndtr(x) + ndtr(-x);
            assert!((phi - 1.0).abs() <= 3e-16, "{x}");
        }
    }

    #[test]
    fn edge_cases_follow_torch() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        assert!(erfcx(nan).is_nan() && ndtr(nan).is_nan() && log_ndtr(nan).is_nan());
        assert_eq!(erfcx(inf), 0.0);
        assert_eq!(erfcx(-inf), inf);
        assert_eq!(erfcx(-27.0), inf);
        assert_eq!(erf(inf), 1.0);
        assert_eq!(erf(-inf), -1.0);
        assert_eq!(erfc(inf), 0.0);
        assert_eq!(erfc(-inf), 2.0);
        assert_eq!(ndtr(inf), 1.0);
        assert_eq!(ndtr(-inf), 0.0);
        assert_eq!(log_ndtr(-inf), -inf);
        assert_eq!(log_ndtr(-1e155), -inf);
        let top = log_ndtr(inf);
        assert!(top == 0.0 && top.is_sign_negative());
    }
}
