//! Decompositions and triangular solves on the `faer` crate.
//!
//! Each matrix of a batch is read (through the input's own strides) into
//! a column-major buffer of the input's dtype from the storage cache (see
//! `decomp_buf`), so a float32 input computes in float32; a single
//! column-major result becomes the output's storage as it is.
//! Independent matrices of a batch run in parallel on the pool; a single
//! large matrix lets faer use the pool's threads instead.

use super::access::{elem_ptr, lock};
pub(super) use super::decomp_buf::{read, write};
use super::decomp_buf::{stack, workspace, Buf};
use super::linalg::{pair_offsets, per_batch};
use super::matmul::batch_offsets;
use crate::tensor::{Layout, Storage};
use crate::{Complex, Element, Result, Tensor};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::linalg::householder as hh;
use faer::linalg::qr::no_pivoting::factor as qrf;
use faer::linalg::svd::{svd as faer_svd, svd_scratch, ComputeSvdVectors};
use faer::linalg::triangular_solve as tri;
use faer::traits::math_utils::conj;
use faer::{Conj, Mat, MatRef, Par};

pub(crate) use super::eig::eig;
pub(crate) use super::ldl::{ldl_factor, ldl_solve};
pub(crate) use super::lu::{det, inv, lu_factor, lu_solve, solve};

/// The dtypes faer computes in: ferrograd's float32/float64 and their
/// complex counterparts.
pub(crate) trait Faer: Element + faer::traits::ComplexField {
    /// The real dtype of eigenvalues and singular values.
    type Re: Element;
    fn re(&self) -> Self::Re;
    /// `p` with `|p| = 1` and `conj(p) x` real, of the sign of `x`'s real
    /// part (1 for real types and for zero).
    fn phase(&self) -> Self {
        *self
    }
    /// `conj(p) x` for the phase `p` of [`Faer::phase`] (real types: `x`).
    fn unphase(&self, _p: &Self) -> Self {
        *self
    }
    /// The real part, as this type.
    fn real_only(&self) -> Self {
        *self
    }
    /// `x p`.
    fn rephase(&self, _p: &Self) -> Self {
        *self
    }
}
/// `Faer` for a real type and for the complex type over it.
macro_rules! faer_pair {
    ($real:ty) => {
        impl Faer for $real {
            type Re = $real;
            fn re(&self) -> $real {
                *self
            }
        }
        impl Faer for Complex<$real> {
            type Re = $real;
            fn re(&self) -> $real {
                self.re
            }
            fn phase(&self) -> Self {
                let a = self.norm();
                if a == 0.0 {
                    return Complex::new(1.0, 0.0);
                }
                let p = self / a;
                if self.re < 0.0 {
                    -p
                } else {
                    p
                }
            }
            fn unphase(&self, p: &Self) -> Self {
                p.conj() * self
            }
            fn real_only(&self) -> Self {
                Complex::new(self.re, 0.0)
            }
            fn rephase(&self, p: &Self) -> Self {
                self * p
            }
        }
    };
}
faer_pair!(f32);
faer_pair!(f64);

/// Matrices at least this large, alone in their batch, are decomposed
/// with the pool's threads (eigh, svd, inverses: measured on 2 cores,
/// two threads are faster from 256).
pub(super) const PARALLEL_DIM: usize = 192;

/// The order from which QR, Cholesky and LU factorizations use the pool:
/// their products are too small to gain from splitting below it
/// (measured on 2 cores: one thread is faster up to 256, even at 384,
/// and two from 512; QR at 192 took 3x as long on two).
pub(super) const FACTOR_PARALLEL_DIM: usize = 448;

/// How faer runs one matrix of `n` rows when the batch has `nb` of them:
/// on the pool from order `from` when the matrix is alone.
pub(super) fn par_from(nb: usize, n: usize, from: usize) -> Par {
    let threads = crate::pool::kernel_threads();
    if nb == 1 && n >= from && threads > 1 {
        Par::rayon(threads)
    } else {
        Par::Seq
    }
}

