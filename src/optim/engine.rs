//! The elementwise engine every optimizer step runs on: the argument
//! checks, the storage locks, the walk over a parameter group in
//! (parallel) chunks and the float lanes the update rules compute in.
//!
//! An update rule ([`Rule`]) says only what happens to one element: the
//! engine hands it the gradient, the parameter and the parameter's state
//! values (loaded into the rule's lane type) and stores what it returns.
//! Rules live in the sibling modules; this one knows none of them.

use crate::autograd::check_write;
use crate::kernels::access::{lock_writes, slice, slice_mut};
use crate::kernels::isa;
// The float type a step computes in ("lane"): f32 for float32 and the
// 16-bit floats (as torch does), f64 for float64. Loops over it vectorize.
pub(super) use crate::kernels::vmath::Real;
use crate::{Element, Error, Result, Tensor};
use rayon::prelude::*;

/// Parameters at least this big are updated in parallel chunks.
const PARALLEL_ELEMS: usize = 1 << 15;
const CHUNK: usize = 1 << 13;

/// The most state tensors one parameter's update reads and writes.
pub(crate) const MAX_STATES: usize = 3;

/// The state values of one element, as a rule sees them: the first
/// [`Rule::states`] are loaded, the rest are unused.
pub(crate) type States<L> = [L; MAX_STATES];

/// One optimizer's update of one element, with its hyper-parameters.
///
/// A rule mirrors the tensor ops of its optimizer's per-tensor Python loop
/// one for one, in the same order and with the same constants (rounded to
/// the lane type where the loop passes a Python number to a tensor op), so
/// that both give the same bits.
pub(crate) trait Rule: Copy + Send + Sync {
    /// The name errors give.
    const NAME: &'static str;
    /// What a rule computes once per parameter from that parameter's
    /// scalars (step sizes, bias corrections), in f64.
    type Step: Copy + Send + Sync + Default;
    /// How many state tensors each parameter has (options may drop some).
    fn states(&self) -> usize;
    /// How many scalars (step counts, ...) each parameter comes with.
    fn scalars(&self) -> usize {
        0
    }
    /// The per-parameter constants, from that parameter's scalars.
    fn prepare(&self, _scalars: &[f64]) -> Self::Step {
        Self::Step::default()
    }
    /// The new value of one parameter element from its gradient `g`, its
    /// value `x` and its state values `s` (updated in place).
    fn update<L: Real>(&self, k: Self::Step, g: L, x: L, s: &mut States<L>) -> L;
}

/// `lerp(start, end, w)` as the tensor op computes it: from the nearer end.
#[inline(always)]
pub(crate) fn lerp<L: Real>(start: L, end: L, w: L) -> L {
    let d = end - start;
    if w.abs() < L::c(0.5) {
        start + w * d
    } else {
        end - d * (L::c(1.0) - w)
    }
}

/// `maximum(a, b)`: NaN when either is (`b` when `a > b` fails on a NaN `b`).
#[inline(always)]
pub(crate) fn max_nan<L: Real>(a: L, b: L) -> L {
    if a > b || a.nan() {
        a
    } else {
        b
    }
}

/// `minimum(a, b)`: NaN when either is.
#[inline(always)]
pub(crate) fn min_nan<L: Real>(a: L, b: L) -> L {
    if a < b || a.nan() {
        a
    } else {
        b
    }
}

/// `sign(a)`: -1, 0 or 1 (0 for NaN).
#[inline(always)]
pub(crate) fn sign<L: Real>(a: L) -> L {
    if a > L::c(0.0) {
        L::c(1.0)
    } else if a < L::c(0.0) {
        L::c(-1.0)
    } else {
        L::c(0.0)
    }
}

