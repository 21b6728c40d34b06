//! `linalg.inv`, `linalg.det` and `linalg.solve`, batched with
//! broadcasting, on the LU kernels of `kernels::lu`, and `linalg.slogdet`
//! (with `logdet`), each in the input's dtype.
//!
//! The three are holomorphic in their inputs, so a complex gradient is the
//! real one with every transpose made a conjugate transpose and every saved
//! value conjugated (torch's convention, docs/dtypes.md).

use super::matmul::{lift, xshape};
use crate::autograd::{derivatives, is_grad_enabled};
use crate::tensor::broadcast_shapes;
use crate::{Error, Result, Tensor};

/// Checks that `a` is a float batch of square matrices, for `op`.
pub(super) fn check_square(a: &Tensor, op: &str) -> Result<usize> {
    if !a.dtype().is_differentiable() {
        return Err(Error::runtime(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            a.dtype().scalar_type_name()
        )));
    }
    if a.dtype().is_reduced_float() {
        return Err(Error::runtime(format!(
            "{op}: Low precision dtypes not supported. Got {}",
            a.dtype().scalar_type_name()
        )));
    }
    let nd = a.ndim();
    if nd < 2 {
        return Err(Error::runtime(format!(
            "{op}: The input tensor A must have at least 2 dimensions."
        )));
    }
    let (r, c) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    if r != c {
        return Err(Error::runtime(format!(
            "{op}: A must be batches of square matrices, but they are {r} by {c} matrices"
        )));
    }
    Ok(r)
}

