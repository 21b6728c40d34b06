//! Linear algebra kernels: LU decomposition with partial pivoting (in f64,
//! or `Complex<f64>` for complex inputs, whatever the input's precision)
//! and what it gives (inverses, determinants and solutions of batches of
//! matrices), and the trace.

use super::access::{elem_ptr, lock};
use super::copy::relayout;
use super::matmul::batch_offsets;
use crate::{Complex, Element, Error, Result, Tensor};
use rayon::prelude::*;
use std::ops::{Add, Div, Mul, Sub, SubAssign};

/// Batches with at least this many flops (n^3 per matrix) run in parallel.
const PARALLEL_WORK: usize = 1 << 16;

/// The number type an LU factorization computes in: f64 for real inputs,
/// `Complex<f64>` for complex ones.
pub(crate) trait Field:
    Copy
    + Send
    + Sync
    + PartialEq
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + SubAssign
{
    const ZERO: Self;
    const ONE: Self;
    /// The size a pivot is chosen by.
    fn magnitude(self) -> f64;
    fn neg(self) -> Self;
    fn read<T: Element>(v: T) -> Self;
    fn write<T: Element>(self) -> T;
}

impl Field for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn magnitude(self) -> f64 {
        self.abs()
    }
    fn neg(self) -> f64 {
        -self
    }
    fn read<T: Element>(v: T) -> f64 {
        v.to_f64()
    }
    fn write<T: Element>(self) -> T {
        T::from_f64(self)
    }
}

impl Field for Complex<f64> {
    const ZERO: Self = Complex::new(0.0, 0.0);
    const ONE: Self = Complex::new(1.0, 0.0);
    fn magnitude(self) -> f64 {
        self.norm()
    }
    fn neg(self) -> Self {
        -self
    }
    fn read<T: Element>(v: T) -> Self {
        v.to_complex()
    }
    fn write<T: Element>(self) -> T {
        T::from_complex(self)
    }
}

/// An n x n matrix factored in place as `P A = L U` (row-major, unit
/// lower L below the diagonal, U on and above it).
struct Lu<S> {
    n: usize,
    a: Vec<S>,
    /// `perm[i]`: the original row now at row i.
    perm: Vec<usize>,
    /// +1 or -1: the permutation's parity.
    sign: f64,
    /// First column (0-based) whose pivot was exactly zero.
    zero_pivot: Option<usize>,
}

impl<S: Field> Lu<S> {
    /// Factors `a` (row-major n x n); like LAPACK's getrf it continues past
    /// a zero pivot and records the first one.
    fn new(mut a: Vec<S>, n: usize) -> Lu<S> {
        let mut perm: Vec<usize> = (0..n).collect();
        let mut sign = 1.0;
        let mut zero_pivot = None;
        for j in 0..n {
            let mut p = j;
            let mut best = a[j * n + j].magnitude();
            for i in j + 1..n {
                let v = a[i * n + j].magnitude();
                if v > best {
                    best = v;
                    p = i;
                }
            }
            if p != j {
                for c in 0..n {
                    a.swap(j * n + c, p * n + c);
                }
                perm.swap(j, p);
                sign = -sign;
            }
            let pivot = a[j * n + j];
            if pivot == S::ZERO {
                zero_pivot.get_or_insert(j);
                continue;
            }
            for i in j + 1..n {
                let l = a[i * n + j] / pivot;
                a[i * n + j] = l;
                if l != S::ZERO {
                    let (top, bottom) = a.split_at_mut(i * n);
                    let urow = &top[j * n + j + 1..j * n + n];
                    for (x, &u) in bottom[j + 1..n].iter_mut().zip(urow) {
                        *x -= l * u;
                    }
                }
            }
        }
        Lu {
            n,
            a,
            perm,
            sign,
            zero_pivot,
        }
    }

    fn det(&self) -> S {
        let start = if self.sign < 0.0 {
            S::ONE.neg()
        } else {
            S::ONE
        };
        (0..self.n).fold(start, |d, i| d * self.a[i * self.n + i])
    }

    /// Solves `A X = B` for row-major `b` (n x k) in place; U must be
    /// nonsingular.
    fn solve(&self, b: &[S], k: usize) -> Vec<S> {
        let n = self.n;
        let mut x = vec![S::ZERO; n * k];
        for i in 0..n {
            x[i * k..(i + 1) * k].copy_from_slice(&b[self.perm[i] * k..(self.perm[i] + 1) * k]);
        }
        // Forward: L y = P b (unit diagonal).
        for i in 0..n {
            for j in 0..i {
                let l = self.a[i * n + j];
                if l != S::ZERO {
                    let (top, rest) = x.split_at_mut(i * k);
                    for (xi, &xj) in rest[..k].iter_mut().zip(&top[j * k..(j + 1) * k]) {
                        *xi -= l * xj;
                    }
                }
            }
        }
        // Backward: U x = y.
        for i in (0..n).rev() {
            for j in i + 1..n {
                let u = self.a[i * n + j];
                if u != S::ZERO {
                    let (head, tail) = x.split_at_mut(j * k);
                    for (xi, &xj) in head[i * k..(i + 1) * k].iter_mut().zip(&tail[..k]) {
                        *xi -= u * xj;
                    }
                }
            }
            let d = self.a[i * n + i];
            for v in &mut x[i * k..(i + 1) * k] {
                *v = *v / d;
            }
        }
        x
    }
}

