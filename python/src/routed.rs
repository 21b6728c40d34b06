//! Module functions that `vmap` can take over.
//!
//! `ferrograd.sin`, `ferrograd.cat`, `nn.functional.relu`... are each a
//! `routed_function` around the implementation. While no `vmap` runs
//! anywhere in the process, a call goes straight to the implementation
//! (one counter load on the way); while one runs, it goes to the batching
//! dispatcher instead, which handles batched arguments and random ops and
//! calls the implementation for everything else (the dispatcher is made
//! on the first such call, by a factory). The decision is taken
//! at call time, so a name bound before `vmap` (`from ferrograd import
//! sin`) is batched like the module attribute.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyTuple, PyType};
use std::ffi::{c_char, c_int, c_void};
use std::mem::offset_of;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many `vmap` calls are running (on any thread).
static VMAP_ACTIVE: AtomicUsize = AtomicUsize::new(0);

type VectorcallFunc = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    usize,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

unsafe extern "C" {
    // Exported by CPython from 3.11 on (in the stable ABI from 3.12); the
    // module requires 3.11.
    fn PyObject_Vectorcall(
        callable: *mut ffi::PyObject,
        args: *const *mut ffi::PyObject,
        nargsf: usize,
        kwnames: *mut ffi::PyObject,
    ) -> *mut ffi::PyObject;
    fn PyVectorcall_Call(
        callable: *mut ffi::PyObject,
        tuple: *mut ffi::PyObject,
        dict: *mut ffi::PyObject,
    ) -> *mut ffi::PyObject;
}

/// A `routed_function`: calls `implementation` outside `vmap` and the
/// dispatcher `make_route()` returns inside it.
///
/// A plain type with the vectorcall protocol, so a call costs one counter
/// load and one forwarded vectorcall (pyo3 classes are called through
/// argument tuples, which costs several times more). It behaves as a
/// builtin function: `__name__`, `__doc__`, `__qualname__` and
/// `__module__` live in its `__dict__` (set by the Python side from the
/// implementation), `__wrapped__` is the implementation (so
/// `inspect.signature` describes it), and it does not bind as a method
/// when stored on a class.
#[repr(C)]
struct Routed {
    ob_base: ffi::PyObject,
    vectorcall: VectorcallFunc,
    implementation: *mut ffi::PyObject,
    make_route: *mut ffi::PyObject,
    /// The dispatcher, made on the first call inside `vmap` (null before).
    route: *mut ffi::PyObject,
    dict: *mut ffi::PyObject,
    /// The autocast policy of the function (`_autocast`; 0: none, else an
    /// `autocast::Policy`).
    autocast: ffi::Py_ssize_t,
}

/// The Python function that applies autocast's casts,
/// `hook(kind, target, *args, **kwargs)` (`_set_autocast_hook`).
static AUTOCAST_HOOK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Calls `hook(kind, target, *args, **kwargs)` with the caller's vector.
///
/// # Safety
/// The GIL is held; `target` is live and `args`/`kwnames` are a valid
/// vectorcall argument vector.
unsafe fn autocast_call(
    kind: ffi::Py_ssize_t,
    target: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: see the function's contract.
    unsafe {
        let py = Python::assume_attached();
        let Some(hook) = AUTOCAST_HOOK.get(py) else {
            return PyObject_Vectorcall(target, args, nargsf, kwnames);
        };
        // The count without PY_VECTORCALL_ARGUMENTS_OFFSET (the top bit).
        let nargs = nargsf & !(1usize << (usize::BITS - 1));
        let nkw = if kwnames.is_null() {
            0
        } else {
            ffi::PyTuple_Size(kwnames) as usize
        };
        let kind_obj = ffi::PyLong_FromSsize_t(kind);
        if kind_obj.is_null() {
            return ptr::null_mut();
        }
        let mut full: Vec<*mut ffi::PyObject> = Vec::with_capacity(nargs + nkw + 2);
        full.push(kind_obj);
        full.push(target);
        full.extend_from_slice(std::slice::from_raw_parts(args, nargs + nkw));
        let out = PyObject_Vectorcall(hook.as_ptr(), full.as_ptr(), nargs + 2, kwnames);
        ffi::Py_DECREF(kind_obj);
        out
    }
}

