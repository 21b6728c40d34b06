//! Graph nodes: the [`Node`] trait, the state every node shares
//! ([`NodeCore`]: next edges, metadata of its inputs and outputs, sequence
//! number, hooks), and iterative graph destruction.

use crate::{DType, Result, Tensor};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// One gradient slot per forward output (or input): `None` is torch's
/// undefined gradient.
pub type Grads = Vec<Option<Tensor>>;

/// A node of the backward graph (`MulBackward0`, `AccumulateGrad`, ...).
///
/// A node's *inputs* are the gradients of its forward op's outputs; its
/// *outputs* are the gradients of the forward op's inputs, one per next
/// edge.
pub trait Node: Send + Sync + 'static {
    /// torch's name for the node.
    fn name(&self) -> String;
    /// The name when it is fixed at compile time (the profiler records it
    /// without allocating).
    fn static_name(&self) -> Option<&'static str> {
        None
    }
    /// The shared state (edges, metadata, hooks).
    fn core(&self) -> &NodeCore;
    /// Computes the gradients of the forward inputs from `grads`, one per
    /// forward output. Undefined gradients have already been filled with
    /// zeros when [`Node::materialize_grads`] says so.
    fn apply(&self, grads: Grads) -> Result<Grads>;
    /// Frees saved tensors (after a backward without `retain_graph`).
    fn release_variables(&self) {}
    /// Saved values by name, for `_saved_<name>` / `_raw_saved_<name>`.
    fn saved_values(&self) -> Vec<(String, SavedValue)> {
        Vec::new()
    }
    /// The saved value called `name` (unpacking only that one).
    fn saved_value(&self, name: &str) -> Option<SavedValue> {
        self.saved_values()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
    /// Whether `apply` must run on the thread that called backward (e.g.
    /// it calls into an interpreter, as the Python binding's nodes do).
    fn needs_caller_thread(&self) -> bool {
        false
    }
    /// Whether undefined input gradients are replaced by zeros before
    /// `apply`.
    fn materialize_grads(&self) -> bool {
        true
    }
    /// Whether `apply` runs even when every incoming gradient is undefined
    /// (otherwise the engine passes undefined gradients on without calling
    /// it). Nodes running user code say yes, so that code sees them.
    fn apply_without_grads(&self) -> bool {
        false
    }
    /// Whether `apply` handles a batched backward: gradients with an extra
    /// leading dim of [`super::current_batch`] size. The engine runs other
    /// nodes once per batch row.
    fn supports_batched(&self) -> bool {
        false
    }
    /// Downcasting, for bindings that attach their own node kinds.
    fn as_any(&self) -> &dyn Any;
}

/// A reference to one input slot of a [`Node`].
#[derive(Clone)]
pub struct Edge {
    /// The node the gradient flows into.
    pub node: Arc<dyn Node>,
    /// Which of the node's inputs (gradients of its forward outputs) it
    /// fills.
    pub input_nr: usize,
}

impl Edge {
    /// The edge into input `input_nr` of `node`.
    pub fn new(node: Arc<dyn Node>, input_nr: usize) -> Edge {
        Edge { node, input_nr }
    }
    /// Identity of the node (its address).
    pub fn node_id(&self) -> usize {
        node_id(&self.node)
    }
}

impl std::fmt::Debug for Edge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Edge({}, {})", self.node.name(), self.input_nr)
    }
}

/// The identity of a node (its address).
pub fn node_id(node: &Arc<dyn Node>) -> usize {
    Arc::as_ptr(node) as *const () as usize
}

/// Shape and dtype of a tensor flowing through a node.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMeta {
    /// The tensor's shape.
    pub shape: SmallVec<[usize; 4]>,
    /// The tensor's dtype.
    pub dtype: DType,
}

impl TensorMeta {
    /// The shape and dtype of `t`.
    pub fn of(t: &Tensor) -> TensorMeta {
        TensorMeta {
            shape: t.shape().into(),
            dtype: t.dtype(),
        }
    }
    /// A tensor of zeros with this shape and dtype.
    pub fn zeros(&self) -> Result<Tensor> {
        Tensor::try_zeros(&self.shape, self.dtype)
    }
}

