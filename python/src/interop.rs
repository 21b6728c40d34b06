//! Tensor memory for other libraries: the Python buffer protocol and
//! DLPack (`__dlpack__`, `__dlpack_device__`, `from_dlpack`).
//!
//! Both hand out the tensor's own memory (no copy): an MPI library, NumPy
//! or another array library reads and writes the same bytes. The exported
//! view keeps the tensor's storage alive until it is released, so the
//! memory stays valid even if the tensor is dropped or given new storage
//! meanwhile. Writes through an export are not seen by autograd (as with
//! `t.numpy()`), which is why tensors that require grad are refused.

use crate::errors::IntoPyResult;
use crate::tensor::{PyTensor, TensorOut};
use ferrograd::tensor::{contiguous_strides, Layout, Storage};
use ferrograd::{DType, Tensor};
use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyBufferError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;

/// Why `t` cannot lend its memory, in torch's words.
fn export_refusal(t: &Tensor) -> Option<&'static str> {
    if t.requires_grad() {
        return Some("Can't export tensors that require gradient, use tensor.detach()");
    }
    if t.is_conj() {
        return Some("Can't export tensors with the conjugate bit set");
    }
    None
}

// ---------------------------------------------------------------------------
// Buffer protocol
// ---------------------------------------------------------------------------

/// The struct-module format code of a dtype (bfloat16 has none).
fn buffer_format(dt: DType) -> Option<&'static CStr> {
    Some(match dt {
        DType::Bool => c"?",
        DType::UInt8 => c"B",
        DType::Int8 => c"b",
        DType::Int16 => c"h",
        DType::Int32 => c"i",
        DType::Int64 => c"q",
        DType::Float16 => c"e",
        DType::Float32 => c"f",
        DType::Float64 => c"d",
        DType::Complex64 => c"Zf",
        DType::Complex128 => c"Zd",
        DType::BFloat16 => return None,
    })
}

/// What an exported buffer holds until it is released: the memory itself
/// and the shape and byte strides the view points to.
struct BufferExport {
    _storage: Storage,
    shape: Vec<ffi::Py_ssize_t>,
    strides: Vec<ffi::Py_ssize_t>,
}

#[pymethods]
impl PyTensor {
    /// The buffer protocol: a contiguous tensor's memory, writable, with
    /// its dtype's format code. Non-contiguous tensors are refused
    /// (`BufferError`; call `.contiguous()`), as are bfloat16 tensors (no
    /// format code) and tensors that require grad or have the conjugate
    /// bit set.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        ferrograd::compile::break_capture("tensor memory is exported to Python (buffer protocol)");
        let t = &slf.get().tensor();
        if let Some(why) = export_refusal(t) {
            return Err(PyBufferError::new_err(why));
        }
        let format = buffer_format(t.dtype()).ok_or_else(|| {
            PyBufferError::new_err(
                "bfloat16 tensors have no buffer format code; convert with .float(), or share \
                 the memory through DLPack (__dlpack__)",
            )
        })?;
        if !t.is_contiguous() {
            return Err(PyBufferError::new_err(format!(
                "the buffer protocol needs a contiguous tensor; this one has shape {:?} and \
                 strides {:?} (call .contiguous() first)",
                t.shape(),
                t.strides()
            )));
        }
        let nontrivial = t.shape().iter().filter(|&&n| n > 1).count();
        if flags & ffi::PyBUF_F_CONTIGUOUS == ffi::PyBUF_F_CONTIGUOUS && nontrivial > 1 {
            return Err(PyBufferError::new_err(format!(
                "a Fortran-contiguous buffer was requested, but the tensor of shape {:?} is \
                 stored in C order",
                t.shape()
            )));
        }
        let itemsize = t.dtype().itemsize();
        let mut export = Box::new(BufferExport {
            _storage: t.storage().clone(),
            shape: t.shape().iter().map(|&n| n as ffi::Py_ssize_t).collect(),
            strides: contiguous_strides(t.shape())
                .iter()
                .map(|&s| (s * itemsize) as ffi::Py_ssize_t)
                .collect(),
        });
        // SAFETY: CPython passes a `Py_buffer` to fill; the pointers stored
        // in it (shape, strides, format, the data) stay valid until
        // `__releasebuffer__` frees `export`, which also keeps the storage
        // (and so the data) alive; `obj` gets its own reference.
        unsafe {
            (*view).buf = t.data_ptr() as *mut c_void;
            (*view).len = (t.numel() * itemsize) as ffi::Py_ssize_t;
            (*view).readonly = 0;
            (*view).itemsize = itemsize as ffi::Py_ssize_t;
            (*view).format = if flags & ffi::PyBUF_FORMAT != 0 {
                format.as_ptr() as *mut c_char
            } else {
                ptr::null_mut()
            };
            if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                (*view).ndim = t.shape().len() as c_int;
                (*view).shape = export.shape.as_mut_ptr();
            } else {
                (*view).ndim = 0;
                (*view).shape = ptr::null_mut();
            }
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                export.strides.as_mut_ptr()
            } else {
                ptr::null_mut()
            };
            (*view).suboffsets = ptr::null_mut();
            (*view).internal = Box::into_raw(export) as *mut c_void;
            (*view).obj = slf.into_any().into_ptr();
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, view: *mut ffi::Py_buffer) {
        // SAFETY: `internal` is the box `__getbuffer__` leaked for this view.
        unsafe {
            let internal = (*view).internal as *mut BufferExport;
            if !internal.is_null() {
                drop(Box::from_raw(internal));
                (*view).internal = ptr::null_mut();
            }
        }
    }
}

