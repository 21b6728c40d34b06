//! Checks of a tensor as the destination of a write, shared by kernels and
//! by autograd's in-place machinery (so neither reaches into the other for
//! them).

use super::{DType, Tensor};
use crate::{Error, Result};

/// Refuses a write into `dst` when two of its elements share memory (an
/// expanded or overlapping view): the result would depend on write order.
pub(crate) fn check_no_overlap(dst: &Tensor) -> Result<()> {
    if !dst.layout().is_non_overlapping() {
        return Err(Error::runtime(format!(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation. (shape {:?}, strides {:?})",
            dst.shape(),
            dst.strides()
        )));
    }
    Ok(())
}

/// Refuses an in-place op whose result dtype cannot be stored in `dst`
/// (torch's rule: no float result into an integer tensor, and so on).
pub(crate) fn check_inplace_dtype(op: &str, dst: &Tensor, result: DType) -> Result<()> {
    if result.category() > dst.dtype().category() {
        return Err(Error::runtime(format!(
            "result type {} can't be cast to the desired output type {} (in {op})",
            result.scalar_type_name(),
            dst.dtype().scalar_type_name()
        )));
    }
    Ok(())
}
