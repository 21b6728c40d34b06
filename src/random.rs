//! Seeded random numbers: a counter-based generator and the sampling
//! operations built on it (`rand`, `randn`, `randint`, `randperm`,
//! `normal`, `bernoulli`, `multinomial` and the in-place `uniform_`,
//! `normal_`, `random_`, `bernoulli_`, `exponential_`).
//!
//! Note [Counter-based generation]
//! A [`Generator`] is a 64-bit seed (the key of a Philox4x32-10 block
//! function) and a 64-bit offset (the next unused counter). A sampling call
//! reserves a run of counters under the generator's lock and then fills its
//! output without holding it: block `b` of the output is
//! `philox(counter = start + b, key = seed)`, four 32-bit words that make
//! a fixed number of elements (see each distribution). An element's value
//! therefore depends only on the seed, the calls made before, and its index:
//! never on the number of threads that split the work or their order.
//! Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
//! as easy as 1, 2, 3", SC 2011) passes the TestU01 BigCrush battery.
//!
//! The global default generator starts from a fixed seed, so a process that
//! never calls [`manual_seed`] still draws the same numbers on every run.

use crate::ops::access::{lock, slice_mut};
use crate::ops::iter::{map2, map3};
use crate::pool::{install, num_threads, PARALLEL_MIN_ELEMS};
use crate::tensor::{result_type, Float};
use crate::{dispatch, dispatch_float, DType, Element, Error, Result, Tensor};
use parking_lot::Mutex;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

/// The seed of the default generator at process start (torch's value).
pub const DEFAULT_SEED: u64 = 67_280_421_310_721;

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

/// The Philox4x32-10 block function: four pseudo-random words for one
/// counter under one key.
#[inline]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = counter;
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(PHILOX_W0);
            k[1] = k[1].wrapping_add(PHILOX_W1);
        }
        let p0 = u64::from(PHILOX_M0) * u64::from(c[0]);
        let p1 = u64::from(PHILOX_M1) * u64::from(c[2]);
        c = [
            ((p1 >> 32) as u32) ^ c[1] ^ k[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// A run of counters reserved by one sampling call.
#[derive(Debug, Clone, Copy)]
pub struct Stream {
    key: [u32; 2],
    start: u64,
}

impl Stream {
    /// The four words of block `b` of this run.
    #[inline]
    pub fn block(&self, b: u64) -> [u32; 4] {
        let c = self.start.wrapping_add(b);
        philox4x32_10([c as u32, (c >> 32) as u32, 0, 0], self.key)
    }
}

#[derive(Debug, Clone, Copy)]
struct State {
    seed: u64,
    offset: u64,
}

/// A source of random numbers: a seed and a position in its stream (cheap
/// to lock; generation itself runs outside the lock).
#[derive(Debug)]
pub struct Generator {
    state: Mutex<State>,
}

impl Default for Generator {
    fn default() -> Self {
        Generator::new(DEFAULT_SEED)
    }
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            state: Mutex::new(State { seed, offset: 0 }),
        }
    }

    /// Restarts the stream from `seed`.
    pub fn manual_seed(&self, seed: u64) {
        *self.state.lock() = State { seed, offset: 0 };
    }

    /// The seed this stream started from.
    pub fn initial_seed(&self) -> u64 {
        self.state.lock().seed
    }

    /// Reseeds from the operating system's entropy and returns the seed.
    pub fn seed(&self) -> u64 {
        let s: u64 = rand::random();
        self.manual_seed(s);
        s
    }

    /// `[seed, offset]`: everything needed to replay the stream.
    pub fn get_state(&self) -> [u64; 2] {
        let s = self.state.lock();
        [s.seed, s.offset]
    }

    /// Restores a state from [`Generator::get_state`].
    pub fn set_state(&self, state: [u64; 2]) {
        *self.state.lock() = State {
            seed: state[0],
            offset: state[1],
        };
    }

    /// Reserves `blocks` consecutive counters.
    pub fn reserve(&self, blocks: u64) -> Stream {
        let mut s = self.state.lock();
        let start = s.offset;
        s.offset = s.offset.wrapping_add(blocks);
        Stream {
            key: [s.seed as u32, (s.seed >> 32) as u32],
            start,
        }
    }
}

static DEFAULT: LazyLock<Arc<Generator>> = LazyLock::new(|| Arc::new(Generator::default()));

/// The process-wide generator used when no generator is passed.
pub fn default_generator() -> &'static Arc<Generator> {
    &DEFAULT
}

/// Seeds the default generator.
pub fn manual_seed(seed: u64) {
    DEFAULT.manual_seed(seed)
}

/// The seed the default generator started from.
pub fn initial_seed() -> u64 {
    DEFAULT.initial_seed()
}

