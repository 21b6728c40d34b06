//! Scans (cumsum, cumprod) and the exp-normalising reductions (logsumexp,
//! softmax, log_softmax), which shift by the maximum before exponentiating
//! so large inputs do not overflow.

use super::{
    dim_mask, float_input, save_input_and_result, saved_input_and_result, sum_tangent,
    unsqueeze_reduced, widened,
};
use crate::autograd::{derivatives, records_nothing};
use crate::kernels::{fold, scan};
use crate::tensor::wrap_dim;
use crate::{default_dtype, dispatch_float, DType, Error, Result, Tensor};

/// cumsum / cumprod with torch's dtype rules (ints and bool widen to int64).
fn cumulative(x: &Tensor, dim: isize, dtype: Option<DType>, prod: bool) -> Result<Tensor> {
    let d = wrap_dim(dim, x.ndim())?;
    let out_dt = dtype.unwrap_or_else(|| widened(x.dtype()));
    Ok(scan::cumulative(x, d, out_dt, prod))
}

derivatives! {
    table FORMULAS("scans and softmax: cumsum, cumprod, logsumexp, softmax, log_softmax")
        for Tensor;

    /// `cumsum(dim, dtype=None)`: running sums along `dim`.
    pub fn cumsum(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        record "CumsumBackward0", [self];
        compute => out = cumulative(self, dim, dtype, false)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(reverse_cumsum(&g[0], dim)?)]);
        forward formula(|t| {
            let d = from_end(dim, self.ndim())?;
            t.map1(|tx| match d {
                Some(d) => tx.cumsum(d, None),
                None => Ok(tx.clone()),
            })
        });
        batched rows because "reverse_cumsum counts `dim` in an unbatched gradient";
    }

    /// `cumprod(dim, dtype=None)`: running products along `dim`.
    pub fn cumprod(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        record "CumprodBackward0", [self];
        compute => out = cumulative(self, dim, dtype, true)?;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| {
            // Conjugates: the complex gradient is g times conj(d out / dx).
            let (x, out) = saved_input_and_result(ctx)?;
            let (x, out) = (x.conj()?, out.conj()?);
            Ok(vec![Some(cumprod_backward(&g[0], &x, &out, dim)?)])
        };
        forward formula(|t| {
            let d = from_end(dim, self.ndim())?;
            t.map1(|tx| match d {
                Some(d) => cumprod_tangent(tx, &self.to_dtype(out.dtype()), &out, d),
                None => Ok(tx.clone()),
            })
        });
        batched rows because "cumprod_backward counts `dim` in an unbatched gradient";
    }

    /// `logsumexp(dim, keepdim=False)`: `log(sum(exp(x)))` computed stably;
    /// integer inputs compute in the default float dtype.
    pub fn logsumexp(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        before {
            if self.dtype().is_complex() {
                return complex_logsumexp(self, dims, keepdim);
            };
            let x = if self.dtype().is_floating_point() {
                self.clone()
            } else {
                self.to_dtype(default_dtype())
            };
            let mask = dim_mask(x.ndim(), Some(dims))?;
        }
        record "LogsumexpBackward0", [self];
        compute {
            let (fmask, shape) = (mask.clone(), x.shape().to_vec());
        } => out = fold::logsumexp(&x, &mask, keepdim)?;
        save |s| { save_input_and_result(s, self, &out); }
        // d/dx log(sum(exp(x))) = exp(x - result)
        backward |ctx, g| {
            let (x, out) = saved_input_and_result(ctx)?;
            let gu = unsqueeze_reduced(&g[0], &shape, &mask, keepdim)?;
            let ou = unsqueeze_reduced(&out, &shape, &mask, keepdim)?;
            Ok(vec![Some(gu.mul(&x.sub(&ou)?.exp()?)?)])
        };
        // sum(exp(x - result) t)
        forward formula(|t| t.map1(|tx| {
            let ou = unsqueeze_reduced(&out, x.shape(), &fmask, keepdim)?;
            let w = x.to_dtype(out.dtype()).sub(&ou)?.exp()?;
            sum_tangent(t, &tx.mul(&w)?, &fmask, keepdim)
        }));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `softmax(dim, dtype=None)`: `exp(x) / sum(exp(x))` along `dim`.
    pub fn softmax(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        record "SoftmaxBackward0", [self];
        compute => out = softmax_impl("softmax", self, dim, dtype, false)?;
        save |s| {
            s.save_output("result", &out, 0);
        }
        // y * (g - sum(g * y)), summed along `dim` as counted in `g`.
        backward |ctx, g| {
            let (y, d) = (ctx.saved(0)?, ctx.dim(dim));
            if let Some(fused) = fused_backward(&g[0], &y, d, false) {
                return Ok(vec![Some(fused)]);
            }
            let dot = g[0].mul(&y)?.sum(Some(&[d]), true, None)?;
            Ok(vec![Some(y.mul(&g[0].sub(&dot)?)?)])
        };
        // y * (t - sum(y * t))
        forward formula(|t| match from_end(dim, self.ndim())? {
            Some(d) => t.map1(|tx| {
                let dot = tx.mul(&out)?.sum(Some(&[d]), true, None)?;
                out.mul(&tx.sub(&dot)?)
            }),
            None => Ok(vec![None]),
        });
        batched formula_if(self.ndim() > 0)
            because "a 0-dim input's dim would name the batch dim of `g`";
    }

    /// `log_softmax(dim, dtype=None)`: `x - logsumexp(x)` along `dim`.
    pub fn log_softmax(&self, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        record "LogSoftmaxBackward0", [self];
        compute => out = softmax_impl("log_softmax", self, dim, dtype, true)?;
        save |s| {
            s.save_output("result", &out, 0);
        }
        // g - exp(y) * sum(g), summed along `dim` as counted in `g`.
        backward |ctx, g| {
            let (y, d) = (ctx.saved(0)?, ctx.dim(dim));
            if let Some(fused) = fused_backward(&g[0], &y, d, true) {
                return Ok(vec![Some(fused)]);
            }
            let total = g[0].sum(Some(&[d]), true, None)?;
            Ok(vec![Some(g[0].sub(&y.exp()?.mul(&total)?)?)])
        };
        // t - sum(exp(y) * t)
        forward formula(|t| match from_end(dim, self.ndim())? {
            Some(d) => t.map1(|tx| {
                let dot = tx.mul(&out.exp()?)?.sum(Some(&[d]), true, None)?;
                tx.sub(&dot)
            }),
            None => Ok(vec![None]),
        });
        batched formula_if(self.ndim() > 0)
            because "a 0-dim input's dim would name the batch dim of `g`";
    }
}

