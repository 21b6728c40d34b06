//! Reductions and scans of `Tensor`: sum, mean, prod, amax/amin, max/min,
//! argmax/argmin, var/std, norm, logsumexp, softmax, cumsum/cumprod,
//! all/any, count_nonzero, aminmax, and the kernels behind
//! `ferrograd.linalg`'s norms.

use crate::convert::int_list;
use crate::dtype::parse_opt_dtype;
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, py_helper, wrap_any, PyTensor, TensorOut};
use ferrograd::ops::reduce::MatrixOrd;
use ferrograd::Tensor;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyTuple};

type Dims = Option<Vec<isize>>;

/// A `dim=` argument: `None`, an int, or a sequence of ints.
fn dims_arg(dim: Option<&Bound<'_, PyAny>>) -> PyResult<Dims> {
    match dim {
        None => Ok(None),
        Some(d) if d.is_none() => Ok(None),
        Some(d) => Ok(Some(int_list(d, "dim")?)),
    }
}

/// A single `dim=` int.
fn one_dim(d: &Bound<'_, PyAny>) -> PyResult<isize> {
    if d.is_instance_of::<PyInt>() && !d.is_instance_of::<PyBool>() {
        return d.extract();
    }
    let v = int_list(d, "dim")?;
    match v.as_slice() {
        [x] => Ok(*x),
        _ => Err(PyTypeError::new_err(format!(
            "dim must be an int, got {}",
            d.repr()?
        ))),
    }
}

/// A norm order: a number (ints, floats, `inf`) as f64.
fn ord_number(p: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if p.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "norm order must be a number or a string, not bool",
        ));
    }
    if p.is_instance_of::<PyInt>() || p.is_instance_of::<PyFloat>() {
        return Ok(Some(p.extract::<f64>()?));
    }
    Ok(None)
}

pub(crate) fn matrix_ord(ord: &Bound<'_, PyAny>) -> PyResult<MatrixOrd> {
    if let Some(p) = ord_number(ord)? {
        return Ok(MatrixOrd::P(p));
    }
    if let Ok(s) = ord.cast::<PyString>() {
        return match &*s.to_cow()? {
            "fro" => Ok(MatrixOrd::Fro),
            "nuc" => Ok(MatrixOrd::Nuc),
            other => Err(PyRuntimeError::new_err(format!(
                "linalg.matrix_norm: Order {other} not supported."
            ))),
        };
    }
    Err(PyTypeError::new_err(format!(
        "matrix norm order must be a number, 'fro' or 'nuc', got {}",
        ord.repr()?
    )))
}

/// A `torch.return_types` named tuple of two tensors.
fn named_pair(py: Python<'_>, name: &str, a: Tensor, b: Tensor) -> PyResult<Py<PyAny>> {
    static MAX: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static MIN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static AMINMAX: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let cell = match name {
        "max" => &MAX,
        "min" => &MIN,
        _ => &AMINMAX,
    };
    let cls = py_helper(py, cell, "ferrograd.return_types", name)?;
    let pair = PyTuple::new(py, [TensorOut(a), TensorOut(b)])?;
    Ok(cls.call1((pair,))?.unbind())
}

/// The divisor correction from torch's `unbiased=` / `correction=` pair.
fn correction(unbiased: Option<bool>, correction: Option<f64>) -> PyResult<f64> {
    match (unbiased, correction) {
        (Some(_), Some(_)) => Err(PyRuntimeError::new_err(
            "var/std: cannot pass both unbiased and correction",
        )),
        (Some(u), None) => Ok(if u { 1.0 } else { 0.0 }),
        (None, Some(c)) => Ok(c),
        (None, None) => Ok(1.0),
    }
}

/// var/std argument handling: `t.var(True)` passes `unbiased` first.
fn var_args(
    dim: Option<&Bound<'_, PyAny>>,
    unbiased: Option<bool>,
    corr: Option<f64>,
) -> PyResult<(Dims, f64)> {
    if let Some(d) = dim {
        if d.is_instance_of::<PyBool>() {
            if unbiased.is_some() {
                return Err(PyTypeError::new_err("var/std: unbiased given twice"));
            }
            return Ok((None, correction(Some(d.extract()?), corr)?));
        }
    }
    Ok((dims_arg(dim)?, correction(unbiased, corr)?))
}

/// `Tensor.norm`'s `p`: a number, `"fro"` (the 2-norm over `dim`) or
/// `"nuc"` (a matrix norm over two dims).
enum NormP {
    Vector(f64),
    Nuc,
}

