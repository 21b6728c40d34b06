//! Fused backward kernels: pointwise derivative formulas that the
//! derivative tables write as several differentiable ops (`g * (1 - y * y)`
//! is a mul, a sub and a mul, each allocating a full tensor) computed in one
//! pass over memory instead.
//!
//! Each formula is one closure over elements of the concrete float type,
//! and it performs exactly the floating-point operations of its composed
//! form in `crate::ops`, in the same order, each rounded to the element
//! type: the two give the same bits (Rust never contracts `a * b + c` into
//! a fused multiply-add, and these bodies must not call `mul_add`). A
//! Python-number constant of the composed form (`num(LN_2)`) is cast to
//! the element type as the op casts it (`LN_2 as T`). The tests in
//! `tests/fused_backward.rs` compare the two paths bit for bit.
//!
//! The kernels know nothing of autograd: the ops decide when a fused
//! kernel may replace the composed formula (when no graph is being built
//! and every operand has the same float dtype, [`same_float`]; the composed
//! formula handles promotion).

use super::access::{elem_ptr, lock};
use super::iter::{map2, map3};
use super::vmath::PowElem;
use crate::{DType, Error, Result, Tensor};

const LN_2: f64 = std::f64::consts::LN_2;
const LN_10: f64 = std::f64::consts::LN_10;

/// The float dtype every one of `operands` has, if they share one that
/// the fused kernels compute in.
pub(crate) fn same_float(operands: &[&Tensor]) -> Option<DType> {
    let dt = operands.first()?.dtype();
    let float = matches!(dt, DType::Float32 | DType::Float64);
    (float && operands.iter().all(|t| t.dtype() == dt)).then_some(dt)
}

fn mixed_dtypes() -> Error {
    Error::runtime("fused backward kernel: the operands must share a float dtype")
}

