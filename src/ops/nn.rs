//! Fused neural-network ops: layer normalisation and the negative log
//! likelihood loss (with `log_softmax`, cross entropy).
//!
//! Each computes its forward in one Rust kernel and has a hand-written
//! backward. When the backward itself is being recorded (`create_graph`,
//! grad mode on inside the backward) or runs over a batch of gradients, it
//! is written with differentiable ops instead, so every order of
//! derivative works; the fused backward kernel runs otherwise.

use crate::autograd::{derivatives, is_grad_enabled, records_nothing, SavedValue, Tangents};
use crate::kernels::{layer_norm, loss};
use crate::{dispatch_float, DType, Error, Result, Tensor};

/// The trailing dims `normalized_shape` names, counted from the end.
fn trailing_dims(k: usize) -> Vec<isize> {
    (-(k as isize)..0).collect()
}

/// Checks the arguments of `layer_norm` as torch does. Returns the number
/// of elements a row normalises over.
fn check_layer_norm(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> Result<usize> {
    let k = normalized_shape.len();
    if k == 0 {
        return Err(Error::runtime(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
        ));
    }
    for (what, p) in [("weight", weight), ("bias", bias)] {
        if let Some(p) = p {
            if p.shape() != normalized_shape {
                return Err(Error::runtime(format!(
                    "Expected {what} to be of same shape as normalized_shape, but got {what} of shape {:?} and normalized_shape = {normalized_shape:?}",
                    p.shape()
                )));
            }
        }
    }
    let nd = x.ndim();
    if nd < k || x.shape()[nd - k..] != *normalized_shape {
        let want: Vec<String> = normalized_shape.iter().map(|n| n.to_string()).collect();
        return Err(Error::runtime(format!(
            "Given normalized_shape={normalized_shape:?}, expected input with shape [*, {}], but got input of size{:?}",
            want.join(", "),
            x.shape()
        )));
    }
    let dt = x.dtype();
    if !dt.is_floating_point() {
        return Err(Error::not_implemented("LayerNormKernelImpl", dt));
    }
    for p in [weight, bias].into_iter().flatten() {
        if p.dtype() != dt {
            let half_input = matches!(dt, DType::Float16 | DType::BFloat16);
            if half_input && p.dtype() == DType::Float32 {
                continue;
            }
            return Err(Error::runtime(if half_input || dt == DType::Float32 {
                format!(
                    "mixed dtype (CPU): expect parameter to have scalar type of {}",
                    DType::Float32.scalar_type_name()
                )
            } else {
                "mixed dtype (CPU): all inputs must share same datatype.".to_string()
            }));
        }
    }
    Ok(normalized_shape.iter().product())
}

/// `x̂ = (x - mean) / sqrt(var + eps)` over the trailing `k` dims, and
/// `1 / sqrt(var + eps)` (kept dims), from differentiable ops.
fn normalized(x: &Tensor, k: usize, eps: f64) -> Result<(Tensor, Tensor)> {
    let dims = trailing_dims(k);
    let centered = x.sub(&x.mean(Some(&dims), true, None)?)?;
    let var = centered.square()?.mean(Some(&dims), true, None)?;
    let rstd = var.add(&Tensor::scalar(eps))?.rsqrt()?;
    Ok((centered.mul(&rstd)?, rstd))
}

/// `shape` as the `isize` list `reshape` takes.
fn dims_of(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&n| n as isize).collect()
}

/// The dtype layer norm computes in: float32 for 16-bit inputs (as
/// torch's kernels do), the input's own otherwise.
fn compute_dtype(dt: DType) -> DType {
    match dt {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        dt => dt,
    }
}

