//! The Airy function `Ai(x)`, the solution of `y'' = x y` that decays for
//! `x -> +inf`.
//!
//! Four regions, from the mathematics:
//!
//! * `x >= 1.31` (`zeta = 2/3 x^(3/2) >= 1`):
//!   `Ai(x) = sqrt(x/3) / pi K_(1/3)(zeta)`, with the scaled `K_(1/3)` from
//!   the trapezoidal rule of `modified_bessel` and `exp(-zeta)` from `zeta`
//!   held as a double-double (so large `x` keep full relative accuracy);
//! * `-1.25 <= x < 1.31`: the Maclaurin series `Ai(0) f(x) + Ai'(0) g(x)`
//!   with `f = sum 3^k (1/3)_k x^(3k) / (3k)!`,
//!   `g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)!` (cancellation there costs
//!   at most a factor of ten);
//! * `-10.25 < x < -1.25`: the Taylor series about the nearest centre
//!   `c = -k/2`, whose coefficients follow from `y'' = (c + t) y`:
//!   `a_(k+2) = (c a_k + a_(k-1)) / ((k+1)(k+2))`, starting from `Ai(c)` and
//!   `Ai'(c)` tabled by scripts/special_coeffs.py (airy); both solutions
//!   oscillate there, so errors in the table do not grow;
//! * `x <= -10.25`: the asymptotic expansion (DLMF 9.7.9)
//!   `Ai(-z) = (cos(zeta - pi/4) P - ... ) / (sqrt(pi) z^(1/4))` with
//!   `u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!)`; its smallest term is below
//!   `exp(-2 zeta) < 1e-19` there. The phase uses the double-double `zeta`.
//!
//! On the negative axis the error is absolute near the zeros of `Ai`
//! (relative to its envelope `|x|^(-1/4) / sqrt(pi)`).

use super::modified_bessel::k_scaled_quadrature;
use std::f64::consts::{FRAC_1_SQRT_2, PI};

// Ai(0) and -Ai'(0) (scripts/special_coeffs.py, airy).
const AI_0: f64 = 0.3550280538878172;
const NEG_AI_PRIME_0: f64 = 0.2588194037928068;

// (Ai(c), Ai'(c)) at c = -0.5 i for i = 1..=20 (scripts/special_coeffs.py,
// airy).
const AIRY_CENTRES: [(f64, f64); 20] = [
    (0.4757280916105396, -0.20408167033954738),
    (0.5355608832923521, -0.01016056711664521),
    (0.4642565777488694, 0.3091869672024104),
    (0.22740742820168558, 0.618259020741691),
    (-0.11232506769296609, 0.6788527342647943),
    (-0.37881429367765806, 0.3145837692165988),
    (-0.37553382314043193, -0.34344343345404815),
    (-0.07026553294928951, -0.7906285753685813),
    (0.2921527810559595, -0.5233625323157477),
    (0.35076100902411433, 0.32719281855444315),
    (0.017781541276574976, 0.8641972177713984),
    (-0.3291451736298231, 0.3459354872813429),
    (-0.2380203019971158, -0.6749524925132022),
    (0.18428083525050565, -0.7710081684101265),
    (0.3217757163806479, 0.3188095066985546),
    (-0.0527050503563862, 0.9355609381983065),
    (-0.33029023763020887, -0.03231334828463914),
    (-0.022133721547341403, -0.9756639809263316),
    (0.3191032477191282, -0.10809531881187123),
    (0.04024123848644319, 0.99626504413279),
];

/// `zeta = 2/3 z^(3/2)` for `z > 0` as a double-double `(hi, lo)`.
fn zeta_split(z: f64) -> (f64, f64) {
    let s = z.sqrt();
    let s_lo = (-s).mul_add(s, z) / (2.0 * s);
    // p = z sqrt(z) = p_hi + p_lo
    let p_hi = z * s;
    let p_lo = z.mul_add(s, -p_hi) + z * s_lo;
    let c_hi = 2.0 / 3.0;
    let c_lo = (-3.0f64).mul_add(c_hi, 2.0) / 3.0;
    let hi = c_hi * p_hi;
    let lo = c_hi.mul_add(p_hi, -hi) + c_hi * p_lo + c_lo * p_hi;
    let sum = hi + lo;
    (sum, lo - (sum - hi))
}

/// The Maclaurin series, for `-1.25 <= x < 1.31`.
fn maclaurin(x: f64) -> f64 {
    let x3 = x * x * x;
    let (mut f_term, mut g_term) = (1.0, x);
    let (mut f, mut g) = (1.0, x);
    let mut k = 0.0;
    while k < 60.0 {
        k += 1.0;
        f_term *= x3 / ((3.0 * k - 1.0) * (3.0 * k));
        g_term *= x3 / ((3.0 * k) * (3.0 * k + 1.0));
        f += f_term;
        g += g_term;
        if f_term.abs() + g_term.abs() <= 1e-18 {
            break;
        }
    }
    AI_0 * f - NEG_AI_PRIME_0 * g
}

