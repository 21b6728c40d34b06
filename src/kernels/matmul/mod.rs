//! Matrix products: a strided, batched GEMM driver.
//!
//! Floating products go to the `gemm` crate (default) or `matrixmultiply`
//! with the operands' own row/column strides (stride 0 for expanded inputs
//! included), so nothing is copied before the kernel. Tiny products and
//! integer products use a plain triple loop with wrapping arithmetic.

#[cfg(target_arch = "x86_64")]
mod avx512;

use super::access::{elem_ptr, lock};
use super::arith::Arith;
use crate::{Element, Result, Tensor};
use rayon::prelude::*;

/// Which library computes floating-point matrix products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmBackend {
    /// The `gemm` crate, multi-threaded on ferrograd's pool (the default).
    Gemm,
    /// The `matrixmultiply` crate (single-threaded), for comparison.
    MatrixMultiply,
}

impl GemmBackend {
    /// The backend's name as accepted by `FERROGRAD_GEMM`.
    pub fn name(self) -> &'static str {
        match self {
            GemmBackend::Gemm => "gemm",
            GemmBackend::MatrixMultiply => "matrixmultiply",
        }
    }

    /// Parses `"gemm"` or `"matrixmultiply"`.
    pub fn from_name(name: &str) -> Option<GemmBackend> {
        match name {
            "gemm" => Some(GemmBackend::Gemm),
            "matrixmultiply" => Some(GemmBackend::MatrixMultiply),
            _ => None,
        }
    }
}

/// Below this many multiply-adds a product runs as a plain loop.
const SMALL_FLOPS: usize = 16 * 16 * 16;
/// Outputs of outer products from this size on bypass the caches.
const STREAMING_BYTES: usize = 8 << 20;
/// From this many multiply-adds on, one product is split over the pool.
const PARALLEL_FLOPS: usize = 128 * 128 * 128;
/// Products with an inner dim at least this long and at most
/// [`SPLIT_K_MAX_OUT`] outputs split the inner dim (see [`GemmArgs::split_k`]).
const SPLIT_K_MIN: usize = 2048;
const SPLIT_K_MAX_OUT: usize = 64 * 256;
/// Parallel products whose shorter output side is below this run as two
/// halves of their longer side (see [`GemmArgs::halves`]).
const HALVES_MAX_SIDE: usize = 512;
/// Blocks of [`GemmArgs::gemm_chunked`] have at least this many rows (or
/// all of them) and at least [`BLOCK_COLS`] columns (or all of them). The
/// `gemm` crate blocks the inner dim of a product by its length alone
/// except when both sides are at most 64, so with these minimums every
/// block sums in the order of the whole product.
const BLOCK_ROWS: usize = 96;
const BLOCK_COLS: usize = 128;
/// [`GemmArgs::gemm_chunked`] aims at this many blocks per thread, so that
/// a thread that starts late (a pool thread waking up) finds the others
/// have taken its share instead of holding the product up.
const BLOCKS_PER_THREAD: usize = 4;

/// One strided product `c = alpha * a @ b (+ beta * c)`; pointers are raw.
#[derive(Clone, Copy)]
pub(crate) struct GemmArgs<T> {
    m: usize,
    n: usize,
    k: usize,
    a: *const T,
    ars: isize,
    acs: isize,
    b: *const T,
    brs: isize,
    bcs: isize,
    c: *mut T,
    crs: isize,
    ccs: isize,
    alpha: T,
    beta: Option<T>,
}

// SAFETY: the pointers refer to buffers that outlive every use of the
// arguments (the caller holds the storage locks for the whole call), and
// threads only write disjoint rows of `c`.
unsafe impl<T: Send> Send for GemmArgs<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for GemmArgs<T> {}

impl<T: MatElem> GemmArgs<T> {
    /// The same product with each matrix moved by an element offset.
    fn shifted(&self, oa: usize, ob: usize, oc: usize) -> GemmArgs<T> {
        GemmArgs {
            a: self.a.wrapping_add(oa),
            b: self.b.wrapping_add(ob),
            c: self.c.wrapping_add(oc),
            ..*self
        }
    }

