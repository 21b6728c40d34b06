//! Discrete Fourier transforms on the `rustfft` and `realfft` crates:
//! complex-to-complex over any dims, real-to-complex (the half spectrum
//! along one dim, then complex over the rest) and complex-to-real (its
//! inverse), with torch's three normalizations.
//!
//! A kernel copies its input into one contiguous buffer and transforms it
//! one dim at a time. Along a dim, a *lane* is the line of elements that
//! differ only in that dim's index. Lanes of the innermost dim are runs of
//! the buffer and are transformed where they lie; lanes of an outer dim
//! are gathered into a scratch block, transformed and written back. Groups
//! of lanes are split over the pool for large inputs. Plans are made once
//! per length and direction and kept (the planners cache them).
//!
//! No argument checks here: the ops (`ops::fft`) pass dims in range, the
//! complex input of a complex-to-real transform with `n / 2 + 1` elements
//! along its last dim, and dtypes of the right kind.

use crate::pool::{kernel_threads, par_for, SyncPtr, PARALLEL_MIN_ELEMS};
use crate::{Complex, DType, Element, Result, Tensor};
use parking_lot::Mutex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{Fft, FftDirection, FftNum, FftPlanner};
use std::sync::{Arc, OnceLock};

/// How a transform scales its result (torch's `fft_norm_mode`): by 1, by
/// `1 / sqrt(N)` or by `1 / N`, `N` the number of points transformed
/// (the product of the signal sizes over the transformed dims).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FftNorm {
    /// No scaling.
    None,
    /// Scaled by `1 / sqrt(N)` (`norm="ortho"` either way).
    ByRootN,
    /// Scaled by `1 / N` (`norm="backward"` on an inverse transform,
    /// `norm="forward"` on a forward one).
    ByN,
}

impl FftNorm {
    /// torch's integer code of the mode (0, 1, 2).
    pub fn code(self) -> i64 {
        match self {
            FftNorm::None => 0,
            FftNorm::ByRootN => 1,
            FftNorm::ByN => 2,
        }
    }

    /// The mode of torch's integer code.
    pub fn from_code(code: i64) -> Option<FftNorm> {
        match code {
            0 => Some(FftNorm::None),
            1 => Some(FftNorm::ByRootN),
            2 => Some(FftNorm::ByN),
            _ => None,
        }
    }

    /// The factor for a transform of `points` points.
    fn factor(self, points: usize) -> f64 {
        match self {
            FftNorm::None => 1.0,
            FftNorm::ByRootN => 1.0 / (points as f64).sqrt(),
            FftNorm::ByN => 1.0 / points as f64,
        }
    }
}

/// Elements per task when lanes are split over the pool.
const TASK_ELEMS: usize = 1 << 14;

/// The plan caches of one float type.
struct Planners<T: FftNum> {
    complex: Mutex<FftPlanner<T>>,
    real: Mutex<RealFftPlanner<T>>,
}

impl<T: FftNum> Planners<T> {
    fn new() -> Self {
        Planners {
            complex: Mutex::new(FftPlanner::new()),
            real: Mutex::new(RealFftPlanner::new()),
        }
    }
}

/// The float types the transforms run in (the parts of complex64 and
/// complex128).
trait FftFloat: FftNum + Element
where
    Complex<Self>: Element,
{
    fn planners() -> &'static Planners<Self>;

    fn complex_plan(n: usize, inverse: bool) -> Arc<dyn Fft<Self>> {
        let dir = if inverse {
            FftDirection::Inverse
        } else {
            FftDirection::Forward
        };
        Self::planners().complex.lock().plan_fft(n, dir)
    }

    fn r2c_plan(n: usize) -> Arc<dyn RealToComplex<Self>> {
        Self::planners().real.lock().plan_fft_forward(n)
    }

    fn c2r_plan(n: usize) -> Arc<dyn ComplexToReal<Self>> {
        Self::planners().real.lock().plan_fft_inverse(n)
    }

    fn of_f64(x: f64) -> Self;

    fn czero() -> Complex<Self> {
        Complex::new(Self::of_f64(0.0), Self::of_f64(0.0))
    }
}

impl FftFloat for f32 {
    fn planners() -> &'static Planners<f32> {
        static P: OnceLock<Planners<f32>> = OnceLock::new();
        P.get_or_init(Planners::new)
    }
    fn of_f64(x: f64) -> f32 {
        x as f32
    }
}

