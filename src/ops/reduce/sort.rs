//! Sorting along a dim: `sort` returns the values and the int64 positions
//! they came from; the gradient of each value goes back to its position.
//! `argsort`, `msort`, `topk` and `kthvalue` are built on it.

use crate::autograd::{derivatives, Tangents};
use crate::kernels::sort::{sort_last, topk_last};
use crate::tensor::wrap_dim;
use crate::{Result, Tensor};

/// `rows(x)` run on the rows along dim `d` of `x` (the last dim of a
/// contiguous copy with `d` moved there), its results moved back:
/// contiguous values and indices.
fn along_dim(
    x: &Tensor,
    d: usize,
    rows: impl FnOnce(&Tensor) -> Result<(Tensor, Tensor)>,
) -> Result<(Tensor, Tensor)> {
    let last = x.ndim().saturating_sub(1);
    if d == last {
        return rows(&x.contiguous());
    }
    let (d, last) = (d as isize, last as isize);
    let (v, i) = rows(&x.transpose(d, last)?.contiguous())?;
    Ok((
        v.transpose(d, last)?.contiguous(),
        i.transpose(d, last)?.contiguous(),
    ))
}

/// Sorts `x` along dim `d` (0 for a 0-dim `x`): contiguous values and
/// indices of `x`'s shape.
fn sort_dim(x: &Tensor, d: usize, descending: bool) -> Result<(Tensor, Tensor)> {
    along_dim(x, d, |rows| sort_last(rows, descending))
}

/// The `k` largest (smallest without `largest`) elements of `x` along dim
/// `d`, as [`sort_dim`] lays them out; torch returns a 0-dim input itself,
/// for k = 0 too.
fn topk_dim(x: &Tensor, d: usize, k: usize, largest: bool) -> Result<(Tensor, Tensor)> {
    let k = if x.ndim() == 0 { 1 } else { k };
    along_dim(x, d, |rows| topk_last(rows, k, largest))
}

/// The dim a sort or selection works along: `dim` wrapped, 0 for a 0-dim
/// tensor.
pub(super) fn sort_axis(x: &Tensor, dim: isize) -> Result<usize> {
    if x.ndim() == 0 {
        Ok(0)
    } else {
        wrap_dim(dim, x.ndim())
    }
}

/// The tangent `tx` of a sort's input taken at the sorted positions `idx`
/// along dim `d` (`idx` may select fewer than the dim holds); a tangent
/// with leading batch dims (forward mode under vmap) takes the same
/// positions in each.
fn gather_tangent(tx: &Tensor, idx: &Tensor, d: usize) -> Result<Tensor> {
    if idx.ndim() == 0 {
        return Ok(tx.clone());
    }
    let from_end = d as isize - idx.ndim() as isize;
    // The tangent's batch dims, then the indices' own.
    let lead = tx.ndim() - idx.ndim();
    let shape: Vec<isize> = tx.shape()[..lead]
        .iter()
        .chain(idx.shape())
        .map(|&n| n as isize)
        .collect();
    tx.gather(from_end, &idx.expand(&shape)?)
}

/// The gradient of a sort or a selection: `g` put back at the positions
/// `idx` along dim `d` of an input of `shape` (zero elsewhere).
fn scatter_back(shape: &[usize], d: usize, idx: &Tensor, g: &Tensor) -> Result<Tensor> {
    Tensor::zeros(shape, g.dtype()).scatter(d as isize, idx, g)
}

/// The output tangents of a sort or a selection: the values' tangent at
/// the positions `idx`, none for the indices.
fn selected_tangents(t: &Tangents, idx: &Tensor, d: usize) -> Result<Vec<Option<Tensor>>> {
    let v = t.map1(|tx| gather_tangent(tx, idx, d))?;
    Ok(vec![v[0].clone(), None])
}

