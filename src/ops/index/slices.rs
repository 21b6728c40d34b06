//! index_add, index_copy and index_fill: writes of whole slices chosen by
//! an index.

use super::*;

impl Tensor {
    /// Shared body of index_add_/index_copy_/index_fill_: for each `i`, the
    /// slice `self.select(dim, index[i])` is combined with
    /// `source.select(dim, i)` (or a value).
    pub(super) fn index_slices_(
        &self,
        op: &str,
        dim: isize,
        index: &Tensor,
        source: Option<&Tensor>,
        value: Scalar,
        mode: SliceMode,
    ) -> Result<()> {
        let idx = check_int_index(op, index)?;
        check_write(self)?;
        check_writable(self)?;
        let d = wrap_dim(dim, self.ndim())?;
        let dst = as_1d(self);
        let size = dst.shape()[d];
        let src = match source {
            Some(s) => {
                if s.dtype() != self.dtype() {
                    return Err(Error::runtime(format!(
                        "{op}(): self ({}) and source ({}) must have the same scalar type",
                        self.dtype(),
                        s.dtype()
                    )));
                }
                let s = as_1d(s);
                if s.ndim() != dst.ndim() {
                    return Err(Error::runtime(format!(
                        "{op}(): Source/destination tensor must have same number of dimensions, got source {} and destination {}",
                        fmt_shape(s.shape()),
                        fmt_shape(self.shape())
                    )));
                }
                for k in 0..dst.ndim() {
                    if k != d && s.shape()[k] != dst.shape()[k] {
                        return Err(Error::runtime(format!(
                            "{op}(): source {} and destination {} must match in every dim but {d}",
                            fmt_shape(s.shape()),
                            fmt_shape(self.shape())
                        )));
                    }
                }
                if s.shape()[d] != idx.len() {
                    return Err(Error::runtime(format!(
                        "{op}(): Number of indices ({}) should be equal to source.size(dim) ({})",
                        idx.len(),
                        s.shape()[d]
                    )));
                }
                Some(if s.storage().same(self.storage()) {
                    s.copy()
                } else {
                    s
                })
            }
            None => None,
        };
        let mut rows = Vec::with_capacity(idx.len());
        for &v in &idx {
            let w = if mode == SliceMode::Fill && v < 0 {
                v + size as i64
            } else {
                v
            };
            if w < 0 || w >= size as i64 {
                return Err(Error::index(format!(
                    "{op}(): index {v} is out of bounds for dimension {d} with size {size}"
                )));
            }
            rows.push(w as isize);
        }
        let (rshape, dstr) = drop_dim(dst.layout(), d);
        let dd = dst.strides()[d] as isize;
        let nr: usize = rshape.iter().product();
        if nr > 0 && !rows.is_empty() {
            let reads: Vec<&Tensor> = src.iter().collect();
            let _g = lock(&reads, Some(&dst));
            dispatch!(self.dtype(), T => {
                let p = elem_ptr::<T>(&dst);
                match &src {
                    Some(s) => {
                        let (_, sstr) = drop_dim(s.layout(), d);
                        let sd = s.strides()[d] as isize;
                        let sp = elem_ptr::<T>(s);
                        let addf = <T as IndexAdd>::index_add;
                        let alpha: T = value.to_elem();
                        let scale = scale_fn::<T>();
                        for (i, &r) in rows.iter().enumerate() {
                            // SAFETY: `r` was bounds-checked along `d`; the
                            // walk covers one slice of `dst` and of `s`
                            // (same shapes apart from `d`).
                            unsafe {
                                let q = p.offset(r * dd);
                                let x = sp.offset(i as isize * sd);
                                walk(&rshape, [&dstr, &sstr], 0, nr, |[a, b]| {
                                    let v = *x.offset(b);
                                    let t = q.offset(a);
                                    *t = if mode == SliceMode::Add { addf(*t, scale(v, alpha)) } else { v };
                                });
                            }
                        }
                    }
                    None => {
                        let v: T = value.to_elem();
                        for &r in &rows {
                            // SAFETY: as above, without a source.
                            unsafe {
                                let q = p.offset(r * dd);
                                walk(&rshape, [&dstr], 0, nr, |[a]| *q.offset(a) = v);
                            }
                        }
                    }
                }
            });
        }
        self.bump_version();
        Ok(())
    }
}

