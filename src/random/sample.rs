//! Sampling operations on tensors, each drawing from a [`Generator`] in
//! the order and with the transforms of torch's CPU kernels (see Note
//! [One stream, torch's order] in `mod.rs`):
//!
//! - float32 uniforms take one word (its low 24 bits), float64 uniforms
//!   two (the low 53 bits of the 64); `uniform_(a, b)` is
//!   `fma(u, b - a, a)` in the output type, with a result equal to `b`
//!   replaced by `a`.
//! - `normal_`/`randn` on a contiguous tensor of at least 16 elements draw
//!   one uniform per element, then transform each block of 16 (Note
//!   [Box-Muller blocks] in `normal.rs`); when the length is not a multiple
//!   of 16, 16 more uniforms are drawn and their block overwrites the last
//!   16 elements. Smaller or strided tensors draw one float64 normal at a
//!   time (the second of each pair is cached in the generator).
//! - integers in `[from, from + range)` are `word % range + from`, from one
//!   word, or from 64 bits when the range is 2^28 or more.
//! - `randperm(n)` swaps position `i` with `i + word % (n - i)`; for `n`
//!   of at least 2^32 / 20 it builds the permutation inside-out from 64-bit
//!   draws instead.
//! - Bernoulli draws compare one uniform (float64, or float32 when the
//!   probabilities are float32) with `p`; `exponential_` is
//!   `-ln(1 - u) / lambda` from a float64 uniform.
//! - `multinomial` with replacement searches each float64 uniform in the
//!   normalised cumulative weights; without replacement (or for a single
//!   sample) it takes the largest `w / e` with `e` from `exponential_`.
//!
//! Strided outputs are walked in memory order (dimensions by decreasing
//! stride), as torch's TensorIterator walks them.

use super::normal::{blocks_f32, blocks_f64};
use super::{gen_or_default, unit_f32, unit_f64, GenState, Generator};
use crate::kernels::access::{lock, slice_mut};
use crate::pool::{install, kernel_threads, PARALLEL_MIN_ELEMS};
use crate::tensor::{result_type, Float};
use crate::{dispatch, dispatch_float, DType, Element, Error, Result, Tensor};
use rayon::prelude::*;
use std::f64::consts::FRAC_1_SQRT_2;
use std::sync::atomic::{AtomicBool, Ordering};

/// Words drawn per batch when filling a tensor.
const BATCH: usize = 2048;

/// Elements per parallel chunk of the Box-Muller transform (a multiple of
/// its block of 16).
const CHUNK: usize = 1 << 14;

/// Floating element types that can be sampled.
pub trait Sample: Float {
    /// The largest finite value, as f64.
    const MAX_F64: f64;
    /// Uniform samples in `[from, to)` (torch's `uniform_` kernel).
    fn uniform_run(g: &Generator, out: &mut [Self], from: f64, to: f64);
    /// Normal samples (torch's `normal_` kernel): 16-element blocks when
    /// `blocks` (a contiguous destination of at least 16), else one at a
    /// time.
    fn normal_run(g: &Generator, out: &mut [Self], mean: f64, std: f64, blocks: bool);
}

/// float32 and float64, whose kernels sample in their own type.
trait Direct: Sample {
    /// Fills `out` with uniforms in `[0, 1)` from the stream.
    fn uniforms(g: &mut GenState, out: &mut [Self]);
    /// `a * b + c` with one rounding.
    fn fma(a: Self, b: Self, c: Self) -> Self;
    /// [Box-Muller blocks] on every whole block of 16 in `data`.
    fn normal_blocks(data: &mut [Self], mean: Self, std: Self);
}

macro_rules! direct_sample {
    ($t:ty) => {
        impl Sample for $t {
            const MAX_F64: f64 = <$t>::MAX as f64;
            fn uniform_run(g: &Generator, out: &mut [$t], from: f64, to: f64) {
                uniform_run(g, out, from as $t, to as $t)
            }
            fn normal_run(g: &Generator, out: &mut [$t], mean: f64, std: f64, blocks: bool) {
                normal_run(g, out, mean, std, blocks)
            }
        }
    };
}
direct_sample!(f32);
direct_sample!(f64);

