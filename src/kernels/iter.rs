//! Elementwise loop drivers shared by every pointwise kernel.
//!
//! `map1`/`map2`/`map3` apply a closure over broadcast inputs into a new
//! contiguous tensor; `apply1`/`apply2`/`apply3` write into an existing
//! tensor in place. They pick a slice loop when every operand is contiguous
//! (or a single broadcast element), ndarray's `Zip` otherwise, and split the
//! work over ferrograd's pool when it is large. Callers pass inputs already
//! cast to the closure's element types.

use super::access::{lock, slice, slice_mut, view_mut, view_strided};
use super::sync_ptr::SyncPtr;
use crate::pool::{par_for, PARALLEL_MIN_ELEMS};
use crate::tensor::broadcast_shapes;
pub(crate) use crate::tensor::check_no_overlap;
use crate::{Element, Error, Result, Tensor};
use ndarray::{ArrayBase, Axis, IxDyn, Slice, Zip};

const CHUNK: usize = 1 << 14;

fn parallel(n: usize) -> bool {
    n >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1
}

/// Runs `body(start, end)` over `0..n`, in parallel chunks when large.
pub(crate) fn for_ranges(n: usize, body: impl Fn(usize, usize) + Sync + Send) {
    if parallel(n) {
        par_for(n.div_ceil(CHUNK), 1, &|c| {
            body(c * CHUNK, ((c + 1) * CHUNK).min(n))
        });
    } else {
        body(0, n);
    }
}

/// The part of a strided loop one task runs: everything, or the indices
/// `lo..hi` of one axis.
#[derive(Clone, Copy)]
struct Slab(Option<(usize, usize, usize)>);

impl Slab {
    /// `v` cut down to this slab.
    fn cut<S: ndarray::RawData>(self, mut v: ArrayBase<S, IxDyn>) -> ArrayBase<S, IxDyn> {
        if let Some((axis, lo, hi)) = self.0 {
            v.slice_axis_inplace(Axis(axis), Slice::from(lo..hi));
        }
        v
    }
}

/// Runs `body` over a strided loop of `n` elements of `shape`: whole when
/// small, else in parallel over slabs of one axis (each about `CHUNK`
/// elements). The slabs are disjoint, so each task may write its
/// slab of a non-overlapping output.
fn for_slabs(shape: &[usize], n: usize, body: impl Fn(Slab) + Sync + Send) {
    // The outermost axis long enough to give every thread a few slabs
    // (whole rows of a row-major output), else the longest one.
    let threads = crate::pool::kernel_threads();
    let axis = (0..shape.len())
        .find(|&d| shape[d] >= 4 * threads)
        .or_else(|| (0..shape.len()).max_by_key(|&d| shape[d]));
    match axis {
        Some(axis) if parallel(n) && shape[axis] > 1 => {
            let len = shape[axis];
            let per = (CHUNK * len / n).max(1);
            par_for(len.div_ceil(per), 1, &|c| {
                body(Slab(Some((axis, c * per, ((c + 1) * per).min(len)))))
            });
        }
        _ => body(Slab(None)),
    }
}

/// Strides of `t` broadcast to `shape`.
fn bstrides(t: &Tensor, shape: &[usize]) -> Result<crate::tensor::Dims> {
    t.layout().broadcast_strides(shape)
}

/// How an operand can be read in the slice loop.
#[derive(Clone, Copy)]
enum Flat<T> {
    Slice(*const T),
    Splat(T),
}

impl<T: Element> Flat<T> {
    #[inline(always)]
    fn get(self, i: usize) -> T {
        match self {
            // SAFETY: `i < numel` of a contiguous operand (see `flat`).
            Flat::Slice(p) => unsafe { *p.add(i) },
            Flat::Splat(v) => v,
        }
    }
}
// SAFETY: the slice pointer is only read, from a buffer that outlives the loop.
unsafe impl<T: Send> Send for Flat<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Flat<T> {}

