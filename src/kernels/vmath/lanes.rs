//! float32 bodies written once over lanes.
//!
//! A [`Lanes`] value is one float32 (`f32`) or sixteen of them in an
//! AVX-512 register (`V16`), with just the operations the float32 bodies
//! need. Each operation rounds exactly once and the same way in both forms
//! (fused multiply-adds included: hardware FMA on the AVX2 and AVX-512
//! paths, libm's `fmaf` where the CPU has none), so a body gives the same
//! bits whether it runs element by element, auto-vectorised by
//! [`isa::dispatch`](super::super::isa::dispatch), or sixteen lanes at a
//! time in [`run`]. On AVX-512 some operations are one instruction where
//! the element form takes several: scaling by a power of two (`vscalefps`,
//! rounding once into the subnormals), splitting off the exponent
//! (`vgetexpps`, `vgetmantps`), replacing the results of special inputs
//! (`vfixupimmps`).
//!
//! A kernel implements [`Body`] with its generic body and gets its
//! [`Unary<f32>`] from [`lanes_f32`], whose `simd` form runs the body on
//! sixteen lanes and patches the lanes the body does not cover
//! ([`Body::far`]) with the kernel's scalar `slow` path.

use super::{ldexp, split_exponent, Real, Unary};

/// One or sixteen float32 lanes; see the module documentation.
pub(crate) trait Lanes: crate::kernels::FieldOps {
    /// A per-lane condition (a `bool`, or a mask with a bit per lane).
    type M: Copy + std::ops::BitOr<Output = Self::M> + std::ops::BitAnd<Output = Self::M>;
    /// `v` in every lane.
    fn s(v: f32) -> Self;
    /// `self * b + c`, rounded once.
    fn fma(self, b: Self, c: Self) -> Self;
    /// `self * 2^n` rounded once, for an integer-valued `n` in
    /// `[-252, 254]` and a normal `self`.
    fn scale(self, n: Self) -> Self;
    /// `|self|`.
    fn mag(self) -> Self;
    /// `o` if `self < o`, else `self` (so a NaN `self` stays NaN).
    fn at_least(self, o: Self) -> Self;
    /// `o` if `self > o`, else `self` (so a NaN `self` stays NaN).
    fn at_most(self, o: Self) -> Self;
    /// `self < o`.
    fn below(self, o: Self) -> Self::M;
    /// Either condition.
    #[inline(always)]
    fn or(a: Self::M, b: Self::M) -> Self::M {
        a | b
    }
    /// Both conditions.
    #[inline(always)]
    fn and(a: Self::M, b: Self::M) -> Self::M {
        a & b
    }
    /// `a` where `m` holds, else `b`.
    fn sel(m: Self::M, a: Self, b: Self) -> Self;
    /// The largest integer not above `self` (`vrndscaleps`).
    fn floor(self) -> Self;
    /// `self` with its sign flipped where the integer-valued `n`
    /// (`|n| < 2^22`) is odd.
    fn flip_odd(self, n: Self) -> Self;
    /// `|self|` with the sign of `s`.
    fn sign_of(self, s: Self) -> Self;
    /// `self` with the lanes where `x` is a special value replaced as
    /// `table` says: a 4-bit response per class of `x` (bits `4j..4j+4`
    /// for class `j`: 0 quiet NaN, 1 signalling NaN, 2 zero of either
    /// sign, 3 `+1`, 4 `-inf`, 5 `+inf`, 6 other negatives, 7 other
    /// positives), meaning 0 `self`, 1 `x`, 2 `x` quieted, 3 the default
    /// NaN (sign set), 4 `-inf`, 5 `+inf` (AVX-512's `vfixupimmps`, whose
    /// other responses are not used).
    fn fixup(self, x: Self, table: u32) -> Self;
    /// For a positive finite `self`: `(e, m)` with `self = 2^e m` and `m`
    /// in `[sqrt(1/2), sqrt(2))`, exactly (subnormals included); anything
    /// for other inputs.
    fn split(self) -> (Self, Self);
}

