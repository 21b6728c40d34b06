//! Shape and indexing methods of `Tensor`: `__getitem__`/`__setitem__`,
//! cat/stack, flip/roll/repeat, tril/triu/diag, gather/scatter and the
//! index_* / masked_* family.

use crate::convert::{data_to_tensor, from_array_interface, int_list, scalar, shape_args, sizes};
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, nogil_ok, wrap, PyTensor, TensorOut};
use ferrograd::ops::TensorIndex;
use ferrograd::{DType, Scalar, Tensor};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PySequence, PySlice, PyTuple};

use crate::convert::type_name;

/// A slice bound: `None`, or an int (huge values clamp).
fn slice_bound(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().tensor();
        if t.numel() == 1 && !t.dtype().is_floating_point() {
            return Ok(Some(t.item().py()?.to_i64()));
        }
    }
    match obj.extract::<i64>() {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            if obj.is_instance_of::<PyInt>() {
                let positive = obj.gt(0)?;
                Ok(Some(if positive { i64::MAX } else { i64::MIN }))
            } else {
                Err(PyTypeError::new_err(format!(
                    "slice indices must be integers or None or have an __index__ method (got {}): {e}",
                    type_name(obj)
                )))
            }
        }
    }
}

fn tensor_index(t: Tensor) -> PyResult<TensorIndex> {
    match t.dtype() {
        DType::Float32 | DType::Float64 => Err(PyIndexError::new_err(
            "tensors used as indices must be long, int, byte or bool tensors",
        )),
        DType::Int32 | DType::Int64 if t.ndim() == 0 => {
            Ok(TensorIndex::Int(t.item().py()?.to_i64()))
        }
        _ => Ok(TensorIndex::Tensor(t)),
    }
}

/// A nested list/tuple used as an index tensor (int64, or bool for bools).
fn sequence_index(obj: &Bound<'_, PyAny>) -> PyResult<TensorIndex> {
    if obj.len()? == 0 {
        return Ok(TensorIndex::Tensor(Tensor::zeros(&[0], DType::Int64)));
    }
    tensor_index(data_to_tensor(obj, None)?)
}

/// One component of an index expression.
fn index_item(obj: &Bound<'_, PyAny>) -> PyResult<TensorIndex> {
    if obj.is_instance_of::<PyBool>() {
        let b: bool = obj.extract()?;
        return Ok(TensorIndex::Tensor(Tensor::scalar_tensor(b, DType::Bool)));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i64>().map(TensorIndex::Int).map_err(|_| {
            PyIndexError::new_err(format!(
                "index {} is out of bounds",
                obj.str().map(|s| s.to_string()).unwrap_or_default()
            ))
        });
    }
    if let Ok(s) = obj.cast::<PySlice>() {
        let step = slice_bound(&s.getattr("step")?)?.unwrap_or(1);
        return Ok(TensorIndex::Slice {
            start: slice_bound(&s.getattr("start")?)?,
            stop: slice_bound(&s.getattr("stop")?)?,
            step,
        });
    }
    if obj.is_none() {
        return Ok(TensorIndex::NewAxis);
    }
    if obj.is_instance_of::<PyEllipsis>() {
        return Ok(TensorIndex::Ellipsis);
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        return tensor_index(t.get().tensor());
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return sequence_index(obj);
    }
    if obj.hasattr("__array_interface__")? {
        return tensor_index(from_array_interface(obj, false)?);
    }
    if obj.hasattr("__index__")? {
        return Ok(TensorIndex::Int(obj.call_method0("__index__")?.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got {})",
        type_name(obj)
    )))
}

/// torch treats a short list holding slices, None, Ellipsis, sequences or
/// tensors like a tuple of indices (`t[[0, slice(None)]]`).
fn list_is_tuple(list: &Bound<'_, PyList>) -> bool {
    list.len() < 32
        && list.iter().any(|o| {
            o.is_none()
                || o.is_instance_of::<PySlice>()
                || o.is_instance_of::<PyEllipsis>()
                || o.is_instance_of::<PyList>()
                || o.is_instance_of::<PyTuple>()
                || o.cast::<PyTensor>().is_ok()
        })
}

