//! The extreme-value reductions: amax/amin and max()/min() over dims (the
//! gradient is shared evenly among the elements equal to the result),
//! max(dim)/min(dim) with indices (the gradient goes to the element at the
//! returned index), and argmax/argmin.

use super::{dim_mask, mask_dims, save_input_and_result, sum_tangent, unsqueeze_reduced, Mask};
use crate::autograd::{derivatives, BackwardCtx, Grads, Tangents};
use crate::kernels::fold;
use crate::kernels::reduce::reshaped;
use crate::tensor::wrap_dim;
use crate::{DType, Error, Result, Tensor};
use smallvec::SmallVec;

/// Checks that a max-like reduction over `mask` has something to reduce.
fn check_nonempty(op: &str, x: &Tensor, dims: Option<&[isize]>, mask: &[bool]) -> Result<()> {
    if x.numel() != 0 {
        return Ok(());
    }
    match dims {
        None | Some([]) => Err(Error::runtime(format!(
            "{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        ))),
        Some(_) => match (0..x.ndim()).find(|&d| mask[d] && x.shape()[d] == 0) {
            Some(d) => Err(Error::index(format!(
                "{op}(): Expected reduction dim {d} to have non-zero size."
            ))),
            None => Ok(()),
        },
    }
}

/// amax/amin/max()/min() over `dims` (`mask` being their mask).
fn extreme<const MAX: bool>(
    op: &str,
    x: &Tensor,
    dims: Option<&[isize]>,
    mask: &[bool],
    keepdim: bool,
) -> Result<Tensor> {
    if x.dtype().is_complex() {
        let kernel = match op {
            "amax" => "max_values_cpu",
            "amin" => "min_values_cpu",
            "max" => "max_all",
            _ => "min_all",
        };
        return Err(Error::not_implemented(kernel, x.dtype()));
    }
    check_nonempty(op, x, dims, mask)?;
    fold::extreme::<MAX>(x, mask, keepdim)
}

/// max(dim)/min(dim): values (if `values`) and int64 indices over one dim.
fn arg_dim<const MAX: bool>(
    op: &str,
    x: &Tensor,
    dim: isize,
    keepdim: bool,
    values: bool,
) -> Result<(Tensor, Tensor)> {
    if x.dtype().is_complex() {
        return Err(Error::runtime(format!(
            "{op}(): does not support complex input"
        )));
    }
    let d = wrap_dim(dim, x.ndim())?;
    if x.ndim() > 0 && x.shape()[d] == 0 {
        return Err(Error::index(format!(
            "{op}(): Expected reduction dim {d} to have non-zero size."
        )));
    }
    fold::arg_extreme::<MAX>(x, &one_dim(x.ndim(), d), keepdim, values)
}

/// argmax/argmin; `dim = None` looks at the flattened tensor.
fn arg_only<const MAX: bool>(
    op: &str,
    x: &Tensor,
    dim: Option<isize>,
    keepdim: bool,
) -> Result<Tensor> {
    if x.dtype() == DType::Bool {
        return Err(Error::runtime(format!(
            "\"{op}_cpu\" not implemented for 'Bool'"
        )));
    }
    if x.dtype().is_complex() {
        return Err(Error::runtime(format!(
            "{op}(): does not support complex input"
        )));
    }
    match dim {
        Some(d) => Ok(arg_dim::<MAX>(op, x, d, keepdim, false)?.1),
        None => {
            if x.numel() == 0 {
                return Err(Error::runtime(format!(
                    "{op}(): Expected reduction dim to be specified for input.numel() == 0."
                )));
            }
            let flat = x.reshape(&[-1])?;
            let r = arg_dim::<MAX>(op, &flat, 0, false, false)?.1;
            Ok(if keepdim {
                reshaped(&r, &vec![1; x.ndim()])
            } else {
                r
            })
        }
    }
}

/// The mask of a reduction over dim `d` alone (no dims for a 0-dim input).
fn one_dim(ndim: usize, d: usize) -> Mask {
    let mut mask: Mask = SmallVec::from_elem(false, ndim);
    if ndim > 0 {
        mask[d] = true;
    }
    mask
}

/// Where `x` equals `ou` (a result with its reduced dims put back); a NaN
/// result matches the NaNs.
fn hits(x: &Tensor, ou: &Tensor) -> Result<Tensor> {
    x.eq(ou)?.logical_or(&x.isnan().logical_and(&ou.isnan())?)
}

/// Forward formula of amax/amin/max()/min() (`out` over `mask` of `x`):
/// the mean of the tangent over the elements equal to the result.
fn shared_tangent(
    t: &Tangents,
    x: &Tensor,
    out: &Tensor,
    mask: &[bool],
    keepdim: bool,
) -> Result<Vec<Option<Tensor>>> {
    t.map1(|tx| {
        let ou = unsqueeze_reduced(out, x.shape(), mask, keepdim)?;
        let hit = hits(x, &ou)?;
        let count = hit.sum(Some(&mask_dims(mask)), keepdim, None)?;
        sum_tangent(t, &tx.mul(&hit)?, mask, keepdim)?.div(&count)
    })
}

/// Backward of amax/amin/max()/min(), which saved `self` and `result`:
/// `g` shared evenly among the elements equal to the result.
fn shared_backward(
    ctx: &BackwardCtx,
    g: &Tensor,
    shape: &[usize],
    mask: &[bool],
    keepdim: bool,
) -> Result<Grads> {
    let (x, out) = (ctx.saved(0)?, ctx.saved(1)?);
    let ou = unsqueeze_reduced(&out, shape, mask, keepdim)?;
    let gu = unsqueeze_reduced(g, shape, mask, keepdim)?;
    let hit = hits(&x, &ou)?;
    let count = hit.sum(Some(&mask_dims(mask)), true, None)?;
    Ok(vec![Some(gu.div(&count)?.mul(&hit)?)])
}

/// `0..n` along dim `d` of `shape` (size 1 elsewhere): equal to the
/// indices of max(dim)/min(dim), with the dim put back, exactly at the
/// selected elements.
fn positions(shape: &[usize], d: usize) -> Result<Tensor> {
    let mut pos_shape = vec![1isize; shape.len()];
    pos_shape[d] = shape[d] as isize;
    Tensor::arange(0i64, shape[d] as i64, 1i64, Some(DType::Int64))?.reshape(&pos_shape)
}

/// Forward formula of max(dim)/min(dim) over dim `d` of `x`: the tangent
/// at the returned index (the indices get none).
fn index_tangent(
    t: &Tangents,
    x: &Tensor,
    idx: &Tensor,
    d: usize,
    keepdim: bool,
) -> Result<Vec<Option<Tensor>>> {
    let mask = one_dim(x.ndim(), d);
    let iu = unsqueeze_reduced(idx, x.shape(), &mask, keepdim)?;
    let v = t.map1(|tx| {
        if x.ndim() == 0 {
            return Ok(tx.clone());
        }
        sum_tangent(
            t,
            &tx.mul(&positions(x.shape(), d)?.eq(&iu)?)?,
            &mask,
            keepdim,
        )
    })?;
    Ok(vec![v[0].clone(), None])
}

/// Backward of max(dim)/min(dim) over dim `d` of an input of `shape`: the
/// gradient of each value goes to the element at its index.
fn index_backward(
    g: &Tensor,
    idx: &Tensor,
    shape: &[usize],
    d: usize,
    keepdim: bool,
) -> Result<Tensor> {
    let mask = one_dim(shape.len(), d);
    let gu = unsqueeze_reduced(g, shape, &mask, keepdim)?;
    if shape.is_empty() {
        return Ok(gu);
    }
    let iu = unsqueeze_reduced(idx, shape, &mask, keepdim)?;
    gu.mul(&positions(shape, d)?.eq(&iu)?)
}

derivatives! {
    table FORMULAS("reductions: amax, amin, max, min") for Tensor;

    /// `amax(dim=(), keepdim=False)`: maximum over dims (NaN propagates).
    pub fn amax(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        record "AmaxBackward0", [self];
        compute {
            let mask = dim_mask(self.ndim(), dims)?;
            let (fmask, shape) = (mask.clone(), self.shape().to_vec());
        } => out = extreme::<true>("amax", self, dims, &mask, keepdim)?;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| shared_backward(ctx, &g[0], &shape, &mask, keepdim);
        forward formula(|t| shared_tangent(t, self, &out, &fmask, keepdim));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `amin(dim=(), keepdim=False)`: minimum over dims (NaN propagates).
    pub fn amin(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        record "AminBackward0", [self];
        compute {
            let mask = dim_mask(self.ndim(), dims)?;
            let (fmask, shape) = (mask.clone(), self.shape().to_vec());
        } => out = extreme::<false>("amin", self, dims, &mask, keepdim)?;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| shared_backward(ctx, &g[0], &shape, &mask, keepdim);
        forward formula(|t| shared_tangent(t, self, &out, &fmask, keepdim));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `max()`: the maximum of all elements as a 0-dim tensor.
    pub fn max_all(&self) -> Result<Tensor> {
        record "MaxBackward1", [self];
        compute {
            let mask = dim_mask(self.ndim(), None)?;
            let (fmask, shape) = (mask.clone(), self.shape().to_vec());
        } => out = extreme::<true>("max", self, None, &mask, false)?;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| shared_backward(ctx, &g[0], &shape, &mask, false);
        forward formula(|t| shared_tangent(t, self, &out, &fmask, false));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `min()`: the minimum of all elements as a 0-dim tensor.
    pub fn min_all(&self) -> Result<Tensor> {
        record "MinBackward1", [self];
        compute {
            let mask = dim_mask(self.ndim(), None)?;
            let (fmask, shape) = (mask.clone(), self.shape().to_vec());
        } => out = extreme::<false>("min", self, None, &mask, false)?;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| shared_backward(ctx, &g[0], &shape, &mask, false);
        forward formula(|t| shared_tangent(t, self, &out, &fmask, false));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `max(dim, keepdim=False)`: `(values, indices)` (first index on ties).
    pub fn max_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        record "MaxBackward0", [self];
        compute {
            let (d, shape) = (wrap_dim(dim, self.ndim())?, self.shape().to_vec());
        } => out = arg_dim::<true>("max", self, dim, keepdim, true)?;
        save |s| {
            s.save_output("indices", &out.1, 1);
        }
        backward |ctx, g| {
            let idx = ctx.saved(0)?;
            Ok(vec![Some(index_backward(&g[0], &idx, &shape, d, keepdim)?)])
        };
        forward formula(|t| index_tangent(t, self, &out.1, d, keepdim));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `min(dim, keepdim=False)`: `(values, indices)` (first index on ties).
    pub fn min_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        record "MinBackward0", [self];
        compute {
            let (d, shape) = (wrap_dim(dim, self.ndim())?, self.shape().to_vec());
        } => out = arg_dim::<false>("min", self, dim, keepdim, true)?;
        save |s| {
            s.save_output("indices", &out.1, 1);
        }
        backward |ctx, g| {
            let idx = ctx.saved(0)?;
            Ok(vec![Some(index_backward(&g[0], &idx, &shape, d, keepdim)?)])
        };
        forward formula(|t| index_tangent(t, self, &out.1, d, keepdim));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }
}

impl Tensor {
    /// `argmax(dim=None, keepdim=False)`: int64 positions of the maximum.
    pub fn argmax(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        crate::autograd::captured!(argmax (&self, dim: Option<isize>, keepdim: bool) -> Tensor {
            arg_only::<true>("argmax", self, dim, keepdim)
        })
    }

    /// `argmin(dim=None, keepdim=False)`: int64 positions of the minimum.
    pub fn argmin(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        crate::autograd::captured!(argmin (&self, dim: Option<isize>, keepdim: bool) -> Tensor {
            arg_only::<false>("argmin", self, dim, keepdim)
        })
    }

    /// `aminmax(dim=None, keepdim=False)`: `(min, max)` in one call.
    pub fn aminmax(&self, dim: Option<isize>, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dims = dim.map(|d| [d]);
        let dims = dims.as_ref().map(|d| &d[..]);
        if self.numel() == 0 && dims.is_none() {
            return Err(Error::runtime(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
            ));
        }
        // amin's and amax's own checks, made first so that their errors
        // name aminmax.
        let mask = dim_mask(self.ndim(), dims)?;
        check_nonempty("aminmax", self, dims, &mask)?;
        Ok((self.amin(dims, keepdim)?, self.amax(dims, keepdim)?))
    }
}
