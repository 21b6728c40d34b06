//! Float32 products on AVX-512: packed operands and a 12 x 32 register
//! tile.
//!
//! Note [Float32 products on AVX-512]: the `gemm` crate's AVX-512 kernels
//! read a right operand with contiguous rows in place and run near this
//! machine's peak, but a right operand with contiguous columns (the input
//! gradient `g @ W.T` of every linear layer, and `a.T @ b.T`) costs them
//! 5-15% more time on two threads. Those products run here instead, the
//! same way whatever the layouts:
//!
//! - `b` is packed, for each block of [`KC`] inner indices, into panels of
//!   [`NR`] columns (`kc` rows of 32 floats, one cache line pair per row);
//!   `a` is packed per block of [`MC`] rows into panels of [`MR`] rows
//!   (`kc` groups of 12 floats). Packing reads any strides: unit strides
//!   with (masked) vector loads, an operand contiguous along the inner
//!   dim (a transposed one) with loads of 16 x 16 blocks transposed in
//!   registers, others with gathers, so no layout makes a slower product.
//! - The register tile keeps 12 x 32 sums in 24 vector registers; each
//!   inner step loads two vectors of `b` and broadcasts 12 elements of `a`
//!   into 24 fused multiply-adds. A panel of `b` (32 KB) stays in the
//!   first-level cache while the panels of `a` stream past it.
//! - The output is cut into chunks of whole panels (row ranges, and
//!   column ranges when rows are few), about eight per thread. The pool's
//!   threads first pack `b`'s panels together, then each runs its own
//!   range of chunks and takes over chunks that others have not started,
//!   so a thread that wakes late does not hold up the product.
//! - A product of at most [`NARROW_ROWS`] rows (a batch of activations
//!   times a weight) is cut by columns instead: the threads pack all of
//!   `a` together, then each chunk packs one panel of `b` at a time just
//!   before the tiles that read it, so the panel is still in the
//!   first-level cache and no thread reads panels another packed.
//!
//! Each output element adds its products in inner-index order within a
//! block of [`KC`] and the blocks in order; how the output is cut between
//! threads never changes which tile computes an element or how, so the
//! bits do not depend on the thread count. `alpha` and `beta` apply after
//! the sums, as separate multiplies and adds (no fused step), in the tile
//! and at the ragged edges alike.

use super::GemmArgs;
use std::arch::x86_64::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Rows of a register tile (elements of `a` broadcast per inner step).
const MR: usize = 12;
/// Columns of a register tile (two vectors of 16 floats).
const NR: usize = 32;
/// Inner indices per packed block.
const KC: usize = 256;
/// Rows of `a` packed at a time (a multiple of [`MR`]).
const MC: usize = 12 * MR;
/// At most this many floats of `b` are packed at once (4 MB); wider
/// products run in column blocks.
const B_FLOATS: usize = 1 << 20;
/// Products of at most this many rows (rounded up to whole tiles) run
/// column panel by column panel ([`narrow`]) when all of `a` packed takes
/// at most [`A_FLOATS`].
const NARROW_ROWS: usize = MC;
/// At most this many floats of `a` are packed at once by [`narrow`] (4 MB).
const A_FLOATS: usize = 1 << 20;

/// Whether the product runs here: float32 rows of `c` contiguous, rows
/// of `b` not (a transposed or strided right operand: with contiguous
/// rows the `gemm` crate reads `b` in place and is as fast or faster,
/// [`narrow`] included), at
/// least one tile of rows and a half of one of columns, and a CPU with
/// AVX-512.
pub(super) fn usable(g: &GemmArgs<f32>) -> bool {
    g.ccs == 1
        && g.bcs != 1
        && g.m >= MR
        && g.n >= NR / 2
        && g.k >= 16
        && super::super::isa::has_avx512()
}

/// What a tile does with its sums `s` at `c`.
#[derive(Clone, Copy)]
enum Out {
    /// `c = alpha * s`
    Set(f32),
    /// `c = alpha * s + beta * c`
    SetScaled(f32, f32),
    /// `c = c + alpha * s`
    Add(f32),
}