    /// Plain loop over rows `r0..r1`.
    ///
    /// # Safety
    /// Every index of the described matrices is readable (a, b) or
    /// writable (c), and no other thread writes rows `r0..r1` of `c`.
    unsafe fn naive_rows(&self, r0: usize, r1: usize) {
        if self.k == 1 && self.ccs == 1 && self.n > 1 {
            // An outer product: each element is one product, written along
            // unit-stride rows of `c` (the row of `b` gathered if strided).
            let gathered: Vec<T>;
            let brow: &[T] = if self.bcs == 1 {
                std::slice::from_raw_parts(self.b, self.n)
            } else {
                gathered = (0..self.n)
                    .map(|j| *self.b.offset(j as isize * self.bcs))
                    .collect();
                &gathered
            };
            for i in r0..r1 {
                let x = *self.a.offset(i as isize * self.ars);
                let crow =
                    std::slice::from_raw_parts_mut(self.c.offset(i as isize * self.crs), self.n);
                for (dst, &y) in crow.iter_mut().zip(brow) {
                    let v = T::mul(self.alpha, T::add(T::zero(), T::mul(x, y)));
                    *dst = match self.beta {
                        Some(beta) => T::add(v, T::mul(beta, *dst)),
                        None => v,
                    };
                }
            }
            return;
        }
        if self.bcs == 1 && self.ccs == 1 && self.n > 1 {
            // Rows of `b` and `c` contiguous: accumulate a whole row of `c`
            // at once (the inner loop runs along `j`, unit stride). Each
            // element still sums its `k` products in order `p = 0..k`
            // before `alpha` and `beta` apply, so the bits are the same as
            // the loop below.
            let mut acc = vec![T::zero(); self.n];
            for i in r0..r1 {
                let arow = self.a.offset(i as isize * self.ars);
                acc.fill(T::zero());
                for p in 0..self.k {
                    let x = *arow.offset(p as isize * self.acs);
                    let brow =
                        std::slice::from_raw_parts(self.b.offset(p as isize * self.brs), self.n);
                    for (s, &y) in acc.iter_mut().zip(brow) {
                        *s = T::add(*s, T::mul(x, y));
                    }
                }
                let crow =
                    std::slice::from_raw_parts_mut(self.c.offset(i as isize * self.crs), self.n);
                for (dst, &s) in crow.iter_mut().zip(&acc) {
                    let v = T::mul(self.alpha, s);
                    *dst = match self.beta {
                        Some(beta) => T::add(v, T::mul(beta, *dst)),
                        None => v,
                    };
                }
            }
            return;
        }
        for i in r0..r1 {
            let arow = self.a.offset(i as isize * self.ars);
            for j in 0..self.n {
                let bcol = self.b.offset(j as isize * self.bcs);
                let mut acc = T::zero();
                for p in 0..self.k {
                    let x = *arow.offset(p as isize * self.acs);
                    let y = *bcol.offset(p as isize * self.brs);
                    acc = T::add(acc, T::mul(x, y));
                }
                let dst = self.c.offset(i as isize * self.crs + j as isize * self.ccs);
                let v = T::mul(self.alpha, acc);
                *dst = match self.beta {
                    Some(beta) => T::add(v, T::mul(beta, *dst)),
                    None => v,
                };
            }
        }
    }

    /// Plain loop, split over rows on the pool when `threads > 1`.
    ///
    /// # Safety
    /// As [`GemmArgs::naive_rows`] for all rows.
    unsafe fn naive(&self, threads: usize) {
        if threads > 1 && self.m > 1 {
            let me = *self;
            crate::pool::install(move || {
                let me = me;
                (0..me.m).into_par_iter().for_each(|i| {
                    // SAFETY: each task writes its own row of `c`.
                    unsafe { me.naive_rows(i, i + 1) }
                })
            });
        } else {
            self.naive_rows(0, self.m);
        }
    }

