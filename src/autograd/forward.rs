//! Forward-mode automatic differentiation: dual levels and tangents.
//!
//! While a dual level is open (there is at most one, process-wide, as in
//! torch), a tensor may carry a tangent: a tensor of its own shape and
//! dtype. Every op that records through [`Recorder`](super::Recorder)
//! declares a forward formula with [`Recorder::jvp`](super::Recorder::jvp);
//! when any input has a tangent, the formula maps the input tangents to the
//! output tangents. Formulas are ordinary (differentiable) ops run with
//! forward AD off on this thread and grad mode as the caller had it, so a
//! tangent is itself part of the reverse graph (reverse-over-forward), and
//! backward formulas run on dual tensors propagate tangents
//! (forward-over-reverse).
//!
//! Note [Tangents of views]: a view made by a view op gets its tangent from
//! the op's formula, which replays the view on the input's tangent, so the
//! two share memory as the primals do. A view that has no tangent of its
//! own looks through to its base: when the base has a tangent, the view's
//! tangent is the same view of it. An in-place op on a view whose base has
//! no tangent yet first gives the base a zero tangent, then writes through
//! the view of it. Tensors made by `detach` or `unpack_dual` never look
//! through.
//!
//! A batched level (used by `jacobian(strategy="forward-mode")`) gives
//! every tangent an extra leading dim: the batch. Ops whose formulas handle
//! it say so with [`Recorder::jvp_batched`](super::Recorder::jvp_batched);
//! the others see one row at a time.

