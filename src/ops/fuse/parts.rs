//! The loops of a fused group: the output's elements split into parts
//! (run on the pool when large), each part swept in blocks whose registers
//! stay in the L1 cache, forward and backward; large results are written
//! with non-temporal stores.

use super::{Elem, FusedPlan, Operand, Sweep, PART};
use crate::kernels::isa;
use crate::pool::{par_for, SyncPtr, PARALLEL_MIN_ELEMS};

/// Runs `body(part, start, end)` over `0..n` in parts of [`PART`] (on the
/// pool when large).
pub(super) fn parts(n: usize, body: &(dyn Fn(usize, usize, usize) + Sync)) {
    let count = n.div_ceil(PART).max(1);
    if n >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 {
        par_for(count, 1, &|p| body(p, p * PART, ((p + 1) * PART).min(n)));
    } else {
        for p in 0..count {
            body(p, p * PART, ((p + 1) * PART).min(n));
        }
    }
}

/// `blk` copies of each splat operand's value (zeros for the others).
fn splat_registers<T: Elem>(ops: &[Operand<T>], blk: usize) -> Vec<T> {
    let mut v = vec![T::default(); ops.len() * blk];
    for (r, op) in ops.iter().enumerate() {
        if let Operand::Splat(x) = *op {
            v[r * blk..(r + 1) * blk].fill(x);
        }
    }
    v
}

/// Outputs at least this large are written with non-temporal stores: far
/// larger than the caches, they would only be read from memory (to own
/// their lines) before being overwritten.
const STREAMING_BYTES: usize = 8 << 20;

/// Whether outputs of `n` elements of `T` are written with non-temporal
/// stores.
pub(super) fn streams<T>(n: usize) -> bool {
    cfg!(target_arch = "x86_64") && n * std::mem::size_of::<T>() >= STREAMING_BYTES
}

/// The pointers of a block's operands that are slices (not splats).
fn slices<'a, T: Copy + 'a>(ops: &'a [Operand<T>]) -> impl Iterator<Item = *const T> + 'a {
    ops.iter().filter_map(|o| match o {
        Operand::Slice(q) => Some(*q),
        Operand::Splat(_) => None,
    })
}

/// Asks the CPU to bring elements `at..at + len` of each of `ptrs` into
/// the cache: the next block's operands, fetched while this block runs.
/// Several operand streams, read a block at a time between writes to the
/// results, outrun the hardware prefetchers (measured: the backward sweep
/// of a 4M-element group 16% faster, its forward 11%).
///
/// # Safety
/// Each pointer is valid for `at + len` elements.
#[inline(always)]
unsafe fn prefetch_block<T>(ptrs: impl Iterator<Item = *const T>, at: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for q in ptrs {
        let start = q.add(at) as *const i8;
        let bytes = len * std::mem::size_of::<T>();
        let mut o = 0;
        while o < bytes {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(start.add(o));
            o += 64;
        }
    }
}

/// Copies `src` to `dst` with non-temporal stores where the CPU has them
/// (a whole 64-byte line per store with AVX-512).
///
/// # Safety
/// `dst` is writable for `src.len()` elements and does not overlap `src`.
#[inline(always)]
unsafe fn stream_copy<T: Copy>(dst: *mut T, src: &[T]) {
    let bytes = std::mem::size_of_val(src);
    let (d, s) = (dst as *mut u8, src.as_ptr() as *const u8);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        if isa::has_avx512() {
            stream_lines(d, s, bytes);
            return;
        }
        let head = d.align_offset(16).min(bytes);
        std::ptr::copy_nonoverlapping(s, d, head);
        let mut i = head;
        while i + 16 <= bytes {
            _mm_stream_si128(
                d.add(i) as *mut __m128i,
                _mm_loadu_si128(s.add(i) as *const __m128i),
            );
            i += 16;
        }
        std::ptr::copy_nonoverlapping(s.add(i), d.add(i), bytes - i);
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::ptr::copy_nonoverlapping(s, d, bytes);
}

/// [`stream_copy`]'s AVX-512 loop: one 64-byte line per store. Its own
/// function so that the intrinsics compile inline with the feature
/// enabled (outside such a function each would be a call).
///
/// # Safety
/// The CPU has AVX-512 F; `d` is writable and `s` readable for `bytes`,
/// without overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn stream_lines(d: *mut u8, s: *const u8, bytes: usize) {
    use std::arch::x86_64::{__m512i, _mm512_loadu_si512, _mm512_stream_si512};
    // SAFETY: forwarded; every access is below `bytes`.
    unsafe {
        let head = d.align_offset(64).min(bytes);
        std::ptr::copy_nonoverlapping(s, d, head);
        let mut i = head;
        while i + 64 <= bytes {
            _mm512_stream_si512(
                d.add(i) as *mut __m512i,
                _mm512_loadu_si512(s.add(i) as *const __m512i),
            );
            i += 64;
        }
        std::ptr::copy_nonoverlapping(s.add(i), d.add(i), bytes - i);
    }
}

