//! Capture and replay: record the operations a closure runs over some
//! input tensors once, as a [`Program`], and run that program again over
//! other inputs of the same kind without the closure.
//!
//! A capture runs the closure for real (its results are the eager ones)
//! while this thread records every operation of the derivative tables it
//! calls: the operation, its non-tensor arguments (copied), and where each
//! tensor argument comes from. A tensor argument is a *value* (an input of
//! the capture or an output of an earlier recorded operation) or a
//! *constant*: a tensor that existed before the capture began (a model's
//! parameters and buffers, a global), held by reference, so a replay sees
//! its current contents (an optimizer's updates included). Each operation
//! also records whether grad mode was on.
//!
//! Replaying a program runs the same operations, in the same order, with
//! the same arguments, over the new inputs. The results are exactly what
//! eager execution computes (the same kernels run); in grad mode each
//! operation records its node as it does in eager mode, so backward,
//! hooks on the results and higher-order gradients work unchanged.
//!
//! A capture is *broken* (and yields no program) when the closure does
//! something a replay could not repeat:
//!
//! - it passes an operation a tensor made during the capture by something
//!   that was not recorded (a kernel's buffer, an explicit generator's
//!   draw, an operation outside the tables);
//! - it reads floating tensor values into the host (`item`, `to_vec`), or
//!   any value after a recorded operation changed state, so its further
//!   course may depend on them (a bool or integer `item` before that is a
//!   value guard instead: see [`Program::try_replay`]);
//! - it writes a tensor in place outside a recorded operation;
//! - it calls `autograd::grad`, or an operation whose arguments cannot be
//!   copied.
//!
//! `backward`, `.grad` reads and assignments, optimizer updates and draws
//! from the default generator are recorded like operations, so a whole
//! training step replays.
//! The reason is returned with the eager results; the caller runs such a
//! closure eagerly (see docs/compile.md for the Python wrapper's graph
//! breaks and guards).

use crate::{DType, Error, Result, Scalar, Tensor};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod args;
mod plan;

pub(crate) use args::capture_plain;
pub use args::{Capturable, TensorsIn};
pub(crate) use plan::Lifetimes;

/// Counts captures begun in this process; every tensor notes the count
/// when it is made, so a capture can tell a tensor made during it from
/// one that existed before.
static EPOCH: AtomicU64 = AtomicU64::new(1);

/// Counts changes of what a caller's guards read from tensors without
/// looking at them on every call (`requires_grad` flags).
static GUARD_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The count of changes to `requires_grad` flags in this process: a
/// caller that caches guards computed from tensors' flags recomputes them
/// when it moved.
pub fn guard_epoch() -> u64 {
    GUARD_EPOCH.load(Ordering::Relaxed)
}

/// Notes a change that cached guards must see (see [`guard_epoch`]).
pub(crate) fn guards_changed() {
    GUARD_EPOCH.fetch_add(1, Ordering::Relaxed);
}

/// The epoch a new tensor notes (see [`EPOCH`]).
#[inline]
pub(crate) fn epoch() -> u64 {
    EPOCH.load(Ordering::Relaxed)
}

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
    /// Whether `RECORDING` holds a capture (read without borrowing it).
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// Table operations running on this thread, outermost first: only an
    /// outermost one is recorded (it replays the ones it calls).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Where a recorded operation finds a tensor argument.
#[derive(Clone)]
pub enum Source {
    /// A value of the program: an input or an earlier operation's output.
    Value(usize),
    /// A tensor that existed before the capture, held by reference.
    Constant(Tensor),
}

impl Source {
    /// The tensor this source stands for among `vals`.
    pub fn get(&self, vals: &[Tensor]) -> Tensor {
        match self {
            Source::Value(i) => vals[*i].clone(),
            Source::Constant(t) => t.clone(),
        }
    }
}

pub(crate) type RowFn = dyn Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync;

