//! `linalg.lu_factor_ex` (and `lu_factor`), `linalg.lu`, `lu_unpack` and
//! `linalg.lu_solve`, on the LU kernels of `kernels::lu` in the input's
//! dtype, with reverse, forward and batched derivatives.
//!
//! With `P A = L U` written `A' = P^T A = L U` (`L` unit lower `m x k`, `U`
//! upper `k x n`, `k = min(m, n)`), a square `A'` moves as
//! `X = L^{-1} dA' U^{-1}`, `dL = L tril_{-1}(X)`, `dU = triu(X) U` (the
//! strict lower part of `X` is `L^{-1} dL`, its upper part `dU U^{-1}`).
//! Reverse mode is the adjoint:
//! `gA' = L^{-H} (tril_{-1}(L^H gL) + triu(gU U^H)) U^{-H}`. A wide `A'`
//! (`m < n`) splits `U = [U1 U2]`: the square part as above and
//! `dU2 = L^{-1} (dA'2 - dL U2)`; a tall one (`m > n`) splits
//! `L = [L1; L2]`: `dL2 = (dA'2 - L2 dU) U^{-1}`. Every formula is built
//! from recorded ops, so it differentiates again. Complex gradients are
//! conjugate Wirtinger derivatives (every transpose a conjugate one).

use crate::autograd::{any_tangent, derivatives, is_grad_enabled};
use crate::{DType, Error, Result, Tensor};

/// Checks that `a` is a batch of float32/float64/complex matrices, for
/// `op` (torch's errors).
fn check_lu_input(a: &Tensor, op: &str) -> Result<()> {
    if a.ndim() < 2 {
        return Err(Error::runtime(format!(
            "torch.{op}: Expected tensor with 2 or more dimensions. Got size: {:?} instead",
            a.shape()
        )));
    }
    if !a.dtype().is_differentiable() || a.dtype().is_reduced_float() {
        return Err(Error::not_implemented("lu_cpu", a.dtype()));
    }
    Ok(())
}

/// Whether a gradient or tangent can reach `a`.
fn differentiable(a: &Tensor) -> bool {
    (is_grad_enabled() && a.requires_grad()) || any_tangent(&[a])
}

/// The unit lower `L` (`m x k`) and upper `U` (`k x n`) packed in `lu`.
fn unpack_factors(lu: &Tensor) -> Result<(Tensor, Tensor)> {
    let nd = lu.ndim();
    let (m, n) = (lu.shape()[nd - 2], lu.shape()[nd - 1]);
    let k = m.min(n);
    let eye = Tensor::eye(m as i64, Some(k as i64), lu.dtype())?;
    let l = lu.narrow(-1, 0, k)?.tril(-1)?.add(&eye)?;
    let u = lu.narrow(-2, 0, k)?.triu(0)?;
    Ok((l, u))
}

/// For LAPACK pivots (int32, 1-based, `k` per matrix): the row of `A`
/// that each row of `P^T A` is (int64, `m` per matrix).
fn pivot_permutation(pivots: &Tensor, m: usize) -> Result<Tensor> {
    let nd = pivots.ndim();
    let k = pivots.shape()[nd - 1];
    let p = pivots.to_vec::<i32>();
    let mut rows = Vec::with_capacity(p.len() / k.max(1) * m);
    let count: usize = pivots.shape()[..nd - 1].iter().product();
    for b in 0..count {
        let mut perm: Vec<i64> = (0..m as i64).collect();
        for (j, &v) in p[b * k..(b + 1) * k].iter().enumerate() {
            if v < 1 || v as usize > m {
                return Err(Error::runtime(format!(
                    "lu_unpack: pivot {v} at position {j} is out of range for matrices of {m} rows. Did you properly pass the result of lu_factor?"
                )));
            }
            perm.swap(j, v as usize - 1);
        }
        rows.extend(perm);
    }
    let mut shape = pivots.shape()[..nd - 1].to_vec();
    shape.push(m);
    Tensor::from_slice(&rows, &shape)
}

