//! Copying shape operations: concatenation, stacking, flips, rolls,
//! repeats, triangular masks and diagonals.
//!
//! Every result is a new contiguous tensor (version 0). The kernels are
//! strided copies: a destination region (often a view of the fresh output)
//! is filled from a source read through arbitrary, possibly negative,
//! strides (see [`copy_strided`]).
//!
//! The differentiable ops are rows of the derivative table `FORMULAS`
//! (`cat` and `stack`, which record over a list of inputs, record their
//! nodes around the kernel themselves); gradients are written with
//! differentiable ops (slices, flips, sums, diagonals), so higher orders
//! work.

use crate::autograd::{derivatives, Recorder, Tangents};
use crate::kernels::access::{elem_ptr, lock};
use crate::kernels::iter::for_ranges;
use crate::kernels::sync_ptr::SyncPtr;
use crate::tensor::{contiguous_strides, wrap_dim, Layout};
use crate::{dispatch, DType, Element, Error, Result, Tensor};

/// Visits the row-major positions `start..end` of `shape`, calling `f` with
/// each operand's element offset (sum of index times stride, per operand).
pub(crate) fn walk<const K: usize>(
    shape: &[usize],
    strides: [&[isize]; K],
    start: usize,
    end: usize,
    mut f: impl FnMut([isize; K]),
) {
    if start >= end {
        return;
    }
    let nd = shape.len();
    if nd == 0 {
        f([0; K]);
        return;
    }
    // Multi-index of `start`.
    let mut idx = vec![0usize; nd];
    let mut rem = start;
    for d in (0..nd).rev() {
        idx[d] = rem % shape[d];
        rem /= shape[d];
    }
    let mut off = [0isize; K];
    for k in 0..K {
        off[k] = (0..nd).map(|d| idx[d] as isize * strides[k][d]).sum();
    }
    let last = nd - 1;
    let inner = shape[last];
    let mut step = [0isize; K];
    for k in 0..K {
        step[k] = strides[k][last];
    }
    let mut pos = start;
    while pos < end {
        let run = (inner - idx[last]).min(end - pos);
        let mut o = off;
        for _ in 0..run {
            f(o);
            for k in 0..K {
                o[k] += step[k];
            }
        }
        pos += run;
        if pos >= end {
            break;
        }
        // The run always ends at the end of the last dim here: carry.
        for k in 0..K {
            off[k] -= idx[last] as isize * step[k];
        }
        idx[last] = 0;
        let mut d = last;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            for k in 0..K {
                off[k] += strides[k][d];
            }
            if idx[d] < shape[d] {
                break;
            }
            for k in 0..K {
                off[k] -= shape[d] as isize * strides[k][d];
            }
            idx[d] = 0;
        }
    }
}

/// Strides as signed element counts.
pub(crate) fn signed(strides: &[usize]) -> Vec<isize> {
    strides.iter().map(|&s| s as isize).collect()
}

/// `dst[i] = cast(src[i])` over `shape`, split over the pool when large.
///
/// # Safety
/// Every offset reached from `dst`/`src` through `shape` and the strides
/// lies inside locked buffers of the right types; `dst` positions are
/// distinct and do not alias `src`.
pub(crate) unsafe fn copy_strided<T: Element, S: Element>(
    dst: *mut T,
    dst_strides: &[isize],
    src: *const S,
    src_strides: &[isize],
    shape: &[usize],
) {
    let n: usize = shape.iter().product();
    let (d, s) = (SyncPtr(dst), SyncPtr(src as *mut S));
    for_ranges(n, |start, end| {
        let (d, s) = (d, s);
        walk(shape, [dst_strides, src_strides], start, end, |[o, i]| {
            // SAFETY: offsets stay inside the buffers (caller's contract).
            unsafe { *d.0.offset(o) = T::cast_from(*s.0.offset(i)) };
        });
    });
}