derivatives! {
    table FORMULAS("linear algebra: inv, det, solve, slogdet") for Tensor;

    /// `linalg.inv(A)`: inverse of each square matrix (RuntimeError if one
    /// is singular).
    pub fn inverse(&self) -> Result<Tensor> {
        before {
            let n = check_square(self, "linalg.inv")?;
        }
        record "LinalgInvExBackward0", [self];
        compute => out = faer_kernel!(self, inv(self, n))?;
        save |s| {
            s.save_output("inverse", &out, 0);
        }
        backward |ctx, g| {
            // -A^{-H} g A^{-H}
            let inv_t = ctx.saved(0)?.adjoint()?;
            let ga = inv_t.matmul(&g[0])?.matmul(&inv_t)?;
            Ok(vec![Some(ga.mul(&Tensor::scalar(-1.0))?)])
        };
        // -A^{-1} t A^{-1}
        forward formula(|t| t.map1(|ta| out.matmul(ta)?.matmul(&out)?.neg()));
        // The products broadcast A^{-T} over a leading batch dim of g.
        batched broadcast;
    }

    /// `linalg.det(A)`: determinant of each square matrix (0 if singular).
    pub fn det(&self) -> Result<Tensor> {
        before {
            let n = check_square(self, "linalg.det")?;
        }
        record "LinalgDetBackward0", [self];
        compute => out = faer_kernel!(self, det(self, n))?;
        save |s| {
            s.save("A", self);
            s.save_output("result", &out, 0);
        }
        backward |ctx, g| {
            // g conj(det(A)) A^{-H}; a singular A has no inverse to use
            // here and raises.
            let (a, det) = (ctx.saved(0)?, ctx.saved(1)?);
            let mut shape: Vec<isize> = det.shape().iter().map(|&n| n as isize).collect();
            shape.extend([1, 1]);
            let scale = g[0].mul(&det.conj()?)?.reshape(&shape)?;
            let inv_t = a.inverse()?.adjoint()?;
            Ok(vec![Some(scale.mul(&inv_t)?)])
        };
        // det(A) trace(A^{-1} t) = det(A) sum(A^{-T} * t); a singular A
        // raises, as in backward.
        forward formula(|t| {
            t.map1(|ta| {
                let inv_t = self.inverse()?.transpose(-2, -1)?;
                out.mul(&ta.mul(&inv_t)?.sum(Some(&[-2, -1]), false, None)?)
            })
        });
        batched rows because "g det(A) is reshaped to det's shape with two unit dims, which has no batch dim";
    }

    /// `linalg.solve(A, B)`: X with `A X = B`, batched with broadcasting; B
    /// may be a (batch of) vector(s).
    pub fn linalg_solve(&self, b: &Tensor) -> Result<Tensor> {
        before {
            let a = self;
            let n = check_square(a, "linalg.solve")?;
            if b.dtype() != a.dtype() {
                return Err(Error::runtime(format!(
                    "linalg.solve: Expected A and B to have the same dtype, but found A of type {} and B of type {} instead",
                    a.dtype().scalar_type_name(),
                    b.dtype().scalar_type_name()
                )));
            };
            if b.ndim() == 0 {
                return Err(Error::runtime(
                    "linalg.solve: The input tensor B must have at least 1 dimensions.",
                ));
            };
            let vector =
                b.ndim() == 1 || (b.ndim() + 1 == a.ndim() && b.shape() == &a.shape()[..a.ndim() - 1]);
            // The factors are kept for a backward, which solves with A^H.
            let keep = is_grad_enabled() && (a.requires_grad() || b.requires_grad());
        }
        record "LinalgSolveExBackward0", [a, b];
        compute {
            let b2 = if vector { b.unsqueeze(-1)? } else { b.clone() };
            let nb = b2.ndim();
            if b2.shape()[nb - 2] != n {
                return Err(Error::runtime(format!(
                    "linalg.solve: Incompatible shapes of A and B for the equation AX = B ({} and {})",
                    xshape(&a.shape()[a.ndim() - 2..]),
                    xshape(&b2.shape()[nb - 2..])
                )));
            };
            let k = b2.shape()[nb - 1];
            let batch = broadcast_shapes(&a.shape()[..a.ndim() - 2], &b2.shape()[..nb - 2])?;
            let mut sa = batch.to_vec();
            sa.extend([n, n]);
            let mut sb = batch.to_vec();
            sb.extend([n, k]);
            let (ae, be) = (a.broadcast_to(&sa)?, b2.broadcast_to(&sb)?);
            let (x, factors) = faer_kernel!(a, solve(&ae, &be, n, k, keep))?;
        } => x = if vector {
            let mut shape = x.shape().to_vec();
            shape.pop();
            Tensor::from_parts(
                x.storage().clone(),
                crate::Layout::contiguous(&shape),
                x.dtype(),
            )?
        } else {
            x
        };
        save |s, needs| {
            s.save("A", a);
            s.save_output_if(needs[0], "result", &x, 0);
        }
        backward |ctx, g| {
            // gB = A^{-H} g, gA = -gB X^H; from the forward's factors
            // unless this backward is itself differentiated.
            let a = ctx.saved(0)?;
            let gb = match &factors {
                Some((lu, pivots)) if !is_grad_enabled() => {
                    let g2 = if vector { g[0].unsqueeze(-1)? } else { g[0].clone() };
                    let mut shape = lu.shape().to_vec();
                    shape[lu.ndim() - 1] = g2.shape()[g2.ndim() - 1];
                    let gb = faer_kernel!(lu, lu_solve(lu, pivots, &g2.broadcast_to(&shape)?, true))?;
                    if vector {
                        gb.squeeze(Some(&[-1]))?
                    } else {
                        gb
                    }
                }
                _ => a.adjoint()?.linalg_solve(&g[0])?,
            };
            let ga = if ctx.needs(0) {
                let x = ctx.saved(1)?;
                let (gb2, x2) = if vector {
                    (column(&gb)?, column(&x)?)
                } else {
                    (gb.clone(), x)
                };
                // Negated on the narrow factor, not on the n x n product.
                Some(gb2.neg()?.matmul(&x2.adjoint()?)?)
            } else {
                None
            };
            Ok(vec![ga, ctx.needs(1).then_some(gb)])
        };
        // dX = A^{-1} (tB - tA X), in columns.
        forward formula(|t| {
            let xc = if vector { column(&x)? } else { x.clone() };
            let full: Vec<isize> = t.shape(xc.shape()).iter().map(|&n| n as isize).collect();
            // A batched tangent's batch dim goes in front of all of X's.
            let lifted = |ti: Tensor| match t.batch() {
                Some(_) => lift(&ti, full.len()),
                None => Ok(ti),
            };
            let rhs = t.combine(|i, ti| match i {
                0 => lifted(ti.clone())?.matmul(&xc)?.neg(),
                _ if vector => lifted(column(ti)?)?.expand(&full),
                _ => lifted(ti.clone())?.expand(&full),
            })?;
            let Some(rhs) = rhs else {
                return Ok(vec![None]);
            };
            let dx = solve_rows(a, &rhs.expand(&full)?, t.batch().is_some())?;
            Ok(vec![Some(if vector {
                dx.squeeze(Some(&[-1]))?
            } else {
                dx
            })])
        });
        batched rows because "a batch of g for a vector B would be read as a matrix of columns";
    }

    /// `linalg.slogdet(A)`: `(sign, logabsdet)` with `det(A) = sign *
    /// exp(logabsdet)` for each square matrix, from an LU factorization in
    /// the input's dtype: `sign` is ±1 (a unit-modulus phase for complex
    /// `A`) or 0, and `logabsdet` (real) is `-inf` for a singular matrix.
    pub fn linalg_slogdet(&self) -> Result<(Tensor, Tensor)> {
        before {
            let _ = check_square(self, "linalg.slogdet")?;
            let complex = self.dtype().is_complex();
        }
        record "LinalgSlogdetBackward0", [self];
        compute => out = faer_kernel!(self, slogdet(self))?;
        save |s| {
            s.save("A", self);
            s.save_output("sign", &out.0, 0);
        }
        backward |ctx, g| {
            // (g_logabs + i c) A^{-H}, with c = -Im(conj(g_sign) sign) for
            // complex A (a real sign is constant where it is defined).
            let (a, sign) = (ctx.saved(0)?, ctx.saved(1)?);
            let w = if complex {
                let c = g[0].conj()?.mul(&sign)?.imag()?.neg()?;
                Tensor::complex(&g[1], &c)?
            } else {
                g[1].clone()
            };
            let inv_h = a.inverse()?.adjoint()?;
            Ok(vec![Some(w.unsqueeze(-1)?.unsqueeze(-1)?.mul(&inv_h)?)])
        };
        // With T = tr(A^{-1} dA): d logabsdet = Re T and, for complex A,
        // d sign = i sign Im T.
        forward formula(|t| {
            let Some(da) = t.get(0) else {
                return Ok(vec![None, None]);
            };
            let inv_t = self.inverse()?.transpose(-2, -1)?;
            let tr = inv_t.mul(da)?.sum(Some(&[-2, -1]), false, None)?;
            let dl = tr.real()?.try_copy()?;
            let ds = if complex {
                let im = tr.imag()?;
                Some(out.0.mul(&Tensor::complex(&im.zeros_like()?, &im)?)?)
            } else {
                None
            };
            Ok(vec![ds, Some(dl)])
        });
        batched rows because "g_sign and g_logabsdet are combined per matrix before the batch of A^{-H}";
    }
}