unsafe extern "C" fn routed_call(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this with a live `Routed` (the type's
    // vectorcall slot) and the GIL held; `args`/`kwnames` are passed on
    // unchanged, so the callee sees the caller's own vector.
    unsafe {
        let me = callable as *mut Routed;
        let target = if VMAP_ACTIVE.load(Ordering::Relaxed) == 0 {
            (*me).implementation
        } else {
            if (*me).route.is_null() {
                let made = ffi::PyObject_CallNoArgs((*me).make_route);
                if made.is_null() {
                    return ptr::null_mut();
                }
                if (*me).route.is_null() {
                    (*me).route = made;
                } else {
                    ffi::Py_DECREF(made);
                }
            }
            (*me).route
        };
        if (*me).autocast != 0 && crate::autocast::active() {
            return autocast_call((*me).autocast, target, args, nargsf, kwnames);
        }
        PyObject_Vectorcall(target, args, nargsf, kwnames)
    }
}

unsafe extern "C" fn routed_new(
    subtype: *mut ffi::PyTypeObject,
    args: *mut ffi::PyObject,
    kwargs: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: called by CPython for `routed_function(implementation,
    // make_route)` with the GIL held; every pointer stored is a new
    // reference released in `routed_dealloc`.
    unsafe {
        if !kwargs.is_null() && ffi::PyDict_Size(kwargs) != 0 {
            ffi::PyErr_SetString(
                ffi::PyExc_TypeError,
                c"routed_function() takes no keyword arguments".as_ptr(),
            );
            return ptr::null_mut();
        }
        let mut implementation: *mut ffi::PyObject = ptr::null_mut();
        let mut make_route: *mut ffi::PyObject = ptr::null_mut();
        if ffi::PyArg_UnpackTuple(
            args,
            c"routed_function".as_ptr(),
            2,
            2,
            &mut implementation as *mut *mut ffi::PyObject,
            &mut make_route as *mut *mut ffi::PyObject,
        ) == 0
        {
            return ptr::null_mut();
        }
        if ffi::PyCallable_Check(implementation) == 0 || ffi::PyCallable_Check(make_route) == 0 {
            ffi::PyErr_SetString(
                ffi::PyExc_TypeError,
                c"routed_function(implementation, make_route): both must be callable".as_ptr(),
            );
            return ptr::null_mut();
        }
        let obj = ffi::PyType_GenericAlloc(subtype, 0);
        if obj.is_null() {
            return ptr::null_mut();
        }
        let me = obj as *mut Routed;
        (*me).vectorcall = routed_call;
        ffi::Py_INCREF(implementation);
        (*me).implementation = implementation;
        ffi::Py_INCREF(make_route);
        (*me).make_route = make_route;
        (*me).route = ptr::null_mut();
        (*me).dict = ptr::null_mut();
        (*me).autocast = 0;
        obj
    }
}

unsafe extern "C" fn routed_dealloc(obj: *mut ffi::PyObject) {
    // SAFETY: `obj` is a `Routed` whose refcount reached zero; its fields
    // are owned references (or null).
    unsafe {
        let me = obj as *mut Routed;
        for field in [
            (*me).implementation,
            (*me).make_route,
            (*me).route,
            (*me).dict,
        ] {
            if !field.is_null() {
                ffi::Py_DECREF(field);
            }
        }
        let tp = ffi::Py_TYPE(obj);
        let free = ffi::PyType_GetSlot(tp, ffi::Py_tp_free);
        let free: unsafe extern "C" fn(*mut c_void) = std::mem::transmute(free);
        free(obj as *mut c_void);
        ffi::Py_DECREF(tp as *mut ffi::PyObject);
    }
}

unsafe extern "C" fn routed_get(
    obj: *mut ffi::PyObject,
    _instance: *mut ffi::PyObject,
    _owner: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: returns a new reference to the live descriptor itself.
    unsafe {
        ffi::Py_INCREF(obj);
    }
    obj
}

unsafe extern "C" fn routed_repr(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `obj` is a live `Routed`; its implementation is non-null.
    unsafe { ffi::PyObject_Repr((*(obj as *mut Routed)).implementation) }
}

unsafe extern "C" fn routed_reduce(
    obj: *mut ffi::PyObject,
    _unused: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // Pickled by name, as module functions are.
    // SAFETY: `obj` is a live `Routed`.
    unsafe { ffi::PyObject_GetAttrString(obj, c"__name__".as_ptr()) }
}

fn member(name: &'static std::ffi::CStr, type_code: c_int, offset: usize) -> ffi::PyMemberDef {
    ffi::PyMemberDef {
        name: name.as_ptr(),
        type_code,
        offset: offset as ffi::Py_ssize_t,
        flags: ffi::Py_READONLY,
        doc: ptr::null(),
    }
}

fn writable(member: ffi::PyMemberDef) -> ffi::PyMemberDef {
    ffi::PyMemberDef { flags: 0, ..member }
}

fn slot(slot: c_int, pfunc: *mut c_void) -> ffi::PyType_Slot {
    ffi::PyType_Slot { slot, pfunc }
}

/// Creates the `routed_function` type (once, at module initialisation;
/// the tables it points to live as long as the process).
fn routed_type(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let members: &'static mut [ffi::PyMemberDef] = Box::leak(Box::new([
        member(
            c"__vectorcalloffset__",
            ffi::Py_T_PYSSIZET,
            offset_of!(Routed, vectorcall),
        ),
        member(
            c"__dictoffset__",
            ffi::Py_T_PYSSIZET,
            offset_of!(Routed, dict),
        ),
        member(
            c"__wrapped__",
            ffi::Py_T_OBJECT_EX,
            offset_of!(Routed, implementation),
        ),
        writable(member(
            c"_autocast",
            ffi::Py_T_PYSSIZET,
            offset_of!(Routed, autocast),
        )),
        ffi::PyMemberDef::default(),
    ]));
    let methods: &'static mut [ffi::PyMethodDef] = Box::leak(Box::new([
        ffi::PyMethodDef {
            ml_name: c"__reduce__".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: routed_reduce,
            },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: ptr::null(),
        },
        ffi::PyMethodDef::zeroed(),
    ]));
    let doc: &'static std::ffi::CStr = c"A module function that vmap can take over: it calls its implementation (__wrapped__) outside vmap and the batching dispatcher while a vmap runs.";
    let slots: &'static mut [ffi::PyType_Slot] = Box::leak(Box::new([
        slot(ffi::Py_tp_new, routed_new as *mut c_void),
        slot(ffi::Py_tp_dealloc, routed_dealloc as *mut c_void),
        slot(ffi::Py_tp_call, PyVectorcall_Call as *mut c_void),
        slot(ffi::Py_tp_descr_get, routed_get as *mut c_void),
        slot(ffi::Py_tp_repr, routed_repr as *mut c_void),
        slot(ffi::Py_tp_members, members.as_mut_ptr() as *mut c_void),
        slot(ffi::Py_tp_methods, methods.as_mut_ptr() as *mut c_void),
        slot(ffi::Py_tp_doc, doc.as_ptr() as *mut c_void),
        slot(0, ptr::null_mut()),
    ]));
    let spec: &'static mut ffi::PyType_Spec = Box::leak(Box::new(ffi::PyType_Spec {
        name: c"ferrograd._core.routed_function".as_ptr() as *const c_char,
        basicsize: std::mem::size_of::<Routed>() as c_int,
        itemsize: 0,
        // Py_TPFLAGS_HAVE_VECTORCALL (1 << 11): the vectorcall slot above.
        flags: (ffi::Py_TPFLAGS_DEFAULT | (1 << 11)) as _,
        slots: slots.as_mut_ptr(),
    }));
    // SAFETY: the spec and its tables are 'static; the GIL is held.
    unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyType_FromSpec(spec)) }
}

