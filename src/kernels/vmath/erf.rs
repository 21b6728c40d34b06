//! The error function and its complement.
//!
//! Near zero, `erf x = 2/sqrt(pi) x (1 - x^2/3 + x^4/10 - ...)`, its
//! Taylor series (alternating, but below `|x| = 1` every term is smaller
//! than the sum). Further out both come from the tail
//! `erfc x = e^(-x^2) t H(t)` with `t = 2 / (2 + x)`, where `H` is smooth
//! and bounded on `t` in (0, 0.82]: `H` is a polynomial fitted to the
//! function (Chebyshev interpolation computed once in high precision),
//! the one fitted rather than series-derived polynomial among these
//! kernels. `x^2` is carried exactly into `e^(-x^2)`'s reduction so the
//! tail keeps its relative accuracy down to the subnormals (erfc(26) is
//! about 6e-296). `erfc` near zero is `1 - erf`, with erf's rounding
//! error carried into the subtraction.

use super::exp::{clamp, exp_coefs, reduce_ln2};
use super::{horner, ldexp, two_prod, unary, Real, Unary};

/// `2/sqrt(pi)` as (rounded, rest).
const TWO_OVER_SQRT_PI: (f64, f64) = (std::f64::consts::FRAC_2_SQRT_PI, 1.533_545_961_316_588e-17);

/// `(-1)^n / (n! (2n+1))` for n = 18 down to 1: `erf x = 2/sqrt(pi) x (1 + z E(z))`,
/// `z = x^2`; the next term is below 0.05 ulp at `|x| = 1`. float32 uses
/// the last 12.
const ERF_SERIES: [f64; 18] = [
    1.0 / (6_402_373_705_728_000.0 * 37.0),
    -1.0 / (355_687_428_096_000.0 * 35.0),
    1.0 / (20_922_789_888_000.0 * 33.0),
    -1.0 / (1_307_674_368_000.0 * 31.0),
    1.0 / (87_178_291_200.0 * 29.0),
    -1.0 / (6_227_020_800.0 * 27.0),
    1.0 / (479_001_600.0 * 25.0),
    -1.0 / (39_916_800.0 * 23.0),
    1.0 / (3_628_800.0 * 21.0),
    -1.0 / (362_880.0 * 19.0),
    1.0 / (40_320.0 * 17.0),
    -1.0 / (5_040.0 * 15.0),
    1.0 / (720.0 * 13.0),
    -1.0 / (120.0 * 11.0),
    1.0 / (24.0 * 9.0),
    -1.0 / (6.0 * 7.0),
    1.0 / (2.0 * 5.0),
    -1.0 / 3.0,
];

/// Where `H` is expanded: `H(t) = H0 + d Q(d)`, `d = t - T_MID`.
const T_MID: f64 = 0.4375;

/// `H0` as (rounded, rest).
const H0: (f64, f64) = (0.469_989_076_178_519_65, -1.711_416_975_217_753_5e-17);

/// `Q`, highest degree first: degree 23 (float64, within 0.35 ulp of `H`
/// on [0.0625, 0.8125] before rounding) ...
const H_Q: [f64; 24] = [
    0.058690016783234246,
    0.13700138114518298,
    -0.19994860733319111,
    -0.09688158358596777,
    0.23499088270239887,
    -0.05413236325640864,
    -0.13262766910703885,
    0.1301169194812214,
    0.003983769858626082,
    -0.10602227119058895,
    0.0730852770716492,
    0.04139579835630774,
    -0.09300273604836898,
    0.01778809433769502,
    0.08200411684414464,
    -0.059438414379617784,
    -0.0659295945338808,
    0.09248347144641891,
    0.06660227550381201,
    -0.13523362865560845,
    -0.1344410026612351,
    0.18429092394589072,
    0.5278537790010512,
    0.6191604927113871,
];

/// ... and degree 11 (float32, within 5e-11).
const H_Q_SHORT: [f64; 12] = [
    -0.061773247088749254,
    0.026446127426428254,
    0.07669669579067233,
    -0.06046055202596647,
    -0.06549016955474295,
    0.09255156362146234,
    0.0665844509632215,
    -0.13523604254352056,
    -0.1344406912725806,
    0.1842909629283822,
    0.527853777441084,
    0.6191604925224495,
];