/// `out[i] = f(a[i])` over `s..e` of flat operands, written as slice loops
/// so the compiler can vectorise them.
///
/// # Safety
/// `o` is valid for writes of `e` elements and aliases no operand; slice
/// operands are valid for reads of `e` elements.
#[inline(always)]
unsafe fn run1<A: Element, U: Element>(
    o: *mut U,
    a: Flat<A>,
    s: usize,
    e: usize,
    f: &impl Fn(A) -> U,
) {
    let out = std::slice::from_raw_parts_mut(o.add(s), e - s);
    match a {
        Flat::Slice(p) => {
            let a = std::slice::from_raw_parts(p.add(s), e - s);
            for (o, &x) in out.iter_mut().zip(a) {
                *o = f(x);
            }
        }
        Flat::Splat(x) => out.fill(f(x)),
    }
}

/// Two-operand form of [`run1`].
///
/// # Safety
/// As [`run1`].
#[inline(always)]
unsafe fn run2<A: Element, B: Element, U: Element>(
    o: *mut U,
    a: Flat<A>,
    b: Flat<B>,
    s: usize,
    e: usize,
    f: &impl Fn(A, B) -> U,
) {
    let n = e - s;
    let out = std::slice::from_raw_parts_mut(o.add(s), n);
    match (a, b) {
        (Flat::Slice(pa), Flat::Slice(pb)) => {
            let (a, b) = (
                std::slice::from_raw_parts(pa.add(s), n),
                std::slice::from_raw_parts(pb.add(s), n),
            );
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = f(x, y);
            }
        }
        (Flat::Slice(pa), Flat::Splat(y)) => {
            let a = std::slice::from_raw_parts(pa.add(s), n);
            for (o, &x) in out.iter_mut().zip(a) {
                *o = f(x, y);
            }
        }
        (Flat::Splat(x), Flat::Slice(pb)) => {
            let b = std::slice::from_raw_parts(pb.add(s), n);
            for (o, &y) in out.iter_mut().zip(b) {
                *o = f(x, y);
            }
        }
        (Flat::Splat(x), Flat::Splat(y)) => out.fill(f(x, y)),
    }
}

/// Three-operand form of [`run1`]. The condition-like first operand is
/// always a slice here in practice; the cases with one splat among the
/// other two (`where(mask, x, 0)`, `where(mask, 0, x)`) get loops of their
/// own so they vectorise, the rest read through [`Flat::get`].
///
/// # Safety
/// As [`run1`].
#[inline(always)]
unsafe fn run3<A: Element, B: Element, C: Element, U: Element>(
    o: *mut U,
    a: Flat<A>,
    b: Flat<B>,
    c: Flat<C>,
    s: usize,
    e: usize,
    f: &impl Fn(A, B, C) -> U,
) {
    let n = e - s;
    let out = std::slice::from_raw_parts_mut(o.add(s), n);
    let part = |p: *const A| std::slice::from_raw_parts(p.add(s), n);
    match (a, b, c) {
        (Flat::Slice(pa), Flat::Slice(pb), Flat::Slice(pc)) => {
            let (b, c) = (
                std::slice::from_raw_parts(pb.add(s), n),
                std::slice::from_raw_parts(pc.add(s), n),
            );
            for (((o, &x), &y), &z) in out.iter_mut().zip(part(pa)).zip(b).zip(c) {
                *o = f(x, y, z);
            }
        }
        (Flat::Slice(pa), Flat::Splat(y), Flat::Slice(pc)) => {
            let c = std::slice::from_raw_parts(pc.add(s), n);
            for ((o, &x), &z) in out.iter_mut().zip(part(pa)).zip(c) {
                *o = f(x, y, z);
            }
        }
        (Flat::Slice(pa), Flat::Slice(pb), Flat::Splat(z)) => {
            let b = std::slice::from_raw_parts(pb.add(s), n);
            for ((o, &x), &y) in out.iter_mut().zip(part(pa)).zip(b) {
                *o = f(x, y, z);
            }
        }
        _ => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = f(a.get(s + i), b.get(s + i), c.get(s + i));
            }
        }
    }
}

