//! Indexing: NumPy/torch-style `index` / `index_put_` (what Python's
//! `t[...]` and `t[...] = v` do), and the index-driven ops: index_select,
//! gather, scatter, index_add/copy/fill, masked_fill/select, take, put_,
//! nonzero.
//!
//! Basic indices (ints, slices with positive steps, new axes, an ellipsis)
//! only change the layout, so `index` returns a view. Integer tensors and
//! boolean masks are advanced indices: they are broadcast together and
//! gather into a copy. As in torch, ints are applied as `select` first, and
//! the advanced dims of the result go in place of the indexed dims when
//! those are adjacent, else first.

use super::access::{elem_ptr, lock};
use super::binary::Arith;
use super::iter::{apply2, check_writable, for_ranges, map2};
use super::shape::{drop_dim, fmt_shape, signed, walk};
use super::sync_ptr::SyncPtr;
use super::view::jvp_if_batched;
use crate::autograd::{sum_to, Recorder, Tangents};
use crate::tensor::{broadcast_shapes, contiguous_strides, wrap_dim, Layout};
use crate::{dispatch, DType, Element, Error, Result, Scalar, Tensor};

/// One component of an index expression (`t[a, b, ...]`).
#[derive(Clone, Debug)]
pub enum TensorIndex {
    /// A single position (negative counts from the end); removes the dim.
    Int(i64),
    /// `start:stop:step`; `None` bounds mean the ends, `step` must be > 0.
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
    },
    /// `None`: inserts a dim of size 1.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
    /// An int64/int32 index tensor or a bool mask (advanced indexing).
    Tensor(Tensor),
}

impl TensorIndex {
    /// The full slice `:`.
    pub fn full() -> TensorIndex {
        TensorIndex::Slice {
            start: None,
            stop: None,
            step: 1,
        }
    }
}

/// Indexing after the basic indices were applied.
struct Plan {
    /// The view of `self` after ints, slices, new axes and ellipsis.
    view: Layout,
    /// Advanced indices: (dim in `view`, dim of the original tensor for
    /// messages, int index tensor).
    adv: Vec<(usize, usize, Tensor)>,
}

/// Element offsets (into the view) selected by the advanced indices, and
/// how the result dims are arranged.
struct Gather {
    /// Broadcast shape of the index tensors.
    bshape: Vec<usize>,
    /// For each position of `bshape` (row-major), the element offset
    /// relative to the view's offset.
    offsets: Vec<isize>,
    /// Shape and view strides of the dims not advanced-indexed, in order.
    rshape: Vec<usize>,
    rstrides: Vec<isize>,
    /// Position in the result of the first broadcast dim (0 when the
    /// advanced dims were not adjacent).
    bstart: usize,
}

impl Gather {
    /// The full result shape.
    fn result_shape(&self) -> Vec<usize> {
        let mut s = self.rshape.clone();
        for (i, &b) in self.bshape.iter().enumerate() {
            s.insert(self.bstart + i, b);
        }
        s
    }

    /// Splits strides over the result shape into (broadcast part, rest).
    fn split(&self, strides: &[isize]) -> (Vec<isize>, Vec<isize>) {
        let nb = self.bshape.len();
        let b = strides[self.bstart..self.bstart + nb].to_vec();
        let mut r = strides[..self.bstart].to_vec();
        r.extend_from_slice(&strides[self.bstart + nb..]);
        (b, r)
    }
}

fn index_dtype_error() -> Error {
    Error::index("tensors used as indices must be long, int, byte or bool tensors")
}

