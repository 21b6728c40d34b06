//! The log-gamma and digamma functions, and the exact-argument `sin(pi x)`
//! and `cos(pi x)` their reflection formulas need.
//!
//! Methods (float64, from the mathematics only):
//!
//! * `lgamma`: the Taylor series of `lgamma(2 + z)` in `zeta(k) - 1` on
//!   `[1.5, 2.5)`, reached from `[0.5, 10)` by `Gamma(x + 1) = x Gamma(x)`
//!   (so the zeros at 1 and 2 keep full relative accuracy); the Stirling
//!   series from 10 up; reflection below 0.5.
//! * `digamma`: a Taylor series about its positive root `x0 = 1.4616...`
//!   on `[1, 2)` (full relative accuracy at the root), the asymptotic
//!   series from 10 up with the recurrence in between, reflection for
//!   negative arguments.
//!
//! Near the zeros of either function on the negative axis the reflection
//! formula subtracts numbers of similar size, so there the error is
//! absolute (a few ulps of the larger term), not relative.

use std::f64::consts::PI;

/// `ln(2 pi) / 2`, the constant of Stirling's series.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Euler's constant gamma.
const EULER: f64 = 0.577_215_664_901_532_9;

// (-1)^k (zeta(k) - 1) / k for k = 2..=31: the Taylor coefficients of
// lgamma(2 + z) after the linear term (scripts/special_coeffs.py, gamma).
const LGAMMA2_SERIES: [f64; 30] = [
    0.3224670334241132,
    -0.0673523010531981,
    0.020580808427784546,
    -0.007385551028673986,
    0.0028905103307415234,
    -0.001192753911703261,
    0.0005096695247430425,
    -0.00022315475845357939,
    9.945751278180853e-05,
    -4.492623673813314e-05,
    2.050721277567069e-05,
    -9.439488275268397e-06,
    4.374866789907488e-06,
    -2.039215753801366e-06,
    9.55141213040742e-07,
    -4.492469198764566e-07,
    2.1207184805554665e-07,
    -1.0043224823968099e-07,
    4.7698101693639804e-08,
    -2.2711094608943164e-08,
    1.0838659214896955e-08,
    -5.183475041970047e-09,
    2.4836745438024785e-09,
    -1.1921401405860912e-09,
    5.731367241678862e-10,
    -2.7595228851242334e-10,
    1.330476437424449e-10,
    -6.4229645638381e-11,
    3.1044247747322276e-11,
    -1.5021384080754142e-11,
];

// The positive root of digamma as a double-double, and psi^(k)(x0) / k! for
// k = 1..=42 (scripts/special_coeffs.py, gamma). The series converges for
// |h| < x0 (the pole at 0); on [1, 2) |h| <= 0.54 and 42 terms reach 1e-18.
const DIGAMMA_ROOT_HI: f64 = 1.4616321449683622;
const DIGAMMA_ROOT_LO: f64 = 9.549995429965697e-17;
const DIGAMMA_ROOT_TAYLOR: [f64; 42] = [
    0.9676722454476212,
    -0.4427631689835921,
    0.258499760955651,
    -0.16394270544240652,
    0.10782405069126237,
    -0.07219956125645471,
    0.04880428816414311,
    -0.03316112647484736,
    0.022597648232218104,
    -0.01542476590494896,
    0.010538791616612175,
    -0.007204534386356869,
    0.004926781395729853,
    -0.003369801655439328,
    0.002305126326734928,
    -0.0015769367714301972,
    0.0010788252019162967,
    -0.0007380709389960052,
    0.000504953265834602,
    -0.0003454680251063077,
    0.00023635601564027053,
    -0.00016170622091974803,
    0.0001106337276874741,
    -7.569179582195066e-05,
    5.178575795222081e-05,
    -3.5430070947659604e-05,
    2.424006611860132e-05,
    -1.6584242271854135e-05,
    1.134638458466385e-05,
    -7.762817668462094e-06,
    5.3110609208898636e-06,
    -3.6336507898010456e-06,
    2.486022733129538e-06,
    -1.7008538854332607e-06,
    1.1636675363548843e-06,
    -7.96142543124197e-07,
    5.446941930669446e-07,
    -3.7266161283438227e-07,
    2.549626552021554e-07,
    -1.7443695117727745e-07,
    1.1934394829830244e-07,
    -8.165115189488409e-08,
];

