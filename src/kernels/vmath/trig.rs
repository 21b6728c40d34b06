//! The circular functions `sin`, `cos`, `tan` and their inverses `asin`,
//! `acos`, `atan`.
//!
//! `sin`, `cos`, `tan` reduce `x = k pi/2 + r` with `|r| <= pi/4` (the
//! product `k pi/2` subtracted in three parts, `r` kept as a pair
//! `h + l`), take `sin r` and `cos r` from their Taylor series and pick
//! by the quadrant `k mod 4`. Arguments past what the three-part
//! reduction keeps exact go to the platform's scalar function. float32
//! `sin` and `cos` run wholly in float32 (fused multiply-adds over
//! [`Lanes`], sixteen at a time on AVX-512) up to `|x| = 6400`: `sin`
//! reduces by `pi` and `cos` by odd multiples of `pi/2`, each to one odd
//! series over `|r| <= pi/2`; within `2^-16` of a zero of the function and
//! beyond 6400 they reduce in float64. float32 `tan` runs wholly in
//! float64.
//!
//! The inverses share one core, `atan` of a ratio `n / d` of non-negative
//! pairs: the ratio is flipped to at most 1, moved next to one of the
//! points `tan(j pi/16)` by `atan t = atan t_j + atan((t - t_j) / (1 + t t_j))`
//! so the series argument stays below 0.1, and the constant parts are
//! added last. In float64 the ratio and the shifted argument are carried
//! with their rounding errors (exact products by Dekker's splitting), so
//! the result is rounded essentially once. float32 runs all of it in
//! float64 through [`F64s`].

use super::lanes::{lanes_f32, poly, Lanes, NAN_STAYS};
use super::{horner, magic, two_prod, two_sum, F64s, Real, Unary};
use std::f64::consts::{FRAC_2_PI, FRAC_PI_2};

/// `pi/2` in three parts; `k` times each of the first two is exact for
/// every `k` the fast path sees (`|k| <= 2^20` in float64, `2^28` in
/// float32's float64 route), the third is the rest to full precision.
#[inline(always)]
fn half_pi_parts<T: Real>() -> (T, T, T) {
    let (a, b, c) = if T::LONG {
        (
            1.570_796_326_734_125_6,
            6.077_100_506_303_966e-11,
            2.022_266_248_795_950_6e-21,
        )
    } else {
        (
            1.570_796_251_296_997,
            7.549_789_415_861_596e-8,
            5.390_302_858_158_119e-15,
        )
    };
    (T::c(a), T::c(b), T::c(c))
}

/// Splits a finite `x` within the fast range as `k pi/2 + h + l`:
/// returns `(k, h, l)` with `|h + l| <= pi/4` (a hair more at ties).
#[inline(always)]
fn reduce_half_pi<T: Real>(x: T) -> (T, T, T) {
    let k = (x * T::c(FRAC_2_PI)).rint();
    let (p1, p2, p3) = half_pi_parts::<T>();
    // Exact: k * p1 is exact and close to x.
    let t = x - k * p1;
    let (h, e) = two_sum(t, -(k * p2));
    let y = e - k * p3;
    let r = h + y;
    (k, r, (h - r) + y)
}

/// `k mod 4` of an integer-valued `k`: (bit 0, bit 1).
#[inline(always)]
fn quadrant<T: Real>(k: T) -> (bool, bool) {
    let b = (k + magic::<T>()).to_bits();
    ((b & T::w(1)) == T::w(1), (b & T::w(2)) == T::w(2))
}

/// `(-1)^n / (2n+1)!` for n = 8 down to 1: `sin r = r + r z S(z)`, `z = r^2`.
const SIN_SERIES: [f64; 8] = [
    1.0 / 355_687_428_096_000.0,
    -1.0 / 1_307_674_368_000.0,
    1.0 / 6_227_020_800.0,
    -1.0 / 39_916_800.0,
    1.0 / 362_880.0,
    -1.0 / 5_040.0,
    1.0 / 120.0,
    -1.0 / 6.0,
];

/// `(-1)^n / (2n)!` for n = 8 down to 2: `cos r = 1 - z/2 + z^2 C(z)`.
const COS_SERIES: [f64; 7] = [
    1.0 / 20_922_789_888_000.0,
    -1.0 / 87_178_291_200.0,
    1.0 / 479_001_600.0,
    -1.0 / 3_628_800.0,
    1.0 / 40_320.0,
    -1.0 / 720.0,
    1.0 / 24.0,
];