    /// The `gemm` crate on these strides (`dst := alpha*dst + beta*lhs*rhs`
    /// in its convention, so our alpha/beta swap places).
    ///
    /// # Safety
    /// As [`GemmArgs::naive_rows`]; `T` is f32, f64 or their complex.
    unsafe fn gemm_crate(&self, threads: usize) {
        let par = if threads > 1 {
            gemm::Parallelism::Rayon(threads)
        } else {
            gemm::Parallelism::None
        };
        gemm::gemm(
            self.m,
            self.n,
            self.k,
            self.c,
            self.ccs,
            self.crs,
            self.beta.is_some(),
            self.a,
            self.acs,
            self.ars,
            self.b,
            self.bcs,
            self.brs,
            self.beta.unwrap_or(T::zero()),
            self.alpha,
            false,
            false,
            false,
            par,
        );
    }
}

impl<T: MatElem> GemmArgs<T> {
    /// The inner dim split into parts (a power of two, at most 8, from `k`
    /// alone), whose products run on the pool into buffers of their own
    /// and are added in order. A long inner dim with a small output (the
    /// weight gradient of a convolution, `[16, 6400] @ [6400, 150]`) leaves
    /// the libraries nothing to split; the parts do not depend on the
    /// thread count, so neither do the bits.
    ///
    /// # Safety
    /// As [`GemmArgs::naive_rows`] for all rows.
    unsafe fn split_k(&self, backend: GemmBackend) {
        let parts = (self.k / (SPLIT_K_MIN / 2)).clamp(1, 8);
        let parts = 1usize << parts.ilog2();
        let kp = self.k.div_ceil(parts);
        let (m, n) = (self.m, self.n);
        let partial = |p: usize| {
            let k0 = p * kp;
            let mut buf = vec![T::zero(); m * n];
            // SAFETY: the part reads a slice of the inner dim of the
            // caller's operands and writes its own buffer.
            unsafe { self.inner_part(k0, kp.min(self.k - k0), &mut buf, backend) };
            buf
        };
        let bufs: Vec<Vec<T>> = if crate::pool::kernel_threads() > 1 {
            crate::pool::par_map(parts, &partial)
        } else {
            (0..parts).map(partial).collect()
        };
        for i in 0..m {
            for j in 0..n {
                let mut acc = bufs[0][i * n + j];
                for b in &bufs[1..] {
                    acc = T::add(acc, b[i * n + j]);
                }
                let dst = self.c.offset(i as isize * self.crs + j as isize * self.ccs);
                *dst = match self.beta {
                    Some(beta) => T::add(acc, T::mul(beta, *dst)),
                    None => acc,
                };
            }
        }
    }

    /// `alpha * a[:, k0..k0 + len] @ b[k0..k0 + len, :]` into `buf` (row-major
    /// `m x n`), on this thread.
    ///
    /// # Safety
    /// As [`GemmArgs::naive_rows`] for the reads; `k0 + len <= k`.
    unsafe fn inner_part(&self, k0: usize, len: usize, buf: &mut [T], backend: GemmBackend) {
        let g = GemmArgs {
            k: len,
            a: self.a.wrapping_offset(k0 as isize * self.acs),
            b: self.b.wrapping_offset(k0 as isize * self.brs),
            c: buf.as_mut_ptr(),
            crs: self.n as isize,
            ccs: 1,
            beta: None,
            ..*self
        };
        if !T::fast_gemm(&g, backend, 1) {
            g.naive(1);
        }
    }