/// Copies `src` (same shape, any dtype) into `dst`, a fresh tensor or a
/// view of one that nothing else references, without bumping its version.
pub(crate) fn fill_from(dst: &Tensor, src: &Tensor) -> Result<()> {
    if dst.shape() != src.shape() {
        return Err(Error::runtime(format!(
            "internal copy between shapes {:?} and {:?}",
            dst.shape(),
            src.shape()
        )));
    }
    if dst.numel() == 0 {
        return Ok(());
    }
    let _g = lock(&[src], Some(dst));
    if dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() {
        let isz = dst.dtype().itemsize();
        // SAFETY: both spans of `numel` elements lie in their (locked)
        // storages, and a fresh destination never overlaps the source.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.storage().as_ptr().add(src.offset() * isz),
                dst.storage().as_ptr().add(dst.offset() * isz),
                dst.numel() * isz,
            )
        };
        return Ok(());
    }
    let (ds, ss) = (signed(dst.strides()), signed(src.strides()));
    dispatch!(dst.dtype(), T => dispatch!(src.dtype(), S => {
        // SAFETY: both layouts lie within their locked storages; `dst` is
        // non-overlapping (fresh) and distinct from `src`.
        unsafe { copy_strided::<T, S>(elem_ptr::<T>(dst), &ds, elem_ptr::<S>(src), &ss, dst.shape()) }
    }));
    Ok(())
}

/// Every input's tangent, zeros for those without one.
fn all_or_zeros(t: &Tangents, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, x)| t.or_zeros(i, x))
        .collect()
}

/// Dims of an input as counted in its tangents.
pub(crate) fn tangent_dims(t: &Tangents, dims: &[isize]) -> Vec<isize> {
    dims.iter().map(|&d| t.dim(d)).collect()
}

fn promote_all(tensors: &[Tensor]) -> DType {
    tensors
        .iter()
        .map(|t| t.dtype())
        .reduce(DType::promote)
        .unwrap_or_else(crate::default_dtype)
}

