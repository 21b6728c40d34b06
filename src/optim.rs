//! Optimizer steps over whole lists of parameters in one call (torch's
//! "foreach" steps): SGD and Adam/AdamW.
//!
//! Each step updates parameters and their state tensors in place, element
//! by element (in f32 for float32 and the 16-bit floats, in f64 for
//! float64, as torch computes them), and bumps their
//! version counters as any in-place op does. The step counts, state
//! allocation and argument checks belong to the caller (`ferrograd.optim`).
//! Steps run under no-grad rules: writing a leaf that requires grad while
//! grad mode is on is refused, as for any in-place op.

use crate::autograd::check_write;
use crate::kernels::access::{lock_writes, slice, slice_mut};
use crate::{Element, Error, Result, Tensor};
use rayon::prelude::*;

/// Parameters at least this big are updated in parallel chunks.
const PARALLEL_ELEMS: usize = 1 << 15;
const CHUNK: usize = 1 << 13;

/// SGD's hyper-parameters (torch's names).
#[derive(Debug, Clone, Copy)]
pub struct Sgd {
    /// Learning rate.
    pub lr: f64,
    /// Momentum factor (0 for none).
    pub momentum: f64,
    /// Dampening of the momentum's new contribution.
    pub dampening: f64,
    /// L2 penalty (0 for none).
    pub weight_decay: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// Ascend the objective instead of descending it.
    pub maximize: bool,
}

/// Adam's hyper-parameters; `decoupled` gives AdamW's weight decay.
#[derive(Debug, Clone, Copy)]
pub struct Adam {
    /// Learning rate.
    pub lr: f64,
    /// Decay rate of the running mean of the gradient.
    pub beta1: f64,
    /// Decay rate of the running mean of its square.
    pub beta2: f64,
    /// Added to the denominator for numerical stability.
    pub eps: f64,
    /// Weight decay (L2 penalty, or decoupled with `decoupled`).
    pub weight_decay: f64,
    /// AdamW: decay the weights directly instead of adding an L2 term.
    pub decoupled: bool,
    /// Use the maximum of past squared-gradient averages (AMSGrad).
    pub amsgrad: bool,
    /// Ascend the objective instead of descending it.
    pub maximize: bool,
}

/// Checks that every tensor of a parameter's group matches it (shape,
/// dtype, contiguity) so the step can walk them as flat slices.
fn check_group(op: &str, i: usize, p: &Tensor, others: &[&Tensor]) -> Result<()> {
    if !p.dtype().is_floating_point() {
        return Err(Error::runtime(format!(
            "{op}: parameter {i} has dtype {}, expected a floating point dtype",
            p.dtype()
        )));
    }
    for t in std::iter::once(&p).chain(others) {
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
        for piece in pieces.iter_mut() {
            let len = piece.0.first().map_or(CHUNK.min(rest.len()), |r| r.len());
            let (head, tail) = rest.split_at_mut(len.min(rest.len()));
            piece.1.push(head);
            rest = tail;
        }
    }
    crate::pool::install(|| {
        pieces
            .par_iter_mut()
            .for_each(|(r, w)| f(r, w.as_mut_slice()));
    });
}

/// The float type a step computes in: f32 for float32 and the 16-bit
/// floats (as torch does), f64 for float64. Loops over it vectorize.
trait Lane:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn of(v: f64) -> Self;
    fn sqrt(self) -> Self;
    fn max(self, o: Self) -> Self;
}

