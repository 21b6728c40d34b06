//! Inclusive scans along one dim (cumsum, cumprod) and the row loop of
//! softmax / log_softmax.
//!
//! Scans accumulate in `f64` for floating results and in wrapping `i64`
//! otherwise. Softmax shifts each row by its maximum before
//! exponentiating, so large inputs do not overflow, and sums in `f64`.

use super::access::{elem_ptr, lock};
use super::arith::Arith;
use super::copy::{cast, dense};
use super::fold::{is_nan, Bounds};
use super::reduce::{output, SyncPtr};
use crate::pool::{par_for, PARALLEL_MIN_ELEMS};
use crate::tensor::Float;
use crate::{dispatch, DType, Element, Tensor};

/// Adjacent lines scanned together when the scanned dim is not innermost.
const BLOCK: usize = 128;

/// Inclusive scan of a contiguous tensor of `O` along `dim`, accumulating
/// in `A` with `op`.
fn scan<O: Element, A: Element>(
    x: &Tensor,
    dim: usize,
    op: impl Fn(A, A) -> A + Sync,
    init: A,
) -> Tensor {
    debug_assert!(x.is_contiguous());
    let shape = x.shape();
    let (out, op_) = output::<O>(shape);
    let total = x.numel();
    if total == 0 {
        return out;
    }
    let n = if x.ndim() == 0 { 1 } else { shape[dim] };
    let inner: usize = if x.ndim() == 0 {
        1
    } else {
        shape[dim + 1..].iter().product()
    };
    let outer = total / (n * inner);
    let _g = lock(&[x], None);
    let xp = SyncPtr(elem_ptr::<O>(x));
    if inner == 1 && outer > 1 {
        // The scanned dim is innermost: each line is one chain of
        // dependent additions, so ROWS lines advance side by side (one
        // element of each per step, each line's order unchanged) and the
        // chains overlap instead of waiting on each other.
        // Line `j` runs SKEW elements behind line `j - 1`: lines of a
        // power-of-two length would otherwise be read and written at
        // addresses a multiple of 4 KiB apart, which share cache sets and
        // look alike to the CPU's store-to-load checks.
        const ROWS: usize = 8;
        const SKEW: usize = 16;
        let task = |t: usize| {
            let r0 = t * ROWS;
            let rw = ROWS.min(outer - r0);
            let mut acc = [init; ROWS];
            for step in 0..n + (rw - 1) * SKEW {
                for (j, a) in acc[..rw].iter_mut().enumerate() {
                    let k = step.wrapping_sub(j * SKEW);
                    if k >= n {
                        continue;
                    }
                    let off = (r0 + j) * n + k;
                    // SAFETY: `off < total` indexes both the read-locked
                    // contiguous input and the fresh output, whose lines
                    // `r0..r0 + rw` only this task writes.
                    unsafe {
                        *a = op(*a, A::cast_from(*xp.get().add(off)));
                        op_.write(off, O::cast_from(*a));
                    }
                }
            }
        };
        run_tasks(outer.div_ceil(ROWS), total, &task);
        return out;
    }
    let block = BLOCK.min(inner);
    let per = inner.div_ceil(block);
    let task = |t: usize| {
        let (o, i0) = (t / per, (t % per) * block);
        let bw = block.min(inner - i0);
        let mut acc = [init; BLOCK];
        for k in 0..n {
            let off = o * n * inner + k * inner + i0;
            for (j, a) in acc[..bw].iter_mut().enumerate() {
                // SAFETY: `off + j < total` indexes both the read-locked
                // contiguous input and the fresh output, whose element `off + j`
                // only this task writes.
                unsafe {
                    *a = op(*a, A::cast_from(*xp.get().add(off + j)));
                    op_.write(off + j, O::cast_from(*a));
                }
            }
        }
    };
    run_tasks(outer * per, total, &task);
    out
}

/// Runs `task(0..ntasks)` over a scan of `total` elements, on the pool
/// when large.
fn run_tasks(ntasks: usize, total: usize, task: &(dyn Fn(usize) + Sync)) {
    if total >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 && ntasks > 1 {
        par_for(ntasks, 1, task);
    } else {
        (0..ntasks).for_each(task);
    }
}

