//! View operations: new layouts over the same storage, never a copy
//! (`reshape` copies only when no view can express the result).

use crate::autograd::Recorder;
use crate::tensor::{wrap_dim, Layout};

/// Records a reshaping view: the gradient is reshaped back.
fn record_reshape(rec: Recorder, out: &Tensor, input_shape: &[usize]) -> Result<()> {
    let shape: Vec<isize> = input_shape.iter().map(|&n| n as isize).collect();
    rec.finish_simple(out, move |_, g| Ok(vec![Some(g[0].reshape(&shape)?)]))
}
use crate::{Error, Result, Tensor};

impl Tensor {
    /// `view(shape)`: same elements, new shape; `-1` infers one size.
    pub fn view(&self, shape: &[isize]) -> Result<Tensor> {
        let rec = Recorder::new("ViewBackward0", &[self]);
        let out = self.view_with_layout(self.layout().view(shape)?);
        record_reshape(rec, &out, self.shape())?;
        Ok(out)
    }

    /// `reshape(shape)`: a view when strides allow, else a contiguous copy.
    pub fn reshape(&self, shape: &[isize]) -> Result<Tensor> {
        let dims = Layout::infer_shape(shape, self.numel())?;
        match self.layout().view_strides(&dims) {
            Some(strides) => {
                let rec = Recorder::new("ViewBackward0", &[self]);
                let out = self.view_with_layout(Layout::new(&dims, &strides, self.offset()));
                record_reshape(rec, &out, self.shape())?;
                Ok(out)
            }
            None => {
                let rec = Recorder::new("UnsafeViewBackward0", &[self]);
                let c = self.copy();
                let out = c.view_with_layout(Layout::contiguous(&dims)).data();
                record_reshape(rec, &out, self.shape())?;
                Ok(out)
            }
        }
    }

    /// `flatten(start_dim, end_dim)`.
    pub fn flatten(&self, start_dim: isize, end_dim: isize) -> Result<Tensor> {
        if self.ndim() == 0 {
            return self.reshape(&[1]);
        }
        let (s, e) = (
            wrap_dim(start_dim, self.ndim())?,
            wrap_dim(end_dim, self.ndim())?,
        );
        if s > e {
            return Err(Error::runtime(format!(
                "flatten() has invalid args: start_dim ({start_dim}) cannot come after end_dim ({end_dim})"
            )));
        }
        let shape = self.shape();
        let mut new: Vec<isize> = shape[..s].iter().map(|&n| n as isize).collect();
        new.push(shape[s..=e].iter().product::<usize>() as isize);
        new.extend(shape[e + 1..].iter().map(|&n| n as isize));
        self.reshape(&new)
    }

    /// `unflatten(dim, sizes)`: splits one dim into several (one may be -1).
    pub fn unflatten(&self, dim: isize, sizes: &[isize]) -> Result<Tensor> {
        let n = self.size(dim)?;
        let d = wrap_dim(dim, self.ndim())?;
        let inner = Layout::infer_shape(sizes, n).map_err(|_| {
            Error::runtime(format!(
                "unflatten: Provided sizes {sizes:?} don't multiply up to the size of dim {dim} ({}) in the input tensor",
                self.shape()[d]
            ))
        })?;
        let mut new: Vec<isize> = self.shape()[..d].iter().map(|&n| n as isize).collect();
        new.extend(inner.iter().map(|&n| n as isize));
        new.extend(self.shape()[d + 1..].iter().map(|&n| n as isize));
        self.view(&new)
    }

    /// `transpose(dim0, dim1)`.
    pub fn transpose(&self, dim0: isize, dim1: isize) -> Result<Tensor> {
        Ok(self.view_with_layout(self.layout().transpose(dim0, dim1)?))
    }

    /// `t()`: transpose of a tensor with at most 2 dims.
    pub fn t(&self) -> Result<Tensor> {
        if self.ndim() > 2 {
            return Err(Error::runtime(format!(
                "t() expects a tensor with <= 2 dimensions, but self is {}D",
                self.ndim()
            )));
        }
        if self.ndim() < 2 {
            return Ok(self.view_with_layout(self.layout().clone()));
        }
        self.transpose(0, 1)
    }

    /// `mT`: transpose of the last two dims.
    pub fn mt(&self) -> Result<Tensor> {
        if self.ndim() < 2 {
            return Err(Error::runtime(format!(
                "tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.",
                self.ndim()
            )));
        }
        self.transpose(-2, -1)
    }

