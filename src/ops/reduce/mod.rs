//! Reductions (sum, mean, prod, amax/amin, max/min, argmax/argmin, var/std,
//! all/any, count_nonzero) with torch's dim handling and dtype rules.
//!
//! Dims are `None` (every dim; an empty list means the same) or a list of
//! possibly negative dims. Floating sums accumulate in `f64` and integer
//! sums in wrapping `i64`; see [`driver`] for how the loops are split and
//! why the results do not depend on the number of threads.

mod norm;
mod scan;

pub use norm::MatrixOrd;

use super::Arith;
use crate::autograd::{Recorder, Tangents};
use crate::kernels::iter::{map1, map2};
use crate::kernels::reduce::{out_shape, output, reduce, reshaped, Fold};
use crate::tensor::{wrap_dim, Category};
use crate::{dispatch, DType, Element, Error, Result, Tensor};
use smallvec::SmallVec;
use std::marker::PhantomData;

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

/// Number of elements each output of a reduction over `mask` combines.
pub(crate) fn reduced_count(shape: &[usize], mask: &[bool]) -> usize {
    shape
        .iter()
        .zip(mask)
        .filter(|(_, &r)| r)
        .map(|(&n, _)| n)
        .product()
}

/// `x != x`: true only for NaN (works for every element type).
#[inline(always)]
#[allow(clippy::eq_op)]
pub(crate) fn is_nan<T: PartialEq>(x: T) -> bool {
    x != x
}

/// The smallest and largest values of an element type (infinities for
/// floats): identities of max and min.
pub(crate) trait Bounds: Element {
    const LOWEST: Self;
    const HIGHEST: Self;
}
impl Bounds for bool {
    const LOWEST: Self = false;
    const HIGHEST: Self = true;
}
impl Bounds for i32 {
    const LOWEST: Self = i32::MIN;
    const HIGHEST: Self = i32::MAX;
}
impl Bounds for i64 {
    const LOWEST: Self = i64::MIN;
    const HIGHEST: Self = i64::MAX;
}
impl Bounds for f32 {
    const LOWEST: Self = f32::NEG_INFINITY;
    const HIGHEST: Self = f32::INFINITY;
}
impl Bounds for f64 {
    const LOWEST: Self = f64::NEG_INFINITY;
    const HIGHEST: Self = f64::INFINITY;
}

/// Sum in accumulator type `A` (f64 or wrapping i64).
pub(crate) struct SumF<A>(PhantomData<A>);
impl<A> SumF<A> {
    pub(crate) fn new() -> Self {
        SumF(PhantomData)
    }
}
impl<T: Element, A: Arith> Fold<T> for SumF<A> {
    type Acc = A;
    #[inline(always)]
    fn init(&self) -> A {
        A::zero()
    }
    #[inline(always)]
    fn step(&self, acc: A, x: T, _: usize) -> A {
        A::add(acc, A::cast_from(x))
    }
    #[inline(always)]
    fn merge(&self, a: A, b: A) -> A {
        A::add(a, b)
    }
}

/// Product in accumulator type `A`.
struct ProdF<A>(PhantomData<A>);
impl<T: Element, A: Arith> Fold<T> for ProdF<A> {
    type Acc = A;
    #[inline(always)]
    fn init(&self) -> A {
        A::one()
    }
    #[inline(always)]
    fn step(&self, acc: A, x: T, _: usize) -> A {
        A::mul(acc, A::cast_from(x))
    }
    #[inline(always)]
    fn merge(&self, a: A, b: A) -> A {
        A::mul(a, b)
    }
}

/// Maximum (`MAX = true`) or minimum; NaN wins.
pub(crate) struct ExtremeF<const MAX: bool>;
impl<T: Bounds, const MAX: bool> Fold<T> for ExtremeF<MAX> {
    type Acc = T;
    #[inline(always)]
    fn init(&self) -> T {
        if MAX {
            T::LOWEST
        } else {
            T::HIGHEST
        }
    }
    #[inline(always)]
    fn step(&self, acc: T, x: T, _: usize) -> T {
        let better = if MAX { x > acc } else { x < acc };
        if better | is_nan(x) {
            x
        } else {
            acc
        }
    }
    #[inline(always)]
    fn merge(&self, a: T, b: T) -> T {
        <Self as Fold<T>>::step(self, a, b, 0)
    }
}

