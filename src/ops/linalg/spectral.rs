//! `linalg.qr`, `linalg.eigh` (and `eigvalsh`) and `linalg.svd` (and
//! `svdvals`) on the `faer` kernels of `kernels::decomp`, in the input's
//! own dtype, with their reverse, forward and batched derivatives.
//!
//! Complex gradients are conjugate Wirtinger derivatives (torch's
//! convention): every transpose below is a conjugate transpose. The
//! eigenvectors and singular vectors of a complex matrix are defined up to
//! a phase per vector; a loss that depends on those phases has no
//! gradient, and the backward raises torch's error for it.

use super::decomp::check_square;
use crate::autograd::{any_tangent, derivatives, is_grad_enabled};
use crate::{DType, Error, Result, Tensor};

/// Which factors `linalg.qr` returns (torch's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QrMode {
    /// `Q` is `m x k` and `R` `k x n`, `k = min(m, n)`.
    Reduced,
    /// `Q` is `m x m` and `R` `m x n`.
    Complete,
    /// Only `R` (`k x n`); `Q` is an empty tensor.
    R,
}

/// `x ∘ E` with `E_ij = 1 / (v_j - v_i)` off the diagonal and 0 on it,
/// over the last dim of `v`. Where two values tie exactly, the vectors of
/// the tied block are defined only up to a rotation among themselves, and
/// so is this term of the formulas: a tangent (`gauge`) takes the block's
/// rotation as 0; a gradient has `x` = 0 there when the loss does not
/// depend on that rotation, and the entry is then 0, the formula's limit,
/// rather than the NaN of `0 · ∞` (a tie with `x` non-zero stays infinite:
/// that loss has no derivative there).
pub(super) fn gap_mul(v: &Tensor, x: &Tensor, gauge: bool) -> Result<Tensor> {
    let gaps = v.unsqueeze(-2)?.sub(&v.unsqueeze(-1)?)?;
    if !has_tie(v)? {
        return off_recip_mul(&gaps, None, x);
    }
    // The diagonal's zeros count as ties too: it is 0 either way.
    let tie = gaps.eq(&Tensor::scalar(0.0).to_dtype(v.dtype()))?;
    let quiet = if gauge {
        tie
    } else {
        tie.logical_and(&x.eq(&Tensor::scalar(0.0).to_dtype(x.dtype()))?)?
    };
    off_recip_mul(&gaps, Some(&quiet.to_dtype(v.dtype())), x)
}

/// `x ∘ R` with `R_ij = 1 / d_ij` off the diagonal of the last two dims
/// and 0 on it, and 0 too where `quiet` (a 0/1 mask of `d`'s dtype) is 1.
fn off_recip_mul(d: &Tensor, quiet: Option<&Tensor>, x: &Tensor) -> Result<Tensor> {
    let n = d.shape()[d.ndim() - 1];
    let eye = Tensor::eye(n as i64, None, d.dtype())?;
    let off = Tensor::scalar(1.0).sub(&eye)?;
    let (shift, keep) = match quiet {
        None => (eye, off),
        Some(q) => (eye.add(q)?, off.mul(&Tensor::scalar(1.0).sub(q)?)?),
    };
    d.add(&shift)?.reciprocal()?.mul(&keep)?.mul(x)
}

/// Whether two values along the last dim of `v` (real or complex) are
/// exactly equal, in any row.
fn has_tie(v: &Tensor) -> Result<bool> {
    let n = v.shape().last().copied().unwrap_or(0);
    if n < 2 {
        return Ok(false);
    }
    let mut pairs: Vec<(f64, f64)> = if v.dtype().is_complex() {
        v.to_dtype(DType::Complex128)
            .to_vec::<crate::ComplexDouble>()
            .iter()
            .map(|z| (z.re, z.im))
            .collect()
    } else {
        v.to_dtype(DType::Float64)
            .to_vec::<f64>()
            .into_iter()
            .map(|x| (x, 0.0))
            .collect()
    };
    Ok(pairs.chunks_mut(n).any(|row| {
        row.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        row.windows(2).any(|w| w[0] == w[1])
    }))
}

