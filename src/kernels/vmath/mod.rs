//! Vectorised math: the float unary functions as branch-free element
//! bodies that the compiler turns into vector code, run over slices
//! through [`isa::dispatch`](super::isa::dispatch).
//!
//! Each function is a [`Unary`] kernel: a `fast` body with no branches and
//! no calls (range reduction, a polynomial, exponent arithmetic on the
//! bits, selects for the special values), and optionally a `slow` scalar
//! path for the inputs the fast body does not cover (for example sine of
//! an argument too large for its range reduction). [`run`] computes a
//! slice with `fast` and then patches the few elements that need `slow`.
//!
//! The bodies are generic over [`Real`] (float32, float64). Polynomials
//! are truncated Taylor series (or series derived from them) with exact
//! rational coefficients (erfc's tail and the float32 bodies' series,
//! fitted, are the exceptions: see `erf.rs`, `exp.rs`, `log.rs`,
//! `trig.rs`), evaluated by
//! Horner's rule with plain multiplies and adds, so every instruction-set
//! path gives the same bits. The float32 bodies of `exp`, `log`, `sin`,
//! `cos`, `sigmoid` and `tanh` are written once over [`lanes::Lanes`]
//! with fused multiply-adds instead (exact operations, so still the same
//! bits everywhere, through libm's `fmaf` on CPUs without FMA), and run
//! sixteen lanes at a time on AVX-512 (`Unary::simd`), where rounding,
//! scaling by `2^n` and splitting off the exponent are one instruction
//! each and compute the
//! same values. Accuracy is tested against float64 (for float32) and the platform's libm (for
//! float64) within 2 ulp, in `tests.rs`.

mod erf;
mod exp;
mod lanes;
mod log;
mod pow;
mod scalar;
mod simple;
#[cfg(test)]
mod tests;
mod trig;

pub use erf::{erf, erfc};
pub(crate) use erf::{Erf, Erfc};
pub(crate) use exp::{Cosh, Exp, Exp2, Expm1, Sigmoid, Sinh, Tanh};
pub(crate) use log::{Acosh, Asinh, Atanh, Log, Log10, Log1p, Log2};
pub(crate) use pow::{pow_block, PowElem};
pub(crate) use scalar::{
    AiryAi, BesselJ0, BesselJ1, BesselY0, BesselY1, Digamma, Entr, Erfcx, Erfinv, I0e, I1e, K0e,
    K1e, Lgamma, LogNdtr, Ndtr, Ndtri, Sinc, SphericalBesselJ0, I0, I1, K0, K1,
};
pub(crate) use simple::{Reciprocal, Rsqrt, Sqrt};
pub(crate) use trig::{Acos, Asin, Atan, Cos, Sin, Tan};

use super::isa;
use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Shl, Shr, Sub};

/// The unsigned integer with a float's bits.
pub(crate) trait Word:
    Copy
    + Ord
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    fn wrapping_add(self, o: Self) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
}

macro_rules! impl_word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn wrapping_add(self, o: Self) -> Self {
                <$t>::wrapping_add(self, o)
            }
            #[inline(always)]
            fn wrapping_sub(self, o: Self) -> Self {
                <$t>::wrapping_sub(self, o)
            }
        }
    )*};
}
impl_word!(u32, u64);

