//! Elementwise fusion of captured programs: consecutive recorded
//! operations that are elementwise (add, sub, mul, div, neg, tanh,
//! sigmoid, exp, log, sin, cos) over float32 or float64 tensors of one
//! shape, whose intermediate results nothing else reads, run as one loop
//! over memory in blocks that stay in cache, forward and backward.
//!
//! The forward computes each element with the same functions the eager
//! kernels use (`x + y`, the `vmath` block kernels), so its results are
//! the eager ones bit for bit. In grad mode the group is one node,
//! `FusedElementwiseBackward`, whose backward recomputes each block and
//! sweeps it in reverse with the ops' derivatives (in float rounding of the
//! eager formulas); with `create_graph` it runs the same sweep with tensor
//! operations, so higher derivatives are recorded. A call whose operands
//! do not fit (another dtype or shape, a strided operand, forward-mode
//! tangents) runs the original operations instead.
//!
//! A full `sum` or `mean` of a group's result, when nothing else reads
//! the elements, joins the group (see `group.rs`): the loop adds each
//! block's results in f64 and writes no elements (a mean divides the
//! total by the count, and its gradient is scaled as eager's is).

use crate::autograd::{derivatives, sum_to};
use crate::kernels::access::{elem_ptr, lock};
use crate::kernels::pointwise::{float_block32, float_block64, FloatFn};
use crate::pool::SyncPtr;
use crate::{DType, Error, Result, Tensor};
use std::sync::Arc;

mod early;
mod group;
mod parts;

pub(crate) use early::derivatives_in_forward;

use parts::{bwd_part_best, fwd_part_best, parts, streams, Block, Bwd, Fwd};

/// Bytes of registers per block: a block's registers stay in the L1 cache.
const BLOCK_BYTES: usize = 32 << 10;

/// Elements per block for `registers` registers of `T` over `n` elements.
fn block_len<T>(registers: usize, n: usize) -> usize {
    let per = BLOCK_BYTES / (registers * std::mem::size_of::<T>()).max(1);
    (per.clamp(64, 4096) / 64 * 64).min(n.max(1))
}
/// Elements per parallel part.
const PART: usize = 1 << 14;

/// One elementwise step of a fused plan, over registers (the inputs come
/// first, then each step's result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    Div(usize, usize),
    Neg(usize),
    Float(FloatFn, usize),
}

/// The steps of a fused group (an argument of [`Tensor::fused_elementwise`]).
#[derive(Clone, Debug)]
pub struct FusedPlan(Arc<PlanSteps>);

#[derive(Debug)]
struct PlanSteps {
    inputs: usize,
    steps: Vec<Step>,
    /// Whether the group's result is summed to one value (a full `sum`
    /// fused into the loop, so the elements are never written).
    sum: bool,
    /// Whether that sum is divided by the number of elements (a `mean`).
    mean: bool,
    /// The reverse sweep's bookkeeping, fixed by the steps.
    sweep: Sweep,
}

/// The reverse sweep's bookkeeping (see [`Sweep::of`]).
#[derive(Debug)]
struct Sweep {
    /// Per step, whether its first and second operands' contributions are
    /// their registers' first.
    first: Vec<[bool; 2]>,
    /// Per step, whether its result gets no gradient.
    skip: Vec<bool>,
    /// Per input, whether no step reads it.
    untouched: Vec<bool>,
}

impl Sweep {
    /// Which gradient contributions of the reverse sweep over `steps` (on
    /// `n` inputs) come first (and are written rather than added), which
    /// steps' results get no gradient (skipped), and which inputs get none
    /// (zeros).
    fn of(n: usize, steps: &[Step]) -> Sweep {
        let regs = n + steps.len();
        let mut written = vec![false; regs];
        written[regs - 1] = true;
        let mut first = vec![[false; 2]; steps.len()];
        let mut skip = vec![false; steps.len()];
        for (k, step) in steps.iter().enumerate().rev() {
            if !written[n + k] {
                skip[k] = true;
                continue;
            }
            let (a, b) = match *step {
                Step::Add(a, b) | Step::Sub(a, b) | Step::Mul(a, b) | Step::Div(a, b) => {
                    (a, Some(b))
                }
                Step::Neg(a) | Step::Float(_, a) => (a, None),
            };
            first[k][0] = !std::mem::replace(&mut written[a], true);
            if let Some(b) = b {
                first[k][1] = !std::mem::replace(&mut written[b], true);
            }
        }
        Sweep {
            first,
            skip,
            untouched: written[..n].iter().map(|w| !w).collect(),
        }
    }
}

