//! Saved-tensor hooks written in Python (`autograd.graph.saved_tensors_hooks`),
//! and the `allow_mutation_on_saved_tensors` context (whose hooks are Rust's).
//!
//! The pack hook runs where an op saves a tensor (the thread running the
//! forward, or a `create_graph` backward, which then stays on the calling
//! thread); the unpack hook runs where backward needs the tensor, which the
//! engine keeps on the thread that called backward (`needs_caller_thread`).
//! Both re-attach to the interpreter only around the call.

use crate::errors::{from_py, IntoPyResult};
use crate::tensor::PyTensor;
use ferrograd::autograd::{self, Packed, SavedTensorHooks};
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
                .call1(py, (PyTensor::new(t.clone()),))
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
                Ok(t) => Ok(t.get().t.clone()),
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

/// Pushes a hook pair on this thread's stack (`saved_tensors_hooks.__enter__`).
#[pyfunction]
fn _push_saved_tensors_hooks(pack_hook: Py<PyAny>, unpack_hook: Py<PyAny>) -> PyResult<()> {
    let hooks = PyHooks {
        pack: pack_hook,
        unpack: unpack_hook,
    };
    autograd::push_saved_tensors_hooks(Arc::new(hooks)).py()
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
    m.add_function(wrap_pyfunction!(_open_mutation_context, m)?)?;
    m.add_function(wrap_pyfunction!(_close_mutation_context, m)?)?;
    m.add_function(wrap_pyfunction!(_push_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_pop_saved_tensors_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(_disable_saved_tensors_hooks, m)?)?;
    Ok(())
}
