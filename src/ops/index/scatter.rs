//! index_select, gather and the scatter family, with their formulas.

use super::*;

derivatives! {
    table FORMULAS("indexing: index_select, gather, scatter, scatter_add") for Tensor;

    /// `index_select(dim, index)`: the slices at `index` (1-D, int64/int32)
    /// along `dim`, copied.
    pub fn index_select(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        record "IndexSelectBackward0", [self];
        compute {
            let (shape, idx) = (self.shape().to_vec(), index.clone());
        } => out = self.index_select_kernel(dim, index)?;
        save nothing
        // d self = zeros with g's slices added at `index`.
        backward |ctx, g| {
            let z = Tensor::try_zeros(&shape, g[0].dtype())?;
            Ok(vec![Some(z.index_add(dim, &idx, &g[0], Scalar::Int(1))?)])
        };
        // A 0-dim input has no dim to move past a batch dim: its tangents
        // are taken row by row.
        forward batched_if(self.ndim() > 0, |t| {
            t.map1(|x| x.index_select(t.dim(dim), index))
        });
        batched rows because "the gradient is built with index_add into zeros of the input's shape";
    }

    /// `gather(dim, index)`: `out[i][j] = self[index[i][j]][j]` (for
    /// dim 0); `index` is int64 with as many dims as `self`.
    pub fn gather(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        record "GatherBackward0", [self];
        compute {
            let (shape, idx) = (self.shape().to_vec(), index.clone());
        } => out = self.gather_kernel(dim, index)?;
        save nothing
        // d self = zeros with g added at `index` (repeats accumulate).
        backward |ctx, g| {
            let z = Tensor::try_zeros(&shape, g[0].dtype())?;
            // A gradient that is itself differentiated goes through the
            // recorded out-of-place op, whose rows batch (the in-place form
            // on the zeros would take a batch of g into z's shape); a plain
            // one is added into the fresh zeros in place, without a copy.
            let graph = crate::autograd::is_grad_enabled() && g[0].requires_grad();
            if graph || crate::autograd::any_tangent(&[&g[0]]) {
                return Ok(vec![Some(z.scatter_add(dim, &idx, &g[0])?)]);
            }
            z.scatter_add_(dim, &idx, &g[0])?;
            Ok(vec![Some(z)])
        };
        forward batched_if(self.ndim() > 0, |t| {
            t.map1(|x| x.gather(t.dim(dim), &batch_index(t, index)?))
        });
        batched rows because "the gradient is built with scatter_add into zeros of the input's shape";
    }

    /// `scatter(dim, index, src)`: a copy with `out[index[i][j]][j] =
    /// src[i][j]` (dim 0); the in-place form writes into `self`.
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        record "ScatterBackward0", [self, src];
        compute {
            let o = self.copy();
            o.scatter_(dim, index, src)?;
            let (idx, sshape) = (index.clone(), src.shape().to_vec());
        } => out = o.data();
        save nothing
        // d self = g with the overwritten places zeroed; d src = g at
        // `index`.
        backward |ctx, g| {
            let gs = ctx
                .needs(0)
                .then(|| g[0].scatter_value(dim, &idx, Scalar::Int(0)))
                .transpose()?;
            let gsrc = ctx
                .needs(1)
                .then(|| gather_for_src(&g[0], dim, &idx, &sshape))
                .transpose()?;
            Ok(vec![gs, gsrc])
        };
        forward batched_if(self.ndim() > 0, |t| {
            Ok(vec![Some(t.or_zeros(0, self)?.scatter(
                t.dim(dim),
                &batch_index(t, index)?,
                &t.or_zeros(1, src)?,
            )?)])
        });
        batched rows because "the gradients use the index as recorded, which has no batch dim";
        inplace scatter_(self; src) |s| s.scatter(dim, index, src);
            => self.scatter_impl("scatter", dim, index, ScatterSrc::Tensor(src), false);
    }

    /// `scatter(dim, index, value)`: a copy with one value written at the
    /// indexed places (in place: `scatter_value_`).
    pub fn scatter_value(&self, dim: isize, index: &Tensor, value: Scalar) -> Result<Tensor> {
        record "ScatterBackward1", [self];
        compute {
            let o = self.copy();
            o.scatter_value_(dim, index, value)?;
            let idx = index.clone();
        } => out = o.data();
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].scatter_value(dim, &idx, Scalar::Int(0))?)]);
        forward batched_if(self.ndim() > 0, |t| {
            t.map1(|x| x.scatter_value(t.dim(dim), &batch_index(t, index)?, Scalar::Int(0)))
        });
        batched rows because "the gradient uses the index as recorded, which has no batch dim";
    }

    /// `scatter_add(dim, index, src)`: like `scatter` but adds, summing
    /// duplicate indices.
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        record "ScatterAddBackward0", [self, src];
        compute {
            let o = self.copy();
            o.scatter_add_(dim, index, src)?;
            let (idx, sshape) = (index.clone(), src.shape().to_vec());
        } => out = o.data();
        save nothing
        // d self = g; d src = g at `index`.
        backward |ctx, g| {
            let gsrc = ctx
                .needs(1)
                .then(|| gather_for_src(&g[0], dim, &idx, &sshape))
                .transpose()?;
            Ok(vec![Some(g[0].clone()), gsrc])
        };
        forward batched_if(self.ndim() > 0, |t| {
            Ok(vec![Some(t.or_zeros(0, self)?.scatter_add(
                t.dim(dim),
                &batch_index(t, index)?,
                &t.or_zeros(1, src)?,
            )?)])
        });
        batched rows because "the gradient of src uses the index as recorded, which has no batch dim";
        inplace scatter_add_(self; src) |s| s.scatter_add(dim, index, src);
            => self.scatter_impl("scatter_add", dim, index, ScatterSrc::Tensor(src), true);
    }
}

