//! Elementwise loop drivers shared by every pointwise kernel.
//!
//! `map1`/`map2`/`map3` apply a closure over broadcast inputs into a new
//! contiguous tensor; `apply1`/`apply2`/`apply3` write into an existing
//! tensor in place. They pick a slice loop when every operand is contiguous
//! (or a single broadcast element), a strided loop nest ([`super::nest`])
//! otherwise, and split the work over ferrograd's pool when it is large. Callers pass inputs already
//! cast to the closure's element types.

use super::access::{elem_ptr, lock, slice_mut};
use super::isa;
use super::nest::Nest;
use crate::pool::SyncPtr;
use crate::pool::{par_for, PARALLEL_MIN_ELEMS};
pub(crate) use crate::tensor::check_no_overlap;
use crate::tensor::{broadcast_shapes, elementwise_strides, Dims};
use crate::{Element, Error, Result, Tensor};
use smallvec::SmallVec;

pub(crate) const CHUNK: usize = 1 << 14;

pub(crate) fn parallel(n: usize) -> bool {
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
            isa::dispatch(|| {
                for (o, &x) in out.iter_mut().zip(a) {
                    *o = f(x);
                }
            })
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
            isa::dispatch(|| {
                for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                    *o = f(x, y);
                }
            })
        }
        (Flat::Slice(pa), Flat::Splat(y)) => {
            let a = std::slice::from_raw_parts(pa.add(s), n);
            isa::dispatch(|| {
                for (o, &x) in out.iter_mut().zip(a) {
                    *o = f(x, y);
                }
            })
        }
        (Flat::Splat(x), Flat::Slice(pb)) => {
            let b = std::slice::from_raw_parts(pb.add(s), n);
            isa::dispatch(|| {
                for (o, &y) in out.iter_mut().zip(b) {
                    *o = f(x, y);
                }
            })
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
            isa::dispatch(|| {
                for (o, &y) in dst.iter_mut().zip(b) {
                    *o = f(*o, y);
                }
            })
        }
        Flat::Splat(y) => isa::dispatch(|| {
            for o in dst.iter_mut() {
                *o = f(*o, y);
            }
        }),
    }
}

/// Reads `t` as a flat operand for an output of `shape` laid out with the
/// dense strides `os`, if possible: one value, or an operand whose
/// elements lie in memory in the output's order.
///
/// # Safety
/// The caller holds `t`'s storage lock.
unsafe fn flat<T: Element>(t: &Tensor, shape: &[usize], os: &[usize]) -> Option<Flat<T>> {
    // One element, or one element expanded (every stride 0, as the
    // gradient of a sum is): the same value everywhere.
    if t.numel() == 1 || (t.numel() > 0 && t.strides().iter().all(|&s| s == 0)) {
        Some(Flat::Splat(*super::access::elem_ptr::<T>(t)))
    } else if t.shape() == shape && same_order(t, os) {
        Some(Flat::Slice(super::access::elem_ptr::<T>(t) as *const T))
    } else {
        None
    }
}

/// Whether `t` has the dense strides `os` on every dim that has more than
/// one element (so its elements lie in memory in the same order).
fn same_order(t: &Tensor, os: &[usize]) -> bool {
    t.shape()
        .iter()
        .zip(t.strides().iter().zip(os))
        .all(|(&n, (&s, &o))| n == 1 || s == o)
}

/// A new tensor of `shape` for the result of an elementwise op over
/// `inputs`, laid out as torch lays such results out (see
/// [`elementwise_strides`]), with those strides.
fn fresh(shape: &[usize], inputs: &[&Tensor], dtype: crate::DType) -> Result<(Tensor, Dims)> {
    let layouts: SmallVec<[&crate::tensor::Layout; 4]> =
        inputs.iter().map(|t| t.layout()).collect();
    let os = elementwise_strides(shape, &layouts);
    Ok((Tensor::try_empty_strided(shape, &os, dtype)?, os))
}

