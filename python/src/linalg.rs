//! Linear algebra on `Tensor`: `@`, matmul and its family, einsum,
//! inverse/det/solve, and the GEMM backend switch used by benchmarks.

use crate::autocast::lower;
use crate::convert::operand;
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, wrap_any, PyTensor, TensorOut};
use ferrograd::ops::linalg::{gemm_backend, set_gemm_backend, GemmBackend};
use ferrograd::{Scalar, Tensor};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// `obj` as a tensor, or torch's TypeError for `fname`'s argument `what`.
pub(crate) fn tensor_only(obj: &Bound<'_, PyAny>, fname: &str, what: &str) -> PyResult<Tensor> {
    match obj.cast::<PyTensor>() {
        Ok(t) => Ok(t.get().tensor()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{fname}(): argument '{what}' must be Tensor, not {}",
            obj.get_type().name()?
        ))),
    }
}

/// Rough flop count of a product, to decide whether to release the GIL.
fn work(a: &Tensor, b: &Tensor) -> usize {
    let k = a.shape().last().copied().unwrap_or(1).max(1);
    a.numel().max(b.numel()).saturating_mul(k)
}

pub(crate) fn coeff(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Scalar> {
    crate::convert::number_arg(obj, &format!("addmm(): argument '{name}'"), Scalar::Int(1))
}

#[pymethods]
impl PyTensor {
    fn __matmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let b = match operand(other)? {
            Some(b) if !b.is_wrapped_number() => lower(b)?,
            _ => return Ok(py.NotImplemented()),
        };
        let a = &lower(self.tensor())?;
        let out = nogil(py, work(a, &b), || a.matmul(&b)).py()?;
        wrap_any(py, out)
    }

    fn __rmatmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let a = match operand(other)? {
            Some(a) if !a.is_wrapped_number() => lower(a)?,
            _ => return Ok(py.NotImplemented()),
        };
        let b = &lower(self.tensor())?;
        let out = nogil(py, work(&a, b), || a.matmul(b)).py()?;
        wrap_any(py, out)
    }

    /// Matrix product of ``self`` and ``other``, with batch broadcasting (``self @ other``).
    ///
    /// See :func:`ferrograd.matmul`.
    fn matmul(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = lower(tensor_only(other, "matmul", "other")?)?;
        let a = &lower(self.tensor())?;
        Ok(nogil(py, work(a, &b), || a.matmul(&b)).py()?.into())
    }

    /// Matrix product of two 2-D tensors.
    ///
    /// See :func:`ferrograd.mm`.
    fn mm(&self, py: Python<'_>, mat2: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = lower(tensor_only(mat2, "mm", "mat2")?)?;
        let a = &lower(self.tensor())?;
        Ok(nogil(py, work(a, &b), || a.mm(&b)).py()?.into())
    }

    /// Batched matrix product of two 3-D tensors.
    ///
    /// See :func:`ferrograd.bmm`.
    fn bmm(&self, py: Python<'_>, mat2: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = lower(tensor_only(mat2, "bmm", "mat2")?)?;
        let a = &lower(self.tensor())?;
        Ok(nogil(py, work(a, &b), || a.bmm(&b)).py()?.into())
    }

    /// Product of a matrix and a vector.
    ///
    /// See :func:`ferrograd.mv`.
    fn mv(&self, py: Python<'_>, vec: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = tensor_only(vec, "mv", "vec")?;
        let a = &self.tensor();
        Ok(nogil(py, a.numel(), || a.mv(&b)).py()?.into())
    }

    /// Dot product of two 1-D tensors.
    ///
    /// See :func:`ferrograd.dot`.
    fn dot(&self, py: Python<'_>, tensor: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = tensor_only(tensor, "dot", "tensor")?;
        let a = &self.tensor();
        Ok(nogil(py, a.numel(), || a.dot(&b)).py()?.into())
    }

    /// Outer product of two 1-D tensors.
    ///
    /// See :func:`ferrograd.outer`.
    fn outer(&self, py: Python<'_>, vec2: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        let b = tensor_only(vec2, "outer", "vec2")?;
        let a = &self.tensor();
        Ok(
            nogil(py, a.numel().saturating_mul(b.numel()), || a.outer(&b))
                .py()?
                .into(),
        )
    }

    /// Alias for :meth:`Tensor.outer`.
    fn ger(&self, py: Python<'_>, vec2: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
        self.outer(py, vec2)
    }

    /// ``beta * self + alpha * (mat1 @ mat2)``.
    ///
    /// See :func:`ferrograd.addmm`.
    #[pyo3(signature = (mat1, mat2, *, beta = None, alpha = None))]
    fn addmm(
        &self,
        py: Python<'_>,
        mat1: &Bound<'_, PyAny>,
        mat2: &Bound<'_, PyAny>,
        beta: Option<&Bound<'_, PyAny>>,
        alpha: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let m1 = lower(tensor_only(mat1, "addmm", "mat1")?)?;
        let m2 = lower(tensor_only(mat2, "addmm", "mat2")?)?;
        let (beta, alpha) = (coeff(beta, "beta")?, coeff(alpha, "alpha")?);
        let a = &lower(self.tensor())?;
        Ok(nogil(py, work(&m1, &m2), || a.addmm(&m1, &m2, beta, alpha))
            .py()?
            .into())
    }

    /// Sum of the diagonal of a 2-D tensor.
    ///
    /// See :func:`ferrograd.trace`.
    fn trace(&self) -> PyResult<TensorOut> {
        Ok(self.tensor().trace().py()?.into())
    }

    /// Inverse of a square matrix (or of each in a batch).
    ///
    /// See :func:`ferrograd.inverse`.
    fn inverse(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let a = &self.tensor();
        Ok(nogil(py, work(a, a), || a.inverse()).py()?.into())
    }

    /// Determinant of a square matrix (or of each in a batch).
    ///
    /// See :func:`ferrograd.det`.
    fn det(&self, py: Python<'_>) -> PyResult<TensorOut> {
        let a = &self.tensor();
        Ok(nogil(py, work(a, a), || a.det()).py()?.into())
    }
}