/// `B_2k / (2k (2k - 1))` for k = 1..=10: the Stirling series of lgamma.
const STIRLING: [f64; 10] = [
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360360.0,
    1.0 / 156.0,
    -3617.0 / 122400.0,
    43867.0 / 244188.0,
    -174611.0 / 125400.0,
];

/// `B_2k / (2k)` for k = 1..=10: the asymptotic series of digamma.
const DIGAMMA_ASYMPTOTIC: [f64; 10] = [
    1.0 / 12.0,
    -1.0 / 120.0,
    1.0 / 252.0,
    -1.0 / 240.0,
    1.0 / 132.0,
    -691.0 / 32760.0,
    1.0 / 12.0,
    -3617.0 / 8160.0,
    43867.0 / 14364.0,
    -174611.0 / 6600.0,
];

/// Horner's rule for `c[0] + c[1] t + c[2] t^2 + ...`.
pub fn horner(coeffs: &[f64], t: f64) -> f64 {
    coeffs.iter().rev().fold(0.0, |acc, &c| acc * t + c)
}

/// `x - 2 round(x / 2)`, in `[-1, 1]`; exact for every finite `x`.
fn reduce_period_two(x: f64) -> f64 {
    x - 2.0 * (0.5 * x).round()
}

/// `sin(pi x)` with the argument reduced exactly, so it is accurate near
/// every integer (where `(PI * x).sin()` is not). NaN for infinite `x`.
pub fn sin_pi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = reduce_period_two(x);
    // sin(pi r) = sin(pi (1 - r)) folds r into [-0.5, 0.5]; 1 - |r| is exact.
    let folded = if r > 0.5 {
        1.0 - r
    } else if r < -0.5 {
        -1.0 - r
    } else {
        r
    };
    (PI * folded).sin()
}

/// `cos(pi x)` with the argument reduced exactly (accurate near the
/// half-integers, its zeros). NaN for infinite `x`.
pub fn cos_pi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = reduce_period_two(x).abs();
    // cos(pi r) = -cos(pi (1 - r)); then cos(pi r) = sin(pi (0.5 - r)).
    let (sign, r) = if r > 0.5 { (-1.0, 1.0 - r) } else { (1.0, r) };
    let c = if r > 0.25 {
        (PI * (0.5 - r)).sin()
    } else {
        (PI * r).cos()
    };
    sign * c
}

/// `lgamma(2 + z)` for `|z| <= 0.5` from its Taylor series.
fn lgamma_near_two(z: f64) -> f64 {
    z * ((1.0 - EULER) + z * horner(&LGAMMA2_SERIES, z))
}

/// The Stirling correction `lgamma(x) - ((x - 1/2) ln x - x + ln(2 pi)/2)`
/// for `x >= 10`: `sum_k B_2k / (2k (2k-1) x^(2k-1))`.
pub fn stirling_correction(x: f64) -> f64 {
    if x >= 1e17 {
        return 1.0 / (12.0 * x);
    }
    let inv = 1.0 / x;
    inv * horner(&STIRLING, inv * inv)
}

/// `ln Gamma(1 + a)` for `a > -1`, without rounding `1 + a` when `a` is
/// small (where it is about `-gamma a`).
pub fn lgamma1p(a: f64) -> f64 {
    if a.abs() < 0.5 {
        return lgamma_near_two(a) - a.ln_1p();
    }
    lgamma(1.0 + a)
}