impl Tensor {
    fn plan(&self, indices: &[TensorIndex]) -> Result<Plan> {
        let nd = self.ndim();
        let mut consumed = 0usize;
        let mut ellipses = 0;
        for ix in indices {
            match ix {
                TensorIndex::Int(_) | TensorIndex::Slice { .. } => consumed += 1,
                TensorIndex::Ellipsis => ellipses += 1,
                TensorIndex::NewAxis => {}
                TensorIndex::Tensor(t) => match t.dtype() {
                    DType::Bool => consumed += t.ndim(),
                    DType::Int32 | DType::Int64 => consumed += 1,
                    _ => return Err(index_dtype_error()),
                },
            }
        }
        if ellipses > 1 {
            return Err(Error::index(
                "an index can only have a single ellipsis ('...')",
            ));
        }
        if consumed > nd {
            if nd == 0 && indices.iter().any(|i| matches!(i, TensorIndex::Int(_))) {
                return Err(Error::index(
                    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
                ));
            }
            return Err(Error::index(format!(
                "too many indices for tensor of dimension {nd}"
            )));
        }
        let mut view = self.layout().clone();
        let mut adv = Vec::new();
        let mut d = 0usize; // dim in `view`
        let mut orig = 0usize; // dim in `self`
        for ix in indices {
            match ix {
                TensorIndex::Int(i) => {
                    let size = view.shape()[d];
                    let w = if *i < 0 { *i + size as i64 } else { *i };
                    if w < 0 || w >= size as i64 {
                        return Err(Error::index(format!(
                            "index {i} is out of bounds for dimension {orig} with size {size}"
                        )));
                    }
                    view = view.select(d as isize, w as isize)?;
                    orig += 1;
                }
                TensorIndex::Slice { start, stop, step } => {
                    if *step <= 0 {
                        return Err(if *step == 0 {
                            Error::value("slice step cannot be zero")
                        } else {
                            Error::value("step must be greater than zero")
                        });
                    }
                    let clampi = |v: i64| v.clamp(isize::MIN as i64, isize::MAX as i64) as isize;
                    view = view.slice(
                        d,
                        start.map_or(0, clampi),
                        stop.map_or(isize::MAX, clampi),
                        *step as usize,
                    )?;
                    d += 1;
                    orig += 1;
                }
                TensorIndex::NewAxis => {
                    view = view.unsqueeze(d as isize)?;
                    d += 1;
                }
                TensorIndex::Ellipsis => {
                    let fill = nd - consumed;
                    d += fill;
                    orig += fill;
                }
                TensorIndex::Tensor(t) if t.dtype() == DType::Bool => {
                    if t.ndim() == 0 {
                        // A scalar mask: a new dim of size 1 (true) or 0.
                        view = view.unsqueeze(d as isize)?;
                        let idx: Vec<i64> = if t.item()?.to_bool() { vec![0] } else { vec![] };
                        adv.push((d, orig, Tensor::from_vec(idx)));
                        d += 1;
                        continue;
                    }
                    for j in 0..t.ndim() {
                        if t.shape()[j] != view.shape()[d + j] {
                            return Err(Error::index(format!(
                                "The shape of the mask {} at index {j} does not match the shape of the indexed tensor {} at index {}",
                                fmt_shape(t.shape()),
                                fmt_shape(view.shape()),
                                d + j
                            )));
                        }
                    }
                    let (coords, n) = nonzero_coords(t);
                    let k = t.ndim();
                    for j in 0..k {
                        let col: Vec<i64> = (0..n).map(|r| coords[r * k + j]).collect();
                        adv.push((d + j, orig + j, Tensor::from_vec(col)));
                    }
                    d += k;
                    orig += k;
                }
                TensorIndex::Tensor(t) => {
                    adv.push((d, orig, t.clone()));
                    d += 1;
                    orig += 1;
                }
            }
        }
        Ok(Plan { view, adv })
    }