/// [`par_from`] at [`PARALLEL_DIM`].
pub(super) fn par_for(nb: usize, n: usize) -> Par {
    par_from(nb, n, PARALLEL_DIM)
}

/// Triangular solves of at least this much work (`n^2 k` for `n x n`
/// against `k` right-hand sides) alone in their batch run on the pool
/// (measured on 2 cores: 256 x 256 against 4 is faster on one thread,
/// 1024 x 1024 against 4 on two).
const SOLVE_PARALLEL_WORK: usize = 1 << 21;

/// How faer runs the triangular solves of one `n x n` matrix against `k`
/// right-hand sides when the batch has `nb` of them.
pub(super) fn solve_par(nb: usize, n: usize, k: usize) -> Par {
    if n.saturating_mul(n).saturating_mul(k) >= SOLVE_PARALLEL_WORK {
        par_for(nb, n.max(k))
    } else {
        Par::Seq
    }
}

/// Runs `f` for each matrix of the batch, in parallel across the batch or,
/// for one large matrix, with `par` on the pool.
pub(super) fn run<R: Send>(
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
/// last two dims' strides) into a faer matrix.
///
/// # Safety
/// `t` is read-locked, of dtype `T`, and `off` is a batch offset of its
/// layout.
pub(super) unsafe fn read_mat<T: Faer>(t: &Tensor, off: usize, rows: usize, cols: usize) -> Mat<T> {
    let nd = t.ndim();
    let (rs, cs) = (t.strides()[nd - 2], t.strides()[nd - 1]);
    let p = elem_ptr::<T>(t).add(off);
    Mat::from_fn(rows, cols, |i, j| *p.add(i * rs + j * cs))
}

/// The `rows x cols` matrix at element offset `off` of `t`, viewed in place
/// through its strides (no copy; broadcast dims have stride 0).
///
/// # Safety
/// As for [`read_mat`], and the view is used only while `t` stays read-locked.
pub(super) unsafe fn view<T: Faer>(
    t: &Tensor,
    off: usize,
    rows: usize,
    cols: usize,
) -> MatRef<'_, T> {
    let nd = t.ndim();
    let (rs, cs) = (t.strides()[nd - 2], t.strides()[nd - 1]);
    MatRef::from_raw_parts(
        elem_ptr::<T>(t).add(off),
        rows,
        cols,
        rs as isize,
        cs as isize,
    )
}

/// The real values `v` (`k` per matrix) as a tensor of `shape`.
fn write_values<T: Faer>(v: &[Vec<T::Re>], shape: &[usize]) -> Result<Tensor> {
    let data: Vec<T::Re> = v.iter().flatten().copied().collect();
    Tensor::from_parts(
        Storage::from_slice(&data),
        Layout::contiguous(shape),
        <T::Re as Element>::DTYPE,
    )
}

/// `shape` with its last two dims replaced by `rows x cols`.
pub(super) fn with_matrix(shape: &[usize], rows: usize, cols: usize) -> Vec<usize> {
    let mut out = shape[..shape.len() - 2].to_vec();
    out.extend([rows, cols]);
    out
}