/// One recorded operation.
#[derive(Clone)]
pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) run: Arc<RowFn>,
    pub(crate) grad_mode: bool,
    /// Whether it only computes its results (no in-place write, `.grad`
    /// change, draw from a generator or host read).
    pub(crate) pure: bool,
    /// Its tensor arguments' sources, in the order it took them.
    pub(crate) inputs: Vec<Source>,
    /// How many outputs it gave at capture time.
    pub(crate) outputs: usize,
    /// Their shapes and dtypes at capture time.
    pub(crate) metas: Vec<(Vec<usize>, DType)>,
    /// The arguments it was recorded with, for a pass over the program
    /// that rewrites rows it recognises (`None` for a read).
    pub(crate) args: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl Row {
    /// Whether it reads something into the host or a `.grad` (a value
    /// guard, a `.grad` read) rather than computing.
    pub(crate) fn is_read(&self) -> bool {
        self.name == VALUE_GUARD || self.name == "grad"
    }
}

fn metas(outs: &[&Tensor]) -> Vec<(Vec<usize>, DType)> {
    outs.iter()
        .map(|t| (t.shape().to_vec(), t.dtype()))
        .collect()
}

/// The state of a capture in progress on this thread.
pub struct Recording {
    start: u64,
    /// Tensor identity -> value id, for the inputs and every recorded
    /// output (the latest value of that identity).
    ids: HashMap<usize, usize>,
    /// The tensors behind `ids`, kept alive so no identity is reused.
    keep: Vec<Tensor>,
    constants: Vec<Tensor>,
    inputs: usize,
    rows: Vec<Row>,
    broken: Option<String>,
    /// The sources handed out for the operation being recorded.
    pending: Vec<Source>,
    /// Whether a recorded operation may have changed some `.grad`
    /// (backward, a `.grad` assignment) yet.
    grads_touched: bool,
    /// What the program assumes about `.grad`s before it runs.
    checks: Vec<GradCheck>,
    /// Whether a recorded operation had an effect beyond its results (an
    /// in-place write, a `.grad` change, a draw from a generator): value
    /// guards may only come before the first.
    effects: bool,
    /// Whether the operation being recorded noted an effect.
    row_effect: bool,
    /// Values by the memory they read (see [`begin_derived`]): a tensor
    /// the capture did not see, viewing the same elements of the same
    /// storage as a value, stands for that value.
    aliases: HashMap<ViewKey, usize>,
}

/// What a tensor reads: its first element's address, shape, strides and
/// dtype.
type ViewKey = (usize, Vec<usize>, Vec<usize>, DType);

fn view_key(t: &Tensor) -> ViewKey {
    (
        t.data_ptr(),
        t.shape().to_vec(),
        t.strides().to_vec(),
        t.dtype(),
    )
}

/// The name of a value guard's row (see [`record_value_read`]).
const VALUE_GUARD: &str = "value_guard";

/// Reads a tensor's `.grad` (the autograd layer's reader).
pub(crate) type GradReader = fn(&Tensor) -> Option<Tensor>;

/// A `.grad` the capture read before any recorded operation could change
/// it: whether it was there. A replay first checks that it still is (or
/// still is not), as the closure's course may have depended on it.
struct GradCheck {
    /// A constant, or an input of the program.
    tensor: Source,
    present: bool,
    read: GradReader,
}

impl Recording {
    /// The source of tensor argument `t`, or `None` (and the capture is
    /// broken) when `t` was made during the capture by something that was
    /// not recorded.
    pub fn source(&mut self, t: &Tensor) -> Option<Source> {
        let s = self.lookup(t)?;
        self.pending.push(s.clone());
        Some(s)
    }

    fn lookup(&mut self, t: &Tensor) -> Option<Source> {
        if let Some(&i) = self.ids.get(&t.id()) {
            return Some(Source::Value(i));
        }
        if !self.aliases.is_empty() {
            if let Some(&i) = self.aliases.get(&view_key(t)) {
                return Some(Source::Value(i));
            }
        }
        if t.born() >= self.start && !t.is_wrapped_number() {
            self.break_with(format!(
                "a tensor of shape {:?} made during the capture by an operation that cannot \
                 be captured is used by a captured operation",
                t.shape()
            ));
            return None;
        }
        if !self.constants.iter().any(|c| c.same(t)) {
            self.constants.push(t.clone());
        }
        Some(Source::Constant(t.clone()))
    }

