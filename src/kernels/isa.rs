//! Instruction-set dispatch: one loop compiled for several x86-64 levels
//! and chosen at run time, so a single build runs on any CPU of its
//! platform and still uses the widest vectors the CPU has.
//!
//! [`dispatch`] runs a closure inside a function compiled with AVX-512
//! (F, BW, DQ, VL), with AVX2 + FMA, or with the platform baseline (SSE2
//! on x86-64; NEON is part of the aarch64 baseline, so aarch64 needs no
//! dispatch). The closure and the `#[inline(always)]` functions it calls
//! are inlined into the chosen function and vectorised for its vectors.
//!
//! Rust never contracts `a * b + c` into a fused multiply-add, so a loop
//! gives the same bits on every level: only the vector width changes.
//! Kernels that want that property (the reductions' summation order, the
//! math functions) write plain multiplies and adds, or `mul_add` for every
//! step they mean to fuse (exact, so also the same bits on every level:
//! hardware FMA where the level has it, libm's `fmaf`/`fma` elsewhere).

/// Runs `body` compiled for the best instruction set this CPU supports.
#[inline(always)]
pub(crate) fn dispatch<R>(body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512() {
            // SAFETY: the CPU supports every feature `on_avx512` enables
            // (checked by `has_avx512`).
            return unsafe { on_avx512(body) };
        }
        if has_avx2() {
            // SAFETY: the CPU supports AVX2 and FMA (checked by `has_avx2`).
            return unsafe { on_avx2(body) };
        }
    }
    body()
}

/// Whether the CPU has the AVX-512 subsets [`on_avx512`] enables.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

/// Whether the CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// `body` compiled with AVX-512.
///
/// # Safety
/// The CPU must support AVX-512 F, BW, DQ and VL ([`has_avx512`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
pub(crate) unsafe fn on_avx512<R>(body: impl FnOnce() -> R) -> R {
    body()
}

/// `body` compiled with AVX2 and FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA ([`has_avx2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn on_avx2<R>(body: impl FnOnce() -> R) -> R {
    body()
}
