//! Automatic differentiation: reverse mode (the graph, the engine, hooks,
//! saved tensors) and forward mode (dual levels and tangents, `forward.rs`).
//!
//! A tensor's [`AutogradMeta`] (kept in the tensor's autograd slot, made
//! on first write, Note [Autograd slot]) holds whether it requires grad, its
//! accumulated `.grad`, the `grad_fn` edge of the node that produced it, and
//! for leaves a weak link to their [`AccumulateGrad`] node. Ops record nodes
//! through [`Recorder`] (see `function.rs`), always from a row of a
//! derivative table (`table.rs`, the `derivatives!` macro); [`backward`]
//! and [`grad`] run the engine (`engine/`). In-place ops and views are
//! reconciled with the graph in `inplace.rs`.
//!
//! Note [Graph ownership]: outputs own their `grad_fn` node, nodes own their
//! next nodes and saved tensors, and an `AccumulateGrad` node owns its leaf.
//! Everything pointing the other way is weak (a leaf's accumulator, a saved
//! output's node, `retain_grad`'s tensor), so graphs never form `Arc`
//! cycles and are freed as soon as the last output and backward run let go.

mod accumulate;
mod anomaly;
mod current;
mod custom;
mod engine;
mod entry;
mod forward;
mod function;
mod grad_mode;
mod inplace;
mod mutation;
mod node;
mod saved;
mod sum_to;
mod table;

pub use accumulate::AccumulateGrad;
pub use anomaly::{
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled, set_stack_capture,
    set_warning_handler, AnomalyInfo, AnomalyModeGuard, CapturedStack,
};
pub use current::{current_graph_task_id, will_engine_execute_node, will_engine_run_node};
pub(crate) use current::{frees_saved, set_frees_saved};
pub(crate) use custom::FORMULAS as HELPER_FORMULAS;
pub use custom::{delayed_error, output_alias, rebase_dirty, register_custom_node, undefined_grad};
pub(crate) use engine::validate_for;
pub use engine::{
    backward_edges, grad_batched, grad_edges, parallel_waves, row_by_row_nodes, EngineOptions,
    GradInput,
};
pub use entry::{backward, grad, grad_allow_unused, grad_with, BackwardOptions, GradOptions};
pub(crate) use forward::any_tangent;
pub use forward::{
    current_dual_level, enter_batched_dual_level, enter_dual_level, exit_dual_level, fw_grad,
    is_fwd_grad_enabled, make_dual, set_fw_grad, set_fwd_grad_enabled, unpack_dual, DualLevel,
    FwGradGuard, JvpFn, Tangents,
};
pub use function::{BackwardCtx, FnNode, Recorder, Saver};
pub(crate) use grad_mode::BatchGuard;
pub use grad_mode::{
    current_batch, is_grad_enabled, is_inference_mode_enabled, is_multithreading_enabled, no_grad,
    set_grad_enabled, set_inference_mode, set_multithreading_enabled, GradModeGuard,
    InferenceModeGuard, StateGuard, ThreadLocalState,
};
pub(crate) use inplace::check_write;
pub use inplace::{increment_version, inplace, CopySlices, OverlappingViewGrad};
pub use mutation::{close_mutation_context, open_mutation_context};
pub(crate) use node::next_sequence_nr;
pub use node::{
    node_id, Attachment, Edge, Grads, Node, NodeCore, PostHook, PreHook, SavedValue, TensorHook,
    TensorMeta,
};
pub use saved::{
    current_saved_tensors_hooks, disable_saved_tensors_hooks, freed_graph_error,
    pop_saved_tensors_hooks, push_saved_tensors_hooks, Packed, SavedTensor, SavedTensorHooks,
};
pub use sum_to::{sum_to, sum_to_batched};
pub(crate) use table::{captured, derivatives};
pub use table::{BatchedRule, FormulaRow, ForwardRule, RecordedOutputs};

use crate::tensor::Origin;
use crate::{Error, Result, Tensor};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// A hook run with a leaf after its `.grad` was updated.
pub type PostAccumulateHook = Arc<dyn Fn(&Tensor) -> Result<()> + Send + Sync>;

