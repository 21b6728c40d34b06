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
//! A full `sum` of a group's result, when nothing else reads the
//! elements, joins the group (see `group.rs`): the loop adds each
//! block's results in f64 and writes no elements.

use crate::autograd::{derivatives, sum_to};
use crate::kernels::access::{elem_ptr, lock};
use crate::kernels::isa;
use crate::kernels::pointwise::{float_block32, float_block64, FloatFn};
use crate::pool::{par_for, SyncPtr, PARALLEL_MIN_ELEMS};
use crate::{DType, Error, Result, Tensor};
use std::sync::Arc;

mod group;

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

#[inline(always)]
fn map1_in_place<T: Copy>(out: &mut [T], f: impl Fn(T) -> T) {
    for o in out.iter_mut() {
        *o = f(*o);
    }
}

#[inline(always)]
fn mul_into<T: Elem>(acc: &mut [T], v: &[T]) {
    for (o, &x) in acc.iter_mut().zip(v) {
        *o = T::mul(x, *o);
    }
}

#[inline(always)]
fn add_into<T: Elem>(acc: &mut [T], v: &[T]) {
    for (o, &x) in acc.iter_mut().zip(v) {
        *o = T::add(*o, x);
    }
}

impl FusedPlan {
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
    /// steps those are computed from, up to kept results and inputs.
    fn live_steps(&self, kept: &[bool]) -> Vec<bool> {
        let n = self.0.inputs;
        let mut needed = vec![false; self.registers()];
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

    /// Computes the steps' registers of elements `at..at + len` into
    /// `regs` (`blk` per register, the inputs' registers unused) and
    /// points `ptrs` at every register's elements: an input is read where
    /// it lies (a splat from `splats`, filled once per part).
    ///
    /// # Safety
    /// Slice operands are readable for `at + len` elements; `splats` holds
    /// `blk` elements per input.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn forward_block<T: Elem>(
        &self,
        ins: &[Operand<T>],
        splats: &[T],
        ptrs: &mut [*const T],
        at: usize,
        len: usize,
        regs: &mut [T],
        blk: usize,
        kept: &[Option<SyncPtr<T>>],
        live: &[bool],
    ) {
        let n = self.0.inputs;
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
            // SAFETY: register `d` lies in `regs`, which no operand pointer
            // reaches for a register of this or a later step.
            let out = std::slice::from_raw_parts_mut(base.add(d * blk), len);
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
    /// `regs`, from the output's gradient (in the last register of
    /// `grads`), swept in reverse. `s1`, `s2` are scratch blocks. A
    /// register's first contribution is written, later ones added; the
    /// inputs' registers end up holding their gradients (zeros for one
    /// that no step reads).
    #[inline(always)]
    ///
    /// # Safety
    /// `ptrs` point at `len` readable elements of every register (as
    /// [`FusedPlan::forward_block`] leaves them).
    unsafe fn backward_block<T: Elem>(
        &self,
        ptrs: &[*const T],
        grads: &mut [T],
        len: usize,
        s1: &mut [T],
        s2: &mut [T],
        blk: usize,
    ) {
        let n = self.0.inputs;
        let reg = |r: usize| std::slice::from_raw_parts(ptrs[r], len);
        let (s1, s2) = (&mut s1[..len], &mut s2[..len]);
        // On the stack for plans of up to 64 registers: this runs per block.
        let mut init: smallvec::SmallVec<[bool; 64]> = smallvec::smallvec![false; ptrs.len()];
        let put = |lo: &mut [T], init: &mut [bool], r: usize, v: &[T]| {
            let dst = &mut lo[r * blk..r * blk + len];
            if std::mem::replace(&mut init[r], true) {
                add_into(dst, v);
            } else {
                dst.copy_from_slice(v);
            }
        };
        for (k, step) in self.0.steps.iter().enumerate().rev() {
            let d = n + k;
            let (lo, hi) = grads.split_at_mut(d * blk);
            let g = &hi[..len];
            match *step {
                Step::Add(a, b) => {
                    put(lo, &mut init, a, g);
                    put(lo, &mut init, b, g);
                }
                Step::Sub(a, b) => {
                    put(lo, &mut init, a, g);
                    map1(s2, g, |v| -v);
                    put(lo, &mut init, b, s2);
                }
                Step::Mul(a, b) => {
                    zip2(s1, g, reg(b), T::mul);
                    put(lo, &mut init, a, s1);
                    zip2(s2, g, reg(a), T::mul);
                    put(lo, &mut init, b, s2);
                }
                Step::Div(a, b) => {
                    zip2(s1, g, reg(b), T::div);
                    put(lo, &mut init, a, s1);
                    // d(a/b)/db = -(a/b)/b.
                    zip2(s2, reg(d), reg(b), T::div);
                    mul_into(s2, g);
                    map1_in_place(s2, |v| -v);
                    put(lo, &mut init, b, s2);
                }
                Step::Neg(a) => {
                    map1(s1, g, |v| -v);
                    put(lo, &mut init, a, s1);
                }
                Step::Float(f, a) => {
                    let (x, y) = (reg(a), reg(d));
                    match f {
                        FloatFn::Tanh => map1(s1, y, |v| T::sub(T::unit(), T::mul(v, v))),
                        FloatFn::Sigmoid => map1(s1, y, |v| T::mul(T::sub(T::unit(), v), v)),
                        FloatFn::Exp => s1.copy_from_slice(y),
                        FloatFn::Log => map1(s1, x, |v| T::div(T::unit(), v)),
                        FloatFn::Sin => T::block(FloatFn::Cos)(x, s1),
                        FloatFn::Cos => {
                            T::block(FloatFn::Sin)(x, s1);
                            map1_in_place(s1, |v| -v);
                        }
                        _ => unreachable!("only the listed functions fuse"),
                    }
                    mul_into(s1, g);
                    put(lo, &mut init, a, s1);
                }
            }
        }
        for r in 0..n {
            if !init[r] {
                grads[r * blk..r * blk + len].fill(T::default());
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
            g.expand(&last.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())?
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

/// Runs `body(part, start, end)` over `0..n` in parts of [`PART`] (on the
/// pool when large).
fn parts(n: usize, body: &(dyn Fn(usize, usize, usize) + Sync)) {
    let count = n.div_ceil(PART).max(1);
    if n >= PARALLEL_MIN_ELEMS && crate::pool::kernel_threads() > 1 {
        par_for(count, 1, &|p| body(p, p * PART, ((p + 1) * PART).min(n)));
    } else {
        for p in 0..count {
            body(p, p * PART, ((p + 1) * PART).min(n));
        }
    }
}

/// `blk` copies of each splat operand's value (zeros for the others).
fn splat_registers<T: Elem>(ops: &[Operand<T>], blk: usize) -> Vec<T> {
    let mut v = vec![T::default(); ops.len() * blk];
    for (r, op) in ops.iter().enumerate() {
        if let Operand::Splat(x) = *op {
            v[r * blk..(r + 1) * blk].fill(x);
        }
    }
    v
}

/// What a forward part needs (shared by the workers).
struct Fwd<'a, T> {
    plan: &'a FusedPlan,
    ops: &'a [Operand<T>],
    /// The result's elements, or (for a summed group) one sum per part.
    out: SyncPtr<T>,
    sums: SyncPtr<f64>,
    kept_out: &'a [(usize, SyncPtr<T>)],
    blk: usize,
    last: usize,
}
// SAFETY: the pointers are read (operands) or written in disjoint ranges
// (outputs) by the workers, from buffers locked for the call.
unsafe impl<T> Sync for Fwd<'_, T> {}

/// The forward pass over elements `s..e`.
///
/// # Safety
/// As `forward_typed` sets `cx` up: locked operands of the output's
/// length, outputs written by this part only in `s..e`.
#[inline(always)]
unsafe fn fwd_part<T: Elem>(cx: &Fwd<'_, T>, p: usize, s: usize, e: usize) {
    let (plan, blk) = (cx.plan, cx.blk);
    let mut regs = vec![T::default(); plan.registers() * blk];
    let splats = splat_registers(cx.ops, blk);
    let mut ptrs = vec![std::ptr::null::<T>(); plan.registers()];
    // A summed group adds its results in f64, in lanes (so the loop
    // vectorizes); the lanes and then the parts are added in order.
    let mut lanes = [0.0f64; 8];
    let mut at = s;
    while at < e {
        let len = blk.min(e - at);
        plan.forward_block(
            cx.ops,
            &splats,
            &mut ptrs,
            at,
            len,
            &mut regs,
            blk,
            &[],
            &[],
        );
        if plan.0.sum {
            let vals = std::slice::from_raw_parts(ptrs[cx.last], len);
            let mut chunks = vals.chunks_exact(8);
            for c in &mut chunks {
                for (l, &v) in lanes.iter_mut().zip(c) {
                    *l += v.widen();
                }
            }
            for (l, &v) in lanes.iter_mut().zip(chunks.remainder()) {
                *l += v.widen();
            }
        } else {
            std::ptr::copy_nonoverlapping(ptrs[cx.last], cx.out.get().add(at), len);
        }
        for (d, q) in cx.kept_out {
            std::ptr::copy_nonoverlapping(ptrs[*d], q.get().add(at), len);
        }
        at += len;
    }
    if plan.0.sum {
        *cx.sums.get().add(p) = lanes.iter().sum();
    }
}

/// What a backward part needs (shared by the workers).
struct Bwd<'a, T> {
    plan: &'a FusedPlan,
    ops: &'a [Operand<T>],
    g: Operand<T>,
    out_ptrs: &'a [Option<SyncPtr<T>>],
    needs: &'a [bool],
    kept_at: &'a [Option<SyncPtr<T>>],
    live: &'a [bool],
    sums: SyncPtr<T>,
    blk: usize,
    last: usize,
}
// SAFETY: as `Fwd`; each part writes its own row of `sums`.
unsafe impl<T> Sync for Bwd<'_, T> {}

/// The backward pass over elements `s..e` (part `p`).
///
/// # Safety
/// As `backward_typed` sets `cx` up.
#[inline(always)]
unsafe fn bwd_part<T: Elem>(cx: &Bwd<'_, T>, p: usize, s: usize, e: usize) {
    let (plan, blk, width) = (cx.plan, cx.blk, cx.ops.len());
    let mut regs = vec![T::default(); plan.registers() * blk];
    let mut grads = vec![T::default(); plan.registers() * blk];
    let (mut s1, mut s2) = (vec![T::default(); blk], vec![T::default(); blk]);
    let splats = splat_registers(cx.ops, blk);
    let mut ptrs = vec![std::ptr::null::<T>(); plan.registers()];
    let mut acc = vec![T::default(); width];
    let mut at = s;
    while at < e {
        let len = blk.min(e - at);
        plan.forward_block(
            cx.ops, &splats, &mut ptrs, at, len, &mut regs, blk, cx.kept_at, cx.live,
        );
        let gl = &mut grads[cx.last * blk..cx.last * blk + len];
        match cx.g {
            Operand::Slice(q) => gl.copy_from_slice(std::slice::from_raw_parts(q.add(at), len)),
            Operand::Splat(v) => gl.fill(v),
        }
        plan.backward_block(&ptrs, &mut grads, len, &mut s1, &mut s2, blk);
        for (r, slot) in cx.out_ptrs.iter().enumerate() {
            let gr = &grads[r * blk..r * blk + len];
            match slot {
                Some(ptr) => std::ptr::copy_nonoverlapping(gr.as_ptr(), ptr.get().add(at), len),
                None if cx.needs[r] => {
                    for &v in gr {
                        acc[r] = T::add(acc[r], v);
                    }
                }
                None => {}
            }
        }
        at += len;
    }
    for (r, &v) in acc.iter().enumerate() {
        *cx.sums.get().add(p * width + r) = v;
    }
}

/// `fwd_part_best` and `bwd_part_best`: the part functions compiled for
/// AVX-512, for AVX2 + FMA and for the baseline, chosen at run time. The
/// block loops are inlined into each, so a loop over a block costs no
/// call (the float functions' block kernels are called, and dispatch on
/// their own). No loop contracts multiplies and adds, so every level
/// gives the same bits.
macro_rules! isa_parts {
    ($best:ident, $part:ident, $cx:ident, ($($a:ident: $t:ty),*)) => {
        fn $best<T: Elem>(cx: &$cx<'_, T>, $($a: $t),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
                unsafe fn wide<T: Elem>(cx: &$cx<'_, T>, $($a: $t),*) {
                    $part(cx, $($a),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn mid<T: Elem>(cx: &$cx<'_, T>, $($a: $t),*) {
                    $part(cx, $($a),*)
                }
                if isa::has_avx512() {
                    // SAFETY: the CPU has the features; `cx` is set up as
                    // the part function requires.
                    return unsafe { wide(cx, $($a),*) };
                }
                if isa::has_avx2() {
                    // SAFETY: as above.
                    return unsafe { mid(cx, $($a),*) };
                }
            }
            // SAFETY: as above.
            unsafe { $part(cx, $($a),*) }
        }
    };
}
isa_parts!(fwd_part_best, fwd_part, Fwd, (p: usize, s: usize, e: usize));
isa_parts!(bwd_part_best, bwd_part, Bwd, (p: usize, s: usize, e: usize));

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
    let o = SyncPtr(elem_ptr::<T>(&out));
    let kept_out: Vec<(usize, SyncPtr<T>)> = kept
        .iter()
        .map(|(k, t)| (plan.0.inputs + k, SyncPtr(elem_ptr::<T>(t))))
        .collect();
    let last = plan.registers() - 1;
    let blk = block_len::<T>(2 * plan.registers(), n);
    let cx = Fwd {
        plan,
        ops: &ops,
        out: o,
        sums: SyncPtr(sums.as_mut_ptr()),
        kept_out: &kept_out,
        blk,
        last,
    };
    parts(n, &|p, s, e| fwd_part_best(&cx, p, s, e));
    drop(_g);
    if plan.0.sum {
        let total: f64 = sums.iter().sum();
        // SAFETY: the result is a new one-element tensor of dtype T.
        unsafe { *elem_ptr::<T>(&out) = T::of_f64(total) };
    }
    Ok((out, kept.into_iter().map(|(_, t)| t).collect()))
}

fn backward_typed<T: Elem>(
    plan: &FusedPlan,
    ins: &[Tensor],
    kept: &[Tensor],
    g: &Tensor,
    needs: &[bool],
) -> Result<Vec<Option<Tensor>>> {
    let Some((shape, _)) = fused_shape(ins) else {
        return Err(Error::runtime("fused operands changed"));
    };
    let n: usize = shape.iter().product();
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
    let live = plan.live_steps(&kept_mask);
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
        sums: sums_ptr,
        blk,
        last,
    };
    parts(n, &|p, s, e| bwd_part_best(&cx, p, s, e));
    drop(_guard);
    outs.into_iter()
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
        .collect()
}

fn fused_forward(ins: &[Tensor], plan: &FusedPlan, keep: bool) -> Result<(Tensor, Vec<Tensor>)> {
    let (shape, dt) = fused_shape(ins).ok_or_else(|| Error::runtime("fused operands changed"))?;
    match dt {
        DType::Float32 => forward_typed::<f32>(plan, ins, &shape, keep),
        _ => forward_typed::<f64>(plan, ins, &shape, keep),
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
            match fused_shape(&ins).map(|(_, dt)| dt) {
                Some(DType::Float32) => backward_typed::<f32>(&plan, &ins, &kept, &g[0], &needs),
                _ => backward_typed::<f64>(&plan, &ins, &kept, &g[0], &needs),
            }
        };
        forward none because "a compiled program runs its unfused operations when an input has a tangent";
        batched rows because "the fused loops take one gradient at a time";
    }
}