/// Reseeds the default generator non-deterministically; returns the seed.
pub fn seed() -> u64 {
    DEFAULT.seed()
}

fn gen_or_default(g: Option<&Generator>) -> &Generator {
    g.unwrap_or(&DEFAULT)
}

/// Elements per parallel chunk (a multiple of every per-block count).
const CHUNK: usize = 1 << 14;

/// Blocks computed together (lane-parallel, so the compiler vectorises the
/// Philox rounds).
const BATCH: usize = 16;

impl Stream {
    /// The words of blocks `first .. first + BATCH`, block by block; the
    /// same values as [`Stream::block`].
    #[inline]
    fn batch(&self, first: u64, words: &mut [u32; 4 * BATCH]) {
        let mut c0 = [0u32; BATCH];
        let mut c1 = [0u32; BATCH];
        let mut c2 = [0u32; BATCH];
        let mut c3 = [0u32; BATCH];
        for l in 0..BATCH {
            let c = self.start.wrapping_add(first).wrapping_add(l as u64);
            c0[l] = c as u32;
            c1[l] = (c >> 32) as u32;
        }
        let mut k = self.key;
        for round in 0..10 {
            if round > 0 {
                k[0] = k[0].wrapping_add(PHILOX_W0);
                k[1] = k[1].wrapping_add(PHILOX_W1);
            }
            for l in 0..BATCH {
                let p0 = u64::from(PHILOX_M0) * u64::from(c0[l]);
                let p1 = u64::from(PHILOX_M1) * u64::from(c2[l]);
                let n0 = ((p1 >> 32) as u32) ^ c1[l] ^ k[0];
                let n2 = ((p0 >> 32) as u32) ^ c3[l] ^ k[1];
                c0[l] = n0;
                c1[l] = p1 as u32;
                c2[l] = n2;
                c3[l] = p0 as u32;
            }
        }
        for l in 0..BATCH {
            words[4 * l] = c0[l];
            words[4 * l + 1] = c1[l];
            words[4 * l + 2] = c2[l];
            words[4 * l + 3] = c3[l];
        }
    }
}

/// Fills `out` from a fresh run of `g`. Each element takes `w` words (1 or
/// 2), so block `b` of the run (four words) makes elements
/// `b * 4 / w .. (b + 1) * 4 / w`. `f(words, out)` maps the words of whole
/// blocks to the elements they make (`words.len() >= w * out.len()`).
fn fill<T: Send>(
    g: &Generator,
    out: &mut [T],
    w: usize,
    f: impl Fn(&[u32], &mut [T]) + Sync + Send,
) {
    let n = out.len();
    let per = 4 / w;
    let stream = g.reserve(n.div_ceil(per) as u64);
    let run = |part: &mut [T], first_block: u64| {
        let mut words = [0u32; 4 * BATCH];
        for (j, elems) in part.chunks_mut(per * BATCH).enumerate() {
            stream.batch(first_block + (j * BATCH) as u64, &mut words);
            f(&words, elems);
        }
    };
    if n >= PARALLEL_MIN_ELEMS && num_threads() > 1 {
        install(|| {
            out.par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, part)| run(part, (c * CHUNK / per) as u64));
        });
    } else {
        run(out, 0);
    }
}

/// A new contiguous tensor of `T` sampled by [`fill`].
fn sample<T: Element>(
    shape: &[usize],
    g: &Generator,
    w: usize,
    f: impl Fn(&[u32], &mut [T]) + Sync + Send,
) -> Result<Tensor> {
    let out = Tensor::try_empty(shape, T::DTYPE)?;
    {
        let _g = lock(&[], Some(&out));
        // SAFETY: `out` is fresh, contiguous, write-locked and of dtype T.
        fill(g, unsafe { slice_mut::<T>(&out) }, w, f);
    }
    Ok(out)
}

/// Writes samples into `dst` in place: directly when contiguous, else
/// through a contiguous temporary and `copy_` (which checks overlap).
fn sample_into<T: Element>(
    dst: &Tensor,
    g: &Generator,
    w: usize,
    f: impl Fn(&[u32], &mut [T]) + Sync + Send,
) -> Result<()> {
    if dst.is_contiguous() {
        {
            let _g = lock(&[], Some(dst));
            // SAFETY: `dst` is write-locked, of dtype T (callers dispatch on
            // it), and contiguous, hence non-overlapping.
            fill(g, unsafe { slice_mut::<T>(dst) }, w, f);
        }
        dst.bump_version();
        Ok(())
    } else {
        crate::ops::iter::check_writable(dst)?;
        dst.copy_(&sample::<T>(dst.shape(), g, w, f)?)
    }
}

/// 64 bits from two words.
#[inline(always)]
fn u64_of(hi: u32, lo: u32) -> u64 {
    (u64::from(hi) << 32) | u64::from(lo)
}

