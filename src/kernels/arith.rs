//! Element arithmetic the kernels share: wrapping for integers (torch's
//! two's complement arithmetic), IEEE for floats.

use crate::Element;

/// Integer-safe arithmetic: wrapping for integers, IEEE for floats.
pub trait Arith: Element {
    /// `a + b`.
    fn add(a: Self, b: Self) -> Self;
    /// `a - b`.
    fn sub(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn mul(a: Self, b: Self) -> Self;
}

macro_rules! arith_int {
    ($t:ty) => {
        impl Arith for $t {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a.wrapping_sub(b)
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
        }
    };
}
macro_rules! arith_float {
    ($t:ty) => {
        impl Arith for $t {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                a * b
            }
        }
    };
}
/// The 16-bit floats compute in float32 and round once.
macro_rules! arith_half {
    ($t:ty) => {
        impl Arith for $t {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const() + b.to_f32_const())
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const() - b.to_f32_const())
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                <$t>::from_f32_const(a.to_f32_const() * b.to_f32_const())
            }
        }
    };
}
arith_int!(u8);
arith_int!(i8);
arith_int!(i16);
arith_int!(i32);
arith_int!(i64);
arith_float!(f32);
arith_float!(f64);
arith_float!(crate::ComplexFloat);
arith_float!(crate::ComplexDouble);
arith_half!(half::f16);
arith_half!(half::bf16);
