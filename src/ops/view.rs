//! View operations: new layouts over the same storage, never a copy
//! (`reshape` copies only when no view can express the result).
//!
//! Every view op records a node on its output (which stays a view of the
//! same storage). Gradients are built from differentiable ops: a view that
//! only rearranges elements maps the gradient back with the inverse
//! rearrangement; a view that picks some elements (slice, select,
//! diagonal) writes the gradient into zeros through the same view with
//! [`view_scatter`], which records itself so that higher orders work.

use crate::autograd::{BackwardCtx, Grads, Recorder, Tangents};
use crate::tensor::{wrap_dim, Layout};
use crate::{Error, Result, Tensor};
use std::sync::Arc;

/// A view op replayed on another tensor of the same shape.
pub(crate) type ViewFn = Arc<dyn Fn(&Tensor) -> Result<Tensor> + Send + Sync>;

/// A view op replayed on a tensor that may have `lead` extra leading dims
/// (a batch of tangents), which it keeps in front.
type PickFn = Arc<dyn Fn(&Tensor, usize) -> Result<Tensor> + Send + Sync>;

/// Dim `d` of a tensor seen behind `lead` extra leading dims (dims counted
/// from the back stay).
fn past(d: isize, lead: usize) -> isize {
    if d >= 0 {
        d + lead as isize
    } else {
        d
    }
}

/// Declares `f` as the forward formula, as handling a batch of tangents
/// when `batched` (an op whose formula handles only some inputs batched).
pub(crate) fn jvp_if_batched<'a>(
    rec: Recorder<'a>,
    batched: bool,
    f: impl Fn(&Tangents) -> Result<Vec<Option<Tensor>>> + 'a,
) -> Recorder<'a> {
    if batched {
        rec.jvp_batched(f)
    } else {
        rec.jvp(f)
    }
}

/// Records a single-output view op and keeps its output a differentiable
/// view (an in-place op on it rebases the base's history).
fn finish_view<B>(rec: Recorder, out: &Tensor, backward: B) -> Result<()>
where
    B: Fn(&BackwardCtx, &[Tensor]) -> Result<Grads> + Send + Sync + 'static,
{
    let recording = rec.recording();
    rec.finish_simple(out, backward)?;
    if recording && out.is_view() {
        // The output was made while the recorder had grad mode off.
        out.autograd().mark_view(out.version());
    }
    Ok(())
}

/// Records a reshape: the gradient is reshaped back, the tangent reshaped
/// alike (a view of it when `out` is a view, else a copy).
fn record_reshape(rec: Recorder, out: &Tensor, input_shape: &[usize]) -> Result<()> {
    let shape = input_shape.to_vec();
    let (out_shape, is_view) = (out.shape().to_vec(), out.is_view());
    let rec = rec.batched().jvp_batched(move |t| {
        t.map1(|x| {
            let x = if is_view { x.clone() } else { x.copy() };
            x.reshape(&isizes(&t.shape(&out_shape)))
        })
    });
    finish_view(rec, out, move |ctx, g| {
        Ok(vec![Some(g[0].reshape(&isizes(&ctx.shape(&shape)))?)])
    })
}

/// Records a view that picks some elements of its input: the gradient is
/// `g` written through the same view into zeros of the input's shape, the
/// tangent is the same view of the input's tangent.
fn record_picking(
    rec: Recorder,
    out: &Tensor,
    input_shape: &[usize],
    backward_name: &'static str,
    pick: PickFn,
) -> Result<()> {
    if !rec.active() {
        return Ok(());
    }
    let shape = input_shape.to_vec();
    let fw = pick.clone();
    let rec = rec.jvp_batched(move |t| t.map1(|x| fw(x, usize::from(t.batch().is_some()))));
    let view: ViewFn = Arc::new(move |t: &Tensor| pick(t, 0));
    finish_view(rec, out, move |_, g| {
        Ok(vec![Some(view_scatter(
            &g[0],
            &shape,
            backward_name,
            view.clone(),
        )?)])
    })
}

