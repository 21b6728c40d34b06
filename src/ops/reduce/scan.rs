//! Scans (cumsum, cumprod) and the exp-normalising reductions (logsumexp,
//! softmax, log_softmax), which shift by the maximum before exponentiating
//! so large inputs do not overflow.

use super::extrema::ExtremeF;
use super::{
    dim_mask, float_input, is_nan, reduce_to, saved_input_and_result, sum_tangent,
    unsqueeze_reduced, widened, Bounds, SumF,
};
use crate::autograd::derivatives;
use crate::kernels::access::{elem_ptr, lock};
use crate::kernels::iter::map2;
use crate::kernels::reduce::{out_shape, output, reshaped, SyncPtr};
use crate::ops::Arith;
use crate::pool::{install, PARALLEL_MIN_ELEMS};
use crate::tensor::wrap_dim;
use crate::tensor::Float;
use crate::{default_dtype, dispatch, dispatch_float, DType, Element, Error, Result, Tensor};
use rayon::prelude::*;

/// Adjacent lines scanned together when the scanned dim is not innermost.
const BLOCK: usize = 128;

/// Inclusive scan of a contiguous tensor of `O` along `dim`, accumulating
/// in `A` with `op`.
fn scan<O: Element, A: Arith>(
    x: &Tensor,
    dim: usize,
    op: impl Fn(A, A) -> A + Sync,
    init: A,
) -> Tensor {
    debug_assert!(x.is_contiguous());
    let shape = x.shape();
    let (out, op_) = output::<O>(shape);
    let total = x.numel();
    if total == 0 {
        return out;
    }
    let n = if x.ndim() == 0 { 1 } else { shape[dim] };
    let inner: usize = if x.ndim() == 0 {
        1
    } else {
        shape[dim + 1..].iter().product()
    };
    let outer = total / (n * inner);
    let block = BLOCK.min(inner);
    let per = inner.div_ceil(block);
    let _g = lock(&[x], None);
    let xp = SyncPtr(elem_ptr::<O>(x));
    let task = |t: usize| {
        let (o, i0) = (t / per, (t % per) * block);
        let bw = block.min(inner - i0);
        let mut acc = [init; BLOCK];
        for k in 0..n {
            let off = o * n * inner + k * inner + i0;
            for (j, a) in acc[..bw].iter_mut().enumerate() {
                // SAFETY: `off + j < total` indexes both the read-locked
                // contiguous input and the fresh output, whose element `off + j`
                // only this task writes.
                unsafe {
                    *a = op(*a, A::cast_from(*xp.get().add(off + j)));
                    op_.write(off + j, O::cast_from(*a));
                }
            }
        }
    };
    let ntasks = outer * per;
    if total >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 && ntasks > 1 {
        install(|| (0..ntasks).into_par_iter().for_each(task));
    } else {
        (0..ntasks).for_each(task);
    }
    out
}

/// cumsum / cumprod with torch's dtype rules (ints and bool widen to int64).
fn cumulative(x: &Tensor, dim: isize, dtype: Option<DType>, prod: bool) -> Result<Tensor> {
    let d = wrap_dim(dim, x.ndim())?;
    let out_dt = dtype.unwrap_or_else(|| widened(x.dtype()));
    let xc = x.to_dtype(out_dt).contiguous();
    Ok(if out_dt.is_floating_point() {
        dispatch!(out_dt, O => if prod {
            scan::<O, f64>(&xc, d, |a, b| a * b, 1.0)
        } else {
            scan::<O, f64>(&xc, d, |a, b| a + b, 0.0)
        })
    } else {
        dispatch!(out_dt, O => if prod {
            scan::<O, i64>(&xc, d, <i64 as Arith>::mul, 1)
        } else {
            scan::<O, i64>(&xc, d, <i64 as Arith>::add, 0)
        })
    })
}

