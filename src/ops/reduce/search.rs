//! Searching and counting: `searchsorted`, `unique` (sorted, consecutive,
//! by slices along a dim), `bincount`, `histc`, `mode`, the running
//! extrema `cummax`/`cummin` and `logcumsumexp`.
//!
//! Orders are torch's sort order: NaN above every number. `mode`,
//! `cummax` and `cummin` find positions here and take their values with
//! `gather`, so their gradients flow back to those positions through the
//! gather's derivative; the counting functions are not differentiable.

use super::sort::sort_axis;
use crate::autograd::derivatives;
use crate::kernels::sort::nan_last;
use crate::{dispatch_real, DType, Error, RealElement, Result, Tensor};
use std::cmp::Ordering;

/// `x` with dim `d` moved last, contiguous, as rows of its last dim
/// (one row for a 0-dim tensor).
fn rows_last(x: &Tensor, d: usize) -> Result<Tensor> {
    let last = x.ndim().saturating_sub(1);
    if d == last {
        return Ok(x.contiguous());
    }
    Ok(x.movedim(&[d as isize], &[last as isize])?.contiguous())
}

/// A tensor laid out by [`rows_last`] with its last dim moved back to `d`.
fn rows_back(t: &Tensor, d: usize) -> Result<Tensor> {
    let last = t.ndim().saturating_sub(1);
    if d == last {
        return Ok(t.clone());
    }
    Ok(t.movedim(&[last as isize], &[d as isize])?.contiguous())
}