/// In-place form: `dst[i] = f(dst[i], b[i])`.
///
/// # Safety
/// `d` is valid for reads and writes of `e` elements and aliases no slice
/// operand; slice operands are valid for reads of `e` elements.
#[inline(always)]
unsafe fn run2_inplace<T: Element, B: Element>(
    d: *mut T,
    b: Flat<B>,
    s: usize,
    e: usize,
    f: &impl Fn(T, B) -> T,
) {
    let n = e - s;
    let dst = std::slice::from_raw_parts_mut(d.add(s), n);
    match b {
        Flat::Slice(pb) => {
            let b = std::slice::from_raw_parts(pb.add(s), n);
            for (o, &y) in dst.iter_mut().zip(b) {
                *o = f(*o, y);
            }
        }
        Flat::Splat(y) => {
            for o in dst.iter_mut() {
                *o = f(*o, y);
            }
        }
    }
}

/// Reads `t` as a flat operand for an output of `shape`, if possible.
///
/// # Safety
/// The caller holds `t`'s storage lock.
unsafe fn flat<T: Element>(t: &Tensor, shape: &[usize]) -> Option<Flat<T>> {
    // One element, or one element expanded (every stride 0, as the
    // gradient of a sum is): the same value everywhere.
    if t.numel() == 1 || (t.numel() > 0 && t.strides().iter().all(|&s| s == 0)) {
        Some(Flat::Splat(*super::access::elem_ptr::<T>(t)))
    } else if t.shape() == shape && t.is_contiguous() {
        Some(Flat::Slice(slice::<T>(t).as_ptr()))
    } else {
        None
    }
}

/// `out[i] = f(x[i])` into a new contiguous tensor of `U`.
pub(crate) fn map1<T: Element, U: Element>(x: &Tensor, f: impl Fn(T) -> U + Sync + Send) -> Tensor {
    let out = Tensor::empty(x.shape(), U::DTYPE);
    let n = out.numel();
    let _g = lock(&[x], None);
    // SAFETY: `x` is locked for reading; `out` is fresh and ours alone.
    unsafe {
        if let Some(a) = flat::<T>(x, x.shape()) {
            let o = SyncPtr(slice_mut::<U>(&out).as_mut_ptr());
            for_ranges(n, |s, e| {
                run1(o.get(), a, s, e, &f);
            });
        } else {
            let xv = view_strided::<T>(x, x.shape(), x.strides());
            for_slabs(x.shape(), n, |p| {
                // Each slab writes its own part of `out` (`for_slabs`).
                Zip::from(p.cut(view_mut::<U>(&out)))
                    .and(p.cut(xv.view()))
                    .for_each(|o, &a| *o = f(a));
            });
        }
    }
    out
}

/// `out[i] = f(x[i])` into a new contiguous tensor, where `block` computes
/// `f` over a whole contiguous run (`block(src, dst)`, the vectorised
/// form) and `elem` one element (for strided inputs).
pub(crate) fn map1_blocks<T: Element>(
    x: &Tensor,
    elem: impl Fn(T) -> T + Sync + Send,
    block: impl Fn(&[T], &mut [T]) + Sync + Send,
) -> Tensor {
    if x.numel() <= 1 || !x.is_contiguous() {
        return map1(x, elem);
    }
    let out = Tensor::empty(x.shape(), T::DTYPE);
    let n = out.numel();
    let _g = lock(&[x], None);
    // SAFETY: `x` is locked for reading and contiguous; `out` is fresh and
    // ours alone, and each range of it is written by one worker only.
    unsafe {
        let src = slice::<T>(x);
        let o = SyncPtr(slice_mut::<T>(&out).as_mut_ptr());
        for_ranges(n, |s, e| {
            block(
                &src[s..e],
                std::slice::from_raw_parts_mut(o.get().add(s), e - s),
            );
        });
    }
    out
}

/// One operand of a binary block: a contiguous run, or the single value
/// it broadcasts.
#[derive(Clone, Copy)]
pub(crate) enum Run<'a, T> {
    Slice(&'a [T]),
    Splat(T),
}

