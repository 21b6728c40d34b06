//! The logarithm family: `log`, `log1p`, `log2`, `log10` and the inverse
//! hyperbolic functions built on them.
//!
//! `x = 2^e m` with `m` in `[sqrt(1/2), sqrt(2))`; with `f = m - 1` (exact)
//! and `s = f / (2 + f)`, `log m = 2 atanh s = f - f^2/2 + s (f^2/2 + R)`
//! where `R = 2 s^2/3 + 2 s^4/5 + ...` is small, so the result is `f` plus
//! a correction and keeps nearly all of `f`'s precision.

use super::lanes::{lanes_f32, poly, Lanes};
use super::{horner, split_exponent, unary, Real};

/// `2/(2k+1)` for k = 13 down to 1: the series `R(z) / z` in `z = s^2`
/// (the logarithms use it from k = 10, float64 `pow` to k = 13).
pub(super) const ATANH_SERIES: [f64; 13] = [
    2.0 / 27.0,
    2.0 / 25.0,
    2.0 / 23.0,
    2.0 / 21.0,
    2.0 / 19.0,
    2.0 / 17.0,
    2.0 / 15.0,
    2.0 / 13.0,
    2.0 / 11.0,
    2.0 / 9.0,
    2.0 / 7.0,
    2.0 / 5.0,
    2.0 / 3.0,
];

/// `ln 2` in two parts; `e * LN2_HI` is exact for the exponents that occur.
#[inline(always)]
fn ln2_parts<T: Real>() -> (T, T) {
    if T::WIDE {
        (
            T::c(6.931_471_803_691_238e-1),
            T::c(1.908_214_929_270_587_7e-10),
        )
    } else {
        (T::c(0.693_115_234_375), T::c(3.194_618_3e-5))
    }
}

/// For `f = m - 1`: `(hfsq, corr)` with `log m = f - (hfsq - corr)`.
#[inline(always)]
fn log_m_parts<T: Real>(f: T) -> (T, T) {
    let s = f / (T::c(2.0) + f);
    let z = s * s;
    let cs: &[f64] = if T::LONG {
        &ATANH_SERIES[3..]
    } else {
        &ATANH_SERIES[ATANH_SERIES.len() - 4..]
    };
    let r = z * horner(z, cs);
    let hfsq = T::c(0.5) * f * f;
    (hfsq, s * (hfsq + r))
}

/// `e ln2 + log m + c` for `m = 1 + f`, with `c` a small correction.
#[inline(always)]
fn log_assemble<T: Real>(e: T, f: T, c: T) -> T {
    let (hi, lo) = ln2_parts::<T>();
    let (hfsq, corr) = log_m_parts(f);
    e * hi - ((hfsq - (corr + (e * lo + c))) - f)
}

/// Natural log for any `x`.
#[inline(always)]
pub(super) fn log<T: Real>(x: T) -> T {
    let (e, m) = split_exponent(x);
    let r = log_assemble(e, m - T::c(1.0), T::c(0.0));
    specials(x, T::c(0.0), r)
}

/// The log family's special values at `x` with the pole at `pole`: NaN
/// below it (and for NaN), `-inf` at it, `+inf` at `+inf`, else `r`.
#[inline(always)]
fn specials<T: Real>(x: T, pole: T, r: T) -> T {
    let inf = T::c(f64::INFINITY);
    let r = T::pick(x == inf, inf, r);
    let r = T::pick(x == pole, -inf, r);
    T::pick(x < pole || x.nan(), T::c(f64::NAN), r)
}

/// `log(1 + x)` for any `x`.
#[inline(always)]
pub(super) fn log1p<T: Real>(x: T) -> T {
    let u = T::c(1.0) + x;
    let (e, m) = split_exponent(u);
    // What rounding 1 + x lost, relative to u: log(1 + x) = log u + c.
    let lost = T::pick(e > T::c(0.0), T::c(1.0) - (u - x), x - (u - T::c(1.0)));
    let r = log_assemble(e, m - T::c(1.0), lost / u);
    // A zero keeps its sign.
    T::pick(x == T::c(0.0), x, specials(x, T::c(-1.0), r))
}

/// Natural logarithm.
pub(crate) struct Log;

/// `log(1 + x)`, accurate near zero.
pub(crate) struct Log1p;

/// Base-2 logarithm.
pub(crate) struct Log2;

/// Base-10 logarithm.
pub(crate) struct Log10;

/// Inverse hyperbolic sine.
pub(crate) struct Asinh;

/// Inverse hyperbolic cosine.
pub(crate) struct Acosh;

/// Inverse hyperbolic tangent.
pub(crate) struct Atanh;

unary!(Log => log, f64 only);
lanes_f32!(Log => log_f32);

/// `(log(1 + f) - f) / f^2` as a polynomial in `f` for `f` in
/// `[sqrt(1/2) - 1, sqrt(2) - 1)`, fitted for least maximum relative error
/// of `f + f^2 Q(f)` (`2^-27.8` with these float32 coefficients); highest
/// coefficient first.
const LOG_F32_FIT: [f32; 9] = [
    -7.623_17e-2,
    1.291_472_9e-1,
    -1.324_75e-1,
    1.418_059_6e-1,
    -1.660_843e-1,
    2.000_201_3e-1,
    -2.500_161e-1,
    3.333_332_5e-1,
    -4.999_998_8e-1,
];

