//! Variance and standard deviation over dims (and the `_mean` forms that
//! also return the mean), by the two-pass algorithm in f64.
//!
//! d var / dx = 2 (x - mean) / (N - correction); std's gradient is var's
//! times `1 / (2 std)`, taken as 0 where std is 0 (as torch does).

use super::{
    dim_mask, mask_dims, reduced_count, save_input_and_result, sum_tangent, unsqueeze_reduced, Mask,
};
use crate::autograd::{derivatives, BackwardCtx, Grads, Tangents};
use crate::kernels::fold;
use crate::tensor::Category;
use crate::{Error, Result, Tensor};

/// Variance (or std) and mean over `dims`, for floating inputs.
fn moments(
    op: &str,
    x: &Tensor,
    dims: Option<&[isize]>,
    correction: f64,
    keepdim: bool,
    sqrt: bool,
) -> Result<(Tensor, Tensor)> {
    if x.dtype().category() != Category::Floating {
        return Err(Error::runtime(format!(
            "{op}(): std and var only support floating point and complex dtypes (got {})",
            x.dtype()
        )));
    }
    fold::moments(x, &dim_mask(x.ndim(), dims)?, correction, keepdim, sqrt)
}

/// var (std when `sqrt`) of a complex tensor: the mean squared distance
/// `|z - mean|^2`, which is the variance of the real parts plus that of the
/// imaginary parts; real-valued. Built from differentiable ops.
fn complex_spread(
    z: &Tensor,
    dims: Option<&[isize]>,
    correction: f64,
    keepdim: bool,
    sqrt: bool,
) -> Result<Tensor> {
    let re = z.real()?.var(dims, correction, keepdim)?;
    let var = re.add(&z.imag()?.var(dims, correction, keepdim)?)?;
    if sqrt {
        var.sqrt()
    } else {
        Ok(var)
    }
}

/// What the var/std formulas read besides the saved input and result.
#[derive(Clone)]
struct Spread {
    /// The input's shape.
    shape: Vec<usize>,
    /// The reduced dims.
    mask: Mask,
    keepdim: bool,
    /// Elements per output, `N`.
    n: f64,
    /// `N - correction`.
    dof: f64,
    /// std rather than var.
    sqrt: bool,
    /// The mean is a second output.
    with_mean: bool,
}

impl Spread {
    fn new(
        x: &Tensor,
        dims: Option<&[isize]>,
        correction: f64,
        keepdim: bool,
        sqrt: bool,
        with_mean: bool,
    ) -> Result<Spread> {
        let mask = dim_mask(x.ndim(), dims)?;
        let shape = x.shape().to_vec();
        let n = reduced_count(&shape, &mask) as f64;
        Ok(Spread {
            shape,
            mask,
            keepdim,
            n,
            dof: n - correction,
            sqrt,
            with_mean,
        })
    }

    /// The tangents of the result `res` (var or std) of `x` and of the
    /// mean: d var = 2 / (N - correction) sum((x - mean) t); d std =
    /// d var / (2 std); d mean = sum(t) / N.
    fn tangent(&self, t: &Tangents, x: &Tensor, res: &Tensor) -> Result<Vec<Option<Tensor>>> {
        let Some(tx) = t.get(0) else {
            return Ok(vec![None, None]);
        };
        let (mask, keepdim) = (&self.mask, self.keepdim);
        let dims = mask_dims(mask);
        let centred = x.sub(&x.mean(Some(&dims), true, None)?)?;
        let dv = sum_tangent(t, &tx.mul(&centred)?, mask, keepdim)?;
        let mut dv = dv.mul(&Tensor::scalar(2.0 / self.dof))?;
        if self.sqrt {
            let zero = Tensor::scalar(0.0);
            let scaled = dv.div(&res.mul(&Tensor::scalar(2.0))?)?;
            dv = zero.r#where(&res.eq(&zero)?, &scaled)?;
        }
        let dm = if self.with_mean {
            Some(sum_tangent(t, tx, mask, keepdim)?.mul(&Tensor::scalar(1.0 / self.n))?)
        } else {
            None
        };
        Ok(vec![Some(dv), dm])
    }