/// `len` copies of `v`, or torch's error when that much memory cannot be had.
fn filled<T: Clone>(len: usize, v: T) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| {
        Error::runtime(format!(
            "[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: can't allocate memory: you tried to allocate {} bytes",
            len.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    out.resize(len, v);
    Ok(out)
}

/// `n`, the length of the rows, and the number of rows of a shape.
fn row_count(shape: &[usize]) -> (usize, usize) {
    let n = shape.last().copied().unwrap_or(1);
    let rows = shape.iter().product::<usize>().checked_div(n).unwrap_or(0);
    (n, rows)
}

impl Tensor {
    /// `searchsorted(values, right=False)`: for each value, the position in
    /// the sorted last dim of `self` (1-D, or with the leading dims of
    /// `values`) where it would be inserted to keep the order: before equal
    /// elements (after them with `right`). `sorter` gives the order of an
    /// unsorted `self`. The result is int64, or int32 with `out_int32`.
    pub fn searchsorted(
        &self,
        values: &Tensor,
        right: bool,
        out_int32: bool,
        sorter: Option<&Tensor>,
    ) -> Result<Tensor> {
        let _span = crate::trace::op("aten::searchsorted", &[self, values]);
        let (seq, vals) = (self.detach(), values.detach());
        let shared = seq.ndim() == 1;
        let leading = |t: &Tensor| t.shape()[..t.ndim().saturating_sub(1)].to_vec();
        if seq.ndim() == 0
            || (!shared && (vals.ndim() != seq.ndim() || leading(&seq) != leading(&vals)))
        {
            return Err(Error::runtime(format!(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor {:?} and input value tensor {:?}",
                seq.shape(),
                vals.shape()
            )));
        }
        let order = match sorter {
            None => None,
            Some(s) => Some(check_sorter(s, &seq)?),
        };
        if seq.dtype().is_complex() || vals.dtype().is_complex() {
            return Err(Error::runtime(
                "torch.searchsorted(): complex tensors are not supported",
            ));
        }
        let dt = crate::tensor::result_type(&[seq.promotion_operand(), vals.promotion_operand()]);
        let (seq, vals) = (
            seq.to_dtype(dt).contiguous(),
            vals.to_dtype(dt).contiguous(),
        );
        let (n, _) = row_count(seq.shape());
        let m = vals.shape().last().copied().unwrap_or(1);
        let pos: Vec<i64> = dispatch_real!(dt, T => {
            let (s, v) = (seq.to_vec::<T>(), vals.to_vec::<T>());
            search(&s, n, &v, m, shared, order.as_deref(), right)
        }, else unreachable!("complex refused above"));
        let out = Tensor::from_slice(&pos, vals.shape())?;
        Ok(if out_int32 {
            out.to_dtype(DType::Int32)
        } else {
            out
        })
    }

    /// `unique(sorted=True, return_inverse, return_counts, dim=None)`: the
    /// distinct elements in ascending order (NaNs each distinct, last), or
    /// with `dim` the distinct slices along it in lexicographic order;
    /// with the index of each element's (slice's) value and the counts.
    pub fn unique_all(&self, dim: Option<isize>) -> Result<(Tensor, Tensor, Tensor)> {
        let _span = crate::trace::op("aten::unique", &[self]);
        self.unique_impl(dim, true)
    }

    /// `unique_consecutive(return_inverse, return_counts, dim=None)`: one
    /// element (slice) of each run of equal neighbours, in order.
    pub fn unique_consecutive(&self, dim: Option<isize>) -> Result<(Tensor, Tensor, Tensor)> {
        let _span = crate::trace::op("aten::unique_consecutive", &[self]);
        self.unique_impl(dim, false)
    }

    fn unique_impl(&self, dim: Option<isize>, sort: bool) -> Result<(Tensor, Tensor, Tensor)> {
        if self.dtype().is_complex() {
            return Err(Error::not_implemented("unique", self.dtype()));
        }
        let x = self.detach();
        let (rows, d) = match dim {
            None => (x.reshape(&[-1, 1])?, None),
            Some(dim) => {
                let d = crate::tensor::wrap_dim(dim, x.ndim().max(1))?;
                if x.ndim() == 0 {
                    return Err(Error::index(format!(
                        "Dimension out of range (expected to be in range of [-1, 0], but got {dim})"
                    )));
                }
                let len = x.shape()[d] as isize;
                (
                    x.movedim(&[d as isize], &[0])?.reshape(&[len, -1])?,
                    Some(d),
                )
            }
        };
        let rows = rows.contiguous();
        let (width, count) = (rows.shape()[1], rows.shape()[0]);
        let (firsts, inverse, counts) = dispatch_real!(rows.dtype(), T => {
            group_rows(&rows.to_vec::<T>(), count, width, sort)
        }, else unreachable!("complex refused above"));
        let picks = Tensor::from_slice(&firsts, &[firsts.len()])?;
        let values = match d {
            None => x.reshape(&[-1])?.index_select(0, &picks)?,
            Some(d) => x.index_select(d as isize, &picks)?,
        };
        let by_slice = [count];
        let inverse =
            Tensor::from_slice(&inverse, if d.is_none() { self.shape() } else { &by_slice })?;
        let counts = Tensor::from_slice(&counts, &[firsts.len()])?;
        Ok((values, inverse, counts))
    }

    /// `bincount(weights=None, minlength=0)`: how often each value of a
    /// 1-D tensor of non-negative integers occurs (the sum of its weights
    /// with `weights`: float64 for integer weights, else their dtype).
    pub fn bincount(&self, weights: Option<&Tensor>, minlength: i64) -> Result<Tensor> {
        let _span = crate::trace::op("aten::bincount", &[self]);
        let integral = !self.dtype().is_floating_point()
            && !self.dtype().is_complex()
            && self.dtype() != DType::Bool;
        if self.ndim() != 1 || !integral {
            return Err(Error::runtime(
                "bincount only supports 1-d non-negative integral inputs.",
            ));
        }
        if minlength < 0 {
            return Err(Error::runtime("minlength should be >= 0"));
        }
        let xs = self.to_dtype(DType::Int64).to_vec::<i64>();
        if xs.iter().any(|&v| v < 0) {
            return Err(Error::runtime(
                "bincount only supports 1-d non-negative integral inputs.",
            ));
        }
        let len = xs
            .iter()
            .map(|&v| v as usize + 1)
            .max()
            .unwrap_or(0)
            .max(minlength as usize);
        match weights {
            None => {
                let mut out = filled(len, 0i64)?;
                for &v in &xs {
                    out[v as usize] += 1;
                }
                Tensor::from_slice(&out, &[len])
            }
            Some(w) => {
                if w.ndim() != 1 || w.numel() != xs.len() {
                    return Err(Error::runtime(
                        "weights should be 1-d and have the same length as input",
                    ));
                }
                let dt = if w.dtype().is_floating_point() {
                    w.dtype()
                } else {
                    DType::Float64
                };
                let ws = w.detach().to_dtype(DType::Float64).to_vec::<f64>();
                let mut out = filled(len, 0.0f64)?;
                for (&v, &wt) in xs.iter().zip(&ws) {
                    out[v as usize] += wt;
                }
                Ok(Tensor::from_slice(&out, &[len])?.to_dtype(dt))
            }
        }
    }

    /// `histc(bins=100, min=0, max=0)`: counts of the elements in `bins`
    /// equal bins spanning `[min, max]` (the data's range when both are
    /// 0), ignoring elements outside it and NaN; the last bin includes
    /// `max`. The result has the input's float dtype.
    pub fn histc(&self, bins: i64, min: f64, max: f64) -> Result<Tensor> {
        let _span = crate::trace::op("aten::histc", &[self]);
        if !self.dtype().is_floating_point() {
            return Err(Error::not_implemented("histogram_cpu", self.dtype()));
        }
        if bins <= 0 {
            return Err(Error::runtime("torch.histc: bins must be > 0"));
        }
        let xs = self.detach().to_dtype(DType::Float64).to_vec::<f64>();
        let (mut lo, mut hi) = (min, max);
        if lo == hi && !xs.is_empty() {
            let finite = xs.iter().filter(|v| v.is_finite());
            lo = finite.clone().fold(f64::INFINITY, |a, &b| a.min(b));
            hi = finite.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
            if lo > hi {
                (lo, hi) = (0.0, 0.0);
            }
        }
        if lo == hi {
            (lo, hi) = (lo - 1.0, hi + 1.0);
        }
        if lo > hi || !lo.is_finite() || !hi.is_finite() {
            return Err(Error::runtime(format!(
                "torch.histc: max must be larger than min and both finite, got min={lo} and max={hi}"
            )));
        }
        let nb = bins as usize;
        let mut out = filled(nb, 0.0f64)?;
        for &v in &xs {
            if v >= lo && v <= hi {
                let b = (((v - lo) / (hi - lo)) * nb as f64) as usize;
                out[b.min(nb - 1)] += 1.0;
            }
        }
        Ok(Tensor::from_slice(&out, &[nb])?.to_dtype(self.dtype()))
    }

    /// `mode(dim=-1, keepdim=False)`: `(values, indices)` of the most
    /// frequent value along `dim` (the smallest of equally frequent ones)
    /// and its last position; the values' gradient goes to that position.
    pub fn mode(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let _span = crate::trace::op("aten::mode", &[self]);
        let d = sort_axis(self, dim)?;
        let x = self.detach();
        let rows = rows_last(&x, d)?;
        let (n, count) = row_count(rows.shape());
        if n == 0 && count > 0 {
            return Err(Error::index(format!(
                "mode(): Expected reduction dim {d} to have non-zero size."
            )));
        }
        let idx: Vec<i64> = dispatch_real!(rows.dtype(), T => {
            let vals = rows.to_vec::<T>();
            (0..count).map(|r| mode_row(&vals[r * n..(r + 1) * n])).collect()
        }, else return Err(Error::not_implemented("mode", self.dtype())));
        self.select_along(d, idx, keepdim)
    }

    /// `cummax(dim)`: `(values, indices)` of the running maximum along
    /// `dim` (the later position among equal values; NaN, once reached,
    /// stays with its position).
    pub fn cummax(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        let _span = crate::trace::op("aten::cummax", &[self]);
        self.running_extreme(dim, Ordering::Greater)
    }

    /// `cummin(dim)`: as [`Tensor::cummax`] for the running minimum.
    pub fn cummin(&self, dim: isize) -> Result<(Tensor, Tensor)> {
        let _span = crate::trace::op("aten::cummin", &[self]);
        self.running_extreme(dim, Ordering::Less)
    }

    fn running_extreme(&self, dim: isize, keep: Ordering) -> Result<(Tensor, Tensor)> {
        let d = sort_axis(self, dim)?;
        let rows = rows_last(&self.detach(), d)?;
        let (n, count) = row_count(rows.shape());
        let idx: Vec<i64> = dispatch_real!(rows.dtype(), T => {
            let vals = rows.to_vec::<T>();
            (0..count).flat_map(|r| running_row(&vals[r * n..(r + 1) * n], keep)).collect()
        }, else return Err(Error::not_implemented("cummax", self.dtype())));
        let idx = rows_back(&Tensor::from_slice(&idx, rows.shape())?, d)?;
        let values = if self.ndim() == 0 {
            self.clone()
        } else {
            self.gather(d as isize, &idx)?
        };
        Ok((values, idx))
    }

    /// The elements at positions `idx` (one per row along dim `d`), with
    /// the positions, dim `d` kept with size 1 or dropped.
    fn select_along(&self, d: usize, idx: Vec<i64>, keepdim: bool) -> Result<(Tensor, Tensor)> {
        if self.ndim() == 0 {
            return Ok((self.clone(), Tensor::scalar(0i64)));
        }
        let mut shape = self.shape().to_vec();
        shape[d] = 1;
        let mut moved = shape.clone();
        moved.remove(d);
        moved.push(1);
        let idx = rows_back(&Tensor::from_slice(&idx, &moved)?, d)?;
        let values = self.gather(d as isize, &idx)?;
        if keepdim {
            return Ok((values, idx));
        }
        let dims = [d as isize];
        Ok((values.squeeze(Some(&dims))?, idx.squeeze(Some(&dims))?))
    }
}

/// torch's checks of a `sorter`: int64 positions of the sequence's shape.
fn check_sorter(s: &Tensor, seq: &Tensor) -> Result<Vec<i64>> {
    if s.dtype() != DType::Int64 {
        return Err(Error::runtime(format!(
            "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {}",
            s.dtype().scalar_type_name()
        )));
    }
    if s.shape() != seq.shape() {
        return Err(Error::runtime(format!(
            "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor {:?} and got sorter tensor {:?}",
            seq.shape(),
            s.shape()
        )));
    }
    let order = s.contiguous().to_vec::<i64>();
    let n = seq.shape().last().copied().unwrap_or(1) as i64;
    if order.iter().any(|&i| i < 0 || i >= n) {
        return Err(Error::runtime(
            "torch.searchsorted(): sorter index out of range",
        ));
    }
    Ok(order)
}

/// The insertion positions of each row of `v` (rows of `m`) in the
/// matching row of `s` (rows of `n`; one shared row when `shared`),
/// through the row's `order` when given.
fn search<T: RealElement>(
    s: &[T],
    n: usize,
    v: &[T],
    m: usize,
    shared: bool,
    order: Option<&[i64]>,
    right: bool,
) -> Vec<i64> {
    let mut out = Vec::with_capacity(v.len());
    let mut row: Vec<T> = Vec::with_capacity(n);
    for (r, vals) in v.chunks(m.max(1)).enumerate() {
        let base = if shared { 0 } else { r * n };
        if r == 0 || !shared {
            row.clear();
            match order {
                None => row.extend_from_slice(&s[base..base + n]),
                Some(o) => row.extend(o[base..base + n].iter().map(|&i| s[base + i as usize])),
            }
        }
        for x in vals {
            let p = if right {
                row.partition_point(|e| nan_last(e, x) != Ordering::Greater)
            } else {
                row.partition_point(|e| nan_last(e, x) == Ordering::Less)
            };
            out.push(p as i64);
        }
    }
    out
}

/// Groups the `count` rows of `width` elements of `vals`: equal rows
/// (element by element, so NaN never equals) in sorted order with `sort`,
/// adjacent runs otherwise. Returns each group's first row, the group of
/// each row and each group's size.
fn group_rows<T: RealElement>(
    vals: &[T],
    count: usize,
    width: usize,
    sort: bool,
) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let row = |i: usize| &vals[i * width..(i + 1) * width];
    let mut order: Vec<usize> = (0..count).collect();
    if sort {
        order.sort_by(|&a, &b| {
            row(a)
                .iter()
                .zip(row(b))
                .map(|(x, y)| nan_last(x, y))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
    }
    let (mut firsts, mut inverse, mut counts) = (Vec::new(), vec![0i64; count], Vec::new());
    for (k, &i) in order.iter().enumerate() {
        let same = k > 0 && row(order[k - 1]) == row(i);
        if !same {
            firsts.push(i as i64);
            counts.push(0);
        }
        inverse[i] = firsts.len() as i64 - 1;
        *counts.last_mut().expect("a group") += 1;
    }
    (firsts, inverse, counts)
}

/// The position of the mode of `row`: the most frequent value (the
/// smallest of ties), at its last position.
fn mode_row<T: RealElement>(row: &[T]) -> i64 {
    let mut order: Vec<usize> = (0..row.len()).collect();
    order.sort_by(|&a, &b| nan_last(&row[a], &row[b]).then(a.cmp(&b)));
    let (mut best, mut best_len, mut start) = (0usize, 0usize, 0usize);
    for k in 1..=order.len() {
        if k == order.len() || row[order[k]] != row[order[start]] {
            if k - start > best_len {
                (best, best_len) = (order[k - 1], k - start);
            }
            start = k;
        }
    }
    best as i64
}

/// The running arg-extreme of `row`: for `Greater` the later position of
/// a value at least the best so far (a NaN, once reached, stays).
fn running_row<T: RealElement>(row: &[T], keep: Ordering) -> Vec<i64> {
    let mut out = Vec::with_capacity(row.len());
    let mut best = 0usize;
    #[allow(clippy::eq_op)]
    for (i, x) in row.iter().enumerate() {
        let b = &row[best];
        let best_nan = b != b;
        if i == 0 || (!best_nan && (x != x || nan_last(x, b) != keep.reverse())) {
            best = i;
        }
        out.push(best as i64);
    }
    out
}

derivatives! {
    table FORMULAS("running log-sum-exp: logcumsumexp") for Tensor;

    /// `logcumsumexp(dim)`: `log(cumsum(exp(x)))` along `dim`, computed as
    /// a running log-add so that nothing overflows.
    pub fn logcumsumexp(&self, dim: isize) -> Result<Tensor> {
        before {
            if !self.dtype().is_floating_point() {
                return Err(Error::not_implemented("logcumsumexp_out_cpu", self.dtype()));
            };
        }
        record "LogcumsumexpBackward0", [self];
        compute {
            let d = sort_axis(self, dim)?;
            // The formulas name the dim from the end: gradients and tangents
            // may carry batch dims in front (vmap of jvp or of vjp).
            let from_end = d as isize - self.ndim() as isize;
        } => out = log_scan(self, d)?;
        save |s| {
            s.save("self", self);
            s.save_output("result", &out, 0);
        }
        // d out_j / d x_k = exp(x_k - out_j) for k <= j: the gradient is
        // exp(x_k) sum_{j >= k} g_j exp(-out_j), summed in log space for
        // the positive and negative parts of g separately. A 0-dim input's
        // result is itself, and so are the derivatives' (no dim to scan).
        backward |ctx, g| {
            if from_end == 0 {
                return Ok(vec![Some(g[0].clone())]);
            }
            let (x, y) = (ctx.saved(0)?, ctx.saved(1)?);
            if !crate::autograd::is_grad_enabled() {
                return Ok(vec![Some(log_weighted(&x, &y, &g[0], from_end, true)?)]);
            }
            // Note [logcumsumexp's differentiable backward]: the log-space
            // formula splits g by sign, so its derivative in g is lost where
            // g is 0 (as the all-zero cotangent of a double-backward jvp is).
            // Its value and its derivatives in x and y are kept; the
            // derivative in g comes from the same map written linearly in g.
            let split = log_weighted(&x, &y, &g[0].detach(), from_end, true)?;
            let lin = linear_backward(&x.detach(), &y.detach(), &g[0], from_end)?;
            let zero = Tensor::scalar(0.0);
            let only_derivative = lin.sub(&lin.detach())?.r#where(&lin.isfinite(), &zero)?;
            Ok(vec![Some(split.add(&only_derivative)?)])
        };
        forward formula(|t| t.map1(|t| if from_end == 0 {
            Ok(t.clone())
        } else {
            log_weighted(self, &out, t, from_end, false)
        }));
        batched rows because "the scan runs along a dim of the input's rank";
    }
}

/// `sum_{j >= k} g_j exp(x_k - y_j)` (`reverse`) or
/// `sum_{k <= j} t_k exp(x_k - y_j)` along `dim`, with the sign of `g`
/// split off so each part is a log-sum-exp.
fn log_weighted(x: &Tensor, y: &Tensor, g: &Tensor, dim: isize, reverse: bool) -> Result<Tensor> {
    let (zero, one) = (Tensor::scalar(0.0), Tensor::scalar(1.0));
    let none = Tensor::scalar(f64::NEG_INFINITY);
    // An output y_j of -inf (every x_k up to j is -inf) takes no part: its
    // terms would be -inf - (-inf). Masking them (not the values after the
    // fact) keeps NaN out of this formula's own derivatives too.
    let live = y.ne(&none)?;
    let part = |w: &Tensor| -> Result<Tensor> {
        // log(w) where w > 0, -inf elsewhere; the log never sees 0, so its
        // derivative stays finite where the mask drops it.
        let pos = w.gt(&zero)?;
        let lw = w.r#where(&pos, &one)?.log()?.r#where(&pos, &none)?;
        if reverse {
            let dims = [dim];
            let y_live = y.r#where(&live, &zero)?;
            let terms = lw.sub(&y_live)?.r#where(&live, &none)?;
            let s = terms.flip(&dims)?.logcumsumexp(dim)?.flip(&dims)?;
            // exp(x_k - y_j) is 0 where x_k is -inf, whatever the sum gives.
            let finite = x.ne(&none)?;
            let e = s.add(&x.r#where(&finite, &zero)?)?.exp()?;
            e.r#where(&finite, &zero)
        } else {
            let y_live = y.r#where(&live, &zero)?;
            let e = lw.add(x)?.logcumsumexp(dim)?.sub(&y_live)?.exp()?;
            e.r#where(&live, &zero)
        }
    };
    part(g)?.sub(&part(&g.neg()?)?)
}

/// `sum_{j >= k} g_j exp(x_k - y_j)` along `dim`, linear in `g`: the
/// reverse running sum of `g_j exp(c - y_j)`, times `exp(x_k - c)`, with
/// `c` the row's last (largest) `y`. Outputs of -inf take no part. Only
/// the derivative in `g` is used (see Note [logcumsumexp's differentiable
/// backward]); where a row spans more than the float range it is not finite.
fn linear_backward(x: &Tensor, y: &Tensor, g: &Tensor, dim: isize) -> Result<Tensor> {
    let zero = Tensor::scalar(0.0);
    let live = y.ne(&Tensor::scalar(f64::NEG_INFINITY))?;
    let last = y.narrow(dim, -1, 1)?;
    let c = last.r#where(&last.isfinite(), &zero)?;
    let scale = c
        .sub(&y.r#where(&live, &zero)?)?
        .exp()?
        .r#where(&live, &zero)?;
    let dims = [dim];
    let tail = g.mul(&scale)?.flip(&dims)?.cumsum(dim, None)?.flip(&dims)?;
    tail.mul(&x.sub(&c)?.exp()?)
}

/// The running log-sum-exp along dim `d`, in float64 and rounded once.
fn log_scan(x: &Tensor, d: usize) -> Result<Tensor> {
    let rows = rows_last(x, d)?;
    let (n, _) = row_count(rows.shape());
    let vals = rows.to_dtype(DType::Float64).to_vec::<f64>();
    let mut out = Vec::with_capacity(vals.len());
    for row in vals.chunks(n.max(1)) {
        let mut acc = f64::NEG_INFINITY;
        for &v in row {
            acc = if v.is_nan() || acc.is_nan() {
                f64::NAN
            } else if acc == f64::NEG_INFINITY {
                v
            } else if v == f64::NEG_INFINITY {
                acc
            } else {
                let m = acc.max(v);
                if m == f64::INFINITY {
                    m
                } else {
                    m + (-(acc - v).abs()).exp().ln_1p()
                }
            };
            out.push(acc);
        }
    }
    let t = Tensor::from_slice(&out, rows.shape())?.to_dtype(x.dtype());
    rows_back(&t, d)
}
