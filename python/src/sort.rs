//! Sorting and selection: the Tensor methods `sort`, `argsort`, `msort`,
//! `topk` and `kthvalue` (their module forms are these methods).

use crate::decomp::named;
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::Tensor;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Sorting costs about `n log n` per element over the sorted dim.
fn work(t: &Tensor) -> usize {
    t.numel().saturating_mul(8)
}

#[pymethods]
impl PyTensor {
    /// Sorts the elements along ``dim``, ascending unless ``descending``.
    ///
    /// Returns the named tuple ``(values, indices)``: ``indices`` are the
    /// int64 positions along ``dim`` the values came from. NaN sorts above
    /// every number; equal elements keep their order (the sort is always
    /// stable, so ``stable=True`` changes nothing). The gradient of each
    /// value goes back to its position. See :func:`ferrograd.sort`.
    #[pyo3(signature = (dim = -1, descending = false, *, stable = false))]
    fn sort(
        &self,
        py: Python<'_>,
        dim: isize,
        descending: bool,
        stable: bool,
    ) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let _ = stable;
        let t = &self.tensor();
        let (v, i) = nogil(py, work(t), || t.sort(dim, descending)).py()?;
        named(py, &CELL, "sort", [v, i])
    }

    /// The int64 indices that sort the elements along ``dim`` (``sort``'s
    /// ``indices``). See :func:`ferrograd.argsort`.
    #[pyo3(signature = (dim = -1, descending = false, *, stable = false))]
    fn argsort(
        &self,
        py: Python<'_>,
        dim: isize,
        descending: bool,
        stable: bool,
    ) -> PyResult<TensorOut> {
        let _ = stable;
        let t = &self.tensor();
        Ok(nogil(py, work(t), || t.argsort(dim, descending))
            .py()?
            .into())
    }

    /// The elements sorted along dim 0, ascending. See :func:`ferrograd.msort`.
    fn msort(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, work(t), || t.msort()).py()?.into())
    }

    /// The ``k`` largest elements along ``dim`` (smallest unless
    /// ``largest``), as the named tuple ``(values, indices)`` in sorted
    /// order. See :func:`ferrograd.topk`.
    #[pyo3(signature = (k, dim = -1, largest = true, sorted = true))]
    fn topk(
        &self,
        py: Python<'_>,
        k: i64,
        dim: isize,
        largest: bool,
        sorted: bool,
    ) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        // Unsorted results may come in any order: sorted ones are such an order.
        let _ = sorted;
        let t = &self.tensor();
        let (v, i) = nogil(py, work(t), || t.topk(k, dim, largest)).py()?;
        named(py, &CELL, "topk", [v, i])
    }

    /// The ``k``-th smallest element (counting from 1) along ``dim`` and
    /// its index, as the named tuple ``(values, indices)``. See
    /// :func:`ferrograd.kthvalue`.
    #[pyo3(signature = (k, dim = -1, keepdim = false))]
    fn kthvalue(&self, py: Python<'_>, k: i64, dim: isize, keepdim: bool) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let t = &self.tensor();
        let (v, i) = nogil(py, work(t), || t.kthvalue(k, dim, keepdim)).py()?;
        named(py, &CELL, "kthvalue", [v, i])
    }
}
