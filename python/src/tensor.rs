//! The `ferrograd.Tensor` class: attributes, conversions and protocol
//! methods. Operations are added by the per-area `#[pymethods]` blocks in
//! the sibling modules.

use crate::convert::{self, array_interface, tensor_arg, to_list};
use crate::dtype::{parse_dtype, PyDType, PyDevice};
use crate::errors::{catch_panic, FromPanic, IntoPyResult};
use ferrograd::{DType, Layout, Scalar, Storage, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use pyo3::{ffi, PyTraverseError, PyVisit};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Work (in elements) above which a binding releases the GIL around the
/// kernel; below it, detaching costs more than it saves.
pub const NOGIL_MIN_ELEMS: usize = 1 << 12;

/// Runs `f` with the GIL released when `work` is large; a panic inside it
/// becomes an error (see Note [Panics at the binding's edge]).
#[inline]
pub fn nogil<T: Send + FromPanic>(py: Python<'_>, work: usize, f: impl FnOnce() -> T + Send) -> T {
    if work >= NOGIL_MIN_ELEMS {
        py.detach(|| catch_panic(f))
    } else {
        catch_panic(f)
    }
}

/// [`nogil`] for work that cannot fail except by panicking.
#[inline]
pub fn nogil_ok<T: Send>(py: Python<'_>, work: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    nogil(py, work, || Ok(f()))
}

/// A multi-dimensional array of one dtype, with automatic differentiation.
///
/// A tensor is a view of a block of memory: a shape, a stride per dim and
/// a storage offset (:meth:`stride`, :meth:`storage_offset`). Views such as
/// :meth:`view`, :meth:`transpose`, :meth:`expand` or slicing share memory
/// with their base; methods that end in ``_`` (``add_``, ``zero_``, ...)
/// write in place and bump a version counter that views share, which
/// autograd checks before using a tensor it saved.
///
/// When a tensor has ``requires_grad=True``, operations on it record a
/// graph (each result has a :attr:`grad_fn`), and :meth:`backward`
/// accumulates gradients into the :attr:`grad` of the leaf tensors.
///
/// Make tensors with :func:`ferrograd.tensor` (from data) or the factories
/// (:func:`ferrograd.zeros`, :func:`ferrograd.arange`, :func:`ferrograd.randn`,
/// ...). ``Tensor(*sizes)`` and ``Tensor(data)`` are the legacy
/// constructors: a zero-filled float tensor of that shape, or ``data`` as a
/// float tensor. Tensors live on the CPU; dtypes are the float, complex,
/// integer and bool types listed in :class:`ferrograd.dtype`.
///
/// Example:
///     >>> x = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
///     >>> x.shape, x.dtype, x.stride()
///     (ferrograd.Size([2, 2]), ferrograd.float32, (2, 1))
///     >>> loss = (x * x).sum()
///     >>> loss.backward()
///     >>> x.grad
///     tensor([[2., 4.],
///             [6., 8.]])
// One Python object per tensor: see Note [Python objects of tensors].
#[pyclass(name = "Tensor", module = "ferrograd", frozen, weakref, subclass, dict)]
pub struct PyTensor {
    pub t: Tensor,
    /// This object's address once it is the tensor's registered object
    /// (null before), so that `Drop` clears only its own registration.
    me: AtomicPtr<ffi::PyObject>,
}

// Note [Python objects of tensors]
// A tensor's binding slot holds the address of its Python object, without
// owning it; `wrap` hands out that object while it is alive, so every
// route from Rust back to Python (`.grad`, `grad_fn.variable`, `_base`,
// hooks, saved tensors, tangents) returns the same object. The object owns
// the tensor; the tensor does not own a plain object, which is freed as soon
// as Python lets go of it (the next `wrap` makes a new one). The address is
// read and written only with the GIL held, and `Drop` (which runs in the
// object's deallocation, GIL held) clears it, so an address in the slot
// always points to an object whose memory is still valid; one whose
// reference count already fell to zero is being deallocated and is never
// handed out again.
//
// What Python attaches to a tensor lives as long as the tensor, in the
// slot's kept value ([`PyState`]): the object's `__dict__` once an
// attribute is set (a later object of the same tensor gets the same dict),
// and an instance of a Python subclass, which keeps its class that way.
// Both can form cycles through the tensor (attributes naming the tensor,
// the instance owning its tensor), which the garbage collector breaks:
// `__traverse__` reports the kept references only while the object holds
// the only handle of its tensor (nothing in Rust can reach the tensor
// then), and `__clear__` drops them. An object keeping nothing is in no
// cycle and is untracked, so collections skip it.
//
// Attribute reads stay Python's generic lookup (an own `__getattr__` would
// cost every method call a bound-method object); only writes are
// intercepted.

/// What a tensor keeps of its Python side (Note [Python objects of
/// tensors]).
#[derive(Default)]
struct PyState {
    /// The `__dict__` holding the attributes set on the tensor.
    attrs: Option<Py<PyAny>>,
    /// The tensor's object, when it is an instance of a Python subclass.
    object: Option<Py<PyAny>>,
}

/// Runs `f` on the tensor's [`PyState`], made empty when there is none.
/// `f` runs with the slot locked: it must not run Python code.
fn with_state<R>(t: &Tensor, f: impl FnOnce(&mut PyState) -> R) -> R {
    t.binding_slot().with_kept(|k| {
        let k = k.get_or_insert_with(|| Box::new(PyState::default()));
        match k.downcast_mut::<PyState>() {
            Some(st) => f(st),
            None => f(&mut PyState::default()),
        }
    })
}

/// The kept attribute dict of `t`, if any.
fn kept_attrs(py: Python<'_>, t: &Tensor) -> Option<Py<PyAny>> {
    if !t.binding_slot().has_kept() {
        return None;
    }
    t.binding_slot().with_kept(|k| {
        k.as_ref()
            .and_then(|k| k.downcast_ref::<PyState>())
            .and_then(|st| st.attrs.as_ref().map(|d| d.clone_ref(py)))
    })
}

impl Drop for PyTensor {
    fn drop(&mut self) {
        let me = *self.me.get_mut();
        if !me.is_null() {
            self.t.binding_slot().clear_object(me.cast());
        }
    }
}

/// A tensor on its way to Python: converts to the tensor's one Python
/// object (see [`wrap`]). Bindings return this rather than building
/// `PyTensor` objects themselves.
pub struct TensorOut(pub Tensor);

impl From<Tensor> for TensorOut {
    fn from(t: Tensor) -> Self {
        TensorOut(t)
    }
}

impl<'py> IntoPyObject<'py> for TensorOut {
    type Target = PyTensor;
    type Output = Bound<'py, PyTensor>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyTensor>> {
        wrap(py, self.0)
    }
}

