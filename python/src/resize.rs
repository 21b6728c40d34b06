//! `Tensor.resize_`, `resize_as_` and `set_`: the object is given its
//! tensor's next handle (Note [Swapped handles]) and returned.

use crate::convert::{int_list, shape_args, sizes};
use crate::errors::IntoPyResult;
use crate::tensor::PyTensor;
use ferrograd::Tensor;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Puts `next` in `slf` and returns `slf`.
fn swapped<'py>(slf: &Bound<'py, PyTensor>, next: Tensor) -> Bound<'py, PyTensor> {
    slf.get().replace(slf.py(), next);
    slf.clone()
}

fn offset_arg(offset: i64) -> PyResult<usize> {
    usize::try_from(offset)
        .map_err(|_| PyRuntimeError::new_err(format!("set_: invalid storage offset {offset}")))
}

#[pymethods]
impl PyTensor {
    /// Gives this tensor the shape ``size``, in place, and returns it.
    ///
    /// The elements are laid out densely in ``memory_format`` (row-major by
    /// default) from the same storage offset; values already in memory keep
    /// their place in it, and elements past the old storage are zero. The
    /// same shape without a format changes nothing. A storage too small is
    /// replaced by a larger copy, which is refused while other tensors (views)
    /// share it or when its memory belongs to another library (e.g. NumPy):
    /// no tensor ever reads past its storage.
    ///
    /// Args:
    ///     size (ints or a tuple of ints): the new shape.
    ///     memory_format (memory_format, optional): the new layout's order.
    ///
    /// Raises:
    ///     RuntimeError: the tensor requires grad, the size overflows, or a
    ///         storage that cannot grow would have to.
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(6.0)
    ///     >>> t.resize_(2, 2)
    ///     tensor([[0., 1.],
    ///             [2., 3.]])
    ///     >>> t.resize_(7)
    ///     tensor([0., 1., 2., 3., 4., 5., 0.])
    #[pyo3(signature = (*size, memory_format = None))]
    fn resize_<'py>(
        slf: &Bound<'py, Self>,
        size: &Bound<'py, PyTuple>,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let shape = sizes(&shape_args(size)?)?;
        let format = crate::memory_format::parse("resize_", memory_format)?;
        let next = slf.get().tensor().resized(&shape, format).py()?;
        Ok(swapped(slf, next))
    }

    /// Gives this tensor the shape of ``the_template``, in place, as
    /// :meth:`resize_` does, and returns it (the dtypes may differ).
    ///
    /// Args:
    ///     the_template (Tensor): the tensor whose shape is taken.
    ///     memory_format (memory_format, optional): the new layout's order.
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(4.0)
    ///     >>> t.resize_as_(ferrograd.zeros(2, 2, dtype=ferrograd.int64))
    ///     tensor([[0., 1.],
    ///             [2., 3.]])
    #[pyo3(signature = (the_template, memory_format = None))]
    fn resize_as_<'py>(
        slf: &Bound<'py, Self>,
        the_template: PyRef<'py, PyTensor>,
        memory_format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let format = crate::memory_format::parse("resize_as_", memory_format)?;
        let shape = the_template.tensor().shape().to_vec();
        let next = slf.get().tensor().resized(&shape, format).py()?;
        Ok(swapped(slf, next))
    }

    /// Makes this tensor read another tensor's memory, in place, and
    /// returns it.
    ///
    /// ``set_(source)`` gives it ``source``'s storage, shape, strides and
    /// offset; ``set_(source, storage_offset, size, stride)`` reads
    /// ``source``'s storage through that layout (``storage_offset`` counts
    /// from the start of the storage; ``stride`` defaults to row-major);
    /// ``set_()`` leaves it empty, of shape ``(0,)``. Writes through either
    /// tensor are seen by both. The dtypes must match, and the layout must
    /// lie inside the storage. Outside :func:`ferrograd.no_grad` neither
    /// tensor may require grad (``set_`` is not differentiated); under it a
    /// parameter keeps its gradient and hooks.
    ///
    /// Args:
    ///     source (Tensor, optional): the tensor whose memory is read.
    ///     storage_offset (int): the first element's position in that memory.
    ///     size (tuple of ints, optional): the shape.
    ///     stride (tuple of ints, optional): the strides, in elements.
    ///
    /// Raises:
    ///     RuntimeError: dtypes differ, the layout reads past the storage, or
    ///         a tensor requires grad while grad mode is on.
    ///
    /// Example:
    ///     >>> src = ferrograd.arange(6.0)
    ///     >>> t = ferrograd.zeros(1)
    ///     >>> t.set_(src, 1, (2, 2), (1, 2))
    ///     tensor([[1., 3.],
    ///             [2., 4.]])
    ///     >>> _ = t.fill_(7.0)
    ///     >>> src
    ///     tensor([0., 7., 7., 7., 7., 5.])
    #[pyo3(signature = (source = None, storage_offset = 0, size = None, stride = None))]
    fn set_<'py>(
        slf: &Bound<'py, Self>,
        source: Option<&Bound<'py, PyAny>>,
        storage_offset: i64,
        size: Option<&Bound<'py, PyAny>>,
        stride: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTensor>> {
        let me = slf.get().tensor();
        let Some(source) = source.filter(|s| !s.is_none()) else {
            return Ok(swapped(slf, me.set_to_empty().py()?));
        };
        let src = match source.cast::<PyTensor>() {
            Ok(s) => s.get().tensor(),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "set_(): argument 'source' must be Tensor, not {}",
                    source.get_type().name()?
                )))
            }
        };
        let next = match size.filter(|s| !s.is_none()) {
            None => me.set_to(&src, src.offset(), src.shape(), Some(src.strides())),
            Some(size) => {
                let shape = sizes(&int_list(size, "size")?)?;
                let strides = match stride.filter(|s| !s.is_none()) {
                    Some(s) => Some(sizes(&int_list(s, "stride")?)?),
                    None => None,
                };
                me.set_to(
                    &src,
                    offset_arg(storage_offset)?,
                    &shape,
                    strides.as_deref(),
                )
            }
        }
        .py()?;
        Ok(swapped(slf, next))
    }
}