/// The rows of `x` in the order `perm` (int64, `m` per matrix) names:
/// `P^T x` for the permutation of [`pivot_permutation`]; `x` may have
/// more leading batch dims than `perm`.
fn take_rows(x: &Tensor, perm: &Tensor) -> Result<Tensor> {
    let idx = perm.unsqueeze(-1)?;
    let shape: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
    x.gather(-2, &idx.expand(&shape)?)
}

/// The inverse permutation of each row of `perm` (so that
/// `take_rows(x, inverse) = P x`).
fn inverse_permutation(perm: &Tensor) -> Result<Tensor> {
    let nd = perm.ndim();
    let m = perm.shape()[nd - 1];
    let p = perm.to_vec::<i64>();
    let mut inv = vec![0i64; p.len()];
    for (b, row) in p.chunks(m.max(1)).enumerate() {
        for (i, &r) in row.iter().enumerate() {
            inv[b * m + r as usize] = i as i64;
        }
    }
    Tensor::from_slice(&inv, perm.shape())
}

/// `L^{-H} (tril_{-1}(L^H gL) + triu(gU U^H)) U^{-H}` for square unit
/// lower `l` and upper `u`, with `gl` strictly lower and `gu` upper.
fn square_backward(l: &Tensor, u: &Tensor, gl: &Tensor, gu: &Tensor) -> Result<Tensor> {
    let lh = l.adjoint()?;
    let phi = lh
        .matmul(gl)?
        .tril(-1)?
        .add(&gu.matmul(&u.adjoint()?)?.triu(0)?)?;
    let y = lh.linalg_solve_triangular(&phi, true, true, true)?;
    u.adjoint()?
        .linalg_solve_triangular(&y, false, false, false)
}

/// The gradient of `A` for the gradient `glu` of the packed factors of
/// `P A = L U`.
fn lu_factor_backward(glu: &Tensor, lu: &Tensor, perm: &Tensor) -> Result<Tensor> {
    let nd = lu.ndim();
    let (m, n) = (lu.shape()[nd - 2], lu.shape()[nd - 1]);
    let k = m.min(n);
    let (l, u) = unpack_factors(lu)?;
    let ga = if m == n {
        square_backward(&l, &u, &glu.tril(-1)?, &glu.triu(0)?)?
    } else if m < n {
        let (g1, gu2) = (glu.narrow(-1, 0, k)?, glu.narrow(-1, k as isize, n - k)?);
        let (u1, u2) = (u.narrow(-1, 0, k)?, u.narrow(-1, k as isize, n - k)?);
        // gA'2 = L^{-H} gU2, and dU2's dependence on dL adds -gA'2 U2^H.
        let ga2 = l
            .adjoint()?
            .linalg_solve_triangular(&gu2, true, true, true)?;
        let gl = g1.sub(&ga2.matmul(&u2.adjoint()?)?)?.tril(-1)?;
        Tensor::cat(&[square_backward(&l, &u1, &gl, &g1.triu(0)?)?, ga2], -1)?
    } else {
        let (g1, gl2) = (glu.narrow(-2, 0, k)?, glu.narrow(-2, k as isize, m - k)?);
        let (l1, l2) = (l.narrow(-2, 0, k)?, l.narrow(-2, k as isize, m - k)?);
        // gA'2 = gL2 U^{-H}, and dL2's dependence on dU adds -L2^H gA'2.
        let ga2 = u
            .adjoint()?
            .linalg_solve_triangular(&gl2, false, false, false)?;
        let gu = g1.sub(&l2.adjoint()?.matmul(&ga2)?)?.triu(0)?;
        Tensor::cat(&[square_backward(&l1, &u, &g1.tril(-1)?, &gu)?, ga2], -2)?
    };
    take_rows(&ga, &inverse_permutation(perm)?)
}

/// `(L tril_{-1}(X), triu(X) U)` for `X = L^{-1} b U^{-1}` (square `l`,
/// `u`).
fn square_tangent(l: &Tensor, u: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor)> {
    let y = l.linalg_solve_triangular(b, false, true, true)?;
    let x = u.linalg_solve_triangular(&y, true, false, false)?;
    Ok((l.matmul(&x.tril(-1)?)?, x.triu(0)?.matmul(u)?))
}

