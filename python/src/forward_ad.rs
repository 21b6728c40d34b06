//! Forward-mode AD bindings: dual levels, `make_dual`/`unpack_dual`, and
//! setting the tangents of custom Function outputs.

use crate::errors::IntoPyResult;
use crate::tensor::{PyTensor, TensorOut};
use ferrograd::autograd;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// A level index from Python (`None` is the open level).
fn level_arg(level: Option<i64>) -> PyResult<Option<usize>> {
    match level {
        None => Ok(None),
        Some(l) if l >= 0 => Ok(Some(l as usize)),
        Some(l) => Err(PyRuntimeError::new_err(format!(
            "Trying to use forward AD level {l}, but levels are numbered from 0"
        ))),
    }
}

/// Opens the dual level; with `batch`, every tangent gets a leading batch
/// dim of that size.
#[pyfunction]
#[pyo3(signature = (batch=None))]
fn _enter_dual_level(batch: Option<usize>) -> PyResult<usize> {
    match batch {
        Some(b) => autograd::enter_batched_dual_level(b),
        None => autograd::enter_dual_level(),
    }
    .py()
}

#[pyfunction]
#[pyo3(signature = (level=None))]
fn _exit_dual_level(level: Option<i64>) -> PyResult<()> {
    autograd::exit_dual_level(level_arg(level)?).py()
}

/// The open level's index, or -1.
#[pyfunction]
fn _current_dual_level() -> i64 {
    autograd::current_dual_level().map_or(-1, |l| l as i64)
}

#[pyfunction]
#[pyo3(signature = (tensor, tangent, level=None))]
fn _make_dual(tensor: &PyTensor, tangent: &PyTensor, level: Option<i64>) -> PyResult<TensorOut> {
    autograd::make_dual(&tensor.tensor(), &tangent.tensor(), level_arg(level)?)
        .py()
        .map(TensorOut)
}

#[pyfunction]
#[pyo3(signature = (tensor, level=None))]
fn _unpack_dual(tensor: &PyTensor, level: Option<i64>) -> PyResult<(TensorOut, Option<TensorOut>)> {
    let (p, t) = autograd::unpack_dual(&tensor.tensor(), level_arg(level)?).py()?;
    Ok((TensorOut(p), t.map(TensorOut)))
}

/// Sets forward AD on or off for this thread; returns the previous mode.
#[pyfunction]
fn _set_fwd_grad_enabled(mode: bool) -> bool {
    autograd::set_fwd_grad_enabled(mode)
}

#[pyfunction]
fn _is_fwd_grad_enabled() -> bool {
    autograd::is_fwd_grad_enabled()
}

/// Gives `tensor` the tangent `tangent` at the open level (the outputs of
/// a custom Function's `jvp`).
#[pyfunction]
fn _set_fw_grad(tensor: &PyTensor, tangent: &PyTensor) -> PyResult<()> {
    autograd::set_fw_grad(&tensor.tensor(), &tangent.tensor()).py()
}

/// The tangent of `tensor` at the open level (None without one).
#[pyfunction]
fn _fw_grad(tensor: &PyTensor) -> Option<TensorOut> {
    autograd::fw_grad(&tensor.tensor()).map(TensorOut)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_enter_dual_level, m)?)?;
    m.add_function(wrap_pyfunction!(_exit_dual_level, m)?)?;
    m.add_function(wrap_pyfunction!(_current_dual_level, m)?)?;
    m.add_function(wrap_pyfunction!(_make_dual, m)?)?;
    m.add_function(wrap_pyfunction!(_unpack_dual, m)?)?;
    m.add_function(wrap_pyfunction!(_set_fwd_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_is_fwd_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_set_fw_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_fw_grad, m)?)?;
    Ok(())
}