impl Out {
    /// The scalar form, for elements outside whole tiles.
    fn apply(self, c: &mut f32, s: f32) {
        *c = match self {
            Out::Set(alpha) => alpha * s,
            Out::SetScaled(alpha, beta) => alpha * s + beta * *c,
            Out::Add(alpha) => *c + alpha * s,
        }
    }
}

thread_local! {
    /// This thread's own packs (blocks of `a`, or a panel of `b` in
    /// [`narrow`]) for the chunks it runs.
    static OWN: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
    /// The operand packed for every thread of the products called from
    /// here (`b`, or `a` in [`narrow`]).
    static SHARED: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

type Buffer = std::thread::LocalKey<RefCell<Vec<f32>>>;

/// Runs `f` on `len` floats of this thread's `buffer`, 64-byte aligned; on
/// a fresh one if that is in use.
fn with_buffer<R>(buffer: &'static Buffer, len: usize, f: impl FnOnce(*mut f32) -> R) -> R {
    fn aligned(v: &mut Vec<f32>, len: usize) -> *mut f32 {
        if v.len() < len + 16 {
            v.resize(len + 16, 0.0);
        }
        let p = v.as_mut_ptr();
        // SAFETY: at most 15 floats past the start, inside the buffer.
        unsafe { p.add(p.align_offset(64)) }
    }
    buffer.with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => f(aligned(&mut v, len)),
        Err(_) => f(aligned(&mut Vec::new(), len)),
    })
}

/// Lanes `0..n` of a 16-lane mask (`n` may exceed 16).
fn lanes(n: usize) -> __mmask16 {
    if n >= 16 {
        0xFFFF
    } else {
        ((1u32 << n) - 1) as __mmask16
    }
}

/// Gather offsets `0, s, 2s, ..., 15s` shifted by `first * s`, if every
/// one fits in 32 bits.
fn offsets(first: usize, s: isize) -> Option<[i32; 16]> {
    let mut out = [0i32; 16];
    for (l, o) in out.iter_mut().enumerate() {
        *o = i32::try_from((first + l) as isize * s).ok()?;
    }
    Some(out)
}

/// `c = alpha * a @ b (+ beta * c)`; see Note [Float32 products on AVX-512].
///
/// # Safety
/// As `GemmArgs::naive_rows` for all rows; [`usable`] holds.
pub(super) unsafe fn gemm(g: &GemmArgs<f32>, threads: usize) {
    if narrow_fits(g) {
        with_buffer(&SHARED, g.m.div_ceil(MR) * MR * g.k, |ap| {
            // SAFETY: forwarded; `ap` has room for the packed `a`.
            unsafe { narrow(g, ap, threads) }
        });
        return;
    }
    let per_block = (B_FLOATS / g.k).max(NR) / NR * NR;
    let mut j0 = 0;
    while j0 < g.n {
        let nc = per_block.min(g.n - j0);
        let part = GemmArgs {
            n: nc,
            b: g.b.wrapping_offset(j0 as isize * g.bcs),
            c: g.c.wrapping_add(j0),
            ..*g
        };
        with_buffer(&SHARED, g.k * nc.div_ceil(NR) * NR, |bp| {
            // SAFETY: forwarded; `bp` holds the packed columns.
            unsafe { columns(&part, bp, threads) }
        });
        j0 += nc;
    }
}

/// Whether the product runs as [`narrow`] does.
fn narrow_fits(g: &GemmArgs<f32>) -> bool {
    let rows = g.m.div_ceil(MR) * MR;
    rows <= NARROW_ROWS && rows * g.k <= A_FLOATS
}

/// Where panel `j` (of `count` panels `width` wide) of inner block `p`
/// starts in a packed operand with `k` inner indices.
fn panel(k: usize, count: usize, width: usize, p: usize, j: usize) -> usize {
    let k0 = p * KC;
    k0 * count * width + j * KC.min(k - k0) * width
}