impl<T: Element> Flat<T> {
    /// The run `s..e` of this operand.
    ///
    /// # Safety
    /// A slice operand is valid for reads of `e` elements.
    #[inline(always)]
    unsafe fn run<'a>(self, s: usize, e: usize) -> Run<'a, T> {
        match self {
            Flat::Slice(p) => Run::Slice(std::slice::from_raw_parts(p.add(s), e - s)),
            Flat::Splat(v) => Run::Splat(v),
        }
    }
}

/// `out = f(a, b)` into a new contiguous tensor, where `block` computes `f`
/// over whole contiguous runs (`block(a, b, dst)`, the vectorised form)
/// when each operand is contiguous with the output's shape or a single
/// element, and `elem` one element otherwise (as [`map2`]).
pub(crate) fn map2_blocks<T: Element>(
    a: &Tensor,
    b: &Tensor,
    elem: impl Fn(T, T) -> T + Sync + Send,
    block: impl Fn(Run<'_, T>, Run<'_, T>, &mut [T]) + Sync + Send,
) -> Result<Tensor> {
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    {
        let _g = lock(&[a, b], None);
        // SAFETY: inputs are locked for reading and `flat` only reads an
        // operand as a run when it is contiguous with the output's shape
        // or one value; `out` is fresh and ours alone, and each range of
        // it is written by one worker only.
        unsafe {
            if let (Some(fa), Some(fb)) = (flat::<T>(a, &shape), flat::<T>(b, &shape)) {
                // Allocated only here: the strided path below has its own.
                let out = Tensor::try_empty(&shape, T::DTYPE)?;
                let n = out.numel();
                let o = SyncPtr(slice_mut::<T>(&out).as_mut_ptr());
                for_ranges(n, |s, e| {
                    block(
                        fa.run(s, e),
                        fb.run(s, e),
                        std::slice::from_raw_parts_mut(o.get().add(s), e - s),
                    );
                });
                return Ok(out);
            }
        }
    }
    // Strided operands: one element at a time (the lock above is released).
    map2(a, b, elem)
}

/// `out = f(a, b)` with broadcasting, into a new contiguous tensor of `U`.
pub(crate) fn map2<A: Element, B: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(A, B) -> U + Sync + Send,
) -> Result<Tensor> {
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    let out = Tensor::try_empty(&shape, U::DTYPE)?;
    let n = out.numel();
    let _g = lock(&[a, b], None);
    // SAFETY: inputs are locked for reading; `out` is fresh and ours alone;
    // broadcast strides only reach elements the inputs' layouts reach.
    unsafe {
        if let (Some(fa), Some(fb)) = (flat::<A>(a, &shape), flat::<B>(b, &shape)) {
            let o = SyncPtr(slice_mut::<U>(&out).as_mut_ptr());
            for_ranges(n, |s, e| {
                run2(o.get(), fa, fb, s, e, &f);
            });
        } else {
            let av = view_strided::<A>(a, &shape, &bstrides(a, &shape)?);
            let bv = view_strided::<B>(b, &shape, &bstrides(b, &shape)?);
            for_slabs(&shape, n, |p| {
                Zip::from(p.cut(view_mut::<U>(&out)))
                    .and(p.cut(av.view()))
                    .and(p.cut(bv.view()))
                    .for_each(|o, &x, &y| *o = f(x, y));
            });
        }
    }
    Ok(out)
}

/// `out = f(a, b, c)` with broadcasting, into a new contiguous tensor of `U`.
pub(crate) fn map3<A: Element, B: Element, C: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    f: impl Fn(A, B, C) -> U + Sync + Send,
) -> Result<Tensor> {
    let shape = broadcast_shapes(&broadcast_shapes(a.shape(), b.shape())?, c.shape())?;
    let out = Tensor::try_empty(&shape, U::DTYPE)?;
    let n = out.numel();
    let _g = lock(&[a, b, c], None);
    // SAFETY: as in `map2`.
    unsafe {
        if let (Some(fa), Some(fb), Some(fc)) = (
            flat::<A>(a, &shape),
            flat::<B>(b, &shape),
            flat::<C>(c, &shape),
        ) {
            let o = SyncPtr(slice_mut::<U>(&out).as_mut_ptr());
            for_ranges(n, |s, e| {
                run3(o.get(), fa, fb, fc, s, e, &f);
            });
        } else {
            let av = view_strided::<A>(a, &shape, &bstrides(a, &shape)?);
            let bv = view_strided::<B>(b, &shape, &bstrides(b, &shape)?);
            let cv = view_strided::<C>(c, &shape, &bstrides(c, &shape)?);
            for_slabs(&shape, n, |p| {
                Zip::from(p.cut(view_mut::<U>(&out)))
                    .and(p.cut(av.view()))
                    .and(p.cut(bv.view()))
                    .and(p.cut(cv.view()))
                    .for_each(|o, &x, &y, &w| *o = f(x, y, w));
            });
        }
    }
    Ok(out)
}

