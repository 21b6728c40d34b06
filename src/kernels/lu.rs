//! LU factorization with partial pivoting, and what it gives: solves,
//! inverses and determinants, each in the input's dtype.
//!
//! The factorization follows LAPACK's `getrf`: at step `j` the row with
//! the largest `|re| + |im|` in column `j` (the first such row on ties)
//! becomes the pivot, recorded as the 1-based row it was swapped with, and
//! a zero pivot leaves its column unscaled and is reported (the first one)
//! rather than dividing by zero. Panels of up to [`PANEL`] columns are
//! factored column by column; wider ones split in two, the right half
//! updated with faer's triangular solve and matrix product.

use super::access::{elem_ptr, lock};
use super::decomp::{
    par_for, par_from, read, run, solve_par, view, with_matrix, write, Faer, FACTOR_PARALLEL_DIM,
};
use super::decomp_buf::{read_strided, Buf};
use super::matmul::batch_offsets;
use crate::{Element, Error, Result, Tensor};
use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve as tri;
use faer::perm::swap_rows_idx;
use faer::prelude::{Reborrow, ReborrowMut};
use faer::traits::math_utils::{abs1, mul, neg, recip, sub};
use faer::{Accum, Conj, MatMut, MatRef, Par};

/// Panels at most this wide are factored column by column.
const PANEL: usize = 16;

/// Factors a panel of at most [`PANEL`] columns column by column (see
/// [`factor_panel`]). With `rounded`, each product of the rank-1 updates
/// is rounded before its subtraction, as LAPACK's unblocked `getf2` does
/// (a small, exactly singular matrix keeps its exact zero pivot); else
/// they go through the matrix product (fused, and faster on tall panels).
#[inline(always)]
fn factor_leaf<T: Faer>(mut a: MatMut<'_, T>, ipiv: &mut [usize], rounded: bool) -> Option<usize> {
    let (m, n) = (a.nrows(), a.ncols());
    let mut zero = None;
    for j in 0..n {
        let col = a.rb().col(j);
        let mut p = j;
        let mut best = abs1(&col[j]);
        for i in j + 1..m {
            let v = abs1(&col[i]);
            if v > best {
                best = v;
                p = i;
            }
        }
        ipiv[j] = p;
        if p != j {
            swap_rows_idx(a.rb_mut(), j, p);
        }
        let pivot = a[(j, j)];
        if pivot == <T as Element>::zero() {
            // The column below is zero too: nothing to scale or update.
            zero.get_or_insert(j);
            continue;
        }
        let inv = recip(&pivot);
        let mut below = a.rb_mut().col_mut(j).subrows_mut(j + 1, m - j - 1);
        for i in 0..m - j - 1 {
            below[i] = mul(&below[i], &inv);
        }
        // The rank-1 update of the panel's trailing columns.
        if !rounded {
            let (_, a01, a10, a11) = a.rb_mut().split_at_mut(j + 1, j + 1);
            matmul(
                a11,
                Accum::Add,
                a10.rb().col(j).as_mat(),
                a01.rb().row(j).as_mat(),
                neg(&<T as Element>::one()),
                Par::Seq,
            );
            continue;
        }
        for c in j + 1..n {
            let u = a[(j, c)];
            if u == <T as Element>::zero() {
                continue;
            }
            let (left, mut right) = a.rb_mut().split_at_col_mut(c);
            let l = left.rb().col(j).subrows(j + 1, m - j - 1);
            let t = right.rb_mut().col_mut(0).subrows_mut(j + 1, m - j - 1);
            match (t.try_as_col_major_mut(), l.try_as_col_major()) {
                (Some(t), Some(l)) => {
                    for (ti, li) in t.as_slice_mut().iter_mut().zip(l.as_slice()) {
                        *ti = sub(ti, &mul(li, &u));
                    }
                }
                _ => {
                    let mut t = right.rb_mut().col_mut(0);
                    for i in j + 1..m {
                        t[i] = sub(&t[i], &mul(&left[(i, j)], &u));
                    }
                }
            }
        }
    }
    zero
}