/// Converts the object given to `t[...]` into index components.
fn parse_index(obj: &Bound<'_, PyAny>) -> PyResult<Vec<TensorIndex>> {
    if let Ok(tup) = obj.cast::<PyTuple>() {
        return tup.iter().map(|o| index_item(&o)).collect();
    }
    if let Ok(list) = obj.cast::<PyList>() {
        if list_is_tuple(list) {
            return list.iter().map(|o| index_item(&o)).collect();
        }
    }
    Ok(vec![index_item(obj)?])
}

/// A setitem value as a tensor of (at most) this dtype's values.
fn value_tensor(obj: &Bound<'_, PyAny>, dtype: DType) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(t.get().tensor());
    }
    if let Some(s) = scalar(obj)? {
        return Ok(Tensor::scalar(s));
    }
    data_to_tensor(obj, Some(dtype))
}

/// A fill value given as a tensor that requires grad (it then gets a
/// gradient, so it must not be turned into a number).
fn grad_value(obj: &Bound<'_, PyAny>) -> Option<Tensor> {
    let t = obj.cast::<PyTensor>().ok()?.get().tensor();
    (t.requires_grad() || ferrograd::autograd::fw_grad(&t).is_some()).then_some(t)
}

/// A fill value: a Python number or a 0-dim tensor.
fn fill_scalar(op: &str, obj: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if let Some(s) = scalar(obj)? {
        return Ok(s);
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().tensor();
        if t.ndim() != 0 {
            return Err(PyRuntimeError::new_err(format!(
                "{op} only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                t.ndim()
            )));
        }
        return t.item().py();
    }
    if obj.hasattr("__array_interface__")? {
        let t = from_array_interface(obj, false)?;
        if t.ndim() == 0 {
            return t.item().py();
        }
    }
    Err(PyTypeError::new_err(format!(
        "{op}(): value must be a number or a 0-dim tensor, not {}",
        type_name(obj)
    )))
}

/// Work estimate for the GIL decision: basic indexing only makes a view.
fn advanced_work(t: &Tensor, idx: &[TensorIndex]) -> usize {
    if idx.iter().any(|i| matches!(i, TensorIndex::Tensor(_))) {
        t.numel()
    } else {
        0
    }
}

/// Dims from `f(0, 1)`, `f((0, 1))` or a `dims=` keyword.
fn dims_or_kw(args: &Bound<'_, PyTuple>, kw: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<isize>> {
    match kw {
        Some(d) if args.is_empty() => int_list(d, "dims"),
        Some(_) => Err(PyTypeError::new_err(
            "dims given both positionally and by keyword",
        )),
        None => shape_args(args),
    }
}

fn usize_sizes(v: &[isize]) -> PyResult<Vec<usize>> {
    sizes(v)
}

