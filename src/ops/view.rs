//! View operations: new layouts over the same storage, never a copy
//! (`reshape` copies only when no view can express the result).
//!
//! Every view op is a row of the derivative table [`FORMULAS`] and records
//! a node on its output (which stays a view of the same storage).
//! Gradients are built from differentiable ops: a view that only
//! rearranges elements maps the gradient back with the inverse
//! rearrangement; a view that picks some elements (slice, select,
//! diagonal) writes the gradient into zeros through the same view with
//! [`view_scatter`] (the row of [`FORMULAS_SCATTER`]), which records
//! itself so that higher orders work.

use crate::autograd::{derivatives, Tangents};
use crate::tensor::{wrap_dim, Dims, Layout, MemoryFormat};
use crate::{Error, Result, Tensor};
use smallvec::SmallVec;
use std::sync::{Arc, OnceLock};

/// A view op replayed on another tensor of the same shape.
pub(crate) type ViewFn = Arc<dyn Fn(&Tensor) -> Result<Tensor> + Send + Sync>;

/// The tangent of a reshape into `out`: the input's tangent reshaped alike
/// (a view of it when `out` is a view, else a copy).
fn reshaped_tangent(t: &Tangents, out: &Tensor) -> Result<Vec<Option<Tensor>>> {
    t.map1(|x| {
        let x = if out.is_view() { x.clone() } else { x.copy() };
        x.reshape(&isizes(&t.shape(out.shape())))
    })
}

/// The gradient of a view that picks some elements of an input of shape
/// `shape`: `g` written through the same `view` into zeros, recorded as
/// `name` (see [`view_scatter`]).
fn scattered(
    g: &Tensor,
    shape: &[usize],
    name: &'static str,
    view: impl Fn(&Tensor) -> Result<Tensor> + Send + Sync + 'static,
) -> Result<Vec<Option<Tensor>>> {
    Ok(vec![Some(view_scatter(g, shape, name, Arc::new(view))?)])
}

derivatives! {
    table FORMULAS_SCATTER("views: the gradient of a view that picks elements");

    /// Zeros of `shape` with `g` written into `view(zeros)`: the gradient of
    /// a non-overlapping view. Recorded as `name` (e.g.
    /// `SliceBackwardBackward0`) with gradient `view(gg)`, so gradients of
    /// gradients work to any order.
    pub(crate) fn view_scatter(
        g: &Tensor,
        shape: &[usize],
        name: &'static str,
        view: ViewFn,
    ) -> Result<Tensor> {
        before {
            let fw = view.clone();
        }
        record name, [g];
        compute {
            let zeros = Tensor::try_zeros(shape, g.dtype())?;
            {
                // Also off when nothing records (`g` needs no gradient).
                let _g = crate::autograd::no_grad();
                view(&zeros)?.copy_(g)?;
            };
        } => out = zeros;
        save nothing
        backward |ctx, gg| Ok(vec![Some(view(&gg[0])?)]);
        forward rows(move |t| t.map1(|x| view_scatter(x, shape, name, fw.clone())))
            because "the view is replayed with the forward's dims (no batch dim)";
        batched rows because "the view is replayed with the forward's dims (no batch dim)";
    }
}

/// Shape as `isize` sizes (for `reshape`).
pub(crate) fn isizes(shape: &[usize]) -> Vec<isize> {
    shape.iter().map(|&n| n as isize).collect()
}