/// einsum(equation, *operands) -> Tensor
///
/// Sums products of the operands' elements over the indices that an
/// Einstein-summation ``equation`` names.
///
/// The equation gives one subscript string per operand, separated by commas,
/// each letter naming one dimension (``"ij,jk"``); letters repeated across
/// operands are multiplied together, and letters left out of the output are
/// summed over. With ``->`` the output subscripts are explicit
/// (``"ij,jk->ik"``); without it the output holds the letters that appear
/// once, in alphabetical order. ``...`` stands for broadcast leading
/// dimensions. A letter repeated within one operand takes its diagonal
/// (``"ii->i"``). Differentiable with respect to every operand.
///
/// Args:
///     equation (str): the subscripts, e.g. ``"bij,bjk->bik"``.
///     *operands (Tensor): the tensors, one per subscript string (a single
///         list of tensors is accepted too).
///
/// Example:
///     >>> a = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])
///     >>> ferrograd.einsum("ij,jk->ik", a, a)
///     tensor([[ 7., 10.],
///             [15., 22.]])
///     >>> ferrograd.einsum("ii", a)
///     tensor(5.)
///     >>> ferrograd.einsum("i,j->ij", ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([3.0, 4.0]))
///     tensor([[3., 4.],
///             [6., 8.]])
#[pyfunction]
#[pyo3(signature = (equation, *operands))]
fn einsum(
    py: Python<'_>,
    equation: &Bound<'_, PyAny>,
    operands: &Bound<'_, PyTuple>,
) -> PyResult<TensorOut> {
    let eq: String = equation.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "einsum(): argument 'equation' must be str, not {}",
            equation
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let items: Vec<Bound<'_, PyAny>> = if operands.len() == 1
        && (operands.get_item(0)?.is_instance_of::<PyList>()
            || operands.get_item(0)?.is_instance_of::<PyTuple>())
    {
        operands.get_item(0)?.try_iter()?.collect::<PyResult<_>>()?
    } else {
        operands.iter().collect()
    };
    let ts: Vec<Tensor> = items
        .iter()
        .map(|o| tensor_only(o, "einsum", "operands"))
        .collect::<PyResult<_>>()?;
    let w: usize = ts.iter().map(|t| t.numel()).sum();
    Ok(nogil(py, w, || ferrograd::ops::linalg::einsum(&eq, &ts))
        .py()?
        .into())
}

/// `linalg.solve(A, B)`.
#[pyfunction]
#[pyo3(name = "_linalg_solve", signature = (A, B))]
#[allow(non_snake_case)]
fn linalg_solve(py: Python<'_>, A: &Bound<'_, PyAny>, B: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let a = tensor_only(A, "linalg_solve", "A")?;
    let b = tensor_only(B, "linalg_solve", "B")?;
    Ok(nogil(py, work(&a, &b), || a.linalg_solve(&b)).py()?.into())
}

/// Selects the GEMM library (`"gemm"` or `"matrixmultiply"`).
#[pyfunction]
fn _set_gemm_backend(name: &str) -> PyResult<()> {
    let b = GemmBackend::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown GEMM backend {name:?}; expected \"gemm\" or \"matrixmultiply\""
        ))
    })?;
    set_gemm_backend(b);
    Ok(())
}

/// The current GEMM library's name.
#[pyfunction]
fn _get_gemm_backend() -> &'static str {
    gemm_backend().name()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(einsum, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_solve, m)?)?;
    m.add_function(wrap_pyfunction!(_set_gemm_backend, m)?)?;
    m.add_function(wrap_pyfunction!(_get_gemm_backend, m)?)?;
    Ok(())
}