/// Sizes of a tensor as a `[n, ...]` string like torch prints them.
pub(crate) fn fmt_shape(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

impl Tensor {
    /// `cat(tensors, dim)`: concatenation along an existing dim, promoting
    /// dtypes; 1-D tensors of shape `(0,)` are skipped as in torch.
    pub fn cat(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
        let refs: Vec<&Tensor> = tensors.iter().collect();
        let rec = Recorder::new("CatBackward0", &refs);
        let out = Tensor::cat_kernel(tensors, dim)?;
        if rec.active() {
            // Each input's gradient is its slice of g along `dim` (legacy
            // empty inputs get none); the tangent is the tangents (zeros
            // for inputs without one) concatenated.
            let mut pieces: Vec<Option<(usize, usize)>> = Vec::with_capacity(tensors.len());
            let skip = |t: &Tensor| t.ndim() == 1 && t.shape()[0] == 0;
            let d = match tensors.iter().find(|t| !skip(t)) {
                Some(f) => wrap_dim(dim, f.ndim())?,
                None => 0,
            };
            let rec = rec.jvp_batched(|t| {
                let parts: Vec<Tensor> = tensors
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| !skip(x))
                    .map(|(i, x)| t.or_zeros(i, x))
                    .collect::<Result<_>>()?;
                if parts.is_empty() {
                    return Ok(vec![None]);
                }
                Ok(vec![Some(Tensor::cat(&parts, t.dim(d as isize))?)])
            });
            let mut start = 0;
            for t in tensors {
                if skip(t) {
                    pieces.push(None);
                } else {
                    pieces.push(Some((start, t.shape()[d])));
                    start += t.shape()[d];
                }
            }
            rec.finish_simple(&out, move |ctx, g| {
                pieces
                    .iter()
                    .enumerate()
                    .map(|(i, p)| match p {
                        Some((s, len)) if ctx.needs(i) => {
                            Ok(Some(g[0].narrow(d as isize, *s as isize, *len)?))
                        }
                        _ => Ok(None),
                    })
                    .collect()
            })?;
        }
        Ok(out)
    }

    fn cat_kernel(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
        if tensors.is_empty() {
            return Err(Error::runtime(
                "torch.cat(): expected a non-empty list of Tensors",
            ));
        }
        let dt = promote_all(tensors);
        for (i, t) in tensors.iter().enumerate() {
            if t.ndim() == 0 {
                return Err(Error::runtime(format!(
                    "zero-dimensional tensor (at position {i}) cannot be concatenated"
                )));
            }
        }
        let parts: Vec<(usize, &Tensor)> = tensors
            .iter()
            .enumerate()
            .filter(|(_, t)| !(t.ndim() == 1 && t.shape()[0] == 0))
            .collect();
        let Some(&(_, first)) = parts.first() else {
            // Every input is a legacy empty tensor: validate the dim against
            // 1-D, as torch does, and return an empty result.
            wrap_dim(dim, 1)?;
            return Ok(Tensor::empty(&[0], dt));
        };
        let d = wrap_dim(dim, first.ndim())?;
        let mut shape = first.shape().to_vec();
        shape[d] = 0;
        for &(i, t) in &parts {
            if t.ndim() != first.ndim() {
                return Err(Error::runtime(format!(
                    "Tensors must have same number of dimensions: got {} and {}",
                    first.ndim(),
                    t.ndim()
                )));
            }
            for k in 0..first.ndim() {
                if k != d && t.shape()[k] != first.shape()[k] {
                    return Err(Error::runtime(format!(
                        "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                        first.shape()[k],
                        t.shape()[k]
                    )));
                }
            }
            shape[d] += t.shape()[d];
        }
        let out = Tensor::try_empty(&shape, dt)?;
        let mut start = 0usize;
        for &(_, t) in &parts {
            let len = t.shape()[d];
            if len > 0 {
                let mut l = out.layout().clone();
                l = l.narrow(d as isize, start as isize, len)?;
                fill_from(&out.view_with_layout(l), t)?;
            }
            start += len;
        }
        Ok(out)
    }

    /// `stack(tensors, dim)`: joins equally shaped tensors along a new dim.
    pub fn stack(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
        let Some(first) = tensors.first() else {
            return Err(Error::runtime("stack expects a non-empty TensorList"));
        };
        for (i, t) in tensors.iter().enumerate() {
            if t.shape() != first.shape() {
                return Err(Error::runtime(format!(
                    "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                    fmt_shape(first.shape()),
                    fmt_shape(t.shape())
                )));
            }
        }
        let d = wrap_dim(dim, first.ndim() + 1)?;
        let refs: Vec<&Tensor> = tensors.iter().collect();
        let rec = Recorder::new("StackBackward0", &refs);
        let parts: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.unsqueeze(d as isize))
            .collect::<Result<_>>()?;
        let out = Tensor::cat(&parts, d as isize)?;
        if rec.active() {
            let rec = rec.jvp_batched(|t| {
                let parts = all_or_zeros(t, tensors)?;
                Ok(vec![Some(Tensor::stack(&parts, t.dim(d as isize))?)])
            });
            let n = tensors.len();
            // Input i's gradient is g at position i along the new dim.
            rec.finish_simple(&out, move |ctx, g| {
                (0..n)
                    .map(|i| {
                        ctx.needs(i)
                            .then(|| g[0].select(d as isize, i as isize))
                            .transpose()
                    })
                    .collect()
            })?;
        }
        Ok(out)
    }

    /// `hstack(tensors)`: `cat` along dim 0 for 1-D inputs, else dim 1.
    pub fn hstack(tensors: &[Tensor]) -> Result<Tensor> {
        let parts: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.atleast_nd(1))
            .collect::<Result<_>>()?;
        let dim = if parts.iter().all(|t| t.ndim() == 1) {
            0
        } else {
            1
        };
        Tensor::cat(&parts, dim)
    }

    /// `vstack(tensors)`: rows stacked (inputs made at least 2-D).
    pub fn vstack(tensors: &[Tensor]) -> Result<Tensor> {
        let parts: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.atleast_nd(2))
            .collect::<Result<_>>()?;
        Tensor::cat(&parts, 0)
    }

    /// `dstack(tensors)`: depth-wise (dim 2) stacking of at-least-3-D inputs.
    pub fn dstack(tensors: &[Tensor]) -> Result<Tensor> {
        let parts: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.atleast_nd(3))
            .collect::<Result<_>>()?;
        Tensor::cat(&parts, 2)
    }

    /// `atleast_1d`/`2d`/`3d` as views: (n) -> (1, n) and (m, n) -> (m, n, 1)
    /// as torch does.
    pub fn atleast_nd(&self, n: usize) -> Result<Tensor> {
        let s: Vec<isize> = self.shape().iter().map(|&x| x as isize).collect();
        let shape: Vec<isize> = match (n, self.ndim()) {
            (_, k) if k >= n => return self.alias(),
            (1, _) => vec![1],
            (2, 0) => vec![1, 1],
            (2, _) => vec![1, s[0]],
            (_, 0) => vec![1, 1, 1],
            (_, 1) => vec![1, s[0], 1],
            _ => vec![s[0], s[1], 1],
        };
        self.reshape(&shape)
    }

    fn flip_kernel(&self, dims: &[isize]) -> Result<Tensor> {
        let nd = self.ndim();
        let mut flipped = vec![false; nd.max(1)];
        for &d in dims {
            let w = wrap_dim(d, nd)?;
            if flipped[w] {
                return Err(Error::runtime(format!(
                    "dim {w} appears multiple times in the list of dims"
                )));
            }
            flipped[w] = true;
        }
        let out = Tensor::empty(self.shape(), self.dtype());
        if out.numel() == 0 {
            return Ok(out);
        }
        let mut ss = signed(self.strides());
        let mut base = 0isize;
        for k in 0..nd {
            if flipped[k] {
                base += (self.shape()[k] as isize - 1) * ss[k];
                ss[k] = -ss[k];
            }
        }
        let ds = signed(out.strides());
        let _g = lock(&[self], Some(&out));
        dispatch!(self.dtype(), T => {
            // SAFETY: `base` plus the negated strides reach exactly the
            // elements of `self`'s layout (its last element along each
            // flipped dim, walking back); `out` is fresh.
            unsafe {
                copy_strided::<T, T>(elem_ptr::<T>(&out), &ds, elem_ptr::<T>(self).offset(base), &ss, self.shape())
            }
        });
        drop(_g);
        Ok(out)
    }

    /// `fliplr()`: flip along dim 1 (needs at least 2 dims).
    pub fn fliplr(&self) -> Result<Tensor> {
        if self.ndim() < 2 {
            return Err(Error::runtime("Input must be >= 2-d."));
        }
        self.flip(&[1])
    }

    /// `flipud()`: flip along dim 0 (needs at least 1 dim).
    pub fn flipud(&self) -> Result<Tensor> {
        if self.ndim() < 1 {
            return Err(Error::runtime("Input must be >= 1-d."));
        }
        self.flip(&[0])
    }

    /// `roll(shifts, dims)`: elements shifted cyclically along dims; with no
    /// dims the tensor is rolled as if flattened.
    pub fn roll(&self, shifts: &[i64], dims: &[isize]) -> Result<Tensor> {
        if dims.is_empty() {
            self.roll_flat(shifts)
        } else {
            self.roll_dims(shifts, dims)
        }
    }

    fn roll_kernel(&self, shifts: &[i64], dims: &[isize]) -> Result<Tensor> {
        if dims.is_empty() {
            if shifts.len() != 1 {
                return Err(Error::runtime(format!(
                    "shifts and dimensions must align. shifts: {}, dims:0",
                    shifts.len()
                )));
            }
            let shape: Vec<isize> = self.shape().iter().map(|&n| n as isize).collect();
            return self.reshape(&[-1])?.roll_one(shifts[0], 0)?.view(&shape);
        }
        if shifts.len() != dims.len() {
            return Err(Error::runtime(format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            )));
        }
        let mut cur = self.clone();
        for (&s, &d) in shifts.iter().zip(dims) {
            cur = cur.roll_one(s, d)?;
        }
        if cur.same(self) {
            cur = self.copy();
        }
        Ok(cur)
    }

    fn roll_one(&self, shift: i64, dim: isize) -> Result<Tensor> {
        let d = wrap_dim(dim, self.ndim())?;
        let out = Tensor::empty(self.shape(), self.dtype());
        if self.ndim() == 0 {
            fill_from(&out, self)?;
            return Ok(out);
        }
        let n = self.shape()[d];
        if out.numel() == 0 {
            return Ok(out);
        }
        let s = shift.rem_euclid(n as i64) as usize;
        let (di, n_i) = (d as isize, n - s);
        // out[s..] = self[..n-s]; out[..s] = self[n-s..]
        fill_from(
            &out.view_with_layout(out.layout().narrow(di, s as isize, n_i)?),
            &self.narrow(di, 0, n_i)?,
        )?;
        if s > 0 {
            fill_from(
                &out.view_with_layout(out.layout().narrow(di, 0, s)?),
                &self.narrow(di, n_i as isize, s)?,
            )?;
        }
        Ok(out)
    }

    fn repeat_kernel(&self, sizes: &[usize]) -> Result<Tensor> {
        let nd = self.ndim();
        let r = sizes.len();
        if r < nd {
            return Err(Error::runtime(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
            ));
        }
        let lead = r - nd;
        let mut pshape = vec![1usize; lead];
        pshape.extend_from_slice(self.shape());
        let mut pstrides = vec![0isize; lead];
        pstrides.extend(self.strides().iter().map(|&s| s as isize));
        let out_shape: Vec<usize> = sizes
            .iter()
            .zip(&pshape)
            .map(|(&a, &b)| a.checked_mul(b))
            .collect::<Option<_>>()
            .filter(|s: &Vec<usize>| {
                s.iter()
                    .try_fold(1usize, |acc, &n| acc.checked_mul(n))
                    .is_some()
            })
            .ok_or_else(|| {
                Error::runtime(format!(
                    "repeat: the result size overflows for repeats {sizes:?}"
                ))
            })?;
        let out = Tensor::try_empty(&out_shape, self.dtype())?;
        if out.numel() == 0 {
            return Ok(out);
        }
        let ostr = contiguous_strides(&out_shape);
        // Walk (rep_0, size_0, rep_1, size_1, ...).
        let mut shape2 = Vec::with_capacity(2 * r);
        let mut dst2 = Vec::with_capacity(2 * r);
        let mut src2 = Vec::with_capacity(2 * r);
        for i in 0..r {
            shape2.extend([sizes[i], pshape[i]]);
            dst2.extend([(pshape[i] * ostr[i]) as isize, ostr[i] as isize]);
            src2.extend([0, pstrides[i]]);
        }
        let _g = lock(&[self], Some(&out));
        dispatch!(self.dtype(), T => {
            // SAFETY: the source walk only moves along `self`'s own dims;
            // the destination positions enumerate `out` exactly once.
            unsafe { copy_strided::<T, T>(elem_ptr::<T>(&out), &dst2, elem_ptr::<T>(self), &src2, &shape2) }
        });
        drop(_g);
        Ok(out)
    }

    /// `tile(dims)`: like `repeat`, but fewer dims than the tensor has are
    /// padded with leading ones.
    pub fn tile(&self, dims: &[usize]) -> Result<Tensor> {
        let mut reps = vec![1usize; self.ndim().saturating_sub(dims.len())];
        reps.extend_from_slice(dims);
        self.repeat(&reps)
    }

    fn triangle(&self, k: i64, lower: bool, op: &str) -> Result<Tensor> {
        if self.ndim() < 2 {
            return Err(Error::runtime(format!(
                "{op}: input tensor must have at least 2 dimensions"
            )));
        }
        let out = self.copy();
        let nd = self.ndim();
        let (m, n) = (self.shape()[nd - 2], self.shape()[nd - 1]);
        if out.numel() == 0 {
            return Ok(out);
        }
        let _g = lock(&[], Some(&out));
        dispatch!(self.dtype(), T => {
            // SAFETY: `out` is fresh, contiguous and write-locked.
            let data = unsafe { crate::kernels::access::slice_mut::<T>(&out) };
            for mat in data.chunks_mut(m * n) {
                for (i, row) in mat.chunks_mut(n).enumerate() {
                    for (j, v) in row.iter_mut().enumerate() {
                        let diff = j as i64 - i as i64;
                        if (lower && diff > k) || (!lower && diff < k) {
                            *v = T::zero();
                        }
                    }
                }
            }
        });
        drop(_g);
        Ok(out)
    }

    /// `repeat_interleave(repeats, dim)`: each element (or slice along
    /// `dim`) repeated `repeats[i]` times; `repeats` is a 0-dim or 1-D
    /// integer tensor. Without a dim the input is flattened first.
    pub fn repeat_interleave(&self, repeats: &Tensor, dim: Option<isize>) -> Result<Tensor> {
        let (src, d) = match dim {
            Some(d) => (self.clone(), wrap_dim(d, self.ndim())?),
            None => (self.reshape(&[-1])?, 0),
        };
        if repeats.dtype().category() != crate::tensor::Category::Integer {
            return Err(Error::runtime(format!(
                "repeat_interleave: repeats must be an integer tensor, got {}",
                repeats.dtype()
            )));
        }
        if repeats.ndim() > 1 {
            return Err(Error::runtime("repeats must be 0-dim or 1-dim tensor"));
        }
        let n = if src.ndim() == 0 { 1 } else { src.shape()[d] };
        let mut reps = repeats.to_vec::<i64>();
        if reps.len() == 1 && n != 1 {
            reps = vec![reps[0]; n];
        }
        if reps.len() != n {
            return Err(Error::runtime(format!(
                "repeats must have the same size as input along dim, but got repeats.size(0) = {} and input.size({d}) = {n}",
                reps.len()
            )));
        }
        if reps.iter().any(|&r| r < 0) {
            return Err(Error::runtime("repeats can not be negative"));
        }
        let total = reps
            .iter()
            .try_fold(0usize, |acc, &r| acc.checked_add(r as usize))
            .ok_or_else(|| Error::runtime("repeat_interleave: the result size overflows"))?;
        let mut idx: Vec<i64> = Vec::new();
        idx.try_reserve_exact(total).map_err(|_| {
            Error::runtime(format!(
                "can't allocate memory: repeat_interleave needs {total} indices"
            ))
        })?;
        idx.extend(
            reps.iter()
                .enumerate()
                .flat_map(|(i, &r)| std::iter::repeat_n(i as i64, r as usize)),
        );
        let src = if src.ndim() == 0 {
            src.reshape(&[1])?
        } else {
            src
        };
        src.index_select(d as isize, &Tensor::from_vec(idx))
    }
}