/// `sin(h + l)` as an unevaluated pair: `h` and a small correction.
/// Degree 17 in float64 (the next term is below 0.01 ulp at `pi/4`),
/// 11 in float32.
#[inline(always)]
fn sin_parts<T: Real>(h: T, l: T) -> (T, T) {
    let cs: &[f64] = if T::LONG {
        &SIN_SERIES
    } else {
        &SIN_SERIES[3..]
    };
    let z = h * h;
    // sin(h + l) = sin h + l cos h, with cos h ~ 1 - z/2 at l's scale.
    (h, h * z * horner(z, cs) + l * (T::c(1.0) - T::c(0.5) * z))
}

/// `cos(h + l)` as an unevaluated pair `w + c`: `w = 1 - h^2/2` rounded
/// and everything that rounding and the higher terms leave.
#[inline(always)]
fn cos_parts<T: Real>(h: T, l: T) -> (T, T) {
    let cs: &[f64] = if T::LONG {
        &COS_SERIES
    } else {
        &COS_SERIES[3..]
    };
    let (z, zl) = if T::LONG {
        two_prod(h, h)
    } else {
        (h * h, T::c(0.0))
    };
    let hz = T::c(0.5) * z;
    let w = T::c(1.0) - hz;
    // (1 - w) - hz is exactly what rounding w lost.
    let tail = z * z * horner(z, cs) - h * l;
    (w, (((T::c(1.0) - w) - hz) - T::c(0.5) * zl) + tail)
}

/// `(nh + nl) / (dh + dl)` for `|nl| <= |nh|`, `|dl| <= |dh|`: in float64
/// the pairs are first renormalised (the low parts then below an ulp of
/// the high ones), then the quotient of the high parts gets a correction
/// from its exact residual.
#[inline(always)]
fn div_pairs<T: Real>(nh: T, nl: T, dh: T, dl: T) -> T {
    if !T::LONG {
        return (nh + nl) / (dh + dl);
    }
    let (n, d) = (nh + nl, dh + dl);
    let (nh, nl, dh, dl) = (n, (nh - n) + nl, d, (dh - d) + dl);
    let q = nh / dh;
    let (p, pl) = two_prod(q, dh);
    q + ((((nh - p) - pl) + nl) - q * dl) / dh
}

#[inline(always)]
fn sin<T: Real>(x: T) -> T {
    let (k, h, l) = reduce_half_pi(x);
    let (odd, neg) = quadrant(k);
    let (sh, sl) = sin_parts(h, l);
    let (ch, cl) = cos_parts(h, l);
    let r = T::pick(odd, ch + cl, sh + sl);
    // sin(-0) is -0.
    T::pick(x == T::c(0.0), x, T::pick(neg, -r, r))
}

#[inline(always)]
fn cos<T: Real>(x: T) -> T {
    let (k, h, l) = reduce_half_pi(x);
    let (odd, neg) = quadrant(k);
    let (sh, sl) = sin_parts(h, l);
    let (ch, cl) = cos_parts(h, l);
    let r = T::pick(odd, sh + sl, ch + cl);
    T::pick(odd != neg, -r, r)
}

#[inline(always)]
fn tan<T: Real>(x: T) -> T {
    let (k, h, l) = reduce_half_pi(x);
    let (odd, _) = quadrant(k);
    let (sh, sl) = sin_parts(h, l);
    let (ch, cl) = cos_parts(h, l);
    // tan(r + pi/2) = -cos r / sin r.
    let r = T::pick(odd, -div_pairs(ch, cl, sh, sl), div_pairs(sh, sl, ch, cl));
    T::pick(x == T::c(0.0), x, r)
}

