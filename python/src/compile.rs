//! Capture and replay behind `ferrograd.compile` (the guards, the cache
//! and the graph breaks are in `ferrograd/_compile.py`): `_capture_begin`
//! and `_capture_end` around one eager call of the function, and
//! `_Program.replay`, which runs the recorded operations with the GIL
//! released.

use crate::errors::{detached, IntoPyResult};
use crate::linalg::tensor_only;
use crate::tensor::{PyTensor, TensorOut};
use ferrograd::compile::{self, Captured, Program};
use ferrograd::Tensor;
use pyo3::prelude::*;
use std::sync::Arc;

fn tensors(seq: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Tensor>> {
    seq.try_iter()?
        .map(|o| tensor_only(&o?, "compile", what))
        .collect()
}

/// A recorded program (see `ferrograd::compile::Program`).
#[pyclass(name = "_Program", module = "ferrograd._core", frozen)]
pub struct PyProgram(Arc<Program>);

#[pymethods]
impl PyProgram {
    /// Runs the recorded operations over `inputs` (GIL released) and
    /// returns the results as a list, or `None` (having changed nothing)
    /// when the function would take another course on these inputs (a
    /// value guard or `.grad` check fails).
    fn replay(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Vec<TensorOut>>> {
        let ins = tensors(inputs, "inputs")?;
        if !self.0.holds(&ins) {
            return Ok(None);
        }
        let p = self.0.clone();
        let outs = detached(py, move || p.try_replay(&ins)).py()?;
        Ok(outs.map(|o| o.into_iter().map(TensorOut).collect()))
    }

    /// The recorded operations' names, in order.
    fn operations(&self) -> Vec<&'static str> {
        self.0.operations()
    }

    /// Identities of the tensors the program reads by reference (compare
    /// with `_tensor_id`).
    fn constant_ids(&self) -> Vec<usize> {
        self.0
            .constants()
            .iter()
            .filter(|t| !t.is_wrapped_number())
            .map(Tensor::id)
            .collect()
    }

    #[getter]
    fn num_inputs(&self) -> usize {
        self.0.num_inputs()
    }

    #[getter]
    fn num_outputs(&self) -> usize {
        self.0.num_outputs()
    }
}

/// Starts recording on this thread, with `inputs` as the program's inputs.
#[pyfunction]
fn _capture_begin(inputs: &Bound<'_, PyAny>) -> PyResult<()> {
    compile::begin(&tensors(inputs, "inputs")?).py()
}

/// Ends this thread's recording with `outputs` as the results: the
/// program, or `None` and why the function cannot be replayed.
#[pyfunction]
fn _capture_end(outputs: &Bound<'_, PyAny>) -> PyResult<(Option<PyProgram>, Option<String>)> {
    let outs = match tensors(outputs, "outputs") {
        Ok(o) => o,
        Err(e) => {
            compile::abort();
            return Err(e);
        }
    };
    Ok(match compile::end(&outs) {
        Captured::Program(mut p) => {
            p.fuse();
            (Some(PyProgram(Arc::new(p))), None)
        }
        Captured::Broken(why) => (None, Some(why)),
    })
}

/// Abandons this thread's recording, if any.
#[pyfunction]
fn _capture_abort() {
    compile::abort();
}

/// Marks this thread's recording as not repeatable, with `why` (a no-op
/// when not recording).
#[pyfunction]
fn _capture_break(why: &str) {
    compile::break_capture(why);
}

/// Whether this thread's recording is broken (what has run so far
/// cannot be replayed).
#[pyfunction]
fn _capture_broken() -> bool {
    compile::broken().is_some()
}

/// Whether this thread is recording.
#[pyfunction]
fn _capturing() -> bool {
    compile::capturing()
}

/// The identity of the tensor `t` stands for now (it changes when
/// `resize_` or `set_` give the object new memory).
#[pyfunction]
fn _tensor_id(t: &Bound<'_, PyTensor>) -> usize {
    t.get().tensor().id()
}

/// How many times a tensor object has been given a new handle (`resize_`,
/// `set_`) in this process.
#[pyfunction]
fn _handle_epoch() -> u64 {
    crate::tensor::HANDLE_EPOCH.load(std::sync::atomic::Ordering::Relaxed) + compile::guard_epoch()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_handle_epoch, m)?)?;
    m.add_class::<PyProgram>()?;
    m.add_function(wrap_pyfunction!(_capture_begin, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_end, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_abort, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_break, m)?)?;
    m.add_function(wrap_pyfunction!(_capturing, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_broken, m)?)?;
    m.add_function(wrap_pyfunction!(_tensor_id, m)?)?;
    Ok(())
}
