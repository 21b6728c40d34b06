//! The exponential family: `exp`, `exp2`, `expm1`, `sigmoid`, `tanh`,
//! `sinh`, `cosh`.
//!
//! All of them reduce `x = n ln2 + r` with `n` an integer and
//! `|r| <= ln2 / 2` (the product `n ln2` subtracted in two parts, the first
//! with few enough bits that `n * LN2_HI` is exact), take `e^r` or
//! `e^r - 1` from a Taylor polynomial and scale by `2^n` through the bits.

use super::lanes::{lanes_f32, poly, Lanes, NAN_STAYS};
use super::{horner, ldexp, pow2i, unary, Real};

/// `1/k!` for k = 17 down to 0: `e^r`'s Taylor coefficients, highest first.
pub(super) const INV_FACT: [f64; 18] = [
    2.811_457_254_345_520_6e-15,
    4.779_477_332_387_385e-14,
    7.647_163_731_819_816e-13,
    1.147_074_559_772_972_5e-11,
    1.605_904_383_682_161_3e-10,
    2.087_675_698_786_81e-9,
    2.505_210_838_544_172e-8,
    2.755_731_922_398_589e-7,
    2.755_731_922_398_589_3e-6,
    2.480_158_730_158_73e-5,
    1.984_126_984_126_984e-4,
    1.388_888_888_888_889e-3,
    8.333_333_333_333_333e-3,
    4.166_666_666_666_666_4e-2,
    1.666_666_666_666_666_6e-1,
    0.5,
    1.0,
    1.0,
];

/// The Taylor coefficients of `e^r` (highest first) for `|r| <= 0.35`:
/// degree 7 for float32, 13 for float64.
#[inline(always)]
pub(super) fn exp_coefs<T: Real>() -> &'static [f64] {
    if T::LONG {
        &INV_FACT[INV_FACT.len() - 14..]
    } else {
        &INV_FACT[INV_FACT.len() - 8..]
    }
}

/// Splits a finite `x` as `n ln2 + r`: returns `(n, r)`.
#[inline(always)]
pub(super) fn reduce_ln2<T: Real>(x: T) -> (T, T) {
    let n = (x * T::c(std::f64::consts::LOG2_E)).rint();
    // LN2_HI has few enough bits that n * LN2_HI is exact for |n| < 2^11;
    // LN2_LO is the rest of ln 2 to full precision.
    let (hi, lo) = if T::WIDE {
        (6.931_471_803_691_238e-1, 1.908_214_929_270_587_7e-10)
    } else {
        (0.693_115_234_375, 3.194_618_3e-5)
    };
    (n, (x - n * T::c(hi)) - n * T::c(lo))
}

/// `e^x = p 2^n` for `x` already clamped to the finite range: `(p, n)`.
#[inline(always)]
fn exp_parts<T: Real>(x: T) -> (T, T) {
    let (n, r) = reduce_ln2(x);
    (horner(r, exp_coefs::<T>()), n)
}

/// `e^r - 1` for `|r| <= ln 2`, accurate near zero:
/// `r + r^2 (1/2 + r/6 + ...)` to degree 10 (float32) or 17 (float64).
#[inline(always)]
fn expm1_poly<T: Real>(r: T) -> T {
    let cs = if T::LONG {
        &INV_FACT[..]
    } else {
        &INV_FACT[INV_FACT.len() - 11..]
    };
    r + r * r * horner(r, &cs[..cs.len() - 2])
}

/// Clamps `x` to `[lo, hi]` (NaN becomes `lo`; callers select NaN back).
#[inline(always)]
pub(super) fn clamp<T: Real>(x: T, lo: f64, hi: f64) -> T {
    let x = T::pick(x < T::c(lo), T::c(lo), x);
    T::pick(x > T::c(hi), T::c(hi), x)
}

/// Inputs past which `e^x` is infinite or zero in each format, widened a
/// little so the clamped value still overflows or underflows.
#[inline(always)]
fn exp_range<T: Real>() -> (f64, f64) {
    if T::WIDE {
        (-746.0, 710.0)
    } else {
        (-104.0, 89.0)
    }
}

/// `e^x` for any `x`.
#[inline(always)]
pub(super) fn exp<T: Real>(x: T) -> T {
    let (lo, hi) = exp_range::<T>();
    let (p, n) = exp_parts(clamp(x, lo, hi));
    T::pick(x.nan(), x, ldexp(p, n))
}

