//! `ferrograd._core`: the thin PyO3 bindings of the ferrograd crate.
//!
//! Conversions and GIL handling only; all logic lives in the core crate.
//! The `Tensor` class is defined in `tensor.rs`; each area of operations
//! adds its methods in its own `#[pymethods]` block (pyo3's
//! `multiple-pymethods`) and its module functions in its `register`.

mod autograd;
mod convert;
mod creation;
mod dtype;
mod elementwise;
mod errors;
mod forward_ad;
mod function;
mod interop;
mod linalg;
mod nn;
mod optim;
mod profiler;
mod random;
mod reduce;
mod routed;
mod saved_hooks;
mod shape_index;
mod tensor;
mod views;

use dtype::{PyDType, PyDevice};
use ferrograd::DType;
use pyo3::prelude::*;
use tensor::PyTensor;

#[pyfunction]
fn get_default_dtype() -> PyDType {
    PyDType {
        dt: ferrograd::default_dtype(),
    }
}

#[pyfunction]
fn set_default_dtype(d: &Bound<'_, PyAny>) -> PyResult<()> {
    use errors::IntoPyResult;
    ferrograd::set_default_dtype(dtype::parse_dtype(d)?).py()
}

#[pyfunction]
fn promote_types(type1: &Bound<'_, PyAny>, type2: &Bound<'_, PyAny>) -> PyResult<PyDType> {
    Ok(PyDType {
        dt: dtype::parse_dtype(type1)?.promote(dtype::parse_dtype(type2)?),
    })
}

/// torch's `result_type(tensor1, tensor2)`: tensors and Python scalars.
#[pyfunction]
fn result_type(tensor1: &Bound<'_, PyAny>, tensor2: &Bound<'_, PyAny>) -> PyResult<PyDType> {
    let a = tensor::arg(tensor1, "tensor1")?;
    let b = tensor::arg(tensor2, "tensor2")?;
    Ok(PyDType {
        dt: ferrograd::result_type(&[a.promotion_operand(), b.promotion_operand()]),
    })
}

#[pyfunction]
fn is_floating_point(input: PyRef<'_, PyTensor>) -> bool {
    input.t.dtype().is_floating_point()
}

#[pyfunction]
fn is_complex(input: PyRef<'_, PyTensor>) -> bool {
    input.t.dtype().is_complex()
}

#[pyfunction]
fn is_tensor(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast::<PyTensor>().is_ok()
}

#[pyfunction]
fn numel(input: PyRef<'_, PyTensor>) -> usize {
    input.t.numel()
}

/// Sets the number of threads of ferrograd's pool.
#[pyfunction]
fn set_num_threads(n: i64) -> PyResult<()> {
    if n < 1 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "set_num_threads expects a positive integer, got {n}"
        )));
    }
    ferrograd::set_num_threads(n as usize);
    Ok(())
}

#[pyfunction]
fn get_num_threads() -> usize {
    ferrograd::num_threads()
}

/// Frees buffers held by the allocation cache; returns bytes it held.
#[pyfunction]
fn _empty_cache() -> usize {
    let n = ferrograd::tensor::buffer_cache_bytes();
    ferrograd::tensor::empty_buffer_cache();
    n
}

/// Sets the allocation cache's byte budget (0 disables it).
#[pyfunction]
fn _set_cache_limit(bytes: usize) {
    ferrograd::tensor::set_buffer_cache_limit(bytes);
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The package version, single-sourced from Cargo.toml.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyTensor>()?;
    m.add_class::<PyDType>()?;
    m.add_class::<PyDevice>()?;
    for d in DType::ALL {
        m.add(d.name(), PyDType { dt: d })?;
    }
    m.add_function(wrap_pyfunction!(get_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(promote_types, m)?)?;
    m.add_function(wrap_pyfunction!(result_type, m)?)?;
    m.add_function(wrap_pyfunction!(is_floating_point, m)?)?;
    m.add_function(wrap_pyfunction!(is_complex, m)?)?;
    m.add_function(wrap_pyfunction!(is_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(numel, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(_set_cache_limit, m)?)?;
    m.add_function(wrap_pyfunction!(tensor::_rebuild_tensor, m)?)?;
    creation::register(m)?;
    elementwise::register(m)?;
    reduce::register(m)?;
    views::register(m)?;
    shape_index::register(m)?;
    linalg::register(m)?;
    nn::register(m)?;
    optim::register(m)?;
    random::register(m)?;
    autograd::register(m)?;
    forward_ad::register(m)?;
    function::register(m)?;
    saved_hooks::register(m)?;
    profiler::register(m)?;
    routed::register(m)?;
    interop::register(m)?;
    Ok(())
}