    /// `T`: all dims reversed.
    pub fn reversed_dims(&self) -> Result<Tensor> {
        let dims: Vec<isize> = (0..self.ndim() as isize).rev().collect();
        self.permute(&dims)
    }

    /// `permute(dims)`.
    pub fn permute(&self, dims: &[isize]) -> Result<Tensor> {
        Ok(self.view_with_layout(self.layout().permute(dims)?))
    }

    /// `movedim(source, destination)`.
    pub fn movedim(&self, source: &[isize], destination: &[isize]) -> Result<Tensor> {
        let n = self.ndim();
        if source.len() != destination.len() {
            return Err(Error::runtime(format!(
                "movedim: Invalid source or destination dims: source ({source:?} dims) should contain the same number of dims as destination ({destination:?} dims)"
            )));
        }
        if n == 0 {
            // A 0-dim tensor accepts dims 0 and -1 and has nothing to move.
            for &d in source.iter().chain(destination) {
                wrap_dim(d, n)?;
            }
            return Ok(self.view_with_layout(self.layout().clone()));
        }
        let src: Vec<usize> = source
            .iter()
            .map(|&d| wrap_dim(d, n))
            .collect::<Result<_>>()?;
        let dst: Vec<usize> = destination
            .iter()
            .map(|&d| wrap_dim(d, n))
            .collect::<Result<_>>()?;
        let mut order: Vec<Option<usize>> = vec![None; n];
        for (&s, &d) in src.iter().zip(&dst) {
            if order[d].is_some() || src.iter().filter(|&&x| x == s).count() > 1 {
                return Err(Error::runtime(format!(
                    "movedim: repeated dim in `source` ({source:?}) or `destination` ({destination:?})"
                )));
            }
            order[d] = Some(s);
        }
        let mut rest = (0..n).filter(|i| !src.contains(i));
        let perm: Vec<isize> = order
            .into_iter()
            .map(|o| o.or_else(|| rest.next()).unwrap_or(0) as isize)
            .collect();
        self.permute(&perm)
    }

    /// `expand(sizes)`: broadcast without copying; `-1` keeps a size.
    pub fn expand(&self, sizes: &[isize]) -> Result<Tensor> {
        let rec = Recorder::new("ExpandBackward0", &[self]);
        let out = self.view_with_layout(self.layout().expand(sizes)?);
        let shape = self.shape().to_vec();
        rec.finish_simple(&out, move |_, g| {
            Ok(vec![Some(crate::autograd::sum_to(&g[0], &shape)?)])
        })?;
        Ok(out)
    }