/// `e^a / 2` for `a >= 0`, finite until `e^a / 2` itself overflows.
#[inline(always)]
fn half_exp<T: Real>(a: T) -> T {
    let hi = if T::WIDE { 711.0 } else { 90.0 };
    let (p, n) = exp_parts(clamp(a, 0.0, hi));
    ldexp(p, n - T::c(1.0))
}

/// `e^x - 1` for `x` that is not NaN.
#[inline(always)]
fn expm1<T: Real>(x: T) -> T {
    let (_, hi) = exp_range::<T>();
    // Below -60, e^x - 1 rounds to -1 in both formats.
    let (n, r) = reduce_ln2(clamp(x, -60.0, hi));
    // Within ln 2 of zero there is no reduction (r = x exactly), so no
    // step below cancels.
    let near = x.abs() < T::c(std::f64::consts::LN_2);
    let (n, r) = (T::pick(near, T::c(0.0), n), T::pick(near, x, r));
    let q = expm1_poly(r);
    // 2^n q + (2^n - 1): exact scaling and one rounding for moderate n;
    // for large n the -1 is below the result's precision and 2^n may
    // overflow on its own, so scale e^r = q + 1 in two halves instead.
    let s = pow2i(T::pick(n > T::c(T::BIAS as f64), T::c(0.0), n));
    let moderate = s * q + (s - T::c(1.0));
    let large = ldexp(q + T::c(1.0), n) - T::c(1.0);
    let big = n > T::c((T::MANT + 1) as f64);
    T::pick(big, large, moderate)
}

/// `e^x`.
pub(crate) struct Exp;

/// `2^x`.
pub(crate) struct Exp2;

/// `e^x - 1`.
pub(crate) struct Expm1;

/// `1 / (1 + e^-x)`.
pub(crate) struct Sigmoid;

/// Hyperbolic tangent.
pub(crate) struct Tanh;

/// Hyperbolic sine.
pub(crate) struct Sinh;

/// Hyperbolic cosine.
pub(crate) struct Cosh;

/// `(ln 2)^k / k!` for k = 17 down to 0: `2^r`'s Taylor coefficients.
const LN2_POW_FACT: [f64; 18] = [
    5.533_046_532_458_242e-18,
    1.357_024_794_875_514_8e-16,
    3.132_436_707_088_428_7e-15,
    6.778_726_354_822_545e-14,
    1.369_148_885_390_412_8e-12,
    2.567_843_599_348_820_6e-11,
    4.445_538_271_870_811_6e-10,
    7.054_911_620_801_123e-9,
    1.017_808_600_923_97e-7,
    1.321_548_679_014_431e-6,
    1.525_273_380_405_984_1e-5,
    1.540_353_039_338_161e-4,
    1.333_355_814_642_844_3e-3,
    9.618_129_107_628_477e-3,
    5.550_410_866_482_158e-2,
    2.402_265_069_591_007_2e-1,
    std::f64::consts::LN_2,
    1.0,
];

unary!(Exp => exp, f64 only);
lanes_f32!(Exp => exp_f32);
unary!(Exp2 => exp2);
unary!(Expm1 => expm1_signed);
unary!(Sigmoid => sigmoid, f64 only);

/// `e^r` for `|r| <= ln2 / 2` in float32: `1 + r + r^2 / 2 + r^3 s(r)`
/// with `s` of degree 3 fitted for least maximum relative error (2^-28,
/// as the degree-7 Taylor polynomial, one multiply-add fewer); highest
/// coefficient first.
const EXP_F32_FIT: [f32; 7] = [
    1.386_378_7e-3,
    8.367_476e-3,
    4.166_723_8e-2,
    1.666_653_5e-1,
    0.5,
    1.0,
    1.0,
];

/// `e^x` in float32 with fused multiply-adds: `p 2^n` from
/// [`exp_parts_f32`], scaled once (into the subnormals below `2^-126`).
/// A NaN passes through every step.
#[inline(always)]
fn exp_f32<V: Lanes>(x: V) -> V {
    let (p, n) = exp_parts_f32(x.at_least(V::s(-104.0)).at_most(V::s(89.0)));
    p.scale(n)
}

lanes_f32!(Sigmoid => sigmoid_f32);