/// Zeros of `shape` with `g` written into `view(zeros)`: the gradient of a
/// non-overlapping view. Recorded as `name` (e.g. `SliceBackwardBackward0`)
/// with gradient `view(gg)`, so gradients of gradients work to any order.
pub(crate) fn view_scatter(
    g: &Tensor,
    shape: &[usize],
    name: &'static str,
    view: ViewFn,
) -> Result<Tensor> {
    let fw = view.clone();
    let rec = Recorder::new(name, &[g])
        .jvp(move |t| t.map1(|x| view_scatter(x, shape, name, fw.clone())));
    let out = Tensor::try_zeros(shape, g.dtype())?;
    {
        let _g = crate::autograd::no_grad();
        view(&out)?.copy_(g)?;
    }
    if rec.active() {
        rec.finish_simple(&out, move |_, gg| Ok(vec![Some(view(&gg[0])?)]))?;
    }
    Ok(out)
}

/// Shape as `isize` sizes (for `reshape`).
pub(crate) fn isizes(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&n| n as isize).collect()
}

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
        self.transpose_named(dim0, dim1, "TransposeBackward0")
    }

    fn transpose_named(&self, dim0: isize, dim1: isize, name: &'static str) -> Result<Tensor> {
        let rec = Recorder::new(name, &[self])
            .batched()
            .jvp_batched(|t| t.map1(|x| x.transpose(t.dim(dim0), t.dim(dim1))));
        let out = self.view_with_layout(self.layout().transpose(dim0, dim1)?);
        finish_view(rec, &out, move |ctx, g| {
            Ok(vec![Some(g[0].transpose(ctx.dim(dim0), ctx.dim(dim1))?)])
        })?;
        Ok(out)
    }

    /// `alias()`: a view with the same layout (`AliasBackward0`).
    pub fn alias(&self) -> Result<Tensor> {
        self.alias_named("AliasBackward0")
    }

    /// A view with the same layout whose node (`name`) passes the gradient
    /// through.
    pub(crate) fn alias_named(&self, name: &'static str) -> Result<Tensor> {
        let rec = Recorder::new(name, &[self])
            .batched()
            .jvp_batched(|t| t.map1(|t| t.alias()));
        let out = self.view_with_layout(self.layout().clone());
        finish_view(rec, &out, |_, g| Ok(vec![Some(g[0].clone())]))?;
        Ok(out)
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
            return self.alias_named("TBackward0");
        }
        self.transpose_named(0, 1, "TBackward0")
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
        let rec = Recorder::new("PermuteBackward0", &[self]).batched();
        let out = self.view_with_layout(self.layout().permute(dims)?);
        if rec.active() {
            let n = self.ndim();
            let mut inverse = vec![0isize; n];
            for (i, &d) in dims.iter().enumerate() {
                inverse[wrap_dim(d, n)?] = i as isize;
            }
            let forward: Vec<isize> = dims
                .iter()
                .map(|&d| Ok(wrap_dim(d, n)? as isize))
                .collect::<Result<_>>()?;
            let rec = rec.jvp_batched(move |t| {
                t.map1(|x| match t.batch() {
                    Some(_) => x.permute(&with_batch_dim(&forward)),
                    None => x.permute(&forward),
                })
            });
            finish_view(rec, &out, move |ctx, g| {
                if ctx.batch().is_some() {
                    return Ok(vec![Some(g[0].permute(&with_batch_dim(&inverse))?)]);
                }
                Ok(vec![Some(g[0].permute(&inverse)?)])
            })?;
        }
        Ok(out)
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
            return self.alias();
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
        let rec = Recorder::new("ExpandBackward0", &[self]).batched();
        let out = self.view_with_layout(self.layout().expand(sizes)?);
        // The tangent expands alike; new dims go after a batch dim.
        let new_dims = out.ndim() - self.ndim();
        let rec = rec.jvp_batched(|t| {
            t.map1(|x| {
                let mut x = x.clone();
                if t.batch().is_some() {
                    for _ in 0..new_dims {
                        x = x.unsqueeze(1)?;
                    }
                }
                x.expand(&isizes(&t.shape(out.shape())))
            })
        });
        let shape = self.shape().to_vec();
        finish_view(rec, &out, move |ctx, g| {
            Ok(vec![Some(match ctx.batch() {
                Some(_) => crate::autograd::sum_to_batched(&g[0], &shape)?,
                None => crate::autograd::sum_to(&g[0], &shape)?,
            })])
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
        let rec = Recorder::new("SliceBackward0", &[self]);
        let out = self.view_with_layout(self.layout().narrow(dim, start, length)?);
        let view: PickFn = Arc::new(move |t: &Tensor, l| t.narrow(past(dim, l), start, length));
        record_picking(rec, &out, self.shape(), "SliceBackwardBackward0", view)?;
        Ok(out)
    }

    /// `select(dim, index)`: removes `dim`, fixing it at `index`.
    pub fn select(&self, dim: isize, index: isize) -> Result<Tensor> {
        let rec = Recorder::new("SelectBackward0", &[self]);
        let out = self.view_with_layout(self.layout().select(dim, index)?);
        let view: PickFn = Arc::new(move |t: &Tensor, l| t.select(past(dim, l), index));
        record_picking(rec, &out, self.shape(), "SelectBackwardBackward0", view)?;
        Ok(out)
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
        let rec = Recorder::new("SliceBackward0", &[self]);
        let out = self.view_with_layout(self.layout().slice(d, start, stop, step as usize)?);
        let view: PickFn = Arc::new(move |t: &Tensor, l| t.slice(past(dim, l), start, stop, step));
        record_picking(rec, &out, self.shape(), "SliceBackwardBackward0", view)?;
        Ok(out)
    }

    /// `squeeze()` (all size-1 dims) or `squeeze(dims)`.
    pub fn squeeze(&self, dims: Option<&[isize]>) -> Result<Tensor> {
        let name = match dims {
            None => "SqueezeBackward0",
            Some([_]) => "SqueezeBackward1",
            Some(_) => "SqueezeBackward2",
        };
        let rec = Recorder::new(name, &[self]);
        let out = self.view_with_layout(self.layout().squeeze(dims)?);
        record_reshape(rec, &out, self.shape())?;
        Ok(out)
    }

    /// `unsqueeze(dim)`.
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        let rec = Recorder::new("UnsqueezeBackward0", &[self]);
        let out = self.view_with_layout(self.layout().unsqueeze(dim)?);
        record_reshape(rec, &out, self.shape())?;
        Ok(out)
    }

    /// `diagonal(offset, dim1, dim2)`.
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        let rec = Recorder::new("DiagonalBackward0", &[self]);
        let out = self.view_with_layout(self.layout().diagonal(offset, dim1, dim2)?);
        let view: PickFn =
            Arc::new(move |t: &Tensor, l| t.diagonal(offset, past(dim1, l), past(dim2, l)));
        record_picking(rec, &out, self.shape(), "DiagonalBackwardBackward0", view)?;
        Ok(out)
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
        let offset = offset.unwrap_or(self.offset());
        let layout = Layout::as_strided(size, stride, offset, storage_len)?;
        let rec = Recorder::new("AsStridedBackward0", &[self]);
        let out = self.view_with_layout(layout);
        if rec.active() {
            let plan = Arc::new(AsStridedPlan::new(self, size, stride, offset)?);
            let fw = plan.clone();
            // The same view of a tangent laid out like this tensor, else
            // the same elements gathered from it.
            let rec = rec.jvp(|t| {
                t.map1(|x| {
                    let shift = (offset + x.offset()).checked_sub(self.offset());
                    match shift {
                        Some(o) if fw.output_within_input && x.strides() == self.strides() => {
                            x.as_strided(size, stride, Some(o))
                        }
                        _ => fw.forward(x),
                    }
                })
            });
            finish_view(rec, &out, move |_, g| Ok(vec![Some(plan.backward(&g[0])?)]))?;
        }
        Ok(out)
    }

    /// `unbind(dim)`: the slices along `dim`, as views.
    pub fn unbind(&self, dim: isize) -> Result<Vec<Tensor>> {
        if self.ndim() == 0 {
            return Err(Error::index(
                "Dimension specified as 0 but tensor has no dimensions",
            ));
        }
        let d = wrap_dim(dim, self.ndim())?;
        let rec = Recorder::new("UnbindBackward0", &[self]);
        let outs: Vec<Tensor> = (0..self.shape()[d] as isize)
            .map(|i| self.select(d as isize, i))
            .collect::<Result<_>>()?;
        let di = d as isize;
        let rec = rec.jvp_batched(|t| pieces_of(t, |x| x.unbind(t.dim(di))));
        record_pieces(rec, &outs, move |g| Tensor::stack(g, di))?;
        Ok(outs)
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
        let rec = Recorder::new("SplitBackward0", &[self]);
        let outs: Vec<Tensor> = if n == 0 {
            vec![self.narrow(d as isize, 0, 0)?]
        } else {
            (0..n)
                .step_by(split_size)
                .map(|s| self.narrow(d as isize, s as isize, split_size.min(n - s)))
                .collect::<Result<_>>()?
        };
        let di = d as isize;
        let rec = rec.jvp_batched(|t| pieces_of(t, |x| x.split(split_size, t.dim(di))));
        record_pieces(rec, &outs, move |g| Tensor::cat(g, di))?;
        Ok(outs)
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
        let rec = Recorder::new("SplitWithSizesBackward0", &[self]);
        let mut start = 0;
        let outs: Vec<Tensor> = sizes
            .iter()
            .map(|&len| {
                let t = self.narrow(d as isize, start as isize, len);
                start += len;
                t
            })
            .collect::<Result<_>>()?;
        let di = d as isize;
        let rec = rec.jvp_batched(|t| pieces_of(t, |x| x.split_with_sizes(sizes, t.dim(di))));
        record_pieces(rec, &outs, move |g| Tensor::cat(g, di))?;
        Ok(outs)
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
        let rec = Recorder::new("CloneBackward0", &[self])
            .jvp_batched(|t| t.map1(|t| Ok(t.clone_preserving_strides())));
        // A dense layout's elements occupy exactly `numel` slots from its
        // offset on, so one memcpy of that span keeps the strides.
        let isz = self.dtype().itemsize();
        let n = self.numel() * isz;
        let storage = crate::Storage::uninit(n);
        {
            let _g = crate::kernels::access::lock(&[self], None);
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
        let out = Tensor::from_parts(storage, layout, self.dtype()).expect("dense span fits");
        rec.finish_simple(&out, |_, g| Ok(vec![Some(g[0].clone())]))
            .expect("nothing is saved");
        out
    }
}