    fn add_value(&mut self, t: &Tensor) -> usize {
        let i = self.keep.len();
        self.ids.insert(t.id(), i);
        self.keep.push(t.clone());
        i
    }

    /// Notes that the operation being recorded has an effect beyond its
    /// results (a sampling function draws from a generator).
    pub fn note_effect(&mut self) {
        self.effects = true;
        self.row_effect = true;
    }

    fn break_with(&mut self, why: String) {
        if self.broken.is_none() {
            self.broken = Some(why);
        }
    }
}

/// Whether this thread is capturing.
#[inline]
pub fn capturing() -> bool {
    ACTIVE.with(|a| a.get())
}

/// Whether an operation starting now on this thread would be recorded
/// (a capture is on and no recorded operation is running).
pub(crate) fn records() -> bool {
    capturing() && DEPTH.with(|d| d.get()) == 0
}

/// Ends a capture that could not be repeated, with `why` (a no-op when
/// this thread is not capturing, or inside a recorded operation, whose
/// replay repeats what it does).
pub fn break_capture(why: &str) {
    if records() {
        with_recording(|r| r.break_with(why.to_string()));
    }
}

/// Ends this thread's capture, if any, with `why`, even inside a recorded
/// operation: for user code an operation calls (a saved-tensor pack hook),
/// which a replay of the operation would not call again.
pub fn break_capture_within(why: &str) {
    if capturing() {
        with_recording(|r| r.break_with(why.to_string()));
    }
}

/// Why this thread's capture is broken, or `None` when it is not (or
/// when this thread is not capturing).
pub fn broken() -> Option<String> {
    RECORDING.with(|r| r.borrow().as_ref().and_then(|r| r.broken.clone()))
}