/// Value and position of the maximum (`MAX = true`) or minimum: NaN beats
/// everything, ties keep the first position. The accumulator starts at the
/// identity with position `usize::MAX`; a row whose elements all equal the
/// identity keeps that position, which [`arg_index`] maps to 0.
struct ArgF<const MAX: bool>;
impl<const MAX: bool> ArgF<MAX> {
    #[inline(always)]
    fn beats<T: Element>(x: T, best: T) -> bool {
        let better = if MAX { x > best } else { x < best };
        !is_nan(best) & (is_nan(x) | better)
    }
}
impl<T: Bounds, const MAX: bool> Fold<T> for ArgF<MAX> {
    type Acc = (T, usize);
    #[inline(always)]
    fn init(&self) -> (T, usize) {
        (if MAX { T::LOWEST } else { T::HIGHEST }, usize::MAX)
    }
    #[inline(always)]
    fn step(&self, acc: (T, usize), x: T, k: usize) -> (T, usize) {
        if Self::beats(x, acc.0) {
            (x, k)
        } else {
            acc
        }
    }
    #[inline(always)]
    fn merge(&self, a: (T, usize), b: (T, usize)) -> (T, usize) {
        if Self::beats(b.0, a.0) || (!Self::beats(a.0, b.0) && b.1 < a.1) {
            b
        } else {
            a
        }
    }
}

/// The position an [`ArgF`] accumulator stands for.
#[inline(always)]
fn arg_index(k: usize) -> i64 {
    if k == usize::MAX {
        0
    } else {
        k as i64
    }
}

/// `all` (`ALL = true`) or `any` as truthiness of each element.
struct TruthF<const ALL: bool>;
impl<T: Element, const ALL: bool> Fold<T> for TruthF<ALL> {
    type Acc = bool;
    #[inline(always)]
    fn init(&self) -> bool {
        ALL
    }
    #[inline(always)]
    fn step(&self, acc: bool, x: T, _: usize) -> bool {
        if ALL {
            acc & x.to_bool()
        } else {
            acc | x.to_bool()
        }
    }
    #[inline(always)]
    fn merge(&self, a: bool, b: bool) -> bool {
        if ALL {
            a & b
        } else {
            a | b
        }
    }
}

