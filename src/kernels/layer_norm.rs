//! Layer normalisation of contiguous rows: the forward (each row's mean
//! and reciprocal standard deviation, then the affine map) and the
//! first-order backward, each one pass over a row.
//!
//! Row sums run in eight lanes of the element type over runs of 512
//! elements, joined in `f64`; the per-element work runs in the element
//! type (float32 for 16-bit inputs, which the op converts). Rows are
//! independent in the forward and in the input gradient; the weight and
//! bias gradients are column sums over rows, taken in fixed blocks of
//! rows whose partial sums are added in f64 in block order, so the bits do not
//! depend on the number of threads.

use super::access::{elem_ptr, lock};
use super::reduce::{output, SyncPtr};
use crate::pool::{par_for, par_map, PARALLEL_MIN_ELEMS};
use crate::tensor::Float;
use crate::Tensor;

/// Elements per block of rows in the weight and bias gradient sums.
const BLOCK_ELEMS: usize = 8192;

/// Independent running sums in a row sum (one AVX2 register of f32).
const LANES: usize = 8;
/// Rows of lanes summed in the element type before joining the f64 total.
const STEPS: usize = 64;

/// `Σ a[i] b[i]` (`Σ a[i]` without `b`): lane `j` adds elements `j, j +
/// LANES, ...` in the element type over runs of `LANES * STEPS` elements,
/// which join the lanes' f64 totals; the lanes are then added in order,
/// then the tail.
#[inline(always)]
fn dot<T: Float>(a: &[T], b: Option<&[T]>) -> f64 {
    let mut wide = [0f64; LANES];
    let whole = a.len() / LANES * LANES;
    let mut start = 0;
    while start < whole {
        let stop = (start + LANES * STEPS).min(whole);
        let mut part = [T::zero(); LANES];
        let ra = a[start..stop].chunks_exact(LANES);
        match b {
            Some(b) => {
                for (ra, rb) in ra.zip(b[start..stop].chunks_exact(LANES)) {
                    for j in 0..LANES {
                        part[j] = part[j] + ra[j] * rb[j];
                    }
                }
            }
            None => {
                for ra in ra {
                    for j in 0..LANES {
                        part[j] = part[j] + ra[j];
                    }
                }
            }
        }
        for j in 0..LANES {
            wide[j] += part[j].to_f64();
        }
        start = stop;
    }
    let lanes = wide.iter().fold(0.0, |acc, &w| acc + w);
    (whole..a.len()).fold(lanes, |acc, i| {
        acc + match b {
            Some(b) => (a[i] * b[i]).to_f64(),
            None => a[i].to_f64(),
        }
    })
}

/// Row `r` of `n` elements of a contiguous buffer.
///
/// # Safety
/// `p` must point to at least `(r + 1) * n` readable elements.
unsafe fn row<'a, T>(p: *const T, r: usize, n: usize) -> &'a [T] {
    std::slice::from_raw_parts(p.add(r * n), n)
}

/// The affine parameters as slices of `n` elements, if given.
fn params<'a, T: Float>(t: Option<&Tensor>, n: usize) -> Option<&'a [T]> {
    // SAFETY: callers pass contiguous tensors of dtype T with `n`
    // elements, read-locked for the duration of the kernel.
    t.map(|t| unsafe { std::slice::from_raw_parts(elem_ptr::<T>(t) as *const T, n) })
}

