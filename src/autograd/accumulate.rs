//! `AccumulateGrad`: the node at each leaf that adds incoming gradients
//! into the leaf's `.grad`, following torch's gradient layout rules.

use super::node::{Grads, Node, NodeCore, TensorMeta};
use crate::{Result, Tensor};
use std::any::Any;

/// Accumulates gradients into a leaf's `.grad`.
pub struct AccumulateGrad {
    core: NodeCore,
    variable: Tensor,
}

impl AccumulateGrad {
    pub(crate) fn new(variable: Tensor) -> AccumulateGrad {
        let meta = TensorMeta::of(&variable);
        AccumulateGrad {
            core: NodeCore::new(Vec::new(), Vec::new(), vec![meta]),
            variable,
        }
    }

    /// The leaf this node accumulates into.
    pub fn variable(&self) -> &Tensor {
        &self.variable
    }
}

/// Whether `g` may be stored as a grad of `v` as it is: dense params need
/// their own strides, others a contiguous grad (torch's layout contract).
fn obeys_layout(v: &Tensor, g: &Tensor) -> bool {
    if v.layout().is_non_overlapping_and_dense() {
        g.strides() == v.strides() || v.numel() <= 1 && g.is_contiguous()
    } else {
        g.is_contiguous()
    }
}

/// A copy of `g` laid out as the contract asks for `v`. With grad mode on
/// the copy is recorded (`copy_` into fresh strided memory, or a clone), so
/// the gradient keeps its graph.
fn clone_obeying_layout(v: &Tensor, g: &Tensor) -> Result<Tensor> {
    if v.layout().is_non_overlapping_and_dense() && !v.is_contiguous() {
        let out = Tensor::empty_strided_like(v)?;
        out.copy_(g)?;
        Ok(out)
    } else {
        Ok(g.copy())
    }
}

/// Adds `new` to the `.grad` of `v` (rules 1-4 of torch's default gradient
/// layouts). With grad mode on (`create_graph=True`) the result is a new
/// tensor carrying the graph of the gradient; otherwise an existing `.grad`
/// is updated in place, keeping its strides.
pub(crate) fn accumulate(v: &Tensor, new: Tensor) -> Result<()> {
    let create_graph = super::is_grad_enabled();
    let slot = v.autograd().grad_slot();
    let mut grad = slot.lock();
    match grad.as_ref() {
        None => {
            let g = if !create_graph && new.is_exclusive() && obeys_layout(v, &new) {
                new
            } else {
                clone_obeying_layout(v, &new)?
            };
            *grad = Some(g);
        }
        Some(old) if !create_graph && !old.requires_grad() => {
            // In place, on this thread only: a parallel kernel could make
            // this worker steal another accumulation into the same leaf
            // while the lock is held.
            let old = old.clone();
            crate::pool::serial(|| old.add_(&new))?;
        }
        Some(old) => {
            let sum = old.add(&new)?;
            *grad = Some(sum);
        }
    }
    Ok(())
}

impl Node for AccumulateGrad {
    fn name(&self) -> String {
        "torch::autograd::AccumulateGrad".to_string()
    }
    fn static_name(&self) -> Option<&'static str> {
        Some("torch::autograd::AccumulateGrad")
    }
    fn core(&self) -> &NodeCore {
        &self.core
    }
    fn apply(&self, grads: Grads) -> Result<Grads> {
        let Some(mut g) = grads.into_iter().next().flatten() else {
            return Ok(Vec::new());
        };
        let (hooks, has_post) = self.variable.accumulator_hooks();
        for (h, _) in hooks {
            if let Some(r) = h(&g)? {
                g = r;
            }
        }
        // A gradient that matches in shape but not in dtype is cast.
        if g.dtype() != self.variable.dtype() {
            g = g.to_dtype(self.variable.dtype());
        }
        accumulate(&self.variable, g)?;
        if has_post {
            for h in self.variable.post_accumulate_hooks() {
                h(&self.variable)?;
            }
        }
        Ok(Vec::new())
    }
    fn needs_caller_thread(&self) -> bool {
        self.variable.has_caller_thread_leaf_hooks()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