fn norm_p(p: Option<&Bound<'_, PyAny>>) -> PyResult<NormP> {
    let p = match p {
        Some(p) if !p.is_none() => p,
        _ => return Ok(NormP::Vector(2.0)),
    };
    if let Some(v) = ord_number(p)? {
        return Ok(NormP::Vector(v));
    }
    let s = p.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "norm(): p must be a number or a string, got {}",
            p.get_type()
        ))
    })?;
    match &*s.to_cow()? {
        "fro" => Ok(NormP::Vector(2.0)),
        "nuc" => Ok(NormP::Nuc),
        other => Err(PyRuntimeError::new_err(format!(
            "norm(): unsupported p {other:?} (expected a number, 'fro' or 'nuc')"
        ))),
    }
}

fn tensor_norm(
    t: &Tensor,
    p: NormP,
    dims: Dims,
    keepdim: bool,
    dtype: Option<ferrograd::DType>,
) -> ferrograd::Result<Tensor> {
    match p {
        NormP::Vector(v) => t.norm(v, dims.as_deref(), keepdim, dtype),
        NormP::Nuc => {
            let pair = match dims.as_deref() {
                None if t.ndim() == 2 => (0, 1),
                Some(&[a, b]) => (a, b),
                _ => {
                    return Err(ferrograd::Error::runtime(format!(
                        "norm(): the nuclear norm needs a 2-D input or two dims, got shape {:?} and dim {:?}",
                        t.shape(),
                        dims
                    )))
                }
            };
            t.matrix_norm(MatrixOrd::Nuc, pair, keepdim, dtype)
        }
    }
}