derivatives! {
    table FORMULAS("sorting: sort, topk") for Tensor;

    /// `sort(dim=-1, descending=False)`: `(values, indices)` along `dim`,
    /// NaN above every number, equal elements in their original order.
    pub fn sort(&self, dim: isize, descending: bool) -> Result<(Tensor, Tensor)> {
        record "SortBackward0", [self];
        compute {
            let d = sort_axis(self, dim)?;
            let shape = self.shape().to_vec();
        } => out = sort_dim(self, d, descending)?;
        save |s| {
            s.save_output("indices", &out.1, 1);
        }
        backward |ctx, g| Ok(vec![Some(scatter_back(&shape, d, &ctx.saved(0)?, &g[0])?)]);
        forward formula(|t| selected_tangents(t, &out.1, d));
        batched rows because
            "the indices are gathered per row of the input's rank, which has no room for a batch dim";
    }

    /// `topk(k, dim=-1, largest=True)`: `(values, indices)` of the `k`
    /// largest (smallest without `largest`) elements along `dim`, in the
    /// order [`Tensor::sort`] gives them, found by selection.
    pub fn topk(&self, k: i64, dim: isize, largest: bool) -> Result<(Tensor, Tensor)> {
        before {
            let n = if self.ndim() == 0 { 1 } else { self.size(dim)? };
            if k < 0 || k as usize > n {
                return Err(crate::Error::runtime("selected index k out of range"));
            };
        }
        record "TopkBackward0", [self];
        compute {
            let d = sort_axis(self, dim)?;
            let shape = self.shape().to_vec();
        } => out = topk_dim(self, d, k as usize, largest)?;
        save |s| {
            s.save_output("indices", &out.1, 1);
        }
        backward |ctx, g| Ok(vec![Some(scatter_back(&shape, d, &ctx.saved(0)?, &g[0])?)]);
        forward formula(|t| selected_tangents(t, &out.1, d));
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

    /// `kthvalue(k, dim=-1, keepdim=False)`: `(values, indices)` of the
    /// `k`-th smallest element (from 1) along `dim`.
    pub fn kthvalue(&self, k: i64, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = sort_axis(self, dim)?;
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

/// Which median: `median` returns NaN (and the first NaN's index) for a
/// row holding one; `nanmedian` the median of the row's other values.
#[derive(Clone, Copy, PartialEq)]
enum Nan {
    Propagate,
    Ignore,
}

/// The lower median of `x` along dim `d` with its index, from the sort
/// (NaN sorts last, in order, so the first NaN sits after the numbers).
fn median_along(x: &Tensor, d: usize, keepdim: bool, nan: Nan) -> Result<(Tensor, Tensor)> {
    let n = x.shape()[d] as i64;
    let di = d as isize;
    let (v, i) = x.sort(di, false)?;
    let numbers = x.isnan().logical_not().sum(Some(&[di]), true, None)?;
    let pos = match nan {
        // (c - 1) / 2 of the c numbers; 0 (a NaN) when there are none.
        Nan::Ignore => numbers
            .sub(&Tensor::scalar(1i64))?
            .floor_divide(&Tensor::scalar(2i64))?
            .clamp_min(&Tensor::scalar(0i64))?,
        // The first NaN where there is one, else (n - 1) / 2.
        Nan::Propagate => numbers.r#where(
            &numbers.lt(&Tensor::scalar(n))?,
            &Tensor::scalar((n - 1).max(0) / 2),
        )?,
    };
    let pick = |t: &Tensor| -> Result<Tensor> {
        let one = t.gather(di, &pos)?;
        if keepdim {
            Ok(one)
        } else {
            one.squeeze(Some(&[di]))
        }
    };
    Ok((pick(&v)?, pick(&i)?))
}

impl Tensor {
    fn median_impl(&self, dim: Option<isize>, keepdim: bool, nan: Nan) -> Result<(Tensor, Tensor)> {
        let op = if nan == Nan::Ignore {
            "nanmedian"
        } else {
            "median"
        };
        if self.dtype().is_complex() {
            return Err(crate::Error::runtime(format!(
                "{op}() does not support complex inputs"
            )));
        }
        let Some(dim) = dim else {
            if self.numel() == 0 {
                let nan_value = Tensor::full(&[], crate::Scalar::Float(f64::NAN), self.dtype());
                return Ok((nan_value, Tensor::scalar(0i64)));
            }
            let flat = self.reshape(&[-1])?;
            return median_along(&flat, 0, false, nan);
        };
        if self.ndim() == 0 {
            wrap_dim(dim, 1)?;
            return Ok((self.clone(), Tensor::zeros(&[], crate::DType::Int64)));
        }
        let d = wrap_dim(dim, self.ndim())?;
        if self.shape()[d] == 0 {
            return Err(crate::Error::index(format!(
                "{op}(): Expected reduction dim {d} to have non-zero size."
            )));
        }
        median_along(self, d, keepdim, nan)
    }

    /// `median()`: the lower median of all elements (NaN if any is NaN).
    pub fn median_all(&self) -> Result<Tensor> {
        Ok(self.median_impl(None, false, Nan::Propagate)?.0)
    }

    /// `median(dim, keepdim=False)`: `(values, indices)` of the lower
    /// median along `dim`; a row holding NaN gives NaN and its first NaN's
    /// index.
    pub fn median_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.median_impl(Some(dim), keepdim, Nan::Propagate)
    }

    /// `nanmedian()`: the lower median of the elements that are not NaN.
    pub fn nanmedian_all(&self) -> Result<Tensor> {
        Ok(self.median_impl(None, false, Nan::Ignore)?.0)
    }

    /// `nanmedian(dim, keepdim=False)`: `(values, indices)` of the lower
    /// median of each row's numbers (NaN for a row of NaNs).
    pub fn nanmedian_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.median_impl(Some(dim), keepdim, Nan::Ignore)
    }
}