/// Running sums (or products, `prod = true`) of `x` along dim `d`, as
/// `dtype`.
pub(crate) fn cumulative(x: &Tensor, d: usize, dtype: DType, prod: bool) -> Tensor {
    let xc = cast(x, dtype);
    let xc = if xc.is_contiguous() { xc } else { dense(&xc) };
    if dtype.is_complex() {
        type C = crate::Complex<f64>;
        let (zero, one) = (C::new(0.0, 0.0), C::new(1.0, 0.0));
        crate::dispatch_complex!(dtype, O => if prod {
            scan::<O, C>(&xc, d, <C as Arith>::mul, one)
        } else {
            scan::<O, C>(&xc, d, <C as Arith>::add, zero)
        }, else unreachable!("complex dtype"))
    } else if dtype.is_floating_point() {
        dispatch!(dtype, O => if prod {
            scan::<O, f64>(&xc, d, <f64 as Arith>::mul, 1.0)
        } else {
            scan::<O, f64>(&xc, d, <f64 as Arith>::add, 0.0)
        })
    } else {
        dispatch!(dtype, O => if prod {
            scan::<O, i64>(&xc, d, <i64 as Arith>::mul, 1)
        } else {
            scan::<O, i64>(&xc, d, <i64 as Arith>::add, 0)
        })
    }
}

/// softmax (or log_softmax) of each contiguous row of `n` elements of `x`.
pub(crate) fn softmax_rows<T: Float + Bounds>(x: &Tensor, n: usize, log: bool) -> Tensor {
    let (out, op) = output::<T>(x.shape());
    let total = x.numel();
    if total == 0 {
        return out;
    }
    let rows = total / n;
    let _g = lock(&[x], None);
    let xp = SyncPtr(elem_ptr::<T>(x));
    let per_block = block_rows(n);
    let block = |b: usize| {
        let (r0, r1) = (b * per_block, ((b + 1) * per_block).min(rows));
        // SAFETY: rows `r0..r1` span elements `r0*n .. r1*n` of the
        // read-locked contiguous input and of the fresh output, whose rows
        // only this call writes.
        let (xb, ob) = unsafe {
            (
                std::slice::from_raw_parts(xp.get().add(r0 * n) as *const T, (r1 - r0) * n),
                std::slice::from_raw_parts_mut(op.get().add(r0 * n), (r1 - r0) * n),
            )
        };
        let pick = |a: T, v: T| if (v > a) | is_nan(v) { v } else { a };
        // Each row's maximum (eight running maxima, exact whatever the
        // order, then the rest) and `x - max` into the output.
        let maxima: Vec<T> = xb
            .chunks_exact(n)
            .zip(ob.chunks_exact_mut(n))
            .map(|(xs, os)| {
                super::isa::dispatch(
                    #[inline(always)]
                    || {
                        let mut lanes = [T::LOWEST; 8];
                        let mut eights = xs.chunks_exact(8);
                        for c in &mut eights {
                            for (l, &v) in lanes.iter_mut().zip(c) {
                                *l = pick(*l, v);
                            }
                        }
                        let m = lanes.iter().fold(T::LOWEST, |a, &v| pick(a, v));
                        let m = eights.remainder().iter().fold(m, |a, &v| pick(a, v));
                        for (o, &v) in os.iter_mut().zip(xs) {
                            *o = v - m;
                        }
                        m
                    },
                )
            })
            .collect();
        // One exponential over the whole block: short rows would each pay
        // a call and a scalar tail.
        exp_in_place(ob);
        for ((xs, os), &m) in xb.chunks_exact(n).zip(ob.chunks_exact_mut(n)).zip(&maxima) {
            let s = row_sum_f64(os, os, |e, _| e.to_f64());
            if log {
                let ls = T::from_f64(s.ln());
                for (o, &v) in os.iter_mut().zip(xs) {
                    *o = (v - m) - ls;
                }
            } else {
                let st = T::from_f64(s);
                super::isa::dispatch(
                    #[inline(always)]
                    || {
                        for o in os.iter_mut() {
                            *o = *o / st;
                        }
                    },
                );
            }
        }
    };
    run_blocks(rows, n, per_block, &block);
    out
}