impl FftFloat for f64 {
    fn planners() -> &'static Planners<f64> {
        static P: OnceLock<Planners<f64>> = OnceLock::new();
        P.get_or_init(Planners::new)
    }
    fn of_f64(x: f64) -> f64 {
        x
    }
}

/// The lanes of `dim` in a contiguous buffer of `shape`: their length, the
/// distance between a lane's elements, and how many there are.
#[derive(Clone, Copy)]
struct Lanes {
    n: usize,
    inner: usize,
    count: usize,
}

impl Lanes {
    fn of(shape: &[usize], dim: usize) -> Lanes {
        let n = shape[dim];
        let inner: usize = shape[dim + 1..].iter().product();
        let total: usize = shape.iter().product();
        Lanes {
            n,
            inner,
            count: total.checked_div(n).unwrap_or(0),
        }
    }

    /// The buffer index of element 0 of lane `l`.
    fn start(self, l: usize) -> usize {
        (l / self.inner) * self.n * self.inner + l % self.inner
    }
}

/// Runs `task(first_lane, lane_count)` over `count` lanes of `len` elements
/// each, in groups, on the pool when the work is large enough.
fn for_lane_groups(count: usize, len: usize, task: &(dyn Fn(usize, usize) + Sync)) {
    let per = (TASK_ELEMS / len.max(1)).max(1);
    let groups = count.div_ceil(per);
    let body = |g: usize| {
        let l0 = g * per;
        task(l0, per.min(count - l0));
    };
    if count * len >= PARALLEL_MIN_ELEMS && kernel_threads() > 1 && groups > 1 {
        par_for(groups, 1, &body);
    } else {
        (0..groups).for_each(body);
    }
}

/// Complex transform of `data` (contiguous, of `shape`) along `dim`, in place.
fn c2c_dim<T: FftFloat>(data: &mut [Complex<T>], shape: &[usize], dim: usize, inverse: bool)
where
    Complex<T>: Element,
{
    let lanes = Lanes::of(shape, dim);
    if lanes.n <= 1 || lanes.count == 0 {
        return;
    }
    let n = lanes.n;
    let fft = T::complex_plan(n, inverse);
    let zero = T::czero();
    let ptr = SyncPtr(data.as_mut_ptr());
    for_lane_groups(lanes.count, n, &|l0, nl| {
        let mut scratch = vec![zero; fft.get_inplace_scratch_len()];
        if lanes.inner == 1 {
            // SAFETY: with `dim` innermost, lanes `l0..l0 + nl` are the
            // elements `l0 * n..(l0 + nl) * n` of `data`, which outlives the
            // loop and which only this group touches.
            let run = unsafe { std::slice::from_raw_parts_mut(ptr.at(l0 * n), nl * n) };
            fft.process_with_scratch(run, &mut scratch);
            return;
        }
        let mut block = vec![zero; nl * n];
        for j in 0..nl {
            let s = lanes.start(l0 + j);
            for k in 0..n {
                // SAFETY: `s + k * inner` is an element of lane `l0 + j`,
                // inside `data`; the lanes of a group are its own.
                block[j * n + k] = unsafe { *ptr.at(s + k * lanes.inner) };
            }
        }
        fft.process_with_scratch(&mut block, &mut scratch);
        for j in 0..nl {
            let s = lanes.start(l0 + j);
            for k in 0..n {
                // SAFETY: as for the gather above.
                unsafe { *ptr.at(s + k * lanes.inner) = block[j * n + k] };
            }
        }
    });
}

/// Multiplies every element by `factor` (skipped when it is 1).
fn scale<T: FftFloat, E: Copy + std::ops::Mul<T, Output = E>>(data: &mut [E], factor: f64)
where
    Complex<T>: Element,
{
    if factor != 1.0 {
        let f = T::of_f64(factor);
        data.iter_mut().for_each(|v| *v = *v * f);
    }
}

/// The elements of `x` in row-major order, as `T` (`x` already of that
/// dtype), in a buffer of the kernel's own.
fn dense<T: Element>(x: &Tensor) -> Vec<T> {
    x.to_vec::<T>()
}

fn points(shape: &[usize], dims: &[usize]) -> usize {
    dims.iter().map(|&d| shape[d]).product()
}