/// A value a node saved, as `_saved_<name>` shows it.
#[derive(Clone)]
pub enum SavedValue {
    /// A tensor (`None` once freed, or an optional one not given).
    Tensor(Option<Tensor>),
    /// A list of tensors.
    Tensors(Vec<Tensor>),
    /// An integer.
    Int(i64),
    /// A list of integers (a shape, dims).
    Ints(Vec<i64>),
    /// A real number.
    Float(f64),
    /// A complex number.
    Complex(crate::Complex<f64>),
    /// A flag.
    Bool(bool),
    /// A string (e.g. a reduction mode).
    Str(String),
    /// An argument given as `None`.
    None,
}

impl From<crate::Scalar> for SavedValue {
    fn from(s: crate::Scalar) -> Self {
        match s {
            crate::Scalar::Int(i) => SavedValue::Int(i),
            crate::Scalar::Float(f) => SavedValue::Float(f),
            crate::Scalar::Complex(z) => SavedValue::Complex(z),
            crate::Scalar::Bool(b) => SavedValue::Bool(b),
        }
    }
}

/// A hook on a tensor's gradient: may return a replacement.
pub type TensorHook = Arc<dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync>;
/// A node pre-hook: sees the gradients of the forward outputs, may replace
/// them.
pub type PreHook = Arc<dyn Fn(&[Option<Tensor>]) -> Result<Option<Grads>> + Send + Sync>;
/// A node post-hook: sees `(grad_inputs, grad_outputs)`, may replace the
/// grad_inputs.
pub type PostHook =
    Arc<dyn Fn(&[Option<Tensor>], &[Option<Tensor>]) -> Result<Option<Grads>> + Send + Sync>;

/// A registered hook and its handle id.
#[derive(Clone)]
pub(crate) struct Registered<H> {
    pub id: u64,
    pub hook: H,
}

/// The hooks of one node, in registration order.
#[derive(Default, Clone)]
pub(crate) struct Hooks {
    /// Hooks registered on the tensor that is forward output `.1`.
    pub tensor_pre: Vec<(usize, Registered<TensorHook>)>,
    /// `retain_grad()` of the tensor that is forward output `.0`; these run
    /// after every other pre-hook.
    pub retains: Vec<(usize, crate::tensor::WeakTensor)>,
    pub pre: Vec<Registered<PreHook>>,
    pub post: Vec<Registered<PostHook>>,
}

impl Hooks {
    fn is_empty(&self) -> bool {
        self.tensor_pre.is_empty()
            && self.retains.is_empty()
            && self.pre.is_empty()
            && self.post.is_empty()
    }
}

static NEXT_SEQUENCE_NR: AtomicU64 = AtomicU64::new(1);
static NEXT_HOOK_ID: AtomicU64 = AtomicU64::new(1);

/// The sequence number the next node made (on any thread) will get: nodes
/// made from now on have this one or larger.
pub(crate) fn next_sequence_nr() -> u64 {
    NEXT_SEQUENCE_NR.load(Ordering::Relaxed)
}

/// A fresh id for a hook handle.
pub(crate) fn next_hook_id() -> u64 {
    NEXT_HOOK_ID.fetch_add(1, Ordering::Relaxed)
}

/// Opaque data a binding attaches to a node (e.g. Python's `metadata`
/// dict, or the forward traceback of anomaly mode).
pub type Attachment = Arc<dyn Any + Send + Sync>;

/// State shared by every node.
pub struct NodeCore {
    next_edges: Vec<Option<Edge>>,
    /// Shape/dtype of each forward input (one per next edge), used to check
    /// and reduce the gradients this node returns.
    input_meta: Vec<Option<TensorMeta>>,
    /// Shape/dtype of each forward output, used to fill undefined incoming
    /// gradients with zeros.
    output_meta: Vec<TensorMeta>,
    sequence_nr: u64,
    has_hooks: AtomicBool,
    caller_thread_hooks: AtomicBool,
    hooks: Mutex<Hooks>,
    metadata: Mutex<Option<Attachment>>,
    anomaly: Mutex<Option<Attachment>>,
    /// Whether the engine frees this node's saved values at the end of a
    /// backward call rather than right after running it (Note [Nodes
    /// applied inside other nodes]).
    defer_release: AtomicBool,
    /// The language binding's object for this node (see `binding.rs`).
    binding: crate::BindingSlot,
}