/// Forward of layer norm over rows of `n` elements of the contiguous `x`,
/// with optional contiguous `weight`/`bias` of `n` elements (all of dtype
/// `T`). Returns the output (shaped like `x`) and each row's mean and
/// `1 / sqrt(var + eps)` (biased variance), as 1-D tensors of `T`.
pub(crate) fn forward<T: Float>(
    x: &Tensor,
    n: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> (Tensor, Tensor, Tensor) {
    let total = x.numel();
    let rows = total.checked_div(n).unwrap_or(0);
    let (out, op) = output::<T>(x.shape());
    let (mean, mp) = output::<T>(&[rows]);
    let (rstd, rp) = output::<T>(&[rows]);
    if total == 0 {
        return (out, mean, rstd);
    }
    let reads: Vec<&Tensor> = [Some(x), weight, bias].into_iter().flatten().collect();
    let _g = lock(&reads, None);
    let xp = SyncPtr(elem_ptr::<T>(x));
    let (w, b) = (params::<T>(weight, n), params::<T>(bias, n));
    let body = |r: usize| {
        // SAFETY: row `r` lies inside the read-locked input and the fresh
        // outputs; only this call writes output row `r` and stat `r`.
        let (xs, os) = unsafe {
            (
                row(xp.get() as *const T, r, n),
                std::slice::from_raw_parts_mut(op.get().add(r * n), n),
            )
        };
        super::isa::dispatch(
            #[inline(always)]
            || {
                let mt = T::from_f64(dot(xs, None) / n as f64);
                // The centred row goes through the output buffer.
                for (o, &v) in os.iter_mut().zip(xs) {
                    *o = v - mt;
                }
                let var = dot(os, Some(os)) / n as f64;
                let rt = T::from_f64(1.0 / (var + eps).sqrt());
                // SAFETY: stat `r` of the fresh `rows`-element outputs.
                unsafe {
                    *mp.get().add(r) = mt;
                    *rp.get().add(r) = rt;
                }
                match (w, b) {
                    (Some(w), Some(b)) => {
                        for ((o, &w), &b) in os.iter_mut().zip(w).zip(b) {
                            *o = *o * rt * w + b;
                        }
                    }
                    (Some(w), None) => {
                        for (o, &w) in os.iter_mut().zip(w) {
                            *o = *o * rt * w;
                        }
                    }
                    (None, Some(b)) => {
                        for (o, &b) in os.iter_mut().zip(b) {
                            *o = *o * rt + b;
                        }
                    }
                    (None, None) => {
                        for o in os.iter_mut() {
                            *o = *o * rt;
                        }
                    }
                }
            },
        );
    };
    if total >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 && rows > 1 {
        par_for(rows, (PARALLEL_MIN_ELEMS / n).max(1), &body);
    } else {
        (0..rows).for_each(body);
    }
    (out, mean, rstd)
}

/// The gradients [`backward`] computes, each present when asked for.
pub(crate) struct Grads {
    pub input: Option<Tensor>,
    pub weight: Option<Tensor>,
    pub bias: Option<Tensor>,
}

/// First-order backward of [`forward`]: from the contiguous output
/// gradient `g`, the input `x`, the saved per-row `mean` and `rstd` and the
/// optional `weight`, the gradients of the input
/// (`rstd * (gw - mean(gw) - x̂ mean(gw x̂))` with `gw = g * weight` and
/// `x̂ = (x - mean) * rstd`), of the weight (`Σ_rows g x̂`) and of the bias
/// (`Σ_rows g`), for those `need` asks for (input, weight, bias).
pub(crate) fn backward<T: Float>(
    g: &Tensor,
    x: &Tensor,
    mean: &Tensor,
    rstd: &Tensor,
    weight: Option<&Tensor>,
    n: usize,
    need: [bool; 3],
) -> Grads {
    let total = x.numel();
    let rows = total.checked_div(n).unwrap_or(0);
    let dx = need[0].then(|| output::<T>(x.shape()));
    let reads: Vec<&Tensor> = [Some(g), Some(x), Some(mean), Some(rstd), weight]
        .into_iter()
        .flatten()
        .collect();
    let _g = lock(&reads, None);
    let (gp, xp) = (SyncPtr(elem_ptr::<T>(g)), SyncPtr(elem_ptr::<T>(x)));
    let (mp, rp) = (SyncPtr(elem_ptr::<T>(mean)), SyncPtr(elem_ptr::<T>(rstd)));
    let w = params::<T>(weight, n);
    let dxp = dx.as_ref().map(|(_, p)| SyncPtr(p.get()));
    // Rows per block of the column sums; a block is also the unit of work.
    let per = (BLOCK_ELEMS / n.max(1)).max(1);
    let blocks = rows.div_ceil(per);
    let block = |bi: usize| -> (Vec<T>, Vec<T>) {
        let mut dw = vec![T::zero(); if need[1] { n } else { 0 }];
        let mut db = vec![T::zero(); if need[2] { n } else { 0 }];
        let mut xh = vec![T::zero(); n];
        let mut gw = vec![T::zero(); if w.is_some() { n } else { 0 }];
        for r in bi * per..((bi + 1) * per).min(rows) {
            // SAFETY: row `r` lies inside the read-locked inputs; stat `r`
            // inside the saved statistics; only this block writes input
            // gradient row `r`.
            let (gs, xs, mt, rt) = unsafe {
                (
                    row(gp.get() as *const T, r, n),
                    row(xp.get() as *const T, r, n),
                    *mp.get().add(r),
                    *rp.get().add(r),
                )
            };
            super::isa::dispatch(
                #[inline(always)]
                || {
                    for (h, &v) in xh.iter_mut().zip(xs) {
                        *h = (v - mt) * rt;
                    }
                    if need[1] {
                        for ((d, &g), &h) in dw.iter_mut().zip(gs).zip(&xh) {
                            *d = *d + g * h;
                        }
                    }
                    if need[2] {
                        for (d, &g) in db.iter_mut().zip(gs) {
                            *d = *d + g;
                        }
                    }
                    let Some(dxp) = &dxp else { return };
                    let gwv: &[T] = match w {
                        Some(w) => {
                            for ((o, &g), &w) in gw.iter_mut().zip(gs).zip(w) {
                                *o = g * w;
                            }
                            &gw
                        }
                        None => gs,
                    };
                    let at = T::from_f64(dot(gwv, None) / n as f64);
                    let bt = T::from_f64(dot(gwv, Some(&xh)) / n as f64);
                    // SAFETY: gradient row `r` of the fresh output, written
                    // only here.
                    let out = unsafe { std::slice::from_raw_parts_mut(dxp.get().add(r * n), n) };
                    for ((o, &gv), &h) in out.iter_mut().zip(gwv).zip(&xh) {
                        *o = rt * (gv - at - h * bt);
                    }
                },
            );
        }
        (dw, db)
    };
    let parts: Vec<(Vec<T>, Vec<T>)> =
        if total >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 && blocks > 1 {
            par_map(blocks, &block)
        } else {
            (0..blocks).map(block).collect()
        };
    let column = |which: usize| {
        let mut acc = vec![0.0f64; n];
        for p in &parts {
            let part = if which == 0 { &p.0 } else { &p.1 };
            for (a, v) in acc.iter_mut().zip(part) {
                *a += v.to_f64();
            }
        }
        Tensor::from_vec(acc.into_iter().map(T::from_f64).collect::<Vec<T>>())
    };
    Grads {
        input: dx.map(|(t, _)| t),
        weight: need[1].then(|| column(0)),
        bias: need[2].then(|| column(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forward against the formula evaluated in f64 per row.
    #[test]
    fn forward_normalises_each_row() {
        let (rows, n) = (5, 7);
        let xs: Vec<f64> = (0..rows * n)
            .map(|i| ((i * 37) % 11) as f64 - 3.5)
            .collect();
        let ws: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
        let bs: Vec<f64> = (0..n).map(|i| i as f64 - 2.0).collect();
        let x = Tensor::from_vec(xs.clone())
            .reshape(&[rows as isize, n as isize])
            .unwrap();
        let w = Tensor::from_vec(ws.clone());
        let b = Tensor::from_vec(bs.clone());
        let (out, mean, rstd) = forward::<f64>(&x, n, Some(&w), Some(&b), 1e-5);
        let (out, mean, rstd) = (
            out.to_vec::<f64>(),
            mean.to_vec::<f64>(),
            rstd.to_vec::<f64>(),
        );
        for r in 0..rows {
            let row = &xs[r * n..(r + 1) * n];
            let m = row.iter().sum::<f64>() / n as f64;
            let v = row.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64;
            let s = 1.0 / (v + 1e-5).sqrt();
            assert!((mean[r] - m).abs() < 1e-12 && (rstd[r] - s).abs() < 1e-9);
            for i in 0..n {
                let want = (row[i] - m) * s * ws[i] + bs[i];
                assert!((out[r * n + i] - want).abs() < 1e-9, "row {r} col {i}");
            }
        }
    }
}
