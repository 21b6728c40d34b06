//! `linalg.cholesky_ex` (and through it `cholesky`) and
//! `linalg.solve_triangular`, on the `faer` kernels of `kernels::decomp`,
//! in the input's own dtype.
//!
//! Complex gradients follow torch's convention (the conjugate Wirtinger
//! derivative): every transpose below is a conjugate transpose.

use super::decomp::check_square;
use super::matmul::lift;
use crate::autograd::{derivatives, sum_to};
use crate::tensor::broadcast_shapes;
use crate::{Error, Result, Tensor};

/// The part of `t` a triangular matrix is read from: its upper or lower
/// triangle, without the diagonal when it is taken as ones.
fn triangle(t: &Tensor, upper: bool, unit: bool) -> Result<Tensor> {
    match (upper, unit) {
        (true, u) => t.triu(i64::from(u)),
        (false, u) => t.tril(-i64::from(u)),
    }
}

/// `t`, a kernel's result or a view of one, as a tensor of its own (not a
/// view) over the same memory.
fn own(t: &Tensor) -> Result<Tensor> {
    Tensor::from_parts(t.storage().clone(), t.layout().clone(), t.dtype())
}

/// `X` with `A X = B` (`left`) or `X A = B`, batch dims broadcast, each
/// matrix column-major as torch lays out its solutions; not recorded (the
/// formulas call the op instead). The kernel solves from the left, so
/// `X A = B` is solved as `A^T X^T = B^T`, written row-major.
fn solve_tri(a: &Tensor, b: &Tensor, upper: bool, left: bool, unit: bool) -> Result<Tensor> {
    if !left {
        return own(&solve_tri_left(&a.mt()?, &b.mt()?, !upper, unit, false)?.mt()?);
    }
    solve_tri_left(a, b, upper, unit, true)
}

fn solve_tri_left(
    a: &Tensor,
    b: &Tensor,
    upper: bool,
    unit: bool,
    col_major: bool,
) -> Result<Tensor> {
    let (na, nb) = (a.ndim(), b.ndim());
    let (n, k) = (a.shape()[na - 1], b.shape()[nb - 1]);
    let batch = broadcast_shapes(&a.shape()[..na - 2], &b.shape()[..nb - 2])?;
    let (mut sa, mut sb) = (batch.to_vec(), batch.to_vec());
    sa.extend([n, n]);
    sb.extend([n, k]);
    let (ae, be) = (a.broadcast_to(&sa)?, b.broadcast_to(&sb)?);
    faer_kernel!(
        a,
        solve_triangular(&ae, &be, (n, k), (upper, unit), col_major)
    )
}

/// The Cholesky gradient for the lower factor `l` and its gradient `gl`:
/// `L^{-H} sym(tril(L^H gL)) L^{-1}`, where `sym` halves the diagonal and
/// mirrors the strict lower triangle (conjugated) into the upper one.
fn cholesky_backward(gl: &Tensor, l: &Tensor) -> Result<Tensor> {
    let lh = l.adjoint()?;
    let p = lh.matmul(gl)?.tril(0)?;
    let p = p.add(&p.tril(-1)?.adjoint()?)?.mul(&Tensor::scalar(0.5))?;
    let x = lh.linalg_solve_triangular(&p, true, true, false)?;
    l.linalg_solve_triangular(&x, false, false, false)
}

/// The Cholesky tangent for the lower factor `l` and input tangent `ta`:
/// `L Φ(L^{-1} dA L^{-H})`, where `Φ` keeps the lower triangle and halves
/// the diagonal.
fn cholesky_tangent(ta: &Tensor, l: &Tensor) -> Result<Tensor> {
    let x = l.linalg_solve_triangular(ta, false, true, false)?;
    let x = l
        .adjoint()?
        .linalg_solve_triangular(&x, true, false, false)?;
    let phi = x
        .tril(-1)?
        .add(&x.tril(0)?.triu(0)?.mul(&Tensor::scalar(0.5))?)?;
    l.matmul(&phi)
}