/// `1 / (1 + e^-x)` in float32 with fused multiply-adds: `e = e^-|x|` as
/// `p 2^n` (scaled once, into the subnormals for large `|x|`), `d = 1 + e`
/// kept exactly as `d + d_lo`, and the quotient `num / d` from one float32
/// division refined by its residual, so it rounds about once. Within 1.5
/// ulp over every float32, at a third of the cost of dividing in float64.
/// A NaN passes through every step; which of the NaNs a fused step meets
/// it returns depends on how the step was compiled, so the result of a
/// NaN is set by [`NAN_STAYS`].
#[inline(always)]
fn sigmoid_f32<V: Lanes>(x: V) -> V {
    // e^a, a = -|x| in [-104, 0].
    let (p, n) = exp_parts_f32((-x.mag()).at_least(V::s(-104.0)));
    let e = p.scale(n);
    // 1 + e exactly as d + d_lo (e <= 1, so the fast two-sum holds).
    let one = V::s(1.0);
    let d = one + e;
    let d_lo = (one - d) + e;
    let num = V::sel(x.below(V::s(0.0)), e, one);
    let y = one / d;
    let q = num * y;
    let res = (-q).fma(d, num);
    let res = (-q).fma(d_lo, res);
    res.fma(y, q).fixup(x, NAN_STAYS)
}
unary!(Tanh => tanh, f64 only);

/// `e^a` in float32 as `p 2^n` for `a` in `[-104, 89]`: `a = n ln2 + r`
/// with `|r| <= ln2 / 2` (ln 2 split in two, each fused step rounding
/// once), `p = e^r` by [`EXP_F32_FIT`]. `n` is the integer nearest to
/// `a log2(e)` (before rounding the product): adding `1.5 2^23` in the
/// fused step leaves no fraction bits, and subtracting it again is exact.
#[inline(always)]
fn exp_parts_f32<V: Lanes>(a: V) -> (V, V) {
    const ROUND: f32 = 12_582_912.0;
    let n = a.fma(V::s(std::f32::consts::LOG2_E), V::s(ROUND)) - V::s(ROUND);
    let r = n.fma(V::s(-std::f32::consts::LN_2), a);
    let r = n.fma(V::s(1.904_654_3e-9), r);
    (poly(r, &EXP_F32_FIT), n)
}

/// `(tanh x - x) / x^3` as a polynomial in `x^2` for `|x| <= 0.625`, fitted
/// for least maximum relative error of `x + x^3 P(x^2)` (below 2^-26 with
/// these float32 coefficients); highest coefficient first.
const TANH_F32_FIT: [f32; 5] = [
    -5.704_953e-3,
    2.063_905_3e-2,
    -5.373_970_4e-2,
    1.333_144_2e-1,
    -3.333_328e-1,
];

lanes_f32!(Tanh => tanh_f32);

/// Hyperbolic tangent in float32 with fused multiply-adds: `x + x^3
/// P(x^2)` for `|x| < 0.625` (the correction is under a tenth of `x`, so
/// its roundings barely show), and `1 - 2 q` further out, with `e =
/// e^-2|x|` and `q = e / (1 + e)`. There the result is at least 0.55 and
/// `q` at most 0.223, so `q`'s three roundings (`e`, `1 + e`, the
/// quotient; under 2.7 2^-24 relative together) move the result by at
/// most 1.2 ulp before its own rounding.
#[inline(always)]
fn tanh_f32<V: Lanes>(x: V) -> V {
    let a = x.mag();
    // Near zero.
    let s = x * x;
    let near = (s * a).fma(poly(s, &TANH_F32_FIT), a);
    // Further out: past 9.5 the result rounds to 1.
    let (p, n) = exp_parts_f32(V::s(-2.0) * a.at_most(V::s(9.5)));
    let e = p.scale(n);
    let one = V::s(1.0);
    let far = V::s(-2.0).fma(e / (one + e), one);
    // A NaN passes through both.
    V::sel(a.below(V::s(0.625)), near, far).sign_of(x)
}
unary!(Sinh => sinh, f32 via f64);
unary!(Cosh => cosh, f32 via f64);

/// `2^x`.
#[inline(always)]
fn exp2<T: Real>(x: T) -> T {
    let (lo, hi) = if T::WIDE {
        (-1076.0, 1025.0)
    } else {
        (-152.0, 129.0)
    };
    let c = clamp(x, lo, hi);
    let n = c.rint();
    // x - n is exact; 2^r for |r| <= 1/2 by its series.
    let cs = if T::LONG {
        &LN2_POW_FACT[LN2_POW_FACT.len() - 15..]
    } else {
        &LN2_POW_FACT[LN2_POW_FACT.len() - 8..]
    };
    let p = horner(c - n, cs);
    T::pick(x.nan(), x, ldexp(p, n))
}