/// The gradients of layer norm (input, weight, bias, those `need` asks
/// for) from the output gradient `g`, each in its input's dtype.
#[allow(clippy::too_many_arguments)]
fn layer_norm_backward(
    g: &Tensor,
    x: &Tensor,
    params: [Option<&Tensor>; 2],
    stats: [&Tensor; 2],
    k: usize,
    eps: f64,
    need: [bool; 3],
    batched: bool,
) -> Result<Vec<Option<Tensor>>> {
    let [weight, bias] = params;
    let cdt = stats[0].dtype();
    let (xc, wc) = (x.to_dtype(cdt), weight.map(|w| w.to_dtype(cdt)));
    let gc = g.to_dtype(cdt);
    let quiet = match weight {
        Some(w) => records_nothing(&[g, x, stats[0], stats[1], w]),
        None => records_nothing(&[g, x, stats[0], stats[1]]),
    };
    let grads = if quiet && !batched {
        let n = x.shape()[x.ndim() - k..].iter().product();
        let (gc, xc, wc) = (gc.contiguous(), xc.contiguous(), wc.map(|w| w.contiguous()));
        let gr = dispatch_float!(cdt, T => layer_norm::backward::<T>(
            &gc, &xc, stats[0], stats[1], wc.as_ref(), n, need),
            else unreachable!("layer_norm computes in a float dtype"));
        let shape = dims_of(&x.shape()[x.ndim() - k..]);
        let param = |t: Option<Tensor>| t.map(|t| t.reshape(&shape)).transpose();
        [gr.input, param(gr.weight)?, param(gr.bias)?]
    } else {
        // Differentiable form: x̂ and rstd recomputed from `x`, so the
        // gradient's own derivative in `x` is exact.
        let dims = trailing_dims(k);
        let (xhat, rstd) = normalized(&xc, k, eps)?;
        let gw = match &wc {
            Some(w) => gc.mul(w)?,
            None => gc.clone(),
        };
        let input = if need[0] {
            let a = gw.mean(Some(&dims), true, None)?;
            let b = gw.mul(&xhat)?.mean(Some(&dims), true, None)?;
            Some(rstd.mul(&gw.sub(&a)?.sub(&xhat.mul(&b)?)?)?)
        } else {
            None
        };
        // Summed over the input's leading dims; a batch of gradients keeps
        // its batch dim.
        let first = usize::from(batched) as isize;
        let lead: Vec<isize> = (first..(gc.ndim() - k) as isize).collect();
        let column_sum = |t: Tensor| -> Result<Tensor> {
            if lead.is_empty() {
                Ok(t)
            } else {
                t.sum(Some(&lead), false, None)
            }
        };
        let w = if need[1] {
            Some(column_sum(gc.mul(&xhat)?)?)
        } else {
            None
        };
        let b = if need[2] { Some(column_sum(gc)?) } else { None };
        [input, w, b]
    };
    // Back to each input's dtype.
    let [input, w, b] = grads;
    let cast = |t: Option<Tensor>, like: Option<&Tensor>| match (t, like) {
        (Some(t), Some(like)) => Ok(Some(t.to_dtype(like.dtype()))),
        _ => Ok(None),
    };
    Ok(vec![
        cast(input, Some(x))?,
        cast(w, weight)?,
        cast(b, bias)?,
    ])
}

/// The tangent of layer norm: `dx̂ w + x̂ dw + db`, with
/// `dx̂ = rstd (dc - x̂ mean(x̂ dc))` and `dc = dx - mean(dx)`.
fn layer_norm_tangent(
    t: &Tangents,
    x: &Tensor,
    weight: Option<&Tensor>,
    k: usize,
    eps: f64,
) -> Result<Vec<Option<Tensor>>> {
    let dims = trailing_dims(k);
    let (xhat, rstd) = normalized(&x.to_dtype(compute_dtype(x.dtype())), k, eps)?;
    // A parameter's tangent, lined up with the input's dims.
    let lift = |p: &Tensor| -> Result<Tensor> {
        match t.batch() {
            Some(b) => {
                let mut shape = vec![b as isize];
                shape.extend(std::iter::repeat_n(1, x.ndim() - k));
                shape.extend(p.shape()[1..].iter().map(|&n| n as isize));
                p.reshape(&shape)
            }
            None => Ok(p.clone()),
        }
    };
    let out = t.combine(|i, ti| -> Result<Tensor> {
        let term = match i {
            0 => {
                let dc = ti.sub(&ti.mean(Some(&dims), true, None)?)?;
                let proj = xhat.mul(&dc)?.mean(Some(&dims), true, None)?;
                let dxhat = rstd.mul(&dc.sub(&xhat.mul(&proj)?)?)?;
                match weight {
                    Some(w) => dxhat.mul(w),
                    None => Ok(dxhat),
                }
            }
            1 => xhat.mul(&lift(ti)?),
            _ => lift(ti)?.broadcast_to(&t.shape(x.shape())),
        }?;
        Ok(term.to_dtype(x.dtype()))
    })?;
    Ok(vec![out])
}