impl Direct for f32 {
    fn uniforms(g: &mut GenState, out: &mut [f32]) {
        let mut words = [0u32; BATCH];
        for part in out.chunks_mut(BATCH) {
            let w = &mut words[..part.len()];
            g.fill(w);
            for (o, &x) in part.iter_mut().zip(w.iter()) {
                *o = unit_f32(x);
            }
        }
    }
    #[inline(always)]
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    fn normal_blocks(data: &mut [f32], mean: f32, std: f32) {
        blocks_f32(data, mean, std)
    }
}

impl Direct for f64 {
    fn uniforms(g: &mut GenState, out: &mut [f64]) {
        let mut words = [0u32; BATCH];
        for part in out.chunks_mut(BATCH / 2) {
            let w = &mut words[..2 * part.len()];
            g.fill(w);
            for (o, x) in part.iter_mut().zip(w.chunks_exact(2)) {
                *o = unit_f64((u64::from(x[0]) << 32) | u64::from(x[1]));
            }
        }
    }
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    fn normal_blocks(data: &mut [f64], mean: f64, std: f64) {
        blocks_f64(data, mean, std)
    }
}

/// The 16-bit floats sample as torch's kernels for them do, in float32:
/// a uniform is float32's (one word) scaled to `[from, to)` in float32
/// and rounded once (a result equal to `to` becomes `from`); normal
/// samples are float32's Box-Muller blocks rounded once, except that the
/// blocks draw only their own uniforms (whole blocks, then 16 for the
/// redone last block), where float32's kernel draws one per element first.
/// Single normals (small or strided) round float64 draws, as for float32.
macro_rules! half_sample {
    ($t:ty) => {
        impl Sample for $t {
            const MAX_F64: f64 = <$t>::MAX.to_f64_const();
            fn uniform_run(g: &Generator, out: &mut [$t], from: f64, to: f64) {
                let mut wide = vec![0f32; out.len()];
                f32::uniforms(&mut g.lock(), &mut wide);
                let (a, b) = (from as f32, to as f32);
                let (lo, hi) = (<$t>::from_f32_const(a), <$t>::from_f32_const(b));
                for (o, u) in out.iter_mut().zip(wide) {
                    let v = <$t>::from_f32_const(u.mul_add(b - a, a));
                    *o = if v == hi { lo } else { v };
                }
            }
            fn normal_run(g: &Generator, out: &mut [$t], mean: f64, std: f64, blocks: bool) {
                let n = out.len();
                if !(blocks && n >= 16) {
                    return single_normals(g, out, mean, std);
                }
                let whole = n - n % 16;
                let mut wide = vec![0f32; whole];
                let mut tail = [0f32; 16];
                {
                    let mut s = g.lock();
                    f32::uniforms(&mut s, &mut wide);
                    if n % 16 != 0 {
                        f32::uniforms(&mut s, &mut tail);
                    }
                }
                let (m, sd) = (
                    <$t>::from_f64(mean).to_f32_const(),
                    <$t>::from_f64(std).to_f32_const(),
                );
                blocks_f32(&mut wide, m, sd);
                for (o, v) in out.iter_mut().zip(wide) {
                    *o = <$t>::from_f32_const(v);
                }
                if n % 16 != 0 {
                    blocks_f32(&mut tail, m, sd);
                    for (o, v) in out[n - 16..].iter_mut().zip(tail) {
                        *o = <$t>::from_f32_const(v);
                    }
                }
            }
        }
    };
}
half_sample!(crate::f16);
half_sample!(crate::bf16);

/// The dimensions of `t` from outermost to innermost in the order torch
/// walks a written tensor: by decreasing stride, ties in their order.
fn walk_order(t: &Tensor) -> Vec<isize> {
    let strides = t.strides();
    let mut dims: Vec<usize> = (0..t.ndim()).collect();
    dims.sort_by(|&a, &b| strides[b].cmp(&strides[a]));
    dims.into_iter().map(|d| d as isize).collect()
}

