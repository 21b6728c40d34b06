//! Creation functions: `tensor`, `from_numpy`, `zeros`, `ones`, `full`,
//! `empty` and their `_like` forms.

use crate::convert::{self, shape_args, sizes};
use crate::dtype::{check_device, parse_opt_dtype};
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, wrap_any, PyTensor, TensorOut};
use ferrograd::{default_dtype, DType, Scalar, Tensor};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Applies `requires_grad=` to a new tensor.
pub fn finish(t: Tensor, requires_grad: bool) -> PyResult<TensorOut> {
    if requires_grad {
        t.set_requires_grad(true).py()?;
    }
    Ok(TensorOut(t))
}

#[pyfunction]
#[pyo3(signature = (data, *, dtype = None, device = None, requires_grad = false, pin_memory = false))]
pub fn tensor(
    data: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    pin_memory: bool,
) -> PyResult<TensorOut> {
    let _ = pin_memory;
    check_device(device)?;
    let dt = parse_opt_dtype(dtype)?;
    finish(convert::data_to_tensor(data, dt)?, requires_grad)
}

/// `as_tensor(data, dtype=None)`: shares memory with tensors and NumPy
/// arrays when no conversion is needed, else copies.
#[pyfunction]
#[pyo3(signature = (data, dtype = None, device = None))]
pub fn as_tensor(
    data: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    check_device(device)?;
    let dt = parse_opt_dtype(dtype)?;
    let py = data.py();
    if let Ok(t) = data.cast::<PyTensor>() {
        return match dt {
            Some(d) if d != t.get().t.dtype() => wrap_any(py, t.get().t.to_dtype(d)),
            _ => Ok(t.clone().into_any().unbind()),
        };
    }
    if data.hasattr("__array_interface__")? && data.hasattr("ndim")? {
        if let Ok(t) = convert::from_array_interface(data, true) {
            let t = match dt {
                Some(d) => t.to_dtype(d),
                None => t,
            };
            return wrap_any(py, t);
        }
    }
    wrap_any(py, convert::data_to_tensor(data, dt)?)
}

/// `from_numpy(ndarray)`: a tensor sharing the array's memory.
#[pyfunction]
pub fn from_numpy(ndarray: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let np = ndarray.py().import("numpy")?;
    if !ndarray.is_instance(&np.getattr("ndarray")?)? {
        return Err(PyTypeError::new_err(format!(
            "expected np.ndarray (got {})",
            ndarray.get_type().name()?
        )));
    }
    Ok(TensorOut(convert::from_array_interface(ndarray, true)?))
}

fn make(
    args: &Bound<'_, PyTuple>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    f: impl FnOnce(&[usize], DType) -> ferrograd::Result<Tensor> + Send,
) -> PyResult<TensorOut> {
    check_device(device)?;
    let dims = shape_args(args)?;
    let shape = sizes(&dims)?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or_else(default_dtype);
    let n: usize = shape.iter().product();
    let t = nogil(args.py(), n, || f(&shape, dt)).py()?;
    finish(t, requires_grad)
}

#[pyfunction]
#[pyo3(signature = (*size, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
pub fn zeros(
    size: &Bound<'_, PyTuple>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<TensorOut> {
    let _ = (out, layout);
    make(size, dtype, device, requires_grad, Tensor::try_zeros)
}

#[pyfunction]
#[pyo3(signature = (*size, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
pub fn ones(
    size: &Bound<'_, PyTuple>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<TensorOut> {
    let _ = (out, layout);
    make(size, dtype, device, requires_grad, Tensor::try_ones)
}

#[pyfunction]
#[pyo3(signature = (*size, out = None, dtype = None, layout = None, device = None, requires_grad = false, pin_memory = false, memory_format = None))]
#[allow(clippy::too_many_arguments)]
pub fn empty(
    size: &Bound<'_, PyTuple>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    pin_memory: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let _ = (out, layout, pin_memory, memory_format);
    make(size, dtype, device, requires_grad, Tensor::try_empty)
}

/// The dtype `full` infers from its fill value: bool, int64 or the default
/// float.
fn fill_dtype(v: Scalar) -> DType {
    match v {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::Int64,
        Scalar::Float(_) => default_dtype(),
    }
}

fn fill_value(v: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if let Some(s) = convert::scalar(v)? {
        return Ok(s);
    }
    if let Ok(t) = v.cast::<PyTensor>() {
        if t.get().t.numel() == 1 {
            return t.get().t.item().py();
        }
    }
    Err(PyTypeError::new_err(format!(
        "fill_value must be a number, got {}",
        v.get_type().name()?
    )))
}

#[pyfunction]
#[pyo3(signature = (size, fill_value, *, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
pub fn full(
    size: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<TensorOut> {
    let _ = (out, layout);
    check_device(device)?;
    let v = self::fill_value(fill_value)?;
    let shape = sizes(&convert::int_list(size, "size")?)?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or(fill_dtype(v));
    let n: usize = shape.iter().product();
    let t = nogil(size.py(), n, || Tensor::try_full(&shape, v, dt)).py()?;
    finish(t, requires_grad)
}

fn like(
    input: &PyTensor,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    f: impl FnOnce(&[usize], DType) -> ferrograd::Result<Tensor>,
) -> PyResult<TensorOut> {
    check_device(device)?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or(input.t.dtype());
    finish(f(input.t.shape(), dt).py()?, requires_grad)
}

#[pyfunction]
#[pyo3(signature = (input, *, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None))]
pub fn zeros_like(
    input: PyRef<'_, PyTensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let _ = (layout, memory_format);
    like(&input, dtype, device, requires_grad, Tensor::try_zeros)
}

#[pyfunction]
#[pyo3(signature = (input, *, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None))]
pub fn ones_like(
    input: PyRef<'_, PyTensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let _ = (layout, memory_format);
    like(&input, dtype, device, requires_grad, Tensor::try_ones)
}

#[pyfunction]
#[pyo3(signature = (input, *, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None))]
pub fn empty_like(
    input: PyRef<'_, PyTensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let _ = (layout, memory_format);
    like(&input, dtype, device, requires_grad, Tensor::try_empty)
}

#[pyfunction]
#[pyo3(signature = (input, fill_value, *, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None))]
#[allow(clippy::too_many_arguments)]
pub fn full_like(
    input: PyRef<'_, PyTensor>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let _ = (layout, memory_format);
    let v = self::fill_value(fill_value)?;
    like(&input, dtype, device, requires_grad, |s, d| {
        Tensor::try_full(s, v, d)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tensor, m)?)?;
    m.add_function(wrap_pyfunction!(as_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(full_like, m)?)?;
    Ok(())
}
