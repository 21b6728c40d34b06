//! `pow`: float32's `x^y = e^(y log |x|)` computed in float64 and rounded
//! once; float64's with `log |x|` and `y log |x|` carried in two parts.
//! Both take C's `pow` special cases as selects.
//!
//! float32: float64's log is accurate to about 2^-52, so `y log |x|` is
//! within 2^-44 of the truth wherever the result is a finite float32 other
//! than zero, and the float64 exponential (float32's series length) adds
//! about 2^-27: together far below half a float32 ulp.
//!
//! float64: an error `d` in `t = y log |x|` is a relative error `d` in
//! `e^t`, and `|t|` reaches 745 before the result leaves the format, so
//! `log |x|` must be good to about 2^-64 of itself. It is `e ln 2 + log m`
//! (`m` in `[sqrt(1/2), sqrt(2))`) with `log m = 2 atanh s`,
//! `s = (m - 1)/(m + 1)`: the terms `2 s` and `2 s^3/3` are carried as
//! sums of two doubles (fused multiply-adds give the products' errors)
//! and only the rest of the series, below 2^-12 of the total, is rounded
//! as a double. `t` is formed the same way, and its low part joins the
//! reduced argument of the exponential `e^t = 2^n e^r`.

use super::exp::{exp, exp_coefs};
use super::log::{log, ATANH_SERIES};
use super::{isa, ldexp, split_exponent, two_sum, F64s, Real};
use crate::kernels::iter::Run;

/// `x^y` as C's `powf`: `x^0 = 1` and `1^y = 1` even for NaN, a negative
/// finite `x` with a non-integer `y` is NaN, a negative `x` with an odd
/// integer `y` gives a negative result (`-0` and `-inf` included), and
/// the rest follow from `e^(y log |x|)` with `log 0 = -inf`.
#[inline(always)]
pub(crate) fn pow_f32(x: f32, y: f32) -> f32 {
    let (xd, yd) = (x as f64, y as f64);
    let l = log(xd.abs());
    let v = exp(F64s(yd * l)).0 as f32;
    // Every float32 from 2^24 up is an even integer; below, rint is exact.
    let big = yd.abs() >= (1u32 << 24) as f64;
    let whole = yd.rint() == yd;
    let half = yd * 0.5;
    let odd = !big && whole && half.rint() != half;
    let int = big || whole;
    let r = f32::pick(x.is_sign_negative() && odd, -v, v);
    let r = f32::pick(x < 0.0 && x > f32::NEG_INFINITY && !int, f32::NAN, r);
    // (-1)^(+-inf) = 1, like 1^y.
    let one = x == 1.0 || y == 0.0 || (x == -1.0 && yd.abs() == f64::INFINITY);
    f32::pick(one, 1.0, r)
}

/// The polynomial of degree 11 with coefficients `cs` (highest degree
/// first) at `x` by Estrin's scheme: pairs of coefficients combined with
/// `x`, pairs of those with `x^2`, then `x^4` and `x^8`, so the dependent
/// chain is four steps long instead of eleven (the body is bound by
/// latency, not by the operations it issues).
#[inline(always)]
fn estrin12(x: f64, cs: &[f64]) -> f64 {
    let c = |i: usize| cs[11 - i];
    let (x2, x4) = (x * x, x * x * (x * x));
    let x8 = x4 * x4;
    let q0 = (c(0) + c(1) * x) + (c(2) + c(3) * x) * x2;
    let q1 = (c(4) + c(5) * x) + (c(6) + c(7) * x) * x2;
    let q2 = (c(8) + c(9) * x) + (c(10) + c(11) * x) * x2;
    (q0 + q1 * x4) + q2 * x8
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
    let tail = s3 * s2 * estrin12(s2, &ATANH_SERIES[..12]);
    // 2 s + t3 + the small parts, then e ln 2.
    let (a, ae) = fast_two_sum(2.0 * sh, t3);
    let small = ae + (2.0 * sl + (t3e + tail));
    let (b, be) = two_sum(e * LN2_HI, a);
    let lo = be + (small + e * LN2_LO);
    fast_two_sum(b, lo)
}

