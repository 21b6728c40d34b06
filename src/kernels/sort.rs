//! Sorting the rows of a contiguous tensor: the sorted values and their
//! int64 positions in the row.
//!
//! The order is torch's: NaN compares greater than every number (last when
//! ascending, first when descending), and equal elements keep their order
//! in the row (the sort is stable both ways).

use super::access::{elem_ptr, lock};
use super::reduce::{output, SyncPtr};
use crate::pool::{par_for, PARALLEL_MIN_ELEMS};
use crate::{Error, RealElement, Result, Tensor};
use std::cmp::Ordering;

/// `a` against `b` with NaN (the value unequal to itself) above all.
#[inline(always)]
pub(crate) fn nan_last<T: RealElement>(a: &T, b: &T) -> Ordering {
    #[allow(clippy::eq_op)]
    match (a != a, b != b) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
    }
}

fn sort_rows<T: RealElement>(x: &Tensor, n: usize, descending: bool) -> (Tensor, Tensor) {
    let rows = x.numel().checked_div(n).unwrap_or(0);
    let (vals, vp) = output::<T>(x.shape());
    let (idx, ip) = output::<i64>(x.shape());
    let _g = lock(&[x], None);
    let src = SyncPtr(elem_ptr::<T>(x));
    let body = |r: usize| {
        // SAFETY: `x` is contiguous and read-locked; row r holds elements
        // r*n .. r*n + n. Each output row is written by this call alone,
        // and both outputs are fresh.
        unsafe {
            let row = std::slice::from_raw_parts(src.get().add(r * n), n);
            let mut order: Vec<usize> = (0..n).collect();
            if descending {
                order.sort_by(|&a, &b| nan_last(&row[b], &row[a]));
            } else {
                order.sort_by(|&a, &b| nan_last(&row[a], &row[b]));
            }
            for (j, &k) in order.iter().enumerate() {
                vp.write(r * n + j, row[k]);
                ip.write(r * n + j, k as i64);
            }
        }
    };
    par_for(rows, (PARALLEL_MIN_ELEMS / n.max(1)).max(1), &body);
    (vals, idx)
}

fn topk_rows<T: RealElement>(x: &Tensor, n: usize, k: usize, largest: bool) -> (Tensor, Tensor) {
    let rows = x.numel().checked_div(n).unwrap_or(0);
    let mut shape = x.shape().to_vec();
    if let Some(last) = shape.last_mut() {
        *last = k;
    }
    let (vals, vp) = output::<T>(&shape);
    let (idx, ip) = output::<i64>(&shape);
    let _g = lock(&[x], None);
    let src = SyncPtr(elem_ptr::<T>(x));
    let body = |r: usize| {
        // SAFETY: as in `sort_rows`; output row r holds elements r*k ..
        // r*k + k, written by this call alone.
        unsafe {
            let row = std::slice::from_raw_parts(src.get().add(r * n), n);
            // The stable sort's order: equal values by position.
            let cmp = |a: &usize, b: &usize| {
                let by_value = if largest {
                    nan_last(&row[*b], &row[*a])
                } else {
                    nan_last(&row[*a], &row[*b])
                };
                by_value.then(a.cmp(b))
            };
            let mut order: Vec<usize> = (0..n).collect();
            if k > 0 && k < n {
                order.select_nth_unstable_by(k - 1, cmp);
            }
            order.truncate(k);
            order.sort_unstable_by(cmp);
            for (j, &i) in order.iter().enumerate() {
                vp.write(r * k + j, row[i]);
                ip.write(r * k + j, i as i64);
            }
        }
    };
    par_for(rows, (PARALLEL_MIN_ELEMS / n.max(1)).max(1), &body);
    (vals, idx)
}

/// The `k` largest (smallest without `largest`) elements of each row of
/// the contiguous `x`, in the stable sort's order: `(values, indices)`.
pub(crate) fn topk_last(x: &Tensor, k: usize, largest: bool) -> Result<(Tensor, Tensor)> {
    let n = x.shape().last().copied().unwrap_or(1);
    crate::dispatch_real!(x.dtype(), T => Ok(topk_rows::<T>(x, n, k, largest)),
        else Err(Error::runtime("topk does not support complex dtypes on CPU")))
}

/// Sorts each row (the last dim) of the contiguous `x`: `(values, indices)`.
pub(crate) fn sort_last(x: &Tensor, descending: bool) -> Result<(Tensor, Tensor)> {
    let n = x.shape().last().copied().unwrap_or(1);
    crate::dispatch_real!(x.dtype(), T => Ok(sort_rows::<T>(x, n, descending)),
        else Err(Error::runtime("Sort does not support complex dtypes on CPU")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topk_takes_the_stable_sorts_prefix() {
        let x = Tensor::from_slice(&[2.0f64, 5.0, 2.0, f64::NAN, 5.0, 1.0], &[1, 6]).unwrap();
        for k in 0..=6 {
            for largest in [true, false] {
                let (v, i) = topk_last(&x, k, largest).unwrap();
                let (sv, si) = sort_last(&x, largest).unwrap();
                assert_eq!(i.to_vec::<i64>(), si.to_vec::<i64>()[..k].to_vec());
                let (v, sv) = (v.to_vec::<f64>(), sv.to_vec::<f64>());
                assert!(v
                    .iter()
                    .zip(&sv)
                    .all(|(a, b)| a == b || a.is_nan() && b.is_nan()));
            }
        }
    }

    #[test]
    fn rows_sort_stably_with_nan_greatest() {
        let x = Tensor::from_slice(&[3.0f64, f64::NAN, 1.0, 3.0, 2.0, 0.0], &[2, 3]).unwrap();
        let (v, i) = sort_last(&x, false).unwrap();
        let v = v.to_vec::<f64>();
        assert_eq!(&v[..2], &[1.0, 3.0]);
        assert!(v[2].is_nan());
        assert_eq!(&v[3..], &[0.0, 2.0, 3.0]);
        assert_eq!(i.to_vec::<i64>(), vec![2, 0, 1, 2, 1, 0]);
        // Descending: NaN first; the two 5s keep their order.
        let y = Tensor::from_slice(&[5i32, 1, 5, 7], &[4]).unwrap();
        let (v, i) = sort_last(&y, true).unwrap();
        assert_eq!(v.to_vec::<i32>(), vec![7, 5, 5, 1]);
        assert_eq!(i.to_vec::<i64>(), vec![3, 0, 2, 1]);
        let z = Tensor::from_slice(&[1.0f32, f32::NAN, 2.0], &[3]).unwrap();
        let (v, i) = sort_last(&z, true).unwrap();
        assert!(v.to_vec::<f32>()[0].is_nan());
        assert_eq!(i.to_vec::<i64>(), vec![1, 2, 0]);
    }
}