// ---------------------------------------------------------------------------
// DLPack (https://dmlc.github.io/dlpack/latest/c_api.html)
// ---------------------------------------------------------------------------

const DL_CPU: i32 = 1;
const DL_INT: u8 = 0;
const DL_UINT: u8 = 1;
const DL_FLOAT: u8 = 2;
const DL_BFLOAT: u8 = 4;
const DL_COMPLEX: u8 = 5;
const DL_BOOL: u8 = 6;
const DL_FLAG_READ_ONLY: u64 = 1;
const DL_FLAG_COPIED: u64 = 1 << 1;

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

const LEGACY: &CStr = c"dltensor";
const LEGACY_USED: &CStr = c"used_dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const VERSIONED_USED: &CStr = c"used_dltensor_versioned";

fn dl_dtype(dt: DType) -> DLDataType {
    let (code, bits) = match dt {
        DType::Bool => (DL_BOOL, 8),
        DType::UInt8 => (DL_UINT, 8),
        DType::Int8 => (DL_INT, 8),
        DType::Int16 => (DL_INT, 16),
        DType::Int32 => (DL_INT, 32),
        DType::Int64 => (DL_INT, 64),
        DType::Float16 => (DL_FLOAT, 16),
        DType::BFloat16 => (DL_BFLOAT, 16),
        DType::Float32 => (DL_FLOAT, 32),
        DType::Float64 => (DL_FLOAT, 64),
        DType::Complex64 => (DL_COMPLEX, 64),
        DType::Complex128 => (DL_COMPLEX, 128),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

fn dtype_of(d: DLDataType) -> Option<DType> {
    if d.lanes != 1 {
        return None;
    }
    Some(match (d.code, d.bits) {
        (DL_BOOL, 8) => DType::Bool,
        (DL_UINT, 8) => DType::UInt8,
        (DL_INT, 8) => DType::Int8,
        (DL_INT, 16) => DType::Int16,
        (DL_INT, 32) => DType::Int32,
        (DL_INT, 64) => DType::Int64,
        (DL_FLOAT, 16) => DType::Float16,
        (DL_BFLOAT, 16) => DType::BFloat16,
        (DL_FLOAT, 32) => DType::Float32,
        (DL_FLOAT, 64) => DType::Float64,
        (DL_COMPLEX, 64) => DType::Complex64,
        (DL_COMPLEX, 128) => DType::Complex128,
        _ => return None,
    })
}

/// An exported tensor: the managed struct first (its address is the
/// capsule's pointer and the deleter's argument), then what it points to.
#[repr(C)]
struct Exported<M> {
    managed: M,
    _storage: Storage,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

fn dl_tensor(t: &Tensor, shape: &mut [i64], strides: &mut [i64]) -> DLTensor {
    DLTensor {
        data: t.data_ptr() as *mut c_void,
        device: DLDevice {
            device_type: DL_CPU,
            device_id: 0,
        },
        ndim: t.shape().len() as i32,
        dtype: dl_dtype(t.dtype()),
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

unsafe extern "C" fn delete_legacy(m: *mut DLManagedTensor) {
    // SAFETY: `m` is the `Exported` box `export` leaked.
    unsafe { drop(Box::from_raw(m as *mut Exported<DLManagedTensor>)) }
}

unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    // SAFETY: `m` is the `Exported` box `export` leaked.
    unsafe { drop(Box::from_raw(m as *mut Exported<DLManagedTensorVersioned>)) }
}

/// The two managed-tensor structs (legacy and DLPack 1.x): their capsule
/// name, their deleter, and where their tensor and context go.
trait Managed: Sized {
    const NAME: &'static CStr;
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)>;
    /// Points the struct at its tensor description and its context.
    fn point(&mut self, dl: DLTensor, ctx: *mut c_void);

    /// Calls the struct's deleter, if it has one.
    ///
    /// # Safety
    /// `m` must point at a live struct of this kind, not yet deleted.
    unsafe fn delete(m: *mut Self) {
        // SAFETY: as the function requires.
        unsafe {
            if let Some(d) = (*m).deleter() {
                d(m);
            }
        }
    }
}

impl Managed for DLManagedTensor {
    const NAME: &'static CStr = LEGACY;
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
    fn point(&mut self, dl: DLTensor, ctx: *mut c_void) {
        self.dl_tensor = dl;
        self.manager_ctx = ctx;
    }
}

impl Managed for DLManagedTensorVersioned {
    const NAME: &'static CStr = VERSIONED;
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
        self.deleter
    }
    fn point(&mut self, dl: DLTensor, ctx: *mut c_void) {
        self.dl_tensor = dl;
        self.manager_ctx = ctx;
    }
}

/// Deletes the capsule's struct if nobody consumed it (its name is still
/// `M::NAME`); returns whether the capsule was of kind `M`.
///
/// # Safety
/// `capsule` must be a live object and the GIL held.
unsafe fn delete_unconsumed<M: Managed>(capsule: *mut ffi::PyObject) -> bool {
    // SAFETY: the name check comes before the pointer is used.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, M::NAME.as_ptr()) != 1 {
            return false;
        }
        M::delete(ffi::PyCapsule_GetPointer(capsule, M::NAME.as_ptr()) as *mut M);
        true
    }
}