/// An operand of a strided run at `p` with inner stride `st`, as a slice
/// loop reads it (a run or one broadcast value), if it can.
///
/// # Safety
/// `p` is readable (and, for stride 1, the whole run is).
#[inline(always)]
unsafe fn at<T: Element>(p: *const T, st: usize) -> Option<Flat<T>> {
    match st {
        0 => Some(Flat::Splat(*p)),
        1 => Some(Flat::Slice(p)),
        _ => None,
    }
}

/// `out[i] = f(x[i])` into a new contiguous tensor of `U`.
pub(crate) fn map1<T: Element, U: Element>(x: &Tensor, f: impl Fn(T) -> U + Sync + Send) -> Tensor {
    let (out, os) = fresh(x.shape(), &[x], U::DTYPE).unwrap_or_else(|e| panic!("{e}"));
    let n = out.numel();
    let _g = lock(&[x], None);
    // SAFETY: `x` is locked for reading; `out` is fresh and ours alone, a
    // dense block of `n` elements from its first.
    unsafe {
        if let Some(a) = flat::<T>(x, x.shape(), &os) {
            let o = SyncPtr(elem_ptr::<U>(&out));
            for_ranges(n, |s, e| {
                run1(o.get(), a, s, e, &f);
            });
        } else {
            let nest = Nest::new(x.shape(), [&os, x.strides()]);
            let [_, sx] = nest.inner_strides();
            let (o, px) = (SyncPtr(elem_ptr::<U>(&out)), SyncPtr(elem_ptr::<T>(x)));
            // The nest's offsets stay inside each operand's layout, and each
            // range of `out` is written by one worker only.
            nest.par_runs(n, |off, len| {
                let (o, p) = (o.get().add(off[0]), px.get().add(off[1]) as *const T);
                match at(p, sx) {
                    Some(a) => run1(o, a, 0, len, &f),
                    None => {
                        for i in 0..len {
                            *o.add(i) = f(*p.add(i * sx));
                        }
                    }
                }
            });
        }
    }
    out
}

/// `out[i] = f(x[i])` into a new contiguous tensor, where `block` computes
/// `f` over a whole contiguous run (`block(src, dst)`, the vectorised
/// form; strided runs are gathered for it) and `elem` one element (for a
/// single-element input).
pub(crate) fn map1_blocks<T: Element>(
    x: &Tensor,
    elem: impl Fn(T) -> T + Sync + Send,
    block: impl Fn(&[T], &mut [T]) + Sync + Send,
) -> Tensor {
    if x.numel() <= 1 {
        return map1(x, elem);
    }
    let (out, os) = fresh(x.shape(), &[x], T::DTYPE).unwrap_or_else(|e| panic!("{e}"));
    if !same_order(x, &os) {
        return map1_runs(x, out, &os, block);
    }
    let n = out.numel();
    let _g = lock(&[x], None);
    // SAFETY: `x` is locked for reading and dense in the order of `out`,
    // which is fresh and ours alone, and each range of it is written by
    // one worker only.
    unsafe {
        let src = std::slice::from_raw_parts(elem_ptr::<T>(x) as *const T, n);
        let o = SyncPtr(elem_ptr::<T>(&out));
        for_ranges(n, |s, e| {
            block(
                &src[s..e],
                std::slice::from_raw_parts_mut(o.get().add(s), e - s),
            );
        });
    }
    out
}

