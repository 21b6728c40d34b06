//! Maps ferrograd errors to the Python exceptions torch raises.

use ferrograd::{Error, ErrorKind};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::PyErr;

/// Converts a core error into the matching Python exception.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Runtime => PyRuntimeError::new_err(msg),
        ErrorKind::Index => PyIndexError::new_err(msg),
        ErrorKind::Type => PyTypeError::new_err(msg),
        ErrorKind::Value => PyValueError::new_err(msg),
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
