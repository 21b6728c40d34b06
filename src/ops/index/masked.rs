//! masked_fill and masked_select, take and put, nonzero.

use super::*;

derivatives! {
    table FORMULAS("indexing: masked_fill, put") for Tensor;

    /// `masked_fill(mask, value)`: a copy with `value` where the bool
    /// `mask` is true; `self` and `mask` broadcast together.
    pub fn masked_fill(&self, mask: &Tensor, value: Scalar) -> Result<Tensor> {
        before {
            check_mask("masked_fill", mask)?;
        }
        record "MaskedFillBackward0", [self];
        compute {
            let fill_mask = mask.clone();
        } => out = dispatch!(self.dtype(), T => {
            let v: T = value.to_elem();
            map2::<T, bool, T>(self, mask, move |x, m| if m { v } else { x })
        })?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].masked_fill(&fill_mask, Scalar::Int(0))?)]);
        // A mask of more dims than `self` would broadcast against the batch
        // dim of the tangents: those are taken row by row.
        forward batched_if(mask.ndim() <= self.ndim(), |t| {
            t.map1(|x| x.masked_fill(mask, Scalar::Int(0)))
        });
        batched rows because "not declared batched yet (g.masked_fill(mask) should broadcast over a batch dim; untested)";
    }

    /// `masked_fill(mask, value)` with a 0-dim tensor `value`, which gets
    /// the sum of the gradient at the filled places.
    pub fn masked_fill_tensor(&self, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        before {
            check_mask("masked_fill", mask)?;
            if value.ndim() != 0 {
                return Err(Error::runtime(format!(
                    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                    value.ndim()
                )));
            };
        }
        record "MaskedFillBackward1", [self, value];
        compute {
            let fill_mask = mask.clone();
        } => out = {
            let _g = crate::autograd::no_grad();
            self.masked_fill(mask, value.item()?)?
        };
        save nothing
        backward |ctx, g| {
            let kept = g[0].masked_fill(&fill_mask, Scalar::Int(0))?;
            let gv = if ctx.needs(1) {
                Some(g[0].sub(&kept)?.sum(None, false, None)?)
            } else {
                None
            };
            Ok(vec![Some(kept), gv])
        };
        // The tangent: self's where kept, value's where filled.
        forward rows(|t| {
            t.sum1(|i, ti| match i {
                0 => ti.masked_fill(mask, Scalar::Int(0)),
                _ => {
                    let shape = broadcast_shapes(self.shape(), mask.shape())?;
                    Tensor::try_zeros(&shape, ti.dtype())?.masked_fill_tensor(mask, ti)
                }
            })
        }) because "the value's tangent is filled in as a 0-dim value, which a batch of tangents is not";
        batched rows because "the value's gradient sums g over every dim, which would include a batch dim";
    }

    /// `put(index, source, accumulate)`: a copy with `source`'s elements
    /// written at the row-major positions `index` (negative indices wrap;
    /// `accumulate` adds instead).
    pub fn put(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<Tensor> {
        record "PutBackward0", [self, source];
        compute {
            let o = self.copy();
            o.put_(index, source, accumulate)?;
            let (idx, sshape) = (index.clone(), source.shape().to_vec());
        } => out = o.data();
        save nothing
        // d self = g, except at overwritten places; d source = g at
        // `index`, in source's shape.
        backward |ctx, g| {
            let gs = match (ctx.needs(0), accumulate) {
                (false, _) => None,
                (true, true) => Some(g[0].clone()),
                (true, false) => {
                    let zeros = Tensor::try_zeros(idx.shape(), g[0].dtype())?;
                    Some(g[0].put(&idx, &zeros, false)?)
                }
            };
            let gsrc = ctx
                .needs(1)
                .then(|| {
                    g[0].take(&idx)?
                        .reshape(&crate::ops::view::isizes(&sshape))
                })
                .transpose()?;
            Ok(vec![gs, gsrc])
        };
        forward rows(|t| {
            Ok(vec![Some(t.or_zeros(0, self)?.put(
                index,
                &t.or_zeros(1, source)?,
                accumulate,
            )?)])
        }) because "the index addresses the input seen as 1-D, which a batch dim would change";
        batched rows because "the gradients are built with put and take on the input seen as 1-D";
        inplace put_(self; source) |s| s.put(index, source, accumulate);
            => self.put_kernel(index, source, accumulate);
    }
}

impl Tensor {
    /// `masked_fill_(mask, value)`: sets elements where the bool `mask`
    /// (broadcast to this shape) is true. Written out rather than as the
    /// table's in-place form because the mask is checked first.
    pub fn masked_fill_(&self, mask: &Tensor, value: Scalar) -> Result<()> {
        check_mask("masked_fill_", mask)?;
        let _span = crate::trace::inplace_op("aten::masked_fill_", self, &[]);
        if crate::autograd::inplace("masked_fill_", self, &[], |s| s.masked_fill(mask, value))? {
            return Ok(());
        }
        dispatch!(self.dtype(), T => {
            let v: T = value.to_elem();
            apply2::<T, bool>(self, mask, move |x, m| if m { v } else { x })
        })
    }

