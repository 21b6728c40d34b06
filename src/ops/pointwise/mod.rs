//! Pointwise (elementwise) operations: arithmetic, float functions,
//! comparisons and logic, and ternary ops (where, clamp, lerp, addcmul...).
//!
//! Every op follows torch's type promotion ([`crate::result_type`]); ops
//! that always produce floats (div, sqrt, exp, sigmoid...) compute integer
//! and bool inputs in the default float dtype; comparisons produce bool.
//! Each out-of-place op has an in-place `_` form that writes through the
//! `iter` drivers and refuses results its tensor cannot hold.
//!
//! Float-valued ops record their backward next to their kernel (formulas
//! as in torch's derivatives.yaml, written with differentiable tensor ops so
//! higher derivatives work); in-place forms that see a tensor requiring grad
//! go through [`crate::autograd::inplace`], which records the out-of-place
//! op on the old value.

mod arith;
mod compare;
mod math;
mod ternary;
mod unary;

pub use arith::RoundingMode;
pub use math::{erf, erfc, Num};

use super::binary::check_inplace;
use crate::kernels::access::{lock, view};
use crate::tensor::{default_dtype, result_type};
use crate::{dispatch, DType, Element, Error, Result, Tensor};

/// The dtype a float-valued op computes in for inputs promoted to `dt`.
fn float_of(dt: DType) -> DType {
    dt.to_float(default_dtype())
}

/// torch's promoted dtype of several operands.
fn promoted(ts: &[&Tensor]) -> DType {
    let ops: smallvec::SmallVec<[_; 4]> = ts.iter().map(|t| t.promotion_operand()).collect();
    result_type(&ops)
}

/// torch's error for an op without a kernel for `dt`.
fn unsupported(op: &str, dt: DType) -> Error {
    Error::runtime(format!(
        "\"{op}\" not implemented for '{}'",
        dt.scalar_type_name()
    ))
}

/// A Python-number-like scalar for backward formulas: it never promotes
/// the other operand's dtype.
fn num(v: impl Into<crate::Scalar>) -> Tensor {
    Tensor::scalar(v)
}

/// `g` where `keep` is true, zero elsewhere (torch's `where(mask, grad, 0)`).
fn keep_where(g: &Tensor, keep: &Tensor) -> Result<Tensor> {
    g.r#where(keep, &num(0.0))
}

/// `g` where `drop` is false, zero where it is true.
fn zero_where(g: &Tensor, drop: &Tensor) -> Result<Tensor> {
    num(0.0).r#where(drop, g)
}

/// Whether any element of `t` equals zero.
fn has_zero(t: &Tensor) -> bool {
    let _g = lock(&[t], None);
    // SAFETY: `t` is read-locked and viewed with its own dtype and layout.
    dispatch!(t.dtype(), T => unsafe { view::<T>(t).iter().any(|&v| v == T::zero()) })
}

/// Whether every element of a bool tensor is true.
fn all_true(t: &Tensor) -> bool {
    let _g = lock(&[t], None);
    // SAFETY: `t` is read-locked; the caller passes a bool tensor.
    unsafe { view::<bool>(t).iter().all(|&v| v) }
}

/// Rejects integer division by zero (torch raises instead of producing
/// garbage); floats divide by zero to inf/NaN as IEEE says.
fn check_divisor(dt: DType, divisor: &Tensor) -> Result<()> {
    if !dt.is_floating_point() && has_zero(divisor) {
        return Err(Error::runtime("ZeroDivisionError"));
    }
    Ok(())
}

/// Stores a computed `result` into `dst` (the generic in-place path for ops
/// whose result dtype may differ from `dst`'s): checks dtype and shape, then
/// copies (bumping the version).
fn assign(op: &str, dst: &Tensor, result: &Tensor) -> Result<()> {
    check_inplace(op, dst, result.dtype())?;
    if result.shape() != dst.shape() {
        return Err(Error::runtime(format!(
            "output with shape {:?} doesn't match the broadcast shape {:?} (in {op})",
            dst.shape(),
            result.shape()
        )));
    }
    dst.copy_(result)
}

/// `value` cast to `T` after checking it suits a result of dtype `dt`
/// (torch refuses a float multiplier for integer results, and a bool one
/// for non-bool results).
fn scalar_factor<T: Element>(what: &str, value: crate::Scalar, dt: DType) -> Result<T> {
    use crate::Scalar;
    match value {
        Scalar::Float(_) if !dt.is_floating_point() => Err(Error::runtime(format!(
            "For integral input tensors, argument {what} must not be a floating point number."
        ))),
        Scalar::Bool(_) if dt != DType::Bool => Err(Error::runtime(format!(
            "Boolean {what} only supported for Boolean results."
        ))),
        v => Ok(v.to_elem()),
    }
}

impl Tensor {
    /// Writes an op's `result` into this tensor, as torch's `out=`: the
    /// shapes must match and the result dtype must be castable (no float
    /// into an integer tensor, no number into a bool tensor).
    pub fn store_(&self, result: &Tensor) -> Result<()> {
        assign("out=", self, result)
    }
}
