//! The Hurwitz zeta function `zeta(s, q) = sum_{k>=0} (q + k)^(-s)` and the
//! polygamma functions built on it,
//! `psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x)` for `n >= 1`.
//!
//! Method: the first terms summed directly (stopping early once the rest is
//! provably below an ulp), then the Euler–Maclaurin formula from a point
//! `w >= max(12, s)`, where its Bernoulli terms fall by at least a factor of
//! four each. For `q < 0` (integer `s` only) the terms before the sum turns
//! positive are added directly, or for many of them folded into two more
//! zeta values (see `hurwitz_negative`).
//!
//! For odd `s` and negative `q` the terms change sign, and near the zeros
//! of the result the error is absolute rather than relative.

use super::gamma::{digamma, lgamma};

/// `B_2j` for j = 1..=15, exact fractions.
const BERNOULLI: [f64; 15] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
    -3617.0 / 510.0,
    43867.0 / 798.0,
    -174611.0 / 330.0,
    854513.0 / 138.0,
    -236364091.0 / 2730.0,
    8553103.0 / 6.0,
    -23749461029.0 / 870.0,
    8615841276005.0 / 14322.0,
];

/// `base^(-s) exp(log_scale)`. With no scale it is the plain power, which
/// `powf` gives to within an ulp for any sign of `base` and integer `s`.
fn scaled_power(base: f64, s: f64, log_scale: f64) -> f64 {
    if log_scale == 0.0 {
        base.powf(-s)
    } else {
        (log_scale - s * base.ln()).exp()
    }
}

/// `exp(log_scale) zeta(s, q)` for finite `s > 1` and finite `q > 0`.
///
/// The scale lets polygamma form `n! zeta(n + 1, x)` when `n!` overflows
/// or `zeta` underflows on its own.
fn hurwitz_positive(s: f64, q: f64, log_scale: f64) -> f64 {
    let w_min = s.max(12.0);
    let mut sum = 0.0;
    let mut k = 0.0;
    let (w, w_term) = loop {
        let a = q + k;
        let term = scaled_power(a, s, log_scale);
        if a >= w_min {
            break (a, term);
        }
        sum += term;
        // The terms after this one add at most the integral of t^(-s) from
        // a to infinity, term * a / (s - 1). (An infinite sum stays so; a
        // term that underflowed to zero is followed only by zeros.)
        if sum.is_infinite() || term * a <= 0.5 * f64::EPSILON * (s - 1.0) * sum {
            return sum;
        }
        k += 1.0;
    };
    // Euler–Maclaurin from w: w^(1-s)/(s-1) + w^(-s)/2
    //   + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1).
    sum += w_term * (w / (s - 1.0) + 0.5);
    // c = s (s+1) ... (s+2j-2) / ((2j)! w^(2j-1)), starting at j = 1.
    let mut c = s / (2.0 * w);
    for (j, &b) in BERNOULLI.iter().enumerate() {
        let term = w_term * b * c;
        sum += term;
        if term.abs() <= 0.25 * f64::EPSILON * sum.abs() {
            break;
        }
        let m = 2.0 * (j as f64 + 1.0);
        c *= (s + m - 1.0) * (s + m) / (w * w * (m + 1.0) * (m + 2.0));
    }
    sum
}

/// `zeta(s, q)` for negative non-integer finite `q` and integer `s >= 2`.
fn hurwitz_negative(s: f64, q: f64) -> f64 {
    // q + m is the first positive term's base; both it and the shifts of q
    // below are exact (integer shifts of q that stay below |q|).
    let m = (-q).ceil();
    let frac = q + m;
    if m <= 64.0 {
        let mut sum = 0.0;
        let mut k = 0.0;
        while k < m {
            sum += (q + k).powf(-s);
            k += 1.0;
        }
        return sum + hurwitz_positive(s, frac, 0.0);
    }
    // The negative bases q, ..., q + m - 1 have magnitudes g, g + 1, ...,
    // -q with g = -q - (m - 1), so their terms sum to
    // (-1)^s (zeta(s, g) - zeta(s, 1 - q)).
    let g = -q - (m - 1.0);
    let sign = if s % 2.0 == 0.0 { 1.0 } else { -1.0 };
    let negative_part = hurwitz_positive(s, g, 0.0) - hurwitz_positive(s, 1.0 - q, 0.0);
    hurwitz_positive(s, frac, 0.0) + sign * negative_part
}