#[pymethods]
impl PyTensor {
    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        // Fast path: one int.
        if index.is_instance_of::<PyInt>() && !index.is_instance_of::<PyBool>() {
            if let Ok(i) = index.extract::<isize>() {
                if t.ndim() == 0 {
                    return Err(PyIndexError::new_err(
                        "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number",
                    ));
                }
                return Ok(t.select(0, i).py()?.into());
            }
        }
        let idx = parse_index(index)?;
        Ok(nogil(py, advanced_work(t, &idx), || t.index(&idx))
            .py()?
            .into())
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        index: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let t = &self.tensor();
        // Fast path: one int or slice, and a Python number.
        if let Some(s) = scalar(value)? {
            let simple = (index.is_instance_of::<PyInt>() && !index.is_instance_of::<PyBool>())
                || index.is_instance_of::<PySlice>();
            // A tensor that requires grad takes the recorded index_put_ path.
            if simple && !t.requires_grad() && ferrograd::autograd::fw_grad(t).is_none() {
                let view = t.index(&[index_item(index)?]).py()?;
                return nogil(py, view.numel(), || view.fill_(s)).py();
            }
        }
        let idx = parse_index(index)?;
        let v = value_tensor(value, t.dtype())?;
        let work = advanced_work(t, &idx).max(v.numel());
        nogil(py, work, || t.index_put_(&idx, &v, false)).py()
    }

    /// In-place version of :meth:`Tensor.index_put`.
    ///
    /// ``indices`` is a tuple of index tensors, one per leading dim; with
    /// ``accumulate=True`` repeated indices add up instead of overwriting.
    #[pyo3(signature = (indices, values, accumulate = false))]
    fn index_put_<'py>(
        slf: &Bound<'py, Self>,
        indices: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
        accumulate: bool,
    ) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().tensor();
        let idx = put_indices(indices)?;
        let v = value_tensor(values, t.dtype())?;
        nogil(slf.py(), t.numel(), || t.index_put_(&idx, &v, accumulate)).py()?;
        Ok(slf.clone())
    }

    /// A copy with ``values`` written at ``indices`` (a tuple of index tensors), or added with ``accumulate=True``.
    ///
    /// See :func:`ferrograd.index_put`.
    #[pyo3(signature = (indices, values, accumulate = false))]
    fn index_put(
        &self,
        py: Python<'_>,
        indices: &Bound<'_, PyAny>,
        values: &Bound<'_, PyAny>,
        accumulate: bool,
    ) -> PyResult<TensorOut> {
        let t = &self.tensor();
        let idx = put_indices(indices)?;
        let v = value_tensor(values, t.dtype())?;
        Ok(nogil(py, t.numel(), || t.index_put(&idx, &v, accumulate))
            .py()?
            .into())
    }

    /// A copy with the order of elements reversed along ``dims``.
    ///
    /// See :func:`ferrograd.flip`.
    #[pyo3(signature = (*args, dims = None))]
    fn flip(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        dims: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let d = dims_or_kw(args, dims)?;
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.flip(&d)).py()?.into())
    }
    /// A copy with the columns (dim 1) in reverse order.
    ///
    /// See :func:`ferrograd.fliplr`.
    fn fliplr(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().fliplr().py()?.into())
    }
    /// A copy with the rows (dim 0) in reverse order.
    ///
    /// See :func:`ferrograd.flipud`.
    fn flipud(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().flipud().py()?.into())
    }

    /// A copy with elements shifted circularly by ``shifts`` along ``dims``.
    ///
    /// See :func:`ferrograd.roll`.
    #[pyo3(signature = (shifts, dims = None))]
    fn roll(
        &self,
        py: Python<'_>,
        shifts: &Bound<'_, PyAny>,
        dims: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let s: Vec<i64> = int_list(shifts, "shifts")?
            .into_iter()
            .map(|v| v as i64)
            .collect();
        let d = match dims {
            Some(d) if !d.is_none() => int_list(d, "dims")?,
            _ => vec![],
        };
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.roll(&s, &d)).py()?.into())
    }

    /// A copy holding ``self`` tiled ``sizes[i]`` times along each dim.
    ///
    /// ``sizes`` has at least as many entries as ``self`` has dims; extra
    /// leading entries add new dims. Unlike :meth:`expand`, the result owns its
    /// memory. :meth:`tile` is the same with fewer entries allowed.
    ///
    /// Args:
    ///     *sizes (int or tuple of ints): the number of copies along each dim.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).repeat(2, 2)
    ///     tensor([[1, 2, 1, 2],
    ///             [1, 2, 1, 2]])
    #[pyo3(signature = (*sizes))]
    fn repeat(&self, py: Python<'_>, sizes: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        let reps = usize_sizes(&shape_args(sizes)?)?;
        let t = &self.tensor();
        let work = reps.iter().fold(t.numel(), |a, &r| a.saturating_mul(r));
        Ok(nogil(py, work, || t.repeat(&reps)).py()?.into())
    }

    /// A copy with ``self`` repeated ``dims[i]`` times along each dim.
    ///
    /// See :func:`ferrograd.tile`.
    #[pyo3(signature = (*dims))]
    fn tile(&self, py: Python<'_>, dims: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        let reps = usize_sizes(&shape_args(dims)?)?;
        let t = &self.tensor();
        let work = reps.iter().fold(t.numel(), |a, &r| a.saturating_mul(r));
        Ok(nogil(py, work, || t.tile(&reps)).py()?.into())
    }

    /// A copy with the elements above diagonal ``diagonal`` set to zero.
    ///
    /// See :func:`ferrograd.tril`.
    #[pyo3(signature = (diagonal = 0))]
    fn tril(&self, py: Python<'_>, diagonal: i64) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.tril(diagonal)).py()?.into())
    }
    /// A copy with the elements below diagonal ``diagonal`` set to zero.
    ///
    /// See :func:`ferrograd.triu`.
    #[pyo3(signature = (diagonal = 0))]
    fn triu(&self, py: Python<'_>, diagonal: i64) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.triu(diagonal)).py()?.into())
    }
    /// In-place version of :meth:`Tensor.tril`.
    #[pyo3(signature = (diagonal = 0))]
    fn tril_<'py>(slf: &Bound<'py, Self>, diagonal: i64) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().tensor();
        nogil(slf.py(), t.numel(), || t.tril_(diagonal)).py()?;
        Ok(slf.clone())
    }
    /// In-place version of :meth:`Tensor.triu`.
    #[pyo3(signature = (diagonal = 0))]
    fn triu_<'py>(slf: &Bound<'py, Self>, diagonal: i64) -> PyResult<Bound<'py, Self>> {
        let t = &slf.get().tensor();
        nogil(slf.py(), t.numel(), || t.triu_(diagonal)).py()?;
        Ok(slf.clone())
    }
    /// The diagonal of a matrix as a vector, or a square matrix with a vector on its diagonal.
    ///
    /// See :func:`ferrograd.diag`.
    #[pyo3(signature = (diagonal = 0))]
    fn diag(&self, diagonal: i64) -> PyResult<TensorOut> {
        Ok(self.tensor().diag(diagonal).py()?.into())
    }
    /// Matrices with the last dim of ``self`` on their diagonals (dims ``dim1`` and ``dim2``).
    ///
    /// See :func:`ferrograd.diag_embed`.
    #[pyo3(signature = (offset = 0, dim1 = -2, dim2 = -1))]
    fn diag_embed(
        &self,
        py: Python<'_>,
        offset: i64,
        dim1: isize,
        dim2: isize,
    ) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.diag_embed(offset, dim1, dim2))
            .py()?
            .into())
    }

    /// Each element repeated ``repeats`` times, consecutively, along ``dim``.
    ///
    /// See :func:`ferrograd.repeat_interleave`.
    #[pyo3(signature = (repeats, dim = None, *, output_size = None))]
    fn repeat_interleave(
        &self,
        py: Python<'_>,
        repeats: &Bound<'_, PyAny>,
        dim: Option<isize>,
        output_size: Option<usize>,
    ) -> PyResult<TensorOut> {
        let reps = match repeats.cast::<PyTensor>() {
            Ok(r) => r.get().tensor(),
            Err(_) => {
                if repeats.is_instance_of::<PyBool>() || !repeats.is_instance_of::<PyInt>() {
                    return Err(PyTypeError::new_err(format!(
                        "repeat_interleave(): repeats must be an int or a Tensor, not {}",
                        type_name(repeats)
                    )));
                }
                Tensor::scalar_tensor(repeats.extract::<i64>()?, DType::Int64)
            }
        };
        let t = &self.tensor();
        let out = nogil(py, t.numel(), || t.repeat_interleave(&reps, dim)).py()?;
        check_output_size(&out, dim, output_size)?;
        Ok(out.into())
    }

    /// The entries at ``index`` along ``dim``, copied.
    ///
    /// See :func:`ferrograd.index_select`.
    fn index_select(
        &self,
        py: Python<'_>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
    ) -> PyResult<TensorOut> {
        let t = &self.tensor();
        let i = &index.tensor();
        Ok(nogil(py, t.numel(), || t.index_select(dim, i)).py()?.into())
    }

    /// Values gathered along ``dim`` at positions ``index``: ``out[i][j] = self[index[i][j]][j]`` for ``dim=0``.
    ///
    /// See :func:`ferrograd.gather`.
    #[pyo3(signature = (dim, index, *, sparse_grad = false))]
    fn gather(
        &self,
        py: Python<'_>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        sparse_grad: bool,
    ) -> PyResult<TensorOut> {
        let _ = sparse_grad;
        let t = &self.tensor();
        let i = &index.tensor();
        Ok(nogil(py, i.numel(), || t.gather(dim, i)).py()?.into())
    }

    /// A copy with ``src`` (or ``value``) written along ``dim`` at positions ``index``.
    ///
    /// See :func:`ferrograd.scatter`.
    #[pyo3(signature = (dim, index, src = None, *, value = None))]
    fn scatter(
        &self,
        py: Python<'_>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        src: Option<&Bound<'_, PyAny>>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let (t, i) = (&self.tensor(), &index.tensor());
        let out = match (src, value) {
            (Some(s), None) if s.cast::<PyTensor>().is_ok() => {
                let st = &s.cast::<PyTensor>()?.get().tensor();
                nogil(py, i.numel(), || t.scatter(dim, i, st))
            }
            (Some(v), None) | (None, Some(v)) => {
                let v = fill_scalar("scatter", v)?;
                nogil(py, i.numel(), || t.scatter_value(dim, i, v))
            }
            _ => {
                return Err(PyTypeError::new_err(
                    "scatter() expects exactly one of 'src' (a Tensor) or 'value' (a number)",
                ))
            }
        };
        Ok(out.py()?.into())
    }

    /// In-place version of :meth:`Tensor.scatter`.
    #[pyo3(signature = (dim, index, src = None, *, value = None))]
    fn scatter_<'py>(
        slf: &Bound<'py, Self>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        src: Option<&Bound<'_, PyAny>>,
        value: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        scatter_into(
            slf.py(),
            &slf.get().tensor(),
            dim,
            &index.tensor(),
            src,
            value,
        )?;
        Ok(slf.clone())
    }

    /// A copy with ``src`` added along ``dim`` at positions ``index`` (repeated indices add up).
    ///
    /// See :func:`ferrograd.scatter_add`.
    fn scatter_add(
        &self,
        py: Python<'_>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        src: PyRef<'_, PyTensor>,
    ) -> PyResult<TensorOut> {
        let (t, i, s) = (&self.tensor(), &index.tensor(), &src.tensor());
        Ok(nogil(py, i.numel(), || t.scatter_add(dim, i, s))
            .py()?
            .into())
    }

    /// In-place version of :meth:`Tensor.scatter_add`.
    fn scatter_add_<'py>(
        slf: &Bound<'py, Self>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        src: PyRef<'_, PyTensor>,
    ) -> PyResult<Bound<'py, Self>> {
        let (t, i, s) = (&slf.get().tensor(), &index.tensor(), &src.tensor());
        nogil(slf.py(), i.numel(), || t.scatter_add_(dim, i, s)).py()?;
        Ok(slf.clone())
    }

    /// A copy with ``alpha * source`` added at the entries ``index`` of dim ``dim``.
    ///
    /// See :func:`ferrograd.index_add`.
    #[pyo3(signature = (dim, index, source, *, alpha = None))]
    fn index_add(
        &self,
        py: Python<'_>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let a = alpha_scalar(alpha)?;
        let (t, i, s) = (&self.tensor(), &index.tensor(), &source.tensor());
        Ok(nogil(py, s.numel(), || t.index_add(dim, i, s, a))
            .py()?
            .into())
    }

    /// In-place version of :meth:`Tensor.index_add`.
    #[pyo3(signature = (dim, index, source, *, alpha = None))]
    fn index_add_<'py>(
        slf: &Bound<'py, Self>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let a = alpha_scalar(alpha)?;
        let (t, i, s) = (&slf.get().tensor(), &index.tensor(), &source.tensor());
        nogil(slf.py(), s.numel(), || t.index_add_(dim, i, s, a)).py()?;
        Ok(slf.clone())
    }

    /// A copy with the entries ``index`` of dim ``dim`` replaced by ``source``.
    ///
    /// See :func:`ferrograd.index_copy`.
    fn index_copy(
        &self,
        py: Python<'_>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
    ) -> PyResult<TensorOut> {
        let (t, i, s) = (&self.tensor(), &index.tensor(), &source.tensor());
        Ok(nogil(py, s.numel(), || t.index_copy(dim, i, s))
            .py()?
            .into())
    }

    /// In-place version of :meth:`Tensor.index_copy`.
    fn index_copy_<'py>(
        slf: &Bound<'py, Self>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
    ) -> PyResult<Bound<'py, Self>> {
        let (t, i, s) = (&slf.get().tensor(), &index.tensor(), &source.tensor());
        nogil(slf.py(), s.numel(), || t.index_copy_(dim, i, s)).py()?;
        Ok(slf.clone())
    }

    /// A copy with the entries ``index`` of dim ``dim`` filled with ``value``.
    ///
    /// See :func:`ferrograd.index_fill`.
    fn index_fill(
        &self,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        let v = fill_scalar("index_fill_", value)?;
        Ok(self
            .tensor()
            .index_fill(dim, &index.tensor(), v)
            .py()?
            .into())
    }

    /// In-place version of :meth:`Tensor.index_fill`.
    fn index_fill_<'py>(
        slf: &Bound<'py, Self>,
        dim: isize,
        index: PyRef<'_, PyTensor>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let v = fill_scalar("index_fill_", value)?;
        slf.get()
            .tensor()
            .index_fill_(dim, &index.tensor(), v)
            .py()?;
        Ok(slf.clone())
    }

    /// A copy with ``value`` where ``mask`` (broadcast to ``self``) is True.
    ///
    /// See :func:`ferrograd.masked_fill`.
    fn masked_fill(
        &self,
        py: Python<'_>,
        mask: PyRef<'_, PyTensor>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        let (t, m) = (&self.tensor(), &mask.tensor());
        if let Some(vt) = grad_value(value) {
            return Ok(nogil(py, t.numel(), || t.masked_fill_tensor(m, &vt))
                .py()?
                .into());
        }
        let v = fill_scalar("masked_fill_", value)?;
        Ok(nogil(py, t.numel(), || t.masked_fill(m, v)).py()?.into())
    }

    /// In-place version of :meth:`Tensor.masked_fill`.
    fn masked_fill_<'py>(
        slf: &Bound<'py, Self>,
        mask: PyRef<'_, PyTensor>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let (t, m) = (&slf.get().tensor(), &mask.tensor());
        if let Some(vt) = grad_value(value) {
            nogil(slf.py(), t.numel(), || t.masked_fill_tensor_(m, &vt)).py()?;
            return Ok(slf.clone());
        }
        let v = fill_scalar("masked_fill_", value)?;
        nogil(slf.py(), t.numel(), || t.masked_fill_(m, v)).py()?;
        Ok(slf.clone())
    }

    /// The elements where ``mask`` is True, as a 1-D tensor.
    ///
    /// See :func:`ferrograd.masked_select`.
    fn masked_select(&self, py: Python<'_>, mask: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        let (t, m) = (&self.tensor(), &mask.tensor());
        Ok(nogil(py, t.numel(), || t.masked_select(m)).py()?.into())
    }

    /// The elements at the flat positions ``index`` (as if ``self`` were 1-D).
    ///
    /// See :func:`ferrograd.take`.
    fn take(&self, py: Python<'_>, index: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        let (t, i) = (&self.tensor(), &index.tensor());
        Ok(nogil(py, i.numel(), || t.take(i)).py()?.into())
    }

    /// Writes ``source`` at the flat positions ``index`` in place (as if ``self`` were 1-D).
    ///
    /// With ``accumulate=True`` the values are added, and repeated positions add
    /// up. Returns ``self``.
    ///
    /// Args:
    ///     index (Tensor): int64 positions into the flattened tensor.
    ///     source (Tensor): the values, one per position.
    ///     accumulate (bool): add instead of overwrite. Default: False.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(2, 2)
    ///     >>> t.put_(ferrograd.tensor([1, 1]), ferrograd.tensor([1.0, 2.0]), accumulate=True)
    ///     tensor([[0., 3.],
    ///             [0., 0.]])
    #[pyo3(signature = (index, source, accumulate = false))]
    fn put_<'py>(
        slf: &Bound<'py, Self>,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
        accumulate: bool,
    ) -> PyResult<Bound<'py, Self>> {
        slf.get()
            .tensor()
            .put_(&index.tensor(), &source.tensor(), accumulate)
            .py()?;
        Ok(slf.clone())
    }

    /// Out-of-place version of :meth:`Tensor.put_`: a copy with ``source`` at the flat positions ``index``.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(2, 2)
    ///     >>> t.put(ferrograd.tensor([0, 3]), ferrograd.tensor([1.0, 2.0]))
    ///     tensor([[1., 0.],
    ///             [0., 2.]])
    #[pyo3(signature = (index, source, accumulate = false))]
    fn put(
        &self,
        index: PyRef<'_, PyTensor>,
        source: PyRef<'_, PyTensor>,
        accumulate: bool,
    ) -> PyResult<TensorOut> {
        Ok(self
            .tensor()
            .put(&index.tensor(), &source.tensor(), accumulate)
            .py()?
            .into())
    }

    /// Indices of the nonzero elements: an ``(n, ndim)`` tensor, or one tensor per dim with ``as_tuple=True``.
    ///
    /// See :func:`ferrograd.nonzero`.
    #[pyo3(signature = (*, as_tuple = false))]
    fn nonzero<'py>(&self, py: Python<'py>, as_tuple: bool) -> PyResult<Bound<'py, PyAny>> {
        let t = &self.tensor();
        if as_tuple {
            let parts = nogil_ok(py, t.numel(), || t.nonzero_tuple())?;
            return Ok(PyTuple::new(py, parts.into_iter().map(TensorOut))?.into_any());
        }
        let out = nogil_ok(py, t.numel(), || t.nonzero())?;
        Ok(wrap(py, out)?.into_any())
    }

    /// Indices of the nonzero elements, as an ``(n, ndim)`` tensor.
    ///
    /// See :func:`ferrograd.argwhere`.
    fn argwhere(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let t = &self.tensor();
        Ok(nogil_ok(py, t.numel(), || t.argwhere())?.into())
    }
}