impl NodeCore {
    /// State for a node with the given next edges (one per forward input),
    /// the metadata of those inputs, and of its forward outputs.
    pub fn new(
        next_edges: Vec<Option<Edge>>,
        input_meta: Vec<Option<TensorMeta>>,
        output_meta: Vec<TensorMeta>,
    ) -> NodeCore {
        debug_assert_eq!(next_edges.len(), input_meta.len());
        NodeCore {
            next_edges,
            input_meta,
            output_meta,
            sequence_nr: NEXT_SEQUENCE_NR.fetch_add(1, Ordering::Relaxed),
            has_hooks: AtomicBool::new(false),
            caller_thread_hooks: AtomicBool::new(false),
            hooks: Mutex::new(Hooks::default()),
            metadata: Mutex::new(None),
            anomaly: Mutex::new(None),
            defer_release: AtomicBool::new(false),
            binding: crate::BindingSlot::default(),
        }
    }

    /// The language binding's slot for its object of this node.
    pub fn binding_slot(&self) -> &crate::BindingSlot {
        &self.binding
    }

    /// Where each gradient this node computes goes, one per forward input
    /// (`None` for inputs that need none).
    pub fn next_edges(&self) -> &[Option<Edge>] {
        &self.next_edges
    }
    /// Shape and dtype of each forward input.
    pub fn input_meta(&self) -> &[Option<TensorMeta>] {
        &self.input_meta
    }
    /// Shape and dtype of each forward output.
    pub fn output_meta(&self) -> &[TensorMeta] {
        &self.output_meta
    }
    /// The number of gradients this node takes (one per forward output).
    pub fn num_inputs(&self) -> usize {
        self.output_meta.len()
    }
    /// The incoming gradients with undefined ones replaced by zeros of the
    /// matching forward output's shape and dtype (with the batch dim in a
    /// batched backward).
    pub fn materialize(&self, grads: Grads) -> Result<SmallVec<[Tensor; 2]>> {
        let batch = super::current_batch();
        grads
            .into_iter()
            .zip(&self.output_meta)
            .map(|(g, m)| match (g, batch) {
                (Some(g), _) => Ok(g),
                (None, None) => m.zeros(),
                (None, Some(b)) => {
                    let mut shape = vec![b];
                    shape.extend_from_slice(&m.shape);
                    Tensor::try_zeros(&shape, m.dtype)
                }
            })
            .collect()
    }

    /// Creation order: later nodes have larger numbers.
    pub fn sequence_nr(&self) -> u64 {
        self.sequence_nr
    }
    /// Whether the forward input `i` needs a gradient.
    pub fn needs_input_grad(&self, i: usize) -> bool {
        self.next_edges.get(i).is_some_and(|e| e.is_some())
    }

    pub(crate) fn hooks_snapshot(&self) -> Option<Hooks> {
        if !self.has_hooks.load(Ordering::Acquire) {
            return None;
        }
        let h = self.hooks.lock();
        (!h.is_empty()).then(|| h.clone())
    }

    fn edit_hooks<R>(&self, caller_thread: bool, f: impl FnOnce(&mut Hooks) -> R) -> R {
        let mut h = self.hooks.lock();
        let r = f(&mut h);
        self.has_hooks.store(!h.is_empty(), Ordering::Release);
        if caller_thread {
            self.caller_thread_hooks.store(true, Ordering::Release);
        }
        r
    }

    /// Whether a hook that must run on the thread that called backward was
    /// ever registered (the engine then runs this node there).
    pub fn has_caller_thread_hooks(&self) -> bool {
        self.caller_thread_hooks.load(Ordering::Acquire)
    }

    /// Registers a pre-hook: `hook(grad_outputs)` runs before the node with
    /// the gradients of its forward outputs and may return replacements.
    /// Returns the handle id for [`NodeCore::remove_hook`].
    pub fn register_prehook<F>(&self, hook: F) -> u64
    where
        F: Fn(&[Option<Tensor>]) -> Result<Option<Grads>> + Send + Sync + 'static,
    {
        self.add_prehook(Arc::new(hook), false)
    }

    /// The language bindings' entry for [`NodeCore::register_prehook`]: the
    /// hook runs on the thread that called backward.
    pub fn register_caller_thread_prehook(&self, hook: PreHook) -> u64 {
        self.add_prehook(hook, true)
    }

    fn add_prehook(&self, hook: PreHook, caller_thread: bool) -> u64 {
        let id = next_hook_id();
        self.edit_hooks(caller_thread, |h| h.pre.push(Registered { id, hook }));
        id
    }

    /// Registers a post-hook: `hook(grad_inputs, grad_outputs)` runs after
    /// the node with the gradients it computed for its forward inputs and
    /// the ones it received, and may return replacement `grad_inputs`.
    /// Returns the handle id for [`NodeCore::remove_hook`].
    pub fn register_hook<F>(&self, hook: F) -> u64
    where
        F: Fn(&[Option<Tensor>], &[Option<Tensor>]) -> Result<Option<Grads>>
            + Send
            + Sync
            + 'static,
    {
        self.add_hook(Arc::new(hook), false)
    }