/// Reductions `name(dim=None, keepdim=False, *, dtype=None)`: `dim` is
/// `None` (all dims), an int or a sequence of ints. An entry's doc comments
/// become the method's docstring (as in the other macros here).
macro_rules! reductions_with_dtype {
    ($($(#[doc = $doc:literal])* $name:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                #[pyo3(signature = (dim = None, keepdim = false, *, dtype = None))]
                fn $name(
                    &self,
                    py: Python<'_>,
                    dim: Option<&Bound<'_, PyAny>>,
                    keepdim: bool,
                    dtype: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<TensorOut> {
                    let (dims, dt, t) = (dims_arg(dim)?, parse_opt_dtype(dtype)?, &self.tensor());
                    Ok(nogil(py, t.numel(), || t.$name(dims.as_deref(), keepdim, dt))
                        .py()?
                        .into())
                }
            )*
        }
    };
}

reductions_with_dtype! {
    /// Sum of the elements over ``dim`` (all dims when None).
    ///
    /// See :func:`ferrograd.sum`.
    sum;
    /// Product of the elements over ``dim`` (all dims when None).
    ///
    /// See :func:`ferrograd.prod`.
    prod;
    /// Mean of the elements over ``dim`` (all dims when None).
    ///
    /// See :func:`ferrograd.mean`.
    mean;
}

/// Reductions `name(dim=None, keepdim=False)` that keep the input's dtype
/// (or give bool).
macro_rules! reductions {
    ($($(#[doc = $doc:literal])* $name:ident;)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                #[pyo3(signature = (dim = None, keepdim = false))]
                fn $name(
                    &self,
                    py: Python<'_>,
                    dim: Option<&Bound<'_, PyAny>>,
                    keepdim: bool,
                ) -> PyResult<TensorOut> {
                    let (dims, t) = (dims_arg(dim)?, &self.tensor());
                    Ok(nogil(py, t.numel(), || t.$name(dims.as_deref(), keepdim))
                        .py()?
                        .into())
                }
            )*
        }
    };
}

reductions! {
    /// Maximum of the elements over ``dim`` (all dims when None).
    ///
    /// See :func:`ferrograd.amax`.
    amax;
    /// Minimum of the elements over ``dim`` (all dims when None).
    ///
    /// See :func:`ferrograd.amin`.
    amin;
    /// Whether every element over ``dim`` is nonzero (a bool tensor).
    ///
    /// See :func:`ferrograd.all`.
    all;
    /// Whether any element over ``dim`` is nonzero (a bool tensor).
    ///
    /// See :func:`ferrograd.any`.
    any;
}

/// Ops along one dim with an optional result dtype: the scans
/// `name(dim, *, dtype=None)` and the softmaxes `name(dim, dtype=None)`.
macro_rules! along_dim_with_dtype {
    ($($(#[doc = $doc:literal])* $name:ident($($star:tt)?);)*) => {
        #[pymethods]
        impl PyTensor {
            $(
                $(#[doc = $doc])*
                #[pyo3(signature = (dim, $($star,)? dtype = None))]
                fn $name(
                    &self,
                    py: Python<'_>,
                    dim: &Bound<'_, PyAny>,
                    dtype: Option<&Bound<'_, PyAny>>,
                ) -> PyResult<TensorOut> {
                    let (d, dt, t) = (one_dim(dim)?, parse_opt_dtype(dtype)?, &self.tensor());
                    Ok(nogil(py, t.numel(), || t.$name(d, dt)).py()?.into())
                }
            )*
        }
    };
}

along_dim_with_dtype! {
    /// Cumulative sum of the elements along ``dim``.
    ///
    /// See :func:`ferrograd.cumsum`.
    cumsum(*);
    /// Cumulative product of the elements along ``dim``.
    ///
    /// See :func:`ferrograd.cumprod`.
    cumprod(*);
    /// Softmax along ``dim``: ``exp(x)`` normalised to sum to 1.
    ///
    /// See :func:`ferrograd.softmax`.
    softmax();
    /// Logarithm of the softmax along ``dim``, computed stably.
    ///
    /// See :func:`ferrograd.log_softmax`.
    log_softmax();
}

#[pymethods]
impl PyTensor {
    /// Maximum: of all elements, along a dim, or against another tensor.
    ///
    /// ``max()`` gives a 0-dim tensor; ``max(dim, keepdim=False)`` a named tuple
    /// ``(values, indices)``; ``max(other)`` the elementwise :meth:`maximum`.
    /// See :func:`ferrograd.max`.
    #[pyo3(signature = (dim = None, keepdim = false))]
    fn max(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
    ) -> PyResult<Py<PyAny>> {
        extreme_method(py, &self.tensor(), dim, keepdim, true)
    }

    /// Minimum: of all elements, along a dim, or against another tensor.
    ///
    /// ``min()`` gives a 0-dim tensor; ``min(dim, keepdim=False)`` a named tuple
    /// ``(values, indices)``; ``min(other)`` the elementwise :meth:`minimum`.
    /// See :func:`ferrograd.min`.
    #[pyo3(signature = (dim = None, keepdim = false))]
    fn min(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
    ) -> PyResult<Py<PyAny>> {
        extreme_method(py, &self.tensor(), dim, keepdim, false)
    }

    /// Index of the maximum along ``dim`` (of the flattened tensor when None).
    ///
    /// See :func:`ferrograd.argmax`.
    #[pyo3(signature = (dim = None, keepdim = false))]
    fn argmax(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
    ) -> PyResult<TensorOut> {
        let d = dim.filter(|d| !d.is_none()).map(one_dim).transpose()?;
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.argmax(d, keepdim)).py()?.into())
    }

    /// Index of the minimum along ``dim`` (of the flattened tensor when None).
    ///
    /// See :func:`ferrograd.argmin`.
    #[pyo3(signature = (dim = None, keepdim = false))]
    fn argmin(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
    ) -> PyResult<TensorOut> {
        let d = dim.filter(|d| !d.is_none()).map(one_dim).transpose()?;
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.argmin(d, keepdim)).py()?.into())
    }

    /// Minimum and maximum together, as a named tuple ``(min, max)``.
    ///
    /// See :func:`ferrograd.aminmax`.
    #[pyo3(signature = (*, dim = None, keepdim = false))]
    fn aminmax(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
    ) -> PyResult<Py<PyAny>> {
        let d = dim.filter(|d| !d.is_none()).map(one_dim).transpose()?;
        let t = &self.tensor();
        let (lo, hi) = nogil(py, t.numel(), || t.aminmax(d, keepdim)).py()?;
        named_pair(py, "aminmax", lo, hi)
    }

    /// Variance over ``dim`` (all dims when None), with Bessel's correction by default.
    ///
    /// See :func:`ferrograd.var`.
    #[pyo3(signature = (dim = None, unbiased = None, keepdim = false, *, correction = None))]
    fn var(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        unbiased: Option<bool>,
        keepdim: bool,
        correction: Option<f64>,
    ) -> PyResult<TensorOut> {
        let (dims, c) = var_args(dim, unbiased, correction)?;
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.var(dims.as_deref(), c, keepdim))
            .py()?
            .into())
    }

    /// Standard deviation over ``dim`` (all dims when None), with Bessel's correction by default.
    ///
    /// See :func:`ferrograd.std`.
    #[pyo3(signature = (dim = None, unbiased = None, keepdim = false, *, correction = None))]
    fn std(
        &self,
        py: Python<'_>,
        dim: Option<&Bound<'_, PyAny>>,
        unbiased: Option<bool>,
        keepdim: bool,
        correction: Option<f64>,
    ) -> PyResult<TensorOut> {
        let (dims, c) = var_args(dim, unbiased, correction)?;
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.std(dims.as_deref(), c, keepdim))
            .py()?
            .into())
    }

    /// The ``p``-norm over ``dim`` (the 2-norm of all elements by default).
    ///
    /// See :func:`ferrograd.norm`.
    #[pyo3(signature = (p = None, dim = None, keepdim = false, dtype = None))]
    fn norm(
        &self,
        py: Python<'_>,
        p: Option<&Bound<'_, PyAny>>,
        dim: Option<&Bound<'_, PyAny>>,
        keepdim: bool,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TensorOut> {
        let (p, dims, dt, t) = (
            norm_p(p)?,
            dims_arg(dim)?,
            parse_opt_dtype(dtype)?,
            &self.tensor(),
        );
        Ok(
            nogil(py, t.numel(), || tensor_norm(t, p, dims, keepdim, dt))
                .py()?
                .into(),
        )
    }

    /// ``log(sum(exp(x)))`` over ``dim``, computed stably.
    ///
    /// See :func:`ferrograd.logsumexp`.
    #[pyo3(signature = (dim, keepdim = false))]
    fn logsumexp(
        &self,
        py: Python<'_>,
        dim: &Bound<'_, PyAny>,
        keepdim: bool,
    ) -> PyResult<TensorOut> {
        let dims = int_list(dim, "dim")?;
        let t = &self.tensor();
        Ok(nogil(py, t.numel(), || t.logsumexp(&dims, keepdim))
            .py()?
            .into())
    }

    /// Number of nonzero elements over ``dim`` (all dims when None).
    ///
    /// See :func:`ferrograd.count_nonzero`.
    #[pyo3(signature = (dim = None))]
    fn count_nonzero(&self, py: Python<'_>, dim: Option<&Bound<'_, PyAny>>) -> PyResult<TensorOut> {
        let (dims, t) = (dims_arg(dim)?, &self.tensor());
        Ok(nogil(py, t.numel(), || t.count_nonzero(dims.as_deref()))
            .py()?
            .into())
    }
}