/// A float element type as the math kernels see it: arithmetic, its bits,
/// and the format's parameters.
pub(crate) trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Send
    + Sync
    + 'static
{
    type Bits: Word;
    /// Stored mantissa bits (23, 52).
    const MANT: u32;
    /// Exponent bias (127, 1023).
    const BIAS: u32;
    /// Whether this is float64's format (ranges and thresholds).
    const WIDE: bool;
    /// Whether results need float64's precision (series lengths).
    const LONG: bool;

    /// `v` rounded to this type (constants fold at compile time).
    fn c(v: f64) -> Self;
    /// An unsigned integer constant as bits.
    fn w(v: u64) -> Self::Bits;
    fn to_bits(self) -> Self::Bits;
    fn from_bits(b: Self::Bits) -> Self;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;

    /// `self + k * b` rounded as the tensor ops' `alpha=` forms round it
    /// (see [`crate::kernels::arith::Arith::add_scaled`]).
    #[inline(always)]
    fn plus_scaled(self, k: Self, b: Self) -> Self {
        self + k * b
    }

    /// `a` if `c` else `b`, without a branch.
    #[inline(always)]
    fn pick(c: bool, a: Self, b: Self) -> Self {
        if c {
            a
        } else {
            b
        }
    }

    /// Whether `self` is NaN.
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn nan(self) -> bool {
        self != self
    }

    /// `self` with the sign of `s`.
    #[inline(always)]
    fn with_sign_of(self, s: Self) -> Self {
        Self::from_bits(self.abs().to_bits() | (s.to_bits() & sign_bit::<Self>()))
    }

    /// Rounds to the nearest integer (ties to even) for `|self| < 2^(MANT-1)`,
    /// by adding and subtracting 1.5 * 2^MANT.
    #[inline(always)]
    fn rint(self) -> Self {
        let m = magic::<Self>();
        (self + m) - m
    }
}

/// Bits with only the sign set.
#[inline(always)]
fn sign_bit<T: Real>() -> T::Bits {
    T::w(1) << (T::MANT + 8 + if T::WIDE { 3 } else { 0 })
}

/// 1.5 * 2^MANT: adding it leaves an integer-valued float's value in the
/// low mantissa bits.
#[inline(always)]
fn magic<T: Real>() -> T {
    T::c(1.5 * (1u64 << T::MANT) as f64)
}