/// How a rule starts, as every per-tensor loop does: the gradient negated
/// to maximize, then a nonzero weight decay added to it (`wd x`) or, when
/// `decoupled_lr` gives the learning rate, applied to the parameter
/// (`x (1 - lr wd)`). Returns the gradient and the parameter.
#[inline(always)]
pub(crate) fn decay<L: Real>(
    g: L,
    x: L,
    maximize: bool,
    weight_decay: f64,
    decoupled_lr: Option<f64>,
) -> (L, L) {
    let g = if maximize { -g } else { g };
    if weight_decay == 0.0 {
        return (g, x);
    }
    match decoupled_lr {
        Some(lr) => (g, x * L::c(1.0 - lr * weight_decay)),
        None => (g.plus_scaled(L::c(weight_decay), x), x),
    }
}

/// A stored element and the lane it computes in.
pub(crate) trait Stored: Element {
    type L: Real;
    fn load(self) -> Self::L;
    fn store(v: Self::L) -> Self;
}

macro_rules! stored {
    ($t:ty, $lane:ty, $load:expr, $store:expr) => {
        impl Stored for $t {
            type L = $lane;
            #[inline(always)]
            fn load(self) -> $lane {
                $load(self)
            }
            #[inline(always)]
            fn store(v: $lane) -> $t {
                $store(v)
            }
        }
    };
}
stored!(f32, f32, |v| v, |v| v);
stored!(f64, f64, |v| v, |v| v);
stored!(half::f16, f32, half::f16::to_f32, half::f16::from_f32);
stored!(half::bf16, f32, half::bf16::to_f32, half::bf16::from_f32);

/// Runs `$body` with `$T` bound to the float element type of `$dtype`.
macro_rules! with_stored {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            crate::DType::Float32 => {
                type $T = f32;
                $body
            }
            crate::DType::Float64 => {
                type $T = f64;
                $body
            }
            crate::DType::Float16 => {
                type $T = half::f16;
                $body
            }
            crate::DType::BFloat16 => {
                type $T = half::bf16;
                $body
            }
            _ => unreachable!("checked floating"),
        }
    };
}

/// Checks that every tensor of a parameter's group matches it (shape,
/// dtype, contiguity) so the step can walk them as flat slices, and that
/// no two of them overlap in memory (the written ones are walked as
/// exclusive slices).
fn check_group(op: &str, i: usize, p: &Tensor, others: &[&Tensor]) -> Result<()> {
    if !p.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "{op}: parameter {i} has dtype {}, expected a floating point dtype",
            p.dtype()
        )));
    }
    for t in others {
        if t.shape() != p.shape() || t.dtype() != p.dtype() || !t.is_contiguous() {
            return Err(Error::runtime(format!(
                "{op}: parameter {i} (shape {:?}, {}) and its gradient and state must be contiguous tensors of one shape and dtype; got shape {:?}, {}, contiguous={}",
                p.shape(),
                p.dtype(),
                t.shape(),
                t.dtype(),
                t.is_contiguous()
            )));
        }
    }
    if !p.is_contiguous() {
        return Err(Error::runtime(format!(
            "{op}: parameter {i} must be contiguous"
        )));
    }
    let span = |t: &Tensor| {
        let start = t.storage().as_ptr() as usize + t.offset() * t.dtype().itemsize();
        start..start + t.numel() * t.dtype().itemsize()
    };
    let all: Vec<&Tensor> = std::iter::once(p).chain(others.iter().copied()).collect();
    for (a, ta) in all.iter().enumerate() {
        for tb in &all[a + 1..] {
            let (x, y) = (span(ta), span(tb));
            if x.start < y.end && y.start < x.end {
                return Err(Error::runtime(format!(
                    "{op}: parameter {i}, its gradient and its state tensors must not share memory"
                )));
            }
        }
    }
    Ok(())
}

/// Matching chunks of the read and the written slices.
type Piece<'a, T> = (Vec<&'a [T]>, Vec<&'a mut [T]>);