/// Frees an exported tensor nobody consumed (the capsule still has its
/// original name).
unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: called by CPython with the GIL when the capsule dies.
    unsafe {
        if !delete_unconsumed::<DLManagedTensor>(capsule) {
            delete_unconsumed::<DLManagedTensorVersioned>(capsule);
        }
    }
}

fn shape_strides(t: &Tensor) -> (Vec<i64>, Vec<i64>) {
    (
        t.shape().iter().map(|&n| n as i64).collect(),
        t.strides().iter().map(|&s| s as i64).collect(),
    )
}

/// Exports `t`: leaks an [`Exported`] holding `managed` and the memory,
/// points the managed struct at its tensor description and at itself (the
/// context its deleter frees), and wraps it in a capsule.
fn export<M: Managed>(py: Python<'_>, t: &Tensor, managed: M) -> PyResult<Py<PyAny>> {
    let (shape, strides) = shape_strides(t);
    let raw = Box::into_raw(Box::new(Exported {
        managed,
        _storage: t.storage().clone(),
        shape,
        strides,
    }));
    // SAFETY: `raw` is a live box, ours until the capsule takes it; the
    // shape and strides it points to live in the same box.
    unsafe {
        let e = &mut *raw;
        let dl = dl_tensor(t, &mut e.shape, &mut e.strides);
        e.managed.point(dl, raw as *mut c_void);
    }
    // SAFETY: the name is 'static; the destructor handles both kinds.
    let cap = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyCapsule_New(
                raw as *mut c_void,
                M::NAME.as_ptr(),
                Some(capsule_destructor),
            ),
        )
    };
    match cap {
        Ok(c) => Ok(c.unbind()),
        Err(e) => {
            // SAFETY: the capsule was not made, so the box is still ours.
            unsafe { drop(Box::from_raw(raw)) };
            Err(e)
        }
    }
}

fn export_legacy(py: Python<'_>, t: &Tensor) -> PyResult<Py<PyAny>> {
    let managed = DLManagedTensor {
        dl_tensor: dl_tensor(t, &mut [], &mut []),
        manager_ctx: ptr::null_mut(),
        deleter: Some(delete_legacy),
    };
    export(py, t, managed)
}

