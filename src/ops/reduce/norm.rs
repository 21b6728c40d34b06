//! Vector and matrix norms.
//!
//! Vector norms accumulate in f64 (`kernels::norm`). Matrix norms built
//! from sums (`fro`, `1`, `-1`, `inf`, `-inf`) are compositions of
//! reductions; the spectral ones (`2`, `-2`, `nuc`) use singular values
//! from a one-sided Jacobi iteration in f64 (also in `kernels::norm`).

use super::{
    dim_mask, float_input, mask_dims, reduced_count, save_input_and_result, saved_input_and_result,
    sum_tangent, unsqueeze_reduced,
};
use crate::autograd::derivatives;
use crate::kernels;
use crate::tensor::wrap_dim;
use crate::{DType, Error, Result, Tensor};

/// Which norm `matrix_norm` computes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MatrixOrd {
    /// Frobenius: square root of the sum of squares.
    Fro,
    /// Nuclear: sum of singular values.
    Nuc,
    /// `1`, `-1`, `2`, `-2`, `inf` or `-inf`.
    P(f64),
}

derivatives! {
    table FORMULAS("norms: vector_norm") for Tensor;

    /// `linalg.vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None)`.
    pub fn vector_norm(
        &self,
        ord: f64,
        dims: Option<&[isize]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        before {
            if ord.is_nan() {
                return Err(Error::runtime("linalg.vector_norm: ord must not be NaN"));
            };
            // A complex vector's norm is the norm of its magnitudes.
            if self.dtype().is_complex() {
                return self.abs()?.vector_norm(ord, dims, keepdim, dtype.map(DType::to_real));
            };
            let x = float_input("linalg.vector_norm", self, dtype)?;
            let mask = dim_mask(x.ndim(), dims)?;
            if x.numel() == 0 && (ord < 0.0 || ord == f64::INFINITY) {
                let empty_reduction = reduced_count(x.shape(), &mask) == 0;
                if empty_reduction {
                    return Err(Error::runtime(format!(
                        "linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the operation does not have an identity"
                    )));
                }
            };
        }
        record "LinalgVectorNormBackward0", [self];
        compute {
            let (fmask, shape) = (mask.clone(), x.shape().to_vec());
        } => out = kernels::norm::vector_norm(&x, &mask, ord, keepdim)?;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| {
            let (x, out) = saved_input_and_result(ctx)?;
            let gu = unsqueeze_reduced(&g[0], &shape, &mask, keepdim)?;
            let nu = unsqueeze_reduced(&out, &shape, &mask, keepdim)?;
            Ok(vec![Some(norm_backward(&gu, &x, &nu, ord, &mask)?)])
        };
        // sum(w t), `w` the backward's weights for g = 1.
        forward formula(|t| {
            if ord == 0.0 {
                return Ok(vec![None]);
            }
            t.map1(|tx| {
                let nu = unsqueeze_reduced(&out, x.shape(), &fmask, keepdim)?;
                let ones = Tensor::ones(nu.shape(), nu.dtype());
                let w = norm_backward(&ones, &x, &nu, ord, &fmask)?;
                sum_tangent(t, &tx.mul(&w)?, &fmask, keepdim)
            })
        });
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }
}

impl Tensor {
    /// `norm(p=2, dim=None, keepdim=False, dtype=None)`: a vector norm over
    /// `dims` (torch's `Tensor.norm` with a numeric `p` or `"fro"`).
    pub fn norm(
        &self,
        p: f64,
        dims: Option<&[isize]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        if !self.dtype().is_differentiable() && dtype.is_none() {
            return Err(Error::runtime(format!(
                "norm(): input dtype should be either floating point or complex. Got {} instead.",
                self.dtype().scalar_type_name()
            )));
        }
        self.vector_norm(p, dims, keepdim, dtype)
    }

