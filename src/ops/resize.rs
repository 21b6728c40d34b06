//! `resize_` and `set_`: a tensor's shape or memory replaced in place.
//!
//! A [`Tensor`] handle never changes its layout or storage, so each of
//! these returns the tensor's next handle ([`Tensor::rebound`]): the same
//! tensor to autograd (gradient, hooks, version counter) over the new
//! memory. The Python binding swaps the handle its object holds, which is
//! what makes `x.resize_(...)` change `x` for every name bound to it.
//!
//! Both keep every tensor inside its storage: `set_` refuses a layout that
//! reads past the source's memory, and `resize_` grows only a storage no
//! other tensor shares (moving memory under live views would leave them
//! reading the old copy).

use crate::autograd::is_leaf;
use crate::tensor::{is_grad_enabled, Layout, MemoryFormat, Storage};
use crate::{Error, Result, Tensor};

/// The autograd check of `set_`: like any in-place write, refused on a
/// tensor that requires grad while grad mode is on; and the result is not
/// differentiated, so a source that requires grad is refused then too.
fn check_set(t: &Tensor, source: Option<&Tensor>) -> Result<()> {
    if !is_grad_enabled() {
        return Ok(());
    }
    if t.requires_grad() && is_leaf(t) {
        return Err(Error::runtime(
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ));
    }
    if t.requires_grad() || source.is_some_and(Tensor::requires_grad) {
        return Err(Error::runtime(
            "set_ is not differentiable: call it under torch.no_grad(), or on tensors that do not \
             require grad (e.g. source.detach())",
        ));
    }
    Ok(())
}

/// `t`'s next handle over `storage` and `layout`, sharing its autograd
/// state (made now if `t` had none yet, so that both handles always agree).
fn next(t: &Tensor, storage: Storage, layout: Layout) -> Result<Tensor> {
    t.autograd();
    t.rebound(storage, layout)
}

impl Tensor {
    /// `resize_(shape, memory_format)`: this tensor with shape `shape`,
    /// dense in `format` (row-major when `None`), starting at the same
    /// storage offset. Elements that were in memory keep their bytes; a
    /// storage too small for the new shape is replaced by a larger one
    /// holding the old bytes and zeros after them. The same shape without
    /// a format is no change.
    ///
    /// # Errors
    /// A tensor that requires grad; a shape whose size overflows; a format
    /// of another rank or `Preserve`; growing a storage that other tensors
    /// share or that belongs to another library (e.g. NumPy).
    pub fn resized(&self, shape: &[usize], format: Option<MemoryFormat>) -> Result<Tensor> {
        if self.requires_grad() {
            return Err(Error::runtime("cannot resize variables that require grad"));
        }
        if format.is_none() && shape == self.shape() {
            return Ok(self.clone());
        }
        let format = format.unwrap_or(MemoryFormat::Contiguous);
        let strides = format.strides(shape).ok_or_else(|| match format {
            MemoryFormat::Preserve => Error::runtime("Unsupported memory format. Preserve"),
            _ => Error::runtime(format!(
                "required rank {} tensor to use {} format, got shape {shape:?}",
                if format == MemoryFormat::ChannelsLast {
                    4
                } else {
                    5
                },
                format.name()
            )),
        })?;
        let layout = Layout::checked(shape, &strides, self.offset())?;
        let needed = layout
            .checked_max_extent()
            .and_then(|n| n.checked_mul(self.dtype().itemsize()))
            .ok_or_else(|| {
                Error::runtime(format!(
                    "resize_: {shape:?} elements of {} overflow",
                    self.dtype()
                ))
            })?;
        let old = self.storage();
        if needed <= old.nbytes() {
            return next(self, old.clone(), layout);
        }
        if old.is_foreign() {
            return Err(Error::runtime(
                "Trying to resize storage that is not resizable (its memory belongs to another library)",
            ));
        }
        if old.handle_count() > 1 {
            return Err(Error::runtime(format!(
                "resize_: cannot grow a storage of {} bytes to {needed} bytes for shape {shape:?} while \
                 other tensors (views of it) share it",
                old.nbytes()
            )));
        }
        let grown = Storage::try_zeroed(needed)?;
        // SAFETY: both buffers are live for this call, `grown` is new (no
        // other handle can touch it) and larger than `old`, so the first
        // `old.nbytes()` bytes of each are valid and do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(old.as_ptr(), grown.as_ptr(), old.nbytes()) };
        next(self, grown, layout)
    }

    /// `set_(source, storage_offset, size, stride)`: this tensor reading
    /// `source`'s memory through the given layout (`stride` defaults to
    /// row-major). Writes through either are seen by both; this tensor
    /// keeps its own version counter, which the change bumps.
    ///
    /// # Errors
    /// Dtypes that differ; a layout that reads past the source's storage;
    /// grad mode on while this tensor or the source requires grad.
    pub fn set_to(
        &self,
        source: &Tensor,
        offset: usize,
        shape: &[usize],
        strides: Option<&[usize]>,
    ) -> Result<Tensor> {
        if source.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "set_: cannot set a tensor of dtype {} to a source of dtype {}",
                self.dtype(),
                source.dtype()
            )));
        }
        check_set(self, Some(source))?;
        let layout = match strides {
            Some(s) if s.len() != shape.len() => {
                return Err(Error::runtime(format!(
                    "set_: size {shape:?} and stride {s:?} have different lengths"
                )))
            }
            Some(s) => Layout::checked(shape, s, offset)?,
            None => Layout::checked(shape, &crate::tensor::contiguous_strides(shape), offset)?,
        };
        let held = source.storage().nbytes() / self.dtype().itemsize();
        if layout.numel() > 0 && layout.max_extent() > held {
            return Err(Error::runtime(format!(
                "set_: size {shape:?} with stride {:?} at storage offset {offset} reads {} elements, \
                 past the source's storage of {held}",
                layout.strides(),
                layout.max_extent()
            )));
        }
        let out = next(self, source.storage().clone(), layout)?;
        out.bump_version();
        Ok(out)
    }

    /// `set_()`: this tensor over no memory, of shape `[0]`.
    ///
    /// # Errors
    /// Grad mode on while this tensor requires grad.
    pub fn set_to_empty(&self) -> Result<Tensor> {
        check_set(self, None)?;
        let out = next(self, Storage::try_zeroed(0)?, Layout::contiguous(&[0]))?;
        out.bump_version();
        Ok(out)
    }
}