fn softmax_impl(
    op: &str,
    x: &Tensor,
    dim: isize,
    dtype: Option<DType>,
    log: bool,
) -> Result<Tensor> {
    let wanted = dtype.unwrap_or(x.dtype());
    if wanted.is_complex() {
        let last = wrap_dim(dim, x.ndim())? + 1 >= x.ndim();
        let kernel = format!("{op}{}_kernel_impl", if last { "_lastdim" } else { "" });
        return Err(Error::not_implemented(&kernel, wanted));
    }
    let x = float_input(op, x, dtype)?;
    let d = wrap_dim(dim, x.ndim())?;
    let last = x.ndim().saturating_sub(1);
    // Rows along `dim` made contiguous (a no-op for the last dim of a
    // contiguous tensor), then moved back.
    let rows = if d == last {
        x.contiguous()
    } else {
        x.movedim(&[d as isize], &[-1])?.contiguous()
    };
    let n = if x.ndim() == 0 { 1 } else { x.shape()[d] };
    let out = dispatch_float!(x.dtype(), T => scan::softmax_rows::<T>(&rows, n, log),
        else return Err(Error::runtime(format!("{op}: expected a floating dtype"))));
    if d == last {
        Ok(out)
    } else {
        Ok(out.movedim(&[-1], &[d as isize])?.contiguous())
    }
}

/// The softmax (`log`: log_softmax) gradient from one row kernel, when
/// the composed formula may be replaced: nothing is being recorded (no
/// graph, no forward-mode tangents on `g` or `y`), `g`
/// and `y` have the same float dtype and shape (no batch of gradients),
/// and `d` (as counted in `g`) is the last dim. `None` otherwise.
fn fused_backward(g: &Tensor, y: &Tensor, d: isize, log: bool) -> Option<Tensor> {
    let nd = y.ndim();
    let last = d == -1 || (nd > 0 && d == nd as isize - 1);
    if !records_nothing(&[g, y])
        || g.dtype() != y.dtype()
        || g.shape() != y.shape()
        || nd == 0
        || !last
    {
        return None;
    }
    let (g, y) = (g.contiguous(), y.contiguous());
    let n = y.shape()[nd - 1];
    dispatch_float!(y.dtype(), T => Some(scan::softmax_backward_rows::<T>(&g, &y, n, log)),
        else None)
}

/// `dim` counted from the end (so it names the same dim of a tangent with
/// a leading batch dim), or `None` for a 0-dim tensor.
fn from_end(dim: isize, ndim: usize) -> Result<Option<isize>> {
    let d = wrap_dim(dim, ndim)?;
    Ok((ndim > 0).then(|| d as isize - ndim as isize))
}

