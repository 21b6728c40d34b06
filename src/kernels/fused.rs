//! Fused backward kernels: the pointwise derivative formulas of
//! `formulas.rs` run over the elements of `f32`/`f64` tensors in one pass
//! over memory, where the derivative tables run the same formulas as
//! several differentiable ops (`g * (1 - y * y)` is a mul, a sub and a mul,
//! each allocating a full tensor). Both run one definition, so they give
//! the same bits (`tests/fused_backward.rs` compares them).
//!
//! The kernels know nothing of autograd: the ops decide when a fused
//! kernel may replace the composed formula (when no graph is being built
//! and every operand has the same float dtype, [`same_float`]; the composed
//! formula handles promotion; the 16-bit floats take the composed formula,
//! whose every op rounds to them).

use super::access::{elem_ptr, lock};
use super::formulas;
use super::iter::{map2, map3};
use crate::{DType, Error, Result, Tensor};

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
macro_rules! fused_fns {
    ($(#[$em:meta])* enum $kind:ident; fn $run:ident via $map:ident $args:tt;
     $($(#[$m:meta])* $op:ident => $f:ident $xs:tt;)*) => {
        $(#[$em])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $kind {
            $($(#[$m])* $op,)*
        }
        fused_fns!(@run $kind $run $map $args $args [$($op $f $xs;)*]);
    };
    (@run $kind:ident $run:ident $map:ident ($($arg:ident),+) $args:tt
     [$($op:ident $f:ident $xs:tt;)*]) => {
        /// The formula `f` over the operands (broadcast together) into a
        /// new contiguous tensor; they must share a float dtype.
        pub(crate) fn $run(f: $kind, $($arg: &Tensor),+) -> Result<Tensor> {
            let dt = same_float(&[$($arg),+]).ok_or_else(mixed_dtypes)?;
            crate::dispatch_wide_float!(dt, T => match f {
                $($kind::$op => fused_fns!(@map $map $args $f $xs),)*
            }, else Err(mixed_dtypes()))
        }
    };
    (@map $map:ident ($($arg:ident),+) $f:ident ($($x:ident),+)) => {
        $map($($arg),+, |$($x: T),+| -> T { element(formulas::$f($(&$x),+)) })
    };
}

/// The value of a formula over elements, which never fails.
#[inline(always)]
fn element<T>(r: Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(_) => unreachable!("formulas over elements do not fail"),
    }
}

fused_fns! {
    /// A derivative formula of a unary op over the output gradient `g`
    /// and the saved input `x` or output `y`.
    enum Grad2; fn grad2 via map2(g, v);
    Sqrt => sqrt(g, y);
    Rsqrt => rsqrt(g, y);
    Exp2 => exp2(g, y);
    Expm1 => expm1(g, y);
    Log1p => log1p(g, x);
    Log2 => log2(g, x);
    Log10 => log10(g, x);
    Tan => tan(g, y);
    Asin => asin(g, x);
    Acos => acos(g, x);
    Atan => atan(g, x);
    Asinh => asinh(g, x);
    Acosh => acosh(g, x);
    Atanh => atanh(g, x);
    Tanh => tanh(g, y);
    Sigmoid => sigmoid(g, y);
    Reciprocal => reciprocal(g, y);
    Abs => abs(g, x);
    Relu => relu(g, y);
}

fused_fns! {
    /// A derivative formula over the output gradient and two saved values.
    enum Grad3; fn grad3 via map3(g, a, b);
    /// `div`'s gradient for the divisor.
    DivOther => div_other(g, a, b);
    /// `pow`'s gradient for the base with a tensor exponent.
    PowBase => pow_base(g, x, e);
    /// `atan2(y, x)`'s gradient for `y`.
    Atan2Y => atan2_dy(g, y, x);
    /// `atan2(y, x)`'s gradient for `x`.
    Atan2X => atan2_dx(g, y, x);
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
    crate::dispatch_wide_float!(dt, T => {
        let em1: T = {
            let _g = lock(&[em1], None);
            // SAFETY: `em1` is read-locked, holds one element and has dtype `T`.
            unsafe { *elem_ptr::<T>(em1) }
        };
        let (one, zero) = (<T as crate::Element>::from_f64(1.0), <T as crate::Element>::from_f64(0.0));
        // x^1 and x^0 exactly, and without a pow per element (the
        // gradients of squares and linear terms): the formula with
        // `x ^ em1` written as `x` and as 1.
        if em1 == one {
            map3(g, x, e, move |g: T, x: T, e: T| -> T { g * (e * x) })
        } else if em1 == zero {
            map3(g, x, e, move |g: T, _x: T, e: T| -> T { g * e })
        } else {
            map3(g, x, e, move |g: T, x: T, e: T| -> T {
                element(formulas::pow_base_scalar(&g, &x, &e, &em1))
            })
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