/// Reads the `rows x cols` matrix at element offset `off` of `t` (last two
/// dims' strides) into a row-major buffer of `S`.
///
/// # Safety
/// `t` is read-locked, of dtype `T`, and `off` is a batch offset of its
/// layout.
unsafe fn gather<T: Element, S: Field>(t: &Tensor, off: usize, rows: usize, cols: usize) -> Vec<S> {
    let nd = t.ndim();
    let (rs, cs) = (t.strides()[nd - 2], t.strides()[nd - 1]);
    let p = elem_ptr::<T>(t).add(off);
    let mut v = Vec::with_capacity(rows * cols);
    for i in 0..rows {
        for j in 0..cols {
            v.push(S::read(*p.add(i * rs + j * cs)));
        }
    }
    v
}

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

/// Writes row-major blocks, one per batch entry, into a new contiguous
/// tensor of `shape` and dtype `T`.
fn assemble<T: Element, S: Field>(blocks: Vec<Vec<S>>, shape: &[usize]) -> Result<Tensor> {
    let data: Vec<T> = blocks.into_iter().flatten().map(S::write::<T>).collect();
    Tensor::from_slice(&data, shape)
}

/// "(Batch element i): " for batched inputs, as torch prefixes errors.
fn batch_prefix(batched: bool, i: usize) -> String {
    if batched {
        format!("(Batch element {i}): ")
    } else {
        String::new()
    }
}

/// The inverse of each matrix of the batch `a` (`n x n` each), or the
/// error for the first singular one (as `linalg.inv` words it).
pub(crate) fn inv<T: Element, S: Field>(a: &Tensor, n: usize) -> Result<Tensor> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let offs = batch_offsets(batch, a.strides());
    let _g = lock(&[a], None);
    let eye: Vec<S> = (0..n * n)
        .map(|i| if i / n == i % n { S::ONE } else { S::ZERO })
        .collect();
    let blocks = per_batch(offs.len(), n * n * n, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let lu = Lu::new(unsafe { gather::<T, S>(a, offs[i], n, n) }, n);
        if let Some(j) = lu.zero_pivot {
            return Err(Error::linalg(format!(
                "linalg.inv: {}The diagonal element {} is zero, the inversion could not be completed because the input matrix is singular.",
                batch_prefix(nd > 2, i),
                j + 1
            )));
        }
        Ok(lu.solve(&eye, n))
    })?;
    assemble::<T, S>(blocks, a.shape())
}

/// The determinant of each matrix of the batch `a` (`n x n` each).
pub(crate) fn det<T: Element, S: Field>(a: &Tensor, n: usize) -> Result<Tensor> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let offs = batch_offsets(batch, a.strides());
    let _g = lock(&[a], None);
    let dets = per_batch(offs.len(), n * n * n, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let lu = Lu::new(unsafe { gather::<T, S>(a, offs[i], n, n) }, n);
        Ok(vec![lu.det()])
    })?;
    assemble::<T, S>(dets, batch)
}