/// `x ∘ H` with `H_ij = 1 / (s_i + s_j)` off the diagonal and 0 on it.
fn sum_gap_mul(s: &Tensor, x: &Tensor) -> Result<Tensor> {
    off_recip_mul(&s.unsqueeze(-2)?.add(&s.unsqueeze(-1)?)?, None, x)
}

/// The diagonal of the matrices `x` as diagonal matrices.
fn diag_part(x: &Tensor) -> Result<Tensor> {
    x.tril(0)?.triu(0)
}

/// `i Im(diag(x))` as diagonal matrices (zeros for a real `x`).
fn imag_diag(x: &Tensor) -> Result<Tensor> {
    let d = diag_part(x)?;
    d.sub(&d.adjoint()?)?.mul(&Tensor::scalar(0.5))
}

/// The strict lower triangle of `x` mirrored (conjugated) into the upper
/// one, with the real part of `x`'s diagonal.
fn copyltu(x: &Tensor) -> Result<Tensor> {
    let low = x.tril(-1)?;
    let d = diag_part(x)?;
    let re = d.add(&d.adjoint()?)?.mul(&Tensor::scalar(0.5))?;
    low.add(&low.adjoint()?)?.add(&re)
}

/// Whether `t` is a constant zero gradient (a gradient the loss does not
/// reach is materialized as zeros; skipping its terms keeps repeated
/// eigenvalues or singular values from turning `0 * inf` into NaN). A
/// zero that is itself differentiated (a double-backward cotangent, or one
/// with a forward-mode tangent) is not skipped: the result must stay a
/// function of it.
fn is_zero(t: &Tensor) -> Result<bool> {
    if t.requires_grad() || any_tangent(&[t]) {
        return Ok(false);
    }
    if t.numel() == 0 {
        return Ok(true);
    }
    let m = t.abs()?.to_dtype(DType::Float64).max_all()?;
    Ok(m.to_vec::<f64>()[0] == 0.0)
}

/// torch's error when a complex loss depends on the vectors' phases: `x`
/// holds `V^H gV` (or `U^H gU + V^H gV`), whose diagonal is real for a
/// phase-invariant loss.
pub(super) fn check_phase(x: &Tensor, what: &str, op: &str) -> Result<()> {
    if !x.dtype().is_complex() {
        return Ok(());
    }
    let d = x.diagonal(0, -2, -1)?;
    let im = d.imag()?.abs()?.to_dtype(DType::Float64).to_vec::<f64>();
    let size = d.abs()?.to_dtype(DType::Float64).to_vec::<f64>();
    let eps = if x.dtype() == DType::Complex64 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let scale = size.iter().fold(1.0f64, |a, &b| a.max(b));
    if im.iter().any(|&v| v.is_nan() || v > eps.sqrt() * scale) {
        return Err(Error::runtime(format!(
            "{op}: The {what} in the complex case are specified up to multiplication by e^{{i phi}}. The specified loss function depends on this phase term, making it ill-defined."
        )));
    }
    Ok(())
}

/// Columns of `x` scaled by `s` (`x diag(s)`).
fn scale_cols(x: &Tensor, s: &Tensor) -> Result<Tensor> {
    x.mul(&s.unsqueeze(-2)?)
}

/// Rows of `x` scaled by `s` (`diag(s) x`).
fn scale_rows(x: &Tensor, s: &Tensor) -> Result<Tensor> {
    x.mul(&s.unsqueeze(-1)?)
}

/// The QR gradient for `A = Q R` (`Q` `m x m` when `m < n`):
/// `(gQ + Q copyltu(R gR^H - gQ^H Q)) R^{-H}` for `m >= n`; for `m < n`,
/// `A = [A1 A2]` with `A1 = Q R1` and `R2 = Q^H A2`, which adds
/// `A2 gR2^H` to `gQ` for `A1`'s part and gives `A2` the gradient `Q gR2`.
fn qr_backward(gq: &Tensor, gr: &Tensor, q: &Tensor, r: &Tensor) -> Result<Tensor> {
    let nd = r.ndim();
    let (m, n) = (q.shape()[nd - 2], r.shape()[nd - 1]);
    if m < n {
        let (r1, r2) = (r.narrow(-1, 0, m)?, r.narrow(-1, m as isize, n - m)?);
        let (gr1, gr2) = (gr.narrow(-1, 0, m)?, gr.narrow(-1, m as isize, n - m)?);
        let a2 = q.matmul(&r2)?;
        let gq1 = gq.add(&a2.matmul(&gr2.adjoint()?)?)?;
        let ga1 = qr_backward(&gq1, &gr1, q, &r1)?;
        return Tensor::cat(&[ga1, q.matmul(&gr2)?], -1);
    }
    let m_ = r.matmul(&gr.adjoint()?)?.sub(&gq.adjoint()?.matmul(q)?)?;
    let b = gq.add(&q.matmul(&copyltu(&m_)?)?)?;
    r.adjoint()?
        .linalg_solve_triangular(&b, false, false, false)
}