derivatives! {
    table FORMULAS("views: view, reshape, transpose, permute, expand, slices, split")
        for Tensor;

    /// `view(shape)`: same elements, new shape; `-1` infers one size.
    pub fn view(&self, shape: &[isize]) -> Result<Tensor> {
        record "ViewBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().view(shape)?);
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].reshape(&isizes(&ctx.shape(&input_shape)))?)]);
        forward formula(|t| reshaped_tangent(t, &out));
        batched formula;
    }

    /// `reshape(shape)`: a view when strides allow, else a contiguous copy.
    pub fn reshape(&self, shape: &[isize]) -> Result<Tensor> {
        before {
            let dims = Layout::infer_shape(shape, self.numel())?;
            let strides = self.layout().view_strides(&dims);
        }
        record if strides.is_some() { "ViewBackward0" } else { "UnsafeViewBackward0" }, [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = match &strides {
            Some(strides) => self.view_with_layout(Layout::new(&dims, strides, self.offset())),
            None => self.copy().view_with_layout(Layout::contiguous(&dims)).data(),
        };
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].reshape(&isizes(&ctx.shape(&input_shape)))?)]);
        forward formula(|t| reshaped_tangent(t, &out));
        batched formula;
    }

    /// `transpose(dim0, dim1)` recorded as `name` (`t()` records
    /// `TBackward0`).
    fn transpose_named(&self, dim0: isize, dim1: isize, name: &'static str) -> Result<Tensor> {
        record name, [self];
        configure |r| r.views(as_strided_grad);
        compute => out = self.view_with_layout(self.layout().transpose(dim0, dim1)?);
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].transpose(ctx.dim(dim0), ctx.dim(dim1))?)]);
        forward formula(|t| t.map1(|x| x.transpose(t.dim(dim0), t.dim(dim1))));
        batched formula;
    }

    /// A view with the same layout whose node (`name`) passes the gradient
    /// through.
    pub(crate) fn alias_named(&self, name: &'static str) -> Result<Tensor> {
        record name, [self];
        configure |r| r.views(as_strided_grad);
        compute => out = self.view_with_layout(self.layout().clone());
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].clone())]);
        forward formula(|t| t.map1(|t| t.alias()));
        batched broadcast;
    }

    /// `permute(dims)`.
    pub fn permute(&self, dims: &[isize]) -> Result<Tensor> {
        record "PermuteBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let permuted = self.view_with_layout(self.layout().permute(dims)?);
            let inverse = inverse_permutation(dims)?;
        } => out = permuted;
        save nothing
        backward |ctx, g| Ok(vec![Some(match ctx.batch() {
            Some(_) => g[0].permute(&with_batch_dim(&inverse)?)?,
            None => g[0].permute(&inverse)?,
        })]);
        forward formula(|t| t.map1(|x| match t.batch() {
            Some(_) => x.permute(&with_batch_dim(dims)?),
            None => x.permute(dims),
        }));
        batched formula;
    }

    /// `expand(sizes)`: broadcast without copying; `-1` keeps a size.
    pub fn expand(&self, sizes: &[isize]) -> Result<Tensor> {
        record "ExpandBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().expand(sizes)?);
        save nothing
        backward |ctx, g| Ok(vec![Some(match ctx.batch() {
            Some(_) => crate::autograd::sum_to_batched(&g[0], &input_shape)?,
            None => crate::autograd::sum_to(&g[0], &input_shape)?,
        })]);
        // The tangent expands alike; new dims go after a batch dim.
        forward formula(|t| t.map1(|x| {
            let mut x = x.clone();
            if t.batch().is_some() {
                for _ in 0..out.ndim() - self.ndim() {
                    x = x.unsqueeze(1)?;
                }
            }
            x.expand(&isizes(&t.shape(out.shape())))
        }));
        batched formula;
    }

    /// `narrow(dim, start, length)`.
    pub fn narrow(&self, dim: isize, start: isize, length: usize) -> Result<Tensor> {
        record "SliceBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().narrow(dim, start, length)?);
        save nothing
        backward |ctx, g| scattered(&g[0], &input_shape, "SliceBackwardBackward0",
            move |t| t.narrow(dim, start, length));
        forward formula(|t| t.map1(|x| x.narrow(t.dim(dim), start, length)));
        batched rows because "the gradient is scattered through the view with the forward's dims";
    }

    /// `select(dim, index)`: removes `dim`, fixing it at `index`.
    pub fn select(&self, dim: isize, index: isize) -> Result<Tensor> {
        record "SelectBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().select(dim, index)?);
        save nothing
        backward |ctx, g| scattered(&g[0], &input_shape, "SelectBackwardBackward0",
            move |t| t.select(dim, index));
        forward formula(|t| t.map1(|x| x.select(t.dim(dim), index)));
        batched rows because "the gradient is scattered through the view with the forward's dims";
    }

    /// Python slicing `start:stop:step` along `dim` (step > 0).
    pub fn slice(&self, dim: isize, start: isize, stop: isize, step: isize) -> Result<Tensor> {
        before {
            if step <= 0 {
                return Err(Error::value("step must be greater than zero"));
            };
            let d = wrap_dim(dim, self.ndim())?;
            if self.ndim() == 0 {
                return Err(Error::index("slice() cannot be applied to a 0-dim tensor."));
            };
        }
        record "SliceBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().slice(d, start, stop, step as usize)?);
        save nothing
        backward |ctx, g| scattered(&g[0], &input_shape, "SliceBackwardBackward0",
            move |t| t.slice(dim, start, stop, step));
        forward formula(|t| t.map1(|x| x.slice(t.dim(dim), start, stop, step)));
        batched rows because "the gradient is scattered through the view with the forward's dims";
    }

    /// `squeeze()` (all size-1 dims) or `squeeze(dims)`.
    pub fn squeeze(&self, dims: Option<&[isize]>) -> Result<Tensor> {
        record match dims {
            None => "SqueezeBackward0",
            Some([_]) => "SqueezeBackward1",
            Some(_) => "SqueezeBackward2",
        }, [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().squeeze(dims)?);
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].reshape(&isizes(&ctx.shape(&input_shape)))?)]);
        forward formula(|t| reshaped_tangent(t, &out));
        batched formula;
    }

    /// `unsqueeze(dim)`.
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        record "UnsqueezeBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().unsqueeze(dim)?);
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].reshape(&isizes(&ctx.shape(&input_shape)))?)]);
        forward formula(|t| reshaped_tangent(t, &out));
        batched formula;
    }

    /// `diagonal(offset, dim1, dim2)`.
    pub fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> Result<Tensor> {
        record "DiagonalBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let input_shape: Dims = self.shape().into();
        } => out = self.view_with_layout(self.layout().diagonal(offset, dim1, dim2)?);
        save nothing
        backward |ctx, g| scattered(&g[0], &input_shape, "DiagonalBackwardBackward0",
            move |t| t.diagonal(offset, dim1, dim2));
        forward formula(|t| t.map1(|x| x.diagonal(offset, t.dim(dim1), t.dim(dim2))));
        batched rows because "the gradient is scattered through the view with the forward's dims";
    }

    /// `as_strided(size, stride, storage_offset)`; the offset defaults to
    /// this tensor's.
    pub fn as_strided(
        &self,
        size: &[usize],
        stride: &[isize],
        offset: Option<usize>,
    ) -> Result<Tensor> {
        before {
            let storage_len = self.storage().nbytes() / self.dtype().itemsize();
            let offset = offset.unwrap_or(self.offset());
            let layout = Layout::as_strided(size, stride, offset, storage_len)?;
        }
        record "AsStridedBackward0", [self];
        configure |r| r.views(as_strided_grad);
        compute {
            let plan = LazyPlan::new(self.layout(), size, stride, offset);
        } => out = self.view_with_layout(layout);
        save nothing
        backward |ctx, g| Ok(vec![Some(plan.get()?.backward(&g[0])?)]);
        forward rows(|t| t.map1(|x| as_strided_tangent(self, x, size, stride, offset)))
            because "the tangent is read through the storage positions of one input-shaped tangent";
        batched rows
            because "the gradient is summed into the storage positions of one input-shaped gradient";
    }

    /// `unbind(dim)`: the slices along `dim`, as views.
    pub fn unbind(&self, dim: isize) -> Result<Vec<Tensor>> {
        before {
            if self.ndim() == 0 {
                return Err(Error::index(
                    "Dimension specified as 0 but tensor has no dimensions",
                ));
            };
            let d = wrap_dim(dim, self.ndim())? as isize;
        }
        record "UnbindBackward0", [self];
        compute => outs = (0..self.shape()[d as usize] as isize)
            .map(|i| self.select(d, i))
            .collect::<Result<_>>()?;
        save nothing
        backward |ctx, g| Ok(vec![Some(Tensor::stack(g, d)?)]);
        forward formula(|t| pieces_of(t, |x| x.unbind(t.dim(d))));
        batched rows because "the gradients are stacked along the forward's dim";
    }

    /// `split(split_size, dim)`: chunks of `split_size` (the last may be
    /// smaller).
    pub fn split(&self, split_size: usize, dim: isize) -> Result<Vec<Tensor>> {
        before {
            let n = self.size(dim)?;
            let d = wrap_dim(dim, self.ndim())? as isize;
            if split_size == 0 && n != 0 {
                return Err(Error::runtime(format!(
                    "split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                )));
            };
        }
        record "SplitBackward0", [self];
        compute => outs = if n == 0 {
            vec![self.narrow(d, 0, 0)?]
        } else {
            (0..n)
                .step_by(split_size)
                .map(|s| self.narrow(d, s as isize, split_size.min(n - s)))
                .collect::<Result<_>>()?
        };
        save nothing
        backward |ctx, g| Ok(vec![Some(Tensor::cat(g, d)?)]);
        forward formula(|t| pieces_of(t, |x| x.split(split_size, t.dim(d))));
        batched rows because "the gradients are joined along the forward's dim";
    }

    /// `split(sizes, dim)` with explicit section sizes.
    pub fn split_with_sizes(&self, sizes: &[usize], dim: isize) -> Result<Vec<Tensor>> {
        before {
            let n = self.size(dim)?;
            let d = wrap_dim(dim, self.ndim())?;
            if sizes.iter().sum::<usize>() != n {
                return Err(Error::runtime(format!(
                    "split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension {d}), but got split_sizes={sizes:?}"
                )));
            };
            let d = d as isize;
        }
        record "SplitWithSizesBackward0", [self];
        compute {
            let mut start = 0;
        } => outs = sizes
            .iter()
            .map(|&len| {
                let t = self.narrow(d, start as isize, len);
                start += len;
                t
            })
            .collect::<Result<_>>()?;
        save nothing
        backward |ctx, g| Ok(vec![Some(Tensor::cat(g, d)?)]);
        forward formula(|t| pieces_of(t, |x| x.split_with_sizes(sizes, t.dim(d))));
        batched rows because "the gradients are joined along the forward's dim";
    }

    /// A copy with its own memory laid out in `fmt` (torch's `clone` with
    /// `memory_format`; see [`MemoryFormat::strides_like`]), or torch's
    /// error when `fmt` needs another rank.
    pub fn try_copy_as(&self, fmt: MemoryFormat) -> Result<Tensor> {
        before {
            if fmt == MemoryFormat::Contiguous {
                return Ok(self.copy());
            };
        }
        record "CloneBackward0", [self];
        compute {
            let strides = fmt.strides_like(self.layout())?;
        } => out = crate::kernels::basic::strided_copy(self, &strides)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].clone())]);
        forward formula(|t| t.map1(|t| t.try_copy_as(fmt)));
        batched rows because "not declared batched yet, though g passes through and would broadcast";
    }
}