use super::GradModeGuard;
use crate::tensor::{Layout, WeakTensor};
use crate::{Error, Result, Tensor};
use parking_lot::{Mutex, RwLock};
use smallvec::SmallVec;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The open level: its generation (tangents of other generations are
/// stale) and batch size.
#[derive(Clone, Copy)]
struct Level {
    generation: u64,
    batch: Option<usize>,
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static LEVEL: RwLock<Option<Level>> = RwLock::new(None);
static GENERATION: AtomicU64 = AtomicU64::new(1);
/// Every tensor given a tangent at the open level: closing the level clears
/// them (a tangent's graph may hold its primal, a cycle only this breaks).
static DUALS: Mutex<Vec<WeakTensor>> = Mutex::new(Vec::new());

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// The level ops on this thread see: `None` when no level is open or
/// forward AD is switched off here.
#[inline]
fn level() -> Option<Level> {
    if !ACTIVE.load(Ordering::Acquire) || !ENABLED.with(|c| c.get()) {
        return None;
    }
    *LEVEL.read()
}

fn open_level() -> Option<Level> {
    *LEVEL.read()
}

/// Opens the dual level (index 0). Only one level can be open at a time.
pub fn enter_dual_level() -> Result<usize> {
    enter(None)
}

/// Opens a batched dual level: every tangent has a leading dim of `batch`
/// rows, each row an independent tangent.
pub fn enter_batched_dual_level(batch: usize) -> Result<usize> {
    enter(Some(batch))
}

fn enter(batch: Option<usize>) -> Result<usize> {
    let mut slot = LEVEL.write();
    if slot.is_some() {
        return Err(Error::runtime(
            "Nested forward mode AD is not supported at the moment",
        ));
    }
    *slot = Some(Level {
        generation: GENERATION.fetch_add(1, Ordering::AcqRel),
        batch,
    });
    ACTIVE.store(true, Ordering::Release);
    Ok(0)
}

/// Closes the dual level (`level` defaults to the open one); every tangent
/// of it is dropped from view.
pub fn exit_dual_level(level: Option<usize>) -> Result<()> {
    let mut slot = LEVEL.write();
    match (*slot, level) {
        (None, _) => Err(Error::runtime(
            "Trying to exit a forward AD level that does not exist: no dual level is open.",
        )),
        (Some(_), Some(l)) if l != 0 => Err(Error::runtime(format!(
            "Trying to exit a forward AD level that was not the last one that was created. This is not supported. (asked to exit level {l}; the open level is 0)"
        ))),
        (Some(_), _) => {
            *slot = None;
            ACTIVE.store(false, Ordering::Release);
            drop(slot);
            let duals = std::mem::take(&mut *DUALS.lock());
            for t in duals.iter().filter_map(WeakTensor::upgrade) {
                let old = t.autograd().tangent_slot().lock().take();
                drop(old);
            }
            Ok(())
        }
    }
}

/// The open dual level, closed when dropped: the scoped form of
/// [`enter_dual_level`] and [`exit_dual_level`] for Rust code. The level is
/// process-wide, so only one can be open at a time; [`DualLevel::enter`]
/// fails while another is.
///
/// A forward-mode derivative (a Jacobian-vector product): give the input a
/// tangent, run the function, read the output's tangent.
///
/// ```
/// use ferrograd::autograd::DualLevel;
/// use ferrograd::Tensor;
/// # fn main() -> ferrograd::Result<()> {
/// // f(x) = x^2 sin(x), f'(x) = 2x sin(x) + x^2 cos(x); the JVP is f'(x) * v.
/// let x = Tensor::from_slice(&[1.0f64, 2.0], &[2])?;
/// let v = Tensor::from_slice(&[1.0f64, 0.5], &[2])?;
/// let level = DualLevel::enter()?;
/// let dual = level.make_dual(&x, &v)?;
/// let y = dual.mul(&dual)?.mul(&dual.sin()?)?;
/// let jvp = level.tangent(&y).unwrap().to_vec::<f64>();
/// for (i, (x, v)) in [(1.0f64, 1.0), (2.0, 0.5)].into_iter().enumerate() {
///     let want = (2.0 * x * x.sin() + x * x * x.cos()) * v;
///     assert!((jvp[i] - want).abs() < 1e-12);
/// }
/// drop(level); // closes the level: tangents are gone
/// # Ok(())
/// # }
/// ```
#[must_use = "the level closes when the guard is dropped"]
pub struct DualLevel {
    generation: u64,
}

impl DualLevel {
    /// Opens the dual level.
    pub fn enter() -> Result<DualLevel> {
        enter(None)?;
        let generation = open_level().map_or(0, |l| l.generation);
        Ok(DualLevel { generation })
    }

    /// Opens a batched dual level: every tangent has a leading dim of
    /// `batch` rows, each an independent tangent.
    pub fn enter_batched(batch: usize) -> Result<DualLevel> {
        enter(Some(batch))?;
        let generation = open_level().map_or(0, |l| l.generation);
        Ok(DualLevel { generation })
    }

    /// A view of `primal` carrying `tangent` at this level (see
    /// [`make_dual`]).
    pub fn make_dual(&self, primal: &Tensor, tangent: &Tensor) -> Result<Tensor> {
        make_dual(primal, tangent, Some(0))
    }

    /// The tangent of `t` at this level (`None` for none, i.e. zero).
    pub fn tangent(&self, t: &Tensor) -> Option<Tensor> {
        tangent_at(t, self.generation)
    }

    /// `t` without its tangent, and the tangent (see [`unpack_dual`]).
    pub fn unpack(&self, t: &Tensor) -> Result<(Tensor, Option<Tensor>)> {
        unpack_dual(t, Some(0))
    }
}

impl Drop for DualLevel {
    fn drop(&mut self) {
        // Only the level this guard opened: it may have been closed by hand
        // (and another opened) meanwhile.
        if open_level().is_some_and(|l| l.generation == self.generation) {
            let _ = exit_dual_level(None);
        }
    }
}

/// The index of the open dual level, if any.
pub fn current_dual_level() -> Option<usize> {
    open_level().map(|_| 0)
}

/// Whether forward AD is on for this thread (it is off while forward
/// formulas run, so formulas do not differentiate themselves).
pub fn is_fwd_grad_enabled() -> bool {
    ENABLED.with(|c| c.get())
}

/// Switches forward AD on or off for this thread; returns the previous
/// mode (see [`FwGradGuard`] for the scoped form).
pub fn set_fwd_grad_enabled(enabled: bool) -> bool {
    ENABLED.with(|c| c.replace(enabled))
}

/// Switches forward AD off (or on) for this thread until dropped.
#[must_use = "the mode is restored when the guard is dropped"]
pub struct FwGradGuard {
    prev: bool,
}

impl FwGradGuard {
    /// Sets forward AD to `enabled` on this thread until the guard is
    /// dropped.
    pub fn new(enabled: bool) -> FwGradGuard {
        FwGradGuard {
            prev: ENABLED.with(|c| c.replace(enabled)),
        }
    }
}

impl Drop for FwGradGuard {
    fn drop(&mut self) {
        ENABLED.with(|c| c.set(self.prev));
    }
}

fn check_level(level: Option<usize>, what: &str) -> Result<Level> {
    let open = open_level();
    match (open, level) {
        (Some(l), None | Some(0)) => Ok(l),
        (Some(_), Some(l)) => Err(Error::runtime(format!(
            "{what}: dual level {l} is not open (the open level is 0)"
        ))),
        (None, _) => Err(Error::runtime(format!(
            "Trying to {what} for forward AD but no level exists, make sure to enter_dual_level() first."
        ))),
    }
}

/// The tangent stored on `t` itself for `generation`.
fn own_tangent(t: &Tensor, generation: u64) -> Option<Tensor> {
    match &*t.autograd_if_made()?.tangent_slot().lock() {
        Some((g, tan)) if *g == generation => Some(tan.clone()),
        _ => None,
    }
}

/// Whether `t` was made by `detach` or `unpack_dual` (so a view never sees
/// its base's tangent).
fn is_fw_detached(t: &Tensor) -> bool {
    t.autograd_if_made()
        .map_or(t.autograd_slot().origin().detached, |m| m.is_fw_detached())
}

/// The geometry of `view` applied to `base_tangent`, which mirrors the
/// strides of `base` (see Note [Tangents of views]).
fn view_of_tangent(view: &Tensor, base: &Tensor, base_tangent: &Tensor) -> Option<Tensor> {
    let offset = (view.offset() + base_tangent.offset()).checked_sub(base.offset())?;
    let layout = Layout::new(view.shape(), view.strides(), offset);
    Some(base_tangent.view_with_layout(layout))
}

/// `t`'s tangent for `generation`: its own, or the view of its base's.
fn tangent_at(t: &Tensor, generation: u64) -> Option<Tensor> {
    if let Some(tan) = own_tangent(t, generation) {
        return Some(tan);
    }
    let base = t.base()?;
    if is_fw_detached(t) || base.dtype() != t.dtype() {
        return None;
    }
    let bt = own_tangent(base, generation)?;
    if bt.strides() != base.strides() {
        return None;
    }
    view_of_tangent(t, base, &bt)
}

/// The tangent of `t` at the open level, as ops see it (`None` when no
/// level is open, forward AD is off on this thread, or `t` has none).
pub fn fw_grad(t: &Tensor) -> Option<Tensor> {
    level().and_then(|l| tangent_at(t, l.generation))
}

/// Whether a level is open (and forward AD on here) and any of `ts` has a
/// tangent.
pub(crate) fn any_tangent(ts: &[&Tensor]) -> bool {
    level().is_some_and(|l| ts.iter().any(|t| tangent_at(t, l.generation).is_some()))
}

fn set_own(t: &Tensor, generation: u64, tangent: Tensor) {
    let old = t
        .autograd()
        .tangent_slot()
        .lock()
        .replace((generation, tangent));
    if old.is_none() {
        DUALS.lock().push(t.downgrade());
    }
}

fn expected_shape(primal: &[usize], batch: Option<usize>) -> Vec<usize> {
    batch.into_iter().chain(primal.iter().copied()).collect()
}

/// `make_dual(tensor, tangent, level=None)`: a view of `primal` whose
/// tangent is `tangent` (used as is when its strides match the primal's,
/// else copied into the primal's layout). The view is differentiable with
/// respect to `primal`.
pub fn make_dual(primal: &Tensor, tangent: &Tensor, level: Option<usize>) -> Result<Tensor> {
    let lvl = check_level(level, "create a dual Tensor")?;
    if !primal.dtype().is_differentiable() {
        return Err(Error::value(format!(
            "Expected primal to be floating point or complex, but got: {}",
            primal.dtype()
        )));
    }
    if !tangent.dtype().is_differentiable() {
        return Err(Error::value(format!(
            "Expected tangent to be floating point or complex, but got: {}",
            tangent.dtype()
        )));
    }
    let want = expected_shape(primal.shape(), lvl.batch);
    if tangent.shape() != want.as_slice() {
        return Err(Error::runtime(format!(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size {:?} while the given forward gradient is of size {:?}.",
            want,
            tangent.shape()
        )));
    }
    // The tangent keeps its own floating dtype (as torch allows): the
    // forward formulas promote it with the primal's values.
    let dual = {
        let _off = FwGradGuard::new(false);
        primal.alias_named("MakeDualBackward0")?
    };
    let tangent = match lvl.batch {
        None => mirror(tangent, primal)?,
        Some(_) => {
            let _off = FwGradGuard::new(false);
            tangent.copy()
        }
    };
    dual.autograd().set_fw_detached();
    set_own(&dual, lvl.generation, tangent);
    Ok(dual)
}

/// `tangent` with `primal`'s strides, as an own tangent must have (see
/// Note [Tangents of views]): itself when they already agree, else copied
/// into a fresh tensor with them (a dense one when `primal` repeats
/// elements, as an expanded tensor does), keeping the tangent's dtype.
fn mirror(tangent: &Tensor, primal: &Tensor) -> Result<Tensor> {
    // Strides of dims of size 1 place nothing.
    let same = tangent
        .shape()
        .iter()
        .zip(tangent.strides().iter().zip(primal.strides()))
        .all(|(&n, (a, b))| n <= 1 || a == b);
    if same {
        return Ok(tangent.clone());
    }
    let _off = FwGradGuard::new(false);
    if !primal.layout().is_non_overlapping() {
        return Ok(tangent.copy());
    }
    let own = Tensor::try_empty_strided(primal.shape(), primal.strides(), tangent.dtype())?;
    own.copy_(tangent)?;
    Ok(own)
}

/// `unpack_dual(tensor, level=None)`: a view of `t` that has no tangent,
/// and `t`'s tangent (`None` when it has none or no level is open).
pub fn unpack_dual(t: &Tensor, level: Option<usize>) -> Result<(Tensor, Option<Tensor>)> {
    let Some(lvl) = open_level() else {
        return Ok((t.clone(), None));
    };
    if let Some(l) = level {
        if l != 0 {
            return Ok((t.clone(), None));
        }
    }
    let Some(tangent) = tangent_at(t, lvl.generation) else {
        return Ok((t.clone(), None));
    };
    let primal = {
        let _off = FwGradGuard::new(false);
        t.alias_named("AliasBackward0")?
    };
    primal.autograd().set_fw_detached();
    Ok((primal, Some(tangent)))
}

/// The input tangents a forward formula maps to output tangents.
pub struct Tangents {
    ts: SmallVec<[Option<Tensor>; 4]>,
    batch: Option<usize>,
}

impl Tangents {
    /// The tangent of input `i` (`None` stands for zeros).
    pub fn get(&self, i: usize) -> Option<&Tensor> {
        self.ts.get(i).and_then(Option::as_ref)
    }
    /// The number of inputs.
    pub fn len(&self) -> usize {
        self.ts.len()
    }
    /// Whether the op has no inputs.
    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }
    /// In a batched level (only for formulas declared with
    /// `jvp_batched`): the size of every tangent's extra leading dim.
    pub fn batch(&self) -> Option<usize> {
        self.batch
    }
    /// Input dim `d` as counted in a tangent (moved past a batch dim).
    pub fn dim(&self, d: isize) -> isize {
        d + isize::from(d >= 0 && self.batch.is_some())
    }
    /// A primal shape as tangents of it are shaped.
    pub fn shape(&self, shape: &[usize]) -> Vec<usize> {
        expected_shape(shape, self.batch)
    }
    /// The tangent of input `i`, or zeros shaped like `primal`.
    pub fn or_zeros(&self, i: usize, primal: &Tensor) -> Result<Tensor> {
        match self.get(i) {
            Some(t) => Ok(t.clone()),
            None => Tensor::try_zeros(&self.shape(primal.shape()), primal.dtype()),
        }
    }
    /// `Σ_i f(i, t_i)` over the inputs that have a tangent (`None` when
    /// none has): the tangent of an op that is a sum of per-input terms.
    pub fn combine(
        &self,
        mut f: impl FnMut(usize, &Tensor) -> Result<Tensor>,
    ) -> Result<Option<Tensor>> {
        let mut acc: Option<Tensor> = None;
        for (i, t) in self.ts.iter().enumerate() {
            if let Some(t) = t {
                let term = f(i, t)?;
                acc = Some(match acc {
                    Some(a) => a.add(&term)?,
                    None => term,
                });
            }
        }
        Ok(acc)
    }
    /// The one output tangent `f(t_0)` of a single-input op.
    pub fn map1(&self, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![self.get(0).map(f).transpose()?])
    }
    /// The one output tangent of an op whose tangent is a sum of per-input
    /// terms (see [`Tangents::combine`]).
    pub fn sum1(
        &self,
        f: impl FnMut(usize, &Tensor) -> Result<Tensor>,
    ) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![self.combine(f)?])
    }
}