/// The QR tangents `(dQ, dR)` for the input tangent `da`: with
/// `X = Q^H dA1 R1^{-1}` (`A1`, `R1` the leading `k` columns) and `C` the
/// skew-Hermitian matrix with `X`'s strict lower triangle and imaginary
/// diagonal, `dR = Q^H dA - C R` and `dQ = dA R^{-1} - Q (X - C)` (or
/// `Q C` when `m < n`).
fn qr_tangent(da: &Tensor, q: &Tensor, r: &Tensor) -> Result<(Tensor, Tensor)> {
    let nd = r.ndim();
    let (m, n) = (q.shape()[nd - 2], r.shape()[nd - 1]);
    let k = m.min(n);
    let (da1, r1) = (da.narrow(-1, 0, k)?, r.narrow(-1, 0, k)?);
    let qh = q.adjoint()?;
    let x = r1.linalg_solve_triangular(&qh.matmul(&da1)?, true, false, false)?;
    let low = x.tril(-1)?;
    let c = low.sub(&low.adjoint()?)?.add(&imag_diag(&x)?)?;
    let dr = qh.matmul(da)?.sub(&c.matmul(r)?)?;
    let dq = if m < n {
        q.matmul(&c)?
    } else {
        let y = r.linalg_solve_triangular(da, true, false, false)?;
        y.sub(&q.matmul(&x.sub(&c)?)?)?
    };
    Ok((dq, dr))
}

/// The eigh gradient `V (diag(gL) + E ∘ (K - K^H)/2) V^H`, `K = V^H gV`,
/// `E_ij = 1 / (λ_j - λ_i)`: Hermitian, as torch's.
fn eigh_backward(gl: &Tensor, gv: &Tensor, l: &Tensor, v: &Tensor) -> Result<Tensor> {
    let vh = v.adjoint()?;
    let mut g = gl.to_dtype(v.dtype()).diag_embed(0, -2, -1)?;
    if !is_zero(gv)? {
        let k = vh.matmul(gv)?;
        check_phase(&k, "eigenvectors", "linalg_eigh_backward")?;
        let skew = k.sub(&k.adjoint()?)?.mul(&Tensor::scalar(0.5))?;
        g = gap_mul(l, &skew, false)?.add(&g)?;
    }
    v.matmul(&g)?.matmul(&vh)
}

/// The eigh tangents: with `P = V^H dA V`, `dλ = Re diag(P)` and
/// `dV = V (E ∘ P)`.
fn eigh_tangent(da: &Tensor, l: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
    let p = v.adjoint()?.matmul(da)?.matmul(v)?;
    let dl = p.diagonal(0, -2, -1)?.real()?;
    let dv = v.matmul(&gap_mul(l, &p, true)?)?;
    Ok((dl.try_copy()?, dv))
}