    /// `linalg.matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False,
    /// dtype=None)`.
    pub fn matrix_norm(
        &self,
        ord: MatrixOrd,
        dims: (isize, isize),
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let a = if self.dtype().is_complex() {
            complex_input("linalg.matrix_norm", self, dtype)?
        } else if let Some(d) = dtype.filter(|d| d.is_complex()) {
            return Err(Error::runtime(format!(
                "linalg.matrix_norm: dtype should be real for real inputs, but got {}",
                d.scalar_type_name()
            )));
        } else {
            float_input("linalg.matrix_norm", self, dtype)?
        };
        if a.ndim() < 2 {
            return Err(Error::runtime(format!(
                "linalg.matrix_norm: The input tensor A must have at least 2 dimensions. (got shape {:?})",
                a.shape()
            )));
        }
        let (r, c) = (wrap_dim(dims.0, a.ndim())?, wrap_dim(dims.1, a.ndim())?);
        if r == c {
            return Err(Error::runtime(format!(
                "linalg.matrix_norm: dims must be different. Got ({}, {})",
                dims.0, dims.1
            )));
        }
        let (ri, ci) = (r as isize, c as isize);
        match ord {
            MatrixOrd::Fro => a.vector_norm(2.0, Some(&[ri, ci]), keepdim, None),
            MatrixOrd::P(p) if p.abs() == 1.0 || p.is_infinite() => {
                // 1 / -1: max / min over columns of the column sums of |a|;
                // inf / -inf: the same over rows.
                let (sum_dim, pick_dim) = if p.abs() == 1.0 { (ri, ci) } else { (ci, ri) };
                if a.shape()[r] == 0 || a.shape()[c] == 0 {
                    return Err(Error::runtime(format!(
                        "linalg.matrix_norm: the {p} norm of an empty matrix (shape {:?}) is not defined",
                        a.shape()
                    )));
                }
                let sums = a.vector_norm(1.0, Some(&[sum_dim]), keepdim, None)?;
                let pick_dim = if keepdim || pick_dim < sum_dim {
                    pick_dim
                } else {
                    pick_dim - 1
                };
                if p > 0.0 {
                    sums.amax(Some(&[pick_dim]), keepdim)
                } else {
                    sums.amin(Some(&[pick_dim]), keepdim)
                }
            }
            MatrixOrd::P(p) if p.abs() == 2.0 => spectral(&a, r, c, keepdim, false, |s| {
                if p > 0.0 {
                    s.amax(Some(&[-1]), false)
                } else {
                    s.amin(Some(&[-1]), false)
                }
            }),
            MatrixOrd::Nuc => {
                spectral(&a, r, c, keepdim, true, |s| s.sum(Some(&[-1]), false, None))
            }
            MatrixOrd::P(p) => Err(Error::runtime(format!(
                "linalg.matrix_norm: Order {p} not supported."
            ))),
        }
    }

    /// `linalg.svdvals` restricted to what the norms need: the singular
    /// values (descending, f64) of each matrix over the last two dims.
    ///
    /// A complex matrix `A = X + iY` has the singular values of the real
    /// matrix `[[X, -Y], [Y, X]]`, each of which that matrix has twice.
    pub fn singular_values(&self) -> Result<Tensor> {
        if self.ndim() < 2 {
            return Err(Error::runtime(format!(
                "singular_values: expected a tensor with at least 2 dims, got shape {:?}",
                self.shape()
            )));
        }
        if self.dtype().is_complex() {
            let (x, y) = (self.real()?, self.imag()?);
            let top = Tensor::cat(&[x.clone(), y.neg()?], -1)?;
            let bottom = Tensor::cat(&[y, x], -1)?;
            let doubled = Tensor::cat(&[top, bottom], -2)?.singular_values()?;
            return Ok(doubled.slice(-1, 0, isize::MAX, 2)?.contiguous());
        }
        let a = float_input("singular_values", self, None)?;
        kernels::norm::singular_values(&a)
    }
}

/// `x` in the complex `dtype` asked for (its own when None), for `op`.
fn complex_input(op: &str, x: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    match dtype {
        Some(d) if !d.is_complex() => Err(Error::runtime(format!(
            "{op}: dtype should be complex for complex inputs, but got {}",
            d.scalar_type_name()
        ))),
        d => Ok(x.to_dtype(d.unwrap_or(x.dtype()))),
    }
}