/// Checks `0 <= v < size` for every index (one branch-free pass; the
/// first offender is named when there is one).
fn check_all_in_range(idx: &[i64], d: usize, size: usize) -> Result<()> {
    let bad = idx
        .iter()
        .fold(false, |bad, &v| bad | (v < 0) | (v >= size as i64));
    if bad {
        for &v in idx {
            check_range(v, d, size, true)?;
        }
    }
    Ok(())
}

/// For a gather or scatter along the last dim with contiguous operands and
/// an index spanning all of `this`'s leading dims (and `src` of the
/// index's shape): the number of rows, the row length of `this` and of the
/// index. Rows are independent, so they run in parallel.
fn last_dim_rows(
    this: &Tensor,
    d: usize,
    idx: &Tensor,
    src: Option<&Tensor>,
) -> Option<(usize, usize, usize)> {
    let nd = this.ndim();
    let fits = d + 1 == nd
        && this.is_contiguous()
        && idx.is_contiguous()
        && idx.shape()[..d] == this.shape()[..d]
        && src.is_none_or(|s| s.is_contiguous() && s.shape() == idx.shape());
    let w = idx.shape()[d];
    (fits && w > 0).then(|| (idx.numel() / w, this.shape()[d], w))
}

impl Tensor {
    pub(super) fn index_select_kernel(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let idx = check_int_index("index_select", index)?;
        let src = as_1d(self);
        let d = wrap_dim(dim, self.ndim())?;
        let size = src.shape()[d];
        for &v in &idx {
            check_range(v, d, size, false)?;
        }
        let mut indices = vec![TensorIndex::full(); d];
        indices.push(TensorIndex::Tensor(Tensor::from_vec(idx)));
        let out = src.index(&indices)?;
        if self.ndim() == 0 {
            return out.reshape(&[]);
        }
        Ok(out)
    }

    pub(super) fn gather_kernel(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        check_long("gather", index)?;
        let d = wrap_dim(dim, self.ndim())?;
        let (src, idx_t) = (as_1d(self), as_1d(index));
        check_gather_shapes("gather", &src, d, &idx_t, None)?;
        let idx = idx_t.to_vec::<i64>();
        let size = src.shape()[d];
        check_all_in_range(&idx, d, size)?;
        let out = Tensor::empty(index.shape(), self.dtype());
        if out.numel() == 0 {
            return Ok(out);
        }
        if let Some((rows, size_d, w)) = last_dim_rows(&src, d, &idx_t, None) {
            let guard = lock(&[&src], Some(&out));
            dispatch!(self.dtype(), T => {
                let (o, s) = (SyncPtr(elem_ptr::<T>(&out)), SyncPtr(elem_ptr::<T>(&src)));
                for_ranges_weighted(rows, w, |r0, r1| {
                    let (o, s) = (o, s);
                    for r in r0..r1 {
                        for (j, &v) in idx[r * w..(r + 1) * w].iter().enumerate() {
                            // SAFETY: row `r` of the contiguous output and
                            // source; `v` was checked to be below `size_d`.
                            unsafe { *o.0.add(r * w + j) = *s.0.add(r * size_d + v as usize) };
                        }
                    }
                });
            });
            drop(guard);
            return Ok(out);
        }
        let mut ss = signed(src.strides());
        let sd = ss[d];
        ss[d] = 0;
        let os = signed(&contiguous_strides(idx_t.shape()));
        let _g = lock(&[&src], Some(&out));
        dispatch!(self.dtype(), T => {
            let (o, s) = (SyncPtr(elem_ptr::<T>(&out)), SyncPtr(elem_ptr::<T>(&src)));
            let shape = idx_t.shape();
            for_ranges(idx.len(), |start, end| {
                let (o, s) = (o, s);
                walk(shape, [&os, &ss], start, end, |[i, j]| {
                    // SAFETY: `i` enumerates the fresh output (same shape as
                    // the index, contiguous); `j` plus a checked index along
                    // `d` stays inside `src` since index sizes <= src sizes.
                    unsafe { *o.0.offset(i) = *s.0.offset(j + idx[i as usize] as isize * sd) };
                });
            });
        });
        drop(_g);
        Ok(out)
    }