/// Tangent of `out = cumprod(x)` along `dim` (counted from the end):
/// `sum_{k <= i} t_k prod_{j <= i, j != k} x_j`.
///
/// Without zeros that is `out * cumsum(t / x)`. From the first zero `z` of
/// a line on, only `k = z` contributes: `t_z cumprod(y)`, `y` being `x` with
/// that zero replaced by one (later zeros make it 0). The term
/// `x_z cumprod(y) (cumsum(t / x) - t_z)` (zeros of `x` replaced by ones),
/// zero in value, carries the derivative in `x_z` (as in the backward,
/// second derivatives are exact up to one zero per line). Nothing is
/// divided by zero.
fn cumprod_tangent(t: &Tensor, x: &Tensor, out: &Tensor, dim: isize) -> Result<Tensor> {
    let zero = Tensor::scalar(0.0);
    let one = Tensor::scalar(1.0);
    let is_zero = x.eq(&zero)?;
    if !is_zero.any(None, false)?.item()?.to_bool() {
        return out.mul(&t.div(x)?.cumsum(dim, None)?);
    }
    let seen = is_zero.cumsum(dim, None)?;
    let first = is_zero.logical_and(&seen.eq(&Tensor::scalar(1i64))?)?;
    let y = one.r#where(&first, x)?;
    let cy = y.cumprod(dim, None)?;
    let running = t.div(&one.r#where(&is_zero, x)?)?.cumsum(dim, None)?;
    let before = out.mul(&running)?;
    let tz = t.mul(&first)?.sum(Some(&[dim]), true, None)?;
    let xz = x.mul(&first)?.sum(Some(&[dim]), true, None)?;
    let after = cy.mul(&tz.add(&xz.mul(&running.sub(&tz)?)?)?)?;
    after.r#where(&seen.gt(&Tensor::scalar(0i64))?, &before)
}

/// `sum_{j >= i} t_j` along `dim`, as `sum - cumsum + t` (differentiable).
fn reverse_cumsum(t: &Tensor, dim: isize) -> Result<Tensor> {
    if t.ndim() == 0 {
        return Ok(t.clone());
    }
    let total = t.sum(Some(&[dim]), true, None)?;
    total.sub(&t.cumsum(dim, None)?)?.add(t)
}

/// Gradient of `out = cumprod(x)` along `dim`:
/// `grad_k = sum_{i >= k} g_i prod_{j <= i, j != k} x_j`.
///
/// Where `x_k != 0` that is `reverse_cumsum(g * out)_k / x_k`. At the first
/// zero `z` of a line it is `reverse_cumsum(g * cumprod(y))_z`, `y` being `x`
/// with that zero replaced by one; at later zeros it is 0. Nothing is
/// divided by zero.
fn cumprod_backward(g: &Tensor, x: &Tensor, out: &Tensor, dim: isize) -> Result<Tensor> {
    if x.ndim() == 0 {
        return Ok(g.clone());
    }
    let zero = Tensor::scalar(0.0);
    let one = Tensor::scalar(1.0);
    let is_zero = x.eq(&zero)?;
    let r = reverse_cumsum(&g.mul(out)?, dim)?;
    if !is_zero.any(None, false)?.item()?.to_bool() {
        return r.div(x);
    }
    let seen = is_zero.cumsum(dim, None)?;
    let first = is_zero.logical_and(&seen.eq(&Tensor::scalar(1i64))?)?;
    let safe_x = one.r#where(&is_zero, x)?;
    let y = one.r#where(&first, x)?;
    let at_first = reverse_cumsum(&g.mul(&y.cumprod(dim, None)?)?, dim)?;
    let at_zero = at_first.r#where(&first, &zero)?;
    at_zero.r#where(&is_zero, &r.div(&safe_x)?)
}

/// `log(sum(exp(z)))` of a complex tensor, shifted by the largest real part
/// (detached; 0 where it is not finite) so that large inputs do not
/// overflow. Built from differentiable ops.
fn complex_logsumexp(z: &Tensor, dims: &[isize], keepdim: bool) -> Result<Tensor> {
    let shift = {
        let _g = crate::autograd::no_grad();
        let m = z.real()?.amax(Some(dims), true)?;
        Tensor::scalar(0.0).r#where(&m.isfinite().logical_not(), &m)?
    };
    let s = z
        .sub(&shift)?
        .exp()?
        .sum(Some(dims), true, None)?
        .log()?
        .add(&shift)?;
    if keepdim {
        Ok(s)
    } else {
        s.squeeze(Some(dims))
    }
}