/// Runs `fill(run, contiguous)` on the elements of `dst` as one run in
/// walk order: directly when `dst` is contiguous, else through a
/// contiguous temporary copied into `dst` permuted to that order.
fn fill_in_order<T: Element>(
    dst: &Tensor,
    fill: impl FnOnce(&mut [T], bool) -> Result<()>,
) -> Result<()> {
    if dst.is_contiguous() {
        {
            let _g = lock(&[], Some(dst));
            // SAFETY: `dst` is write-locked, of dtype T (callers dispatch
            // on it), and contiguous, hence non-overlapping.
            fill(unsafe { slice_mut::<T>(dst) }, true)?;
        }
        dst.bump_version();
        Ok(())
    } else {
        crate::autograd::check_write(dst)?;
        crate::kernels::iter::check_writable(dst)?;
        let view = dst.permute(&walk_order(dst))?;
        let tmp = fresh::<T>(view.shape(), |run| fill(run, false))?;
        view.copy_(&tmp)
    }
}

/// `out[i] = (u_i < p)` for the next `out.len()` float64 uniforms `u_i`
/// (two words each, high first): the words of `uniform_f64`, drawn in
/// batches. `u = m / 2^53` with `m` the low 53 bits, so `u < p` is the
/// exact integer test `m < ceil(p * 2^53)`.
fn bernoulli_run<T: Element>(g: &mut GenState, out: &mut [T], p: f64) {
    const MASK: u64 = (1 << 53) - 1;
    // `p * 2^53` is exact (a power-of-two scaling of p <= 1), so its
    // ceiling is the first integer not below it.
    let bound = (p * (1u64 << 53) as f64).ceil() as i64;
    let mut words = [0u32; BATCH];
    for part in out.chunks_mut(BATCH / 2) {
        let w = &mut words[..2 * part.len()];
        g.fill(w);
        crate::kernels::isa::dispatch(
            #[inline(always)]
            || {
                for (o, x) in part.iter_mut().zip(w.chunks_exact(2)) {
                    let m = ((u64::from(x[0]) << 32) | u64::from(x[1])) & MASK;
                    *o = T::from_bool((m as i64) < bound);
                }
            },
        );
    }
}

/// A new contiguous tensor filled by `fill`.
fn fresh<T: Element>(shape: &[usize], fill: impl FnOnce(&mut [T]) -> Result<()>) -> Result<Tensor> {
    let out = Tensor::try_empty(shape, T::DTYPE)?;
    {
        let _g = lock(&[], Some(&out));
        // SAFETY: `out` is fresh, contiguous, write-locked and of dtype T.
        fill(unsafe { slice_mut::<T>(&out) })?;
    }
    Ok(out)
}

/// Uniforms in `[from, to)` (torch's `uniform_` kernel).
fn uniform_run<T: Direct>(g: &Generator, out: &mut [T], from: T, to: T) {
    T::uniforms(&mut g.lock(), out);
    if from == T::zero() && to == T::one() {
        return; // u * 1 + 0 is u, and u < 1
    }
    let range = to - from;
    for o in out.iter_mut() {
        let v = T::fma(*o, range, from);
        *o = if v == to { from } else { v };
    }
}

/// Normal samples (torch's `normal_` kernel): 16-element blocks when
/// `blocks` (a contiguous destination of at least 16), else one at a time.
fn normal_run<T: Direct>(g: &Generator, out: &mut [T], mean: f64, std: f64, blocks: bool) {
    let n = out.len();
    if !(blocks && n >= 16) {
        return single_normals(g, out, mean, std);
    }
    let mut tail = [T::zero(); 16];
    {
        let mut s = g.lock();
        T::uniforms(&mut s, out);
        if !n.is_multiple_of(16) {
            T::uniforms(&mut s, &mut tail);
        }
    }
    let (m, sd) = (T::from_f64(mean), T::from_f64(std));
    let whole = n - n % 16;
    if whole >= PARALLEL_MIN_ELEMS && kernel_threads() > 1 {
        install(|| {
            out[..whole]
                .par_chunks_mut(CHUNK)
                .for_each(|c| T::normal_blocks(c, m, sd));
        });
    } else {
        T::normal_blocks(&mut out[..whole], m, sd);
    }
    if !n.is_multiple_of(16) {
        T::normal_blocks(&mut tail, m, sd);
        out[n - 16..].copy_from_slice(&tail);
    }
}

/// Normal samples one float64 draw at a time, each rounded to `T` (small
/// or strided destinations).
fn single_normals<T: Element>(g: &Generator, out: &mut [T], mean: f64, std: f64) {
    let mut s = g.lock();
    for o in out.iter_mut() {
        *o = T::from_f64(s.normal_f64(mean, std));
    }
}

