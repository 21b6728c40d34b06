//! Inverses of the error function family: `erfinv` and the inverse
//! standard normal CDF `ndtri`, both through an inverse complementary
//! error function so that each tail keeps full relative accuracy.
//!
//! * For arguments of `erfinv` up to 1/2 in magnitude: the Maclaurin series
//!   of erfinv in `z = sqrt(pi)/2 y`, whose coefficients `c_k / (2k + 1)`
//!   follow from `c_k = sum_{m<k} c_m c_{k-1-m} / ((m+1)(2m+1))` (tabled
//!   by scripts/special_coeffs.py, erf); 30 terms reach 1e-20 at 1/2.
//! * Otherwise, solving `erfc(x) = c` for `c = 1 - |y|` (exact) by Halley's
//!   method on `ln erfc(x) = ln erfcx(x) - x^2`, which is nearly linear in
//!   `x^2`, from the asymptotic guess `x^2 = -ln c - ln(x sqrt(pi))`.

use super::erf::{erfcx, square_split};
use std::f64::consts::{PI, SQRT_2};

// c_k / (2k + 1) for k = 0..30 (scripts/special_coeffs.py, erf).
const ERFINV_SERIES: [f64; 30] = [
    1.0,
    0.3333333333333333,
    0.23333333333333334,
    0.2015873015873016,
    0.19263668430335096,
    0.19532547699214367,
    0.20593586454697566,
    0.22320975741875212,
    0.24697023314275493,
    0.277653825603224,
    0.3161426235531172,
    0.3637175870396922,
    0.4220720808430426,
    0.49336326556393456,
    0.580293846061514,
    0.6862233969476912,
    0.8153122055528081,
    0.9727032088645525,
    1.1647499636184417,
    1.3993010831666703,
    1.6860544545395053,
    2.0369980191940678,
    2.4669581652045465,
    2.994282066479119,
    3.6416868900303454,
    4.4373170116450105,
    5.4160606510185385,
    6.621190180698241,
    8.106406431154626,
    9.938387424010047,
];

/// `erfinv(y)` for `|y| <= 1/2` from its Maclaurin series.
fn erfinv_series(y: f64) -> f64 {
    let z = 0.5 * PI.sqrt() * y;
    z * super::gamma::horner(&ERFINV_SERIES, z * z)
}

/// The `x > 0` with `erfc(x) = c`, for `0 < c < 1/2`.
fn erfc_inverse_tail(c: f64) -> f64 {
    let ln_c = c.ln();
    let root_pi = PI.sqrt();
    // erfc(x) ~ exp(-x^2) / (x sqrt(pi)): one step of that fixed point.
    let x0 = (-ln_c).sqrt();
    let mut x = (-ln_c - (x0 * root_pi).ln()).max(0.25).sqrt();
    // Halley on h(x) = ln erfcx(x) - x^2 - ln c, with h' = -g for
    // g = 2 / (sqrt(pi) erfcx(x)) and h'' = g (2x - g) (from
    // erfcx' = 2x erfcx - 2 / sqrt(pi)): the Newton step h / g divided by
    // 1 - (h / g)(2x - g) / 2. Convergence is cubic: once a step is below
    // 1e-6 x the next would be below 1e-18 x, past what the rounding of h
    // allows (a tighter test would only spin on rounding noise). Two or
    // three steps from the guess above, where Newton took three or four.
    for _ in 0..20 {
        let e = erfcx(x);
        let (hi, lo) = square_split(x);
        let h = (e.ln() - ln_c - lo) - hi;
        let newton = 0.5 * root_pi * e * h;
        let g = 2.0 / (root_pi * e);
        let step = newton / (1.0 - 0.5 * newton * (2.0 * x - g));
        x += step;
        if step.abs() <= 1e-6 * x {
            break;
        }
    }
    x
}

/// The inverse complementary error function on `(0, 1]`.
fn erfc_inverse(c: f64) -> f64 {
    if c >= 0.5 {
        // 1 - c is exact here.
        erfinv_series(1.0 - c)
    } else {
        erfc_inverse_tail(c)
    }
}

/// The inverse error function: the `x` with `erf(x) = y`.
///
/// As torch.special.erfinv: `+-inf` at `+-1`, NaN for `|y| > 1` and NaN,
/// and `+-0` at `+-0`.
pub fn erfinv(y: f64) -> f64 {
    let a = y.abs();
    if a.is_nan() || a > 1.0 {
        return f64::NAN;
    }
    if a == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    if a <= 0.5 {
        return erfinv_series(y);
    }
    // erf(x) = y <=> erfc(|x|) = 1 - |y|, exact for |y| >= 1/2.
    erfc_inverse_tail(1.0 - a).copysign(y)
}

