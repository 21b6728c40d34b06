//! Saved-tensor hooks written in Python (`autograd.graph.saved_tensors_hooks`),
//! and the `allow_mutation_on_saved_tensors` context (whose hooks are Rust's).
//!
//! The pack hook runs where an op saves a tensor (the thread running the
//! forward, or a `create_graph` backward, which then stays on the calling
//! thread); the unpack hook runs where backward needs the tensor, which the
//! engine keeps on the thread that called backward (`needs_caller_thread`).
//! Both re-attach to the interpreter only around the call.

use crate::errors::{from_py, IntoPyResult};
use crate::tensor::{PyTensor, TensorOut};
use ferrograd::autograd::{self, Node, Packed, SavedTensorHooks};
use ferrograd::{Error, Result, Tensor};
use pyo3::prelude::*;
use std::sync::Arc;

/// A `(pack_hook, unpack_hook)` pair of Python callables.
struct PyHooks {
    pack: Py<PyAny>,
    unpack: Py<PyAny>,
}

impl SavedTensorHooks for PyHooks {
    fn pack(&self, t: &Tensor) -> Result<Packed> {
        Python::attach(|py| {
            let obj = self
                .pack
                .call1(py, (TensorOut(t.clone()),))
                .map_err(from_py)?;
            Ok(Box::new(obj) as Packed)
        })
    }

    fn unpack(&self, packed: &Packed) -> Result<Tensor> {
        let obj = packed
            .downcast_ref::<Py<PyAny>>()
            .ok_or_else(|| Error::runtime("saved tensor was packed by other hooks"))?;
        Python::attach(|py| {
            let r = self
                .unpack
                .call1(py, (obj.clone_ref(py),))
                .map_err(from_py)?;
            let r = r.bind(py);
            match r.cast::<PyTensor>() {
                Ok(t) => Ok(t.get().tensor()),
                Err(_) => Err(Error::type_error(format!(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result of type {}",
                    crate::convert::type_name(r)
                ))),
            }
        })
    }

    fn needs_caller_thread(&self) -> bool {
        true
    }
}

/// The hooks object for a Python `(pack_hook, unpack_hook)` pair.
pub fn py_hooks(pack: Py<PyAny>, unpack: Py<PyAny>) -> Arc<dyn SavedTensorHooks> {
    Arc::new(PyHooks { pack, unpack })
}

/// A tensor a graph node saved, as `node._raw_saved_<name>` shows it:
/// `register_hooks(pack_hook, unpack_hook)` packs it now and unpacks it
/// with those hooks when backward needs it.
#[pyclass(name = "SavedTensor", module = "ferrograd._core", frozen)]
pub struct PySavedTensor {
    node: Arc<dyn Node>,
    name: String,
}

impl PySavedTensor {
    pub fn new(node: Arc<dyn Node>, name: &str) -> Self {
        PySavedTensor {
            node,
            name: name.to_string(),
        }
    }

    fn saved(&self) -> PyResult<&autograd::SavedTensor> {
        self.node
            .as_any()
            .downcast_ref::<autograd::FnNode>()
            .and_then(|n| n.saved_tensor(&self.name))
            .ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "{} saved no tensor called {:?}",
                    self.node.name(),
                    self.name
                ))
            })
    }
}

#[pymethods]
impl PySavedTensor {
    /// Packs the saved tensor with `pack_hook` now; backward gets it back
    /// from `unpack_hook`. One pair per saved tensor.
    fn register_hooks(
        &self,
        pack_hook: Bound<'_, PyAny>,
        unpack_hook: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        for (what, f) in [("pack_hook", &pack_hook), ("unpack_hook", &unpack_hook)] {
            if !f.is_callable() {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "register_hooks(): {what} must be callable, got {}",
                    crate::convert::type_name(f)
                )));
            }
        }
        let hooks = py_hooks(pack_hook.unbind(), unpack_hook.unbind());
        self.saved()?.register_hooks(hooks).py()
    }

    /// The saved tensor, unpacked (as `node._saved_<name>`).
    fn unpack(&self) -> PyResult<TensorOut> {
        let s = self.saved()?;
        if s.is_released() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                autograd::freed_graph_error().to_string(),
            ));
        }
        Ok(TensorOut(s.unpack().py()?))
    }

    /// The stored value without checks or history (None once freed).
    #[getter]
    fn data(&self) -> PyResult<Option<TensorOut>> {
        Ok(self.saved()?.raw().map(|t| TensorOut(t.detach())))
    }

    fn __repr__(&self) -> String {
        format!("<SavedTensor {} of {}>", self.name, self.node.name())
    }
}

/// Pushes a hook pair on this thread's stack (`saved_tensors_hooks.__enter__`).
#[pyfunction]
fn _push_saved_tensors_hooks(pack_hook: Py<PyAny>, unpack_hook: Py<PyAny>) -> PyResult<()> {
    autograd::push_saved_tensors_hooks(py_hooks(pack_hook, unpack_hook)).py()
}

/// Pops the innermost hook pair or disabling entry.
#[pyfunction]
fn _pop_saved_tensors_hooks() {
    autograd::pop_saved_tensors_hooks();
}

/// Forbids hooks until the matching pop (`disable_saved_tensors_hooks`).
#[pyfunction]
fn _disable_saved_tensors_hooks(error_message: &str) -> PyResult<()> {
    autograd::disable_saved_tensors_hooks(error_message).py()
}

/// Opens an `allow_mutation_on_saved_tensors` context on this thread.
#[pyfunction]
fn _open_mutation_context() -> PyResult<()> {
    autograd::open_mutation_context().py()
}

/// Closes the innermost `allow_mutation_on_saved_tensors` context.
#[pyfunction]
fn _close_mutation_context() {
    autograd::close_mutation_context();
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySavedTensor>()?;
    m.add_function(wrap_pyfunction!(_open_mutation_context, m)?)?;
    m.add_function(wrap_pyfunction!(_close_mutation_context, m)?)?;
    m.add_function(wrap_pyfunction!(_push_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_pop_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_disable_saved_tensors_hooks, m)?)?;
    Ok(())
}
