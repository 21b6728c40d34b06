//! Writes into existing tensors (`copy_`, `fill_`) and copies of a dense
//! layout's memory span that keep its strides (`clone` with
//! `preserve_format`, pickling).

use super::access::{lock, slice_mut};
use super::iter::{apply1, apply2, fill2};
use crate::tensor::{Layout, Storage};
use crate::{dispatch, Element, Result, Scalar, Tensor};

/// Writes `src`, broadcast to `dst`'s shape and cast to its dtype, into
/// `dst`.
pub(crate) fn copy_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    dispatch!(dst.dtype(), T => dispatch!(src.dtype(), S => {
        apply2::<T, S>(dst, src, |_, s| T::cast_from(s))
    }))
}

/// [`copy_into`] for a fresh `dst` nobody has seen: no version bump.
pub(crate) fn copy_into_fresh(dst: &Tensor, src: &Tensor) -> Result<()> {
    dispatch!(dst.dtype(), T => dispatch!(src.dtype(), S => {
        fill2::<T, S>(dst, src, |_, s| T::cast_from(s))
    }))
}

/// Sets every element of `dst` to `value` (converted to its dtype).
pub(crate) fn fill(dst: &Tensor, value: Scalar) -> Result<()> {
    dispatch!(dst.dtype(), T => {
        let v: T = value.to_elem();
        apply1::<T>(dst, move |_| v)
    })
}

/// [`fill`] for a freshly created contiguous tensor: no layout checks.
pub(crate) fn fill_fresh(dst: &Tensor, value: Scalar) {
    let _g = lock(&[], Some(dst));
    dispatch!(dst.dtype(), T => {
        let v: T = value.to_elem();
        // SAFETY: write-locked; fresh tensors are contiguous.
        unsafe { slice_mut::<T>(dst).fill(v) };
    })
}

/// A copy of `t` in new memory with `t`'s shape and strides. `t`'s layout
/// must be non-overlapping and dense: its elements then occupy exactly
/// `numel` slots from its offset on, so one memcpy of that span keeps the
/// strides.
pub(crate) fn dense_span_copy(t: &Tensor) -> Tensor {
    debug_assert!(t.layout().is_non_overlapping_and_dense());
    let isz = t.dtype().itemsize();
    let n = t.numel() * isz;
    let storage = Storage::uninit(n);
    {
        let _g = lock(&[t], None);
        // SAFETY: the source span lies within its storage (dense layout
        // from `offset`), the destination is fresh, and the source is
        // read-locked.
        unsafe {
            std::ptr::copy_nonoverlapping(
                t.storage().as_ptr().add(t.offset() * isz),
                storage.as_ptr(),
                n,
            )
        };
    }
    let layout = Layout::new(t.shape(), t.strides(), 0);
    Tensor::from_parts(storage, layout, t.dtype()).expect("dense span fits")
}

/// A copy of `t` in new memory laid out with the dense `strides` (a
/// memcpy of the span when they are `t`'s own dense strides).
pub(crate) fn strided_copy(t: &Tensor, strides: &[usize]) -> Result<Tensor> {
    if t.strides() == strides && t.layout().is_non_overlapping_and_dense() {
        return Ok(dense_span_copy(t));
    }
    let out = Tensor::try_empty_strided(t.shape(), strides, t.dtype())?;
    copy_into_fresh(&out, t)?;
    Ok(out)
}

