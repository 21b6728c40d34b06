//! `linalg.pinv` (the Moore-Penrose pseudo-inverse, from the SVD or, for
//! Hermitian input, the eigendecomposition) with a derivative that stays
//! finite at any rank, and `linalg.lstsq` on it, for every driver torch
//! accepts on CPU.
//!
//! Complex gradients are conjugate Wirtinger derivatives (torch's
//! convention): every transpose below is a conjugate transpose.

use super::decomp::check_square;
use super::spectral::{check_matrix, differentiable, QrMode};
use crate::autograd::derivatives;
use crate::tensor::broadcast_shapes;
use crate::{DType, Error, Result, Tensor};

/// The machine epsilon of the real dtype under `dt`.
fn epsilon(dt: DType) -> f64 {
    match dt.to_real() {
        DType::Float32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    }
}

/// torch's cutoff for the singular values (or eigenvalue moduli) `s` of
/// `m x n` matrices: `max(atol, rtol * max(s))` per matrix, with a
/// trailing unit dim. `rtol` defaults to `eps * max(m, n)` where `atol` is
/// absent or not positive, and to 0 where it is positive; tolerance
/// tensors broadcast with the batch dims.
pub(super) fn cutoff(
    s: &Tensor,
    (m, n): (usize, usize),
    atol: Option<&Tensor>,
    rtol: Option<&Tensor>,
) -> Result<Tensor> {
    let real = s.dtype();
    let zero = Tensor::scalar_tensor(0.0, real);
    let default = Tensor::scalar_tensor(epsilon(real) * m.max(n) as f64, real);
    let rtol = match (rtol, atol) {
        (Some(r), _) => r.to_dtype(real),
        (None, Some(a)) => zero.r#where(&a.gt(&zero)?, &default)?,
        (None, None) => default,
    };
    let atol = atol.map_or(zero, |a| a.to_dtype(real));
    let smax = if s.shape()[s.ndim() - 1] == 0 {
        let mut shape = s.shape().to_vec();
        *shape.last_mut().expect("s has a values dim") = 1;
        Tensor::try_zeros(&shape, real)?
    } else {
        s.amax(Some(&[-1]), true)?
    };
    rtol.unsqueeze(-1)?
        .mul(&smax)?
        .maximum(&atol.unsqueeze(-1)?)
}

/// `1 / x` where `keep` holds and 0 elsewhere.
fn masked_reciprocal(x: &Tensor, keep: &Tensor) -> Result<Tensor> {
    x.reciprocal()?
        .r#where(keep, &Tensor::scalar_tensor(0.0, x.dtype()))
}

/// The pseudo-inverse's value (not recorded): `V diag(1/s) U^H` over the
/// singular values above the cutoff, or `V diag(1/l) V^H` over the
/// eigenvalues whose modulus is above it.
fn pinv_value(
    a: &Tensor,
    atol: Option<&Tensor>,
    rtol: Option<&Tensor>,
    hermitian: bool,
) -> Result<Tensor> {
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let (left, vals, right) = if hermitian {
        let (l, v) = a.linalg_eigh(false)?;
        (v.clone(), l, v.adjoint()?)
    } else {
        let (u, s, vh) = a.linalg_svd(false)?;
        (vh.adjoint()?, s, u.adjoint()?)
    };
    let size = vals.abs()?;
    let keep = size.gt(&cutoff(&size, (m, n), atol, rtol)?)?;
    let inv = masked_reciprocal(&vals, &keep)?.to_dtype(a.dtype());
    left.mul(&inv.unsqueeze(-2)?)?.matmul(&right)
}

/// The pseudo-inverse's gradient for `A` (`m x n`), `P = A^+` and its
/// gradient `G`: `-P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A)`.
fn pinv_backward(g: &Tensor, a: &Tensor, p: &Tensor) -> Result<Tensor> {
    let (ph, gh) = (p.adjoint()?, g.adjoint()?);
    let t1 = ph.matmul(&g.matmul(&ph)?)?;
    let x = gh.matmul(p)?.matmul(&ph)?;
    let t2 = x.sub(&a.matmul(&p.matmul(&x)?)?)?;
    let y = ph.matmul(&p.matmul(&gh)?)?;
    let t3 = y.sub(&y.matmul(p)?.matmul(a)?)?;
    t2.add(&t3)?.sub(&t1)
}

/// The pseudo-inverse's tangent for the input tangent `dA`:
/// `-P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P`.
fn pinv_tangent(da: &Tensor, a: &Tensor, p: &Tensor) -> Result<Tensor> {
    let (dah, ph) = (da.adjoint()?, p.adjoint()?);
    let t1 = p.matmul(&da.matmul(p)?)?;
    let z = p.matmul(&ph.matmul(&dah)?)?;
    let t2 = z.sub(&z.matmul(a)?.matmul(p)?)?;
    let w = dah.matmul(&ph.matmul(p)?)?;
    let t3 = w.sub(&p.matmul(&a.matmul(&w)?)?)?;
    t2.add(&t3)?.sub(&t1)
}