/// float32 sine (`COS` false) or cosine for `|x| <= 2^28`, the path of
/// the arguments [`sin_far`] and [`cos_far`] pick: the reduction runs in float64 as
/// in [`F64s`]'s route, then `r` rounds to float32 (half an ulp, which the functions pass on at most 1:1 since
/// `|r| <= pi/4`) and both series run in float32, 8 lanes on AVX2. The
/// sine's correction is under a tenth of it; the cosine keeps what
/// rounding `1 - r^2/2` loses, as [`cos_parts`] does.
#[inline(always)]
fn sin_cos_f32<const COS: bool>(x: f32) -> f32 {
    let (k, h, l) = reduce_half_pi(F64s(f64::from(x)));
    let (odd, neg) = quadrant(k);
    let r = (h + l).0 as f32;
    let z = r * r;
    // Degree 9 and 8: the next terms are below 0.05 ulp at pi/4.
    let s = r + r * z * horner(z, &SIN_SERIES[4..]);
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let c = w + (((1.0 - w) - hz) + z * z * horner(z, &COS_SERIES[3..]));
    if COS {
        let v = f32::pick(odd, s, c);
        f32::pick(odd != neg, -v, v)
    } else {
        let v = f32::pick(odd, c, s);
        // sin(-0) is -0.
        f32::pick(x == 0.0, x, f32::pick(neg, -v, v))
    }
}

/// Up to where float32 sine and cosine reduce in float32 (`|k| < 2^12`).
const SIN_COS_F32_FAST: f32 = 6400.0;

/// `pi/2` in three float32 parts: the first two 12 bits wide, so that for
/// `|k| < 2^12` both `k p1` and `k p2` are exact; the third is the rest
/// rounded, `5.7e-18` from `pi/2` in all.
const HALF_PI_F32: [f32; 3] = [1.570_800_8, -4.453_584_6e-6, -8.705_516e-10];

/// `pi` in three float32 parts: [`HALF_PI_F32`] doubled (exactly).
const PI_F32: [f32; 3] = [
    2.0 * HALF_PI_F32[0],
    2.0 * HALF_PI_F32[1],
    2.0 * HALF_PI_F32[2],
];

/// `(sin r - r) / r^3` as a polynomial in `z = r^2` for `|r| <= pi/2`,
/// fitted for least maximum relative error of `r + r^3 P(z)` (`2^-27.2`
/// with these float32 coefficients); highest coefficient first.
const SIN_F32_FIT: [f32; 4] = [2.605_777e-6, -1.980_966_5e-4, 8.333_068e-3, -1.666_666e-1];

/// `x - k c` for an integer-valued `k` (`|k| < 2^12`) and `c` in three
/// float32 parts ([`HALF_PI_F32`], [`PI_F32`]), as `(r, rl)`: two fused
/// steps, then the third part subtracted with `rl` keeping what rounding
/// `r` lost (`t - r` is exact unless `r` is far below `t`; the first two
/// steps' roundings, up to half an ulp of `t` when `x` has finer bits
/// than `r`, are not kept).
#[inline(always)]
fn reduce_f32<V: Lanes>(x: V, k: V, [c1, c2, c3]: [f32; 3]) -> (V, V) {
    let t = k.fma(V::s(-c2), k.fma(V::s(-c1), x));
    let r = k.fma(V::s(-c3), t);
    (r, k.fma(V::s(-c3), t - r))
}

/// `sin(r + rl)` for `|r| <= pi/2` (a hair more where the quotient rounded)
/// and `rl` under half an ulp of `r`: `r + r^3 P(z)` with [`SIN_F32_FIT`],
/// `z`'s rounding error `zl` carried into `z P` (at `|r|` near `pi/2` the
/// term `r^3 P` is half the result, so each of its roundings counts), and
/// `rl cos r` with `cos r ~ 1 - 4 r^2 / pi^2` (exact at 0 and `pi/2`,
/// within 0.06 between).
#[inline(always)]
fn sin_f32_reduced<V: Lanes>(r: V, rl: V) -> V {
    let z = r * r;
    let zl = r.fma(r, -z);
    let p = poly(z, &SIN_F32_FIT);
    let v = z.fma(p, zl * p);
    let c = z.fma(V::s(-0.405_284_73), V::s(1.0));
    r + r.fma(v, rl * c)
}

/// The integer nearest to `x / pi` and `x` reduced by it: `(k, r, rl)` with
/// `x = k pi + r + rl` (adding `1.5 2^23` in the fused step leaves no
/// fraction bits, and subtracting it again is exact).
#[inline(always)]
fn reduce_pi_f32<V: Lanes>(x: V) -> (V, V, V) {
    const ROUND: f32 = 12_582_912.0;
    let k = x.fma(V::s(std::f32::consts::FRAC_1_PI), V::s(ROUND)) - V::s(ROUND);
    let (r, rl) = reduce_f32(x, k, PI_F32);
    (k, r, rl)
}