/// The autograd slots of one tensor.
pub struct AutogradMeta {
    requires_grad: AtomicBool,
    has_grad_fn: AtomicBool,
    grad: Mutex<Option<Tensor>>,
    grad_fn: Mutex<Option<Edge>>,
    /// A leaf's `AccumulateGrad` node, while some graph holds it.
    accumulator: Mutex<Option<Weak<AccumulateGrad>>>,
    /// Hooks of a leaf (run before accumulation) and post-accumulate hooks.
    leaf_hooks: Mutex<Vec<(u64, TensorHook, bool)>>,
    post_accumulate_hooks: Mutex<Vec<(u64, PostAccumulateHook, bool)>>,
    retains_grad: AtomicBool,
    /// For views made while recording: the version of the shared counter
    /// when `grad_fn` was last set, and whether the view is differentiable.
    view_version: AtomicU64,
    differentiable_view: AtomicBool,
    /// The forward-mode tangent and the generation of the dual level it
    /// belongs to (see `forward.rs`).
    tangent: Mutex<Option<(u64, Tensor)>>,
    /// Made by `detach` or `unpack_dual`: never sees its base's tangent.
    fw_detached: AtomicBool,
}

impl AutogradMeta {
    /// The state of a tensor made with `origin` that autograd has not
    /// touched yet: a leaf without gradient or hooks.
    fn new(origin: Origin) -> Self {
        let (view_version, differentiable_view) = origin.view.unwrap_or((0, false));
        AutogradMeta {
            requires_grad: AtomicBool::new(false),
            has_grad_fn: AtomicBool::new(false),
            grad: Mutex::new(None),
            grad_fn: Mutex::new(None),
            accumulator: Mutex::new(None),
            leaf_hooks: Mutex::new(Vec::new()),
            post_accumulate_hooks: Mutex::new(Vec::new()),
            retains_grad: AtomicBool::new(false),
            view_version: AtomicU64::new(view_version),
            differentiable_view: AtomicBool::new(differentiable_view),
            tangent: Mutex::new(None),
            fw_detached: AtomicBool::new(origin.detached),
        }
    }

    pub(crate) fn tangent_slot(&self) -> &Mutex<Option<(u64, Tensor)>> {
        &self.tangent
    }

    pub(crate) fn is_fw_detached(&self) -> bool {
        self.fw_detached.load(Ordering::Relaxed)
    }

    pub(crate) fn set_fw_detached(&self) {
        self.fw_detached.store(true, Ordering::Relaxed);
    }

    /// The flag set on leaves (`requires_grad_()`); see
    /// [`Tensor::requires_grad`] for the full answer.
    pub fn requires_grad_flag(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed)
    }

    /// Sets the leaf flag without checks (see
    /// [`Tensor::set_requires_grad`] for the checked form).
    pub fn set_requires_grad(&self, value: bool) {
        self.requires_grad.store(value, Ordering::Relaxed);
    }

    /// The accumulated gradient.
    pub fn grad(&self) -> Option<Tensor> {
        self.grad.lock().clone()
    }

    /// Replaces the accumulated gradient without checks (see
    /// [`Tensor::set_grad`]).
    pub fn set_grad(&self, grad: Option<Tensor>) {
        *self.grad.lock() = grad;
    }

    pub(crate) fn grad_slot(&self) -> &Mutex<Option<Tensor>> {
        &self.grad
    }

    /// Whether `retain_grad()` was called.
    pub fn retains_grad(&self) -> bool {
        self.retains_grad.load(Ordering::Relaxed)
    }

    /// Records the version a view was made at and whether it is
    /// differentiable (made with grad mode on). View ops that record a node
    /// call this again after recording, since the recorder turns grad mode
    /// off while the view is made; multi-output views do not, so in-place
    /// writes to them are refused as torch refuses them.
    pub(crate) fn mark_view(&self, version: u64) {
        self.view_version.store(version, Ordering::Relaxed);
        self.differentiable_view
            .store(is_grad_enabled(), Ordering::Relaxed);
    }
}

