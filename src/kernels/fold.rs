//! The folds of the standard reductions and the kernels built on them.
//!
//! A fold says how one reduction combines the elements of a row (see
//! [`Fold`]); the loop driver in `reduce` runs it. Sums and products
//! accumulate in `f64` for floating results and in wrapping `i64`
//! otherwise ([`Arith`]); max-like folds let NaN win.

use super::arith::Arith;
use super::copy::cast;
use super::iter::{map1, map2};
use super::reduce::{out_shape, output, reduce, reshaped, Fold, LANES};
use crate::{dispatch, dispatch_float, DType, Element, Error, Result, Tensor};
use std::marker::PhantomData;

/// Number of elements each output of a reduction over `mask` combines.
pub(crate) fn reduced_count(shape: &[usize], mask: &[bool]) -> usize {
    shape
        .iter()
        .zip(mask)
        .filter(|(_, &r)| r)
        .map(|(&n, _)| n)
        .product()
}

/// `x != x`: true only for NaN (works for every element type).
#[inline(always)]
#[allow(clippy::eq_op)]
pub(crate) fn is_nan<T: PartialEq>(x: T) -> bool {
    x != x
}

/// The smallest and largest values of an element type (infinities for
/// floats): identities of max and min.
pub(crate) trait Bounds: crate::RealElement {
    const LOWEST: Self;
    const HIGHEST: Self;
}
impl Bounds for bool {
    const LOWEST: Self = false;
    const HIGHEST: Self = true;
}
macro_rules! int_bounds {
    ($($t:ty),*) => {$(
        impl Bounds for $t {
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
        }
    )*};
}
int_bounds!(u8, i8, i16, i32, i64);
macro_rules! float_bounds {
    ($($t:ty),*) => {$(
        impl Bounds for $t {
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
        }
    )*};
}
float_bounds!(f32, f64, crate::f16, crate::bf16);

/// Sum in accumulator type `A` (f64 or wrapping i64).
struct SumF<A>(PhantomData<A>);
impl<A> SumF<A> {
    fn new() -> Self {
        SumF(PhantomData)
    }
}
impl<T: Element, A: Arith> Fold<T> for SumF<A> {
    type Acc = A;
    #[inline(always)]
    fn init(&self) -> A {
        A::zero()
    }
    #[inline(always)]
    fn step(&self, acc: A, x: T, _: usize) -> A {
        A::add(acc, A::cast_from(x))
    }
    #[inline(always)]
    fn merge(&self, a: A, b: A) -> A {
        A::add(a, b)
    }
}

/// Sum of float32 elements, accumulated in float64 (as [`SumF`]) but with
/// the first additions done in float32: each of the [`LANES`] lanes adds
/// [`F32_STEPS`] elements in float32 before its partial sum joins the
/// lane's float64 accumulator. Converting every element to float64 was
/// the bottleneck (it runs at half the rate of the loads on AVX2); a
/// partial of eight float32 values carries at most 7 float32 roundings,
/// each relative to the partial itself, and everything after it is float64.
/// The order depends only on the element's position in its run, so the
/// result is the same for any thread count and instruction set.
pub(crate) struct SumF32;

/// Float32 additions per lane before a partial sum joins float64.
pub(crate) const F32_STEPS: usize = 8;

/// The float64 lanes of [`SumF32`] over `xs`: lane `j` adds elements
/// `j, j + LANES, ...` in float32 runs of [`F32_STEPS`] that join it in
/// float64. Returns the lanes and the tail shorter than a row of lanes.
#[inline(always)]
fn f32_lanes(xs: &[f32]) -> ([f64; LANES], &[f32]) {
    let mut wide = [0f64; LANES];
    let mut blocks = xs.chunks_exact(LANES * F32_STEPS);
    for b in &mut blocks {
        let mut part = [0f32; LANES];
        for row in b.chunks_exact(LANES) {
            for j in 0..LANES {
                part[j] += row[j];
            }
        }
        for j in 0..LANES {
            wide[j] += f64::from(part[j]);
        }
    }
    let mut rows = blocks.remainder().chunks_exact(LANES);
    for row in &mut rows {
        for j in 0..LANES {
            wide[j] += f64::from(row[j]);
        }
    }
    (wide, rows.remainder())
}

/// The lanes of [`SumF32`] over `xs` (compiled per instruction set by the
/// caller), merged left to right, then the tail in order.
#[inline(always)]
fn sum_f32_slice(xs: &[f32]) -> f64 {
    let (wide, tail) = f32_lanes(xs);
    let mut acc = wide[0];
    for &w in &wide[1..] {
        acc += w;
    }
    for &x in tail {
        acc += f64::from(x);
    }
    acc
}

