//! Box-Muller kernels: the block transform torch's CPU kernels apply to
//! 16 uniforms at a time, and the one-at-a-time normal distribution with
//! its cached second value.
//!
//! Note [Box-Muller blocks]
//! A block of 16 uniforms `d[0..16]` becomes 16 normals: for `j < 8`,
//! `r = sqrt(-2 ln(1 - d[j]))`, `t = 2 pi d[j + 8]`, then
//! `d[j] = r cos t` and `d[j + 8] = r sin t` (scaled by `std`, shifted by
//! `mean` with one fused multiply-add). Blocks are independent, so they
//! run in parallel without changing a bit.
//!
//! For float32, torch's AVX2 kernel evaluates `ln`, `sin` and `cos` with
//! the Cephes single-precision polynomials (S. L. Moshier's Cephes
//! library, as vectorised in J. Pommier's sse_mathfun and its AVX port):
//! `ln` by splitting off the exponent and a degree-9 polynomial in the
//! mantissa, `sin`/`cos` by reduction modulo pi/4 in three parts and two
//! short polynomials. The compiler fuses each `a * b + c` of those
//! polynomials into one rounding; [`ln_f32`] and [`sincos_f32`] spell the
//! same operations with `mul_add`, which is what makes the results equal
//! to the last bit. float64 uses the C library's `log`, `sin` and `cos`
//! (as torch's kernel does), so it matches torch on the same C library.

use std::f32::consts::FRAC_1_SQRT_2;

/// `2 pi` rounded to float32.
const TWO_PI_F32: f32 = (2.0 * std::f64::consts::PI) as f32;

// Cephes' ln polynomial on the reduced mantissa, highest degree first.
// The constants are the published decimal values rounded to float64 and
// then to float32, as a C initialiser of a float array does.
const LN_P: [f32; 9] = [
    7.037_683_629_2e-2_f64 as f32,
    -1.151_461_031_0e-1_f64 as f32,
    1.167_699_874_0e-1_f64 as f32,
    -1.242_014_084_6e-1_f64 as f32,
    1.424_932_278_7e-1_f64 as f32,
    -1.666_805_766_5e-1_f64 as f32,
    2.000_071_476_5e-1_f64 as f32,
    -2.499_999_399_3e-1_f64 as f32,
    3.333_333_117_4e-1_f64 as f32,
];
/// ln 2 split into a short head and a correction.
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_40e-4_f64 as f32;

/// `ln(x)` for `x` in `(0, 1]` by Cephes' single-precision method.
#[inline(always)]
fn ln_f32(x: f32) -> f32 {
    let bits = x.to_bits();
    // x = 2^e * m with m in [0.5, 1).
    let e = ((bits >> 23) as i32 - 127) as f32 + 1.0;
    let m = f32::from_bits((bits & !0x7f80_0000) | 0x3f00_0000);
    // Below sqrt(1/2), use 2m in [sqrt(2)/2 * 2, 2) and e - 1 instead, so
    // the polynomial's argument stays in [sqrt(1/2) - 1, sqrt(2) - 1).
    let small = m < FRAC_1_SQRT_2;
    let e = if small { e - 1.0 } else { e };
    let x = if small { (m - 1.0) + m } else { m - 1.0 };
    let z = x * x;
    let mut y = LN_P[0];
    for &p in &LN_P[1..] {
        y = y.mul_add(x, p);
    }
    let y = y * x;
    let y = y.mul_add(z, e * LN2_LO);
    let y = y - 0.5 * z;
    e.mul_add(LN2_HI, x + y)
}

/// pi/4 split into three parts for an extended-precision reduction.
const PIO4: [f32; 3] = [
    0.785_156_25,
    2.418_756_484_985_351_6e-4_f64 as f32,
    3.774_894_977_445_941e-8_f64 as f32,
];
const FOUR_OVER_PI: f32 = 1.273_239_544_735_16_f64 as f32;
const SIN_P: [f32; 3] = [
    -1.951_529_589_1e-4_f64 as f32,
    8.332_160_873_6e-3_f64 as f32,
    -1.666_665_461_1e-1_f64 as f32,
];
const COS_P: [f32; 3] = [
    2.443_315_711_809_948e-5_f64 as f32,
    -1.388_731_625_493_765e-3_f64 as f32,
    4.166_664_568_298_827e-2_f64 as f32,
];