impl Tensor {
    /// `logdet(A)`: `log(det(A))` for each square matrix, from
    /// [`Tensor::linalg_slogdet`]: NaN for a real matrix with a negative
    /// determinant, `-inf` for a singular one.
    pub fn logdet(&self) -> Result<Tensor> {
        let (sign, logabs) = self.linalg_slogdet()?;
        sign.log()?.add(&logabs)
    }
}

/// `A^{-1} rhs` for `rhs` of a solution's shape in columns, with an extra
/// leading batch dim when `batched`: its rows become more columns, so each
/// matrix of `a` is factored once.
fn solve_rows(a: &Tensor, rhs: &Tensor, batched: bool) -> Result<Tensor> {
    if !batched {
        return a.linalg_solve(rhs);
    }
    let shape: Vec<isize> = rhs.shape().iter().map(|&n| n as isize).collect();
    let nd = shape.len();
    let mut wide = shape[1..].to_vec();
    wide[nd - 2] = -1;
    let x = a.linalg_solve(&rhs.movedim(&[0], &[-1])?.reshape(&wide)?)?;
    let mut split = shape[1..].to_vec();
    split.push(shape[0]);
    x.reshape(&split)?.movedim(&[-1], &[0])
}

/// `t` with a trailing unit dim (a batch of vectors as column matrices).
fn column(t: &Tensor) -> Result<Tensor> {
    let mut shape: Vec<isize> = t.shape().iter().map(|&n| n as isize).collect();
    shape.push(1);
    t.reshape(&shape)
}

#[cfg(test)]
mod tests {
    use crate::ops::shape::tests::batched_and_rows;
    use crate::Tensor;

    #[test]
    fn inverse_backward_takes_a_batch_of_gradients() {
        // A batch of two matrices, with a batch of three gradients.
        let a =
            Tensor::from_slice(&[4.0f64, 7.0, 2.0, 6.0, 1.0, 2.0, 3.0, 5.0], &[2, 2, 2]).unwrap();
        let gs: Vec<f64> = (0..24).map(|i| f64::from(i % 5) - 2.0).collect();
        let gs = Tensor::from_slice(&gs, &[3, 2, 2, 2]).unwrap();
        let (node_batched, batched, rows) = batched_and_rows(|a| a.inverse(), &a, &gs);
        assert!(node_batched);
        assert_eq!(batched.len(), rows.len());
        for (b, r) in batched.iter().zip(&rows) {
            assert!((b - r).abs() < 1e-12, "{batched:?} != {rows:?}");
        }
    }
}