/// The SVD gradient for `A = U S V^H` (thin; `gU`, `gVh` narrowed to the
/// `k` vectors when the full ones were returned):
/// `U G V^H + (I - U U^H) gU S^{-1} V^H + U S^{-1} gV^H (I - V V^H)` with
/// `G = (F ∘ (J - J^H)) S + S (F ∘ (K - K^H)) + diag(gS) + i Im(diag J) S^{-1}`,
/// `J = U^H gU`, `K = V^H gV`, `F_ij = 1 / (s_j² - s_i²)`.
fn svd_backward(
    (gu, gs, gvh): (&Tensor, &Tensor, &Tensor),
    (u, s, vh): (&Tensor, &Tensor, &Tensor),
) -> Result<Tensor> {
    let nd = u.ndim();
    let (m, n) = (u.shape()[nd - 2], vh.shape()[nd - 1]);
    let k = m.min(n);
    let (u, gu) = (u.narrow(-1, 0, k)?, gu.narrow(-1, 0, k)?);
    let (vh, gvh) = (vh.narrow(-2, 0, k)?, gvh.narrow(-2, 0, k)?);
    let mut g = gs.to_dtype(u.dtype()).diag_embed(0, -2, -1)?;
    let (use_u, use_v) = (!is_zero(&gu)?, !is_zero(&gvh)?);
    if !use_u && !use_v {
        return u.matmul(&g)?.matmul(&vh);
    }
    let j = u.adjoint()?.matmul(&gu)?;
    let kk = vh.matmul(&gvh.adjoint()?)?;
    check_phase(&j.add(&kk)?, "singular vectors", "linalg_svd_backward")?;
    // F ∘ (J - J^H) S + S F ∘ (K - K^H), split as
    // (Js + Ks) / (2 (s_j - s_i)) + (Js - Ks) / (2 (s_j + s_i)) with the
    // skew parts Js, Ks: a loss that does not turn tied vectors has
    // Js + Ks = 0 in their block, so the first term's tie is 0 there.
    let inv_s = s.reciprocal()?;
    let js = j.sub(&j.adjoint()?)?;
    let ks = kk.sub(&kk.adjoint()?)?;
    let half = Tensor::scalar(0.5);
    g = g.add(&gap_mul(s, &js.add(&ks)?, false)?.mul(&half)?)?;
    g = g.add(&sum_gap_mul(s, &js.sub(&ks)?)?.mul(&half)?)?;
    if use_u {
        g = g.add(&scale_cols(&imag_diag(&j)?, &inv_s)?)?;
    }
    let mut ga = u.matmul(&g)?.matmul(&vh)?;
    if use_u && m > k {
        let rest = gu.sub(&u.matmul(&j)?)?;
        ga = ga.add(&scale_cols(&rest, &inv_s)?.matmul(&vh)?)?;
    }
    if use_v && n > k {
        let rest = gvh.sub(&kk.adjoint()?.matmul(&vh)?)?;
        ga = ga.add(&u.matmul(&scale_rows(&rest, &inv_s)?)?)?;
    }
    Ok(ga)
}

/// The SVD tangents `(dU, dS, dVh)`: with `P = U^H dA V`, `dS = Re diag(P)`,
/// `dU = U (F ∘ (P S + S P^H) + i Im(diag P) S^{-1}) + (dA V - U P) S^{-1}`
/// and `dV = V (F ∘ (S P + P^H S)) + (dA^H U - V P^H) S^{-1}`.
fn svd_tangent(da: &Tensor, u: &Tensor, s: &Tensor, vh: &Tensor) -> Result<Vec<Option<Tensor>>> {
    let nd = u.ndim();
    let (m, n) = (u.shape()[nd - 2], vh.shape()[nd - 1]);
    let k = m.min(n);
    let v = vh.adjoint()?;
    let uh = u.adjoint()?;
    let dav = da.matmul(&v)?;
    let p = uh.matmul(&dav)?;
    let ds = p.diagonal(0, -2, -1)?.real()?.try_copy()?;
    // F ∘ (P S + S P^H) = (P + P^H) / (2 (s_j - s_i)) + (P - P^H) / (2 (s_j + s_i))
    // and F ∘ (S P + P^H S) the same with the second term negated: the
    // first is the rotation of tied vectors (0 at a tie, see `gap_mul`).
    let inv_s = s.reciprocal()?;
    let ph = p.adjoint()?;
    let half = Tensor::scalar(0.5);
    let turn = gap_mul(s, &p.add(&ph)?, true)?.mul(&half)?;
    let split = sum_gap_mul(s, &p.sub(&ph)?)?.mul(&half)?;
    let om_u = turn
        .add(&split)?
        .add(&scale_cols(&imag_diag(&p)?, &inv_s)?)?;
    let om_v = turn.sub(&split)?;
    let mut du = u.matmul(&om_u)?;
    if m > k {
        du = du.add(&scale_cols(&dav.sub(&u.matmul(&p)?)?, &inv_s)?)?;
    }
    let mut dv = v.matmul(&om_v)?;
    if n > k {
        let dahu = da.adjoint()?.matmul(u)?;
        dv = dv.add(&scale_cols(&dahu.sub(&v.matmul(&ph)?)?, &inv_s)?)?;
    }
    Ok(vec![Some(du), Some(ds), Some(dv.adjoint()?)])
}

