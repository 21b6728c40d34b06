//! Pointwise kernels: the elementwise maps under the unary float functions
//! (sqrt, exp, log, the trigonometric family, sigmoid, erf...).
//!
//! [`float_map`] computes a [`FloatFn`] into a new tensor of a float dtype,
//! [`float_apply`] overwrites a float tensor with it. Each function is a
//! [`vmath`](super::vmath) kernel, run over contiguous runs in vector form
//! and element by element over strided layouts; the differentiable ops in
//! `crate::ops` name the function and record its derivative around these
//! calls.

use super::copy::cast;
use super::half::{via_f32, via_f32_in_place, Half};
use super::iter::{apply1, apply1_blocks, map1, map1_blocks};
use super::vmath::{self as vm, Unary};
use crate::{bf16, f16, Complex, DType, Result, Tensor};

pub use super::vmath::{erf, erfc};

/// Defines [`FloatFn`] from one `Name => kernel;` line per function.
macro_rules! float_fns {
    ($($(#[$m:meta])* $op:ident => $k:ident;)*) => {
        /// A float-valued unary function.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum FloatFn {
            $($(#[$m])* $op,)*
        }

        /// `f` over `x` cast to `dt`, into a new tensor; `None` when `dt` is
        /// not a float dtype.
        pub(crate) fn float_map(f: FloatFn, x: &Tensor, dt: DType) -> Option<Tensor> {
            let x = cast(x, dt);
            if dt.is_complex() {
                return complex_map(f, &x);
            }
            Some(match (dt, f) {
                $((DType::Float32, FloatFn::$op) => float32_map::<vm::$k>(&x),)*
                $((DType::Float64, FloatFn::$op) => map1_blocks::<f64>(
                    &x,
                    <vm::$k as Unary<f64>>::eval,
                    vm::run::<f64, vm::$k>,
                ),)*
                $((DType::Float16, FloatFn::$op) => half_map::<f16>(&x, f32_kernel::<vm::$k>()),)*
                $((DType::BFloat16, FloatFn::$op) => half_map::<bf16>(&x, f32_kernel::<vm::$k>()),)*
                _ => return None,
            })
        }

        /// The float32 block kernel of `f`, as `float_map` runs it over a
        /// contiguous run (the same bits for the same inputs).
        pub(crate) fn float_block32(f: FloatFn) -> fn(&[f32], &mut [f32]) {
            match f {
                $(FloatFn::$op => vm::run::<f32, vm::$k>,)*
            }
        }

        /// The float64 block kernel of `f` (as [`float_block32`]).
        pub(crate) fn float_block64(f: FloatFn) -> fn(&[f64], &mut [f64]) {
            match f {
                $(FloatFn::$op => vm::run::<f64, vm::$k>,)*
            }
        }

        /// `f` written over the float tensor `dst` in place; `None` when
        /// `dst` is not a float tensor.
        pub(crate) fn float_apply(f: FloatFn, dst: &Tensor) -> Option<Result<()>> {
            if dst.dtype().is_complex() {
                return complex_apply(f, dst);
            }
            Some(match (dst.dtype(), f) {
                $((DType::Float32, FloatFn::$op) => apply1_blocks::<f32>(
                    dst,
                    <vm::$k as Unary<f32>>::eval,
                    vm::run_in_place::<f32, vm::$k>,
                ),)*
                $((DType::Float64, FloatFn::$op) => apply1_blocks::<f64>(
                    dst,
                    <vm::$k as Unary<f64>>::eval,
                    vm::run_in_place::<f64, vm::$k>,
                ),)*
                $((DType::Float16, FloatFn::$op) => half_apply::<f16>(dst, f32_kernel::<vm::$k>()),)*
                $((DType::BFloat16, FloatFn::$op) => half_apply::<bf16>(dst, f32_kernel::<vm::$k>()),)*
                _ => return None,
            })
        }
    };
}

/// Defines the complex form of each [`FloatFn`] for one component type:
/// `None` for functions torch does not define on complex numbers.
macro_rules! complex_fns {
    ($name:ident, $f:ty) => {
        fn $name(f: FloatFn) -> Option<fn(Complex<$f>) -> Complex<$f>> {
            Some(match f {
                FloatFn::Sqrt => |z| z.sqrt(),
                FloatFn::Rsqrt => |z| z.sqrt().inv(),
                FloatFn::Exp => |z| z.exp(),
                FloatFn::Exp2 => |z| z.exp2(),
                // e^x cos y - 1 written as expm1(x) cos y - 2 sin^2(y/2),
                // accurate near zero.
                FloatFn::Expm1 => |z| {
                    let h = (z.im / 2.0).sin();
                    Complex::new(
                        z.re.exp_m1() * z.im.cos() - 2.0 * h * h,
                        z.re.exp() * z.im.sin(),
                    )
                },
                // log|1 + z| = log1p(2x + x^2 + y^2) / 2, accurate near zero.
                FloatFn::Log1p => |z| {
                    Complex::new(
                        0.5 * (2.0 * z.re + z.re * z.re + z.im * z.im).ln_1p(),
                        z.im.atan2(1.0 + z.re),
                    )
                },
                FloatFn::Log => |z| z.ln(),
                FloatFn::Log2 => |z| z.log2(),
                FloatFn::Log10 => |z| z.log10(),
                FloatFn::Sin => |z| z.sin(),
                FloatFn::Cos => |z| z.cos(),
                FloatFn::Tan => |z| z.tan(),
                FloatFn::Asin => |z| z.asin(),
                FloatFn::Acos => |z| z.acos(),
                FloatFn::Atan => |z| z.atan(),
                FloatFn::Sinh => |z| z.sinh(),
                FloatFn::Cosh => |z| z.cosh(),
                FloatFn::Tanh => |z| z.tanh(),
                FloatFn::Asinh => |z| z.asinh(),
                FloatFn::Acosh => |z| z.acosh(),
                FloatFn::Atanh => |z| z.atanh(),
                FloatFn::Sigmoid => |z| ((-z).exp() + 1.0).inv(),
                FloatFn::Reciprocal => |z| z.inv(),
                _ => return None,
            })
        }
    };
}
complex_fns!(complex_fn32, f32);
complex_fns!(complex_fn64, f64);

/// `f` over a complex tensor into a new one; `None` when `f` has no
/// complex form.
fn complex_map(f: FloatFn, x: &Tensor) -> Option<Tensor> {
    Some(match x.dtype() {
        DType::Complex64 => map1::<Complex<f32>, Complex<f32>>(x, complex_fn32(f)?),
        _ => map1::<Complex<f64>, Complex<f64>>(x, complex_fn64(f)?),
    })
}

/// [`complex_map`] in place.
fn complex_apply(f: FloatFn, dst: &Tensor) -> Option<Result<()>> {
    Some(match dst.dtype() {
        DType::Complex64 => apply1::<Complex<f32>>(dst, complex_fn32(f)?),
        _ => apply1::<Complex<f64>>(dst, complex_fn64(f)?),
    })
}

fn float32_map<K: Unary<f32>>(x: &Tensor) -> Tensor {
    map1_blocks::<f32>(x, K::eval, vm::run::<f32, K>)
}

/// A float32 function as an element function and a block kernel, called
/// through pointers so the 16-bit paths share one copy of each kernel
/// rather than each inlining its own.
#[derive(Clone, Copy)]
struct F32Kernel {
    elem: fn(f32) -> f32,
    block: fn(&[f32], &mut [f32]),
}

fn f32_kernel<K: Unary<f32>>() -> F32Kernel {
    F32Kernel {
        elem: K::eval,
        block: vm::run::<f32, K>,
    }
}

/// A float32 function over a 16-bit tensor: widened, computed, rounded
/// once per element.
fn half_map<H: Half>(x: &Tensor, k: F32Kernel) -> Tensor {
    map1_blocks::<H>(
        x,
        |v| H::narrow((k.elem)(v.widen())),
        |s, d| via_f32(s, d, k.block),
    )
}

/// [`half_map`] in place.
fn half_apply<H: Half>(dst: &Tensor, k: F32Kernel) -> Result<()> {
    apply1_blocks::<H>(
        dst,
        |v| H::narrow((k.elem)(v.widen())),
        |b| via_f32_in_place(b, k.block),
    )
}

float_fns! {
    /// Square root (NaN below zero).
    Sqrt => Sqrt;
    /// `1 / sqrt(x)`.
    Rsqrt => Rsqrt;
    Exp => Exp;
    Exp2 => Exp2;
    /// `e^x - 1`, accurate near zero.
    Expm1 => Expm1;
    Log => Log;
    /// `log(1 + x)`, accurate near zero.
    Log1p => Log1p;
    Log2 => Log2;
    Log10 => Log10;
    Sin => Sin;
    Cos => Cos;
    Tan => Tan;
    Asin => Asin;
    Acos => Acos;
    Atan => Atan;
    Sinh => Sinh;
    Cosh => Cosh;
    Tanh => Tanh;
    Asinh => Asinh;
    Acosh => Acosh;
    Atanh => Atanh;
    /// `1 / (1 + e^-x)`.
    Sigmoid => Sigmoid;
    Erf => Erf;
    /// `1 - erf(x)`, accurate for large x.
    Erfc => Erfc;
    Reciprocal => Reciprocal;
    /// The special functions (scalar float64 bodies).
    Lgamma => Lgamma;
    Digamma => Digamma;
    Erfinv => Erfinv;
    Erfcx => Erfcx;
    Ndtr => Ndtr;
    Ndtri => Ndtri;
    LogNdtr => LogNdtr;
    I0 => I0;
    I0e => I0e;
    I1 => I1;
    I1e => I1e;
    K0 => K0;
    K0e => K0e;
    K1 => K1;
    K1e => K1e;
    BesselJ0 => BesselJ0;
    BesselJ1 => BesselJ1;
    BesselY0 => BesselY0;
    BesselY1 => BesselY1;
    AiryAi => AiryAi;
    SphericalBesselJ0 => SphericalBesselJ0;
    Sinc => Sinc;
    Entr => Entr;
}

#[cfg(test)]
mod tests {
    use super::*;

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