/// Runs a product's parts on up to `threads` threads: `units` packing
/// steps, then `chunks` chunks of the output that read what was packed.
///
/// Every participant first takes packing steps until none is left and
/// waits for the ones others took; then it runs its own contiguous range
/// of chunks and, when done, the chunks other participants have not
/// started. A step or chunk is only ever taken by a thread that is
/// running, so the wait always ends, and a thread that starts late finds
/// its range done instead of holding the others up.
fn share(
    threads: usize,
    units: usize,
    pack: &(dyn Fn(usize) + Sync),
    chunks: usize,
    chunk: &(dyn Fn(usize) + Sync),
) {
    let parts = threads.min(chunks);
    let (next_unit, packed) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let range = |q: usize| q * chunks / parts..(q + 1) * chunks / parts;
    let cursors: Vec<AtomicUsize> = (0..parts)
        .map(|q| AtomicUsize::new(range(q).start))
        .collect();
    let work = |part: usize| {
        loop {
            let u = next_unit.fetch_add(1, Ordering::Relaxed);
            if u >= units {
                break;
            }
            pack(u);
            packed.fetch_add(1, Ordering::Release);
        }
        crate::pool::wait_until(|| packed.load(Ordering::Acquire) >= units);
        for q in (part..parts).chain(0..part) {
            loop {
                let t = cursors[q].fetch_add(1, Ordering::Relaxed);
                if t >= range(q).end {
                    break;
                }
                chunk(t);
            }
        }
    };
    // A product is long enough that the calling thread hands it to the
    // pool and sleeps, as rayon's `install` does. A caller that ran one
    // part itself (`par_for` from outside the pool) made a lone 64-row
    // product faster but a training step that calls it slower, measured
    // (docs/performance/products.md).
    if parts > 1 {
        crate::pool::install(|| crate::pool::par_for(parts, 1, &work));
    } else {
        work(0);
    }
}

/// The product of an `a` of at most [`NARROW_ROWS`] rows (a batch of
/// activations), column panel by column panel, with `ap` room for the
/// packed `a`.
///
/// All of `a` is packed first, shared by the threads (it is small); then
/// each chunk packs one panel of `b` at a time and runs every row panel
/// against it while it sits in the first-level cache. Each thread packs
/// only the columns it computes, and the chunks split the columns evenly
/// however few the rows are.
unsafe fn narrow(g: &GemmArgs<f32>, ap: *mut f32, threads: usize) {
    let (m, n, k) = (g.m, g.n, g.k);
    let (mpan, npan, blocks) = (m.div_ceil(MR), n.div_ceil(NR), k.div_ceil(KC));
    let ap = crate::pool::SyncPtr(ap);
    let pack = |u: usize| {
        let (p, i) = (u / mpan, u % mpan);
        // SAFETY: the unit's panel lies inside `ap`.
        unsafe { pack_a_panel(g, ap.get().add(panel(k, mpan, MR, p, i)), p, i) }
    };
    let per = npan.div_ceil(8 * threads);
    let chunk = |t: usize| {
        with_buffer(&OWN, KC * NR, |bp| {
            for j in t * per..((t + 1) * per).min(npan) {
                let (j0, w) = (j * NR, NR.min(n - j * NR));
                for p in 0..blocks {
                    let kc = KC.min(k - p * KC);
                    // SAFETY: `bp` holds one panel; the tiles write columns
                    // `j0..j0 + w` of `c`, this chunk's alone, after `a`
                    // is fully packed.
                    unsafe {
                        pack_b_panel(g, bp, p, j);
                        for i in 0..mpan {
                            let apan = ap.get().add(panel(k, mpan, MR, p, i));
                            let cp = g.c.offset((i * MR) as isize * g.crs + j0 as isize);
                            put(kc, apan, bp, MR.min(m - i * MR), w, cp, g.crs, out(g, p));
                        }
                    }
                }
            }
        })
    };
    share(threads, blocks * mpan, &pack, npan.div_ceil(per), &chunk);
}

