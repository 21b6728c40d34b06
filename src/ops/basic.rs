//! Copies, casts and fills: the operations every other kernel leans on.
//!
//! The differentiable ones are rows of the derivative table [`FORMULAS`];
//! `copy_` and `fill_` record their out-of-place rows (`copied`, `filled`)
//! through `autograd::inplace` when a gradient or tangent is involved.

use crate::autograd::derivatives;
use crate::kernels;
use crate::kernels::access::{elem_ptr, lock, slice, view};
use crate::tensor::Category;
use crate::{dispatch, DType, Element, Error, Result, Scalar, Tensor};

derivatives! {
    table FORMULAS("copies and casts: clone, to, copy_, fill_") for Tensor;

    /// `copy_(src)`'s out-of-place form: `src` broadcast to this shape and
    /// cast to this dtype; the old value gets no gradient.
    fn copied(&self, src: &Tensor) -> Result<Tensor> {
        record "CopyBackwards", [self, src];
        compute {
            let dst = Tensor::try_empty(self.shape(), self.dtype())?;
            kernels::basic::copy_into(&dst, src)?;
        } => out = dst;
        save nothing
        backward |ctx, g| Ok(vec![
            ctx.needs(0).then(|| g[0].zeros_like()).transpose()?,
            Some(g[0].clone()),
        ]);
        // The tangent is src's, broadcast and cast as the values were.
        forward elementwise(|t| Ok(vec![t.get(1).map(Tensor::copy)]));
        batched rows because "not declared batched yet, though zeros_like(g) and g would broadcast";
    }

    /// `fill_(value)` as a new tensor recorded on `self`: the result does
    /// not depend on `self`, so its gradient and tangent are zero.
    fn filled(&self, value: Scalar) -> Result<Tensor> {
        record "FillBackward0", [self];
        compute => out = Tensor::try_full(self.shape(), value, self.dtype())?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].zeros_like()?)]);
        forward formula(|_| Ok(vec![None]));
        batched broadcast;
    }

    /// [`Tensor::copy`], as a table row.
    pub(crate) fn try_copy(&self) -> Result<Tensor> {
        record "CloneBackward0", [self];
        compute => out = kernels::copy::dense(self);
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].clone())]);
        forward formula(|t| t.map1(|t| Ok(t.copy())));
        batched rows because "not declared batched yet, though g passes through and would broadcast";
    }

    /// [`Tensor::to_dtype`], with an error instead of a panic when the
    /// result cannot be made (as a table row).
    pub fn try_to_dtype(&self, dtype: DType) -> Result<Tensor> {
        before {
            if dtype == self.dtype() {
                return Ok(self.clone());
            };
        }
        record "ToCopyBackward0", [self];
        compute {
            let from = self.dtype();
        } => out = kernels::copy::cast(self, dtype);
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].to_dtype(from))]);
        forward formula(|t| t.map1(|t| Ok(t.to_dtype(dtype))));
        batched rows because "not declared batched yet, though the cast of g would broadcast";
    }
}

impl Tensor {
    /// Fills every element with `value` (no version bump, no checks); for
    /// freshly created tensors.
    pub(crate) fn fill_unchecked(&self, value: Scalar) {
        kernels::basic::fill_fresh(self, value)
    }

    /// `fill_(value)`: sets every element in place.
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<()> {
        let value = value.into();
        let _span = crate::trace::inplace_op("aten::fill_", self, &[]);
        if crate::autograd::inplace("fill_", self, &[], |old| old.filled(value))? {
            return Ok(());
        }
        kernels::basic::fill(self, value)
    }

    /// `zero_()`.
    pub fn zero_(&self) -> Result<()> {
        crate::autograd::captured!(zero_ (&self) -> () {
            self.fill_(0i64)
        })
    }

    /// `copy_(src)`: copies `src` (broadcast to this shape, cast to this
    /// dtype) into this tensor in place.
    pub fn copy_(&self, src: &Tensor) -> Result<()> {
        crate::autograd::captured!(copy_ (&self, src: &Tensor) -> () {
            let _span = crate::trace::inplace_op("aten::copy_", self, &[src]);
            if crate::autograd::inplace("copy_", self, &[src], |old| old.copied(src))? {
                return Ok(());
            }
            kernels::basic::copy_into(self, src)
        })
    }