/// `index_put_`'s indices: a tuple/list of tensors (or index-likes).
fn put_indices(obj: &Bound<'_, PyAny>) -> PyResult<Vec<TensorIndex>> {
    let seq = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!(
            "index_put_(): argument 'indices' must be tuple of Tensors, not {}",
            type_name(obj)
        ))
    })?;
    let mut out = Vec::new();
    for item in seq.try_iter()? {
        let item = item?;
        match item.cast::<PyTensor>() {
            Ok(t) => {
                let t = t.get().tensor();
                if t.dtype().is_floating_point() {
                    return Err(PyIndexError::new_err(
                        "tensors used as indices must be long, int, byte or bool tensors",
                    ));
                }
                out.push(TensorIndex::Tensor(t));
            }
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "index_put_(): expected Tensor as element of indices, but got {}",
                    type_name(&item)
                )))
            }
        }
    }
    Ok(out)
}

fn alpha_scalar(alpha: Option<&Bound<'_, PyAny>>) -> PyResult<Scalar> {
    match alpha {
        None => Ok(Scalar::Int(1)),
        Some(a) => scalar(a)?.ok_or_else(|| PyTypeError::new_err("alpha must be a number")),
    }
}

fn scatter_into(
    py: Python<'_>,
    out: &Tensor,
    dim: isize,
    index: &Tensor,
    src: Option<&Bound<'_, PyAny>>,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    match (src, value) {
        (Some(s), None) => {
            if let Ok(st) = s.cast::<PyTensor>() {
                let st = &st.get().tensor();
                return nogil(py, index.numel(), || out.scatter_(dim, index, st)).py();
            }
            let v = fill_scalar("scatter", s)?;
            nogil(py, index.numel(), || out.scatter_value_(dim, index, v)).py()
        }
        (None, Some(v)) => {
            let v = fill_scalar("scatter", v)?;
            nogil(py, index.numel(), || out.scatter_value_(dim, index, v)).py()
        }
        _ => Err(PyTypeError::new_err(
            "scatter() expects exactly one of 'src' (a Tensor) or 'value' (a number)",
        )),
    }
}