/// Factors the `m x n` matrix `a` (`n <= m`) in place as `P a = L U` (the
/// unit lower `L` below the diagonal, `U` on and above it); `ipiv[j]` is
/// the row swapped with row `j` at step `j`. Returns the first column
/// whose pivot is zero.
fn factor_panel<T: Faer>(mut a: MatMut<'_, T>, ipiv: &mut [usize], par: Par) -> Option<usize> {
    let n = a.ncols();
    if n <= PANEL {
        return factor_leaf(a, ipiv, false);
    }
    let h = n / 2;
    let left = factor_panel(a.rb_mut().get_mut(.., ..h), &mut ipiv[..h], par);
    apply_swaps(a.rb_mut().get_mut(.., h..), &ipiv[..h], 0);
    {
        let (a00, mut a01, a10, mut a11) = a.rb_mut().split_at_mut(h, h);
        tri::solve_unit_lower_triangular_in_place(a00.rb(), a01.rb_mut(), par);
        matmul(
            a11.rb_mut(),
            Accum::Add,
            a10.rb(),
            a01.rb(),
            neg(&<T as Element>::one()),
            par,
        );
    }
    let right = factor_panel(a.rb_mut().get_mut(h.., h..), &mut ipiv[h..], par);
    for p in &mut ipiv[h..] {
        *p += h;
    }
    apply_swaps(a.rb_mut().get_mut(.., ..h), &ipiv[h..], h);
    left.or(right.map(|j| j + h))
}

/// Swaps row `start + j` with row `ipiv[j]` of `a`, for each `j` in order
/// (column by column: a column of the column-major `a` is contiguous).
fn apply_swaps<T: Faer>(mut a: MatMut<'_, T>, ipiv: &[usize], start: usize) {
    for c in 0..a.ncols() {
        let mut col = a.rb_mut().col_mut(c);
        for (j, &p) in ipiv.iter().enumerate() {
            if p != start + j {
                let t = col[start + j];
                col[start + j] = col[p];
                col[p] = t;
            }
        }
    }
}

/// Factors the `m x n` matrix `a` in place as `P a = L U` (`L` unit lower
/// `m x k`, `U` upper `k x n`, `k = min(m, n)`, packed in `a`); the pivots
/// (0-based rows) and the first zero pivot's column.
fn factor<T: Faer>(mut a: MatMut<'_, T>, par: Par) -> (Vec<usize>, Option<usize>) {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let par = if m.max(n) < FACTOR_PARALLEL_DIM {
        Par::Seq
    } else {
        par
    };
    let mut ipiv = vec![0; k];
    let zero = if k <= PANEL {
        let panel = a.rb_mut().get_mut(.., ..k);
        super::isa::dispatch(|| factor_leaf(panel, &mut ipiv, true))
    } else {
        factor_panel(a.rb_mut().get_mut(.., ..k), &mut ipiv, par)
    };
    if n > k {
        apply_swaps(a.rb_mut().get_mut(.., k..), &ipiv, 0);
        let (a00, mut a01) = a.rb_mut().split_at_col_mut(k);
        tri::solve_unit_lower_triangular_in_place(a00.rb().get(..k, ..), a01.rb_mut(), par);
    }
    (ipiv, zero)
}

/// Solves `A X = B` (or `A^H X = B` with `adjoint`) in place in `x`, for
/// the packed factors `lu` of `P A = L U` and their pivots.
fn solve_factored<T: Faer>(
    lu: MatRef<'_, T>,
    ipiv: &[usize],
    mut x: MatMut<'_, T>,
    adjoint: bool,
    par: Par,
) {
    if adjoint {
        // A^H = U^H L^H P: solve with U^H, then L^H, then undo the swaps.
        tri::solve_lower_triangular_in_place_with_conj(lu.transpose(), Conj::Yes, x.rb_mut(), par);
        tri::solve_unit_upper_triangular_in_place_with_conj(
            lu.transpose(),
            Conj::Yes,
            x.rb_mut(),
            par,
        );
        for (j, &p) in ipiv.iter().enumerate().rev() {
            if p != j {
                swap_rows_idx(x.rb_mut(), j, p);
            }
        }
    } else {
        apply_swaps(x.rb_mut(), ipiv, 0);
        tri::solve_unit_lower_triangular_in_place(lu, x.rb_mut(), par);
        tri::solve_upper_triangular_in_place(lu, x.rb_mut(), par);
    }
}