/// A forward formula: input tangents to one tangent per output (`None`
/// for zero).
pub type JvpFn<'a> = dyn Fn(&Tangents) -> Result<Vec<Option<Tensor>>> + 'a;

/// What a recorder captured for forward AD: the inputs' tangents and the
/// grad mode the formula runs under.
pub(crate) struct FwState {
    level: Level,
    tangents: SmallVec<[Option<Tensor>; 4]>,
    input_ids: SmallVec<[usize; 4]>,
    /// The highest rank among the inputs (the output rank of a
    /// broadcasting op).
    max_rank: usize,
}

/// The inputs' tangents, when a level is open and any input has one.
pub(crate) fn capture(inputs: &[Option<&Tensor>]) -> Option<FwState> {
    let level = level()?;
    let tangents: SmallVec<[Option<Tensor>; 4]> = inputs
        .iter()
        .map(|t| t.and_then(|t| tangent_at(t, level.generation)))
        .collect();
    if tangents.iter().all(Option::is_none) {
        return None;
    }
    let input_ids = inputs.iter().flatten().map(|t| t.id()).collect();
    let max_rank = inputs.iter().flatten().map(|t| t.ndim()).max().unwrap_or(0);
    Some(FwState {
        level,
        tangents,
        input_ids,
        max_rank,
    })
}

