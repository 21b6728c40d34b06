//! Maps ferrograd errors to the Python exceptions torch raises.

use ferrograd::{Error, ErrorKind};
use pyo3::exceptions::{
    PyAssertionError, PyIndexError, PyNotImplementedError, PyRuntimeError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::PyAnyMethods;
use pyo3::PyErr;

/// Converts a core error into the matching Python exception.
pub fn to_py(e: Error) -> PyErr {
    if let Error::External { payload, .. } = &e {
        if let Some(err) = payload.0.downcast_ref::<PyErr>() {
            return pyo3::Python::attach(|py| err.clone_ref(py));
        }
    }
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Runtime => PyRuntimeError::new_err(msg),
        ErrorKind::Index => PyIndexError::new_err(msg),
        ErrorKind::Type => PyTypeError::new_err(msg),
        ErrorKind::Value => PyValueError::new_err(msg),
        ErrorKind::Assertion => PyAssertionError::new_err(msg),
        ErrorKind::NotImplemented => PyNotImplementedError::new_err(msg),
    }
}

/// Carries a Python exception through the core (e.g. out of a hook called
/// by the backward engine) so that [`to_py`] re-raises it unchanged.
pub fn from_py(e: PyErr) -> Error {
    let msg =
        pyo3::Python::attach(|py| e.value(py).str().map(|s| s.to_string()).unwrap_or_default());
    Error::External {
        msg,
        payload: ferrograd::ExternalError(std::sync::Arc::new(e)),
    }
}

/// `?`-friendly conversion: `core_call().map_err(to_py)?` reads as `.py()?`.
pub trait IntoPyResult<T> {
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPyResult<T> for ferrograd::Result<T> {
    #[inline]
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