/// A uniform `f64` in `[0, 1)` from 53 of 64 bits.
#[inline(always)]
fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `[0, range)` from 64 bits (multiply-shift; the bias
/// is below `range / 2^64`).
#[inline(always)]
fn below(x: u64, range: u128) -> u128 {
    (u128::from(x) * range) >> 64
}

/// `-2 ln(x)` for `x` in `(0, 1]`, to about 1e-7 relative error:
/// `x = 2^e m` with `m` in `[sqrt(1/2), sqrt(2))`, and `ln m` from the
/// series of `2 atanh(s)`, `s = (m - 1) / (m + 1)`, `|s| < 0.172`.
#[inline(always)]
fn neg2ln_f32(x: f32) -> f32 {
    let bits = x.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 127;
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    let big = m > std::f32::consts::SQRT_2;
    m = if big { m * 0.5 } else { m };
    e += big as i32;
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let series = 1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0))));
    let ln = e as f32 * std::f32::consts::LN_2 + 2.0 * s * series;
    (-2.0 * ln).max(0.0)
}

/// `(sin, cos)` of `2 pi w / 2^32`, to about 1e-7: the top two bits pick
/// the quadrant, the rest an angle in `[0, pi/2)` for Taylor polynomials.
#[inline(always)]
fn sincos_turn_f32(w: u32) -> (f32, f32) {
    let q = w >> 30;
    let phi = (w & 0x3fff_ffff) as f32 * (std::f32::consts::FRAC_PI_2 / (1u32 << 30) as f32);
    let p2 = phi * phi;
    let sin = phi
        * (1.0
            + p2 * (-1.0 / 6.0
                + p2 * (1.0 / 120.0
                    + p2 * (-1.0 / 5040.0 + p2 * (1.0 / 362_880.0 + p2 * (-1.0 / 39_916_800.0))))));
    let cos = 1.0
        + p2 * (-0.5
            + p2 * (1.0 / 24.0
                + p2 * (-1.0 / 720.0
                    + p2 * (1.0 / 40_320.0
                        + p2 * (-1.0 / 3_628_800.0 + p2 * (1.0 / 479_001_600.0))))));
    // Rotate by q quarter turns: swap for odd q, then fix the signs.
    let (s, c) = if q & 1 == 1 { (cos, sin) } else { (sin, cos) };
    let s_sign = (q >> 1) << 31;
    let c_sign = ((q ^ (q >> 1)) & 1) << 31;
    (
        f32::from_bits(s.to_bits() ^ s_sign),
        f32::from_bits(c.to_bits() ^ c_sign),
    )
}

/// `1 / (2k + 1)` for `k` in `0..11`.
const ODD_INVERSES: [f64; 11] = {
    let mut out = [0.0; 11];
    let mut k = 0;
    while k < 11 {
        out[k] = 1.0 / (2 * k + 1) as f64;
        k += 1;
    }
    out
};

/// `-2 ln(x)` for `x` in `(0, 1]` in f64, as [`neg2ln_f32`] with the
/// series carried to `s^21` (truncation below 1e-17).
#[inline(always)]
fn neg2ln_f64(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let big = m > std::f64::consts::SQRT_2;
    m = if big { m * 0.5 } else { m };
    e += big as i64;
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut series = 0.0;
    for inv in ODD_INVERSES.iter().rev() {
        series = series * s2 + inv;
    }
    let ln = e as f64 * std::f64::consts::LN_2 + 2.0 * s * series;
    (-2.0 * ln).max(0.0)
}

/// `1 / ((2k + 2)(2k + 3))` and `1 / ((2k + 1)(2k + 2))`: the ratios of
/// successive Taylor coefficients of sin and cos.
const SIN_STEPS: [f64; 11] = taylor_steps(2);
const COS_STEPS: [f64; 11] = taylor_steps(1);

const fn taylor_steps(first: usize) -> [f64; 11] {
    let mut out = [0.0; 11];
    let mut k = 0;
    while k < 11 {
        out[k] = 1.0 / ((2 * k + first) * (2 * k + first + 1)) as f64;
        k += 1;
    }
    out
}