/// Sets a tensor's `grad_fn` edge (`None` makes it a leaf again).
pub fn set_grad_fn(t: &Tensor, edge: Option<Edge>) {
    let m = t.autograd();
    m.has_grad_fn.store(edge.is_some(), Ordering::Release);
    *m.grad_fn.lock() = edge;
    if t.is_view() {
        m.view_version.store(t.version(), Ordering::Relaxed);
    }
}

/// A view's version at its making and whether it is differentiable, read
/// without making the tensor's autograd state (`(0, false)` for a
/// non-view).
/// `t.grad`, read without recording the read.
fn read_grad(t: &Tensor) -> Option<Tensor> {
    t.autograd_if_made().and_then(AutogradMeta::grad)
}

pub(crate) fn view_state(t: &Tensor) -> (u64, bool) {
    match t.autograd_if_made() {
        Some(m) => (
            m.view_version.load(Ordering::Relaxed),
            m.differentiable_view.load(Ordering::Relaxed),
        ),
        None => t.autograd_slot().origin().view.unwrap_or((0, false)),
    }
}

/// Whether a differentiable view's recorded history is stale because its
/// base's history changed (an in-place op on the base or another view).
fn view_is_stale(t: &Tensor) -> bool {
    let (version, differentiable) = view_state(t);
    if !differentiable {
        return false;
    }
    let Some(base) = t.base() else { return false };
    version != t.version() && base.requires_grad()
}

/// The `grad_fn` edge of a non-leaf tensor. For a view whose base's
/// history moved on, a fresh `AsStridedBackward0` edge onto the base's
/// current history is made first.
pub fn grad_fn_edge(t: &Tensor) -> Option<Edge> {
    if t.is_view() && view_is_stale(t) {
        inplace::regenerate_view_grad_fn(t);
    }
    let m = t.autograd_if_made()?;
    if !m.has_grad_fn.load(Ordering::Acquire) {
        return None;
    }
    m.grad_fn.lock().clone()
}

/// The leaves that gradients of `outputs` would flow into: the tensors of
/// the `AccumulateGrad` nodes met walking back from the outputs' `grad_fn`s,
/// and the outputs that are themselves leaves requiring grad. Each leaf once,
/// in the order the walk meets it (depth first). Outputs that do not
/// require grad contribute nothing.
pub fn reached_leaves(outputs: &[Tensor]) -> Vec<Tensor> {
    let mut found: Vec<Tensor> = Vec::new();
    let mut ids: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let mut stack: Vec<Arc<dyn Node>> = Vec::new();
    for o in outputs.iter().filter(|o| o.requires_grad()) {
        match grad_fn_edge(o) {
            Some(e) => stack.push(e.node),
            None => {
                if ids.insert(o.id()) {
                    found.push(o.clone());
                }
            }
        }
    }
    let mut seen: std::collections::HashSet<*const ()> = std::collections::HashSet::new();
    while let Some(node) = stack.pop() {
        if !seen.insert(Arc::as_ptr(&node) as *const ()) {
            continue;
        }
        if let Some(acc) = node.as_any().downcast_ref::<AccumulateGrad>() {
            let v = acc.variable();
            if ids.insert(v.id()) {
                found.push(v.clone());
            }
            continue;
        }
        stack.extend(
            node.core()
                .next_edges()
                .iter()
                .flatten()
                .map(|e| e.node.clone()),
        );
    }
    found
}

/// Whether the tensor has no `grad_fn` (after refreshing a stale view).
pub fn is_leaf(t: &Tensor) -> bool {
    grad_fn_edge(t).is_none()
}

/// The leaf's `AccumulateGrad` node, made on first use and shared while
/// any graph holds it.
pub fn grad_accumulator(t: &Tensor) -> Arc<AccumulateGrad> {
    let mut slot = t.autograd().accumulator.lock();
    if let Some(acc) = slot.as_ref().and_then(Weak::upgrade) {
        return acc;
    }
    let acc = Arc::new(AccumulateGrad::new(t.clone()));
    *slot = Some(Arc::downgrade(&acc));
    acc
}