/// The Hurwitz zeta function `zeta(s, q) = sum_{k>=0} (q + k)^(-s)`, with
/// torch.special.zeta's semantics for float64:
///
/// * `s == 1` gives `+inf` (whatever `q`), `s < 1` NaN;
/// * `q` zero, a negative integer or `-inf` gives `+inf`;
/// * other negative `q` need an integer `s` (else NaN);
/// * `q == +inf` gives NaN (torch's value; the limit would be 0);
/// * `s == +inf` gives `+inf` for `q < 1`, 1 at `q == 1`, and NaN for
///   `q > 1` (torch's value; the limit would be 0).
pub fn zeta(s: f64, q: f64) -> f64 {
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if s != s.floor() {
            // Also NaN s.
            return f64::NAN;
        }
        if s == f64::INFINITY {
            // Some base q + k lies strictly inside (-1, 1).
            return f64::INFINITY;
        }
        return hurwitz_negative(s, q);
    }
    if s.is_nan() || q.is_nan() || q == f64::INFINITY {
        return f64::NAN;
    }
    if s == f64::INFINITY {
        return if q < 1.0 {
            f64::INFINITY
        } else if q == 1.0 {
            1.0
        } else {
            f64::NAN
        };
    }
    hurwitz_positive(s, q, 0.0)
}

/// The polygamma function `psi^(n)(x)`, the n-th derivative of digamma
/// (`n == 0` is digamma itself).
///
/// Semantics as torch.special.polygamma for float64: NaN for NaN; at zero
/// and the negative integers `(-1)^(n+1) inf`; for `n == 1` 0 at `+inf`
/// and NaN at `-inf`; for `n >= 2` NaN at `+inf` and `(-1)^(n+1) inf` at
/// `-inf` (torch's values, from its zeta). Torch's trigamma returns large
/// finite numbers at the negative integers from rounding in `sin(pi x)`;
/// here every pole gives the infinity.
pub fn polygamma(n: u32, x: f64) -> f64 {
    if n == 0 {
        return digamma(x);
    }
    if x.is_nan() {
        return x;
    }
    let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
    if n == 1 {
        if x == f64::INFINITY {
            return 0.0;
        }
        if x == f64::NEG_INFINITY {
            return f64::NAN;
        }
    }
    if x <= 0.0 && x == x.floor() {
        return sign * f64::INFINITY;
    }
    if x == f64::INFINITY {
        return f64::NAN;
    }
    let s = f64::from(n) + 1.0;
    let z = if x > 0.0 {
        hurwitz_positive(s, x, 0.0)
    } else {
        hurwitz_negative(s, x)
    };
    // n! exactly up to 22!, then within n/2 ulps; infinite past 170!.
    let factorial = if n <= 170 {
        (2..=n).fold(1.0, |f, k| f * f64::from(k))
    } else {
        f64::INFINITY
    };
    let product = factorial * z;
    let fits = factorial.is_finite() && z >= f64::MIN_POSITIVE && product.is_finite();
    if fits || x < 0.0 {
        return sign * product;
    }
    // n! overflows, or zeta underflows: carry ln n! inside every term. The
    // exponents then carry absolute rounding errors of about ln(n!) ulps, so
    // here the relative error grows to roughly ln(n!) * 2e-16 (1.3e-13 at
    // n = 171).
    sign * hurwitz_positive(s, x, lgamma(s))
}

#[cfg(test)]
mod tests {
    use super::super::assert_close;
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.zeta(s, q) for q > 0; for
    // q < 0 the terms before q + k > 0 summed in mpmath, plus mp.zeta.
    const ZETA_REF: [(f64, f64, f64); 14] = [
        (2.0, 1.0, 1.6449340668482264),
        (1.0000001, 1.0, 10000000.571377),
        (1.5, 0.001, 31625.386966911912),
        (3.5, 7.25, 0.0033524741021978824),
        (2.0, 1e-300, f64::INFINITY),
        (20.0, 0.75, 315.3368689825316),
        (150.5, 2.0, 4.954338232951868e-46),
        (1e6, 1.5, 0.0),
        (1.01, 1e8, 83.17637711442583),
        (4.0, 123456.789, 1.7714915718386412e-16),
        (2.0, -1.5, 9.379246644989124),
        (3.0, -2.25, -61.94847488703008),
        (4.0, -100.3, 128.1701520634739),
        (7.0, -1000.7, 4560.468179817762),
    ];

