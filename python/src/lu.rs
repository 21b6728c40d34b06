//! LU factorization: the `_core` functions behind `ferrograd.linalg`'s
//! `lu_factor`, `lu_factor_ex`, `lu`, `lu_solve` and `ferrograd.lu_unpack`,
//! and the Tensor methods `lu` and `lu_solve`.

use crate::decomp::{cubic, named};
use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::tensor::{nogil, py_helper, PyTensor, TensorOut};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// `linalg.lu_factor_ex(A, pivot)`: `(LU, pivots, info)`.
#[pyfunction]
#[pyo3(name = "_linalg_lu_factor_ex", signature = (A, pivot))]
#[allow(non_snake_case)]
fn linalg_lu_factor_ex(py: Python<'_>, A: &Bound<'_, PyAny>, pivot: bool) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_lu_factor_ex", "A")?;
    let (lu, p, info) = nogil(py, cubic(&a), || a.linalg_lu_factor_ex(pivot)).py()?;
    named(py, &CELL, "linalg_lu_factor_ex", [lu, p, info])
}

/// `linalg.lu_factor(A, pivot)`: `(LU, pivots)`, raising for a zero pivot.
#[pyfunction]
#[pyo3(name = "_linalg_lu_factor", signature = (A, pivot))]
#[allow(non_snake_case)]
fn linalg_lu_factor(py: Python<'_>, A: &Bound<'_, PyAny>, pivot: bool) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_lu_factor", "A")?;
    let (lu, p) = nogil(py, cubic(&a), || a.linalg_lu_factor(pivot)).py()?;
    named(py, &CELL, "linalg_lu_factor", [lu, p])
}

/// `linalg.lu(A, pivot)`: `(P, L, U)`.
#[pyfunction]
#[pyo3(name = "_linalg_lu", signature = (A, pivot))]
#[allow(non_snake_case)]
fn linalg_lu(py: Python<'_>, A: &Bound<'_, PyAny>, pivot: bool) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_lu", "A")?;
    let (p, l, u) = nogil(py, cubic(&a), || a.linalg_lu(pivot)).py()?;
    named(py, &CELL, "linalg_lu", [p, l, u])
}

/// `lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)`: `(P, L, U)`.
#[pyfunction]
#[pyo3(name = "_lu_unpack", signature = (LU_data, LU_pivots, unpack_data, unpack_pivots))]
#[allow(non_snake_case)]
fn lu_unpack(
    py: Python<'_>,
    LU_data: &Bound<'_, PyAny>,
    LU_pivots: &Bound<'_, PyAny>,
    unpack_data: bool,
    unpack_pivots: bool,
) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let lu = tensor_only(LU_data, "lu_unpack", "LU_data")?;
    let pivots = tensor_only(LU_pivots, "lu_unpack", "LU_pivots")?;
    let (p, l, u) = nogil(py, lu.numel(), || {
        lu.lu_unpack(&pivots, unpack_data, unpack_pivots)
    })
    .py()?;
    named(py, &CELL, "lu_unpack", [p, l, u])
}

/// `linalg.lu_solve(LU, pivots, B, (left, adjoint))`.
#[pyfunction]
#[pyo3(name = "_linalg_lu_solve", signature = (LU, pivots, B, flags))]
#[allow(non_snake_case)]
fn linalg_lu_solve(
    py: Python<'_>,
    LU: &Bound<'_, PyAny>,
    pivots: &Bound<'_, PyAny>,
    B: &Bound<'_, PyAny>,
    flags: (bool, bool),
) -> PyResult<TensorOut> {
    let (left, adjoint) = flags;
    let lu = tensor_only(LU, "linalg_lu_solve", "LU")?;
    let pivots = tensor_only(pivots, "linalg_lu_solve", "pivots")?;
    let b = tensor_only(B, "linalg_lu_solve", "B")?;
    Ok(nogil(py, cubic(&lu), || {
        lu.linalg_lu_solve(&pivots, &b, left, adjoint)
    })
    .py()?
    .into())
}

#[pymethods]
impl PyTensor {
    /// The deprecated ``lu(pivot=True, get_infos=False)``: the packed LU
    /// factorization ``(LU, pivots)`` of :func:`ferrograd.linalg.lu_factor`
    /// (with ``get_infos`` also ``info``); see :func:`ferrograd.lu`.
    ///
    /// Args:
    ///     pivot (bool): must be True.
    ///     get_infos (bool): also return ``info``.
    ///
    /// Example:
    ///     >>> import warnings
    ///     >>> with warnings.catch_warnings():
    ///     ...     warnings.simplefilter("ignore")
    ///     ...     LU, pivots = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]).lu()
    ///     >>> pivots
    ///     tensor([2, 2], dtype=ferrograd.int32)
    #[pyo3(signature = (pivot = true, get_infos = false))]
    fn lu(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        pivot: bool,
        get_infos: bool,
    ) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let f = py_helper(py, &CELL, "ferrograd._linalg_lu", "legacy_lu")?;
        Ok(f.call1((slf, pivot, get_infos))?.unbind())
    }
    /// The deprecated ``lu_solve(LU_data, LU_pivots)``: ``X`` with
    /// ``A X = self`` for ``A`` given by the factors of
    /// :func:`ferrograd.linalg.lu_factor` (use
    /// :func:`ferrograd.linalg.lu_solve`).
    ///
    /// Args:
    ///     LU_data (Tensor): the packed factors.
    ///     LU_pivots (Tensor): their pivots.
    ///
    /// Example:
    ///     >>> A = ferrograd.tensor([[2.0, 1.0], [1.0, 3.0]])
    ///     >>> LU, piv = ferrograd.linalg.lu_factor(A)
    ///     >>> ferrograd.tensor([[3.0], [4.0]]).lu_solve(LU, piv)
    ///     tensor([[1.],
    ///             [1.]])
    #[allow(non_snake_case)]
    fn lu_solve(
        &self,
        py: Python<'_>,
        LU_data: PyRef<'_, PyTensor>,
        LU_pivots: PyRef<'_, PyTensor>,
    ) -> PyResult<TensorOut> {
        let (b, lu, p) = (self.tensor(), LU_data.tensor(), LU_pivots.tensor());
        Ok(
            nogil(py, cubic(&lu), || lu.linalg_lu_solve(&p, &b, true, false))
                .py()?
                .into(),
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linalg_lu_factor_ex, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_lu_factor, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_lu, m)?)?;
    m.add_function(wrap_pyfunction!(lu_unpack, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_lu_solve, m)?)?;
    Ok(())
}