    /// The product as two products over the halves of its longer output
    /// side (split at a multiple of 16), for products large enough to run
    /// in parallel whose shorter side is small. The `gemm` crate threads a
    /// product over one side chosen from the layouts, and leaves a thread
    /// idle when that side is short (`x @ w.T` with 64 rows and 128 output
    /// features ran no faster on two threads than on one); the halves keep
    /// both busy. The split depends on the shape only, never on the thread
    /// count, so neither do the bits (one thread runs the halves in turn).
    fn halves(&self) -> Option<(GemmArgs<T>, GemmArgs<T>)> {
        let (m, n) = (self.m, self.n);
        if m * n * self.k < PARALLEL_FLOPS || m.min(n) >= HALVES_MAX_SIDE || m.max(n) < 32 {
            return None;
        }
        let long = m.max(n);
        let h = (long / 2).div_ceil(16) * 16;
        Some(if n >= m {
            (self.block(0, m, 0, h), self.block(0, m, h, n - h))
        } else {
            (self.block(0, h, 0, n), self.block(h, m - h, 0, n))
        })
    }

    /// The block of rows `r0..r0 + rows` and columns `c0..c0 + cols`.
    fn block(&self, r0: usize, rows: usize, c0: usize, cols: usize) -> GemmArgs<T> {
        GemmArgs {
            m: rows,
            n: cols,
            a: self.a.wrapping_offset(r0 as isize * self.ars),
            b: self.b.wrapping_offset(c0 as isize * self.bcs),
            c: self
                .c
                .wrapping_offset(r0 as isize * self.crs + c0 as isize * self.ccs),
            ..*self
        }
    }

    /// The product in `rc` x `cc` blocks of rows and columns (see
    /// [`chunk_grid`]), each a one-thread call of the `gemm` crate, spread
    /// over the pool.
    ///
    /// Note [Products in blocks]: the `gemm` crate's own threading
    /// (`Parallelism::Rayon`) scaled poorly past a few threads: on a
    /// 16-core Xeon a 512 x 512 x 512 float32 product took 500 us on 16
    /// threads with it and 325 us in blocks (docs/performance/products.md).
    /// Blocks of a right operand with contiguous rows are still read in
    /// place, and each block sums its inner products in the order of the
    /// whole product (see [`BLOCK_ROWS`]), so the bits do not depend on
    /// the grid, which follows the thread count.
    ///
    /// # Safety
    /// As [`GemmArgs::gemm_crate`].
    unsafe fn gemm_chunked(&self, rc: usize, cc: usize) {
        let (m, n) = (self.m, self.n);
        let g = *self;
        let body = move |t: usize| {
            let (cj, ri) = (t / rc, t % rc);
            let (r0, r1) = (ri * m / rc, (ri + 1) * m / rc);
            let (c0, c1) = (cj * n / cc, (cj + 1) * n / cc);
            // SAFETY: blocks write disjoint parts of `c` and read inside
            // the caller's operands.
            unsafe { g.block(r0, r1 - r0, c0, c1 - c0).gemm_crate(1) }
        };
        crate::pool::install(|| crate::pool::par_for(rc * cc, 1, &body));
    }

    /// [`GemmArgs::gemm_crate`] on `threads` threads: in blocks over the
    /// pool where [`chunk_grid`] cuts the output of a real product (see
    /// Note [Products in blocks]); else, for products that
    /// [`GemmArgs::halves`] splits, as two halves side by side; else
    /// inside the pool with the crate's own threading.
    ///
    /// # Safety
    /// As [`GemmArgs::gemm_crate`].
    unsafe fn gemm_on_pool(&self, threads: usize) {
        if threads > 1 && T::BLOCKS_SUM_IN_ORDER {
            let (rc, cc) = chunk_grid(self.m, self.n, threads);
            if rc * cc > 1 {
                self.gemm_chunked(rc, cc);
                return;
            }
        }
        if let Some((x, y)) = self.halves() {
            if threads > 1 {
                let tx = threads / 2;
                crate::pool::install(move || {
                    let (x, y) = (x, y);
                    // SAFETY: the halves write disjoint parts of `c` and
                    // read inside the caller's operands.
                    rayon::join(
                        || unsafe { x.gemm_crate(tx) },
                        || unsafe { y.gemm_crate(threads - tx) },
                    );
                });
            } else {
                x.gemm_crate(1);
                y.gemm_crate(1);
            }
            return;
        }
        if threads > 1 {
            let g = *self;
            crate::pool::install(move || {
                let g = g;
                // SAFETY: forwarded from the caller.
                unsafe { g.gemm_crate(threads) }
            })
        } else {
            self.gemm_crate(1)
        }
    }
}