derivatives! {
    table FORMULAS("linear algebra: pinv") for Tensor;

    /// `linalg.pinv(A, atol, rtol, hermitian)`: the pseudo-inverse of each
    /// `m x n` matrix (`n x m`), from the singular values above
    /// `max(atol, rtol * σ_max)` (`rtol` by default `eps * max(m, n)`);
    /// with `hermitian`, from the eigendecomposition of the lower triangle.
    pub fn linalg_pinv(
        &self,
        atol: Option<&Tensor>,
        rtol: Option<&Tensor>,
        hermitian: bool,
    ) -> Result<Tensor> {
        before {
            check_matrix(self, "linalg.pinv")?;
            if hermitian {
                check_square(self, "linalg.pinv(hermitian=True)")?;
            };
        }
        record "LinalgPinvBackward0", [self];
        compute => out = pinv_value(self, atol, rtol, hermitian)?;
        save |s| {
            s.save("self", self);
            s.save_output("result", &out, 0);
        }
        backward |ctx, g| {
            let (a, p) = (ctx.saved(0)?, ctx.saved(1)?);
            Ok(vec![Some(pinv_backward(&g[0], &a, &p)?)])
        };
        forward formula(|t| t.map1(|da| pinv_tangent(da, self, &out)));
        // Products, differences and conjugate transposes of the last two
        // dims only: a leading batch dim of `g` broadcasts through them.
        batched broadcast;
    }
}

/// The drivers `linalg.lstsq` accepts (LAPACK's names, as torch).
const DRIVERS: [&str; 4] = ["gels", "gelsy", "gelsd", "gelss"];

impl Tensor {
    /// `linalg.lstsq(A, B, rcond, driver)`: `(solution, residuals, rank,
    /// singular_values)` for the least-squares problems `min ||A X - B||`
    /// (the minimum-norm solution among the singular values above
    /// `rcond * σ_max`), batch dims broadcast; `B` may be a batch of
    /// vectors (one dim fewer than `A`). `gels` solves through a QR
    /// factorization (full rank assumed, as LAPACK's), `gelsy` too when
    /// every matrix is well conditioned (otherwise through the SVD, as
    /// `gelsd` and `gelss`). As torch's drivers: `residuals`
    /// (`||A X - B||²` per column) for tall `A` with `gels`, and with
    /// `gelsd`/`gelss` when every matrix has full rank; `rank` for all but
    /// `gels`; `singular_values` for `gelsd`/`gelss`; the others empty.
    /// `solution` and `residuals` are differentiable.
    pub fn linalg_lstsq(
        &self,
        b: &Tensor,
        rcond: Option<f64>,
        driver: Option<&str>,
    ) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
        const OP: &str = "torch.linalg.lstsq";
        let driver = driver.unwrap_or("gelsy");
        if !DRIVERS.contains(&driver) {
            return Err(Error::runtime(format!(
                "{OP}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
            )));
        }
        if self.ndim() < 2 {
            return Err(Error::runtime(format!(
                "{OP}: input must have at least 2 dimensions."
            )));
        }
        if b.ndim() + 1 < self.ndim() || b.ndim() > self.ndim() {
            return Err(Error::runtime(format!(
                "{OP}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1"
            )));
        }
        check_matrix(self, OP)?;
        if b.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "{OP}: Expected input and other to have the same dtype, but got input's dtype {} and other's dtype {}",
                self.dtype().scalar_type_name(),
                b.dtype().scalar_type_name()
            )));
        }
        let vector = b.ndim() + 1 == self.ndim();
        let bm = if vector { b.unsqueeze(-1)? } else { b.clone() };
        let nd = self.ndim();
        let (m, n) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        let (rows, k) = (bm.shape()[nd - 2], bm.shape()[nd - 1]);
        if rows != m {
            return Err(Error::runtime(format!(
                "{OP}: input.size(-2) should match other.size(-2)"
            )));
        }
        let batch = broadcast_shapes(&self.shape()[..nd - 2], &bm.shape()[..nd - 2])?;
        let with =
            |r: usize, c: usize| -> Vec<usize> { batch.iter().copied().chain([r, c]).collect() };
        let a = self.broadcast_to(&with(m, n))?;
        let bm = bm.broadcast_to(&with(m, k))?;
        let real = self.dtype().to_real();
        let rtol = Tensor::scalar_tensor(rcond.unwrap_or(epsilon(real) * m.max(n) as f64), real);
        let empty = |dt: DType| Tensor::try_zeros(&[0], dt);
        let k_min = m.min(n);
        // gels assumes full rank; gelsy takes the QR route when the
        // triangle shows full rank and the SVD's otherwise; the others
        // report singular values, so they take the SVD's.
        let by_qr = match driver {
            _ if k_min == 0 => None,
            "gels" => qr_solve(&a, &bm, None)?,
            "gelsy" => qr_solve(&a, &bm, Some(rtol.to_vec::<f64>()[0]))?,
            _ => None,
        };
        let (x, rank, s) = match by_qr {
            Some(x) => {
                let full = Tensor::full(&batch, k_min as i64, DType::Int64);
                (x, full, empty(real)?)
            }
            None => {
                let (x, s) = svd_solve(&a, &bm, &rtol)?;
                let rank = s.gt(&cutoff(&s, (m, n), None, Some(&rtol))?)?.sum(
                    Some(&[-1]),
                    false,
                    Some(DType::Int64),
                )?;
                (x, rank, s)
            }
        };
        let full_rank = rank
            .eq(&Tensor::scalar_tensor(n as f64, DType::Int64))?
            .all(None, false)?
            .to_vec::<bool>()[0];
        let residuals = match driver {
            _ if m <= n || driver == "gelsy" => empty(real)?,
            "gels" => squared_residuals(&a, &x, &bm)?,
            _ if full_rank => squared_residuals(&a, &x, &bm)?,
            _ => empty(real)?,
        };
        let rank = if driver == "gels" {
            empty(DType::Int64)?
        } else {
            rank
        };
        let s = if matches!(driver, "gelsd" | "gelss") {
            s
        } else {
            empty(real)?
        };
        // Column-major matrices, as torch's solutions.
        let x = x.mt()?.contiguous().mt()?;
        let x = if vector { x.squeeze(Some(&[-1]))? } else { x };
        Ok((x, residuals, rank, s))
    }
}

