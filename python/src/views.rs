//! View methods of `Tensor`: metadata-only reshapes, transposes, slices.

use crate::convert::{int_list, shape_args, sizes};
use crate::errors::IntoPyResult;
use crate::tensor::{PyTensor, TensorOut};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyTuple};

fn list<'py>(py: Python<'py>, ts: Vec<ferrograd::Tensor>) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, ts.into_iter().map(TensorOut))
}

/// Dims given as varargs ints or one sequence.
fn dims_args(args: &Bound<'_, PyTuple>) -> PyResult<Vec<isize>> {
    shape_args(args)
}

#[pymethods]
impl PyTensor {
    #[pyo3(signature = (*shape))]
    fn view(&self, shape: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        if shape.len() == 1 {
            let a = shape.get_item(0)?;
            if let Ok(d) = crate::dtype::parse_dtype(&a) {
                if d == self.t.dtype() {
                    return Ok(self.t.alias().py()?.into());
                }
                return Err(PyTypeError::new_err(format!(
                    "view(dtype) between different dtypes ({} -> {}) is not supported",
                    self.t.dtype(),
                    d
                )));
            }
        }
        Ok(self.t.view(&dims_args(shape)?).py()?.into())
    }
    fn view_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        let s: Vec<isize> = other.t.shape().iter().map(|&n| n as isize).collect();
        Ok(self.t.view(&s).py()?.into())
    }
    #[pyo3(signature = (*shape))]
    fn reshape(&self, shape: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        Ok(self.t.reshape(&dims_args(shape)?).py()?.into())
    }
    fn reshape_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        let s: Vec<isize> = other.t.shape().iter().map(|&n| n as isize).collect();
        Ok(self.t.reshape(&s).py()?.into())
    }
    #[pyo3(signature = (start_dim = 0, end_dim = -1))]
    fn flatten(&self, start_dim: isize, end_dim: isize) -> PyResult<TensorOut> {
        Ok(self.t.flatten(start_dim, end_dim).py()?.into())
    }
    fn ravel(&self) -> PyResult<TensorOut> {
        Ok(self.t.flatten(0, -1).py()?.into())
    }
    fn unflatten(&self, dim: isize, sizes: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        Ok(self
            .t
            .unflatten(dim, &int_list(sizes, "sizes")?)
            .py()?
            .into())
    }
    fn transpose(&self, dim0: isize, dim1: isize) -> PyResult<TensorOut> {
        Ok(self.t.transpose(dim0, dim1).py()?.into())
    }
    fn swapaxes(&self, axis0: isize, axis1: isize) -> PyResult<TensorOut> {
        Ok(self.t.transpose(axis0, axis1).py()?.into())
    }
    fn swapdims(&self, dim0: isize, dim1: isize) -> PyResult<TensorOut> {
        Ok(self.t.transpose(dim0, dim1).py()?.into())
    }
    fn t(&self) -> PyResult<TensorOut> {
        Ok(self.t.t().py()?.into())
    }
    #[getter(T)]
    fn get_t_all(&self) -> PyResult<TensorOut> {
        Ok(self.t.reversed_dims().py()?.into())
    }
    #[getter(mT)]
    fn get_mt(&self) -> PyResult<TensorOut> {
        Ok(self.t.mt().py()?.into())
    }
    fn adjoint(&self) -> PyResult<TensorOut> {
        Ok(self.t.adjoint().py()?.into())
    }
    #[getter(mH)]
    fn get_mh(&self) -> PyResult<TensorOut> {
        if self.t.ndim() < 2 {
            return Err(PyRuntimeError::new_err(format!(
                "tensor.mH is only supported on matrices or batches of matrices. Got {}-D tensor.",
                self.t.ndim()
            )));
        }
        self.adjoint()
    }
    /// `H`: the conjugate transpose of a matrix (the conjugate of a 0-D
    /// tensor).
    #[getter(H)]
    fn get_h(&self) -> PyResult<TensorOut> {
        match self.t.ndim() {
            0 => Ok(self.t.conj().py()?.into()),
            2 => self.adjoint(),
            d => {
                let hint = if d > 2 {
                    " For batches of matrices, consider using tensor.mH"
                } else {
                    ""
                };
                Err(PyRuntimeError::new_err(format!(
                    "tensor.H is only supported on matrices (2-D tensors). Got {d}-D tensor.{hint}"
                )))
            }
        }
    }
    #[pyo3(signature = (*dims))]
    fn permute(&self, dims: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        Ok(self.t.permute(&dims_args(dims)?).py()?.into())
    }
    fn movedim(
        &self,
        source: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        let s = int_list(source, "source")?;
        let d = int_list(destination, "destination")?;
        Ok(self.t.movedim(&s, &d).py()?.into())
    }
    fn moveaxis(
        &self,
        source: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        self.movedim(source, destination)
    }
    #[pyo3(signature = (*sizes))]
    fn expand(&self, sizes: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        Ok(self.t.expand(&dims_args(sizes)?).py()?.into())
    }
    fn expand_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        Ok(self.t.broadcast_to(other.t.shape()).py()?.into())
    }
    fn broadcast_to(&self, size: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let s: Vec<isize> = int_list(size, "size")?;
        Ok(self.t.expand(&s).py()?.into())
    }
    fn narrow(&self, dim: isize, start: isize, length: i64) -> PyResult<TensorOut> {
        let length = usize::try_from(length).map_err(|_| {
            pyo3::exceptions::PyRuntimeError::new_err(format!(
                "narrow(): length must be non-negative, got {length}"
            ))
        })?;
        Ok(self.t.narrow(dim, start, length).py()?.into())
    }
    fn select(&self, dim: isize, index: isize) -> PyResult<TensorOut> {
        Ok(self.t.select(dim, index).py()?.into())
    }
    #[pyo3(signature = (dim = None))]
    fn squeeze(&self, dim: Option<&Bound<'_, PyAny>>) -> PyResult<TensorOut> {
        let dims = dim.map(|d| int_list(d, "dim")).transpose()?;
        Ok(self.t.squeeze(dims.as_deref()).py()?.into())
    }
    fn unsqueeze(&self, dim: isize) -> PyResult<TensorOut> {
        Ok(self.t.unsqueeze(dim).py()?.into())
    }
    #[pyo3(signature = (offset = 0, dim1 = 0, dim2 = 1))]
    fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> PyResult<TensorOut> {
        Ok(self.t.diagonal(offset, dim1, dim2).py()?.into())
    }
    #[pyo3(signature = (size, stride, storage_offset = None))]
    fn as_strided(
        &self,
        size: &Bound<'_, PyAny>,
        stride: &Bound<'_, PyAny>,
        storage_offset: Option<i64>,
    ) -> PyResult<TensorOut> {
        let storage_offset = storage_offset
            .map(|o| {
                usize::try_from(o).map_err(|_| {
                    pyo3::exceptions::PyRuntimeError::new_err(format!(
                        "Tensor: invalid storage offset {o}"
                    ))
                })
            })
            .transpose()?;
        let size = sizes(&int_list(size, "size")?)?;
        let stride = int_list(stride, "stride")?;
        Ok(self
            .t
            .as_strided(&size, &stride, storage_offset)
            .py()?
            .into())
    }
    #[pyo3(signature = (dim = 0))]
    fn unbind<'py>(&self, py: Python<'py>, dim: isize) -> PyResult<Bound<'py, PyTuple>> {
        list(py, self.t.unbind(dim).py()?)
    }
    #[pyo3(signature = (split_size_or_sections, dim = 0))]
    fn split<'py>(
        &self,
        py: Python<'py>,
        split_size_or_sections: &Bound<'_, PyAny>,
        dim: isize,
    ) -> PyResult<Bound<'py, PyTuple>> {
        if split_size_or_sections.is_instance_of::<PyInt>() {
            let n: isize = split_size_or_sections.extract()?;
            let n = usize::try_from(n).map_err(|_| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "split expects split_size be non-negative, but got split_size={n}"
                ))
            })?;
            return list(py, self.t.split(n, dim).py()?);
        }
        let s = sizes(&int_list(split_size_or_sections, "split_size_or_sections")?)?;
        list(py, self.t.split_with_sizes(&s, dim).py()?)
    }
    #[pyo3(signature = (chunks, dim = 0))]
    fn chunk<'py>(
        &self,
        py: Python<'py>,
        chunks: i64,
        dim: isize,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let chunks = usize::try_from(chunks).map_err(|_| {
            pyo3::exceptions::PyRuntimeError::new_err(format!(
                "chunk expects `chunks` to be greater than 0, got: {chunks}"
            ))
        })?;
        list(py, self.t.chunk(chunks, dim).py()?)
    }
}