fn export_versioned(py: Python<'_>, t: &Tensor, copied: bool) -> PyResult<Py<PyAny>> {
    let managed = DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 1 },
        manager_ctx: ptr::null_mut(),
        deleter: Some(delete_versioned),
        flags: if copied { DL_FLAG_COPIED } else { 0 },
        dl_tensor: dl_tensor(t, &mut [], &mut []),
    };
    export(py, t, managed)
}

/// A DLPack tensor from another library, kept alive until the storage
/// that views it drops; then its deleter runs (DLPack allows that on any
/// thread).
struct DlOwner {
    managed: *mut c_void,
    versioned: bool,
}

// SAFETY: the producer's memory and deleter may be used from any thread
// (the DLPack contract).
unsafe impl Send for DlOwner {}
// SAFETY: as above; the owner is never used, only dropped.
unsafe impl Sync for DlOwner {}

impl Drop for DlOwner {
    fn drop(&mut self) {
        // SAFETY: `managed` is the consumed struct; its deleter (if any)
        // is called once, here.
        unsafe {
            if self.versioned {
                DLManagedTensorVersioned::delete(self.managed as *mut DLManagedTensorVersioned);
            } else {
                DLManagedTensor::delete(self.managed as *mut DLManagedTensor);
            }
        }
    }
}

/// Builds a tensor on a consumed DLPack struct (which `owner` frees).
///
/// # Safety
/// `dl` must describe memory valid until `owner` is dropped.
unsafe fn tensor_from_dl(dl: &DLTensor, owner: DlOwner, read_only: bool) -> PyResult<Tensor> {
    if dl.device.device_type != DL_CPU {
        return Err(PyRuntimeError::new_err(format!(
            "from_dlpack: ferrograd tensors live in CPU memory (DLPack device type 1); got \
             device type {} (id {})",
            dl.device.device_type, dl.device.device_id
        )));
    }
    let dtype = dtype_of(dl.dtype).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "from_dlpack: unsupported DLPack dtype (code {}, bits {}, lanes {})",
            dl.dtype.code, dl.dtype.bits, dl.dtype.lanes
        ))
    })?;
    let ndim = usize::try_from(dl.ndim)
        .map_err(|_| PyValueError::new_err(format!("from_dlpack: ndim {} < 0", dl.ndim)))?;
    // SAFETY: DLPack promises `ndim` entries behind `shape` (and `strides`
    // when not null).
    let shape_raw: &[i64] = if ndim == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(dl.shape, ndim) }
    };
    let mut shape = Vec::with_capacity(ndim);
    for &n in shape_raw {
        shape.push(
            usize::try_from(n)
                .map_err(|_| PyValueError::new_err(format!("from_dlpack: shape {shape_raw:?}")))?,
        );
    }
    let strides: Vec<usize> = if dl.strides.is_null() || ndim == 0 {
        contiguous_strides(&shape).to_vec()
    } else {
        // SAFETY: as above.
        let raw = unsafe { std::slice::from_raw_parts(dl.strides, ndim) };
        let mut out = Vec::with_capacity(ndim);
        for (&s, &n) in raw.iter().zip(&shape) {
            match usize::try_from(s) {
                Ok(s) => out.push(s),
                // A negative stride over a dim of size <= 1 is never used.
                Err(_) if n <= 1 => out.push(0),
                Err(_) => {
                    return Err(PyValueError::new_err(format!(
                        "from_dlpack: ferrograd tensors cannot have negative strides (shape \
                         {shape_raw:?}, strides {raw:?}); pass a copy"
                    )))
                }
            }
        }
        out
    };
    let layout = Layout::new(&shape, &strides, 0);
    let nbytes = if shape.contains(&0) {
        0
    } else {
        layout.max_extent() * dtype.itemsize()
    };
    let base = (dl.data as usize + dl.byte_offset as usize) as *mut u8;
    // SAFETY: the producer keeps `nbytes` bytes at `base` valid until its
    // deleter runs, which happens when `owner` drops with the storage.
    let storage = unsafe { Storage::from_foreign(base, nbytes, Box::new(owner)) };
    let t = Tensor::from_parts(storage, layout, dtype).py()?;
    // ferrograd has no read-only tensors: a read-only producer gets a copy
    // (and its memory back at once).
    Ok(if read_only { t.copy() } else { t })
}