/// Checks that `dst`'s layout can be written elementwise (no element
/// reached twice). Whether autograd allows the write is checked by the
/// in-place op before it calls a kernel.
pub(crate) fn check_writable(dst: &Tensor) -> Result<()> {
    check_no_overlap(dst)
}

/// An input of an in-place op, copied first if it shares `dst`'s storage:
/// reading memory while writing it through another layout would race, and
/// the slice loops must not alias the written buffer.
fn detangle(dst: &Tensor, src: &Tensor) -> Tensor {
    if src.storage().same(dst.storage()) {
        super::copy::dense(src)
    } else {
        src.clone()
    }
}

fn check_broadcast_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    let shape = broadcast_shapes(dst.shape(), src.shape())?;
    if shape.as_slice() != dst.shape() {
        return Err(Error::runtime(format!(
            "output with shape {:?} doesn't match the broadcast shape {:?}",
            dst.shape(),
            shape.as_slice()
        )));
    }
    Ok(())
}

/// `dst[i] = f(dst[i])` in place; bumps `dst`'s version.
pub(crate) fn apply1<T: Element>(dst: &Tensor, f: impl Fn(T) -> T + Sync + Send) -> Result<()> {
    check_writable(dst)?;
    let n = dst.numel();
    {
        let _g = lock(&[], Some(dst));
        // SAFETY: `dst` is write-locked and does not overlap itself.
        unsafe {
            if dst.is_contiguous() {
                let o = SyncPtr(slice_mut::<T>(dst).as_mut_ptr());
                for_ranges(n, |s, e| {
                    // SAFETY: each range is written by one worker only.
                    let d = std::slice::from_raw_parts_mut(o.get().add(s), e - s);
                    for v in d.iter_mut() {
                        *v = f(*v);
                    }
                });
            } else {
                for_slabs(dst.shape(), n, |p| {
                    Zip::from(p.cut(view_mut::<T>(dst))).for_each(|o| *o = f(*o));
                });
            }
        }
    }
    dst.bump_version();
    Ok(())
}

/// `dst[i] = f(dst[i])` in place, with `block` computing `f` over a whole
/// contiguous run and `elem` one element (as [`map1_blocks`]).
pub(crate) fn apply1_blocks<T: Element>(
    dst: &Tensor,
    elem: impl Fn(T) -> T + Sync + Send,
    block: impl Fn(&mut [T]) + Sync + Send,
) -> Result<()> {
    if !dst.is_contiguous() {
        return apply1(dst, elem);
    }
    check_writable(dst)?;
    let n = dst.numel();
    {
        let _g = lock(&[], Some(dst));
        // SAFETY: `dst` is write-locked and contiguous; each range is
        // written by one worker only.
        unsafe {
            let o = SyncPtr(slice_mut::<T>(dst).as_mut_ptr());
            for_ranges(n, |s, e| {
                block(std::slice::from_raw_parts_mut(o.get().add(s), e - s))
            });
        }
    }
    dst.bump_version();
    Ok(())
}