/// The step an operation of `name` with `args` (registers) is, if it fuses.
fn step_of(name: &str, args: &[usize]) -> Option<Step> {
    Some(match (name, args) {
        ("add", &[a, b]) => Step::Add(a, b),
        ("sub", &[a, b]) => Step::Sub(a, b),
        ("mul", &[a, b]) => Step::Mul(a, b),
        ("div", &[a, b]) => Step::Div(a, b),
        ("neg", &[a]) => Step::Neg(a),
        ("tanh", &[a]) => Step::Float(FloatFn::Tanh, a),
        ("sigmoid", &[a]) => Step::Float(FloatFn::Sigmoid, a),
        ("exp", &[a]) => Step::Float(FloatFn::Exp, a),
        ("log", &[a]) => Step::Float(FloatFn::Log, a),
        ("sin", &[a]) => Step::Float(FloatFn::Sin, a),
        ("cos", &[a]) => Step::Float(FloatFn::Cos, a),
        _ => return None,
    })
}

/// A float element type the fused loops run in.
trait Elem: crate::Element + Copy + Default + std::ops::Neg<Output = Self> {
    fn block(f: FloatFn) -> fn(&[Self], &mut [Self]);
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
    fn unit() -> Self;
    fn of_f64(v: f64) -> Self;
    fn widen(self) -> f64;
}

macro_rules! elem {
    ($t:ty, $block:ident) => {
        impl Elem for $t {
            fn block(f: FloatFn) -> fn(&[$t], &mut [$t]) {
                $block(f)
            }
            #[inline(always)]
            fn add(a: $t, b: $t) -> $t {
                a + b
            }
            #[inline(always)]
            fn sub(a: $t, b: $t) -> $t {
                a - b
            }
            #[inline(always)]
            fn mul(a: $t, b: $t) -> $t {
                a * b
            }
            #[inline(always)]
            fn div(a: $t, b: $t) -> $t {
                a / b
            }
            fn unit() -> $t {
                1.0
            }
            fn of_f64(v: f64) -> $t {
                v as $t
            }
            #[inline(always)]
            fn widen(self) -> f64 {
                self as f64
            }
        }
    };
}
elem!(f32, float_block32);
elem!(f64, float_block64);

/// An operand of the loops: a contiguous run of the output's shape, or one
/// value for every element.
#[derive(Clone, Copy)]
enum Operand<T> {
    Slice(*const T),
    Splat(T),
}
// SAFETY: the pointer is only read, from a buffer locked for the call.
unsafe impl<T: Send> Send for Operand<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Operand<T> {}

// The loops over a block: inlined into the part functions, which are
// compiled for the widest vectors the CPU has (see `isa_parts!`).

#[inline(always)]
fn zip2<T: Copy>(out: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

#[inline(always)]
fn map1<T: Copy>(out: &mut [T], a: &[T], f: impl Fn(T) -> T) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = f(x);
    }
}

/// A gradient contribution `f(a)` per element: written into `dst` when it
/// is the register's first, added to it otherwise.
#[inline(always)]
fn emit1<T: Elem>(dst: &mut [T], first: bool, a: &[T], f: impl Fn(T) -> T) {
    if first {
        map1(dst, a, f);
    } else {
        for (o, &x) in dst.iter_mut().zip(a) {
            *o = T::add(*o, f(x));
        }
    }
}

/// As [`emit1`] for a contribution `f(a, b)`.
#[inline(always)]
fn emit2<T: Elem>(dst: &mut [T], first: bool, a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
    if first {
        zip2(dst, a, b, f);
    } else {
        for ((o, &x), &y) in dst.iter_mut().zip(a).zip(b) {
            *o = T::add(*o, f(x, y));
        }
    }
}

impl FusedPlan {
    /// The gradient of a fused `mean`'s elements from `g`, the gradient of
    /// its result (`g / n` as eager's formula computes it); `g` itself
    /// for a sum.
    fn mean_scaled(&self, g: &Tensor, n: usize) -> Result<Tensor> {
        if self.0.mean {
            g.mul(&Tensor::scalar(1.0 / n as f64))
        } else {
            Ok(g.clone())
        }
    }