/// The Taylor series about the tabled centre nearest `x`, for
/// `-10.25 < x < -1.25`.
fn taylor(x: f64) -> f64 {
    let i = (-2.0 * x).round();
    let (value, slope) = AIRY_CENTRES[i as usize - 1];
    let c = -0.5 * i;
    let t = x - c;
    // a_(k-1), a_k, a_(k+1) along y'' = (c + t) y.
    let (mut a_prev, mut a_k, mut a_next) = (value, slope, 0.5 * c * value);
    let mut sum = value + slope * t;
    let mut power = t;
    let mut k = 1.0;
    while k < 60.0 {
        power *= t;
        sum += a_next * power;
        let a_after = (c * a_k + a_prev) / ((k + 1.0) * (k + 2.0));
        a_prev = a_k;
        a_k = a_next;
        a_next = a_after;
        k += 1.0;
        if (a_next * power * t).abs() + (a_k * power).abs() <= 1e-18 {
            break;
        }
    }
    sum
}

/// The asymptotic expansion for `x <= -10.25`.
fn oscillating(x: f64) -> f64 {
    let z = -x;
    let (zeta, zeta_lo) = zeta_split(z);
    if !zeta.is_finite() {
        return f64::NAN;
    }
    // P = sum (-1)^k u_2k / zeta^2k, Q = sum (-1)^k u_(2k+1) / zeta^(2k+1),
    // with t_k = u_k / zeta^k.
    let (mut p, mut q) = (1.0, 0.0);
    let mut t: f64 = 1.0;
    let mut k = 0.0;
    loop {
        k += 1.0;
        let next = t * (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0)
            / ((2.0 * k - 1.0) * 216.0 * k * zeta);
        if next >= t || next < 1e-18 {
            break;
        }
        t = next;
        let sign = if k % 4.0 < 2.0 { 1.0 } else { -1.0 };
        if k % 2.0 == 0.0 {
            p += sign * t;
        } else {
            q += sign * t;
        }
    }
    let (s_hi, c_hi) = zeta.sin_cos();
    // sin and cos of zeta_hi + zeta_lo (zeta_lo reaches 1e-4 once zeta is
    // near 1e12, so its own sine and cosine are needed), then of
    // zeta - pi/4.
    let (s_lo, c_lo) = zeta_lo.sin_cos();
    let s = s_hi * c_lo + c_hi * s_lo;
    let c = c_hi * c_lo - s_hi * s_lo;
    let cos_phase = FRAC_1_SQRT_2 * (c + s);
    let sin_phase = FRAC_1_SQRT_2 * (s - c);
    (cos_phase * p + sin_phase * q) / (PI.sqrt() * z.sqrt().sqrt())
}

/// `Ai(x)` for `x >= 1.31` through `K_(1/3)`.
fn decaying(x: f64) -> f64 {
    let (zeta, zeta_lo) = zeta_split(x);
    let e = (-zeta).exp();
    if e == 0.0 {
        return 0.0;
    }
    (x / 3.0).sqrt() / PI * e * (1.0 - zeta_lo) * k_scaled_quadrature(1.0 / 3.0, zeta)
}

/// The Airy function of the first kind `Ai(x)`.
///
/// NaN at `+-inf` and NaN (torch.special.airy_ai's values); underflows to
/// 0 for large positive `x`.
pub fn airy_ai(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    if x >= 1.31 {
        decaying(x)
    } else if x >= -1.25 {
        maclaurin(x)
    } else if x > -10.25 {
        taylor(x)
    } else {
        oscillating(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.airyai(x).
    const REF: [(f64, f64); 15] = [
        (0.0, 0.3550280538878172),
        (1e-300, 0.3550280538878172),
        (0.7, 0.18916240039815008),
        (-1.0, 0.5355608832923521),
        (1.31, 0.09227739244142805),
        (1.3099, 0.09228930523151241),
        (5.0, 0.00010834442813607442),
        (100.0, 2.6344821520881846e-291),
        (-1.26, 0.5186221217165597),
        (-2.338107410459767, 2.743319340666283e-17),
        (-5.3, 0.18256793106833963),
        (-10.2, -0.15369678260708255),
        (-10.3, -0.23210801885482976),
        (-1000.0, 0.05597189577301992),
        (-1e7, 0.005418514944210602),
    ];

    #[test]
    fn airy_matches_mpmath() {
        for &(x, want) in &REF {
            let got = airy_ai(x);
            // Relative, or against the envelope |x|^(-1/4) / sqrt(pi) on the
            // oscillating side (the second last negative case is a zero).
            let scale = if x < 0.0 {
                want.abs().max(x.abs().powf(-0.25) / PI.sqrt())
            } else {
                want.abs()
            };
            assert!(
                (got - want).abs() <= 3e-15 * scale,
                "{x}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn airy_equation_holds() {
        // Ai'' = x Ai by central differences of step h: error O(h^2).
        let h = 1e-3;
        for i in 0..400 {
            let x = -11.0 + 0.0317 * f64::from(i);
            let second = (airy_ai(x + h) - 2.0 * airy_ai(x) + airy_ai(x - h)) / (h * h);
            assert!((second - x * airy_ai(x)).abs() <= 1e-5, "{x}");
        }
    }

    #[test]
    fn edge_cases_follow_torch() {
        assert!(airy_ai(f64::NAN).is_nan());
        assert!(airy_ai(f64::INFINITY).is_nan());
        assert!(airy_ai(f64::NEG_INFINITY).is_nan());
        assert!(airy_ai(-1e300).is_nan());
        assert_eq!(airy_ai(200.0), 0.0);
    }
}
