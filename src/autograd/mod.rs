//! Autograd state carried by every tensor.
//!
//! This module owns the per-tensor slots the reverse-mode engine uses:
//! whether a tensor requires grad, its accumulated `.grad`, and the
//! `grad_fn` edge that produced it. The graph [`Node`] trait is the seam the
//! engine builds on; this module does not run backward itself.

use crate::Tensor;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A node of the backward graph (e.g. `MulBackward0`, `AccumulateGrad`).
pub trait Node: Send + Sync {
    /// torch's name for the node.
    fn name(&self) -> String;
}

/// A reference to one input slot of a [`Node`].
#[derive(Clone)]
pub struct Edge {
    pub node: Arc<dyn Node>,
    pub input_nr: usize,
}

/// The autograd slots of one tensor.
#[derive(Default)]
pub struct AutogradMeta {
    requires_grad: AtomicBool,
    grad: Mutex<Option<Tensor>>,
    grad_fn: Mutex<Option<Edge>>,
}

impl AutogradMeta {
    pub fn new(requires_grad: bool) -> Self {
        AutogradMeta {
            requires_grad: AtomicBool::new(requires_grad),
            ..Default::default()
        }
    }

    pub fn requires_grad(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed) || self.grad_fn.lock().is_some()
    }

    pub fn set_requires_grad(&self, value: bool) {
        self.requires_grad.store(value, Ordering::Relaxed);
    }

    pub fn grad(&self) -> Option<Tensor> {
        self.grad.lock().clone()
    }

    pub fn set_grad(&self, grad: Option<Tensor>) {
        *self.grad.lock() = grad;
    }

    pub fn grad_fn(&self) -> Option<Edge> {
        self.grad_fn.lock().clone()
    }

    pub fn set_grad_fn(&self, edge: Option<Edge>) {
        *self.grad_fn.lock() = edge;
    }
}