/// Checks that `a` is a float or complex batch of matrices, for `op`.
pub(super) fn check_matrix(a: &Tensor, op: &str) -> Result<()> {
    if a.ndim() < 2 {
        return Err(Error::runtime(format!(
            "{op}: The input tensor A must have at least 2 dimensions."
        )));
    }
    if !a.dtype().is_differentiable() || a.dtype().is_reduced_float() {
        return Err(Error::runtime(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            a.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// Whether a gradient or tangent can reach `a` (the eigen/singular vectors
/// are then computed alongside the values, for the derivative).
pub(super) fn differentiable(a: &Tensor) -> bool {
    (is_grad_enabled() && a.requires_grad()) || any_tangent(&[a])
}

derivatives! {
    table FORMULAS("linear algebra: qr, eigh, svd") for Tensor;

    /// `linalg.qr(A, mode)`: `(Q, R)` with `A = Q R`, `Q` with orthonormal
    /// columns and `R` upper trapezoidal, for each matrix of the batch.
    pub fn linalg_qr(&self, mode: QrMode) -> Result<(Tensor, Tensor)> {
        before {
            check_matrix(self, "linalg.qr")?;
            let nd = self.ndim();
            let (m, n) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        }
        record "LinalgQrBackward0", [self];
        compute => out = faer_kernel!(self, qr(self, mode == QrMode::Complete, mode != QrMode::R))?;
        save |s| {
            s.save_output("Q", &out.0, 0);
            s.save_output("R", &out.1, 1);
        }
        backward |ctx, g| {
            if mode == QrMode::R {
                return Err(Error::runtime(
                    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
                ));
            }
            if mode == QrMode::Complete && m > n {
                return Err(Error::runtime(
                    "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
                ));
            }
            let (q, r) = (ctx.saved(0)?, ctx.saved(1)?);
            Ok(vec![Some(qr_backward(&g[0], &g[1], &q, &r)?)])
        };
        forward formula(|t| {
            let Some(da) = t.get(0) else {
                return Ok(vec![None, None]);
            };
            if mode == QrMode::R || (mode == QrMode::Complete && m > n) {
                return Err(Error::runtime(
                    "linalg.qr: forward-mode derivatives need Q and are not defined when mode='r' or when mode='complete' and nrows > ncols",
                ));
            }
            let (dq, dr) = qr_tangent(da, &out.0, &out.1)?;
            Ok(vec![Some(dq), Some(dr)])
        });
        batched rows because "the phase and triangle helpers read the gradient's last two dims only, but the narrowing for wide inputs counts dims from the front of the saved factors";
    }

    /// `linalg.eigh(A, UPLO)`: `(L, V)`, the eigenvalues (real, ascending)
    /// and orthonormal eigenvectors (columns) of each Hermitian matrix,
    /// read from its lower triangle (`upper`: its upper one).
    pub fn linalg_eigh(&self, upper: bool) -> Result<(Tensor, Tensor)> {
        before {
            let _ = check_square(self, "linalg.eigh")?;
            let a = if upper { self.adjoint()? } else { self.clone() };
        }
        record "LinalgEighBackward0", [self];
        compute {
            let (l, v) = faer_kernel!(self, eigh(&a, true))?;
        } => out = (l, v.expect("eigenvectors were asked for"));
        save |s| {
            s.save_output("eigenvalues", &out.0, 0);
            s.save_output("eigenvectors", &out.1, 1);
        }
        backward |ctx, g| {
            let (l, v) = (ctx.saved(0)?, ctx.saved(1)?);
            Ok(vec![Some(eigh_backward(&g[0], &g[1], &l, &v)?)])
        };
        forward formula(|t| {
            let Some(da) = t.get(0) else {
                return Ok(vec![None, None]);
            };
            let (dl, dv) = eigh_tangent(da, &out.0, &out.1)?;
            Ok(vec![Some(dl), Some(dv)])
        });
        batched rows because "the phase check and the zero-gradient test read every row's values together";
    }

    /// `linalg.svd(A, full_matrices)`: `(U, S, Vh)` with `A = U diag(S) Vh`,
    /// singular values descending; `U` and `Vh` square with
    /// `full_matrices`.
    pub fn linalg_svd(&self, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
        before {
            check_matrix(self, "linalg.svd")?;
            let nd = self.ndim();
            let (m, n) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        }
        record "LinalgSvdBackward0", [self];
        compute {
            let (u, s, vh) = faer_kernel!(self, svd(self, true, full_matrices))?;
        } => out = (u.expect("U was asked for"), s, vh.expect("Vh was asked for"));
        save |s| {
            s.save_output("U", &out.0, 0);
            s.save_output("S", &out.1, 1);
            s.save_output("Vh", &out.2, 2);
        }
        backward |ctx, g| {
            let (u, s, vh) = (ctx.saved(0)?, ctx.saved(1)?, ctx.saved(2)?);
            Ok(vec![Some(svd_backward((&g[0], &g[1], &g[2]), (&u, &s, &vh))?)])
        };
        forward formula(|t| {
            let Some(da) = t.get(0) else {
                return Ok(vec![None, None, None]);
            };
            if full_matrices && m != n {
                return Err(Error::runtime(
                    "linalg.svd: forward-mode derivatives of non-square inputs need full_matrices=False",
                ));
            }
            svd_tangent(da, &out.0, &out.1, &out.2)
        });
        batched rows because "the phase check and the zero-gradient tests read every row's values together";
    }
}

impl Tensor {
    /// `linalg.eigvalsh(A, UPLO)`: the eigenvalues of
    /// [`Tensor::linalg_eigh`], without the eigenvectors when no derivative
    /// needs them.
    pub fn linalg_eigvalsh(&self, upper: bool) -> Result<Tensor> {
        if differentiable(self) {
            return Ok(self.linalg_eigh(upper)?.0);
        }
        check_square(self, "linalg.eigvalsh")?;
        let a = if upper { self.adjoint()? } else { self.clone() };
        Ok(faer_kernel!(self, eigh(&a, false))?.0)
    }

    /// `linalg.svdvals(A)`: the singular values of [`Tensor::linalg_svd`],
    /// without the singular vectors when no derivative needs them.
    pub fn linalg_svdvals(&self) -> Result<Tensor> {
        if differentiable(self) {
            return Ok(self.linalg_svd(false)?.1);
        }
        check_matrix(self, "linalg.svdvals")?;
        Ok(faer_kernel!(self, svd(self, false, false))?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::QrMode;
    use crate::Tensor;

    #[test]
    fn factors_reproduce_a_small_matrix() {
        let a = Tensor::from_slice(&[2.0f64, 1.0, 1.0, 3.0], &[2, 2]).unwrap();
        let (q, r) = a.linalg_qr(QrMode::Reduced).unwrap();
        let qr = q.matmul(&r).unwrap().to_vec::<f64>();
        for (x, y) in qr.iter().zip([2.0, 1.0, 1.0, 3.0]) {
            assert!((x - y).abs() < 1e-12);
        }
        // Eigenvalues of [[2, 1], [1, 3]]: (5 ± √5) / 2.
        let l = a.linalg_eigvalsh(false).unwrap().to_vec::<f64>();
        let r5 = 5f64.sqrt();
        assert!((l[0] - (5.0 - r5) / 2.0).abs() < 1e-12);
        assert!((l[1] - (5.0 + r5) / 2.0).abs() < 1e-12);
        // A symmetric positive definite matrix: singular values equal the
        // eigenvalues, descending.
        let s = a.linalg_svdvals().unwrap().to_vec::<f64>();
        assert!((s[0] - l[1]).abs() < 1e-12 && (s[1] - l[0]).abs() < 1e-12);
    }
}
