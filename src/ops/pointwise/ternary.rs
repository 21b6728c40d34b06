//! Ops with three operands: `where`, `clamp`, `lerp`, `addcmul`, `addcdiv`.

use super::math::Num;
use super::{check_inplace, promoted, scalar_factor, unsupported};
use crate::ops::iter::{apply1, apply2, apply3, map2, map3};
use crate::ops::Arith;
use crate::{dispatch, dispatch_float, dispatch_numeric, DType, Error, Result, Scalar, Tensor};

impl Tensor {
    /// `where(condition, other)`: elements of `self` where `condition` is
    /// true, of `other` elsewhere (torch's `torch.where(condition, self,
    /// other)`); all three broadcast, `self` and `other` promote.
    pub fn r#where(&self, condition: &Tensor, other: &Tensor) -> Result<Tensor> {
        if condition.dtype() != DType::Bool {
            return Err(Error::runtime(format!(
                "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                condition.dtype()
            )));
        }
        let dt = promoted(&[self, other]);
        let (x, y) = (self.to_dtype(dt), other.to_dtype(dt));
        dispatch!(dt, T => map3::<bool, T, T, T>(condition, &x, &y, |c, a, b| if c { a } else { b }))
    }

    /// `clamp(min, max)` (alias `clip`): `min(max(self, min), max)`, either
    /// bound optional; NaN in the input or a bound gives NaN. The result
    /// dtype promotes over the input and the given bounds.
    pub fn clamp(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
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
    }

    /// `clamp_min(min)`: `clamp(min=min)`.
    pub fn clamp_min(&self, min: &Tensor) -> Result<Tensor> {
        self.clamp(Some(min), None)
    }
    /// In-place form of [`Tensor::clamp_min`].
    pub fn clamp_min_(&self, min: &Tensor) -> Result<()> {
        self.clamp_(Some(min), None)
    }
    /// `clamp_max(max)`: `clamp(max=max)`.
    pub fn clamp_max(&self, max: &Tensor) -> Result<Tensor> {
        self.clamp(None, Some(max))
    }
    /// In-place form of [`Tensor::clamp_max`].
    pub fn clamp_max_(&self, max: &Tensor) -> Result<()> {
        self.clamp_(None, Some(max))
    }

    /// `lerp(end, weight)`: `self + weight * (end - self)`. Floats only;
    /// `end` (and a tensor `weight`) must have this tensor's dtype.
    pub fn lerp(&self, end: &Tensor, weight: &Tensor) -> Result<Tensor> {
        let w = lerp_check(self, end, weight)?;
        dispatch_float!(self.dtype(), T => map3::<T, T, T, T>(self, end, &w, lerp::<T>),
            else Err(unsupported("lerp", self.dtype())))
    }

    /// In-place form of [`Tensor::lerp`].
    pub fn lerp_(&self, end: &Tensor, weight: &Tensor) -> Result<()> {
        let w = lerp_check(self, end, weight)?;
        dispatch_float!(self.dtype(), T => apply3::<T, T, T>(self, end, &w, lerp::<T>),
            else Err(unsupported("lerp_", self.dtype())))
    }

    /// `addcmul(tensor1, tensor2, value)`: `self + value * tensor1 * tensor2`.
    pub fn addcmul(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        let dt = promoted(&[self, tensor1, tensor2]);
        let (x, a, b) = (
            self.to_dtype(dt),
            tensor1.to_dtype(dt),
            tensor2.to_dtype(dt),
        );
        dispatch_numeric!(dt, T => {
            let v: T = scalar_factor("value", value, dt)?;
            map3::<T, T, T, T>(&x, &a, &b, move |x, a, b| T::add(x, T::mul(T::mul(v, a), b)))
        }, else Err(unsupported("addcmul", dt)))
    }

    /// In-place form of [`Tensor::addcmul`].
    pub fn addcmul_(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<()> {
        let own = self.dtype();
        check_inplace("addcmul_", self, promoted(&[self, tensor1, tensor2]))?;
        let (a, b) = (tensor1.to_dtype(own), tensor2.to_dtype(own));
        dispatch_numeric!(own, T => {
            let v: T = scalar_factor("value", value, own)?;
            apply3::<T, T, T>(self, &a, &b, move |x, a, b| T::add(x, T::mul(T::mul(v, a), b)))
        }, else Err(unsupported("addcmul_", own)))
    }

    /// `addcdiv(tensor1, tensor2, value)`: `self + value * tensor1 / tensor2`
    /// (refused when both divided tensors are integers, as torch).
    pub fn addcdiv(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<Tensor> {
        let dt = addcdiv_dtype(self, tensor1, tensor2)?;
        let (x, a, b) = (
            self.to_dtype(dt),
            tensor1.to_dtype(dt),
            tensor2.to_dtype(dt),
        );
        dispatch_float!(dt, T => {
            let v: T = value.to_elem();
            map3::<T, T, T, T>(&x, &a, &b, move |x, a, b| x + v * a / b)
        }, else Err(unsupported("addcdiv", dt)))
    }

    /// In-place form of [`Tensor::addcdiv`].
    pub fn addcdiv_(&self, tensor1: &Tensor, tensor2: &Tensor, value: Scalar) -> Result<()> {
        let dt = addcdiv_dtype(self, tensor1, tensor2)?;
        check_inplace("addcdiv_", self, dt)?;
        let own = self.dtype();
        let (a, b) = (tensor1.to_dtype(own), tensor2.to_dtype(own));
        dispatch_float!(own, T => {
            let v: T = value.to_elem();
            apply3::<T, T, T>(self, &a, &b, move |x, a, b| x + v * a / b)
        }, else Err(unsupported("addcdiv_", own)))
    }
}

/// Whether `bound` is one element that broadcasts into `x`'s shape.
fn single(bound: &Tensor, x: &Tensor) -> bool {
    bound.numel() == 1 && bound.ndim() <= x.ndim()
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
    Ok(dt)
}

/// Checks `lerp`'s dtypes; returns the weight in the input's dtype.
fn lerp_check(start: &Tensor, end: &Tensor, weight: &Tensor) -> Result<Tensor> {
    let dt = start.dtype();
    if !dt.is_floating_point() {
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
    if !a.dtype().is_floating_point() && !b.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "Integer division with addcdiv is no longer supported (tensor1 is {}, tensor2 is {}); \
             use (input + value * tensor1 / tensor2) with floating tensors instead.",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(promoted(&[x, a, b]))
}