    pub(super) fn scatter_impl(
        &self,
        op: &str,
        dim: isize,
        index: &Tensor,
        src: ScatterSrc<'_>,
        add: bool,
    ) -> Result<()> {
        check_long(op, index)?;
        check_write(self)?;
        check_writable(self)?;
        let d = wrap_dim(dim, self.ndim())?;
        let dst = as_1d(self);
        let idx_t = as_1d(index);
        let src_t = match &src {
            ScatterSrc::Tensor(s) => {
                if s.dtype() != self.dtype() {
                    return Err(Error::runtime(format!(
                        "{op}(): Expected self.dtype to be equal to src.dtype"
                    )));
                }
                let s = if s.storage().same(self.storage()) {
                    s.copy()
                } else {
                    (*s).clone()
                };
                Some(as_1d(&s))
            }
            ScatterSrc::Value(_) => None,
        };
        check_gather_shapes(op, &dst, d, &idx_t, src_t.as_ref())?;
        let idx = idx_t.to_vec::<i64>();
        let size = dst.shape()[d];
        check_all_in_range(&idx, d, size)?;
        let rows = last_dim_rows(&dst, d, &idx_t, src_t.as_ref());
        if let (Some((rows, size_d, w)), Some(s)) = (rows, &src_t) {
            let _g = lock(&[s], Some(&dst));
            dispatch!(self.dtype(), T => {
                let (o, sp) = (SyncPtr(elem_ptr::<T>(&dst)), SyncPtr(elem_ptr::<T>(s)));
                let addf = <T as IndexAdd>::index_add;
                // Each task writes whole rows of `dst` of its own, in index
                // order within a row (as the strided walk below).
                for_ranges_weighted(rows, w, |r0, r1| {
                    let (o, sp) = (o, sp);
                    for r in r0..r1 {
                        for (j, &v) in idx[r * w..(r + 1) * w].iter().enumerate() {
                            // SAFETY: row `r` of the contiguous `dst` (write-
                            // locked) and `src`; `v` was checked to be below
                            // `size_d`.
                            unsafe {
                                let q = o.0.add(r * size_d + v as usize);
                                let x = *sp.0.add(r * w + j);
                                *q = if add { addf(*q, x) } else { x };
                            }
                        }
                    }
                });
            });
        } else if !idx.is_empty() {
            let mut ds = signed(dst.strides());
            let dd = ds[d];
            ds[d] = 0;
            let is = signed(&contiguous_strides(idx_t.shape()));
            let shape = idx_t.shape();
            let n = idx.len();
            let reads: Vec<&Tensor> = src_t.iter().collect();
            let _g = lock(&reads, Some(&dst));
            dispatch!(self.dtype(), T => {
                let addf = <T as IndexAdd>::index_add;
                let p = elem_ptr::<T>(&dst);
                let put = |i: isize, j: isize, x: T| {
                    // SAFETY: `j` plus a checked index along `d` lies in
                    // `dst` (write-locked, non-overlapping).
                    unsafe {
                        let q = p.offset(j + idx[i as usize] as isize * dd);
                        *q = if add { addf(*q, x) } else { x };
                    }
                };
                match (&src, &src_t) {
                    (_, Some(s)) => {
                        let sp = elem_ptr::<T>(s);
                        let sstr = signed(s.strides());
                        // SAFETY: index sizes <= src sizes, so `k` stays
                        // inside `s` (read-locked).
                        walk(shape, [&is, &ds, &sstr], 0, n, |[i, j, k]| put(i, j, unsafe { *sp.offset(k) }));
                    }
                    (ScatterSrc::Value(v), None) => {
                        let x: T = v.to_elem();
                        walk(shape, [&is, &ds], 0, n, |[i, j]| put(i, j, x));
                    }
                    (ScatterSrc::Tensor(_), None) => {}
                }
            });
        }
        self.bump_version();
        Ok(())
    }

    /// `scatter_(dim, index, value)`: writes one value at the indexed places.
    /// Written out rather than as the table's in-place form of
    /// `scatter_value`, because its messages name the op `scatter_`.
    pub fn scatter_value_(&self, dim: isize, index: &Tensor, value: Scalar) -> Result<()> {
        let _span = crate::trace::inplace_op("aten::scatter_", self, &[]);
        if crate::autograd::inplace("scatter_", self, &[], |s| {
            s.scatter_value(dim, index, value)
        })? {
            return Ok(());
        }
        self.scatter_impl("scatter", dim, index, ScatterSrc::Value(value), false)
    }
}