/// `ln |Gamma(x)|` for `x >= 0.5`.
fn lgamma_positive(x: f64) -> f64 {
    if x < 1.5 {
        // Gamma(x) = Gamma(x + 1) / x; z = x - 1 is exact on [0.5, 1.5).
        let z = x - 1.0;
        return lgamma_near_two(z) - z.ln_1p();
    }
    if x < 10.0 {
        // Gamma(x) = (x - 1) ... (x - m) Gamma(x - m) with x - m in
        // [1.5, 2.5); each subtraction of 1 is exact.
        let mut y = x;
        let mut product = 1.0;
        while y >= 2.5 {
            y -= 1.0;
            product *= y;
        }
        return lgamma_near_two(y - 2.0) + product.ln();
    }
    // Stirling: (x - 1/2) ln x - x + ln(2 pi)/2 + sum B_2k / (2k (2k-1) x^(2k-1)).
    let series = stirling_correction(x);
    let ln_x = x.ln();
    // Written as x (ln x - 1) so that the largest finite results do not
    // overflow in an intermediate product.
    x * (ln_x - 1.0) - 0.5 * ln_x + HALF_LN_2PI + series
}

/// `ln |Gamma(x)|`.
///
/// `+inf` at the poles (zero and the negative integers) and at `+-inf`,
/// NaN for NaN, as torch.lgamma.
pub fn lgamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.is_infinite() || (x <= 0.0 && x == x.floor()) {
        return f64::INFINITY;
    }
    if x >= 0.5 {
        return lgamma_positive(x);
    }
    if x > -0.5 {
        // Gamma(x) = Gamma(x + 1) / x; x + 1 lies in (0.5, 1.5).
        return lgamma_positive(x + 1.0) - x.abs().ln();
    }
    // Reflection with -x (exact) rather than 1 - x (which rounds for large
    // |x|): |Gamma(x)| = pi / (|sin(pi x)| |x| Gamma(-x)).
    PI.ln() - sin_pi(x).abs().ln() - (-x).ln() - lgamma_positive(-x)
}

/// The Taylor series of digamma about its positive root, for `x` in `[1, 2)`.
fn digamma_near_root(x: f64) -> f64 {
    // x - hi is exact (Sterbenz); the low word keeps h accurate to the end.
    let h = (x - DIGAMMA_ROOT_HI) - DIGAMMA_ROOT_LO;
    h * horner(&DIGAMMA_ROOT_TAYLOR, h)
}

/// `psi(x)` for `x >= 10` from the asymptotic series.
fn digamma_asymptotic(x: f64) -> f64 {
    let inv2 = 1.0 / (x * x);
    x.ln() - 0.5 / x - inv2 * horner(&DIGAMMA_ASYMPTOTIC, inv2)
}

/// `psi(x)` for `x > 0`.
fn digamma_positive(x: f64) -> f64 {
    if x < 1.0 {
        // psi(x) = psi(x + 1) - 1 / x
        let y = x + 1.0;
        let shifted = if y < 2.0 {
            digamma_near_root(y)
        } else {
            // x so small that x + 1 rounded up to 2.
            1.0 - EULER
        };
        return shifted - 1.0 / x;
    }
    if x < 2.0 {
        return digamma_near_root(x);
    }
    // psi(x) = psi(x + n) - sum_{k<n} 1 / (x + k), with x + n >= 10.
    let mut y = x;
    let mut sum = 0.0;
    while y < 10.0 {
        sum += 1.0 / y;
        y += 1.0;
    }
    digamma_asymptotic(y) - sum
}

/// The digamma function `psi(x) = d/dx ln Gamma(x)`.
///
/// As torch.digamma: `-inf` at `+0`, `+inf` at `-0`, NaN at the negative
/// integers and at `-inf`, `+inf` at `+inf`.
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
    }
    if x == f64::INFINITY {
        return x;
    }
    if x < 0.0 && x == x.floor() {
        // The negative integers and -inf.
        return f64::NAN;
    }
    if x > 0.0 {
        return digamma_positive(x);
    }
    if x > -0.5 {
        return digamma_positive(x + 1.0) - 1.0 / x;
    }
    // Reflection with -x (exact): psi(x) = psi(-x) - 1/x - pi cot(pi x).
    digamma_positive(-x) - 1.0 / x - PI * cos_pi(x) / sin_pi(x)
}