macro_rules! impl_real {
    ($t:ty, $bits:ty, $mant:expr, $bias:expr, $wide:expr) => {
        impl Real for $t {
            type Bits = $bits;
            const MANT: u32 = $mant;
            const BIAS: u32 = $bias;
            const WIDE: bool = $wide;
            const LONG: bool = $wide;
            #[inline(always)]
            fn c(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn w(v: u64) -> $bits {
                v as $bits
            }
            #[inline(always)]
            fn to_bits(self) -> $bits {
                <$t>::to_bits(self)
            }
            #[inline(always)]
            fn from_bits(b: $bits) -> Self {
                <$t>::from_bits(b)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn plus_scaled(self, k: Self, b: Self) -> Self {
                <$t as crate::kernels::arith::Arith>::add_scaled(self, k, b)
            }
        }
    };
}
impl_real!(f32, u32, 23, 127, false);
impl_real!(f64, u64, 52, 1023, true);

/// float64 arithmetic with float32's series lengths. A float32 function
/// whose formula chains several rounded steps runs in it and rounds once
/// at the end, which keeps it well within 2 ulp.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub(crate) struct F64s(pub(crate) f64);

macro_rules! f64s_ops {
    ($($tr:ident $m:ident $op:tt),*) => {$(
        impl $tr for F64s {
            type Output = F64s;
            #[inline(always)]
            fn $m(self, o: F64s) -> F64s {
                F64s(self.0 $op o.0)
            }
        }
    )*};
}
f64s_ops!(Add add +, Sub sub -, Mul mul *, Div div /);

impl Neg for F64s {
    type Output = F64s;
    #[inline(always)]
    fn neg(self) -> F64s {
        F64s(-self.0)
    }
}

impl Real for F64s {
    type Bits = u64;
    const MANT: u32 = 52;
    const BIAS: u32 = 1023;
    const WIDE: bool = true;
    const LONG: bool = false;
    #[inline(always)]
    fn c(v: f64) -> Self {
        F64s(v)
    }
    #[inline(always)]
    fn w(v: u64) -> u64 {
        v
    }
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self.0.to_bits()
    }
    #[inline(always)]
    fn from_bits(b: u64) -> Self {
        F64s(f64::from_bits(b))
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F64s(self.0.abs())
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F64s(self.0.sqrt())
    }
}

/// Implements [`Unary`] for a kernel type from a generic body `f`: for
/// every float type, with `f32 via f64` for float32 through [`F64s`], or
/// with `f64 only` when float32 has a body of its own.
macro_rules! unary {
    ($k:ident => $f:ident) => {
        impl<T: $crate::kernels::vmath::Real> $crate::kernels::vmath::Unary<T> for $k {
            #[inline(always)]
            fn fast(x: T) -> T {
                $f(x)
            }
        }
    };
    ($k:ident => $f:ident, f64 only) => {
        impl $crate::kernels::vmath::Unary<f64> for $k {
            #[inline(always)]
            fn fast(x: f64) -> f64 {
                $f(x)
            }
        }
    };
    ($k:ident => $f:ident, f32 via f64) => {
        impl $crate::kernels::vmath::Unary<f32> for $k {
            #[inline(always)]
            fn fast(x: f32) -> f32 {
                $f($crate::kernels::vmath::F64s(x as f64)).0 as f32
            }
        }
        impl $crate::kernels::vmath::Unary<f64> for $k {
            #[inline(always)]
            fn fast(x: f64) -> f64 {
                $f(x)
            }
        }
    };
}
pub(crate) use unary;

/// `2^n` for an integer-valued `n` in the normal exponent range
/// `[1 - BIAS, BIAS]`, built from its bits.
#[inline(always)]
pub(crate) fn pow2i<T: Real>(n: T) -> T {
    let m = magic::<T>();
    let k = (n + m).to_bits().wrapping_sub(m.to_bits());
    T::from_bits(k.wrapping_add(T::w(T::BIAS as u64)) << T::MANT)
}

/// `p * 2^n` for an integer-valued `n` in `[2 - 2 BIAS, 2 BIAS]`, rounded
/// once (into the subnormals or to infinity when the result lands there):
/// the scale is applied in two normal halves.
#[inline(always)]
pub(crate) fn ldexp<T: Real>(p: T, n: T) -> T {
    let n1 = (n * T::c(0.5)).rint();
    let n2 = n - n1;
    p * pow2i(n1) * pow2i(n2)
}

/// Splits a positive finite `x` into `(e, m)` with `x = 2^e * m`, `m` in
/// `[sqrt(1/2), sqrt(2))` and `e` an integer-valued float. Subnormal
/// inputs are scaled into the normal range first.
#[inline(always)]
pub(crate) fn split_exponent<T: Real>(x: T) -> (T, T) {
    let tiny = x < T::c(min_normal::<T>());
    let up = T::c((1u64 << (T::MANT + 1)) as f64);
    let x = T::pick(tiny, x * up, x);
    let bits = x.to_bits();
    // Exponent field, and the mantissa with the exponent of 1.0.
    let mant_mask = (T::w(1) << T::MANT).wrapping_sub(T::w(1));
    let one = T::c(1.0).to_bits();
    let m = T::from_bits((bits & mant_mask) | one);
    let field = bits >> T::MANT;
    // field as a float: put it in the low bits of 2^MANT's mantissa.
    let two_m = T::c((1u64 << T::MANT) as f64);
    let e = T::from_bits(two_m.to_bits() | field) - two_m - T::c(T::BIAS as f64);
    let e = T::pick(tiny, e - T::c((T::MANT + 1) as f64), e);
    // Move m from [1, 2) to [sqrt(1/2), sqrt(2)).
    let big = m > T::c(std::f64::consts::SQRT_2);
    (
        T::pick(big, e + T::c(1.0), e),
        T::pick(big, m * T::c(0.5), m),
    )
}

/// The smallest positive normal value.
#[inline(always)]
fn min_normal<T: Real>() -> f64 {
    if T::WIDE {
        f64::MIN_POSITIVE
    } else {
        f32::MIN_POSITIVE as f64
    }
}

/// Horner's rule over `cs` (highest degree first).
#[inline(always)]
pub(crate) fn horner<T: Real>(x: T, cs: &[f64]) -> T {
    let mut acc = T::c(cs[0]);
    for &c in &cs[1..] {
        acc = acc * x + T::c(c);
    }
    acc
}

/// `a * b` exactly, as the rounded product and its error (Dekker's
/// product: each factor split into halves whose products are exact).
/// Needs `|a|`, `|b|` below about `2^-27` of the largest float so the
/// split does not overflow, and products above the subnormals.
#[inline(always)]
pub(crate) fn two_prod<T: Real>(a: T, b: T) -> (T, T) {
    let p = a * b;
    let (ah, al) = split_half(a);
    let (bh, bl) = split_half(b);
    (p, (((ah * bh - p) + ah * bl) + al * bh) + al * bl)
}

/// `a` as `h + l` with each part at most half the mantissa wide.
#[inline(always)]
fn split_half<T: Real>(a: T) -> (T, T) {
    let c = T::c(((1u64 << ((T::MANT + 2) / 2)) + 1) as f64) * a;
    let h = c - (c - a);
    (h, a - h)
}

/// `a + b` exactly, as the rounded sum and its error (Knuth's two-sum,
/// no condition on the magnitudes).
#[inline(always)]
pub(crate) fn two_sum<T: Real>(a: T, b: T) -> (T, T) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// A unary math function over one float type.
pub(crate) trait Unary<T: Real> {
    /// The branch-free body; exact for every input where [`Unary::needs_slow`]
    /// is false.
    fn fast(x: T) -> T;
    /// Whether some inputs need [`Unary::slow`].
    const HAS_SLOW: bool = false;
    /// Whether `x` needs [`Unary::slow`].
    #[inline(always)]
    fn needs_slow(_x: T) -> bool {
        false
    }
    /// The scalar path for the inputs `fast` does not cover.
    #[inline(always)]
    fn slow(x: T) -> T {
        x
    }
    /// Computes `dst[i] = fast(src[i])` for `i < n` with a hand-written
    /// vector form for the CPU at hand, giving the same bits as `fast`;
    /// false (nothing written) where the kernel has none. `src` may equal
    /// `dst` (in place).
    ///
    /// # Safety
    /// `src` is valid for reads and `dst` for writes of `n` elements.
    #[inline(always)]
    unsafe fn simd(_src: *const T, _dst: *mut T, _n: usize) -> bool {
        false
    }
    /// One element, taking whichever path it needs.
    #[inline(always)]
    fn eval(x: T) -> T {
        if Self::HAS_SLOW && Self::needs_slow(x) {
            Self::slow(x)
        } else {
            Self::fast(x)
        }
    }
}

/// `dst[i] = K(src[i])`, vectorised for the CPU at hand.
#[inline(always)]
pub(crate) fn run<T: Real, K: Unary<T>>(src: &[T], dst: &mut [T]) {
    debug_assert_eq!(src.len(), dst.len());
    // SAFETY: both slices hold `src.len()` elements.
    if unsafe { K::simd(src.as_ptr(), dst.as_mut_ptr(), src.len()) } {
        return;
    }
    isa::dispatch(
        #[inline(always)]
        || {
            for (o, &x) in dst.iter_mut().zip(src) {
                *o = K::fast(x);
            }
        },
    );
    if K::HAS_SLOW {
        for (o, &x) in dst.iter_mut().zip(src) {
            if K::needs_slow(x) {
                *o = K::slow(x);
            }
        }
    }
}

/// `buf[i] = K(buf[i])` in place.
#[inline(always)]
pub(crate) fn run_in_place<T: Real + Default, K: Unary<T>>(buf: &mut [T]) {
    if !K::HAS_SLOW {
        // SAFETY: `buf` is valid for reads and writes of its length.
        if unsafe { K::simd(buf.as_ptr(), buf.as_mut_ptr(), buf.len()) } {
            return;
        }
        isa::dispatch(
            #[inline(always)]
            || {
                for v in buf.iter_mut() {
                    *v = K::fast(*v);
                }
            },
        );
        return;
    }
    // The slow path needs the inputs after `fast` overwrote them: keep a
    // block's inputs on the stack.
    const BLOCK: usize = 256;
    let mut tmp = [T::default(); BLOCK];
    for chunk in buf.chunks_mut(BLOCK) {
        let src = &mut tmp[..chunk.len()];
        src.copy_from_slice(chunk);
        run::<T, K>(src, chunk);
    }
}
