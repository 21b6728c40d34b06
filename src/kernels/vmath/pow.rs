//! float32 `pow`: `x^y = e^(y log |x|)` computed in float64 and rounded
//! once, with C's `powf` special cases as selects.
//!
//! float64's log is accurate to about 2^-52, so `y log |x|` is within
//! 2^-44 of the truth wherever the result is a finite float32 other
//! than zero, and the float64 exponential (float32's series length)
//! adds about 2^-27: together far below half a float32 ulp. float64 `pow`
//! stays on the platform's `pow`, which would need a log carried beyond
//! float64 to match.

use super::exp::exp;
use super::log::log;
use super::{isa, F64s, Real};
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

/// `out[i] = pow(a[i], b[i])` over one contiguous run, vectorised for the
/// CPU at hand.
pub(crate) fn pow_f32_block(a: Run<'_, f32>, b: Run<'_, f32>, out: &mut [f32]) {
    isa::dispatch(
        #[inline(always)]
        || match (a, b) {
            (Run::Slice(xs), Run::Slice(ys)) => {
                for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
                    *o = pow_f32(x, y);
                }
            }
            // The common exponents as the exact operations torch also
            // uses for them (`x * x` is the correctly rounded square).
            (Run::Slice(xs), Run::Splat(2.0)) => {
                for (o, &x) in out.iter_mut().zip(xs) {
                    *o = x * x;
                }
            }
            (Run::Slice(xs), Run::Splat(1.0)) => out.copy_from_slice(xs),
            (Run::Slice(xs), Run::Splat(y)) => {
                for (o, &x) in out.iter_mut().zip(xs) {
                    *o = pow_f32(x, y);
                }
            }
            (Run::Splat(x), Run::Slice(ys)) => {
                for (o, &y) in out.iter_mut().zip(ys) {
                    *o = pow_f32(x, y);
                }
            }
            (Run::Splat(x), Run::Splat(y)) => out.fill(pow_f32(x, y)),
        },
    );
}

/// Elementwise `pow` of a float type: the vectorised body for float32,
/// the platform's `pow` for float64.
pub(crate) trait PowElem {
    fn pow_elem(self, y: Self) -> Self;
}

impl PowElem for f32 {
    #[inline(always)]
    fn pow_elem(self, y: f32) -> f32 {
        pow_f32(self, y)
    }
}

impl PowElem for f64 {
    #[inline(always)]
    fn pow_elem(self, y: f64) -> f64 {
        self.powf(y)
    }
}