/// The three forms of `max`/`min`.
fn extreme_method(
    py: Python<'_>,
    t: &Tensor,
    dim: Option<&Bound<'_, PyAny>>,
    keepdim: bool,
    is_max: bool,
) -> PyResult<Py<PyAny>> {
    let dim = dim.filter(|d| !d.is_none());
    match dim {
        None => {
            let r = nogil(py, t.numel(), || {
                if is_max {
                    t.max_all()
                } else {
                    t.min_all()
                }
            })
            .py()?;
            wrap_any(py, r)
        }
        Some(o) if o.cast::<PyTensor>().is_ok() => {
            let other = o.cast::<PyTensor>()?.get().tensor();
            let r = nogil(py, t.numel().max(other.numel()), || {
                if is_max {
                    t.maximum(&other)
                } else {
                    t.minimum(&other)
                }
            })
            .py()?;
            wrap_any(py, r)
        }
        Some(o) => {
            let d = one_dim(o)?;
            let (v, i) = nogil(py, t.numel(), || {
                if is_max {
                    t.max_dim(d, keepdim)
                } else {
                    t.min_dim(d, keepdim)
                }
            })
            .py()?;
            named_pair(py, if is_max { "max" } else { "min" }, v, i)
        }
    }
}

/// Computes the variance and the mean of ``input`` over ``dim`` in one pass,
/// returned as a tuple ``(var, mean)``.
///
/// The variance uses Bessel's correction by default: the sum of squared
/// deviations is divided by ``N - correction`` with ``N`` the number of
/// elements reduced.
///
/// Args:
///     input (Tensor): the input tensor (floating point or complex).
///     dim (int or tuple of ints, optional): the dimension(s) to reduce.
///         Default: None (all of them).
///     unbiased (bool, optional): the older way to choose the correction:
///         True means ``correction=1``, False ``correction=0``.
///     keepdim (bool): whether the reduced dimensions are kept with size 1.
///         Default: False.
///
/// Keyword args:
///     correction (int or float, optional): the difference between ``N`` and
///         the divisor. Default: 1.
///
/// Returns:
///     tuple of Tensors: ``(var, mean)``.
///
/// Example:
///     >>> x = ferrograd.tensor([[1.0, 2.0], [3.0, 5.0]])
///     >>> ferrograd.var_mean(x)
///     (tensor(2.9167), tensor(2.7500))
///     >>> ferrograd.var_mean(x, dim=0, correction=0)
///     (tensor([1.0000, 2.2500]), tensor([2.0000, 3.5000]))
#[pyfunction]
#[pyo3(signature = (input, dim = None, unbiased = None, keepdim = false, *, correction = None))]
fn var_mean<'py>(
    py: Python<'py>,
    input: PyRef<'_, PyTensor>,
    dim: Option<&Bound<'_, PyAny>>,
    unbiased: Option<bool>,
    keepdim: bool,
    correction: Option<f64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (dims, c) = var_args(dim, unbiased, correction)?;
    let t = &input.tensor();
    let (v, m) = nogil(py, t.numel(), || t.var_mean(dims.as_deref(), c, keepdim)).py()?;
    PyTuple::new(py, [TensorOut(v), TensorOut(m)])
}