/// Consumes a DLPack capsule (renaming it as used) into a tensor.
fn from_capsule(cap: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let p = cap.as_ptr();
    // SAFETY: `p` is a live object; the capsule calls check its type and
    // name before touching the pointer.
    unsafe {
        if ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr()) == 1 {
            let m =
                ffi::PyCapsule_GetPointer(p, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            if (*m).version.major > 1 {
                return Err(PyBufferError::new_err(format!(
                    "from_dlpack: DLPack version {}.{} is newer than the 1.x ferrograd reads",
                    (*m).version.major,
                    (*m).version.minor
                )));
            }
            if ffi::PyCapsule_SetName(p, VERSIONED_USED.as_ptr()) != 0 {
                return Err(PyErr::fetch(cap.py()));
            }
            let read_only = (*m).flags & DL_FLAG_READ_ONLY != 0;
            let owner = DlOwner {
                managed: m as *mut c_void,
                versioned: true,
            };
            return tensor_from_dl(&(*m).dl_tensor, owner, read_only);
        }
        if ffi::PyCapsule_IsValid(p, LEGACY.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(p, LEGACY.as_ptr()) as *mut DLManagedTensor;
            if ffi::PyCapsule_SetName(p, LEGACY_USED.as_ptr()) != 0 {
                return Err(PyErr::fetch(cap.py()));
            }
            let owner = DlOwner {
                managed: m as *mut c_void,
                versioned: false,
            };
            return tensor_from_dl(&(*m).dl_tensor, owner, false);
        }
        let used = ffi::PyCapsule_IsValid(p, LEGACY_USED.as_ptr()) == 1
            || ffi::PyCapsule_IsValid(p, VERSIONED_USED.as_ptr()) == 1;
        Err(PyValueError::new_err(if used {
            "from_dlpack: this DLPack capsule was already consumed (a capsule can be used once)"
        } else {
            "from_dlpack: expected a DLPack capsule named 'dltensor' or 'dltensor_versioned'"
        }))
    }
}

#[pymethods]
impl PyTensor {
    /// DLPack export of the tensor's memory (no copy unless `copy=True`).
    /// With `max_version` of at least (1, 0) the capsule holds a versioned
    /// (DLPack 1.x) tensor, otherwise the legacy struct.
    #[pyo3(signature = (stream = None, *, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        if stream.is_some_and(|s| !s.is_none()) {
            return Err(PyBufferError::new_err(
                "__dlpack__: stream must be None for CPU tensors",
            ));
        }
        if let Some((kind, id)) = dl_device {
            if kind != DL_CPU || id != 0 {
                return Err(PyBufferError::new_err(format!(
                    "__dlpack__: the tensor is in CPU memory (device (1, 0)); cannot export to \
                     device ({kind}, {id})"
                )));
            }
        }
        if let Some(why) = export_refusal(&self.tensor()) {
            return Err(PyRuntimeError::new_err(why));
        }
        let copied = copy == Some(true);
        let t = if copied {
            self.tensor().detach().copy()
        } else {
            self.tensor()
        };
        match max_version {
            Some((major, _)) if major >= 1 => export_versioned(py, &t, copied),
            _ => {
                if copied {
                    return Err(PyBufferError::new_err(
                        "__dlpack__: copy=True needs max_version >= (1, 0) (the legacy struct \
                         cannot say it is a copy)",
                    ));
                }
                export_legacy(py, &t)
            }
        }
    }

    /// `(1, 0)`: DLPack's CPU device.
    fn __dlpack_device__(&self) -> (i32, i32) {
        (DL_CPU, 0)
    }
}

