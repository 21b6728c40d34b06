//! masked_fill and masked_select, take and put, nonzero.

use super::*;

impl Tensor {
    /// `masked_fill_(mask, value)`: sets elements where the bool `mask`
    /// (broadcast to this shape) is true.
    pub fn masked_fill_(&self, mask: &Tensor, value: Scalar) -> Result<()> {
        check_mask("masked_fill_", mask)?;
        if crate::autograd::inplace("masked_fill_", self, &[], |s| s.masked_fill(mask, value))? {
            return Ok(());
        }
        dispatch!(self.dtype(), T => {
            let v: T = value.to_elem();
            apply2::<T, bool>(self, mask, move |x, m| if m { v } else { x })
        })
    }

    /// `masked_fill(mask, value)`: out-of-place; `self` and `mask`
    /// broadcast together.
    pub fn masked_fill(&self, mask: &Tensor, value: Scalar) -> Result<Tensor> {
        check_mask("masked_fill", mask)?;
        // A mask of more dims than `self` would broadcast against a batch
        // dim of the tangent.
        let rec = jvp_if_batched(
            Recorder::new("MaskedFillBackward0", &[self]),
            mask.ndim() <= self.ndim(),
            |t| t.map1(|x| x.masked_fill(mask, Scalar::Int(0))),
        );
        let out = dispatch!(self.dtype(), T => {
            let v: T = value.to_elem();
            map2::<T, bool, T>(self, mask, move |x, m| if m { v } else { x })
        })?;
        if rec.active() {
            let mask = mask.clone();
            rec.finish_simple(&out, move |_, g| {
                Ok(vec![Some(g[0].masked_fill(&mask, Scalar::Int(0))?)])
            })?;
        }
        Ok(out)
    }

    /// `masked_fill(mask, value)` with a 0-dim tensor `value`, which gets
    /// the sum of the gradient at the filled places.
    pub fn masked_fill_tensor(&self, mask: &Tensor, value: &Tensor) -> Result<Tensor> {
        check_mask("masked_fill", mask)?;
        if value.ndim() != 0 {
            return Err(Error::runtime(format!(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                value.ndim()
            )));
        }
        // The tangent: self's where kept, value's where filled.
        let rec = Recorder::new("MaskedFillBackward1", &[self, value]).jvp(|t| {
            t.sum1(|i, ti| match i {
                0 => ti.masked_fill(mask, Scalar::Int(0)),
                _ => {
                    let shape = broadcast_shapes(self.shape(), mask.shape())?;
                    Tensor::try_zeros(&shape, ti.dtype())?.masked_fill_tensor(mask, ti)
                }
            })
        });
        let out = {
            let _g = crate::autograd::no_grad();
            self.masked_fill(mask, value.item()?)?
        };
        if rec.active() {
            let (n1, mask) = (rec.needs(1), mask.clone());
            rec.finish_simple(&out, move |_, g| {
                let kept = g[0].masked_fill(&mask, Scalar::Int(0))?;
                let gv = if n1 {
                    Some(g[0].sub(&kept)?.sum(None, false, None)?)
                } else {
                    None
                };
                Ok(vec![Some(kept), gv])
            })?;
        }
        Ok(out)
    }

    /// `masked_fill_(mask, value)` with a 0-dim tensor `value`.
    pub fn masked_fill_tensor_(&self, mask: &Tensor, value: &Tensor) -> Result<()> {
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

    /// `put_(index, source, accumulate)`: writes `source`'s elements at the
    /// row-major positions `index` of `self` (negative indices wrap).
    pub fn put_(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<()> {
        if crate::autograd::inplace("put_", self, &[source], |s| {
            s.put(index, source, accumulate)
        })? {
            return Ok(());
        }
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
                let addf = add_fn::<T>();
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

    /// `put(index, source, accumulate)`: out-of-place `put_`.
    pub fn put(&self, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<Tensor> {
        let rec = Recorder::new("PutBackward0", &[self, source]).jvp(|t| {
            Ok(vec![Some(t.or_zeros(0, self)?.put(
                index,
                &t.or_zeros(1, source)?,
                accumulate,
            )?)])
        });
        let out = self.copy();
        out.put_(index, source, accumulate)?;
        let out = out.data();
        if rec.active() {
            let (n0, n1) = (rec.needs(0), rec.needs(1));
            let (index, sshape) = (index.clone(), source.shape().to_vec());
            // d self = g, except at overwritten places; d source = g at
            // `index`, in source's shape.
            rec.finish_simple(&out, move |_, g| {
                let gs = match (n0, accumulate) {
                    (false, _) => None,
                    (true, true) => Some(g[0].clone()),
                    (true, false) => {
                        let zeros = Tensor::try_zeros(index.shape(), g[0].dtype())?;
                        Some(g[0].put(&index, &zeros, false)?)
                    }
                };
                let gsrc = n1
                    .then(|| {
                        g[0].take(&index)?
                            .reshape(&crate::ops::view::isizes(&sshape))
                    })
                    .transpose()?;
                Ok(vec![gs, gsrc])
            })?;
        }
        Ok(out)
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