fn c2c_typed<T: FftFloat>(
    x: &Tensor,
    dims: &[usize],
    norm: FftNorm,
    forward: bool,
) -> Result<Tensor>
where
    Complex<T>: Element,
{
    let shape = x.shape().to_vec();
    let mut data = dense::<Complex<T>>(x);
    for &d in dims {
        c2c_dim::<T>(&mut data, &shape, d, !forward);
    }
    scale::<T, _>(&mut data, norm.factor(points(&shape, dims)));
    Tensor::from_slice(&data, &shape)
}

/// The complex transform of `x` (complex64 or complex128) over `dims`:
/// forward (`e^{-2 pi i jk / n}`) or inverse, unnormalized before `norm`.
pub(crate) fn c2c(x: &Tensor, dims: &[usize], norm: FftNorm, forward: bool) -> Result<Tensor> {
    match x.dtype() {
        DType::Complex64 => c2c_typed::<f32>(x, dims, norm, forward),
        _ => c2c_typed::<f64>(x, dims, norm, forward),
    }
}

fn r2c_typed<T: FftFloat>(x: &Tensor, dims: &[usize], norm: FftNorm) -> Result<Tensor>
where
    Complex<T>: Element,
{
    let shape = x.shape().to_vec();
    let last = dims[dims.len() - 1];
    let n = shape[last];
    let h = n / 2 + 1;
    let mut out_shape = shape.clone();
    out_shape[last] = h;
    let zero = T::czero();
    let mut out = vec![zero; out_shape.iter().product()];
    let src = Lanes::of(&shape, last);
    if src.count > 0 && n > 0 {
        let dst = Lanes::of(&out_shape, last);
        let input = dense::<T>(x);
        let plan = T::r2c_plan(n);
        let optr = SyncPtr(out.as_mut_ptr());
        for_lane_groups(src.count, n, &|l0, nl| {
            let mut line = vec![T::of_f64(0.0); n];
            let mut spectrum = vec![zero; h];
            let mut scratch = vec![zero; plan.get_scratch_len()];
            for l in l0..l0 + nl {
                let s = src.start(l);
                for (k, v) in line.iter_mut().enumerate() {
                    *v = input[s + k * src.inner];
                }
                // Lengths are right by construction: no error to report.
                let _ = plan.process_with_scratch(&mut line, &mut spectrum, &mut scratch);
                let o = dst.start(l);
                for (k, v) in spectrum.iter().enumerate() {
                    // SAFETY: `o + k * inner` is an element of lane `l` of
                    // `out`, which outlives the loop; the lanes of a group
                    // are its own.
                    unsafe { *optr.at(o + k * dst.inner) = *v };
                }
            }
        });
        for &d in &dims[..dims.len() - 1] {
            c2c_dim::<T>(&mut out, &out_shape, d, false);
        }
    }
    scale::<T, _>(&mut out, norm.factor(points(&shape, dims)));
    Tensor::from_slice(&out, &out_shape)
}

/// The real-to-complex transform of `x` (float32 or float64) over `dims`:
/// the last of `dims` keeps its `n / 2 + 1` non-negative frequencies
/// (`onesided`) or all `n` of them.
pub(crate) fn r2c(x: &Tensor, dims: &[usize], norm: FftNorm, onesided: bool) -> Result<Tensor> {
    if !onesided {
        // The full spectrum of a real signal is its complex transform.
        return c2c(&x.to_dtype(x.dtype().to_complex()), dims, norm, true);
    }
    match x.dtype() {
        DType::Float32 => r2c_typed::<f32>(x, dims, norm),
        _ => r2c_typed::<f64>(x, dims, norm),
    }
}

