//! Unary kernels with scalar float64 bodies: the special functions of
//! [`kernels::special`](crate::kernels::special) (gamma, error-function and
//! Bessel families). Their bodies branch by range, so they run element by
//! element; float32 computes through float64 and rounds once.

use super::Unary;
use crate::kernels::special as sp;

/// Defines a kernel type per function, with its float64 body and float32
/// through it.
macro_rules! scalar_kernels {
    ($($k:ident => $f:expr;)*) => {$(
        pub(crate) struct $k;
        impl Unary<f64> for $k {
            #[inline(always)]
            fn fast(x: f64) -> f64 {
                ($f)(x)
            }
        }
        impl Unary<f32> for $k {
            #[inline(always)]
            fn fast(x: f32) -> f32 {
                ($f)(x as f64) as f32
            }
        }
    )*};
}

scalar_kernels! {
    Lgamma => sp::lgamma;
    Digamma => sp::digamma;
    Erfinv => sp::erfinv;
    Erfcx => sp::erfcx;
    Ndtr => sp::ndtr;
    Ndtri => sp::ndtri;
    LogNdtr => sp::log_ndtr;
    I0 => sp::i0;
    I0e => sp::i0e;
    I1 => sp::i1;
    I1e => sp::i1e;
    K0 => sp::k0;
    K0e => sp::k0e;
    K1 => sp::k1;
    K1e => sp::k1e;
    BesselJ0 => sp::j0;
    BesselJ1 => sp::j1;
    BesselY0 => sp::y0;
    BesselY1 => sp::y1;
    AiryAi => sp::airy_ai;
    SphericalBesselJ0 => sp::spherical_bessel_j0;
    Sinc => sinc;
    Entr => entr;
}

/// `sin(pi x) / (pi x)`, 1 at 0 (and NaN at infinities, as torch).
fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    let px = std::f64::consts::PI * x;
    sp::gamma::sin_pi(x) / px
}

/// `-x ln x`: 0 at 0, `-inf` below 0, NaN for NaN.
fn entr(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x > 0.0 {
        -x * x.ln()
    } else if x == 0.0 {
        0.0
    } else {
        f64::NEG_INFINITY
    }
}