/// `values` (one `Vec` per batch entry) as an int32 tensor of `shape`.
fn int32s(values: impl IntoIterator<Item = i32>, shape: &[usize]) -> Result<Tensor> {
    let data: Vec<i32> = values.into_iter().collect();
    Tensor::from_slice(&data, shape)
}

/// The LU factorization of each `m x n` matrix of `a`: the packed factors
/// (column-major, as LAPACK leaves them), the pivots (int32, 1-based, `k`
/// per matrix) and for each matrix 0 or the 1-based column of its first
/// zero pivot (int32).
pub(crate) fn lu_factor<T: Faer>(a: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let k = m.min(n);
    let batch = &a.shape()[..nd - 2];
    let offs = batch_offsets(batch, a.strides());
    let par = par_from(offs.len(), m.max(n), FACTOR_PARALLEL_DIM);
    let _g = lock(&[a], None);
    let results = run(offs.len(), m * n * k, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let mut f = unsafe { read::<T>(a, offs[i], m, n) };
        let (ipiv, zero) = factor(f.as_mut(), par);
        Ok((f, ipiv, zero))
    })?;
    let mut mats = Vec::with_capacity(results.len());
    let mut pivots = Vec::with_capacity(results.len() * k);
    let mut infos = Vec::with_capacity(results.len());
    for (f, ipiv, zero) in results {
        mats.push(f);
        pivots.extend(ipiv.iter().map(|&p| p as i32 + 1));
        infos.push(zero.map_or(0, |j| j as i32 + 1));
    }
    let lu = write(mats, a.shape(), true)?;
    let mut pshape = batch.to_vec();
    pshape.push(k);
    Ok((lu, int32s(pivots, &pshape)?, int32s(infos, batch)?))
}

/// `X` with `A X = B` (or `A^H X = B` with `adjoint`) for each `A` given
/// by its packed factors `lu` (`n x n`) and `pivots` (int32, `n`), and
/// each `b` (`n x k`), the three broadcast to one batch shape by the
/// caller; column-major.
pub(crate) fn lu_solve<T: Faer>(
    lu: &Tensor,
    pivots: &Tensor,
    b: &Tensor,
    adjoint: bool,
) -> Result<Tensor> {
    let nd = lu.ndim();
    let n = lu.shape()[nd - 1];
    let k = b.shape()[b.ndim() - 1];
    let batch = &lu.shape()[..nd - 2];
    let (ol, ob) = (
        batch_offsets(batch, lu.strides()),
        batch_offsets(batch, b.strides()),
    );
    let pstrides = pivots.strides();
    let op = batch_offsets(batch, &[&pstrides[..pstrides.len() - 1], &[0, 0]].concat());
    let pstep = pstrides[pstrides.len() - 1];
    let par = solve_par(ol.len(), n, k);
    let _g = lock(&[lu, pivots, b], None);
    let mats = run(ol.len(), n * n * k, par, |i| {
        // SAFETY: the three are read-locked and of the dtypes read; the
        // offsets come from their (broadcast) layouts.
        let (f, mut x, ipiv) = unsafe {
            let p = elem_ptr::<i32>(pivots).add(op[i]);
            let ipiv = (0..n).map(|j| *p.add(j * pstep)).collect::<Vec<i32>>();
            (view::<T>(lu, ol[i], n, n), read::<T>(b, ob[i], n, k), ipiv)
        };
        // The op checked that every pivot lies in 1..=n.
        let ipiv: Vec<usize> = ipiv.iter().map(|&v| v as usize - 1).collect();
        solve_factored(f, &ipiv, x.as_mut(), adjoint, par);
        Ok(x)
    })?;
    write(mats, &with_matrix(lu.shape(), n, k), true)
}

