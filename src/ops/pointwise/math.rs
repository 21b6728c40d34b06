//! Per-dtype scalar semantics of the pointwise ops.
//!
//! [`Num`] holds the operations whose meaning differs between integers and
//! floats (division flavours, remainders, powers, NaN-propagating
//! max/min, rounding). Integer versions never panic: they wrap on overflow
//! and return 0 for a zero divisor (callers reject zero divisors first, see
//! `check_divisor`). Float-only functions (exp, sin, erf, ...) need no
//! trait: their kernels (`crate::kernels::pointwise`) call the inherent
//! `f32`/`f64` methods on the concrete type that `dispatch_float!` binds.

pub use crate::kernels::pointwise::{erf, erfc};
use crate::ops::Arith;

/// Elementwise semantics shared by the numeric (non-bool) element types.
pub trait Num: Arith {
    /// `-a` (wrapping for integers: `-MIN == MIN`, as torch).
    fn negate(a: Self) -> Self;
    /// `|a|` (wrapping for integers).
    fn magnitude(a: Self) -> Self;
    /// -1, 0 or 1 (0 for NaN).
    fn sign(a: Self) -> Self;
    /// Quotient rounded toward zero.
    fn div_trunc(a: Self, b: Self) -> Self;
    /// Quotient rounded toward negative infinity (Python's `//`).
    fn floor_div(a: Self, b: Self) -> Self;
    /// Remainder with the sign of the divisor (Python's `%`).
    fn remainder(a: Self, b: Self) -> Self;
    /// Remainder with the sign of the dividend (C's `fmod`).
    fn fmod(a: Self, b: Self) -> Self;
    /// The larger of two values; NaN if either is NaN.
    fn max_nan(a: Self, b: Self) -> Self;
    /// The smaller of two values; NaN if either is NaN.
    fn min_nan(a: Self, b: Self) -> Self;
    /// `a` raised to `b`.
    fn power(a: Self, b: Self) -> Self;
    /// Rounding toward negative infinity (identity for integers).
    #[inline(always)]
    fn to_floor(a: Self) -> Self {
        a
    }
    /// Rounding toward positive infinity (identity for integers).
    #[inline(always)]
    fn to_ceil(a: Self) -> Self {
        a
    }
    /// Rounding toward zero (identity for integers).
    #[inline(always)]
    fn to_trunc(a: Self) -> Self {
        a
    }
    /// Rounding to nearest, ties to even (identity for integers).
    #[inline(always)]
    fn to_round(a: Self) -> Self {
        a
    }
    /// `max(a, 0)`, NaN staying NaN.
    #[inline(always)]
    fn relu(a: Self) -> Self {
        Self::max_nan(a, Self::zero())
    }
}

macro_rules! num_int {
    ($t:ty) => {
        impl Num for $t {
            #[inline(always)]
            fn negate(a: Self) -> Self {
                a.wrapping_neg()
            }
            #[inline(always)]
            fn magnitude(a: Self) -> Self {
                a.wrapping_abs()
            }
            #[inline(always)]
            fn sign(a: Self) -> Self {
                a.signum()
            }
            #[inline(always)]
            fn div_trunc(a: Self, b: Self) -> Self {
                if b == 0 {
                    0
                } else {
                    a.wrapping_div(b)
                }
            }
            #[inline(always)]
            fn floor_div(a: Self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                let q = a.wrapping_div(b);
                // Truncation rounded up when the exact quotient is negative
                // and not whole: step one down.
                if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
                    q.wrapping_sub(1)
                } else {
                    q
                }
            }
            #[inline(always)]
            fn remainder(a: Self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                let r = a.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) {
                    r.wrapping_add(b)
                } else {
                    r
                }
            }
            #[inline(always)]
            fn fmod(a: Self, b: Self) -> Self {
                if b == 0 {
                    0
                } else {
                    a.wrapping_rem(b)
                }
            }
            #[inline(always)]
            fn max_nan(a: Self, b: Self) -> Self {
                if a > b {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn min_nan(a: Self, b: Self) -> Self {
                if a < b {
                    a
                } else {
                    b
                }
            }
            fn power(a: Self, b: Self) -> Self {
                if b < 0 {
                    // 1 / a^|b| truncated: only bases 1 and -1 survive.
                    return match a {
                        1 => 1,
                        -1 if b % 2 == 0 => 1,
                        -1 => -1,
                        _ => 0,
                    };
                }
                // Square-and-multiply over the exponent's bits, wrapping.
                let (mut base, mut exp, mut acc): (Self, Self, Self) = (a, b, 1);
                while exp > 0 {
                    if exp & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    exp >>= 1;
                }
                acc
            }
        }
    };
}

