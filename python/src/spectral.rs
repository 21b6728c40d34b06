//! QR, eigh, SVD and slogdet: the `_core` functions behind
//! `ferrograd.linalg.qr`, `eigh`, `eigvalsh`, `svd`, `svdvals` and
//! `slogdet`, and the Tensor methods `qr`, `svd`, `slogdet` and `logdet`.

use crate::decomp::{cubic, named};
use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::{QrMode, Tensor};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

fn qr_mode(mode: &str) -> PyResult<QrMode> {
    match mode {
        "reduced" => Ok(QrMode::Reduced),
        "complete" => Ok(QrMode::Complete),
        "r" => Ok(QrMode::R),
        _ => Err(PyRuntimeError::new_err(format!(
            "qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        ))),
    }
}

fn uplo(uplo: &str) -> PyResult<bool> {
    match uplo {
        "L" | "l" => Ok(false),
        "U" | "u" => Ok(true),
        _ => Err(PyRuntimeError::new_err(format!(
            "Expected UPLO argument to be 'L' or 'U', but got {uplo}"
        ))),
    }
}

/// `linalg.qr(A, mode)`: `(Q, R)`.
#[pyfunction]
#[pyo3(name = "_linalg_qr", signature = (A, mode))]
#[allow(non_snake_case)]
fn linalg_qr(py: Python<'_>, A: &Bound<'_, PyAny>, mode: &str) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let mode = qr_mode(mode)?;
    let a = tensor_only(A, "linalg_qr", "A")?;
    let (q, r) = nogil(py, cubic(&a), || a.linalg_qr(mode)).py()?;
    named(py, &CELL, "linalg_qr", [q, r])
}

/// `linalg.eigh(A, UPLO)`: `(eigenvalues, eigenvectors)`.
#[pyfunction]
#[pyo3(name = "_linalg_eigh", signature = (A, UPLO))]
#[allow(non_snake_case)]
fn linalg_eigh(py: Python<'_>, A: &Bound<'_, PyAny>, UPLO: &str) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let upper = uplo(UPLO)?;
    let a = tensor_only(A, "linalg_eigh", "A")?;
    let (l, v) = nogil(py, cubic(&a), || a.linalg_eigh(upper)).py()?;
    named(py, &CELL, "linalg_eigh", [l, v])
}

/// `linalg.eigvalsh(A, UPLO)`.
#[pyfunction]
#[pyo3(name = "_linalg_eigvalsh", signature = (A, UPLO))]
#[allow(non_snake_case)]
fn linalg_eigvalsh(py: Python<'_>, A: &Bound<'_, PyAny>, UPLO: &str) -> PyResult<TensorOut> {
    let upper = uplo(UPLO)?;
    let a = tensor_only(A, "linalg_eigvalsh", "A")?;
    Ok(nogil(py, cubic(&a), || a.linalg_eigvalsh(upper))
        .py()?
        .into())
}

/// `linalg.svd(A, full_matrices)`: `(U, S, Vh)`.
#[pyfunction]
#[pyo3(name = "_linalg_svd", signature = (A, full_matrices))]
#[allow(non_snake_case)]
fn linalg_svd(py: Python<'_>, A: &Bound<'_, PyAny>, full_matrices: bool) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_svd", "A")?;
    let (u, s, vh) = nogil(py, cubic(&a), || a.linalg_svd(full_matrices)).py()?;
    named(py, &CELL, "linalg_svd", [u, s, vh])
}

/// `linalg.svdvals(A)`.
#[pyfunction]
#[pyo3(name = "_linalg_svdvals", signature = (A))]
#[allow(non_snake_case)]
fn linalg_svdvals(py: Python<'_>, A: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_svdvals", "A")?;
    Ok(nogil(py, cubic(&a), || a.linalg_svdvals()).py()?.into())
}

/// `linalg.slogdet(A)`: `(sign, logabsdet)`.
#[pyfunction]
#[pyo3(name = "_linalg_slogdet", signature = (A))]
#[allow(non_snake_case)]
fn linalg_slogdet(py: Python<'_>, A: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_slogdet", "A")?;
    let (sign, logabs) = nogil(py, cubic(&a), || a.linalg_slogdet()).py()?;
    named(py, &CELL, "linalg_slogdet", [sign, logabs])
}

#[pymethods]
impl PyTensor {
    /// The sign (phase) and log of the absolute determinant of this square
    /// matrix (or batch): the named tuple ``(sign, logabsdet)``. See
    /// :func:`ferrograd.linalg.slogdet`.
    fn slogdet(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let a = self.tensor();
        let (sign, logabs) = nogil(py, cubic(&a), || a.linalg_slogdet()).py()?;
        named(py, &CELL, "slogdet", [sign, logabs])
    }

    /// ``log(det(self))`` of this square matrix (or batch): NaN for a real
    /// matrix with a negative determinant, ``-inf`` for a singular one.
    /// Differentiable.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([[2.0, 0.0], [0.0, 3.0]]).logdet()
    ///     tensor(1.7918)
    fn logdet(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let a = self.tensor();
        Ok(nogil(py, cubic(&a), || a.logdet()).py()?.into())
    }

    /// The QR decomposition of this matrix (or batch): the named tuple
    /// ``(Q, R)``, reduced with ``some=True`` and complete otherwise. See
    /// :func:`ferrograd.linalg.qr`.
    ///
    /// Args:
    ///     some (bool): the reduced decomposition (``Q`` ``m x k``).
    #[pyo3(signature = (some = true))]
    fn qr(&self, py: Python<'_>, some: bool) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let a = self.tensor();
        let mode = if some {
            QrMode::Reduced
        } else {
            QrMode::Complete
        };
        let (q, r) = nogil(py, cubic(&a), || a.linalg_qr(mode)).py()?;
        named(py, &CELL, "qr", [q, r])
    }

    /// The singular value decomposition of this matrix (or batch): the
    /// named tuple ``(U, S, V)`` with ``A = U diag(S) V^H`` (note ``V``,
    /// not ``V^H``); thin with ``some=True``. With ``compute_uv=False``,
    /// ``U`` and ``V`` are zero-filled ``m x m`` and ``n x n`` matrices.
    /// See :func:`ferrograd.linalg.svd`.
    ///
    /// Args:
    ///     some (bool): the thin decomposition.
    ///     compute_uv (bool): compute the singular vectors.
    #[pyo3(signature = (some = true, compute_uv = true))]
    fn svd(&self, py: Python<'_>, some: bool, compute_uv: bool) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let a = self.tensor();
        let (u, s, v) = nogil(py, cubic(&a), || -> ferrograd::Result<_> {
            if compute_uv {
                let (u, s, vh) = a.linalg_svd(!some)?;
                return Ok((u, s, vh.adjoint()?));
            }
            let s = a.linalg_svdvals()?;
            let nd = a.ndim();
            let square = |k: usize| {
                let mut shape = a.shape()[..nd - 2].to_vec();
                shape.extend([k, k]);
                Tensor::try_zeros(&shape, a.dtype())
            };
            Ok((square(a.shape()[nd - 2])?, s, square(a.shape()[nd - 1])?))
        })
        .py()?;
        named(py, &CELL, "svd", [u, s, v])
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linalg_qr, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eigh, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eigvalsh, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_svd, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_svdvals, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_slogdet, m)?)?;
    Ok(())
}
