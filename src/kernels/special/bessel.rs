//! Bessel functions of the first and second kind of orders 0 and 1
//! (`j0`, `j1`, `y0`, `y1`) and the spherical `j0(x) = sin(x) / x`.
//!
//! Three regimes, each from the mathematics:
//!
//! * `x <= 2`: the power series (for `Y` the logarithmic ones,
//!   DLMF 10.8.1, with harmonic numbers);
//! * `2 < x < 20`: Miller's backward recurrence
//!   `J_(n-1) = (2n / x) J_n - J_(n+1)` from a depth of `1.3 x + 30`,
//!   normalised by `J_0 + 2 sum_k J_2k = 1`; the same pass accumulates
//!   Neumann's series for the second kind,
//!   `Y_0 = 2/pi ((ln(x/2) + gamma) J_0 - 2 sum_k (-1)^k J_2k / k)` and
//!   `Y_1 = 2/pi ((ln(x/2) + gamma - 1) J_1 - J_0 / x
//!          - sum_m (-1)^m (2m+1) / (m(m+1)) J_(2m+1))`;
//! * `x >= 20`: Hankel's asymptotic expansion, whose smallest term there is
//!   below `exp(-2x) < 1e-17`.
//!
//! Near the zeros of each function the value is a difference of terms of
//! order one, so there the error is absolute (a few 1e-16), not relative.

use std::f64::consts::{FRAC_1_SQRT_2, FRAC_2_PI, LN_2, PI};

/// Euler's constant gamma.
const EULER: f64 = 0.577_215_664_901_532_9;

/// `ln(x / 2)`, also where `x / 2` would round to zero (subnormal `x`).
pub fn ln_half(x: f64) -> f64 {
    if x > 1e-300 {
        (0.5 * x).ln()
    } else {
        x.ln() - LN_2
    }
}

/// The four functions at one point: `(J0, J1, Y0, Y1)`.
struct Orders01 {
    j0: f64,
    j1: f64,
    y0: f64,
    y1: f64,
}

/// Power series for `0 < x <= 2`.
fn series(x: f64) -> Orders01 {
    let q = -0.25 * x * x;
    let log_term = ln_half(x) + EULER;
    // t0 = q^k / (k!)^2 and t1 = q^k / (k! (k+1)!) for k = 0, 1, ...
    let (mut t0, mut t1): (f64, f64) = (1.0, 1.0);
    let (mut j0, mut j1): (f64, f64) = (1.0, 1.0);
    // Y0 carries sum_k H_k t0 (the k = 0 term is zero); Y1 carries
    // sum_k (H_k + H_(k+1)) t1, with H_0 = 0 and H_1 = 1.
    let (mut y0_sum, mut y1_sum) = (0.0, 1.0);
    let mut harmonic = 0.0;
    let mut k = 0.0;
    while t0.abs() > 1e-18 * j0.abs() || t1.abs() > 1e-18 {
        k += 1.0;
        t0 *= q / (k * k);
        t1 *= q / (k * (k + 1.0));
        harmonic += 1.0 / k;
        j0 += t0;
        j1 += t1;
        y0_sum += harmonic * t0;
        y1_sum += (2.0 * harmonic + 1.0 / (k + 1.0)) * t1;
    }
    let j1 = 0.5 * x * j1;
    // Y0 = 2/pi ((ln(x/2) + gamma) J0 - sum_k H_k (-x^2/4)^k / (k!)^2)
    let y0 = FRAC_2_PI * (log_term * j0 - y0_sum);
    // Y1 = -2/(pi x) + 2/pi ln(x/2) J1
    //      - x/(2 pi) sum_k (psi(k+1) + psi(k+2)) (-x^2/4)^k / (k! (k+1)!),
    // with psi(k+1) + psi(k+2) = H_k + H_(k+1) - 2 gamma.
    let y1 = -FRAC_2_PI / x + FRAC_2_PI * ln_half(x) * j1
        - 0.5 * x / PI * (y1_sum - 2.0 * EULER * (2.0 * j1 / x));
    Orders01 { j0, j1, y0, y1 }
}

