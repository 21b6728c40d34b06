//! `pow`: float32's `x^y = e^(y log |x|)` computed in float64 and rounded
//! once; float64's with `log |x|` and `y log |x|` carried in two parts.
//! Both take C's `pow` special cases as selects, and the loops run sixteen
//! pairs at a time: a chunk whose bases are all positive and finite and
//! whose exponents are all finite (nearly every chunk) runs only the main
//! path, without the selects.
//!
//! float32: `log |x| = e ln 2 + log m` (`m` in `[sqrt(1/2), sqrt(2))`) with
//! `log m = 2 atanh s`, `s = (m - 1)/(m + 1)`, to the term in `s^11`: what
//! it leaves out is under `2s 2^-34` (`|s| <= 0.172`), at most 2^-27.5 of
//! the result once multiplied by a `y` that keeps it finite and nonzero
//! (`|y log |x|| <= 104`). The exponential's degree-7 series adds at most
//! 2^-27.5 more: the float64 result is within 2^-26 of the truth, and the
//! final rounding makes that at most 0.52 ulp.
//!
//! float64: an error `d` in `t = y log |x|` is a relative error `d` in
//! `e^t`, and `|t|` reaches 745 before the result leaves the format, so
//! `log |x|` must be good to about 2^-64 of itself. It is `e ln 2 + log m`
//! with `log m = 2 atanh s` again: the terms `2 s` and `2 s^3/3` are
//! carried as sums of two doubles (fused multiply-adds give the products'
//! errors) and only the rest of the series, below 2^-12 of the total, is
//! rounded as a double. `t` is formed the same way, and its low part joins
//! the reduced argument of the exponential `e^t = 2^n e^r`.

use super::exp::{exp_coefs, INV_FACT};
use super::log::ATANH_SERIES;
use super::{isa, ldexp, pow2i, split_exponent, two_sum, Real, Word};
use crate::kernels::iter::Run;

/// `x^y` for a positive finite `x` and a finite `y` (an infinite `y` gives
/// 0 or infinity here too), in float64 and rounded once.
#[inline(always)]
fn pow_f32_main(x: f32, y: f32) -> f32 {
    let (e, m) = split_exponent(x as f64);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let tail: &[f64; 5] = ATANH_SERIES.last_chunk().expect("five terms");
    let log_m = (s * z).mul_add(estrin(z, tail), 2.0 * s);
    let l = e.mul_add(std::f64::consts::LN_2, log_m);
    // Past these bounds the float32 result is 0 or infinite already.
    let t = (y as f64 * l).clamp(-110.0, 90.0);
    let n = (t * std::f64::consts::LOG2_E).rint();
    // |n| <= 160, so ln 2's rounding moves r by under 2^-46.
    let r = (-n).mul_add(std::f64::consts::LN_2, t);
    let cs: &[f64; 8] = INV_FACT.last_chunk().expect("eight terms");
    (estrin(r, cs) * pow2i(n)) as f32
}

/// `x^y` as C's `powf`: `x^0 = 1` and `1^y = 1` even for NaN, a negative
/// finite `x` with a non-integer `y` is NaN, a negative `x` with an odd
/// integer `y` gives a negative result (`-0` and `-inf` included), a zero
/// or infinite `|x|` gives 0 or infinity by the signs of `y` and of
/// `|x| - 1`, and the rest is [`pow_f32_main`] at `|x|`.
#[inline(always)]
pub(crate) fn pow_f32(x: f32, y: f32) -> f32 {
    let ax = x.abs();
    let finite = ax > 0.0 && ax < f32::INFINITY;
    let v = pow_f32_main(f32::pick(finite, ax, 1.0), y);
    let v = f32::pick(
        finite,
        v,
        f32::pick((y < 0.0) == (ax == 0.0), f32::INFINITY, 0.0),
    );
    let yd = y as f64;
    // Every float32 from 2^24 up is an even integer; below, rint is exact.
    let big = yd.abs() >= (1u32 << 24) as f64;
    let whole = yd.rint() == yd;
    let half = yd * 0.5;
    let odd = !big && whole && half.rint() != half;
    let int = big || whole;
    let r = f32::pick(x.is_sign_negative() && odd, -v, v);
    let r = f32::pick(x < 0.0 && x > f32::NEG_INFINITY && !int, f32::NAN, r);
    let r = f32::pick(x.nan() || y.nan(), f32::NAN, r);
    // (-1)^(+-inf) = 1, like 1^y.
    let one = x == 1.0 || y == 0.0 || (x == -1.0 && yd.abs() == f64::INFINITY);
    f32::pick(one, 1.0, r)
}