/// [`capture`] for inputs that are all present.
pub(crate) fn capture_all(inputs: &[&Tensor]) -> Option<FwState> {
    level()?;
    let opt: SmallVec<[Option<&Tensor>; 4]> = inputs.iter().map(|&t| Some(t)).collect();
    capture(&opt)
}

/// Runs `jvp` (the op's forward formula) and gives each output its
/// tangent (outputs that are inputs handed back unchanged keep theirs).
/// `batched` says whether the formula handles a batch dim; if not, a
/// batched level runs it once per row and stacks the rows.
pub(crate) fn apply(
    op: &str,
    state: FwState,
    outputs: &[&Tensor],
    jvp: Option<&JvpFn<'_>>,
    batched: bool,
    align: bool,
    grad_mode: bool,
) -> Result<Vec<Option<Tensor>>> {
    let Some(jvp) = jvp else {
        return Err(Error::runtime(format!(
            "Trying to use forward AD with {op} that does not support it because it has not been implemented yet."
        )));
    };
    let _off = FwGradGuard::new(false);
    let _grad = GradModeGuard::new(grad_mode);
    let batch = state.level.batch;
    let generation = state.level.generation;
    let state_ids = state.input_ids;
    let results = match batch {
        Some(b) if !batched => {
            let mut rows: Vec<Vec<Option<Tensor>>> = Vec::with_capacity(b);
            for r in 0..b {
                let ts = state
                    .tangents
                    .iter()
                    .map(|t| t.as_ref().map(|t| t.select(0, r as isize)).transpose())
                    .collect::<Result<_>>()?;
                rows.push(jvp(&Tangents { ts, batch: None })?);
            }
            (0..outputs.len())
                .map(|k| stack_rows(&rows, k, outputs[k]))
                .collect::<Result<Vec<_>>>()?
        }
        Some(_) if align => jvp(&Tangents {
            ts: align_ranks(state.tangents, state.max_rank + 1)?,
            batch,
        })?,
        _ => jvp(&Tangents {
            ts: state.tangents,
            batch,
        })?,
    };
    let mut out_tangents = Vec::with_capacity(outputs.len());
    for (k, out) in outputs.iter().enumerate() {
        let t = match results.get(k).cloned().flatten() {
            Some(t) if out.dtype().is_differentiable() && !state_ids.contains(&out.id()) => {
                let t = fit(t, out, batch)?;
                // A view op's tangent is the same view of its input's
                // tangent, which must stay shared.
                let t = match batch {
                    None if out.base().is_none() => mirror(&t, out)?,
                    _ => t,
                };
                set_own(out, generation, t.clone());
                Some(t)
            }
            _ => None,
        };
        out_tangents.push(t);
    }
    Ok(out_tangents)
}