/// Defines an enum of fused formulas over the operands `$args` and the
/// function that runs one of them through the `iter` driver `$map`
/// (broadcasting, slice loops for contiguous operands, parallel chunks
/// when large).
/// Runs `$body` with `$T` bound to `f32` or `f64` (the dtypes
/// [`same_float`] admits; the 16-bit floats take the composed formula,
/// whose every op rounds to them).
macro_rules! dispatch_wide {
    ($dtype:expr, $T:ident => $body:expr, else $other:expr) => {
        match $dtype {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    };
}

macro_rules! fused_fns {
    ($(#[$em:meta])* enum $kind:ident; fn $run:ident via $map:ident $args:tt;
     $($(#[$m:meta])* $op:ident |$($x:ident),+| $body:expr;)*) => {
        $(#[$em])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $kind {
            $($(#[$m])* $op,)*
        }
        fused_fns!(@run $kind $run $map $args $args [$($op ($($x),+) $body;)*]);
    };
    (@run $kind:ident $run:ident $map:ident ($($arg:ident),+) $args:tt
     [$($op:ident $xs:tt $body:expr;)*]) => {
        /// The formula `f` over the operands (broadcast together) into a
        /// new contiguous tensor; they must share a float dtype.
        pub(crate) fn $run(f: $kind, $($arg: &Tensor),+) -> Result<Tensor> {
            let dt = same_float(&[$($arg),+]).ok_or_else(mixed_dtypes)?;
            dispatch_wide!(dt, T => match f {
                $($kind::$op => fused_fns!(@map $map $args $xs $body),)*
            }, else Err(mixed_dtypes()))
        }
    };
    (@map $map:ident ($($arg:ident),+) ($($x:ident),+) $body:expr) => {
        $map($($arg),+, |$($x: T),+| -> T { $body })
    };
}

fused_fns! {
    /// A derivative `(g, v) -> g * f(v)`-style formula of a unary op: `g`
    /// is the output gradient, `v` the saved input `x` or output `y`.
    enum Grad2; fn grad2 via map2(g, v);
    /// `g / (y * 2)`.
    Sqrt |g, y| g / (y * 2.0);
    /// `g * (y * y * y) * -0.5`.
    Rsqrt |g, y| (g * ((y * y) * y)) * -0.5;
    /// `g * (y * ln 2)`.
    Exp2 |g, y| g * (y * LN_2 as T);
    /// `g * (y + 1)`.
    Expm1 |g, y| g * (y + 1.0);
    /// `g / (x + 1)`.
    Log1p |g, x| g / (x + 1.0);
    /// `g / (x * ln 2)`.
    Log2 |g, x| g / (x * LN_2 as T);
    /// `g / (x * ln 10)`.
    Log10 |g, x| g / (x * LN_10 as T);
    /// `g * (y * y + 1)`.
    Tan |g, y| g * ((y * y) + 1.0);
    /// `g * rsqrt(1 - x * x)`, with `rsqrt(v)` computed as `1 / sqrt(v)`
    /// (as its kernel does; so the rows below).
    Asin |g, x| g * (1.0 / (1.0 - (x * x)).sqrt());
    /// `g * -rsqrt(1 - x * x)`.
    Acos |g, x| g * -(1.0 / (1.0 - (x * x)).sqrt());
    /// `g / (x * x + 1)`.
    Atan |g, x| g / ((x * x) + 1.0);
    /// `g * rsqrt(x * x + 1)`.
    Asinh |g, x| g * (1.0 / ((x * x) + 1.0).sqrt());
    /// `g * rsqrt(x * x - 1)`.
    Acosh |g, x| g * (1.0 / ((x * x) - 1.0).sqrt());
    /// `g / (1 - x * x)`.
    Atanh |g, x| g / (1.0 - (x * x));
    /// `g * (1 - y * y)`.
    Tanh |g, y| g * (1.0 - (y * y));
    /// `g * (y * (1 - y))`.
    Sigmoid |g, y| g * (y * (1.0 - y));
    /// `g * -(y * y)`.
    Reciprocal |g, y| g * -(y * y);
    /// `g * sign(x)` (sign 0 at 0 and NaN).
    Abs |g, x| g * (if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 });
    /// `g` where `y > 0` (or NaN), else 0.
    Relu |g, y| if y <= 0.0 { 0.0 } else { g };
}

fused_fns! {
    /// A derivative formula over the output gradient and two saved values.
    enum Grad3; fn grad3 via map3(g, a, b);
    /// `div`'s gradient for the divisor: `-(g * ((a / b) / b))`.
    DivOther |g, a, b| -(g * ((a / b) / b));
    /// `pow`'s gradient for the base with a tensor exponent `e`:
    /// `g * (e * x^(e - 1))`, 0 where `e == 0`.
    PowBase |g, x, e| if e == 0.0 { 0.0 } else { g * (e * x.pow_elem(e - 1.0)) };
    /// `atan2(y, x)`'s gradient for `y`: `(g * x) / (y * y + x * x)`.
    Atan2Y |g, y, x| (g * x) / ((y * y) + (x * x));
    /// `atan2(y, x)`'s gradient for `x`: `-((g * y) / (y * y + x * x))`.
    Atan2X |g, y, x| -((g * y) / ((y * y) + (x * x)));
}

/// `pow`'s gradient for the base with a scalar exponent:
/// `g * (e * x^em1)`, where `e` and `em1` (the exponent and the exponent
/// minus one, as the op computes it) are one-element tensors already cast
/// to the dtype of `g` and `x`.
pub(crate) fn pow_scalar_grad(g: &Tensor, x: &Tensor, e: &Tensor, em1: &Tensor) -> Result<Tensor> {
    let dt = same_float(&[g, x, e, em1]).ok_or_else(mixed_dtypes)?;
    if em1.numel() != 1 {
        return Err(Error::runtime(
            "fused pow gradient: the exponent must be one element",
        ));
    }
    dispatch_wide!(dt, T => {
        let em1: T = {
            let _g = lock(&[em1], None);
            // SAFETY: `em1` is read-locked, holds one element and has dtype `T`.
            unsafe { *elem_ptr::<T>(em1) }
        };
        // x^1 and x^0 exactly, and without a pow per element (the
        // gradients of squares and linear terms).
        let (one, zero) = (<T as crate::Element>::from_f64(1.0), <T as crate::Element>::from_f64(0.0));
        if em1 == one {
            map3(g, x, e, move |g: T, x: T, e: T| -> T { g * (e * x) })
        } else if em1 == zero {
            map3(g, x, e, move |g: T, _x: T, e: T| -> T { g * e })
        } else {
            map3(g, x, e, move |g: T, x: T, e: T| -> T { g * (e * x.pow_elem(em1)) })
        }
    }, else Err(mixed_dtypes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_kernels_refuse_mixed_or_integer_dtypes() {
        let f = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let d = Tensor::from_slice(&[1.0f64, 2.0], &[2]).unwrap();
        let i = Tensor::from_slice(&[1i64, 2], &[2]).unwrap();
        assert!(same_float(&[&f, &d]).is_none() && same_float(&[&i]).is_none());
        assert!(grad2(Grad2::Tanh, &f, &d).is_err());
        assert!(grad2(Grad2::Tanh, &i, &i).is_err());
        assert!(grad3(Grad3::DivOther, &f, &f, &d).is_err());
        let y = grad2(Grad2::Tanh, &f, &f).unwrap();
        assert_eq!(y.to_vec::<f32>(), vec![0.0, 2.0 * (1.0 - 4.0)]);
    }

    #[test]
    fn fused_kernels_broadcast_their_operands() {
        let g = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        let y = Tensor::from_slice(&[0.5f64, -1.0, 2.0], &[3]).unwrap();
        let r = grad2(Grad2::Relu, &g, &y).unwrap();
        assert_eq!(r.shape(), &[2, 3]);
        assert_eq!(r.to_vec::<f64>(), vec![1.0, 0.0, 3.0, 4.0, 0.0, 6.0]);
        let e = Tensor::from_slice(&[2.0f64], &[]).unwrap();
        let em1 = Tensor::from_slice(&[1.0f64], &[]).unwrap();
        let p = pow_scalar_grad(&g, &y, &e, &em1).unwrap();
        assert_eq!(p.to_vec::<f64>()[..3], [1.0, -4.0, 12.0]);
    }
}