/// Records a multi-output view op (unbind, split): one node whose
/// backward joins the pieces' gradients. As in torch, the pieces are not
/// differentiable views, so modifying one in place raises.
fn record_pieces(
    rec: Recorder,
    outs: &[Tensor],
    join: impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
) -> Result<()> {
    if !rec.active() {
        return Ok(());
    }
    let refs: Vec<&Tensor> = outs.iter().collect();
    rec.finish(&refs, |_| {}, move |_, g| Ok(vec![Some(join(g)?)]))
}

/// The tangents of a multi-output view: the same views of the input's
/// tangent.
fn pieces_of(
    t: &Tangents,
    pieces: impl Fn(&Tensor) -> Result<Vec<Tensor>>,
) -> Result<Vec<Option<Tensor>>> {
    match t.get(0) {
        Some(x) => Ok(pieces(x)?.into_iter().map(Some).collect()),
        None => Ok(Vec::new()),
    }
}

/// Permutation `dims` of a tensor seen behind a leading batch dim.
fn with_batch_dim(dims: &[isize]) -> Vec<isize> {
    std::iter::once(0)
        .chain(dims.iter().map(|&d| d + 1))
        .collect()
}

/// What `as_strided`'s backward needs: where the input's and the output's
/// elements live in (a window of) the shared storage.
/// The gradient with respect to a tensor laid out like `input_like` of the
/// view `as_strided(size, stride, offset)` of its storage, given the view's
/// gradient `g` (aliased elements sum their gradients).
pub(crate) fn as_strided_grad(
    input_like: &Tensor,
    size: &[usize],
    stride: &[isize],
    offset: usize,
    g: &Tensor,
) -> Result<Tensor> {
    AsStridedPlan::new(input_like, size, stride, offset)?.backward(g)
}

