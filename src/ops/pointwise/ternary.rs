//! Ops with three operands: `where`, `clamp`, `lerp`, `addcmul`, `addcdiv`.

use super::math::Num;
use super::{check_inplace, keep_where, num, promoted, scalar_factor, unsupported, zero_where};
use crate::autograd::{derivatives, inplace};
use crate::kernels::iter::{apply1, apply2, apply3, map2, map3};
use crate::ops::binary::sum1_fresh;
use crate::ops::Arith;
use crate::{dispatch, dispatch_float, dispatch_numeric, DType, Error, Result, Scalar, Tensor};

derivatives! {
    table FORMULAS("ternary: where, clamp, lerp, addcmul, addcdiv") for Tensor;

    /// `where(condition, other)`: elements of `self` where `condition` is
    /// true, of `other` elsewhere (torch's `torch.where(condition, self,
    /// other)`); all three broadcast, `self` and `other` promote.
    pub fn r#where(&self, condition: &Tensor, other: &Tensor) -> Result<Tensor> {
        before {
            if condition.dtype() != DType::Bool {
                return Err(Error::runtime(format!(
                    "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                    condition.dtype()
                )));
            };
        }
        // The condition is not differentiable: not an input of the node.
        record "WhereBackward0", [self, other];
        compute {
            let dt = promoted(&[self, other]);
            let (x, y) = (self.to_dtype(dt), other.to_dtype(dt));
        } => out = dispatch!(dt, T => map3::<bool, T, T, T>(condition, &x, &y, |c, a, b| if c { a } else { b }))?;
        save |s| {
            s.save("condition", condition);
        }
        backward |ctx, g| {
            let c = ctx.saved(0)?;
            let d_self = ctx.needs(0).then(|| keep_where(&g[0], &c)).transpose()?;
            let d_other = ctx.needs(1).then(|| zero_where(&g[0], &c)).transpose()?;
            Ok(vec![d_self, d_other])
        };
        forward elementwise(|t| t.sum1(|i, t| if i == 0 {
            keep_where(t, condition)
        } else {
            zero_where(t, condition)
        }));
        // Masked elementwise formulas broadcast over a batch dim.
        batched broadcast;
    }

    /// `clamp` under the node name torch gives the overload (`clamp`,
    /// `clamp_min`, `clamp_max`, with a tensor or a number bound). An absent
    /// bound stands as a constant without history or tangent, so the node
    /// keeps its three inputs.
    fn clamp_recorded(
        &self,
        node: &'static str,
        min: Option<&Tensor>,
        max: Option<&Tensor>,
    ) -> Result<Tensor> {
        before {
            let absent = num(0.0);
        }
        record node, [self, min.unwrap_or(&absent), max.unwrap_or(&absent)];
        compute => out = self.clamp_kernel(min, max)?;
        save |s| {
            s.save("self", self);
            s.save_opt("min", min);
            s.save_opt("max", max);
        }
        backward |ctx, g| {
            let x = ctx.saved(0)?;
            let masks = clamp_masks(&x, ctx.saved_opt(1)?.as_ref(), ctx.saved_opt(2)?.as_ref())?;
            let grads = masks.iter().enumerate().map(|(i, m)| match m {
                Some(m) if ctx.needs(i) => keep_where(&g[0], m).map(Some),
                _ => Ok(None),
            });
            grads.collect()
        };
        // Each input's tangent where the result is that input.
        forward elementwise(|t| {
            let masks = clamp_masks(self, min, max)?;
            t.sum1(|i, t| match &masks[i] {
                Some(m) => keep_where(t, m),
                None => Err(no_bounds()),
            })
        });
        // Masked elementwise formulas broadcast over a batch dim.
        batched broadcast;
    }

    /// `lerp(end, weight)`: `self + weight * (end - self)`. Floats only;
    /// `end` (and a tensor `weight`) must have this tensor's dtype.
    pub fn lerp(&self, end: &Tensor, weight: &Tensor) -> Result<Tensor> {
        record if weight.is_wrapped_number() { "LerpBackward0" } else { "LerpBackward1" },
            [self, end, weight];
        compute {
            let w = lerp_check(self, end, weight)?;
        } => out = dispatch_float!(self.dtype(), T => map3::<T, T, T, T>(self, end, &w, lerp::<T>),
            else crate::dispatch_complex!(self.dtype(), T => map3::<T, T, T, T>(self, end, &w, lerp_complex::<T>),
                else Err(unsupported("lerp", self.dtype()))))?;
        save |s, needs| {
            s.save_opt("self", needs[2].then_some(self));
            s.save_opt("end", needs[2].then_some(end));
            s.save_opt("weight", (needs[0] || needs[1]).then_some(weight));
        }
        backward |ctx, g| {
            // Conjugated factors for complex values (no-ops for reals).
            let g = &g[0];
            let (d_self, d_end) = match ctx.saved_opt(2)?.map(|w| w.conj()).transpose()? {
                Some(w) => (
                    ctx.needs(0).then(|| g.mul(&num(1.0).sub(&w)?)).transpose()?,
                    ctx.needs(1).then(|| g.mul(&w)).transpose()?,
                ),
                None => (None, None),
            };
            let d_weight = match (ctx.saved_opt(0)?, ctx.saved_opt(1)?) {
                (Some(a), Some(b)) => Some(g.mul(&b.sub(&a)?.conj()?)?),
                _ => None,
            };
            Ok(vec![d_self, d_end, d_weight])
        };
        // d lerp = ds * (1 - w) + de * w + dw * (e - s)
        forward elementwise(|t| t.sum1(|i, t| match i {
            0 => t.mul(&num(1.0).sub(weight)?),
            1 => t.mul(weight),
            _ => t.mul(&end.sub(self)?),
        }));
        // Elementwise formulas broadcast over a batch dim.
        batched broadcast;
        inplace lerp_(self; end, weight) |s| s.lerp(end, weight); {
            let w = lerp_check(self, end, weight)?;
        } => dispatch_float!(self.dtype(), T => apply3::<T, T, T>(self, end, &w, lerp::<T>),
            else crate::dispatch_complex!(self.dtype(), T => apply3::<T, T, T>(self, end, &w, lerp_complex::<T>),
                else Err(unsupported("lerp_", self.dtype()))));
    }

    /// `addcmul(tensor1, tensor2, value)`: `self + value * tensor1 * tensor2`.
    pub fn addcmul(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        record "AddcmulBackward0", [self, tensor1, tensor2];
        compute => out = self.addcmul_kernel(tensor1, tensor2, value)?;
        save |s, needs| {
            s.save_opt("tensor1", needs[2].then_some(tensor1));
            s.save_opt("tensor2", needs[1].then_some(tensor2));
        }
        backward |ctx, g| {
            let scaled = |t: Option<Tensor>| -> Result<Option<Tensor>> {
                // Conjugated factors for complex values.
                t.map(|t| g[0].mul(&t.conj()?.mul(&num(value).conj()?)?)).transpose()
            };
            Ok(vec![
                Some(g[0].clone()),
                scaled(ctx.saved_opt(1)?)?,
                scaled(ctx.saved_opt(0)?)?,
            ])
        };
        forward elementwise(|t| sum1_fresh(t, |i, t| match i {
            0 => Ok(t.clone()),
            1 => t.mul(&tensor2.mul(&num(value))?),
            _ => t.mul(&tensor1.mul(&num(value))?),
        }));
        // Elementwise formulas broadcast over a batch dim.
        batched broadcast;
        inplace addcmul_(self; tensor1, tensor2) |s| s.addcmul(tensor1, tensor2, value); {
            let own = self.dtype();
            check_inplace("addcmul_", self, promoted(&[self, tensor1, tensor2]))?;
            let (a, b) = (tensor1.to_dtype(own), tensor2.to_dtype(own));
        } => crate::dispatch_arith!(own, T => {
            let v: T = scalar_factor("value", value, own)?;
            apply3::<T, T, T>(self, &a, &b, move |x, a, b| T::add(x, T::mul(T::mul(v, a), b)))
        }, else Err(unsupported("addcmul_", own)));
    }

    /// `addcdiv(tensor1, tensor2, value)`: `self + value * tensor1 / tensor2`
    /// (refused when both divided tensors are integers, as torch).
    pub fn addcdiv(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        record "AddcdivBackward0", [self, tensor1, tensor2];
        compute => out = self.addcdiv_kernel(tensor1, tensor2, value)?;
        save |s, needs| {
            s.save_opt("tensor1", needs[2].then_some(tensor1));
            s.save_opt("tensor2", (needs[1] || needs[2]).then_some(tensor2));
        }
        backward |ctx, g| {
            // Conjugated factors for complex values (no-ops for reals).
            let v = num(value).conj()?;
            let conj = |t: Option<Tensor>| t.map(|t| t.conj()).transpose();
            let (t1, t2) = (conj(ctx.saved_opt(0)?)?, conj(ctx.saved_opt(1)?)?);
            let d_t1 = match &t2 {
                Some(t2) if ctx.needs(1) => Some(g[0].mul(&v.div(t2)?)?),
                _ => None,
            };
            // d(v * a / b)/db = -v * a / b^2
            let d_t2 = match (&t1, &t2) {
                (Some(t1), Some(t2)) => Some(g[0].mul(&v.mul(t1)?.div(&t2.mul(t2)?)?)?.neg()?),
                _ => None,
            };
            Ok(vec![Some(g[0].clone()), d_t1, d_t2])
        };
        // d(x + v a / b) = dx + da * v / b - db * v a / b^2
        forward elementwise(|t| {
            let v = num(value);
            sum1_fresh(t, |i, t| match i {
                0 => Ok(t.clone()),
                1 => t.mul(&v.div(tensor2)?),
                _ => t.mul(&v.mul(tensor1)?.div(&tensor2.mul(tensor2)?)?)?.neg(),
            })
        });
        // Elementwise formulas broadcast over a batch dim.
        batched broadcast;
        inplace addcdiv_(self; tensor1, tensor2) |s| s.addcdiv(tensor1, tensor2, value); {
            let dt = addcdiv_dtype(self, tensor1, tensor2)?;
            check_inplace("addcdiv_", self, dt)?;
            let own = self.dtype();
            let (a, b) = (tensor1.to_dtype(own), tensor2.to_dtype(own));
        } => dispatch_float!(own, T => {
            let v: T = value.to_elem();
            apply3::<T, T, T>(self, &a, &b, move |x, a, b| x + v * a / b)
        }, else crate::dispatch_complex!(own, T => {
            let v: T = value.to_elem();
            apply3::<T, T, T>(self, &a, &b, move |x, a, b| x + v * a / b)
        }, else Err(unsupported("addcdiv_", own))));
    }
}