/// What a recorded read of a tensor becomes: its name, how a replay reads
/// again, how many results it gives and their shapes and dtypes.
type ReadRow = (&'static str, Box<RowFn>, usize, Vec<(Vec<usize>, DType)>);

/// Records a read of `t` as the row `make` builds from its source, unless
/// `refuse` gives a reason to break the capture instead.
fn record_read(
    t: &Tensor,
    refuse: impl FnOnce(&Recording) -> Option<String>,
    make: impl FnOnce(&mut Recording, Source) -> ReadRow,
) {
    if !records() {
        return;
    }
    let grad_mode = crate::tensor::is_grad_enabled();
    with_recording(|r| {
        if r.broken.is_some() {
            return;
        }
        if let Some(why) = refuse(r) {
            r.break_with(why);
            return;
        }
        r.pending.clear();
        let Some(src) = r.source(t) else { return };
        let inputs = std::mem::take(&mut r.pending);
        let (name, run, outputs, metas) = make(r, src);
        r.rows.push(Row {
            name,
            run: Arc::from(run),
            grad_mode,
            pure: false,
            inputs,
            outputs,
            metas,
            args: None,
        });
    });
}

/// Records the read of `t.grad`, which gave `got` (`read` reads it again
/// on replay). A read of a tensor that existed before the capture, before
/// any recorded operation could have changed its `.grad`, becomes a check
/// the program makes before it runs ([`Program::holds`]).
pub(crate) fn record_grad_read(t: &Tensor, got: Option<&Tensor>, read: GradReader) {
    record_read(
        t,
        |_| None,
        |r, src| {
            let before = match &src {
                Source::Constant(_) => true,
                Source::Value(i) => *i < r.inputs,
            };
            if before && !r.grads_touched {
                r.checks.push(GradCheck {
                    tensor: src.clone(),
                    present: got.is_some(),
                    read,
                });
            }
            if let Some(g) = got {
                r.add_value(g);
            }
            let run = move |vals: &[Tensor]| Ok(read(&src.get(vals)).into_iter().collect());
            let n = usize::from(got.is_some());
            ("grad", Box::new(run), n, metas(got.as_slice()))
        },
    );
}

/// Records that the function read the value `got` of the one-element
/// tensor `t` into the host: for a bool or integer value, before any
/// recorded operation had an effect, a *value guard* (a replay checks the
/// value and, when it differs, stops before anything was changed, see
/// [`Program::try_replay`]); for a floating value, or after an effect, the
/// capture breaks.
pub(crate) fn record_value_read(t: &Tensor, got: Scalar) {
    let refuse = |r: &Recording| {
        if t.dtype().is_floating_point() || t.dtype().is_complex() {
            Some("a floating-point tensor value is read into the host (item)".to_string())
        } else if r.effects {
            Some(
                "a tensor value is read into the host after an operation that changed state".into(),
            )
        } else {
            None
        }
    };
    record_read(t, refuse, |_, src| {
        let run = move |vals: &[Tensor]| {
            if src.get(vals).item()? == got {
                Ok(Vec::new())
            } else {
                Err(Error::runtime("a value guard failed"))
            }
        };
        (VALUE_GUARD, Box::new(run), 0, Vec::new())
    });
}

/// Records that the function read the storage offset `got` of `t` into
/// the host (`storage_offset()`): a value guard, as for an integer value
/// ([`record_value_read`]), since a view made at that offset (`as_strided`
/// with it, as sliding windows are made) would read other elements of a
/// tensor at another offset; after an effect, the capture breaks.
pub(crate) fn record_offset_read(t: &Tensor, got: usize) {
    let refuse = |r: &Recording| {
        r.effects.then(|| {
            "a storage offset is read into the host after an operation that changed state"
                .to_string()
        })
    };
    record_read(t, refuse, |_, src| {
        let run = move |vals: &[Tensor]| {
            if src.get(vals).offset() == got {
                Ok(Vec::new())
            } else {
                Err(Error::runtime("a value guard failed"))
            }
        };
        (VALUE_GUARD, Box::new(run), 0, Vec::new())
    });
}

/// Notes that the operation being recorded may change some `.grad`
/// (later reads of a `.grad` are then the program's own business).
pub(crate) fn grads_touched() {
    with_recording(|r| r.grads_touched = true);
}

fn with_recording<R>(f: impl FnOnce(&mut Recording) -> R) -> Option<R> {
    RECORDING.with(|r| r.borrow_mut().as_mut().map(f))
}

/// Marks a table operation running on this thread for the time it lives
/// (see [`row_start`]).
pub struct RowGuard<K> {
    kept: Option<K>,
    grad_mode: bool,
}

impl<K> Drop for RowGuard<K> {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Called by a table operation as it starts while this thread captures:
/// an outermost operation copies its arguments with `keep` (which breaks
/// the capture by returning `None`); nested ones only count.
pub fn row_start<K>(keep: impl FnOnce(&mut Recording) -> Option<K>) -> RowGuard<K> {
    let depth = DEPTH.with(|d| {
        let v = d.get();
        d.set(v + 1);
        v
    });
    let kept = if depth == 0 {
        with_recording(|r| {
            if r.broken.is_some() {
                return None;
            }
            r.pending.clear();
            r.row_effect = false;
            let k = keep(r);
            if k.is_none() {
                r.break_with("an argument of a captured operation cannot be copied".into());
            }
            k
        })
        .flatten()
    } else {
        None
    };
    RowGuard {
        kept,
        grad_mode: crate::tensor::is_grad_enabled(),
    }
}

impl<K: Send + Sync + 'static> RowGuard<K> {
    /// Records the operation `name` that gave the tensors `outs` (when it
    /// succeeded, `Some`, and was outermost); `run` repeats it from its
    /// copied arguments.
    pub fn finish(
        mut self,
        name: &'static str,
        outs: Option<&[&Tensor]>,
        run: impl Fn(&K, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
    ) {
        let (Some(kept), Some(outs)) = (self.kept.take(), outs) else {
            return;
        };
        let grad_mode = self.grad_mode;
        with_recording(|r| {
            if r.broken.is_some() {
                return;
            }
            for t in outs {
                r.add_value(t);
            }
            // An operation without results writes something in place.
            r.effects |= outs.is_empty();
            let pure = !outs.is_empty() && !r.row_effect;
            let inputs = std::mem::take(&mut r.pending);
            let kept = Arc::new(kept);
            let args: Arc<dyn std::any::Any + Send + Sync> = kept.clone();
            r.rows.push(Row {
                name,
                run: Arc::new(move |vals| run(&kept, vals)),
                grad_mode,
                pure,
                inputs,
                outputs: outs.len(),
                metas: metas(outs),
                args: Some(args),
            });
        });
    }
}

/// A recorded program: replays the captured operations over new inputs.
pub struct Program {
    pub(crate) rows: Vec<Row>,
    pub(crate) inputs: usize,
    pub(crate) outputs: Vec<Source>,
    pub(crate) constants: Vec<Tensor>,
    checks: Vec<GradCheck>,
    /// Replays the program another way when it says so (`None`: the
    /// recorded operations one by one); set by a higher layer (a program
    /// replayed as one graph node, `ops::compiled`).
    pub(crate) replay_hook: Option<ReplayHook>,
    /// What the hook derived for this program, once.
    pub(crate) derived: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
    /// When a replay that gives only the results drops each value.
    pub(crate) lifetimes: std::sync::OnceLock<Lifetimes>,
}

/// A replay by other means: `None` when it does not apply to this call.
pub(crate) type ReplayHook = fn(&Program, &[Tensor]) -> Option<Result<Option<Vec<Tensor>>>>;

/// Grad mode for the rows of a replay.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowGrad {
    /// Each row's, as recorded.
    AsRecorded,
    /// Off for every row (no graph nodes).
    Off,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("inputs", &self.inputs)
            .field("operations", &self.operations())
            .field("outputs", &self.outputs.len())
            .field("constants", &self.constants.len())
            .finish()
    }
}