/// For cosine: `j = 2 floor(x / pi) + 1`, the odd integer within about
/// `pi/2` of `2x / pi` (the quotient's rounding may move it by one, which
/// takes `r` a hair past `pi/2`), and `x = j pi/2 + r + rl`.
#[inline(always)]
fn reduce_odd_half_pi_f32<V: Lanes>(x: V) -> (V, V, V) {
    let h = (x * V::s(std::f32::consts::FRAC_1_PI)).floor();
    let (r, rl) = reduce_f32(x, h.fma(V::s(2.0), V::s(1.0)), HALF_PI_F32);
    (h, r, rl)
}

/// The inputs the float32 sine does not cover: past [`SIN_COS_F32_FAST`],
/// and within `2^-16` of a nonzero multiple of `pi` (where the truncated
/// `pi` would show; for spread-out inputs, about one in 100,000). A
/// remainder that small with `k = 0` is `x` itself, below 1.
#[inline(always)]
fn sin_far<V: Lanes>(x: V) -> V::M {
    let (_, r, _) = reduce_pi_f32(x);
    let a = x.mag();
    let near = V::and(r.mag().below(V::s(1.0 / 65_536.0)), V::s(1.0).below(a));
    V::or(V::s(SIN_COS_F32_FAST).below(a), near)
}

/// The cosine's counterpart of [`sin_far`]: within `2^-16` of an odd
/// multiple of `pi/2` (`j` is never zero).
#[inline(always)]
fn cos_far<V: Lanes>(x: V) -> V::M {
    let (_, r, _) = reduce_odd_half_pi_f32(x);
    V::or(
        V::s(SIN_COS_F32_FAST).below(x.mag()),
        r.mag().below(V::s(1.0 / 65_536.0)),
    )
}

/// float32 sine where [`sin_far`] does not hold, in float32 with fused
/// multiply-adds: `x = k pi + r`, `sin x = (-1)^k sin r` by one odd
/// series. Within 1.74 ulp over every float32 it covers.
#[inline(always)]
fn sin_lanes<V: Lanes>(x: V) -> V {
    let (k, r, rl) = reduce_pi_f32(x);
    // sin(-0) is -0.
    sin_f32_reduced(r, rl)
        .flip_odd(k)
        .fixup(x, NAN_STAYS | ZERO_STAYS)
}

/// float32 cosine where [`cos_far`] does not hold: `x = j pi/2 + r` with
/// `j = 2h + 1`, `cos x = (-1)^(h+1) sin r`. Within 1.92 ulp over every
/// float32 it covers (the worst below 1, where `r = x - pi/2` cannot hold
/// all of `x`'s bits).
#[inline(always)]
fn cos_lanes<V: Lanes>(x: V) -> V {
    let (h, r, rl) = reduce_odd_half_pi_f32(x);
    (-sin_f32_reduced(r, rl)).flip_odd(h).fixup(x, NAN_STAYS)
}

/// [`Lanes::fixup`]'s table entry that makes a zero input the result.
const ZERO_STAYS: u32 = 1 << 8;

/// float32 sine or cosine where [`sin_far`] or [`cos_far`] holds: [`sin_cos_f32`] up
/// to `2^28`, the platform's function beyond (and for infinities).
fn sin_cos_wide<const COS: bool>(x: f32) -> f32 {
    match (x.abs() <= (1u32 << 28) as f32, COS) {
        (true, _) => sin_cos_f32::<COS>(x),
        (false, true) => x.cos(),
        (false, false) => x.sin(),
    }
}

lanes_f32!(Sin => sin_lanes, far sin_far => sin_cos_wide::<false>);
lanes_f32!(Cos => cos_lanes, far cos_far => sin_cos_wide::<true>);

/// float32 tangent, all in float64 (its division needs the width).
#[inline(always)]
fn tan_f32(x: f32) -> f32 {
    tan(F64s(f64::from(x))).0 as f32
}

/// Sine.
pub(crate) struct Sin;

/// Cosine.
pub(crate) struct Cos;