    /// `masked_fill_(mask, value)` with a 0-dim tensor `value`. Written out
    /// rather than as the table's in-place form because its messages name
    /// the op `masked_fill_`.
    pub fn masked_fill_tensor_(&self, mask: &Tensor, value: &Tensor) -> Result<()> {
        let _span = crate::trace::inplace_op("aten::masked_fill_", self, &[value]);
        if crate::autograd::inplace("masked_fill_", self, &[value], |s| {
            s.masked_fill_tensor(mask, value)
        })? {
            return Ok(());
        }
        self.masked_fill_(mask, value.item()?)
    }

    /// `masked_select(mask)`: the elements where `mask` is true (both
    /// broadcast), as a 1-D tensor in row-major order.
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        if mask.dtype() != DType::Bool {
            return Err(Error::runtime(format!(
                "masked_select: expected BoolTensor for mask, got {}",
                mask.dtype()
            )));
        }
        let shape = broadcast_shapes(self.shape(), mask.shape())?;
        let x = self.broadcast_to(&shape)?;
        let x = if x.ndim() == 0 { x.reshape(&[1])? } else { x };
        let m = as_1d(&mask.broadcast_to(&shape)?);
        x.index(&[TensorIndex::Tensor(m)])
    }

    /// `take(index)`: elements of `self` seen as 1-D (row-major), in the
    /// shape of `index` (int64; negative indices wrap).
    pub fn take(&self, index: &Tensor) -> Result<Tensor> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "take(): Expected a long tensor for index, but got {}",
                index.dtype()
            )));
        }
        let n = self.numel();
        let idx = index.to_vec::<i64>();
        let mut flat = Vec::with_capacity(idx.len());
        for &v in &idx {
            let w = if v < 0 { v + n as i64 } else { v };
            if w < 0 || w >= n as i64 {
                return Err(Error::index(format!(
                    "out of range: tried to access index {v} on a tensor of {n} elements."
                )));
            }
            flat.push(w);
        }
        let src = self.reshape(&[-1])?;
        src.index(&[TensorIndex::Tensor(Tensor::from_slice(
            &flat,
            index.shape(),
        )?)])
    }

    /// The in-place kernel of `put_`, run when `autograd::inplace` left
    /// the write to it.
    fn put_kernel(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<()> {
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "put_(): Expected a long tensor for index, but got {}",
                index.dtype()
            )));
        }
        if source.dtype() != self.dtype() {
            return Err(Error::runtime(format!(
                "put_(): self and source expected to have the same dtype, but got self.dtype = {} and source.dtype = {}",
                self.dtype(),
                source.dtype()
            )));
        }
        if source.numel() != index.numel() {
            return Err(Error::runtime(format!(
                "put_(): Expected source and index to have the same number of elements, but got source.numel() = {}, index.numel() = {}",
                source.numel(),
                index.numel()
            )));
        }
        check_write(self)?;
        check_writable(self)?;
        let n = self.numel();
        let mut offs = Vec::with_capacity(index.numel());
        for v in index.to_vec::<i64>() {
            let w = if v < 0 { v + n as i64 } else { v };
            if w < 0 || w >= n as i64 {
                return Err(Error::index(format!(
                    "out of range: tried to access index {v} on a tensor of {n} elements."
                )));
            }
            // Unravel the row-major position into a storage offset.
            let mut rem = w as usize;
            let mut off = 0usize;
            for k in (0..self.ndim()).rev() {
                off += (rem % self.shape()[k]) * self.strides()[k];
                rem /= self.shape()[k];
            }
            offs.push(off);
        }
        let src = source.contiguous();
        let src = if src.storage().same(self.storage()) {
            src.copy()
        } else {
            src
        };
        {
            let _g = lock(&[&src], Some(self));
            dispatch!(self.dtype(), T => {
                let addf = <T as IndexAdd>::index_add;
                let p = elem_ptr::<T>(self);
                // SAFETY: `src` is contiguous and read-locked.
                let vals = unsafe { crate::kernels::access::slice::<T>(&src) };
                for (&o, &x) in offs.iter().zip(vals) {
                    // SAFETY: `o` is the offset of an in-range element of
                    // `self` (write-locked).
                    unsafe {
                        let q = p.add(o);
                        *q = if accumulate { addf(*q, x) } else { x };
                    }
                }
            });
        }
        self.bump_version();
        Ok(())
    }

    /// `nonzero()`: the indices of nonzero elements as an `(n, ndim)` int64
    /// tensor, in row-major order.
    pub fn nonzero(&self) -> Tensor {
        let (coords, n) = nonzero_coords(self);
        Tensor::from_slice(&coords, &[n, self.ndim()]).expect("n * ndim coordinates")
    }

    /// `nonzero(as_tuple=True)`: one 1-D int64 tensor per dim (a 0-dim
    /// input counts as 1-D).
    pub fn nonzero_tuple(&self) -> Vec<Tensor> {
        let t = as_1d(self);
        let (coords, n) = nonzero_coords(&t);
        let k = t.ndim();
        (0..k)
            .map(|j| Tensor::from_vec((0..n).map(|r| coords[r * k + j]).collect::<Vec<i64>>()))
            .collect()
    }

    /// `argwhere()`: same as `nonzero()`.
    pub fn argwhere(&self) -> Tensor {
        self.nonzero()
    }
}