/// The tangent of the packed factors of `P A = L U` for the tangent `da`
/// of `A`.
fn lu_factor_tangent(da: &Tensor, lu: &Tensor, perm: &Tensor) -> Result<Tensor> {
    let nd = lu.ndim();
    let (m, n) = (lu.shape()[nd - 2], lu.shape()[nd - 1]);
    let k = m.min(n);
    let (l, u) = unpack_factors(lu)?;
    let b = take_rows(da, perm)?;
    if m == n {
        let (dl, du) = square_tangent(&l, &u, &b)?;
        dl.add(&du)
    } else if m < n {
        let (b1, b2) = (b.narrow(-1, 0, k)?, b.narrow(-1, k as isize, n - k)?);
        let (u1, u2) = (u.narrow(-1, 0, k)?, u.narrow(-1, k as isize, n - k)?);
        let (dl, du1) = square_tangent(&l, &u1, &b1)?;
        let du2 = l.linalg_solve_triangular(&b2.sub(&dl.matmul(&u2)?)?, false, true, true)?;
        Tensor::cat(&[dl.add(&du1)?, du2], -1)
    } else {
        let (b1, b2) = (b.narrow(-2, 0, k)?, b.narrow(-2, k as isize, m - k)?);
        let (l1, l2) = (l.narrow(-2, 0, k)?, l.narrow(-2, k as isize, m - k)?);
        let (dl1, du) = square_tangent(&l1, &u, &b1)?;
        let dl2 = u.linalg_solve_triangular(&b2.sub(&l2.matmul(&du)?)?, true, false, false)?;
        Tensor::cat(&[dl1.add(&du)?, dl2], -2)
    }
}

derivatives! {
    table FORMULAS("linear algebra: LU factorization") for Tensor;

    /// `linalg.lu_factor_ex(A, pivot)`: `(LU, pivots, info)` with
    /// `P A = L U` for each `m x n` matrix: `L` (unit diagonal, not
    /// stored) and `U` packed in `LU` (column-major, as LAPACK leaves it),
    /// LAPACK's 1-based int32 pivots, and `info` 0 or the 1-based column
    /// of the first zero pivot. Only `pivot=true` exists on the CPU (as in
    /// torch).
    pub fn linalg_lu_factor_ex(&self, pivot: bool) -> Result<(Tensor, Tensor, Tensor)> {
        before {
            check_lu_input(self, "linalg.lu_factor_ex")?;
            if !pivot {
                return Err(Error::runtime(
                    "linalg.lu_factor: LU without pivoting is not implemented on the CPU",
                ));
            };
            let m = self.shape()[self.ndim() - 2];
        }
        record "LinalgLuFactorExBackward0", [self];
        compute => out = faer_kernel!(self, lu_factor(self))?;
        save |s| {
            s.save_output("LU", &out.0, 0);
            s.save_output("pivots", &out.1, 1);
        }
        backward |ctx, g| {
            let (lu, pivots) = (ctx.saved(0)?, ctx.saved(1)?);
            let perm = pivot_permutation(&pivots, m)?;
            Ok(vec![Some(lu_factor_backward(&g[0], &lu, &perm)?)])
        };
        forward formula(|t| {
            let Some(da) = t.get(0) else {
                return Ok(vec![None, None, None]);
            };
            let perm = pivot_permutation(&out.1, m)?;
            Ok(vec![Some(lu_factor_tangent(da, &out.0, &perm)?), None, None])
        });
        batched broadcast;
    }
}

impl Tensor {
    /// `linalg.lu_factor(A, pivot)`: the `(LU, pivots)` of
    /// [`Tensor::linalg_lu_factor_ex`], or torch's error naming the first
    /// matrix with a zero pivot.
    pub fn linalg_lu_factor(&self, pivot: bool) -> Result<(Tensor, Tensor)> {
        check_lu_input(self, "linalg.lu_factor")?;
        let (lu, pivots, info) = self.linalg_lu_factor_ex(pivot)?;
        let codes = info.to_vec::<i32>();
        if let Some((i, &k)) = codes.iter().enumerate().find(|(_, &k)| k != 0) {
            return Err(Error::runtime(format!(
                "torch.linalg.lu_factor: {}U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)",
                crate::kernels::lu::batch_prefix(info.ndim() > 0, i)
            )));
        }
        Ok((lu, pivots))
    }