/// The QR decomposition of each `m x n` matrix of `a`: `Q` (`m x k`, or
/// `m x m` with `complete`; not computed without `want_q`, an empty
/// tensor is returned) and the upper trapezoidal `R` (`k x n`, or `m x n`
/// with `complete`), `k = min(m, n)`, both column-major.
pub(crate) fn qr<T: Faer>(a: &Tensor, complete: bool, want_q: bool) -> Result<(Tensor, Tensor)> {
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let k = m.min(n);
    let (qcols, rrows) = if complete { (m, m) } else { (k, k) };
    let offs = batch_offsets(&a.shape()[..nd - 2], a.strides());
    let par = par_from(offs.len(), m.max(n), FACTOR_PARALLEL_DIM);
    let _g = lock(&[a], None);
    let results = run(offs.len(), m * n * k, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let mut f = unsafe { read::<T>(a, offs[i], m, n) };
        let bs = qrf::recommended_block_size::<T>(m, n).max(1);
        let mut coeff = Buf::<T>::zeros(bs, k);
        let mut buf = workspace(faer::dyn_stack::StackReq::any_of(&[
            qrf::qr_in_place_scratch::<T>(m, n, bs, par, Default::default()),
            hh::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, qcols),
        ]));
        let stack = stack(&mut buf);
        qrf::qr_in_place(f.as_mut(), coeff.as_mut(), par, stack, Default::default());
        let mut r = Buf::from_fn(rrows, n, |i, j| {
            if i <= j && i < k {
                *f.get(i, j)
            } else {
                T::zero()
            }
        });
        // A complex R's diagonal is made real (LAPACK's convention, which
        // the derivatives assume): row i of R times conj(p_i), column i of
        // Q times p_i.
        let phases: Vec<T> = (0..k).map(|i| r.get(i, i).phase()).collect();
        if !T::IS_REAL {
            for (i, p) in phases.iter().enumerate() {
                for j in i..n {
                    *r.get_mut(i, j) = r.get(i, j).unphase(p);
                }
                // Real up to rounding; made exactly real.
                *r.get_mut(i, i) = r.get(i, i).real_only();
            }
        }
        if !want_q {
            return Ok((None, r));
        }
        let basis = Buf::from_fn(m, k, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Greater => *f.get(i, j),
            std::cmp::Ordering::Equal => T::one(),
            std::cmp::Ordering::Less => T::zero(),
        });
        let mut q = Buf::<T>::identity(m, qcols);
        hh::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            basis.as_ref(),
            coeff.as_ref(),
            Conj::No,
            q.as_mut(),
            par,
            stack,
        );
        if !T::IS_REAL {
            for (j, p) in phases.iter().enumerate() {
                for i in 0..m {
                    *q.get_mut(i, j) = q.get(i, j).rephase(p);
                }
            }
        }
        Ok((Some(q), r))
    })?;
    let (qs, rs): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    let r = write(rs, &with_matrix(a.shape(), rrows, n), true)?;
    let q = if want_q {
        let qs: Vec<Buf<T>> = qs.into_iter().flatten().collect();
        write(qs, &with_matrix(a.shape(), m, qcols), true)?
    } else {
        Tensor::from_parts(
            Storage::from_slice::<T>(&[]),
            Layout::contiguous(&[0]),
            T::DTYPE,
        )?
    };
    Ok((q, r))
}

/// The eigenvalues (ascending, real) of each Hermitian `n x n` matrix of
/// Self-adjoint eigenproblems of at least this order are split by divide
/// and conquer (smaller ones, and the halves once this small, run the QR
/// algorithm): measured on 2 cores, 48 is 5-15% faster than faer's 128 at
/// orders 64 to 256.
const EVD_RECURSION: usize = 48;

