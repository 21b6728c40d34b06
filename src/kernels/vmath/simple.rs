//! Functions that are one IEEE operation per element (`sqrt`, `rsqrt`,
//! `reciprocal`), vectorised by the compiler as they stand.

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