/// `e^x - 1`; NaN stays NaN and a signed zero keeps its sign.
#[inline(always)]
fn expm1_signed<T: Real>(x: T) -> T {
    T::pick(x.nan() || x == T::c(0.0), x, expm1(x))
}

/// `1 / (1 + e^-x)`.
#[inline(always)]
fn sigmoid<T: Real>(x: T) -> T {
    // With e = e^-|x| <= 1: 1 / (1 + e) for x >= 0, e / (1 + e) below,
    // which stays accurate down to the subnormals.
    let e = exp(-x.abs());
    let num = T::pick(x >= T::c(0.0), T::c(1.0), e);
    num / (T::c(1.0) + e)
}

/// Hyperbolic tangent.
#[inline(always)]
fn tanh<T: Real>(x: T) -> T {
    // With t = e^(2|x|) - 1 and d = t + 2: tanh |x| = t / d near zero and
    // 1 - 2 / d further out, where the subtracted term is small; past the
    // clamp the result rounds to 1. In float64 the rounding error of d is
    // recovered exactly (d_lo, a fast two-sum) and divided out, so only
    // the division itself rounds; float32 results, computed in float64,
    // need no such care.
    let a = clamp(x.abs(), 0.0, if T::WIDE { 19.5 } else { 9.5 });
    let t = expm1(a + a);
    let two = T::c(2.0);
    let d = t + two;
    let near = a < T::c(0.625);
    let q = T::pick(near, t, two) / d;
    let q = if T::LONG {
        let d_lo = T::pick(t < two, (two - d) + t, (t - d) + two);
        q - q * (d_lo / d)
    } else {
        q
    };
    let r = T::pick(near, q, T::c(1.0) - q);
    T::pick(x.nan(), x, r.with_sign_of(x))
}

/// Where `e^-|x|` stops mattering next to `e^|x|` in each format.
#[inline(always)]
fn hyperbolic_big<T: Real>() -> f64 {
    if T::WIDE {
        19.5
    } else {
        9.5
    }
}

/// Hyperbolic sine.
#[inline(always)]
fn sinh<T: Real>(x: T) -> T {
    // Up to 1: the odd series a + a^3 (1/3! + a^2/5! + ...), a plus a small
    // correction. Above: h - 1/(4h) with h = e^a / 2 (the subtracted term
    // is at most a sixth of the result), and h alone once e^-a is
    // negligible.
    let a = x.abs();
    let a2 = a * a;
    let cs = if T::LONG {
        &SINH_SERIES[..]
    } else {
        &SINH_SERIES[SINH_SERIES.len() - 5..]
    };
    let series = a + a * a2 * horner(a2, cs);
    let h = half_exp(clamp(a, 0.0, hyperbolic_big::<T>()));
    let mid = h - T::c(0.25) / h;
    let r = T::pick(a <= T::c(1.0), series, mid);
    let r = T::pick(a > T::c(hyperbolic_big::<T>()), half_exp(a), r);
    T::pick(x.nan() || x == T::c(0.0), x, r.with_sign_of(x))
}

/// `1/(2k+1)!` for k = 9 down to 1: `(sinh a - a) / a^3` in powers of `a^2`.
const SINH_SERIES: [f64; 9] = [
    8.220_635_246_624_33e-18,
    2.811_457_254_345_520_6e-15,
    7.647_163_731_819_816e-13,
    1.605_904_383_682_161_3e-10,
    2.505_210_838_544_172e-8,
    2.755_731_922_398_589_3e-6,
    1.984_126_984_126_984e-4,
    8.333_333_333_333_333e-3,
    1.666_666_666_666_666_6e-1,
];

/// Hyperbolic cosine.
#[inline(always)]
fn cosh<T: Real>(x: T) -> T {
    let a = x.abs();
    let h = half_exp(clamp(a, 0.0, hyperbolic_big::<T>()));
    // e^a / 2 + e^-a / 2 with e^-a / 2 = 1 / (4 (e^a / 2)).
    let small = h + T::c(0.25) / h;
    let r = T::pick(a > T::c(hyperbolic_big::<T>()), half_exp(a), small);
    T::pick(x.nan(), x, r)
}