/// Makes a tensor that shares memory with an object exporting the DLPack
/// protocol (one with ``__dlpack__``, such as a NumPy array or another
/// framework's CPU tensor), or with a DLPack capsule.
///
/// No data is copied: writes through either object are seen by the other.
///
/// Args:
///     ext_tensor (object): an object with ``__dlpack__`` and
///         ``__dlpack_device__``, or a capsule from such an object.
///
/// Example:
///     >>> a = np.array([1.0, 2.0, 3.0])
///     >>> t = ferrograd.from_dlpack(a)
///     >>> t
///     tensor([1., 2., 3.], dtype=ferrograd.float64)
#[pyfunction]
fn from_dlpack(ext_tensor: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    // SAFETY: a type check on a live object.
    let is_capsule = unsafe { ffi::PyCapsule_CheckExact(ext_tensor.as_ptr()) } == 1;
    let cap = if is_capsule {
        ext_tensor.clone()
    } else {
        if !ext_tensor.hasattr("__dlpack__")? {
            return Err(PyTypeError::new_err(format!(
                "from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got {}",
                crate::convert::type_name(ext_tensor)
            )));
        }
        if ext_tensor.hasattr("__dlpack_device__")? {
            let (kind, id): (i32, i32) = ext_tensor.call_method0("__dlpack_device__")?.extract()?;
            if kind != DL_CPU {
                return Err(PyRuntimeError::new_err(format!(
                    "from_dlpack: ferrograd tensors live in CPU memory (DLPack device type 1); \
                     the object is on device type {kind} (id {id})"
                )));
            }
        }
        let py = ext_tensor.py();
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("max_version", (1, 1))?;
        match ext_tensor.call_method("__dlpack__", (), Some(&kwargs)) {
            Ok(c) => c,
            Err(e) if e.is_instance_of::<PyTypeError>(py) => {
                // A producer from before DLPack 1.0 takes no max_version.
                ext_tensor.call_method0("__dlpack__")?
            }
            Err(e) => return Err(e),
        }
    };
    Ok(from_capsule(&cap)?.into())
}

/// `_to_dlpack(tensor)`: a legacy DLPack capsule of the tensor's memory
/// (`ferrograd.utils.dlpack.to_dlpack`).
#[pyfunction]
fn _to_dlpack(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<Py<PyAny>> {
    tensor.__dlpack__(py, None, None, None, None)
}

/// frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False) -> Tensor
///
/// A 1-D tensor over the memory of ``buffer``, an object of the Python
/// buffer protocol (``bytes``, ``bytearray``, ``memoryview``, ``array.array``,
/// ``mmap.mmap``...), without copying: writes through either are seen by
/// the other, and the tensor keeps the buffer alive (and exported, so a
/// ``bytearray`` cannot be resized nor an ``mmap`` closed meanwhile).
///
/// A read-only buffer (``bytes``) gives a tensor anyway, with torch's
/// ``UserWarning``: writing to that tensor changes memory Python believes
/// immutable.
///
/// Args:
///     buffer (object): a C-contiguous object of the buffer protocol.
///
/// Keyword args:
///     dtype (dtype): the element type (required).
///     count (int): how many elements to read; ``-1`` reads to the end of
///         the buffer. Default: ``-1``.
///     offset (int): how many bytes of the buffer to skip. The first element
///         must lie at an address that is a multiple of the element size.
///         Default: ``0``.
///     requires_grad (bool): whether the tensor requires grad. Default: False.
///
/// Example:
///     >>> import array
///     >>> a = array.array("f", [1.0, 2.0, 3.0])
///     >>> t = ferrograd.frombuffer(a, dtype=ferrograd.float32)
///     >>> a[0] = 9.0
///     >>> t
///     tensor([9., 2., 3.])
///     >>> ferrograd.frombuffer(bytearray(b"\x01\x02\x03"), dtype=ferrograd.uint8, offset=1)
///     tensor([2, 3], dtype=ferrograd.uint8)
#[pyfunction]
#[pyo3(signature = (buffer, *, dtype, count = -1, offset = 0, requires_grad = false))]
pub fn frombuffer(
    buffer: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    count: i64,
    offset: i64,
    requires_grad: bool,
) -> PyResult<TensorOut> {
    let dt = crate::dtype::parse_dtype(dtype)?;
    let buf = exported(buffer)?;
    let len = buf.len_bytes() as i64;
    let isz = dt.itemsize() as i64;
    if len == 0 || count == 0 {
        return Err(PyValueError::new_err(format!(
            "both buffer length ({len}) and count ({count}) must not be 0"
        )));
    }
    if offset < 0 || offset >= len {
        return Err(PyValueError::new_err(format!(
            "offset ({offset} bytes) must be non-negative and no greater than buffer length ({len} bytes) minus 1"
        )));
    }
    let n = if count < 0 {
        if (len - offset) % isz != 0 {
            return Err(PyValueError::new_err(format!(
                "buffer length ({} bytes) after offset ({offset} bytes) must be a multiple of element size ({isz})",
                len - offset
            )));
        }
        (len - offset) / isz
    } else {
        if count.checked_mul(isz).is_none_or(|b| b > len - offset) {
            return Err(PyValueError::new_err(format!(
                "requested buffer length ({count} * {isz} bytes) after offset ({offset} bytes) must not be greater than actual buffer length ({len} bytes)"
            )));
        }
        count
    };
    let layout = Layout::contiguous(&[n as usize]);
    let t = over_buffer(buf, dt, offset as usize, layout)?;
    crate::creation::finish(t, requires_grad)
}

/// `_frombuffer_strided(buffer, dtype_name, offset, shape, strides)`: a
/// tensor (not a view) with that layout over `buffer`'s memory from byte
/// `offset` on, as [`frombuffer`] shares it (for memory-mapped loading).
#[pyfunction]
fn _frombuffer_strided(
    buffer: &Bound<'_, PyAny>,
    dtype_name: &str,
    offset: usize,
    shape: Vec<usize>,
    strides: Vec<usize>,
) -> PyResult<TensorOut> {
    let dt = DType::from_name(dtype_name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown dtype name {dtype_name:?}")))?;
    let buf = exported(buffer)?;
    let layout = Layout::checked(&shape, &strides, 0).py()?;
    let need = layout.max_extent().checked_mul(dt.itemsize());
    if need.is_none_or(|b| {
        offset
            .checked_add(b)
            .is_none_or(|end| end > buf.len_bytes())
    }) {
        return Err(PyValueError::new_err(format!(
            "a tensor of shape {shape:?} and strides {strides:?} of {dt} from byte {offset} does not fit a buffer of {} bytes",
            buf.len_bytes()
        )));
    }
    Ok(TensorOut(over_buffer(buf, dt, offset, layout)?))
}

/// `obj`'s memory as one C-contiguous block, or torch's ValueError.
fn exported(obj: &Bound<'_, PyAny>) -> PyResult<PyUntypedBuffer> {
    let buf = PyUntypedBuffer::get(obj)
        .map_err(|_| PyValueError::new_err("object does not implement Python buffer protocol."))?;
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "frombuffer: the buffer is not C-contiguous; pass a contiguous copy",
        ));
    }
    Ok(buf)
}