/// The inverse of the standard normal CDF: the `x` with `ndtr(x) = p`.
///
/// As torch.special.ndtri: `-inf` at 0, `+inf` at 1, NaN outside `[0, 1]`
/// and for NaN. Each tail is solved through `erfc` directly, so the result
/// is accurate for `p` down to the smallest subnormal.
pub fn ndtri(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    // Phi(x) = erfc(-x / sqrt 2) / 2.
    if p < 0.5 {
        -SQRT_2 * erfc_inverse(2.0 * p)
    } else {
        // 1 - p is exact for p >= 1/2.
        SQRT_2 * erfc_inverse(2.0 * (1.0 - p))
    }
}

#[cfg(test)]
mod tests {
    use super::super::assert_close;
    use super::super::erf::{erf, erfc, ndtr};
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.erfinv(y).
    const ERFINV_REF: [(f64, f64); 10] = [
        (1e-300, 8.86226925452758e-301),
        (0.1, 0.08885599049425769),
        (-0.5, -0.4769362762044699),
        (0.50001, 0.4769474021116977),
        (0.9, 1.1630871536766743),
        (-0.999, -2.3267537655135246),
        (0.999999999, 4.320005388105362),
        (0.9999999999999999, 5.8635847487551676),
        (-0.9999999999999998, -5.805018683193453),
        (0.7, 0.7328690779592167),
    ];

    #[test]
    fn erfinv_matches_mpmath() {
        for &(y, want) in &ERFINV_REF {
            assert_close(erfinv(y), want, 2e-15, y);
        }
    }

    // mpmath at 30 digits, rounded to double: mp.sqrt(2) * mp.erfinv(2p - 1)
    // for p >= 1/2; below, -sqrt(2) t with t from mp.findroot on
    // ln erfc(t) = ln(2p).
    const NDTRI_REF: [(f64, f64); 9] = [
        (5e-324, -38.467405617144344),
        (1e-300, -37.0470962993612),
        (1e-20, -9.262340089798407),
        (0.025, -1.9599639845400543),
        (0.3, -0.5244005127080408),
        (0.5, 0.0),
        (0.75, 0.6744897501960817),
        (0.999, 3.090232306167813),
        (0.9999999999999999, 8.209536151601387),
    ];

    #[test]
    fn ndtri_matches_mpmath() {
        for &(p, want) in &NDTRI_REF {
            assert_close(ndtri(p), want, 2e-15, p);
        }
    }

    #[test]
    fn inverses_round_trip() {
        for i in 1..1000 {
            let y = -1.0 + 0.002 * f64::from(i);
            let x = erfinv(y);
            // erf is flat near +-1, so compare there through erfc.
            if y.abs() < 0.5 {
                assert!((erf(x) - y).abs() <= 1e-15 * y.abs(), "{y}");
            } else {
                let c = 1.0 - y.abs();
                assert!((erfc(x.abs()) - c).abs() <= 4e-15 * c, "{y}");
            }
        }
        for k in 1..300 {
            let p = 10f64.powf(-f64::from(k));
            let x = ndtri(p);
            // An ulp of x moves ndtr(x) by about x^2 ulps in the tail.
            assert!((ndtr(x) - p).abs() <= 2e-15 * (1.0 + x * x) * p, "{p}");
        }
    }

    #[test]
    fn edge_cases_follow_torch() {
        assert!(erfinv(f64::NAN).is_nan());
        assert!(erfinv(1.5).is_nan() && erfinv(-1.0000000000000002).is_nan());
        assert_eq!(erfinv(1.0), f64::INFINITY);
        assert_eq!(erfinv(-1.0), f64::NEG_INFINITY);
        assert!(erfinv(-0.0) == 0.0 && erfinv(-0.0).is_sign_negative());
        assert!(ndtri(f64::NAN).is_nan() && ndtri(-0.5).is_nan() && ndtri(1.5).is_nan());
        assert_eq!(ndtri(0.0), f64::NEG_INFINITY);
        assert_eq!(ndtri(-0.0), f64::NEG_INFINITY);
        assert_eq!(ndtri(1.0), f64::INFINITY);
    }
}
