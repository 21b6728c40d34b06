//! Reductions with torch's dim handling and dtype rules: sum, mean, prod,
//! all/any and count_nonzero here; amax/amin, max/min and argmax/argmin in
//! `extrema`; var/std in `moments`; scans and the exp-normalising
//! reductions in `scan`; norms in `norm`; sorting and selection in `sort`;
//! searching, counting and the running extrema in `search`.
//!
//! Dims are `None` (every dim; an empty list means the same) or a list of
//! possibly negative dims. The loops are kernels (`kernels::fold`,
//! `kernels::scan`, `kernels::norm`, over the driver in `kernels::reduce`,
//! which also says why results do not depend on the number of threads);
//! this module checks arguments, resolves dtypes and records the formulas.

mod extrema;
mod moments;
mod norm;
mod scan;
mod search;
mod sort;

/// The family's derivative tables, for [`crate::ops::derivative_tables`].
pub(crate) const FORMULA_TABLES: &[&[crate::autograd::FormulaRow]] = &[
    FORMULAS,
    extrema::FORMULAS,
    moments::FORMULAS,
    scan::FORMULAS,
    norm::FORMULAS,
    sort::FORMULAS,
    search::FORMULAS,
];

pub use norm::MatrixOrd;

use crate::autograd::{derivatives, BackwardCtx, Saver, Tangents};
pub(crate) use crate::kernels::fold::reduced_count;
use crate::kernels::fold::{self, sum_or_prod};
use crate::tensor::wrap_dim;
use crate::{DType, Error, Result, Tensor};
use smallvec::SmallVec;

/// A mask of the dims a reduction covers.
pub(crate) type Mask = SmallVec<[bool; 6]>;

/// Resolves `dims` (`None` or empty = all) into a mask, wrapping negative
/// dims and rejecting repeats.
pub(crate) fn dim_mask(ndim: usize, dims: Option<&[isize]>) -> Result<Mask> {
    let mut mask: Mask = SmallVec::from_elem(false, ndim);
    match dims {
        None | Some([]) => mask.fill(true),
        Some(ds) => {
            for &d in ds {
                let w = wrap_dim(d, ndim)?;
                if ndim == 0 {
                    continue;
                }
                if mask[w] {
                    return Err(Error::runtime(format!(
                        "dim {w} appears multiple times in the list of dims"
                    )));
                }
                mask[w] = true;
            }
        }
    }
    Ok(mask)
}

/// The default result dtype of sum/prod/cumsum: integers and bool widen to
/// int64.
pub(crate) fn widened(d: DType) -> DType {
    if d.is_differentiable() {
        d
    } else {
        DType::Int64
    }
}

/// A float dtype to compute in, or torch's error for integer inputs.
fn float_input(op: &str, x: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    let d = dtype.unwrap_or(x.dtype());
    if !d.is_floating_point() {
        return Err(Error::runtime(format!(
            "{op}: expected a floating point input (or dtype=), but got {} ({})",
            d,
            d.scalar_type_name()
        )));
    }
    Ok(x.to_dtype(d))
}

/// Saves `self` and then `result` (output 0), which
/// [`saved_input_and_result`] reads back.
fn save_input_and_result(s: &mut Saver, x: &Tensor, result: &Tensor) {
    s.save("self", x);
    s.save_output("result", result, 0);
}

/// The saved input (cast to the result's dtype) and result of a node that
/// saved `self` and then `result`.
fn saved_input_and_result(ctx: &BackwardCtx) -> Result<(Tensor, Tensor)> {
    let (x, out) = (ctx.saved(0)?, ctx.saved(1)?);
    Ok((x.to_dtype(out.dtype()), out))
}

/// The forward formula of a reduction over `mask`: `v` (a tangent, or
/// tangent-shaped product of one with a weight) summed over the reduced
/// dims, which move past a batch dim.
pub(crate) fn sum_tangent(
    t: &Tangents,
    v: &Tensor,
    mask: &[bool],
    keepdim: bool,
) -> Result<Tensor> {
    if !mask.contains(&true) {
        return Ok(v.clone());
    }
    let dims: Vec<isize> = mask_dims(mask).into_iter().map(|d| t.dim(d)).collect();
    v.sum(Some(&dims), keepdim, None)
}

