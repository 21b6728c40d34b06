//! Functions between real and complex tensors: `view_as_real`,
//! `view_as_complex`, `complex` and `polar`.

use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::Tensor;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A tensor argument that must be a tensor (not a number), with torch's
/// TypeError otherwise.
fn tensor_only(obj: &Bound<'_, PyAny>, what: &str, position: usize) -> PyResult<Tensor> {
    match obj.cast::<PyTensor>() {
        Ok(t) => Ok(t.get().tensor()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "complex(): argument '{what}' (position {position}) must be Tensor, not {}",
            crate::convert::type_name(obj)
        ))),
    }
}

/// Returns a real view of the complex tensor ``input`` with an extra last
/// dimension of size 2 holding the real and imaginary parts.
///
/// The view shares memory with ``input``: writes through it change
/// ``input``.
///
/// Args:
///     input (Tensor): a complex tensor.
///
/// Example:
///     >>> ferrograd.view_as_real(ferrograd.tensor([1 + 2j, 3 - 1j]))
///     tensor([[ 1.,  2.],
///             [ 3., -1.]])
#[pyfunction]
pub fn view_as_real(input: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
    Ok(input.tensor().view_as_real().py()?.into())
}

/// Returns a complex view of the real tensor ``input``, whose last dimension
/// must have size 2 (real and imaginary parts) and stride 1.
///
/// The view shares memory with ``input``; ``float32`` gives ``complex64`` and
/// ``float64`` gives ``complex128``.
///
/// Args:
///     input (Tensor): a ``float32`` or ``float64`` tensor with last dimension 2.
///
/// Example:
///     >>> ferrograd.view_as_complex(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
///     tensor([1.+2.j, 3.+4.j])
#[pyfunction]
pub fn view_as_complex(input: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
    Ok(input.tensor().view_as_complex().py()?.into())
}

/// Builds a complex tensor from its real and imaginary parts:
/// ``real + 1j * imag``.
///
/// Args:
///     real (Tensor): the real parts (``float32`` or ``float64``).
///     imag (Tensor): the imaginary parts, of the same dtype; the two are
///         broadcast together.
///
/// Example:
///     >>> ferrograd.complex(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([3.0, 4.0]))
///     tensor([1.+3.j, 2.+4.j])
#[pyfunction]
pub fn complex(
    py: Python<'_>,
    real: &Bound<'_, PyAny>,
    imag: &Bound<'_, PyAny>,
) -> PyResult<TensorOut> {
    let (a, b) = (tensor_only(real, "real", 1)?, tensor_only(imag, "imag", 2)?);
    Ok(
        nogil(py, a.numel().max(b.numel()), || Tensor::complex(&a, &b))
            .py()?
            .into(),
    )
}

/// Builds a complex tensor from absolute values and angles:
/// ``abs * (cos(angle) + 1j * sin(angle))``.
///
/// Args:
///     abs (Tensor): the absolute values (``float32`` or ``float64``).
///     angle (Tensor): the angles in radians, of the same dtype; the two are
///         broadcast together.
///
/// Example:
///     >>> ferrograd.polar(ferrograd.tensor([2.0]), ferrograd.tensor([0.0]))
///     tensor([2.+0.j])
#[pyfunction]
pub fn polar(
    py: Python<'_>,
    abs: &Bound<'_, PyAny>,
    angle: &Bound<'_, PyAny>,
) -> PyResult<TensorOut> {
    let (a, b) = (tensor_only(abs, "abs", 1)?, tensor_only(angle, "angle", 2)?);
    Ok(
        nogil(py, a.numel().max(b.numel()), || Tensor::polar(&a, &b))
            .py()?
            .into(),
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(view_as_real, m)?)?;
    m.add_function(wrap_pyfunction!(view_as_complex, m)?)?;
    m.add_function(wrap_pyfunction!(complex, m)?)?;
    m.add_function(wrap_pyfunction!(polar, m)?)?;
    Ok(())
}