/// Which integers `random_` draws.
#[derive(Clone, Copy, Debug)]
enum IntRange {
    /// `[from, from + range)`, `range` in `1..2^64`.
    Span { from: i64, range: u64 },
    /// Every int64 (64 raw bits).
    Full,
    /// `random_()` without bounds: every integer the dtype holds exactly.
    Dtype,
}

/// Integers (torch's `random_` kernels), stored as `T`.
fn int_run<T: Element>(s: &mut GenState, out: &mut [T], r: IntRange) {
    let dt = T::DTYPE;
    match r {
        IntRange::Span { from, range } => {
            // torch takes 64 bits from 2^28 on, to keep the bias of `%`
            // small.
            let wide = range >= 1 << 28;
            for o in out.iter_mut() {
                let v = if wide {
                    s.random64()
                } else {
                    u64::from(s.random())
                };
                *o = T::from_i64(((v % range) as i64).wrapping_add(from));
            }
        }
        IntRange::Full => {
            for o in out.iter_mut() {
                *o = T::from_i64(s.random64() as i64);
            }
        }
        IntRange::Dtype => {
            for o in out.iter_mut() {
                let v = match dt {
                    DType::Bool => u64::from(s.random() & 1),
                    DType::UInt8 => u64::from(s.random()) % (1 << 8),
                    DType::Int8 => u64::from(s.random()) % (1 << 7),
                    DType::Int16 => u64::from(s.random()) % (1 << 15),
                    DType::Int32 => u64::from(s.random()) % (1 << 31),
                    DType::Int64 => s.random64() % (1 << 63),
                    DType::Float16 => u64::from(s.random()) % ((1 << 11) + 1),
                    DType::BFloat16 => u64::from(s.random()) % ((1 << 8) + 1),
                    DType::Float32 | DType::Complex64 => u64::from(s.random()) % ((1 << 24) + 1),
                    DType::Float64 | DType::Complex128 => s.random64() % ((1 << 53) + 1),
                };
                *o = T::from_i64(v as i64);
            }
        }
    }
}

/// `shape` with a trailing 2: the real pairs of a complex tensor.
fn pairs(shape: &[usize]) -> Vec<usize> {
    let mut s = shape.to_vec();
    s.push(2);
    s
}

fn not_floating(op: &str, dtype: DType) -> Error {
    Error::runtime(format!(
        "\"{op}\" not implemented for '{}' (a floating dtype is required)",
        dtype
    ))
}

/// The inclusive integer range a dtype can hold exactly: what `random_`
/// samples without bounds, and the bounds `randint` checks.
fn dtype_int_range(dtype: DType) -> (i128, i128) {
    match dtype {
        DType::Bool => (0, 1),
        DType::UInt8 => (0, u8::MAX as i128),
        DType::Int8 => (i8::MIN as i128, i8::MAX as i128),
        DType::Int16 => (i16::MIN as i128, i16::MAX as i128),
        DType::Int32 => (i32::MIN as i128, i32::MAX as i128),
        DType::Int64 => (i64::MIN as i128, i64::MAX as i128),
        DType::Float16 => (-(1 << 11), 1 << 11),
        DType::BFloat16 => (-(1 << 8), 1 << 8),
        DType::Float32 | DType::Complex64 => (-(1 << 24), 1 << 24),
        DType::Float64 | DType::Complex128 => (-(1 << 53), 1 << 53),
    }
}