/// The registered Python object of `t`, if it is alive.
fn live_object<'py>(py: Python<'py>, t: &Tensor) -> Option<Bound<'py, PyTensor>> {
    let p = t.binding_slot().object() as *mut ffi::PyObject;
    if p.is_null() {
        return None;
    }
    // SAFETY: the GIL is held (`py`), and a registered address is cleared
    // under the GIL by the object's `Drop` before its memory is freed, so
    // `p` points to a live allocation of a `PyTensor` object (Note [Python
    // objects of tensors]). A zero count means it is being deallocated: it
    // is not taken back.
    unsafe {
        if ffi::Py_REFCNT(p) <= 0 {
            return None;
        }
        Some(Bound::from_borrowed_ptr(py, p).cast_into_unchecked())
    }
}

thread_local! {
    /// The tensor `Tensor._make_subclass` hands to `Tensor.__new__`.
    static PENDING_SUBCLASS: std::cell::RefCell<Option<Tensor>> = const { std::cell::RefCell::new(None) };
}

/// Makes `obj` the registered object of its tensor, and has the tensor keep
/// it when it is an instance of a Python subclass (`exact` is false).
fn register(obj: &Bound<'_, PyTensor>, exact: bool) {
    let me = obj.get();
    me.me.store(obj.as_ptr(), Ordering::Release);
    me.t.binding_slot().set_object(obj.as_ptr().cast());
    if !exact {
        let me = obj.clone().into_any().unbind();
        let old = with_state(&obj.get().t, |st| st.object.replace(me));
        drop(old);
    } else if !obj.get().t.binding_slot().has_kept() {
        // Nothing kept, so this object is in no cycle: the collector need
        // not look at it until something is (`track`).
        // SAFETY: the GIL is held and `obj` is a live, tracked object of a
        // garbage-collected type; untracking one that is tracked is allowed.
        unsafe { ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) };
    }
}