/// Miller's backward recurrence with Neumann's series, for `2 < x < 20`.
fn miller(x: f64) -> Orders01 {
    let depth = 2.0 * ((0.65 * x + 15.0).ceil());
    // f_n, proportional to J_n; below, "next" is f_(n+1).
    let mut next = 0.0;
    let mut f = 1e-280;
    let mut n = depth;
    // Running sums over the f_n seen so far (n >= 1): the normalisation
    // sum_k f_2k, Neumann's sum_k (-1)^k f_2k / k for Y0 and
    // sum_m (-1)^m (2m+1) / (m(m+1)) f_(2m+1) for Y1.
    let mut norm = 0.0;
    let mut y0_sum = 0.0;
    let mut y1_sum = 0.0;
    let mut f1 = 0.0;
    while n > 0.0 {
        // Step from f_n to f_(n-1).
        let prev = (2.0 * n / x) * f - next;
        next = f;
        f = prev;
        n -= 1.0;
        if n >= 1.0 {
            let sign = if n % 4.0 < 2.0 { 1.0 } else { -1.0 };
            if n % 2.0 == 0.0 {
                let k = 0.5 * n;
                norm += f;
                y0_sum += sign * f / k;
            } else if n >= 3.0 {
                let m = 0.5 * (n - 1.0);
                // (-1)^m with m = (n-1)/2: + for n = 1 (mod 4).
                y1_sum += sign * (2.0 * m + 1.0) / (m * (m + 1.0)) * f;
            }
            if n == 1.0 {
                f1 = f;
            }
        }
        if f.abs() > 1e250 {
            // Rescale everything together; ratios are all that matter.
            let s = 1e-250;
            f *= s;
            next *= s;
            norm *= s;
            y0_sum *= s;
            y1_sum *= s;
            f1 *= s;
        }
    }
    // (-1)^k for n = 2k is + when n = 0 (mod 4); sign above used n mod 4 < 2,
    // which is + for n = 0, 1 (mod 4) and - for n = 2, 3: right for both sums.
    let scale = 1.0 / (f + 2.0 * norm);
    let j0 = f * scale;
    let j1 = f1 * scale;
    let log_term = ln_half(x) + EULER;
    let y0 = FRAC_2_PI * (log_term * j0 - 2.0 * y0_sum * scale);
    let y1 = FRAC_2_PI * ((log_term - 1.0) * j1 - j0 / x - y1_sum * scale);
    Orders01 { j0, j1, y0, y1 }
}

/// Hankel's `P_nu(x)` and `Q_nu(x)` for `nu^2 = mu / 4`, `x >= 20`.
fn hankel_pq(mu: f64, x: f64) -> (f64, f64) {
    // t_k = a_k(nu) / x^k with a_k = prod_{j<=k} (mu - (2j-1)^2) / (k! 8^k);
    // P = t_0 - t_2 + t_4 - ..., Q = t_1 - t_3 + ...
    let (mut p, mut q) = (1.0, 0.0);
    let mut t: f64 = 1.0;
    let mut k = 0.0;
    loop {
        let odd = 2.0 * k + 1.0;
        let t_next = t * (mu - odd * odd) / (8.0 * (k + 1.0) * x);
        if t_next.abs() >= t.abs() || t_next.abs() < 1e-18 {
            break;
        }
        t = t_next;
        k += 1.0;
        let sign = if k % 4.0 < 2.0 { 1.0 } else { -1.0 };
        if k % 2.0 == 0.0 {
            p += sign * t;
        } else {
            q += sign * t;
        }
    }
    (p, q)
}

/// Hankel's expansion for order 0 or 1 at `x >= 20`: `(J, Y)`.
fn hankel(order: u8, x: f64) -> (f64, f64) {
    let mu = if order == 0 { 0.0 } else { 4.0 };
    let (p, q) = hankel_pq(mu, x);
    let (s, c) = x.sin_cos();
    // chi = x - pi/4 (order 0) or x - 3 pi/4 (order 1), expanded so that
    // only the exactly reduced sin x and cos x appear.
    let (cos_chi, sin_chi) = if order == 0 {
        (FRAC_1_SQRT_2 * (c + s), FRAC_1_SQRT_2 * (s - c))
    } else {
        (FRAC_1_SQRT_2 * (s - c), -FRAC_1_SQRT_2 * (s + c))
    };
    let amp = (FRAC_2_PI / x).sqrt();
    (
        amp * (p * cos_chi - q * sin_chi),
        amp * (p * sin_chi + q * cos_chi),
    )
}