    /// `lu_unpack(LU, pivots, unpack_data, unpack_pivots)`: `(P, L, U)`
    /// with `A = P L U` from packed factors (this tensor is `LU`); `L` and
    /// `U` differentiate through `LU`. Without `unpack_data` `L` and `U`,
    /// without `unpack_pivots` `P`, are empty tensors.
    pub fn lu_unpack(
        &self,
        pivots: &Tensor,
        unpack_data: bool,
        unpack_pivots: bool,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let nd = self.ndim();
        if nd < 2 {
            return Err(Error::runtime(format!(
                "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {:?} instead",
                self.shape()
            )));
        }
        let (m, n) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        if pivots.dtype() != DType::Int32 {
            return Err(Error::runtime(format!(
                "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. Note: this function is intended to be used with the output produced by torch.linalg.lu_factor. Got {}",
                pivots.dtype().scalar_type_name()
            )));
        }
        let mut want = self.shape()[..nd - 2].to_vec();
        want.push(m.min(n));
        if pivots.shape() != want.as_slice() {
            return Err(Error::runtime(format!(
                "torch.lu_unpack: LU_pivots of shape {:?} does not match LU of shape {:?} (expected {want:?})",
                pivots.shape(),
                self.shape()
            )));
        }
        let empty = || Ok::<Tensor, Error>(Tensor::zeros(&[0], self.dtype()));
        let (l, u) = if unpack_data {
            unpack_factors(self)?
        } else {
            (empty()?, empty()?)
        };
        let p = if unpack_pivots {
            let perm = pivot_permutation(pivots, m)?;
            let eye = Tensor::eye(m as i64, None, self.dtype())?;
            let mut shape: Vec<isize> =
                self.shape()[..nd - 2].iter().map(|&d| d as isize).collect();
            shape.extend([m as isize, m as isize]);
            // P = (P^T I)^T: the identity's rows in P^T's order, transposed.
            take_rows(&eye.expand(&shape)?, &perm)?.mt()?.contiguous()
        } else {
            empty()?
        };
        Ok((p, l, u))
    }

    /// `linalg.lu(A, pivot)`: `(P, L, U)` with `A = P L U`, through
    /// [`Tensor::linalg_lu_factor_ex`] and [`Tensor::lu_unpack`].
    pub fn linalg_lu(&self, pivot: bool) -> Result<(Tensor, Tensor, Tensor)> {
        check_lu_input(self, "linalg.lu")?;
        if !pivot {
            return Err(Error::runtime(
                "linalg.lu: LU without pivoting is not implemented on the CPU",
            ));
        }
        let (lu, pivots, _) = self.linalg_lu_factor_ex(true)?;
        lu.lu_unpack(&pivots, true, true)
    }