derivatives! {
    table FORMULAS("indexing: index_add, index_copy, index_fill") for Tensor;

    /// `index_add(dim, index, source, alpha)`: a copy with `alpha *
    /// source`'s slices added into the slices at `index` (duplicates sum).
    pub fn index_add(&self, dim: isize, index: &Tensor, source: &Tensor, alpha: Scalar) -> Result<Tensor> {
        record "IndexAddBackward0", [self, source];
        compute {
            let o = self.copy();
            o.index_add_(dim, index, source, alpha)?;
            let (idx, sndim) = (index.clone(), source.ndim());
        } => out = o.data();
        save nothing
        // d self = g; d source = alpha * g's slices at `index`.
        backward |ctx, g| {
            let gsrc = if ctx.needs(1) {
                let s = select_for_source(&g[0], dim, &idx, sndim)?;
                Some(s.mul(&Tensor::scalar(alpha).to_dtype(s.dtype()))?)
            } else {
                None
            };
            Ok(vec![Some(g[0].clone()), gsrc])
        };
        // 0-dim operands have no dim to move past a batch dim: their
        // tangents are taken row by row.
        forward batched_if(self.ndim() > 0 && source.ndim() > 0, |t| {
            Ok(vec![Some(t.or_zeros(0, self)?.index_add(
                t.dim(dim),
                index,
                &t.or_zeros(1, source)?,
                alpha,
            )?)])
        });
        batched rows because "the gradient of source is built with index_select on the input's dims";
        inplace index_add_(self; source) |s| s.index_add(dim, index, source, alpha);
            => self.index_slices_("index_add_", dim, index, Some(source), alpha, SliceMode::Add);
    }

    /// `index_copy(dim, index, source)`: a copy with `source`'s slices
    /// written into the slices at `index`.
    pub fn index_copy(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        record "IndexCopyBackward0", [self, source];
        compute {
            let o = self.copy();
            o.index_copy_(dim, index, source)?;
            let (idx, sndim) = (index.clone(), source.ndim());
        } => out = o.data();
        save nothing
        // d self = g with the copied slices zeroed; d source = g's slices
        // at `index`.
        backward |ctx, g| {
            let gs = ctx
                .needs(0)
                .then(|| g[0].index_fill(dim, &idx, Scalar::Int(0)))
                .transpose()?;
            let gsrc = ctx
                .needs(1)
                .then(|| select_for_source(&g[0], dim, &idx, sndim))
                .transpose()?;
            Ok(vec![gs, gsrc])
        };
        forward batched_if(self.ndim() > 0 && source.ndim() > 0, |t| {
            Ok(vec![Some(t.or_zeros(0, self)?.index_copy(
                t.dim(dim),
                index,
                &t.or_zeros(1, source)?,
            )?)])
        });
        batched rows because "the gradients are built with index_fill and index_select on the input's dims";
        inplace index_copy_(self; source) |s| s.index_copy(dim, index, source); {
            if index.dtype() != DType::Int64 {
                return Err(Error::runtime(format!(
                    "index_copy_(): Expected a long tensor for index, but got {}",
                    index.dtype()
                )));
            };
        } => self.index_slices_(
            "index_copy_",
            dim,
            index,
            Some(source),
            Scalar::Int(1),
            SliceMode::Copy,
        );
    }

    /// `index_fill(dim, index, value)`: a copy with the slices at `index`
    /// filled (negative indices wrap).
    pub fn index_fill(&self, dim: isize, index: &Tensor, value: Scalar) -> Result<Tensor> {
        record "IndexFillBackward0", [self];
        compute {
            let o = self.copy();
            o.index_fill_(dim, index, value)?;
            let idx = index.clone();
        } => out = o.data();
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].index_fill(dim, &idx, Scalar::Int(0))?)]);
        forward batched_if(self.ndim() > 0, |t| {
            t.map1(|x| x.index_fill(t.dim(dim), index, Scalar::Int(0)))
        });
        batched rows because "the gradient is built with index_fill on the input's dims";
        inplace index_fill_(self) |s| s.index_fill(dim, index, value); {
            if index.dtype() != DType::Int64 {
                return Err(Error::index(format!(
                    "index_fill_(): Expected a long tensor for index, but got {}",
                    index.dtype()
                )));
            };
        } => self.index_slices_("index_fill_", dim, index, None, value, SliceMode::Fill);
    }
}