/// Computes the standard deviation and the mean of ``input`` over ``dim`` in one pass,
/// returned as a tuple ``(std, mean)``.
///
/// The standard deviation uses Bessel's correction by default: the sum of squared
/// deviations is divided by ``N - correction`` with ``N`` the number of
/// elements reduced.
///
/// Args:
///     input (Tensor): the input tensor (floating point or complex).
///     dim (int or tuple of ints, optional): the dimension(s) to reduce.
///         Default: None (all of them).
///     unbiased (bool, optional): the older way to choose the correction:
///         True means ``correction=1``, False ``correction=0``.
///     keepdim (bool): whether the reduced dimensions are kept with size 1.
///         Default: False.
///
/// Keyword args:
///     correction (int or float, optional): the difference between ``N`` and
///         the divisor. Default: 1.
///
/// Returns:
///     tuple of Tensors: ``(std, mean)``.
///
/// Example:
///     >>> x = ferrograd.tensor([[1.0, 2.0], [3.0, 5.0]])
///     >>> ferrograd.std_mean(x)
///     (tensor(1.7078), tensor(2.7500))
///     >>> ferrograd.std_mean(x, dim=0, correction=0)
///     (tensor([1.0000, 1.5000]), tensor([2.0000, 3.5000]))
#[pyfunction]
#[pyo3(signature = (input, dim = None, unbiased = None, keepdim = false, *, correction = None))]
fn std_mean<'py>(
    py: Python<'py>,
    input: PyRef<'_, PyTensor>,
    dim: Option<&Bound<'_, PyAny>>,
    unbiased: Option<bool>,
    keepdim: bool,
    correction: Option<f64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (dims, c) = var_args(dim, unbiased, correction)?;
    let t = &input.tensor();
    let (s, m) = nogil(py, t.numel(), || t.std_mean(dims.as_deref(), c, keepdim)).py()?;
    PyTuple::new(py, [TensorOut(s), TensorOut(m)])
}

/// Kernel of `linalg.vector_norm` (argument checks live in Python).
#[pyfunction]
#[pyo3(signature = (x, ord, dim, keepdim, dtype))]
fn _vector_norm(
    py: Python<'_>,
    x: PyRef<'_, PyTensor>,
    ord: &Bound<'_, PyAny>,
    dim: Option<&Bound<'_, PyAny>>,
    keepdim: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let ord = ord_number(ord)?.ok_or_else(|| {
        PyRuntimeError::new_err(format!(
            "linalg.vector_norm: ord must be a number, got {}",
            ord.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    let (dims, dt, t) = (dims_arg(dim)?, parse_opt_dtype(dtype)?, &x.tensor());
    Ok(nogil(py, t.numel(), || {
        t.vector_norm(ord, dims.as_deref(), keepdim, dt)
    })
    .py()?
    .into())
}

/// Kernel of `linalg.matrix_norm`.
#[pyfunction]
#[pyo3(signature = (a, ord, dim, keepdim, dtype))]
fn _matrix_norm(
    py: Python<'_>,
    a: PyRef<'_, PyTensor>,
    ord: &Bound<'_, PyAny>,
    dim: &Bound<'_, PyAny>,
    keepdim: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let ord = matrix_ord(ord)?;
    let dims = int_list(dim, "dim")?;
    let pair = match dims.as_slice() {
        &[r, c] => (r, c),
        _ => {
            return Err(PyRuntimeError::new_err(format!(
                "linalg.matrix_norm: dim must be a 2-tuple. Got {dims:?}"
            )))
        }
    };
    let (dt, t) = (parse_opt_dtype(dtype)?, &a.tensor());
    Ok(
        nogil(py, t.numel(), || t.matrix_norm(ord, pair, keepdim, dt))
            .py()?
            .into(),
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(var_mean, m)?)?;
    m.add_function(wrap_pyfunction!(std_mean, m)?)?;
    m.add_function(wrap_pyfunction!(_vector_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_matrix_norm, m)?)?;
    Ok(())
}