/// `(sin x, cos x)` for `x >= 0` by Cephes' single-precision method
/// (accurate for `x` below about 8192; here `x < 2 pi`).
#[inline(always)]
fn sincos_f32(x: f32) -> (f32, f32) {
    // The octant, rounded up to even: x - j pi/4 lies in [-pi/4, pi/4].
    let j = ((x * FOUR_OVER_PI) as i32 + 1) & !1;
    let y = j as f32;
    let r = y.mul_add(-PIO4[0], x);
    let r = y.mul_add(-PIO4[1], r);
    let r = y.mul_add(-PIO4[2], r);
    let z = r * r;
    let c = COS_P[0].mul_add(z, COS_P[1]).mul_add(z, COS_P[2]) * z;
    let c = c.mul_add(z, -(0.5 * z)) + 1.0;
    let s = SIN_P[0].mul_add(z, SIN_P[1]).mul_add(z, SIN_P[2]) * z;
    let s = s.mul_add(r, r);
    // Octants 2 and 6 (mod 8) swap the polynomials; the signs follow the
    // quadrant.
    let swap = j & 2 != 0;
    let (sin, cos) = if swap { (c, s) } else { (s, c) };
    let sin_neg = j & 4 != 0;
    let cos_neg = !(j - 2) & 4 != 0;
    (
        if sin_neg { -sin } else { sin },
        if cos_neg { -cos } else { cos },
    )
}

/// [Box-Muller blocks] on one block of 16 float32 uniforms.
#[inline(always)]
fn block_f32(d: &mut [f32], mean: f32, std: f32) {
    let mut out = [0f32; 16];
    for j in 0..8 {
        let radius = (-2.0 * ln_f32(1.0 - d[j])).sqrt();
        let (sin, cos) = sincos_f32(TWO_PI_F32 * d[j + 8]);
        out[j] = (radius * cos).mul_add(std, mean);
        out[j + 8] = (radius * sin).mul_add(std, mean);
    }
    d.copy_from_slice(&out);
}

/// [Box-Muller blocks] on one block of 16 float64 uniforms.
#[inline(always)]
fn block_f64(d: &mut [f64], mean: f64, std: f64) {
    for j in 0..8 {
        let radius = (-2.0 * (1.0 - d[j]).ln()).sqrt();
        let theta = 2.0 * std::f64::consts::PI * d[j + 8];
        let (sin, cos) = theta.sin_cos();
        d[j] = (radius * cos).mul_add(std, mean);
        d[j + 8] = (radius * sin).mul_add(std, mean);
    }
}

macro_rules! blocks_with_fma {
    ($name:ident, $fma_name:ident, $block:ident, $t:ty) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        fn $fma_name(data: &mut [$t], mean: $t, std: $t) {
            for b in data.chunks_exact_mut(16) {
                $block(b, mean, std);
            }
        }

        /// Applies [Box-Muller blocks] to each whole block of 16 in
        /// `data`. `mul_add` is exact either way; on x86-64 with FMA
        /// hardware it is one instruction instead of a library call.
        pub(crate) fn $name(data: &mut [$t], mean: $t, std: $t) {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU supports the features the function is
                // compiled for (checked just above).
                unsafe { $fma_name(data, mean, std) };
                return;
            }
            for b in data.chunks_exact_mut(16) {
                $block(b, mean, std);
            }
        }
    };
}

blocks_with_fma!(blocks_f32, blocks_f32_fma, block_f32, f32);
blocks_with_fma!(blocks_f64, blocks_f64_fma, block_f64, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cephes_ln_is_accurate() {
        let mut worst = 0f64;
        for i in 1..=100_000u32 {
            let x = i as f32 / 100_000.0;
            let err = (ln_f32(x) as f64 - (x as f64).ln()).abs();
            worst = worst.max(err / (x as f64).ln().abs().max(1e-3));
        }
        assert!(worst < 1e-6, "{worst}");
        assert_eq!(ln_f32(1.0), 0.0);
    }

    #[test]
    fn cephes_sincos_is_accurate() {
        let mut worst = 0f64;
        for i in 0..100_000u32 {
            let x = TWO_PI_F32 * (i as f32 / 100_000.0);
            let (s, c) = sincos_f32(x);
            let (es, ec) = (x as f64).sin_cos();
            worst = worst.max((s as f64 - es).abs()).max((c as f64 - ec).abs());
        }
        assert!(worst < 2e-7, "{worst}");
    }
}