struct AsStridedPlan {
    /// Storage positions of the input's elements, relative to `lo`.
    input_pos: Tensor,
    /// Storage positions of the output's elements, relative to `lo`.
    output_pos: Tensor,
    /// Window length (`hi - lo`).
    span: usize,
    /// How many input elements share each storage slot, when some do.
    input_count: Option<Tensor>,
    /// Whether every output element is one of the input's elements.
    output_within_input: bool,
}

impl AsStridedPlan {
    fn new(input: &Tensor, size: &[usize], stride: &[isize], offset: usize) -> Result<Self> {
        let pos = |shape: &[usize], strides: &[isize], off: usize| -> Vec<i64> {
            super::index::positions(shape, strides)
                .into_iter()
                .map(|p| p as i64 + off as i64)
                .collect()
        };
        let istr: Vec<isize> = input.strides().iter().map(|&s| s as isize).collect();
        let ip = pos(input.shape(), &istr, input.offset());
        let op = pos(size, stride, offset);
        let lo = ip.iter().chain(&op).copied().min().unwrap_or(0);
        let hi = ip.iter().chain(&op).copied().max().map_or(0, |m| m + 1);
        let span = (hi - lo) as usize;
        let shift = |v: Vec<i64>, shape: &[usize]| {
            Tensor::from_slice(&v.iter().map(|p| p - lo).collect::<Vec<_>>(), shape)
        };
        let input_count = if input.layout().is_non_overlapping() {
            None
        } else {
            let mut count = vec![0.0f64; span];
            for &p in &ip {
                count[(p - lo) as usize] += 1.0;
            }
            let per_elem: Vec<f64> = ip.iter().map(|&p| count[(p - lo) as usize]).collect();
            Some(Tensor::from_slice(&per_elem, input.shape())?)
        };
        let mut sorted = ip.clone();
        sorted.sort_unstable();
        let output_within_input = op.iter().all(|p| sorted.binary_search(p).is_ok());
        Ok(AsStridedPlan {
            output_within_input,
            input_pos: shift(ip, input.shape())?,
            output_pos: shift(op, size)?,
            span,
            input_count,
        })
    }

