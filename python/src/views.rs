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
    /// A view of this tensor's memory with a new shape.
    ///
    /// The shape comes as ints or one sequence; one entry may be -1 (inferred).
    /// No data is copied: the view shares memory with ``self``, so writes through
    /// either are seen by both (and bump the shared version counter). The
    /// requested shape must be expressible with strides over the existing
    /// layout; otherwise this raises and :meth:`reshape` (which copies when it
    /// must) is the way. ``view(dtype)`` with ``self``'s own dtype is accepted;
    /// reinterpreting as another dtype is not supported.
    ///
    /// Args:
    ///     *shape (int or tuple of ints): the new shape.
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(6)
    ///     >>> v = t.view(2, 3)
    ///     >>> v[0, 0] = 100
    ///     >>> t
    ///     tensor([100,   1,   2,   3,   4,   5])
    ///     >>> t.view(-1, 2).shape
    ///     ferrograd.Size([3, 2])
    #[pyo3(signature = (*shape))]
    fn view(&self, shape: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        if shape.len() == 1 {
            let a = shape.get_item(0)?;
            if let Ok(d) = crate::dtype::parse_dtype(&a) {
                if d == self.tensor().dtype() {
                    return Ok(self.tensor().alias().py()?.into());
                }
                return Err(PyTypeError::new_err(format!(
                    "view(dtype) between different dtypes ({} -> {}) is not supported",
                    self.tensor().dtype(),
                    d
                )));
            }
        }
        Ok(self.tensor().view(&dims_args(shape)?).py()?.into())
    }
    /// ``self.view(other.shape)``: a view with ``other``'s shape.
    ///
    /// Args:
    ///     other (Tensor): the tensor whose shape to take.
    ///
    /// Example:
    ///     >>> ferrograd.arange(4).view_as(ferrograd.zeros(2, 2))
    ///     tensor([[0, 1],
    ///             [2, 3]])
    fn view_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        let s: Vec<isize> = other.tensor().shape().iter().map(|&n| n as isize).collect();
        Ok(self.tensor().view(&s).py()?.into())
    }
    /// This tensor with a new shape: a view when the layout allows, else a copy.
    ///
    /// See :func:`ferrograd.reshape`.
    #[pyo3(signature = (*shape))]
    fn reshape(&self, shape: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        Ok(self.tensor().reshape(&dims_args(shape)?).py()?.into())
    }
    /// ``self.reshape(other.shape)``: a view when the layout allows, else a copy.
    ///
    /// Args:
    ///     other (Tensor): the tensor whose shape to take.
    ///
    /// Example:
    ///     >>> ferrograd.arange(4).reshape_as(ferrograd.zeros(2, 2))
    ///     tensor([[0, 1],
    ///             [2, 3]])
    fn reshape_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        let s: Vec<isize> = other.tensor().shape().iter().map(|&n| n as isize).collect();
        Ok(self.tensor().reshape(&s).py()?.into())
    }
    /// Dims ``start_dim`` to ``end_dim`` merged into one (a view when possible).
    ///
    /// See :func:`ferrograd.flatten`.
    #[pyo3(signature = (start_dim = 0, end_dim = -1))]
    fn flatten(&self, start_dim: isize, end_dim: isize) -> PyResult<TensorOut> {
        Ok(self.tensor().flatten(start_dim, end_dim).py()?.into())
    }
    /// All elements in one dim, in row-major order (a view when possible).
    ///
    /// Same as ``flatten()``.
    ///
    /// Example:
    ///     >>> ferrograd.arange(6).view(2, 3).t().ravel()
    ///     tensor([0, 3, 1, 4, 2, 5])
    fn ravel(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().flatten(0, -1).py()?.into())
    }
    /// Dim ``dim`` split into the dims ``sizes`` (a view).
    ///
    /// See :func:`ferrograd.unflatten`.
    fn unflatten(&self, dim: isize, sizes: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        Ok(self
            .tensor()
            .unflatten(dim, &int_list(sizes, "sizes")?)
            .py()?
            .into())
    }
    /// A view with dims ``dim0`` and ``dim1`` swapped.
    ///
    /// See :func:`ferrograd.transpose`.
    fn transpose(&self, dim0: isize, dim1: isize) -> PyResult<TensorOut> {
        Ok(self.tensor().transpose(dim0, dim1).py()?.into())
    }
    /// Alias for :meth:`Tensor.transpose`.
    fn swapaxes(&self, axis0: isize, axis1: isize) -> PyResult<TensorOut> {
        Ok(self.tensor().transpose(axis0, axis1).py()?.into())
    }
    /// Alias for :meth:`Tensor.transpose`.
    fn swapdims(&self, dim0: isize, dim1: isize) -> PyResult<TensorOut> {
        Ok(self.tensor().transpose(dim0, dim1).py()?.into())
    }
    /// Transpose of a tensor of at most 2 dims (a view).
    ///
    /// See :func:`ferrograd.t`.
    fn t(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().t().py()?.into())
    }
    /// A view with all dims in reverse order.
    ///
    /// Example:
    ///     >>> ferrograd.arange(6).view(1, 2, 3).T.shape
    ///     ferrograd.Size([3, 2, 1])
    #[getter(T)]
    fn get_t_all(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().reversed_dims().py()?.into())
    }
    /// A view with the last two dims swapped (a batch of transposed matrices).
    ///
    /// Example:
    ///     >>> ferrograd.arange(6).view(1, 2, 3).mT.shape
    ///     ferrograd.Size([1, 3, 2])
    #[getter(mT)]
    fn get_mt(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().mt().py()?.into())
    }
    /// Conjugate transpose of the last two dims.
    ///
    /// See :func:`ferrograd.adjoint`.
    fn adjoint(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().adjoint().py()?.into())
    }
    /// Conjugate transpose of the last two dims (``self.mT.conj()``); needs 2 or more dims.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([[1 + 2j, 3j]]).mH
    ///     tensor([[1.-2.j],
    ///             [0.-3.j]])
    #[getter(mH)]
    fn get_mh(&self) -> PyResult<TensorOut> {
        if self.tensor().ndim() < 2 {
            return Err(PyRuntimeError::new_err(format!(
                "tensor.mH is only supported on matrices or batches of matrices. Got {}-D tensor.",
                self.tensor().ndim()
            )));
        }
        self.adjoint()
    }
    /// Conjugate transpose of a matrix (2-D tensor); the conjugate of a 0-D tensor.
    ///
    /// For batches of matrices use :attr:`mH`.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([[1.0, 2.0]]).H
    ///     tensor([[1.],
    ///             [2.]])
    #[getter(H)]
    fn get_h(&self) -> PyResult<TensorOut> {
        match self.tensor().ndim() {
            0 => Ok(self.tensor().conj().py()?.into()),
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
    /// A view with the dims reordered as ``dims``.
    ///
    /// See :func:`ferrograd.permute`.
    #[pyo3(signature = (*dims))]
    fn permute(&self, dims: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        Ok(self.tensor().permute(&dims_args(dims)?).py()?.into())
    }
    /// A view with dims ``source`` moved to positions ``destination``.
    ///
    /// See :func:`ferrograd.movedim`.
    fn movedim(
        &self,
        source: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        let s = int_list(source, "source")?;
        let d = int_list(destination, "destination")?;
        Ok(self.tensor().movedim(&s, &d).py()?.into())
    }
    /// Alias for :meth:`Tensor.movedim`.
    fn moveaxis(
        &self,
        source: &Bound<'_, PyAny>,
        destination: &Bound<'_, PyAny>,
    ) -> PyResult<TensorOut> {
        self.movedim(source, destination)
    }
    /// A view broadcasting size-1 dims to larger sizes, without copying.
    ///
    /// The expanded dims get stride 0, so all their entries share memory: write
    /// to a :meth:`clone` instead. New leading dims may be added; -1 keeps a dim's
    /// size.
    ///
    /// Args:
    ///     *sizes (int or tuple of ints): the new shape.
    ///
    /// Example:
    ///     >>> t = ferrograd.tensor([[1], [2]])
    ///     >>> t.expand(2, 3)
    ///     tensor([[1, 1, 1],
    ///             [2, 2, 2]])
    ///     >>> t.expand(-1, 2).stride()
    ///     (1, 0)
    #[pyo3(signature = (*sizes))]
    fn expand(&self, sizes: &Bound<'_, PyTuple>) -> PyResult<TensorOut> {
        Ok(self.tensor().expand(&dims_args(sizes)?).py()?.into())
    }
    /// ``self.expand(other.shape)``: a broadcast view with ``other``'s shape.
    ///
    /// Args:
    ///     other (Tensor): the tensor whose shape to take.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).expand_as(ferrograd.zeros(2, 2))
    ///     tensor([[1, 2],
    ///             [1, 2]])
    fn expand_as(&self, other: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
        Ok(self
            .tensor()
            .broadcast_to(other.tensor().shape())
            .py()?
            .into())
    }
    /// A view broadcast to the shape ``size``.
    ///
    /// See :func:`ferrograd.broadcast_to`.
    fn broadcast_to(&self, size: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let s: Vec<isize> = int_list(size, "size")?;
        Ok(self.tensor().expand(&s).py()?.into())
    }
    /// A view of ``length`` entries of dim ``dim`` from ``start``.
    ///
    /// See :func:`ferrograd.narrow`.
    fn narrow(&self, dim: isize, start: isize, length: i64) -> PyResult<TensorOut> {
        let length = usize::try_from(length).map_err(|_| {
            pyo3::exceptions::PyRuntimeError::new_err(format!(
                "narrow(): length must be non-negative, got {length}"
            ))
        })?;
        Ok(self.tensor().narrow(dim, start, length).py()?.into())
    }
    /// A view of entry ``index`` of dim ``dim``, with that dim removed.
    ///
    /// See :func:`ferrograd.select`.
    fn select(&self, dim: isize, index: isize) -> PyResult<TensorOut> {
        Ok(self.tensor().select(dim, index).py()?.into())
    }
    /// A view without size-1 dims (only those in ``dim`` when given).
    ///
    /// See :func:`ferrograd.squeeze`.
    #[pyo3(signature = (dim = None))]
    fn squeeze(&self, dim: Option<&Bound<'_, PyAny>>) -> PyResult<TensorOut> {
        let dims = dim.map(|d| int_list(d, "dim")).transpose()?;
        Ok(self.tensor().squeeze(dims.as_deref()).py()?.into())
    }
    /// A view with a new size-1 dim at position ``dim``.
    ///
    /// See :func:`ferrograd.unsqueeze`.
    fn unsqueeze(&self, dim: isize) -> PyResult<TensorOut> {
        Ok(self.tensor().unsqueeze(dim).py()?.into())
    }
    /// A view of the diagonal of dims ``dim1`` and ``dim2``, at ``offset``.
    ///
    /// See :func:`ferrograd.diagonal`.
    #[pyo3(signature = (offset = 0, dim1 = 0, dim2 = 1))]
    fn diagonal(&self, offset: isize, dim1: isize, dim2: isize) -> PyResult<TensorOut> {
        Ok(self.tensor().diagonal(offset, dim1, dim2).py()?.into())
    }
    /// A view of this tensor's memory with the given sizes, strides and offset.
    ///
    /// The view reads the same memory as ``self`` (``storage_offset`` counts
    /// elements from the start of that memory; it defaults to ``self``'s own).
    /// Overlapping strides are allowed for reading. See :func:`ferrograd.as_strided`.
    ///
    /// Args:
    ///     size (tuple of ints): the shape of the view.
    ///     stride (tuple of ints): the stride of each dim, in elements.
    ///     storage_offset (int, optional): the first element's position in memory.
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(6)
    ///     >>> t.as_strided((2, 2), (1, 2))
    ///     tensor([[0, 2],
    ///             [1, 3]])
    ///     >>> t.as_strided((2,), (3,), 1)
    ///     tensor([1, 4])
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
            .tensor()
            .as_strided(&size, &stride, storage_offset)
            .py()?
            .into())
    }
    /// The slices along ``dim``, as a tuple of views with that dim removed.
    ///
    /// See :func:`ferrograd.unbind`.
    #[pyo3(signature = (dim = 0))]
    fn unbind<'py>(&self, py: Python<'py>, dim: isize) -> PyResult<Bound<'py, PyTuple>> {
        list(py, self.tensor().unbind(dim).py()?)
    }
    /// Views of pieces along ``dim``: of size ``split_size_or_sections``, or of the listed sizes.
    ///
    /// See :func:`ferrograd.split`.
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
            return list(py, self.tensor().split(n, dim).py()?);
        }
        let s = sizes(&int_list(split_size_or_sections, "split_size_or_sections")?)?;
        list(py, self.tensor().split_with_sizes(&s, dim).py()?)
    }
    /// Views of ``chunks`` near-equal pieces along ``dim`` (the last may be smaller).
    ///
    /// See :func:`ferrograd.chunk`.
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
        list(py, self.tensor().chunk(chunks, dim).py()?)
    }
}