/// Element types that can be multiplied as matrices.
pub(crate) trait MatElem: Arith {
    /// Whether a block of a product on the `gemm` crate sums every element
    /// in the order of the whole product, so that products may run in
    /// blocks ([`GemmArgs::gemm_chunked`]) without the bits depending on
    /// the thread count: true for the real floats (tested); the crate's
    /// complex kernels order the sums of a block differently.
    const BLOCKS_SUM_IN_ORDER: bool = false;

    /// Runs a product with an optimised library if this type has one;
    /// returns false (doing nothing) otherwise.
    ///
    /// # Safety
    /// As [`GemmArgs::naive_rows`] for all rows.
    unsafe fn fast_gemm(g: &GemmArgs<Self>, backend: GemmBackend, threads: usize) -> bool;

    /// `sum(a[i] * b[i])` over `n` strided elements (floats accumulate in
    /// f64).
    ///
    /// # Safety
    /// Every index `< n` of both strided vectors is readable.
    unsafe fn dot_strided(a: *const Self, sa: isize, b: *const Self, sb: isize, n: usize) -> Self;

    /// An outer product (`k == 1`, no `beta`) written to memory with
    /// non-temporal stores, for outputs too large for the caches; returns
    /// false (doing nothing) when this type or CPU has none.
    ///
    /// # Safety
    /// As [`GemmArgs::naive_rows`] for all rows.
    unsafe fn outer_streaming(_g: &GemmArgs<Self>) -> bool {
        false
    }
}

macro_rules! mat_int {
    ($t:ty) => {
        impl MatElem for $t {
            unsafe fn fast_gemm(_: &GemmArgs<Self>, _: GemmBackend, _: usize) -> bool {
                false
            }
            unsafe fn dot_strided(
                a: *const Self,
                sa: isize,
                b: *const Self,
                sb: isize,
                n: usize,
            ) -> Self {
                let mut acc: $t = 0;
                for i in 0..n as isize {
                    acc = Self::add(acc, Self::mul(*a.offset(i * sa), *b.offset(i * sb)));
                }
                acc
            }
        }
    };
}
mat_int!(u8);
mat_int!(i8);
mat_int!(i16);
mat_int!(i32);
mat_int!(i64);

/// Runs a float32 product on ferrograd's own AVX-512 tiles when they
/// apply (see Note [Float32 products on AVX-512]); false otherwise.
///
/// # Safety
/// As [`GemmArgs::naive_rows`] for all rows.
unsafe fn own_tiles_f32(g: &GemmArgs<f32>, threads: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx512::usable(g) {
        avx512::gemm(g, threads);
        return true;
    }
    let _ = (g, threads);
    false
}

/// Float64 products always go to the `gemm` crate.
unsafe fn own_tiles_f64(_: &GemmArgs<f64>, _: usize) -> bool {
    false
}