    /// The steps whose results the forward keeps for backward: the float
    /// functions (dearer to compute again than to read), but the last.
    /// (A summed group keeps its last step's too: its result is not
    /// written.)
    fn kept_steps(&self) -> Vec<usize> {
        let steps = &self.0.steps;
        let end = steps.len() - usize::from(!self.0.sum);
        (0..end)
            .filter(|&k| matches!(steps[k], Step::Float(..)))
            .collect()
    }

    /// Which steps the backward sweep must compute again, given the kept
    /// ones: those whose results a derivative reads (the operands of a
    /// product, the divisor and quotient of a division, the result of
    /// tanh, sigmoid and exp, the argument of log, sin and cos), and the
    /// steps those are computed from, up to kept results and inputs; with
    /// `result`, the group's result too.
    fn live_steps(&self, kept: &[bool], result: bool) -> Vec<bool> {
        let n = self.0.inputs;
        let mut needed = vec![false; self.registers()];
        needed[self.registers() - 1] = result;
        for (k, step) in self.0.steps.iter().enumerate() {
            match *step {
                Step::Mul(a, b) => {
                    needed[a] = true;
                    needed[b] = true;
                }
                Step::Div(_, b) => {
                    needed[b] = true;
                    needed[n + k] = true;
                }
                Step::Float(FloatFn::Log | FloatFn::Sin | FloatFn::Cos, a) => needed[a] = true,
                Step::Float(..) => needed[n + k] = true,
                Step::Add(..) | Step::Sub(..) | Step::Neg(_) => {}
            }
        }
        let mut live = vec![false; self.0.steps.len()];
        for (k, step) in self.0.steps.iter().enumerate().rev() {
            if !needed[n + k] || kept[k] {
                continue;
            }
            live[k] = true;
            match *step {
                Step::Add(a, b) | Step::Sub(a, b) | Step::Mul(a, b) | Step::Div(a, b) => {
                    needed[a] = true;
                    needed[b] = true;
                }
                Step::Neg(a) | Step::Float(_, a) => needed[a] = true,
            }
        }
        live
    }

    fn registers(&self) -> usize {
        self.0.inputs + self.0.steps.len()
    }