    /// The language bindings' entry for [`NodeCore::register_hook`]: the
    /// hook runs on the thread that called backward.
    pub fn register_caller_thread_hook(&self, hook: PostHook) -> u64 {
        self.add_hook(hook, true)
    }

    fn add_hook(&self, hook: PostHook, caller_thread: bool) -> u64 {
        let id = next_hook_id();
        self.edit_hooks(caller_thread, |h| h.post.push(Registered { id, hook }));
        id
    }

    /// Registers a hook on the gradient of forward output `output_nr` (what
    /// [`Tensor::register_hook`] does for a non-leaf); returns the handle
    /// id.
    pub fn register_tensor_prehook<F>(&self, output_nr: usize, hook: F) -> u64
    where
        F: Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    {
        self.add_tensor_prehook(output_nr, Arc::new(hook), false)
    }

    pub(crate) fn add_tensor_prehook(
        &self,
        output_nr: usize,
        hook: TensorHook,
        caller_thread: bool,
    ) -> u64 {
        let id = next_hook_id();
        self.edit_hooks(caller_thread, |h| {
            h.tensor_pre.push((output_nr, Registered { id, hook }))
        });
        id
    }

    pub(crate) fn add_retains_grad(&self, output_nr: usize, t: &Tensor) {
        self.edit_hooks(false, |h| {
            if !h.retains.iter().any(|(n, _)| *n == output_nr) {
                h.retains.push((output_nr, t.downgrade()));
            }
        })
    }

    /// Removes the hook with handle `id`; false if it was not here.
    pub fn remove_hook(&self, id: u64) -> bool {
        self.edit_hooks(false, |h| {
            let before = h.pre.len() + h.post.len() + h.tensor_pre.len();
            h.pre.retain(|r| r.id != id);
            h.post.retain(|r| r.id != id);
            h.tensor_pre.retain(|(_, r)| r.id != id);
            before != h.pre.len() + h.post.len() + h.tensor_pre.len()
        })
    }

    /// The binding's metadata object, created by `init` on first use.
    pub fn metadata(&self, init: impl FnOnce() -> Attachment) -> Attachment {
        self.metadata.lock().get_or_insert_with(init).clone()
    }

    /// Data anomaly mode attached at creation (the forward traceback).
    pub fn anomaly(&self) -> Option<Attachment> {
        self.anomaly.lock().clone()
    }
    /// Attaches anomaly mode's data (see [`NodeCore::anomaly`]).
    pub fn set_anomaly(&self, a: Attachment) {
        *self.anomaly.lock() = Some(a);
    }

    /// Marks the node as applied from inside another node too: its saved
    /// values are freed at the end of a backward call without
    /// `retain_graph`, not right after it runs.
    pub fn set_defer_release(&self) {
        self.defer_release.store(true, Ordering::Relaxed);
    }
    /// Whether [`NodeCore::set_defer_release`] was called.
    pub fn defers_release(&self) -> bool {
        self.defer_release.load(Ordering::Relaxed)
    }
}

impl Drop for NodeCore {
    fn drop(&mut self) {
        // Dropping the next edges may drop their nodes, and theirs: defer so
        // that a long chain is freed by a loop rather than by recursion.
        let edges = std::mem::take(&mut self.next_edges);
        if edges.iter().any(|e| e.is_some()) {
            defer_drop(Box::new(edges));
        }
    }
}

thread_local! {
    static DROP_QUEUE: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
    static DRAINING: Cell<bool> = const { Cell::new(false) };
}

/// Drops `item` without recursion: inside another deferred drop it is
/// queued; otherwise the queue is drained by a loop.
pub(crate) fn defer_drop(item: Box<dyn Any>) {
    let queued = DRAINING
        .try_with(|d| {
            if d.get() {
                DROP_QUEUE.with(|q| q.borrow_mut().push(item));
                return None;
            }
            Some(item)
        })
        .unwrap_or(None);
    let Some(item) = queued else { return };
    DRAINING.with(|d| d.set(true));
    drop(item);
    loop {
        let next = DROP_QUEUE.with(|q| q.borrow_mut().pop());
        match next {
            Some(x) => drop(x),
            None => break,
        }
    }
    DRAINING.with(|d| d.set(false));
}
