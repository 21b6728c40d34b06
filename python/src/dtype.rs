//! `ferrograd.dtype` and `ferrograd.device` objects and argument parsing.

use ferrograd::DType;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt, PyType};

/// The element type of a tensor.
///
/// The instances are module attributes: ``ferrograd.float32`` (also
/// ``float``), ``float64`` (``double``), ``float16`` (``half``),
/// ``bfloat16``, ``complex64`` (``cfloat``), ``complex128`` (``cdouble``),
/// ``int64`` (``long``), ``int32`` (``int``), ``int16`` (``short``),
/// ``int8``, ``uint8`` and ``bool``. New instances cannot be made.
///
/// Example:
///     >>> ferrograd.float64.is_floating_point, ferrograd.int32.itemsize
///     (True, 4)
///     >>> ferrograd.complex64.to_real()
///     ferrograd.float32
#[pyclass(name = "dtype", module = "ferrograd", frozen, eq, hash, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDType {
    pub dt: DType,
}

#[pymethods]
impl PyDType {
    fn __repr__(&self) -> String {
        format!("ferrograd.{}", self.dt.name())
    }
    /// Whether this is a floating point type (float16, bfloat16, float32, float64).
    #[getter]
    fn is_floating_point(&self) -> bool {
        self.dt.is_floating_point()
    }
    /// Whether this is a complex type (complex64, complex128).
    #[getter]
    fn is_complex(&self) -> bool {
        self.dt.is_complex()
    }
    /// Whether the type can hold negative values (False for uint8 and bool).
    #[getter]
    fn is_signed(&self) -> bool {
        self.dt.is_signed()
    }
    /// The size of one element in bytes.
    #[getter]
    fn itemsize(&self) -> usize {
        self.dt.itemsize()
    }
    /// The real dtype of a complex one's components (`complex64` gives
    /// `float32`); a real floating dtype is its own.
    #[pyo3(name = "to_real")]
    fn real_dtype(&self) -> PyResult<PyDType> {
        self.converted("to_real", DType::to_real)
    }
    /// The complex dtype with this floating dtype's components.
    #[pyo3(name = "to_complex")]
    fn complex_dtype(&self) -> PyResult<PyDType> {
        self.converted("to_complex", DType::to_complex)
    }
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String,))> {
        let f = py.import("ferrograd")?.getattr("_dtype_from_name")?;
        Ok((f.unbind(), (self.dt.name().to_string(),)))
    }
}

impl PyDType {
    /// `convert(dt)` for a floating or complex dtype; torch's RuntimeError
    /// naming `what` otherwise.
    fn converted(&self, what: &str, convert: fn(DType) -> DType) -> PyResult<PyDType> {
        if !self.dt.is_differentiable() {
            return Err(PyRuntimeError::new_err(format!(
                "{what} is only supported for floating point and complex types, got {}",
                self.dt.scalar_type_name()
            )));
        }
        Ok(PyDType {
            dt: convert(self.dt),
        })
    }
}

/// Parses a `dtype=` argument: a ferrograd dtype, or Python's `bool`,
/// `int` (int64), `float` (float64) or `complex` (complex128) types, as
/// torch accepts.
pub fn parse_dtype(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(d.get().dt);
    }
    if let Ok(t) = obj.cast::<PyType>() {
        if t.is(obj.py().get_type::<PyBool>()) {
            return Ok(DType::Bool);
        }
        if t.is(obj.py().get_type::<PyInt>()) {
            return Ok(DType::Int64);
        }
        if t.is(obj.py().get_type::<PyFloat>()) {
            return Ok(DType::Float64);
        }
        if t.is(obj.py().get_type::<PyComplex>()) {
            return Ok(DType::Complex128);
        }
    }
    // A legacy tensor type (`FloatTensor`) names its dtype.
    if obj.cast::<PyType>().is_ok() {
        if let Ok(d) = obj.getattr("dtype") {
            if let Ok(d) = d.cast::<PyDType>() {
                return Ok(d.get().dt);
            }
        }
    }
    // As torch: a string is not a dtype (`dtype="float32"` is a TypeError).
    Err(PyTypeError::new_err(format!(
        "dtype must be torch.dtype (float32, float64, float16, bfloat16, complex64, complex128, int64, int32, int16, int8, uint8, bool), not {}",
        crate::convert::type_name(obj)
    )))
}

