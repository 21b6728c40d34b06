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
    /// `a + k * b` (the `alpha=` forms), as torch's fused multiply-add
    /// gives it for the dtype: float32 and the 16-bit floats round the
    /// exact value once to float32 (the product of two float32 values is
    /// exact in float64).
    #[inline(always)]
    fn add_scaled(a: Self, k: Self, b: Self) -> Self {
        Self::add(a, Self::mul(k, b))
    }
    /// `a - k * b`, rounded as [`Arith::add_scaled`] rounds.
    #[inline(always)]
    fn sub_scaled(a: Self, k: Self, b: Self) -> Self {
        Self::sub(a, Self::mul(k, b))
    }
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
/// IEEE arithmetic; with `wide`, the `alpha=` forms compute in that wider
/// type and round once.
macro_rules! arith_float {
    ($t:ty $(, wide $w:ty)?) => {
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
            $(
                #[inline(always)]
                fn add_scaled(a: Self, k: Self, b: Self) -> Self {
                    (a as $w + k as $w * b as $w) as $t
                }
                #[inline(always)]
                fn sub_scaled(a: Self, k: Self, b: Self) -> Self {
                    (a as $w - k as $w * b as $w) as $t
                }
            )?
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
            #[inline(always)]
            fn add_scaled(a: Self, k: Self, b: Self) -> Self {
                let (a, k, b) = (a.to_f32_const(), k.to_f32_const(), b.to_f32_const());
                <$t>::from_f32_const(f32::add_scaled(a, k, b))
            }
            #[inline(always)]
            fn sub_scaled(a: Self, k: Self, b: Self) -> Self {
                let (a, k, b) = (a.to_f32_const(), k.to_f32_const(), b.to_f32_const());
                <$t>::from_f32_const(f32::sub_scaled(a, k, b))
            }
        }
    };
}
arith_int!(u8);
arith_int!(i8);
arith_int!(i16);
arith_int!(i32);
arith_int!(i64);
arith_float!(f32, wide f64);
arith_float!(f64);
arith_float!(crate::ComplexFloat);
arith_float!(crate::ComplexDouble);
arith_half!(half::f16);
arith_half!(half::bf16);