/// The batched tensor class and the Python function that runs a method on
/// batched arguments (`_set_batched_dispatch`).
static BATCHED: PyOnceLock<(Py<PyType>, Py<PyAny>)> = PyOnceLock::new();

/// `_set_batched_dispatch(cls, dispatch)`: methods of unbatched tensors
/// that receive an instance of `cls` while a vmap runs call
/// `dispatch(name, args)` (see [`batched_method`]).
#[pyfunction]
fn _set_batched_dispatch(
    py: Python<'_>,
    cls: Bound<'_, PyType>,
    dispatch: Py<PyAny>,
) -> PyResult<()> {
    BATCHED.set(py, (cls.unbind(), dispatch)).map_err(|_| {
        pyo3::exceptions::PyRuntimeError::new_err("the batched dispatch is already set")
    })
}

/// A method `name` whose arguments `args` (self first) could not be
/// converted: when a vmap runs and one of them is a batched tensor, the
/// batching dispatcher's result; otherwise `err`. Conversions fail before
/// any work is done, so the method runs once either way.
pub fn batched_method<'py>(
    py: Python<'py>,
    name: &str,
    args: impl IntoPyObject<'py, Target = PyTuple, Output = Bound<'py, PyTuple>>,
    err: PyErr,
) -> PyResult<Py<PyAny>> {
    if VMAP_ACTIVE.load(Ordering::Relaxed) == 0 {
        return Err(err);
    }
    let Some((cls, dispatch)) = BATCHED.get(py) else {
        return Err(err);
    };
    let args = args.into_pyobject(py).map_err(Into::into)?;
    if !args.iter().any(|a| a.get_type().is(cls.bind(py))) {
        return Err(err);
    }
    Ok(dispatch.bind(py).call1((name, args))?.unbind())
}

/// `_vmap_active(delta)`: adds `delta` (+1 when a vmap starts, -1 when it
/// ends) to the count of running vmaps and returns the new count.
#[pyfunction]
fn _vmap_active(delta: isize) -> PyResult<usize> {
    let result = VMAP_ACTIVE.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
        n.checked_add_signed(delta)
    });
    match result {
        Ok(old) => Ok(old.wrapping_add_signed(delta)),
        Err(n) => Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "_vmap_active({delta}): {n} vmaps are running"
        ))),
    }
}

/// `_set_autocast_hook(hook)`: the function that applies autocast's casts
/// to the arguments of routed functions with an `_autocast` policy,
/// called as `hook(kind, target, *args, **kwargs)`.
#[pyfunction]
fn _set_autocast_hook(py: Python<'_>, hook: Py<PyAny>) -> PyResult<()> {
    AUTOCAST_HOOK
        .set(py, hook)
        .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the autocast hook is already set"))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("routed_function", routed_type(m.py())?)?;
    m.add_function(wrap_pyfunction!(_set_autocast_hook, m)?)?;
    m.add_function(wrap_pyfunction!(_vmap_active, m)?)?;
    m.add_function(wrap_pyfunction!(_set_batched_dispatch, m)?)?;
    Ok(())
}
