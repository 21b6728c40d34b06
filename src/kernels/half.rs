//! The 16-bit floats (`float16`, `bfloat16`) in kernels written for
//! float32.
//!
//! Each op on a 16-bit tensor widens its inputs to float32, computes there
//! and rounds its result once, as torch computes them. [`Half`] gives the
//! element conversions; [`via_f32`] runs a float32 block kernel over a
//! 16-bit run through a stack buffer, so the vectorised float32 bodies
//! serve both formats without a second copy of any function.

use super::iter::{map2_blocks, Run};
use crate::{bf16, f16, DType, Element, Result, Tensor};
use half::slice::HalfFloatSliceExt;

/// A 16-bit float format: conversions to and from float32.
pub(crate) trait Half: Element {
    fn widen(self) -> f32;
    /// Rounds to nearest, ties to even.
    fn narrow(v: f32) -> Self;
    /// `dst[i] = widen(src[i])`.
    fn widen_slice(src: &[Self], dst: &mut [f32]);
    /// `dst[i] = narrow(src[i])`.
    fn narrow_slice(src: &[f32], dst: &mut [Self]);
}

macro_rules! impl_half {
    ($t:ty, $widen:expr, $narrow:expr) => {
        impl Half for $t {
            #[inline(always)]
            fn widen(self) -> f32 {
                self.to_f32_const()
            }
            #[inline(always)]
            fn narrow(v: f32) -> Self {
                <$t>::from_f32_const(v)
            }
            #[inline(always)]
            fn widen_slice(src: &[Self], dst: &mut [f32]) {
                $widen(src, dst)
            }
            #[inline(always)]
            fn narrow_slice(src: &[f32], dst: &mut [Self]) {
                $narrow(src, dst)
            }
        }
    };
}
impl_half!(f16, f16_widen, f16_narrow);
impl_half!(bf16, bf16_widen, bf16_narrow);

/// `dst[i] = f(src[i])`, compiled for the widest vector instructions the
/// CPU has.
#[inline(always)]
fn map_slice<A: Copy, B>(src: &[A], dst: &mut [B], f: impl Fn(A) -> B) {
    super::isa::dispatch(
        #[inline(always)]
        || {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = f(s);
            }
        },
    )
}

/// bfloat16 to float32 over a slice: the bits shifted up (a NaN keeps its
/// payload and becomes quiet, as the `half` crate's conversion), written
/// without branches so the loop vectorises.
fn bf16_widen(src: &[bf16], dst: &mut [f32]) {
    map_slice(src, dst, |s| {
        let b = s.to_bits();
        let b = if b & 0x7fff > 0x7f80 { b | 0x40 } else { b };
        f32::from_bits(u32::from(b) << 16)
    })
}

/// float32 to bfloat16 (to nearest, ties to even; a NaN stays a quiet NaN
/// with the top of its payload) over a slice, as [`bf16_widen`].
fn bf16_narrow(src: &[f32], dst: &mut [bf16]) {
    map_slice(src, dst, |s| {
        let x = s.to_bits();
        let up = (x & 0x8000 != 0) & (x & 0x1_7fff != 0);
        let r = (x >> 16) + u32::from(up);
        let r = if x & 0x7fff_ffff > 0x7f80_0000 {
            (x >> 16) | 0x40
        } else {
            r
        };
        bf16::from_bits(r as u16)
    })
}

/// float16 to float32 over a slice: sixteen at a time with AVX-512's
/// conversion instruction where the CPU has it (the `half` crate converts
/// eight per call otherwise).
fn f16_widen(src: &[f16], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if super::isa::has_avx512() {
        // SAFETY: the CPU has AVX-512 F.
        return unsafe { f16_avx512::widen(src, dst) };
    }
    src.convert_to_f32_slice(dst);
}