/// `erf x` for `|x| <= 1` as an unevaluated pair (rounded, correction).
#[inline(always)]
fn erf_near<T: Real>(x: T) -> (T, T) {
    let cs: &[f64] = if T::LONG {
        &ERF_SERIES
    } else {
        &ERF_SERIES[6..]
    };
    let z = x * x;
    let s = z * horner(z, cs);
    let (ch, cl) = (T::c(TWO_OVER_SQRT_PI.0), T::c(TWO_OVER_SQRT_PI.1));
    if T::LONG {
        let (p, pl) = two_prod(x, ch);
        (p, pl + x * (cl + ch * s))
    } else {
        (x * ch * (T::c(1.0) + s), T::c(0.0))
    }
}

/// `erfc a` for `a >= 0.47` (accurate there; finite for any `a >= 0`).
#[inline(always)]
fn erfc_tail<T: Real>(a: T) -> T {
    // Past 27.5 erfc is below float64's subnormals.
    let a = clamp(a, 0.0, 27.5);
    // e^(-a^2) = 2^n e^r with a^2 = p + pl exactly.
    let (p, pl) = if T::LONG {
        two_prod(a, a)
    } else {
        (a * a, T::c(0.0))
    };
    let (n, r) = reduce_ln2(-p);
    let e = horner(r - pl, exp_coefs::<T>());
    // t = 2 / (2 + a) and its rounding error tl.
    let two = T::c(2.0);
    let s = two + a;
    let sl = T::pick(a < two, (two - s) + a, (a - s) + two);
    let t = two / s;
    let tl = if T::LONG {
        let (m, ml) = two_prod(t, s);
        (((two - m) - ml) - t * sl) / s
    } else {
        T::c(0.0)
    };
    let d = (t - T::c(T_MID)) + tl;
    let h = if T::LONG {
        T::c(H0.0) + (T::c(H0.1) + d * horner(d, &H_Q))
    } else {
        T::c(H0.0) + d * horner(d, &H_Q_SHORT)
    };
    ldexp(e * (t * h + tl * h), n)
}

#[inline(always)]
fn erf_any<T: Real>(x: T) -> T {
    let a = x.abs();
    let (eh, el) = erf_near(clamp(a, 0.0, 1.0));
    let r = T::pick(a <= T::c(1.0), eh + el, T::c(1.0) - erfc_tail(a));
    T::pick(x.nan(), x, r.with_sign_of(x))
}

#[inline(always)]
fn erfc_any<T: Real>(x: T) -> T {
    let one = T::c(1.0);
    let a = x.abs();
    let tail = erfc_tail(a);
    // 1 - erf x near zero: s + e is 1 - eh exactly.
    let (eh, el) = erf_near(clamp(x, -1.0, 1.0));
    let s = one - eh;
    let e = (one - s) - eh;
    let near = s + (e - el);
    let r = T::pick(x < T::c(-1.0), T::c(2.0) - tail, tail);
    let r = T::pick(x >= T::c(-1.0) && x <= T::c(0.47), near, r);
    T::pick(x.nan(), x, r)
}

/// The error function.
pub(crate) struct Erf;

/// The complementary error function `1 - erf(x)`.
pub(crate) struct Erfc;

unary!(Erf => erf_any, f32 via f64);
unary!(Erfc => erfc_any, f32 via f64);

/// The error function of a float64 (the `Erf` kernel's element body).
pub fn erf(x: f64) -> f64 {
    <Erf as Unary<f64>>::eval(x)
}

/// The complementary error function `1 - erf(x)`, accurate in the tail.
pub fn erfc(x: f64) -> f64 {
    <Erfc as Unary<f64>>::eval(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        // erf(1), erf(0.5), erf(3) to 16 digits (Abramowitz & Stegun table 7.1).
        assert!((erf(1.0) - 0.842_700_792_949_714_9).abs() < 1e-15);
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
        assert!((erf(-3.0) + 0.999_977_909_503_001_4).abs() < 1e-15);
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(f64::INFINITY), 1.0);
        // erfc(5) = 1.5374597944280349e-12.
        assert!((erfc(5.0) / 1.537_459_794_428_035e-12 - 1.0).abs() < 1e-12);
    }
}