/// A batched tangent given singleton dims after the batch dim up to `rank`.
fn pad_batched(mut t: Tensor, rank: usize) -> Result<Tensor> {
    while t.ndim() < rank {
        t = t.unsqueeze(1)?;
    }
    Ok(t)
}

/// Batched tangents of a broadcasting op, padded to the output's rank (plus
/// the batch dim) so that all line up on its trailing dims.
fn align_ranks(
    ts: SmallVec<[Option<Tensor>; 4]>,
    rank: usize,
) -> Result<SmallVec<[Option<Tensor>; 4]>> {
    ts.into_iter()
        .map(|t| t.map(|t| pad_batched(t, rank)).transpose())
        .collect()
}

/// Stacks output `k` of per-row results (rows without a tangent are zero).
fn stack_rows(rows: &[Vec<Option<Tensor>>], k: usize, out: &Tensor) -> Result<Option<Tensor>> {
    if rows.iter().all(|r| r.get(k).is_none_or(Option::is_none)) {
        return Ok(None);
    }
    let parts = rows
        .iter()
        .map(|r| match r.get(k).cloned().flatten() {
            Some(t) => fit(t, out, None),
            None => Tensor::try_zeros(out.shape(), out.dtype()),
        })
        .collect::<Result<Vec<_>>>()?;
    Tensor::stack(&parts, 0).map(Some)
}