    fn gather_plan(plan: &Plan) -> Result<Gather> {
        let mut bshape: Vec<usize> = Vec::new();
        for (_, _, t) in &plan.adv {
            bshape = broadcast_shapes(&bshape, t.shape())
                .map_err(|_| {
                    let shapes: Vec<String> =
                        plan.adv.iter().map(|(_, _, t)| fmt_shape(t.shape())).collect();
                    Error::index(format!(
                        "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                        shapes.join(", ")
                    ))
                })?
                .to_vec();
        }
        let nb: usize = bshape.iter().product();
        let view = &plan.view;
        let mut offsets = vec![0isize; nb];
        for (d, orig, t) in &plan.adv {
            let size = view.shape()[*d];
            let stride = view.strides()[*d] as isize;
            let vals = t.broadcast_to(&bshape)?.to_vec::<i64>();
            for (o, &v) in offsets.iter_mut().zip(&vals) {
                let w = if v < 0 { v + size as i64 } else { v };
                if w < 0 || w >= size as i64 {
                    return Err(Error::index(format!(
                        "index {v} is out of bounds for dimension {orig} with size {size}"
                    )));
                }
                *o += w as isize * stride;
            }
        }
        let dims: Vec<usize> = plan.adv.iter().map(|a| a.0).collect();
        let adjacent = dims.windows(2).all(|w| w[1] == w[0] + 1);
        let bstart = if adjacent { dims[0] } else { 0 };
        let mut rshape = Vec::new();
        let mut rstrides = Vec::new();
        for k in 0..view.ndim() {
            if !dims.contains(&k) {
                rshape.push(view.shape()[k]);
                rstrides.push(view.strides()[k] as isize);
            }
        }
        Ok(Gather {
            bshape,
            offsets,
            rshape,
            rstrides,
            bstart,
        })
    }

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
    fn basic_index_recorded(&self, indices: &[TensorIndex]) -> Result<Tensor> {
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
    fn gather_indexed(&self, plan: &Plan) -> Result<Tensor> {
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
                    Some(reduce_to(&g.index(&indices)?, &vshape)?)
                } else {
                    None
                };
                Ok(vec![gs, gv])
            })?;
        }
        Ok(out)
    }
}

/// `g` summed down to `shape` when `g` was broadcast from it (`shape` may
/// have extra leading ones that indexing dropped).
pub(crate) fn reduce_to(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let mut g = g.clone();
    if g.ndim() < shape.len() {
        let mut s = vec![1isize; shape.len() - g.ndim()];
        s.extend(g.shape().iter().map(|&n| n as isize));
        g = g.reshape(&s)?;
    }
    sum_to(&g, shape)
}

/// A kernel's addition (logical or for bool).
fn add_fn<T: Element>() -> fn(T, T) -> T {
    fn num<U: Arith>(a: U, b: U) -> U {
        U::add(a, b)
    }
    fn cast_add<T: Element, U: Arith>(a: T, b: T) -> T {
        T::cast_from(num::<U>(U::cast_from(a), U::cast_from(b)))
    }
    match T::DTYPE {
        DType::Bool => |a: T, b: T| T::from_bool(a.to_bool() | b.to_bool()),
        DType::Int32 => cast_add::<T, i32>,
        DType::Int64 => cast_add::<T, i64>,
        DType::Float32 => cast_add::<T, f32>,
        DType::Float64 => cast_add::<T, f64>,
    }
}

/// Splits `0..n` items of `weight` elements each so that parallel chunks
/// carry enough work.
fn for_ranges_weighted(n: usize, weight: usize, body: impl Fn(usize, usize) + Sync + Send) {
    let w = weight.max(1);
    for_ranges(n * w, |s, e| {
        let (a, b) = (s.div_ceil(w), e.div_ceil(w));
        if a < b {
            body(a, b)
        }
    });
}

/// Offsets of every row-major position of `shape` through `strides`.
pub(crate) fn positions(shape: &[usize], strides: &[isize]) -> Vec<isize> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    walk(shape, [strides], 0, n, |[o]| out.push(o));
    out
}

/// Drops leading size-1 dims of `v` until it has at most `ndim` dims (torch
/// allows `t[0] = ones(1, 3)` for a (3,) target).
fn strip_leading_ones(v: &Tensor, ndim: usize) -> Tensor {
    let mut l = v.layout().clone();
    while l.ndim() > ndim && l.shape()[0] == 1 {
        l = l.select(0, 0).expect("dim 0 has size 1");
    }
    if l == *v.layout() {
        v.clone()
    } else {
        v.view_with_layout(l)
    }
}