/// `X` with `A X = B` for each pair of the batches `a` (`n x n`) and `b`
/// (`n x k`) of one batch shape, or the error for the first singular `A`
/// (as `linalg.solve` words it).
pub(crate) fn solve<T: Element, S: Field>(
    a: &Tensor,
    b: &Tensor,
    n: usize,
    k: usize,
) -> Result<Tensor> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let (oa, ob) = pair_offsets(a, b);
    let batched = nd > 2;
    let _g = lock(&[a, b], None);
    let blocks = per_batch(oa.len(), n * n * (n + k), |i| {
        // SAFETY: `a` and `b` are read-locked and of dtype T; the offsets
        // come from their (broadcast) layouts.
        let (am, bm) = unsafe {
            (
                gather::<T, S>(a, oa[i], n, n),
                gather::<T, S>(b, ob[i], n, k),
            )
        };
        let lu = Lu::new(am, n);
        if lu.zero_pivot.is_some() {
            return Err(Error::linalg(format!(
                "torch.linalg.solve: {}The solver failed because the input matrix is singular.",
                batch_prefix(batched, i)
            )));
        }
        Ok(lu.solve(&bm, k))
    })?;
    let mut shape = batch.to_vec();
    shape.extend([n, k]);
    assemble::<T, S>(blocks, &shape)
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

    fn close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?} != {want:?}");
        }
    }

    #[test]
    fn determinants_of_a_batch() {
        // det [[1, 2], [3, 4]] = -2; det [[0, 1], [1, 0]] = -1 (one swap).
        let a =
            Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0], &[2, 2, 2]).unwrap();
        let d = det::<f64, f64>(&a, 2).unwrap();
        assert_eq!(d.shape(), &[2]);
        close(&d.to_vec::<f64>(), &[-2.0, -1.0]);
        // 2 (3*2 - 2*1) - 0 + 1 (1*1 - 3*1) = 6, read through a transpose
        // (the determinant of the transpose is the same).
        let m =
            Tensor::from_slice(&[2.0f32, 0.0, 1.0, 1.0, 3.0, 2.0, 1.0, 1.0, 2.0], &[3, 3]).unwrap();
        let d = det::<f32, f64>(&permuted(&m, &[1, 0]).unwrap(), 3).unwrap();
        assert_eq!(d.dtype(), DType::Float32);
        assert!((d.to_vec::<f32>()[0] - 6.0).abs() < 1e-6);
        // A singular matrix has determinant 0.
        let s = Tensor::from_slice(&[1.0f64, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
        close(&det::<f64, f64>(&s, 2).unwrap().to_vec::<f64>(), &[0.0]);
    }

    #[test]
    fn inverse_of_a_matrix() {
        // [[4, 7], [2, 6]]^-1 = [[6, -7], [-2, 4]] / 10
        let a = Tensor::from_slice(&[4.0f64, 7.0, 2.0, 6.0], &[2, 2]).unwrap();
        let inv_a = inv::<f64, f64>(&a, 2).unwrap();
        assert_eq!(inv_a.shape(), &[2, 2]);
        close(&inv_a.to_vec::<f64>(), &[0.6, -0.7, -0.2, 0.4]);
    }

    #[test]
    fn a_singular_matrix_names_its_zero_pivot_and_batch_entry() {
        let s = Tensor::from_slice(&[1.0f64, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
        let e = inv::<f64, f64>(&s, 2).unwrap_err().to_string();
        assert!(
            e.contains("linalg.inv: The diagonal element 2 is zero"),
            "{e}"
        );
        let b =
            Tensor::from_slice(&[1.0f64, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 4.0], &[2, 2, 2]).unwrap();
        let e = inv::<f64, f64>(&b, 2).unwrap_err().to_string();
        assert!(
            e.contains("(Batch element 1): The diagonal element 2"),
            "{e}"
        );
        let rhs = Tensor::from_slice(&[1.0f64, 1.0], &[2, 1]).unwrap();
        let e = solve::<f64, f64>(&s, &rhs, 2, 1).unwrap_err().to_string();
        assert!(e.contains("torch.linalg.solve: The solver failed"), "{e}");
    }

    #[test]
    fn solve_gives_the_columns_of_x() {
        // [[3, 1], [1, 2]] x = [9, 8] for x = [2, 3]; and [6, 7] for [1, 3].
        let a = Tensor::from_slice(&[3.0f64, 1.0, 1.0, 2.0], &[2, 2]).unwrap();
        let b = Tensor::from_slice(&[9.0f64, 6.0, 8.0, 7.0], &[2, 2]).unwrap();
        let x = solve::<f64, f64>(&a, &b, 2, 2).unwrap();
        assert_eq!(x.shape(), &[2, 2]);
        close(&x.to_vec::<f64>(), &[2.0, 1.0, 3.0, 3.0]);
    }

    #[test]
    fn complex_determinant_inverse_and_solution() {
        use crate::ComplexDouble as C;
        // det [[1+i, 2], [i, 3-i]] = (1+i)(3-i) - 2i = 4
        let a = Tensor::from_slice(
            &[
                C::new(1.0, 1.0),
                C::new(2.0, 0.0),
                C::new(0.0, 1.0),
                C::new(3.0, -1.0),
            ],
            &[2, 2],
        )
        .unwrap();
        let d = det::<C, Complex<f64>>(&a, 2).unwrap().to_vec::<C>();
        assert!((d[0] - C::new(4.0, 0.0)).norm() < 1e-12, "{d:?}");
        // A^{-1} = [[3-i, -2], [-i, 1+i]] / 4, and A x = b for x = A^{-1} b.
        let inv_a = inv::<C, Complex<f64>>(&a, 2).unwrap().to_vec::<C>();
        let want = [
            C::new(3.0, -1.0),
            C::new(-2.0, 0.0),
            C::new(0.0, -1.0),
            C::new(1.0, 1.0),
        ];
        for (g, w) in inv_a.iter().zip(want) {
            assert!((g - w / 4.0).norm() < 1e-12, "{inv_a:?}");
        }
        let b = Tensor::from_slice(&[C::new(1.0, 0.0), C::new(0.0, 2.0)], &[2, 1]).unwrap();
        let x = solve::<C, Complex<f64>>(&a, &b, 2, 1)
            .unwrap()
            .to_vec::<C>();
        let ax0 = C::new(1.0, 1.0) * x[0] + C::new(2.0, 0.0) * x[1];
        let ax1 = C::new(0.0, 1.0) * x[0] + C::new(3.0, -1.0) * x[1];
        assert!((ax0 - C::new(1.0, 0.0)).norm() < 1e-12 && (ax1 - C::new(0.0, 2.0)).norm() < 1e-12);
    }

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