impl Lanes for f32 {
    type M = bool;
    #[inline(always)]
    fn s(v: f32) -> f32 {
        v
    }
    #[inline(always)]
    fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
    #[inline(always)]
    fn scale(self, n: f32) -> f32 {
        ldexp(self, n)
    }
    #[inline(always)]
    fn mag(self) -> f32 {
        self.abs()
    }
    #[inline(always)]
    fn at_least(self, o: f32) -> f32 {
        Real::pick(self < o, o, self)
    }
    #[inline(always)]
    fn at_most(self, o: f32) -> f32 {
        Real::pick(self > o, o, self)
    }
    #[inline(always)]
    fn below(self, o: f32) -> bool {
        self < o
    }
    #[inline(always)]
    fn sel(m: bool, a: f32, b: f32) -> f32 {
        Real::pick(m, a, b)
    }
    #[inline(always)]
    fn floor(self) -> f32 {
        f32::floor(self)
    }
    #[inline(always)]
    fn flip_odd(self, n: f32) -> f32 {
        f32::from_bits(self.to_bits() ^ ((n as i32 as u32) << 31))
    }
    #[inline(always)]
    fn sign_of(self, s: f32) -> f32 {
        self.with_sign_of(s)
    }
    #[inline(always)]
    fn split(self) -> (f32, f32) {
        split_exponent(self)
    }
    #[inline(always)]
    fn fixup(self, x: f32, table: u32) -> f32 {
        // Written as selects, so that the element form vectorises.
        let bits = x.to_bits();
        let quiet = bits & 0x0040_0000 != 0;
        let class = Real::pick(x.is_nan(), Real::pick(quiet, 0.0, 1.0), 7.0f32);
        let class = Real::pick(x == 0.0, 2.0, class);
        let class = Real::pick(x == 1.0, 3.0, class);
        let class = Real::pick(x == f32::NEG_INFINITY, 4.0, class);
        let class = Real::pick(x == f32::INFINITY, 5.0, class);
        let class = Real::pick(x < 0.0 && x != f32::NEG_INFINITY, 6.0, class);
        let response = (table >> (4 * class as u32)) & 15;
        debug_assert!(response <= 5, "fixup response {response} is not supported");
        let r = Real::pick(response == 1, x, self);
        let r = Real::pick(response == 2, f32::from_bits(bits | 0x0040_0000), r);
        let r = Real::pick(response == 3, f32::from_bits(0xFFC0_0000), r);
        let r = Real::pick(response == 4, f32::NEG_INFINITY, r);
        Real::pick(response == 5, f32::INFINITY, r)
    }
}

/// [`Lanes::fixup`]'s table that makes a NaN input the result (quieted),
/// the same bits in both forms whatever NaN the body's steps carried.
pub(crate) const NAN_STAYS: u32 = 1 | 2 << 4;

/// Horner's rule with fused multiply-adds over `cs` (highest degree first).
#[inline(always)]
pub(crate) fn poly<V: Lanes>(x: V, cs: &[f32]) -> V {
    let mut acc = V::s(cs[0]);
    for &c in &cs[1..] {
        acc = acc.fma(x, V::s(c));
    }
    acc
}

/// A float32 function written over [`Lanes`].
pub(crate) trait Body {
    /// The function on every lane; lanes where [`Body::far`] holds may come
    /// out wrong (they are patched by the kernel's `slow`).
    fn f<V: Lanes>(x: V) -> V;
    /// The lanes the body does not cover (none unless the kernel says so).
    #[inline(always)]
    fn far<V: Lanes>(_x: V) -> V::M {
        V::s(0.0).below(V::s(0.0))
    }
}

/// Implements [`Body`] and [`Unary<f32>`] for a kernel from a generic
/// body: `fast` is the body on one lane, `simd` the body on sixteen; with
/// `far F => slow`, the inputs where the generic `F` holds take the scalar
/// `slow` (the same inputs in both forms: `F` is written over lanes too).
macro_rules! lanes_f32 {
    ($k:ident => $f:ident $(, far $far:ident => $slow:expr)?) => {
        impl $crate::kernels::vmath::lanes::Body for $k {
            #[inline(always)]
            fn f<V: $crate::kernels::vmath::lanes::Lanes>(x: V) -> V {
                $f(x)
            }
            $(
                #[inline(always)]
                fn far<V: $crate::kernels::vmath::lanes::Lanes>(x: V) -> V::M {
                    $far(x)
                }
            )?
        }
        impl $crate::kernels::vmath::Unary<f32> for $k {
            #[inline(always)]
            fn fast(x: f32) -> f32 {
                $f(x)
            }
            $(
                const HAS_SLOW: bool = true;
                #[inline(always)]
                fn needs_slow(x: f32) -> bool {
                    $far(x)
                }
                fn slow(x: f32) -> f32 {
                    $slow(x)
                }
            )?
            #[inline(always)]
            unsafe fn simd(src: *const f32, dst: *mut f32, n: usize) -> bool {
                // SAFETY: forwarded from the caller.
                unsafe { $crate::kernels::vmath::lanes::run::<$k>(src, dst, n) }
            }
        }
    };
}
pub(crate) use lanes_f32;