fn c2r_typed<T: FftFloat>(x: &Tensor, dims: &[usize], norm: FftNorm, n: usize) -> Result<Tensor>
where
    Complex<T>: Element,
{
    let shape = x.shape().to_vec();
    let last = dims[dims.len() - 1];
    let h = shape[last];
    let mut out_shape = shape.clone();
    out_shape[last] = n;
    let mut out = vec![T::of_f64(0.0); out_shape.iter().product()];
    let src = Lanes::of(&shape, last);
    if src.count > 0 && n > 0 {
        let mut spectrum = dense::<Complex<T>>(x);
        for &d in &dims[..dims.len() - 1] {
            c2c_dim::<T>(&mut spectrum, &shape, d, true);
        }
        let dst = Lanes::of(&out_shape, last);
        let plan = T::c2r_plan(n);
        let zero = T::czero();
        let optr = SyncPtr(out.as_mut_ptr());
        let spectrum = &spectrum;
        for_lane_groups(src.count, h, &|l0, nl| {
            let mut line = vec![zero; n / 2 + 1];
            let mut signal = vec![T::of_f64(0.0); n];
            let mut scratch = vec![zero; plan.get_scratch_len()];
            for l in l0..l0 + nl {
                let s = src.start(l);
                for (k, v) in line.iter_mut().enumerate() {
                    *v = spectrum[s + k * src.inner];
                }
                // A real signal's spectrum is real at frequency 0 (and at
                // n / 2 for even n): the imaginary parts there are ignored.
                line[0].im = T::of_f64(0.0);
                if n.is_multiple_of(2) {
                    line[n / 2].im = T::of_f64(0.0);
                }
                // Lengths are right and the parts above zeroed: no error.
                let _ = plan.process_with_scratch(&mut line, &mut signal, &mut scratch);
                let o = dst.start(l);
                for (k, v) in signal.iter().enumerate() {
                    // SAFETY: `o + k * inner` is an element of lane `l` of
                    // `out`, which outlives the loop; the lanes of a group
                    // are its own.
                    unsafe { *optr.at(o + k * dst.inner) = *v };
                }
            }
        });
    }
    scale::<T, T>(&mut out, norm.factor(points(&out_shape, dims)));
    Tensor::from_slice(&out, &out_shape)
}

/// The complex-to-real transform of `x` (complex64 or complex128, with
/// `n / 2 + 1` elements along the last of `dims`): the inverse complex
/// transform over the other dims, then the real signal of `n` points whose
/// half spectrum the last dim holds.
pub(crate) fn c2r(x: &Tensor, dims: &[usize], norm: FftNorm, n: usize) -> Result<Tensor> {
    match x.dtype() {
        DType::Complex64 => c2r_typed::<f32>(x, dims, norm, n),
        _ => c2r_typed::<f64>(x, dims, norm, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transform by its definition, `sum_j x_j e^{-+2 pi i jk / n}`.
    fn naive(x: &[Complex<f64>], inverse: bool) -> Vec<Complex<f64>> {
        let n = x.len();
        let sign = if inverse { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .fold(Complex::new(0.0, 0.0), |acc, (j, v)| {
                        let a = sign * 2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                        acc + v * Complex::new(a.cos(), a.sin())
                    })
            })
            .collect()
    }

    fn signal(n: usize) -> Vec<Complex<f64>> {
        (0..n)
            .map(|i| Complex::new((i as f64 * 0.7).sin(), (i as f64 * 1.3).cos()))
            .collect()
    }

    #[test]
    fn c2c_along_an_outer_dim_matches_the_definition() {
        // 5 x 3: transform along dim 0 (lanes with stride 3).
        let x = signal(15);
        let t = Tensor::from_slice(&x, &[5, 3]).unwrap();
        let y = c2c(&t, &[0], FftNorm::None, true)
            .unwrap()
            .to_vec::<Complex<f64>>();
        for c in 0..3 {
            let lane: Vec<_> = (0..5).map(|r| x[r * 3 + c]).collect();
            let want = naive(&lane, false);
            for r in 0..5 {
                assert!((y[r * 3 + c] - want[r]).norm() < 1e-12);
            }
        }
    }

    #[test]
    fn r2c_then_c2r_round_trips_with_norm_by_n() {
        for n in [1usize, 2, 7, 8, 12] {
            let x: Vec<f64> = (0..2 * n).map(|i| (i as f64 * 0.37).sin()).collect();
            let t = Tensor::from_slice(&x, &[2, n]).unwrap();
            let s = r2c(&t, &[0, 1], FftNorm::None, true).unwrap();
            assert_eq!(s.shape(), &[2, n / 2 + 1]);
            let back = c2r(&s, &[0, 1], FftNorm::ByN, n).unwrap().to_vec::<f64>();
            for (a, b) in back.iter().zip(&x) {
                assert!((a - b).abs() < 1e-12, "n = {n}");
            }
        }
    }

    #[test]
    fn norm_codes_round_trip() {
        for m in [FftNorm::None, FftNorm::ByRootN, FftNorm::ByN] {
            assert_eq!(FftNorm::from_code(m.code()), Some(m));
        }
        assert_eq!(FftNorm::from_code(3), None);
    }
}
