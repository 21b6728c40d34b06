//! The `_core` functions behind `ferrograd.linalg.pinv`, `matrix_rank`,
//! `lstsq`, `matrix_exp`, `eig`, `eigvals`, `tensorinv`, `tensorsolve`,
//! `householder_product`, `ldl_factor_ex` and `ldl_solve`, and the Tensor
//! methods `pinverse`, `matrix_exp` and `orgqr`.

use crate::decomp::{cubic, named};
use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::{DType, Tensor};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// A Python argument.
type Arg<'py> = Bound<'py, PyAny>;

/// A tolerance argument (`atol`, `rtol`): a tensor, or a Python number as
/// a float64 scalar.
fn tolerance(obj: Option<&Bound<'_, PyAny>>, fname: &str, what: &str) -> PyResult<Option<Tensor>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Some(t.get().tensor()));
    }
    match obj.extract::<f64>() {
        Ok(x) if !obj.is_instance_of::<pyo3::types::PyBool>() => {
            Ok(Some(Tensor::scalar_tensor(x, DType::Float64)))
        }
        _ => Err(PyTypeError::new_err(format!(
            "{fname}(): argument '{what}' must be a float or a Tensor, not {}",
            obj.get_type().name()?
        ))),
    }
}

/// `linalg.pinv` (`which = "pinv"`) or `linalg.matrix_rank`: the two
/// functions that cut the singular values at `max(atol, rtol * σ_max)`.
#[pyfunction]
#[pyo3(name = "_linalg_cutoff", signature = (which, A, atol, rtol, hermitian))]
#[allow(non_snake_case)]
fn linalg_cutoff(
    py: Python<'_>,
    which: &str,
    A: &Bound<'_, PyAny>,
    atol: Option<&Bound<'_, PyAny>>,
    rtol: Option<&Bound<'_, PyAny>>,
    hermitian: bool,
) -> PyResult<TensorOut> {
    let fname = format!("linalg_{which}");
    let a = tensor_only(A, &fname, "input")?;
    let atol = tolerance(atol, &fname, "atol")?;
    let rtol = tolerance(rtol, &fname, "rtol")?;
    let (atol, rtol) = (atol.as_ref(), rtol.as_ref());
    Ok(nogil(py, cubic(&a), || match which {
        "pinv" => a.linalg_pinv(atol, rtol, hermitian),
        _ => a.linalg_matrix_rank(atol, rtol, hermitian),
    })
    .py()?
    .into())
}

#[pyfunction]
#[pyo3(name = "_linalg_lstsq", signature = (A, B, rcond, driver))]
#[allow(non_snake_case)]
fn linalg_lstsq(
    py: Python<'_>,
    A: &Bound<'_, PyAny>,
    B: &Bound<'_, PyAny>,
    rcond: Option<f64>,
    driver: Option<&str>,
) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_lstsq", "self")?;
    let b = tensor_only(B, "linalg_lstsq", "b")?;
    let (x, res, rank, s) = nogil(py, cubic(&a), || a.linalg_lstsq(&b, rcond, driver)).py()?;
    named(py, &CELL, "linalg_lstsq", [x, res, rank, s])
}

#[pyfunction]
#[pyo3(name = "_linalg_matrix_exp", signature = (A))]
#[allow(non_snake_case)]
fn linalg_matrix_exp(py: Python<'_>, A: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_matrix_exp", "input")?;
    Ok(
        nogil(py, cubic(&a).saturating_mul(8), || a.linalg_matrix_exp())
            .py()?
            .into(),
    )
}

#[pyfunction]
#[pyo3(name = "_linalg_eig", signature = (A))]
#[allow(non_snake_case)]
fn linalg_eig(py: Python<'_>, A: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_eig", "input")?;
    let (l, v) = nogil(py, cubic(&a), || a.linalg_eig()).py()?;
    named(py, &CELL, "linalg_eig", [l, v])
}

#[pyfunction]
#[pyo3(name = "_linalg_eigvals", signature = (A))]
#[allow(non_snake_case)]
fn linalg_eigvals(py: Python<'_>, A: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_eigvals", "input")?;
    Ok(nogil(py, cubic(&a), || a.linalg_eigvals()).py()?.into())
}