impl Tensor {
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

    /// `alias()`: a view with the same layout (`AliasBackward0`).
    pub fn alias(&self) -> Result<Tensor> {
        self.alias_named("AliasBackward0")
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

    /// `broadcast_to(shape)`.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        let s: Vec<isize> = shape.iter().map(|&n| n as isize).collect();
        self.expand(&s)
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
        self.try_copy_as(MemoryFormat::Preserve)
            .expect("preserve applies to every rank")
    }
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

/// The inverse of the permutation `dims` (of as many dims).
fn inverse_permutation(dims: &[isize]) -> Result<SmallVec<[isize; 6]>> {
    let mut inverse = smallvec::smallvec![0isize; dims.len()];
    for (i, &d) in dims.iter().enumerate() {
        inverse[wrap_dim(d, dims.len())?] = i as isize;
    }
    Ok(inverse)
}

/// Permutation `dims` (of as many dims) of a tensor seen behind a leading
/// batch dim.
fn with_batch_dim(dims: &[isize]) -> Result<Vec<isize>> {
    std::iter::once(Ok(0))
        .chain(
            dims.iter()
                .map(|&d| Ok(wrap_dim(d, dims.len())? as isize + 1)),
        )
        .collect()
}

/// The tangent of `input.as_strided(size, stride, offset)` for a tangent
/// `x` of `input`: the same view of `x` when it is laid out like `input`,
/// else the same elements gathered from it.
fn as_strided_tangent(
    input: &Tensor,
    x: &Tensor,
    size: &[usize],
    stride: &[isize],
    offset: usize,
) -> Result<Tensor> {
    let plan = AsStridedPlan::new(input.layout(), size, stride, offset)?;
    match (offset + x.offset()).checked_sub(input.offset()) {
        Some(o) if plan.output_within_input && x.strides() == input.strides() => {
            x.as_strided(size, stride, Some(o))
        }
        _ => plan.forward(x),
    }
}

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
    AsStridedPlan::new(input_like.layout(), size, stride, offset)?.backward(g)
}