/// `(sin, cos)` of `2 pi x / 2^64` in f64, as [`sincos_turn_f32`] with
/// Taylor polynomials to degree 21/22 (truncation below 1e-17).
#[inline(always)]
fn sincos_turn_f64(x: u64) -> (f64, f64) {
    let q = (x >> 62) as u32;
    let phi =
        ((x & ((1 << 62) - 1)) >> 9) as f64 * (std::f64::consts::FRAC_PI_2 / (1u64 << 53) as f64);
    let p2 = phi * phi;
    // Horner from the top coefficient: sin = phi * sum (-p2)^k / (2k+1)!,
    // cos = sum (-p2)^k / (2k)!.
    let mut sin = 0.0;
    let mut cos = 0.0;
    for k in (0..11).rev() {
        sin = 1.0 - sin * p2 * SIN_STEPS[k];
        cos = 1.0 - cos * p2 * COS_STEPS[k];
    }
    let sin = phi * sin;
    let (s, c) = if q & 1 == 1 { (cos, sin) } else { (sin, cos) };
    let s_sign = u64::from(q >> 1) << 63;
    let c_sign = u64::from((q ^ (q >> 1)) & 1) << 63;
    (
        f64::from_bits(s.to_bits() ^ s_sign),
        f64::from_bits(c.to_bits() ^ c_sign),
    )
}

/// Floating element types that can be sampled directly.
pub trait Sample: Float {
    /// Words of a block each element takes (1 or 2).
    const WORDS: usize;
    /// The largest finite value, as f64.
    const MAX_F64: f64;
    /// Uniform values in `[0, 1)`, element `i` from `WORDS` words at
    /// `i * WORDS`.
    fn uniforms(words: &[u32], out: &mut [Self]);
    /// Standard normal values (Box-Muller), pair `k` from the words of
    /// elements `2k` and `2k + 1`.
    fn normals(words: &[u32], out: &mut [Self]);
    /// The largest value below `self` (for finite, non-minimal values).
    fn next_below(self) -> Self;
}

impl Sample for f32 {
    const WORDS: usize = 1;
    const MAX_F64: f64 = f32::MAX as f64;
    #[inline(always)]
    fn uniforms(words: &[u32], out: &mut [f32]) {
        for (o, &w) in out.iter_mut().zip(words) {
            // 24 bits: every value is exact and the largest is 1 - 2^-24.
            *o = (w >> 8) as f32 * (1.0 / (1u32 << 24) as f32);
        }
    }
    #[inline(always)]
    fn normals(words: &[u32], out: &mut [f32]) {
        #[inline(always)]
        fn pair(w0: u32, w1: u32) -> (f32, f32) {
            // u1 in (0, 1]: the +1 keeps ln finite; f32's relative
            // precision near 0 keeps the tail out to about 6.7 sigma.
            let u1 = (w0 as f32 + 1.0) * (1.0 / 4_294_967_296.0);
            let r = neg2ln_f32(u1.min(1.0)).sqrt();
            let (s, c) = sincos_turn_f32(w1);
            (r * c, r * s)
        }
        let k = out.len() - 1 + out.len() % 2; // words of an odd last element
        let mut pairs = out.chunks_exact_mut(2);
        for (o, w) in (&mut pairs).zip(words.chunks_exact(2)) {
            (o[0], o[1]) = pair(w[0], w[1]);
        }
        if let [last] = pairs.into_remainder() {
            *last = pair(words[k - 1], words[k]).0;
        }
    }
    fn next_below(self) -> f32 {
        if self.is_nan() || self == f32::NEG_INFINITY {
            self
        } else if self == 0.0 {
            -f32::from_bits(1)
        } else if self > 0.0 {
            f32::from_bits(self.to_bits() - 1)
        } else {
            f32::from_bits(self.to_bits() + 1)
        }
    }
}

impl Sample for f64 {
    const WORDS: usize = 2;
    const MAX_F64: f64 = f64::MAX;
    #[inline(always)]
    fn uniforms(words: &[u32], out: &mut [f64]) {
        for (o, w) in out.iter_mut().zip(words.chunks_exact(2)) {
            *o = unit_f64(u64_of(w[0], w[1]));
        }
    }
    #[inline(always)]
    fn normals(words: &[u32], out: &mut [f64]) {
        #[inline(always)]
        fn pair(w: &[u32]) -> (f64, f64) {
            let u1 = ((u64_of(w[0], w[1]) >> 11) as f64 + 1.0) * (1.0 / (1u64 << 53) as f64);
            let r = neg2ln_f64(u1.min(1.0)).sqrt();
            let (s, c) = sincos_turn_f64(u64_of(w[2], w[3]));
            (r * c, r * s)
        }
        let n = out.len();
        let mut pairs = out.chunks_exact_mut(2);
        for (o, w) in (&mut pairs).zip(words.chunks_exact(4)) {
            (o[0], o[1]) = pair(w);
        }
        if let [last] = pairs.into_remainder() {
            *last = pair(&words[2 * (n - 1)..2 * n + 2]).0;
        }
    }
    fn next_below(self) -> f64 {
        if self.is_nan() || self == f64::NEG_INFINITY {
            self
        } else if self == 0.0 {
            -f64::from_bits(1)
        } else if self > 0.0 {
            f64::from_bits(self.to_bits() - 1)
        } else {
            f64::from_bits(self.to_bits() + 1)
        }
    }
}