impl Tensor {
    /// `clamp(min, max)` (alias `clip`): `min(max(self, min), max)`, either
    /// bound optional; NaN in the input or a bound gives NaN. The result
    /// dtype promotes over the input and the given bounds.
    ///
    /// The gradient flows to `self` where `min <= self <= max` (inclusive),
    /// to a tensor `min` where `self < min`, to a tensor `max` where
    /// `self > max` (or `max < min`, where `max` wins), as torch.
    pub fn clamp(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        self.clamp_recorded("ClampBackward1", min, max)
    }

    fn clamp_kernel(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        let dt = clamp_dtype(self, min, max)?;
        let x = self.to_dtype(dt);
        dispatch_numeric!(dt, T => match (min, max) {
            (Some(lo), Some(hi)) => map3::<T, T, T, T>(&x, &lo.to_dtype(dt), &hi.to_dtype(dt),
                |v, lo, hi| T::min_nan(T::max_nan(v, lo), hi)),
            (Some(lo), None) => map2::<T, T, T>(&x, &lo.to_dtype(dt), T::max_nan),
            (None, Some(hi)) => map2::<T, T, T>(&x, &hi.to_dtype(dt), T::min_nan),
            (None, None) => Err(no_bounds()),
        }, else Err(unsupported("clamp", dt)))
    }