derivatives! {
    table FORMULAS("shape: flip, roll, repeat, tril, triu, diag, diag_embed") for Tensor;

    /// `flip(dims)`: a copy with the order of elements reversed along dims.
    pub fn flip(&self, dims: &[isize]) -> Tensor {
        record "FlipBackward0", [self];
        compute {
            let flip_dims = dims.to_vec();
        } => out = self.flip_kernel(dims)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].flip(&flip_dims)?)]);
        forward formula(|t| t.map1(|x| x.flip(&tangent_dims(t, dims))));
        batched rows because "the flipped dims are counted on g without a batch dim";
    }

    /// `roll` along non-empty `dims` (see [`Tensor::roll`]).
    fn roll_dims(&self, shifts: &[i64], dims: &[isize]) -> Tensor {
        record "RollBackward0", [self];
        compute {
            // Rolling back by the opposite shifts.
            let back: Vec<i64> = shifts.iter().map(|&s| s.wrapping_neg()).collect();
            let back_dims = dims.to_vec();
        } => out = self.roll_kernel(shifts, dims)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].roll(&back, &back_dims)?)]);
        forward formula(|t| t.map1(|x| x.roll(shifts, &tangent_dims(t, dims))));
        batched rows because "the rolled dims are counted on g without a batch dim";
    }

    /// `roll` without dims: the tensor rolled as if flattened (see
    /// [`Tensor::roll`]).
    fn roll_flat(&self, shifts: &[i64]) -> Tensor {
        record "RollBackward0", [self];
        compute {
            // Rolling back by the opposite shift.
            let back: Vec<i64> = shifts.iter().map(|&s| s.wrapping_neg()).collect();
        } => out = self.roll_kernel(shifts, &[])?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].roll(&back, &[])?)]);
        forward rows(|t| t.map1(|x| x.roll(shifts, &[])))
            because "a batch of tangents flattened together would roll across rows";
        batched rows because "g is rolled as if flattened, which would mix the rows of a batch";
    }

    /// `repeat(sizes)`: the tensor tiled `sizes[i]` times along each dim
    /// (leading sizes add new dims); torch's repeat, not NumPy's.
    pub fn repeat(&self, sizes: &[usize]) -> Tensor {
        record "RepeatBackward0", [self];
        compute {
            let y = self.repeat_kernel(sizes)?;
            // View g as (rep_0, size_0, rep_1, size_1, ...) and sum the
            // repeat axes (and the leading new dims).
            let lead = sizes.len() - self.ndim();
            let mut split = Vec::with_capacity(2 * sizes.len());
            for (i, &r) in sizes.iter().enumerate() {
                let n = if i < lead { 1 } else { self.shape()[i - lead] };
                split.extend([r as isize, n as isize]);
            };
            let rep_axes: Vec<isize> = (0..sizes.len()).map(|i| 2 * i as isize).collect();
            let shape = super::view::isizes(self.shape());
        } => out = y;
        save nothing
        backward |ctx, g| {
            let s = g[0].reshape(&split)?.sum(Some(&rep_axes), false, None)?;
            Ok(vec![Some(s.reshape(&shape)?)])
        };
        // New leading dims of the tangent go after a batch dim.
        forward formula(|t| {
            t.map1(|x| match t.batch() {
                Some(_) => {
                    let mut padded = vec![1usize; sizes.len().saturating_sub(self.ndim())];
                    padded.extend_from_slice(self.shape());
                    let reps: Vec<usize> =
                        std::iter::once(1).chain(sizes.iter().copied()).collect();
                    x.reshape(&super::view::isizes(&t.shape(&padded)))?
                        .repeat(&reps)
                }
                None => x.repeat(sizes),
            })
        });
        batched rows because "g is reshaped to the output's (repeat, size) pairs, which have no batch dim";
    }

    /// `tril(diagonal)`: zeroes elements above the `diagonal`-th diagonal of
    /// the last two dims.
    pub fn tril(&self, diagonal: i64) -> Tensor {
        record "TrilBackward0", [self];
        compute => out = self.triangle(diagonal, true, "tril")?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].tril(diagonal)?)]);
        forward formula(|t| t.map1(|x| x.tril(diagonal)));
        batched rows because "not declared batched (tril of g on its last two dims would be)";
        inplace tril_(self) |s| s.tril(diagonal); {
            let r = self.tril(diagonal)?;
        } => self.copy_(&r);
    }

    /// `triu(diagonal)`: zeroes elements below the `diagonal`-th diagonal.
    pub fn triu(&self, diagonal: i64) -> Tensor {
        record "TriuBackward0", [self];
        compute => out = self.triangle(diagonal, false, "triu")?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].triu(diagonal)?)]);
        forward formula(|t| t.map1(|x| x.triu(diagonal)));
        batched rows because "not declared batched (triu of g on its last two dims would be)";
        inplace triu_(self) |s| s.triu(diagonal); {
            let r = self.triu(diagonal)?;
        } => self.copy_(&r);
    }

    /// `diag(diagonal)`: a 1-D tensor becomes a square matrix with it on the
    /// given diagonal; a 2-D tensor gives a copy of that diagonal.
    pub fn diag(&self, diagonal: i64) -> Tensor {
        before {
            // A 2-D input records the diagonal view and its copy.
            match self.ndim() {
                1 => {}
                2 => return Ok(self.diagonal(diagonal as isize, 0, 1)?.copy()),
                k => {
                    return Err(Error::runtime(format!(
                        "diag(): Supports 1D or 2D tensors. Got {k}D"
                    )))
                }
            };
        }
        record "DiagEmbedBackward0", [self];
        compute {
            let m = square_side(self.shape()[0], diagonal)?;
            let y = Tensor::zeros(&[m, m], self.dtype());
            let dv = y.view_with_layout(y.layout().diagonal(diagonal as isize, 0, 1)?);
            fill_from(&dv, self)?;
            let k = diagonal as isize;
        } => out = y;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].diagonal(k, 0, 1)?)]);
        forward formula(|t| t.map1(|x| x.diag_embed(diagonal, -2, -1)));
        batched rows because "the diagonal is taken on dims 0 and 1 of g, which a batch dim would shift";
    }

    /// `diag_embed(offset, dim1, dim2)`: the last dim becomes the diagonal
    /// of new (dim1, dim2) planes, zeros elsewhere.
    pub fn diag_embed(&self, offset: i64, dim1: isize, dim2: isize) -> Tensor {
        before {
            if self.ndim() == 0 {
                return Err(Error::runtime(
                    "diag_embed(): input must have at least 1 dimension, got a 0-dim tensor",
                ));
            };
            let nd = self.ndim() + 1;
            let (d1, d2) = (wrap_dim(dim1, nd)?, wrap_dim(dim2, nd)?);
            if d1 == d2 {
                return Err(Error::runtime(format!(
                    "diagonal dimensions cannot be identical {dim1}, {dim2}"
                )));
            };
            let n = self.shape()[self.ndim() - 1];
            let m = square_side(n, offset)?;
            let mut shape: Vec<usize> = self.shape()[..self.ndim() - 1].to_vec();
            let (lo, hi) = (d1.min(d2), d1.max(d2));
            shape.insert(lo, m);
            shape.insert(hi, m);
        }
        record "DiagEmbedBackward0", [self];
        compute {
            let y = Tensor::zeros(&shape, self.dtype());
            let l = y
                .layout()
                .diagonal(offset as isize, d1 as isize, d2 as isize)?;
            fill_from(&y.view_with_layout(l), self)?;
        } => out = y;
        save nothing
        // The diagonal view puts the diagonal last, as the input had it.
        backward |ctx, g| Ok(vec![Some(g[0].diagonal(
            offset as isize,
            d1 as isize,
            d2 as isize,
        )?)]);
        forward formula(|t| {
            t.map1(|x| x.diag_embed(offset, t.dim(d1 as isize), t.dim(d2 as isize)))
        });
        batched rows because "the diagonal's dims are counted on g without a batch dim";
    }
}

/// `n + |offset|`, refused when a square of that side cannot be addressed.
fn square_side(n: usize, offset: i64) -> Result<usize> {
    usize::try_from(offset.unsigned_abs())
        .ok()
        .and_then(|k| n.checked_add(k))
        .filter(|&m| {
            m.checked_mul(m)
                .is_some_and(|mm| mm <= isize::MAX as usize / 8)
        })
        .ok_or_else(|| Error::runtime(format!("diagonal offset {offset} is too large")))
}

/// Dims of a layout without `dim` (shape and signed strides).
pub(crate) fn drop_dim(l: &Layout, dim: usize) -> (Vec<usize>, Vec<isize>) {
    let mut shape = l.shape().to_vec();
    let mut strides = signed(l.strides());
    if dim < shape.len() {
        shape.remove(dim);
        strides.remove(dim);
    }
    (shape, strides)
}
