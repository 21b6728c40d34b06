//! `index` and `index_put` (what `t[...]` and `t[...] = v` do), with their
//! formulas.

use super::*;

derivatives! {
    table FORMULAS("indexing: index, index_put") for Tensor;

    /// `self[indices]`: a view for basic indices, a copy when any index is
    /// a tensor (NumPy/torch semantics).
    pub fn index(&self, indices: &[TensorIndex]) -> Result<Tensor> {
        before {
            let plan = self.plan(indices)?;
            if plan.adv.is_empty() {
                let recording = (crate::autograd::is_grad_enabled() && self.requires_grad())
                    || crate::autograd::fw_grad(self).is_some();
                if recording {
                    return self.basic_index_recorded(indices);
                }
                return Ok(self.view_with_layout(plan.view));
            };
        }
        record "IndexBackward0", [self];
        compute {
            let shape = self.shape().to_vec();
            let kept = indices.to_vec();
        } => out = self.gather_indexed(&plan)?;
        save nothing
        // d self = zeros with g added at the indexed places (repeated
        // indices accumulate).
        backward |ctx, g| {
            let z = Tensor::try_zeros(&shape, g[0].dtype())?;
            Ok(vec![Some(z.index_put(&kept, &g[0], true)?)])
        };
        forward rows(|t| t.map1(|x| x.index(indices)))
            because "indices address the input's dims; non-adjacent advanced indices put their dims first, before a batch dim";
        batched rows because "the gradient is built with index_put on the input's shape";
    }

    /// `index_put(indices, values, accumulate)`: `self[indices] = values`
    /// on a copy (`accumulate` adds instead, summing duplicates). Values
    /// broadcast to the indexed shape and are cast to this tensor's dtype.
    /// The in-place form bumps the version counter.
    pub fn index_put(&self, indices: &[TensorIndex], values: &Tensor, accumulate: bool) -> Result<Tensor> {
        record "IndexPutBackward0", [self, values];
        compute {
            let o = self.copy();
            o.index_put_(indices, values, accumulate)?;
            let kept = indices.to_vec();
            let vshape = values.shape().to_vec();
        } => out = o.data();
        save nothing
        backward |ctx, g| {
            let g = &g[0];
            // d self = g, except at overwritten places.
            let gs = match (ctx.needs(0), accumulate) {
                (false, _) => None,
                (true, true) => Some(g.clone()),
                (true, false) => {
                    let zero = Tensor::try_zeros(&[], g.dtype())?;
                    Some(g.index_put(&kept, &zero, false)?)
                }
            };
            // d values = g at the indexed places, summed over broadcasting.
            let gv = if ctx.needs(1) {
                Some(sum_to_indexed(&g.index(&kept)?, &vshape)?)
            } else {
                None
            };
            Ok(vec![gs, gv])
        };
        forward rows(|t| {
            let v = match t.get(1) {
                Some(v) => v.clone(),
                None => Tensor::try_zeros(&[], values.dtype())?,
            };
            Ok(vec![Some(
                t.or_zeros(0, self)?.index_put(indices, &v, accumulate)?,
            )])
        }) because "the indices address the input's dims, not a leading batch dim";
        batched rows because "the gradients are built with index_put and index on the input's dims";
        inplace index_put_(self; values) |s| s.index_put(indices, values, accumulate);
            => self.index_put_kernel(indices, values, accumulate);
    }
}

impl Tensor {
    /// Basic indexing as a chain of recorded views (select, slice,
    /// unsqueeze), as torch records it; indices were already validated.
    pub(super) fn basic_index_recorded(&self, indices: &[TensorIndex]) -> Result<Tensor> {
        let consumed = indices
            .iter()
            .filter(|i| matches!(i, TensorIndex::Int(_) | TensorIndex::Slice { .. }))
            .count();
        let clampi = |v: i64| v.clamp(isize::MIN as i64, isize::MAX as i64) as isize;
        let mut cur: Option<Tensor> = None;
        let mut d = 0isize;
        for ix in indices {
            let t = cur.as_ref().unwrap_or(self);
            match ix {
                TensorIndex::Int(i) => cur = Some(t.select(d, *i as isize)?),
                TensorIndex::Slice { start, stop, step } => {
                    cur = Some(t.slice(
                        d,
                        start.map_or(0, clampi),
                        stop.map_or(isize::MAX, clampi),
                        *step as isize,
                    )?);
                    d += 1;
                }
                TensorIndex::NewAxis => {
                    cur = Some(t.unsqueeze(d)?);
                    d += 1;
                }
                TensorIndex::Ellipsis => d += (self.ndim() - consumed) as isize,
                TensorIndex::Tensor(_) => unreachable!("basic indices only"),
            }
        }
        match cur {
            Some(t) => Ok(t),
            None => self.alias(),
        }
    }