macro_rules! mat_float {
    ($t:ty, $mm:path, $stream:ident, $vec:ident, $own:ident) => {
        impl MatElem for $t {
            const BLOCKS_SUM_IN_ORDER: bool = true;

            unsafe fn fast_gemm(g: &GemmArgs<Self>, backend: GemmBackend, threads: usize) -> bool {
                match backend {
                    GemmBackend::Gemm => {
                        if !$own(g, threads) {
                            g.gemm_on_pool(threads)
                        }
                    }
                    GemmBackend::MatrixMultiply => $mm(
                        g.m,
                        g.k,
                        g.n,
                        g.alpha,
                        g.a,
                        g.ars,
                        g.acs,
                        g.b,
                        g.brs,
                        g.bcs,
                        g.beta.unwrap_or(0.0),
                        g.c,
                        g.crs,
                        g.ccs,
                    ),
                }
                true
            }
            unsafe fn dot_strided(
                a: *const Self,
                sa: isize,
                b: *const Self,
                sb: isize,
                n: usize,
            ) -> Self {
                let mut acc = 0f64;
                for i in 0..n as isize {
                    acc += *a.offset(i * sa) as f64 * *b.offset(i * sb) as f64;
                }
                acc as $t
            }
            #[cfg(target_arch = "x86_64")]
            unsafe fn outer_streaming(g: &GemmArgs<Self>) -> bool {
                use std::arch::x86_64::*;
                if g.k != 1 || g.beta.is_some() || g.ccs != 1 {
                    return false;
                }
                // The one row of `b`, gathered when it is strided.
                let gathered: Vec<$t>;
                let b = if g.bcs == 1 {
                    g.b
                } else {
                    gathered = (0..g.n).map(|j| *g.b.offset(j as isize * g.bcs)).collect();
                    gathered.as_ptr()
                };
                // Elements per 16-byte store, and how to make and store one.
                const LANES: usize = 16 / std::mem::size_of::<$t>();
                for r in 0..g.m {
                    let x = *g.a.offset(r as isize * g.ars);
                    let row = g.c.offset(r as isize * g.crs);
                    // Each element is `alpha * (0 + x * y)`, the naive loop's
                    // operations in its order.
                    let at = |j: usize| g.alpha * (0.0 + x * *b.add(j));
                    let head = (row.align_offset(16)).min(g.n);
                    for j in 0..head {
                        *row.add(j) = at(j);
                    }
                    let mut j = head;
                    while j + LANES <= g.n {
                        let mut v = [0 as $t; LANES];
                        for (l, e) in v.iter_mut().enumerate() {
                            *e = at(j + l);
                        }
                        $stream(row.add(j), std::mem::transmute::<[$t; LANES], $vec>(v));
                        j += LANES;
                    }
                    for jj in j..g.n {
                        *row.add(jj) = at(jj);
                    }
                }
                _mm_sfence();
                true
            }
        }
    };
}
mat_float!(
    f32,
    matrixmultiply::sgemm,
    _mm_stream_ps,
    __m128,
    own_tiles_f32
);
mat_float!(
    f64,
    matrixmultiply::dgemm,
    _mm_stream_pd,
    __m128d,
    own_tiles_f64
);

/// Complex products always run on the `gemm` crate's complex kernels (the
/// other backend has none); dots accumulate in `Complex<f64>`.
macro_rules! mat_complex {
    ($t:ty) => {
        impl MatElem for $t {
            unsafe fn fast_gemm(g: &GemmArgs<Self>, _: GemmBackend, threads: usize) -> bool {
                g.gemm_on_pool(threads);
                true
            }
            unsafe fn dot_strided(
                a: *const Self,
                sa: isize,
                b: *const Self,
                sb: isize,
                n: usize,
            ) -> Self {
                let mut acc = crate::Complex::<f64>::new(0.0, 0.0);
                for i in 0..n as isize {
                    acc += Element::to_complex(*a.offset(i * sa))
                        * Element::to_complex(*b.offset(i * sb));
                }
                <Self as Element>::from_complex(acc)
            }
        }
    };
}
mat_complex!(crate::ComplexFloat);
mat_complex!(crate::ComplexDouble);