fn check_output_size(out: &Tensor, dim: Option<isize>, output_size: Option<usize>) -> PyResult<()> {
    if let Some(n) = output_size {
        let got = match dim {
            Some(d) if out.ndim() > 0 => out.size(d).py()?,
            _ => out.numel(),
        };
        if got != n {
            return Err(PyRuntimeError::new_err(format!(
                "repeat_interleave: allocated size does not match required size (output_size={n}, required {got})"
            )));
        }
    }
    Ok(())
}

/// repeat_interleave(input, repeats, dim=None, *, output_size=None) -> Tensor
///
/// Repeats each element of ``input`` ``repeats`` times, keeping the copies
/// next to each other (``[1, 2]`` twice gives ``[1, 1, 2, 2]``, unlike
/// :meth:`Tensor.repeat`).
///
/// Without ``dim`` the input is flattened first. With a tensor of
/// ``repeats``, element (or slice) ``i`` along ``dim`` is repeated
/// ``repeats[i]`` times. Called with a single 1-D integer tensor ``r``
/// (``repeat_interleave(r)``), it returns ``arange(len(r))`` with element
/// ``i`` repeated ``r[i]`` times.
///
/// Args:
///     input (Tensor): the tensor to repeat.
///     repeats (int or Tensor): how many times to repeat each element, one
///         count for all or one per element along ``dim``.
///     dim (int, optional): the dimension to repeat along. Default: None
///         (the flattened input).
///
/// Keyword args:
///     output_size (int, optional): the total size of the result along
///         ``dim``; checked against the computed size when given.
///
/// Example:
///     >>> ferrograd.repeat_interleave(ferrograd.tensor([1, 2]), 2)
///     tensor([1, 1, 2, 2])
///     >>> ferrograd.repeat_interleave(ferrograd.tensor([[1, 2], [3, 4]]), ferrograd.tensor([1, 2]), dim=0)
///     tensor([[1, 2],
///             [3, 4],
///             [3, 4]])
///     >>> ferrograd.repeat_interleave(ferrograd.tensor([2, 1]))
///     tensor([0, 0, 1])
#[pyfunction]
#[pyo3(signature = (input, repeats = None, dim = None, *, output_size = None))]
fn repeat_interleave(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    repeats: Option<&Bound<'_, PyAny>>,
    dim: Option<isize>,
    output_size: Option<usize>,
) -> PyResult<TensorOut> {
    match repeats {
        Some(r) => input.repeat_interleave(py, r, dim, output_size),
        None => {
            let reps = &input.tensor();
            if reps.ndim() > 1 {
                return Err(PyRuntimeError::new_err(
                    "repeats must be 0-dim or 1-dim tensor",
                ));
            }
            let n = reps.numel() as i64;
            let base = Tensor::from_vec((0..n).collect::<Vec<i64>>());
            let out = base.repeat_interleave(reps, Some(0)).py()?;
            check_output_size(&out, None, output_size)?;
            Ok(out.into())
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(repeat_interleave, m)?)?;
    Ok(())
}