/// The polynomial with coefficients `cs` (highest degree first) at `x` by
/// Estrin's scheme: neighbouring coefficients combined with `x`, pairs of
/// those with `x^2`, then `x^4`, ..., so the dependent chain is about
/// `log2 N` steps long instead of `N` (the bodies are bound by latency,
/// not by the operations they issue).
#[inline(always)]
fn estrin<const N: usize>(x: f64, cs: &[f64; N]) -> f64 {
    let mut v = [0.0; N];
    for (i, &c) in cs.iter().rev().enumerate() {
        v[i] = c;
    }
    let (mut len, mut p) = (N, x);
    while len > 1 {
        let half = len / 2;
        for i in 0..half {
            v[i] = v[2 * i + 1].mul_add(p, v[2 * i]);
        }
        if len % 2 == 1 {
            v[half] = v[len - 1];
        }
        len -= half;
        p = p * p;
    }
    v[0]
}

/// `a * b` as the rounded product and its exact error.
#[inline(always)]
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// `a + b` as the rounded sum and its exact error, for `|a| >= |b|` (or `a`
/// zero).
#[inline(always)]
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `ln 2` as a head with 32 significant bits (so `e * LN2_HI` is exact
/// for every exponent here) and the rest.
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// `log x` for a positive finite `x`, as `(hi, lo)` with `hi + lo` within
/// about 2^-64 of `hi`'s size of the truth.
#[inline(always)]
fn log_parts(x: f64) -> (f64, f64) {
    let (e, m) = split_exponent(x);
    // s = f / d with f = m - 1 (exact) and d = 2 + f carried exactly in
    // two parts; s_lo is what rounding the quotient lost.
    let f = m - 1.0;
    let d = 2.0 + f;
    let d_lo = f - (d - 2.0);
    let sh = f / d;
    let (p, pe) = two_prod(sh, d);
    let sl = (((f - p) - pe) - sh * d_lo) / d;
    // 2 s^3 / 3 in two parts.
    let (s2, s2e) = two_prod(sh, sh);
    let (s3, s3e) = two_prod(s2, sh);
    let s3e = s3e + (s2e * sh + 3.0 * s2 * sl);
    // 2/3 rounded, and the rest of it.
    let (c3, c3_lo) = (2.0 / 3.0, 3.700_743_415_417_188e-17);
    let (t3, t3e) = two_prod(c3, s3);
    let t3e = t3e + (c3 * s3e + c3_lo * s3);
    // The series past the cube, rounded as one double.
    // log m's series past its cube, (log m - 2 s - 2 s^3/3) / s^5 in
    // z = s^2 (what it leaves out is below 2^-75 of log m for |s| <= 0.172).
    let tail = s3 * s2 * estrin(s2, ATANH_SERIES.first_chunk::<12>().expect("twelve terms"));
    // 2 s + t3 + the small parts, then e ln 2.
    let (a, ae) = fast_two_sum(2.0 * sh, t3);
    let small = ae + (2.0 * sl + (t3e + tail));
    let (b, be) = two_sum(e * LN2_HI, a);
    let lo = be + (small + e * LN2_LO);
    fast_two_sum(b, lo)
}

/// `x^y` for a positive finite `x` and a finite `y`, within about one ulp.
#[inline(always)]
fn pow_f64_main(x: f64, y: f64) -> f64 {
    let (lh, ll) = log_parts(x);
    // Past 2^64, |y log x| is beyond the range for every x other than 1
    // (which the callers patch), so clamping keeps the products finite.
    let big = 18_446_744_073_709_551_616.0;
    let yc = y.clamp(-big, big);
    let (ph, pe) = two_prod(yc, lh);
    let (th, tl) = fast_two_sum(ph, pe + yc * ll);
    // e^(th + tl) = 2^n e^r, r = (th - n ln2_hi) + (tl - n ln2_lo); the
    // first difference is exact.
    // Past the range (where tl may be large) e^t is 0 or infinite.
    let inside = th > -746.0 && th < 710.0;
    let tl = f64::pick(inside, tl, 0.0);
    let th = th.clamp(-746.0, 710.0);
    let n = (th * std::f64::consts::LOG2_E).rint();
    let r = (th - n * LN2_HI) + (tl - n * LN2_LO);
    // e^r = 1 + (r + r^2 (1/2 + r/6 + ...)), degree 13.
    let cs: &[f64; 12] = exp_coefs::<f64>().first_chunk().expect("fourteen terms");
    let q = r + (r * r) * estrin(r, cs);
    let v = ldexp(1.0 + q, n);
    // y = 1 and 2 exactly, as the blocks compute them for a scalar
    // exponent (at |x|: the sign is set by the callers).
    f64::pick(y == 1.0, x, f64::pick(y == 2.0, x * x, v))
}

/// `x^y` as C's `pow` (see [`pow_f32`] for the special cases), within
/// about one ulp.
#[inline(always)]
pub(crate) fn pow_f64(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    // Zeros, infinities and NaN go through the main path as 1 and are
    // replaced below.
    let finite = ax > 0.0 && ax < f64::INFINITY;
    let v = pow_f64_main(f64::pick(finite, ax, 1.0), y);
    // |x| = 0 or infinity: 0 or infinity by the sign of y and |x| < 1.
    let v = f64::pick(
        finite,
        v,
        f64::pick((y < 0.0) == (ax == 0.0), f64::INFINITY, 0.0),
    );
    // Every double from 2^52 up is an integer, and from 2^53 up even;
    // below, adding 2^52 rounds to an integer exactly.
    let (ay, two52) = (y.abs(), 4_503_599_627_370_496.0);
    let whole = ay >= two52 || (ay + two52) - two52 == ay;
    let half = ay * 0.5;
    let odd = whole && ay < 2.0 * two52 && (half + two52) - two52 != half;
    let r = f64::pick(x.is_sign_negative() && odd, -v, v);
    let r = f64::pick(x < 0.0 && x > f64::NEG_INFINITY && !whole, f64::NAN, r);
    let r = f64::pick(x.nan() || y.nan(), f64::NAN, r);
    let one = x == 1.0 || y == 0.0 || (x == -1.0 && ay == f64::INFINITY);
    f64::pick(one, 1.0, r)
}

/// Pairs per step of the loops: two or more vectors' worth, so their
/// dependent chains overlap.
const CHUNK: usize = 16;

/// One operand of a `pow` loop: a contiguous run or a single value.
trait Side<T>: Copy {
    /// The [`CHUNK`] values from index `k`.
    fn chunk(self, k: usize) -> [T; CHUNK];
    /// The value at index `i`.
    fn at(self, i: usize) -> T;
}

impl<T: Copy> Side<T> for &[T] {
    #[inline(always)]
    fn chunk(self, k: usize) -> [T; CHUNK] {
        self[k..k + CHUNK].try_into().expect("a whole chunk")
    }
    #[inline(always)]
    fn at(self, i: usize) -> T {
        self[i]
    }
}

/// A scalar operand.
#[derive(Clone, Copy)]
struct Splat<T>(T);

impl<T: Copy> Side<T> for Splat<T> {
    #[inline(always)]
    fn chunk(self, _: usize) -> [T; CHUNK] {
        [self.0; CHUNK]
    }
    #[inline(always)]
    fn at(self, _: usize) -> T {
        self.0
    }
}

/// Whether every pair takes the main path: bases positive and finite
/// (their bits less one are below the largest finite value's), exponents
/// finite. Maxima of the bits, so the test is a few vector operations.
#[inline(always)]
fn all_main<T: Real>(xs: &[T; CHUNK], ys: &[T; CHUNK]) -> bool {
    let inf = T::c(f64::INFINITY).to_bits();
    let abs = inf | (T::w(1) << T::MANT).wrapping_sub(T::w(1));
    let one = T::w(1);
    let mut mx = T::w(0);
    let mut my = T::w(0);
    for (x, y) in xs.iter().zip(ys) {
        mx = mx.max(x.to_bits().wrapping_sub(one));
        my = my.max(y.to_bits() & abs);
    }
    mx < inf.wrapping_sub(one) && my < inf
}

/// `out[i] = pow(x[i], y[i])`, [`CHUNK`] pairs at a time.
#[inline(always)]
fn pow_loop<T: PowElem>(out: &mut [T], x: impl Side<T>, y: impl Side<T>) {
    let whole = out.len() - out.len() % CHUNK;
    let (body, tail) = out.split_at_mut(whole);
    for (c, o) in body.chunks_exact_mut(CHUNK).enumerate() {
        let (xs, ys) = (x.chunk(c * CHUNK), y.chunk(c * CHUNK));
        if all_main(&xs, &ys) {
            for ((o, &x), &y) in o.iter_mut().zip(&xs).zip(&ys) {
                *o = x.pow_main(y);
            }
        } else {
            for ((o, &x), &y) in o.iter_mut().zip(&xs).zip(&ys) {
                *o = x.pow_elem(y);
            }
        }
    }
    for (i, o) in tail.iter_mut().enumerate() {
        *o = x.at(whole + i).pow_elem(y.at(whole + i));
    }
}

/// `out[i] = pow(a[i], b[i])` over one contiguous run, vectorised for the
/// CPU at hand.
pub(crate) fn pow_block<T: PowElem>(a: Run<'_, T>, b: Run<'_, T>, out: &mut [T]) {
    isa::dispatch(
        #[inline(always)]
        || match (a, b) {
            (Run::Slice(xs), Run::Slice(ys)) => pow_loop(out, xs, ys),
            // The common exponents as the exact operations torch also
            // uses for them (`x * x` is the correctly rounded square).
            (Run::Slice(xs), Run::Splat(y)) if y == T::c(2.0) => {
                for (o, &x) in out.iter_mut().zip(xs) {
                    *o = x * x;
                }
            }
            (Run::Slice(xs), Run::Splat(y)) if y == T::c(1.0) => out.copy_from_slice(xs),
            (Run::Slice(xs), Run::Splat(y)) => pow_loop(out, xs, Splat(y)),
            (Run::Splat(x), Run::Slice(ys)) => pow_loop(out, Splat(x), ys),
            (Run::Splat(x), Run::Splat(y)) => out.fill(x.pow_elem(y)),
        },
    );
}

/// Elementwise `pow` of a float type: the bodies above.
pub(crate) trait PowElem: Real {
    /// The whole body, for loops that [`isa::dispatch`] compiles.
    fn pow_elem(self, y: Self) -> Self;
    /// The main path alone: a positive finite base, a finite exponent.
    /// Gives the same bits as [`PowElem::pow_elem`] there.
    fn pow_main(self, y: Self) -> Self;
    /// One pair outside such a loop (strided operands, in-place `pow_`,
    /// scalar formulas), compiled for the CPU at hand: built for the
    /// baseline, the fused multiply-adds would be calls into the C library.
    #[inline(always)]
    fn pow_one(self, y: Self) -> Self {
        isa::dispatch(
            #[inline(always)]
            || self.pow_elem(y),
        )
    }
}

impl PowElem for f32 {
    #[inline(always)]
    fn pow_elem(self, y: f32) -> f32 {
        pow_f32(self, y)
    }
    #[inline(always)]
    fn pow_main(self, y: f32) -> f32 {
        pow_f32_main(self, y)
    }
}

impl PowElem for f64 {
    #[inline(always)]
    fn pow_elem(self, y: f64) -> f64 {
        pow_f64(self, y)
    }
    #[inline(always)]
    fn pow_main(self, y: f64) -> f64 {
        pow_f64_main(self, y)
    }
}
