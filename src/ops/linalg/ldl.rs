//! `linalg.ldl_factor_ex` (and through it `ldl_factor`) and
//! `linalg.ldl_solve`: the Bunch-Kaufman factorization of symmetric (or
//! Hermitian) indefinite matrices in LAPACK's compact form, on the kernels
//! of `kernels::ldl`. As in torch, neither has a derivative: a gradient or
//! tangent through them raises.

use super::decomp::check_square;
use crate::autograd::derivatives;
use crate::tensor::broadcast_shapes;
use crate::{DType, Error, Result, Tensor};

fn not_differentiable(op: &str) -> Error {
    Error::runtime(format!("derivative for aten::{op} is not implemented"))
}

/// Checks that `pivots` (`n` per matrix) are what the factorization
/// writes: 1-based rows, a negative one repeated for its 2x2 block.
fn check_pivots(pivots: &Tensor, n: usize) -> Result<()> {
    let all = pivots.contiguous().to_vec::<i32>();
    for row in all.chunks(n.max(1)) {
        let mut k = 0;
        while k < row.len() {
            let p = row[k];
            let ok = p != 0
                && p.unsigned_abs() as usize <= n
                && (p > 0 || (k + 1 < row.len() && row[k + 1] == p));
            if !ok {
                return Err(Error::runtime(format!(
                    "torch.linalg.ldl_solve: the pivots are not those of an LDL factorization of order {n} (found {p} at position {k})"
                )));
            }
            k += if p > 0 { 1 } else { 2 };
        }
    }
    Ok(())
}

derivatives! {
    table FORMULAS("linear algebra: ldl_factor_ex, ldl_solve") for Tensor;

    /// `linalg.ldl_factor_ex(A, hermitian)`: `(LD, pivots, info)`, the
    /// compact `L D L^T` (`L D L^H` with `hermitian`) factors of each
    /// symmetric matrix from its lower triangle, LAPACK's pivots, and 0 or
    /// the 1-based index of the first zero diagonal block.
    pub fn linalg_ldl_factor_ex(&self, hermitian: bool) -> Result<(Tensor, Tensor, Tensor)> {
        before {
            let _ = check_square(self, "torch.linalg.ldl_factor_ex")?;
            let herm = hermitian && self.dtype().is_complex();
        }
        record "LinalgLdlFactorExBackward0", [self];
        compute {
            let (ld, piv, info) = faer_kernel!(self, ldl_factor(self, herm))?;
        } => out = (ld, piv, info);
        save nothing
        backward |ctx, g| Err(not_differentiable("linalg_ldl_factor_ex"));
        forward formula(|_| Err(not_differentiable("linalg_ldl_factor_ex")));
        batched broadcast;
    }

    /// `linalg.ldl_solve(LD, pivots, B, hermitian)`: `X` with `A X = B` for
    /// the factors of [`Tensor::linalg_ldl_factor_ex`], batch dims
    /// broadcast.
    pub fn linalg_ldl_solve(&self, pivots: &Tensor, b: &Tensor, hermitian: bool) -> Result<Tensor> {
        before {
            let n = check_square(self, "torch.linalg.ldl_solve")?;
            if b.ndim() < 2 || b.shape()[b.ndim() - 2] != n {
                return Err(Error::runtime(format!(
                    "torch.linalg.ldl_solve: Incompatible shapes of A and B for the equation AX = B ({:?} and {:?})",
                    self.shape(),
                    b.shape()
                )));
            };
            if b.dtype() != self.dtype() {
                return Err(Error::runtime(format!(
                    "torch.linalg.ldl_solve: Expected LD and B to have the same dtype, but found LD of type {} and B of type {} instead",
                    self.dtype().scalar_type_name(),
                    b.dtype().scalar_type_name()
                )));
            };
            if pivots.dtype() != DType::Int32 {
                return Err(Error::runtime(format!(
                    "torch.linalg.ldl_solve: Expected pivots to be integers. Got {}",
                    pivots.dtype().scalar_type_name()
                )));
            };
            if pivots.ndim() + 1 != self.ndim() || pivots.shape()[pivots.ndim() - 1] != n {
                return Err(Error::runtime(format!(
                    "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape {:?} instead",
                    pivots.shape()
                )));
            };
            check_pivots(pivots, n)?;
            let k = b.shape()[b.ndim() - 1];
            let nd = self.ndim();
            let batch = broadcast_shapes(&self.shape()[..nd - 2], &b.shape()[..b.ndim() - 2])?;
            let with = |tail: &[usize]| -> Vec<usize> { batch.iter().chain(tail).copied().collect() };
            let (ld, bb) = (self.broadcast_to(&with(&[n, n]))?, b.broadcast_to(&with(&[n, k]))?);
            let piv = pivots.broadcast_to(&with(&[n]))?;
            let herm = hermitian && self.dtype().is_complex();
        }
        record "LinalgLdlSolveBackward0", [self, b];
        compute => out = faer_kernel!(self, ldl_solve(&ld, &piv, &bb, herm))?;
        save nothing
        backward |ctx, g| Err(not_differentiable("linalg_ldl_solve"));
        forward formula(|_| Err(not_differentiable("linalg_ldl_solve")));
        batched broadcast;
    }
}