/// [`map1_blocks`] over a strided `x`: `block` on each run, read in place
/// when the nest finds it contiguous and gathered in pieces otherwise.
fn map1_runs<T: Element>(
    x: &Tensor,
    out: Tensor,
    os: &[usize],
    block: impl Fn(&[T], &mut [T]) + Sync + Send,
) -> Tensor {
    let nest = Nest::new(x.shape(), [os, x.strides()]);
    let [_, sx] = nest.inner_strides();
    let _g = lock(&[x], None);
    let (o, px) = (SyncPtr(elem_ptr::<T>(&out)), SyncPtr(elem_ptr::<T>(x)));
    // SAFETY: `x` is locked for reading; the nest's offsets stay inside
    // each operand's layout, and each range of the fresh `out` is written
    // by one worker only.
    for_ranges(out.numel(), |s, e| {
        // Strided runs are gathered into this buffer in pieces, so `block`
        // (the vectorised form) still computes them.
        let mut buf = if sx == 1 {
            Vec::new()
        } else {
            vec![T::default(); GATHER]
        };
        nest.runs(s, e, |off, len| unsafe {
            let (o, p) = (o.get().add(off[0]), px.get().add(off[1]) as *const T);
            if sx == 1 {
                block(
                    std::slice::from_raw_parts(p, len),
                    std::slice::from_raw_parts_mut(o, len),
                );
            } else {
                let mut i = 0;
                while i < len {
                    let n = GATHER.min(len - i);
                    for (j, v) in buf[..n].iter_mut().enumerate() {
                        *v = *p.add((i + j) * sx);
                    }
                    block(&buf[..n], std::slice::from_raw_parts_mut(o.add(i), n));
                    i += n;
                }
            }
        })
    });
    out
}

