//! Vector norms (f64 accumulators, one fold per kind of order) and the
//! singular values the spectral matrix norms use: a one-sided Jacobi
//! iteration in f64 (Hestenes' method: plane rotations of the columns until
//! they are mutually orthogonal; this diagonalises `AᵀA` without forming
//! it, so small singular values keep their relative accuracy).

use super::access::{lock, slice};
use super::copy::{cast, dense};
use super::reduce::{out_shape, output, reduce, Fold};
use crate::{dispatch_float, DType, Element, Error, Result, Tensor};

/// The f64 accumulators of vector norms, one instantiation per kind so the
/// inner loops carry no dispatch.
const POW: u8 = 0; // sum |x|^p (p not 0, 1, 2 or ±inf)
const ABS: u8 = 1; // sum |x|
const SQ: u8 = 2; // sum x²
const MAX_ABS: u8 = 3; // max |x| (NaN propagates)
const MIN_ABS: u8 = 4; // min |x| (NaN propagates)
const COUNT: u8 = 5; // number of nonzeros

struct NormF<const K: u8>(f64);
impl<T: Element, const K: u8> Fold<T> for NormF<K> {
    type Acc = f64;
    #[inline(always)]
    fn init(&self) -> f64 {
        if K == MIN_ABS {
            f64::INFINITY
        } else {
            0.0
        }
    }
    #[inline(always)]
    fn step(&self, acc: f64, x: T, _: usize) -> f64 {
        let a = x.to_f64().abs();
        match K {
            POW => acc + a.powf(self.0),
            ABS => acc + a,
            SQ => acc + a * a,
            MAX_ABS => {
                if (a > acc) | a.is_nan() {
                    a
                } else {
                    acc
                }
            }
            MIN_ABS => {
                if (a < acc) | a.is_nan() {
                    a
                } else {
                    acc
                }
            }
            _ => acc + (a != 0.0) as u8 as f64,
        }
    }
    #[inline(always)]
    fn merge(&self, a: f64, b: f64) -> f64 {
        match K {
            MAX_ABS | MIN_ABS => <Self as Fold<f64>>::step(self, a, b, 0),
            _ => a + b,
        }
    }
}

/// Reduces with `NormF<K>` and writes `finish(acc)` as `T`.
fn norm_kind<T: Element, const K: u8>(
    x: &Tensor,
    mask: &[bool],
    ord: f64,
    keepdim: bool,
) -> Result<Tensor> {
    let shape = out_shape(x.shape(), mask, keepdim);
    let (out, p) = output::<T>(&shape);
    let finish = move |a: f64| -> f64 {
        match K {
            SQ => a.sqrt(),
            POW => a.powf(1.0 / ord),
            _ => a,
        }
    };
    // SAFETY: each output index is written exactly once; `out` is fresh.
    reduce::<T, _>(x, mask, &NormF::<K>(ord), |i, a| unsafe {
        p.write(i, T::from_f64(finish(a)))
    })?;
    Ok(out)
}

/// Vector norm of order `ord` over an already-masked float tensor.
fn vector_norm_masked<T: Element>(
    x: &Tensor,
    mask: &[bool],
    ord: f64,
    keepdim: bool,
) -> Result<Tensor> {
    if ord == 2.0 {
        norm_kind::<T, SQ>(x, mask, ord, keepdim)
    } else if ord == 1.0 {
        norm_kind::<T, ABS>(x, mask, ord, keepdim)
    } else if ord == 0.0 {
        norm_kind::<T, COUNT>(x, mask, ord, keepdim)
    } else if ord == f64::INFINITY {
        norm_kind::<T, MAX_ABS>(x, mask, ord, keepdim)
    } else if ord == f64::NEG_INFINITY {
        norm_kind::<T, MIN_ABS>(x, mask, ord, keepdim)
    } else {
        norm_kind::<T, POW>(x, mask, ord, keepdim)
    }
}

/// The vector `ord`-norm of a floating `x` over `mask`: `sum |x|^ord` to
/// the power `1 / ord`, with `0` counting nonzeros and `±inf` the largest
/// and smallest `|x|` (NaN propagates).
pub(crate) fn vector_norm(x: &Tensor, mask: &[bool], ord: f64, keepdim: bool) -> Result<Tensor> {
    dispatch_float!(x.dtype(), T => vector_norm_masked::<T>(x, mask, ord, keepdim),
        else Err(Error::runtime(format!("expected a floating dtype, got {}", x.dtype()))))
}

/// The singular values (descending, f64) of each matrix over the last two
/// dims of `a` (at least 2 dims).
pub(crate) fn singular_values(a: &Tensor) -> Result<Tensor> {
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let k = m.min(n);
    let a64 = cast(a, DType::Float64);
    let a64 = if a64.is_contiguous() {
        a64
    } else {
        dense(&a64)
    };
    let batch: usize = a.shape()[..nd - 2].iter().product();
    let mut shape = a.shape()[..nd - 2].to_vec();
    shape.push(k);
    let mut vals = Vec::with_capacity(batch * k);
    {
        let _g = lock(&[&a64], None);
        // SAFETY: contiguous f64 tensor, read-locked.
        let data = unsafe { slice::<f64>(&a64) };
        for b in 0..batch {
            let mut s = jacobi_singular_values(&data[b * m * n..(b + 1) * m * n], m, n);
            s.sort_by(|x, y| y.total_cmp(x));
            vals.extend(s);
        }
    }
    Tensor::from_slice(&vals, &shape)
}

