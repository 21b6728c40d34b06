//! Sorting and selection: the Tensor methods `sort`, `argsort`, `msort`,
//! `topk` and `kthvalue` (their module forms are these methods).

use crate::decomp::named;
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, wrap_any, PyTensor, TensorOut};
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

/// `median`/`nanmedian`: a 0-dim tensor without `dim`, else the named
/// tuple `(values, indices)`.
fn median_method(
    py: Python<'_>,
    t: &Tensor,
    dim: Option<isize>,
    keepdim: bool,
    ignore_nan: bool,
) -> PyResult<Py<PyAny>> {
    static MEDIAN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static NANMEDIAN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    match dim {
        None => {
            let r = nogil(py, work(t), || {
                if ignore_nan {
                    t.nanmedian_all()
                } else {
                    t.median_all()
                }
            })
            .py()?;
            wrap_any(py, r)
        }
        Some(d) => {
            let (v, i) = nogil(py, work(t), || {
                if ignore_nan {
                    t.nanmedian_dim(d, keepdim)
                } else {
                    t.median_dim(d, keepdim)
                }
            })
            .py()?;
            if ignore_nan {
                named(py, &NANMEDIAN, "nanmedian", [v, i])
            } else {
                named(py, &MEDIAN, "median", [v, i])
            }
        }
    }
}

#[pymethods]
impl PyTensor {
    /// The lower median: of all elements without ``dim`` (a 0-dim tensor),
    /// else along ``dim`` as the named tuple ``(values, indices)``. A NaN
    /// makes the median NaN. See :func:`ferrograd.median`.
    #[pyo3(signature = (dim = None, keepdim = false))]
    fn median(&self, py: Python<'_>, dim: Option<isize>, keepdim: bool) -> PyResult<Py<PyAny>> {
        median_method(py, &self.tensor(), dim, keepdim, false)
    }

    /// :meth:`median` of the elements that are not NaN. See
    /// :func:`ferrograd.nanmedian`.
    #[pyo3(signature = (dim = None, keepdim = false))]
    fn nanmedian(&self, py: Python<'_>, dim: Option<isize>, keepdim: bool) -> PyResult<Py<PyAny>> {
        median_method(py, &self.tensor(), dim, keepdim, true)
    }
}
