//! Classical orthogonal polynomials with torch.special's semantics:
//! Chebyshev `T, U, V, W` (and the shifted forms on `[0, 1]`), Hermite `H`
//! (physicists') and `He` (probabilists'), Laguerre `L` and Legendre `P`.
//!
//! The degree arrives as a float64, read the way torch reads it: truncated
//! toward zero to an integer. A negative degree gives 0; so do NaN, the
//! infinities and degrees past the int64 range (torch's cast makes those
//! negative). A truncated degree of 0 gives 1, even for a NaN `x`; any
//! other degree gives NaN for a NaN `x` (torch 2.13 returns unrelated
//! numbers, such as 0 or 1, for some degrees above 6 there).
//!
//! Values come from the three-term recurrences. For the Chebyshev kinds with
//! `|x| < 1` and a degree above torch's threshold (6 for `T`, 8 for the
//! others) they come, as in torch, from the trigonometric forms, e.g.
//! `T_n(cos t) = cos(n t)`; `x = +-1` gives the closed values exactly.
//! Above degree 2^20 with `|x| > 1` the hyperbolic forms replace the
//! recurrence (which would take that many steps); where they overflow the
//! result is NaN, the value the recurrence reaches after overflowing.
//! Legendre and Laguerre inside their oscillating range still take `n`
//! steps, as in torch.
//!
//! Near a zero of a polynomial the error is absolute, relative to the size
//! of the terms of the recurrence, not to the value.

/// Degrees above this with `|x| > 1` use the hyperbolic closed forms.
const RECURRENCE_LIMIT: u64 = 1 << 20;

/// Degrees above this give NaN for Laguerre and for Legendre inside
/// `(-1, 1)`, whose recurrences would run for hours (torch runs them).
const LOOP_LIMIT: u64 = 1 << 32;

/// `2^63`.
const TWO_POW_63: f64 = 9.223_372_036_854_776e18;

/// The degree torch uses: `n` truncated to an integer, or `None` where the
/// polynomial is 0 (negative, NaN, infinite or beyond int64).
fn degree(n: f64) -> Option<u64> {
    if !n.is_finite() {
        return None;
    }
    let t = n.trunc();
    // From 2^63 on, torch's int64 cast of the degree is negative.
    if !(0.0..TWO_POW_63).contains(&t) {
        return None;
    }
    Some(t as u64)
}

/// `p_n` from `p_0`, `p_1` and the step `p_(k+1) = step(k, p_(k-1), p_k)`
/// for `k = 1, ..., n - 1`; stops early once the values are NaN (they stay
/// NaN), so overflowing recurrences end quickly.
fn recur(n: u64, p0: f64, p1: f64, step: impl Fn(f64, f64, f64) -> f64) -> f64 {
    if n == 0 {
        return p0;
    }
    let (mut p, mut q) = (p0, p1);
    let mut k = 1;
    while k < n {
        let r = step(k as f64, p, q);
        p = q;
        q = r;
        if q.is_nan() {
            break;
        }
        k += 1;
    }
    q
}

/// `acosh(a)` for `a > 1`, accurate near 1 (where `ln(a + sqrt(a^2 - 1))`
/// loses the digits of `a - 1`): `ln_1p(d + sqrt(d (d + 2)))`, `d = a - 1`.
fn acosh(a: f64) -> f64 {
    if a > 1e150 {
        return a.ln() + std::f64::consts::LN_2;
    }
    let d = a - 1.0;
    (d + (d * (d + 2.0)).sqrt()).ln_1p()
}

/// A hyperbolic closed form's value, or NaN where it overflowed.
fn finite_or_nan(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        f64::NAN
    }
}

/// `(-1)^n`.
fn parity(n: u64) -> f64 {
    if n.is_multiple_of(2) {
        1.0
    } else {
        -1.0
    }
}

/// Chebyshev polynomial of the first kind `T_n(x)`.
pub fn chebyshev_t(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    if x.abs() == 1.0 {
        return if x > 0.0 { 1.0 } else { parity(n) };
    }
    if n > 6 && x.abs() < 1.0 {
        return (n as f64 * x.acos()).cos();
    }
    if n > RECURRENCE_LIMIT && x.abs() > 1.0 {
        let t = acosh(x.abs());
        let sign = if x < 0.0 { parity(n) } else { 1.0 };
        return finite_or_nan(sign * (n as f64 * t).cosh());
    }
    recur(n, 1.0, x, |_, p, q| (x + x) * q - p)
}

