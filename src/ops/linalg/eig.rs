//! `linalg.eig` and `linalg.eigvals`: the eigendecomposition of general
//! square matrices (complex eigenvalues and eigenvectors, also for real
//! input) on the faer kernel of `kernels::eig`, with reverse, forward and
//! batched derivatives.
//!
//! Each eigenvector has unit norm and its largest-modulus component real
//! and positive; it is still defined only up to that choice of phase, so a
//! loss that depends on the phases has no gradient and the backward raises
//! torch's error for it. Repeated eigenvalues make the derivative of the
//! eigenvectors infinite, as in torch.

use super::decomp::check_square;
use super::spectral::{check_phase, differentiable, gap_mul};
use crate::autograd::derivatives;
use crate::{Result, Tensor};

/// `v` with each column scaled to unit norm and rotated so that its
/// largest-modulus component is real and positive.
fn normalize_columns(v: &Tensor) -> Result<Tensor> {
    let dt = v.dtype();
    let size = v.abs()?;
    let norms = size.square()?.sum(Some(&[-2]), true, None)?.sqrt()?;
    let top = v.gather(-2, &size.argmax(Some(-2), true)?)?;
    let phase = top.div(&top.abs()?.to_dtype(dt))?.conj()?;
    v.mul(&phase.div(&norms.to_dtype(dt))?)
}

/// The eigendecomposition's gradient for `A = V diag(L) V^{-1}` (unit
/// columns): `V^{-H} (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / E^*)
/// V^H` with `E_ij = L_j - L_i` off the diagonal.
fn eig_backward(gl: &Tensor, gv: &Tensor, l: &Tensor, v: &Tensor) -> Result<Tensor> {
    let vh = v.adjoint()?;
    let vhgv = vh.matmul(gv)?;
    check_phase(&vhgv, "eigenvectors", "linalg_eig_backward")?;
    let re = vhgv.diagonal(0, -2, -1)?.real()?.to_dtype(v.dtype());
    let inner = vhgv.sub(&vh.matmul(&v.mul(&re.unsqueeze(-2)?)?)?)?;
    let inner = gap_mul(&l.conj()?, &inner, false)?.add(&gl.diag_embed(0, -2, -1)?)?;
    vh.linalg_solve(&inner.matmul(&vh)?)
}

/// The eigendecomposition's tangents for `dA`: with `dP = V^{-1} dA V`,
/// `dL = diag(dP)` and `dV = dX - V diag(Re diag(V^H dX))`, where
/// `dX = V (dP / E)` off the diagonal.
fn eig_tangent(da: &Tensor, l: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
    let dp = v.linalg_solve(&da.to_dtype(v.dtype()).matmul(v)?)?;
    let dl = dp.diagonal(0, -2, -1)?;
    let dx = v.matmul(&gap_mul(l, &dp, true)?)?;
    let re = v.adjoint()?.matmul(&dx)?.diagonal(0, -2, -1)?.real()?;
    let dv = dx.sub(&v.mul(&re.to_dtype(v.dtype()).unsqueeze(-2)?)?)?;
    Ok((dl, dv))
}

derivatives! {
    table FORMULAS("linear algebra: eig") for Tensor;

    /// `linalg.eig(A)`: `(L, V)`, the complex eigenvalues and eigenvectors
    /// (columns, unit norm) of each square matrix, `A V = V diag(L)`.
    pub fn linalg_eig(&self) -> Result<(Tensor, Tensor)> {
        before {
            let _ = check_square(self, "linalg.eig")?;
            let real_input = !self.dtype().is_complex();
        }
        record "LinalgEigBackward0", [self];
        compute {
            let (l, v) = faer_kernel!(self, eig(self, true))?;
            let v = normalize_columns(&v.expect("eigenvectors were asked for"))?;
        } => out = (l, v);
        save |s| {
            s.save_output("eigenvalues", &out.0, 0);
            s.save_output("eigenvectors", &out.1, 1);
        }
        backward |ctx, g| {
            let (l, v) = (ctx.saved(0)?, ctx.saved(1)?);
            let ga = eig_backward(&g[0], &g[1], &l, &v)?;
            Ok(vec![Some(if real_input { ga.real()? } else { ga })])
        };
        forward formula(|t| {
            let Some(da) = t.get(0) else {
                return Ok(vec![None, None]);
            };
            let (dl, dv) = eig_tangent(da, &out.0, &out.1)?;
            Ok(vec![Some(dl), Some(dv)])
        });
        batched rows because "the phase check reads every row's values together";
    }
}

impl Tensor {
    /// `linalg.eigvals(A)`: the eigenvalues of [`Tensor::linalg_eig`],
    /// without the eigenvectors when no derivative needs them.
    pub fn linalg_eigvals(&self) -> Result<Tensor> {
        if differentiable(self) {
            return Ok(self.linalg_eig()?.0);
        }
        check_square(self, "linalg.eigvals")?;
        Ok(faer_kernel!(self, eig(self, false))?.0)
    }
}