/// How a capture ended.
pub enum Captured {
    /// A program that repeats the closure.
    Program(Program),
    /// Why the closure cannot be repeated without running it.
    Broken(String),
}

impl std::fmt::Debug for Captured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Captured::Program(p) => p.fmt(f),
            Captured::Broken(why) => write!(f, "Broken({why:?})"),
        }
    }
}

/// Ends this thread's capture (if any) when dropped, even on a panic.
struct Active;

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(false));
        RECORDING.with(|r| r.borrow_mut().take());
    }
}

/// Starts recording on this thread with `inputs` as the program's inputs.
/// Errors when this thread is already capturing.
pub fn begin(inputs: &[Tensor]) -> Result<()> {
    if capturing() {
        return Err(Error::runtime(
            "a capture is already in progress on this thread (nested compiled calls run eagerly)",
        ));
    }
    begin_at(inputs, new_epoch(), false)
}

/// A new capture epoch: tensors made from now on are born in it or later
/// (see [`begin_derived`]).
pub(crate) fn new_epoch() -> u64 {
    EPOCH.fetch_add(1, Ordering::Relaxed) + 1
}

/// Starts recording on this thread what a program's operations derive
/// from its values (the backward of a replayed program, `ops::compiled`):
/// `inputs` are the values; a tensor born since the epoch `since` that is
/// not one of them (nor views the same elements as one) breaks the
/// capture, as one made during it would.
pub(crate) fn begin_derived(inputs: &[Tensor], since: u64) -> Result<()> {
    if capturing() {
        return Err(Error::runtime(
            "a capture is already in progress on this thread",
        ));
    }
    begin_at(inputs, since, true)
}