impl Fold<f32> for SumF32 {
    type Acc = f64;
    #[inline(always)]
    fn init(&self) -> f64 {
        0.0
    }
    #[inline(always)]
    fn step(&self, acc: f64, x: f32, _: usize) -> f64 {
        acc + f64::from(x)
    }
    #[inline(always)]
    fn merge(&self, a: f64, b: f64) -> f64 {
        a + b
    }
    #[inline(always)]
    fn contiguous(&self, xs: &[f32], _k0: usize) -> f64 {
        super::isa::dispatch(
            #[inline(always)]
            || sum_f32_slice(xs),
        )
    }
}

/// Sum of float16 or bfloat16 elements in float64, in exactly [`SumF`]'s
/// order (lane `j` of [`LANES`] adds elements `j, j + LANES, ...`, the
/// lanes merge left to right, then the tail): contiguous runs are widened
/// to float32 a block at a time with the vector conversions, instead of one
/// element at a time in software, and the widening is exact, so the result
/// has the same bits.
pub(crate) struct SumHalf;

const _: () = assert!(
    super::half::BLOCK.is_multiple_of(LANES),
    "SumHalf widens whole rows of lanes at a time"
);

impl<H: super::half::Half> Fold<H> for SumHalf {
    type Acc = f64;
    #[inline(always)]
    fn init(&self) -> f64 {
        0.0
    }
    #[inline(always)]
    fn step(&self, acc: f64, x: H, _: usize) -> f64 {
        acc + f64::from(x.widen())
    }
    #[inline(always)]
    fn merge(&self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn contiguous(&self, xs: &[H], _k0: usize) -> f64 {
        let mut lanes = [0f64; LANES];
        let mut wide = [0f32; super::half::BLOCK];
        let full = xs.len() - xs.len() % LANES;
        for block in xs[..full].chunks(super::half::BLOCK) {
            let w = &mut wide[..block.len()];
            H::widen_slice(block, w);
            let w = &*w;
            lanes = super::isa::dispatch(
                #[inline(always)]
                move || {
                    let mut l = lanes;
                    for row in w.chunks_exact(LANES) {
                        for j in 0..LANES {
                            l[j] += f64::from(row[j]);
                        }
                    }
                    l
                },
            );
        }
        let mut acc = lanes[0];
        for &l in &lanes[1..] {
            acc += l;
        }
        for &x in &xs[full..] {
            acc += f64::from(x.widen());
        }
        acc
    }
}

/// Sum of complex64 elements in `Complex<f64>`, the contiguous runs read
/// as interleaved float32 parts and summed like [`SumF32`]: with an even
/// lane count, even lanes hold real parts and odd lanes imaginary parts.
pub(crate) struct SumC32;

const _: () = assert!(LANES.is_multiple_of(2), "SumC32 needs an even lane count");

/// [`sum_f32_slice`]'s lanes over interleaved (re, im) float32 pairs,
/// merged by parity into a real and an imaginary sum. The lanes are
/// computed alone inside the instruction-set dispatch (with the merge in
/// the same function the compiler vectorised the loop two floats wide).
#[inline(always)]
fn sum_c32_slice(xs: &[f32]) -> crate::Complex<f64> {
    let (wide, tail) = super::isa::dispatch(
        #[inline(always)]
        || f32_lanes(xs),
    );
    let (mut re, mut im) = (wide[0], wide[1]);
    for pair in wide[2..].chunks_exact(2) {
        re += pair[0];
        im += pair[1];
    }
    for pair in tail.chunks_exact(2) {
        re += f64::from(pair[0]);
        im += f64::from(pair[1]);
    }
    crate::Complex::new(re, im)
}

impl Fold<crate::ComplexFloat> for SumC32 {
    type Acc = crate::Complex<f64>;
    #[inline(always)]
    fn init(&self) -> Self::Acc {
        crate::Complex::new(0.0, 0.0)
    }
    #[inline(always)]
    fn step(&self, acc: Self::Acc, x: crate::ComplexFloat, _: usize) -> Self::Acc {
        acc + crate::Complex::new(f64::from(x.re), f64::from(x.im))
    }
    #[inline(always)]
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a + b
    }
    #[inline(always)]
    fn contiguous(&self, xs: &[crate::ComplexFloat], _k0: usize) -> Self::Acc {
        // SAFETY: `Complex<f32>` is `repr(C)` { re, im }, so n of them are
        // 2n float32 values in the same memory.
        let parts = unsafe { std::slice::from_raw_parts(xs.as_ptr() as *const f32, 2 * xs.len()) };
        sum_c32_slice(parts)
    }
}

