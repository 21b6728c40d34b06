//! Saved tensors: what a node keeps from the forward pass, with the version
//! it had then, so that backward can refuse values modified in place; and
//! saved-tensor hooks, which replace the kept tensor by whatever a pack hook
//! makes of it and turn that back into a tensor when backward needs it.

use super::node::Node;
use super::Edge;
use crate::{Error, Result, Tensor};
use parking_lot::Mutex;
use std::any::Any;
use std::cell::RefCell;
use std::sync::{Arc, Weak};

/// What a pack hook made of a saved tensor.
pub type Packed = Box<dyn Any + Send + Sync>;

/// A pair of saved-tensor hooks (`saved_tensors_hooks(pack, unpack)`).
pub trait SavedTensorHooks: Send + Sync {
    /// Called once when an op saves `t`; the result is kept instead of `t`.
    fn pack(&self, t: &Tensor) -> Result<Packed>;
    /// Called each time backward (or `_saved_<name>`) needs the tensor.
    fn unpack(&self, packed: &Packed) -> Result<Tensor>;
    /// Whether the hooks must run on the thread that called backward
    /// (they run Python code); such graphs run without the pool.
    fn needs_caller_thread(&self) -> bool {
        false
    }
}

/// One entry of this thread's hook stack.
#[derive(Clone)]
enum HookEntry {
    Hooks(Arc<dyn SavedTensorHooks>),
    /// `disable_saved_tensors_hooks(message)`.
    Disabled(String),
}

thread_local! {
    static HOOKS: RefCell<Vec<HookEntry>> = const { RefCell::new(Vec::new()) };
}

/// Makes `hooks` apply to every tensor saved on this thread until the
/// matching [`pop_saved_tensors_hooks`]; the innermost pair wins. Refused
/// inside [`disable_saved_tensors_hooks`] with its message.
pub fn push_saved_tensors_hooks(hooks: Arc<dyn SavedTensorHooks>) -> Result<()> {
    HOOKS.with(|h| {
        let mut h = h.borrow_mut();
        if let Some(msg) = h.iter().rev().find_map(|e| match e {
            HookEntry::Disabled(m) => Some(m.clone()),
            HookEntry::Hooks(_) => None,
        }) {
            return Err(Error::runtime(msg));
        }
        h.push(HookEntry::Hooks(hooks));
        Ok(())
    })
}

/// Removes the innermost entry pushed by [`push_saved_tensors_hooks`] or
/// [`disable_saved_tensors_hooks`].
pub fn pop_saved_tensors_hooks() {
    HOOKS.with(|h| h.borrow_mut().pop());
}

/// Forbids saved-tensor hooks on this thread until the matching
/// [`pop_saved_tensors_hooks`]: registering hooks then fails with
/// `message`, and so does this call when hooks are already active.
pub fn disable_saved_tensors_hooks(message: &str) -> Result<()> {
    HOOKS.with(|h| {
        let mut h = h.borrow_mut();
        if h.iter().any(|e| matches!(e, HookEntry::Hooks(_))) {
            return Err(Error::runtime(message));
        }
        h.push(HookEntry::Disabled(message.to_string()));
        Ok(())
    })
}

/// The hook pair that applies to tensors saved now on this thread.
pub fn current_saved_tensors_hooks() -> Option<Arc<dyn SavedTensorHooks>> {
    HOOKS.with(|h| match h.borrow().last() {
        Some(HookEntry::Hooks(k)) => Some(k.clone()),
        _ => None,
    })
}

/// This thread's hook stack, for the engine to install on the threads
/// that run a backward call (so tensors saved by a `create_graph`
/// backward get the caller's hooks).
#[derive(Clone, Default)]
pub struct SavedHooksState(Vec<HookEntry>);

impl SavedHooksState {
    pub(crate) fn capture() -> SavedHooksState {
        SavedHooksState(HOOKS.with(|h| h.borrow().clone()))
    }
    /// Whether a hook in the stack must run on the calling thread.
    pub(crate) fn needs_caller_thread(&self) -> bool {
        self.0.iter().any(|e| match e {
            HookEntry::Hooks(k) => k.needs_caller_thread(),
            HookEntry::Disabled(_) => false,
        })
    }
    /// Installs the stack, returning the one it replaced.
    pub(crate) fn install(self) -> SavedHooksState {
        SavedHooksState(HOOKS.with(|h| std::mem::replace(&mut *h.borrow_mut(), self.0)))
    }
}

