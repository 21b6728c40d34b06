//! Pointwise kernels: the elementwise maps under the unary float functions
//! (sqrt, exp, log, the trigonometric family, sigmoid, erf...) and the
//! scalar special functions they use.
//!
//! [`float_map`] computes a [`FloatFn`] into a new tensor of a float dtype,
//! [`float_apply`] overwrites a float tensor with it. Each function's
//! element body is written once, below, for both float element types; the
//! differentiable ops in `crate::ops` name the function and record its
//! derivative around these calls.

use super::copy::cast;
use super::iter::{apply1, map1};
use crate::{dispatch_float, DType, Element, Result, Tensor};

/// Defines [`FloatFn`] and its kernels from one `Name |x| body;` line per
/// function; `x` is an element of the concrete float type `T`.
macro_rules! float_fns {
    ($($(#[$m:meta])* $op:ident |$x:ident| $body:expr;)*) => {
        /// A float-valued unary function.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum FloatFn {
            $($(#[$m])* $op,)*
        }

        /// `f` over `x` cast to `dt`, into a new tensor; `None` when `dt` is
        /// not a float dtype.
        pub(crate) fn float_map(f: FloatFn, x: &Tensor, dt: DType) -> Option<Tensor> {
            let x = cast(x, dt);
            dispatch_float!(dt, T => Some(match f {
                $(FloatFn::$op => map1::<T, T>(&x, |$x: T| $body),)*
            }), else None)
        }

        /// `f` written over the float tensor `dst` in place; `None` when
        /// `dst` is not a float tensor.
        pub(crate) fn float_apply(f: FloatFn, dst: &Tensor) -> Option<Result<()>> {
            dispatch_float!(dst.dtype(), T => Some(match f {
                $(FloatFn::$op => apply1::<T>(dst, |$x: T| $body),)*
            }), else None)
        }
    };
}

float_fns! {
    /// Square root (NaN below zero).
    Sqrt |x| x.sqrt();
    /// `1 / sqrt(x)`.
    Rsqrt |x| 1.0 / x.sqrt();
    Exp |x| x.exp();
    Exp2 |x| x.exp2();
    /// `e^x - 1`, accurate near zero.
    Expm1 |x| x.exp_m1();
    Log |x| x.ln();
    /// `log(1 + x)`, accurate near zero.
    Log1p |x| x.ln_1p();
    Log2 |x| x.log2();
    Log10 |x| x.log10();
    Sin |x| x.sin();
    Cos |x| x.cos();
    Tan |x| x.tan();
    Asin |x| x.asin();
    Acos |x| x.acos();
    Atan |x| x.atan();
    Sinh |x| x.sinh();
    Cosh |x| x.cosh();
    Tanh |x| x.tanh();
    Asinh |x| x.asinh();
    Acosh |x| x.acosh();
    Atanh |x| x.atanh();
    /// `1 / (1 + e^-x)`.
    Sigmoid |x| 1.0 / (1.0 + (-x).exp());
    /// Computed in f64 for both element types.
    Erf |x| T::from_f64(erf(x.to_f64()));
    /// Computed in f64 for both element types.
    Erfc |x| T::from_f64(erfc(x.to_f64()));
    Reciprocal |x| 1.0 / x;
}

const FRAC_2_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// The error function, to about 1e-15 relative accuracy.
///
/// Below |x| = 2.5 it sums the series
/// `erf x = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (1*3*...*(2n+1))`,
/// whose terms are all positive (no cancellation); above, it uses `1 - erfc`.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    if ax < 2.5 {
        let x2 = x * x;
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term.abs() > sum.abs() * 1e-17 {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
        }
        FRAC_2_SQRT_PI * (-x2).exp() * sum
    } else {
        (1.0 - erfc_tail(ax)).copysign(x)
    }
}

/// The complementary error function `1 - erf(x)`, accurate in the tail.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x < 2.5 {
        1.0 - erf(x)
    } else {
        erfc_tail(x)
    }
}

/// `erfc(x)` for `x >= 2.5` by its continued fraction
/// `erfc x = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))`,
/// evaluated bottom-up with a fixed depth that converges for x >= 2.5.
fn erfc_tail(x: f64) -> f64 {
    if x > 27.0 {
        return 0.0;
    }
    let mut frac = x;
    for k in (1..=60).rev() {
        frac = x + (k as f64 / 2.0) / frac;
    }
    (-x * x).exp() / (frac * std::f64::consts::PI.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        // erf(1), erf(0.5), erf(3) to 16 digits (Abramowitz & Stegun table 7.1).
        assert!((erf(1.0) - 0.842_700_792_949_714_9).abs() < 1e-15);
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
        assert!((erf(-3.0) + 0.999_977_909_503_001_4).abs() < 1e-15);
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(f64::INFINITY), 1.0);
        // erfc(5) = 1.5374597944280349e-12.
        assert!((erfc(5.0) / 1.537_459_794_428_035e-12 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn float_map_casts_to_the_float_dtype() {
        let i = Tensor::from_slice(&[1i64, 4, 9], &[3]).unwrap();
        let r = float_map(FloatFn::Sqrt, &i, DType::Float32).unwrap();
        assert_eq!(r.dtype(), DType::Float32);
        assert_eq!(r.to_vec::<f32>(), vec![1.0, 2.0, 3.0]);
        assert!(float_map(FloatFn::Sqrt, &i, DType::Int64).is_none());
        let x = Tensor::from_slice(&[1.0f64], &[1]).unwrap();
        x.set_requires_grad(true).unwrap();
        assert!(float_map(FloatFn::Exp, &x, DType::Float64)
            .unwrap()
            .grad_fn()
            .is_none());
    }

    #[test]
    fn float_map_gives_hand_computed_values() {
        let x = Tensor::from_slice(&[0.0f64, 1.0, 2.0], &[3]).unwrap();
        let map = |f| float_map(f, &x, DType::Float64).unwrap().to_vec::<f64>();
        assert_eq!(map(FloatFn::Exp2), vec![1.0, 2.0, 4.0]);
        assert_eq!(map(FloatFn::Reciprocal), vec![f64::INFINITY, 1.0, 0.5]);
        assert_eq!(map(FloatFn::Sigmoid)[0], 0.5);
        assert_eq!(map(FloatFn::Log2), vec![f64::NEG_INFINITY, 0.0, 1.0]);
        assert_eq!(map(FloatFn::Rsqrt)[1], 1.0);
        assert_eq!(map(FloatFn::Erf)[0], 0.0);
        assert_eq!(map(FloatFn::Erfc)[0], 1.0);
        assert_eq!(map(FloatFn::Tanh)[0], 0.0);
        // A strided (transposed) input is read in its logical order.
        let m = Tensor::from_slice(&[1.0f32, 4.0, 9.0, 16.0], &[2, 2]).unwrap();
        let t = super::super::copy::permuted(&m, &[1, 0]).unwrap();
        let r = float_map(FloatFn::Sqrt, &t, DType::Float32).unwrap();
        assert_eq!(r.to_vec::<f32>(), vec![1.0, 3.0, 2.0, 4.0]);
    }

    #[test]
    fn float_apply_overwrites_floats_and_refuses_integers() {
        let x = Tensor::from_slice(&[1.0f32, 100.0], &[2]).unwrap();
        float_apply(FloatFn::Log10, &x).unwrap().unwrap();
        assert_eq!(x.to_vec::<f32>(), vec![0.0, 2.0]);
        let i = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
        assert!(float_apply(FloatFn::Exp, &i).is_none());
        assert_eq!(i.to_vec::<i32>(), vec![1, 2]);
    }
}