/// Runs `f` on matching chunks of the slices, in parallel when they are big.
fn chunked<T: Send + Sync>(
    n: usize,
    reads: &[&[T]],
    writes: &mut [&mut [T]],
    f: impl Fn(&[&[T]], &mut [&mut [T]]) + Sync,
) {
    if n < PARALLEL_ELEMS || crate::pool::kernel_threads() < 2 {
        f(reads, writes);
        return;
    }
    // Split every slice at the same chunk boundaries.
    let starts: Vec<usize> = (0..n).step_by(CHUNK).collect();
    let mut pieces: Vec<Piece<T>> = starts
        .iter()
        .map(|&s| {
            let e = (s + CHUNK).min(n);
            (reads.iter().map(|r| &r[s..e]).collect(), Vec::new())
        })
        .collect();
    for w in writes.iter_mut() {
        let mut rest: &mut [T] = std::mem::take(w);
        for &s in &starts {
            let len = CHUNK.min(n - s);
            let (head, tail) = rest.split_at_mut(len);
            pieces[s / CHUNK].1.push(head);
            rest = tail;
        }
    }
    crate::pool::install(|| {
        pieces
            .par_iter_mut()
            .for_each(|(r, w)| f(r, w.as_mut_slice()));
    });
}

/// Runs `rule` over a parameter group: `states[j][i]` is parameter `i`'s
/// `j`-th state tensor and `scalars[j][i]` its `j`-th scalar. Everything
/// is checked before anything is written.
pub(crate) fn run<R: Rule>(
    rule: R,
    params: &[Tensor],
    grads: &[Tensor],
    states: &[&[Tensor]],
    scalars: &[&[f64]],
) -> Result<()> {
    let n = params.len();
    if grads.len() != n
        || states.len() != rule.states()
        || scalars.len() != rule.scalars()
        || states.iter().any(|s| s.len() != n)
        || scalars.iter().any(|s| s.len() != n)
    {
        return Err(Error::runtime(format!(
            "{}: got {n} parameters, {} gradients, {} state lists of lengths {:?} and {} scalar lists of lengths {:?}; expected one gradient per parameter, {} state lists and {} scalar lists of one entry per parameter",
            R::NAME,
            grads.len(),
            states.len(),
            states.iter().map(|s| s.len()).collect::<Vec<_>>(),
            scalars.len(),
            scalars.iter().map(|s| s.len()).collect::<Vec<_>>(),
            rule.states(),
            rule.scalars(),
        )));
    }
    let own = |i: usize| states.iter().map(move |s| &s[i]);
    for (i, (p, g)) in params.iter().zip(grads).enumerate() {
        let others: Vec<&Tensor> = std::iter::once(g).chain(own(i)).collect();
        check_group(R::NAME, i, p, &others)?;
        check_write(p)?;
    }
    for (i, (p, g)) in params.iter().zip(grads).enumerate() {
        let mine: Vec<f64> = scalars.iter().map(|s| s[i]).collect();
        let k = rule.prepare(&mine);
        let writes: Vec<&Tensor> = std::iter::once(p).chain(own(i)).collect();
        let guard = lock_writes(&[g], &writes);
        with_stored!(p.dtype(), T => {
            // SAFETY: all are locked, contiguous, of dtype T and one shape,
            // and do not overlap (checked above); `p` and its states are
            // written under their write locks.
            let gs = unsafe { slice::<T>(g) };
            let mut ws: Vec<&mut [T]> = writes.iter().map(|t| unsafe { slice_mut::<T>(t) }).collect();
            // Each chunk runs compiled for the widest vectors the CPU has
            // (the same bits on every instruction set: no fused multiply-adds).
            chunked(p.numel(), &[gs], &mut ws, |r, w| {
                isa::dispatch(
                    #[inline(always)]
                    || match w.len() - 1 {
                        0 => kernel::<R, T, 0>(rule, k, r[0], w),
                        1 => kernel::<R, T, 1>(rule, k, r[0], w),
                        2 => kernel::<R, T, 2>(rule, k, r[0], w),
                        _ => kernel::<R, T, MAX_STATES>(rule, k, r[0], w),
                    },
                )
            });
        });
        drop(guard);
        for t in writes {
            t.bump_version();
        }
    }
    Ok(())
}