    /// The view's elements read from a tensor `t` laid out like the input
    /// (the adjoint of [`AsStridedPlan::backward`]): the input's elements
    /// placed in the storage window, slots outside the input zero.
    fn forward(&self, t: &Tensor) -> Result<Tensor> {
        use super::index::TensorIndex;
        let t = match &self.input_count {
            Some(c) => t.div(&c.to_dtype(t.dtype()))?,
            None => t.clone(),
        };
        Tensor::try_zeros(&[self.span], t.dtype())?
            .index_put(&[TensorIndex::Tensor(self.input_pos.clone())], &t, true)?
            .index(&[TensorIndex::Tensor(self.output_pos.clone())])
    }

    /// Sums `g` into the storage window (overlapping output elements add
    /// up), then reads the input's elements back; an input that itself
    /// overlaps shares each slot's gradient evenly, as torch does.
    fn backward(&self, g: &Tensor) -> Result<Tensor> {
        use super::index::TensorIndex;
        let flat = Tensor::try_zeros(&[self.span], g.dtype())?.index_put(
            &[TensorIndex::Tensor(self.output_pos.clone())],
            g,
            true,
        )?;
        let gi = flat.index(&[TensorIndex::Tensor(self.input_pos.clone())])?;
        match &self.input_count {
            Some(c) => gi.div(&c.to_dtype(g.dtype())),
            None => Ok(gi),
        }
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
            let _g = crate::kernels::access::lock(&[&t], None);
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