/// How a loss reduces its per-element terms (torch's `reduction=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// Keep one term per element (`'none'`).
    None,
    /// The (weighted) mean (`'mean'`).
    Mean,
    /// The sum (`'sum'`).
    Sum,
}

impl Reduction {
    /// torch's number for the reduction (as its saved `reduction` shows).
    fn code(self) -> i64 {
        match self {
            Reduction::None => 0,
            Reduction::Mean => 1,
            Reduction::Sum => 2,
        }
    }
}

/// Checks the arguments of `nll_loss` as torch does.
fn check_nll(x: &Tensor, target: &Tensor, weight: Option<&Tensor>) -> Result<()> {
    let dt = x.dtype();
    if x.ndim() == 0 {
        return Err(Error::value("Expected 1 or more dimensions (got 0)"));
    }
    if x.ndim() == 1 && target.ndim() > 1 || x.ndim() == 2 && target.ndim() != 1 {
        return Err(Error::runtime(format!(
            "0D or 1D target tensor expected, multi-target not supported (got {}D)",
            target.ndim()
        )));
    }
    if x.ndim() >= 2 {
        let n = x.shape()[0];
        let tn = target.shape().first().copied().unwrap_or(0);
        if target.ndim() == 0 || tn != n {
            return Err(Error::value(format!(
                "Expected input batch_size ({n}) to match target batch_size ({tn})."
            )));
        }
        if target.shape()[1..] != x.shape()[2..] {
            let mut want = vec![n];
            want.extend_from_slice(&x.shape()[2..]);
            return Err(Error::runtime(format!(
                "Expected target size {want:?}, got {:?}",
                target.shape()
            )));
        }
    }
    if target.dtype() != DType::Int64 {
        return Err(Error::runtime(format!(
            "expected target dtype to be Long or Byte, but got {}",
            target.dtype().scalar_type_name()
        )));
    }
    if !dt.is_floating_point() {
        return Err(Error::not_implemented("nll_loss_out_frame", dt));
    }
    let classes = x.shape()[usize::from(x.ndim() >= 2)];
    if let Some(w) = weight {
        if w.ndim() != 1 || w.numel() != classes {
            return Err(Error::runtime(format!(
                "weight tensor should be defined either for all {classes} classes or no classes but got weight tensor of shape: {:?}",
                w.shape()
            )));
        }
        if w.dtype() != dt {
            return Err(Error::runtime(format!(
                "expected scalar type {} but found {}",
                dt.scalar_type_name(),
                w.dtype().scalar_type_name()
            )));
        }
        if is_grad_enabled() && w.requires_grad() {
            return Err(Error::runtime(
                "The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. This input cannot have requires_grad True.",
            ));
        }
    }
    Ok(())
}

impl Tensor {
    /// The gradient of `nll_loss` in its input of `shape` (`rows ×
    /// classes`) from this output gradient, the total weight of the
    /// targets taken from `target` and `weight` again (one operation, as
    /// a capture records it: the backward of a compiled program).
    pub fn nll_loss_backward(
        &self,
        shape: &[usize],
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: Reduction,
        ignore_index: i64,
    ) -> Result<Tensor> {
        crate::autograd::captured!(nll_loss_backward (&self, shape: &[usize], target: &Tensor, weight: Option<&Tensor>, reduction: Reduction, ignore_index: i64) -> Tensor {
            let classes = shape.last().copied().unwrap_or(1);
            let dt = self.dtype();
            let total = dispatch_float!(dt, T => loss::nll_total_weight::<T>(
                target, weight, ignore_index, classes)?,
                else unreachable!("nll_loss checks its dtype"));
            let total_weight = Tensor::full(&[], total, dt);
            nll_backward(self, target, weight, &total_weight, reduction, ignore_index, shape)
        })
    }
}