/// A spectral norm: `pick` reduces each matrix's singular values (the
/// last dim of `linalg_svdvals`, whose derivative the result keeps); an
/// empty matrix is refused unless `empty_ok` (the nuclear norm's 0).
fn spectral(
    a: &Tensor,
    r: usize,
    c: usize,
    keepdim: bool,
    empty_ok: bool,
    pick: impl Fn(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let moved = a.movedim(&[r as isize, c as isize], &[-2, -1])?;
    if a.shape()[r].min(a.shape()[c]) == 0 && !empty_ok {
        return Err(Error::runtime(format!(
            "linalg.matrix_norm: the spectral norm of an empty matrix (shape {:?}) is not defined",
            a.shape()
        )));
    }
    // The one-sided Jacobi values keep small singular values to relative
    // accuracy; when a derivative is recorded, they replace the values of
    // linalg_svdvals, whose derivative the result then keeps.
    let accurate = moved.singular_values()?.to_dtype(a.dtype().to_real());
    let graph = (crate::autograd::is_grad_enabled() && a.requires_grad())
        || crate::autograd::fw_grad(a).is_some();
    let s = if graph {
        let diff = moved.linalg_svdvals()?;
        diff.add(&accurate.sub(&diff)?.detach())?
    } else {
        accurate
    };
    let mut t = pick(&s)?;
    if keepdim {
        for d in [r.min(c), r.max(c)] {
            t = t.unsqueeze(d as isize)?;
        }
    }
    Ok(t)
}

/// Gradient of the vector `ord`-norm `n` of `x` (`g` and `n` with the
/// reduced dims kept as size 1), with torch's subgradients:
/// `0`: none; `1`: `g sign(x)`; `2`: `g x / n` (0 where `n = 0`); `±inf`:
/// `g sign(x)` shared evenly among the elements with `|x| = n`; otherwise
/// `g x |x|^(p-2) / n^(p-1)` (0 where `n = 0`, and where `x = 0`).
fn norm_backward(g: &Tensor, x: &Tensor, n: &Tensor, ord: f64, mask: &[bool]) -> Result<Tensor> {
    let zero = Tensor::scalar(0.0);
    if ord == 0.0 {
        return x.zeros_like();
    }
    if ord == 1.0 {
        return g.mul(&x.sign()?);
    }
    if ord.is_infinite() {
        let hit = x.abs()?.eq(n)?;
        let count = hit.sum(Some(&mask_dims(mask)), true, None)?;
        return x.sign()?.mul(&hit)?.mul(&g.div(&count)?);
    }
    // Divide by 1 where n = 0 and mask afterwards: dividing by n there
    // gives NaN in the unselected branch, and the derivative of this
    // formula (double backward, or a JVP by the double-backward trick)
    // would carry 0 * NaN = NaN through the `where`.
    let at_zero = n.eq(&zero)?;
    let n_safe = Tensor::scalar(1.0).r#where(&at_zero, n)?;
    if ord == 2.0 {
        return x.mul(&zero.r#where(&at_zero, &g.div(&n_safe)?)?);
    }
    let scale = zero.r#where(&at_zero, &g.div(&n_safe.pow(&Tensor::scalar(ord - 1.0))?)?)?;
    // x |x|^(p-2) is 0 at x = 0: its limit for p > 1 and torch's
    // subgradient for p < 1. Evaluated there on |x| = 1 and then masked,
    // since |0|^(p-2) is infinite for p < 2 and 0 * inf would be NaN (in
    // this gradient and in its derivative).
    let x_zero = x.eq(&zero)?;
    let abs_safe = Tensor::scalar(1.0).r#where(&x_zero, &x.abs()?)?;
    let dir = x.mul(&abs_safe.pow(&Tensor::scalar(ord - 2.0))?)?;
    zero.r#where(&x_zero, &dir)?.mul(&scale)
}