/// Rows per block of the row kernels: about 4096 elements (the block's
/// exponential is one vectorised call), at least one row.
fn block_rows(n: usize) -> usize {
    (4096 / n.max(1)).max(1)
}

/// Runs `block` over the blocks of `per_block` rows (of `n` elements)
/// that cover `rows`, in parallel when the tensor is large enough; blocks
/// write disjoint rows, so the bits do not depend on the thread count.
fn run_blocks(rows: usize, n: usize, per_block: usize, block: &(dyn Fn(usize) + Sync)) {
    let blocks = rows.div_ceil(per_block);
    if rows * n >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 && blocks > 1 {
        par_for(blocks, (PARALLEL_MIN_ELEMS / (per_block * n)).max(1), block);
    } else {
        (0..blocks).for_each(block);
    }
}

/// `Σ f(a[i], b[i])` over two rows in f64, in four partial sums so the
/// additions need not wait on each other, then the tail.
#[inline(always)]
fn row_sum_f64<T: Copy>(a: &[T], b: &[T], f: impl Fn(T, T) -> f64) -> f64 {
    let mut acc = [0.0f64; 4];
    let (mut qa, mut qb) = (a.chunks_exact(4), b.chunks_exact(4));
    for (x, y) in (&mut qa).zip(&mut qb) {
        for j in 0..4 {
            acc[j] += f(x[j], y[j]);
        }
    }
    let tail = qa
        .remainder()
        .iter()
        .zip(qb.remainder())
        .fold(0.0f64, |s, (&x, &y)| s + f(x, y));
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// The gradient of softmax (or log_softmax) along contiguous rows of `n`
/// elements, from the output `y` and its gradient `g` (both contiguous,
/// of dtype T): `y (g - Σ g y)` for softmax, `g - e^y Σ g` for
/// log_softmax, with the row sum in f64 (four partial sums).
pub(crate) fn softmax_backward_rows<T: Float>(
    g: &Tensor,
    y: &Tensor,
    n: usize,
    log: bool,
) -> Tensor {
    let (out, op) = output::<T>(y.shape());
    let total = y.numel();
    if total == 0 || n == 0 {
        return out;
    }
    let rows = total / n;
    let _g = lock(&[g, y], None);
    let (gp, yp) = (SyncPtr(elem_ptr::<T>(g)), SyncPtr(elem_ptr::<T>(y)));
    let per_block = block_rows(n);
    let block = |b: usize| {
        let (r0, r1) = (b * per_block, ((b + 1) * per_block).min(rows));
        let len = (r1 - r0) * n;
        // SAFETY: rows `r0..r1` span elements `r0*n .. r1*n` of the
        // read-locked contiguous inputs and of the fresh output, whose rows
        // only this call writes.
        let (gb, yb, ob) = unsafe {
            (
                std::slice::from_raw_parts(gp.get().add(r0 * n) as *const T, len),
                std::slice::from_raw_parts(yp.get().add(r0 * n) as *const T, len),
                std::slice::from_raw_parts_mut(op.get().add(r0 * n), len),
            )
        };
        if log {
            // e^y goes through the output buffer, one call for the block.
            ob.copy_from_slice(yb);
            exp_in_place(ob);
        }
        let rows_of = gb
            .chunks_exact(n)
            .zip(yb.chunks_exact(n))
            .zip(ob.chunks_exact_mut(n));
        for ((gs, ys), os) in rows_of {
            super::isa::dispatch(
                #[inline(always)]
                || {
                    if log {
                        let s = T::from_f64(row_sum_f64(gs, gs, |v, _| v.to_f64()));
                        for (o, &gv) in os.iter_mut().zip(gs) {
                            *o = gv - *o * s;
                        }
                    } else {
                        let s = T::from_f64(row_sum_f64(gs, ys, |a, b| (a * b).to_f64()));
                        for ((o, &gv), &yv) in os.iter_mut().zip(gs).zip(ys) {
                            *o = yv * (gv - s);
                        }
                    }
                },
            );
        }
    };
    run_blocks(rows, n, per_block, &block);
    out
}

/// `e^v` for every element of `buf`, through the vectorised exponential
/// for float32 and float64 (the same function `Tensor::exp` uses) and
/// element by element for the 16-bit floats.
fn exp_in_place<T: Float>(buf: &mut [T]) {
    use crate::kernels::vmath::{run_in_place, Exp};
    match T::DTYPE {
        DType::Float32 => {
            // SAFETY: T is f32 (its dtype says so), so the slice is one of f32.
            let b =
                unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut f32, buf.len()) };
            run_in_place::<f32, Exp>(b);
        }
        DType::Float64 => {
            // SAFETY: T is f64, as above.
            let b =
                unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut f64, buf.len()) };
            run_in_place::<f64, Exp>(b);
        }
        _ => {
            for v in buf.iter_mut() {
                *v = v.exp();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::copy::permuted;

    fn t<T: Element>(v: &[T], shape: &[usize]) -> Tensor {
        Tensor::from_slice(v, shape).unwrap()
    }

    #[test]
    fn cumulative_sums_and_products_along_a_dim() {
        let a = t(&[1.0f64, 2.0, 3.0], &[3]);
        assert_eq!(
            cumulative(&a, 0, DType::Float64, false).to_vec::<f64>(),
            vec![1.0, 3.0, 6.0]
        );
        // [[1, 2], [3, 4]]
        let b = t(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
        let p0 = cumulative(&b, 0, DType::Float64, true);
        assert_eq!(p0.to_vec::<f64>(), vec![1.0, 2.0, 3.0, 8.0]);
        let p1 = cumulative(&b, 1, DType::Float32, true);
        assert_eq!(p1.dtype(), DType::Float32);
        assert_eq!(p1.to_vec::<f32>(), vec![1.0, 2.0, 3.0, 12.0]);
        let s = t(&[5.0f64], &[]);
        assert_eq!(
            cumulative(&s, 0, DType::Float64, false).to_vec::<f64>(),
            vec![5.0]
        );
    }

    #[test]
    fn cumulative_reads_strided_inputs_and_wide_lines() {
        // The transpose of [[1, 2], [3, 4]] is [[1, 3], [2, 4]].
        let b = t(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
        let tr = permuted(&b, &[1, 0]).unwrap();
        assert_eq!(
            cumulative(&tr, 1, DType::Float64, false).to_vec::<f64>(),
            vec![1.0, 4.0, 2.0, 6.0]
        );
        // More adjacent lines than one block: row 1 becomes j + 1.
        let w = 300;
        let v: Vec<f64> = (0..w)
            .map(|j| j as f64)
            .chain((0..w).map(|_| 1.0))
            .collect();
        let r = cumulative(&t(&v, &[2, w]), 0, DType::Float64, false).to_vec::<f64>();
        assert!((0..w).all(|j| r[j] == j as f64 && r[w + j] == j as f64 + 1.0));
    }

    #[test]
    fn integer_scans_widen_and_wrap() {
        let a = t(&[1i32, 2, 3], &[3]);
        let c = cumulative(&a, 0, DType::Int64, false);
        assert_eq!(
            (c.dtype(), c.to_vec::<i64>()),
            (DType::Int64, vec![1, 3, 6])
        );
        let b = t(&[true, true, false, true], &[4]);
        assert_eq!(
            cumulative(&b, 0, DType::Int64, false).to_vec::<i64>(),
            vec![1, 2, 2, 3]
        );
        let m = t(&[i64::MAX, 2], &[2]);
        assert_eq!(
            cumulative(&m, 0, DType::Int64, true).to_vec::<i64>(),
            vec![i64::MAX, -2]
        );
    }

    #[test]
    fn softmax_rows_normalise_each_row_without_overflow() {
        let a = t(&[0.0f64, 3f64.ln(), 1000.0, 1000.0], &[2, 2]);
        let s = softmax_rows::<f64>(&a, 2, false).to_vec::<f64>();
        let want = [0.25, 0.75, 0.5, 0.5];
        assert!(
            s.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12),
            "{s:?}"
        );
        let l = softmax_rows::<f64>(&a, 2, true).to_vec::<f64>();
        assert!(
            l.iter().zip(want).all(|(g, w)| (g - w.ln()).abs() < 1e-12),
            "{l:?}"
        );
        let n = t(&[1.0f32, f32::NAN], &[2]);
        assert!(softmax_rows::<f32>(&n, 2, false)
            .to_vec::<f32>()
            .iter()
            .all(|v| v.is_nan()));
    }
}