/// The raw bytes of the memory span of `t`, whose layout must be
/// non-overlapping and dense (its own strides read them back).
pub(crate) fn dense_span_bytes(t: &Tensor) -> Vec<u8> {
    debug_assert!(t.layout().is_non_overlapping_and_dense());
    let isz = t.dtype().itemsize();
    let n = t.numel() * isz;
    let mut out = vec![0u8; n];
    if n > 0 {
        let _g = lock(&[t], None);
        // SAFETY: a dense layout's elements are exactly the `numel` slots
        // from its offset on; the storage is read-locked.
        unsafe {
            std::ptr::copy_nonoverlapping(
                t.storage().as_ptr().add(t.offset() * isz),
                out.as_mut_ptr(),
                n,
            )
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy::{permuted, relayout};
    use crate::DType;

    fn f64s(v: &[f64], shape: &[usize]) -> Tensor {
        Tensor::from_slice(v, shape).unwrap()
    }

    #[test]
    fn copy_into_broadcasts_a_row_and_casts_toward_zero() {
        let dst = Tensor::zeros(&[2, 3], DType::Int64);
        copy_into(&dst, &f64s(&[1.7, -2.5, 3.0], &[3])).unwrap();
        assert_eq!(dst.to_vec::<i64>(), vec![1, -2, 3, 1, -2, 3]);
    }

    #[test]
    fn copy_into_a_transposed_view_writes_through_its_strides() {
        let base = Tensor::zeros(&[2, 3], DType::Float64);
        let dst = permuted(&base, &[1, 0]).unwrap();
        copy_into(&dst, &f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])).unwrap();
        // dst[i][j] is base[j][i].
        assert_eq!(base.to_vec::<f64>(), vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn copy_into_refuses_a_source_that_does_not_broadcast() {
        let dst = Tensor::zeros(&[2, 3], DType::Float64);
        assert!(copy_into(&dst, &f64s(&[1.0, 2.0], &[2])).is_err());
    }

    #[test]
    fn fill_sets_only_the_elements_of_a_strided_view() {
        let base = Tensor::zeros(&[2, 3], DType::Float32);
        // Column 1: offset 1, stride 3.
        let col = relayout(&base, Layout::new(&[2], &[3], 1)).unwrap();
        fill(&col, Scalar::Float(2.5)).unwrap();
        assert_eq!(base.to_vec::<f32>(), vec![0.0, 2.5, 0.0, 0.0, 2.5, 0.0]);
    }

    #[test]
    fn fill_refuses_an_overlapping_layout() {
        let base = Tensor::zeros(&[3], DType::Float64);
        let overlapping = relayout(&base, Layout::new(&[2, 3], &[0, 1], 0)).unwrap();
        assert!(fill(&overlapping, Scalar::Int(1)).is_err());
    }

    #[test]
    fn fill_fresh_converts_the_value_to_the_dtype() {
        let t = Tensor::zeros(&[3], DType::Bool);
        fill_fresh(&t, Scalar::Int(2));
        assert_eq!(t.to_vec::<bool>(), vec![true, true, true]);
        let t = Tensor::zeros(&[2], DType::Int32);
        fill_fresh(&t, Scalar::Float(-1.9));
        assert_eq!(t.to_vec::<i32>(), vec![-1, -1]);
    }

    #[test]
    fn dense_span_copy_keeps_a_transposed_layout_in_new_memory() {
        let a = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let t = permuted(&a, &[1, 0]).unwrap();
        let c = dense_span_copy(&t);
        assert_eq!(c.shape(), &[3, 2]);
        assert_eq!(c.strides(), &[1, 3]);
        assert_eq!(c.offset(), 0);
        assert!(!c.storage().same(a.storage()));
        assert_eq!(c.to_vec::<f64>(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }

    #[test]
    fn dense_span_copy_starts_at_the_view_offset() {
        let a = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[6]);
        let tail = relayout(&a, Layout::new(&[2, 2], &[1, 2], 2)).unwrap();
        let c = dense_span_copy(&tail);
        assert_eq!(c.storage().nbytes(), 4 * 8);
        // tail[i][j] is a[2 + i + 2j].
        assert_eq!(c.to_vec::<f64>(), vec![3.0, 5.0, 4.0, 6.0]);
    }

    #[test]
    fn dense_span_bytes_are_the_span_in_memory_order() {
        let a = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
        let t = permuted(&a, &[1, 0]).unwrap();
        let bytes = dense_span_bytes(&t);
        let want: Vec<u8> = [1i32, 2, 3, 4, 5, 6]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(bytes, want);
        assert!(dense_span_bytes(&Tensor::zeros(&[0, 2], DType::Float32)).is_empty());
    }

    #[test]
    fn kernels_record_nothing_even_when_inputs_require_grad() {
        let a = f64s(&[1.0, 2.0], &[2]);
        a.set_requires_grad(true).unwrap();
        assert!(dense_span_copy(&a).grad_fn().is_none());
        let dst = Tensor::zeros(&[2], DType::Float64);
        copy_into(&dst, &a).unwrap();
        assert!(dst.grad_fn().is_none() && !dst.requires_grad());
    }
}