/// How a saved tensor is kept.
enum Stored {
    Tensor(Tensor),
    /// Packed by hooks; `edge` is where the tensor's gradient flowed when it
    /// was saved (given back to what unpack returns).
    Packed {
        packed: Packed,
        hooks: Arc<dyn SavedTensorHooks>,
        edge: Option<Edge>,
    },
}

/// The error for a pack hook that changed its input in place.
fn pack_modified_input() -> Error {
    Error::runtime(
        "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you need to perform in-place operations on the input to a pack hook.",
    )
}

/// Runs the active pack hook on `t`, if any.
fn pack(t: &Tensor, edge: impl FnOnce() -> Option<Edge>) -> Result<Option<Stored>> {
    // Python numbers an op turned into tensors are saved as numbers in
    // torch, where hooks never see them.
    if t.is_wrapped_number() {
        return Ok(None);
    }
    let Some(hooks) = current_saved_tensors_hooks() else {
        return Ok(None);
    };
    crate::compile::break_capture_within("saved tensor hooks pack a tensor the graph saves");
    let version = t.version();
    // The hook runs outside any recording: it sees the saved value, and
    // what it computes is not part of the graph.
    let packed = {
        let _g = super::no_grad();
        hooks.pack(t)?
    };
    if t.version() != version {
        return Err(pack_modified_input());
    }
    Ok(Some(Stored::Packed {
        packed,
        hooks,
        edge: edge(),
    }))
}

/// torch's error for using a graph whose saved tensors were freed.
pub fn freed_graph_error() -> Error {
    Error::runtime(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
    )
}

/// A tensor a node saved for backward.
///
/// Outputs of the saving node are stored without their `grad_fn` (that
/// would be a reference cycle) and get it back, as a weak reference to the
/// node, when unpacked.
pub struct SavedTensor {
    data: Mutex<Option<Stored>>,
    version: u64,
    /// For a saved output: its index and the node that produced it.
    output: Option<(usize, Weak<dyn Node>)>,
    requires_grad: bool,
    /// How the error message names the tensor's origin.
    origin: String,
    released: Mutex<bool>,
}

impl SavedTensor {
    /// Saves an input (or any tensor not produced by the saving node).
    pub fn input(t: &Tensor) -> Result<SavedTensor> {
        super::check_not_inference(t, "saved for backward")?;
        let origin = match super::grad_fn_edge(t) {
            Some(e) => format!(", which is output {} of {},", e.input_nr, e.node.name()),
            None => String::new(),
        };
        let stored = match pack(t, || super::gradient_edge(t))? {
            Some(p) => p,
            None => Stored::Tensor(t.clone()),
        };
        Ok(SavedTensor {
            data: Mutex::new(Some(stored)),
            version: t.version(),
            output: None,
            requires_grad: t.requires_grad(),
            origin,
            released: Mutex::new(false),
        })
    }

    /// Saves output `output_nr` of `node` (set once the node exists).
    pub fn output(
        t: &Tensor,
        output_nr: usize,
        node: Weak<dyn Node>,
        name: &str,
    ) -> Result<SavedTensor> {
        // A saved output gets its node back on unpack (below), packed or not.
        let stored = match pack(t, || None)? {
            Some(p) => p,
            None => Stored::Tensor(t.detach()),
        };
        Ok(SavedTensor {
            data: Mutex::new(Some(stored)),
            version: t.version(),
            output: Some((output_nr, node)),
            requires_grad: t.dtype().is_differentiable(),
            origin: format!(", which is output {output_nr} of {name},"),
            released: Mutex::new(false),
        })
    }

    /// The saved tensor, checked against in-place modification; saved
    /// outputs come back attached to their node.
    pub fn unpack(&self) -> Result<Tensor> {
        let packed = match &*self.data.lock() {
            Some(Stored::Tensor(t)) => Err(t.clone()),
            Some(Stored::Packed { hooks, .. }) => Ok(hooks.clone()),
            None => return Err(freed_graph_error()),
        };
        let t = match packed {
            Err(t) => t,
            // Packed values are not version-checked (as in torch): the hook
            // decided what to keep.
            Ok(hooks) => return self.unpack_packed(&hooks),
        };
        if t.version() != self.version {
            return Err(Error::runtime(format!(
                "one of the variables needed for gradient computation has been modified by an inplace operation: [ferrograd.{}Tensor {:?}]{} is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).",
                t.dtype().scalar_type_name(),
                t.shape(),
                self.origin,
                t.version(),
                self.version
            )));
        }
        if let Some((nr, node)) = &self.output {
            if self.requires_grad {
                if let Some(node) = node.upgrade() {
                    let out = t.detach();
                    super::set_grad_fn(&out, Some(Edge::new(node, *nr)));
                    super::forward::share_tangent(&t, &out);
                    return Ok(out);
                }
            }
        }
        Ok(t)
    }

