//! The loop driver shared by every reduction.
//!
//! A reduction folds the elements of each "row" (the elements that map to
//! one output) into an accumulator with a [`Fold`], then hands the
//! accumulator to a writer. Rows are found from the layout:
//!
//! * the reduced dims are sorted by stride and coalesced; when they form a
//!   single strided run, each row is read directly (a slice when the run
//!   is contiguous), in fixed chunks of [`CHUNK`] elements folded with
//!   [`LANES`] independent accumulators and combined left to right;
//! * when the innermost kept dim is contiguous and the reduced run is not
//!   (e.g. summing a row-major matrix over dim 0), tiles of adjacent outputs
//!   are accumulated together, one reduced index at a time;
//! * when the reduced dims end in a contiguous run (summing `[N, C, H, W]`
//!   over `N, H, W`), each run is folded as a row and the runs are merged
//!   in order;
//! * anything else is first copied into a contiguous (kept..., reduced...)
//!   order.
//!
//! Work is split over ferrograd's pool by rows, tiles or chunks, but the
//! order in which elements of one row are combined depends only on the
//! layout and the row length, never on the number of threads, so results
//! are bitwise reproducible.

use crate::kernels::access::{elem_ptr, lock};
pub(crate) use crate::pool::SyncPtr;
use crate::pool::{par_for, par_map, PARALLEL_MIN_ELEMS};
use crate::tensor::{Dims, Layout};
use crate::{Element, Result, Tensor};
use smallvec::SmallVec;

/// Elements per chunk of a long row (fixed: part of the summation order).
pub(crate) const CHUNK: usize = 1 << 14;
/// Independent accumulators per chunk (fixed: part of the summation order).
pub(crate) const LANES: usize = 32;
/// Most adjacent outputs accumulated together in the outer-reduction path
/// (tiles only partition outputs; each output is still accumulated in
/// reduced-index order, so the tile width never changes results).
const MAX_TILE: usize = 4096;

/// How one reduction combines elements.
///
/// `step` receives the element's position `k` within its row (row-major
/// over the reduced dims), which arg-reductions record. `merge(a, b)` must
/// combine the accumulators of two runs where `a`'s run precedes `b`'s.
pub(crate) trait Fold<T: Element>: Sync {
    type Acc: Copy + Send + Sync;
    fn init(&self) -> Self::Acc;
    fn step(&self, acc: Self::Acc, x: T, k: usize) -> Self::Acc;
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;

    /// Folds a contiguous run whose first element sits at position `k0`.
    /// The default runs `step` over [`LANES`] accumulators; a fold may
    /// override it with a faster order of its own, as long as that order
    /// depends only on the run (never on threads or instruction sets).
    #[inline(always)]
    fn contiguous(&self, xs: &[T], k0: usize) -> Self::Acc
    where
        Self: Sized,
    {
        fold_contiguous(self, xs, k0)
    }
}

/// A fresh contiguous tensor and a pointer to its elements for writers.
pub(crate) fn output<U: Element>(shape: &[usize]) -> (Tensor, SyncPtr<U>) {
    let t = Tensor::empty(shape, U::DTYPE);
    let p = elem_ptr::<U>(&t);
    (t, SyncPtr(p))
}