/// Chebyshev polynomial of the second kind `U_n(x)`.
pub fn chebyshev_u(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    let m = n as f64;
    if x.abs() == 1.0 {
        return if x > 0.0 {
            m + 1.0
        } else {
            parity(n) * (m + 1.0)
        };
    }
    if n > 8 && x.abs() < 1.0 {
        let t = x.acos();
        return ((m + 1.0) * t).sin() / t.sin();
    }
    if n > RECURRENCE_LIMIT && x.abs() > 1.0 {
        let t = acosh(x.abs());
        let sign = if x < 0.0 { parity(n) } else { 1.0 };
        return finite_or_nan(sign * ((m + 1.0) * t).sinh() / t.sinh());
    }
    recur(n, 1.0, x + x, |_, p, q| (x + x) * q - p)
}

/// `cosh((n + 1/2) t) / cosh(t / 2)` and `sinh((n + 1/2) t) / sinh(t / 2)`
/// at `t = acosh(a)`, `a > 1`: `V_n(a)` and `W_n(a)`.
fn third_fourth_hyperbolic(a: f64, n: u64) -> (f64, f64) {
    let t = acosh(a);
    let k = n as f64 + 0.5;
    (
        (k * t).cosh() / (0.5 * t).cosh(),
        (k * t).sinh() / (0.5 * t).sinh(),
    )
}

/// Chebyshev polynomial of the third kind `V_n(x)`
/// (`V_n(cos t) = cos((n + 1/2) t) / cos(t / 2)`).
pub fn chebyshev_v(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    let m = n as f64;
    if x.abs() == 1.0 {
        return if x > 0.0 {
            1.0
        } else {
            parity(n) * (m + m + 1.0)
        };
    }
    if n > 8 && x.abs() < 1.0 {
        let t = x.acos();
        return ((m + 0.5) * t).cos() / (0.5 * t).cos();
    }
    if n > RECURRENCE_LIMIT && x.abs() > 1.0 {
        // V_n(-a) = (-1)^n W_n(a).
        let (v, w) = third_fourth_hyperbolic(x.abs(), n);
        return finite_or_nan(if x > 0.0 { v } else { parity(n) * w });
    }
    recur(n, 1.0, x + x - 1.0, |_, p, q| (x + x) * q - p)
}

/// Chebyshev polynomial of the fourth kind `W_n(x)`
/// (`W_n(cos t) = sin((n + 1/2) t) / sin(t / 2)`).
pub fn chebyshev_w(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    let m = n as f64;
    if x.abs() == 1.0 {
        return if x > 0.0 { m + m + 1.0 } else { parity(n) };
    }
    if n > 8 && x.abs() < 1.0 {
        let t = x.acos();
        return ((m + 0.5) * t).sin() / (0.5 * t).sin();
    }
    if n > RECURRENCE_LIMIT && x.abs() > 1.0 {
        // W_n(-a) = (-1)^n V_n(a).
        let (v, w) = third_fourth_hyperbolic(x.abs(), n);
        return finite_or_nan(if x > 0.0 { w } else { parity(n) * v });
    }
    recur(n, 1.0, x + x + 1.0, |_, p, q| (x + x) * q - p)
}

/// Shifted Chebyshev polynomial of the first kind, `T_n(2x - 1)`.
pub fn shifted_chebyshev_t(x: f64, n: f64) -> f64 {
    chebyshev_t(x + x - 1.0, n)
}

/// Shifted Chebyshev polynomial of the second kind, `U_n(2x - 1)`.
pub fn shifted_chebyshev_u(x: f64, n: f64) -> f64 {
    chebyshev_u(x + x - 1.0, n)
}

/// Shifted Chebyshev polynomial of the third kind, `V_n(2x - 1)`.
pub fn shifted_chebyshev_v(x: f64, n: f64) -> f64 {
    chebyshev_v(x + x - 1.0, n)
}

/// Shifted Chebyshev polynomial of the fourth kind, `W_n(2x - 1)`.
pub fn shifted_chebyshev_w(x: f64, n: f64) -> f64 {
    chebyshev_w(x + x - 1.0, n)
}