/// Product in accumulator type `A`.
struct ProdF<A>(PhantomData<A>);
impl<A> ProdF<A> {
    fn new() -> Self {
        ProdF(PhantomData)
    }
}
impl<T: Element, A: Arith> Fold<T> for ProdF<A> {
    type Acc = A;
    #[inline(always)]
    fn init(&self) -> A {
        A::one()
    }
    #[inline(always)]
    fn step(&self, acc: A, x: T, _: usize) -> A {
        A::mul(acc, A::cast_from(x))
    }
    #[inline(always)]
    fn merge(&self, a: A, b: A) -> A {
        A::mul(a, b)
    }
}

/// Maximum (`MAX = true`) or minimum; NaN wins.
struct ExtremeF<const MAX: bool>;
impl<T: Bounds, const MAX: bool> Fold<T> for ExtremeF<MAX> {
    type Acc = T;
    #[inline(always)]
    fn init(&self) -> T {
        if MAX {
            T::LOWEST
        } else {
            T::HIGHEST
        }
    }
    #[inline(always)]
    fn step(&self, acc: T, x: T, _: usize) -> T {
        let better = if MAX { x > acc } else { x < acc };
        if better | is_nan(x) {
            x
        } else {
            acc
        }
    }
    #[inline(always)]
    fn merge(&self, a: T, b: T) -> T {
        <Self as Fold<T>>::step(self, a, b, 0)
    }
}

/// Value and position of the maximum (`MAX = true`) or minimum: NaN beats
/// everything, ties keep the first position. The accumulator starts at the
/// identity with position `usize::MAX`; a row whose elements all equal the
/// identity keeps that position, which [`arg_index`] maps to 0.
struct ArgF<const MAX: bool>;
impl<const MAX: bool> ArgF<MAX> {
    #[inline(always)]
    fn beats<T: crate::RealElement>(x: T, best: T) -> bool {
        let better = if MAX { x > best } else { x < best };
        !is_nan(best) & (is_nan(x) | better)
    }
}
impl<T: Bounds, const MAX: bool> Fold<T> for ArgF<MAX> {
    type Acc = (T, usize);
    #[inline(always)]
    fn init(&self) -> (T, usize) {
        (if MAX { T::LOWEST } else { T::HIGHEST }, usize::MAX)
    }
    #[inline(always)]
    fn step(&self, acc: (T, usize), x: T, k: usize) -> (T, usize) {
        if Self::beats(x, acc.0) {
            (x, k)
        } else {
            acc
        }
    }
    #[inline(always)]
    fn merge(&self, a: (T, usize), b: (T, usize)) -> (T, usize) {
        if Self::beats(b.0, a.0) || (!Self::beats(a.0, b.0) && b.1 < a.1) {
            b
        } else {
            a
        }
    }
}

/// The position an [`ArgF`] accumulator stands for.
#[inline(always)]
fn arg_index(k: usize) -> i64 {
    if k == usize::MAX {
        0
    } else {
        k as i64
    }
}

/// `all` (`ALL = true`) or `any` as truthiness of each element.
struct TruthF<const ALL: bool>;
impl<T: Element, const ALL: bool> Fold<T> for TruthF<ALL> {
    type Acc = bool;
    #[inline(always)]
    fn init(&self) -> bool {
        ALL
    }
    #[inline(always)]
    fn step(&self, acc: bool, x: T, _: usize) -> bool {
        if ALL {
            acc & x.to_bool()
        } else {
            acc | x.to_bool()
        }
    }
    #[inline(always)]
    fn merge(&self, a: bool, b: bool) -> bool {
        if ALL {
            a & b
        } else {
            a | b
        }
    }
}