/// [`expand_reduced`] for a node that handles batched backward: a leading
/// batch dim of `g` is kept and never counts as reduced.
fn expand_reduced_in(
    ctx: &BackwardCtx,
    g: &Tensor,
    shape: &[usize],
    mask: &[bool],
    keepdim: bool,
) -> Result<Tensor> {
    if ctx.batch().is_none() {
        return expand_reduced(g, shape, mask, keepdim);
    }
    let mask: Vec<bool> = std::iter::once(false).chain(mask.iter().copied()).collect();
    expand_reduced(g, &ctx.shape(shape), &mask, keepdim)
}

/// The gradient of a reduction over `mask`, broadcast back to the input's
/// `shape` (reduced dims are re-inserted first unless `keepdim`).
pub(crate) fn expand_reduced(
    g: &Tensor,
    shape: &[usize],
    mask: &[bool],
    keepdim: bool,
) -> Result<Tensor> {
    let g = unsqueeze_reduced(g, shape, mask, keepdim)?;
    let target: Vec<isize> = shape.iter().map(|&n| n as isize).collect();
    g.expand(&target)
}

/// `g` with the reduced dims of `mask` re-inserted as size 1 (a no-op when
/// `keepdim`).
pub(crate) fn unsqueeze_reduced(
    g: &Tensor,
    shape: &[usize],
    mask: &[bool],
    keepdim: bool,
) -> Result<Tensor> {
    if keepdim || shape.is_empty() {
        return Ok(g.clone());
    }
    let kept: Vec<isize> = shape
        .iter()
        .zip(mask)
        .map(|(&n, &m)| if m { 1 } else { n as isize })
        .collect();
    g.reshape(&kept)
}

/// The reduced dims of `mask` as a dim list (for keepdim sums in backward
/// formulas).
pub(crate) fn mask_dims(mask: &[bool]) -> Vec<isize> {
    (0..mask.len())
        .filter(|&d| mask[d])
        .map(|d| d as isize)
        .collect()
}

/// Gradient of `out = prod(x)` over `mask`: `g * prod_{j != i} x_j`.
///
/// Without zeros this is `g * out / x`. With zeros (grouped per output
/// element, `nz` of them): a nonzero `x_i` still gets `g * out / x_i`
/// (0 when there is a zero, but with the right derivative through `out`);
/// a zero `x_i` gets `g * p` when it is the only zero, where `p` is the
/// product with the zeros replaced by ones, and `g * p * x_k` when one other
/// zero `x_k` remains (written `S0 - x_i`, `S0` the sum over the zeros, so
/// that its derivative in `x_k` survives). Nothing is divided by zero.
fn prod_backward(
    g: &Tensor,
    x: &Tensor,
    out: &Tensor,
    shape: &[usize],
    mask: &[bool],
    keepdim: bool,
) -> Result<Tensor> {
    let gu = unsqueeze_reduced(g, shape, mask, keepdim)?;
    let ou = unsqueeze_reduced(out, shape, mask, keepdim)?;
    if x.ndim() == 0 {
        return Ok(gu);
    }
    let zero = Tensor::scalar(0.0);
    let one = Tensor::scalar(1.0);
    let is_zero = x.eq(&zero)?;
    if !is_zero.any(None, false)?.item()?.to_bool() {
        return gu.mul(&ou)?.div(x);
    }
    let dims = mask_dims(mask);
    let y = one.r#where(&is_zero, x)?;
    let p = y.prod(Some(&dims), true, None)?;
    let nz = is_zero.sum(Some(&dims), true, None)?;
    let s0 = x.r#where(&is_zero, &zero)?.sum(Some(&dims), true, None)?;
    let other_zero = s0.sub(x)?.r#where(&nz.eq(&Tensor::scalar(2i64))?, &zero)?;
    let c = one.r#where(&nz.eq(&Tensor::scalar(1i64))?, &other_zero)?;
    let at_zero = gu.mul(&p)?.mul(&c)?;
    let elsewhere = gu.mul(&ou)?.div(&y)?;
    at_zero.r#where(&is_zero, &elsewhere)
}