/// The dtype a legacy type name stands for: `'torch.FloatTensor'` (or
/// `'ferrograd.FloatTensor'`, or `'FloatTensor'`), as `Tensor.type(name)`
/// takes it; torch's ValueError otherwise.
pub fn parse_type_name(name: &str) -> PyResult<DType> {
    let short = name
        .strip_prefix("torch.")
        .or(name.strip_prefix("ferrograd."))
        .unwrap_or(name);
    DType::ALL
        .into_iter()
        .find(|d| short.strip_suffix("Tensor") == Some(d.scalar_type_name()))
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("invalid type: '{name}'")))
}

/// Parses an optional `dtype=` argument.
pub fn parse_opt_dtype(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => parse_dtype(o).map(Some),
    }
}

/// The device a tensor lives on; ferrograd has only the CPU.
///
/// ``device("cpu")``, ``device("cpu", 0)`` and ``device("cpu:0")`` are
/// accepted (and compare equal to ``"cpu"``), so code written for torch's
/// devices runs; any other device raises a RuntimeError.
///
/// Args:
///     kind (str or device, optional): ``"cpu"`` (optionally ``"cpu:<index>"``).
///     index (int, optional): accepted and ignored.
///
/// Example:
///     >>> d = ferrograd.device("cpu")
///     >>> d, d.type, d == "cpu"
///     (device(type='cpu'), 'cpu', True)
#[pyclass(name = "device", module = "ferrograd", frozen, from_py_object)]
#[derive(Clone)]
pub struct PyDevice {}

#[pymethods]
impl PyDevice {
    #[new]
    #[pyo3(signature = (kind = None, index = None))]
    fn new(kind: Option<&Bound<'_, PyAny>>, index: Option<i64>) -> PyResult<Self> {
        let _ = index;
        check_device(kind)?;
        Ok(PyDevice {})
    }
    /// The device type: always ``'cpu'``.
    #[getter]
    fn r#type(&self) -> &'static str {
        "cpu"
    }
    /// The device index: always None.
    #[getter]
    fn index(&self) -> Option<i64> {
        None
    }
    fn __repr__(&self) -> &'static str {
        "device(type='cpu')"
    }
    fn __str__(&self) -> &'static str {
        "cpu"
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyDevice>().is_ok()
            || other
                .extract::<String>()
                .map(|s| s == "cpu")
                .unwrap_or(false)
    }
    fn __hash__(&self) -> u64 {
        u64::from_le_bytes(*b"cpu\0\0\0\0\0")
    }
    fn __reduce__(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, (String,))> {
        Ok((
            py.get_type::<PyDevice>().into_any().unbind(),
            ("cpu".into(),),
        ))
    }
}

/// Accepts `None`, `"cpu"`, `"cpu:0"` or a `device`; anything else is a
/// RuntimeError naming the device, as torch raises for unavailable devices.
pub fn check_device(obj: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let Some(o) = obj else { return Ok(()) };
    if o.is_none() || o.cast::<PyDevice>().is_ok() {
        return Ok(());
    }
    if let Ok(s) = o.extract::<String>() {
        if s == "cpu" || s.starts_with("cpu:") {
            return Ok(());
        }
        return Err(PyRuntimeError::new_err(format!(
            "ferrograd runs on the CPU only; device '{s}' is not available"
        )));
    }
    Err(PyTypeError::new_err(format!(
        "device must be a string or ferrograd.device, got {}",
        o.repr()?
    )))
}