    /// Runs the unpack hook (on a value that is still there) and gives the
    /// result the saved tensor's history.
    fn unpack_packed(&self, hooks: &Arc<dyn SavedTensorHooks>) -> Result<Tensor> {
        // The lock is not held while the hook runs: it may take long, or
        // read other saved tensors.
        let (t, edge) = {
            let data = self.data.lock();
            let Some(Stored::Packed { packed, edge, .. }) = &*data else {
                return Err(freed_graph_error());
            };
            let t = {
                let _g = super::no_grad();
                hooks.unpack(packed)?
            };
            (t, edge.clone())
        };
        let out = t.detach();
        if !self.requires_grad {
            return Ok(out);
        }
        let edge = match &self.output {
            Some((nr, node)) => node.upgrade().map(|n| Edge::new(n, *nr)),
            None => edge,
        };
        if edge.is_some() {
            super::set_grad_fn(&out, edge);
        }
        Ok(out)
    }

    /// Packs this saved tensor with `hooks` now (`_raw_saved_<name>.
    /// register_hooks(pack, unpack)`); backward unpacks it with them. One
    /// pair per saved tensor: refused when hooks already packed it (also
    /// those of `saved_tensors_hooks`) and after it was freed.
    pub fn register_hooks(&self, hooks: Arc<dyn SavedTensorHooks>) -> Result<()> {
        let t = match &*self.data.lock() {
            Some(Stored::Tensor(t)) => t.clone(),
            Some(Stored::Packed { .. }) => {
                return Err(Error::runtime(
                    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of hooks is allowed at a time.",
                ))
            }
            None => {
                return Err(Error::runtime(
                    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved variables after calling backward.",
                ))
            }
        };
        // The hook runs without the lock (it is user code), as in `pack`.
        let version = t.version();
        let packed = {
            let _g = super::no_grad();
            hooks.pack(&t)?
        };
        if t.version() != version {
            return Err(pack_modified_input());
        }
        let edge = if self.output.is_some() {
            None
        } else {
            super::gradient_edge(&t)
        };
        let mut data = self.data.lock();
        match &*data {
            Some(Stored::Tensor(_)) => {
                *data = Some(Stored::Packed {
                    packed,
                    hooks,
                    edge,
                });
                Ok(())
            }
            // Freed or packed by another thread meanwhile.
            _ => Err(Error::runtime(
                "Calling register_hooks on a saved tensor whose hooks have already been set, or that was freed, while its pack hook ran.",
            )),
        }
    }

    /// Whether unpacking runs hooks that need the thread that called
    /// backward.
    pub fn needs_caller_thread(&self) -> bool {
        matches!(&*self.data.lock(), Some(Stored::Packed { hooks, .. }) if hooks.needs_caller_thread())
    }

    /// For a saved output: which output of its node it is.
    pub fn output_nr(&self) -> Option<usize> {
        self.output.as_ref().map(|(nr, _)| *nr)
    }

    /// The saved tensor without checks, as `_raw_saved_<name>` shows it
    /// (`None` once freed).
    pub fn raw(&self) -> Option<Tensor> {
        let packed = match &*self.data.lock() {
            Some(Stored::Tensor(t)) => return Some(t.clone()),
            Some(Stored::Packed { hooks, .. }) => hooks.clone(),
            None => return None,
        };
        self.unpack_packed(&packed).ok()
    }

    /// Whether the saved value was freed.
    pub fn is_released(&self) -> bool {
        *self.released.lock()
    }

    /// Frees the tensor.
    pub fn release(&self) {
        *self.released.lock() = true;
        let t = self.data.lock().take();
        if let Some(t) = t {
            super::node::defer_drop(Box::new(t));
        }
    }
}