/// A tensor of `layout` over the memory of `buf` from byte `offset` on;
/// the caller checked that the layout fits.
fn over_buffer(buf: PyUntypedBuffer, dt: DType, offset: usize, layout: Layout) -> PyResult<Tensor> {
    let addr = buf.buf_ptr() as usize + offset;
    if !addr.is_multiple_of(dt.itemsize()) {
        return Err(PyValueError::new_err(format!(
            "frombuffer: the data at offset {offset} lies at an address that is not a multiple of the \
             element size of {dt} ({} bytes); ferrograd reads elements only at aligned addresses, so \
             pass a buffer (or offset) that aligns them, or a copy",
            dt.itemsize()
        )));
    }
    let nbytes = layout.max_extent() * dt.itemsize();
    if dt == DType::Bool && nbytes > 0 {
        // SAFETY: the exported buffer spans `offset + nbytes` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, nbytes) };
        if bytes.iter().any(|&b| b > 1) {
            return Err(PyValueError::new_err(
                "frombuffer: a bool tensor's bytes must be 0 or 1, and the buffer holds others",
            ));
        }
    }
    if buf.readonly() {
        Python::attach(|py| {
            py.import("warnings")?.call_method1(
                "warn",
                ("The given buffer is not writable, and ferrograd does not support non-writable tensors. This means you can write to the underlying (supposedly non-writable) buffer using the tensor. You may want to copy the buffer to protect its data or make it writable before converting it to a tensor.",),
            )
            .map(drop)
        })?;
    }
    // SAFETY: the buffer stays exported (its memory valid and unmoved)
    // until `buf`, owned by the storage, is dropped; it spans the layout
    // (checked by the callers), aligned for `dt` and, for bool, holding
    // only 0 and 1.
    let storage = unsafe { Storage::from_foreign(addr as *mut u8, nbytes, Box::new(buf)) };
    Tensor::from_parts(storage, layout, dt).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(frombuffer, m)?)?;
    m.add_function(wrap_pyfunction!(_frombuffer_strided, m)?)?;
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(_to_dlpack, m)?)?;
    Ok(())
}