derivatives! {
    table FORMULAS("reductions: sum, prod, mean") for Tensor;

    /// `sum(dim=None, keepdim=False, dtype=None)`: ints and bool sum to int64.
    pub fn sum(&self, dims: Option<&[isize]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        record if dims.is_some() { "SumBackward1" } else { "SumBackward0" }, [self];
        compute {
            let mask = dim_mask(self.ndim(), dims)?;
            let (fmask, shape) = (mask.clone(), self.shape().to_vec());
            let out_dt = dtype.unwrap_or_else(|| widened(self.dtype()));
        } => out = sum_or_prod(self, &mask, keepdim, out_dt, false)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(expand_reduced_in(ctx, &g[0], &shape, &mask, keepdim)?)]);
        forward formula(|t| t.map1(|x| sum_tangent(t, x, &fmask, keepdim)));
        batched formula;
    }

    /// `prod(dim=None, keepdim=False, dtype=None)`: ints and bool multiply in int64.
    pub fn prod(&self, dims: Option<&[isize]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        record if dims.is_some() { "ProdBackward1" } else { "ProdBackward0" }, [self];
        compute {
            let mask = dim_mask(self.ndim(), dims)?;
            let (fmask, shape) = (mask.clone(), self.shape().to_vec());
            let out_dt = dtype.unwrap_or_else(|| widened(self.dtype()));
        } => out = sum_or_prod(self, &mask, keepdim, out_dt, true)?;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| {
            // Conjugates: the complex gradient is g times conj(d prod / dx).
            let (x, out) = saved_input_and_result(ctx)?;
            let (x, out) = (x.conj()?, out.conj()?);
            Ok(vec![Some(prod_backward(&g[0], &x, &out, &shape, &mask, keepdim)?)])
        };
        // sum_i t_i prod_{j != i} x_j: the backward's weights for g = 1.
        forward formula(|t| t.map1(|tx| {
            let x = self.to_dtype(out.dtype());
            let ones = Tensor::ones(out.shape(), out.dtype());
            let w = prod_backward(&ones, &x, &out, self.shape(), &fmask, keepdim)?;
            sum_tangent(t, &tx.mul(&w)?, &fmask, keepdim)
        }));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `mean(dim=None, keepdim=False, dtype=None)`: floating dtypes only.
    pub fn mean(&self, dims: Option<&[isize]>, keepdim: bool, dtype: Option<DType>) -> Result<Tensor> {
        before {
            let out_dt = match dtype {
                Some(d) if !d.is_differentiable() => {
                    return Err(Error::runtime(format!(
                        "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: {}",
                        d.scalar_type_name()
                    )))
                }
                Some(d) => d,
                None if !self.dtype().is_differentiable() => {
                    return Err(Error::runtime(format!(
                        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                        (self.dtype()).scalar_type_name()
                    )))
                }
                None => self.dtype(),
            };
        }
        record if dims.is_some() { "MeanBackward1" } else { "MeanBackward0" }, [self];
        compute {
            let mask = dim_mask(self.ndim(), dims)?;
            let n = reduced_count(self.shape(), &mask) as f64;
            let (fmask, shape) = (mask.clone(), self.shape().to_vec());
        } => out = fold::mean(self, &mask, keepdim, out_dt)?;
        save nothing
        backward |ctx, g| {
            let g = expand_reduced_in(ctx, &g[0], &shape, &mask, keepdim)?;
            Ok(vec![Some(g.mul(&Tensor::scalar(1.0 / n))?)])
        };
        forward formula(|t| {
            t.map1(|x| sum_tangent(t, x, &fmask, keepdim)?.mul(&Tensor::scalar(1.0 / n)))
        });
        batched formula;
    }
}

impl Tensor {
    /// `all(dim=None, keepdim=False)`: whether every element is nonzero.
    pub fn all(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        fold::all(self, &dim_mask(self.ndim(), dims)?, keepdim)
    }

    /// `any(dim=None, keepdim=False)`: whether some element is nonzero.
    pub fn any(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        fold::any(self, &dim_mask(self.ndim(), dims)?, keepdim)
    }

    /// `count_nonzero(dim=None)`: int64 counts of nonzero elements.
    pub fn count_nonzero(&self, dims: Option<&[isize]>) -> Result<Tensor> {
        fold::count_nonzero(self, &dim_mask(self.ndim(), dims)?)
    }
}