derivatives! {
    table FORMULAS("linear algebra: cholesky_ex, solve_triangular") for Tensor;

    /// `linalg.cholesky_ex(A, upper)`: `(L, info)`, the Cholesky factor of
    /// each Hermitian positive-definite matrix (`A = L L^H` from `A`'s lower
    /// triangle, or with `upper` `A = U^H U` from its upper one) and an
    /// int32 `info` per matrix: 0, or the order of the first leading minor
    /// that is not positive definite (that matrix's factor is zeros).
    pub fn linalg_cholesky_ex(&self, upper: bool) -> Result<(Tensor, Tensor)> {
        before {
            let n = check_square(self, "linalg.cholesky")?;
        }
        record "LinalgCholeskyExBackward0", [self];
        compute {
            // Column-major factors, as torch's; `U = L'^H` for the factor
            // `L'` of `A^H`, written row-major so that `U` is column-major.
            let (l, info) = if upper {
                let (l, info) = faer_kernel!(self, cholesky(&self.adjoint()?, n, false))?;
                (own(&l.adjoint()?)?, info)
            } else {
                faer_kernel!(self, cholesky(self, n, true))?
            };
            let info = Tensor::from_slice(&info, &self.shape()[..self.ndim() - 2])?;
        } => out = (l, info);
        save |s| {
            s.save_output("L", &out.0, 0);
        }
        backward |ctx, g| {
            let l = ctx.saved(0)?;
            let ga = if upper {
                cholesky_backward(&g[0].adjoint()?, &l.adjoint()?)?
            } else {
                cholesky_backward(&g[0], &l)?
            };
            Ok(vec![Some(ga)])
        };
        forward formula(|t| t.map1(|ta| if upper {
            cholesky_tangent(&ta.adjoint()?, &out.0.adjoint()?)?.adjoint()
        } else {
            cholesky_tangent(ta, &out.0)
        }));
        batched rows because "the triangular solves take the gradient's batch dim as one more matrix batch of the factor, which is what they broadcast, but the adjoint of a batched gradient is taken per row";
    }

    /// `linalg.solve_triangular(A, B, upper, left, unitriangular)`: `X` with
    /// `A X = B` (`left`) or `X A = B`, reading only `A`'s upper or lower
    /// triangle (its diagonal taken as ones with `unitriangular`); batch
    /// dims broadcast.
    pub fn linalg_solve_triangular(
        &self,
        b: &Tensor,
        upper: bool,
        left: bool,
        unitriangular: bool,
    ) -> Result<Tensor> {
        before {
            let a = self;
            let n = check_square(a, "linalg.solve_triangular")?;
            if b.dtype() != a.dtype() {
                return Err(Error::runtime(format!(
                    "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
                    a.dtype().scalar_type_name(),
                    b.dtype().scalar_type_name()
                )));
            };
            let nb = b.ndim();
            if nb < 2 {
                return Err(Error::runtime(format!(
                    "linalg.solve_triangular: The input tensor B must have at least 2 dimensions, got shape {:?}",
                    b.shape()
                )));
            };
            let rows = if left { b.shape()[nb - 2] } else { b.shape()[nb - 1] };
            if rows != n {
                return Err(Error::runtime(format!(
                    "linalg.solve_triangular: Incompatible shapes of A and B for the equation {} ({:?} and {:?})",
                    if left { "AX = B" } else { "XA = B" },
                    a.shape(),
                    b.shape()
                )));
            };
            let (a_shape, b_shape) = (a.shape().to_vec(), b.shape().to_vec());
        }
        record "LinalgSolveTriangularBackward0", [a, b];
        compute => x = solve_tri(a, b, upper, left, unitriangular)?;
        save |s, needs| {
            s.save("A", a);
            s.save_output_if(needs[0], "result", &x, 0);
        }
        backward |ctx, g| {
            // gB = A^{-H} g (or g A^{-H}); gA = -gB X^H (or -X^H gB) on A's
            // triangle.
            let a = ctx.saved(0)?;
            let gb = a.adjoint()?.linalg_solve_triangular(&g[0], !upper, left, unitriangular)?;
            let ga = if ctx.needs(0) {
                let x = ctx.saved(1)?;
                let p = if left {
                    gb.matmul(&x.adjoint()?)?
                } else {
                    x.adjoint()?.matmul(&gb)?
                };
                Some(sum_to(&triangle(&p.neg()?, upper, unitriangular)?, &a_shape)?)
            } else {
                None
            };
            let gb = if ctx.needs(1) { Some(sum_to(&gb, &b_shape)?) } else { None };
            Ok(vec![ga, gb])
        };
        // dX = A^{-1} (dB - dA X), or (dB - X dA) A^{-1}, with dA on A's
        // triangle; a batched tangent's batch dim goes in front of X's.
        forward formula(|t| {
            let rank = t.shape(x.shape()).len();
            let lifted = |ti: &Tensor| match t.batch() {
                Some(_) => lift(ti, rank),
                None => Ok(ti.clone()),
            };
            let rhs = t.combine(|i, ti| {
                let ti = lifted(ti)?;
                if i == 1 {
                    return Ok(ti);
                }
                let tri = triangle(&ti, upper, unitriangular)?;
                if left { tri.matmul(&x)?.neg() } else { x.matmul(&tri)?.neg() }
            })?;
            let Some(rhs) = rhs else {
                return Ok(vec![None]);
            };
            let full: Vec<isize> = t.shape(x.shape()).iter().map(|&n| n as isize).collect();
            Ok(vec![Some(a.linalg_solve_triangular(&rhs.expand(&full)?, upper, left, unitriangular)?)])
        });
        batched rows because "gA is summed to A's shape, which would sum the batch dim away";
    }
}