/// Packs inner block `p` of row panel `i` of `a` (rows `i * MR..`, at
/// most [`MR`]) into `dst`.
///
/// # Safety
/// `dst` has room for the panel; `g` describes readable operands.
unsafe fn pack_a_panel(g: &GemmArgs<f32>, dst: *mut f32, p: usize, i: usize) {
    let (k0, r0) = (p * KC, i * MR);
    // SAFETY: the reads stay inside `a` (rows `r0..r0 + h`, inner
    // `k0..k0 + kc`).
    unsafe {
        pack_a(
            dst,
            KC.min(g.k - k0),
            MR.min(g.m - r0),
            g.a.wrapping_offset(r0 as isize * g.ars + k0 as isize * g.acs),
            g.ars,
            g.acs,
        )
    }
}

/// Packs inner block `p` of column panel `j` of `b` (columns `j * NR..`,
/// at most [`NR`]) into `dst`.
///
/// # Safety
/// As [`pack_a_panel`].
unsafe fn pack_b_panel(g: &GemmArgs<f32>, dst: *mut f32, p: usize, j: usize) {
    let (k0, j0) = (p * KC, j * NR);
    // SAFETY: the reads stay inside `b` (rows `k0..k0 + kc`, columns
    // `j0..j0 + w`).
    unsafe {
        pack_b(
            dst,
            KC.min(g.k - k0),
            NR.min(g.n - j0),
            g.b.wrapping_offset(k0 as isize * g.brs + j0 as isize * g.bcs),
            g.brs,
            g.bcs,
        )
    }
}

/// What the tiles of inner block `p` do with their sums.
fn out(g: &GemmArgs<f32>, p: usize) -> Out {
    match (p, g.beta) {
        (0, None) => Out::Set(g.alpha),
        (0, Some(beta)) => Out::SetScaled(g.alpha, beta),
        _ => Out::Add(g.alpha),
    }
}

/// The `h x w` block of `c` at `cp` (rows `crs` apart) from packed panels
/// of `a` and `b`: a register tile in place when it is whole (rows a
/// multiple of 4, all 32 columns), else through a buffer.
///
/// # Safety
/// The panels hold `kc` inner steps; the block lies inside `c`.
#[allow(clippy::too_many_arguments)]
unsafe fn put(
    kc: usize,
    apan: *const f32,
    bpan: *const f32,
    h: usize,
    w: usize,
    cp: *mut f32,
    crs: isize,
    out: Out,
) {
    if w == NR && h.is_multiple_of(4) {
        // SAFETY: whole rows of tiles inside `c`.
        unsafe { tile_rows(h, kc, apan, bpan, cp, crs, out) };
        return;
    }
    let mut sums = [0f32; MR * NR];
    // SAFETY: `sums` holds whole tiles, rows of NR.
    unsafe {
        tile_rows(
            h.next_multiple_of(4),
            kc,
            apan,
            bpan,
            sums.as_mut_ptr(),
            NR as isize,
            Out::Set(1.0),
        )
    };
    for r in 0..h {
        for cc in 0..w {
            // SAFETY: inside the block.
            out.apply(
                unsafe { &mut *cp.offset(r as isize * crs + cc as isize) },
                sums[r * NR + cc],
            );
        }
    }
}

