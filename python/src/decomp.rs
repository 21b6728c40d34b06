//! Cholesky factorization and triangular solves: the `_core` functions
//! behind `ferrograd.linalg.cholesky_ex`/`solve_triangular`, and the legacy
//! Tensor methods `cholesky`, `cholesky_solve`, `cholesky_inverse` and
//! `triangular_solve`.

use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::tensor::{nogil, py_helper, PyTensor, TensorOut};
use ferrograd::Tensor;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

/// Work of an `n x n` factorization of every matrix of `t`.
pub(crate) fn cubic(t: &Tensor) -> usize {
    t.numel()
        .saturating_mul(t.shape().last().copied().unwrap_or(1))
}

/// `ferrograd.return_types.<name>` holding `items`.
pub(crate) fn named<const N: usize>(
    py: Python<'_>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
    items: [Tensor; N],
) -> PyResult<Py<PyAny>> {
    let cls = py_helper(py, cell, "ferrograd.return_types", name)?;
    let tuple = PyTuple::new(py, items.map(TensorOut))?;
    Ok(cls.call1((tuple,))?.unbind())
}

/// `linalg.cholesky_ex(A, upper)`: `(L, info)`.
#[pyfunction]
#[pyo3(name = "_linalg_cholesky_ex", signature = (A, upper))]
#[allow(non_snake_case)]
fn linalg_cholesky_ex(py: Python<'_>, A: &Bound<'_, PyAny>, upper: bool) -> PyResult<Py<PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let a = tensor_only(A, "linalg_cholesky_ex", "A")?;
    let (l, info) = nogil(py, cubic(&a), || a.linalg_cholesky_ex(upper)).py()?;
    named(py, &CELL, "linalg_cholesky_ex", [l, info])
}

/// `linalg.cholesky(A, upper)`.
#[pyfunction]
#[pyo3(name = "_linalg_cholesky", signature = (A, upper))]
#[allow(non_snake_case)]
fn linalg_cholesky(py: Python<'_>, A: &Bound<'_, PyAny>, upper: bool) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_cholesky", "A")?;
    Ok(nogil(py, cubic(&a), || a.linalg_cholesky(upper))
        .py()?
        .into())
}

/// `linalg.solve_triangular(A, B, upper, left, unitriangular)`, with the
/// three flags in that order.
#[pyfunction]
#[pyo3(name = "_linalg_solve_triangular", signature = (A, B, flags))]
#[allow(non_snake_case)]
fn linalg_solve_triangular(
    py: Python<'_>,
    A: &Bound<'_, PyAny>,
    B: &Bound<'_, PyAny>,
    flags: (bool, bool, bool),
) -> PyResult<TensorOut> {
    let (upper, left, unitriangular) = flags;
    let a = tensor_only(A, "linalg_solve_triangular", "A")?;
    let b = tensor_only(B, "linalg_solve_triangular", "B")?;
    let work = cubic(&a).max(
        b.numel()
            .saturating_mul(a.shape().last().copied().unwrap_or(1)),
    );
    Ok(nogil(py, work, || {
        a.linalg_solve_triangular(&b, upper, left, unitriangular)
    })
    .py()?
    .into())
}

#[pymethods]
impl PyTensor {
    /// The Cholesky factor of this Hermitian positive-definite matrix (or
    /// batch of them): ``L`` with ``A = L L^H``, or with ``upper=True``
    /// ``U`` with ``A = U^H U``.
    ///
    /// Deprecated in torch in favour of :func:`ferrograd.linalg.cholesky`,
    /// which this calls (with a warning). Raises
    /// :class:`ferrograd.linalg.LinAlgError` for a matrix that is not
    /// positive definite.
    ///
    /// Args:
    ///     upper (bool): return the upper factor.
    ///
    /// Example:
    ///     >>> import warnings; warnings.simplefilter("ignore")
    ///     >>> ferrograd.tensor([[4.0, 2.0], [2.0, 5.0]]).cholesky()
    ///     tensor([[2., 0.],
    ///             [1., 2.]])
    #[pyo3(signature = (upper = false))]
    fn cholesky(&self, py: Python<'_>, upper: bool) -> PyResult<TensorOut> {
        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
        PyErr::warn(
            py,
            &category,
            c"torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH",
            1,
        )?;
        let a = self.tensor();
        Ok(nogil(py, cubic(&a), || a.linalg_cholesky(upper))
            .py()?
            .into())
    }

    /// Solves ``A X = self`` for ``A = L L^H`` given its Cholesky factor
    /// ``input2`` (``U^H U`` with ``upper=True``). See
    /// :func:`ferrograd.cholesky_solve`.
    ///
    /// Args:
    ///     input2 (Tensor): the Cholesky factor.
    ///     upper (bool): ``input2`` is the upper factor.
    #[pyo3(signature = (input2, upper = false))]
    fn cholesky_solve(
        &self,
        py: Python<'_>,
        input2: PyRef<'_, PyTensor>,
        upper: bool,
    ) -> PyResult<TensorOut> {
        let (b, l) = (self.tensor(), input2.tensor());
        Ok(
            nogil(py, cubic(&l).max(b.numel()), || b.cholesky_solve(&l, upper))
                .py()?
                .into(),
        )
    }

    /// The inverse of ``A = L L^H`` given its Cholesky factor ``L``
    /// (this tensor; ``U^H U`` with ``upper=True``). See
    /// :func:`ferrograd.cholesky_inverse`.
    ///
    /// Args:
    ///     upper (bool): this tensor is the upper factor.
    #[pyo3(signature = (upper = false))]
    fn cholesky_inverse(&self, py: Python<'_>, upper: bool) -> PyResult<TensorOut> {
        let l = self.tensor();
        Ok(nogil(py, cubic(&l), || l.cholesky_inverse(upper))
            .py()?
            .into())
    }

    /// Solves ``A X = self`` for a triangular ``A`` and returns
    /// ``(solution, cloned_coefficient)``. See
    /// :func:`ferrograd.triangular_solve`.
    ///
    /// Args:
    ///     A (Tensor): the triangular coefficient matrices.
    ///     upper (bool): ``A`` is upper triangular.
    ///     transpose (bool): solve ``A^T X = self``.
    ///     unitriangular (bool): take ``A``'s diagonal as ones.
    #[pyo3(signature = (A, upper = true, transpose = false, unitriangular = false))]
    #[allow(non_snake_case)]
    fn triangular_solve(
        &self,
        A: &Bound<'_, PyAny>,
        upper: bool,
        transpose: bool,
        unitriangular: bool,
    ) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let py = A.py();
        let (b, a) = (self.tensor(), tensor_only(A, "triangular_solve", "A")?);
        let (x, c) = nogil(py, cubic(&a).max(b.numel()), || {
            b.triangular_solve(&a, upper, transpose, unitriangular)
        })
        .py()?;
        named(py, &CELL, "triangular_solve", [x, c])
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linalg_cholesky_ex, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_solve_triangular, m)?)?;
    m.add(
        "LinAlgError",
        m.py().get_type::<crate::errors::LinAlgError>(),
    )?;
    Ok(())
}