impl Lane for f32 {
    #[inline(always)]
    fn of(v: f64) -> f32 {
        v as f32
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn max(self, o: f32) -> f32 {
        f32::max(self, o)
    }
}

impl Lane for f64 {
    #[inline(always)]
    fn of(v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn max(self, o: f64) -> f64 {
        f64::max(self, o)
    }
}

/// A stored element and the lane it computes in.
trait Stored: Element {
    type L: Lane;
    fn load(self) -> Self::L;
    fn store(v: Self::L) -> Self;
}

impl Stored for f32 {
    type L = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self
    }
    #[inline(always)]
    fn store(v: f32) -> f32 {
        v
    }
}

impl Stored for f64 {
    type L = f64;
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
    #[inline(always)]
    fn store(v: f64) -> f64 {
        v
    }
}

impl Stored for half::f16 {
    type L = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn store(v: f32) -> half::f16 {
        half::f16::from_f32(v)
    }
}

impl Stored for half::bf16 {
    type L = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn store(v: f32) -> half::bf16 {
        half::bf16::from_f32(v)
    }
}

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

/// One SGD step. `bufs` holds a momentum buffer per parameter when
/// `momentum != 0` (empty otherwise); `fresh[i]` says that buffer `i` is
/// new and starts as the (decayed) gradient.
pub fn sgd_step(
    params: &[Tensor],
    grads: &[Tensor],
    bufs: &[Tensor],
    fresh: &[bool],
    h: Sgd,
) -> Result<()> {
    let with_momentum = h.momentum != 0.0;
    if grads.len() != params.len()
        || (with_momentum && (bufs.len() != params.len() || fresh.len() != params.len()))
    {
        return Err(Error::runtime(format!(
            "sgd_step: got {} parameters, {} gradients and {} momentum buffers",
            params.len(),
            grads.len(),
            bufs.len()
        )));
    }
    for (i, (p, g)) in params.iter().zip(grads).enumerate() {
        let buf = bufs.get(i).filter(|_| with_momentum);
        let others: Vec<&Tensor> = std::iter::once(g).chain(buf).collect();
        check_group("sgd_step", i, p, &others)?;
        check_write(p)?;
        let new_buf = fresh.get(i).copied().unwrap_or(false);
        let mut writes = vec![p];
        writes.extend(buf);
        let guard = lock_writes(&[g], &writes);
        with_stored!(p.dtype(), T => {
            // SAFETY: all are locked, contiguous, of dtype T and one shape;
            // `p` and the buffer are written under their write locks.
            let gs = unsafe { slice::<T>(g) };
            let mut ws: Vec<&mut [T]> = writes.iter().map(|t| unsafe { slice_mut::<T>(t) }).collect();
            chunked(p.numel(), &[gs], &mut ws, |r, w| sgd_kernel(r[0], w, new_buf, h));
        });
        drop(guard);
        for t in writes {
            t.bump_version();
        }
    }
    Ok(())
}

fn sgd_kernel<T: Stored>(g: &[T], w: &mut [&mut [T]], fresh: bool, h: Sgd) {
    let of = <T::L as Lane>::of;
    // d = sign g + wd p, branch-free.
    let (sign, wd, lr) = (
        of(if h.maximize { -1.0 } else { 1.0 }),
        of(h.weight_decay),
        of(h.lr),
    );
    let (p, rest) = w.split_first_mut().expect("the parameter");
    match rest.first_mut() {
        None => {
            for (x, &gi) in p.iter_mut().zip(g) {
                let xv = x.load();
                let d = sign * gi.load() + wd * xv;
                *x = T::store(xv - lr * d);
            }
        }
        Some(b) => {
            let (mom, keep) = (of(h.momentum), of(1.0 - h.dampening));
            let (fresh_scale, old_scale) = if fresh {
                (of(1.0), of(0.0))
            } else {
                (keep, mom)
            };
            let nest = of(if h.nesterov { h.momentum } else { 0.0 });
            let (via_buf, via_grad) = if h.nesterov {
                (nest, of(1.0))
            } else {
                (of(1.0), of(0.0))
            };
            for ((x, bi), &gi) in p.iter_mut().zip(b.iter_mut()).zip(g) {
                let xv = x.load();
                let d = sign * gi.load() + wd * xv;
                // A fresh buffer starts as d; later ones are mom b + (1 - dampening) d.
                let m = old_scale * bi.load() + fresh_scale * d;
                *bi = T::store(m);
                // nesterov: d + mom m; otherwise m.
                *x = T::store(xv - lr * (via_grad * d + via_buf * m));
            }
        }
    }
}

/// One Adam (or AdamW) step. `steps[i]` is parameter i's step count after
/// this step (1 on the first); `max_sqs` holds the running maxima when
/// `amsgrad` (empty otherwise).
pub fn adam_step(
    params: &[Tensor],
    grads: &[Tensor],
    exp_avgs: &[Tensor],
    exp_avg_sqs: &[Tensor],
    max_sqs: &[Tensor],
    steps: &[f64],
    h: Adam,
) -> Result<()> {
    let n = params.len();
    if grads.len() != n
        || exp_avgs.len() != n
        || exp_avg_sqs.len() != n
        || steps.len() != n
        || (h.amsgrad && max_sqs.len() != n)
    {
        return Err(Error::runtime(format!(
            "adam_step: got {n} parameters but {} gradients, {} exp_avgs, {} exp_avg_sqs, {} max_exp_avg_sqs and {} steps",
            grads.len(),
            exp_avgs.len(),
            exp_avg_sqs.len(),
            max_sqs.len(),
            steps.len()
        )));
    }
    for i in 0..n {
        let p = &params[i];
        let g = &grads[i];
        let mut writes = vec![p, &exp_avgs[i], &exp_avg_sqs[i]];
        if h.amsgrad {
            writes.push(&max_sqs[i]);
        }
        let others: Vec<&Tensor> = std::iter::once(g)
            .chain(writes[1..].iter().copied())
            .collect();
        check_group("adam_step", i, p, &others)?;
        check_write(p)?;
        let step = steps[i];
        let guard = lock_writes(&[g], &writes);
        with_stored!(p.dtype(), T => {
            // SAFETY: as in `sgd_step`.
            let gs = unsafe { slice::<T>(g) };
            let mut ws: Vec<&mut [T]> = writes.iter().map(|t| unsafe { slice_mut::<T>(t) }).collect();
            chunked(p.numel(), &[gs], &mut ws, |r, w| adam_kernel(r[0], w, step, h));
        });
        drop(guard);
        for t in writes {
            t.bump_version();
        }
    }
    Ok(())
}

fn adam_kernel<T: Stored>(g: &[T], w: &mut [&mut [T]], step: f64, h: Adam) {
    let of = <T::L as Lane>::of;
    let [p, m, v, rest @ ..] = w else {
        unreachable!("parameter, exp_avg and exp_avg_sq")
    };
    let bias2_sqrt = of((1.0 - h.beta2.powf(step)).sqrt());
    let step_size = of(h.lr / (1.0 - h.beta1.powf(step)));
    let sign = of(if h.maximize { -1.0 } else { 1.0 });
    // Coupled decay adds wd p to the gradient; decoupled scales p first.
    let (wd, shrink) = if h.decoupled {
        (of(0.0), of(1.0 - h.lr * h.weight_decay))
    } else {
        (of(h.weight_decay), of(1.0))
    };
    let (b1, b2) = (of(1.0 - h.beta1), of(h.beta2));
    let (b2c, eps) = (of(1.0 - h.beta2), of(h.eps));
    // m += (1 - b1)(d - m); v = b2 v + (1 - b2) d^2;
    // p -= step_size m / (sqrt(v) / sqrt(1 - b2^t) + eps)
    let moments = |x: &mut T, mi: &mut T, vi: &mut T, gi: T| {
        let xv = x.load() * shrink;
        let d = sign * gi.load() + wd * xv;
        let mv = mi.load();
        let mv = mv + b1 * (d - mv);
        let vv = b2 * vi.load() + b2c * d * d;
        *mi = T::store(mv);
        *vi = T::store(vv);
        (xv, mv, vv)
    };
    match rest.first_mut() {
        None => {
            for (((x, mi), vi), &gi) in p.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(g) {
                let (xv, mv, vv) = moments(x, mi, vi, gi);
                *x = T::store(xv - step_size * mv / (vv.sqrt() / bias2_sqrt + eps));
            }
        }
        Some(vmax) => {
            let rows = p
                .iter_mut()
                .zip(m.iter_mut())
                .zip(v.iter_mut())
                .zip(vmax.iter_mut());
            for ((((x, mi), vi), top), &gi) in rows.zip(g) {
                let (xv, mv, vv) = moments(x, mi, vi, gi);
                let t = top.load().max(vv);
                *top = T::store(t);
                *x = T::store(xv - step_size * mv / (t.sqrt() / bias2_sqrt + eps));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_first_step_moves_each_weight_by_lr_against_its_gradient_sign() {
        // After one step m / sqrt(v) (bias corrected) is g / |g|.
        let p = Tensor::from_slice(&[1.0f64, -2.0, 0.5], &[3]).unwrap();
        let g = Tensor::from_slice(&[0.3f64, -4.0, 1e-3], &[3]).unwrap();
        let (m, v) = (p.zeros_like().unwrap(), p.zeros_like().unwrap());
        let h = Adam {
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.999,
            eps: 0.0,
            weight_decay: 0.0,
            decoupled: false,
            amsgrad: false,
            maximize: false,
        };
        let before = p.version();
        adam_step(
            std::slice::from_ref(&p),
            &[g],
            std::slice::from_ref(&m),
            &[v],
            &[],
            &[1.0],
            h,
        )
        .unwrap();
        let got = p.to_vec::<f64>();
        for (x, want) in got.iter().zip([0.9, -1.9, 0.4]) {
            assert!((x - want).abs() < 1e-12, "{got:?}");
        }
        assert!((m.to_vec::<f64>()[1] + 0.4).abs() < 1e-15);
        assert!(p.version() > before);
    }

    #[test]
    fn sgd_with_nesterov_momentum_follows_the_update_rule() {
        let p = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let g = Tensor::from_slice(&[0.5f32, -1.0], &[2]).unwrap();
        let b = p.zeros_like().unwrap();
        let h = Sgd {
            lr: 0.1,
            momentum: 0.9,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: true,
            maximize: false,
        };
        let one = std::slice::from_ref;
        sgd_step(one(&p), one(&g), one(&b), &[true], h).unwrap();
        // buf = g; p -= lr (g + 0.9 g)
        assert_eq!(p.to_vec::<f32>(), vec![1.0 - 0.1 * 0.95, 2.0 + 0.1 * 1.9]);
        sgd_step(one(&p), one(&g), one(&b), &[false], h).unwrap();
        // buf = 0.9 g + g = 1.9 g; p -= lr (g + 0.9 * 1.9 g)
        let want = 1.0 - 0.1 * 0.95 - 0.1 * (0.5 + 0.9 * 0.95);
        assert!((p.to_vec::<f32>()[0] - want as f32).abs() < 1e-6);
        assert_eq!(b.to_vec::<f32>()[0], 0.95);
    }
}