/// The minimum-norm least-squares solution over the singular values above
/// `rtol * σ_max`, and those values: recorded as `pinv(A) B` when a
/// derivative can reach it, from one SVD otherwise.
fn svd_solve(a: &Tensor, b: &Tensor, rtol: &Tensor) -> Result<(Tensor, Tensor)> {
    if differentiable(a) || differentiable(b) {
        let x = a.linalg_pinv(None, Some(rtol), false)?.matmul(b)?;
        return Ok((x, a.detach().linalg_svdvals()?));
    }
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    let (u, s, vh) = a.linalg_svd(false)?;
    let keep = s.gt(&cutoff(&s, (m, n), None, Some(rtol))?)?;
    let inv = masked_reciprocal(&s, &keep)?.to_dtype(a.dtype());
    let x = vh
        .adjoint()?
        .matmul(&u.adjoint()?.matmul(b)?.mul(&inv.unsqueeze(-1)?)?)?;
    Ok((x, s))
}

/// The least-squares solution of full-rank problems through a QR
/// factorization (recorded, so differentiable): `R^{-1} Q^H B` for
/// `m >= n`, and the minimum-norm `Q R^{-H} B` from `A^H = Q R` for
/// `m < n`. With `rtol`, `None` when a triangle's 1-norm condition number
/// reaches `1 / rtol` (the rank is then left to the SVD).
fn qr_solve(a: &Tensor, b: &Tensor, rtol: Option<f64>) -> Result<Option<Tensor>> {
    let nd = a.ndim();
    let tall = a.shape()[nd - 2] >= a.shape()[nd - 1];
    let f = if tall { a.clone() } else { a.adjoint()? };
    let (q, r) = f.linalg_qr(QrMode::Reduced)?;
    if let Some(rtol) = rtol {
        let r = r.detach();
        let k = r.shape()[nd - 1] as i64;
        let eye = Tensor::eye(k, None, r.dtype())?;
        let rinv = r.linalg_solve_triangular(&eye, true, true, false)?;
        let norm1 = |t: &Tensor| -> Result<Tensor> {
            t.abs()?
                .to_dtype(DType::Float64)
                .sum(Some(&[-2]), false, None)?
                .amax(Some(&[-1]), false)
        };
        let cond = norm1(&r)?.mul(&norm1(&rinv)?)?.to_vec::<f64>();
        // NaN or infinity (a zero on the diagonal) fails the test too.
        if !cond.iter().all(|&c| c * rtol < 1.0) {
            return Ok(None);
        }
    }
    Ok(Some(if tall {
        r.linalg_solve_triangular(&q.adjoint()?.matmul(b)?, true, true, false)?
    } else {
        q.matmul(
            &r.adjoint()?
                .linalg_solve_triangular(b, false, true, false)?,
        )?
    }))
}

/// `||A X - B||²` down each column.
fn squared_residuals(a: &Tensor, x: &Tensor, b: &Tensor) -> Result<Tensor> {
    a.matmul(x)?
        .sub(b)?
        .abs()?
        .square()?
        .sum(Some(&[-2]), false, None)
}
