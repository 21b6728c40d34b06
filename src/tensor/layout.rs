//! Shape, strides and offset: how a tensor walks its storage.
//!
//! All strides and the offset are in elements, never negative (as in
//! torch). Every view op is arithmetic on a [`Layout`]; nothing here touches
//! memory. Dims given by users may be negative and are wrapped with
//! [`wrap_dim`].

use crate::{Error, Result};
use smallvec::SmallVec;

/// Dimension sizes or strides; inline up to 6 dims.
pub type Dims = SmallVec<[usize; 6]>;

/// The shape, strides and starting offset of a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    shape: Dims,
    strides: Dims,
    offset: usize,
}

/// Row-major (C-contiguous) strides for `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Dims {
    let mut strides: Dims = smallvec::smallvec![0; shape.len()];
    let mut acc = 1usize;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.saturating_mul(n.max(1));
    }
    strides
}

/// The number of elements of `shape`, or torch's overflow error when the
/// running product leaves `isize` (storage sizes and strides are measured in
/// it). Every layout built from sizes a user gives passes this check, so
/// `numel()` and the extent arithmetic below cannot wrap.
pub fn checked_numel(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| Error::runtime("numel: integer multiplication overflow"))
}

/// Wraps a possibly negative dim into `0..ndim` (a 0-dim tensor accepts
/// dims -1 and 0, as in torch).
pub fn wrap_dim(dim: isize, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as isize;
    if dim < -n || dim >= n {
        return Err(Error::DimOutOfRange {
            dim,
            min: -n,
            max: n - 1,
        });
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// The broadcast shape of two shapes, or torch's mismatch error.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Dims> {
    let n = a.len().max(b.len());
    let mut out: Dims = smallvec::smallvec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::BroadcastMismatch {
                a: da,
                b: db,
                dim: i,
            });
        };
    }
    Ok(out)
}

impl Layout {
    /// A contiguous layout for `shape` starting at offset 0.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: shape.into(),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    /// A layout from its parts (not checked against any storage).
    pub fn new(shape: &[usize], strides: &[usize], offset: usize) -> Layout {
        Layout {
            shape: shape.into(),
            strides: strides.into(),
            offset,
        }
    }

    /// The size of each dim.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The step, in elements, between neighbours along each dim.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }
    /// The position of the first element in the storage, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// The number of dims.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// A layout from its parts, checked: its element count and the largest
    /// element index it reaches fit in `isize` (an error otherwise).
    pub fn checked(shape: &[usize], strides: &[usize], offset: usize) -> Result<Layout> {
        checked_numel(shape)?;
        let l = Layout::new(shape, strides, offset);
        l.checked_max_extent().ok_or_else(|| {
            Error::runtime(format!(
                "Storage size calculation overflowed with sizes={shape:?} and strides={strides:?}"
            ))
        })?;
        Ok(l)
    }

    /// [`Layout::max_extent`] with checked arithmetic: `None` when it does
    /// not fit in `isize`.
    pub fn checked_max_extent(&self) -> Option<usize> {
        if self.shape.contains(&0) {
            return Some(self.offset);
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset, |acc, (&n, &s)| {
                acc.checked_add((n - 1).checked_mul(s)?)
            })?
            .checked_add(1)
            .filter(|&n| n <= isize::MAX as usize)
    }

    /// One past the largest element index this layout touches (0 if empty).
    pub fn max_extent(&self) -> usize {
        if self.numel() == 0 {
            return self.offset;
        }
        self.offset
            + self
                .shape
                .iter()
                .zip(&self.strides)
                .map(|(&n, &s)| (n - 1) * s)
                .sum::<usize>()
            + 1
    }