/// Module-level forms whose first argument is not `self` in torch's
/// signature order, or which take lists.
#[pyfunction]
#[pyo3(signature = (tensor, split_size_or_sections, dim = 0))]
fn split<'py>(
    tensor: &Bound<'py, PyTensor>,
    split_size_or_sections: &Bound<'_, PyAny>,
    dim: isize,
) -> PyResult<Bound<'py, PyTuple>> {
    tensor.get().split(tensor.py(), split_size_or_sections, dim)
}

#[pyfunction]
#[pyo3(signature = (*tensors))]
fn broadcast_tensors<'py>(
    py: Python<'py>,
    tensors: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyTuple>> {
    let items: Vec<Bound<'py, PyAny>> =
        if tensors.len() == 1 && tensors.get_item(0)?.is_instance_of::<PyList>() {
            tensors.get_item(0)?.cast::<PyList>()?.iter().collect()
        } else {
            tensors.iter().collect()
        };
    let ts: Vec<ferrograd::Tensor> = items
        .iter()
        .map(|o| crate::tensor::arg(o, "tensors"))
        .collect::<PyResult<_>>()?;
    let mut shape: Vec<usize> = Vec::new();
    for t in &ts {
        shape = ferrograd::broadcast_shapes(&shape, t.shape())
            .py()?
            .to_vec();
    }
    let out: Vec<ferrograd::Tensor> = ts
        .iter()
        .map(|t| t.broadcast_to(&shape))
        .collect::<ferrograd::Result<_>>()
        .py()?;
    list(py, out)
}

#[pyfunction]
#[pyo3(signature = (*shapes))]
fn broadcast_shapes<'py>(
    py: Python<'py>,
    shapes: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut shape: Vec<usize> = Vec::new();
    for s in shapes.iter() {
        let s = sizes(&int_list(&s, "shape")?)?;
        shape = ferrograd::broadcast_shapes(&shape, &s).py()?.to_vec();
    }
    py.import("ferrograd._size")?
        .getattr("Size")?
        .call1((PyTuple::new(py, shape)?,))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(broadcast_tensors, m)?)?;
    m.add_function(wrap_pyfunction!(broadcast_shapes, m)?)?;
    Ok(())
}