/// Natural log in float32 with fused multiply-adds: `x = 2^e m` (split
/// exactly, subnormals included), `f = m - 1` (exact), and
/// `log m = f + f^2 Q(f)` with [`LOG_F32_FIT`] in one fused step, a
/// polynomial instead of [`log_m_parts`]' quotient (a vector division
/// costs more than the whole polynomial); then `e ln 2` in two parts,
/// the small one first. Within 0.92 ulp over every float32.
#[inline(always)]
fn log_f32<V: Lanes>(x: V) -> V {
    let (e, m) = x.split();
    let f = m - V::s(1.0);
    let log_m = (f * f).fma(poly(f, &LOG_F32_FIT), f);
    let (hi, lo) = ln2_parts::<f32>();
    // e * hi is exact (hi has 11 bits, |e| < 2^8).
    e.fma(V::s(hi), e.fma(V::s(lo), log_m))
        .fixup(x, LOG_SPECIALS)
}

/// [`Lanes::fixup`]'s table for `log`: a NaN stays NaN (quieted), zeros
/// give `-inf`, negatives (`-inf` included) the default NaN, `+inf`
/// itself; `+1` and the other positives keep the body's value (exactly
/// `+0` at `+1`).
const LOG_SPECIALS: u32 = 1 | 2 << 4 | 4 << 8 | 3 << 16 | 5 << 20 | 3 << 24;
unary!(Log1p => log1p, f32 via f64);
unary!(Log2 => log2, f32 via f64);
unary!(Log10 => log10, f32 via f64);
unary!(Asinh => asinh, f32 via f64);
unary!(Acosh => acosh, f32 via f64);
unary!(Atanh => atanh, f32 via f64);

/// `e + log(m) * k` computed as `e + (f - (hfsq - corr)) * k`.
#[inline(always)]
fn log_scaled<T: Real>(x: T, e_scale: (f64, f64), k: f64) -> T {
    let (e, m) = split_exponent(x);
    let f = m - T::c(1.0);
    let (hfsq, corr) = log_m_parts(f);
    let lm = f - (hfsq - corr);
    let r = e * T::c(e_scale.0) + (lm * T::c(k) + e * T::c(e_scale.1));
    specials(x, T::c(0.0), r)
}

#[inline(always)]
fn log2<T: Real>(x: T) -> T {
    log_scaled(x, (1.0, 0.0), std::f64::consts::LOG2_E)
}

#[inline(always)]
fn log10<T: Real>(x: T) -> T {
    // log10(2) in two parts (the first exact times any exponent).
    let parts = if T::WIDE {
        (3.010_299_956_658_855e-1, -1.904_312_846_716_427_4e-12)
    } else {
        (0.301_025_390_625, 4.605_039e-6)
    };
    log_scaled(x, parts, std::f64::consts::LOG10_E)
}

/// Past this, `x^2` is not needed (and could overflow): the functions use
/// `log(2x)`.
#[inline(always)]
fn square_limit<T: Real>() -> T {
    T::c(if T::WIDE {
        2f64.powi(500)
    } else {
        2f64.powi(60)
    })
}

#[inline(always)]
fn asinh<T: Real>(x: T) -> T {
    // asinh a = log1p(a + a^2 / (1 + sqrt(1 + a^2))), no cancellation.
    let a = x.abs();
    let big = a > square_limit::<T>();
    let a2 = a * a;
    let y = T::pick(big, a, a + a2 / (T::c(1.0) + (T::c(1.0) + a2).sqrt()));
    let r = log1p(y) + T::pick(big, T::c(std::f64::consts::LN_2), T::c(0.0));
    T::pick(x.nan() || x == T::c(0.0), x, r.with_sign_of(x))
}

#[inline(always)]
fn acosh<T: Real>(x: T) -> T {
    // acosh x = log1p(t + sqrt(2t + t^2)) with t = x - 1, exact near 1.
    let big = x > square_limit::<T>();
    let t = x - T::c(1.0);
    let y = T::pick(big, x, t + (t + t + t * t).sqrt());
    let r = log1p(y) + T::pick(big, T::c(std::f64::consts::LN_2), T::c(0.0));
    T::pick(x < T::c(1.0) || x.nan(), T::c(f64::NAN), r)
}

#[inline(always)]
fn atanh<T: Real>(x: T) -> T {
    // atanh a = log1p(2a / (1 - a)) / 2, written as 2a + 2a^2 / (1 - a)
    // below 1/2 so that small arguments keep their precision.
    let a = x.abs();
    let t = a + a;
    let y = T::pick(
        a < T::c(0.5),
        t + t * a / (T::c(1.0) - a),
        t / (T::c(1.0) - a),
    );
    let r = T::c(0.5) * log1p(y);
    let r = T::pick(a > T::c(1.0), T::c(f64::NAN), r);
    T::pick(x.nan() || x == T::c(0.0), x, r.with_sign_of(x))
}