/// torch's setitem error when values do not broadcast to the target.
fn check_value_shape(values: &Tensor, v: &Tensor, shape: &[usize]) -> Result<()> {
    if v.layout().broadcast_strides(shape).is_err() {
        return Err(Error::runtime(format!(
            "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
            fmt_shape(values.shape()),
            fmt_shape(shape)
        )));
    }
    Ok(())
}

/// Row-major coordinates of the nonzero elements: `n * ndim` values, `n`.
fn nonzero_coords(t: &Tensor) -> (Vec<i64>, usize) {
    let b = t.to_dtype(DType::Bool).contiguous();
    let nd = t.ndim();
    let mut coords = Vec::new();
    let mut n = 0usize;
    {
        let _g = lock(&[&b], None);
        // SAFETY: `b` is contiguous bool and read-locked.
        let data = unsafe { super::access::slice::<bool>(&b) };
        let mut idx = vec![0i64; nd];
        for &v in data {
            if v {
                coords.extend_from_slice(&idx);
                n += 1;
            }
            for d in (0..nd).rev() {
                idx[d] += 1;
                if (idx[d] as usize) < t.shape()[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
    (coords, n)
}

fn check_long(op: &str, index: &Tensor) -> Result<()> {
    if index.dtype() != DType::Int64 {
        return Err(Error::runtime(format!(
            "{op}(): Expected dtype int64 for index"
        )));
    }
    Ok(())
}

fn check_int_index(op: &str, index: &Tensor) -> Result<Vec<i64>> {
    if !matches!(index.dtype(), DType::Int64 | DType::Int32) {
        return Err(Error::runtime(format!(
            "{op}(): Expected dtype int32/int64 for index"
        )));
    }
    if index.ndim() > 1 {
        return Err(Error::index(format!(
            "{op}(): Index is supposed to be a vector, got a {}-D tensor",
            index.ndim()
        )));
    }
    Ok(index.to_vec::<i64>())
}

/// `t` with a 0-dim tensor seen as shape (1,).
fn as_1d(t: &Tensor) -> Tensor {
    if t.ndim() == 0 {
        t.view_with_layout(Layout::new(&[1], &[1], t.offset()))
    } else {
        t.clone()
    }
}

/// Checks `0 <= v < size` (no wrapping, as gather/scatter/index_add do).
fn check_range(v: i64, dim: usize, size: usize, runtime: bool) -> Result<usize> {
    if v < 0 || v >= size as i64 {
        let msg = format!("index {v} is out of bounds for dimension {dim} with size {size}");
        return Err(if runtime {
            Error::runtime(msg)
        } else {
            Error::index(msg)
        });
    }
    Ok(v as usize)
}

/// Shape checks shared by gather and scatter.
fn check_gather_shapes(
    op: &str,
    this: &Tensor,
    dim: usize,
    index: &Tensor,
    src: Option<&Tensor>,
) -> Result<()> {
    if index.ndim() != this.ndim() {
        return Err(Error::runtime(format!(
            "{op}(): Index tensor must have the same number of dimensions as {} tensor",
            if src.is_some() { "self" } else { "input" }
        )));
    }
    if let Some(s) = src {
        if s.ndim() != this.ndim() {
            return Err(Error::runtime(format!(
                "{op}(): Index tensor must have the same number of dimensions as src tensor"
            )));
        }
    }
    for k in 0..this.ndim() {
        let bad_self = k != dim && index.shape()[k] > this.shape()[k];
        let bad_src = src.is_some_and(|s| index.shape()[k] > s.shape()[k]);
        if bad_self || bad_src {
            return Err(Error::runtime(match src {
                None => format!(
                    "Size does not match at dimension {k} expected index {} to be smaller than self {} apart from dimension {dim}",
                    fmt_shape(index.shape()),
                    fmt_shape(this.shape())
                ),
                Some(s) => format!(
                    "Expected index {} to be smaller than self {} apart from dimension {dim} and to be smaller size than src {}",
                    fmt_shape(index.shape()),
                    fmt_shape(this.shape()),
                    fmt_shape(s.shape())
                ),
            }));
        }
    }
    Ok(())
}

/// The source of a scatter: a tensor or one value.
enum ScatterSrc<'a> {
    Tensor(&'a Tensor),
    Value(Scalar),
}

impl Tensor {
    /// `index_select(dim, index)`: the slices at `index` (1-D, int64/int32)
    /// along `dim`, copied.
    pub fn index_select(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("IndexSelectBackward0", &[self]),
            self.ndim() > 0,
            |t| t.map1(|x| x.index_select(t.dim(dim), index)),
        );
        let out = self.index_select_kernel(dim, index)?;
        if rec.active() {
            let (shape, index) = (self.shape().to_vec(), index.clone());
            // d self = zeros with g's slices added at `index`.
            rec.finish_simple(&out, move |_, g| {
                let z = Tensor::try_zeros(&shape, g[0].dtype())?;
                Ok(vec![Some(z.index_add(
                    dim,
                    &index,
                    &g[0],
                    Scalar::Int(1),
                )?)])
            })?;
        }
        Ok(out)
    }

    fn index_select_kernel(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
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

    /// `gather(dim, index)`: `out[i][j] = self[index[i][j]][j]` (for
    /// dim 0); `index` is int64 with as many dims as `self`.
    pub fn gather(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("GatherBackward0", &[self]),
            self.ndim() > 0,
            |t| t.map1(|x| x.gather(t.dim(dim), &batch_index(t, index)?)),
        );
        let out = self.gather_kernel(dim, index)?;
        if rec.active() {
            let (shape, index) = (self.shape().to_vec(), index.clone());
            // d self = zeros with g added at `index` (repeats accumulate).
            rec.finish_simple(&out, move |_, g| {
                let z = Tensor::try_zeros(&shape, g[0].dtype())?;
                Ok(vec![Some(z.scatter_add(dim, &index, &g[0])?)])
            })?;
        }
        Ok(out)
    }

    fn gather_kernel(&self, dim: isize, index: &Tensor) -> Result<Tensor> {
        check_long("gather", index)?;
        let d = wrap_dim(dim, self.ndim())?;
        let (src, idx_t) = (as_1d(self), as_1d(index));
        check_gather_shapes("gather", &src, d, &idx_t, None)?;
        let idx = idx_t.to_vec::<i64>();
        let size = src.shape()[d];
        for &v in &idx {
            check_range(v, d, size, true)?;
        }
        let out = Tensor::empty(index.shape(), self.dtype());
        if out.numel() == 0 {
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

    fn scatter_impl(
        &self,
        op: &str,
        dim: isize,
        index: &Tensor,
        src: ScatterSrc<'_>,
        add: bool,
    ) -> Result<()> {
        check_long(op, index)?;
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
        for &v in &idx {
            check_range(v, d, size, true)?;
        }
        if !idx.is_empty() {
            let mut ds = signed(dst.strides());
            let dd = ds[d];
            ds[d] = 0;
            let is = signed(&contiguous_strides(idx_t.shape()));
            let shape = idx_t.shape();
            let n = idx.len();
            let reads: Vec<&Tensor> = src_t.iter().collect();
            let _g = lock(&reads, Some(&dst));
            dispatch!(self.dtype(), T => {
                let addf = add_fn::<T>();
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

    /// `scatter_(dim, index, src)`: `self[index[i][j]][j] = src[i][j]`
    /// (dim 0); in place.
    pub fn scatter_(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<()> {
        if crate::autograd::inplace("scatter_", self, &[src], |s| s.scatter(dim, index, src))? {
            return Ok(());
        }
        self.scatter_impl("scatter", dim, index, ScatterSrc::Tensor(src), false)
    }

    /// `scatter_(dim, index, value)`: writes one value at the indexed places.
    pub fn scatter_value_(&self, dim: isize, index: &Tensor, value: Scalar) -> Result<()> {
        if crate::autograd::inplace("scatter_", self, &[], |s| {
            s.scatter_value(dim, index, value)
        })? {
            return Ok(());
        }
        self.scatter_impl("scatter", dim, index, ScatterSrc::Value(value), false)
    }

    /// `scatter_add_(dim, index, src)`: like `scatter_` but adds, summing
    /// duplicate indices.
    pub fn scatter_add_(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<()> {
        if crate::autograd::inplace("scatter_add_", self, &[src], |s| {
            s.scatter_add(dim, index, src)
        })? {
            return Ok(());
        }
        self.scatter_impl("scatter_add", dim, index, ScatterSrc::Tensor(src), true)
    }

    /// `scatter(dim, index, src)`: out-of-place `scatter_`.
    pub fn scatter(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("ScatterBackward0", &[self, src]),
            self.ndim() > 0,
            |t| {
                Ok(vec![Some(t.or_zeros(0, self)?.scatter(
                    t.dim(dim),
                    &batch_index(t, index)?,
                    &t.or_zeros(1, src)?,
                )?)])
            },
        );
        let out = self.copy();
        out.scatter_(dim, index, src)?;
        let out = out.data();
        if rec.active() {
            let (n0, n1) = (rec.needs(0), rec.needs(1));
            let (index, sshape) = (index.clone(), src.shape().to_vec());
            // d self = g with the overwritten places zeroed; d src = g at
            // `index`.
            rec.finish_simple(&out, move |_, g| {
                let gs = n0
                    .then(|| g[0].scatter_value(dim, &index, Scalar::Int(0)))
                    .transpose()?;
                let gsrc = n1
                    .then(|| gather_for_src(&g[0], dim, &index, &sshape))
                    .transpose()?;
                Ok(vec![gs, gsrc])
            })?;
        }
        Ok(out)
    }

    /// `scatter(dim, index, value)`: out-of-place `scatter_value_`.
    pub fn scatter_value(&self, dim: isize, index: &Tensor, value: Scalar) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("ScatterBackward1", &[self]),
            self.ndim() > 0,
            |t| t.map1(|x| x.scatter_value(t.dim(dim), &batch_index(t, index)?, Scalar::Int(0))),
        );
        let out = self.copy();
        out.scatter_value_(dim, index, value)?;
        let out = out.data();
        if rec.active() {
            let index = index.clone();
            rec.finish_simple(&out, move |_, g| {
                Ok(vec![Some(g[0].scatter_value(
                    dim,
                    &index,
                    Scalar::Int(0),
                )?)])
            })?;
        }
        Ok(out)
    }

    /// `scatter_add(dim, index, src)`: out-of-place `scatter_add_`.
    pub fn scatter_add(&self, dim: isize, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("ScatterAddBackward0", &[self, src]),
            self.ndim() > 0,
            |t| {
                Ok(vec![Some(t.or_zeros(0, self)?.scatter_add(
                    t.dim(dim),
                    &batch_index(t, index)?,
                    &t.or_zeros(1, src)?,
                )?)])
            },
        );
        let out = self.copy();
        out.scatter_add_(dim, index, src)?;
        let out = out.data();
        if rec.active() {
            let (n1, index, sshape) = (rec.needs(1), index.clone(), src.shape().to_vec());
            // d self = g; d src = g at `index`.
            rec.finish_simple(&out, move |_, g| {
                let gsrc = n1
                    .then(|| gather_for_src(&g[0], dim, &index, &sshape))
                    .transpose()?;
                Ok(vec![Some(g[0].clone()), gsrc])
            })?;
        }
        Ok(out)
    }

    /// Shared body of index_add_/index_copy_/index_fill_: for each `i`, the
    /// slice `self.select(dim, index[i])` is combined with
    /// `source.select(dim, i)` (or a value).
    fn index_slices_(
        &self,
        op: &str,
        dim: isize,
        index: &Tensor,
        source: Option<&Tensor>,
        value: Scalar,
        mode: SliceMode,
    ) -> Result<()> {
        let idx = check_int_index(op, index)?;
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
                        let addf = add_fn::<T>();
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

    /// `index_add_(dim, index, source, alpha)`: adds `alpha * source`'s
    /// slices into the slices of `self` at `index` (duplicates sum).
    pub fn index_add_(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: Scalar,
    ) -> Result<()> {
        if crate::autograd::inplace("index_add_", self, &[source], |s| {
            s.index_add(dim, index, source, alpha)
        })? {
            return Ok(());
        }
        self.index_slices_(
            "index_add_",
            dim,
            index,
            Some(source),
            alpha,
            SliceMode::Add,
        )
    }

    /// `index_copy_(dim, index, source)`: copies `source`'s slices into the
    /// slices of `self` at `index`.
    pub fn index_copy_(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<()> {
        if crate::autograd::inplace("index_copy_", self, &[source], |s| {
            s.index_copy(dim, index, source)
        })? {
            return Ok(());
        }
        if index.dtype() != DType::Int64 {
            return Err(Error::runtime(format!(
                "index_copy_(): Expected a long tensor for index, but got {}",
                index.dtype()
            )));
        }
        self.index_slices_(
            "index_copy_",
            dim,
            index,
            Some(source),
            Scalar::Int(1),
            SliceMode::Copy,
        )
    }

    /// `index_fill_(dim, index, value)`: fills the slices at `index`
    /// (negative indices wrap).
    pub fn index_fill_(&self, dim: isize, index: &Tensor, value: Scalar) -> Result<()> {
        if crate::autograd::inplace("index_fill_", self, &[], |s| {
            s.index_fill(dim, index, value)
        })? {
            return Ok(());
        }
        if index.dtype() != DType::Int64 {
            return Err(Error::index(format!(
                "index_fill_(): Expected a long tensor for index, but got {}",
                index.dtype()
            )));
        }
        self.index_slices_("index_fill_", dim, index, None, value, SliceMode::Fill)
    }

    /// `index_add(dim, index, source, alpha)`: out-of-place.
    pub fn index_add(
        &self,
        dim: isize,
        index: &Tensor,
        source: &Tensor,
        alpha: Scalar,
    ) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("IndexAddBackward0", &[self, source]),
            self.ndim() > 0 && source.ndim() > 0,
            |t| {
                Ok(vec![Some(t.or_zeros(0, self)?.index_add(
                    t.dim(dim),
                    index,
                    &t.or_zeros(1, source)?,
                    alpha,
                )?)])
            },
        );
        let out = self.copy();
        out.index_add_(dim, index, source, alpha)?;
        let out = out.data();
        if rec.active() {
            let (n1, index, sndim) = (rec.needs(1), index.clone(), source.ndim());
            // d self = g; d source = alpha * g's slices at `index`.
            rec.finish_simple(&out, move |_, g| {
                let gsrc = if n1 {
                    let s = select_for_source(&g[0], dim, &index, sndim)?;
                    Some(s.mul(&Tensor::scalar(alpha).to_dtype(s.dtype()))?)
                } else {
                    None
                };
                Ok(vec![Some(g[0].clone()), gsrc])
            })?;
        }
        Ok(out)
    }

    /// `index_copy(dim, index, source)`: out-of-place.
    pub fn index_copy(&self, dim: isize, index: &Tensor, source: &Tensor) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("IndexCopyBackward0", &[self, source]),
            self.ndim() > 0 && source.ndim() > 0,
            |t| {
                Ok(vec![Some(t.or_zeros(0, self)?.index_copy(
                    t.dim(dim),
                    index,
                    &t.or_zeros(1, source)?,
                )?)])
            },
        );
        let out = self.copy();
        out.index_copy_(dim, index, source)?;
        let out = out.data();
        if rec.active() {
            let (n0, n1) = (rec.needs(0), rec.needs(1));
            let (index, sndim) = (index.clone(), source.ndim());
            // d self = g with the copied slices zeroed; d source = g's
            // slices at `index`.
            rec.finish_simple(&out, move |_, g| {
                let gs = n0
                    .then(|| g[0].index_fill(dim, &index, Scalar::Int(0)))
                    .transpose()?;
                let gsrc = n1
                    .then(|| select_for_source(&g[0], dim, &index, sndim))
                    .transpose()?;
                Ok(vec![gs, gsrc])
            })?;
        }
        Ok(out)
    }

    /// `index_fill(dim, index, value)`: out-of-place.
    pub fn index_fill(&self, dim: isize, index: &Tensor, value: Scalar) -> Result<Tensor> {
        let rec = jvp_if_batched(
            Recorder::new("IndexFillBackward0", &[self]),
            self.ndim() > 0,
            |t| t.map1(|x| x.index_fill(t.dim(dim), index, Scalar::Int(0))),
        );
        let out = self.copy();
        out.index_fill_(dim, index, value)?;
        let out = out.data();
        if rec.active() {
            let index = index.clone();
            rec.finish_simple(&out, move |_, g| {
                Ok(vec![Some(g[0].index_fill(dim, &index, Scalar::Int(0))?)])
            })?;
        }
        Ok(out)
    }

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
                let vals = unsafe { super::access::slice::<T>(&src) };
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
                    .then(|| g[0].take(&index)?.reshape(&super::view::isizes(&sshape)))
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

/// `index` for a tangent: repeated along a leading batch dim, if any.
fn batch_index(t: &Tangents, index: &Tensor) -> Result<Tensor> {
    match t.batch() {
        Some(_) => index.expand(&super::view::isizes(&t.shape(index.shape()))),
        None => Ok(index.clone()),
    }
}

/// The gradient of a scatter's `src`: `g` gathered at `index`, padded with
/// zeros where `src` is larger than `index`.
fn gather_for_src(g: &Tensor, dim: isize, index: &Tensor, src_shape: &[usize]) -> Result<Tensor> {
    let picked = g.gather(dim, index)?;
    if picked.shape() == src_shape {
        return Ok(picked);
    }
    let ishape = index.shape().to_vec();
    let view: super::view::ViewFn = std::sync::Arc::new(move |t: &Tensor| {
        let mut t = t.clone();
        for (k, &n) in ishape.iter().enumerate() {
            t = t.narrow(k as isize, 0, n)?;
        }
        Ok(t)
    });
    super::view::view_scatter(&picked, src_shape, "ScatterSrcBackward0", view)
}

/// The gradient of index_add/index_copy's `source`: `g`'s slices at
/// `index`, in `source`'s rank (a 0-dim source gets a 0-dim gradient).
fn select_for_source(g: &Tensor, dim: isize, index: &Tensor, source_ndim: usize) -> Result<Tensor> {
    let g1 = if g.ndim() == 0 {
        g.reshape(&[1])?
    } else {
        g.clone()
    };
    let s = g1.index_select(dim, index)?;
    if source_ndim == 0 {
        return s.reshape(&[]);
    }
    Ok(s)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SliceMode {
    Add,
    Copy,
    Fill,
}

/// `x * alpha` for index_add (alpha 1 is the identity; bool ignores it).
fn scale_fn<T: Element>() -> fn(T, T) -> T {
    fn mul<T: Element, U: Arith>(x: T, a: T) -> T {
        T::cast_from(U::mul(U::cast_from(x), U::cast_from(a)))
    }
    match T::DTYPE {
        DType::Bool => |x: T, _a: T| x,
        DType::Int32 => mul::<T, i32>,
        DType::Int64 => mul::<T, i64>,
        DType::Float32 => mul::<T, f32>,
        DType::Float64 => mul::<T, f64>,
    }
}

fn check_mask(op: &str, mask: &Tensor) -> Result<()> {
    if mask.dtype() != DType::Bool {
        return Err(Error::runtime(format!(
            "{op} only supports boolean masks, but got mask with dtype {}",
            mask.dtype()
        )));
    }
    Ok(())
}