/// float32 to float16 (to nearest, ties to even) over a slice, as
/// [`f16_widen`].
fn f16_narrow(src: &[f32], dst: &mut [f16]) {
    #[cfg(target_arch = "x86_64")]
    if super::isa::has_avx512() {
        // SAFETY: the CPU has AVX-512 F.
        return unsafe { f16_avx512::narrow(src, dst) };
    }
    dst.convert_from_f32_slice(src);
}

#[cfg(target_arch = "x86_64")]
mod f16_avx512 {
    use super::f16;
    use half::slice::HalfFloatSliceExt;
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn widen(src: &[f16], dst: &mut [f32]) {
        assert_eq!(src.len(), dst.len(), "float16 widening needs equal lengths");
        let n = src.len() / 16 * 16;
        for i in (0..n).step_by(16) {
            // SAFETY: elements i..i + 16 are in both slices.
            unsafe {
                let h = _mm256_loadu_si256(src.as_ptr().add(i) as *const __m256i);
                _mm512_storeu_ps(dst.as_mut_ptr().add(i), _mm512_cvtph_ps(h));
            }
        }
        src[n..].convert_to_f32_slice(&mut dst[n..]);
    }

    /// # Safety
    /// The CPU has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn narrow(src: &[f32], dst: &mut [f16]) {
        assert_eq!(
            src.len(),
            dst.len(),
            "float16 narrowing needs equal lengths"
        );
        let n = src.len() / 16 * 16;
        for i in (0..n).step_by(16) {
            // SAFETY: elements i..i + 16 are in both slices.
            unsafe {
                let v = _mm512_loadu_ps(src.as_ptr().add(i));
                let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(v);
                _mm256_storeu_si256(dst.as_mut_ptr().add(i) as *mut __m256i, h);
            }
        }
        dst[n..].convert_from_f32_slice(&src[n..]);
    }
}

/// Elements per stack buffer: small enough to stay in L1 with its output.
pub(crate) const BLOCK: usize = 512;

/// `dst[i] = narrow(k(widen(src[i])))` for a float32 block kernel `k`.
pub(crate) fn via_f32<H: Half>(src: &[H], dst: &mut [H], k: impl Fn(&[f32], &mut [f32])) {
    let mut a = [0f32; BLOCK];
    let mut b = [0f32; BLOCK];
    for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        let n = s.len();
        H::widen_slice(s, &mut a[..n]);
        k(&a[..n], &mut b[..n]);
        H::narrow_slice(&b[..n], d);
    }
}

/// `buf[i] = narrow(k(widen(buf[i])))` in place.
pub(crate) fn via_f32_in_place<H: Half>(buf: &mut [H], k: impl Fn(&[f32], &mut [f32])) {
    let mut a = [0f32; BLOCK];
    let mut b = [0f32; BLOCK];
    for d in buf.chunks_mut(BLOCK) {
        let n = d.len();
        H::widen_slice(d, &mut a[..n]);
        k(&a[..n], &mut b[..n]);
        H::narrow_slice(&b[..n], d);
    }
}

/// `f(a, b)` for two float16 or bfloat16 operands (broadcast together), computed in
/// float32 and rounded once per element: contiguous runs are widened a
/// block at a time, so `f` vectorises; `None` for other dtypes.
pub(crate) fn half_map2<F>(a: &Tensor, b: &Tensor, f: F) -> Option<Result<Tensor>>
where
    F: Fn(f32, f32) -> f32 + Copy + Sync + Send,
{
    match a.dtype() {
        DType::Float16 => Some(map2_via_f32::<f16, _>(a, b, f)),
        DType::BFloat16 => Some(map2_via_f32::<bf16, _>(a, b, f)),
        _ => None,
    }
}