impl Tensor {
    /// `cholesky_solve(B, L, upper)` (this tensor is `B`): `X` with
    /// `A X = B` for `A = L L^H` (or `U^H U` with `upper`), by two
    /// triangular solves; batch dims broadcast.
    pub fn cholesky_solve(&self, l: &Tensor, upper: bool) -> Result<Tensor> {
        let (first, second) = if upper {
            (l.adjoint()?, l.clone())
        } else {
            (l.clone(), l.adjoint()?)
        };
        let y = first.linalg_solve_triangular(self, false, true, false)?;
        second.linalg_solve_triangular(&y, true, true, false)
    }

    /// `cholesky_inverse(L, upper)`: `A^{-1}` for `A = L L^H` (or `U^H U`).
    pub fn cholesky_inverse(&self, upper: bool) -> Result<Tensor> {
        let n = check_square(self, "cholesky_inverse")?;
        Tensor::eye(n as i64, None, self.dtype())?.cholesky_solve(self, upper)
    }

    /// The legacy `triangular_solve(b, A, upper, transpose, unitriangular)`
    /// (this tensor is `b`): `(X, A.clone())` with `A X = b`, or
    /// `A^T X = b` with `transpose`.
    pub fn triangular_solve(
        &self,
        a: &Tensor,
        upper: bool,
        transpose: bool,
        unitriangular: bool,
    ) -> Result<(Tensor, Tensor)> {
        let x = if transpose {
            a.mt()?
                .linalg_solve_triangular(self, !upper, true, unitriangular)?
        } else {
            a.linalg_solve_triangular(self, upper, true, unitriangular)?
        };
        Ok((x, a.try_copy_as(crate::tensor::MemoryFormat::Preserve)?))
    }

    /// `linalg.cholesky(A, upper)`: the factor of [`Tensor::linalg_cholesky_ex`],
    /// or a `LinAlgError` naming the first matrix that is not positive
    /// definite.
    pub fn linalg_cholesky(&self, upper: bool) -> Result<Tensor> {
        let (l, info) = self.linalg_cholesky_ex(upper)?;
        check_info(&info, "linalg.cholesky")?;
        Ok(l)
    }
}

/// torch's error for the first failed matrix of a `cholesky_ex` `info`.
pub(crate) fn check_info(info: &Tensor, op: &str) -> Result<()> {
    let codes = info.to_vec::<i32>();
    if let Some((i, &k)) = codes.iter().enumerate().find(|(_, &k)| k != 0) {
        let batch = if info.ndim() > 0 {
            format!("(Batch element {i}): ")
        } else {
            String::new()
        };
        return Err(Error::linalg(format!(
            "{op}: {batch}The factorization could not be completed because the input is not positive-definite (the leading minor of order {k} is not positive-definite)."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::Tensor;

    #[test]
    fn lower_factor_reproduces_the_matrix() {
        let a = Tensor::from_slice(&[4.0f64, 2.0, 2.0, 5.0], &[2, 2]).unwrap();
        let l = a.linalg_cholesky(false).unwrap();
        assert_eq!(l.to_vec::<f64>(), vec![2.0, 0.0, 1.0, 2.0]);
        let x = l
            .linalg_solve_triangular(&a, false, true, false)
            .unwrap()
            .to_vec::<f64>();
        assert_eq!(x, vec![2.0, 1.0, 0.0, 2.0]);
    }
}