/// Number of nonzero elements.
struct CountF;
impl<T: Element> Fold<T> for CountF {
    type Acc = i64;
    #[inline(always)]
    fn init(&self) -> i64 {
        0
    }
    #[inline(always)]
    fn step(&self, acc: i64, x: T, _: usize) -> i64 {
        acc + x.to_bool() as i64
    }
    #[inline(always)]
    fn merge(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// Reduces into a new tensor of `U`, `finish` turning each accumulator into
/// an output element.
fn reduce_to<T: Element, U: Element, F: Fold<T>>(
    x: &Tensor,
    mask: &[bool],
    keepdim: bool,
    f: &F,
    finish: impl Fn(F::Acc) -> U + Sync,
) -> Result<Tensor> {
    let shape = out_shape(x.shape(), mask, keepdim);
    let (out, p) = output::<U>(&shape);
    // SAFETY: the driver passes each output index `i < out.numel()` exactly
    // once; `out` is fresh and unshared.
    reduce(x, mask, f, |i, a| unsafe { p.write(i, finish(a)) })?;
    Ok(out)
}

/// Sum or product (`prod = true`) of `x` over `mask`, as `dtype`.
pub(crate) fn sum_or_prod(
    x: &Tensor,
    mask: &[bool],
    keepdim: bool,
    dtype: DType,
    prod: bool,
) -> Result<Tensor> {
    let r = if dtype.is_complex() {
        complex_fold(x, mask, keepdim, dtype, prod, 1.0)
    } else if dtype.is_floating_point() {
        if prod {
            dispatch!(x.dtype(), T => reduce_to::<T, f64, _>(x, mask, keepdim, &ProdF::<f64>::new(), |a| a))
        } else {
            sum_f64(x, mask, keepdim, |a| a)
        }
    } else if prod {
        dispatch!(x.dtype(), T => reduce_to::<T, i64, _>(x, mask, keepdim, &ProdF::<i64>::new(), |a| a))
    } else {
        dispatch!(x.dtype(), T => reduce_to::<T, i64, _>(x, mask, keepdim, &SumF::<i64>::new(), |a| a))
    }?;
    Ok(cast(&r, dtype))
}

/// Mean of `x` over `mask` (summed in f64), as `dtype`.
pub(crate) fn mean(x: &Tensor, mask: &[bool], keepdim: bool, dtype: DType) -> Result<Tensor> {
    let n = reduced_count(x.shape(), mask) as f64;
    let r = if dtype.is_complex() {
        complex_fold(x, mask, keepdim, dtype, false, 1.0 / n)
    } else {
        sum_f64(x, mask, keepdim, |s| s / n)
    }?;
    Ok(cast(&r, dtype))
}

/// Sum (times `scale`) or product of `x` over `mask` for a complex
/// `dtype`, accumulated in `Complex<f64>`; `x` is cast to `dtype` first.
fn complex_fold(
    x: &Tensor,
    mask: &[bool],
    keepdim: bool,
    dtype: DType,
    prod: bool,
    scale: f64,
) -> Result<Tensor> {
    type C = crate::Complex<f64>;
    let xc = cast(x, dtype);
    if !prod && dtype == DType::Complex64 {
        return reduce_to::<crate::ComplexFloat, C, _>(&xc, mask, keepdim, &SumC32, |a| a * scale);
    }
    crate::dispatch_complex!(dtype, T => if prod {
        reduce_to::<T, C, _>(&xc, mask, keepdim, &ProdF::<C>::new(), |a| a)
    } else {
        reduce_to::<T, C, _>(&xc, mask, keepdim, &SumF::<C>::new(), |a| a * scale)
    }, else Err(Error::not_implemented("sum", dtype)))
}

/// The float64 sum of `x` over `mask` (float32 through [`SumF32`]'s
/// partials), each output passed through `finish`.
fn sum_f64(
    x: &Tensor,
    mask: &[bool],
    keepdim: bool,
    finish: impl Fn(f64) -> f64 + Sync,
) -> Result<Tensor> {
    match x.dtype() {
        DType::Float32 => reduce_to::<f32, f64, _>(x, mask, keepdim, &SumF32, finish),
        DType::Float16 => reduce_to::<crate::f16, f64, _>(x, mask, keepdim, &SumHalf, finish),
        DType::BFloat16 => reduce_to::<crate::bf16, f64, _>(x, mask, keepdim, &SumHalf, finish),
        _ => {
            dispatch!(x.dtype(), T => reduce_to::<T, f64, _>(x, mask, keepdim, &SumF::<f64>::new(), &finish))
        }
    }
}

/// Maximum (`MAX = true`) or minimum of `x` over `mask`; NaN wins.
pub(crate) fn extreme<const MAX: bool>(x: &Tensor, mask: &[bool], keepdim: bool) -> Result<Tensor> {
    crate::dispatch_real!(x.dtype(), T => reduce_to::<T, T, _>(x, mask, keepdim, &ExtremeF::<MAX>, |a| a),
        else Err(Error::not_implemented(if MAX { "max_all" } else { "min_all" }, x.dtype())))
}

/// Values (an unwritten 0-dim placeholder unless `values`) and int64
/// positions of the maximum (`MAX = true`) or minimum of `x` over `mask`,
/// the position counted row-major over the reduced dims; NaN wins, ties
/// keep the first position.
pub(crate) fn arg_extreme<const MAX: bool>(
    x: &Tensor,
    mask: &[bool],
    keepdim: bool,
    values: bool,
) -> Result<(Tensor, Tensor)> {
    let shape = out_shape(x.shape(), mask, keepdim);
    let (idx, ip) = output::<i64>(&shape);
    let vals = crate::dispatch_real!(x.dtype(), T => {
        let (vals, vp) = output::<T>(if values { &shape[..] } else { &[] });
        let vp = if values { Some(vp) } else { None };
        // SAFETY: each output index `i < numel` is written exactly once;
        // both outputs are fresh and unshared.
        reduce(x, mask, &ArgF::<MAX>, |i, (v, k): (T, usize)| unsafe {
            ip.write(i, arg_index(k));
            if let Some(vp) = vp {
                vp.write(i, v);
            }
        })?;
        vals
    }, else return Err(Error::not_implemented(if MAX { "max" } else { "min" }, x.dtype())));
    Ok((vals, idx))
}

/// Whether every element of `x` over `mask` is nonzero.
pub(crate) fn all(x: &Tensor, mask: &[bool], keepdim: bool) -> Result<Tensor> {
    dispatch!(x.dtype(), T => reduce_to::<T, bool, _>(x, mask, keepdim, &TruthF::<true>, |a| a))
}

/// Whether some element of `x` over `mask` is nonzero.
pub(crate) fn any(x: &Tensor, mask: &[bool], keepdim: bool) -> Result<Tensor> {
    dispatch!(x.dtype(), T => reduce_to::<T, bool, _>(x, mask, keepdim, &TruthF::<false>, |a| a))
}

/// int64 counts of the nonzero elements of `x` over `mask`.
pub(crate) fn count_nonzero(x: &Tensor, mask: &[bool]) -> Result<Tensor> {
    dispatch!(x.dtype(), T => reduce_to::<T, i64, _>(x, mask, false, &CountF, |a| a))
}

/// Variance (its square root if `sqrt`) and mean of `x` over `mask`, by
/// the two-pass algorithm in f64, dividing the squared deviations by
/// `max(0, N - correction)`. Both results have `x`'s dtype.
pub(crate) fn moments(
    x: &Tensor,
    mask: &[bool],
    correction: f64,
    keepdim: bool,
    sqrt: bool,
) -> Result<(Tensor, Tensor)> {
    let n = reduced_count(x.shape(), mask) as f64;
    let divisor = (n - correction).max(0.0);
    let out_shape = out_shape(x.shape(), mask, keepdim);
    dispatch!(x.dtype(), T => {
        let mean = reduce_to::<T, f64, _>(x, mask, true, &SumF::<f64>::new(), |s| s / n)?;
        let dev = map2::<T, f64, f64>(x, &mean, |a, m| {
            let d = a.to_f64() - m;
            d * d
        })?;
        let ss = reduce_to::<f64, f64, _>(&dev, mask, keepdim, &SumF::<f64>::new(), |s| s)?;
        let var = map1::<f64, T>(&ss, |s| {
            let v = s / divisor;
            T::from_f64(if sqrt { v.sqrt() } else { v })
        });
        let mean = cast(&reshaped(&mean, &out_shape), x.dtype());
        Ok((var, mean))
    })
}

/// `log(sum(exp(x)))` over `mask` for a floating `x`, shifted by the
/// maximum so that large inputs do not overflow.
pub(crate) fn logsumexp(x: &Tensor, mask: &[bool], keepdim: bool) -> Result<Tensor> {
    let shape = out_shape(x.shape(), mask, keepdim);
    dispatch_float!(x.dtype(), T => {
        // Shift by the maximum (0 where it is infinite, so that rows of
        // -inf give -inf and rows holding +inf give +inf).
        let m = reduce_to::<T, T, _>(x, mask, true, &ExtremeF::<true>, |a| {
            if a.to_f64().is_finite() { a } else { T::zero() }
        })?;
        let e = map2::<T, T, f64>(x, &m, |a, m| (a.to_f64() - m.to_f64()).exp())?;
        let s = reduce_to::<f64, f64, _>(&e, mask, keepdim, &SumF::<f64>::new(), |s| s)?;
        let m = reshaped(&m, &shape);
        map2::<f64, T, T>(&s, &m, |s, m| T::from_f64(s.ln() + m.to_f64()))
    }, else Err(Error::runtime("logsumexp: expected a floating dtype")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex64_sums_split_interleaved_lanes_into_parts() {
        use crate::ComplexFloat as C;
        // Rows of 1001 (full blocks, rows of lanes and a tail); every
        // partial is exact, so the sums are too: re = 0.5 * sum k, im =
        // -sum k, plus the row number times 1001 in each part.
        let v: Vec<C> = (0..3 * 1001)
            .map(|i| {
                let (r, k) = ((i / 1001) as f32, (i % 1001) as f32);
                C::new(0.5 * k + r, -k + r)
            })
            .collect();
        let t = Tensor::from_slice(&v, &[3, 1001]).unwrap();
        let rows = sum_or_prod(&t, &[false, true], false, DType::Complex64, false).unwrap();
        let want = |r: f32| C::new(250250.0 + 1001.0 * r, -500500.0 + 1001.0 * r);
        assert_eq!(rows.to_vec::<C>(), vec![want(0.0), want(1.0), want(2.0)]);
        // Down the columns the elements are strided: the per-element path.
        let cols = sum_or_prod(&t, &[true, false], false, DType::Complex64, false).unwrap();
        assert_eq!(cols.to_vec::<C>()[7], C::new(3.0 * 3.5 + 3.0, -21.0 + 3.0));
    }

    fn t<T: Element>(v: &[T], shape: &[usize]) -> Tensor {
        Tensor::from_slice(v, shape).unwrap()
    }

    /// Values of very different magnitudes and both signs, so that any
    /// change in the order of additions shows in the low bits.
    fn mixed(n: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                let h = i.wrapping_mul(2_654_435_761);
                (h % 1000) as f32
                    * 10f32.powi((h % 13) as i32 - 6)
                    * if h & 1 == 0 { 1.0 } else { -1.0 }
            })
            .collect()
    }

    #[test]
    fn float32_sum_follows_its_documented_order_on_every_path() {
        for n in [0u32, 5, 31, 255, 256, 257, 1000, 10_007] {
            let xs = mixed(n);
            // The order by hand: lanes of eight float32 additions, then
            // float64 lanes, merged left to right, then the tail.
            let block = LANES * F32_STEPS;
            let nb = xs.len() / block * block;
            let nr = nb + (xs.len() - nb) / LANES * LANES;
            let mut wide = [0f64; LANES];
            for b in xs[..nb].chunks(block) {
                for j in 0..LANES {
                    let mut p = 0f32;
                    for s in 0..F32_STEPS {
                        p += b[s * LANES + j];
                    }
                    wide[j] += f64::from(p);
                }
            }
            for (i, &x) in xs[nb..nr].iter().enumerate() {
                wide[i % LANES] += f64::from(x);
            }
            let mut want = wide[0];
            for &w in &wide[1..] {
                want += w;
            }
            for &x in &xs[nr..] {
                want += f64::from(x);
            }
            assert_eq!(sum_f32_slice(&xs).to_bits(), want.to_bits(), "n = {n}");
            assert_eq!(SumF32.contiguous(&xs, 0).to_bits(), want.to_bits());
            #[cfg(target_arch = "x86_64")]
            {
                use crate::kernels::isa;
                if isa::has_avx2() {
                    // SAFETY: AVX2 and FMA are supported (checked).
                    let v = unsafe { isa::on_avx2(|| sum_f32_slice(&xs)) };
                    assert_eq!(v.to_bits(), want.to_bits());
                }
                if isa::has_avx512() {
                    // SAFETY: AVX-512 is supported (checked).
                    let v = unsafe { isa::on_avx512(|| sum_f32_slice(&xs)) };
                    assert_eq!(v.to_bits(), want.to_bits());
                }
            }
            // Within the bound of its float32 partial sums: each partial of
            // eight carries at most 7 roundings relative to its own sum of
            // magnitudes, and the float64 part adds next to nothing.
            let exact: f64 = xs.iter().map(|&x| f64::from(x)).sum();
            let mags: f64 = xs.iter().map(|&x| f64::from(x).abs()).sum();
            let bound = 7.0 * f64::from(f32::EPSILON) / 2.0 * mags + 1e-12;
            assert!((want - exact).abs() <= bound, "n = {n}");
        }
    }

    #[test]
    fn float32_sums_and_means_use_the_float32_partials() {
        let xs = mixed(100_003);
        let a = t(&xs, &[xs.len()]);
        // A long row is folded in fixed chunks, combined left to right.
        let mut want = 0f64;
        for c in xs.chunks(crate::kernels::reduce::CHUNK) {
            want += sum_f32_slice(c);
        }
        let s = sum_or_prod(&a, &[true], false, DType::Float32, false).unwrap();
        assert_eq!(s.to_vec::<f32>(), vec![want as f32]);
        let m = mean(&a, &[true], false, DType::Float32).unwrap();
        assert_eq!(m.to_vec::<f32>(), vec![(want / xs.len() as f64) as f32]);
    }

    fn close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{got:?} != {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?} != {want:?}");
        }
    }

