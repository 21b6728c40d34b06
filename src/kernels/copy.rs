//! Dense copies and dtype casts, the building blocks other kernels use to
//! bring an operand into a layout or dtype they can loop over.

use crate::tensor::{Layout, MemoryFormat};
use crate::{DType, Result, Tensor};

/// A new row-major tensor with `t`'s values (whatever `t`'s layout:
/// elementwise results follow their inputs' layout, this does not).
pub(crate) fn dense(t: &Tensor) -> Tensor {
    let out = Tensor::empty(t.shape(), t.dtype());
    super::basic::copy_into_fresh(&out, t).expect("a fresh tensor of the same shape and dtype");
    out
}

/// `t`'s values as `dtype` (`t` itself when it already has it), laid out
/// as torch's `to` lays them out (`t`'s strides when they are dense).
pub(crate) fn cast(t: &Tensor, dtype: DType) -> Tensor {
    if t.dtype() == dtype {
        return t.clone();
    }
    let strides = MemoryFormat::Preserve
        .strides_like(t.layout())
        .expect("preserve applies to every rank");
    let out =
        Tensor::try_empty_strided(t.shape(), &strides, dtype).unwrap_or_else(|e| panic!("{e}"));
    super::basic::copy_into_fresh(&out, t).expect("a fresh tensor of the same shape");
    out
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
