//! Tensor's Python methods of its own: construction (`Tensor(...)`,
//! `_make_subclass`), attributes, shape and layout queries, copies,
//! Python protocols (`len`, `iter`, `repr`, numbers, hashing), pickling.

use crate::convert;
use crate::errors::IntoPyResult;
use crate::tensor::{
    dense_bytes, generic_setattr, keep_dict, live_object, nogil, py_helper, rebuild, register,
    size_obj, wrap_any, PyState, PyTensor, TensorOut, PENDING_SUBCLASS,
};
use ferrograd::tensor::{Layout, MemoryFormat, Storage};
use ferrograd::{DType, Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use std::sync::atomic::Ordering;

#[pymethods]
impl PyTensor {
    /// `Tensor(data)` copies data as the default float dtype;
    /// `Tensor(2, 3)` makes an uninitialised (zero) tensor of that shape.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        if args.is_empty() {
            if let Some(t) = PENDING_SUBCLASS.with(|p| p.borrow_mut().take()) {
                return Ok(PyTensor::new(t));
            }
        }
        let dt = ferrograd::default_dtype();
        let t = if args.is_empty() {
            Tensor::zeros(&[0], dt)
        } else {
            let first = args.get_item(0)?;
            if args.len() > 1 || first.is_instance_of::<pyo3::types::PyInt>() {
                let shape = convert::sizes(&convert::shape_args(args)?)?;
                Tensor::zeros(&shape, dt)
            } else {
                convert::data_to_tensor(&first, Some(dt))?
            }
        };
        Ok(PyTensor::new(t))
    }

    /// `Tensor._make_subclass(cls, data, require_grad=False)`: a new
    /// instance of the subclass `cls` that shares `data`'s memory (a
    /// detached alias, a leaf) and is its tensor's object, kept alive by
    /// the tensor like any subclass instance (how `nn.Parameter` is made).
    #[staticmethod]
    #[pyo3(signature = (cls, data, require_grad = false))]
    fn _make_subclass(
        cls: &Bound<'_, pyo3::types::PyType>,
        data: &Bound<'_, PyAny>,
        require_grad: bool,
    ) -> PyResult<Py<PyAny>> {
        let py = cls.py();
        let base = py.get_type::<PyTensor>();
        if !cls.is_subclass(&base)? {
            return Err(PyTypeError::new_err(format!(
                "_make_subclass: cls must be a subclass of Tensor, not {}",
                cls.name()?
            )));
        }
        let src = data.cast::<PyTensor>().map_err(|_| {
            PyTypeError::new_err(format!(
                "_make_subclass: data must be a Tensor, not {}",
                data.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        let t = src.get().tensor().detach();
        t.set_requires_grad(require_grad).py()?;
        // `Tensor.__new__(cls)` takes the pending tensor (a subclass's own
        // `__new__` is bypassed, so it may call this one).
        PENDING_SUBCLASS.with(|p| *p.borrow_mut() = Some(t));
        let made = base.call_method1("__new__", (cls,));
        PENDING_SUBCLASS.with(|p| p.borrow_mut().take());
        let obj = made?.cast_into::<PyTensor>()?;
        register(&obj, false);
        Ok(obj.into_any().unbind())
    }

    /// Registers an object made by `Tensor(...)` (or a subclass's
    /// constructor) as its tensor's object.
    #[pyo3(signature = (*args, **kwargs))]
    fn __init__(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) {
        let _ = (args, kwargs);
        if slf.get().me.load(Ordering::Acquire).is_null()
            && live_object(slf.py(), &slf.get().tensor()).is_none()
        {
            register(slf, slf.get_type().is(slf.py().get_type::<PyTensor>()));
        }
    }

    /// Attributes a user sets on a tensor live as long as the tensor: the
    /// first one makes the tensor keep this object's `__dict__`.
    fn __setattr__(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyString>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        generic_setattr(slf, name, Some(value))?;
        if slf.get_type().is(slf.py().get_type::<PyTensor>()) && !slf.get_type().hasattr(name)? {
            keep_dict(slf)?;
        }
        Ok(())
    }

    fn __delattr__(slf: &Bound<'_, Self>, name: &Bound<'_, PyString>) -> PyResult<()> {
        generic_setattr(slf, name, None)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // An object is tracked from its allocation, before its contents are
        // written (a collection can start while its `__dict__` is made);
        // `me` is set only after they are, so until then nothing else is
        // read.
        if self.me.load(Ordering::Acquire).is_null() || self.handle_count() != 1 {
            return Ok(());
        }
        let state = self.tensor().binding_slot().try_with_kept(|k| {
            let Some(st) = k.and_then(|k| k.downcast_ref::<PyState>()) else {
                return Ok(());
            };
            visit.call(&st.attrs)?;
            visit.call(&st.object)
        });
        state.unwrap_or(Ok(()))
    }

    fn __clear__(&self) {
        if !self.me.load(Ordering::Acquire).is_null() && self.handle_count() == 1 {
            drop(self.tensor().binding_slot().take_kept());
        }
    }

    /// The size of each dim, as a :class:`ferrograd.Size` (a tuple of ints).
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2, 3).shape
    ///     ferrograd.Size([2, 3])
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        size_obj(py, self.tensor().shape())
    }

    /// The shape as a :class:`ferrograd.Size`, or the size of one dim.
    ///
    /// Args:
    ///     dim (int, optional): a dim (negative counts from the end). When given,
    ///         the result is an ``int``.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(2, 3)
    ///     >>> t.size(), t.size(-1)
    ///     (ferrograd.Size([2, 3]), 3)
    #[pyo3(signature = (dim = None))]
    fn size<'py>(&self, py: Python<'py>, dim: Option<isize>) -> PyResult<Bound<'py, PyAny>> {
        match dim {
            None => size_obj(py, self.tensor().shape()),
            Some(d) => Ok(self.tensor().size(d).py()?.into_pyobject(py)?.into_any()),
        }
    }

    /// The number of dims (0 for a scalar tensor).
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2, 3).dim()
    ///     2
    fn dim(&self) -> usize {
        self.tensor().ndim()
    }
    /// The number of dims; same as :meth:`dim`.
    #[getter]
    fn ndim(&self) -> usize {
        self.tensor().ndim()
    }
    /// Alias for :meth:`Tensor.dim`.
    fn ndimension(&self) -> usize {
        self.tensor().ndim()
    }
    /// The number of elements (the product of the shape).
    ///
    /// See :func:`ferrograd.numel`.
    fn numel(&self) -> usize {
        self.tensor().numel()
    }
    /// Alias for :meth:`Tensor.numel`.
    fn nelement(&self) -> usize {
        self.tensor().numel()
    }
    /// The size of one element in bytes.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2).element_size(), ferrograd.zeros(2, dtype=ferrograd.float64).element_size()
    ///     (4, 8)
    fn element_size(&self) -> usize {
        self.tensor().dtype().itemsize()
    }
    /// The size of one element in bytes; same as :meth:`element_size`.
    #[getter]
    fn itemsize(&self) -> usize {
        self.tensor().dtype().itemsize()
    }
    /// The size of the elements in bytes, ``numel() * element_size()``.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2, 3).nbytes
    ///     24
    #[getter]
    fn nbytes(&self) -> usize {
        self.tensor().numel() * self.tensor().dtype().itemsize()
    }
    /// True: every ferrograd tensor is on the CPU.
    #[getter]
    fn is_cpu(&self) -> bool {
        true
    }
    /// False: ferrograd runs on the CPU only.
    #[getter]
    fn is_cuda(&self) -> bool {
        false
    }

    /// The stride of each dim (in elements), or of one dim.
    ///
    /// Element ``[i, j, ...]`` of the tensor is at position
    /// ``storage_offset() + i * stride(0) + j * stride(1) + ...`` in its memory.
    ///
    /// Args:
    ///     dim (int, optional): a dim; when given, the result is an ``int``.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(2, 3)
    ///     >>> t.stride(), t.stride(1), t.t().stride()
    ///     ((3, 1), 1, (1, 3))
    #[pyo3(signature = (dim = None))]
    fn stride<'py>(&self, py: Python<'py>, dim: Option<isize>) -> PyResult<Bound<'py, PyAny>> {
        match dim {
            None => Ok(PyTuple::new(py, self.tensor().strides())?.into_any()),
            Some(d) => Ok(self.tensor().stride(d).py()?.into_pyobject(py)?.into_any()),
        }
    }
    /// The position of the first element in the memory this tensor views, in elements.
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(6)
    ///     >>> t[2:].storage_offset(), t.view(2, 3)[1].storage_offset()
    ///     (2, 3)
    fn storage_offset(&self) -> usize {
        self.tensor().storage_offset()
    }
    /// Whether the elements are laid out without gaps in the order of
    /// ``memory_format`` (row-major by default).
    ///
    /// Args:
    ///     memory_format (memory_format, optional): ``ferrograd.contiguous_format``
    ///         (the default), ``ferrograd.channels_last`` (4-D) or
    ///         ``ferrograd.channels_last_3d`` (5-D); dims of size 1 may have
    ///         any stride.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(2, 3)
    ///     >>> t.is_contiguous(), t.t().is_contiguous()
    ///     (True, False)
    #[pyo3(signature = (memory_format = None))]
    fn is_contiguous(&self, memory_format: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        Ok(
            match crate::memory_format::parse("is_contiguous", memory_format)? {
                None | Some(MemoryFormat::Preserve) => self.tensor().is_contiguous(),
                Some(f) => f.matches(self.tensor().layout()),
            },
        )
    }
    /// ``self`` if it is contiguous in ``memory_format``, else a copy laid
    /// out so.
    ///
    /// The copy is recorded by autograd like :meth:`clone`.
    ///
    /// Args:
    ///     memory_format (memory_format, optional): ``ferrograd.contiguous_format``
    ///         (row-major, the default), ``ferrograd.channels_last`` (4-D
    ///         tensors) or ``ferrograd.channels_last_3d`` (5-D); another rank
    ///         raises a RuntimeError.
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(6).view(2, 3).t()
    ///     >>> c = t.contiguous()
    ///     >>> c.is_contiguous(), c.stride()
    ///     (True, (2, 1))
    ///     >>> c.contiguous() is c
    ///     True
    #[pyo3(signature = (memory_format = None))]
    fn contiguous(
        slf: &Bound<'_, Self>,
        memory_format: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let fmt = match crate::memory_format::parse("contiguous", memory_format)? {
            None | Some(MemoryFormat::Preserve) => MemoryFormat::Contiguous,
            Some(f) => f,
        };
        let me = slf.get();
        if fmt.matches(me.tensor().layout()) {
            return Ok(slf.clone().into_any().unbind());
        }
        let py = slf.py();
        let t = nogil(py, me.tensor().numel(), || me.tensor().try_copy_as(fmt)).py()?;
        wrap_any(py, t)
    }
    /// The address of the first element, as an ``int``.
    ///
    /// Two tensors with the same ``data_ptr()`` start at the same memory (a view
    /// and its base, or a tensor and its :meth:`detach`).
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(6)
    ///     >>> t[1:].data_ptr() - t.data_ptr() == t.element_size()
    ///     True
    fn data_ptr(&self) -> usize {
        ferrograd::compile::break_capture("a memory address is read into Python (data_ptr)");
        self.tensor().data_ptr()
    }
    /// Whether the dtype is a floating point type (float16, bfloat16, float32, float64).
    ///
    /// See :func:`ferrograd.is_floating_point`.
    fn is_floating_point(&self) -> bool {
        self.tensor().dtype().is_floating_point()
    }
    /// Whether the dtype is a complex type (complex64, complex128).
    ///
    /// See :func:`ferrograd.is_complex`.
    fn is_complex(&self) -> bool {
        self.tensor().dtype().is_complex()
    }
    /// Whether the dtype can hold negative values (False for ``uint8`` and ``bool``).
    ///
    /// Example:
    ///     >>> ferrograd.zeros(1).is_signed(), ferrograd.zeros(1, dtype=ferrograd.uint8).is_signed()
    ///     (True, False)
    fn is_signed(&self) -> bool {
        self.tensor().dtype().is_signed()
    }

    /// A copy of this tensor with its own memory.
    ///
    /// The copy is differentiable (gradients flow back to ``self``) and by
    /// default keeps the strides of a dense layout (a transposed tensor's
    /// clone is transposed too; a layout with gaps gives a dense copy in the
    /// same dim order); use :meth:`contiguous` for row-major order.
    ///
    /// Keyword args:
    ///     memory_format (memory_format, optional): the copy's layout:
    ///         ``ferrograd.preserve_format`` (the default),
    ///         ``ferrograd.contiguous_format``, ``ferrograd.channels_last`` or
    ///         ``ferrograd.channels_last_3d``.
    ///
    /// Example:
    ///     >>> a = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> b = a.clone()
    ///     >>> b
    ///     tensor([1., 2.], grad_fn=<CloneBackward0>)
    ///     >>> b.data_ptr() == a.data_ptr()
    ///     False
    #[pyo3(signature = (*, memory_format = None))]
    fn clone(
        &self,
        py: Python<'_>,
        memory_format: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let fmt = crate::memory_format::parse("clone", memory_format)?;
        let t = &self.tensor();
        let out = nogil(py, t.numel(), || {
            t.try_copy_as(fmt.unwrap_or(MemoryFormat::Preserve))
        })
        .py()?;
        Ok(out.into())
    }

    fn __len__(&self) -> PyResult<usize> {
        if self.tensor().ndim() == 0 {
            return Err(PyTypeError::new_err("len() of a 0-d tensor"));
        }
        Ok(self.tensor().shape()[0])
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let t = &slf.get().tensor();
        if t.ndim() == 0 {
            return Err(PyTypeError::new_err("iteration over a 0-d tensor"));
        }
        let items = (0..t.shape()[0] as isize)
            .map(|i| Ok(TensorOut(t.select(0, i).py()?)))
            .collect::<PyResult<Vec<_>>>()?;
        let list = pyo3::types::PyList::new(slf.py(), items)?;
        Ok(list.try_iter()?.into_any().unbind())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        static REPR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        py_helper(slf.py(), &REPR, "ferrograd._tensor_str", "tensor_repr")?
            .call1((slf,))?
            .extract()
    }

    /// `format(t, spec)`: a 0-dim tensor formats as its Python number;
    /// others accept only an empty spec and give their `str`.
    fn __format__(slf: &Bound<'_, Self>, format_spec: &str) -> PyResult<Py<PyAny>> {
        if slf.get().tensor().ndim() == 0 {
            let item = slf.call_method0("item")?;
            return Ok(item.call_method1("__format__", (format_spec,))?.unbind());
        }
        if !format_spec.is_empty() {
            return Err(PyTypeError::new_err(
                "unsupported format string passed to Tensor.__format__",
            ));
        }
        Ok(slf.str()?.into_any().unbind())
    }

    fn __bool__(&self) -> PyResult<bool> {
        if self.tensor().numel() != 1 {
            return Err(PyRuntimeError::new_err(format!(
                "Boolean value of Tensor with more than one value is ambiguous (shape {:?})",
                self.tensor().shape()
            )));
        }
        Ok(self.tensor().item().py()?.to_bool())
    }
    fn __float__(&self) -> PyResult<f64> {
        real_value(&self.tensor(), "double").map(|s| s.to_f64())
    }
    fn __int__(&self) -> PyResult<i64> {
        real_value(&self.tensor(), "int64_t").map(|s| s.to_i64())
    }
    fn __index__(&self) -> PyResult<i64> {
        if self.tensor().dtype().is_differentiable() || self.tensor().numel() != 1 {
            return Err(PyTypeError::new_err(
                "only integer tensors of a single element can be converted to an index",
            ));
        }
        Ok(self.tensor().item().py()?.to_i64())
    }
    fn __hash__(&self) -> usize {
        self.tensor().id()
    }

    /// Whether autograd records operations on this tensor.
    ///
    /// Settable on leaves (tensors not produced by a recorded operation); only
    /// floating and complex tensors can require grad. Operations on a tensor
    /// that requires grad produce results that require grad and have a
    /// :attr:`grad_fn`.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> x.requires_grad, (x * 2).requires_grad, ferrograd.ones(2).requires_grad
    ///     (True, True, False)
    #[getter]
    fn get_requires_grad(&self) -> bool {
        self.tensor().requires_grad()
    }
    #[setter(requires_grad)]
    fn set_requires_grad(&self, value: bool) -> PyResult<()> {
        self.tensor().set_requires_grad(value).py()
    }
    /// Sets :attr:`requires_grad` in place and returns ``self``.
    ///
    /// Use it to turn an existing leaf tensor into a trainable one.
    ///
    /// Args:
    ///     requires_grad (bool): the new value. Default: True.
    ///
    /// Example:
    ///     >>> w = ferrograd.zeros(2)
    ///     >>> w.requires_grad_()
    ///     tensor([0., 0.], requires_grad=True)
    #[pyo3(signature = (requires_grad = true))]
    fn requires_grad_(slf: &Bound<'_, Self>, requires_grad: bool) -> PyResult<Py<PyAny>> {
        slf.get().tensor().set_requires_grad(requires_grad).py()?;
        Ok(slf.clone().into_any().unbind())
    }
    /// The version counter: how many in-place writes this tensor's memory has had.
    ///
    /// Views share their base's counter. Autograd records it when it saves a
    /// tensor for backward, and raises if it changed before the backward pass
    /// uses the tensor.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(3)
    ///     >>> t._version
    ///     0
    ///     >>> t.add_(1)._version
    ///     1
    #[getter]
    fn _version(&self) -> u64 {
        ferrograd::compile::break_capture("a version counter is read into Python (_version)");
        self.tensor().version()
    }
    #[getter]
    fn _base(&self) -> Option<TensorOut> {
        self.tensor().base().cloned().map(TensorOut)
    }
    fn _is_view(&self) -> bool {
        self.tensor().is_view()
    }
    /// A tensor sharing this tensor's memory, cut from the autograd graph.
    ///
    /// The result does not require grad and has no :attr:`grad_fn`; in-place
    /// writes to it are seen by ``self`` (and bump the shared version counter,
    /// so autograd still detects them).
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> y = x.detach()
    ///     >>> y.requires_grad, y.data_ptr() == x.data_ptr()
    ///     (False, True)
    fn detach(&self) -> PyResult<TensorOut> {
        let _span = ferrograd::profiler::op("aten::detach", &[&self.tensor()]);
        Ok(TensorOut(self.tensor().detached().py()?))
    }
    /// A detached alias of this tensor that autograd does not track.
    ///
    /// Unlike :meth:`detach`, in-place writes through ``.data`` are not seen by
    /// autograd's version checks. Assigning ``t.data = other`` copies
    /// ``other``'s values into ``t`` (the shape and dtype must match).
    ///
    /// Example:
    ///     >>> w = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> w.data.mul_(10)
    ///     tensor([10., 20.])
    ///     >>> w
    ///     tensor([10., 20.], requires_grad=True)
    #[getter]
    fn get_data(&self) -> TensorOut {
        TensorOut(self.tensor().data())
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let (bytes, strides) = dense_bytes(&self.tensor());
        let f = py.import("ferrograd._core")?.getattr("_rebuild_tensor")?;
        let args = (
            PyBytes::new(py, &bytes),
            self.tensor().dtype().name(),
            PyTuple::new(py, self.tensor().shape())?,
            PyTuple::new(py, strides)?,
            self.tensor().requires_grad(),
        )
            .into_pyobject(py)?;
        Ok((f.unbind(), args))
    }

    fn __deepcopy__(&self, py: Python<'_>, memo: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let _ = memo;
        let copy = |t: &Tensor| -> PyResult<Tensor> {
            let (bytes, strides) = dense_bytes(t);
            rebuild(&bytes, t.dtype(), t.shape(), &strides)
        };
        let _ = py;
        let out = copy(&self.tensor())?;
        out.set_requires_grad(self.tensor().requires_grad()).py()?;
        if let Some(g) = self.tensor().grad() {
            out.autograd().set_grad(Some(copy(&g)?));
        }
        Ok(out.into())
    }
}