/// Singular values of the row-major `m × n` matrix `a` by one-sided Jacobi
/// rotations on the columns of `a` (or of `aᵀ` when wider than tall).
fn jacobi_singular_values(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    // Columns of the tall orientation, each stored contiguously.
    let (rows, cols) = if m >= n { (m, n) } else { (n, m) };
    let mut col: Vec<Vec<f64>> = (0..cols)
        .map(|j| {
            (0..rows)
                .map(|i| if m >= n { a[i * n + j] } else { a[j * n + i] })
                .collect()
        })
        .collect();
    let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>();
    for _sweep in 0..80 {
        let mut rotated = false;
        for p in 0..cols {
            for q in p + 1..cols {
                let (alpha, beta, gamma) = (
                    dot(&col[p], &col[p]),
                    dot(&col[q], &col[q]),
                    dot(&col[p], &col[q]),
                );
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                // The rotation that zeroes the (p, q) entry of the 2×2 Gram
                // block [[alpha, gamma], [gamma, beta]].
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let cs = 1.0 / (1.0 + t * t).sqrt();
                let sn = cs * t;
                let (lo, hi) = col.split_at_mut(q);
                for (x, y) in lo[p].iter_mut().zip(hi[0].iter_mut()) {
                    let (u, v) = (*x, *y);
                    *x = cs * u - sn * v;
                    *y = sn * u + cs * v;
                }
            }
        }
        if !rotated {
            break;
        }
    }
    col.iter().map(|c| dot(c, c).sqrt()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(v: &[f64], ord: f64) -> f64 {
        let x = Tensor::from_slice(v, &[v.len()]).unwrap();
        vector_norm(&x, &[true], ord, false)
            .unwrap()
            .to_vec::<f64>()[0]
    }

    #[test]
    fn vector_norms_of_each_order() {
        let v = [3.0, -4.0, 0.0];
        assert_eq!(norm(&v, 2.0), 5.0);
        assert_eq!(norm(&v, 1.0), 7.0);
        assert_eq!(norm(&v, 0.0), 2.0);
        assert_eq!(norm(&v, f64::INFINITY), 4.0);
        assert_eq!(norm(&v, f64::NEG_INFINITY), 0.0);
        assert!((norm(&v, 3.0) - 91f64.powf(1.0 / 3.0)).abs() < 1e-12);
        assert!(norm(&[1.0, f64::NAN], f64::INFINITY).is_nan());
        assert!(norm(&[1.0, f64::NAN], f64::NEG_INFINITY).is_nan());
    }

    #[test]
    fn vector_norm_over_dims_keeps_dtype_and_shape() {
        // [[3, 4], [6, 8]] over dim 1.
        let x = Tensor::from_slice(&[3.0f32, 4.0, 6.0, 8.0], &[2, 2]).unwrap();
        let n = vector_norm(&x, &[false, true], 2.0, true).unwrap();
        assert_eq!((n.shape(), n.dtype()), (&[2usize, 1][..], DType::Float32));
        assert_eq!(n.to_vec::<f32>(), vec![5.0, 10.0]);
        let i = Tensor::from_slice(&[1i64], &[1]).unwrap();
        assert!(vector_norm(&i, &[true], 2.0, false).is_err());
    }

    #[test]
    fn singular_values_are_descending_per_matrix() {
        let close = |got: Vec<f64>, want: &[f64]| {
            assert!(
                got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12),
                "{got:?}"
            );
            assert_eq!(got.len(), want.len());
        };
        // diag(-2, 3), then the rank-1 all-ones matrix.
        let a =
            Tensor::from_slice(&[-2.0f64, 0.0, 0.0, 3.0, 1.0, 1.0, 1.0, 1.0], &[2, 2, 2]).unwrap();
        let s = singular_values(&a).unwrap();
        assert_eq!(s.shape(), &[2, 2]);
        close(s.to_vec::<f64>(), &[3.0, 2.0, 2.0, 0.0]);
        // A wide matrix: one singular value, its row's length.
        let w = Tensor::from_slice(&[3.0f32, 4.0], &[1, 2]).unwrap();
        let s = singular_values(&w).unwrap();
        assert_eq!((s.shape(), s.dtype()), (&[1usize][..], DType::Float64));
        close(s.to_vec::<f64>(), &[5.0]);
        let e = Tensor::from_slice::<f64>(&[], &[0, 3]).unwrap();
        assert_eq!(singular_values(&e).unwrap().shape(), &[0]);
    }
}