    /// Row-major contiguous (size-1 dims may have any stride, as torch).
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1usize;
        for (&n, &s) in self.shape.iter().zip(&self.strides).rev() {
            if n == 1 {
                continue;
            }
            if s != expected {
                return self.numel() == 0;
            }
            expected *= n;
        }
        true
    }

    /// The `(stride, size)` of every dim of size other than 1, smallest
    /// stride first.
    fn dims_by_stride(&self) -> SmallVec<[(usize, usize); 6]> {
        let mut dims: SmallVec<[(usize, usize); 6]> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&n, _)| n != 1)
            .map(|(&n, &s)| (s, n))
            .collect();
        dims.sort_unstable();
        dims
    }

    /// Every element has its own address and the addresses form one dense
    /// block (in some dim order): true for contiguous tensors and their
    /// permutations.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        if self.numel() <= 1 {
            return true;
        }
        let dims = self.dims_by_stride();
        let mut expected = 1usize;
        for (s, n) in dims {
            if s != expected {
                return false;
            }
            expected *= n;
        }
        true
    }

    /// No two indices map to the same element (writes through this layout
    /// are well defined).
    pub fn is_non_overlapping(&self) -> bool {
        if self.numel() <= 1 {
            return true;
        }
        let dims = self.dims_by_stride();
        let mut span = 0usize; // max offset reachable by the smaller dims
        for (s, n) in dims {
            if s == 0 || s <= span {
                return false;
            }
            span += s * (n - 1);
        }
        true
    }

    /// How many leading dims expanding to `n` dims adds, or torch's error
    /// when `n` is fewer than this layout has.
    fn expand_lead(&self, n: usize) -> Result<usize> {
        n.checked_sub(self.ndim()).ok_or_else(|| Error::Shape {
            op: "expand",
            msg: format!(
                "the number of sizes provided ({n}) must be greater or equal to the number of dimensions in the tensor ({})",
                self.ndim()
            ),
        })
    }

    /// Strides broadcast to `shape` (0 for broadcast dims), or an error when
    /// this layout cannot be expanded to it.
    pub fn broadcast_strides(&self, shape: &[usize]) -> Result<Dims> {
        let n = shape.len();
        let lead = self.expand_lead(n)?;
        let mut out: Dims = smallvec::smallvec![0; n];
        for i in 0..n {
            if i < lead {
                continue;
            }
            let (d, s) = (self.shape[i - lead], self.strides[i - lead]);
            out[i] = if d == shape[i] {
                s
            } else if d == 1 {
                0
            } else {
                return Err(Error::Shape {
                    op: "expand",
                    msg: format!(
                        "The expanded size of the tensor ({}) must match the existing size ({d}) at non-singleton dimension {i}.  Target sizes: {:?}.  Tensor sizes: {:?}",
                        shape[i], shape, self.shape.as_slice()
                    ),
                });
            };
        }
        Ok(out)
    }

    /// `expand`: broadcast to `shape`; `-1` keeps a size.
    pub fn expand(&self, sizes: &[isize]) -> Result<Layout> {
        let n = sizes.len();
        let lead = self.expand_lead(n)?;
        let mut shape: Dims = smallvec::smallvec![0; n];
        for i in 0..n {
            shape[i] = match sizes[i] {
                -1 if i >= lead => self.shape[i - lead],
                s if s < 0 => {
                    return Err(Error::Shape {
                        op: "expand",
                        msg: format!("invalid size {s} at dim {i} (sizes {sizes:?}); -1 is only allowed for existing dims"),
                    })
                }
                s => s as usize,
            };
        }
        let strides = self.broadcast_strides(&shape)?;
        checked_numel(&shape)?;
        Ok(Layout {
            shape,
            strides,
            offset: self.offset,
        })
    }

    /// Strides for viewing this layout with `new_shape` without copying, if
    /// possible (torch's `computeStride`: groups of dims that are
    /// contiguous among themselves can be re-split freely).
    pub fn view_strides(&self, new_shape: &[usize]) -> Option<Dims> {
        let old_shape = &self.shape;
        let old_strides = &self.strides;
        if self.numel() == 0 {
            return Some(contiguous_strides(new_shape));
        }
        if old_shape.is_empty() {
            return Some(smallvec::smallvec![1; new_shape.len()]);
        }
        let mut new_strides: Dims = smallvec::smallvec![0; new_shape.len()];
        let mut view_d = new_shape.len() as isize - 1;
        // Walk old dims from the back, accumulating chunks that are
        // contiguous among themselves.
        let mut chunk_base_stride = *old_strides.last().unwrap_or(&1);
        let mut tensor_numel = 1usize;
        let mut view_numel = 1usize;
        for tensor_d in (0..old_shape.len()).rev() {
            tensor_numel *= old_shape[tensor_d];
            let chunk_ends = tensor_d == 0
                || (old_shape[tensor_d - 1] != 1
                    && old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
            if chunk_ends {
                while view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d as usize] == 1)
                {
                    new_strides[view_d as usize] = view_numel * chunk_base_stride;
                    view_numel *= new_shape[view_d as usize];
                    view_d -= 1;
                }
                if view_numel != tensor_numel {
                    return None;
                }
                if tensor_d > 0 {
                    chunk_base_stride = old_strides[tensor_d - 1];
                    tensor_numel = 1;
                    view_numel = 1;
                }
            }
        }
        if view_d != -1 {
            return None;
        }
        Some(new_strides)
    }

    /// Resolves a requested shape with at most one `-1` against `numel`.
    pub fn infer_shape(sizes: &[isize], numel: usize) -> Result<Dims> {
        let mut infer = None;
        let mut known = 1usize;
        for (i, &s) in sizes.iter().enumerate() {
            if s == -1 {
                if infer.is_some() {
                    return Err(Error::runtime("only one dimension can be inferred"));
                }
                infer = Some(i);
            } else if s < 0 {
                return Err(Error::runtime(format!("invalid shape dimension {s}")));
            } else {
                // A product that overflows cannot equal any tensor's numel.
                known = known
                    .checked_mul(s as usize)
                    .ok_or_else(|| Error::InvalidViewShape {
                        shape: sizes.to_vec(),
                        numel,
                    })?;
            }
        }
        let mut shape: Dims = sizes.iter().map(|&s| s.max(0) as usize).collect();
        match infer {
            Some(i) => {
                if known == 0 || !numel.is_multiple_of(known) {
                    return Err(Error::InvalidViewShape {
                        shape: sizes.to_vec(),
                        numel,
                    });
                }
                shape[i] = numel / known;
            }
            None if known != numel => {
                return Err(Error::InvalidViewShape {
                    shape: sizes.to_vec(),
                    numel,
                })
            }
            None => {}
        }
        Ok(shape)
    }

    /// `view`: the same elements with a new shape, if strides allow it.
    pub fn view(&self, sizes: &[isize]) -> Result<Layout> {
        let shape = Layout::infer_shape(sizes, self.numel())?;
        match self.view_strides(&shape) {
            Some(strides) => Ok(Layout {
                shape,
                strides,
                offset: self.offset,
            }),
            None => Err(Error::NonContiguousView {
                shape: self.shape.to_vec(),
                strides: self.strides.to_vec(),
                requested: shape.to_vec(),
            }),
        }
    }

    /// Swaps two dims.
    pub fn transpose(&self, d0: isize, d1: isize) -> Result<Layout> {
        let (a, b) = (wrap_dim(d0, self.ndim())?, wrap_dim(d1, self.ndim())?);
        let mut l = self.clone();
        if self.ndim() > 0 {
            l.shape.swap(a, b);
            l.strides.swap(a, b);
        }
        Ok(l)
    }

    /// Reorders dims; `dims` must be a permutation.
    pub fn permute(&self, dims: &[isize]) -> Result<Layout> {
        let n = self.ndim();
        if dims.len() != n {
            return Err(Error::runtime(format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = {}",
                dims.len()
            )));
        }
        let mut seen = [false; 64];
        let mut shape = Dims::new();
        let mut strides = Dims::new();
        for &d in dims {
            let d = wrap_dim(d, n)?;
            if seen[d] {
                return Err(Error::runtime("permute(): duplicate dims are not allowed."));
            }
            seen[d] = true;
            shape.push(self.shape[d]);
            strides.push(self.strides[d]);
        }
        Ok(Layout {
            shape,
            strides,
            offset: self.offset,
        })
    }

    /// `narrow(dim, start, length)`.
    pub fn narrow(&self, dim: isize, start: isize, length: usize) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::runtime(
                "narrow() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let size = self.shape[d];
        let start = if start < 0 {
            start + size as isize
        } else {
            start
        };
        if start < 0 || start as usize > size {
            return Err(Error::index(format!(
                "start out of range (expected to be in range of [{}, {size}], but got {start})",
                -(size as isize)
            )));
        }
        let start = start as usize;
        if start + length > size {
            return Err(Error::runtime(format!(
                "start ({start}) + length ({length}) exceeds dimension size ({size})."
            )));
        }
        let mut l = self.clone();
        l.shape[d] = length;
        if length > 0 {
            l.offset += start * self.strides[d];
        }
        Ok(l)
    }

    /// Python-style slice `start:stop:step` along `dim` (bounds clamp).
    pub fn slice(&self, dim: usize, start: isize, stop: isize, step: usize) -> Result<Layout> {
        if step == 0 {
            return Err(Error::value("slice step cannot be zero"));
        }
        let size = self.shape[dim] as isize;
        let clamp = |v: isize| -> isize {
            let v = if v < 0 { v + size } else { v };
            v.clamp(0, size)
        };
        let (start, stop) = (clamp(start), clamp(stop));
        let len = if stop > start {
            ((stop - start) as usize).div_ceil(step)
        } else {
            0
        };
        let mut l = self.clone();
        l.shape[dim] = len;
        if len > 0 {
            l.offset += start as usize * self.strides[dim];
        }
        l.strides[dim] *= step;
        Ok(l)
    }

    /// `select(dim, index)`: drops `dim`, fixing it at `index`.
    pub fn select(&self, dim: isize, index: isize) -> Result<Layout> {
        if self.ndim() == 0 {
            return Err(Error::index(
                "select() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let size = self.shape[d];
        let i = if index < 0 {
            index + size as isize
        } else {
            index
        };
        if i < 0 || i as usize >= size {
            return Err(Error::index(format!(
                "index {index} is out of bounds for dimension {d} with size {size}"
            )));
        }
        let mut l = self.clone();
        l.offset += i as usize * self.strides[d];
        l.shape.remove(d);
        l.strides.remove(d);
        Ok(l)
    }

    /// Removes all size-1 dims, or only the given ones when they are size 1.
    pub fn squeeze(&self, dims: Option<&[isize]>) -> Result<Layout> {
        let mut drop = [false; 64];
        match dims {
            None => {
                for (i, &n) in self.shape.iter().enumerate() {
                    drop[i] = n == 1;
                }
            }
            Some(ds) => {
                for &d in ds {
                    let d = wrap_dim(d, self.ndim())?;
                    if self.ndim() > 0 && self.shape[d] == 1 {
                        drop[d] = true;
                    }
                }
            }
        }
        let mut l = Layout {
            shape: Dims::new(),
            strides: Dims::new(),
            offset: self.offset,
        };
        for ((&n, &s), &dropped) in self.shape.iter().zip(&self.strides).zip(&drop) {
            if !dropped {
                l.shape.push(n);
                l.strides.push(s);
            }
        }
        Ok(l)
    }

    /// Inserts a size-1 dim at `dim` (in `-(ndim+1)..=ndim`).
    pub fn unsqueeze(&self, dim: isize) -> Result<Layout> {
        let d = wrap_dim(dim, self.ndim() + 1)?;
        let stride = if d < self.ndim() {
            self.shape[d] * self.strides[d]
        } else {
            1
        };
        let mut l = self.clone();
        l.shape.insert(d, 1);
        l.strides.insert(d, stride);
        Ok(l)
    }

    /// `diagonal(offset, dim1, dim2)`: the diagonal becomes the last dim.
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Layout> {
        let n = self.ndim();
        if n < 2 {
            return Err(Error::runtime(format!(
                "diagonal dimensions requires ndim larger than 1, got {n}"
            )));
        }
        let (d1, d2) = (wrap_dim(dim1, n)?, wrap_dim(dim2, n)?);
        if d1 == d2 {
            return Err(Error::runtime(format!(
                "diagonal dimensions cannot be identical {dim1}, {dim2}"
            )));
        }
        let (n1, n2) = (self.shape[d1] as isize, self.shape[d2] as isize);
        let len = if offset >= 0 {
            (n1.min(n2 - offset)).max(0)
        } else {
            ((n1 + offset).min(n2)).max(0)
        } as usize;
        let mut off = self.offset;
        if len > 0 {
            if offset >= 0 {
                off += offset as usize * self.strides[d2];
            } else {
                off += (-offset) as usize * self.strides[d1];
            }
        }
        let mut shape = Dims::new();
        let mut strides = Dims::new();
        for i in 0..n {
            if i != d1 && i != d2 {
                shape.push(self.shape[i]);
                strides.push(self.strides[i]);
            }
        }
        shape.push(len);
        strides.push(self.strides[d1] + self.strides[d2]);
        Ok(Layout {
            shape,
            strides,
            offset: off,
        })
    }

    /// `as_strided`: any layout whose elements lie within `storage_len`.
    pub fn as_strided(
        shape: &[usize],
        strides: &[isize],
        offset: usize,
        storage_len: usize,
    ) -> Result<Layout> {
        if shape.len() != strides.len() {
            return Err(Error::runtime(format!(
                "mismatch in length of strides and shape: shape {shape:?}, strides {strides:?}"
            )));
        }
        if strides.iter().any(|&s| s < 0) {
            return Err(Error::runtime(format!(
                "as_strided: Negative strides are not supported at the moment, got strides: {strides:?}"
            )));
        }
        checked_numel(shape)?;
        let l = Layout {
            shape: shape.into(),
            strides: strides.iter().map(|&s| s as usize).collect(),
            offset,
        };
        match l.checked_max_extent() {
            Some(extent) if l.numel() == 0 || extent <= storage_len => Ok(l),
            extent => Err(Error::runtime(format!(
                "setStorage: sizes {shape:?}, strides {strides:?}, storage offset {offset}, requiring a storage size of {} elements are out of bounds for storage of size {storage_len}",
                extent.map_or_else(|| "more than isize::MAX".to_string(), |e| e.to_string())
            ))),
        }
    }

    /// The element offset of a multi-index.
    pub fn offset_of(&self, index: &[usize]) -> usize {
        self.offset
            + index
                .iter()
                .zip(&self.strides)
                .map(|(&i, &s)| i * s)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_of_transpose_needs_copy() {
        let l = Layout::contiguous(&[2, 3]).transpose(0, 1).unwrap();
        assert!(l.view(&[6]).is_err());
        assert!(l.view(&[3, 2]).is_ok());
        assert!(l.is_non_overlapping_and_dense());
        assert!(!l.is_contiguous());
    }

    #[test]
    fn view_splits_and_merges_contiguous_chunks() {
        // (4, 6) with the last dim sliced to 3 columns: strides (6, 1).
        let l = Layout::new(&[4, 3], &[6, 1], 0);
        let v = l.view(&[4, 3, 1]).unwrap();
        assert_eq!(v.strides(), &[6, 1, 1]);
        assert!(l.view(&[12]).is_err());
        let c = Layout::contiguous(&[2, 3, 4]);
        assert_eq!(c.view(&[6, 4]).unwrap().strides(), &[4, 1]);
        assert_eq!(c.view(&[-1]).unwrap().shape(), &[24]);
    }

    #[test]
    fn sizes_whose_product_overflows_are_refused() {
        let big = 1usize << 32;
        assert_eq!(checked_numel(&[big, 1 << 30]).unwrap(), 1 << 62);
        assert!(checked_numel(&[big, big]).is_err());
        // The product leaves isize before it reaches the zero, as torch's.
        assert!(checked_numel(&[big, big, 0]).is_err());
        assert_eq!(checked_numel(&[0, big, big]).unwrap(), 0);
        let one = Layout::contiguous(&[1]);
        let e = one.expand(&[big as isize, big as isize]).unwrap_err();
        assert!(e
            .to_string()
            .contains("numel: integer multiplication overflow"));
        assert!(one.expand(&[1 << 31, 1 << 31]).is_ok());
        assert!(Layout::contiguous(&[4])
            .view(&[big as isize, big as isize, -1])
            .is_err());
        assert!(Layout::as_strided(&[big, big], &[1, 1], 0, 4).is_err());
        // Each stride fits, the extent they reach does not.
        assert!(Layout::as_strided(&[big, 4], &[1 << 40, 1], 0, usize::MAX).is_err());
        assert!(Layout::checked(&[1 << 40], &[1 << 40], 0).is_err());
        assert_eq!(
            Layout::checked(&[3, 0], &[1 << 60, 1 << 60], 5)
                .unwrap()
                .max_extent(),
            5
        );
    }

    #[test]
    fn broadcast_errors_name_sizes() {
        let e = broadcast_shapes(&[2, 3], &[4]).unwrap_err();
        assert!(e.to_string().contains("(3)") && e.to_string().contains("(4)"));
        assert_eq!(broadcast_shapes(&[2, 1], &[3]).unwrap().as_slice(), &[2, 3]);
    }

    #[test]
    fn overlap_detection() {
        assert!(!Layout::new(&[3, 3], &[1, 1], 0).is_non_overlapping());
        assert!(Layout::new(&[3, 3], &[1, 3], 0).is_non_overlapping());
        assert!(!Layout::new(&[3], &[0], 0).is_non_overlapping());
    }
}