#[cfg(test)]
mod tests {
    use super::super::assert_close;
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.log(abs(mp.gamma(x))).
    const LGAMMA_REF: [(f64, f64); 16] = [
        (1e-300, 690.7755278982137),
        (1e-08, 18.42068073818021),
        (0.25, 1.2880225246980774),
        (0.9999999, 5.772157468444193e-08),
        (1.0000001, -5.772155829918507e-08),
        (1.5, -0.12078223763524522),
        (1.9999999, -4.2278430309861296e-08),
        (2.0000001, 4.227843666532498e-08),
        (2.4999, 0.28461255726068263),
        (7.3, 7.147892523022248),
        (10.0, 12.801827480081469),
        (123.456, 469.6055471299295),
        (1e15, 3.3538776394910668e16),
        (-0.3, 1.4648400508576025),
        (-2.5, -0.056243716497674054),
        (-100.7, -365.61225576180533),
    ];

    #[test]
    fn lgamma_matches_mpmath() {
        for &(x, want) in &LGAMMA_REF {
            assert_close(lgamma(x), want, 4e-15, x);
        }
    }

    #[test]
    fn lgamma_recurrence_holds() {
        for i in 1..200 {
            let x = 0.55 + 0.173 * f64::from(i);
            let lhs = lgamma(x + 1.0);
            let rhs = lgamma(x) + x.ln();
            assert!((lhs - rhs).abs() <= 1e-14 * lhs.abs().max(1.0), "{x}");
        }
    }

    #[test]
    fn lgamma_edge_cases_follow_torch() {
        assert!(lgamma(f64::NAN).is_nan());
        for x in [
            0.0,
            -0.0,
            -1.0,
            -7.0,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(lgamma(x), f64::INFINITY, "{x}");
        }
        assert_eq!(lgamma(1.0), 0.0);
        assert_eq!(lgamma(2.0), 0.0);
        assert_eq!(lgamma(1e308), f64::INFINITY);
    }

    // mpmath at 30 digits, rounded to double: mp.digamma(x).
    const DIGAMMA_REF: [(f64, f64); 14] = [
        (1e-300, -9.999999999999999e299),
        (1e-05, -100000.57719921567),
        (0.5, -1.9635100260214235),
        (1.0, -0.5772156649015329),
        (1.4616321449683622, -9.241265521729427e-17),
        (1.4616321, -4.3514636958769774e-08),
        (2.0, 0.42278433509846713),
        (9.99, 2.250700372831201),
        (10.01, 2.2528037003181356),
        (1e10, 23.025850929890456),
        (-0.5, 0.03648997397857652),
        (-1e-09, 999999999.4227843),
        (-2.5, 1.103156640645243),
        (-1.5, 0.7031566406452432),
    ];

    #[test]
    fn digamma_matches_mpmath() {
        for &(x, want) in &DIGAMMA_REF {
            assert_close(digamma(x), want, 4e-15, x);
        }
    }

    #[test]
    fn digamma_recurrence_holds() {
        for i in 1..300 {
            let x = 0.013 + 0.117 * f64::from(i);
            let lhs = digamma(x + 1.0);
            let rhs = digamma(x) + 1.0 / x;
            assert!((lhs - rhs).abs() <= 2e-15 * (1.0 + lhs.abs()), "{x}");
        }
    }

    #[test]
    fn digamma_edge_cases_follow_torch() {
        assert!(digamma(f64::NAN).is_nan());
        assert_eq!(digamma(0.0), f64::NEG_INFINITY);
        assert_eq!(digamma(-0.0), f64::INFINITY);
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
        assert!(digamma(f64::NEG_INFINITY).is_nan());
        assert!(digamma(-1.0).is_nan());
        assert!(digamma(-1e20).is_nan());
    }

    #[test]
    fn sin_and_cos_pi_are_exact_at_integers_and_half_integers() {
        assert_eq!(sin_pi(3.0), 0.0);
        assert_eq!(cos_pi(2.5), 0.0);
        assert_eq!(cos_pi(-4.0), 1.0);
        assert_eq!(sin_pi(-1.5), 1.0);
        assert!(sin_pi(f64::INFINITY).is_nan());
        assert!(cos_pi(f64::NAN).is_nan());
    }
}