/// `as_strided`'s backward plan, built on the first backward from the
/// layouts the op recorded (an op that records nothing builds none).
struct LazyPlan {
    input: Layout,
    size: Dims,
    stride: SmallVec<[isize; 6]>,
    offset: usize,
    plan: OnceLock<AsStridedPlan>,
}

impl LazyPlan {
    fn new(input: &Layout, size: &[usize], stride: &[isize], offset: usize) -> Self {
        LazyPlan {
            input: input.clone(),
            size: size.into(),
            stride: stride.into(),
            offset,
            plan: OnceLock::new(),
        }
    }

    fn get(&self) -> Result<&AsStridedPlan> {
        if let Some(plan) = self.plan.get() {
            return Ok(plan);
        }
        let plan = AsStridedPlan::new(&self.input, &self.size, &self.stride, self.offset)?;
        Ok(self.plan.get_or_init(|| plan))
    }
}

/// What `as_strided`'s backward needs: where the input's and the output's
/// elements live in (a window of) the shared storage.
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
    fn new(input: &Layout, size: &[usize], stride: &[isize], offset: usize) -> Result<Self> {
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
        let input_count = if input.is_non_overlapping() {
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
        let out = crate::kernels::basic::dense_span_bytes(&t);
        (out, t.strides().to_vec())
    }
}