/// The product for all of `g`'s columns (at most [`B_FLOATS`] of `b`),
/// with `bp` room for the packed `b`.
unsafe fn columns(g: &GemmArgs<f32>, bp: *mut f32, threads: usize) {
    let (m, n, k) = (g.m, g.n, g.k);
    let npan = n.div_ceil(NR);
    let blocks = k.div_ceil(KC);
    let bp = crate::pool::SyncPtr(bp);
    let pack = |u: usize| {
        let (p, jp) = (u / npan, u % npan);
        // SAFETY: the unit's panel lies inside `bp`.
        unsafe { pack_b_panel(g, bp.get().add(panel(k, npan, NR, p, jp)), p, jp) }
    };
    // The output in chunks of whole panels, about eight per thread so that
    // a thread that starts late (a pool thread waking up) costs little:
    // row ranges of at most MC rows, and column ranges too when the rows
    // alone give fewer chunks than threads.
    let mpan = m.div_ceil(MR);
    let want = 8 * threads;
    let per_rows = mpan.div_ceil(want).clamp(1, MC / MR);
    let row_chunks = mpan.div_ceil(per_rows);
    let col_chunks = if row_chunks >= threads {
        1
    } else {
        want.div_ceil(row_chunks).min(npan)
    };
    let chunk = |t: usize| {
        let (ri, cj) = (t / col_chunks, t % col_chunks);
        let ip = ri * per_rows..((ri + 1) * per_rows).min(mpan);
        let jp = cj * npan / col_chunks..(cj + 1) * npan / col_chunks;
        // SAFETY: chunks write disjoint tiles of `c`; `bp` is fully packed
        // before any chunk starts.
        unsafe { rows(g, bp.get(), npan, ip, jp) }
    };
    share(
        threads,
        blocks * npan,
        &pack,
        row_chunks * col_chunks,
        &chunk,
    );
}

/// Row panels `ip` x column panels `jp` of `c`, from the packed `b` and
/// this thread's packs of `a`.
unsafe fn rows(
    g: &GemmArgs<f32>,
    bp: *const f32,
    npan: usize,
    ip: std::ops::Range<usize>,
    jp: std::ops::Range<usize>,
) {
    let (m, n, k) = (g.m, g.n, g.k);
    with_buffer(&OWN, MC * KC, |ap| {
        let mut c0 = ip.start;
        while c0 < ip.end {
            let c1 = (c0 + MC / MR).min(ip.end);
            for p in 0..k.div_ceil(KC) {
                let kc = KC.min(k - p * KC);
                for i in c0..c1 {
                    // SAFETY: panel `i - c0` of `ap` (MC x KC floats).
                    unsafe { pack_a_panel(g, ap.add((i - c0) * kc * MR), p, i) };
                }
                for j in jp.clone() {
                    let bpan = bp.add(panel(k, npan, NR, p, j));
                    let w = NR.min(n - j * NR);
                    for i in c0..c1 {
                        let apan = ap.add((i - c0) * kc * MR);
                        let h = MR.min(m - i * MR);
                        let cp = g.c.offset((i * MR) as isize * g.crs + (j * NR) as isize);
                        // SAFETY: a block of `c` inside the product.
                        unsafe { put(kc, apan, bpan, h, w, cp, g.crs, out(g, p)) };
                    }
                }
            }
            c0 = c1;
        }
    })
}

/// The first `h` rows (4, 8 or 12) of a register tile (see [`tile`]): a
/// last row panel of 4 or 8 rows costs a third or two thirds of a whole
/// one, not all of it.
///
/// # Safety
/// As [`tile`], for `h` rows of `c`.
unsafe fn tile_rows(
    h: usize,
    kc: usize,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    crs: isize,
    out: Out,
) {
    match h {
        4 => tile::<4>(kc, a, b, c, crs, out),
        8 => tile::<8>(kc, a, b, c, crs, out),
        _ => tile::<MR>(kc, a, b, c, crs, out),
    }
}

