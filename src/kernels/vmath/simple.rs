//! Functions that are one IEEE operation per element (`sqrt`, `rsqrt`,
//! `reciprocal`, vectorised by the compiler as they stand) and the ones
//! still computed element by element by the platform's libm.

use super::Real;

/// Square root (NaN below zero).
pub(crate) struct Sqrt;

/// `1 / sqrt(x)`.
pub(crate) struct Rsqrt;

/// `1 / x`.
pub(crate) struct Reciprocal;

#[inline(always)]
fn sqrt<T: Real>(x: T) -> T {
    x.sqrt()
}

#[inline(always)]
fn rsqrt<T: Real>(x: T) -> T {
    T::c(1.0) / x.sqrt()
}

#[inline(always)]
fn reciprocal<T: Real>(x: T) -> T {
    T::c(1.0) / x
}

super::unary!(Sqrt => sqrt);
super::unary!(Rsqrt => rsqrt);
super::unary!(Reciprocal => reciprocal);

/// Kernels that call the platform's scalar function of each float type.
macro_rules! libm_kernels {
    ($($(#[$m:meta])* $k:ident => $f:ident;)*) => {$(
        $(#[$m])*
        pub(crate) struct $k;
        impl super::Unary<f32> for $k {
            #[inline(always)]
            fn fast(x: f32) -> f32 {
                x.$f()
            }
        }
        impl super::Unary<f64> for $k {
            #[inline(always)]
            fn fast(x: f64) -> f64 {
                x.$f()
            }
        }
    )*};
}

libm_kernels! {
    /// Sine.
    Sin => sin;
    /// Cosine.
    Cos => cos;
    /// Tangent.
    Tan => tan;
    /// Inverse sine.
    Asin => asin;
    /// Inverse cosine.
    Acos => acos;
    /// Inverse tangent.
    Atan => atan;
}
