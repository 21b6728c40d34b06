//! Joining tensors: `cat`, `stack`, `hstack`, `vstack` and `dstack`.

use crate::convert::type_name;
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::Tensor;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PySequence;

/// Tensors from a sequence argument (cat/stack).
pub(crate) fn tensor_list(obj: &Bound<'_, PyAny>, op: &str) -> PyResult<Vec<Tensor>> {
    if obj.cast::<PyTensor>().is_ok() {
        return Err(PyTypeError::new_err(format!(
            "{op}(): argument 'tensors' must be tuple of Tensors, not Tensor"
        )));
    }
    let seq = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}(): argument 'tensors' must be tuple of Tensors, not {}",
            type_name(obj)
        ))
    })?;
    let mut out = Vec::with_capacity(seq.len()?);
    for (i, item) in seq.try_iter()?.enumerate() {
        let item = item?;
        match item.cast::<PyTensor>() {
            Ok(t) => out.push(t.get().tensor()),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "expected Tensor as element {i} in argument 0, but got {}",
                    type_name(&item)
                )))
            }
        }
    }
    Ok(out)
}

fn total(ts: &[Tensor]) -> usize {
    ts.iter().map(|t| t.numel()).sum()
}

/// Concatenates tensors along an existing dimension.
///
/// All tensors must have the same shape except along ``dim``; their dtypes
/// are promoted to a common one. One-dimensional empty tensors (shape
/// ``(0,)``) are skipped, as in torch. Differentiable with respect to every
/// input.
///
/// Args:
///     tensors (sequence of Tensors): the tensors to join.
///     dim (int): the dimension to join along. Default: 0.
///
/// Example:
///     >>> a = ferrograd.tensor([[1, 2]])
///     >>> b = ferrograd.tensor([[3, 4]])
///     >>> ferrograd.cat([a, b])
///     tensor([[1, 2],
///             [3, 4]])
///     >>> ferrograd.cat([a, b], dim=1)
///     tensor([[1, 2, 3, 4]])
#[pyfunction]
#[pyo3(signature = (tensors, dim = 0))]
fn cat(py: Python<'_>, tensors: &Bound<'_, PyAny>, dim: isize) -> PyResult<TensorOut> {
    let ts = tensor_list(tensors, "cat")?;
    Ok(nogil(py, total(&ts), || Tensor::cat(&ts, dim)).py()?.into())
}

/// Joins tensors of the same shape along a new dimension.
///
/// The result has one more dimension than the inputs, inserted at ``dim``;
/// ``stack(ts, dim)`` equals ``cat([t.unsqueeze(dim) for t in ts], dim)``.
///
/// Args:
///     tensors (sequence of Tensors): the tensors, all of the same shape.
///     dim (int): where the new dimension goes (``0`` to ``ndim``). Default: 0.
///
/// Example:
///     >>> a = ferrograd.tensor([1.0, 2.0, 3.0])
///     >>> b = ferrograd.tensor([4.0, 5.0, 6.0])
///     >>> ferrograd.stack([a, b])
///     tensor([[1., 2., 3.],
///             [4., 5., 6.]])
///     >>> ferrograd.stack([a, b], dim=1)
///     tensor([[1., 4.],
///             [2., 5.],
///             [3., 6.]])
#[pyfunction]
#[pyo3(signature = (tensors, dim = 0))]
fn stack(py: Python<'_>, tensors: &Bound<'_, PyAny>, dim: isize) -> PyResult<TensorOut> {
    let ts = tensor_list(tensors, "stack")?;
    Ok(nogil(py, total(&ts), || Tensor::stack(&ts, dim))
        .py()?
        .into())
}

/// Concatenates tensors horizontally: along dimension 1, or along dimension 0
/// for 1-D tensors.
///
/// Args:
///     tensors (sequence of Tensors): the tensors to join.
///
/// Example:
///     >>> ferrograd.hstack([ferrograd.tensor([1, 2]), ferrograd.tensor([3])])
///     tensor([1, 2, 3])
///     >>> ferrograd.hstack([ferrograd.ones(2, 1), ferrograd.zeros(2, 2)])
///     tensor([[1., 0., 0.],
///             [1., 0., 0.]])
#[pyfunction]
fn hstack(py: Python<'_>, tensors: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let ts = tensor_list(tensors, "hstack")?;
    Ok(nogil(py, total(&ts), || Tensor::hstack(&ts)).py()?.into())
}

/// Concatenates tensors vertically, along dimension 0, after turning 1-D
/// tensors of length ``n`` into rows of shape ``(1, n)``.
///
/// Args:
///     tensors (sequence of Tensors): the tensors to join.
///
/// Example:
///     >>> ferrograd.vstack([ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4])])
///     tensor([[1, 2],
///             [3, 4]])
#[pyfunction]
fn vstack(py: Python<'_>, tensors: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let ts = tensor_list(tensors, "vstack")?;
    Ok(nogil(py, total(&ts), || Tensor::vstack(&ts)).py()?.into())
}

/// Concatenates tensors depth-wise, along dimension 2, after making every
/// input at least 3-D (a 1-D tensor of length ``n`` becomes ``(1, n, 1)``, a
/// 2-D one ``(m, n)`` becomes ``(m, n, 1)``).
///
/// Args:
///     tensors (sequence of Tensors): the tensors to join.
///
/// Example:
///     >>> ferrograd.dstack([ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4])])
///     tensor([[[1, 3],
///              [2, 4]]])
#[pyfunction]
fn dstack(py: Python<'_>, tensors: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let ts = tensor_list(tensors, "dstack")?;
    Ok(nogil(py, total(&ts), || Tensor::dstack(&ts)).py()?.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cat, m)?)?;
    m.add_function(wrap_pyfunction!(stack, m)?)?;
    m.add_function(wrap_pyfunction!(hstack, m)?)?;
    m.add_function(wrap_pyfunction!(vstack, m)?)?;
    m.add_function(wrap_pyfunction!(dstack, m)?)?;
    Ok(())
}