    /// Computes the steps' registers of elements `at..at + len` into the
    /// block's registers or, for step `k` with `dst[k]` set, straight into
    /// that buffer at `at`, and points the block's `ptrs` at every
    /// register's elements: an input is read where it lies (a splat from
    /// the block's copies), a step in `kept` from the buffer the forward
    /// pass saved it in.
    ///
    /// # Safety
    /// Slice operands and kept buffers are readable, `dst` buffers
    /// writable, for `at + len` elements; `b` was made for `ins`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn forward_block<T: Elem>(
        &self,
        ins: &[Operand<T>],
        b: &mut Block<T>,
        at: usize,
        len: usize,
        kept: &[Option<SyncPtr<T>>],
        live: &[bool],
        dst: &[Option<SyncPtr<T>>],
    ) {
        let n = self.0.inputs;
        let Block {
            ptrs,
            regs,
            splats,
            blk,
        } = b;
        let blk = *blk;
        for (r, op) in ins.iter().enumerate() {
            ptrs[r] = match *op {
                Operand::Slice(p) => p.add(at),
                Operand::Splat(_) => splats[r * blk..].as_ptr(),
            };
        }
        for r in n..ptrs.len() {
            ptrs[r] = regs[r * blk..].as_ptr();
        }
        let base = regs.as_mut_ptr();
        for (k, step) in self.0.steps.iter().enumerate() {
            let d = n + k;
            if let Some(Some(p)) = kept.get(k) {
                // Saved by the forward pass: read, not computed again.
                ptrs[d] = p.get().add(at);
                continue;
            }
            if live.get(k) == Some(&false) {
                continue; // the backward sweep does not read it
            }
            // SAFETY: register `d` lies in `regs` or in its own output
            // buffer, which no operand pointer reaches for a register of
            // this or a later step.
            let at_d = match dst.get(k) {
                Some(Some(p)) => p.get().add(at),
                _ => base.add(d * blk),
            };
            ptrs[d] = at_d;
            let out = std::slice::from_raw_parts_mut(at_d, len);
            let reg = |r: usize| std::slice::from_raw_parts(ptrs[r], len);
            match *step {
                Step::Add(a, b) => zip2(out, reg(a), reg(b), T::add),
                Step::Sub(a, b) => zip2(out, reg(a), reg(b), T::sub),
                Step::Mul(a, b) => zip2(out, reg(a), reg(b), T::mul),
                Step::Div(a, b) => zip2(out, reg(a), reg(b), T::div),
                Step::Neg(a) => map1(out, reg(a), |v| -v),
                Step::Float(f, a) => T::block(f)(reg(a), out),
            }
        }
    }

    /// The gradient registers of a block whose forward registers are
    /// `ptrs`, from the output's gradient (at `gp[last]`), swept in
    /// reverse: `gp` points at `len` elements of every register's gradient
    /// (an input's may be its gradient's output buffer). A register's first
    /// contribution is written, later ones added (as `sw` says); the
    /// inputs' registers end up holding their gradients (zeros for one that
    /// no step reads). `s1` is a scratch block.
    ///
    /// # Safety
    /// `ptrs` point at `len` readable elements of every register (as
    /// [`FusedPlan::forward_block`] leaves them), `gp` at `len` writable
    /// elements of distinct memory per register (the last one readable).
    #[inline(always)]
    unsafe fn backward_block<T: Elem>(
        &self,
        ptrs: &[*const T],
        gp: &[*mut T],
        sw: &Sweep,
        len: usize,
        s1: &mut [T],
    ) {
        let n = self.0.inputs;
        let reg = |r: usize| std::slice::from_raw_parts(ptrs[r], len);
        let s1 = &mut s1[..len];
        // SAFETY (for `dst`): register `r` precedes the step whose
        // gradient is read, so its gradient memory is not the one read.
        let dst = |r: usize| std::slice::from_raw_parts_mut(gp[r], len);
        for (k, step) in self.0.steps.iter().enumerate().rev() {
            if sw.skip[k] {
                continue;
            }
            let g = std::slice::from_raw_parts(gp[n + k] as *const T, len);
            let [fa, fb] = sw.first[k];
            match *step {
                Step::Add(a, b) => {
                    emit1(dst(a), fa, g, |v| v);
                    emit1(dst(b), fb, g, |v| v);
                }
                Step::Sub(a, b) => {
                    emit1(dst(a), fa, g, |v| v);
                    emit1(dst(b), fb, g, |v| -v);
                }
                Step::Mul(a, b) => {
                    emit2(dst(a), fa, g, reg(b), T::mul);
                    emit2(dst(b), fb, g, reg(a), T::mul);
                }
                Step::Div(a, b) => {
                    emit2(dst(a), fa, g, reg(b), T::div);
                    // d(a/b)/db = -(a/b)/b.
                    zip2(s1, reg(n + k), reg(b), T::div);
                    emit2(dst(b), fb, g, s1, |g, q| -T::mul(g, q));
                }
                Step::Neg(a) => emit1(dst(a), fa, g, |v| -v),
                Step::Float(f, a) => {
                    let (x, y) = (reg(a), reg(n + k));
                    let one = T::unit();
                    match f {
                        FloatFn::Tanh => emit2(dst(a), fa, g, y, |g, y| {
                            T::mul(g, T::sub(one, T::mul(y, y)))
                        }),
                        FloatFn::Sigmoid => emit2(dst(a), fa, g, y, |g, y| {
                            T::mul(g, T::mul(T::sub(one, y), y))
                        }),
                        FloatFn::Exp => emit2(dst(a), fa, g, y, T::mul),
                        FloatFn::Log => emit2(dst(a), fa, g, x, |g, x| T::mul(g, T::div(one, x))),
                        FloatFn::Sin => {
                            T::block(FloatFn::Cos)(x, s1);
                            emit2(dst(a), fa, g, s1, T::mul);
                        }
                        FloatFn::Cos => {
                            T::block(FloatFn::Sin)(x, s1);
                            emit2(dst(a), fa, g, s1, |g, s| T::mul(g, -s));
                        }
                        _ => unreachable!("only the listed functions fuse"),
                    }
                }
            }
        }
        for (&p, &none) in gp.iter().zip(&sw.untouched) {
            if none {
                std::slice::from_raw_parts_mut(p, len).fill(T::default());
            }
        }
    }

    /// The plan applied with tensor operations (recorded when grad mode is
    /// on): the registers, inputs first.
    fn forward_tensors(&self, ins: &[Tensor]) -> Result<Vec<Tensor>> {
        let mut regs: Vec<Tensor> = ins.to_vec();
        for step in &self.0.steps {
            let r = &regs;
            let v = match *step {
                Step::Add(a, b) => r[a].add(&r[b])?,
                Step::Sub(a, b) => r[a].sub(&r[b])?,
                Step::Mul(a, b) => r[a].mul(&r[b])?,
                Step::Div(a, b) => r[a].div(&r[b])?,
                Step::Neg(a) => r[a].neg()?,
                Step::Float(FloatFn::Tanh, a) => r[a].tanh()?,
                Step::Float(FloatFn::Sigmoid, a) => r[a].sigmoid()?,
                Step::Float(FloatFn::Exp, a) => r[a].exp()?,
                Step::Float(FloatFn::Log, a) => r[a].log()?,
                Step::Float(FloatFn::Sin, a) => r[a].sin()?,
                Step::Float(FloatFn::Cos, a) => r[a].cos()?,
                Step::Float(..) => unreachable!("only the listed functions fuse"),
            };
            regs.push(v);
        }
        Ok(regs)
    }

    /// The backward sweep with tensor operations (for `create_graph`).
    fn backward_tensors(&self, ins: &[Tensor], g: &Tensor) -> Result<Vec<Option<Tensor>>> {
        let regs = self.forward_tensors(ins)?;
        let mut grads: Vec<Option<Tensor>> = vec![None; regs.len()];
        let last = &regs[regs.len() - 1];
        grads[regs.len() - 1] = Some(if self.0.sum {
            let g = g.expand(&last.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())?;
            self.mean_scaled(&g, last.numel())?
        } else {
            g.clone()
        });
        let add = |slot: &mut Option<Tensor>, v: Tensor| -> Result<()> {
            *slot = Some(match slot.take() {
                Some(s) => s.add(&v)?,
                None => v,
            });
            Ok(())
        };
        let n = self.0.inputs;
        for (k, step) in self.0.steps.iter().enumerate().rev() {
            let Some(g) = grads[n + k].clone() else {
                continue;
            };
            match *step {
                Step::Add(a, b) => {
                    add(&mut grads[a], g.clone())?;
                    add(&mut grads[b], g)?;
                }
                Step::Sub(a, b) => {
                    add(&mut grads[a], g.clone())?;
                    add(&mut grads[b], g.neg()?)?;
                }
                Step::Mul(a, b) => {
                    add(&mut grads[a], g.mul(&regs[b])?)?;
                    add(&mut grads[b], g.mul(&regs[a])?)?;
                }
                Step::Div(a, b) => {
                    add(&mut grads[a], g.div(&regs[b])?)?;
                    add(&mut grads[b], g.mul(&regs[n + k].div(&regs[b])?)?.neg()?)?;
                }
                Step::Neg(a) => add(&mut grads[a], g.neg()?)?,
                Step::Float(f, a) => {
                    let (x, y) = (&regs[a], &regs[n + k]);
                    let one = Tensor::scalar(1.0);
                    let factor = match f {
                        FloatFn::Tanh => one.sub(&y.mul(y)?)?,
                        FloatFn::Sigmoid => one.sub(y)?.mul(y)?,
                        FloatFn::Exp => y.clone(),
                        FloatFn::Log => one.div(x)?,
                        FloatFn::Sin => x.cos()?,
                        FloatFn::Cos => x.sin()?.neg()?,
                        _ => unreachable!("only the listed functions fuse"),
                    };
                    add(&mut grads[a], g.mul(&factor)?)?;
                }
            }
        }
        grads.truncate(n);
        grads
            .into_iter()
            .zip(ins)
            .map(|(g, x)| g.map(|g| sum_to(&g, x.shape())).transpose())
            .collect()
    }
}