fn not_floating(op: &str, dtype: DType) -> Error {
    Error::runtime(format!(
        "\"{op}\" not implemented for '{}' (a floating dtype, float32 or float64, is required)",
        dtype
    ))
}

/// The inclusive integer range a dtype can hold exactly: what `random_`
/// samples without bounds, and the bounds `randint` checks.
fn dtype_int_range(dtype: DType) -> (i128, i128) {
    match dtype {
        DType::Bool => (0, 1),
        DType::Int32 => (i32::MIN as i128, i32::MAX as i128),
        DType::Int64 => (i64::MIN as i128, i64::MAX as i128),
        DType::Float32 => (-(1 << 24), 1 << 24),
        DType::Float64 => (-(1 << 53), 1 << 53),
    }
}

/// Integers uniform in `[from, to)` as `T` (two words each).
fn int_sampler<T: Element>(from: i128, to: i128) -> impl Fn(&[u32], &mut [T]) + Sync + Send {
    let range = (to - from) as u128;
    move |words, out| {
        for (o, w) in out.iter_mut().zip(words.chunks_exact(2)) {
            let v = from + below(u64_of(w[0], w[1]), range) as i128;
            *o = T::from_i64(v as i64);
        }
    }
}

fn check_random_range(dtype: DType, from: i128, to: i128) -> Result<()> {
    if from >= to {
        return Err(Error::runtime(format!(
            "random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"
        )));
    }
    let (lo, hi) = dtype_int_range(dtype);
    if from < lo || from > hi {
        return Err(Error::runtime(format!(
            "random_ expects 'from' to be within the range of {dtype} [{lo}, {hi}], but got from={from}"
        )));
    }
    if to - 1 > hi {
        return Err(Error::runtime(format!(
            "random_ expects 'to' - 1 to be within the range of {dtype} [{lo}, {hi}], but got to={to}"
        )));
    }
    Ok(())
}

fn check_std(std: f64) -> Result<()> {
    if std.is_nan() || std < 0.0 {
        return Err(Error::runtime(format!(
            "normal expects std >= 0.0, but found std {std}"
        )));
    }
    Ok(())
}

fn check_p(p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::runtime(format!(
            "bernoulli_ expects p to be in [0, 1], but got p={p}"
        )));
    }
    Ok(())
}

impl Tensor {
    /// `rand(shape)`: uniform samples in `[0, 1)` of a floating `dtype`.
    pub fn rand(shape: &[usize], dtype: DType, g: Option<&Generator>) -> Result<Tensor> {
        let g = gen_or_default(g);
        dispatch_float!(dtype, T => sample::<T>(shape, g, T::WORDS, T::uniforms),
            else Err(not_floating("check_uniform_bounds", dtype)))
    }

    /// `randn(shape)`: standard normal samples of a floating `dtype`.
    pub fn randn(shape: &[usize], dtype: DType, g: Option<&Generator>) -> Result<Tensor> {
        let g = gen_or_default(g);
        dispatch_float!(dtype, T => sample::<T>(shape, g, T::WORDS, T::normals),
            else Err(not_floating("normal_kernel_cpu", dtype)))
    }

    /// `randint(low, high, shape)`: integers uniform in `[low, high)`, stored
    /// as `dtype` (which must hold every value of the range exactly).
    pub fn randint(
        low: i64,
        high: i64,
        shape: &[usize],
        dtype: DType,
        g: Option<&Generator>,
    ) -> Result<Tensor> {
        let (from, to) = (low as i128, high as i128);
        check_random_range(dtype, from, to)?;
        let g = gen_or_default(g);
        dispatch!(dtype, T => sample::<T>(shape, g, 2, int_sampler::<T>(from, to)))
    }

    /// `randperm(n)`: a uniformly random permutation of `0..n`.
    pub fn randperm(n: i64, dtype: DType, g: Option<&Generator>) -> Result<Tensor> {
        if n < 0 {
            return Err(Error::runtime(format!("n must be non-negative, got {n}")));
        }
        let (_, hi) = dtype_int_range(dtype);
        if dtype == DType::Bool || (n as i128) > hi + 1 {
            return Err(Error::runtime(format!(
                "n is too large for result tensor type: '{dtype}' (n = {n})"
            )));
        }
        // Two 8-byte buffers of n elements must be addressable.
        if n as u128 * 16 > isize::MAX as u128 {
            return Err(Error::runtime(format!(
                "randperm: n = {n} is too large to allocate"
            )));
        }
        let n = n as usize;
        let g = gen_or_default(g);
        let mut words: Vec<u64> = Vec::new();
        let mut perm: Vec<i64> = Vec::new();
        if words.try_reserve_exact(n).is_err() || perm.try_reserve_exact(n).is_err() {
            return Err(Error::runtime(format!(
                "can't allocate memory: randperm(n = {n}) needs {} bytes",
                n as u128 * 16
            )));
        }
        words.resize(n, 0);
        fill(g, &mut words, 2, |ws, out: &mut [u64]| {
            for (o, w) in out.iter_mut().zip(ws.chunks_exact(2)) {
                *o = u64_of(w[0], w[1]);
            }
        });
        // Fisher-Yates: position i swaps with a uniform j in 0..=i.
        perm.extend(0..n as i64);
        for i in (1..n).rev() {
            let j = below(words[i], i as u128 + 1) as usize;
            perm.swap(i, j);
        }
        Ok(Tensor::from_vec(perm).to_dtype(dtype))
    }