/// `dst = f(dst, b)` in place, `b` broadcast to `dst`'s shape.
pub(crate) fn apply2<T: Element, B: Element>(
    dst: &Tensor,
    b: &Tensor,
    f: impl Fn(T, B) -> T + Sync + Send,
) -> Result<()> {
    check_writable(dst)?;
    check_broadcast_into(dst, b)?;
    let b = detangle(dst, b);
    let shape = dst.shape().to_vec();
    let n = dst.numel();
    {
        let _g = lock(&[&b], Some(dst));
        // SAFETY: `dst` is write-locked and non-overlapping; `b` is locked
        // (or shares `dst`'s lock with an identical layout).
        unsafe {
            if let (true, Some(fb)) = (dst.is_contiguous(), flat::<B>(&b, &shape)) {
                let o = SyncPtr(slice_mut::<T>(dst).as_mut_ptr());
                for_ranges(n, |s, e| {
                    run2_inplace(o.get(), fb, s, e, &f);
                });
            } else {
                let bv = view_strided::<B>(&b, &shape, &bstrides(&b, &shape)?);
                for_slabs(&shape, n, |p| {
                    Zip::from(p.cut(view_mut::<T>(dst)))
                        .and(p.cut(bv.view()))
                        .for_each(|o, &y| *o = f(*o, y));
                });
            }
        }
    }
    dst.bump_version();
    Ok(())
}

/// `dst = f(dst, b, c)` in place, `b` and `c` broadcast to `dst`'s shape.
pub(crate) fn apply3<T: Element, B: Element, C: Element>(
    dst: &Tensor,
    b: &Tensor,
    c: &Tensor,
    f: impl Fn(T, B, C) -> T + Sync + Send,
) -> Result<()> {
    check_writable(dst)?;
    check_broadcast_into(dst, b)?;
    check_broadcast_into(dst, c)?;
    let (b, c) = (detangle(dst, b), detangle(dst, c));
    let shape = dst.shape().to_vec();
    let n = dst.numel();
    {
        let _g = lock(&[&b, &c], Some(dst));
        // SAFETY: as in `apply2`.
        unsafe {
            let bv = view_strided::<B>(&b, &shape, &bstrides(&b, &shape)?);
            let cv = view_strided::<C>(&c, &shape, &bstrides(&c, &shape)?);
            for_slabs(&shape, n, |p| {
                Zip::from(p.cut(view_mut::<T>(dst)))
                    .and(p.cut(bv.view()))
                    .and(p.cut(cv.view()))
                    .for_each(|o, &y, &w| *o = f(*o, y, w));
            });
        }
    }
    dst.bump_version();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(c: bool, a: f32, b: f32) -> f32 {
        if c {
            a
        } else {
            b
        }
    }

    #[test]
    fn three_operand_loops_agree_with_the_strided_path_for_every_splat_mix() {
        // 200 x 200 is past PARALLEL_MIN_ELEMS, so the slice loops also run split.
        let (r, c) = (200usize, 200usize);
        let mask: Vec<bool> = (0..r * c).map(|i| (i * 7) % 5 < 2).collect();
        let xs: Vec<f32> = (0..r * c).map(|i| i as f32 * 0.25 - 3.0).collect();
        let ys: Vec<f32> = (0..r * c).map(|i| -(i as f32) * 0.5).collect();
        let m = Tensor::from_slice(&mask, &[r, c]).unwrap();
        let x = Tensor::from_slice(&xs, &[r, c]).unwrap();
        let y = Tensor::from_slice(&ys, &[r, c]).unwrap();
        let splat = Tensor::from_slice(&[1.5f32], &[]).unwrap();
        // The same values through a transposed layout take ndarray's Zip.
        let strided = |t: &Tensor| t.t().unwrap().contiguous().t().unwrap();
        let cases: [(&Tensor, &Tensor); 4] =
            [(&x, &y), (&splat, &y), (&x, &splat), (&splat, &splat)];
        for (a, b) in cases {
            let fast = map3::<bool, f32, f32, f32>(&m, a, b, select).unwrap();
            let slow = map3::<bool, f32, f32, f32>(&strided(&m), a, b, select).unwrap();
            let want: Vec<f32> = (0..r * c)
                .map(|i| {
                    let av = if a.numel() == 1 { 1.5 } else { xs[i] };
                    let bv = if b.numel() == 1 { 1.5 } else { ys[i] };
                    select(mask[i], av, bv)
                })
                .collect();
            assert_eq!(fast.to_vec::<f32>(), want);
            assert_eq!(slow.to_vec::<f32>(), want);
        }
    }
}