/// [`one_value`] for `float()`/`int()`: a complex value must have no
/// imaginary part (torch's RuntimeError names the C type, `ctype`).
fn real_value(t: &Tensor, ctype: &str) -> PyResult<Scalar> {
    let v = one_value(t)?;
    if let Scalar::Complex(z) = v {
        if z.im != 0.0 {
            return Err(PyRuntimeError::new_err(format!(
                "value cannot be converted to type {ctype} without overflow"
            )));
        }
    }
    Ok(v)
}

pub(crate) fn one_value(t: &Tensor) -> PyResult<Scalar> {
    if t.numel() != 1 {
        return Err(PyTypeError::new_err(format!(
            "only one element tensors can be converted to Python scalars (got {} elements)",
            t.numel()
        )));
    }
    t.item().py()
}

/// `_rebuild_tensor(data, dtype, shape, strides, requires_grad)`: the
/// unpickler of tensors.
#[pyfunction]
pub fn _rebuild_tensor(
    data: &[u8],
    dtype: &str,
    shape: Vec<usize>,
    strides: Vec<usize>,
    requires_grad: bool,
) -> PyResult<TensorOut> {
    let dt = DType::from_name(dtype)
        .ok_or_else(|| PyValueError::new_err(format!("unknown dtype {dtype:?}")))?;
    let t = rebuild(data, dt, &shape, &strides)?;
    t.set_requires_grad(requires_grad).py()?;
    Ok(t.into())
}

