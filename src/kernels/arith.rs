//! Element arithmetic the kernels share: wrapping for integers (torch's
//! two's complement arithmetic), IEEE for floats.

use crate::Element;

/// Integer-safe arithmetic: wrapping for integers, IEEE for floats.
pub trait Arith: Element {
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
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
arith_int!(i32);
arith_int!(i64);
arith_float!(f32);
arith_float!(f64);