fn begin_at(inputs: &[Tensor], start: u64, aliases: bool) -> Result<()> {
    let mut r = Recording {
        start,
        ids: HashMap::new(),
        keep: Vec::new(),
        constants: Vec::new(),
        inputs: inputs.len(),
        rows: Vec::new(),
        broken: None,
        pending: Vec::new(),
        grads_touched: false,
        checks: Vec::new(),
        effects: false,
        row_effect: false,
        aliases: HashMap::new(),
    };
    for t in inputs {
        let i = r.add_value(t);
        if aliases {
            r.aliases.insert(view_key(t), i);
        }
    }
    RECORDING.with(|slot| *slot.borrow_mut() = Some(r));
    ACTIVE.with(|a| a.set(true));
    Ok(())
}

/// Ends this thread's capture with `outputs` as the program's results.
pub fn end(outputs: &[Tensor]) -> Captured {
    let _done = Active;
    let Some(mut r) = RECORDING.with(|slot| slot.borrow_mut().take()) else {
        return Captured::Broken("no capture was in progress".into());
    };
    let mut sources = Vec::with_capacity(outputs.len());
    for t in outputs {
        match r.source(t) {
            Some(s) => sources.push(s),
            None => break,
        }
    }
    if let Some(why) = r.broken {
        return Captured::Broken(why);
    }
    Captured::Program(Program {
        rows: r.rows,
        inputs: r.inputs,
        outputs: sources,
        constants: r.constants,
        checks: r.checks,
        replay_hook: None,
        derived: std::sync::OnceLock::new(),
        lifetimes: std::sync::OnceLock::new(),
    })
}

/// Abandons this thread's capture, if any.
pub fn abort() {
    drop(Active);
}

/// Captures `f` over `inputs`: runs it (its results are returned as
/// computed) and records a [`Program`] that repeats it, or why it cannot.
///
/// ```
/// use ferrograd::{compile, Tensor};
/// let x = Tensor::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let (out, captured) = compile::capture(&[x.clone()], |xs| {
///     Ok(vec![xs[0].mul(&xs[0])?.tanh()?])
/// })
/// .unwrap();
/// let compile::Captured::Program(program) = captured else { panic!() };
/// let y = Tensor::from_slice(&[3.0f32, 4.0], &[2]).unwrap();
/// let replayed = program.replay(&[y.clone()]).unwrap();
/// assert_eq!(replayed[0].to_vec::<f32>(), y.mul(&y).unwrap().tanh().unwrap().to_vec::<f32>());
/// # let _ = out;
/// ```
pub fn capture(
    inputs: &[Tensor],
    f: impl FnOnce(&[Tensor]) -> Result<Vec<Tensor>>,
) -> Result<(Vec<Tensor>, Captured)> {
    begin(inputs)?;
    let out = {
        let _abort_on_unwind = AbortGuard(true);
        let out = f(inputs);
        std::mem::forget(_abort_on_unwind);
        out
    };
    match out {
        Ok(out) => {
            let captured = end(&out);
            Ok((out, captured))
        }
        Err(e) => {
            abort();
            Err(e)
        }
    }
}

/// Abandons the capture if dropped during a panic.
struct AbortGuard(bool);

impl Drop for AbortGuard {
    fn drop(&mut self) {
        if self.0 {
            abort();
        }
    }
}

impl Program {
    /// A copy of the recorded operations alone (the rows share their
    /// copied arguments): no `.grad` checks, no other way of replaying.
    pub(crate) fn rows_copy(&self) -> Program {
        Program {
            rows: self.rows.clone(),
            inputs: self.inputs,
            outputs: self.outputs.clone(),
            constants: self.constants.clone(),
            checks: Vec::new(),
            replay_hook: None,
            derived: std::sync::OnceLock::new(),
            lifetimes: std::sync::OnceLock::new(),
        }
    }

    /// How many inputs it takes.
    pub fn num_inputs(&self) -> usize {
        self.inputs
    }