    #[test]
    fn reduced_count_multiplies_the_reduced_sizes() {
        assert_eq!(reduced_count(&[2, 3, 4], &[true, false, true]), 8);
        assert_eq!(reduced_count(&[2, 3], &[false, false]), 1);
        assert_eq!(reduced_count(&[2, 0], &[false, true]), 0);
    }

    #[test]
    fn half_sums_keep_the_element_order_bits() {
        use crate::{bf16, f16};
        for n in [0, 1, 31, 32, 33, 511, 512, 513, 1000, 5000] {
            let h: Vec<f16> = (0..n)
                .map(|i| f16::from_f32(((i * 7919 % 1013) as f32 - 500.0) * 0.37))
                .collect();
            let b: Vec<bf16> = h.iter().map(|x| bf16::from_f32(x.to_f32() * 1e3)).collect();
            let elementwise = SumF::<f64>::new();
            assert_eq!(
                SumHalf.contiguous(&h, 0).to_bits(),
                elementwise.contiguous(&h, 0).to_bits(),
                "float16, n = {n}"
            );
            assert_eq!(
                SumHalf.contiguous(&b, 0).to_bits(),
                elementwise.contiguous(&b, 0).to_bits(),
                "bfloat16, n = {n}"
            );
            // And the value: the exact sum of these float16 values.
            let exact: f64 = h.iter().map(|x| f64::from(x.to_f32())).sum();
            assert!((SumHalf.contiguous(&h, 0) - exact).abs() <= 1e-9 * (1.0 + exact.abs()));
        }
    }

