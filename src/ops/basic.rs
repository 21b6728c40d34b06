//! Copies, casts and fills: the operations every other kernel leans on.

use crate::autograd::Recorder;
use crate::kernels;
use crate::kernels::access::{elem_ptr, lock, slice, slice_mut, view};
use crate::kernels::iter::{apply1, apply2};
use crate::{dispatch, DType, Element, Error, Result, Scalar, Tensor};

/// `copy_`'s out-of-place form: `src` broadcast to `old`'s shape and cast
/// to its dtype; the old value gets no gradient.
fn copied(old: &Tensor, src: &Tensor) -> Result<Tensor> {
    let rec = Recorder::new("CopyBackwards", &[old, src]);
    let out = Tensor::try_empty(old.shape(), old.dtype())?;
    dispatch!(out.dtype(), T => dispatch!(src.dtype(), S => {
        apply2::<T, S>(&out, src, |_, s| T::cast_from(s))
    }))?;
    // The tangent is src's, broadcast and cast as the values were.
    rec.jvp_elementwise(|t| Ok(vec![t.get(1).map(Tensor::copy)]))
        .finish_simple(&out, |ctx, g| {
            Ok(vec![
                if ctx.needs(0) {
                    Some(g[0].zeros_like()?)
                } else {
                    None
                },
                Some(g[0].clone()),
            ])
        })?;
    Ok(out)
}

impl Tensor {
    /// Fills every element with `value` (no version bump, no checks); for
    /// freshly created tensors.
    pub(crate) fn fill_unchecked(&self, value: Scalar) {
        let _g = lock(&[], Some(self));
        dispatch!(self.dtype(), T => {
            let v: T = value.to_elem();
            // SAFETY: write-locked; fresh tensors are contiguous.
            unsafe { slice_mut::<T>(self).fill(v) };
        })
    }

    /// `fill_(value)`: sets every element in place.
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<()> {
        let value = value.into();
        if crate::autograd::inplace("fill_", self, &[], |old| old.filled(value))? {
            return Ok(());
        }
        dispatch!(self.dtype(), T => {
            let v: T = value.to_elem();
            apply1::<T>(self, move |_| v)
        })
    }

    /// `fill_(value)` as a new tensor recorded on `self`: the result does
    /// not depend on `self`, so its gradient and tangent are zero.
    fn filled(&self, value: Scalar) -> Result<Tensor> {
        let rec = Recorder::new("FillBackward0", &[self])
            .batched()
            .jvp_batched(|_| Ok(vec![None]));
        let out = Tensor::try_full(self.shape(), value, self.dtype())?;
        rec.finish_simple(&out, |_, g| Ok(vec![Some(g[0].zeros_like()?)]))?;
        Ok(out)
    }

    /// `zero_()`.
    pub fn zero_(&self) -> Result<()> {
        self.fill_(0i64)
    }

    /// `copy_(src)`: copies `src` (broadcast to this shape, cast to this
    /// dtype) into this tensor in place.
    pub fn copy_(&self, src: &Tensor) -> Result<()> {
        if crate::autograd::inplace("copy_", self, &[src], |old| copied(old, src))? {
            return Ok(());
        }
        dispatch!(self.dtype(), T => dispatch!(src.dtype(), S => {
            apply2::<T, S>(self, src, |_, s| T::cast_from(s))
        }))
    }

    /// Zeros with this tensor's shape and dtype.
    pub fn zeros_like(&self) -> Result<Tensor> {
        Tensor::try_zeros(self.shape(), self.dtype())
    }

    /// A contiguous deep copy (torch's `clone()`, which keeps dense layouts
    /// in torch; here always row-major).
    pub fn copy(&self) -> Tensor {
        let rec = Recorder::new("CloneBackward0", &[self]);
        let out = kernels::copy::dense(self);
        rec.jvp_batched(|t| t.map1(|t| Ok(t.copy())))
            .finish_simple(&out, |_, g| Ok(vec![Some(g[0].clone())]))
            .expect("nothing is saved");
        out
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
        if dtype == self.dtype() {
            return self.clone();
        }
        let rec = Recorder::new("ToCopyBackward0", &[self]);
        let out = kernels::copy::cast(self, dtype);
        let from = self.dtype();
        rec.jvp_batched(|t| t.map1(|t| Ok(t.to_dtype(dtype))))
            .finish_simple(&out, move |_, g| Ok(vec![Some(g[0].to_dtype(from))]))
            .expect("nothing is saved");
        out
    }

    /// The elements in row-major order, cast to `T`.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
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
        Ok(unsafe {
            match self.dtype() {
                DType::Bool => Scalar::Bool(*elem_ptr::<bool>(self)),
                DType::Int32 => Scalar::Int(*elem_ptr::<i32>(self) as i64),
                DType::Int64 => Scalar::Int(*elem_ptr::<i64>(self)),
                DType::Float32 => Scalar::Float(*elem_ptr::<f32>(self) as f64),
                DType::Float64 => Scalar::Float(*elem_ptr::<f64>(self)),
            }
        })
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
            let v = unsafe { view::<T>(self)[ndarray::IxDyn(index)] };
            Ok(match T::DTYPE {
                DType::Bool => Scalar::Bool(v.to_bool()),
                DType::Int32 | DType::Int64 => Scalar::Int(v.to_i64()),
                _ => Scalar::Float(v.to_f64()),
            })
        })
    }
}