macro_rules! num_float {
    ($t:ty) => {
        impl Num for $t {
            #[inline(always)]
            fn negate(a: Self) -> Self {
                -a
            }
            #[inline(always)]
            fn magnitude(a: Self) -> Self {
                a.abs()
            }
            #[inline(always)]
            fn sign(a: Self) -> Self {
                if a > 0.0 {
                    1.0
                } else if a < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            #[inline(always)]
            fn div_trunc(a: Self, b: Self) -> Self {
                (a / b).trunc()
            }
            fn floor_div(a: Self, b: Self) -> Self {
                if b == 0.0 {
                    return a / b;
                }
                // Work from the exact remainder so that e.g. 1 // 0.1 is 9
                // (as Python), not floor(1 / 0.1) == 10.
                let m = a % b;
                let mut d = (a - m) / b;
                if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
                    d -= 1.0;
                }
                if d == 0.0 {
                    return (0.0 as $t).copysign(a / b);
                }
                let f = d.floor();
                if d - f > 0.5 {
                    f + 1.0
                } else {
                    f
                }
            }
            #[inline(always)]
            fn remainder(a: Self, b: Self) -> Self {
                let m = a % b;
                if m != 0.0 && ((m < 0.0) != (b < 0.0)) {
                    m + b
                } else if m == 0.0 {
                    (0.0 as $t).copysign(b)
                } else {
                    m
                }
            }
            #[inline(always)]
            fn fmod(a: Self, b: Self) -> Self {
                a % b
            }
            #[inline(always)]
            fn max_nan(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() {
                    <$t>::NAN
                } else if a > b {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn min_nan(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() {
                    <$t>::NAN
                } else if a < b {
                    a
                } else {
                    b
                }
            }
            #[inline(always)]
            fn power(a: Self, b: Self) -> Self {
                crate::kernels::vmath::PowElem::pow_one(a, b)
            }
            #[inline(always)]
            fn to_floor(a: Self) -> Self {
                a.floor()
            }
            #[inline(always)]
            fn to_ceil(a: Self) -> Self {
                a.ceil()
            }
            #[inline(always)]
            fn to_trunc(a: Self) -> Self {
                a.trunc()
            }
            #[inline(always)]
            fn to_round(a: Self) -> Self {
                a.round_ties_even()
            }
        }
    };
}

/// uint8: no negative values, so signs, magnitudes and rounding-mode
/// corrections are trivial; negation wraps as torch's does.
impl Num for u8 {
    #[inline(always)]
    fn negate(a: Self) -> Self {
        a.wrapping_neg()
    }
    #[inline(always)]
    fn magnitude(a: Self) -> Self {
        a
    }
    #[inline(always)]
    fn sign(a: Self) -> Self {
        (a > 0) as u8
    }
    #[inline(always)]
    fn div_trunc(a: Self, b: Self) -> Self {
        a.checked_div(b).unwrap_or(0)
    }
    #[inline(always)]
    fn floor_div(a: Self, b: Self) -> Self {
        a.checked_div(b).unwrap_or(0)
    }
    #[inline(always)]
    fn remainder(a: Self, b: Self) -> Self {
        a.checked_rem(b).unwrap_or(0)
    }
    #[inline(always)]
    fn fmod(a: Self, b: Self) -> Self {
        a.checked_rem(b).unwrap_or(0)
    }
    #[inline(always)]
    fn max_nan(a: Self, b: Self) -> Self {
        a.max(b)
    }
    #[inline(always)]
    fn min_nan(a: Self, b: Self) -> Self {
        a.min(b)
    }
    fn power(a: Self, b: Self) -> Self {
        a.wrapping_pow(b as u32)
    }
}

/// The 16-bit floats: each function widens to float32, computes there and
/// rounds its result once.
macro_rules! num_half {
    ($t:ty) => {
        impl Num for $t {
            #[inline(always)]
            fn negate(a: Self) -> Self {
                -a
            }
            #[inline(always)]
            fn magnitude(a: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const().abs())
            }
            #[inline(always)]
            fn sign(a: Self) -> Self {
                <$t>::from_f32_const(<f32 as Num>::sign(a.to_f32_const()))
            }
            #[inline(always)]
            fn div_trunc(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(<f32 as Num>::div_trunc(a.to_f32_const(), b.to_f32_const()))
            }
            #[inline(always)]
            fn floor_div(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(<f32 as Num>::floor_div(a.to_f32_const(), b.to_f32_const()))
            }
            #[inline(always)]
            fn remainder(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(<f32 as Num>::remainder(a.to_f32_const(), b.to_f32_const()))
            }
            #[inline(always)]
            fn fmod(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const() % b.to_f32_const())
            }
            #[inline(always)]
            fn max_nan(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(<f32 as Num>::max_nan(a.to_f32_const(), b.to_f32_const()))
            }
            #[inline(always)]
            fn min_nan(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(<f32 as Num>::min_nan(a.to_f32_const(), b.to_f32_const()))
            }
            #[inline(always)]
            fn power(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(<f32 as Num>::power(a.to_f32_const(), b.to_f32_const()))
            }
            #[inline(always)]
            fn to_floor(a: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const().floor())
            }
            #[inline(always)]
            fn to_ceil(a: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const().ceil())
            }
            #[inline(always)]
            fn to_trunc(a: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const().trunc())
            }
            #[inline(always)]
            fn to_round(a: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const().round_ties_even())
            }
        }
    };
}

num_int!(i8);
num_int!(i16);
num_int!(i32);
num_int!(i64);
num_float!(f32);
num_float!(f64);
num_half!(half::f16);
num_half!(half::bf16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_follows_python_signs() {
        assert_eq!(<i64 as Num>::floor_div(-7, 2), -4);
        assert_eq!(<i64 as Num>::remainder(-7, 2), 1);
        assert_eq!(<i64 as Num>::remainder(7, -2), -1);
        assert_eq!(<i64 as Num>::fmod(-7, 2), -1);
        assert_eq!(<i64 as Num>::div_trunc(-7, 2), -3);
        assert_eq!(<i32 as Num>::floor_div(i32::MIN, -1), i32::MIN);
        assert_eq!(<i64 as Num>::power(3, 4), 81);
        assert_eq!(<i64 as Num>::power(-1, -3), -1);
        assert_eq!(<f64 as Num>::floor_div(1.0, 0.1), 9.0);
        assert_eq!(<f64 as Num>::remainder(-1.0, 3.0), 2.0);
    }
}