/// `a`, read from its lower triangle, and with `vectors` the eigenvectors
/// as the columns of a column-major matrix; `Err(())` when the iteration
/// does not converge.
#[allow(clippy::type_complexity)]
pub(crate) fn eigh<T: Faer>(a: &Tensor, vectors: bool) -> Result<(Tensor, Option<Tensor>)> {
    let nd = a.ndim();
    let n = a.shape()[nd - 1];
    let offs = batch_offsets(&a.shape()[..nd - 2], a.strides());
    let par = par_for(offs.len(), n);
    let want = if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    };
    let _g = lock(&[a], None);
    let results = run(offs.len(), n * n * n, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let m = unsafe { read::<T>(a, offs[i], n, n) };
        let mut s = faer::diag::Diag::<T>::zeros(n);
        let mut u = vectors.then(|| Buf::<T>::zeros(n, n));
        let params = faer::linalg::evd::SelfAdjointEvdParams {
            recursion_threshold: EVD_RECURSION,
            ..<faer::linalg::evd::SelfAdjointEvdParams as faer::Auto<T>>::auto()
        };
        let mut buf = workspace(self_adjoint_evd_scratch::<T>(n, want, par, params.into()));
        self_adjoint_evd(
            m.as_ref(),
            s.as_mut(),
            u.as_mut().map(|u| u.as_mut()),
            par,
            stack(&mut buf),
            params.into(),
        )
        .map_err(|_| no_convergence("linalg.eigh", "eigenvalues"))?;
        let vals: Vec<T::Re> = (0..n).map(|j| s[j].re()).collect();
        Ok((vals, u))
    })?;
    let (vals, us): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    let w = write_values::<T>(&vals, &a.shape()[..nd - 1])?;
    let v = if vectors {
        let us: Vec<Buf<T>> = us.into_iter().flatten().collect();
        Some(write(us, a.shape(), true)?)
    } else {
        None
    };
    Ok((w, v))
}

/// The singular values (descending) of each `m x n` matrix of `a`, and
/// with `vectors` `U` (`m x k`, or `m x m` with `full`) and `Vh` (`k x n`,
/// or `n x n`), `k = min(m, n)`, both column-major.
#[allow(clippy::type_complexity)]
pub(crate) fn svd<T: Faer>(
    a: &Tensor,
    vectors: bool,
    full: bool,
) -> Result<(Option<Tensor>, Tensor, Option<Tensor>)> {
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let k = m.min(n);
    let (uc, vc) = if full { (m, n) } else { (k, k) };
    let want = match (vectors, full) {
        (false, _) => ComputeSvdVectors::No,
        (true, false) => ComputeSvdVectors::Thin,
        (true, true) => ComputeSvdVectors::Full,
    };
    let offs = batch_offsets(&a.shape()[..nd - 2], a.strides());
    let par = par_for(offs.len(), m.max(n));
    let _g = lock(&[a], None);
    let results = run(offs.len(), m * n * k, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let x = unsafe { read::<T>(a, offs[i], m, n) };
        let mut s = faer::diag::Diag::<T>::zeros(k);
        let mut u = vectors.then(|| Buf::<T>::zeros(m, uc));
        let mut v = vectors.then(|| Buf::<T>::zeros(n, vc));
        let mut buf = workspace(svd_scratch::<T>(m, n, want, want, par, Default::default()));
        faer_svd(
            x.as_ref(),
            s.as_mut(),
            u.as_mut().map(|u| u.as_mut()),
            v.as_mut().map(|v| v.as_mut()),
            par,
            stack(&mut buf),
            Default::default(),
        )
        .map_err(|_| no_convergence("linalg.svd", "singular values"))?;
        let vals: Vec<T::Re> = (0..k).map(|j| s[j].re()).collect();
        let vh = v.map(|v| Buf::from_fn(vc, n, |i, j| conj(v.get(j, i))));
        Ok((u, vals, vh))
    })?;
    let mut us = Vec::new();
    let mut vals = Vec::new();
    let mut vhs = Vec::new();
    for (u, s, vh) in results {
        us.extend(u);
        vals.push(s);
        vhs.extend(vh);
    }
    let s = write_values::<T>(&vals, &with_matrix(a.shape(), k, 1)[..nd - 1])?;
    if !vectors {
        return Ok((None, s, None));
    }
    let u = write(us, &with_matrix(a.shape(), m, uc), true)?;
    let vh = write(vhs, &with_matrix(a.shape(), vc, n), true)?;
    Ok((Some(u), s, Some(vh)))
}