    /// The copy made by advanced indexing (no recording).
    pub(super) fn gather_indexed(&self, plan: &Plan) -> Result<Tensor> {
        let g = Tensor::gather_plan(plan)?;
        let out = Tensor::empty(&g.result_shape(), self.dtype());
        if out.numel() == 0 {
            return Ok(out);
        }
        let (bstr, rstr_out) = g.split(&signed(out.strides()));
        let dst_off = positions(&g.bshape, &bstr);
        let nr: usize = g.rshape.iter().product();
        let _g = lock(&[self], Some(&out));
        let delta = plan.view.offset() as isize - self.offset() as isize;
        dispatch!(self.dtype(), T => {
            let (o, s) = (SyncPtr(elem_ptr::<T>(&out)), SyncPtr(elem_ptr::<T>(self)));
            let body = |start: usize, end: usize| {
                let (o, s) = (o, s);
                for (&od, &os) in dst_off[start..end].iter().zip(&g.offsets[start..end]) {
                    // SAFETY: offsets were bounds-checked against the view,
                    // which lies within `self`'s storage; `out` positions
                    // are distinct per (b, r).
                    unsafe {
                        let dst = o.0.offset(od);
                        let src = s.0.offset(delta + os);
                        walk(&g.rshape, [&rstr_out, &g.rstrides], 0, nr, |[i, j]| {
                            *dst.offset(i) = *src.offset(j);
                        });
                    }
                }
            };
            for_ranges_weighted(g.offsets.len(), nr, body);
        });
        drop(_g);
        Ok(out)
    }

    /// The in-place kernel of `index_put_`, run when `autograd::inplace`
    /// left the write to it.
    fn index_put_kernel(
        &self,
        indices: &[TensorIndex],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<()> {
        let plan = self.plan(indices)?;
        if plan.adv.is_empty() {
            let view = self.view_with_layout(plan.view);
            let v = strip_leading_ones(values, view.ndim());
            check_value_shape(values, &v, view.shape())?;
            if accumulate {
                return view.add_(&v.to_dtype(self.dtype()));
            }
            return view.copy_(&v);
        }
        check_write(self)?;
        check_writable(self)?;
        let g = Tensor::gather_plan(&plan)?;
        let shape = g.result_shape();
        let v = strip_leading_ones(values, shape.len());
        check_value_shape(values, &v, &shape)?;
        let mut v = v.to_dtype(self.dtype());
        if v.storage().same(self.storage()) {
            v = v.copy();
        }
        let vb = v.layout().broadcast_strides(&shape)?;
        let (bstr_v, rstr_v) = g.split(&signed(&vb));
        let src_off = positions(&g.bshape, &bstr_v);
        let nr: usize = g.rshape.iter().product();
        if nr > 0 && !g.offsets.is_empty() {
            let _g = lock(&[&v], Some(self));
            let delta = plan.view.offset() as isize - self.offset() as isize;
            dispatch!(self.dtype(), T => {
                let add = <T as IndexAdd>::index_add;
                let (d, s) = (elem_ptr::<T>(self), elem_ptr::<T>(&v));
                for (b, &off) in g.offsets.iter().enumerate() {
                    // SAFETY: offsets were bounds-checked against the view
                    // of `self` (write-locked); value offsets follow its
                    // broadcast layout; `v` does not share `self`'s memory.
                    unsafe {
                        let dst = d.offset(delta + off);
                        let src = s.offset(src_off[b]);
                        walk(&g.rshape, [&g.rstrides, &rstr_v], 0, nr, |[i, j]| {
                            let x = *src.offset(j);
                            let p = dst.offset(i);
                            *p = if accumulate { add(*p, x) } else { x };
                        });
                    }
                }
            });
        }
        self.bump_version();
        Ok(())
    }
}