/// `out = alpha * a @ b (+ beta * out)` for `a: batch+[m,k]`, `b:
/// batch+[k,n]` (any strides, batch dims already broadcast to the same
/// shape) into the fresh contiguous `out: batch+[m,n]`.
///
/// # Safety
/// `out` is a fresh contiguous tensor that nobody else can reach, of the
/// same dtype `T` as `a` and `b`.
pub(crate) unsafe fn gemm_batched<T: MatElem>(
    a: &Tensor,
    b: &Tensor,
    out: &Tensor,
    alpha: T,
    beta: Option<T>,
    backend: GemmBackend,
) {
    let nd = a.ndim();
    let batch = &a.shape()[..nd - 2];
    let (m, k, n) = (a.shape()[nd - 2], a.shape()[nd - 1], b.shape()[nd - 1]);
    let nb: usize = batch.iter().product();
    if nb == 0 || m == 0 || n == 0 {
        return;
    }
    let _g = lock(&[a, b], None);
    let (ap, bp, cp) = (elem_ptr::<T>(a), elem_ptr::<T>(b), elem_ptr::<T>(out));
    let st = |t: &Tensor, d: usize| t.strides()[d] as isize;
    let base = GemmArgs {
        m,
        n,
        k,
        a: ap,
        ars: st(a, nd - 2),
        acs: st(a, nd - 1),
        b: bp,
        brs: st(b, nd - 2),
        bcs: st(b, nd - 1),
        c: cp,
        crs: n as isize,
        ccs: 1,
        alpha,
        beta,
    };
    let offs: Vec<(usize, usize)> = batch_offsets(batch, a.strides())
        .into_iter()
        .zip(batch_offsets(batch, b.strides()))
        .collect();
    if let Some(rows) = stacked_rows(&offs, m, base.ars) {
        // One right operand for the whole batch (an expanded matrix, as
        // vmap makes of an unbatched weight) and left operands that are
        // consecutive row blocks: a single product with nb*m rows, so the
        // right operand is packed once instead of once per batch entry.
        let g = GemmArgs {
            m: nb * m,
            ars: rows,
            ..base
        };
        let threads = crate::pool::kernel_threads();
        let t = if threads > 1 && nb * m * n * k >= PARALLEL_FLOPS {
            threads
        } else {
            1
        };
        // SAFETY: the folded matrix covers exactly the batch's rows of `a`
        // (read-locked above) and all of the contiguous `out`.
        unsafe {
            if k == 0 || nb * m * n * k < SMALL_FLOPS || !T::fast_gemm(&g, backend, t) {
                if k == 0 {
                    for i in 0..nb * m * n {
                        let dst = g.c.add(i);
                        *dst = match beta {
                            Some(bt) => T::mul(bt, *dst),
                            None => T::zero(),
                        };
                    }
                } else {
                    g.naive(t);
                }
            }
        }
        return;
    }
    // Outer products whose output is far larger than the caches are written
    // with non-temporal stores: no read of the lines being overwritten.
    let streaming = k == 1 && nb * m * n * std::mem::size_of::<T>() >= STREAMING_BYTES;
    let one = |i: usize, threads: usize| {
        let (oa, ob) = offs[i];
        let g = base.shifted(oa, ob, i * m * n);
        // SAFETY: the offsets come from the operands' layouts, so every
        // index stays inside their storages (read-locked above); `out`'s
        // batch entry `i` is written by this call only.
        unsafe {
            if k == 0 {
                for r in 0..m {
                    for c in 0..n {
                        let dst = g.c.add(r * n + c);
                        *dst = match beta {
                            Some(bt) => T::mul(bt, *dst),
                            None => T::zero(),
                        };
                    }
                }
            } else if streaming && T::outer_streaming(&g) {
                // Written around the caches.
            } else if k == 1 && g.ccs == 1 {
                // An outer product is a store per element; the plain loop
                // does it at memory speed for any stride of `b`.
                g.naive(threads);
            } else if k >= SPLIT_K_MIN && m * n <= SPLIT_K_MAX_OUT && m * n * k >= PARALLEL_FLOPS {
                g.split_k(backend);
            } else if m * n * k < SMALL_FLOPS || !T::fast_gemm(&g, backend, threads) {
                g.naive(threads);
            }
        }
    };
    // Note [Products on the pool]: a large product splits over the pool
    // even when it runs on one of its workers (a backward node). Rayon hands
    // its parts to idle workers and runs them on this thread when the others
    // are busy, so the product of a lone chain gets every thread and the
    // products of independent branches get one each, without the engine
    // counting. Each output element sums its k products in the same order
    // however the rows and columns are split, so the bits do not depend on
    // the thread count.
    let per = m * n * k;
    let threads = crate::pool::kernel_threads();
    let split = threads > 1;
    if split && nb > 1 && per < PARALLEL_FLOPS && nb * per >= PARALLEL_FLOPS {
        crate::pool::install(|| (0..nb).into_par_iter().for_each(|i| one(i, 1)));
    } else {
        let t = if split && per >= PARALLEL_FLOPS {
            threads
        } else {
            1
        };
        for i in 0..nb {
            one(i, t);
        }
    }
}

