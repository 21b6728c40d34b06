//! Copying shape operations: concatenation, stacking, flips, rolls,
//! repeats, triangular masks and diagonals.
//!
//! Every result is a new contiguous tensor (version 0). The kernels are the
//! strided copies of `kernels::shape`: a destination region (often a view of
//! the fresh output) is filled from a source read through arbitrary,
//! possibly negative, strides.
//!
//! The differentiable ops are rows of the derivative table `FORMULAS`;
//! gradients are written with differentiable ops (slices, flips, sums,
//! diagonals), so higher orders work.

use crate::autograd::{derivatives, Tangents};
use crate::kernels;
use crate::kernels::shape::fill_from;
pub(crate) use crate::kernels::shape::{signed, walk};
use crate::tensor::{wrap_dim, Layout};
use crate::{Error, Result, Tensor};

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

/// Sizes of a tensor as a `[n, ...]` string like torch prints them.
pub(crate) fn fmt_shape(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

impl Tensor {
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

    /// padded with leading ones.
    pub fn tile(&self, dims: &[usize]) -> Result<Tensor> {
        let mut reps = vec![1usize; self.ndim().saturating_sub(dims.len())];
        reps.extend_from_slice(dims);
        self.repeat(&reps)
    }

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
    table FORMULAS("shape: cat, stack, flip, roll, repeat, tril, triu, diag, diag_embed") for Tensor;

    /// `cat(tensors, dim)`: concatenation along an existing dim, promoting
    /// dtypes; 1-D tensors of shape `(0,)` are skipped as in torch.
    pub fn cat(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
        record "CatBackward0", each [tensors];
        compute {
            let y = kernels::shape::cat(tensors, dim)?;
            // Each input's piece of the output along `dim` (legacy empty
            // inputs have none).
            let skip = |t: &Tensor| t.ndim() == 1 && t.shape()[0] == 0;
            let d = match tensors.iter().find(|t| !skip(t)) {
                Some(f) => wrap_dim(dim, f.ndim())?,
                None => 0,
            };
            let mut pieces: Vec<Option<(usize, usize)>> = Vec::with_capacity(tensors.len());
            let mut start = 0;
            for t in tensors {
                if skip(t) {
                    pieces.push(None);
                } else {
                    pieces.push(Some((start, t.shape()[d])));
                    start += t.shape()[d];
                }
            };
        } => out = y;
        save nothing
        // Each input's gradient is its slice of g along `dim`.
        backward |ctx, g| {
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
        };
        // The tangents (zeros for inputs without one) concatenated.
        forward formula(|t| {
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
        batched rows because "each gradient is a slice of g along `dim`, counted without a batch dim";
    }

    /// `stack(tensors, dim)`: joins equally shaped tensors along a new dim.
    pub fn stack(tensors: &[Tensor], dim: isize) -> Result<Tensor> {
        before {
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
            };
            let d = wrap_dim(dim, first.ndim() + 1)?;
        }
        record "StackBackward0", each [tensors];
        compute {
            let parts: Vec<Tensor> = tensors
                .iter()
                .map(|t| t.unsqueeze(d as isize))
                .collect::<Result<_>>()?;
            let n = tensors.len();
        } => out = Tensor::cat(&parts, d as isize)?;
        save nothing
        // Input i's gradient is g at position i along the new dim.
        backward |ctx, g| {
            (0..n)
                .map(|i| {
                    ctx.needs(i)
                        .then(|| g[0].select(d as isize, i as isize))
                        .transpose()
                })
                .collect()
        };
        forward formula(|t| {
            let parts = all_or_zeros(t, tensors)?;
            Ok(vec![Some(Tensor::stack(&parts, t.dim(d as isize))?)])
        });
        batched rows because "the gradients are slices of g along `dim`, counted without a batch dim";
    }

    /// `flip(dims)`: a copy with the order of elements reversed along dims.
    pub fn flip(&self, dims: &[isize]) -> Result<Tensor> {
        record "FlipBackward0", [self];
        compute {
            let flip_dims = dims.to_vec();
        } => out = kernels::shape::flip(self, dims)?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].flip(&flip_dims)?)]);
        forward formula(|t| t.map1(|x| x.flip(&tangent_dims(t, dims))));
        batched rows because "the flipped dims are counted on g without a batch dim";
    }

    /// `roll` along non-empty `dims` (see [`Tensor::roll`]).
    fn roll_dims(&self, shifts: &[i64], dims: &[isize]) -> Result<Tensor> {
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
    fn roll_flat(&self, shifts: &[i64]) -> Result<Tensor> {
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
    pub fn repeat(&self, sizes: &[usize]) -> Result<Tensor> {
        record "RepeatBackward0", [self];
        compute {
            let y = kernels::shape::repeat(self, sizes)?;
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
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        record "TrilBackward0", [self];
        compute => out = kernels::shape::triangle(self, diagonal, true, "tril")?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].tril(diagonal)?)]);
        forward formula(|t| t.map1(|x| x.tril(diagonal)));
        // tril acts on the last two dims of g, whatever leads them.
        batched broadcast;
        inplace tril_(self) |s| s.tril(diagonal); {
            let r = self.tril(diagonal)?;
        } => self.copy_(&r);
    }

    /// `triu(diagonal)`: zeroes elements below the `diagonal`-th diagonal.
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        record "TriuBackward0", [self];
        compute => out = kernels::shape::triangle(self, diagonal, false, "triu")?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].triu(diagonal)?)]);
        forward formula(|t| t.map1(|x| x.triu(diagonal)));
        batched broadcast;
        inplace triu_(self) |s| s.triu(diagonal); {
            let r = self.triu(diagonal)?;
        } => self.copy_(&r);
    }

    /// `diag(diagonal)`: a 1-D tensor becomes a square matrix with it on the
    /// given diagonal; a 2-D tensor gives a copy of that diagonal.
    pub fn diag(&self, diagonal: i64) -> Result<Tensor> {
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
    pub fn diag_embed(&self, offset: i64, dim1: isize, dim2: isize) -> Result<Tensor> {
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

#[cfg(test)]
pub(crate) mod tests {
    use crate::autograd::{self, EngineOptions, GradInput, GradOptions};
    use crate::Tensor;
    use std::slice::from_ref;

    /// The gradients of `f` at `x` for a batch of output gradients `gs`,
    /// from one batched backward and from one backward per row.
    pub(crate) fn batched_and_rows(
        f: impl Fn(&Tensor) -> crate::Result<Tensor>,
        x: &Tensor,
        gs: &Tensor,
    ) -> (bool, Vec<f64>, Vec<f64>) {
        x.set_requires_grad(true).unwrap();
        let y = f(x).unwrap();
        let node_batched = y.grad_fn().unwrap().node.supports_batched();
        let inputs = [GradInput::Tensor(x.clone())];
        let keep = EngineOptions {
            retain_graph: Some(true),
            ..Default::default()
        };
        let batched = autograd::grad_batched(from_ref(&y), &inputs, from_ref(gs), keep).unwrap();
        let rows: Vec<f64> = (0..gs.shape()[0])
            .flat_map(|b| {
                let g = gs.select(0, b as isize).unwrap();
                let opts = GradOptions::new().grad_outputs([g]).retain_graph(true);
                let r = autograd::grad_with(from_ref(&y), &inputs, &opts).unwrap();
                r[0].to_vec::<f64>()
            })
            .collect();
        (
            node_batched,
            batched[0].as_ref().unwrap().to_vec::<f64>(),
            rows,
        )
    }

    #[test]
    fn tril_and_triu_backward_take_a_batch_of_gradients() {
        let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
        let gs: Vec<f64> = (1..=12).map(f64::from).collect();
        let gs = Tensor::from_slice(&gs, &[2, 2, 3]).unwrap();
        for f in [|x: &Tensor| x.tril(0), |x: &Tensor| x.triu(1)] {
            let (node_batched, batched, rows) = batched_and_rows(f, &x.detach(), &gs);
            assert!(node_batched);
            assert_eq!(batched, rows);
        }
        // tril(0) keeps (0,0), (1,0), (1,1) of each gradient row.
        let (_, batched, _) = batched_and_rows(|x| x.tril(0), &x.detach(), &gs);
        assert_eq!(
            batched,
            vec![1.0, 0.0, 0.0, 4.0, 5.0, 0.0, 7.0, 0.0, 0.0, 10.0, 11.0, 0.0]
        );
    }
}