    /// `normal(mean, std, shape)`: normal samples with scalar parameters.
    pub fn normal(
        mean: f64,
        std: f64,
        shape: &[usize],
        dtype: DType,
        g: Option<&Generator>,
    ) -> Result<Tensor> {
        check_std(std)?;
        let g = gen_or_default(g);
        dispatch_float!(dtype, T => {
            let (m, s) = (T::from_f64(mean), T::from_f64(std));
            sample::<T>(shape, g, T::WORDS, move |ws, out| {
                T::normals(ws, out);
                for o in out.iter_mut() {
                    *o = m + s * *o;
                }
            })
        }, else Err(not_floating("normal_kernel_cpu", dtype)))
    }

    /// `normal(mean, std)` with tensor parameters (broadcast together):
    /// each element is drawn with its own mean and standard deviation.
    pub fn normal_tensor(mean: &Tensor, std: &Tensor, g: Option<&Generator>) -> Result<Tensor> {
        let dt = result_type(&[mean.promotion_operand(), std.promotion_operand()]);
        let shape = crate::broadcast_shapes(mean.shape(), std.shape())?;
        let z = Tensor::randn(&shape, dt, g)?;
        let bad = AtomicBool::new(false);
        let out = dispatch_float!(dt, T => map3::<T, T, T, T>(
            &mean.to_dtype(dt),
            &std.to_dtype(dt),
            &z,
            |m, s, z| {
                if s.is_nan() || s < T::zero() {
                    bad.store(true, Ordering::Relaxed);
                }
                m + s * z
            },
        )?, else return Err(not_floating("normal", dt)));
        if bad.load(Ordering::Relaxed) {
            return Err(Error::runtime("normal expects all elements of std >= 0.0"));
        }
        Ok(out)
    }

    /// `bernoulli()`: 0/1 samples, each 1 with the probability in `self`
    /// (a floating tensor with values in `[0, 1]`); same dtype as `self`.
    pub fn bernoulli(&self, g: Option<&Generator>) -> Result<Tensor> {
        let dt = self.dtype();
        let u = Tensor::rand(self.shape(), DType::Float64, g)?;
        let bad = AtomicBool::new(false);
        let out = dispatch_float!(dt, T => map2::<f64, T, T>(&u, self, |u, p| {
            let p = p.to_f64();
            if !(0.0..=1.0).contains(&p) {
                bad.store(true, Ordering::Relaxed);
            }
            T::from_bool(u < p)
        })?, else return Err(not_floating("bernoulli_tensor_cpu_p_", dt)));
        if bad.load(Ordering::Relaxed) {
            return Err(Error::runtime(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
            ));
        }
        Ok(out)
    }

    /// `bernoulli(p)`: 0/1 samples of `self`'s shape and dtype, each 1 with
    /// probability `p`.
    pub fn bernoulli_p(&self, p: f64, g: Option<&Generator>) -> Result<Tensor> {
        check_p(p)?;
        let out = Tensor::empty(self.shape(), self.dtype());
        out.bernoulli_(p, g)?;
        Ok(out)
    }