/// Tangent.
pub(crate) struct Tan;

/// Implements [`Unary<f64>`] for a reduced function: its own body up to
/// `2^20 pi/2`, the platform's function past that (and for infinities,
/// whose result is NaN either way).
macro_rules! reduced {
    ($($k:ident => $f:ident;)*) => {$(
        impl Unary<f64> for $k {
            #[inline(always)]
            fn fast(x: f64) -> f64 {
                $f(x)
            }
            const HAS_SLOW: bool = true;
            #[inline(always)]
            fn needs_slow(x: f64) -> bool {
                x.abs() > (1u64 << 20) as f64 * FRAC_PI_2
            }
            fn slow(x: f64) -> f64 {
                x.$f()
            }
        }
    )*};
}

reduced! {
    Sin => sin;
    Cos => cos;
    Tan => tan;
}

/// float32 tangent: [`tan_f32`] up to `2^28`, the platform's function
/// beyond (and for infinities).
impl Unary<f32> for Tan {
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        tan_f32(x)
    }
    const HAS_SLOW: bool = true;
    #[inline(always)]
    fn needs_slow(x: f32) -> bool {
        x.abs() > (1u32 << 28) as f32
    }
    fn slow(x: f32) -> f32 {
        x.tan()
    }
}

/// `(-1)^n / (2n+1)` for n = 7 down to 1: `atan u = u + u z A(z)`,
/// `z = u^2`, enough below 0.01 ulp for `|u| <= 0.1` (float32 uses
/// the last four).
const ATAN_SERIES: [f64; 7] = [
    -1.0 / 15.0,
    1.0 / 13.0,
    -1.0 / 11.0,
    1.0 / 9.0,
    -1.0 / 7.0,
    1.0 / 5.0,
    -1.0 / 3.0,
];

/// The points `t_j` (`tan(j pi/16)` rounded) with `atan t_j` in two
/// parts, for j = 1..4, and the boundaries between them (`t_j / 2` stays
/// below the lower one, so `t - t_j` is exact).
const ATAN_POINTS: [(f64, f64, f64); 4] = [
    (
        0.198_912_367_379_658,
        0.196_349_540_849_362_07,
        6.846_802_412_842_648e-18,
    ),
    (
        0.414_213_562_373_095_03,
        std::f64::consts::FRAC_PI_8,
        3.060_132_146_563_891e-18,
    ),
    (
        0.668_178_637_919_298_9,
        0.589_048_622_548_086_2,
        -5.412_106_055_318_847e-18,
    ),
    (1.0, std::f64::consts::FRAC_PI_4, 3.061_616_997_868_383e-17),
];
const ATAN_BOUNDS: [f64; 4] = [
    0.1,
    0.303_346_683_607_342_4,
    0.534_511_135_950_791_7,
    0.820_678_790_828_660_4,
];

/// `pi/2` and `pi` as (rounded, rest).
const HALF_PI: (f64, f64) = (FRAC_PI_2, 6.123_233_995_736_766e-17);
const PI: (f64, f64) = (std::f64::consts::PI, 1.224_646_799_147_353_2e-16);