/// Row blocks and column blocks of [`GemmArgs::gemm_chunked`]: about
/// four blocks per thread, the longer side (in elements) halved first,
/// blocks of at least [`BLOCK_ROWS`] rows or the whole height and at
/// least [`BLOCK_COLS`] columns or the whole width.
fn chunk_grid(m: usize, n: usize, threads: usize) -> (usize, usize) {
    let want = BLOCKS_PER_THREAD * threads;
    let (max_r, max_c) = ((m / BLOCK_ROWS).max(1), (n / BLOCK_COLS).max(1));
    let (mut rc, mut cc) = (1, 1);
    while rc * cc < want {
        let (r, c) = (m / rc, n / cc);
        if c >= r && cc * 2 <= max_c {
            cc *= 2;
        } else if rc * 2 <= max_r {
            rc *= 2;
        } else if cc * 2 <= max_c {
            cc *= 2;
        } else {
            break;
        }
    }
    (rc, cc)
}

/// The row stride of the single matrix that batch entries form when every
/// right operand is the same matrix (offset 0) and the left operands'
/// `m` rows follow each other at one stride (`ars` within an entry): the
/// batch is then one product with all their rows. `None` otherwise.
fn stacked_rows(offs: &[(usize, usize)], m: usize, ars: isize) -> Option<isize> {
    if offs.len() < 2 || offs.iter().any(|&(_, ob)| ob != 0) {
        return None;
    }
    let step = offs[1].0 as isize - offs[0].0 as isize;
    let rows = if m == 1 { step } else { ars };
    if m > 1 && step != m as isize * ars {
        return None;
    }
    let start = offs[0].0 as isize;
    if offs
        .iter()
        .enumerate()
        .any(|(i, &(oa, _))| oa as isize != start + i as isize * step)
    {
        return None;
    }
    Some(rows)
}

/// The element offset (relative to the tensor's own offset) of each entry
/// of the leading `batch` dims, in row-major order of the batch index.
pub(crate) fn batch_offsets(batch: &[usize], strides: &[usize]) -> Vec<usize> {
    let nb: usize = batch.iter().product();
    let mut offs = Vec::with_capacity(nb);
    let mut idx = vec![0usize; batch.len()];
    for _ in 0..nb {
        offs.push(idx.iter().zip(strides).map(|(&i, &s)| i * s).sum());
        for d in (0..batch.len()).rev() {
            idx[d] += 1;
            if idx[d] < batch[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    offs
}

/// The inner product of two 1-D tensors of `n` elements and dtype `T`, as a
/// 0-dim tensor (floats accumulate in f64, integers wrap).
pub(crate) fn dot<T: MatElem>(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let n = a.shape()[0];
    let _g = lock(&[a, b], None);
    // SAFETY: both vectors are read-locked and have `n` elements at their
    // strides.
    let v = unsafe {
        T::dot_strided(
            elem_ptr::<T>(a),
            a.strides()[0] as isize,
            elem_ptr::<T>(b),
            b.strides()[0] as isize,
            n,
        )
    };
    Tensor::from_slice(&[v], &[])
}

#[cfg(test)]
mod tests;
