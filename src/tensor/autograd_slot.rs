//! [`AutogradSlot`]: where the autograd layer keeps its state for one
//! tensor, without the tensor layer knowing what that state is.
//!
//! Note [Autograd slot]: the slot starts empty and is filled once, on the
//! first write of autograd state (`requires_grad_()`, a `grad_fn`, a
//! `.grad`, a hook, a tangent); tensors autograd never writes to (most
//! tensors of a no-grad program) never pay for it. Readers ask
//! [`AutogradSlot::get`] and treat an empty slot as the state a fresh
//! tensor has, which the autograd layer builds from the tensor's
//! [`Origin`]: the facts known when the tensor was made (inference mode,
//! `detach`, the version a view was made at). The slot holds one type of
//! value for its whole life, the one its first filler chose.

use std::any::Any;
use std::sync::{Arc, OnceLock};

/// What was known about a tensor's autograd state when it was made.
#[derive(Clone, Copy, Debug, Default)]
pub struct Origin {
    /// Made while inference mode was on: never part of a graph.
    pub inference: bool,
    /// Made by `detach` or `unpack_dual`: never sees its base's
    /// forward-mode tangent.
    pub detached: bool,
    /// For views: the shared version counter's value when the view was
    /// made, and whether grad mode was on then (a differentiable view).
    pub view: Option<(u64, bool)>,
}

/// An empty-until-needed slot for a tensor's autograd state.
pub struct AutogradSlot {
    origin: Origin,
    state: OnceLock<Arc<dyn Any + Send + Sync>>,
}

impl AutogradSlot {
    pub(super) fn new(origin: Origin) -> AutogradSlot {
        AutogradSlot {
            origin,
            state: OnceLock::new(),
        }
    }

    /// A slot for another tensor that is the same tensor to autograd (see
    /// [`Tensor::rebound`](super::Tensor::rebound)): both read and write
    /// one state from now on. A slot still empty stays independent.
    pub(super) fn shared(&self) -> AutogradSlot {
        let state = OnceLock::new();
        if let Some(s) = self.state.get() {
            let _ = state.set(Arc::clone(s));
        }
        AutogradSlot {
            origin: self.origin,
            state,
        }
    }

    /// The facts recorded when the tensor was made.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The state, if it was made and is a `T`.
    #[inline]
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.state.get().and_then(|b| b.downcast_ref())
    }

    /// The state, made by `init` from the tensor's [`Origin`] on first
    /// use. Returns `None` only if the slot already holds another type.
    pub fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce(Origin) -> T) -> Option<&T> {
        self.state
            .get_or_init(|| Arc::new(init(self.origin)))
            .downcast_ref()
    }
}
