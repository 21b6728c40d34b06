//! `index` and `index_put` (what `t[...]` and `t[...] = v` do), with their
//! formulas.

use super::*;

impl Tensor {
    /// `self[indices]`: a view for basic indices, a copy when any index is
    /// a tensor (NumPy/torch semantics).
    pub fn index(&self, indices: &[TensorIndex]) -> Result<Tensor> {
        let plan = self.plan(indices)?;
        let recording = (crate::autograd::is_grad_enabled() && self.requires_grad())
            || crate::autograd::fw_grad(self).is_some();
        if plan.adv.is_empty() {
            if recording {
                return self.basic_index_recorded(indices);
            }
            return Ok(self.view_with_layout(plan.view));
        }
        let rec = Recorder::new("IndexBackward0", &[self]).jvp(|t| t.map1(|x| x.index(indices)));
        let out = self.gather_indexed(&plan)?;
        if rec.active() {
            let shape = self.shape().to_vec();
            let indices = indices.to_vec();
            // d self = zeros with g added at the indexed places (repeated
            // indices accumulate).
            rec.finish_simple(&out, move |_, g| {
                let z = Tensor::try_zeros(&shape, g[0].dtype())?;
                Ok(vec![Some(z.index_put(&indices, &g[0], true)?)])
            })?;
        }
        Ok(out)
    }

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

    /// `self[indices] = values` (`accumulate` adds instead, summing
    /// duplicates). Values broadcast to the indexed shape and are cast to
    /// this tensor's dtype. Bumps the version counter.
    pub fn index_put_(
        &self,
        indices: &[TensorIndex],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<()> {
        if crate::autograd::inplace("index_put_", self, &[values], |s| {
            s.index_put(indices, values, accumulate)
        })? {
            return Ok(());
        }
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
                let add = add_fn::<T>();
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

    /// `index_put(indices, values, accumulate)`: out-of-place form.
    pub fn index_put(
        &self,
        indices: &[TensorIndex],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<Tensor> {
        let rec = Recorder::new("IndexPutBackward0", &[self, values]).jvp(|t| {
            let v = match t.get(1) {
                Some(v) => v.clone(),
                None => Tensor::try_zeros(&[], values.dtype())?,
            };
            Ok(vec![Some(
                t.or_zeros(0, self)?.index_put(indices, &v, accumulate)?,
            )])
        });
        let out = self.copy();
        out.index_put_(indices, values, accumulate)?;
        let out = out.data();
        if rec.active() {
            let (n0, n1) = (rec.needs(0), rec.needs(1));
            let indices = indices.to_vec();
            let vshape = values.shape().to_vec();
            rec.finish_simple(&out, move |_, g| {
                let g = &g[0];
                // d self = g, except at overwritten places.
                let gs = match (n0, accumulate) {
                    (false, _) => None,
                    (true, true) => Some(g.clone()),
                    (true, false) => {
                        let zero = Tensor::try_zeros(&[], g.dtype())?;
                        Some(g.index_put(&indices, &zero, false)?)
                    }
                };
                // d values = g at the indexed places, summed over broadcasting.
                let gv = if n1 {
                    Some(sum_to_indexed(&g.index(&indices)?, &vshape)?)
                } else {
                    None
                };
                Ok(vec![gs, gv])
            })?;
        }
        Ok(out)
    }
}