    /// In-place form of [`Tensor::clamp`].
    pub fn clamp_(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<()> {
        crate::autograd::captured!(clamp_ (&self, min: Option<&Tensor>, max: Option<&Tensor>) -> () {
            let bounds: smallvec::SmallVec<[&Tensor; 2]> = min.into_iter().chain(max).collect();
            let _span = crate::trace::inplace_op("aten::clamp_", self, &bounds);
            if inplace("clamp_", self, &bounds, |s| s.clamp(min, max))? {
                return Ok(());
            }
            let dt = clamp_dtype(self, min, max)?;
            check_inplace("clamp_", self, dt)?;
            let own = self.dtype();
            dispatch_numeric!(own, T => match (min, max) {
                // Scalar bounds: one read-modify-write pass with no bound tensors.
                (Some(lo), Some(hi)) if single(lo, self) && single(hi, self) => {
                    let (lo, hi): (T, T) = (lo.item()?.to_elem(), hi.item()?.to_elem());
                    apply1::<T>(self, move |v| T::min_nan(T::max_nan(v, lo), hi))
                }
                (Some(lo), Some(hi)) => apply3::<T, T, T>(self, &lo.to_dtype(own), &hi.to_dtype(own),
                    |v, lo, hi| T::min_nan(T::max_nan(v, lo), hi)),
                (Some(lo), None) => apply2::<T, T>(self, &lo.to_dtype(own), T::max_nan),
                (None, Some(hi)) => apply2::<T, T>(self, &hi.to_dtype(own), T::min_nan),
                (None, None) => Err(no_bounds()),
            }, else Err(unsupported("clamp_", own)))
        })
    }

    /// `clamp_min(min)`: `clamp(min=min)`.
    pub fn clamp_min(&self, min: &Tensor) -> Result<Tensor> {
        let node = if min.is_wrapped_number() {
            "ClampMinBackward0"
        } else {
            "ClampMinBackward1"
        };
        self.clamp_recorded(node, Some(min), None)
    }
    /// In-place form of [`Tensor::clamp_min`].
    pub fn clamp_min_(&self, min: &Tensor) -> Result<()> {
        crate::autograd::captured!(clamp_min_ (&self, min: &Tensor) -> () {
            let _span = crate::trace::inplace_op("aten::clamp_min_", self, &[min]);
            if inplace("clamp_min_", self, &[min], |s| s.clamp_min(min))? {
                return Ok(());
            }
            self.clamp_(Some(min), None)
        })
    }
    /// `clamp_max(max)`: `clamp(max=max)`.
    pub fn clamp_max(&self, max: &Tensor) -> Result<Tensor> {
        let node = if max.is_wrapped_number() {
            "ClampMaxBackward0"
        } else {
            "ClampMaxBackward1"
        };
        self.clamp_recorded(node, None, Some(max))
    }
    /// In-place form of [`Tensor::clamp_max`].
    pub fn clamp_max_(&self, max: &Tensor) -> Result<()> {
        crate::autograd::captured!(clamp_max_ (&self, max: &Tensor) -> () {
            let _span = crate::trace::inplace_op("aten::clamp_max_", self, &[max]);
            if inplace("clamp_max_", self, &[max], |s| s.clamp_max(max))? {
                return Ok(());
            }
            self.clamp_(None, Some(max))
        })
    }

    fn addcmul_kernel(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        let dt = promoted(&[self, tensor1, tensor2]);
        let (x, a, b) = (
            self.to_dtype(dt),
            tensor1.to_dtype(dt),
            tensor2.to_dtype(dt),
        );
        crate::dispatch_arith!(dt, T => {
            let v: T = scalar_factor("value", value, dt)?;
            map3::<T, T, T, T>(&x, &a, &b, move |x, a, b| T::add(x, T::mul(T::mul(v, a), b)))
        }, else Err(unsupported("addcmul", dt)))
    }

    fn addcdiv_kernel(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        let dt = addcdiv_dtype(self, tensor1, tensor2)?;
        let (x, a, b) = (
            self.to_dtype(dt),
            tensor1.to_dtype(dt),
            tensor2.to_dtype(dt),
        );
        dispatch_float!(dt, T => {
            let v: T = value.to_elem();
            map3::<T, T, T, T>(&x, &a, &b, move |x, a, b| x + v * a / b)
        }, else crate::dispatch_complex!(dt, T => {
            let v: T = value.to_elem();
            map3::<T, T, T, T>(&x, &a, &b, move |x, a, b| x + v * a / b)
        }, else Err(unsupported("addcdiv", dt))))
    }
}

/// Whether `bound` is one element that broadcasts into `x`'s shape.
fn single(bound: &Tensor, x: &Tensor) -> bool {
    bound.numel() == 1 && bound.ndim() <= x.ndim()
}

/// Where `clamp(x, lo, hi)` equals `x`, `lo` and `hi` (`None` for an absent
/// bound): `x` where `lo <= x <= hi`, `lo` where `x < lo` unless `hi <
/// lo`, `hi` where `x > hi` or `hi < lo`.
fn clamp_masks(
    x: &Tensor,
    lo: Option<&Tensor>,
    hi: Option<&Tensor>,
) -> Result<[Option<Tensor>; 3]> {
    Ok(match (lo, hi) {
        (Some(lo), Some(hi)) => [
            Some(x.ge(lo)?.logical_and(&x.le(hi)?)?),
            Some(x.lt(lo)?.logical_and(&lo.lt(hi)?)?),
            Some(x.gt(hi)?.logical_or(&hi.lt(lo)?)?),
        ],
        (Some(lo), None) => [Some(x.ge(lo)?), Some(x.lt(lo)?), None],
        (None, Some(hi)) => [Some(x.le(hi)?), None, Some(x.gt(hi)?)],
        (None, None) => return Err(no_bounds()),
    })
}

fn no_bounds() -> Error {
    Error::runtime("torch.clamp: At least one of 'min' or 'max' must not be None")
}

fn clamp_dtype(x: &Tensor, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<DType> {
    let mut ts = vec![x];
    ts.extend(min);
    ts.extend(max);
    if ts.len() == 1 {
        return Err(no_bounds());
    }
    let dt = promoted(&ts);
    if dt == DType::Bool {
        return Err(unsupported("clamp", dt));
    }
    if dt.is_complex() {
        return Err(Error::not_implemented_msg(
            "clamp is not supported for complex types",
        ));
    }
    Ok(dt)
}

/// Checks `lerp`'s dtypes; returns the weight in the input's dtype.
fn lerp_check(start: &Tensor, end: &Tensor, weight: &Tensor) -> Result<Tensor> {
    let dt = start.dtype();
    if !dt.is_differentiable() {
        return Err(unsupported("lerp", dt));
    }
    if end.dtype() != dt {
        return Err(Error::runtime(format!(
            "expected dtype {dt} for `end` but got dtype {}",
            end.dtype()
        )));
    }
    if weight.dtype() != dt && !weight.is_wrapped_number() {
        return Err(Error::runtime(format!(
            "expected dtype {dt} for `weight` but got dtype {}",
            weight.dtype()
        )));
    }
    Ok(weight.to_dtype(dt))
}

/// [`lerp`] for complex numbers (computed in `Complex<f64>`), from the
/// nearer end as judged by `|w|`.
fn lerp_complex<C: crate::Element>(start: C, end: C, w: C) -> C {
    let (s, e, w) = (start.to_complex(), end.to_complex(), w.to_complex());
    let d = e - s;
    C::from_complex(if w.norm() < 0.5 {
        s + w * d
    } else {
        e - d * (1.0 - w)
    })
}

/// Linear interpolation, evaluated from the nearer end for accuracy.
#[inline(always)]
fn lerp<T: Num + crate::tensor::Float>(start: T, end: T, w: T) -> T {
    let d = end - start;
    let half = T::from_f64(0.5);
    if w.abs() < half {
        start + w * d
    } else {
        end - d * (T::one() - w)
    }
}

fn addcdiv_dtype(x: &Tensor, a: &Tensor, b: &Tensor) -> Result<DType> {
    if !a.dtype().is_differentiable() && !b.dtype().is_differentiable() {
        return Err(Error::runtime(format!(
            "Integer division with addcdiv is no longer supported (tensor1 is {}, tensor2 is {}); \
             use (input + value * tensor1 / tensor2) with floating tensors instead.",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(promoted(&[x, a, b]))
}