/// One register tile of `H` rows: the sums of `kc` inner steps of the
/// packed panels `a` (`kc` x 12, its first `H` rows read) and `b` (`kc` x
/// 32), stored to `c` (rows `crs` apart) as `out` says.
#[target_feature(enable = "avx512f")]
unsafe fn tile<const H: usize>(
    kc: usize,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    crs: isize,
    out: Out,
) {
    let mut acc = [[_mm512_setzero_ps(); 2]; H];
    for kk in 0..kc {
        let b0 = _mm512_loadu_ps(b.add(kk * NR));
        let b1 = _mm512_loadu_ps(b.add(kk * NR + 16));
        let ar = a.add(kk * MR);
        for (r, sums) in acc.iter_mut().enumerate() {
            let x = _mm512_set1_ps(*ar.add(r));
            sums[0] = _mm512_fmadd_ps(x, b0, sums[0]);
            sums[1] = _mm512_fmadd_ps(x, b1, sums[1]);
        }
    }
    for (r, sums) in acc.iter().enumerate() {
        for (h, &s) in sums.iter().enumerate() {
            let p = c.offset(r as isize * crs + 16 * h as isize);
            let v = match out {
                Out::Set(alpha) => _mm512_mul_ps(_mm512_set1_ps(alpha), s),
                Out::SetScaled(alpha, beta) => _mm512_add_ps(
                    _mm512_mul_ps(_mm512_set1_ps(alpha), s),
                    _mm512_mul_ps(_mm512_set1_ps(beta), _mm512_loadu_ps(p)),
                ),
                Out::Add(alpha) => {
                    _mm512_add_ps(_mm512_loadu_ps(p), _mm512_mul_ps(_mm512_set1_ps(alpha), s))
                }
            };
            _mm512_storeu_ps(p, v);
        }
    }
}

/// Packs `kc` rows of `w <= 32` columns of `b` (strides `brs`, `bcs`) as
/// `dst[kk * 32 + c]`, zeros past column `w`.
#[target_feature(enable = "avx512f")]
unsafe fn pack_b(dst: *mut f32, kc: usize, w: usize, src: *const f32, brs: isize, bcs: isize) {
    let (m0, m1) = (lanes(w), lanes(w.saturating_sub(16)));
    if bcs == 1 {
        for kk in 0..kc {
            let s = src.offset(kk as isize * brs);
            let d = dst.add(kk * NR);
            _mm512_storeu_ps(d, _mm512_maskz_loadu_ps(m0, s));
            _mm512_storeu_ps(d.add(16), _mm512_maskz_loadu_ps(m1, s.add(16)));
        }
    } else if brs == 1 {
        // Columns contiguous (`W.T`): each half of the panel transposed
        // from 16 columns' runs along the inner dim.
        for half in 0..2 {
            let used = w.saturating_sub(16 * half).min(16);
            let s = src.wrapping_offset(16 * half as isize * bcs);
            pack_transposed(dst.add(16 * half), NR, kc, used, 0xFFFF, s, bcs);
        }
    } else if let (Some(o0), Some(o1)) = (offsets(0, bcs), offsets(16, bcs)) {
        let (o0, o1) = (
            _mm512_loadu_epi32(o0.as_ptr()),
            _mm512_loadu_epi32(o1.as_ptr()),
        );
        let zero = _mm512_setzero_ps();
        for kk in 0..kc {
            let s = src.offset(kk as isize * brs);
            let d = dst.add(kk * NR);
            _mm512_storeu_ps(d, _mm512_mask_i32gather_ps::<4>(zero, m0, o0, s));
            _mm512_storeu_ps(d.add(16), _mm512_mask_i32gather_ps::<4>(zero, m1, o1, s));
        }
    } else {
        pack_any(dst, NR, kc, w, src, bcs, brs);
    }
}

