//! The `_core` functions behind the composite `ferrograd.linalg` functions:
//! `vecdot`, `cross`, `matrix_power`, `multi_dot`, `vander` and `cond`.

use crate::decomp::cubic;
use crate::errors::IntoPyResult;
use crate::joining::tensor_list;
use crate::linalg::tensor_only;
use crate::reduce::matrix_ord;
use crate::tensor::{nogil, TensorOut};
use ferrograd::Tensor;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(name = "_linalg_vecdot", signature = (x, y, dim))]
fn linalg_vecdot(x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, dim: isize) -> PyResult<TensorOut> {
    let x = tensor_only(x, "linalg_vecdot", "x")?;
    let y = tensor_only(y, "linalg_vecdot", "y")?;
    Ok(x.linalg_vecdot(&y, dim).py()?.into())
}

#[pyfunction]
#[pyo3(name = "_linalg_cross", signature = (a, b, dim))]
fn linalg_cross(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, dim: isize) -> PyResult<TensorOut> {
    let a = tensor_only(a, "linalg_cross", "input")?;
    let b = tensor_only(b, "linalg_cross", "other")?;
    Ok(a.linalg_cross(&b, dim).py()?.into())
}

#[pyfunction]
#[pyo3(name = "_linalg_matrix_power", signature = (A, n))]
#[allow(non_snake_case)]
fn linalg_matrix_power(py: Python<'_>, A: &Bound<'_, PyAny>, n: i64) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_matrix_power", "input")?;
    let work = cubic(&a).saturating_mul(64 - n.unsigned_abs().leading_zeros() as usize);
    Ok(nogil(py, work, || a.linalg_matrix_power(n)).py()?.into())
}

#[pyfunction]
#[pyo3(name = "_linalg_multi_dot", signature = (tensors))]
fn linalg_multi_dot(py: Python<'_>, tensors: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let ts = tensor_list(tensors, "linalg_multi_dot")?;
    let work = ts.iter().map(cubic).sum();
    Ok(nogil(py, work, || Tensor::linalg_multi_dot(&ts))
        .py()?
        .into())
}

#[pyfunction]
#[pyo3(name = "_linalg_vander", signature = (x, N))]
#[allow(non_snake_case)]
fn linalg_vander(x: &Bound<'_, PyAny>, N: Option<i64>) -> PyResult<TensorOut> {
    let x = tensor_only(x, "linalg_vander", "x")?;
    let n = N.map(|n| usize::try_from(n).unwrap_or(0));
    Ok(x.linalg_vander(n).py()?.into())
}

#[pyfunction]
#[pyo3(name = "_linalg_cond", signature = (A, p))]
#[allow(non_snake_case)]
fn linalg_cond(
    py: Python<'_>,
    A: &Bound<'_, PyAny>,
    p: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_cond", "A")?;
    let p = p.map(matrix_ord).transpose()?;
    Ok(nogil(py, cubic(&a), || a.linalg_cond(p)).py()?.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linalg_vecdot, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_cross, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_matrix_power, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_multi_dot, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_vander, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_cond, m)?)?;
    Ok(())
}