/// Where gradients for `t` flow: its `grad_fn` edge, or its accumulator for
/// a leaf that requires grad, or nowhere.
pub fn gradient_edge(t: &Tensor) -> Option<Edge> {
    if let Some(e) = grad_fn_edge(t) {
        return Some(e);
    }
    if t.autograd_if_made()
        .is_some_and(AutogradMeta::requires_grad_flag)
    {
        return Some(Edge::new(grad_accumulator(t), 0));
    }
    None
}

/// Whether ops on `operands` would record nothing at all: grad mode is off
/// and none of them carries a forward-mode tangent. Inside backward, grad
/// mode is on exactly when `create_graph` is, so this is how a backward
/// formula knows it builds no graph and may run a fused kernel in place of
/// its composed, differentiable form (Note [Fused backward] in
/// `ops/pointwise/mod.rs`). A capture recording the formula's operations
/// (the backward of a compiled program, `ops::compiled`) needs the
/// composed form too. A few thread-local/atomic reads: cheap enough for
/// every small op.
#[inline]
pub(crate) fn records_nothing(operands: &[&Tensor]) -> bool {
    !is_grad_enabled() && !forward::any_tangent(operands) && !crate::compile::records()
}

/// Called with every node just recorded: anomaly mode attaches the
/// forward stack.
pub(crate) fn on_node_created(node: &Arc<dyn Node>) {
    if anomaly::is_anomaly_enabled() {
        anomaly::record(node);
    }
}

/// Refuses inference tensors where autograd would need them.
pub(crate) fn check_not_inference(t: &Tensor, what: &str) -> Result<()> {
    if t.is_inference() {
        return Err(Error::runtime(format!(
            "Inference tensors cannot be {what}. To work around you can make a clone to get a normal tensor and use it in autograd."
        )));
    }
    Ok(())
}

impl Tensor {
    /// This tensor's autograd state (`requires_grad`, `.grad`, `grad_fn`,
    /// hooks, tangent), made on first use (Note [Autograd slot]).
    pub fn autograd(&self) -> &AutogradMeta {
        self.autograd_slot()
            .get_or_init(AutogradMeta::new)
            .expect("a tensor's autograd slot holds only AutogradMeta")
    }

    /// This tensor's autograd state if any was made: `None` means the
    /// state of a fresh tensor (see [`AutogradMeta::new`]).
    #[inline]
    pub(crate) fn autograd_if_made(&self) -> Option<&AutogradMeta> {
        self.autograd_slot().get()
    }

    /// Whether gradients flow to this tensor: a leaf flagged by
    /// `requires_grad_()`, or any tensor with a `grad_fn`.
    pub fn requires_grad(&self) -> bool {
        let made = self
            .autograd_if_made()
            .is_some_and(|m| m.requires_grad_flag() || m.has_grad_fn.load(Ordering::Acquire));
        made || (self.is_view() && view_is_stale(self))
    }

    /// [`Tensor::set_requires_grad`] returning the tensor (a new handle to
    /// the same tensor), for chaining after a constructor:
    /// `Tensor::from_slice(&[1.0f32], &[1])?.requires_grad_(true)?`.
    pub fn requires_grad_(&self, value: bool) -> Result<Tensor> {
        self.set_requires_grad(value)?;
        Ok(self.clone())
    }

    /// Sets the leaf flag (only floating tensors can require grad, as in
    /// torch; only leaves can be changed).
    pub fn set_requires_grad(&self, value: bool) -> Result<()> {
        crate::compile::break_capture("requires_grad is changed inside the captured function");
        if value && !self.dtype().is_differentiable() {
            return Err(Error::runtime(format!(
                "only Tensors of floating point and complex dtype can require gradients (got {})",
                self.dtype()
            )));
        }
        if grad_fn_edge(self).is_some() {
            if !value {
                return Err(Error::runtime(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
                ));
            }
            return Ok(());
        }
        if value && self.is_inference() && !is_inference_mode_enabled() {
            return Err(Error::runtime(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
            ));
        }
        if self
            .autograd_if_made()
            .is_none_or(|m| m.requires_grad_flag() != value)
        {
            crate::compile::guards_changed();
        }
        self.autograd().set_requires_grad(value);
        Ok(())
    }

    /// The accumulated gradient (`.grad`).
    pub fn grad(&self) -> Option<Tensor> {
        let g = read_grad(self);
        crate::compile::record_grad_read(self, g.as_ref(), read_grad);
        g
    }