/// `_read_tensor(file, dtype, shape, strides) -> (tensor, crc32)`: a
/// tensor of that dense layout whose bytes are read with `file.readinto`
/// straight into its new memory (no intermediate copy), and the CRC-32 of
/// those bytes (zlib's). Raises if the file ends first or, for bool, holds
/// bytes other than 0 and 1.
#[pyfunction]
pub fn _read_tensor(
    py: Python<'_>,
    file: &Bound<'_, PyAny>,
    dtype: &str,
    shape: Vec<usize>,
    strides: Vec<usize>,
) -> PyResult<(TensorOut, u32)> {
    let dt = DType::from_name(dtype)
        .ok_or_else(|| PyValueError::new_err(format!("unknown dtype {dtype:?}")))?;
    let layout = Layout::checked(&shape, &strides, 0).py()?;
    if !layout.is_non_overlapping_and_dense() {
        return Err(PyValueError::new_err(format!(
            "cannot read a tensor of shape {shape:?} and strides {strides:?}: the layout is not dense"
        )));
    }
    let nbytes = layout.numel() * dt.itemsize();
    let storage = Storage::uninit(nbytes);
    let mut done = 0;
    while done < nbytes {
        let got = with_memory(py, &storage, done, |view| {
            let n: Option<usize> = file.call_method1("readinto", (view,))?.extract()?;
            Ok(n.unwrap_or(0).min(nbytes - done))
        })?;
        if got == 0 {
            return Err(PyValueError::new_err(format!(
                "the file ended after {done} of the {nbytes} bytes of a {dt} tensor of shape {shape:?}"
            )));
        }
        done += got;
    }
    if dt == DType::Bool && nbytes > 0 {
        // SAFETY: all `nbytes` bytes were written above.
        let bytes = unsafe { std::slice::from_raw_parts(storage.as_ptr(), nbytes) };
        if bytes.iter().any(|&b| b > 1) {
            return Err(PyValueError::new_err(
                "a bool tensor's bytes must be 0 or 1, and the file holds others",
            ));
        }
    }
    let crc32 = py.import("zlib")?.getattr("crc32")?;
    let crc = with_memory(py, &storage, 0, |view| crc32.call1((view,))?.extract())?;
    Ok((Tensor::from_parts(storage, layout, dt).py()?.into(), crc))
}

/// Calls `f` with a writable memoryview of `storage`'s bytes from `start`
/// on, released before returning.
fn with_memory<R>(
    py: Python<'_>,
    storage: &Storage,
    start: usize,
    f: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<R>,
) -> PyResult<R> {
    // SAFETY: the view covers bytes `start..nbytes` of the storage, which
    // outlives it: it is released below, and a view that cannot be
    // released (the callee kept an export of it) makes the storage leak
    // (its memory is never freed) instead of dangling.
    let view = unsafe {
        let raw = ffi::PyMemoryView_FromMemory(
            storage.as_ptr().add(start) as *mut std::ffi::c_char,
            (storage.nbytes() - start) as ffi::Py_ssize_t,
            ffi::PyBUF_WRITE,
        );
        Bound::from_owned_ptr_or_err(py, raw)?
    };
    let out = f(&view);
    if view.call_method0("release").is_err() {
        std::mem::forget(storage.clone());
        return Err(PyRuntimeError::new_err(
            "a view of a new tensor's memory was kept past the call that filled it",
        ));
    }
    out
}
