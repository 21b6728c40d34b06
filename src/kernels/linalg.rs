//! Linear algebra kernels shared by the decompositions: batch offsets
//! and the parallel loop over a batch's matrices, and the trace.

use super::access::{elem_ptr, lock};
use super::copy::relayout;
use super::matmul::batch_offsets;
use crate::{Element, Result, Tensor};
use rayon::prelude::*;

/// Batches with at least this many flops (n^3 per matrix) run in parallel.
const PARALLEL_WORK: usize = 1 << 16;

/// The batch offsets of each matrix of `a` and of `b`, two batches of
/// matrices of one batch shape.
pub(crate) fn pair_offsets(a: &Tensor, b: &Tensor) -> (Vec<usize>, Vec<usize>) {
    let batch = &a.shape()[..a.ndim() - 2];
    (
        batch_offsets(batch, a.strides()),
        batch_offsets(batch, b.strides()),
    )
}

/// Runs `f(i)` for each batch entry, in parallel when the work is large;
/// returns the results in order, or the error of the first failing entry.
pub(crate) fn per_batch<R: Send>(
    nb: usize,
    work: usize,
    f: impl Fn(usize) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    if nb > 1 && nb * work >= PARALLEL_WORK && crate::pool::kernel_threads() > 1 {
        crate::pool::install(|| (0..nb).into_par_iter().map(&f).collect())
    } else {
        (0..nb).map(f).collect()
    }
}

/// The sum of the main diagonal of the matrix `t` (floats accumulate in
/// f64, complex numbers in `Complex<f64>`; integers and bool sum to int64,
/// wrapping).
pub(crate) fn trace(t: &Tensor) -> Result<Tensor> {
    let d = relayout(t, t.layout().diagonal(0, 0, 1)?)?;
    let n = d.shape()[0];
    let s = d.strides()[0];
    let _g = lock(&[&d], None);
    // SAFETY (both arms): `d` is read-locked and has `n` elements at
    // stride `s`.
    crate::dispatch_float!(t.dtype(), T => {
        let p = elem_ptr::<T>(&d);
        let acc: f64 = (0..n).map(|i| unsafe { *p.add(i * s) }.to_f64()).sum();
        Tensor::from_slice(&[T::from_f64(acc)], &[])
    }, else if t.dtype().is_complex() {
        crate::dispatch_complex!(t.dtype(), T => {
            let p = elem_ptr::<T>(&d);
            let acc: crate::Complex<f64> = (0..n).map(|i| unsafe { *p.add(i * s) }.to_complex()).sum();
            Tensor::from_slice(&[T::from_complex(acc)], &[])
        }, else unreachable!("complex dtype"))
    } else { crate::dispatch!(t.dtype(), T => {
        let p = elem_ptr::<T>(&d);
        let acc = (0..n).fold(0i64, |acc, i| acc.wrapping_add(unsafe { *p.add(i * s) }.to_i64()));
        Tensor::from_slice(&[acc], &[])
    })})
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy::permuted;
    use crate::DType;

    #[test]
    fn trace_sums_the_main_diagonal() {
        let f = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]).unwrap();
        let t = trace(&f).unwrap();
        assert_eq!((t.dtype(), t.shape()), (DType::Float32, &[][..]));
        assert_eq!(t.to_vec::<f32>(), vec![5.0]);
        let i = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
        let t = trace(&permuted(&i, &[1, 0]).unwrap()).unwrap();
        assert_eq!(t.dtype(), DType::Int64);
        assert_eq!(t.to_vec::<i64>(), vec![5]);
    }
}