    /// `multinomial(num_samples, replacement)`: category indices drawn from
    /// the weights in each row of `self` (1-D or 2-D, non-negative).
    pub fn multinomial(
        &self,
        num_samples: i64,
        replacement: bool,
        g: Option<&Generator>,
    ) -> Result<Tensor> {
        if !self.dtype().is_floating_point() {
            return Err(Error::runtime(format!(
                "multinomial only supports floating-point dtypes for input, got: {}",
                self.dtype()
            )));
        }
        if self.ndim() != 1 && self.ndim() != 2 {
            return Err(Error::runtime(format!(
                "prob_dist must be 1 or 2 dim, got {} dims",
                self.ndim()
            )));
        }
        if num_samples <= 0 {
            return Err(Error::runtime(format!(
                "cannot sample n_sample <= 0 samples (got {num_samples})"
            )));
        }
        let k = self.shape()[self.ndim() - 1];
        let ns = num_samples as usize;
        if !replacement && ns > k {
            return Err(Error::runtime(format!(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement (n_sample = {ns}, size(-1) = {k})"
            )));
        }
        if k == 0 {
            return Err(Error::runtime(
                "invalid multinomial distribution (sum of probabilities <= 0)",
            ));
        }
        let rows = if self.ndim() == 2 { self.shape()[0] } else { 1 };
        let w = self.to_vec::<f64>();
        for row in w.chunks(k) {
            if row.iter().any(|&p| !(p.is_finite() && p >= 0.0)) {
                return Err(Error::runtime(
                    "probability tensor contains either `inf`, `nan` or element < 0",
                ));
            }
            if row.iter().sum::<f64>() <= 0.0 {
                return Err(Error::runtime(
                    "invalid multinomial distribution (sum of probabilities <= 0)",
                ));
            }
            if !replacement && row.iter().filter(|&&p| p > 0.0).count() < ns {
                return Err(Error::runtime(
                    "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)",
                ));
            }
        }
        let draws_per_row = if replacement { ns } else { k };
        let mut u = vec![0f64; rows * draws_per_row];
        fill(gen_or_default(g), &mut u, 2, f64::uniforms);
        let mut out = Vec::with_capacity(rows * ns);
        let mut cdf = vec![0f64; k];
        let mut keys: Vec<(f64, usize)> = Vec::with_capacity(k);
        for (row, us) in w.chunks(k).zip(u.chunks(draws_per_row)) {
            if replacement {
                let mut acc = 0.0;
                for (c, &p) in cdf.iter_mut().zip(row) {
                    acc += p;
                    *c = acc;
                }
                for &x in us {
                    // The first category whose cumulative weight exceeds
                    // x * total; zero-weight categories are never chosen.
                    let target = x * acc;
                    let i = cdf.partition_point(|&c| c <= target).min(k - 1);
                    out.push(i as i64);
                }
            } else {
                // Exponential race: category i finishes at E_i / w_i; the
                // finishing order is a sample of successive draws without
                // replacement.
                keys.clear();
                for (i, (&p, &x)) in row.iter().zip(us).enumerate() {
                    if p > 0.0 {
                        keys.push((-(1.0 - x).ln() / p, i));
                    }
                }
                keys.sort_by(|a, b| a.0.total_cmp(&b.0));
                out.extend(keys.iter().take(ns).map(|&(_, i)| i as i64));
            }
        }
        let shape: Vec<usize> = if self.ndim() == 2 {
            vec![rows, ns]
        } else {
            vec![ns]
        };
        Tensor::from_slice(&out, &shape)
    }

    /// `uniform_(from, to)`: fills with uniform samples in `[from, to)`.
    pub fn uniform_(&self, from: f64, to: f64, g: Option<&Generator>) -> Result<()> {
        if from.is_nan() || to.is_nan() || from > to {
            return Err(Error::runtime(format!(
                "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
            )));
        }
        let dt = self.dtype();
        let g = gen_or_default(g);
        dispatch_float!(dt, T => {
            if (to - from).is_nan() || to - from > T::MAX_F64 {
                return Err(Error::runtime(format!(
                    "uniform_ expects to-from <= std::numeric_limits<{dt}>::max(), but found to={to} and from={from}"
                )));
            }
            let hi = T::from_f64(to);
            let top = if T::from_f64(from) < hi { hi.next_below() } else { hi };
            sample_into::<T>(self, g, T::WORDS, move |ws, out| {
                T::uniforms(ws, out);
                for o in out.iter_mut() {
                    let v = T::from_f64(from + o.to_f64() * (to - from));
                    // Rounding to T may land on `to`; keep the range open.
                    *o = if v > top { top } else { v };
                }
            })
        }, else Err(not_floating("check_uniform_bounds", dt)))
    }

    /// `normal_(mean, std)`: fills with normal samples.
    pub fn normal_(&self, mean: f64, std: f64, g: Option<&Generator>) -> Result<()> {
        check_std(std)?;
        let dt = self.dtype();
        let g = gen_or_default(g);
        dispatch_float!(dt, T => {
            let (m, s) = (T::from_f64(mean), T::from_f64(std));
            sample_into::<T>(self, g, T::WORDS, move |ws, out| {
                T::normals(ws, out);
                for o in out.iter_mut() {
                    *o = m + s * *o;
                }
            })
        }, else Err(not_floating("normal_kernel_cpu", dt)))
    }

    /// `random_(from, to)`: fills with integers uniform in `[from, to)`.
    /// `from` defaults to 0; without `to` the range ends at the largest
    /// integer the dtype holds exactly (inclusive: `2^24` for float32,
    /// `2^53` for float64, the maximum for integers, 1 for bool).
    pub fn random_(&self, from: Option<i64>, to: Option<i64>, g: Option<&Generator>) -> Result<()> {
        let dt = self.dtype();
        let from = from.unwrap_or(0) as i128;
        let to = match to {
            Some(t) => t as i128,
            None => dtype_int_range(dt).1 + 1,
        };
        check_random_range(dt, from, to)?;
        let g = gen_or_default(g);
        dispatch!(dt, T => sample_into::<T>(self, g, 2, int_sampler::<T>(from, to)))
    }