/// The sign (for complex matrices the phase `det / |det|`; 0 for a
/// singular matrix) and `ln |det|` of each `n x n` matrix of `a`, from its
/// LU factorization with partial pivoting, accumulated in float64.
pub(crate) fn slogdet<T: Faer>(a: &Tensor) -> Result<(Tensor, Tensor)> {
    use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
    let nd = a.ndim();
    let n = a.shape()[nd - 1];
    let offs = batch_offsets(&a.shape()[..nd - 2], a.strides());
    let par = par_for(offs.len(), n);
    let _g = lock(&[a], None);
    let results = run(offs.len(), n * n * n, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let mut lu = unsafe { read::<T>(a, offs[i], n, n) };
        let (mut fwd, mut bwd) = (vec![0usize; n], vec![0usize; n]);
        let mut buf = workspace(lu_in_place_scratch::<usize, T>(
            n,
            n,
            par,
            Default::default(),
        ));
        let (info, _) = lu_in_place(
            lu.as_mut(),
            &mut fwd,
            &mut bwd,
            par,
            stack(&mut buf),
            Default::default(),
        );
        let mut sign = Complex::new(
            if info.transposition_count % 2 == 1 {
                -1.0
            } else {
                1.0
            },
            0.0,
        );
        let mut logabs = 0.0f64;
        for j in 0..n {
            let z = lu.get(j, j).to_complex();
            let m = z.norm();
            if m == 0.0 {
                return Ok((T::zero(), f64::NEG_INFINITY));
            }
            logabs += m.ln();
            sign *= z / m;
        }
        // Renormalized: n unit factors drift from modulus one by rounding.
        Ok((T::from_complex(sign / sign.norm()), logabs))
    })?;
    let batch = &a.shape()[..nd - 2];
    let signs: Vec<T> = results.iter().map(|r| r.0).collect();
    let logs: Vec<T::Re> = results
        .iter()
        .map(|r| <T::Re as Element>::from_f64(r.1))
        .collect();
    let sign = Tensor::from_parts(
        Storage::from_slice(&signs),
        Layout::contiguous(batch),
        T::DTYPE,
    )?;
    let logabs = write_values::<T>(&[logs], batch)?;
    Ok((sign, logabs))
}

/// torch's error for a decomposition whose iteration did not converge.
pub(super) fn no_convergence(op: &str, what: &str) -> crate::Error {
    crate::Error::linalg(format!(
        "{op}: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated {what}."
    ))
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
    let par = par_from(offs.len(), n, FACTOR_PARALLEL_DIM);
    let _g = lock(&[a], None);
    let results = run(offs.len(), n * n * n, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let mut m = unsafe { read::<T>(a, offs[i], n, n) };
        let mut buf = workspace(cholesky_in_place_scratch::<T>(n, par, Default::default()));
        let r = cholesky_in_place(
            m.as_mut(),
            Default::default(),
            par,
            stack(&mut buf),
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
                (Buf::from_fn(n, n, |_, _| T::zero()), index as i32 + 1)
            }
        })
    })?;
    let (mats, info): (Vec<_>, Vec<_>) = results.into_iter().unzip();
    Ok((write(mats, a.shape(), col_major)?, info))
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
    let par = solve_par(oa.len(), n, k);
    let _g = lock(&[a, b], None);
    let mats = run(oa.len(), n * n * k, par, |i| {
        // SAFETY: `a` and `b` are read-locked and of dtype T; the offsets
        // come from their (broadcast) layouts.
        let (am, mut x) = unsafe { (view::<T>(a, oa[i], n, n), read::<T>(b, ob[i], n, k)) };
        match (upper, unit) {
            (false, false) => tri::solve_lower_triangular_in_place(am, x.as_mut(), par),
            (false, true) => tri::solve_unit_lower_triangular_in_place(am, x.as_mut(), par),
            (true, false) => tri::solve_upper_triangular_in_place(am, x.as_mut(), par),
            (true, true) => tri::solve_unit_upper_triangular_in_place(am, x.as_mut(), par),
        }
        Ok(x)
    })?;
    let mut shape = batch.to_vec();
    shape.extend([n, k]);
    write(mats, &shape, col_major)
}
