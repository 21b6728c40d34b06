//! Creation functions: `tensor`, `from_numpy`, `zeros`, `ones`, `full`,
//! `empty` and their `_like` forms, the ranges (`arange`, `linspace`,
//! `logspace`, `eye`), and the argument helpers the factory functions of
//! `random.rs` share (`shape_of`, `number`, `integer`, `deliver`).

use crate::convert::{self, int_list, shape_args, sizes};
use crate::dtype::{check_device, parse_opt_dtype};
use crate::errors::{detached, IntoPyResult};
use crate::tensor::{nogil, wrap_any, PyTensor, TensorOut};
use ferrograd::tensor::{Dims, Layout, MemoryFormat};
use ferrograd::{default_dtype, DType, Scalar, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Applies `requires_grad=` to a new tensor.
pub fn finish(t: Tensor, requires_grad: bool) -> PyResult<TensorOut> {
    if requires_grad {
        t.set_requires_grad(true).py()?;
    }
    Ok(TensorOut(t))
}

/// tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor
///
/// Builds a new tensor by copying ``data``: a number, a (nested) list or tuple
/// of numbers, a NumPy array or scalar, or another tensor.
///
/// Without ``dtype`` the type is inferred from the data: bools give ``bool``,
/// integers ``int64``, floats the default dtype (see
/// :func:`ferrograd.get_default_dtype`) and complex numbers the matching complex
/// dtype. The result never shares memory with ``data`` (use
/// :func:`ferrograd.as_tensor` or :func:`ferrograd.from_numpy` for that).
///
/// Args:
///     data (array_like): the values of the tensor.
///
/// Keyword args:
///     dtype (dtype, optional): the element type. Default: inferred from ``data``.
///     device (device or str, optional): only ``"cpu"`` is supported. Default: None.
///     requires_grad (bool): whether autograd records operations on the new
///         tensor (it becomes a leaf). Default: False.
///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
///
/// Example:
///     >>> ferrograd.tensor([[1, 2], [3, 4]])
///     tensor([[1, 2],
///             [3, 4]])
///     >>> ferrograd.tensor([0.5, 2.0], dtype=ferrograd.float64, requires_grad=True)
///     tensor([0.5000, 2.0000], dtype=ferrograd.float64, requires_grad=True)
#[pyfunction]
#[pyo3(signature = (data, *, dtype = None, device = None, requires_grad = false, pin_memory = false))]
pub fn tensor(
    data: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    pin_memory: bool,
) -> PyResult<TensorOut> {
    let _ = pin_memory;
    check_device(device)?;
    let dt = parse_opt_dtype(dtype)?;
    finish(convert::data_to_tensor(data, dt)?, requires_grad)
}

/// Converts ``data`` to a tensor, sharing memory with it when no conversion is
/// needed.
///
/// A tensor of the requested dtype is returned as it is; a NumPy array is
/// wrapped without a copy (as :func:`ferrograd.from_numpy` does) unless a
/// different ``dtype`` is asked for; anything else (lists, numbers) is copied as
/// by :func:`ferrograd.tensor`.
///
/// Args:
///     data (array_like): a tensor, NumPy array, number or (nested) sequence.
///     dtype (dtype, optional): the element type. Default: that of ``data``.
///     device (device or str, optional): only ``"cpu"`` is supported. Default: None.
///
/// Example:
///     >>> a = np.array([1.0, 2.0])
///     >>> t = ferrograd.as_tensor(a)
///     >>> a[0] = 5.0
///     >>> t
///     tensor([5., 2.], dtype=ferrograd.float64)
#[pyfunction]
#[pyo3(signature = (data, dtype = None, device = None))]
pub fn as_tensor(
    data: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    check_device(device)?;
    let dt = parse_opt_dtype(dtype)?;
    let py = data.py();
    if let Ok(t) = data.cast::<PyTensor>() {
        return match dt {
            Some(d) if d != t.get().tensor().dtype() => wrap_any(py, t.get().tensor().to_dtype(d)),
            _ => Ok(t.clone().into_any().unbind()),
        };
    }
    // Only an array owns the memory its interface points at; a NumPy
    // scalar's interface describes a temporary copy, so it is copied.
    let is_ndarray = py
        .import("numpy")
        .and_then(|np| data.is_instance(&np.getattr("ndarray")?))
        .unwrap_or(false);
    if is_ndarray {
        if let Ok(t) = convert::from_array_interface(data, true) {
            let t = match dt {
                Some(d) => t.to_dtype(d),
                None => t,
            };
            return wrap_any(py, t);
        }
    }
    wrap_any(py, convert::data_to_tensor(data, dt)?)
}

/// Makes a tensor that shares memory with the NumPy array ``ndarray``.
///
/// Writes through either object are seen by the other, and the array is kept
/// alive as long as the tensor. The tensor has the array's shape, strides and
/// dtype.
///
/// Args:
///     ndarray (numpy.ndarray): the array to wrap.
///
/// Example:
///     >>> a = np.arange(3)
///     >>> t = ferrograd.from_numpy(a)
///     >>> t[1] = 10
///     >>> a
///     array([ 0, 10,  2])
#[pyfunction]
pub fn from_numpy(ndarray: &Bound<'_, PyAny>) -> PyResult<TensorOut> {
    let np = ndarray.py().import("numpy")?;
    if !ndarray.is_instance(&np.getattr("ndarray")?)? {
        return Err(PyTypeError::new_err(format!(
            "expected np.ndarray (got {})",
            ndarray.get_type().name()?
        )));
    }
    Ok(TensorOut(convert::from_array_interface(ndarray, true)?))
}

/// What every shape factory does: the shape from `*size` or `size=`, the
/// default float dtype unless `dtype=` is given, made by `make` without the
/// GIL, laid out in `format` when given (`empty`'s `memory_format=`), and
/// written into `out=` when given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn shaped(
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    size: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    format: Option<MemoryFormat>,
    make: impl FnOnce(&[usize], DType) -> ferrograd::Result<Tensor> + Send,
) -> PyResult<Py<PyAny>> {
    check_device(device)?;
    let shape = shape_of(args, size)?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or_else(default_dtype);
    let strides = match format {
        None => None,
        Some(MemoryFormat::Preserve) => {
            return Err(PyRuntimeError::new_err(
                "unsupported memory format Preserve",
            ))
        }
        Some(f) => Some(f.strides_like(&Layout::contiguous(&shape)).py()?),
    };
    let n: usize = shape.iter().product();
    let t = nogil(py, n, || match &strides {
        Some(s) => in_layout(make(&shape, dt)?, s),
        None => make(&shape, dt),
    })
    .py()?;
    deliver(py, t, out, requires_grad)
}