/// The gradient of `nll_loss` in its (`rows × classes`) input from the
/// output gradient `g`: `-w[t] g` at each row's target, divided by the
/// total weight for `'mean'`.
fn nll_backward(
    g: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    total_weight: &Tensor,
    reduction: Reduction,
    ignore_index: i64,
    shape: &[usize],
) -> Result<Tensor> {
    let (rows, classes) = (target.numel(), shape.last().copied().unwrap_or(1));
    let coef = match reduction {
        Reduction::Mean => g.div(total_weight)?,
        _ => g.clone(),
    };
    let per_row = reduction == Reduction::None;
    let grad = if !records_nothing(&[g]) {
        // Differentiable in `g`: the weighted coefficients scattered into
        // zeros (the loss is linear in its input, so nothing depends on it).
        let keep = target.ne(&Tensor::scalar(ignore_index))?;
        let safe = target
            .masked_fill(&keep.logical_not(), 0i64.into())?
            .reshape(&[-1, 1])?;
        let w = match weight {
            Some(w) => w.index_select(0, &safe.reshape(&[-1])?)?,
            None => Tensor::ones(&[rows], coef.dtype()),
        };
        let w = w.mul(&keep.reshape(&[-1])?.to_dtype(coef.dtype()))?;
        let c = if per_row {
            coef.reshape(&[-1])?
        } else {
            coef.reshape(&[1])?
        };
        let src = w.mul(&c)?.neg()?.reshape(&[-1, 1])?;
        Tensor::zeros(&[rows, classes], coef.dtype()).scatter(1, &safe, &src)?
    } else {
        let coef = coef.contiguous();
        let w = weight.map(Tensor::contiguous);
        dispatch_float!(coef.dtype(), T => loss::nll_backward::<T>(
            &coef, per_row, &target.contiguous(), w.as_ref(), ignore_index, classes)?,
            else unreachable!("nll_loss checks its dtype"))
    };
    grad.reshape(&dims_of(shape))
}