/// `dst[i] = K(src[i])` for `i < n` sixteen lanes at a time when the CPU
/// has AVX-512; false (nothing written) otherwise.
///
/// # Safety
/// `src` is readable and `dst` writable for `n` elements (they may be the
/// same).
#[inline(always)]
pub(crate) unsafe fn run<K: Body + Unary<f32>>(src: *const f32, dst: *mut f32, n: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    if super::super::isa::has_avx512() {
        // SAFETY: the CPU has AVX-512; the caller vouches for the pointers.
        unsafe { x86::run::<K>(src, dst, n) };
        return true;
    }
    let _ = (src, dst, n);
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Body, Lanes, Unary};
    use std::arch::x86_64::*;
    use std::ops::{Add, Div, Mul, Neg, Sub};

    /// Sixteen float32 lanes. Values exist only inside [`run`], which the
    /// caller enters after checking that the CPU has AVX-512, so every
    /// intrinsic below runs on a CPU that has it.
    #[derive(Clone, Copy)]
    pub(super) struct V16(__m512);

    macro_rules! binary {
        ($($tr:ident $m:ident $f:ident),*) => {$(
            impl $tr for V16 {
                type Output = V16;
                #[inline(always)]
                fn $m(self, o: V16) -> V16 {
                    // SAFETY: see `V16`.
                    V16(unsafe { $f(self.0, o.0) })
                }
            }
        )*};
    }
    binary!(Add add _mm512_add_ps, Sub sub _mm512_sub_ps, Mul mul _mm512_mul_ps, Div div _mm512_div_ps);

    impl Neg for V16 {
        type Output = V16;
        #[inline(always)]
        fn neg(self) -> V16 {
            // SAFETY: see `V16`.
            V16(unsafe { _mm512_xor_ps(self.0, _mm512_set1_ps(-0.0)) })
        }
    }

    /// The comparison `$p` as a lane mask.
    macro_rules! cmp {
        ($a:expr, $b:expr, $p:ident) => {
            // SAFETY: see `V16`.
            unsafe { _mm512_cmp_ps_mask::<$p>($a, $b) }
        };
    }

    // SAFETY (every `unsafe` block of this impl): see `V16`.
    impl Lanes for V16 {
        type M = __mmask16;
        #[inline(always)]
        fn s(v: f32) -> V16 {
            V16(unsafe { _mm512_set1_ps(v) })
        }
        #[inline(always)]
        fn fma(self, b: V16, c: V16) -> V16 {
            V16(unsafe { _mm512_fmadd_ps(self.0, b.0, c.0) })
        }
        #[inline(always)]
        fn scale(self, n: V16) -> V16 {
            V16(unsafe { _mm512_scalef_ps(self.0, n.0) })
        }
        #[inline(always)]
        fn mag(self) -> V16 {
            V16(unsafe { _mm512_abs_ps(self.0) })
        }
        #[inline(always)]
        fn at_least(self, o: V16) -> V16 {
            // `vmaxps` returns its second operand unless the first is
            // greater (a NaN in either: the second), as the scalar form.
            V16(unsafe { _mm512_max_ps(o.0, self.0) })
        }
        #[inline(always)]
        fn at_most(self, o: V16) -> V16 {
            V16(unsafe { _mm512_min_ps(o.0, self.0) })
        }
        #[inline(always)]
        fn below(self, o: V16) -> __mmask16 {
            cmp!(self.0, o.0, _CMP_LT_OQ)
        }
        #[inline(always)]
        fn sel(m: __mmask16, a: V16, b: V16) -> V16 {
            V16(unsafe { _mm512_mask_blend_ps(m, b.0, a.0) })
        }
        #[inline(always)]
        fn floor(self) -> V16 {
            V16(unsafe {
                _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(self.0)
            })
        }
        #[inline(always)]
        fn flip_odd(self, n: V16) -> V16 {
            unsafe {
                let odd = _mm512_slli_epi32::<31>(_mm512_cvtps_epi32(n.0));
                V16(_mm512_castsi512_ps(_mm512_xor_si512(
                    _mm512_castps_si512(self.0),
                    odd,
                )))
            }
        }
        #[inline(always)]
        fn sign_of(self, s: V16) -> V16 {
            unsafe {
                let sign = _mm512_set1_ps(-0.0);
                V16(_mm512_or_ps(
                    _mm512_andnot_ps(sign, self.0),
                    _mm512_and_ps(sign, s.0),
                ))
            }
        }
        #[inline(always)]
        fn split(self) -> (V16, V16) {
            // e = floor(log2 x) and m in [1, 2), subnormals normalised;
            // then m moves to [sqrt(1/2), sqrt(2)).
            let (e, m) = unsafe {
                (
                    V16(_mm512_getexp_ps(self.0)),
                    V16(_mm512_getmant_ps::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_SRC>(
                        self.0,
                    )),
                )
            };
            let big = V16::s(std::f32::consts::SQRT_2).below(m);
            (
                V16::sel(big, e + V16::s(1.0), e),
                V16::sel(big, m * V16::s(0.5), m),
            )
        }
        #[inline(always)]
        fn fixup(self, x: V16, table: u32) -> V16 {
            V16(unsafe { _mm512_fixupimm_ps::<0>(self.0, x.0, _mm512_set1_epi32(table as i32)) })
        }
    }

    /// [`W`] vectors of sixteen lanes, every operation issued for each
    /// vector in turn. A body is one long chain of dependent steps (about
    /// 75 cycles of latency for `sigmoid`); with one vector per loop
    /// iteration the out-of-order window held too few iterations to hide
    /// it, and interleaving independent vectors in program order does.
    #[derive(Clone, Copy)]
    pub(super) struct Wide([V16; W]);

    /// Vectors per [`Wide`] value.
    const W: usize = 4;

    /// `[e(0), e(1), e(2), e(3)]` with `$j` bound to each index: the
    /// [`W`] vectors written out, so that no library function (which
    /// would not carry the caller's target features, and which the
    /// inliner may leave out of line in a long body) stands between an
    /// intrinsic and the `target_feature` loop that runs it.
    macro_rules! each {
        ($j:ident => $e:expr) => {{
            const _: () = assert!(W == 4);
            [
                {
                    let $j = 0;
                    $e
                },
                {
                    let $j = 1;
                    $e
                },
                {
                    let $j = 2;
                    $e
                },
                {
                    let $j = 3;
                    $e
                },
            ]
        }};
    }

    /// Lane masks of [`Wide`]: bits `16 j..16 j + 16` for vector `j`.
    type WideMask = u64;

    impl Wide {
        #[inline(always)]
        fn map(self, f: impl Fn(V16) -> V16) -> Wide {
            Wide(each!(j => f(self.0[j])))
        }
        #[inline(always)]
        fn zip(self, o: Wide, f: impl Fn(V16, V16) -> V16) -> Wide {
            Wide(each!(j => f(self.0[j], o.0[j])))
        }
        #[inline(always)]
        fn mask(self, o: Wide, f: impl Fn(V16, V16) -> __mmask16) -> WideMask {
            let parts = each!(j => WideMask::from(f(self.0[j], o.0[j])) << (16 * j));
            parts[0] | parts[1] | parts[2] | parts[3]
        }
    }

    macro_rules! wide_binary {
        ($($tr:ident $m:ident),*) => {$(
            impl $tr for Wide {
                type Output = Wide;
                #[inline(always)]
                fn $m(self, o: Wide) -> Wide {
                    self.zip(o, V16::$m)
                }
            }
        )*};
    }
    wide_binary!(Add add, Sub sub, Mul mul, Div div);

    impl Neg for Wide {
        type Output = Wide;
        #[inline(always)]
        fn neg(self) -> Wide {
            self.map(V16::neg)
        }
    }

    /// Bits `16 j..16 j + 16` of `m`: vector `j`'s mask.
    #[inline(always)]
    fn part(m: WideMask, j: usize) -> __mmask16 {
        (m >> (16 * j)) as __mmask16
    }

    impl Lanes for Wide {
        type M = WideMask;
        #[inline(always)]
        fn s(v: f32) -> Wide {
            Wide([V16::s(v); W])
        }
        #[inline(always)]
        fn fma(self, b: Wide, c: Wide) -> Wide {
            Wide(each!(j => self.0[j].fma(b.0[j], c.0[j])))
        }
        #[inline(always)]
        fn scale(self, n: Wide) -> Wide {
            self.zip(n, V16::scale)
        }
        #[inline(always)]
        fn mag(self) -> Wide {
            self.map(V16::mag)
        }
        #[inline(always)]
        fn at_least(self, o: Wide) -> Wide {
            self.zip(o, V16::at_least)
        }
        #[inline(always)]
        fn at_most(self, o: Wide) -> Wide {
            self.zip(o, V16::at_most)
        }
        #[inline(always)]
        fn below(self, o: Wide) -> WideMask {
            self.mask(o, V16::below)
        }
        #[inline(always)]
        fn sel(m: WideMask, a: Wide, b: Wide) -> Wide {
            Wide(each!(j => V16::sel(part(m, j), a.0[j], b.0[j])))
        }
        #[inline(always)]
        fn floor(self) -> Wide {
            self.map(V16::floor)
        }
        #[inline(always)]
        fn flip_odd(self, n: Wide) -> Wide {
            self.zip(n, V16::flip_odd)
        }
        #[inline(always)]
        fn sign_of(self, s: Wide) -> Wide {
            self.zip(s, V16::sign_of)
        }
        #[inline(always)]
        fn split(self) -> (Wide, Wide) {
            let parts: [(V16, V16); W] = each!(j => self.0[j].split());
            (Wide(each!(j => parts[j].0)), Wide(each!(j => parts[j].1)))
        }
        #[inline(always)]
        fn fixup(self, x: Wide, table: u32) -> Wide {
            self.zip(x, |y, x| y.fixup(x, table))
        }
    }

    /// `y` (`K` of `x`) with the lanes of `far` patched by `K::slow`.
    #[inline(never)]
    #[target_feature(enable = "avx512f")]
    unsafe fn patch<K: Body + Unary<f32>>(x: __m512, y: __m512, far: __mmask16) -> __m512 {
        let (mut xs, mut ys) = ([0f32; 16], [0f32; 16]);
        // SAFETY: both arrays hold sixteen floats; the CPU has AVX-512.
        unsafe {
            _mm512_storeu_ps(xs.as_mut_ptr(), x);
            _mm512_storeu_ps(ys.as_mut_ptr(), y);
        }
        for l in 0..16 {
            if far >> l & 1 == 1 {
                ys[l] = K::slow(xs[l]);
            }
        }
        // SAFETY: as above.
        unsafe { _mm512_loadu_ps(ys.as_ptr()) }
    }

    /// One vector of `K`, with the lanes it does not cover patched by `slow`.
    #[inline(always)]
    unsafe fn one<K: Body + Unary<f32>>(x: __m512) -> __m512 {
        let y = K::f(V16(x)).0;
        if !K::HAS_SLOW {
            return y;
        }
        match K::far(V16(x)) {
            0 => y,
            // SAFETY: forwarded.
            far => unsafe { patch::<K>(x, y, far) },
        }
    }

    /// [`W`] vectors of `K` (see [`Wide`]), patched as [`one`] does.
    #[inline(always)]
    unsafe fn many<K: Body + Unary<f32>>(x: [__m512; W]) -> [__m512; W] {
        let xw = Wide(each!(j => V16(x[j])));
        let fx = K::f(xw).0;
        let mut y = each!(j => fx[j].0);
        if K::HAS_SLOW {
            let far = K::far(xw);
            if far != 0 {
                for j in 0..W {
                    if part(far, j) != 0 {
                        // SAFETY: forwarded.
                        y[j] = unsafe { patch::<K>(x[j], y[j], part(far, j)) };
                    }
                }
            }
        }
        y
    }

    /// `dst[i] = K(src[i])` for `i < n`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW, DQ and VL; `src` is readable and `dst`
    /// writable for `n` elements (they may be the same).
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
    pub(super) unsafe fn run<K: Body + Unary<f32>>(src: *const f32, dst: *mut f32, n: usize) {
        let mut i = 0;
        // SAFETY: every access is below `n`; the tail is masked.
        unsafe {
            while i + 16 * W <= n {
                let x = each!(j => _mm512_loadu_ps(src.add(i + 16 * j)));
                let y = many::<K>(x);
                for (j, &v) in y.iter().enumerate() {
                    _mm512_storeu_ps(dst.add(i + 16 * j), v);
                }
                i += 16 * W;
            }
            while i + 16 <= n {
                let x = _mm512_loadu_ps(src.add(i));
                _mm512_storeu_ps(dst.add(i), one::<K>(x));
                i += 16;
            }
            if i < n {
                let m = ((1u32 << (n - i)) - 1) as __mmask16;
                let x = _mm512_maskz_loadu_ps(m, src.add(i));
                _mm512_mask_storeu_ps(dst.add(i), m, one::<K>(x));
            }
        }
    }
}
