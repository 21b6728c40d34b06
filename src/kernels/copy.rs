//! Dense copies and dtype casts, the building blocks other kernels use to
//! bring an operand into a layout or dtype they can loop over.

use super::iter::map1;
use crate::tensor::Layout;
use crate::{dispatch, DType, Element, Result, Tensor};

/// A new row-major tensor with `t`'s values.
pub(crate) fn dense(t: &Tensor) -> Tensor {
    dispatch!(t.dtype(), T => map1::<T, T>(t, |x| x))
}

/// `t`'s values as `dtype` (`t` itself when it already has it).
pub(crate) fn cast(t: &Tensor, dtype: DType) -> Tensor {
    if t.dtype() == dtype {
        return t.clone();
    }
    dispatch!(t.dtype(), S => dispatch!(dtype, T => map1::<S, T>(t, T::cast_from)))
}

/// The same storage seen through another layout (a raw view: no autograd
/// link to `t`).
pub(crate) fn relayout(t: &Tensor, layout: Layout) -> Result<Tensor> {
    Tensor::from_parts(t.storage().clone(), layout, t.dtype())
}

/// `t`'s dims reordered by `perm` as a raw view.
pub(crate) fn permuted(t: &Tensor, perm: &[isize]) -> Result<Tensor> {
    relayout(t, t.layout().permute(perm)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_copies_a_transposed_view_in_row_major_order() {
        let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        let t = permuted(&a, &[1, 0]).unwrap();
        assert!(!t.is_contiguous());
        let d = dense(&t);
        assert!(d.is_contiguous());
        assert_eq!(d.shape(), &[3, 2]);
        assert_eq!(d.to_vec::<f32>(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert!(!d.storage().same(a.storage()));
    }

    #[test]
    fn cast_rounds_toward_zero_into_integers_and_keeps_same_dtype() {
        let a = Tensor::from_slice(&[1.7f64, -2.5, 3.0], &[3]).unwrap();
        assert_eq!(cast(&a, DType::Int64).to_vec::<i64>(), vec![1, -2, 3]);
        assert!(cast(&a, DType::Float64).storage().same(a.storage()));
    }

    #[test]
    fn kernels_record_nothing_even_when_inputs_require_grad() {
        let a = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        a.set_requires_grad(true).unwrap();
        assert!(dense(&a).grad_fn().is_none());
        assert!(cast(&a, DType::Float64).grad_fn().is_none());
        assert!(permuted(&a, &[0]).unwrap().grad_fn().is_none());
    }
}