    /// `broadcast_to(shape)`.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        let s: Vec<isize> = shape.iter().map(|&n| n as isize).collect();
        self.expand(&s)
    }

    /// `narrow(dim, start, length)`.
    pub fn narrow(&self, dim: isize, start: isize, length: usize) -> Result<Tensor> {
        Ok(self.view_with_layout(self.layout().narrow(dim, start, length)?))
    }

    /// `select(dim, index)`: removes `dim`, fixing it at `index`.
    pub fn select(&self, dim: isize, index: isize) -> Result<Tensor> {
        Ok(self.view_with_layout(self.layout().select(dim, index)?))
    }

    /// Python slicing `start:stop:step` along `dim` (step > 0).
    pub fn slice(&self, dim: isize, start: isize, stop: isize, step: isize) -> Result<Tensor> {
        if step <= 0 {
            return Err(Error::value("step must be greater than zero"));
        }
        let d = wrap_dim(dim, self.ndim())?;
        if self.ndim() == 0 {
            return Err(Error::index("slice() cannot be applied to a 0-dim tensor."));
        }
        Ok(self.view_with_layout(self.layout().slice(d, start, stop, step as usize)?))
    }

    /// `squeeze()` (all size-1 dims) or `squeeze(dims)`.
    pub fn squeeze(&self, dims: Option<&[isize]>) -> Result<Tensor> {
        Ok(self.view_with_layout(self.layout().squeeze(dims)?))
    }

    /// `unsqueeze(dim)`.
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        Ok(self.view_with_layout(self.layout().unsqueeze(dim)?))
    }

    /// `diagonal(offset, dim1, dim2)`.
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        Ok(self.view_with_layout(self.layout().diagonal(offset, dim1, dim2)?))
    }

    /// `as_strided(size, stride, storage_offset)`; the offset defaults to
    /// this tensor's.
    pub fn as_strided(
        &self,
        size: &[usize],
        stride: &[isize],
        offset: Option<usize>,
    ) -> Result<Tensor> {
        let storage_len = self.storage().nbytes() / self.dtype().itemsize();
        let layout =
            Layout::as_strided(size, stride, offset.unwrap_or(self.offset()), storage_len)?;
        Ok(self.view_with_layout(layout))
    }

    /// `unbind(dim)`: the slices along `dim`, as views.
    pub fn unbind(&self, dim: isize) -> Result<Vec<Tensor>> {
        if self.ndim() == 0 {
            return Err(Error::index(
                "Dimension specified as 0 but tensor has no dimensions",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        (0..self.shape()[d] as isize)
            .map(|i| self.select(d as isize, i))
            .collect()
    }

    /// `split(split_size, dim)`: chunks of `split_size` (the last may be
    /// smaller).
    pub fn split(&self, split_size: usize, dim: isize) -> Result<Vec<Tensor>> {
        let n = self.size(dim)?;
        let d = wrap_dim(dim, self.ndim())?;
        if split_size == 0 && n != 0 {
            return Err(Error::runtime(format!(
                "split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
            )));
        }
        if n == 0 {
            return Ok(vec![self.narrow(d as isize, 0, 0)?]);
        }
        (0..n)
            .step_by(split_size)
            .map(|s| self.narrow(d as isize, s as isize, split_size.min(n - s)))
            .collect()
    }

    /// `split(sizes, dim)` with explicit section sizes.
    pub fn split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        let n = self.size(dim)?;
        let d = wrap_dim(dim, self.ndim())?;
        if sizes.iter().sum::<usize>() != n {
            return Err(Error::runtime(format!(
                "split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension {d}), but got split_sizes={sizes:?}"
            )));
        }
        let mut start = 0;
        sizes
            .iter()
            .map(|&len| {
                let t = self.narrow(d as isize, start as isize, len);
                start += len;
                t
            })
            .collect()
    }

    /// `chunk(chunks, dim)`: at most `chunks` pieces of equal size (ceil).
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        if chunks == 0 {
            return Err(Error::runtime(
                "chunk expects `chunks` to be greater than 0, got: 0",
            ));
        }
        let n = self.size(dim)?;
        self.split(n.div_ceil(chunks).max(1), dim)
    }

    /// A copy with its own memory that keeps a dense layout's strides (as
    /// torch's `clone()` with `preserve_format`); others become contiguous.
    pub fn clone_preserving_strides(&self) -> Tensor {
        if self.is_contiguous() || !self.layout().is_non_overlapping_and_dense() {
            return self.copy();
        }
        // A dense layout's elements occupy exactly `numel` slots from its
        // offset on, so one memcpy of that span keeps the strides.
        let isz = self.dtype().itemsize();
        let n = self.numel() * isz;
        let storage = crate::Storage::uninit(n);
        {
            let _g = super::access::lock(&[self], None);
            // SAFETY: the source span lies within its storage (dense layout
            // from `offset`), the destination is fresh, and the source is
            // read-locked.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.storage().as_ptr().add(self.offset() * isz),
                    storage.as_ptr(),
                    n,
                )
            };
        }
        let layout = Layout::new(self.shape(), self.strides(), 0);
        Tensor::from_parts(storage, layout, self.dtype()).expect("dense span fits")
    }
}

impl Tensor {
    /// The raw bytes of this tensor's elements in a dense order, and the
    /// strides that read them back (this tensor's own strides when its
    /// layout is dense, else row-major). Used for pickling and deep copies.
    pub fn dense_bytes(&self) -> (Vec<u8>, Vec<usize>) {
        let t = if self.layout().is_non_overlapping_and_dense() {
            self.clone()
        } else {
            self.copy()
        };
        let isz = t.dtype().itemsize();
        let n = t.numel() * isz;
        let mut out = vec![0u8; n];
        if n > 0 {
            let _g = super::access::lock(&[&t], None);
            // SAFETY: a dense layout's elements are exactly the `numel`
            // slots from its offset on; the storage is read-locked.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    t.storage().as_ptr().add(t.offset() * isz),
                    out.as_mut_ptr(),
                    n,
                )
            };
        }
        (out, t.strides().to_vec())
    }
}