/// `dst[kk * width + l] = src[l * across + kk]` for `kk < kc` and lanes
/// `l < 16` (zeros past `used <= 16`), writing the lanes `store` sets of
/// each row: 16 runs of 16 contiguous inner indices loaded at a time and
/// transposed in registers, so a transposed operand is packed with plain
/// loads and shuffles (a gather per 16 elements cost as much as the
/// products of a 64-row panel).
///
/// # Safety
/// `dst` is writable for the stored lanes of `kc` rows of `width`; the
/// described elements of `src` are readable.
#[target_feature(enable = "avx512f")]
unsafe fn pack_transposed(
    dst: *mut f32,
    width: usize,
    kc: usize,
    used: usize,
    store: __mmask16,
    src: *const f32,
    across: isize,
) {
    let mut kk0 = 0;
    // Whole blocks of 16 inner indices, with every index a constant so the
    // 16 rows and their transpose stay in registers.
    while kk0 + 16 <= kc {
        let r: [__m512; 16] = std::array::from_fn(|l| {
            if l < used {
                _mm512_loadu_ps(src.offset(l as isize * across + kk0 as isize))
            } else {
                _mm512_setzero_ps()
            }
        });
        let t = transpose16(r);
        for (kk, v) in t.iter().enumerate() {
            _mm512_mask_storeu_ps(dst.add((kk0 + kk) * width), store, *v);
        }
        kk0 += 16;
    }
    // The last, partial block.
    while kk0 < kc {
        let rows = (kc - kk0).min(16);
        let mask = lanes(rows);
        let mut r = [_mm512_setzero_ps(); 16];
        for (l, v) in r.iter_mut().enumerate().take(used) {
            *v = _mm512_maskz_loadu_ps(mask, src.offset(l as isize * across + kk0 as isize));
        }
        let t = transpose16(r);
        for (kk, v) in t.iter().enumerate().take(rows) {
            _mm512_mask_storeu_ps(dst.add((kk0 + kk) * width), store, *v);
        }
        kk0 += 16;
    }
}