    #[test]
    fn zeta_matches_mpmath() {
        for &(s, q, want) in &ZETA_REF {
            assert_close(zeta(s, q), want, 4e-15, (s, q));
        }
    }

    #[test]
    fn zeta_edge_cases_follow_torch() {
        let inf = f64::INFINITY;
        assert_eq!(zeta(1.0, 2.0), inf);
        assert_eq!(zeta(1.0, f64::NAN), inf);
        assert!(zeta(0.5, 1.0).is_nan());
        assert_eq!(zeta(2.0, 0.0), inf);
        assert_eq!(zeta(2.0, -3.0), inf);
        assert_eq!(zeta(2.5, f64::NEG_INFINITY), inf);
        assert!(zeta(2.5, -1.5).is_nan());
        assert!(zeta(2.0, inf).is_nan());
        assert!(zeta(f64::NAN, 1.0).is_nan());
        assert_eq!(zeta(f64::NAN, 0.0), inf);
        assert!(zeta(2.0, f64::NAN).is_nan());
        assert_eq!(zeta(inf, 0.5), inf);
        assert_eq!(zeta(inf, 1.0), 1.0);
        assert!(zeta(inf, 2.0).is_nan());
        assert_eq!(zeta(inf, -1.5), inf);
    }

    // mpmath at 30 digits, rounded to double: mp.polygamma(n, x) for x > 0;
    // for x < 0, (-1)^(n+1) n! times the zeta sum described above.
    const POLYGAMMA_REF: [(u32, f64, f64); 12] = [
        (1, 1.0, 1.6449340668482264),
        (1, 1e-8, 1.0000000000000002e16),
        (1, 37.5, 0.027025382266785015),
        (1, -0.5, 8.934802200544679),
        (2, 0.3, -75.27253658872604),
        (2, -2.7, -68.9329390232638),
        (3, 5.0, 0.021427828192755075),
        (5, 0.5, 7691.113548602436),
        (10, 100.0, -3.8135655355681386e-15),
        (30, 3.0, -4.294962738798298e17),
        (171, 3.0, 1.0688636146529578e227),
        (180, 200.0, -1.104768965621343e-87),
    ];

    #[test]
    fn polygamma_matches_mpmath() {
        for &(n, x, want) in &POLYGAMMA_REF {
            // Past n = 170 the scaled path's error is about ln(n!) ulps.
            let tol = if n > 170 { 4e-13 } else { 1e-14 };
            assert_close(polygamma(n, x), want, tol, (n, x));
        }
    }

    #[test]
    fn trigamma_recurrence_holds() {
        for i in 1..200 {
            let x = 0.031 + 0.211 * f64::from(i);
            let lhs = polygamma(1, x + 1.0);
            let rhs = polygamma(1, x) - 1.0 / (x * x);
            assert!((lhs - rhs).abs() <= 4e-15 * polygamma(1, x), "{x}");
        }
    }

    #[test]
    fn polygamma_edge_cases_follow_torch() {
        let inf = f64::INFINITY;
        assert!(polygamma(1, f64::NAN).is_nan());
        assert_eq!(polygamma(1, inf), 0.0);
        assert!(polygamma(1, -inf).is_nan());
        assert_eq!(polygamma(1, 0.0), inf);
        assert_eq!(polygamma(1, -1.0), inf);
        assert!(polygamma(2, inf).is_nan());
        assert_eq!(polygamma(2, -inf), -inf);
        assert_eq!(polygamma(2, -0.0), -inf);
        assert_eq!(polygamma(3, -4.0), inf);
        assert_eq!(polygamma(0, 1.0), digamma(1.0));
        assert_eq!(polygamma(u32::MAX, 0.5), inf);
    }
}
