//! Index kernels: the positions of nonzero elements, which boolean-mask
//! indexing and `nonzero` read.

use super::access::{lock, slice};
use super::copy::{cast, dense};
use crate::{DType, Tensor};

/// Row-major coordinates of the nonzero elements of `t`: `n * ndim`
/// values (one row of `ndim` per element, in row-major order), and `n`.
pub(crate) fn nonzero_coords(t: &Tensor) -> (Vec<i64>, usize) {
    let b = cast(t, DType::Bool);
    let b = if b.is_contiguous() { b } else { dense(&b) };
    let shape = t.shape();
    let nd = shape.len();
    let mut coords = Vec::new();
    let mut n = 0usize;
    let _g = lock(&[&b], None);
    // SAFETY: `b` is contiguous bool and read-locked.
    let data = unsafe { slice::<bool>(&b) };
    let mut idx = vec![0i64; nd];
    for &v in data {
        if v {
            coords.extend_from_slice(&idx);
            n += 1;
        }
        for d in (0..nd).rev() {
            idx[d] += 1;
            if (idx[d] as usize) < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    (coords, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy::permuted;

    #[test]
    fn coordinates_of_nonzero_elements_in_row_major_order() {
        let t = Tensor::from_slice(&[0.0f64, 1.5, 0.0, -2.0, 0.0, 3.0], &[2, 3]).unwrap();
        assert_eq!(nonzero_coords(&t), (vec![0, 1, 1, 0, 1, 2], 3));
        // The transposed view (3, 2) = [[0, -2], [1.5, 0], [0, 3]].
        let tt = permuted(&t, &[1, 0]).unwrap();
        assert_eq!(nonzero_coords(&tt), (vec![0, 1, 1, 0, 2, 1], 3));
    }

    #[test]
    fn bool_ints_and_zero_dim_inputs() {
        let m = Tensor::from_slice(&[true, false, true], &[3]).unwrap();
        assert_eq!(nonzero_coords(&m), (vec![0, 2], 2));
        let i = Tensor::from_slice(&[0i64, 0, 7], &[3]).unwrap();
        assert_eq!(nonzero_coords(&i), (vec![2], 1));
        // A 0-dim input: one element with no coordinates.
        let s = Tensor::from_slice(&[4i32], &[]).unwrap();
        assert_eq!(nonzero_coords(&s), (vec![], 1));
        let z = Tensor::from_slice(&[0i32], &[]).unwrap();
        assert_eq!(nonzero_coords(&z), (vec![], 0));
        let e = Tensor::from_slice::<f32>(&[], &[0, 2]).unwrap();
        assert_eq!(nonzero_coords(&e), (vec![], 0));
    }
}