    /// The input's gradient from those of the result and (with the mean)
    /// of the mean; the node saved `self` and `result`.
    fn backward(&self, ctx: &BackwardCtx, g: &[Tensor]) -> Result<Grads> {
        let (shape, mask, keepdim) = (&self.shape, &self.mask, self.keepdim);
        let (x, r) = (ctx.saved(0)?, ctx.saved(1)?);
        let zero = Tensor::scalar(0.0);
        let mut gv = unsqueeze_reduced(&g[0], shape, mask, keepdim)?;
        if self.sqrt {
            let ru = unsqueeze_reduced(&r, shape, mask, keepdim)?;
            let scaled = gv.div(&ru.mul(&Tensor::scalar(2.0))?)?;
            gv = zero.r#where(&ru.eq(&zero)?, &scaled)?;
        }
        let dims = mask_dims(mask);
        let centred = x.sub(&x.mean(Some(&dims), true, None)?)?;
        let mut gx = gv.mul(&Tensor::scalar(2.0 / self.dof))?.mul(&centred)?;
        if self.with_mean {
            let gm = unsqueeze_reduced(&g[1], shape, mask, keepdim)?;
            gx = gx.add(&gm.mul(&Tensor::scalar(1.0 / self.n))?)?;
        }
        Ok(vec![Some(gx)])
    }
}

derivatives! {
    table FORMULAS("reductions: var, std, var_mean, std_mean") for Tensor;

    /// `var(dim=None, correction=1, keepdim=False)`: variance, dividing by
    /// `max(0, N - correction)`.
    pub fn var(&self, dims: Option<&[isize]>, correction: f64, keepdim: bool) -> Result<Tensor> {
        before {
            if self.dtype().is_complex() {
                return complex_spread(self, dims, correction, keepdim, false);
            };
        }
        record "VarBackward0", [self];
        compute {
            let (v, _) = moments("var", self, dims, correction, keepdim, false)?;
            let spread = Spread::new(self, dims, correction, keepdim, false, false)?;
            let fspread = spread.clone();
        } => out = v;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| spread.backward(ctx, g);
        forward formula(|t| fspread.tangent(t, self, &out));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `std(dim=None, correction=1, keepdim=False)`: square root of `var`.
    pub fn std(&self, dims: Option<&[isize]>, correction: f64, keepdim: bool) -> Result<Tensor> {
        before {
            if self.dtype().is_complex() {
                return complex_spread(self, dims, correction, keepdim, true);
            };
        }
        record "StdBackward0", [self];
        compute {
            let (v, _) = moments("std", self, dims, correction, keepdim, true)?;
            let spread = Spread::new(self, dims, correction, keepdim, true, false)?;
            let fspread = spread.clone();
        } => out = v;
        save |s| { save_input_and_result(s, self, &out); }
        backward |ctx, g| spread.backward(ctx, g);
        forward formula(|t| fspread.tangent(t, self, &out));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `var_mean(...)`: `(var, mean)` from one pass over the mean.
    pub fn var_mean(
        &self,
        dims: Option<&[isize]>,
        correction: f64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        before {
            if self.dtype().is_complex() {
                return Ok((
                    complex_spread(self, dims, correction, keepdim, false)?,
                    self.mean(dims, keepdim, None)?,
                ));
            };
        }
        record "VarMeanBackward0", [self];
        compute {
            let vm = moments("var_mean", self, dims, correction, keepdim, false)?;
            let spread = Spread::new(self, dims, correction, keepdim, false, true)?;
            let fspread = spread.clone();
        } => out = vm;
        save |s| { save_input_and_result(s, self, &out.0); }
        backward |ctx, g| spread.backward(ctx, g);
        forward formula(|t| fspread.tangent(t, self, &out.0));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }

    /// `std_mean(...)`: `(std, mean)`.
    pub fn std_mean(
        &self,
        dims: Option<&[isize]>,
        correction: f64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        before {
            if self.dtype().is_complex() {
                return Ok((
                    complex_spread(self, dims, correction, keepdim, true)?,
                    self.mean(dims, keepdim, None)?,
                ));
            };
        }
        record "StdMeanBackward0", [self];
        compute {
            let sm = moments("std_mean", self, dims, correction, keepdim, true)?;
            let spread = Spread::new(self, dims, correction, keepdim, true, true)?;
            let fspread = spread.clone();
        } => out = sm;
        save |s| { save_input_and_result(s, self, &out.0); }
        backward |ctx, g| spread.backward(ctx, g);
        forward formula(|t| fspread.tangent(t, self, &out.0));
        batched rows because
            "the gradient is reshaped to the input's rank, which has no room for a batch dim";
    }
}