    /// Sets `.grad`, checking shape and dtype as torch does.
    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        if crate::compile::capturing() {
            return self.assign_grad(grad.as_ref());
        }
        self.set_grad_now(grad)
    }

    /// [`Tensor::set_grad`] as a captured program records it.
    pub(crate) fn assign_grad(&self, grad: Option<&Tensor>) -> Result<()> {
        crate::autograd::captured!(assign_grad (&self, grad: Option<&Tensor>) -> () {
            crate::compile::grads_touched();
            self.set_grad_now(grad.cloned())
        })
    }

    fn set_grad_now(&self, grad: Option<Tensor>) -> Result<()> {
        if let Some(g) = &grad {
            if g.dtype() != self.dtype() {
                return Err(Error::runtime(format!(
                    "assigned grad has data of a different type ({} vs {})",
                    g.dtype(),
                    self.dtype()
                )));
            }
            if g.shape() != self.shape() {
                return Err(Error::runtime(format!(
                    "assigned grad has data of a different size ({:?} vs {:?})",
                    g.shape(),
                    self.shape()
                )));
            }
        }
        self.autograd().set_grad(grad);
        Ok(())
    }

    /// The `grad_fn` edge (`None` for leaves).
    pub fn grad_fn(&self) -> Option<Edge> {
        grad_fn_edge(self)
    }

    /// True for tensors without a `grad_fn`.
    pub fn is_leaf(&self) -> bool {
        is_leaf(self)
    }

    /// `retain_grad()`: a non-leaf keeps its gradient in `.grad` after
    /// backward (a no-op on leaves).
    pub fn retain_grad(&self) -> Result<()> {
        crate::compile::break_capture("retain_grad inside the captured function");
        let Some(edge) = grad_fn_edge(self) else {
            if !self.requires_grad() {
                return Err(Error::runtime(
                    "can't retain_grad on Tensor that has requires_grad=False",
                ));
            }
            return Ok(());
        };
        if self.autograd().retains_grad.swap(true, Ordering::Relaxed) {
            return Ok(());
        }
        edge.node.core().add_retains_grad(edge.input_nr, self);
        Ok(())
    }

    /// Whether `retain_grad()` was called on this non-leaf.
    pub fn retains_grad(&self) -> bool {
        self.autograd_if_made()
            .is_some_and(AutogradMeta::retains_grad)
            && !self.is_leaf()
    }

    /// Registers `hook` on this tensor's gradient: whenever backward
    /// computes the gradient for this tensor, `hook(grad)` runs first and
    /// may return a replacement (`Ok(None)` keeps `grad`). The replacement
    /// is what flows on and, for a leaf, what is accumulated into `.grad`.
    /// Returns the handle id for [`Tensor::remove_hook`]. The hook may run
    /// on any thread of ferrograd's pool.
    ///
    /// ```
    /// use ferrograd::{DType, Tensor};
    /// # fn main() -> ferrograd::Result<()> {
    /// let x = Tensor::scalar_tensor(3.0, DType::Float64).requires_grad_(true)?;
    /// // Double every gradient reaching x.
    /// x.register_hook(|g| Ok(Some(g.mul(&Tensor::scalar(2.0))?)))?;
    /// let y = x.mul(&x)?; // dy/dx = 2x = 6
    /// y.backward()?;
    /// assert_eq!(x.grad().unwrap().item()?.to_f64(), 12.0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn register_hook<F>(&self, hook: F) -> Result<u64>
    where
        F: Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    {
        self.add_hook(Arc::new(hook), false)
    }

    /// The language bindings' entry for [`Tensor::register_hook`]: the
    /// hook runs on the thread that called backward (the engine runs the
    /// node it belongs to there), which a hook calling into an interpreter
    /// needs. Rust code uses [`Tensor::register_hook`].
    pub fn register_caller_thread_hook(&self, hook: TensorHook) -> Result<u64> {
        self.add_hook(hook, true)
    }

    fn add_hook(&self, hook: TensorHook, caller_thread: bool) -> Result<u64> {
        crate::compile::break_capture("a hook is registered inside the captured function");
        if !self.requires_grad() {
            return Err(Error::runtime(
                "cannot register a hook on a tensor that doesn't require gradient",
            ));
        }
        match grad_fn_edge(self) {
            Some(e) => Ok(e
                .node
                .core()
                .add_tensor_prehook(e.input_nr, hook, caller_thread)),
            None => {
                let id = node::next_hook_id();
                self.autograd()
                    .leaf_hooks
                    .lock()
                    .push((id, hook, caller_thread));
                Ok(id)
            }
        }
    }

    /// Removes a hook registered by [`Tensor::register_hook`] or
    /// [`Tensor::register_post_accumulate_grad_hook`].
    pub fn remove_hook(&self, id: u64) -> bool {
        let m = self.autograd();
        let mut found = false;
        m.leaf_hooks.lock().retain(|(i, _, _)| {
            found |= *i == id;
            *i != id
        });
        m.post_accumulate_hooks.lock().retain(|(i, _, _)| {
            found |= *i == id;
            *i != id
        });
        if !found {
            if let Some(e) = m.grad_fn.lock().clone() {
                found = e.node.core().remove_hook(id);
            }
        }
        found
    }

    /// Registers `hook` to run with this leaf after backward updated its
    /// `.grad` (e.g. to apply an optimizer step per parameter as soon as
    /// its gradient is ready). Returns the handle id for
    /// [`Tensor::remove_hook`]. Only leaves that require grad take one.
    pub fn register_post_accumulate_grad_hook<F>(&self, hook: F) -> Result<u64>
    where
        F: Fn(&Tensor) -> Result<()> + Send + Sync + 'static,
    {
        crate::compile::break_capture("a hook is registered inside the captured function");
        self.add_post_accumulate_hook(Arc::new(hook), false)
    }

    /// The language bindings' entry for
    /// [`Tensor::register_post_accumulate_grad_hook`]: the hook runs on the
    /// thread that called backward.
    pub fn register_caller_thread_post_accumulate_grad_hook(
        &self,
        hook: PostAccumulateHook,
    ) -> Result<u64> {
        self.add_post_accumulate_hook(hook, true)
    }

    fn add_post_accumulate_hook(
        &self,
        hook: PostAccumulateHook,
        caller_thread: bool,
    ) -> Result<u64> {
        if !self.is_leaf() {
            return Err(Error::runtime(
                "post accumulate grad hooks cannot be registered on non-leaf tensors",
            ));
        }
        if !self.requires_grad() {
            return Err(Error::runtime(
                "cannot register a hook on a tensor that doesn't require gradient",
            ));
        }
        let id = node::next_hook_id();
        self.autograd()
            .post_accumulate_hooks
            .lock()
            .push((id, hook, caller_thread));
        Ok(id)
    }

    /// `detach_()`: makes this tensor a leaf that does not require grad.
    pub fn detach_(&self) -> Result<()> {
        if self.is_view()
            && self.autograd().differentiable_view.load(Ordering::Relaxed)
            && self.requires_grad()
        {
            return Err(Error::runtime(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
            ));
        }
        set_grad_fn(self, None);
        self.autograd().set_requires_grad(false);
        Ok(())
    }

    /// The backward graph's notion of "the same tensor" for weak links.
    pub(crate) fn accumulator_hooks(&self) -> (Vec<(TensorHook, bool)>, bool) {
        let h = self.autograd().leaf_hooks.lock();
        let post = !self.autograd().post_accumulate_hooks.lock().is_empty();
        (h.iter().map(|(_, f, p)| (f.clone(), *p)).collect(), post)
    }

    pub(crate) fn post_accumulate_hooks(&self) -> Vec<PostAccumulateHook> {
        self.autograd()
            .post_accumulate_hooks
            .lock()
            .iter()
            .map(|(_, f, _)| f.clone())
            .collect()
    }

    pub(crate) fn has_caller_thread_leaf_hooks(&self) -> bool {
        self.autograd().leaf_hooks.lock().iter().any(|h| h.2)
            || self
                .autograd()
                .post_accumulate_hooks
                .lock()
                .iter()
                .any(|h| h.2)
    }
}