/// A formula's result as a tangent of `out`: broadcast to its shape (a
/// fresh tensor then) and cast to its dtype.
fn fit(t: Tensor, out: &Tensor, batch: Option<usize>) -> Result<Tensor> {
    let want = expected_shape(out.shape(), batch);
    let t = if t.dtype() != out.dtype() {
        t.to_dtype(out.dtype())
    } else {
        t
    };
    if t.shape() == want.as_slice() {
        return Ok(t);
    }
    // A 0-dim result is a constant: it broadcasts as it is.
    let t = if batch.is_some() && t.ndim() > 0 {
        pad_batched(t, want.len())?
    } else {
        t
    };
    let sizes: Vec<isize> = want.iter().map(|&n| n as isize).collect();
    Ok(t.expand(&sizes)?.copy())
}

/// Gives `t` the tangent `tangent` at the open level (for outputs of
/// custom Functions, whose formula is user code): checked like
/// [`make_dual`], and stored as its own tangent.
pub fn set_fw_grad(t: &Tensor, tangent: &Tensor) -> Result<()> {
    let lvl = check_level(None, "set a tangent")?;
    let want = expected_shape(t.shape(), lvl.batch);
    if tangent.shape() != want.as_slice() {
        return Err(Error::runtime(format!(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size {:?} while the given forward gradient is of size {:?}.",
            want,
            tangent.shape()
        )));
    }
    if !t.dtype().is_differentiable() {
        return Err(Error::runtime(format!(
            "Trying to set a forward gradient on a tensor of dtype {}: only floating point tensors have tangents",
            t.dtype()
        )));
    }
    let tangent = if tangent.dtype() != t.dtype() {
        tangent.to_dtype(t.dtype())
    } else {
        tangent.clone()
    };
    let tangent = match lvl.batch {
        None => mirror(&tangent, t)?,
        Some(_) => tangent,
    };
    set_own(t, lvl.generation, tangent);
    Ok(())
}

/// Gives a saved copy of an output the output's tangent, so backward
/// formulas that read it see a dual tensor (forward-over-reverse).
pub(crate) fn share_tangent(from_output: &Tensor, saved: &Tensor) {
    if let Some(l) = open_level() {
        if let Some(t) = own_tangent(from_output, l.generation) {
            set_own(saved, l.generation, t);
        }
    }
}

/// After an in-place op wrote `result` into `dst`: `dst`'s tangent becomes
/// `result`'s, written into the existing tangent (so views and their base
/// stay in step), or a new one (a zero tangent on the base first when
/// `dst` is a view). `None` means zero.
pub(crate) fn set_inplace_tangent(dst: &Tensor, tangent: Option<Tensor>) -> Result<()> {
    let Some(lvl) = open_level() else {
        return Ok(());
    };
    let _off = FwGradGuard::new(false);
    if let Some(existing) = tangent_at(dst, lvl.generation) {
        return match tangent {
            Some(t) => existing.copy_(&t),
            None => existing.zero_(),
        };
    }
    let Some(t) = tangent else { return Ok(()) };
    match dst.base() {
        Some(base) if !is_fw_detached(dst) && base.dtype() == dst.dtype() => {
            let bt = Tensor::empty_strided_like(base)?;
            bt.zero_()?;
            let view = view_of_tangent(dst, base, &bt).ok_or_else(|| {
                Error::runtime("cannot place the tangent of a view that starts before its base")
            })?;
            set_own(base, lvl.generation, bt);
            view.copy_(&t)
        }
        _ => {
            let own = Tensor::empty_strided_like(dst)?;
            own.copy_(&t)?;
            set_own(dst, lvl.generation, own);
            Ok(())
        }
    }
}