#[pyfunction]
#[pyo3(name = "_linalg_tensorinv", signature = (A, ind))]
#[allow(non_snake_case)]
fn linalg_tensorinv(py: Python<'_>, A: &Bound<'_, PyAny>, ind: i64) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_tensorinv", "input")?;
    Ok(nogil(py, a.numel(), || a.linalg_tensorinv(ind))
        .py()?
        .into())
}

#[pyfunction]
#[pyo3(name = "_linalg_tensorsolve", signature = (A, B, dims))]
#[allow(non_snake_case)]
fn linalg_tensorsolve(
    py: Python<'_>,
    A: &Arg,
    B: &Arg,
    dims: Option<Vec<isize>>,
) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_tensorsolve", "input")?;
    let b = tensor_only(B, "linalg_tensorsolve", "other")?;
    Ok(
        nogil(py, a.numel(), || a.linalg_tensorsolve(&b, dims.as_deref()))
            .py()?
            .into(),
    )
}

#[pyfunction]
#[pyo3(name = "_linalg_householder_product", signature = (A, tau))]
#[allow(non_snake_case)]
fn linalg_householder_product(
    py: Python<'_>,
    A: &Bound<'_, PyAny>,
    tau: &Bound<'_, PyAny>,
) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_householder_product", "input")?;
    let tau = tensor_only(tau, "linalg_householder_product", "tau")?;
    Ok(nogil(py, cubic(&a), || a.linalg_householder_product(&tau))
        .py()?
        .into())
}

#[pyfunction]
#[pyo3(name = "_linalg_ldl_factor_ex", signature = (A, hermitian))]
#[allow(non_snake_case)]
fn linalg_ldl_factor_ex(
    py: Python<'_>,
    A: &Bound<'_, PyAny>,
    hermitian: bool,
) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_ldl_factor_ex", "self")?;
    let (ld, piv, info) = nogil(py, cubic(&a), || a.linalg_ldl_factor_ex(hermitian)).py()?;
    named(py, &CELL, "linalg_ldl_factor_ex", [ld, piv, info])
}

#[pyfunction]
#[pyo3(name = "_linalg_ldl_solve", signature = (LD, pivots, B, hermitian))]
#[allow(non_snake_case)]
fn linalg_ldl_solve(
    py: Python<'_>,
    LD: &Arg,
    pivots: &Arg,
    B: &Arg,
    hermitian: bool,
) -> PyResult<TensorOut> {
    let ld = tensor_only(LD, "linalg_ldl_solve", "LD")?;
    let piv = tensor_only(pivots, "linalg_ldl_solve", "pivots")?;
    let b = tensor_only(B, "linalg_ldl_solve", "B")?;
    Ok(
        nogil(py, cubic(&ld), || ld.linalg_ldl_solve(&piv, &b, hermitian))
            .py()?
            .into(),
    )
}

#[pymethods]
impl PyTensor {
    /// `Tensor.pinverse(rcond)`: `linalg.pinv` with `rtol=rcond`.
    #[pyo3(signature = (rcond = 1e-15))]
    fn pinverse(&self, py: Python<'_>, rcond: f64) -> PyResult<TensorOut> {
        let a = self.tensor();
        let rtol = Tensor::scalar_tensor(rcond, DType::Float64);
        Ok(
            nogil(py, cubic(&a), || a.linalg_pinv(None, Some(&rtol), false))
                .py()?
                .into(),
        )
    }

    /// `Tensor.matrix_exp()`: `linalg.matrix_exp`.
    fn matrix_exp(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let a = self.tensor();
        Ok(
            nogil(py, cubic(&a).saturating_mul(8), || a.linalg_matrix_exp())
                .py()?
                .into(),
        )
    }

    /// `Tensor.orgqr(input2)`: `linalg.householder_product(self, input2)`.
    fn orgqr(&self, py: Python<'_>, input2: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let a = self.tensor();
        let tau = tensor_only(input2, "orgqr", "input2")?;
        Ok(nogil(py, cubic(&a), || a.linalg_householder_product(&tau))
            .py()?
            .into())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linalg_cutoff, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_lstsq, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_matrix_exp, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eig, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eigvals, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_tensorinv, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_tensorsolve, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_householder_product, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_ldl_factor_ex, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_ldl_solve, m)?)?;
    Ok(())
}
