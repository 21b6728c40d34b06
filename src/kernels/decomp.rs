//! Decompositions and triangular solves on the `faer` crate.
//!
//! Each matrix of a batch is read (through the input's own strides) into
//! a faer matrix of the input's dtype, so a float32 input computes in
//! float32; the results are written row-major into a new tensor.
//! Independent matrices of a batch run in parallel on the pool; a single
//! large matrix lets faer use the pool's threads instead.

use super::access::{elem_ptr, lock};
use super::linalg::{pair_offsets, per_batch};
use super::matmul::batch_offsets;
use crate::tensor::{contiguous_strides, Layout, Storage};
use crate::{Complex, Element, Result, Tensor};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::triangular_solve as tri;
use faer::{Mat, Par};

/// The dtypes faer computes in: ferrograd's float32/float64 and their
/// complex counterparts.
pub(crate) trait Faer: Element + faer::traits::ComplexField {}
impl Faer for f32 {}
impl Faer for f64 {}
impl Faer for Complex<f32> {}
impl Faer for Complex<f64> {}

/// Matrices at least this large, alone in their batch, are factored with
/// the pool's threads.
const PARALLEL_DIM: usize = 192;

/// How faer runs one matrix of `n` rows when the batch has `nb` of them.
fn par_for(nb: usize, n: usize) -> Par {
    let threads = crate::pool::kernel_threads();
    if nb == 1 && n >= PARALLEL_DIM && threads > 1 {
        Par::rayon(threads)
    } else {
        Par::Seq
    }
}

/// Runs `f` for each matrix of the batch, in parallel across the batch or,
/// for one large matrix, with `par` on the pool.
fn run<R: Send>(
    nb: usize,
    work: usize,
    par: Par,
    f: impl Fn(usize) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    if matches!(par, Par::Seq) {
        per_batch(nb, work, f)
    } else {
        crate::pool::install(|| (0..nb).map(&f).collect())
    }
}

/// Reads the `rows x cols` matrix at element offset `off` of `t` (its
/// last two dims' strides).
///
/// # Safety
/// `t` is read-locked, of dtype `T`, and `off` is a batch offset of its
/// layout.
unsafe fn read<T: Faer>(t: &Tensor, off: usize, rows: usize, cols: usize) -> Mat<T> {
    let nd = t.ndim();
    let (rs, cs) = (t.strides()[nd - 2], t.strides()[nd - 1]);
    let p = elem_ptr::<T>(t).add(off);
    Mat::from_fn(rows, cols, |i, j| *p.add(i * rs + j * cs))
}

/// The matrices one after another as a tensor of `shape`, each stored
/// row-major, or column-major with `col_major` (torch's layout for the
/// results of its LAPACK-backed functions).
fn write<T: Faer>(mats: &[Mat<T>], shape: &[usize], col_major: bool) -> Result<Tensor> {
    let mut data = Vec::with_capacity(shape.iter().product());
    for m in mats {
        if col_major {
            for j in 0..m.ncols() {
                data.extend((0..m.nrows()).map(|i| *m.get(i, j)));
            }
        } else {
            for i in 0..m.nrows() {
                data.extend((0..m.ncols()).map(|j| *m.get(i, j)));
            }
        }
    }
    let mut strides = contiguous_strides(shape);
    let nd = shape.len();
    if col_major && nd >= 2 {
        strides[nd - 2] = 1;
        strides[nd - 1] = shape[nd - 2].max(1);
    }
    Tensor::from_parts(
        Storage::from_slice(&data),
        Layout::new(shape, &strides, 0),
        T::DTYPE,
    )
}

/// The lower Cholesky factor `L` (`A = L L^H`, only `A`'s lower triangle
/// read) of each `n x n` matrix of the batch `a`, and for each matrix 0, or
/// the order `k >= 1` of its first leading minor that is not positive
/// definite (its factor is then zeros). The factors are column-major with
/// `col_major`.
pub(crate) fn cholesky<T: Faer>(
    a: &Tensor,
    n: usize,
    col_major: bool,
) -> Result<(Tensor, Vec<i32>)> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let offs = batch_offsets(batch, a.strides());
    let par = par_for(offs.len(), n);
    let _g = lock(&[a], None);
    let results = run(offs.len(), n * n * n, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let mut m = unsafe { read::<T>(a, offs[i], n, n) };
        let mut buf = MemBuffer::new(cholesky_in_place_scratch::<T>(n, par, Default::default()));
        let r = cholesky_in_place(
            m.as_mut(),
            Default::default(),
            par,
            MemStack::new(&mut buf),
            Default::default(),
        );
        Ok(match r {
            Ok(_) => {
                for j in 1..n {
                    for i in 0..j {
                        *m.get_mut(i, j) = T::zero();
                    }
                }
                (m, 0)
            }
            Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index }) => {
                (Mat::from_fn(n, n, |_, _| T::zero()), index as i32 + 1)
            }
        })
    })?;
    let (mats, info): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    Ok((write(&mats, a.shape(), col_major)?, info))
}

/// `X` with `A X = B` for each pair of the batches `a` (`n x n`, read as
/// upper or lower triangular, with ones on the diagonal when `unit`) and
/// `b` (`n x k`) of one batch shape, column-major with `col_major`. A
/// zero on the diagonal gives infinities or NaNs, as LAPACK's solver does.
pub(crate) fn solve_triangular<T: Faer>(
    a: &Tensor,
    b: &Tensor,
    (n, k): (usize, usize),
    (upper, unit): (bool, bool),
    col_major: bool,
) -> Result<Tensor> {
    let batch = &a.shape()[..a.ndim() - 2];
    let (oa, ob) = pair_offsets(a, b);
    let par = par_for(oa.len(), n.max(k));
    let _g = lock(&[a, b], None);
    let mats = run(oa.len(), n * n * k, par, |i| {
        // SAFETY: `a` and `b` are read-locked and of dtype T; the offsets
        // come from their (broadcast) layouts.
        let (am, mut x) = unsafe { (read::<T>(a, oa[i], n, n), read::<T>(b, ob[i], n, k)) };
        match (upper, unit) {
            (false, false) => tri::solve_lower_triangular_in_place(am.as_ref(), x.as_mut(), par),
            (false, true) => {
                tri::solve_unit_lower_triangular_in_place(am.as_ref(), x.as_mut(), par)
            }
            (true, false) => tri::solve_upper_triangular_in_place(am.as_ref(), x.as_mut(), par),
            (true, true) => tri::solve_unit_upper_triangular_in_place(am.as_ref(), x.as_mut(), par),
        }
        Ok(x)
    })?;
    let mut shape = batch.to_vec();
    shape.extend([n, k]);
    write(&mats, &shape, col_major)
}