/// The loop over one chunk: `w` holds the parameter's slice, then its `N`
/// state slices. Inlined into each instruction set's function.
#[inline(always)]
fn kernel<R: Rule, T: Stored, const N: usize>(rule: R, k: R::Step, g: &[T], w: &mut [&mut [T]]) {
    let (x, rest) = w.split_first_mut().expect("the parameter");
    let n = x.len();
    let (x, g) = (&mut x[..n], &g[..n]);
    // Cut every slice to `n` so the loop's indexing needs no bounds checks.
    let s: [&mut [T]; N] = match <&mut [&mut [T]; N]>::try_from(rest) {
        Ok(s) => s.each_mut().map(|v| &mut v[..n]),
        Err(_) => unreachable!("{N} state slices"),
    };
    for i in 0..n {
        let mut lanes: States<T::L> = [<T::L as Real>::c(0.0); MAX_STATES];
        for j in 0..N {
            lanes[j] = s[j][i].load();
        }
        x[i] = T::store(rule.update(k, g[i].load(), x[i].load(), &mut lanes));
        for j in 0..N {
            s[j][i] = T::store(lanes[j]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lerp_reads_from_the_nearer_end() {
        // Near w = 1 the result comes from `end`, so lerp(a, b, 1) == b exactly.
        assert_eq!(lerp(0.1f32, 0.7, 1.0), 0.7);
        assert_eq!(lerp(2.0f64, 4.0, 0.25), 2.5);
        assert_eq!(lerp(2.0f64, 4.0, 0.75), 3.5);
    }

    #[test]
    fn max_min_and_sign_treat_nan_as_the_tensor_ops_do() {
        assert!(max_nan(f32::NAN, 1.0).nan() && max_nan(1.0f32, f32::NAN).nan());
        assert!(min_nan(2.0f64, f64::NAN).nan());
        assert_eq!((max_nan(1.0f64, 2.0), min_nan(1.0f64, 2.0)), (2.0, 1.0));
        assert_eq!(
            [sign(-3.0f32), sign(0.0), sign(f32::NAN), sign(0.5)],
            [-1.0, 0.0, 0.0, 1.0]
        );
    }

    #[test]
    fn decay_skips_a_zero_weight_decay_and_applies_either_form() {
        // An infinite parameter must not turn the gradient into NaN via 0 * inf.
        assert_eq!(
            decay(2.0f64, f64::INFINITY, false, 0.0, None),
            (2.0, f64::INFINITY)
        );
        assert_eq!(decay(2.0f64, 4.0, true, 0.5, None), (0.0, 4.0));
        assert_eq!(decay(2.0f64, 4.0, false, 0.5, Some(0.1)), (2.0, 4.0 * 0.95));
    }

    #[test]
    fn chunks_cover_every_element_once_in_parallel() {
        let n = PARALLEL_ELEMS * 2 + 5;
        let read: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let (mut a, mut b) = (vec![0.0f64; n], vec![1.0f64; n]);
        let mut writes = [a.as_mut_slice(), b.as_mut_slice()];
        chunked(n, &[&read], &mut writes, |r, w| {
            for (j, v) in r[0].iter().enumerate() {
                w[0][j] += v;
                w[1][j] *= 2.0;
            }
        });
        assert!(a.iter().enumerate().all(|(i, &v)| v == i as f64));
        assert!(b.iter().all(|&v| v == 2.0));
    }

    #[test]
    fn overlapping_state_is_refused_before_anything_is_written() {
        let p = Tensor::from_slice(&[1.0f64, 2.0], &[2]).unwrap();
        let err = check_group("t", 0, &p, &[&p.clone()]).unwrap_err();
        assert!(err.to_string().contains("must not share memory"), "{err}");
    }
}