fn check_random_range(dtype: DType, from: i128, to: i128) -> Result<()> {
    if dtype.is_complex() {
        return Err(Error::not_implemented("random_from_to", dtype));
    }
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
        crate::autograd::captured!(Tensor::rand (shape: &[usize], dtype: DType, g: Option<&Generator>) -> Tensor {
            if dtype.is_complex() {
                // Both parts uniform, drawn in memory order as real pairs.
                return Tensor::pairs_to_complex(Tensor::rand(&pairs(shape), dtype.to_real(), g)?);
            }
            let g = gen_or_default(g);
            dispatch_float!(dtype, T => fresh::<T>(shape, |out| {
                T::uniform_run(g, out, 0.0, 1.0);
                Ok(())
            }), else Err(not_floating("check_uniform_bounds", dtype)))
        })
    }

    /// `randn(shape)`: standard normal samples of a floating `dtype`.
    pub fn randn(shape: &[usize], dtype: DType, g: Option<&Generator>) -> Result<Tensor> {
        Tensor::normal(0.0, 1.0, shape, dtype, g)
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
        crate::autograd::captured!(Tensor::randint (low: i64, high: i64, shape: &[usize], dtype: DType, g: Option<&Generator>) -> Tensor {
            check_random_range(dtype, low as i128, high as i128)?;
            let r = IntRange::Span {
                from: low,
                range: (high as i128 - low as i128) as u64,
            };
            let g = gen_or_default(g);
            dispatch!(dtype, T => fresh::<T>(shape, |out| {
                int_run(&mut g.lock(), out, r);
                Ok(())
            }))
        })
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
        let mut perm: Vec<i64> = Vec::new();
        if perm.try_reserve_exact(n as usize).is_err() {
            return Err(Error::runtime(format!(
                "can't allocate memory: randperm(n = {n}) needs {} bytes",
                n as u128 * 8
            )));
        }
        let mut s = gen_or_default(g).lock();
        if n < i64::from(u32::MAX / 20) {
            // Position i swaps with a uniform position in i..n.
            perm.extend(0..n);
            for i in 0..(n - 1).max(0) {
                let z = i64::from(s.random()) % (n - i);
                perm.swap(i as usize, (i + z) as usize);
            }
        } else {
            // Inside-out: i goes to a uniform position in 0..=i, whose
            // value moves to the end.
            for i in 0..n {
                let z = (s.random64() % (i as u64 + 1)) as usize;
                perm.push(i);
                perm.swap(i as usize, z);
            }
        }
        drop(s);
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
        crate::autograd::captured!(Tensor::normal (mean: f64, std: f64, shape: &[usize], dtype: DType, g: Option<&Generator>) -> Tensor {
            check_std(std)?;
            if dtype.is_complex() {
                // Each part takes half the variance, as torch's complex normal.
                let real =
                    Tensor::normal(mean, std * FRAC_1_SQRT_2, &pairs(shape), dtype.to_real(), g)?;
                return Tensor::pairs_to_complex(real);
            }
            let g = gen_or_default(g);
            dispatch_float!(dtype, T => fresh::<T>(shape, |out| {
                T::normal_run(g, out, mean, std, true);
                Ok(())
            }), else Err(not_floating("normal_kernel_cpu", dtype)))
        })
    }

    /// `normal(mean, std)` with tensor parameters (broadcast together):
    /// standard normal samples `z`, then `z * std + mean` (two roundings,
    /// as torch computes it).
    pub fn normal_tensor(mean: &Tensor, std: &Tensor, g: Option<&Generator>) -> Result<Tensor> {
        let dt = result_type(&[mean.promotion_operand(), std.promotion_operand()]);
        let shape = crate::broadcast_shapes(mean.shape(), std.shape())?;
        let z = Tensor::randn(&shape, dt, g)?;
        if dt.is_complex() && !std.dtype().is_complex() {
            // A complex normal: each part has variance std^2 / 2, as
            // complex `randn` draws them.
            if std.to_vec::<f64>().iter().any(|s| s.is_nan() || *s < 0.0) {
                return Err(Error::runtime("normal expects all elements of std >= 0.0"));
            }
            return z.mul(std)?.add(mean);
        }
        let bad = AtomicBool::new(false);
        let out = dispatch_float!(dt, T => crate::kernels::iter::map3::<T, T, T, T>(
            &mean.to_dtype(dt),
            &std.to_dtype(dt),
            &z,
            |m, s, z| {
                if s.is_nan() || s < T::zero() {
                    bad.store(true, Ordering::Relaxed);
                }
                z * s + m
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
        if dt.is_complex() {
            return Err(Error::not_implemented("bernoulli_tensor_cpu_self_", dt));
        }
        if !dt.is_floating_point() {
            return Err(not_floating("bernoulli_tensor_cpu_p_", dt));
        }
        let out = Tensor::try_empty(self.shape(), dt)?;
        out.bernoulli_tensor_(self, g)?;
        Ok(out)
    }

    /// `bernoulli(p)`: 0/1 samples of `self`'s shape and dtype, each 1 with
    /// probability `p`.
    pub fn bernoulli_p(&self, p: f64, g: Option<&Generator>) -> Result<Tensor> {
        check_p(p)?;
        let out = Tensor::try_empty(self.shape(), self.dtype())?;
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
        let dt = self.dtype();
        if !dt.is_floating_point() {
            return Err(Error::runtime(format!(
                "multinomial only supports floating-point dtypes for input, got: {}",
                dt.scalar_type_name()
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
        let g = gen_or_default(g);
        let out = dispatch_float!(dt, T => if replacement && ns != 1 {
            multinomial_search::<T>(&self.contiguous().to_vec::<T>(), k, ns, g)
        } else {
            multinomial_race::<T>(self, k, ns, g)?
        }, else unreachable!("checked floating above"));
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
        if dt.is_complex() {
            return self.real_pairs().uniform_(from, to, g);
        }
        let g = gen_or_default(g);
        dispatch_float!(dt, T => {
            if (to - from).is_nan() || to - from > T::MAX_F64 {
                return Err(Error::runtime(format!(
                    "uniform_ expects to-from <= std::numeric_limits<{dt}>::max(), but found to={to} and from={from}"
                )));
            }
            fill_in_order::<T>(self, |out, _| {
                T::uniform_run(g, out, from, to);
                Ok(())
            })
        }, else Err(not_floating("check_uniform_bounds", dt)))
    }

    /// `normal_(mean, std)`: fills with normal samples.
    pub fn normal_(&self, mean: f64, std: f64, g: Option<&Generator>) -> Result<()> {
        check_std(std)?;
        let dt = self.dtype();
        if dt.is_complex() {
            return self.real_pairs().normal_(mean, std * FRAC_1_SQRT_2, g);
        }
        let g = gen_or_default(g);
        dispatch_float!(dt, T => fill_in_order::<T>(self, |out, contiguous| {
            T::normal_run(g, out, mean, std, contiguous);
            Ok(())
        }), else Err(not_floating("normal_kernel_cpu", dt)))
    }

    /// `random_(from, to)`: fills with integers uniform in `[from, to)`.
    /// Without either bound, every integer the dtype holds exactly
    /// (`[0, 2^24]` for float32, `[0, 2^53]` for float64, the non-negative
    /// values for integers, both values for bool); with only `from`, up to
    /// that largest value inclusive.
    pub fn random_(&self, from: Option<i64>, to: Option<i64>, g: Option<&Generator>) -> Result<()> {
        let dt = self.dtype();
        if dt.is_complex() {
            return Err(Error::not_implemented("random_", dt));
        }
        let r = match (from, to) {
            (None, None) => IntRange::Dtype,
            (Some(i64::MIN), None)
                if matches!(dt, DType::Int64 | DType::Float32 | DType::Float64) =>
            {
                IntRange::Full
            }
            (f, t) => {
                let f = f.unwrap_or(0) as i128;
                let t = match t {
                    Some(t) => t as i128,
                    None => dtype_int_range(dt).1.min(i64::MAX as i128) + 1,
                };
                check_random_range(dt, f, t)?;
                IntRange::Span {
                    from: f as i64,
                    range: (t - f) as u64,
                }
            }
        };
        let g = gen_or_default(g);
        dispatch!(dt, T => fill_in_order::<T>(self, |out, _| {
            int_run(&mut g.lock(), out, r);
            Ok(())
        }))
    }

    /// `bernoulli_(p)`: fills with 1 with probability `p`, else 0 (one
    /// float64 uniform per element).
    pub fn bernoulli_(&self, p: f64, g: Option<&Generator>) -> Result<()> {
        crate::autograd::captured!(bernoulli_ (&self, p: f64, g: Option<&Generator>) -> () {
            check_p(p)?;
            if self.dtype().is_complex() {
                return Err(Error::not_implemented(
                    "bernoulli_scalar_cpu_",
                    self.dtype(),
                ));
            }
            let g = gen_or_default(g);
            dispatch!(self.dtype(), T => fill_in_order::<T>(self, |out, _| {
                bernoulli_run(&mut g.lock(), out, p);
                Ok(())
            }))
        })
    }

    /// `bernoulli_(p)` with a floating tensor of probabilities broadcast to
    /// `self`: one uniform per element, float64 when `p` is float64 and
    /// float32 otherwise.
    pub fn bernoulli_tensor_(&self, p: &Tensor, g: Option<&Generator>) -> Result<()> {
        let pdt = p.dtype();
        if self.dtype().is_complex() {
            return Err(Error::not_implemented(
                "bernoulli_tensor_cpu_self_",
                self.dtype(),
            ));
        }
        if !pdt.is_floating_point() {
            return Err(not_floating("bernoulli_tensor_cpu_p_", pdt));
        }
        // The probabilities in the order `self` is walked.
        let probs = p
            .broadcast_to(self.shape())?
            .permute(&walk_order(self))?
            .contiguous()
            .to_vec::<f64>();
        if probs.iter().any(|p| !(0.0..=1.0).contains(p)) {
            return Err(Error::runtime(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
            ));
        }
        let g = gen_or_default(g);
        dispatch!(self.dtype(), T => fill_in_order::<T>(self, |out, _| {
            let mut s = g.lock();
            if pdt == DType::Float64 {
                for (o, &p) in out.iter_mut().zip(&probs) {
                    *o = T::from_bool(s.uniform_f64() < p);
                }
            } else {
                for (o, &p) in out.iter_mut().zip(&probs) {
                    *o = T::from_bool(s.uniform_f32() < p as f32);
                }
            }
            Ok(())
        }))
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
        dispatch_float!(dt, T => fill_in_order::<T>(self, |out, _| {
            exponential_run(&mut g.lock(), out, lambd);
            Ok(())
        }), else Err(Error::runtime(format!(
            "Exponential distribution is a continuous probability distribution. dtype must be a floating point but you specified {}",
            dt.scalar_type_name()
        ))))
    }
}

/// Exponential samples `-ln(1 - u) / lambd` from float64 uniforms.
fn exponential_run<T: Element>(s: &mut GenState, out: &mut [T], lambd: f64) {
    let scale = -1.0 / lambd;
    for o in out.iter_mut() {
        *o = T::from_f64(scale * (-s.uniform_f64()).ln_1p());
    }
}

/// Multinomial with replacement: for each row, the cumulative weights
/// (summed and normalised in `T`), then per sample the first category
/// whose cumulative weight is not below a float64 uniform.
fn multinomial_search<T: Sample>(w: &[T], k: usize, ns: usize, g: &Generator) -> Vec<i64> {
    let mut out = Vec::with_capacity(w.len() / k * ns);
    let mut cum = vec![T::zero(); k];
    let mut s = g.lock();
    for row in w.chunks(k) {
        let mut sum = T::zero();
        for (c, &p) in cum.iter_mut().zip(row) {
            sum = sum + p;
            *c = sum;
        }
        for c in cum.iter_mut() {
            *c = *c / sum;
        }
        cum[k - 1] = T::one();
        for _ in 0..ns {
            let u = s.uniform_f64();
            out.push(cum.partition_point(|c| c.to_f64() < u) as i64);
        }
    }
    out
}

/// Multinomial without replacement (or one sample): `e` exponential of
/// rate 1 for every weight, then per row the `ns` largest `w / e` (in
/// decreasing order; the earlier category first among equal keys).
fn multinomial_race<T: Sample>(
    weights: &Tensor,
    k: usize,
    ns: usize,
    g: &Generator,
) -> Result<Vec<i64>> {
    let w = weights.contiguous().to_vec::<T>();
    let mut e = vec![T::zero(); w.len()];
    exponential_run(&mut g.lock(), &mut e, 1.0);
    let mut out = Vec::with_capacity(w.len() / k * ns);
    let mut keys: Vec<(T, usize)> = Vec::with_capacity(k);
    for (row, es) in w.chunks(k).zip(e.chunks(k)) {
        keys.clear();
        keys.extend(
            row.iter()
                .zip(es)
                .enumerate()
                .map(|(i, (&p, &q))| (p / q, i)),
        );
        keys.sort_by(|a, b| {
            b.0.partial_cmp(&a.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.1.cmp(&b.1))
        });
        out.extend(keys.iter().take(ns).map(|&(_, i)| i as i64));
    }
    Ok(out)
}