derivatives! {
    table FORMULAS("scans and softmax: cumsum, cumprod, logsumexp, softmax, log_softmax")
        for Tensor;

    /// `cumsum(dim, dtype=None)`: running sums along `dim`.
    pub fn cumsum(&self, dim: isize, dtype: Option<DType>) -> Tensor {
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
    pub fn cumprod(&self, dim: isize, dtype: Option<DType>) -> Tensor {
        record "CumprodBackward0", [self];
        compute => out = cumulative(self, dim, dtype, true)?;
        save |s| {
            s.save("self", self);
            s.save_output("result", &out, 0);
        }
        backward |ctx, g| {
            let (x, out) = saved_input_and_result(ctx)?;
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
    pub fn logsumexp(&self, dims: &[isize], keepdim: bool) -> Tensor {
        before {
            let x = if self.dtype().is_floating_point() {
                self.clone()
            } else {
                self.to_dtype(default_dtype())
            };
            let mask = dim_mask(x.ndim(), Some(dims))?;
            let kept_shape = out_shape(x.shape(), &mask, keepdim);
        }
        record "LogsumexpBackward0", [self];
        compute {
            let (fmask, shape) = (mask.clone(), x.shape().to_vec());
        } => out = dispatch_float!(x.dtype(), T => {
            // Shift by the maximum (0 where it is infinite, so that rows of
            // -inf give -inf and rows holding +inf give +inf).
            let m = reduce_to::<T, T, _>(&x, &mask, true, &ExtremeF::<true>, |a| {
                if a.to_f64().is_finite() { a } else { T::zero() }
            })?;
            let e = map2::<T, T, f64>(&x, &m, |a, m| (a.to_f64() - m.to_f64()).exp())?;
            let s = reduce_to::<f64, f64, _>(&e, &mask, keepdim, &SumF::<f64>::new(), |s| s)?;
            let m = reshaped(&m, &kept_shape);
            map2::<f64, T, T>(&s, &m, |s, m| T::from_f64(s.ln() + m.to_f64()))
        }, else Err(Error::runtime("logsumexp: expected a floating dtype")))?;
        save |s| {
            s.save("self", self);
            s.save_output("result", &out, 0);
        }
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
    pub fn softmax(&self, dim: isize, dtype: Option<DType>) -> Tensor {
        record "SoftmaxBackward0", [self];
        // A 0-dim input has no dim to shift past a batch dim.
        configure |r| if self.ndim() > 0 { r.batched() } else { r };
        compute => out = softmax_impl("softmax", self, dim, dtype, false)?;
        save |s| {
            s.save_output("result", &out, 0);
        }
        // y * (g - sum(g * y)), summed along `dim` as counted in `g`.
        backward |ctx, g| {
            let (y, d) = (ctx.saved(0)?, ctx.dim(dim));
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
        batched rows because "only for a 0-dim input, whose dim would name the batch dim of `g` \
            (configure marks the node batched when the input has dims)";
    }

    /// `log_softmax(dim, dtype=None)`: `x - logsumexp(x)` along `dim`.
    pub fn log_softmax(&self, dim: isize, dtype: Option<DType>) -> Tensor {
        record "LogSoftmaxBackward0", [self];
        // A 0-dim input has no dim to shift past a batch dim.
        configure |r| if self.ndim() > 0 { r.batched() } else { r };
        compute => out = softmax_impl("log_softmax", self, dim, dtype, true)?;
        save |s| {
            s.save_output("result", &out, 0);
        }
        // g - exp(y) * sum(g), summed along `dim` as counted in `g`.
        backward |ctx, g| {
            let (y, d) = (ctx.saved(0)?, ctx.dim(dim));
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
        batched rows because "only for a 0-dim input, whose dim would name the batch dim of `g` \
            (configure marks the node batched when the input has dims)";
    }
}

/// softmax (or log_softmax) of each contiguous row of `n` elements of `x`.
fn softmax_rows<T: Float + Bounds>(x: &Tensor, n: usize, log: bool) -> Tensor {
    let (out, op) = output::<T>(x.shape());
    let total = x.numel();
    if total == 0 {
        return out;
    }
    let rows = total / n;
    let _g = lock(&[x], None);
    let xp = SyncPtr(elem_ptr::<T>(x));
    let row = |r: usize| {
        // SAFETY: row `r` spans elements `r*n .. (r+1)*n` of the read-locked
        // contiguous input and of the fresh output, whose row only this call
        // writes.
        let (xs, os) = unsafe {
            (
                std::slice::from_raw_parts(xp.get().add(r * n) as *const T, n),
                std::slice::from_raw_parts_mut(op.get().add(r * n), n),
            )
        };
        let m = xs
            .iter()
            .fold(T::LOWEST, |a, &v| if (v > a) | is_nan(v) { v } else { a });
        let mut s = 0.0f64;
        for (o, &v) in os.iter_mut().zip(xs) {
            let e = (v - m).exp();
            *o = e;
            s += e.to_f64();
        }
        if log {
            let ls = T::from_f64(s.ln());
            for (o, &v) in os.iter_mut().zip(xs) {
                *o = (v - m) - ls;
            }
        } else {
            let st = T::from_f64(s);
            for o in os.iter_mut() {
                *o = *o / st;
            }
        }
    };
    if total >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 && rows > 1 {
        let min_rows = (PARALLEL_MIN_ELEMS / n).max(1);
        install(|| {
            (0..rows)
                .into_par_iter()
                .with_min_len(min_rows)
                .for_each(row)
        });
    } else {
        (0..rows).for_each(row);
    }
    out
}

fn softmax_impl(
    op: &str,
    x: &Tensor,
    dim: isize,
    dtype: Option<DType>,
    log: bool,
) -> Result<Tensor> {
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
    let out = dispatch_float!(x.dtype(), T => softmax_rows::<T>(&rows, n, log),
        else return Err(Error::runtime(format!("{op}: expected a floating dtype"))));
    if d == last {
        Ok(out)
    } else {
        Ok(out.movedim(&[-1], &[d as isize])?.contiguous())
    }
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