/// Orders a part's non-temporal stores before its completion is signalled.
#[inline(always)]
fn stream_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a store fence has no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// A part's block registers: where each register's elements lie, the
/// steps' results (`blk` per register, the inputs' unused) and copies of
/// the splat operands.
pub(super) struct Block<T> {
    pub(super) ptrs: Vec<*const T>,
    pub(super) regs: Vec<T>,
    pub(super) splats: Vec<T>,
    pub(super) blk: usize,
}

impl<T: Elem> Block<T> {
    fn new(plan: &FusedPlan, ops: &[Operand<T>], blk: usize) -> Self {
        Block {
            ptrs: vec![std::ptr::null(); plan.registers()],
            regs: vec![T::default(); plan.registers() * blk],
            splats: splat_registers(ops, blk),
            blk,
        }
    }
}

/// What a forward part needs (shared by the workers).
pub(super) struct Fwd<'a, T> {
    pub(super) plan: &'a FusedPlan,
    pub(super) ops: &'a [Operand<T>],
    /// One sum per part (of a summed group).
    pub(super) sums: SyncPtr<f64>,
    /// Per step, the buffer it is written to (the result's and the kept
    /// steps'), if any.
    pub(super) dst: &'a [Option<SyncPtr<T>>],
    /// Whether those are written with non-temporal stores, from the
    /// block's registers, rather than computed in place.
    pub(super) stream: bool,
    pub(super) blk: usize,
    pub(super) last: usize,
}
// SAFETY: the pointers are read (operands) or written in disjoint ranges
// (outputs) by the workers, from buffers locked for the call.
unsafe impl<T> Sync for Fwd<'_, T> {}

/// The forward pass over elements `s..e`.
///
/// # Safety
/// As `forward_typed` sets `cx` up: locked operands of the output's
/// length, outputs written by this part only in `s..e`.
#[inline(always)]
unsafe fn fwd_part<T: Elem>(cx: &Fwd<'_, T>, p: usize, s: usize, e: usize) {
    let (plan, blk) = (cx.plan, cx.blk);
    let mut b = Block::new(plan, cx.ops, blk);
    // A summed group adds its results in f64, in lanes (so the loop
    // vectorizes); the lanes and then the parts are added in order.
    let mut lanes = [0.0f64; 8];
    let mut at = s;
    while at < e {
        let len = blk.min(e - at);
        if at + len < e {
            let nl = blk.min(e - at - len);
            prefetch_block(slices(cx.ops), at + len, nl);
        }
        let direct = if cx.stream { &[][..] } else { cx.dst };
        plan.forward_block(cx.ops, &mut b, at, len, &[], &[], direct);
        if cx.stream {
            for (k, d) in cx.dst.iter().enumerate() {
                if let Some(q) = d {
                    let r = plan.0.inputs + k;
                    stream_copy(q.get().add(at), std::slice::from_raw_parts(b.ptrs[r], len));
                }
            }
        }
        if plan.0.sum {
            add_lanes(&mut lanes, std::slice::from_raw_parts(b.ptrs[cx.last], len));
        }
        at += len;
    }
    if plan.0.sum {
        *cx.sums.get().add(p) = lanes.iter().sum();
    }
    if cx.stream {
        stream_fence();
    }
}

/// Adds `vals` into `lanes` in f64, element `i` into lane `i % 8` (the
/// summed group's total, vectorized, in the same order in every loop).
#[inline(always)]
fn add_lanes<T: Elem>(lanes: &mut [f64; 8], vals: &[T]) {
    let mut chunks = vals.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l += v.widen();
        }
    }
    for (l, &v) in lanes.iter_mut().zip(chunks.remainder()) {
        *l += v.widen();
    }
}

/// What a backward part needs (shared by the workers).
pub(super) struct Bwd<'a, T> {
    pub(super) plan: &'a FusedPlan,
    pub(super) ops: &'a [Operand<T>],
    pub(super) g: Operand<T>,
    pub(super) out_ptrs: &'a [Option<SyncPtr<T>>],
    pub(super) needs: &'a [bool],
    pub(super) kept_at: &'a [Option<SyncPtr<T>>],
    pub(super) live: &'a [bool],
    pub(super) sweep: &'a Sweep,
    /// Whether the full-sized gradients are written with non-temporal
    /// stores, from the block's registers, rather than swept in place.
    pub(super) stream: bool,
    pub(super) sums: SyncPtr<T>,
    /// With the derivatives in the forward loop: one total per part of
    /// the group's summed result (whose last step is then live).
    pub(super) totals: Option<SyncPtr<f64>>,
    pub(super) blk: usize,
    pub(super) last: usize,
}
// SAFETY: as `Fwd`; each part writes its own row of `sums`.
unsafe impl<T> Sync for Bwd<'_, T> {}