    /// Zeros with this tensor's shape and dtype.
    pub fn zeros_like(&self) -> Result<Tensor> {
        let _span = crate::trace::op("aten::zeros_like", &[self]);
        Tensor::try_zeros(self.shape(), self.dtype())
    }

    /// A contiguous deep copy (torch's `clone()`, which keeps dense layouts
    /// in torch; here always row-major).
    pub fn copy(&self) -> Tensor {
        self.try_copy().expect("nothing is saved")
    }

    /// Self if already contiguous, else a contiguous copy.
    pub fn contiguous(&self) -> Tensor {
        if self.is_contiguous() {
            self.clone()
        } else {
            self.copy()
        }
    }

    /// Converts to `dtype` (self when it already has it, as torch's `to`).
    pub fn to_dtype(&self, dtype: DType) -> Tensor {
        self.try_to_dtype(dtype).expect("nothing is saved")
    }

    /// The elements in row-major order, cast to `T`.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        crate::compile::break_capture("tensor values are read into the host");
        let t = self.to_dtype(T::DTYPE).contiguous();
        let _g = lock(&[&t], None);
        // SAFETY: `t` is contiguous, of dtype T, and read-locked.
        unsafe { slice::<T>(&t).to_vec() }
    }

    /// The single value of a one-element tensor.
    pub fn item(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            return Err(Error::runtime(format!(
                "a Tensor with {} elements cannot be converted to Scalar",
                self.numel()
            )));
        }
        let _g = lock(&[self], None);
        // SAFETY: one element at the tensor's offset, read-locked.
        let v = unsafe { dispatch!(self.dtype(), T => scalar_of(*elem_ptr::<T>(self))) };
        crate::compile::record_value_read(self, v);
        Ok(v)
    }

    /// Element at a multi-index (bounds-checked), for tests and debugging.
    pub fn get(&self, index: &[usize]) -> Result<Scalar> {
        if index.len() != self.ndim() || index.iter().zip(self.shape()).any(|(&i, &n)| i >= n) {
            return Err(Error::index(format!(
                "index {index:?} is out of bounds for shape {:?}",
                self.shape()
            )));
        }
        let _g = lock(&[self], None);
        dispatch!(self.dtype(), T => {
            // SAFETY: the index is in bounds and the storage is read-locked.
            Ok(scalar_of(unsafe { view::<T>(self)[ndarray::IxDyn(index)] }))
        })
    }
}

/// An element as the [`Scalar`] of its category.
fn scalar_of<T: Element>(v: T) -> Scalar {
    match T::DTYPE.category() {
        Category::Bool => Scalar::Bool(v.to_bool()),
        Category::Integer => Scalar::Int(v.to_i64()),
        Category::Floating => Scalar::Float(v.to_f64()),
        Category::Complex => Scalar::Complex(v.to_complex()),
    }
}

#[cfg(test)]
mod tests {
    use crate::{DType, Tensor};

    /// In-place writes with grad mode on check the destination's autograd
    /// state without making it: a tensor autograd never saw keeps an empty
    /// slot, while the leaf checks still refuse what torch refuses.
    #[test]
    fn inplace_writes_leave_a_plain_tensor_without_autograd_state() {
        let t = Tensor::ones(&[3], DType::Float32);
        let v = t.narrow(0, 1, 2).unwrap();
        t.fill_(2.0).unwrap();
        t.add_(&Tensor::ones(&[3], DType::Float32)).unwrap();
        v.zero_().unwrap();
        assert!(t.autograd_if_made().is_none() && v.autograd_if_made().is_none());
        assert_eq!(t.to_vec::<f32>(), vec![3.0, 0.0, 0.0]);

        let leaf = Tensor::ones(&[3], DType::Float32);
        leaf.set_requires_grad(true).unwrap();
        let err = leaf.fill_(1.0).unwrap_err().to_string();
        assert!(err.contains("leaf Variable that requires grad"), "{err}");
        let err = leaf
            .narrow(0, 0, 1)
            .unwrap()
            .add_(&leaf.narrow(0, 1, 1).unwrap());
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("view of a leaf Variable"));
    }
}