/// The physicists' Hermite polynomial `H_n(x)`
/// (`H_(k+1) = 2x H_k - 2k H_(k-1)`).
pub fn hermite_h(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    recur(n, 1.0, x + x, |k, p, q| (x + x) * q - (k + k) * p)
}

/// The probabilists' Hermite polynomial `He_n(x)`
/// (`He_(k+1) = x He_k - k He_(k-1)`).
pub fn hermite_he(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    recur(n, 1.0, x, |k, p, q| x * q - k * p)
}

/// The Laguerre polynomial `L_n(x)`
/// (`(k+1) L_(k+1) = (2k + 1 - x) L_k - k L_(k-1)`); 1 at `x = 0`.
pub fn laguerre_l(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    if x == 0.0 {
        return 1.0;
    }
    if n > LOOP_LIMIT {
        return f64::NAN;
    }
    recur(n, 1.0, 1.0 - x, |k, p, q| {
        ((k + k + (1.0 - x)) * q - k * p) / (k + 1.0)
    })
}

/// The Legendre polynomial `P_n(x)`
/// (`(k+1) P_(k+1) = (2k + 1) x P_k - k P_(k-1)`); `(+-1)^n` at `x = +-1`.
pub fn legendre_p(x: f64, n: f64) -> f64 {
    let Some(n) = degree(n) else { return 0.0 };
    if x.abs() == 1.0 {
        return if x > 0.0 { 1.0 } else { parity(n) };
    }
    if n > LOOP_LIMIT {
        return f64::NAN;
    }
    recur(n, 1.0, x, |k, p, q| {
        ((k + k + 1.0) * x * q - k * p) / (k + 1.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    type Poly = fn(f64, f64) -> f64;

    // mpmath at 30 digits, rounded to double: mp.chebyt, mp.chebyu,
    // mp.hermite, mp.laguerre(n, 0, x), mp.legendre; V_n = U_n - U_(n-1),
    // W_n = U_n + U_(n-1), He_n(x) = 2^(-n/2) H_n(x / sqrt 2), and the shifted
    // kinds at 2x - 1.
    const REF: [(Poly, f64, f64, f64); 25] = [
        (chebyshev_t, 0.3, 5.0, 0.99888),
        (chebyshev_t, 0.3, 20.0, 0.9821301310548921),
        (chebyshev_t, -1.7, 9.0, -12282.511058431997),
        (chebyshev_u, 0.45, 6.0, 1.110941),
        (chebyshev_u, 0.45, 31.0, -0.7807046534521584),
        (chebyshev_u, 2.5, 12.0, 153027601.0),
        (chebyshev_v, 0.2, 7.0, -0.8558976),
        (chebyshev_v, -0.6, 15.0, -2.174134037086208),
        (chebyshev_v, -1.3, 5.0, -82.72736000000002),
        (chebyshev_w, 0.2, 7.0, -1.1837056),
        (chebyshev_w, 0.8, 40.0, 2.5331546572256296),
        (chebyshev_w, 1.2, 6.0, 90.30521599999997),
        (shifted_chebyshev_t, 0.1, 9.0, -0.8815431680000001),
        (shifted_chebyshev_u, 0.9, 4.0, -0.1263999999999994),
        (shifted_chebyshev_v, 0.35, 12.0, -0.19955220070399904),
        (shifted_chebyshev_w, 1.5, 3.0, 71.0),
        (hermite_h, 1.3, 7.0, 1010.9230976),
        (hermite_h, -2.0, 10.0, 200416.0),
        (hermite_he, 1.3, 7.0, 22.488321700000007),
        (hermite_he, 3.5, 12.0, 180656.90063476562),
        (laguerre_l, 0.7, 5.0, -0.5730464166666667),
        (laguerre_l, 12.5, 20.0, 39.780604993739495),
        (legendre_p, 0.33, 11.0, 0.16134908526639322),
        (legendre_p, -0.9, 50.0, -0.1700376599438368),
        (legendre_p, 3.0, 6.0, 8989.0),
    ];

    #[test]
    fn polynomials_match_mpmath() {
        for &(f, x, n, want) in &REF {
            let got = f(x, n);
            // Relative to the terms of order one that the recurrences and
            // trigonometric forms combine.
            assert!(
                (got - want).abs() <= 1e-14 * want.abs().max(1.0),
                "{x} {n}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn degree_is_read_like_torch() {
        let all: [Poly; 12] = [
            chebyshev_t,
            chebyshev_u,
            chebyshev_v,
            chebyshev_w,
            shifted_chebyshev_t,
            shifted_chebyshev_u,
            shifted_chebyshev_v,
            shifted_chebyshev_w,
            hermite_h,
            hermite_he,
            laguerre_l,
            legendre_p,
        ];
        for f in all {
            for n in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e19] {
                assert_eq!(f(0.3, n), 0.0, "{n}");
            }
            // Degree 0 (also -0.5 truncated) is 1 whatever x.
            assert_eq!(f(f64::NAN, 0.0), 1.0);
            assert_eq!(f(7.0, -0.5), 1.0);
            assert!(f(f64::NAN, 3.0).is_nan());
            assert!(f(f64::NAN, 12.0).is_nan());
            // 2.7 reads as 2.
            assert_eq!(f(0.3, 2.7), f(0.3, 2.0));
        }
    }

    #[test]
    fn endpoint_values_follow_torch() {
        assert_eq!(chebyshev_t(-1.0, 7.0), -1.0);
        assert_eq!(chebyshev_u(-1.0, 7.0), -8.0);
        assert_eq!(chebyshev_u(1.0, 7.0), 8.0);
        assert_eq!(chebyshev_v(1.0, 7.0), 1.0);
        assert_eq!(chebyshev_v(-1.0, 7.0), -15.0);
        assert_eq!(chebyshev_w(1.0, 7.0), 15.0);
        assert_eq!(chebyshev_w(-1.0, 7.0), -1.0);
        assert_eq!(shifted_chebyshev_t(0.0, 3.0), -1.0);
        assert_eq!(legendre_p(-1.0, 3.0), -1.0);
        assert_eq!(laguerre_l(0.0, 5.0), 1.0);
        // The recurrences' infinities: T_3(inf) = 4 inf^3 - 3 inf is NaN.
        assert_eq!(chebyshev_t(f64::INFINITY, 2.0), f64::INFINITY);
        assert!(chebyshev_t(f64::INFINITY, 3.0).is_nan());
        // Overflow ends in NaN, as torch's recurrence does.
        assert!(hermite_h(0.3, 300.0).is_nan());
        assert!(chebyshev_t(2.0, 1e4).is_nan());
        assert!(chebyshev_t(2.0, 1e7).is_nan());
    }

    #[test]
    fn trigonometric_and_hyperbolic_forms_agree_with_the_recurrences() {
        // Across torch's switch from the recurrence to cos(n acos x).
        let x = 0.61;
        let t6 = chebyshev_t(x, 6.0);
        let t7 = chebyshev_t(x, 7.0);
        let t8 = chebyshev_t(x, 8.0);
        assert!((t8 - (2.0 * x * t7 - t6)).abs() <= 1e-15);
        let (u7, u8, u9) = (
            chebyshev_u(x, 7.0),
            chebyshev_u(x, 8.0),
            chebyshev_u(x, 9.0),
        );
        assert!((u9 - (2.0 * x * u8 - u7)).abs() <= 1e-14);
        // Past 2^20 with |x| > 1 the closed forms take over (where a
        // recurrence of a million steps near x = 1 would have lost about
        // seven digits). mpmath at 40 digits: mp.cosh(n t),
        // mp.sinh((n+1) t) / mp.sinh(t) and -+mp.sinh((n+1/2) t) / mp.sinh(t/2)
        // with t = mp.acosh(x).
        let n = f64::from(1u32 << 20) + 1.0;
        let x = 1.000000000001;
        let cases: [(Poly, f64, f64); 4] = [
            (chebyshev_t, x, 2.316503515531103),
            (chebyshev_u, x, 1477466.4303274702),
            (chebyshev_v, -x, -2954930.5441499474),
            (chebyshev_w, x, 2954930.5441499474),
        ];
        for (f, x, want) in cases {
            let got = f(x, n);
            assert!(
                (got - want).abs() <= 1e-12 * want.abs(),
                "{got:e} vs {want:e}"
            );
        }
    }
}