/// `x^y` as C's `pow` (see [`pow_f32`] for the special cases), within
/// about one ulp.
#[inline(always)]
pub(crate) fn pow_f64(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    // Zeros, infinities and NaN go through the series as 1 and are
    // replaced below.
    let finite = ax > 0.0 && ax < f64::INFINITY;
    let (lh, ll) = log_parts(f64::pick(finite, ax, 1.0));
    // Past 2^64, |y log |x|| is beyond the range for every x other than
    // 1 (patched below), so clamping keeps the products finite.
    let big = 18_446_744_073_709_551_616.0;
    let yc = f64::pick(y > big, big, f64::pick(y < -big, -big, y));
    let (ph, pe) = two_prod(yc, lh);
    let (th, tl) = fast_two_sum(ph, pe + yc * ll);
    // e^(th + tl) = 2^n e^r, r = (th - n ln2_hi) + (tl - n ln2_lo); the
    // first difference is exact.
    // Past the range (where tl may be large) e^t is 0 or infinite.
    let inside = th > -746.0 && th < 710.0;
    let tl = f64::pick(inside, tl, 0.0);
    let th = f64::pick(th < -746.0, -746.0, f64::pick(th > 710.0, 710.0, th));
    let n = (th * std::f64::consts::LOG2_E).rint();
    let r = (th - n * LN2_HI) + (tl - n * LN2_LO);
    // e^r = 1 + (r + r^2 (1/2 + r/6 + ...)), degree 13.
    let cs = exp_coefs::<f64>();
    let q = r + (r * r) * estrin12(r, &cs[..cs.len() - 2]);
    let v = ldexp(1.0 + q, n);
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
    // y = 1 and 2 exactly, as the blocks compute them for a scalar exponent.
    let r = f64::pick(y == 1.0, x, f64::pick(y == 2.0, x * x, r));
    let one = x == 1.0 || y == 0.0 || (x == -1.0 && ay == f64::INFINITY);
    f64::pick(one, 1.0, r)
}

/// `out[i] = pow(a[i], b[i])` over one contiguous run, vectorised for the
/// CPU at hand.
pub(crate) fn pow_block<T: PowElem>(a: Run<'_, T>, b: Run<'_, T>, out: &mut [T]) {
    isa::dispatch(
        #[inline(always)]
        || match (a, b) {
            (Run::Slice(xs), Run::Slice(ys)) => {
                // Two vectors' worth at a time, so their chains overlap.
                let (oc, xc, yc) = (
                    out.chunks_exact_mut(16),
                    xs.chunks_exact(16),
                    ys.chunks_exact(16),
                );
                let tail = xc.remainder().len();
                for ((o, x), y) in oc.zip(xc).zip(yc) {
                    for j in 0..16 {
                        o[j] = x[j].pow_elem(y[j]);
                    }
                }
                let k = out.len() - tail;
                for ((o, &x), &y) in out[k..].iter_mut().zip(&xs[k..]).zip(&ys[k..]) {
                    *o = x.pow_elem(y);
                }
            }
            // The common exponents as the exact operations torch also
            // uses for them (`x * x` is the correctly rounded square).
            (Run::Slice(xs), Run::Splat(y)) if y == T::c(2.0) => {
                for (o, &x) in out.iter_mut().zip(xs) {
                    *o = x * x;
                }
            }
            (Run::Slice(xs), Run::Splat(y)) if y == T::c(1.0) => out.copy_from_slice(xs),
            (Run::Slice(xs), Run::Splat(y)) => {
                for (o, &x) in out.iter_mut().zip(xs) {
                    *o = x.pow_elem(y);
                }
            }
            (Run::Splat(x), Run::Slice(ys)) => {
                for (o, &y) in out.iter_mut().zip(ys) {
                    *o = x.pow_elem(y);
                }
            }
            (Run::Splat(x), Run::Splat(y)) => out.fill(x.pow_elem(y)),
        },
    );
}

/// Elementwise `pow` of a float type: the bodies above.
pub(crate) trait PowElem: Real {
    /// The body, for loops that [`isa::dispatch`] compiles.
    fn pow_elem(self, y: Self) -> Self;
    /// One pair outside such a loop (strided operands, in-place `pow_`,
    /// scalar formulas).
    fn pow_one(self, y: Self) -> Self;
}

impl PowElem for f32 {
    #[inline(always)]
    fn pow_elem(self, y: f32) -> f32 {
        pow_f32(self, y)
    }
    #[inline(always)]
    fn pow_one(self, y: f32) -> f32 {
        pow_f32(self, y)
    }
}

impl PowElem for f64 {
    #[inline(always)]
    fn pow_elem(self, y: f64) -> f64 {
        pow_f64(self, y)
    }
    /// Compiled for the CPU at hand: built for the baseline, the fused
    /// multiply-adds would be calls into the C library.
    #[inline(always)]
    fn pow_one(self, y: f64) -> f64 {
        isa::dispatch(
            #[inline(always)]
            || pow_f64(self, y),
        )
    }
}
