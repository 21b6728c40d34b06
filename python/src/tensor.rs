//! The `ferrograd.Tensor` class and its objects: one Python object per
//! tensor (Note [Python objects of tensors]), handing tensors to Python
//! (`wrap`, `TensorOut`) and releasing the GIL around kernels (`nogil`).
//! The methods are added by `#[pymethods]` blocks in the sibling modules
//! (`tensor_methods.rs` for the class's own, then one per area).

use crate::errors::{catch_panic, detached, FromPanic, IntoPyResult};
use ferrograd::{DType, Layout, Storage, Tensor};
use parking_lot::Mutex;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Work (in elements) above which a binding releases the GIL around the
/// kernel; below it, detaching costs more than it saves.
pub const NOGIL_MIN_ELEMS: usize = 1 << 12;

/// Runs `f` with the GIL released when `work` is large; a panic inside it
/// becomes an error (see Note [Panics at the binding's edge]).
#[inline]
pub fn nogil<T: Send + FromPanic>(py: Python<'_>, work: usize, f: impl FnOnce() -> T + Send) -> T {
    if work >= NOGIL_MIN_ELEMS {
        detached(py, f)
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
    /// The tensor's current handle: replaced (never mutated) by `resize_`
    /// and `set_`, which give the tensor new memory (Note [Swapped
    /// handles]).
    cell: Mutex<Tensor>,
    /// This object's address once it is the tensor's registered object
    /// (null before), so that `Drop` clears only its own registration.
    pub(crate) me: AtomicPtr<ffi::PyObject>,
}

impl PyTensor {
    /// An object for `t`, not yet registered (see [`wrap`]).
    pub(crate) fn new(t: Tensor) -> PyTensor {
        PyTensor {
            cell: Mutex::new(t),
            me: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The tensor this object stands for.
    #[inline]
    pub fn tensor(&self) -> Tensor {
        self.cell.lock().clone()
    }

    /// How many handles its tensor has, this object's included (none
    /// cloned for the asking).
    pub(crate) fn handle_count(&self) -> usize {
        self.cell.lock().handle_count()
    }

    /// Makes this object stand for `next`, the tensor's next handle (from
    /// [`Tensor::rebound`]): its registration and what Python attached to
    /// the tensor move along. The GIL is held (`_py`).
    pub(crate) fn replace(&self, _py: Python<'_>, next: Tensor) {
        let old = std::mem::replace(&mut *self.cell.lock(), next.clone());
        if old.same(&next) {
            return;
        }
        HANDLE_EPOCH.fetch_add(1, Ordering::Relaxed);
        let kept = old.binding_slot().take_kept();
        if kept.is_some() {
            next.binding_slot().with_kept(|k| *k = kept);
        }
        let me = self.me.load(Ordering::Acquire);
        if !me.is_null() && old.binding_slot().clear_object(me.cast()) {
            next.binding_slot().set_object(me.cast());
        }
        drop(old);
    }
}

/// Counts handle swaps (`replace`): `ferrograd.compile` rechecks the
/// tensors its programs read by reference only when it moved.
pub(crate) static HANDLE_EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

// Note [Swapped handles]
// A core tensor's layout and storage never change, yet `resize_` and
// `set_` change them for every Python name bound to the tensor. The object
// therefore holds its tensor in a cell and reads it by cloning the handle
// (`tensor()`); those two methods put the tensor's next handle in the cell
// (`replace`). A method that read the old handle keeps a live clone of it
// until it returns, so no borrow ever dangles; it simply finishes on the
// memory it started with, as a kernel running on another thread would.

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
pub(crate) struct PyState {
    /// The `__dict__` holding the attributes set on the tensor.
    pub(crate) attrs: Option<Py<PyAny>>,
    /// The tensor's object, when it is an instance of a Python subclass.
    pub(crate) object: Option<Py<PyAny>>,
}

/// Runs `f` on the tensor's [`PyState`], made empty when there is none.
/// `f` runs with the slot locked: it must not run Python code.
pub(crate) fn with_state<R>(t: &Tensor, f: impl FnOnce(&mut PyState) -> R) -> R {
    t.binding_slot().with_kept(|k| {
        let k = k.get_or_insert_with(|| Box::new(PyState::default()));
        match k.downcast_mut::<PyState>() {
            Some(st) => f(st),
            None => f(&mut PyState::default()),
        }
    })
}

/// The kept attribute dict of `t`, if any.
pub(crate) fn kept_attrs(py: Python<'_>, t: &Tensor) -> Option<Py<PyAny>> {
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
            self.tensor().binding_slot().clear_object(me.cast());
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
pub(crate) fn live_object<'py>(py: Python<'py>, t: &Tensor) -> Option<Bound<'py, PyTensor>> {
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
    pub(crate) static PENDING_SUBCLASS: std::cell::RefCell<Option<Tensor>> = const { std::cell::RefCell::new(None) };
}

/// Makes `obj` the registered object of its tensor, and has the tensor keep
/// it when it is an instance of a Python subclass (`exact` is false).
pub(crate) fn register(obj: &Bound<'_, PyTensor>, exact: bool) {
    let me = obj.get();
    me.me.store(obj.as_ptr(), Ordering::Release);
    me.tensor().binding_slot().set_object(obj.as_ptr().cast());
    if !exact {
        let me = obj.clone().into_any().unbind();
        let old = with_state(&obj.get().tensor(), |st| st.object.replace(me));
        drop(old);
    } else if !obj.get().tensor().binding_slot().has_kept() {
        // Nothing kept, so this object is in no cycle: the collector need
        // not look at it until something is (`track`).
        // SAFETY: the GIL is held and `obj` is a live, tracked object of a
        // garbage-collected type; untracking one that is tracked is allowed.
        unsafe { ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) };
    }
}

/// Has the collector look at `obj` again (it now keeps state that can be
/// part of a cycle).
pub(crate) fn track(obj: &Bound<'_, PyTensor>) {
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
    let obj = Bound::new(py, PyTensor::new(t))?;
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
pub(crate) fn keep_dict(obj: &Bound<'_, PyTensor>) -> PyResult<()> {
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
    let old = with_state(&obj.get().tensor(), |st| match &st.attrs {
        Some(kept) if kept.is(&d) => None,
        _ => st.attrs.replace(d),
    });
    drop(old);
    track(obj);
    Ok(())
}

/// `object.__setattr__` / `object.__delattr__` (value `None`).
pub(crate) fn generic_setattr(
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

pub(crate) fn size_obj<'py>(py: Python<'py>, dims: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    static SIZE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let cls = py_helper(py, &SIZE, "ferrograd._size", "Size")?;
    cls.call1((PyTuple::new(py, dims)?,))
}

pub(crate) fn dense_bytes(t: &Tensor) -> (Vec<u8>, Vec<usize>) {
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