/// Splits ``tensor`` along ``dim`` into pieces that are views of it.
///
/// With an int ``split_size_or_sections`` every piece has that size along
/// ``dim`` except possibly the last, which is smaller when the size does not
/// divide evenly; with a list of ints the pieces have exactly those sizes
/// (which must add up to the size of ``dim``).
///
/// Args:
///     tensor (Tensor): the tensor to split.
///     split_size_or_sections (int or list of ints): the size of each piece,
///         or the list of sizes.
///     dim (int): the dimension to split along. Default: 0.
///
/// Returns:
///     tuple of Tensors: the pieces, in order.
///
/// Example:
///     >>> t = ferrograd.arange(10)
///     >>> ferrograd.split(t, 4)
///     (tensor([0, 1, 2, 3]), tensor([4, 5, 6, 7]), tensor([8, 9]))
///     >>> ferrograd.split(t, [2, 8])
///     (tensor([0, 1]), tensor([2, 3, 4, 5, 6, 7, 8, 9]))
#[pyfunction]
#[pyo3(signature = (tensor, split_size_or_sections, dim = 0))]
fn split<'py>(
    tensor: &Bound<'py, PyTensor>,
    split_size_or_sections: &Bound<'_, PyAny>,
    dim: isize,
) -> PyResult<Bound<'py, PyTuple>> {
    tensor.get().split(tensor.py(), split_size_or_sections, dim)
}

/// broadcast_tensors(*tensors) -> tuple of Tensors
///
/// Expands the tensors to their common broadcast shape.
///
/// Each result is a view of its input (no data is copied): dimensions of
/// size 1 are expanded with stride 0. Because several elements share memory,
/// write to the results only after cloning them.
///
/// Args:
///     *tensors (Tensor): the tensors (a single list of tensors is accepted too).
///
/// Example:
///     >>> a, b = ferrograd.broadcast_tensors(ferrograd.tensor([1, 2]), ferrograd.tensor([[0], [1]]))
///     >>> a
///     tensor([[1, 2],
///             [1, 2]])
///     >>> b
///     tensor([[0, 0],
///             [1, 1]])
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
        .map(|o| crate::convert::tensor_arg(o, "tensors"))
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

/// broadcast_shapes(*shapes) -> Size
///
/// Returns the shape that tensors of the given shapes broadcast to, without
/// making any tensor. Raises ``RuntimeError`` if the shapes are not
/// compatible.
///
/// Args:
///     *shapes (tuple of ints or int): the shapes; an int stands for a 1-D
///         shape.
///
/// Example:
///     >>> ferrograd.broadcast_shapes((2, 1), (3,))
///     ferrograd.Size([2, 3])
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