/// All four at `x > 0`, through the regime that suits `x`.
fn orders01(x: f64) -> Orders01 {
    if x <= 2.0 {
        series(x)
    } else if x < 20.0 {
        miller(x)
    } else {
        let (j0, y0) = hankel(0, x);
        let (j1, y1) = hankel(1, x);
        Orders01 { j0, j1, y0, y1 }
    }
}

/// The Bessel function of the first kind of order 0.
///
/// Even; 1 at 0; NaN at `+-inf` and NaN, as torch.special.bessel_j0.
pub fn j0(x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::NAN;
    }
    if a == 0.0 {
        return 1.0;
    }
    if a >= 20.0 {
        return hankel(0, a).0;
    }
    orders01(a).j0
}

/// The Bessel function of the first kind of order 1.
///
/// Odd (so `-0.0` at `-0.0`); NaN at `+-inf` and NaN, as
/// torch.special.bessel_j1.
pub fn j1(x: f64) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::NAN;
    }
    if a == 0.0 {
        return x;
    }
    let v = if a >= 20.0 {
        hankel(1, a).0
    } else {
        orders01(a).j1
    };
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// The Bessel function of the second kind of order 0.
///
/// `-inf` at `+-0`, NaN for negative `x`, `+inf` and NaN, as
/// torch.special.bessel_y0.
pub fn y0(x: f64) -> f64 {
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_nan() || x < 0.0 || x.is_infinite() {
        return f64::NAN;
    }
    if x >= 20.0 {
        return hankel(0, x).1;
    }
    orders01(x).y0
}

/// The Bessel function of the second kind of order 1.
///
/// `-inf` at `+-0` (and where `-2/(pi x)` overflows), NaN for negative `x`,
/// `+inf` and NaN, as torch.special.bessel_y1.
pub fn y1(x: f64) -> f64 {
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_nan() || x < 0.0 || x.is_infinite() {
        return f64::NAN;
    }
    if x >= 20.0 {
        return hankel(1, x).1;
    }
    if x < 1e-300 {
        // Y1 ~ -2 / (pi x), which may overflow.
        return -FRAC_2_PI / x;
    }
    orders01(x).y1
}

/// The spherical Bessel function of the first kind of order 0,
/// `sin(x) / x`, with its limit 1 at 0 and 0 at `+-inf` (as torch).
pub fn spherical_bessel_j0(x: f64) -> f64 {
    if x.is_infinite() {
        return 0.0;
    }
    if x.abs() < 1e-4 {
        // sin(x)/x = 1 - x^2/6 + x^4/120 - ...; the next term is below 1e-28.
        let x2 = x * x;
        return 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0);
    }
    x.sin() / x
}

#[cfg(test)]
mod tests {
    use super::*;

    // mpmath at 30 digits, rounded to double: mp.besselj(0, x),
    // mp.besselj(1, x), mp.bessely(0, x), mp.bessely(1, x).
    const REF: [(f64, f64, f64, f64, f64); 10] = [
        (1e-10, 1.0, 5e-11, -14.732516272697241, -6366197723.675814),
        (
            0.5,
            0.9384698072408129,
            0.2422684576748739,
            -0.44451873350670656,
            -1.471472392670243,
        ),
        (
            1.9,
            0.28181855937438555,
            0.5811570727134341,
            0.4968199712838202,
            -0.1644057723315953,
        ),
        (
            2.1,
            0.16660698033199028,
            0.5682921357570386,
            0.5182937375137607,
            -0.05167861213042353,
        ),
        (
            7.3,
            0.2882169476350144,
            0.08257043049325784,
            0.0627738863740376,
            -0.2845943718680721,
        ),
        (
            19.9,
            0.17287775639261846,
            0.05011742480737974,
            0.04576209415938548,
            -0.17178303121049257,
        ),
        (
            20.1,
            0.15953606793729708,
            0.08280100576020977,
            0.0788105924287503,
            -0.15762598074781153,
        ),
        (
            55.5,
            -0.028104074301152394,
            -0.10360300589593363,
            -0.10334564480672326,
            0.0271742478592964,
        ),
        (
            1e4,
            -0.0070961603533888015,
            0.0036474507555295803,
            0.0036478055589866058,
            0.007096342752536495,
        ),
        (
            1e15,
            6.156638646885021e-09,
            2.4468665123771328e-08,
            2.4468665123771324e-08,
            -6.15663864688501e-09,
        ),
    ];