/// "(Batch element i): " for batched inputs, as torch prefixes errors.
pub(crate) fn batch_prefix(batched: bool, i: usize) -> String {
    if batched {
        format!("(Batch element {i}): ")
    } else {
        String::new()
    }
}

/// The inverse of each `n x n` matrix of the batch `a` (column-major), or
/// the error for the first singular one (as `linalg.inv` words it).
pub(crate) fn inv<T: Faer>(a: &Tensor, n: usize) -> Result<Tensor> {
    let nd = a.ndim();
    let offs = batch_offsets(&a.shape()[..nd - 2], a.strides());
    let par = par_for(offs.len(), n);
    let _g = lock(&[a], None);
    let mats = run(offs.len(), n * n * n, par, |i| {
        // SAFETY: `a` is read-locked and of dtype T; offs come from its layout.
        let mut f = unsafe { read::<T>(a, offs[i], n, n) };
        let (ipiv, zero) = factor(f.as_mut(), par);
        if let Some(j) = zero {
            return Err(Error::linalg(format!(
                "linalg.inv: {}The diagonal element {} is zero, the inversion could not be completed because the input matrix is singular.",
                batch_prefix(nd > 2, i),
                j + 1
            )));
        }
        let mut x = Buf::<T>::identity(n, n);
        solve_factored(f.as_ref(), &ipiv, x.as_mut(), false, par);
        Ok(x)
    })?;
    write(mats, a.shape(), true)
}

/// The determinant of each `n x n` matrix of the batch `a`.
pub(crate) fn det<T: Faer>(a: &Tensor, n: usize) -> Result<Tensor> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let offs = batch_offsets(batch, a.strides());
    let par = par_from(offs.len(), n, FACTOR_PARALLEL_DIM);
    let _g = lock(&[a], None);
    let dets = run(offs.len(), n * n * n, par, |i| {
        // The transpose is factored (its determinant is the same), as
        // torch does: a row-major matrix is LAPACK's column-major transpose.
        let (rs, cs) = (a.strides()[nd - 2], a.strides()[nd - 1]);
        // SAFETY: `a` is read-locked and of dtype T; offs come from its
        // layout, and every (j, i) lies in its matrix at offs[i].
        let mut f = unsafe { read_strided::<T>(a, offs[i], (n, n), (cs, rs)) };
        let (ipiv, _) = factor(f.as_mut(), par);
        let swaps = ipiv.iter().enumerate().filter(|(j, &p)| p != *j).count();
        let start = if swaps % 2 == 1 {
            neg(&<T as Element>::one())
        } else {
            <T as Element>::one()
        };
        Ok((0..n).fold(start, |d, j| mul(&d, f.get(j, j))))
    })?;
    Tensor::from_slice(&dets, batch)
}