/// Number of nonzero elements.
struct CountF;
impl<T: Element> Fold<T> for CountF {
    type Acc = i64;
    #[inline(always)]
    fn init(&self) -> i64 {
        0
    }
    #[inline(always)]
    fn step(&self, acc: i64, x: T, _: usize) -> i64 {
        acc + x.to_bool() as i64
    }
    #[inline(always)]
    fn merge(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// Reduces into a new tensor of `U`, `finish` turning each accumulator into
/// an output element.
pub(crate) fn reduce_to<T: Element, U: Element, F: Fold<T>>(
    x: &Tensor,
    mask: &[bool],
    keepdim: bool,
    f: &F,
    finish: impl Fn(F::Acc) -> U + Sync,
) -> Result<Tensor> {
    let shape = out_shape(x.shape(), mask, keepdim);
    let (out, p) = output::<U>(&shape);
    // SAFETY: the driver passes each output index `i < out.numel()` exactly
    // once; `out` is fresh and unshared.
    reduce(x, mask, f, |i, a| unsafe { p.write(i, finish(a)) })?;
    Ok(out)
}

/// The default result dtype of sum/prod/cumsum: integers and bool widen to
/// int64.
pub(crate) fn widened(d: DType) -> DType {
    if d.is_floating_point() {
        d
    } else {
        DType::Int64
    }
}

/// Sum or product (`prod = true`) with torch's dtype rules.
fn sum_or_prod(
    x: &Tensor,
    dims: Option<&[isize]>,
    keepdim: bool,
    dtype: Option<DType>,
    prod: bool,
) -> Result<Tensor> {
    let mask = dim_mask(x.ndim(), dims)?;
    let out_dt = dtype.unwrap_or_else(|| widened(x.dtype()));
    let r = if out_dt.is_floating_point() {
        if prod {
            dispatch!(x.dtype(), T => reduce_to::<T, f64, _>(x, &mask, keepdim, &ProdF::<f64>(PhantomData), |a| a))
        } else {
            dispatch!(x.dtype(), T => reduce_to::<T, f64, _>(x, &mask, keepdim, &SumF::<f64>::new(), |a| a))
        }
    } else if prod {
        dispatch!(x.dtype(), T => reduce_to::<T, i64, _>(x, &mask, keepdim, &ProdF::<i64>(PhantomData), |a| a))
    } else {
        dispatch!(x.dtype(), T => reduce_to::<T, i64, _>(x, &mask, keepdim, &SumF::<i64>::new(), |a| a))
    }?;
    Ok(r.to_dtype(out_dt))
}

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

/// Records a one-input op whose backward reads its input (cast to the
/// result's dtype) and its result: `grad(g, x, result)` is the input's
/// gradient for the output gradient `g`.
pub(crate) fn finish_with_input_and_result(
    rec: Recorder,
    input: &Tensor,
    out: &Tensor,
    grad: impl Fn(&Tensor, &Tensor, &Tensor) -> Result<Tensor> + Send + Sync + 'static,
) -> Result<()> {
    rec.finish(
        &[out],
        |s| {
            s.save("self", input);
            s.save_output("result", out, 0);
        },
        move |ctx, g| {
            let (x, out) = (ctx.saved(0)?, ctx.saved(1)?);
            let x = x.to_dtype(out.dtype());
            Ok(vec![Some(grad(&g[0], &x, &out)?)])
        },
    )
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
    ctx: &crate::autograd::BackwardCtx,
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

impl Tensor {
    /// `sum(dim=None, keepdim=False, dtype=None)`: ints and bool sum to int64.
    pub fn sum(
        &self,
        dims: Option<&[isize]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let rec = Recorder::new(
            if dims.is_some() {
                "SumBackward1"
            } else {
                "SumBackward0"
            },
            &[self],
        );
        let out = sum_or_prod(self, dims, keepdim, dtype, false)?;
        if rec.active() {
            let mask = dim_mask(self.ndim(), dims)?;
            let shape = self.shape().to_vec();
            let fmask = mask.clone();
            let rec = rec.jvp_batched(move |t| t.map1(|x| sum_tangent(t, x, &fmask, keepdim)));
            rec.batched().finish_simple(&out, move |ctx, g| {
                Ok(vec![Some(expand_reduced_in(
                    ctx, &g[0], &shape, &mask, keepdim,
                )?)])
            })?;
        }
        Ok(out)
    }

    /// `prod(dim=None, keepdim=False, dtype=None)`: ints and bool multiply in int64.
    pub fn prod(
        &self,
        dims: Option<&[isize]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let rec = Recorder::new(
            if dims.is_some() {
                "ProdBackward1"
            } else {
                "ProdBackward0"
            },
            &[self],
        );
        let out = sum_or_prod(self, dims, keepdim, dtype, true)?;
        if rec.active() {
            let mask = dim_mask(self.ndim(), dims)?;
            let shape = self.shape().to_vec();
            // sum_i t_i prod_{j != i} x_j: the backward's weights for g = 1.
            let (fmask, fshape, res) = (mask.clone(), shape.clone(), &out);
            let rec = rec.jvp_batched(move |t| {
                t.map1(|tx| {
                    let x = self.to_dtype(res.dtype());
                    let ones = Tensor::ones(res.shape(), res.dtype());
                    let w = prod_backward(&ones, &x, res, &fshape, &fmask, keepdim)?;
                    sum_tangent(t, &tx.mul(&w)?, &fmask, keepdim)
                })
            });
            finish_with_input_and_result(rec, self, &out, move |g, x, out| {
                prod_backward(g, x, out, &shape, &mask, keepdim)
            })?;
        }
        Ok(out)
    }

    /// `mean(dim=None, keepdim=False, dtype=None)`: floating dtypes only.
    pub fn mean(
        &self,
        dims: Option<&[isize]>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let out_dt = match dtype {
            Some(d) if !d.is_floating_point() => {
                return Err(Error::runtime(format!(
                    "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: {}",
                    d.scalar_type_name()
                )))
            }
            Some(d) => d,
            None if !self.dtype().is_floating_point() => {
                return Err(Error::runtime(format!(
                    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                    (self.dtype()).scalar_type_name()
                )))
            }
            None => self.dtype(),
        };
        let rec = Recorder::new(
            if dims.is_some() {
                "MeanBackward1"
            } else {
                "MeanBackward0"
            },
            &[self],
        );
        let mask = dim_mask(self.ndim(), dims)?;
        let n = reduced_count(self.shape(), &mask) as f64;
        let r = dispatch!(self.dtype(), T => reduce_to::<T, f64, _>(self, &mask, keepdim, &SumF::<f64>::new(), |s| s / n))?;
        let out = r.to_dtype(out_dt);
        if rec.active() {
            let shape = self.shape().to_vec();
            let fmask = mask.clone();
            let rec = rec.jvp_batched(move |t| {
                t.map1(|x| sum_tangent(t, x, &fmask, keepdim)?.mul(&Tensor::scalar(1.0 / n)))
            });
            rec.batched().finish_simple(&out, move |ctx, g| {
                let g = expand_reduced_in(ctx, &g[0], &shape, &mask, keepdim)?;
                Ok(vec![Some(g.mul(&Tensor::scalar(1.0 / n))?)])
            })?;
        }
        Ok(out)
    }

    /// `amax(dim=(), keepdim=False)`: maximum over dims (NaN propagates).
    pub fn amax(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        extreme_recorded::<true>("AmaxBackward0", "amax", self, dims, keepdim)
    }

    /// `amin(dim=(), keepdim=False)`: minimum over dims (NaN propagates).
    pub fn amin(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        extreme_recorded::<false>("AminBackward0", "amin", self, dims, keepdim)
    }

    /// `max()`: the maximum of all elements as a 0-dim tensor.
    pub fn max_all(&self) -> Result<Tensor> {
        extreme_recorded::<true>("MaxBackward1", "max", self, None, false)
    }

    /// `min()`: the minimum of all elements as a 0-dim tensor.
    pub fn min_all(&self) -> Result<Tensor> {
        extreme_recorded::<false>("MinBackward1", "min", self, None, false)
    }

    /// `max(dim, keepdim=False)`: `(values, indices)` (first index on ties).
    pub fn max_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        arg_dim_recorded::<true>("MaxBackward0", "max", self, dim, keepdim)
    }

    /// `min(dim, keepdim=False)`: `(values, indices)` (first index on ties).
    pub fn min_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        arg_dim_recorded::<false>("MinBackward0", "min", self, dim, keepdim)
    }

    /// `argmax(dim=None, keepdim=False)`: int64 positions of the maximum.
    pub fn argmax(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        arg_only::<true>("argmax", self, dim, keepdim)
    }

    /// `argmin(dim=None, keepdim=False)`: int64 positions of the minimum.
    pub fn argmin(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        arg_only::<false>("argmin", self, dim, keepdim)
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
        let lo = extreme_recorded::<false>("AminBackward0", "aminmax", self, dims, keepdim)?;
        let hi = extreme_recorded::<true>("AmaxBackward0", "aminmax", self, dims, keepdim)?;
        Ok((lo, hi))
    }

    /// `all(dim=None, keepdim=False)`: whether every element is nonzero.
    pub fn all(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let mask = dim_mask(self.ndim(), dims)?;
        dispatch!(self.dtype(), T => reduce_to::<T, bool, _>(self, &mask, keepdim, &TruthF::<true>, |a| a))
    }

    /// `any(dim=None, keepdim=False)`: whether some element is nonzero.
    pub fn any(&self, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
        let mask = dim_mask(self.ndim(), dims)?;
        dispatch!(self.dtype(), T => reduce_to::<T, bool, _>(self, &mask, keepdim, &TruthF::<false>, |a| a))
    }

    /// `count_nonzero(dim=None)`: int64 counts of nonzero elements.
    pub fn count_nonzero(&self, dims: Option<&[isize]>) -> Result<Tensor> {
        let mask = dim_mask(self.ndim(), dims)?;
        dispatch!(self.dtype(), T => reduce_to::<T, i64, _>(self, &mask, false, &CountF, |a| a))
    }

    /// `var(dim=None, correction=1, keepdim=False)`: variance, dividing by
    /// `max(0, N - correction)`.
    pub fn var(&self, dims: Option<&[isize]>, correction: f64, keepdim: bool) -> Result<Tensor> {
        Ok(moments_recorded(
            "VarBackward0",
            "var",
            self,
            dims,
            correction,
            keepdim,
            false,
            false,
        )?
        .0)
    }

    /// `std(dim=None, correction=1, keepdim=False)`: square root of `var`.
    pub fn std(&self, dims: Option<&[isize]>, correction: f64, keepdim: bool) -> Result<Tensor> {
        Ok(moments_recorded(
            "StdBackward0",
            "std",
            self,
            dims,
            correction,
            keepdim,
            true,
            false,
        )?
        .0)
    }

    /// `var_mean(...)`: `(var, mean)` from one pass over the mean.
    pub fn var_mean(
        &self,
        dims: Option<&[isize]>,
        correction: f64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        moments_recorded(
            "VarMeanBackward0",
            "var_mean",
            self,
            dims,
            correction,
            keepdim,
            false,
            true,
        )
    }

    /// `std_mean(...)`: `(std, mean)`.
    pub fn std_mean(
        &self,
        dims: Option<&[isize]>,
        correction: f64,
        keepdim: bool,
    ) -> Result<(Tensor, Tensor)> {
        moments_recorded(
            "StdMeanBackward0",
            "std_mean",
            self,
            dims,
            correction,
            keepdim,
            true,
            true,
        )
    }
}

/// amax/amin/max()/min() over `dims`.
fn extreme<const MAX: bool>(
    op: &str,
    x: &Tensor,
    dims: Option<&[isize]>,
    keepdim: bool,
) -> Result<Tensor> {
    let mask = dim_mask(x.ndim(), dims)?;
    check_nonempty(op, x, dims, &mask)?;
    dispatch!(x.dtype(), T => reduce_to::<T, T, _>(x, &mask, keepdim, &ExtremeF::<MAX>, |a| a))
}

/// max(dim)/min(dim): values (if `values`) and int64 indices over one dim.
fn arg_dim<const MAX: bool>(
    op: &str,
    x: &Tensor,
    dim: isize,
    keepdim: bool,
    values: bool,
) -> Result<(Tensor, Tensor)> {
    let d = wrap_dim(dim, x.ndim())?;
    let mut mask: Mask = SmallVec::from_elem(false, x.ndim());
    if x.ndim() > 0 {
        if x.shape()[d] == 0 {
            return Err(Error::index(format!(
                "{op}(): Expected reduction dim {d} to have non-zero size."
            )));
        }
        mask[d] = true;
    }
    let shape = out_shape(x.shape(), &mask, keepdim);
    let (idx, ip) = output::<i64>(&shape);
    let vals = dispatch!(x.dtype(), T => {
        let (vals, vp) = output::<T>(if values { &shape[..] } else { &[] });
        let vp = if values { Some(vp) } else { None };
        // SAFETY: each output index `i < numel` is written exactly once;
        // both outputs are fresh and unshared.
        reduce(x, &mask, &ArgF::<MAX>, |i, (v, k): (T, usize)| unsafe {
            ip.write(i, arg_index(k));
            if let Some(vp) = vp {
                vp.write(i, v);
            }
        })?;
        vals
    });
    Ok((vals, idx))
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

/// Variance (or std) and mean over `dims`, by the two-pass algorithm in f64.
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
    let mask = dim_mask(x.ndim(), dims)?;
    let n = reduced_count(x.shape(), &mask) as f64;
    let divisor = (n - correction).max(0.0);
    let out_shape = out_shape(x.shape(), &mask, keepdim);
    dispatch!(x.dtype(), T => {
        let mean = reduce_to::<T, f64, _>(x, &mask, true, &SumF::<f64>::new(), |s| s / n)?;
        let dev = map2::<T, f64, f64>(x, &mean, |a, m| {
            let d = a.to_f64() - m;
            d * d
        })?;
        let ss = reduce_to::<f64, f64, _>(&dev, &mask, keepdim, &SumF::<f64>::new(), |s| s)?;
        let var = map1::<f64, T>(&ss, |s| {
            let v = s / divisor;
            T::from_f64(if sqrt { v.sqrt() } else { v })
        });
        let mean = reshaped(&mean, &out_shape).to_dtype(x.dtype());
        Ok((var, mean))
    })
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

/// amax/amin/max()/min() recorded as `name`: the gradient is shared evenly
/// among the elements equal to the result (NaN results go to the NaNs).
fn extreme_recorded<const MAX: bool>(
    name: &'static str,
    op: &str,
    x: &Tensor,
    dims: Option<&[isize]>,
    keepdim: bool,
) -> Result<Tensor> {
    let rec = Recorder::new(name, &[x]);
    let out = extreme::<MAX>(op, x, dims, keepdim)?;
    if rec.active() {
        let mask = dim_mask(x.ndim(), dims)?;
        let shape = x.shape().to_vec();
        // The mean of the tangent over the elements equal to the result.
        let (fmask, fshape, res) = (mask.clone(), shape.clone(), &out);
        let rec = rec.jvp_batched(move |t| {
            t.map1(|tx| {
                let ou = unsqueeze_reduced(res, &fshape, &fmask, keepdim)?;
                let hit = x
                    .eq(&ou)?
                    .logical_or(&x.isnan().logical_and(&ou.isnan())?)?;
                let count = hit.sum(Some(&mask_dims(&fmask)), keepdim, None)?;
                sum_tangent(t, &tx.mul(&hit)?, &fmask, keepdim)?.div(&count)
            })
        });
        rec.finish(
            &[&out],
            |s| {
                s.save("self", x);
                s.save_output("result", &out, 0);
            },
            move |ctx, g| {
                let (x, out) = (ctx.saved(0)?, ctx.saved(1)?);
                let ou = unsqueeze_reduced(&out, &shape, &mask, keepdim)?;
                let gu = unsqueeze_reduced(&g[0], &shape, &mask, keepdim)?;
                let hit = x
                    .eq(&ou)?
                    .logical_or(&x.isnan().logical_and(&ou.isnan())?)?;
                let count = hit.sum(Some(&mask_dims(&mask)), true, None)?;
                Ok(vec![Some(gu.div(&count)?.mul(&hit)?)])
            },
        )?;
    }
    Ok(out)
}

/// max(dim)/min(dim) recorded as `name`: the gradient of each value goes to
/// the element at its returned index.
fn arg_dim_recorded<const MAX: bool>(
    name: &'static str,
    op: &str,
    x: &Tensor,
    dim: isize,
    keepdim: bool,
) -> Result<(Tensor, Tensor)> {
    let rec = Recorder::new(name, &[x]);
    let (vals, idx) = arg_dim::<MAX>(op, x, dim, keepdim, true)?;
    if rec.active() {
        let d = wrap_dim(dim, x.ndim())?;
        let shape = x.shape().to_vec();
        let mut mask: Mask = SmallVec::from_elem(false, x.ndim());
        if x.ndim() > 0 {
            mask[d] = true;
        }
        // The tangent at the returned index.
        let (fmask, iu) = (
            mask.clone(),
            unsqueeze_reduced(&idx, &shape, &mask, keepdim)?,
        );
        let rec = rec.jvp_batched(move |t| {
            let v = t.map1(|tx| {
                if x.ndim() == 0 {
                    return Ok(tx.clone());
                }
                let n = x.shape()[d] as i64;
                let mut pos_shape = vec![1isize; x.ndim()];
                pos_shape[d] = n as isize;
                let pos = Tensor::arange(0i64, n, 1i64, Some(DType::Int64))?.reshape(&pos_shape)?;
                sum_tangent(t, &tx.mul(&pos.eq(&iu)?)?, &fmask, keepdim)
            })?;
            Ok(vec![v[0].clone(), None])
        });
        rec.finish(
            &[&vals, &idx],
            |s| s.save_output("indices", &idx, 1),
            move |ctx, g| {
                let idx = ctx.saved(0)?;
                let gu = unsqueeze_reduced(&g[0], &shape, &mask, keepdim)?;
                if shape.is_empty() {
                    return Ok(vec![Some(gu)]);
                }
                let iu = unsqueeze_reduced(&idx, &shape, &mask, keepdim)?;
                let mut pos_shape = vec![1isize; shape.len()];
                pos_shape[d] = shape[d] as isize;
                let pos = Tensor::arange(0i64, shape[d] as i64, 1i64, Some(DType::Int64))?
                    .reshape(&pos_shape)?;
                Ok(vec![Some(gu.mul(&pos.eq(&iu)?)?)])
            },
        )?;
    }
    Ok((vals, idx))
}

/// var/std (and their `_mean` forms when `with_mean`) recorded as `name`.
///
/// d var / dx = 2 (x - mean) / (N - correction); std's gradient is var's
/// times `1 / (2 std)`, taken as 0 where std is 0 (as torch does).
#[allow(clippy::too_many_arguments)]
fn moments_recorded(
    name: &'static str,
    op: &str,
    x: &Tensor,
    dims: Option<&[isize]>,
    correction: f64,
    keepdim: bool,
    sqrt: bool,
    with_mean: bool,
) -> Result<(Tensor, Tensor)> {
    let rec = Recorder::new(name, &[x]);
    let (v, m) = moments(op, x, dims, correction, keepdim, sqrt)?;
    if rec.active() {
        let mask = dim_mask(x.ndim(), dims)?;
        let shape = x.shape().to_vec();
        let n = reduced_count(&shape, &mask) as f64;
        let dof = n - correction;
        let outs: Vec<&Tensor> = if with_mean { vec![&v, &m] } else { vec![&v] };
        // d var = 2 / (N - correction) sum((x - mean) t); d std = d var / (2 std).
        let (fmask, res) = (mask.clone(), &v);
        let rec = rec.jvp_batched(move |t| {
            let Some(tx) = t.get(0) else {
                return Ok(vec![None, None]);
            };
            let dims = mask_dims(&fmask);
            let centred = x.sub(&x.mean(Some(&dims), true, None)?)?;
            let dv = sum_tangent(t, &tx.mul(&centred)?, &fmask, keepdim)?;
            let mut dv = dv.mul(&Tensor::scalar(2.0 / dof))?;
            if sqrt {
                let zero = Tensor::scalar(0.0);
                let scaled = dv.div(&res.mul(&Tensor::scalar(2.0))?)?;
                dv = zero.r#where(&res.eq(&zero)?, &scaled)?;
            }
            let dm = if with_mean {
                Some(sum_tangent(t, tx, &fmask, keepdim)?.mul(&Tensor::scalar(1.0 / n))?)
            } else {
                None
            };
            Ok(vec![Some(dv), dm])
        });
        rec.finish(
            &outs,
            |s| {
                s.save("self", x);
                s.save_output("result", &v, 0);
            },
            move |ctx, g| {
                let (x, r) = (ctx.saved(0)?, ctx.saved(1)?);
                let zero = Tensor::scalar(0.0);
                let mut gv = unsqueeze_reduced(&g[0], &shape, &mask, keepdim)?;
                if sqrt {
                    let ru = unsqueeze_reduced(&r, &shape, &mask, keepdim)?;
                    let scaled = gv.div(&ru.mul(&Tensor::scalar(2.0))?)?;
                    gv = zero.r#where(&ru.eq(&zero)?, &scaled)?;
                }
                let dims = mask_dims(&mask);
                let centred = x.sub(&x.mean(Some(&dims), true, None)?)?;
                let mut gx = gv.mul(&Tensor::scalar(2.0 / dof))?.mul(&centred)?;
                if with_mean {
                    let gm = unsqueeze_reduced(&g[1], &shape, &mask, keepdim)?;
                    gx = gx.add(&gm.mul(&Tensor::scalar(1.0 / n))?)?;
                }
                Ok(vec![Some(gx)])
            },
        )?;
    }
    Ok((v, m))
}
