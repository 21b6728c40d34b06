//! Sorting along a dim: `sort` returns the values and the int64 positions
//! they came from; the gradient of each value goes back to its position.
//! `argsort`, `msort`, `topk` and `kthvalue` are built on it.

use crate::autograd::derivatives;
use crate::kernels::sort::sort_last;
use crate::tensor::wrap_dim;
use crate::{Result, Tensor};

/// Sorts `x` along dim `d` (0 for a 0-dim `x`): contiguous values and
/// indices of `x`'s shape.
fn sort_dim(x: &Tensor, d: usize, descending: bool) -> Result<(Tensor, Tensor)> {
    if x.ndim() == 0 {
        return sort_last(&x.contiguous(), descending);
    }
    let last = x.ndim() - 1;
    if d == last {
        return sort_last(&x.contiguous(), descending);
    }
    let moved = x.transpose(d as isize, last as isize)?.contiguous();
    let (v, i) = sort_last(&moved, descending)?;
    Ok((
        v.transpose(d as isize, last as isize)?.contiguous(),
        i.transpose(d as isize, last as isize)?.contiguous(),
    ))
}

/// The tangent `tx` of a sort's input taken at the sorted positions `idx`
/// along dim `d`; a tangent with leading batch dims (forward mode under
/// vmap) takes the same positions in each.
fn gather_tangent(tx: &Tensor, idx: &Tensor, d: usize) -> Result<Tensor> {
    if idx.ndim() == 0 {
        return Ok(tx.clone());
    }
    let from_end = d as isize - idx.ndim() as isize;
    let shape: Vec<isize> = tx.shape().iter().map(|&n| n as isize).collect();
    tx.gather(from_end, &idx.expand(&shape)?)
}

derivatives! {
    table FORMULAS("sorting: sort") for Tensor;

    /// `sort(dim=-1, descending=False)`: `(values, indices)` along `dim`,
    /// NaN above every number, equal elements in their original order.
    pub fn sort(&self, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        record "SortBackward0", [self];
        compute {
            let d = if self.ndim() == 0 { 0 } else { wrap_dim(dim, self.ndim())? };
            let shape = self.shape().to_vec();
        } => out = sort_dim(self, d, descending)?;
        save |s| {
            s.save_output("indices", &out.1, 1);
        }
        backward |ctx, g| {
            let idx = ctx.saved(0)?;
            let zeros = Tensor::zeros(&shape, g[0].dtype());
            Ok(vec![Some(zeros.scatter(d as isize, &idx, &g[0])?)])
        };
        forward formula(|t| {
            let v = t.map1(|tx| gather_tangent(tx, &out.1, d))?;
            Ok(vec![v[0].clone(), None])
        });
        batched rows because
            "the indices are gathered per row of the input's rank, which has no room for a batch dim";
    }
}

impl Tensor {
    /// `argsort(dim=-1, descending=False)`: the indices of [`Tensor::sort`].
    pub fn argsort(&self, dim: isize, descending: bool) -> Result<Tensor> {
        Ok(self.sort(dim, descending)?.1)
    }

    /// `msort()`: the values sorted along dim 0.
    pub fn msort(&self) -> Result<Tensor> {
        Ok(self.sort(0, false)?.0)
    }

    /// `topk(k, dim=-1, largest=True)`: `(values, indices)` of the `k`
    /// largest (smallest without `largest`) elements along `dim`, in order.
    pub fn topk(&self, k: i64, dim: isize, largest: bool) -> Result<(Tensor, Tensor)> {
        let n = if self.ndim() == 0 { 1 } else { self.size(dim)? };
        if k < 0 || k as usize > n {
            return Err(crate::Error::runtime("selected index k out of range"));
        }
        let (v, i) = self.sort(dim, largest)?;
        if self.ndim() == 0 {
            return Ok((v, i));
        }
        Ok((v.narrow(dim, 0, k as usize)?, i.narrow(dim, 0, k as usize)?))
    }

    /// `kthvalue(k, dim=-1, keepdim=False)`: `(values, indices)` of the
    /// `k`-th smallest element (from 1) along `dim`.
    pub fn kthvalue(&self, k: i64, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = if self.ndim() == 0 {
            0
        } else {
            wrap_dim(dim, self.ndim())?
        };
        let n = if self.ndim() == 0 { 1 } else { self.shape()[d] };
        if k < 1 || k as usize > n {
            return Err(crate::Error::runtime(format!(
                "kthvalue(): selected number k out of range for dimension {d}"
            )));
        }
        let (v, i) = self.sort(dim, false)?;
        if self.ndim() == 0 {
            return Ok((v, i));
        }
        let pick = |t: Tensor| -> Result<Tensor> {
            let one = t.narrow(d as isize, (k - 1) as isize, 1)?;
            if keepdim {
                Ok(one)
            } else {
                one.squeeze(Some(&[d as isize]))
            }
        };
        Ok((pick(v)?, pick(i)?))
    }
}