/// How the fast loops can read `ins` for an output of `shape` in `T`: every
/// operand contiguous with that shape or a single value that broadcasts
/// without changing it; `None` otherwise.
fn operands<T: Elem>(ins: &[Tensor], shape: &[usize]) -> Option<Vec<Operand<T>>> {
    ins.iter()
        .map(|t| {
            if t.numel() == 1 && t.ndim() <= shape.len() && t.dtype() == T::DTYPE {
                // SAFETY: one element of dtype T at the tensor's offset.
                Some(Operand::Splat(unsafe { *elem_ptr::<T>(t) }))
            } else if t.numel() == 1 && t.ndim() <= shape.len() && t.is_wrapped_number() {
                // A Python number: cast to T, as eager promotion casts it.
                Some(Operand::Splat(T::of_f64(t.item().ok()?.to_f64())))
            } else if t.shape() == shape && t.is_contiguous() && t.dtype() == T::DTYPE {
                Some(Operand::Slice(elem_ptr::<T>(t) as *const T))
            } else {
                None
            }
        })
        .collect()
}

/// The output shape of a fused group over `ins`: the shape of its
/// full-sized operands (all equal), if the fast loops apply.
fn fused_shape(ins: &[Tensor]) -> Option<(Vec<usize>, DType)> {
    let full = ins
        .iter()
        .find(|t| !(t.numel() == 1 && t.is_wrapped_number()))?;
    let shape = ins
        .iter()
        .filter(|t| t.numel() > 1)
        .map(|t| t.shape())
        .next()
        .unwrap_or(full.shape());
    let dt = full.dtype();
    matches!(dt, DType::Float32 | DType::Float64).then(|| (shape.to_vec(), dt))
}

