//! Saved tensors: what a node keeps from the forward pass, with the version
//! it had then, so that backward can refuse values modified in place.

use super::node::Node;
use super::Edge;
use crate::{Error, Result, Tensor};
use parking_lot::Mutex;
use std::sync::Weak;

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
    data: Mutex<Option<Tensor>>,
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
        Ok(SavedTensor {
            data: Mutex::new(Some(t.clone())),
            version: t.version(),
            output: None,
            requires_grad: t.requires_grad(),
            origin,
            released: Mutex::new(false),
        })
    }

    /// Saves output `output_nr` of `node` (set once the node exists).
    pub fn output(t: &Tensor, output_nr: usize, node: Weak<dyn Node>, name: &str) -> SavedTensor {
        SavedTensor {
            data: Mutex::new(Some(t.detach())),
            version: t.version(),
            output: Some((output_nr, node)),
            requires_grad: t.dtype().is_floating_point(),
            origin: format!(", which is output {output_nr} of {name},"),
            released: Mutex::new(false),
        }
    }

    /// The saved tensor, checked against in-place modification; saved
    /// outputs come back attached to their node.
    pub fn unpack(&self) -> Result<Tensor> {
        let t = match &*self.data.lock() {
            Some(t) => t.clone(),
            None => return Err(freed_graph_error()),
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

    /// For a saved output: which output of its node it is.
    pub fn output_nr(&self) -> Option<usize> {
        self.output.as_ref().map(|(nr, _)| *nr)
    }

    /// The saved tensor without checks, as `_raw_saved_<name>` shows it
    /// (`None` once freed).
    pub fn raw(&self) -> Option<Tensor> {
        self.data.lock().clone()
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