/// Elements of a strided run gathered at a time for a block function.
const GATHER: usize = 256;

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
    let (out, os) = fresh(&shape, &[a, b], T::DTYPE)?;
    {
        let _g = lock(&[a, b], None);
        // SAFETY: inputs are locked for reading and `flat` only reads an
        // operand as a run when it is contiguous with the output's shape
        // or one value; `out` is fresh and ours alone, and each range of
        // it is written by one worker only.
        unsafe {
            if let (Some(fa), Some(fb)) = (flat::<T>(a, &shape, &os), flat::<T>(b, &shape, &os)) {
                let n = out.numel();
                let o = SyncPtr(elem_ptr::<T>(&out));
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
    // Strided operands: `block` on the runs that are contiguous or one
    // value, `elem` on the others.
    let (sa, sb) = (bstrides(a, &shape)?, bstrides(b, &shape)?);
    let nest = Nest::new(&shape, [&os, &sa, &sb]);
    let [_, ia, ib] = nest.inner_strides();
    let _g = lock(&[a, b], None);
    let o = SyncPtr(elem_ptr::<T>(&out));
    let (pa, pb) = (SyncPtr(elem_ptr::<T>(a)), SyncPtr(elem_ptr::<T>(b)));
    // SAFETY: as in `map2`.
    nest.par_runs(out.numel(), |off, len| unsafe {
        let o = o.get().add(off[0]);
        let x = pa.get().add(off[1]) as *const T;
        let y = pb.get().add(off[2]) as *const T;
        match (at(x, ia), at(y, ib)) {
            (Some(fa), Some(fb)) => block(
                fa.run(0, len),
                fb.run(0, len),
                std::slice::from_raw_parts_mut(o, len),
            ),
            _ => {
                for i in 0..len {
                    *o.add(i) = elem(*x.add(i * ia), *y.add(i * ib));
                }
            }
        }
    });
    Ok(out)
}

/// `out = f(a, b)` with broadcasting, into a new contiguous tensor of `U`.
pub(crate) fn map2<A: Element, B: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(A, B) -> U + Sync + Send,
) -> Result<Tensor> {
    let shape = broadcast_shapes(a.shape(), b.shape())?;
    let (out, os) = fresh(&shape, &[a, b], U::DTYPE)?;
    let n = out.numel();
    let _g = lock(&[a, b], None);
    // SAFETY: inputs are locked for reading; `out` is fresh and ours alone,
    // a dense block of `n` elements from its first; broadcast strides only
    // reach elements the inputs' layouts reach.
    unsafe {
        if let (Some(fa), Some(fb)) = (flat::<A>(a, &shape, &os), flat::<B>(b, &shape, &os)) {
            let o = SyncPtr(elem_ptr::<U>(&out));
            for_ranges(n, |s, e| {
                run2(o.get(), fa, fb, s, e, &f);
            });
        } else {
            let (sa, sb) = (bstrides(a, &shape)?, bstrides(b, &shape)?);
            let nest = Nest::new(&shape, [&os, &sa, &sb]);
            let [_, ia, ib] = nest.inner_strides();
            let o = SyncPtr(elem_ptr::<U>(&out));
            let (pa, pb) = (SyncPtr(elem_ptr::<A>(a)), SyncPtr(elem_ptr::<B>(b)));
            // As in `map1`.
            nest.par_runs(n, |off, len| {
                let o = o.get().add(off[0]);
                let x = pa.get().add(off[1]) as *const A;
                let y = pb.get().add(off[2]) as *const B;
                match (at(x, ia), at(y, ib)) {
                    (Some(fa), Some(fb)) => run2(o, fa, fb, 0, len, &f),
                    _ => {
                        for i in 0..len {
                            *o.add(i) = f(*x.add(i * ia), *y.add(i * ib));
                        }
                    }
                }
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
    let (out, os) = fresh(&shape, &[a, b, c], U::DTYPE)?;
    let n = out.numel();
    let _g = lock(&[a, b, c], None);
    // SAFETY: as in `map2`.
    unsafe {
        if let (Some(fa), Some(fb), Some(fc)) = (
            flat::<A>(a, &shape, &os),
            flat::<B>(b, &shape, &os),
            flat::<C>(c, &shape, &os),
        ) {
            let o = SyncPtr(elem_ptr::<U>(&out));
            for_ranges(n, |s, e| {
                run3(o.get(), fa, fb, fc, s, e, &f);
            });
        } else {
            let (sa, sb, sc) = (
                bstrides(a, &shape)?,
                bstrides(b, &shape)?,
                bstrides(c, &shape)?,
            );
            let nest = Nest::new(&shape, [&os, &sa, &sb, &sc]);
            let [_, ia, ib, ic] = nest.inner_strides();
            let o = SyncPtr(elem_ptr::<U>(&out));
            let (pa, pb, pc) = (
                SyncPtr(elem_ptr::<A>(a)),
                SyncPtr(elem_ptr::<B>(b)),
                SyncPtr(elem_ptr::<C>(c)),
            );
            // As in `map1`.
            nest.par_runs(n, |off, len| {
                let o = o.get().add(off[0]);
                let x = pa.get().add(off[1]) as *const A;
                let y = pb.get().add(off[2]) as *const B;
                let z = pc.get().add(off[3]) as *const C;
                match (at(x, ia), at(y, ib), at(z, ic)) {
                    (Some(fa), Some(fb), Some(fc)) => run3(o, fa, fb, fc, 0, len, &f),
                    _ => {
                        for i in 0..len {
                            *o.add(i) = f(*x.add(i * ia), *y.add(i * ib), *z.add(i * ic));
                        }
                    }
                }
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
        // SAFETY: `dst` is write-locked and does not overlap itself; a
        // dense `dst` is a block of `n` elements from its first.
        unsafe {
            if dst.layout().is_non_overlapping_and_dense() {
                let o = SyncPtr(elem_ptr::<T>(dst));
                for_ranges(n, |s, e| {
                    // SAFETY: each range is written by one worker only.
                    let d = std::slice::from_raw_parts_mut(o.get().add(s), e - s);
                    isa::dispatch(|| {
                        for v in d.iter_mut() {
                            *v = f(*v);
                        }
                    })
                });
            } else {
                let nest = Nest::new(dst.shape(), [dst.strides()]);
                let [sd] = nest.inner_strides();
                let o = SyncPtr(elem_ptr::<T>(dst));
                // The nest's offsets stay inside `dst`'s layout, which does
                // not overlap itself; each range is written by one worker.
                nest.par_runs(n, |off, len| {
                    let d = o.get().add(off[0]);
                    for i in 0..len {
                        *d.add(i * sd) = f(*d.add(i * sd));
                    }
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
    check_writable(dst)?;
    if !dst.is_contiguous() {
        let nest = Nest::new(dst.shape(), [dst.strides()]);
        let [sd] = nest.inner_strides();
        {
            let _g = lock(&[], Some(dst));
            let o = SyncPtr(elem_ptr::<T>(dst));
            // SAFETY: as in `apply1`.
            nest.par_runs(dst.numel(), |off, len| unsafe {
                let d = o.get().add(off[0]);
                if sd == 1 {
                    block(std::slice::from_raw_parts_mut(d, len));
                } else {
                    for i in 0..len {
                        *d.add(i * sd) = elem(*d.add(i * sd));
                    }
                }
            });
        }
        dst.bump_version();
        return Ok(());
    }
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

/// `dst = f(dst, b)` in place, `b` broadcast to `dst`'s shape; bumps
/// `dst`'s version.
pub(crate) fn apply2<T: Element, B: Element>(
    dst: &Tensor,
    b: &Tensor,
    f: impl Fn(T, B) -> T + Sync + Send,
) -> Result<()> {
    fill2(dst, b, f)?;
    dst.bump_version();
    Ok(())
}

/// [`apply2`] without the version bump: for filling a tensor nobody has
/// seen yet (a fresh copy's memory).
pub(crate) fn fill2<T: Element, B: Element>(
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
            let dense = dst.layout().is_non_overlapping_and_dense();
            if let (true, Some(fb)) = (dense, flat::<B>(&b, &shape, dst.strides())) {
                let o = SyncPtr(elem_ptr::<T>(dst));
                for_ranges(n, |s, e| {
                    run2_inplace(o.get(), fb, s, e, &f);
                });
            } else {
                let sb = bstrides(&b, &shape)?;
                let nest = Nest::new(&shape, [dst.strides(), &sb]);
                let [sd, ib] = nest.inner_strides();
                let (o, pb) = (SyncPtr(elem_ptr::<T>(dst)), SyncPtr(elem_ptr::<B>(&b)));
                // As in `apply1`.
                nest.par_runs(n, |off, len| {
                    let d = o.get().add(off[0]);
                    let y = pb.get().add(off[1]) as *const B;
                    match (sd, at(y, ib)) {
                        (1, Some(fb)) => run2_inplace(d, fb, 0, len, &f),
                        _ => {
                            for i in 0..len {
                                *d.add(i * sd) = f(*d.add(i * sd), *y.add(i * ib));
                            }
                        }
                    }
                });
            }
        }
    }
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
            let (sb, sc) = (bstrides(&b, &shape)?, bstrides(&c, &shape)?);
            let nest = Nest::new(&shape, [dst.strides(), &sb, &sc]);
            let [sd, ib, ic] = nest.inner_strides();
            let o = SyncPtr(elem_ptr::<T>(dst));
            let (pb, pc) = (SyncPtr(elem_ptr::<B>(&b)), SyncPtr(elem_ptr::<C>(&c)));
            // As in `apply1`.
            nest.par_runs(n, |off, len| {
                let d = o.get().add(off[0]);
                let y = pb.get().add(off[1]) as *const B;
                let z = pc.get().add(off[2]) as *const C;
                for i in 0..len {
                    *d.add(i * sd) = f(*d.add(i * sd), *y.add(i * ib), *z.add(i * ic));
                }
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
        // 300 x 300 is past PARALLEL_MIN_ELEMS, so the slice loops also run split.
        let (r, c) = (300usize, 300usize);
        assert!(r * c >= crate::pool::PARALLEL_MIN_ELEMS);
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