    /// How many results it gives.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// The recorded operations' names, in order.
    pub fn operations(&self) -> Vec<&'static str> {
        self.rows.iter().map(|r| r.name).collect()
    }

    /// The tensors it reads by reference (those that existed before the
    /// capture), in the order first used.
    pub fn constants(&self) -> &[Tensor] {
        &self.constants
    }

    /// Whether what the program assumes about `.grad`s holds for a replay
    /// over `inputs`: a capture
    /// that read a `.grad` of a tensor it did not make, before any of its
    /// operations could change it, saw it present (or absent); a replay
    /// needs the same. A caller runs the closure instead when it does not.
    pub fn holds(&self, inputs: &[Tensor]) -> bool {
        self.checks.iter().all(|c| {
            let t = match &c.tensor {
                Source::Value(i) if *i >= inputs.len() => return false,
                s => s.get(inputs),
            };
            (c.read)(&t).is_some() == c.present
        })
    }

    /// Runs the recorded operations over `inputs` (which should match the
    /// capture's inputs in shape, dtype, layout and `requires_grad`; the
    /// caller guards that) and returns the results. Errors, before running
    /// anything, when [`Program::holds`] does not.
    pub fn replay(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        self.try_replay(inputs)?.ok_or_else(|| {
            Error::runtime(
                "compiled program: a value or .grad it read when captured differs now; the \
                 function takes another course, which this program does not repeat",
            )
        })
    }

    /// [`Program::replay`], or `None` when the program does not repeat
    /// what the function would do on these inputs: [`Program::holds`]
    /// fails, or a value the function read into the host (a bool or an
    /// integer it branched on) differs from the captured one. Nothing the
    /// program changes has been changed then (value guards come before
    /// every effect), so the caller can run the function instead.
    pub fn try_replay(&self, inputs: &[Tensor]) -> Result<Option<Vec<Tensor>>> {
        if !self.holds(inputs) {
            return Ok(None);
        }
        if inputs.len() != self.inputs {
            return Err(Error::runtime(format!(
                "compiled program takes {} input tensors, got {}",
                self.inputs,
                inputs.len()
            )));
        }
        if let Some(hook) = self.replay_hook {
            if let Some(r) = hook(self, inputs) {
                return r;
            }
        }
        let plan = self.lifetimes.get_or_init(|| Lifetimes::of(self, []));
        let vals = self.run_rows(inputs, RowGrad::AsRecorded, Some(plan))?;
        Ok(vals.map(|vals| self.results(&vals)))
    }

    /// The program's results among `vals` (what [`Program::run_rows`]
    /// gave).
    pub(crate) fn results(&self, vals: &[Tensor]) -> Vec<Tensor> {
        self.outputs.iter().map(|s| s.get(vals)).collect()
    }

    /// Runs the rows over `inputs`: every value (the inputs, then each
    /// row's results), or `None` when a value guard failed. With a `plan`
    /// (made by [`Lifetimes::of`] for this program), the values it drops
    /// are empty tensors in the list.
    pub(crate) fn run_rows(
        &self,
        inputs: &[Tensor],
        grad: RowGrad,
        plan: Option<&Lifetimes>,
    ) -> Result<Option<Vec<Tensor>>> {
        let mut vals: Vec<Tensor> = Vec::with_capacity(self.inputs + self.rows.len() + 4);
        vals.extend(inputs.iter().cloned());
        let outer = crate::tensor::is_grad_enabled();
        let _restore = GradModeRestore(outer);
        for (k, row) in self.rows.iter().enumerate() {
            crate::tensor::set_grad_enabled(row.grad_mode && grad == RowGrad::AsRecorded);
            let outs = match (row.run)(&vals) {
                Err(_) if row.name == VALUE_GUARD => return Ok(None),
                r => r?,
            };
            if outs.len() != row.outputs {
                return Err(Error::runtime(format!(
                    "compiled program: {} gave {} results on replay, {} when captured",
                    row.name,
                    outs.len(),
                    row.outputs
                )));
            }
            vals.extend(outs);
            if let Some(plan) = plan {
                plan.release(k, &mut vals);
            }
        }
        Ok(Some(vals))
    }
}

struct GradModeRestore(bool);

impl Drop for GradModeRestore {
    fn drop(&mut self) {
        crate::tensor::set_grad_enabled(self.0);
    }
}

/// A program shared between threads.
pub type SharedProgram = Arc<Program>;