derivatives! {
    table FORMULAS("nn: layer_norm, nll_loss") for Tensor;

    /// `layer_norm(normalized_shape, weight=None, bias=None, eps=1e-5)`:
    /// each row over the trailing `normalized_shape` dims minus its mean,
    /// divided by `sqrt(var + eps)` (biased variance), then times `weight`
    /// plus `bias` (torch's `nn.functional.layer_norm`).
    pub fn layer_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        before {
            let n = check_layer_norm(self, normalized_shape, weight, bias)?;
            let k = normalized_shape.len();
            let (dt, cdt) = (self.dtype(), compute_dtype(self.dtype()));
            let ks: Vec<i64> = normalized_shape.iter().map(|&d| d as i64).collect();
            // Statistics shaped like torch's: leading dims, then ones.
            let mut stat_shape = self.shape()[..self.ndim() - k].to_vec();
            stat_shape.extend(std::iter::repeat_n(1, k));
        }
        record "NativeLayerNormBackward0", opt [Some(self), weight, bias];
        compute {
            let x = self.to_dtype(cdt).contiguous();
            let param = |p: Option<&Tensor>| p.map(|p| p.to_dtype(cdt).contiguous());
            let (w, b) = (param(weight), param(bias));
            let (y, mean, rstd) = dispatch_float!(cdt, T => layer_norm::forward::<T>(
                &x, n, w.as_ref(), b.as_ref(), eps),
                else unreachable!("checked to be floating"));
            let stat_shape = dims_of(&stat_shape);
            let (mean, rstd) = (mean.reshape(&stat_shape)?, rstd.reshape(&stat_shape)?);
        } => out = y.to_dtype(dt);
        save |s| {
            s.save("input", self);
            s.save_opt("weight", weight);
            s.save_opt("bias", bias);
            s.save("result1", &mean);
            s.save("result2", &rstd);
            s.attr("normalized_shape", SavedValue::Ints(ks));
        }
        backward |ctx, g| {
            let x = ctx.saved(0)?;
            let (w, b) = (ctx.saved_opt(1)?, ctx.saved_opt(2)?);
            let (mean, rstd) = (ctx.saved(3)?, ctx.saved(4)?);
            let need = [ctx.needs(0), ctx.needs(1), ctx.needs(2)];
            let params = [w.as_ref(), b.as_ref()];
            layer_norm_backward(&g[0], &x, params, [&mean, &rstd], k, eps, need, ctx.batch().is_some())
        };
        forward formula(|t| layer_norm_tangent(t, self, weight, k, eps));
        batched formula;
    }

    /// `nll_loss(target, weight=None, reduction, ignore_index)`: the
    /// negative log likelihood of log-probabilities `self` (`[C]`, `[N,
    /// C]` or `[N, C, d1, ...]`, classes at dim 1, or 0 unbatched) at the
    /// int64 class indices `target`: `-weight[t] self[n, t]` per element,
    /// 0 where `t == ignore_index`; `Mean` divides the sum by the total
    /// weight of the targets not ignored.
    pub fn nll_loss(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: Reduction,
        ignore_index: i64,
    ) -> Result<Tensor> {
        before {
            check_nll(self, target, weight)?;
            if self.ndim() > 2 {
                // Classes moved last: rows of scores, one target each.
                let classes = self.shape()[1] as isize;
                let rows = self.movedim(&[1], &[-1])?.reshape(&[-1, classes])?;
                let out = rows.nll_loss(&target.reshape(&[-1])?, weight, reduction, ignore_index)?;
                return match reduction {
                    Reduction::None => out.reshape(&dims_of(target.shape())),
                    _ => Ok(out),
                };
            };
            let dt = self.dtype();
            let classes = *self.shape().last().expect("checked to have dims");
            let target_c = target.contiguous();
            let weight_c = weight.map(Tensor::contiguous);
        }
        record "NllLossBackward0", [self];
        compute {
            let x = self.contiguous();
            let nll = dispatch_float!(dt, T => loss::nll_forward::<T>(
                &x, &target_c, weight_c.as_ref(), ignore_index, classes)?,
                else unreachable!("checked to be floating"));
            let total_weight = Tensor::full(&[], nll.total_weight, dt);
        } => out = match reduction {
            Reduction::None => Tensor::from_slice(&nll.losses, target.shape())?.to_dtype(dt),
            Reduction::Sum => Tensor::full(&[], nll.losses.iter().sum::<f64>(), dt),
            Reduction::Mean => Tensor::full(&[], nll.losses.iter().sum::<f64>() / nll.total_weight, dt),
        };
        save |s| {
            s.save("self", self);
            s.save("target", &target_c);
            s.save_opt("weight", weight_c.as_ref());
            s.save("total_weight", &total_weight);
            s.attr("reduction", SavedValue::Int(reduction.code()));
            s.attr("ignore_index", SavedValue::Int(ignore_index));
        }
        backward |ctx, g| {
            let (x, target, weight) = (ctx.saved(0)?, ctx.saved(1)?, ctx.saved_opt(2)?);
            let grad = g[0].nll_loss_backward(x.shape(), &target, weight.as_ref(), reduction,
                ignore_index)?;
            Ok(vec![Some(grad)])
        };
        // The loss is linear in its input: its tangent is the loss of the tangent.
        forward rows(|t| t.map1(|tx| tx.nll_loss(&target_c, weight_c.as_ref(), reduction, ignore_index)))
            because "a tangent with a batch dim would be read as a batch of rows";
        batched rows because "the gradient's batch dim would be read as the loss's rows";
    }
}