/// `X` with `A X = B` for each pair of the batches `a` (`n x n`) and `b`
/// (`n x k`) of one batch shape (column-major), or the error for the
/// first singular `A` (as `linalg.solve` words it); with `keep`, also the
/// packed factors and pivots of `A` (as [`lu_factor`] gives them), for a
/// backward to solve with `A^H` without factoring again.
pub(crate) fn solve<T: Faer>(
    a: &Tensor,
    b: &Tensor,
    n: usize,
    k: usize,
    keep: bool,
) -> Result<(Tensor, Option<(Tensor, Tensor)>)> {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let (oa, ob) = (
        batch_offsets(batch, a.strides()),
        batch_offsets(batch, b.strides()),
    );
    let par = par_from(oa.len(), n.max(k), FACTOR_PARALLEL_DIM);
    let _g = lock(&[a, b], None);
    let solved = run(oa.len(), n * n * (n + k), par, |i| {
        // SAFETY: `a` and `b` are read-locked and of dtype T; the offsets
        // come from their (broadcast) layouts.
        let (mut f, mut x) = unsafe { (read::<T>(a, oa[i], n, n), read::<T>(b, ob[i], n, k)) };
        let (ipiv, zero) = factor(f.as_mut(), par);
        if zero.is_some() {
            return Err(Error::linalg(format!(
                "torch.linalg.solve: {}The solver failed because the input matrix is singular.",
                batch_prefix(nd > 2, i)
            )));
        }
        solve_factored(
            f.as_ref(),
            &ipiv,
            x.as_mut(),
            false,
            solve_par(oa.len(), n, k),
        );
        Ok((x, keep.then_some((f, ipiv))))
    })?;
    let mut shape = batch.to_vec();
    shape.extend([n, k]);
    let mut xs = Vec::with_capacity(solved.len());
    let mut factors = Vec::with_capacity(if keep { solved.len() } else { 0 });
    let mut pivots = Vec::new();
    for (x, kept) in solved {
        xs.push(x);
        if let Some((f, ipiv)) = kept {
            factors.push(f);
            pivots.extend(ipiv.iter().map(|&p| p as i32 + 1));
        }
    }
    let x = write(xs, &shape, true)?;
    if !keep {
        return Ok((x, None));
    }
    let mut pshape = batch.to_vec();
    pshape.push(n);
    Ok((
        x,
        Some((write(factors, a.shape(), true)?, int32s(pivots, &pshape)?)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy::permuted;
    use crate::DType;
    use faer::Mat;

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
        let d = det::<f64>(&a, 2).unwrap();
        assert_eq!(d.shape(), &[2]);
        close(&d.to_vec::<f64>(), &[-2.0, -1.0]);
        // 2 (3*2 - 2*1) - 0 + 1 (1*1 - 3*1) = 6, read through a transpose
        // (the determinant of the transpose is the same).
        let m =
            Tensor::from_slice(&[2.0f32, 0.0, 1.0, 1.0, 3.0, 2.0, 1.0, 1.0, 2.0], &[3, 3]).unwrap();
        let d = det::<f32>(&permuted(&m, &[1, 0]).unwrap(), 3).unwrap();
        assert_eq!(d.dtype(), DType::Float32);
        assert!((d.to_vec::<f32>()[0] - 6.0).abs() < 1e-6);
        // A singular matrix has determinant 0.
        let s = Tensor::from_slice(&[1.0f64, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
        close(&det::<f64>(&s, 2).unwrap().to_vec::<f64>(), &[0.0]);
    }

    #[test]
    fn inverse_of_a_matrix() {
        // [[4, 7], [2, 6]]^-1 = [[6, -7], [-2, 4]] / 10
        let a = Tensor::from_slice(&[4.0f64, 7.0, 2.0, 6.0], &[2, 2]).unwrap();
        let inv_a = inv::<f64>(&a, 2).unwrap();
        assert_eq!(inv_a.shape(), &[2, 2]);
        close(&inv_a.to_vec::<f64>(), &[0.6, -0.7, -0.2, 0.4]);
    }

    #[test]
    fn a_singular_matrix_names_its_zero_pivot_and_batch_entry() {
        let s = Tensor::from_slice(&[1.0f64, 2.0, 2.0, 4.0], &[2, 2]).unwrap();
        let e = inv::<f64>(&s, 2).unwrap_err().to_string();
        assert!(
            e.contains("linalg.inv: The diagonal element 2 is zero"),
            "{e}"
        );
        let b =
            Tensor::from_slice(&[1.0f64, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 4.0], &[2, 2, 2]).unwrap();
        let e = inv::<f64>(&b, 2).unwrap_err().to_string();
        assert!(
            e.contains("(Batch element 1): The diagonal element 2"),
            "{e}"
        );
        let rhs = Tensor::from_slice(&[1.0f64, 1.0], &[2, 1]).unwrap();
        let e = solve::<f64>(&s, &rhs, 2, 1, false).unwrap_err().to_string();
        assert!(e.contains("torch.linalg.solve: The solver failed"), "{e}");
    }

    #[test]
    fn solve_gives_the_columns_of_x() {
        // [[3, 1], [1, 2]] x = [9, 8] for x = [2, 3]; and [6, 7] for [1, 3].
        let a = Tensor::from_slice(&[3.0f64, 1.0, 1.0, 2.0], &[2, 2]).unwrap();
        let b = Tensor::from_slice(&[9.0f64, 6.0, 8.0, 7.0], &[2, 2]).unwrap();
        let (x, kept) = solve::<f64>(&a, &b, 2, 2, true).unwrap();
        assert_eq!(x.shape(), &[2, 2]);
        close(&x.to_vec::<f64>(), &[2.0, 1.0, 3.0, 3.0]);
        // The kept factors are lu_factor's.
        let (lu, pivots) = kept.unwrap();
        let (lu2, pivots2, _) = lu_factor::<f64>(&a).unwrap();
        assert_eq!(lu.to_vec::<f64>(), lu2.to_vec::<f64>());
        assert_eq!(pivots.to_vec::<i32>(), pivots2.to_vec::<i32>());
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
        let d = det::<C>(&a, 2).unwrap().to_vec::<C>();
        assert!((d[0] - C::new(4.0, 0.0)).norm() < 1e-12, "{d:?}");
        // A^{-1} = [[3-i, -2], [-i, 1+i]] / 4, and A x = b for x = A^{-1} b.
        let inv_a = inv::<C>(&a, 2).unwrap().to_vec::<C>();
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
        let x = solve::<C>(&a, &b, 2, 1, false).unwrap().0.to_vec::<C>();
        let ax0 = C::new(1.0, 1.0) * x[0] + C::new(2.0, 0.0) * x[1];
        let ax1 = C::new(0.0, 1.0) * x[0] + C::new(3.0, -1.0) * x[1];
        assert!((ax0 - C::new(1.0, 0.0)).norm() < 1e-12 && (ax1 - C::new(0.0, 2.0)).norm() < 1e-12);
    }

    /// `P A = L U` rebuilt from the packed factors, against `A`, and the
    /// pivots against a column-by-column elimination written out here.
    #[test]
    fn blocked_factor_matches_unblocked_elimination() {
        for (m, n) in [(5, 5), (40, 40), (50, 23), (23, 50), (64, 64)] {
            let a = Mat::<f64>::from_fn(m, n, |i, j| {
                ((i * 7 + j * 13) % 11) as f64 - 5.0 + (i == j) as u8 as f64 * 0.5
            });
            let mut f = a.clone();
            let (ipiv, _) = factor(f.as_mut(), Par::Seq);
            // Reference: textbook elimination with the same pivot rule.
            let mut r = a.clone();
            let mut rp = vec![0; m.min(n)];
            for j in 0..m.min(n) {
                let p = (j..m).fold(j, |p, i| {
                    if r[(i, j)].abs() > r[(p, j)].abs() {
                        i
                    } else {
                        p
                    }
                });
                rp[j] = p;
                for c in 0..n {
                    let t = r[(j, c)];
                    r[(j, c)] = r[(p, c)];
                    r[(p, c)] = t;
                }
                if r[(j, j)] == 0.0 {
                    continue;
                }
                for i in j + 1..m {
                    r[(i, j)] /= r[(j, j)];
                    for c in j + 1..n {
                        r[(i, c)] -= r[(i, j)] * r[(j, c)];
                    }
                }
            }
            assert_eq!(ipiv, rp, "{m}x{n}");
            for i in 0..m {
                for j in 0..n {
                    assert!((f[(i, j)] - r[(i, j)]).abs() < 1e-9, "{m}x{n} at {i},{j}");
                }
            }
        }
    }

    #[test]
    fn zero_pivots_leave_columns_unscaled() {
        let mut a = Mat::<f64>::zeros(4, 4);
        a[(0, 0)] = 2.0;
        a[(1, 0)] = 1.0;
        a[(1, 1)] = 0.5;
        a[(3, 3)] = 1.0;
        let (ipiv, zero) = factor(a.as_mut(), Par::Seq);
        assert_eq!(zero, Some(2));
        assert_eq!(ipiv, vec![0, 1, 2, 3]);
        assert!(a.col_iter().all(|c| c.iter().all(|v| v.is_finite())));
    }
}
