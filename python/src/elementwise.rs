//! Elementwise operations on `Tensor`: arithmetic operators, methods and
//! their in-place forms.

use crate::convert::operand;
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor};
use ferrograd::{Scalar, Tensor};
use pyo3::prelude::*;

/// `other * alpha` for torch's `alpha=` argument (skipped when 1).
fn scaled(other: Tensor, alpha: Option<&Bound<'_, PyAny>>) -> PyResult<Tensor> {
    match alpha {
        None => Ok(other),
        Some(a) => match crate::convert::scalar(a)? {
            Some(Scalar::Int(1)) => Ok(other),
            Some(s) => other.mul(&Tensor::scalar(s)).py(),
            None => Err(pyo3::exceptions::PyTypeError::new_err(
                "alpha must be a number",
            )),
        },
    }
}

#[pymethods]
impl PyTensor {
    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Some(b) = operand(other)? else {
            return Ok(py.NotImplemented());
        };
        let a = &self.t;
        let out = nogil(py, a.numel().max(b.numel()), || a.add(&b)).py()?;
        Ok(Py::new(py, PyTensor::new(out))?.into_any())
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let Some(b) = operand(other)? else {
            return Ok(py.NotImplemented());
        };
        let a = &self.t;
        let out = nogil(py, a.numel().max(b.numel()), || b.add(a)).py()?;
        Ok(Py::new(py, PyTensor::new(out))?.into_any())
    }

    fn __iadd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = crate::tensor::arg(other, "other")?;
        let a = &self.t;
        nogil(py, a.numel(), || a.add_(&b)).py()
    }

    #[pyo3(signature = (other, *, alpha = None))]
    fn add(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTensor> {
        let b = scaled(crate::tensor::arg(other, "other")?, alpha)?;
        let a = &self.t;
        Ok(nogil(py, a.numel().max(b.numel()), || a.add(&b))
            .py()?
            .into())
    }

    #[pyo3(signature = (other, *, alpha = None))]
    fn add_<'py>(
        slf: &Bound<'py, Self>,
        other: &Bound<'_, PyAny>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let b = scaled(crate::tensor::arg(other, "other")?, alpha)?;
        let a = &slf.get().t;
        nogil(slf.py(), a.numel(), || a.add_(&b)).py()?;
        Ok(slf.clone())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let _ = m;
    Ok(())
}