/// The 16 x 16 transpose of `r` (`out[c]` lane `j` = `r[j]` lane `c`):
/// 32-bit and 64-bit interleaves within 128-bit lanes, then two rounds of
/// 128-bit lane shuffles.
#[target_feature(enable = "avx512f")]
unsafe fn transpose16(r: [__m512; 16]) -> [__m512; 16] {
    let mut t = [_mm512_setzero_ps(); 16];
    for p in 0..8 {
        t[2 * p] = _mm512_unpacklo_ps(r[2 * p], r[2 * p + 1]);
        t[2 * p + 1] = _mm512_unpackhi_ps(r[2 * p], r[2 * p + 1]);
    }
    // u[4q + s], 128-bit lane L: column 4L + s of rows 4q..4q + 4.
    let mut u = [_mm512_setzero_ps(); 16];
    for q in 0..4 {
        let (a, b) = (_mm512_castps_pd(t[4 * q]), _mm512_castps_pd(t[4 * q + 2]));
        let (c, d) = (
            _mm512_castps_pd(t[4 * q + 1]),
            _mm512_castps_pd(t[4 * q + 3]),
        );
        u[4 * q] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        u[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        u[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
        u[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    let mut out = [_mm512_setzero_ps(); 16];
    for s in 0..4 {
        let even = _mm512_shuffle_f32x4::<0x88>(u[s], u[4 + s]);
        let odd = _mm512_shuffle_f32x4::<0xdd>(u[s], u[4 + s]);
        let even2 = _mm512_shuffle_f32x4::<0x88>(u[8 + s], u[12 + s]);
        let odd2 = _mm512_shuffle_f32x4::<0xdd>(u[8 + s], u[12 + s]);
        out[s] = _mm512_shuffle_f32x4::<0x88>(even, even2);
        out[8 + s] = _mm512_shuffle_f32x4::<0xdd>(even, even2);
        out[4 + s] = _mm512_shuffle_f32x4::<0x88>(odd, odd2);
        out[12 + s] = _mm512_shuffle_f32x4::<0xdd>(odd, odd2);
    }
    out
}

/// `dst[kk * width + l] = src[l * across + kk * along]` for lanes `l < used`
/// of `width`, zeros past `used`: the element-by-element packing for
/// strides too long for gather offsets.
///
/// # Safety
/// `dst` has `kc * width` floats; the described elements of `src` are
/// readable.
unsafe fn pack_any(
    dst: *mut f32,
    width: usize,
    kc: usize,
    used: usize,
    src: *const f32,
    across: isize,
    along: isize,
) {
    for kk in 0..kc {
        for l in 0..width {
            *dst.add(kk * width + l) = if l < used {
                *src.offset(l as isize * across + kk as isize * along)
            } else {
                0.0
            };
        }
    }
}

/// Packs `h <= 12` rows of `kc` inner indices of `a` (strides `ars`,
/// `acs`) as `dst[kk * 12 + r]`, zeros past row `h`.
#[target_feature(enable = "avx512f")]
unsafe fn pack_a(dst: *mut f32, kc: usize, h: usize, src: *const f32, ars: isize, acs: isize) {
    let (mh, tile) = (lanes(h), lanes(MR));
    if ars == 1 {
        for kk in 0..kc {
            let v = _mm512_maskz_loadu_ps(mh, src.offset(kk as isize * acs));
            _mm512_mask_storeu_ps(dst.add(kk * MR), tile, v);
        }
    } else if acs == 1 {
        // Rows contiguous (a row-major `a`): transposed 16 inner indices
        // at a time.
        pack_transposed(dst, MR, kc, h, tile, src, ars);
    } else if let Some(o) = offsets(0, ars) {
        let o = _mm512_loadu_epi32(o.as_ptr());
        let zero = _mm512_setzero_ps();
        for kk in 0..kc {
            let v = _mm512_mask_i32gather_ps::<4>(zero, mh, o, src.offset(kk as isize * acs));
            _mm512_mask_storeu_ps(dst.add(kk * MR), tile, v);
        }
    } else {
        pack_any(dst, MR, kc, h, src, ars, acs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed panels of every branch (unit stride, transposed, gather,
    /// element by element) hold the described elements, zeros past the used lanes,
    /// and nothing is written past a panel.
    #[test]
    fn panels_hold_the_strided_elements_and_zeros_past_the_edge() {
        if !super::super::super::isa::has_avx512() {
            return;
        }
        let src: Vec<f32> = (0..40_000).map(|i| i as f32).collect();
        // Inner lengths past, at and below one 16-row transpose.
        for kc in [37, 16, 3] {
            // (panel width, lanes used, stride across lanes, stride along the
            // inner dim): panels of `b` (32 wide) and of `a` (12 wide).
            let cases = [
                (NR, 32, 1, 40),
                (NR, 20, 1, 33),
                (NR, 32, 45, 1),
                (NR, 7, 45, 1),
                (NR, 32, 0, 3),
                (MR, 12, 1, 50),
                (MR, 5, 1, 50),
                (MR, 12, 50, 1),
                (MR, 9, 61, 2),
                (MR, 12, 0, 1),
                (MR, 5, 50, 1),
                (NR, 16, 40, 1),
                (NR, 0, 40, 1),
            ];
            for (width, used, across, along) in cases {
                let want: Vec<f32> = (0..kc * width)
                    .map(|e| {
                        let (kk, l) = (e / width, e % width);
                        if l < used {
                            src[l * across + kk * along]
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let (s, across, along) = (src.as_ptr(), across as isize, along as isize);
                let mut got = vec![f32::NAN; kc * width + 16];
                // SAFETY: every read index is below 40_000; `got` has room for
                // the panel and one vector more.
                unsafe {
                    if width == NR {
                        pack_b(got.as_mut_ptr(), kc, used, s, along, across);
                    } else {
                        pack_a(got.as_mut_ptr(), kc, used, s, across, along);
                    }
                }
                let what =
                    format!("width {width}, {used} lanes, strides {across}, {along}, kc {kc}");
                assert_eq!(got[..kc * width], want[..], "{what}");
                assert!(
                    got[kc * width..].iter().all(|v| v.is_nan()),
                    "{what}: past the panel"
                );
                // SAFETY: as above.
                unsafe { pack_any(got.as_mut_ptr(), width, kc, used, s, across, along) };
                assert_eq!(got[..kc * width], want[..], "{what}: element by element");
            }
        }
        // 15 * 2^27 fits in 32 bits, 15 * 2^28 and 31 * 2^27 do not.
        assert!(offsets(0, 1 << 27).is_some());
        assert!(offsets(0, 1 << 28).is_none() && offsets(16, 1 << 27).is_none());
        assert_eq!(offsets(16, -3).unwrap()[15], -93);
    }
}