/// `atan((n + nl) / (d + dl))` for `n, d >= 0` (not both zero) with small
/// corrections `nl`, `dl`; `pi` minus it when `from_pi`.
#[inline(always)]
fn atan_ratio<T: Real>(n: T, nl: T, d: T, dl: T, from_pi: bool) -> T {
    let zero = T::c(0.0);
    // t = p / q <= 1; atan(n/d) = pi/2 - atan(d/n) when flipped.
    let flip = n > d;
    let (p, pl) = (T::pick(flip, d, n), T::pick(flip, dl, nl));
    let (q, ql) = (T::pick(flip, n, d), T::pick(flip, nl, dl));
    let (t, tl) = if T::LONG {
        let t = p / q;
        let (m, ml) = two_prod(t, q);
        let tl = ((((p - m) - ml) + pl) - t * ql) / q;
        // Past 2^500 the split in two_prod could overflow; t is then far
        // below pi/2's precision anyway.
        (t, T::pick(q > T::c(2f64.powi(500)), zero, tl))
    } else {
        ((p + pl) / (q + ql), zero)
    };
    // The point t_j next to t and atan t_j.
    let mut tj = zero;
    let (mut ch, mut cl) = (zero, zero);
    for (&(pt, hi, lo), &b) in ATAN_POINTS.iter().zip(&ATAN_BOUNDS) {
        let past = t > T::c(b);
        tj = T::pick(past, T::c(pt), tj);
        ch = T::pick(past, T::c(hi), ch);
        cl = T::pick(past, T::c(lo), cl);
    }
    // u = (t - t_j) / (1 + t t_j), with its rounding error ul in float64.
    let num = t - tj;
    let (u, ul) = if T::LONG {
        let (m, ml) = two_prod(t, tj);
        let den = T::c(1.0) + m;
        let denl = (((T::c(1.0) - den) + m) + ml) + tl * tj;
        let u = num / den;
        let (v, vl) = two_prod(u, den);
        (u, ((((num - v) - vl) + tl) - u * denl) / den)
    } else {
        ((num + tl) / (T::c(1.0) + t * tj), zero)
    };
    let cs: &[f64] = if T::LONG {
        &ATAN_SERIES
    } else {
        &ATAN_SERIES[3..]
    };
    let z = u * u;
    let small = ul + u * z * horner(z, cs);
    // The constant part k and the sign s of atan u: k + s atan u.
    let (fh, fl) = two_sum(T::c(HALF_PI.0), -ch);
    let kh = T::pick(flip, fh, ch);
    let kl = T::pick(flip, fl + (T::c(HALF_PI.1) - cl), cl);
    let (ph, pl) = two_sum(T::c(PI.0), -kh);
    let kl = T::pick(from_pi, pl + (T::c(PI.1) - kl), kl);
    let kh = T::pick(from_pi, ph, kh);
    let neg = flip != from_pi;
    let su = T::pick(neg, -u, u);
    let ss = T::pick(neg, -small, small);
    // |kh| >= |u| or kh = 0, so e is exactly what the sum lost.
    let v = kh + su;
    let e = (kh - v) + su;
    v + (e + (kl + ss))
}

/// `sqrt(1 - a^2)` for `0 <= a <= 1` as (rounded, correction).
#[inline(always)]
fn cosine_of_sine<T: Real>(a: T) -> (T, T) {
    let one = T::c(1.0);
    if !T::LONG {
        // float32's a: 1 - a, 1 + a and their product are exact in float64.
        return (((one - a) * (one + a)).sqrt(), T::c(0.0));
    }
    let (p, pl) = two_prod(a, a);
    let w = one - p;
    let wl = ((one - w) - p) - pl;
    let s = w.sqrt();
    let (m, ml) = two_prod(s, s);
    let sl = (((w - m) - ml) + wl) / (s + s);
    (s, T::pick(s == T::c(0.0), T::c(0.0), sl))
}

#[inline(always)]
fn atan<T: Real>(x: T) -> T {
    let r = atan_ratio(x.abs(), T::c(0.0), T::c(1.0), T::c(0.0), false);
    T::pick(x.nan(), x, r.with_sign_of(x))
}

#[inline(always)]
fn asin<T: Real>(x: T) -> T {
    // asin x = atan(x / sqrt(1 - x^2)), with the root carried in two parts.
    let a = x.abs();
    let (s, sl) = cosine_of_sine(a);
    let r = atan_ratio(a, T::c(0.0), s, sl, false);
    let r = T::pick(a > T::c(1.0), T::c(f64::NAN), r);
    T::pick(x.nan(), x, r.with_sign_of(x))
}

#[inline(always)]
fn acos<T: Real>(x: T) -> T {
    // acos x = atan(sqrt(1 - x^2) / x), measured from pi below zero.
    let a = x.abs();
    let (s, sl) = cosine_of_sine(a);
    let r = atan_ratio(s, sl, a, T::c(0.0), x < T::c(0.0));
    let r = T::pick(a > T::c(1.0), T::c(f64::NAN), r);
    T::pick(x.nan(), x, r)
}

/// Inverse sine.
pub(crate) struct Asin;

/// Inverse cosine.
pub(crate) struct Acos;

/// Inverse tangent.
pub(crate) struct Atan;

super::unary!(Atan => atan, f32 via f64);
super::unary!(Asin => asin, f32 via f64);
super::unary!(Acos => acos, f32 via f64);
