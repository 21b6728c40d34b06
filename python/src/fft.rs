//! The three Fourier transform primitives (`_fft_c2c`, `_fft_r2c`,
//! `_fft_c2r`, torch's aten names and arguments) that
//! `ferrograd.fft`'s functions are composed from.

use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::tensor::{nogil, TensorOut};
use ferrograd::{FftNorm, Tensor};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

fn norm_mode(code: i64) -> PyResult<FftNorm> {
    FftNorm::from_code(code).ok_or_else(|| {
        PyRuntimeError::new_err(format!(
            "Invalid normalization mode: {code} (expected 0: none, 1: by root n, 2: by n)"
        ))
    })
}

/// The work of a transform of `x`: its size times the log of it.
fn work(x: &Tensor) -> usize {
    let n = x.numel().max(1);
    n.saturating_mul(n.ilog2() as usize + 1)
}

/// Runs the transform `f` of the tensor `input` over `dim` (the GIL
/// released for big ones), with the normalization mode checked first.
fn transform(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    name: &str,
    dim: &[i64],
    normalization: i64,
    f: impl FnOnce(&Tensor, &[isize], FftNorm) -> ferrograd::Result<Tensor> + Send,
) -> PyResult<TensorOut> {
    let x = tensor_only(input, name, "input")?;
    let norm = norm_mode(normalization)?;
    let d: Vec<isize> = dim.iter().map(|&d| d as isize).collect();
    Ok(nogil(py, work(&x), || f(&x, &d, norm)).py()?.into())
}

/// `_fft_c2c(self, dim, normalization, forward)`: the complex transform of
/// a complex tensor over ``dim``; ``normalization`` 0 (none), 1 (by
/// ``1/sqrt(n)``) or 2 (by ``1/n``).
#[pyfunction]
#[pyo3(name = "_fft_c2c", signature = (input, dim, normalization, forward))]
fn fft_c2c(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    dim: Vec<i64>,
    normalization: i64,
    forward: bool,
) -> PyResult<TensorOut> {
    transform(py, input, "_fft_c2c", &dim, normalization, |x, d, norm| {
        x.fft_c2c(d, norm, forward)
    })
}

/// `_fft_r2c(self, dim, normalization, onesided)`: the transform of a real
/// tensor over ``dim``, the last of them halved to its non-negative
/// frequencies when ``onesided``.
#[pyfunction]
#[pyo3(name = "_fft_r2c", signature = (input, dim, normalization, onesided))]
fn fft_r2c(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    dim: Vec<i64>,
    normalization: i64,
    onesided: bool,
) -> PyResult<TensorOut> {
    transform(py, input, "_fft_r2c", &dim, normalization, |x, d, norm| {
        x.fft_r2c(d, norm, onesided)
    })
}

/// `_fft_c2r(self, dim, normalization, last_dim_size)`: the real signal of
/// ``last_dim_size`` points along the last of ``dim`` whose half spectrum
/// (``last_dim_size // 2 + 1`` values there) ``input`` holds.
#[pyfunction]
#[pyo3(name = "_fft_c2r", signature = (input, dim, normalization, last_dim_size))]
fn fft_c2r(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    dim: Vec<i64>,
    normalization: i64,
    last_dim_size: i64,
) -> PyResult<TensorOut> {
    if last_dim_size < 1 {
        return Err(PyRuntimeError::new_err(format!(
            "Invalid number of data points ({last_dim_size}) specified"
        )));
    }
    let n = last_dim_size as usize;
    transform(py, input, "_fft_c2r", &dim, normalization, |x, d, norm| {
        x.fft_c2r(d, norm, n)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fft_c2c, m)?)?;
    m.add_function(wrap_pyfunction!(fft_r2c, m)?)?;
    m.add_function(wrap_pyfunction!(fft_c2r, m)?)?;
    Ok(())
}
