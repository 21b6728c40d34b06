//! The eigendecomposition of general (not necessarily Hermitian) square
//! matrices on faer: complex eigenvalues and eigenvectors of real or
//! complex input, in the input's precision.

use super::access::lock;
use super::decomp::{no_convergence, read_mat, Faer};
use super::linalg::per_batch;
use super::matmul::batch_offsets;
use crate::tensor::{Layout, Storage};
use crate::{Complex, Element, Result, Tensor};
use faer::traits::Real;

/// The eigenvalues of each `n x n` matrix of `a` (complex, in faer's
/// order) and with `vectors` the eigenvectors as the columns of a
/// column-major complex matrix (as faer scales them; the caller
/// normalizes).
#[allow(clippy::type_complexity)]
pub(crate) fn eig<T: Faer>(a: &Tensor, vectors: bool) -> Result<(Tensor, Option<Tensor>)>
where
    Complex<Real<T>>: Element,
{
    let nd = a.ndim();
    let n = a.shape()[nd - 1];
    let offs = batch_offsets(&a.shape()[..nd - 2], a.strides());
    let _g = lock(&[a], None);
    let results = per_batch(offs.len(), n * n * n, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let m = unsafe { read_mat::<T>(a, offs[i], n, n) };
        let fail = |_| no_convergence("linalg.eig", "eigenvalues");
        if vectors {
            let e = m.eigen().map_err(fail)?;
            let vals: Vec<_> = (0..n).map(|j| e.S()[j]).collect();
            let mut vecs = Vec::with_capacity(n * n);
            for j in 0..n {
                vecs.extend((0..n).map(|r| e.U()[(r, j)]));
            }
            Ok((vals, vecs))
        } else {
            Ok((m.eigenvalues().map_err(fail)?, Vec::new()))
        }
    })?;
    let mut vals = Vec::with_capacity(offs.len() * n);
    let mut vecs = Vec::with_capacity(if vectors { offs.len() * n * n } else { 0 });
    for (v, u) in results {
        vals.extend(v);
        vecs.extend(u);
    }
    let dtype = <Complex<Real<T>> as Element>::DTYPE;
    let w = Tensor::from_parts(
        Storage::from_slice(&vals),
        Layout::contiguous(&a.shape()[..nd - 1]),
        dtype,
    )?;
    if !vectors {
        return Ok((w, None));
    }
    // Column-major matrices, as torch lays out LAPACK's results.
    let mut strides = crate::tensor::contiguous_strides(a.shape());
    strides[nd - 2] = 1;
    strides[nd - 1] = n.max(1);
    let v = Tensor::from_parts(
        Storage::from_slice(&vecs),
        Layout::new(a.shape(), &strides, 0),
        dtype,
    )?;
    Ok((w, Some(v)))
}
