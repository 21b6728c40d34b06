//! Searching and counting: the Tensor methods `mode`, `cummax`, `cummin`,
//! `logcumsumexp`, `bincount` and `histc`, and the functions behind
//! `ferrograd.searchsorted`, `bucketize`, `unique` and
//! `unique_consecutive` (written in Python over `_searchsorted` and
//! `_unique`).

use crate::convert::tensor_arg as arg;
use crate::decomp::named;
use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::Tensor;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Sorting-like work: about `n log n` per element.
fn work(t: &Tensor) -> usize {
    t.numel().saturating_mul(8)
}

#[pymethods]
impl PyTensor {
    /// The most frequent value along ``dim`` (the smallest of equally
    /// frequent ones) and its last position, as the named tuple
    /// ``(values, indices)``. See :func:`ferrograd.mode`.
    #[pyo3(signature = (dim = -1, keepdim = false))]
    fn mode(&self, py: Python<'_>, dim: isize, keepdim: bool) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let t = &self.tensor();
        let (v, i) = nogil(py, work(t), || t.mode(dim, keepdim)).py()?;
        named(py, &CELL, "mode", [v, i])
    }

    /// The running maximum along ``dim`` and its positions, as the named
    /// tuple ``(values, indices)``. See :func:`ferrograd.cummax`.
    fn cummax(&self, py: Python<'_>, dim: isize) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let t = &self.tensor();
        let (v, i) = nogil(py, t.numel(), || t.cummax(dim)).py()?;
        named(py, &CELL, "cummax", [v, i])
    }

    /// The running minimum along ``dim`` and its positions, as the named
    /// tuple ``(values, indices)``. See :func:`ferrograd.cummin`.
    fn cummin(&self, py: Python<'_>, dim: isize) -> PyResult<Py<PyAny>> {
        static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let t = &self.tensor();
        let (v, i) = nogil(py, t.numel(), || t.cummin(dim)).py()?;
        named(py, &CELL, "cummin", [v, i])
    }

    /// ``log(cumsum(exp(self)))`` along ``dim``, without overflow.
    /// See :func:`ferrograd.logcumsumexp`.
    fn logcumsumexp(&self, py: Python<'_>, dim: isize) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.logcumsumexp(dim)).py()?.into())
    }

    /// How often each value of a 1-D tensor of non-negative integers
    /// occurs (or the sum of its ``weights``). See :func:`ferrograd.bincount`.
    #[pyo3(signature = (weights = None, minlength = 0))]
    fn bincount(
        &self,
        py: Python<'_>,
        weights: Option<&Bound<'_, PyAny>>,
        minlength: i64,
    ) -> PyResult<TensorOut> {
        let w = match weights {
            Some(w) if !w.is_none() => Some(tensor_only(w, "bincount", "weights")?),
            _ => None,
        };
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.bincount(w.as_ref(), minlength))
            .py()?
            .into())
    }

    /// A histogram of the elements in ``bins`` equal bins over
    /// ``[min, max]``. See :func:`ferrograd.histc`.
    #[pyo3(signature = (bins = 100, min = 0.0, max = 0.0))]
    fn histc(&self, py: Python<'_>, bins: i64, min: f64, max: f64) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.histc(bins, min, max))
            .py()?
            .into())
    }
}

/// `searchsorted(sorted_sequence, values, right, out_int32, sorter)`.
#[pyfunction]
#[pyo3(signature = (sorted_sequence, values, right, out_int32, sorter = None))]
fn _searchsorted(
    py: Python<'_>,
    sorted_sequence: &Bound<'_, PyAny>,
    values: &Bound<'_, PyAny>,
    right: bool,
    out_int32: bool,
    sorter: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let seq = tensor_only(sorted_sequence, "searchsorted", "sorted_sequence")?;
    let vals = arg(values, "input")?;
    let sorter = match sorter {
        Some(s) if !s.is_none() => Some(tensor_only(s, "searchsorted", "sorter")?),
        _ => None,
    };
    Ok(nogil(py, work(&vals), || {
        seq.searchsorted(&vals, right, out_int32, sorter.as_ref())
    })
    .py()?
    .into())
}

/// `(values, inverse, counts)` of `unique` (`consecutive`: of
/// `unique_consecutive`), over the flattened input or the slices along
/// `dim`.
#[pyfunction]
#[pyo3(signature = (input, dim, consecutive))]
fn _unique(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    dim: Option<isize>,
    consecutive: bool,
) -> PyResult<(TensorOut, TensorOut, TensorOut)> {
    let x = tensor_only(input, "unique", "input")?;
    let (v, i, c) = nogil(py, work(&x), || {
        if consecutive {
            x.unique_consecutive(dim)
        } else {
            x.unique_all(dim)
        }
    })
    .py()?;
    Ok((v.into(), i.into(), c.into()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_searchsorted, m)?)?;
    m.add_function(wrap_pyfunction!(_unique, m)?)?;
    Ok(())
}