    /// `linalg.lu_solve(LU, pivots, B, left, adjoint)` (this tensor is
    /// `LU`): `X` with `A X = B` (`X A = B` without `left`, `A^H` for `A`
    /// with `adjoint`) for `A = P L U` given by its packed factors; batch
    /// dims broadcast. Differentiable in `LU` and `B`, through recorded
    /// permutations and triangular solves.
    pub fn linalg_lu_solve(
        &self,
        pivots: &Tensor,
        b: &Tensor,
        left: bool,
        adjoint: bool,
    ) -> Result<Tensor> {
        let nd = self.ndim();
        if nd < 2 || self.shape()[nd - 1] != self.shape()[nd - 2] {
            return Err(Error::runtime(format!(
                "linalg.lu_solve: A must be batches of square matrices, but they are {:?}",
                self.shape()
            )));
        }
        if b.ndim() < 2 {
            return Err(Error::runtime(
                "linalg.lu_solve: The input tensor B must have at least 2 dimensions.",
            ));
        }
        if b.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type {} and B of type {} instead",
                self.dtype().scalar_type_name(),
                b.dtype().scalar_type_name()
            )));
        }
        let n = self.shape()[nd - 1];
        let bn = b.ndim();
        let rows = if left {
            b.shape()[bn - 2]
        } else {
            b.shape()[bn - 1]
        };
        if rows != n {
            let (eq, bs) = if left {
                ("AX = B", (b.shape()[bn - 2], b.shape()[bn - 1]))
            } else {
                ("XA = B", (b.shape()[bn - 2], b.shape()[bn - 1]))
            };
            return Err(Error::runtime(format!(
                "linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {}x{})",
                bs.0, bs.1
            )));
        }
        let mut want = self.shape()[..nd - 2].to_vec();
        want.push(n);
        if pivots.dtype() != DType::Int32 || pivots.shape() != want.as_slice() {
            return Err(Error::runtime(format!(
                "linalg.lu_solve: pivots must be an int32 tensor of shape {want:?} for LU of shape {:?}, got {} of shape {:?}",
                self.shape(),
                pivots.dtype().scalar_type_name(),
                pivots.shape()
            )));
        }
        if let Some(bad) = pivots
            .to_vec::<i32>()
            .into_iter()
            .find(|&v| v < 1 || v as usize > n)
        {
            return Err(Error::runtime(if bad < 1 {
                "Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the result of lu_factor?".to_string()
            } else {
                "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly pass the result of lu_factor?".to_string()
            }));
        }
        // X A = B is A^H X^H = B^H; A^H X = B undoes P L U in reverse.
        if !left {
            return self
                .linalg_lu_solve(pivots, &b.adjoint()?, true, !adjoint)?
                .adjoint();
        }
        let batch = crate::tensor::broadcast_shapes(&self.shape()[..nd - 2], &b.shape()[..bn - 2])?;
        let sized = |tail: &[usize]| -> Vec<isize> {
            batch.iter().chain(tail).map(|&d| d as isize).collect()
        };
        let b = b.expand(&sized(&[n, b.shape()[bn - 1]]))?;
        if !differentiable(self) && !differentiable(&b) {
            // Nothing to differentiate: one kernel call per matrix.
            let lu = self.expand(&sized(&[n, n]))?;
            let pivots = pivots.expand(&sized(&[n]))?;
            return faer_kernel!(self, lu_solve(&lu, &pivots, &b, adjoint));
        }
        let (l, u) = unpack_factors(self)?;
        let perm = pivot_permutation(pivots, n)?;
        if adjoint {
            // A^H = U^H L^H P^T: X = P (L^{-H} (U^{-H} B)).
            let y = u
                .adjoint()?
                .linalg_solve_triangular(&b, false, true, false)?;
            let z = l.adjoint()?.linalg_solve_triangular(&y, true, true, true)?;
            // Column-major, as the other paths (and torch) give.
            let x = take_rows(&z, &inverse_permutation(&perm)?)?;
            x.mt()?.contiguous().mt()
        } else {
            let y = l.linalg_solve_triangular(&take_rows(&b, &perm)?, false, true, true)?;
            u.linalg_solve_triangular(&y, true, true, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    #[test]
    fn factors_rebuild_the_matrix_through_the_permutation() {
        // [[1, 2], [2, 4.5]]: the second row pivots, L = [[1, 0], [.5, 1]],
        // U = [[2, 4.5], [0, -.25]].
        let a = Tensor::from_slice(&[1.0f64, 2.0, 2.0, 4.5], &[2, 2]).unwrap();
        let (p, l, u) = a.linalg_lu(true).unwrap();
        assert_eq!(p.to_vec::<f64>(), vec![0.0, 1.0, 1.0, 0.0]);
        assert_eq!(l.to_vec::<f64>(), vec![1.0, 0.0, 0.5, 1.0]);
        assert_eq!(u.to_vec::<f64>(), vec![2.0, 4.5, 0.0, -0.25]);
        let (lu, piv) = a.linalg_lu_factor(true).unwrap();
        assert_eq!(piv.to_vec::<i32>(), vec![2, 2]);
        let b = Tensor::from_slice(&[5.0f64, 11.0], &[2, 1]).unwrap();
        // x = [1, 2]: 1 + 4 = 5, 2 + 9 = 11.
        let x = lu.linalg_lu_solve(&piv, &b, true, false).unwrap();
        assert_eq!(x.to_vec::<f64>(), vec![1.0, 2.0]);
    }
}