    /// The error measured against the envelope `min(1, sqrt(2 / (pi x)))`:
    /// relative where the function is at its envelope, absolute near zeros.
    fn envelope_error(got: f64, want: f64, x: f64) -> f64 {
        let envelope = (FRAC_2_PI / x).sqrt().min(1.0);
        (got - want).abs() / envelope.max(want.abs())
    }

    #[test]
    fn bessel_matches_mpmath() {
        for &(x, want_j0, want_j1, want_y0, want_y1) in &REF {
            for (got, want) in [
                (j0(x), want_j0),
                (j1(x), want_j1),
                (y0(x), want_y0),
                (y1(x), want_y1),
            ] {
                assert!(
                    envelope_error(got, want, x) <= 2e-15,
                    "x = {x}: {got:e} vs {want:e}"
                );
            }
        }
    }

    #[test]
    fn wronskian_holds() {
        // J1(x) Y0(x) - J0(x) Y1(x) = 2 / (pi x)
        for i in 1..600 {
            let x = 0.05 * f64::from(i) + 0.0123;
            let w = j1(x) * y0(x) - j0(x) * y1(x);
            let want = FRAC_2_PI / x;
            assert!((w - want).abs() <= 3e-15 * want.max(1.0), "{x}");
        }
    }

    #[test]
    fn symmetry_and_edge_cases_follow_torch() {
        assert_eq!(j0(-3.3), j0(3.3));
        assert_eq!(j1(-3.3), -j1(3.3));
        assert!(j1(-0.0) == 0.0 && j1(-0.0).is_sign_negative());
        assert_eq!(j0(0.0), 1.0);
        for f in [j0, j1, y0, y1] {
            assert!(f(f64::NAN).is_nan());
            assert!(f(f64::INFINITY).is_nan());
            assert!(f(f64::NEG_INFINITY).is_nan());
        }
        for f in [y0, y1] {
            assert_eq!(f(0.0), f64::NEG_INFINITY);
            assert_eq!(f(-0.0), f64::NEG_INFINITY);
            assert!(f(-1.0).is_nan());
        }
        assert_eq!(y1(5e-324), f64::NEG_INFINITY);
        // mpmath at 30 digits: mp.bessely(0, mp.mpf(5e-324)) = -473.999073423004...
        let y = y0(5e-324);
        assert!((y + 473.999073423004).abs() < 1e-12, "{y}");
    }

    #[test]
    fn spherical_j0_is_sinc() {
        assert_eq!(spherical_bessel_j0(0.0), 1.0);
        assert_eq!(spherical_bessel_j0(f64::INFINITY), 0.0);
        assert_eq!(spherical_bessel_j0(f64::NEG_INFINITY), 0.0);
        assert!(spherical_bessel_j0(f64::NAN).is_nan());
        // mpmath at 30 digits: mp.sin(x) / x.
        let cases = [
            (1e-5, 0.9999999999833333),
            (-0.3, 0.9850673555377986),
            (PI, 3.8981718325193755e-17),
            (100.0, -0.005063656411097588),
        ];
        for (x, want) in cases {
            let got = spherical_bessel_j0(x);
            assert!(
                (got - want).abs() <= 2.3e-16 * want.abs(),
                "{x}: {got:e} vs {want:e}"
            );
        }
    }
}