/// Has the collector look at `obj` again (it now keeps state that can be
/// part of a cycle).
fn track(obj: &Bound<'_, PyTensor>) {
    // SAFETY: the GIL is held and `obj` is a live object of a
    // garbage-collected type whose contents are initialised; it is tracked
    // only when it is not already.
    unsafe {
        if ffi::PyObject_GC_IsTracked(obj.as_ptr()) == 0 {
            ffi::PyObject_GC_Track(obj.as_ptr().cast());
        }
    }
}

/// The one Python object of `t`: its registered object while that is
/// alive, otherwise a new one, registered.
pub fn wrap(py: Python<'_>, t: Tensor) -> PyResult<Bound<'_, PyTensor>> {
    if let Some(obj) = live_object(py, &t) {
        return Ok(obj);
    }
    let attrs = kept_attrs(py, &t);
    let obj = Bound::new(
        py,
        PyTensor {
            t,
            me: AtomicPtr::new(std::ptr::null_mut()),
        },
    )?;
    register(&obj, true);
    if let Some(d) = attrs {
        // SAFETY: the GIL is held; both objects are alive, and the kept
        // value is a dict (set from an instance `__dict__` only).
        if unsafe { ffi::PyObject_GenericSetDict(obj.as_ptr(), d.as_ptr(), std::ptr::null_mut()) }
            < 0
        {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(obj)
}

/// [`wrap`] as an owned `PyAny`.
pub fn wrap_any(py: Python<'_>, t: Tensor) -> PyResult<Py<PyAny>> {
    Ok(wrap(py, t)?.into_any().unbind())
}

/// Has the tensor keep `obj`'s `__dict__` (Note [Python objects of
/// tensors]).
fn keep_dict(obj: &Bound<'_, PyTensor>) -> PyResult<()> {
    let py = obj.py();
    // SAFETY: the GIL is held and `obj` is alive; the call returns a new
    // reference (or null with an exception set).
    let d = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyObject_GenericGetDict(obj.as_ptr(), std::ptr::null_mut()),
        )?
    };
    let d = d.unbind();
    let old = with_state(&obj.get().t, |st| match &st.attrs {
        Some(kept) if kept.is(&d) => None,
        _ => st.attrs.replace(d),
    });
    drop(old);
    track(obj);
    Ok(())
}

/// `object.__setattr__` / `object.__delattr__` (value `None`).
fn generic_setattr(
    obj: &Bound<'_, PyTensor>,
    name: &Bound<'_, pyo3::types::PyString>,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let v = value.map_or(std::ptr::null_mut(), |v| v.as_ptr());
    // SAFETY: the GIL is held and all three pointers are valid (or null for
    // a deletion, which the C API documents).
    let r = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), v) };
    if r < 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(())
}

/// Imports a Python-side helper of the `ferrograd` package once.
pub fn py_helper<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    module: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(cell
        .get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            Ok(py.import(module)?.getattr(name)?.unbind())
        })?
        .bind(py)
        .clone())
}

fn size_obj<'py>(py: Python<'py>, dims: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    static SIZE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let cls = py_helper(py, &SIZE, "ferrograd._size", "Size")?;
    cls.call1((PyTuple::new(py, dims)?,))
}

fn dense_bytes(t: &Tensor) -> (Vec<u8>, Vec<usize>) {
    t.dense_bytes()
}

/// Rebuilds a tensor from [`dense_bytes`] output.
pub fn rebuild(data: &[u8], dtype: DType, shape: &[usize], strides: &[usize]) -> PyResult<Tensor> {
    let layout = Layout::checked(shape, strides, 0).py()?;
    if layout.numel().checked_mul(dtype.itemsize()) != Some(data.len())
        || !layout.is_non_overlapping_and_dense()
    {
        return Err(PyValueError::new_err(format!(
            "cannot rebuild a {dtype} tensor of shape {shape:?} and strides {strides:?} from {} bytes",
            data.len()
        )));
    }
    Tensor::from_parts(Storage::from_slice(data), layout, dtype).py()
}