fn forward_typed<T: Elem>(
    plan: &FusedPlan,
    ins: &[Tensor],
    shape: &[usize],
    keep: bool,
) -> Result<(Tensor, Vec<Tensor>)> {
    let out_shape: &[usize] = if plan.0.sum { &[] } else { shape };
    let out = Tensor::try_empty(out_shape, T::DTYPE)?;
    // The float functions' results, kept for the backward pass when a
    // gradient will be needed (cheaper to read than to compute again).
    let kept: Vec<(usize, Tensor)> = if keep {
        plan.kept_steps()
            .into_iter()
            .map(|k| Ok((k, Tensor::try_empty(shape, T::DTYPE)?)))
            .collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    let n: usize = shape.iter().product();
    let mut sums = vec![0.0f64; n.div_ceil(PART).max(1)];
    let refs: Vec<&Tensor> = ins.iter().collect();
    let _g = lock(&refs, None);
    let ops = operands::<T>(ins, shape).ok_or_else(|| Error::runtime("fused operands changed"))?;
    let mut dst: Vec<Option<SyncPtr<T>>> = vec![None; plan.0.steps.len()];
    for (k, t) in &kept {
        dst[*k] = Some(SyncPtr(elem_ptr::<T>(t)));
    }
    if !plan.0.sum {
        dst[plan.0.steps.len() - 1] = Some(SyncPtr(elem_ptr::<T>(&out)));
    }
    let last = plan.registers() - 1;
    let blk = block_len::<T>(2 * plan.registers(), n);
    let cx = Fwd {
        plan,
        ops: &ops,
        sums: SyncPtr(sums.as_mut_ptr()),
        dst: &dst,
        stream: streams::<T>(n),
        blk,
        last,
    };
    parts(n, &|p, s, e| fwd_part_best(&cx, p, s, e));
    drop(_g);
    if plan.0.sum {
        set_total::<T>(plan, &out, &sums, n);
    }
    Ok((out, kept.into_iter().map(|(_, t)| t).collect()))
}

/// Writes a summed group's result into `out` (one element of `T`) from
/// the parts' totals: their sum, divided by the `n` elements for a mean.
fn set_total<T: Elem>(plan: &FusedPlan, out: &Tensor, sums: &[f64], n: usize) {
    let total: f64 = sums.iter().sum::<f64>() / if plan.0.mean { n as f64 } else { 1.0 };
    // SAFETY: `out` is a new one-element tensor of dtype T.
    unsafe { *elem_ptr::<T>(out) = T::of_f64(total) };
}

fn backward_typed<T: Elem>(
    plan: &FusedPlan,
    ins: &[Tensor],
    kept: &[Tensor],
    g: &Tensor,
    needs: &[bool],
) -> Result<Vec<Option<Tensor>>> {
    sweep_typed::<T>(plan, ins, kept, g, needs, false).map(|(_, gs)| gs)
}

/// The reverse sweep of the group over `ins` from the gradient `g` of its
/// result (its steps' results in `kept` read rather than computed again):
/// the gradients of the inputs `needs` marks. With `total`, the loop also
/// computes the group's summed result, as the forward loop does (see
/// `early.rs`).
fn sweep_typed<T: Elem>(
    plan: &FusedPlan,
    ins: &[Tensor],
    kept: &[Tensor],
    g: &Tensor,
    needs: &[bool],
    total: bool,
) -> Result<(Option<Tensor>, Vec<Option<Tensor>>)> {
    let Some((shape, _)) = fused_shape(ins) else {
        return Err(Error::runtime("fused operands changed"));
    };
    let n: usize = shape.iter().product();
    let g = &plan.mean_scaled(g, n)?;
    // One value everywhere (the gradient of a sum) is read as a splat.
    let g_splat = g.numel() == 1 || g.strides().iter().all(|&s| s == 0);
    let g = if g_splat { g.clone() } else { g.contiguous() };
    let mut all = ins.to_vec();
    all.push(g.clone());
    all.extend(kept.iter().cloned());
    // Where each step's kept result lies (the steps `forward_typed` kept).
    let mut kept_at: Vec<Option<SyncPtr<T>>> = vec![None; plan.0.steps.len()];
    let kept_steps = plan.kept_steps();
    if kept.len() == kept_steps.len() {
        for (k, t) in kept_steps.iter().zip(kept) {
            if t.is_contiguous() && t.numel() == n && t.dtype() == T::DTYPE {
                kept_at[*k] = Some(SyncPtr(elem_ptr::<T>(t)));
            }
        }
    }
    let kept_mask: Vec<bool> = kept_at.iter().map(Option::is_some).collect();
    let live = plan.live_steps(&kept_mask, total);
    let out = if total {
        Some(Tensor::try_empty(&[], T::DTYPE)?)
    } else {
        None
    };
    let refs: Vec<&Tensor> = all.iter().collect();
    let _guard = lock(&refs, None);
    let ops = operands::<T>(ins, &shape).ok_or_else(|| Error::runtime("fused operands changed"))?;
    let gop = if g_splat {
        // SAFETY: one element at the tensor's offset.
        Operand::Splat(unsafe { *elem_ptr::<T>(&g) })
    } else {
        Operand::Slice(elem_ptr::<T>(&g) as *const T)
    };
    // Full-sized gradients for full operands; per-part sums for the others.
    let outs: Vec<Option<Tensor>> = ops
        .iter()
        .zip(needs)
        .map(|(op, &need)| match (op, need) {
            (Operand::Slice(_), true) => Tensor::try_empty(&shape, T::DTYPE).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let count = n.div_ceil(PART).max(1);
    let mut sums = vec![T::default(); count * ops.len()];
    let sums_ptr = SyncPtr(sums.as_mut_ptr());
    let mut totals = vec![0.0f64; if total { count } else { 0 }];
    let out_ptrs: Vec<Option<SyncPtr<T>>> = outs
        .iter()
        .map(|o| o.as_ref().map(|t| SyncPtr(elem_ptr::<T>(t))))
        .collect();
    let last = plan.registers() - 1;
    let blk = block_len::<T>(2 * plan.registers(), n);
    let cx = Bwd {
        plan,
        ops: &ops,
        g: gop,
        out_ptrs: &out_ptrs,
        needs,
        kept_at: &kept_at,
        live: &live,
        sweep: &plan.0.sweep,
        stream: streams::<T>(n),
        sums: sums_ptr,
        totals: total.then_some(SyncPtr(totals.as_mut_ptr())),
        blk,
        last,
    };
    parts(n, &|p, s, e| bwd_part_best(&cx, p, s, e));
    drop(_guard);
    if let Some(out) = &out {
        set_total::<T>(plan, out, &totals, n);
    }
    let grads = outs
        .into_iter()
        .enumerate()
        .map(|(r, o)| {
            if !needs[r] {
                return Ok(None);
            }
            if let Some(t) = o {
                return Ok(Some(t));
            }
            let mut total = T::default();
            for p in 0..count {
                total = T::add(total, sums[p * ops.len() + r]);
            }
            let x = &ins[r];
            let dt = if x.is_wrapped_number() {
                T::DTYPE
            } else {
                x.dtype()
            };
            Ok(Some(
                Tensor::from_slice(&[total], &[])?
                    .to_dtype(dt)
                    .reshape(&x.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())?,
            ))
        })
        .collect::<Result<_>>()?;
    Ok((out, grads))
}

fn fused_forward(ins: &[Tensor], plan: &FusedPlan, keep: bool) -> Result<(Tensor, Vec<Tensor>)> {
    let (shape, dt) = fused_shape(ins).ok_or_else(|| Error::runtime("fused operands changed"))?;
    match dt {
        DType::Float32 => forward_typed::<f32>(plan, ins, &shape, keep),
        _ => forward_typed::<f64>(plan, ins, &shape, keep),
    }
}

crate::compile::capture_plain!(FusedPlan);

impl Tensor {
    /// The gradients of a fused group's inputs `inputs` (those `needs`
    /// marks, in order) from the gradient `grad` of its result, its steps'
    /// results computed again: the backward of `FusedElementwiseBackward`
    /// as one operation, which a capture records (the backward of a
    /// compiled program, `ops::compiled`).
    pub fn fused_elementwise_backward(
        inputs: &[Tensor],
        grad: &Tensor,
        plan: FusedPlan,
        needs: &[bool],
    ) -> Result<Vec<Tensor>> {
        crate::autograd::captured!(Tensor::fused_elementwise_backward (inputs: &[Tensor], grad: &Tensor, plan: FusedPlan, needs: &[bool]) -> Vec<Tensor> {
            let gs = match fused_shape(inputs).map(|(_, dt)| dt) {
                Some(DType::Float32) => backward_typed::<f32>(&plan, inputs, &[], grad, needs)?,
                _ => backward_typed::<f64>(&plan, inputs, &[], grad, needs)?,
            };
            Ok(gs.into_iter().flatten().collect())
        })
    }
}

derivatives! {
    table FORMULAS("fused elementwise groups of compiled programs") for Tensor;

    /// A fused elementwise group of a compiled program over `inputs` (see
    /// the module docs); the operands must fit the fast loops (as
    /// `Program::fuse` checks before calling it).
    pub fn fused_elementwise(inputs: &[Tensor], plan: &FusedPlan) -> Result<Tensor> {
        before {
            let keep = crate::tensor::is_grad_enabled() && inputs.iter().any(Tensor::requires_grad);
        }
        record "FusedElementwiseBackward", each [inputs];
        compute {
            let plan = plan.clone();
            let (y, kept) = fused_forward(inputs, &plan, keep)?;
            let n_kept = kept.len();
        } => out = y;
        save |s| {
            for t in inputs {
                s.save("inputs", t);
            }
            for t in &kept {
                s.save("kept", t);
            }
        }
        backward |ctx, g| {
            let n = plan.0.inputs;
            let ins: Vec<Tensor> = (0..n).map(|i| ctx.saved(i)).collect::<Result<_>>()?;
            let kept: Vec<Tensor> = (n..n + n_kept).map(|i| ctx.saved(i)).collect::<Result<_>>()?;
            if crate::tensor::is_grad_enabled() {
                // create_graph: the same sweep with recorded operations.
                return plan.backward_tensors(&ins, &g[0]);
            }
            let needs: Vec<bool> = (0..ins.len()).map(|i| ctx.needs(i)).collect();
            if crate::compile::records() {
                // A capture of this backward: one recorded operation, which
                // computes the kept results again.
                let mut gs = Tensor::fused_elementwise_backward(&ins, &g[0], plan.clone(), &needs)?
                    .into_iter();
                return Ok(needs.iter().map(|&n| if n { gs.next() } else { None }).collect());
            }
            match fused_shape(&ins).map(|(_, dt)| dt) {
                Some(DType::Float32) => backward_typed::<f32>(&plan, &ins, &kept, &g[0], &needs),
                _ => backward_typed::<f64>(&plan, &ins, &kept, &g[0], &needs),
            }
        };
        forward none because "a compiled program runs its unfused operations when an input has a tangent";
        batched rows because "the fused loops take one gradient at a time";
    }
}