    #[test]
    fn sums_and_products_over_dims_in_the_requested_dtype() {
        // [[1, 2, 3], [4, 5, 6]]
        let a = t(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        let s = sum_or_prod(&a, &[true, false], false, DType::Float64, false).unwrap();
        assert_eq!(s.shape(), &[3]);
        assert_eq!(s.to_vec::<f64>(), vec![5.0, 7.0, 9.0]);
        let p = sum_or_prod(&a, &[false, true], true, DType::Float32, true).unwrap();
        assert_eq!((p.shape(), p.dtype()), (&[2usize, 1][..], DType::Float32));
        assert_eq!(p.to_vec::<f32>(), vec![6.0, 120.0]);
        let all = sum_or_prod(&a, &[true, true], false, DType::Float64, false).unwrap();
        assert_eq!((all.shape(), all.to_vec::<f64>()), (&[][..], vec![21.0]));
        // An empty reduction gives the identity.
        let e = t::<f64>(&[], &[0, 2]);
        let p = sum_or_prod(&e, &[true, false], false, DType::Float64, true).unwrap();
        assert_eq!(p.to_vec::<f64>(), vec![1.0, 1.0]);
    }

    #[test]
    fn integer_sums_and_products_accumulate_in_wrapping_i64() {
        let a = t(&[i64::MAX, 1], &[2]);
        let s = sum_or_prod(&a, &[true], false, DType::Int64, false).unwrap();
        assert_eq!(s.to_vec::<i64>(), vec![i64::MIN]);
        let b = t(&[1i32 << 20, 1 << 20], &[2]);
        let p = sum_or_prod(&b, &[true], false, DType::Int64, true).unwrap();
        assert_eq!(
            (p.dtype(), p.to_vec::<i64>()),
            (DType::Int64, vec![1i64 << 40])
        );
        let c = t(&[true, false, true], &[3]);
        let n = sum_or_prod(&c, &[true], false, DType::Int64, false).unwrap();
        assert_eq!(n.to_vec::<i64>(), vec![2]);
    }

    #[test]
    fn mean_divides_by_the_reduced_count_and_casts() {
        let a = t(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
        let m = mean(&a, &[false, true], false, DType::Float64).unwrap();
        assert_eq!(m.to_vec::<f64>(), vec![1.5, 3.5]);
        let m = mean(&a, &[true, true], true, DType::Float32).unwrap();
        assert_eq!((m.shape(), m.dtype()), (&[1usize, 1][..], DType::Float32));
        assert_eq!(m.to_vec::<f32>(), vec![2.5]);
        let e = t::<f64>(&[], &[0]);
        assert!(mean(&e, &[true], false, DType::Float64)
            .unwrap()
            .to_vec::<f64>()[0]
            .is_nan());
    }

    #[test]
    fn extremes_let_nan_win() {
        let a = t(&[1.0f64, f64::NAN, 3.0], &[3]);
        assert!(extreme::<true>(&a, &[true], false).unwrap().to_vec::<f64>()[0].is_nan());
        assert!(extreme::<false>(&a, &[true], false)
            .unwrap()
            .to_vec::<f64>()[0]
            .is_nan());
        // [[3, 1], [2, 5]]
        let b = t(&[3i32, 1, 2, 5], &[2, 2]);
        let lo = extreme::<false>(&b, &[true, false], false).unwrap();
        assert_eq!((lo.dtype(), lo.to_vec::<i32>()), (DType::Int32, vec![2, 1]));
        let hi = extreme::<true>(&b, &[false, true], true).unwrap();
        assert_eq!(
            (hi.shape(), hi.to_vec::<i32>()),
            (&[2usize, 1][..], vec![3, 5])
        );
    }

    #[test]
    fn arg_extremes_keep_the_first_tie_and_point_at_nan() {
        let a = t(&[3.0f64, 1.0, 3.0, 0.0], &[4]);
        let (v, i) = arg_extreme::<true>(&a, &[true], false, true).unwrap();
        assert_eq!((v.to_vec::<f64>(), i.to_vec::<i64>()), (vec![3.0], vec![0]));
        let (v, i) = arg_extreme::<false>(&a, &[true], false, true).unwrap();
        assert_eq!((v.to_vec::<f64>(), i.to_vec::<i64>()), (vec![0.0], vec![3]));
        let n = t(&[1.0f64, f64::NAN, 5.0], &[3]);
        let (_, i) = arg_extreme::<true>(&n, &[true], false, false).unwrap();
        assert_eq!(i.to_vec::<i64>(), vec![1]);
        // [[1, 5], [4, 2]] over dim 0.
        let b = t(&[1i64, 5, 4, 2], &[2, 2]);
        let (v, i) = arg_extreme::<true>(&b, &[true, false], true, true).unwrap();
        assert_eq!(v.shape(), &[1, 2]);
        assert_eq!(
            (v.to_vec::<i64>(), i.to_vec::<i64>()),
            (vec![4, 5], vec![1, 0])
        );
        // All elements at the identity: position 0.
        let m = t(&[f64::NEG_INFINITY, f64::NEG_INFINITY], &[2]);
        assert_eq!(
            arg_extreme::<true>(&m, &[true], false, false)
                .unwrap()
                .1
                .to_vec::<i64>(),
            vec![0]
        );
    }

    #[test]
    fn truth_and_counts() {
        // [[1, 0], [2, 3]]
        let a = t(&[1i64, 0, 2, 3], &[2, 2]);
        let al = all(&a, &[false, true], false).unwrap();
        assert_eq!(al.dtype(), DType::Bool);
        assert_eq!(al.to_vec::<bool>(), vec![false, true]);
        assert_eq!(
            any(&a, &[true, false], false).unwrap().to_vec::<bool>(),
            vec![true, true]
        );
        let n = count_nonzero(&a, &[true, true]).unwrap();
        assert_eq!((n.dtype(), n.to_vec::<i64>()), (DType::Int64, vec![3]));
        let e = t::<f64>(&[], &[0]);
        assert_eq!(
            all(&e, &[true], false).unwrap().to_vec::<bool>(),
            vec![true]
        );
        assert_eq!(
            any(&e, &[true], false).unwrap().to_vec::<bool>(),
            vec![false]
        );
    }

    #[test]
    fn moments_use_the_corrected_divisor() {
        let a = t(&[1.0f64, 2.0, 3.0, 4.0], &[4]);
        // Squared deviations from 2.5 sum to 5.
        let (v, m) = moments(&a, &[true], 1.0, false, false).unwrap();
        close(&v.to_vec::<f64>(), &[5.0 / 3.0]);
        close(&m.to_vec::<f64>(), &[2.5]);
        let (s, _) = moments(&a, &[true], 0.0, true, true).unwrap();
        assert_eq!(s.shape(), &[1]);
        close(&s.to_vec::<f64>(), &[1.25f64.sqrt()]);
        // N - correction <= 0 divides by zero.
        let (v, _) = moments(&a, &[true], 5.0, false, false).unwrap();
        assert_eq!(v.to_vec::<f64>(), vec![f64::INFINITY]);
        let b = t(&[1.0f32, 3.0, 5.0, 9.0], &[2, 2]);
        let (v, m) = moments(&b, &[false, true], 1.0, false, false).unwrap();
        assert_eq!((v.dtype(), m.dtype()), (DType::Float32, DType::Float32));
        assert_eq!(
            (v.to_vec::<f32>(), m.to_vec::<f32>()),
            (vec![2.0, 8.0], vec![2.0, 7.0])
        );
    }

    #[test]
    fn logsumexp_is_shifted_and_handles_infinite_rows() {
        let a = t(&[0.0f64, 3f64.ln(), 1000.0, 1000.0], &[2, 2]);
        let r = logsumexp(&a, &[false, true], false).unwrap();
        close(&r.to_vec::<f64>(), &[4f64.ln(), 1000.0 + 2f64.ln()]);
        let inf = t(
            &[f64::NEG_INFINITY, f64::NEG_INFINITY, f64::INFINITY, 1.0],
            &[2, 2],
        );
        let r = logsumexp(&inf, &[false, true], true).unwrap();
        assert_eq!(r.shape(), &[2, 1]);
        assert_eq!(r.to_vec::<f64>(), vec![f64::NEG_INFINITY, f64::INFINITY]);
        let i = t(&[1i64, 2], &[2]);
        assert!(logsumexp(&i, &[true], false).is_err());
    }

    #[test]
    fn kernels_record_nothing_even_when_inputs_require_grad() {
        let a = t(&[1.0f64, 2.0], &[2]);
        a.set_requires_grad(true).unwrap();
        assert!(sum_or_prod(&a, &[true], false, DType::Float32, false)
            .unwrap()
            .grad_fn()
            .is_none());
        assert!(mean(&a, &[true], false, DType::Float32)
            .unwrap()
            .grad_fn()
            .is_none());
        assert!(moments(&a, &[true], 1.0, false, true)
            .unwrap()
            .1
            .grad_fn()
            .is_none());
        assert!(logsumexp(&a, &[true], false).unwrap().grad_fn().is_none());
    }
}