    /// `bernoulli_(p)`: fills with 1 with probability `p`, else 0.
    pub fn bernoulli_(&self, p: f64, g: Option<&Generator>) -> Result<()> {
        check_p(p)?;
        let g = gen_or_default(g);
        dispatch!(self.dtype(), T => sample_into::<T>(self, g, 2, move |ws, out| {
            for (o, w) in out.iter_mut().zip(ws.chunks_exact(2)) {
                *o = T::from_bool(unit_f64(u64_of(w[0], w[1])) < p);
            }
        }))
    }

    /// `bernoulli_(p)` with a tensor of probabilities broadcast to `self`.
    pub fn bernoulli_tensor_(&self, p: &Tensor, g: Option<&Generator>) -> Result<()> {
        let p = p.to_dtype(DType::Float64).broadcast_to(self.shape())?;
        let draws = p.bernoulli(g)?;
        self.copy_(&draws)
    }

    /// `exponential_(lambd)`: fills with exponential samples of rate
    /// `lambd` (mean `1 / lambd`).
    pub fn exponential_(&self, lambd: f64, g: Option<&Generator>) -> Result<()> {
        if lambd.is_nan() || lambd <= 0.0 {
            return Err(Error::runtime(format!(
                "exponential_ expects lambda > 0.0, but found lambda={lambd}"
            )));
        }
        let dt = self.dtype();
        let g = gen_or_default(g);
        dispatch_float!(dt, T => sample_into::<T>(self, g, 2, move |ws, out| {
            for (o, w) in out.iter_mut().zip(ws.chunks_exact(2)) {
                let u = unit_f64(u64_of(w[0], w[1]));
                *o = T::from_f64(-(1.0 - u).ln() / lambd);
            }
        }), else Err(not_floating("exponential_cpu", dt)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answers() {
        // Random123's published known-answer vectors.
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn next_below_steps_one_ulp() {
        assert_eq!(1.0f32.next_below(), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(1.0f64.next_below(), 1.0 - f64::EPSILON / 2.0);
        assert!(0.0f64.next_below() < 0.0);
        assert_eq!((-1.0f64).next_below(), -1.0 - f64::EPSILON);
    }
}

#[cfg(test)]
mod kernel_tests {
    use super::*;

    #[test]
    fn batches_match_single_blocks() {
        let s = Stream {
            key: [0x1234_5678, 0x9abc_def0],
            start: u64::MAX - 5,
        };
        let mut words = [0u32; 4 * BATCH];
        s.batch(3, &mut words);
        for l in 0..BATCH {
            assert_eq!(words[4 * l..4 * l + 4], s.block(3 + l as u64));
        }
    }

    #[test]
    fn fast_f32_math_matches_libm() {
        let mut worst_ln = 0f64;
        let mut worst_trig = 0f64;
        for i in 0..200_000u64 {
            let w = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32;
            let x = (w as f32 + 1.0) * (1.0 / 4_294_967_296.0);
            let exact = -2.0 * (x as f64).ln();
            worst_ln = worst_ln.max((neg2ln_f32(x) as f64 - exact).abs() / exact.max(1e-3));
            let theta = std::f64::consts::TAU * w as f64 / 4_294_967_296.0;
            let (s, c) = sincos_turn_f32(w);
            worst_trig = worst_trig
                .max((s as f64 - theta.sin()).abs())
                .max((c as f64 - theta.cos()).abs());
        }
        assert!(worst_ln < 1e-6, "ln error {worst_ln}");
        let (mut worst_ln64, mut worst_trig64) = (0f64, 0f64);
        for i in 0..200_000u64 {
            let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 7);
            let u = ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
            let exact = -2.0 * u.ln();
            worst_ln64 = worst_ln64.max((neg2ln_f64(u) - exact).abs() / exact.max(1e-3));
            let theta = std::f64::consts::TAU * ((x >> 11) as f64 / (1u64 << 53) as f64);
            let (s, c) = sincos_turn_f64(x);
            worst_trig64 = worst_trig64
                .max((s - theta.sin()).abs())
                .max((c - theta.cos()).abs());
        }
        assert!(worst_ln64 < 1e-14, "f64 ln error {worst_ln64}");
        assert!(worst_trig64 < 1e-14, "f64 sin/cos error {worst_trig64}");
        assert!(worst_trig < 1e-6, "sin/cos error {worst_trig}");
    }
}