/// Shape factories with torch's keywords: `name(*size, size=None,
/// out=None, dtype=None, layout=None, device=None, requires_grad=False,
/// pin_memory=False)`, plus `memory_format=None` (`memory_format:`
/// entries) or `generator=None` (`generator:` entries, whose `make` also
/// gets the generator).
macro_rules! shape_factories {
    ($($(#[$doc:meta])* $name:ident => $make:expr;)*) => {
        $($crate::creation::shape_factories!(@fn $(#[$doc])* $name
            (*args, size = None, out = None, dtype = None, layout = None, device = None, requires_grad = false, pin_memory = false)
            [] [] $make);)*
    };
    (memory_format: $($(#[$doc:meta])* $name:ident => $make:expr;)*) => {
        $($crate::creation::shape_factories!(@fn $(#[$doc])* $name
            (*args, size = None, out = None, dtype = None, layout = None, device = None, requires_grad = false, pin_memory = false, memory_format = None)
            [] [memory_format] $make);)*
    };
    (generator: $($(#[$doc:meta])* $name:ident => |$shape:ident, $dt:ident, $g:ident| $make:expr;)*) => {
        $($crate::creation::shape_factories!(@fn $(#[$doc])* $name
            (*args, size = None, generator = None, out = None, dtype = None, layout = None, device = None, requires_grad = false, pin_memory = false)
            [generator => $g] [] |$shape, $dt| $make);)*
    };
    // One factory with doc attributes `$doc` and pyo3 signature `$sig`: an
    // optional generator parameter (converted into `$g` for `make`) and an
    // optional trailing `memory_format` keyword.
    (@fn $(#[$doc:meta])* $name:ident $sig:tt [$($gen:ident => $g:ident)?] [$($format:ident)?] $make:expr) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = $sig)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name(
            py: Python<'_>,
            args: &Bound<'_, PyTuple>,
            size: Option<&Bound<'_, PyAny>>,
            $($gen: Gen<'_, '_>,)?
            out: Option<&Bound<'_, PyAny>>,
            dtype: Option<&Bound<'_, PyAny>>,
            layout: Option<&Bound<'_, PyAny>>,
            device: Option<&Bound<'_, PyAny>>,
            requires_grad: bool,
            pin_memory: bool,
            $($format: Option<&Bound<'_, PyAny>>,)?
        ) -> PyResult<Py<PyAny>> {
            let _ = (layout, pin_memory);
            let _span = ferrograd::profiler::op_span(concat!("aten::", stringify!($name)), Vec::new);
            $(let $g = core_gen($gen);)?
            let format = $crate::memory_format::parse_opt(stringify!($name), None $(.or(Some($format)))?)?;
            $crate::creation::shaped(py, args, size, out, dtype, device, requires_grad, format, $make)
        }
    };
}
pub(crate) use shape_factories;

shape_factories! {
    /// zeros(*size, *, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor
    ///
    /// Returns a tensor of the given shape filled with ``0``.
    ///
    /// Args:
    ///     size (int...): the shape, as separate ints or one list/tuple
    ///         (``zeros(2, 3)`` or ``zeros((2, 3))``); may also be given as ``size=``.
    ///
    /// Keyword args:
    ///     out (Tensor, optional): a tensor of that shape to write the result into.
    ///     dtype (dtype, optional): the element type. Default: the default dtype
    ///         (see :func:`ferrograd.get_default_dtype`).
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(2, 3)
    ///     tensor([[0., 0., 0.],
    ///             [0., 0., 0.]])
    ///     >>> ferrograd.zeros((2,), dtype=ferrograd.int64)
    ///     tensor([0, 0])
    zeros => |s: &[usize], d| Tensor::full_of(s, Scalar::Int(0), d);
    /// ones(*size, *, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor
    ///
    /// Returns a tensor of the given shape filled with ``1``.
    ///
    /// Args:
    ///     size (int...): the shape, as separate ints or one list/tuple; may also
    ///         be given as ``size=``.
    ///
    /// Keyword args:
    ///     out (Tensor, optional): a tensor of that shape to write the result into.
    ///     dtype (dtype, optional): the element type. Default: the default dtype.
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.ones(2, 2)
    ///     tensor([[1., 1.],
    ///             [1., 1.]])
    ones => |s: &[usize], d| Tensor::full_of(s, Scalar::Int(1), d);
}

shape_factories! {
    memory_format:
    /// empty(*size, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False, memory_format=None) -> Tensor
    ///
    /// Returns a tensor of the given shape whose values are not initialised.
    ///
    /// Faster than :func:`ferrograd.zeros` when every element will be written
    /// anyway; reading an element before writing it gives an arbitrary value.
    ///
    /// Args:
    ///     size (int...): the shape, as separate ints or one list/tuple; may also
    ///         be given as ``size=``.
    ///
    /// Keyword args:
    ///     out (Tensor, optional): a tensor of that shape to write the result into.
    ///     dtype (dtype, optional): the element type. Default: the default dtype.
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
    ///     memory_format (memory_format, optional): the layout:
    ///         ``ferrograd.contiguous_format`` (row-major, the default) or
    ///         ``ferrograd.channels_last`` / ``ferrograd.channels_last_3d`` for
    ///         4-D / 5-D shapes.
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.empty(2, 3).shape
    ///     ferrograd.Size([2, 3])
    empty => Tensor::empty_of;
}

/// The dtype `full` infers from its fill value: bool, int64, the default
/// float or the default complex dtype.
fn fill_dtype(v: Scalar) -> DType {
    match v {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::Int64,
        Scalar::Float(_) => default_dtype(),
        Scalar::Complex(_) => ferrograd::default_complex_dtype(),
    }
}

fn fill_value(v: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if let Some(s) = convert::scalar(v)? {
        return Ok(s);
    }
    if let Ok(t) = v.cast::<PyTensor>() {
        if t.get().tensor().numel() == 1 {
            return t.get().tensor().item().py();
        }
    }
    Err(PyTypeError::new_err(format!(
        "fill_value must be a number, got {}",
        v.get_type().name()?
    )))
}

/// Returns a tensor of shape ``size`` with every element equal to ``fill_value``.
///
/// Without ``dtype`` the type follows the fill value: ``bool`` for a bool,
/// ``int64`` for an int, the default dtype for a float and the default complex
/// dtype for a complex number.
///
/// Args:
///     size (tuple of ints): the shape.
///     fill_value (Number): the value of every element (a one-element tensor
///         is accepted too).
///
/// Keyword args:
///     out (Tensor, optional): a tensor of that shape to write the result into.
///     dtype (dtype, optional): the element type. Default: inferred from
///         ``fill_value``.
///     layout (layout, optional): accepted for compatibility and ignored.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.full((2, 3), 1.5)
///     tensor([[1.5000, 1.5000, 1.5000],
///             [1.5000, 1.5000, 1.5000]])
///     >>> ferrograd.full((2,), 7)
///     tensor([7, 7])
#[pyfunction]
#[pyo3(signature = (size, fill_value, *, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
pub fn full(
    size: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    let _ = layout;
    check_device(device)?;
    let v = self::fill_value(fill_value)?;
    let shape = sizes(&convert::int_list(size, "size")?)?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or(fill_dtype(v));
    let n: usize = shape.iter().product();
    let t = nogil(size.py(), n, || Tensor::full_of(&shape, v, dt)).py()?;
    deliver(size.py(), t, out, requires_grad)
}

/// What every `*_like` factory (`fname`) does: the input's shape, its
/// dtype unless `dtype=` is given, made by `make` without the GIL and laid
/// out as `memory_format=` asks (the input's layout by default).
#[allow(clippy::too_many_arguments)]
pub(crate) fn like(
    py: Python<'_>,
    fname: &str,
    input: &PyTensor,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
    make: impl FnOnce(&[usize], DType) -> ferrograd::Result<Tensor> + Send,
) -> PyResult<TensorOut> {
    check_device(device)?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or(input.tensor().dtype());
    let strides = like_strides(fname, &input.tensor(), memory_format)?;
    let shape = input.tensor().shape().to_vec();
    let t = nogil(py, input.tensor().numel(), || {
        in_layout(make(&shape, dt)?, &strides)
    })
    .py()?;
    finish(t, requires_grad)
}

/// The strides of a `*_like` result of `fname` made from `input` in the
/// `memory_format=` given (preserve when absent), or torch's error.
pub(crate) fn like_strides(
    fname: &str,
    input: &Tensor,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<Dims> {
    let fmt = crate::memory_format::parse(fname, memory_format)?.unwrap_or(MemoryFormat::Preserve);
    fmt.strides_like(input.layout()).py()
}

/// A fresh row-major `t` (no autograd, no other handle) read through the
/// dense `strides` instead: the same memory in the order they give, so
/// values made in memory order (random draws) lie in memory as torch's do.
pub(crate) fn in_layout(t: Tensor, strides: &[usize]) -> ferrograd::Result<Tensor> {
    if t.strides() == strides {
        return Ok(t);
    }
    let layout = Layout::new(t.shape(), strides, 0);
    Tensor::from_parts(t.storage().clone(), layout, t.dtype())
}

/// `*_like` factories with torch's keywords: `name(input, *, dtype=None,
/// layout=None, device=None, requires_grad=False, memory_format=None)`,
/// plus `generator=None` for the random ones (`generator:` entries, whose
/// `make` also gets the generator).
macro_rules! like_factories {
    ($($(#[$doc:meta])* $name:ident => $make:expr;)*) => {
        $($crate::creation::like_factories!(@fn $(#[$doc])* $name
            (input, *, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None)
            [] $make);)*
    };
    (generator: $($(#[$doc:meta])* $name:ident => |$shape:ident, $dt:ident, $g:ident| $make:expr;)*) => {
        $($crate::creation::like_factories!(@fn $(#[$doc])* $name
            (input, *, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None, generator = None)
            [generator => $g] |$shape, $dt| $make);)*
    };
    // One factory with doc attributes `$doc`, pyo3 signature `$sig` and an
    // optional trailing generator parameter (converted into `$g` for `make`).
    (@fn $(#[$doc:meta])* $name:ident $sig:tt [$($gen:ident => $g:ident)?] $make:expr) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = $sig)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name(
            py: Python<'_>,
            input: PyRef<'_, PyTensor>,
            dtype: Option<&Bound<'_, PyAny>>,
            layout: Option<&Bound<'_, PyAny>>,
            device: Option<&Bound<'_, PyAny>>,
            requires_grad: bool,
            memory_format: Option<&Bound<'_, PyAny>>,
            $($gen: Gen<'_, '_>,)?
        ) -> PyResult<TensorOut> {
            let _ = layout;
            let _span = ferrograd::profiler::op_span(
                concat!("aten::", stringify!($name)),
                || vec![ferrograd::profiler::InputInfo::of(&input.tensor())],
            );
            $(let $g = core_gen($gen);)?
            $crate::creation::like(
                py, stringify!($name), &input, dtype, device, requires_grad, memory_format, $make,
            )
        }
    };
}
pub(crate) use like_factories;

like_factories! {
    /// zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None) -> Tensor
    ///
    /// Returns a tensor of zeros with the shape (and, unless ``dtype`` is given,
    /// the dtype) of ``input``.
    ///
    /// Args:
    ///     input (Tensor): the tensor whose shape and dtype are used.
    ///
    /// Keyword args:
    ///     dtype (dtype, optional): the element type. Default: ``input.dtype``.
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     memory_format (memory_format, optional): the layout of the result.
    ///         Default: ``ferrograd.preserve_format`` (``input``'s layout).
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.zeros_like(ferrograd.tensor([[1, 2], [3, 4]]))
    ///     tensor([[0, 0],
    ///             [0, 0]])
    zeros_like => |s: &[usize], d| Tensor::full_of(s, Scalar::Int(0), d);
    /// ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None) -> Tensor
    ///
    /// Returns a tensor of ones with the shape (and, unless ``dtype`` is given,
    /// the dtype) of ``input``.
    ///
    /// Args:
    ///     input (Tensor): the tensor whose shape and dtype are used.
    ///
    /// Keyword args:
    ///     dtype (dtype, optional): the element type. Default: ``input.dtype``.
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     memory_format (memory_format, optional): the layout of the result.
    ///         Default: ``ferrograd.preserve_format`` (``input``'s layout).
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.ones_like(ferrograd.tensor([1.0, 2.0, 3.0]))
    ///     tensor([1., 1., 1.])
    ones_like => |s: &[usize], d| Tensor::full_of(s, Scalar::Int(1), d);
    /// empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None) -> Tensor
    ///
    /// Returns an uninitialised tensor with the shape (and, unless ``dtype`` is
    /// given, the dtype) of ``input``.
    ///
    /// Args:
    ///     input (Tensor): the tensor whose shape and dtype are used.
    ///
    /// Keyword args:
    ///     dtype (dtype, optional): the element type. Default: ``input.dtype``.
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     memory_format (memory_format, optional): the layout of the result.
    ///         Default: ``ferrograd.preserve_format`` (``input``'s layout).
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.empty_like(ferrograd.zeros(2, 3)).shape
    ///     ferrograd.Size([2, 3])
    empty_like => Tensor::empty_of;
}

/// Returns a tensor with the shape of ``input`` filled with ``fill_value``.
///
/// Unlike :func:`ferrograd.full`, the dtype is that of ``input`` unless
/// ``dtype`` is given.
///
/// Args:
///     input (Tensor): the tensor whose shape and dtype are used.
///     fill_value (Number): the value of every element.
///
/// Keyword args:
///     dtype (dtype, optional): the element type. Default: ``input.dtype``.
///     layout (layout, optional): accepted for compatibility and ignored.
///     memory_format (memory_format, optional): the layout of the result.
///         Default: ``ferrograd.preserve_format`` (``input``'s layout).
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.full_like(ferrograd.zeros(2), 3)
///     tensor([3., 3.])
#[pyfunction]
#[pyo3(signature = (input, fill_value, *, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None))]
#[allow(clippy::too_many_arguments)]
pub fn full_like(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
) -> PyResult<TensorOut> {
    let _ = layout;
    let v = self::fill_value(fill_value)?;
    like(
        py,
        "full_like",
        &input,
        dtype,
        device,
        requires_grad,
        memory_format,
        |s, d| Tensor::full_of(s, v, d),
    )
}

/// Returns `t`, or copies it into `out=` (which must already have its shape).
pub(crate) fn deliver(
    py: Python<'_>,
    t: Tensor,
    out: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    match out {
        Some(o) if !o.is_none() => {
            let dst = o
                .cast::<PyTensor>()
                .map_err(|_| PyTypeError::new_err("out must be a Tensor"))?;
            let d = &dst.get().tensor();
            if d.shape() != t.shape() {
                return Err(PyRuntimeError::new_err(format!(
                    "out tensor has shape {:?} but the result has shape {:?} (resizing out= is not supported)",
                    d.shape(),
                    t.shape()
                )));
            }
            nogil(py, t.numel(), || d.copy_(&t)).py()?;
            if requires_grad {
                d.set_requires_grad(true).py()?;
            }
            Ok(dst.clone().into_any().unbind())
        }
        _ => Ok(finish(t, requires_grad)?
            .into_pyobject(py)?
            .into_any()
            .unbind()),
    }
}

/// A number argument: a Python number, a NumPy scalar or a one-element
/// tensor.
pub(crate) fn number(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Scalar> {
    if let Some(s) = convert::scalar(obj)? {
        return Ok(s);
    }
    if let Some(t) = convert::operand(obj)? {
        if t.numel() == 1 {
            return t.item().py();
        }
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be a number, got {}",
        obj.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}

/// An integer argument (bools and floats are refused, as torch does).
pub(crate) fn integer(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    match number(obj, what)? {
        Scalar::Int(v) => Ok(v),
        _ => Err(PyTypeError::new_err(format!(
            "{what} must be an integer, got {}",
            obj.repr()?
        ))),
    }
}

/// The shape of `f(2, 3)`, `f((2, 3))` or `f(size=(2, 3))`.
pub(crate) fn shape_of(
    args: &Bound<'_, PyTuple>,
    size: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<usize>> {
    match size {
        Some(s) if !s.is_none() => {
            if !args.is_empty() {
                return Err(PyTypeError::new_err(
                    "size given both positionally and as a keyword",
                ));
            }
            sizes(&int_list(s, "size")?)
        }
        _ => sizes(&shape_args(args)?),
    }
}

// ---------------------------------------------------------------- ranges

/// arange(start=0, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor
///
/// Returns a 1-D tensor of the values from ``start`` (included) to ``end``
/// (excluded) spaced by ``step``.
///
/// Called as ``arange(end)``, ``arange(start, end)`` or ``arange(start, end,
/// step)``, or with keywords. The result has ``ceil((end - start) / step)``
/// elements. Without ``dtype`` it is ``int64`` when all three numbers are
/// ints, else the default dtype. With a fractional step, rounding can make
/// the last value land close to ``end``: prefer :func:`ferrograd.linspace`
/// there.
///
/// Args:
///     start (Number): the first value. Default: 0.
///     end (Number): the bound, not included.
///     step (Number): the gap between neighbours (may be negative). Default: 1.
///
/// Keyword args:
///     out (Tensor, optional): a tensor of the result's shape to write into.
///     dtype (dtype, optional): the element type. Default: inferred as above.
///     layout (layout, optional): accepted for compatibility and ignored.
///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.arange(5)
///     tensor([0, 1, 2, 3, 4])
///     >>> ferrograd.arange(1, 2.5, 0.5)
///     tensor([1.0000, 1.5000, 2.0000])
#[pyfunction]
#[pyo3(signature = (*args, start = None, end = None, step = None, out = None, dtype = None, layout = None, device = None, requires_grad = false, pin_memory = false))]
#[allow(clippy::too_many_arguments)]
fn arange(
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    start: Option<&Bound<'_, PyAny>>,
    end: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    pin_memory: bool,
) -> PyResult<Py<PyAny>> {
    let _ = (layout, pin_memory);
    check_device(device)?;
    let pos: Vec<Bound<'_, PyAny>> = args.iter().collect();
    let (mut s, mut e, mut st) = (None, None, None);
    match pos.len() {
        0 => {}
        1 => e = Some(pos[0].clone()),
        2 => (s, e) = (Some(pos[0].clone()), Some(pos[1].clone())),
        3 => {
            (s, e, st) = (
                Some(pos[0].clone()),
                Some(pos[1].clone()),
                Some(pos[2].clone()),
            )
        }
        n => {
            return Err(PyTypeError::new_err(format!(
                "arange() takes from 1 to 3 positional arguments but {n} were given"
            )))
        }
    }
    let pick = |p: Option<Bound<'_, PyAny>>, k: Option<&Bound<'_, PyAny>>, name: &str| {
        if p.is_some() && k.is_some_and(|k| !k.is_none()) {
            return Err(PyTypeError::new_err(format!(
                "arange() got multiple values for argument '{name}'"
            )));
        }
        p.or_else(|| k.filter(|k| !k.is_none()).cloned())
            .map(|o| number(&o, name))
            .transpose()
    };
    let s = pick(s, start, "start")?.unwrap_or(Scalar::Int(0));
    let e = pick(e, end, "end")?
        .ok_or_else(|| PyTypeError::new_err("arange() missing required argument 'end'"))?;
    let st = pick(st, step, "step")?.unwrap_or(Scalar::Int(1));
    let dt = parse_opt_dtype(dtype)?;
    let t = detached(py, || Tensor::arange(s, e, st, dt)).py()?;
    deliver(py, t, out, requires_grad)
}

/// Returns a 1-D tensor of ``steps`` values evenly spaced from ``start`` to
/// ``end``, both included.
///
/// Args:
///     start (Number): the first value.
///     end (Number): the last value.
///     steps (int): how many values (``0`` gives an empty tensor).
///
/// Keyword args:
///     out (Tensor, optional): a tensor of the result's shape to write into.
///     dtype (dtype, optional): the element type. Default: the default dtype.
///     layout (layout, optional): accepted for compatibility and ignored.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.linspace(0, 1, steps=5)
///     tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
#[pyfunction]
#[pyo3(signature = (start, end, steps, *, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
fn linspace(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    steps: &Bound<'_, PyAny>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    let _ = layout;
    check_device(device)?;
    let (a, b) = (number(start, "start")?, number(end, "end")?);
    let n = integer(steps, "steps")?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or_else(default_dtype);
    let t = detached(py, || Tensor::linspace(a, b, n, dt)).py()?;
    deliver(py, t, out, requires_grad)
}

/// Returns a 1-D tensor of ``steps`` values spaced evenly on a log scale:
/// ``base ** linspace(start, end, steps)``.
///
/// Args:
///     start (Number): the first exponent.
///     end (Number): the last exponent.
///     steps (int): how many values.
///     base (float): the base of the powers. Default: 10.0.
///
/// Keyword args:
///     out (Tensor, optional): a tensor of the result's shape to write into.
///     dtype (dtype, optional): the element type. Default: the default dtype.
///     layout (layout, optional): accepted for compatibility and ignored.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.logspace(0, 2, steps=3)
///     tensor([  1.,  10., 100.])
///     >>> ferrograd.logspace(0, 3, steps=4, base=2)
///     tensor([1., 2., 4., 8.])
#[pyfunction]
#[pyo3(signature = (start, end, steps, base = 10.0, *, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
fn logspace(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    end: &Bound<'_, PyAny>,
    steps: &Bound<'_, PyAny>,
    base: f64,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    let _ = layout;
    check_device(device)?;
    let (a, b) = (number(start, "start")?, number(end, "end")?);
    let n = integer(steps, "steps")?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or_else(default_dtype);
    let t = detached(py, || Tensor::logspace(a, b, n, base, dt)).py()?;
    deliver(py, t, out, requires_grad)
}

/// Returns an ``n`` by ``m`` matrix with ones on the main diagonal and zeros
/// elsewhere.
///
/// Args:
///     n (int): the number of rows.
///     m (int, optional): the number of columns. Default: ``n``.
///
/// Keyword args:
///     out (Tensor, optional): a tensor of the result's shape to write into.
///     dtype (dtype, optional): the element type. Default: the default dtype.
///     layout (layout, optional): accepted for compatibility and ignored.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.eye(2)
///     tensor([[1., 0.],
///             [0., 1.]])
///     >>> ferrograd.eye(2, 3, dtype=ferrograd.int64)
///     tensor([[1, 0, 0],
///             [0, 1, 0]])
#[pyfunction]
#[pyo3(signature = (n, m = None, *, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
fn eye(
    py: Python<'_>,
    n: &Bound<'_, PyAny>,
    m: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    let _ = layout;
    check_device(device)?;
    let n = integer(n, "n")?;
    let m = m
        .filter(|m| !m.is_none())
        .map(|m| integer(m, "m"))
        .transpose()?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or_else(default_dtype);
    let t = detached(py, || Tensor::eye(n, m, dt)).py()?;
    deliver(py, t, out, requires_grad)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tensor, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(linspace, m)?)?;
    m.add_function(wrap_pyfunction!(logspace, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    m.add_function(wrap_pyfunction!(as_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(full_like, m)?)?;
    Ok(())
}