/// The shape of a reduction's result.
pub(crate) fn out_shape(shape: &[usize], mask: &[bool], keepdim: bool) -> Dims {
    shape
        .iter()
        .zip(mask)
        .filter_map(|(&n, &r)| match (r, keepdim) {
            (false, _) => Some(n),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// Drops size-1 dims and merges neighbours that walk memory as one dim.
fn coalesce(dims: &[(usize, usize)]) -> SmallVec<[(usize, usize); 6]> {
    let mut out: SmallVec<[(usize, usize); 6]> = SmallVec::new();
    for &(n, s) in dims.iter().filter(|d| d.0 != 1) {
        match out.last_mut() {
            Some(last) if last.1 == n * s => *last = (last.0 * n, s),
            _ => out.push((n, s)),
        }
    }
    out
}

/// Storage offset (relative) of the `i`-th index of a row-major walk.
fn unravel(dims: &[(usize, usize)], mut i: usize) -> usize {
    let mut off = 0;
    for &(n, s) in dims.iter().rev() {
        off += (i % n) * s;
        i /= n;
    }
    off
}

fn parallel(work: usize) -> bool {
    work >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1
}

/// Folds a contiguous run with `LANES` accumulators.
#[inline(always)]
fn fold_slice<T: Element, F: Fold<T>>(f: &F, xs: &[T], k0: usize) -> F::Acc {
    let mut lanes = [f.init(); LANES];
    let mut it = xs.chunks_exact(LANES);
    let mut k = k0;
    for c in &mut it {
        for j in 0..LANES {
            lanes[j] = f.step(lanes[j], c[j], k + j);
        }
        k += LANES;
    }
    let mut acc = lanes[0];
    for &l in &lanes[1..] {
        acc = f.merge(acc, l);
    }
    for (j, &x) in it.remainder().iter().enumerate() {
        acc = f.step(acc, x, k + j);
    }
    acc
}

/// [`fold_slice`] compiled for the widest vector instructions this CPU
/// has. Each lane adds in the same order on every path, so the result does
/// not depend on the path taken.
#[inline(always)]
fn fold_contiguous<T: Element, F: Fold<T>>(f: &F, xs: &[T], k0: usize) -> F::Acc {
    super::isa::dispatch(
        #[inline(always)]
        || fold_slice(f, xs, k0),
    )
}

/// Folds `len` elements at `p`, `p + stride`, ...
///
/// # Safety
/// Every address read lies in a locked storage of `T`s.
#[inline(always)]
unsafe fn fold_run<T: Element, F: Fold<T>>(
    f: &F,
    p: *const T,
    len: usize,
    stride: usize,
    k0: usize,
) -> F::Acc {
    if stride == 1 {
        return f.contiguous(std::slice::from_raw_parts(p, len), k0);
    }
    let mut lanes = [f.init(); LANES];
    let full = len - len % LANES;
    let mut i = 0;
    while i < full {
        for (j, l) in lanes.iter_mut().enumerate() {
            *l = f.step(*l, *p.add((i + j) * stride), k0 + i + j);
        }
        i += LANES;
    }
    let mut acc = lanes[0];
    for &l in &lanes[1..] {
        acc = f.merge(acc, l);
    }
    for i in full..len {
        acc = f.step(acc, *p.add(i * stride), k0 + i);
    }
    acc
}

/// Folds one whole row in fixed chunks, combined left to right.
///
/// # Safety
/// As [`fold_run`].
unsafe fn fold_row<T: Element, F: Fold<T>>(
    f: &F,
    p: *const T,
    len: usize,
    stride: usize,
) -> F::Acc {
    let mut acc = f.init();
    let mut k = 0;
    while k < len {
        let n = CHUNK.min(len - k);
        acc = f.merge(acc, fold_run(f, p.add(k * stride), n, stride, k));
        k += n;
    }
    acc
}

/// Reduces `x` over the dims flagged in `mask`; `write(i, acc)` receives the
/// accumulator of the `i`-th output (row-major over the kept dims).
pub(crate) fn reduce<T: Element, F: Fold<T>>(
    x: &Tensor,
    mask: &[bool],
    f: &F,
    write: impl Fn(usize, F::Acc) + Sync,
) -> Result<()> {
    debug_assert_eq!(T::DTYPE, x.dtype());
    let mut kept: SmallVec<[(usize, usize); 6]> = SmallVec::new();
    let mut red: SmallVec<[(usize, usize); 6]> = SmallVec::new();
    for ((&n, &s), &r) in x.shape().iter().zip(x.strides()).zip(mask) {
        if r {
            red.push((n, s));
        } else {
            kept.push((n, s));
        }
    }
    let m: usize = kept.iter().map(|d| d.0).product();
    let k: usize = red.iter().map(|d| d.0).product();
    if m == 0 {
        return Ok(());
    }
    if k == 0 {
        (0..m).for_each(|i| write(i, f.init()));
        return Ok(());
    }
    // Larger strides first: more runs coalesce; only value-reductions (for
    // which order is immaterial) ever reduce more than one dim.
    red.sort_by_key(|d| std::cmp::Reverse(d.1));
    let kept = coalesce(&kept);
    let red = coalesce(&red);
    let inner_unit = matches!(kept.last(), Some(&(w, 1)) if w >= LANES);
    match red.as_slice() {
        [] => rows(x, &kept, 1, 0, m, f, &write),
        &[(kn, ks)] if ks == 1 || !inner_unit => rows(x, &kept, kn, ks, m, f, &write),
        _ if inner_unit => tiles(x, &kept, &red, m, k, f, &write),
        [.., (_, 1)] => nested_rows(x, &kept, &red, m, f, &write),
        _ => {
            // Copy into (kept..., reduced...) order, then every row is a slice.
            let nd = x.ndim();
            let mut perm: Vec<isize> = (0..nd).filter(|&d| !mask[d]).map(|d| d as isize).collect();
            perm.extend((0..nd).filter(|&d| mask[d]).map(|d| d as isize));
            let c = super::copy::dense(&super::copy::permuted(x, &perm)?);
            let nk = nd - mask.iter().filter(|&&r| r).count();
            let mask2: Vec<bool> = (0..nd).map(|d| d >= nk).collect();
            return reduce(&c, &mask2, f, write);
        }
    }
    Ok(())
}

/// One output per row of `len` elements at stride `stride`.
fn rows<T: Element, F: Fold<T>>(
    x: &Tensor,
    kept: &[(usize, usize)],
    len: usize,
    stride: usize,
    m: usize,
    f: &F,
    write: &(impl Fn(usize, F::Acc) + Sync),
) {
    let _g = lock(&[x], None);
    let base = SyncPtr(elem_ptr::<T>(x));
    let row = |i: usize| {
        // SAFETY: the row's addresses are within `x`'s layout, whose storage
        // is read-locked for the whole call.
        unsafe { fold_row(f, base.get().add(unravel(kept, i)) as *const T, len, stride) }
    };
    if !parallel(m * len) {
        (0..m).for_each(|i| write(i, row(i)));
    } else if m >= 4 * crate::pool::num_threads() {
        let min_rows = (PARALLEL_MIN_ELEMS / len.max(1)).max(1);
        par_for(m, min_rows, &|i| write(i, row(i)));
    } else {
        // Few long rows: split each row's chunks, then combine them in
        // order (the same order `fold_row` uses).
        for i in 0..m {
            let b = SyncPtr(base.get().wrapping_add(unravel(kept, i)));
            let parts: Vec<F::Acc> = par_map(len.div_ceil(CHUNK), &|c| {
                let k = c * CHUNK;
                let n = CHUNK.min(len - k);
                // SAFETY: as above; the chunk lies within the row.
                unsafe { fold_run(f, b.get().add(k * stride) as *const T, n, stride, k) }
            });
            let acc = parts.into_iter().fold(f.init(), |a, p| f.merge(a, p));
            write(i, acc);
        }
    }
}

/// One output per row whose reduced dims end in a contiguous run (summing
/// `[N, C, H, W]` over `N, H, W`): the runs are folded as rows, in groups
/// of about [`CHUNK`] elements, and merged in order within and across the
/// groups. The grouping depends only on the run length.
fn nested_rows<T: Element, F: Fold<T>>(
    x: &Tensor,
    kept: &[(usize, usize)],
    red: &[(usize, usize)],
    m: usize,
    f: &F,
    write: &(impl Fn(usize, F::Acc) + Sync),
) {
    let (len, _) = red[red.len() - 1];
    let outer = &red[..red.len() - 1];
    let runs: usize = outer.iter().map(|d| d.0).product();
    let per = (CHUNK / len).max(1);
    let groups = runs.div_ceil(per);
    let _g = lock(&[x], None);
    let base = SyncPtr(elem_ptr::<T>(x));
    let group = |i: usize, g: usize| {
        let row0 = unravel(kept, i);
        (g * per..((g + 1) * per).min(runs)).fold(f.init(), |acc, j| {
            // SAFETY: the run's addresses are within `x`'s layout, whose
            // storage is read-locked for the whole call.
            let r = unsafe {
                let p = base.get().add(row0 + unravel(outer, j)) as *const T;
                fold_row(f, p, len, 1)
            };
            f.merge(acc, r)
        })
    };
    if !parallel(m * runs * len) {
        for i in 0..m {
            write(
                i,
                (0..groups).fold(f.init(), |acc, g| f.merge(acc, group(i, g))),
            );
        }
    } else {
        // Every (output, group) pair is a task; each output then merges
        // its groups in order.
        let parts: Vec<F::Acc> = par_map(m * groups, &|t| group(t / groups, t % groups));
        for (i, row) in parts.chunks(groups).enumerate() {
            write(i, row.iter().fold(f.init(), |acc, &p| f.merge(acc, p)));
        }
    }
}

/// Outputs whose innermost kept dim is contiguous, accumulated in tiles of
/// adjacent outputs while walking the reduced dims.
fn tiles<T: Element, F: Fold<T>>(
    x: &Tensor,
    kept: &[(usize, usize)],
    red: &[(usize, usize)],
    m: usize,
    k: usize,
    f: &F,
    write: &(impl Fn(usize, F::Acc) + Sync),
) {
    let (w, _) = kept[kept.len() - 1];
    let outer = &kept[..kept.len() - 1];
    let par = parallel(m * k);
    // Wide tiles read long contiguous runs of each reduced slice; split a
    // single row of outputs between the threads when that is all there is.
    let threads = if par { crate::pool::num_threads() } else { 1 };
    let want = if m / w >= threads {
        w
    } else {
        w.div_ceil(threads)
    };
    let tile = want.next_multiple_of(LANES).clamp(LANES, MAX_TILE);
    let tiles_per_row = w.div_ceil(tile);
    let ntasks = (m / w) * tiles_per_row;
    let _g = lock(&[x], None);
    let base = SyncPtr(elem_ptr::<T>(x));
    let task = |t: usize| {
        let (o, j0) = (t / tiles_per_row, (t % tiles_per_row) * tile);
        let tw = tile.min(w - j0);
        let row0 = unravel(outer, o) + j0;
        let mut accs = vec![f.init(); tw];
        let mut idx: SmallVec<[usize; 6]> = SmallVec::from_elem(0, red.len());
        let mut off = 0usize;
        // Compiled for the widest vector instructions this CPU has; each
        // output still adds in reduced-index order on every path.
        super::isa::dispatch(
            #[inline(always)]
            || {
                for kk in 0..k {
                    // SAFETY: `row0 + off + j` for `j < tw` is the address
                    // of an element of `x`'s layout; the storage is
                    // read-locked.
                    let xs = unsafe {
                        std::slice::from_raw_parts(base.get().add(row0 + off) as *const T, tw)
                    };
                    for (a, &v) in accs.iter_mut().zip(xs) {
                        *a = f.step(*a, v, kk);
                    }
                    // Advance the reduced-dims odometer.
                    for d in (0..red.len()).rev() {
                        idx[d] += 1;
                        off += red[d].1;
                        if idx[d] < red[d].0 {
                            break;
                        }
                        off -= red[d].1 * red[d].0;
                        idx[d] = 0;
                    }
                }
            },
        );
        for (j, a) in accs.into_iter().enumerate() {
            write(o * w + j0 + j, a);
        }
    };
    if par && ntasks > 1 {
        par_for(ntasks, 1, &task);
    } else {
        (0..ntasks).for_each(task);
    }
}

/// A contiguous layout of `shape` (for re-labelling fresh outputs).
pub(crate) fn reshaped(t: &Tensor, shape: &[usize]) -> Tensor {
    Tensor::from_parts(t.storage().clone(), Layout::contiguous(shape), t.dtype())
        .expect("same number of elements")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A float sum folded in f64, as the float reductions accumulate.
    struct Sum64;
    impl Fold<f32> for Sum64 {
        type Acc = f64;
        fn init(&self) -> f64 {
            0.0
        }
        fn step(&self, acc: f64, x: f32, _k: usize) -> f64 {
            acc + f64::from(x)
        }
        fn merge(&self, a: f64, b: f64) -> f64 {
            a + b
        }
    }

    #[test]
    fn every_instruction_set_path_folds_to_the_same_bits() {
        // Values of very different magnitudes, so that any change of the
        // order of additions would show in the low bits.
        let xs: Vec<f32> = (0..10_007u32)
            .map(|i| {
                let h = i.wrapping_mul(2_654_435_761);
                (h % 1000) as f32
                    * 10f32.powi((h % 13) as i32 - 6)
                    * if h & 1 == 0 { 1.0 } else { -1.0 }
            })
            .collect();
        let reference = fold_slice(&Sum64, &xs, 0);
        let mut lanes = [0.0f64; LANES];
        for (i, &x) in xs[..xs.len() - xs.len() % LANES].iter().enumerate() {
            lanes[i % LANES] += f64::from(x);
        }
        let mut by_hand = lanes[0];
        for &l in &lanes[1..] {
            by_hand += l;
        }
        for &x in &xs[xs.len() - xs.len() % LANES..] {
            by_hand += f64::from(x);
        }
        assert_eq!(reference.to_bits(), by_hand.to_bits());
        assert_eq!(
            fold_contiguous(&Sum64, &xs, 0).to_bits(),
            reference.to_bits()
        );
        #[cfg(target_arch = "x86_64")]
        {
            use crate::kernels::isa;
            if isa::has_avx2() {
                // SAFETY: AVX2 and FMA are supported (checked).
                let v = unsafe { isa::on_avx2(|| fold_slice(&Sum64, &xs, 0)) };
                assert_eq!(v.to_bits(), reference.to_bits());
            }
            if isa::has_avx512() {
                // SAFETY: AVX-512 is supported (checked).
                let v = unsafe { isa::on_avx512(|| fold_slice(&Sum64, &xs, 0)) };
                assert_eq!(v.to_bits(), reference.to_bits());
            }
        }
    }
}