/// The backward pass over elements `s..e` (part `p`).
///
/// # Safety
/// As `backward_typed` sets `cx` up.
#[inline(always)]
unsafe fn bwd_part<T: Elem>(cx: &Bwd<'_, T>, p: usize, s: usize, e: usize) {
    let (plan, blk, width) = (cx.plan, cx.blk, cx.ops.len());
    let mut b = Block::new(plan, cx.ops, blk);
    let mut grads = vec![T::default(); plan.registers() * blk];
    let mut s1 = vec![T::default(); blk];
    // A splat gradient fills its register once: the sweep only reads it.
    if let Operand::Splat(v) = cx.g {
        grads[cx.last * blk..(cx.last + 1) * blk].fill(v);
    }
    let base = grads.as_mut_ptr();
    let mut gp: Vec<*mut T> = (0..plan.registers()).map(|r| base.add(r * blk)).collect();
    let mut acc = vec![T::default(); width];
    let mut lanes = [0.0f64; 8];
    let mut at = s;
    while at < e {
        let len = blk.min(e - at);
        if at + len < e {
            let nl = blk.min(e - at - len);
            let kept = cx.kept_at.iter().flatten().map(|q| q.get() as *const T);
            prefetch_block(slices(cx.ops).chain(kept), at + len, nl);
        }
        plan.forward_block(cx.ops, &mut b, at, len, cx.kept_at, cx.live, &[]);
        if cx.totals.is_some() {
            add_lanes(&mut lanes, std::slice::from_raw_parts(b.ptrs[cx.last], len));
        }
        if let Operand::Slice(q) = cx.g {
            gp[cx.last] = q.add(at) as *mut T;
        }
        // Full-sized gradients are swept straight into their buffers (or
        // streamed there from the registers).
        for (r, slot) in cx.out_ptrs.iter().enumerate() {
            if let (Some(ptr), false) = (slot, cx.stream) {
                gp[r] = ptr.get().add(at);
            }
        }
        plan.backward_block(&b.ptrs, &gp, cx.sweep, len, &mut s1);
        for (r, slot) in cx.out_ptrs.iter().enumerate() {
            let gr = std::slice::from_raw_parts(gp[r], len);
            match slot {
                Some(ptr) if cx.stream => stream_copy(ptr.get().add(at), gr),
                None if cx.needs[r] => {
                    for &v in gr {
                        acc[r] = T::add(acc[r], v);
                    }
                }
                _ => {}
            }
        }
        at += len;
    }
    if cx.stream {
        stream_fence();
    }
    for (r, &v) in acc.iter().enumerate() {
        *cx.sums.get().add(p * width + r) = v;
    }
    if let Some(t) = cx.totals {
        *t.get().add(p) = lanes.iter().sum();
    }
}

/// `fwd_part_best` and `bwd_part_best`: the part functions compiled for
/// AVX-512, for AVX2 + FMA and for the baseline, chosen at run time. The
/// block loops are inlined into each, so a loop over a block costs no
/// call (the float functions' block kernels are called, and dispatch on
/// their own). No loop contracts multiplies and adds, so every level
/// gives the same bits.
macro_rules! isa_parts {
    ($best:ident, $part:ident, $cx:ident, ($($a:ident: $t:ty),*)) => {
        pub(super) fn $best<T: Elem>(cx: &$cx<'_, T>, $($a: $t),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
                unsafe fn wide<T: Elem>(cx: &$cx<'_, T>, $($a: $t),*) {
                    $part(cx, $($a),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn mid<T: Elem>(cx: &$cx<'_, T>, $($a: $t),*) {
                    $part(cx, $($a),*)
                }
                if isa::has_avx512() {
                    // SAFETY: the CPU has the features; `cx` is set up as
                    // the part function requires.
                    return unsafe { wide(cx, $($a),*) };
                }
                if isa::has_avx2() {
                    // SAFETY: as above.
                    return unsafe { mid(cx, $($a),*) };
                }
            }
            // SAFETY: as above.
            unsafe { $part(cx, $($a),*) }
        }
    };
}
isa_parts!(fwd_part_best, fwd_part, Fwd, (p: usize, s: usize, e: usize));
isa_parts!(bwd_part_best, bwd_part, Bwd, (p: usize, s: usize, e: usize));