fn map2_via_f32<H: Half, F>(a: &Tensor, b: &Tensor, f: F) -> Result<Tensor>
where
    F: Fn(f32, f32) -> f32 + Copy + Sync + Send,
{
    map2_blocks::<H>(
        a,
        b,
        move |x, y| H::narrow(f(x.widen(), y.widen())),
        move |x, y, dst| {
            let mut wa = [0f32; BLOCK];
            let mut wb = [0f32; BLOCK];
            for (i, d) in dst.chunks_mut(BLOCK).enumerate() {
                let (s, n) = (i * BLOCK, d.len());
                let wide = |r: Run<'_, H>, buf: &mut [f32; BLOCK]| match r {
                    Run::Slice(v) => H::widen_slice(&v[s..s + n], &mut buf[..n]),
                    Run::Splat(v) => buf[..n].fill(v.widen()),
                };
                wide(x, &mut wa);
                wide(y, &mut wb);
                for (p, &q) in wa[..n].iter_mut().zip(&wb[..n]) {
                    *p = f(*p, q);
                }
                H::narrow_slice(&wa[..n], d);
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round-to-nearest-even from float32 to bfloat16, on the bits.
    fn bf16_oracle(v: f32) -> u16 {
        let b = v.to_bits();
        if v.is_nan() {
            return ((b >> 16) | 0x40) as u16;
        }
        let lsb = (b >> 16) & 1;
        ((b + 0x7fff + lsb) >> 16) as u16
    }

    #[test]
    fn bfloat16_rounds_to_nearest_even() {
        let step = 1.0 / 256.0;
        for v in [
            1.0f32,
            1.0 + step,
            1.0 + step + f32::EPSILON,
            1.0 + 3.0 * step,
            -3.3e38,
            1e-40,
            65504.0,
        ] {
            assert_eq!(bf16::narrow(v).to_bits(), bf16_oracle(v), "{v}");
        }
    }

    /// Every 16-bit value widens as the element conversion does; float32
    /// values around every one of them (ties, subnormals, overflow,
    /// infinities, NaN) narrow as it does.
    macro_rules! check_slice_conversions {
        ($t:ty) => {{
            let all: Vec<$t> = (0..=u16::MAX).map(<$t>::from_bits).collect();
            let mut wide = vec![0f32; all.len()];
            <$t>::widen_slice(&all, &mut wide);
            for (h, w) in all.iter().zip(&wide) {
                let want = h.to_f32_const();
                assert!(
                    w.to_bits() == want.to_bits() || (w.is_nan() && want.is_nan()),
                    "{h:?}"
                );
            }
            let mut xs: Vec<f32> = wide
                .iter()
                .flat_map(|&w| {
                    let b = w.to_bits();
                    [
                        0,
                        1 << 12,
                        1 << 13,
                        3 << 12,
                        1 << 15,
                        3 << 15,
                        u32::MAX,
                        0xffff_8000,
                    ]
                    .map(|d| f32::from_bits(b.wrapping_add(d)))
                })
                .collect();
            xs.extend([
                1e-10f32,
                7e4,
                6.5504e4,
                65520.0,
                f32::MAX,
                f32::MIN_POSITIVE,
            ]);
            let mut narrow = vec![<$t>::ZERO; xs.len()];
            <$t>::narrow_slice(&xs, &mut narrow);
            for (x, h) in xs.iter().zip(&narrow) {
                let want = <$t>::from_f32_const(*x);
                assert!(
                    h.to_bits() == want.to_bits(),
                    "{x:e}: {h:?} against {want:?}"
                );
            }
        }};
    }

    #[test]
    fn slice_conversions_match_the_element_conversions() {
        check_slice_conversions!(f16);
        check_slice_conversions!(bf16);
    }

    #[test]
    fn blocks_round_each_result_once() {
        let src: Vec<f16> = (0..1300).map(|i| f16::from_f32(i as f32 * 0.01)).collect();
        let mut dst = vec![f16::ZERO; src.len()];
        via_f32(&src, &mut dst, |a, b| {
            for (o, &x) in b.iter_mut().zip(a) {
                *o = x.exp();
            }
        });
        for (s, d) in src.iter().zip(&dst) {
            assert_eq!(*d, f16::from_f32(s.to_f32_const().exp()));
        }
        let mut buf = src.clone();
        via_f32_in_place(&mut buf, |a, b| b.copy_from_slice(a));
        assert_eq!(buf, src);
    }
}