#[pymethods]
impl PyTensor {
    /// `Tensor(data)` copies data as the default float dtype;
    /// `Tensor(2, 3)` makes an uninitialised (zero) tensor of that shape.
    #[new]
    #[pyo3(signature = (*args))]
    fn py_new(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        if args.is_empty() {
            if let Some(t) = PENDING_SUBCLASS.with(|p| p.borrow_mut().take()) {
                return Ok(PyTensor {
                    t,
                    me: AtomicPtr::new(std::ptr::null_mut()),
                });
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
        Ok(PyTensor {
            t,
            me: AtomicPtr::new(std::ptr::null_mut()),
        })
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
        let t = src.get().t.detach();
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
            && live_object(slf.py(), &slf.get().t).is_none()
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
        if self.me.load(Ordering::Acquire).is_null() || self.t.handle_count() != 1 {
            return Ok(());
        }
        let state = self.t.binding_slot().try_with_kept(|k| {
            let Some(st) = k.and_then(|k| k.downcast_ref::<PyState>()) else {
                return Ok(());
            };
            visit.call(&st.attrs)?;
            visit.call(&st.object)
        });
        state.unwrap_or(Ok(()))
    }

    fn __clear__(&self) {
        if !self.me.load(Ordering::Acquire).is_null() && self.t.handle_count() == 1 {
            drop(self.t.binding_slot().take_kept());
        }
    }

    /// The size of each dim, as a :class:`ferrograd.Size` (a tuple of ints).
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2, 3).shape
    ///     ferrograd.Size([2, 3])
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        size_obj(py, self.t.shape())
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
            None => size_obj(py, self.t.shape()),
            Some(d) => Ok(self.t.size(d).py()?.into_pyobject(py)?.into_any()),
        }
    }

    /// The number of dims (0 for a scalar tensor).
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2, 3).dim()
    ///     2
    fn dim(&self) -> usize {
        self.t.ndim()
    }
    /// The number of dims; same as :meth:`dim`.
    #[getter]
    fn ndim(&self) -> usize {
        self.t.ndim()
    }
    /// Alias for :meth:`Tensor.dim`.
    fn ndimension(&self) -> usize {
        self.t.ndim()
    }
    /// The number of elements (the product of the shape).
    ///
    /// See :func:`ferrograd.numel`.
    fn numel(&self) -> usize {
        self.t.numel()
    }
    /// Alias for :meth:`Tensor.numel`.
    fn nelement(&self) -> usize {
        self.t.numel()
    }
    /// The size of one element in bytes.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2).element_size(), ferrograd.zeros(2, dtype=ferrograd.float64).element_size()
    ///     (4, 8)
    fn element_size(&self) -> usize {
        self.t.dtype().itemsize()
    }
    /// The size of one element in bytes; same as :meth:`element_size`.
    #[getter]
    fn itemsize(&self) -> usize {
        self.t.dtype().itemsize()
    }
    /// The size of the elements in bytes, ``numel() * element_size()``.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2, 3).nbytes
    ///     24
    #[getter]
    fn nbytes(&self) -> usize {
        self.t.numel() * self.t.dtype().itemsize()
    }
    /// The element type, a :class:`ferrograd.dtype`.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).dtype, ferrograd.tensor([1.0]).dtype
    ///     (ferrograd.int64, ferrograd.float32)
    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType { dt: self.t.dtype() }
    }
    /// The device holding the tensor: always ``device(type='cpu')``.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(1).device
    ///     device(type='cpu')
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice {}
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
            None => Ok(PyTuple::new(py, self.t.strides())?.into_any()),
            Some(d) => Ok(self.t.stride(d).py()?.into_pyobject(py)?.into_any()),
        }
    }
    /// The position of the first element in the memory this tensor views, in elements.
    ///
    /// Example:
    ///     >>> t = ferrograd.arange(6)
    ///     >>> t[2:].storage_offset(), t.view(2, 3)[1].storage_offset()
    ///     (2, 3)
    fn storage_offset(&self) -> usize {
        self.t.offset()
    }
    /// Whether the elements are laid out in row-major order without gaps.
    ///
    /// Args:
    ///     memory_format: accepted for compatibility; only the default
    ///         (row-major) format is checked.
    ///
    /// Example:
    ///     >>> t = ferrograd.zeros(2, 3)
    ///     >>> t.is_contiguous(), t.t().is_contiguous()
    ///     (True, False)
    #[pyo3(signature = (memory_format = None))]
    fn is_contiguous(&self, memory_format: Option<&Bound<'_, PyAny>>) -> bool {
        let _ = memory_format;
        self.t.is_contiguous()
    }
    /// ``self`` if it is contiguous, else a row-major copy of it.
    ///
    /// The copy is recorded by autograd like :meth:`clone`.
    ///
    /// Args:
    ///     memory_format: accepted for compatibility; ignored.
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
        let _ = memory_format;
        let me = slf.get();
        if me.t.is_contiguous() {
            return Ok(slf.clone().into_any().unbind());
        }
        let py = slf.py();
        let t = nogil_ok(py, me.t.numel(), || me.t.copy())?;
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
        self.t.data_ptr()
    }
    /// Whether the dtype is a floating point type (float16, bfloat16, float32, float64).
    ///
    /// See :func:`ferrograd.is_floating_point`.
    fn is_floating_point(&self) -> bool {
        self.t.dtype().is_floating_point()
    }
    /// Whether the dtype is a complex type (complex64, complex128).
    ///
    /// See :func:`ferrograd.is_complex`.
    fn is_complex(&self) -> bool {
        self.t.dtype().is_complex()
    }
    /// Whether the dtype can hold negative values (False for ``uint8`` and ``bool``).
    ///
    /// Example:
    ///     >>> ferrograd.zeros(1).is_signed(), ferrograd.zeros(1, dtype=ferrograd.uint8).is_signed()
    ///     (True, False)
    fn is_signed(&self) -> bool {
        self.t.dtype().is_signed()
    }

    /// The value of a one-element tensor as a Python number (or bool).
    ///
    /// Raises a RuntimeError for a tensor of more than one element.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([3.5]).item()
    ///     3.5
    ///     >>> ferrograd.tensor([[7]]).item()
    ///     7
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        scalar_to_py(py, self.t.item().py()?)
    }
    /// The values as nested Python lists of numbers (a number for a 0-dim tensor).
    ///
    /// Example:
    ///     >>> ferrograd.tensor([[1, 2], [3, 4]]).tolist()
    ///     [[1, 2], [3, 4]]
    ///     >>> ferrograd.tensor(2.5).tolist()
    ///     2.5
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_list(py, &self.t)
    }

    /// A NumPy array sharing this tensor's memory (no copy).
    ///
    /// Writes through either are seen by both. A tensor that requires grad
    /// raises unless ``force=True`` (which converts its :meth:`detach`);
    /// bfloat16 tensors have no NumPy dtype and raise (use
    /// ``t.float().numpy()``).
    ///
    /// Keyword args:
    ///     force (bool): allow tensors that require grad. Default: False.
    ///
    /// Example:
    ///     >>> t = ferrograd.tensor([1.0, 2.0])
    ///     >>> a = t.numpy()
    ///     >>> a[0] = 7
    ///     >>> t
    ///     tensor([7., 2.])
    #[pyo3(signature = (*, force = false))]
    fn numpy<'py>(slf: &Bound<'py, Self>, force: bool) -> PyResult<Bound<'py, PyAny>> {
        let me = slf.get();
        if me.t.requires_grad() && !force {
            return Err(PyRuntimeError::new_err(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
            ));
        }
        if me.t.dtype() == DType::BFloat16 {
            return Err(PyTypeError::new_err("Got unsupported ScalarType BFloat16"));
        }
        let np = slf.py().import("numpy")?;
        if force && me.t.requires_grad() {
            let d = wrap(slf.py(), me.t.detach())?;
            return np.call_method1("asarray", (d,));
        }
        np.call_method1("asarray", (slf,))
    }

    /// Above NumPy's own, so `np.float64(2) * t` and `np.float32(1) + t`
    /// defer to the tensor's reflected operator (a tensor result with its
    /// graph) as with torch, rather than converting the tensor to an array.
    #[classattr]
    fn __array_priority__() -> i64 {
        1000
    }

    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.t.requires_grad() {
            return Err(PyRuntimeError::new_err(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
            ));
        }
        if self.t.dtype() == DType::BFloat16 {
            // NumPy has no bfloat16: without this attribute NumPy falls
            // back to `__array__`, which widens to float32.
            return Err(pyo3::exceptions::PyAttributeError::new_err(
                "bfloat16 tensors have no NumPy memory layout; np.asarray widens them to float32",
            ));
        }
        array_interface(py, &self.t)
    }

    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let np = slf.py().import("numpy")?;
        let arr = if slf.get().t.dtype() == DType::BFloat16 {
            // NumPy has no bfloat16: a float32 copy (exact).
            let wide = wrap(slf.py(), slf.get().t.detach().to_dtype(DType::Float32))?;
            np.call_method1("asarray", (wide,))?
        } else {
            Self::numpy(slf, false)?
        };
        let arr = match dtype {
            Some(d) if !d.is_none() => arr.call_method1("astype", (d,))?,
            _ => arr,
        };
        if copy == Some(true) {
            return np.call_method1("array", (arr,));
        }
        Ok(arr)
    }

    /// A copy of this tensor with its own memory.
    ///
    /// The copy is differentiable (gradients flow back to ``self``) and keeps the
    /// strides of a dense layout (a transposed tensor's clone is transposed
    /// too); use :meth:`contiguous` for row-major order.
    ///
    /// Keyword args:
    ///     memory_format: accepted for compatibility; ignored.
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
        let _ = memory_format;
        let t = &self.t;
        let out = nogil_ok(py, t.numel(), || t.clone_preserving_strides())?;
        Ok(out.into())
    }

    /// This tensor converted to another dtype (device arguments are checked only).
    ///
    /// Accepted forms: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
    /// ``to(other)`` (``other``'s dtype), and the keywords. The result is
    /// ``self`` when nothing changes and ``copy`` is False; otherwise a new
    /// tensor (differentiable between floating and complex dtypes). Only the
    /// CPU exists: another device raises a RuntimeError.
    ///
    /// Args:
    ///     *args: a dtype, a device (``"cpu"`` or :class:`ferrograd.device`) or a tensor.
    ///
    /// Keyword args:
    ///     dtype (dtype, optional): the target dtype.
    ///     device (str or device, optional): the target device (CPU only).
    ///     copy (bool): always return a new tensor. Default: False.
    ///     non_blocking (bool): accepted for compatibility; ignored.
    ///
    /// Example:
    ///     >>> t = ferrograd.tensor([1.5, 2.5])
    ///     >>> t.to(ferrograd.int64)
    ///     tensor([1, 2])
    ///     >>> t.to("cpu") is t
    ///     True
    ///     >>> t.to(ferrograd.zeros(1, dtype=ferrograd.float64))
    ///     tensor([1.5000, 2.5000], dtype=ferrograd.float64)
    #[pyo3(signature = (*args, dtype = None, device = None, copy = false, non_blocking = false))]
    fn to(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        dtype: Option<&Bound<'_, PyAny>>,
        device: Option<&Bound<'_, PyAny>>,
        copy: bool,
        non_blocking: bool,
    ) -> PyResult<Py<PyAny>> {
        let _ = non_blocking;
        crate::dtype::check_device(device)?;
        let mut target = crate::dtype::parse_opt_dtype(dtype)?;
        for a in args.iter() {
            if let Ok(other) = a.cast::<PyTensor>() {
                target = Some(other.get().t.dtype());
            } else if let Ok(d) = parse_dtype(&a) {
                target = Some(d);
            } else {
                crate::dtype::check_device(Some(&a))?;
            }
        }
        let me = slf.get();
        let py = slf.py();
        let dt = target.unwrap_or(me.t.dtype());
        if dt == me.t.dtype() && !copy {
            return Ok(slf.clone().into_any().unbind());
        }
        let t = nogil_ok(py, me.t.numel(), || {
            if dt == me.t.dtype() {
                me.t.copy()
            } else {
                me.t.to_dtype(dt)
            }
        })?;
        wrap_any(py, t)
    }

    /// The type name as a string, or this tensor converted to another type.
    ///
    /// With no argument, returns torch's legacy type name (``'torch.FloatTensor'``
    /// for float32). With a dtype, a type name string or a legacy type such as
    /// :class:`ferrograd.DoubleTensor`, converts like :meth:`to`.
    ///
    /// Args:
    ///     dtype (dtype, str or type, optional): the target type.
    ///
    /// Example:
    ///     >>> t = ferrograd.tensor([1.5, 2.5])
    ///     >>> t.type()
    ///     'torch.FloatTensor'
    ///     >>> t.type(ferrograd.int32)
    ///     tensor([1, 2], dtype=ferrograd.int32)
    ///     >>> t.type("torch.DoubleTensor")
    ///     tensor([1.5000, 2.5000], dtype=ferrograd.float64)
    #[pyo3(signature = (dtype = None))]
    fn r#type(slf: &Bound<'_, Self>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        match dtype {
            // torch's names, so `x.type() == 'torch.FloatTensor'` holds.
            None => Ok(
                format!("torch.{}Tensor", slf.get().t.dtype().scalar_type_name())
                    .into_pyobject(slf.py())?
                    .into_any()
                    .unbind(),
            ),
            Some(d) => match d.cast::<PyString>() {
                Ok(name) => cast_to(slf, crate::dtype::parse_type_name(&name.to_cow()?)?),
                Err(_) => cast_to(slf, parse_dtype(d)?),
            },
        }
    }

    /// ``self.to(ferrograd.float32)``: this tensor converted to ``ferrograd.float32`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).float()
    ///     tensor([1., 2.])
    fn float(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Float32)
    }
    /// ``self.to(ferrograd.float64)``: this tensor converted to ``ferrograd.float64`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).double()
    ///     tensor([1., 2.], dtype=ferrograd.float64)
    fn double(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Float64)
    }
    /// ``self.to(ferrograd.int64)``: this tensor converted to ``ferrograd.int64`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).long()
    ///     tensor([ 1, -2])
    fn long(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int64)
    }
    /// ``self.to(ferrograd.int32)``: this tensor converted to ``ferrograd.int32`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).int()
    ///     tensor([ 1, -2], dtype=ferrograd.int32)
    fn int(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int32)
    }
    /// ``self.to(ferrograd.bool)``: this tensor converted to ``ferrograd.bool`` (``self`` if it already is).
    ///
    /// Nonzero values become True.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([0.0, 2.0]).bool()
    ///     tensor([False,  True])
    fn bool(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Bool)
    }
    /// ``self.to(ferrograd.float16)``: this tensor converted to ``ferrograd.float16`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).half()
    ///     tensor([1., 2.], dtype=ferrograd.float16)
    fn half(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Float16)
    }
    /// ``self.to(ferrograd.bfloat16)``: this tensor converted to ``ferrograd.bfloat16`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).bfloat16()
    ///     tensor([1., 2.], dtype=ferrograd.bfloat16)
    fn bfloat16(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::BFloat16)
    }
    /// ``self.to(ferrograd.complex64)``: this tensor converted to ``ferrograd.complex64`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).cfloat()
    ///     tensor([1.+0.j, 2.+0.j])
    fn cfloat(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Complex64)
    }
    /// ``self.to(ferrograd.complex128)``: this tensor converted to ``ferrograd.complex128`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).cdouble()
    ///     tensor([1.+0.j, 2.+0.j], dtype=ferrograd.complex128)
    fn cdouble(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Complex128)
    }
    /// ``self.to(ferrograd.int16)``: this tensor converted to ``ferrograd.int16`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).short()
    ///     tensor([ 1, -2], dtype=ferrograd.int16)
    fn short(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int16)
    }
    /// ``self.to(ferrograd.int8)``: this tensor converted to ``ferrograd.int8`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).char()
    ///     tensor([ 1, -2], dtype=ferrograd.int8)
    fn char(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int8)
    }
    /// ``self.to(ferrograd.uint8)``: this tensor converted to ``ferrograd.uint8`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, 2.7]).byte()
    ///     tensor([1, 2], dtype=ferrograd.uint8)
    fn byte(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::UInt8)
    }
    /// ``self.to(other.dtype)``: this tensor converted to ``other``'s dtype.
    ///
    /// Args:
    ///     other (Tensor): the tensor whose dtype to take.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).type_as(ferrograd.zeros(1))
    ///     tensor([1., 2.])
    fn type_as(slf: &Bound<'_, Self>, other: PyRef<'_, PyTensor>) -> PyResult<Py<PyAny>> {
        cast_to(slf, other.t.dtype())
    }
    /// Returns ``self``: every ferrograd tensor is already on the CPU.
    fn cpu(slf: &Bound<'_, Self>) -> Py<PyAny> {
        slf.clone().into_any().unbind()
    }

    fn __len__(&self) -> PyResult<usize> {
        if self.t.ndim() == 0 {
            return Err(PyTypeError::new_err("len() of a 0-d tensor"));
        }
        Ok(self.t.shape()[0])
    }

    fn __iter__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let t = &slf.get().t;
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
        if slf.get().t.ndim() == 0 {
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
        if self.t.numel() != 1 {
            return Err(PyRuntimeError::new_err(format!(
                "Boolean value of Tensor with more than one value is ambiguous (shape {:?})",
                self.t.shape()
            )));
        }
        Ok(self.t.item().py()?.to_bool())
    }
    fn __float__(&self) -> PyResult<f64> {
        real_value(&self.t, "double").map(|s| s.to_f64())
    }
    fn __int__(&self) -> PyResult<i64> {
        real_value(&self.t, "int64_t").map(|s| s.to_i64())
    }
    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let z = one_value(&self.t)?.to_complex();
        Ok(crate::convert::complex_to_py(py, z))
    }
    fn __index__(&self) -> PyResult<i64> {
        if self.t.dtype().is_differentiable() || self.t.numel() != 1 {
            return Err(PyTypeError::new_err(
                "only integer tensors of a single element can be converted to an index",
            ));
        }
        Ok(self.t.item().py()?.to_i64())
    }
    fn __hash__(&self) -> usize {
        self.t.id()
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
        self.t.requires_grad()
    }
    #[setter(requires_grad)]
    fn set_requires_grad(&self, value: bool) -> PyResult<()> {
        self.t.set_requires_grad(value).py()
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
        slf.get().t.set_requires_grad(requires_grad).py()?;
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
        self.t.version()
    }
    #[getter]
    fn _base(&self) -> Option<TensorOut> {
        self.t.base().cloned().map(TensorOut)
    }
    fn _is_view(&self) -> bool {
        self.t.is_view()
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
    fn detach(&self) -> TensorOut {
        let _span = ferrograd::profiler::op("aten::detach", &[&self.t]);
        TensorOut(self.t.detach())
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
        TensorOut(self.t.data())
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let (bytes, strides) = dense_bytes(&self.t);
        let f = py.import("ferrograd._core")?.getattr("_rebuild_tensor")?;
        let args = (
            PyBytes::new(py, &bytes),
            self.t.dtype().name(),
            PyTuple::new(py, self.t.shape())?,
            PyTuple::new(py, strides)?,
            self.t.requires_grad(),
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
        let out = copy(&self.t)?;
        out.set_requires_grad(self.t.requires_grad()).py()?;
        if let Some(g) = self.t.grad() {
            out.autograd().set_grad(Some(copy(&g)?));
        }
        Ok(out.into())
    }
}

fn cast_to(slf: &Bound<'_, PyTensor>, dt: DType) -> PyResult<Py<PyAny>> {
    let me = slf.get();
    if me.t.dtype() == dt {
        return Ok(slf.clone().into_any().unbind());
    }
    let py = slf.py();
    let t = nogil_ok(py, me.t.numel(), || me.t.to_dtype(dt))?;
    wrap_any(py, t)
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

fn one_value(t: &Tensor) -> PyResult<Scalar> {
    if t.numel() != 1 {
        return Err(PyTypeError::new_err(format!(
            "only one element tensors can be converted to Python scalars (got {} elements)",
            t.numel()
        )));
    }
    t.item().py()
}

/// A Python number for a scalar.
pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Bound<'_, PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => pyo3::types::PyBool::new(py, b).to_owned().into_any(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any(),
        Scalar::Float(f) => f.into_pyobject(py)?.into_any(),
        Scalar::Complex(z) => crate::convert::complex_to_py(py, z),
    })
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

/// Extracts a tensor operand or raises TypeError (re-exported for modules).
pub fn arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Tensor> {
    tensor_arg(obj, what)
}
