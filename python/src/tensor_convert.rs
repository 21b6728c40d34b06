//! Tensor's conversions: to Python values and NumPy arrays (`item`,
//! `tolist`, `numpy`, the array protocols) and to other dtypes (`to`,
//! `type`, `float`, `double`, ...).

use crate::convert::scalar_to_py;
use crate::convert::{array_interface, to_list};
use crate::dtype::{parse_dtype, PyDType, PyDevice};
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, nogil_ok, wrap, wrap_any, PyTensor};
use crate::tensor_methods::one_value;
use ferrograd::tensor::MemoryFormat;
use ferrograd::DType;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

#[pymethods]
impl PyTensor {
    /// The element type, a :class:`ferrograd.dtype`.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).dtype, ferrograd.tensor([1.0]).dtype
    ///     (ferrograd.int64, ferrograd.float32)
    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType {
            dt: self.tensor().dtype(),
        }
    }

    /// The device holding the tensor: always ``device(type='cpu')``.
    ///
    /// Example:
    ///     >>> ferrograd.zeros(1).device
    ///     device(type='cpu')
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice {}
    }

    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let z = one_value(&self.tensor())?.to_complex();
        Ok(crate::convert::complex_to_py(py, z))
    }

    /// The value of a one-element tensor as a Python number (or bool).
    ///
    /// Raises a RuntimeError for a tensor of more than one element.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([3.5]).item()
    ///     3.5
    ///     >>> ferrograd.tensor([[7]]).item()
    ///     7
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        scalar_to_py(py, self.tensor().item().py()?)
    }
    /// The values as nested Python lists of numbers (a number for a 0-dim tensor).
    ///
    /// Example:
    ///     >>> ferrograd.tensor([[1, 2], [3, 4]]).tolist()
    ///     [[1, 2], [3, 4]]
    ///     >>> ferrograd.tensor(2.5).tolist()
    ///     2.5
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_list(py, &self.tensor())
    }

    /// A NumPy array sharing this tensor's memory (no copy).
    ///
    /// Writes through either are seen by both. A tensor that requires grad
    /// raises unless ``force=True`` (which converts its :meth:`detach`);
    /// bfloat16 tensors have no NumPy dtype and raise (use
    /// ``t.float().numpy()``).
    ///
    /// Keyword args:
    ///     force (bool): allow tensors that require grad. Default: False.
    ///
    /// Example:
    ///     >>> t = ferrograd.tensor([1.0, 2.0])
    ///     >>> a = t.numpy()
    ///     >>> a[0] = 7
    ///     >>> t
    ///     tensor([7., 2.])
    #[pyo3(signature = (*, force = false))]
    fn numpy<'py>(slf: &Bound<'py, Self>, force: bool) -> PyResult<Bound<'py, PyAny>> {
        ferrograd::compile::break_capture("tensor values are read into Python (numpy)");
        let me = slf.get();
        if me.tensor().requires_grad() && !force {
            return Err(PyRuntimeError::new_err(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
            ));
        }
        if me.tensor().dtype() == DType::BFloat16 {
            return Err(PyTypeError::new_err("Got unsupported ScalarType BFloat16"));
        }
        let np = slf.py().import("numpy")?;
        if force && me.tensor().requires_grad() {
            let d = wrap(slf.py(), me.tensor().detach())?;
            return np.call_method1("asarray", (d,));
        }
        np.call_method1("asarray", (slf,))
    }

    /// Above NumPy's own, so `np.float64(2) * t` and `np.float32(1) + t`
    /// defer to the tensor's reflected operator (a tensor result with its
    /// graph) as with torch, rather than converting the tensor to an array.
    #[classattr]
    fn __array_priority__() -> i64 {
        1000
    }

    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.tensor().requires_grad() {
            return Err(PyRuntimeError::new_err(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
            ));
        }
        if self.tensor().dtype() == DType::BFloat16 {
            // NumPy has no bfloat16: without this attribute NumPy falls
            // back to `__array__`, which widens to float32.
            return Err(pyo3::exceptions::PyAttributeError::new_err(
                "bfloat16 tensors have no NumPy memory layout; np.asarray widens them to float32",
            ));
        }
        array_interface(py, &self.tensor())
    }

    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let np = slf.py().import("numpy")?;
        let arr = if slf.get().tensor().dtype() == DType::BFloat16 {
            // NumPy has no bfloat16: a float32 copy (exact).
            let wide = wrap(
                slf.py(),
                slf.get().tensor().detach().to_dtype(DType::Float32),
            )?;
            np.call_method1("asarray", (wide,))?
        } else {
            Self::numpy(slf, false)?
        };
        let arr = match dtype {
            Some(d) if !d.is_none() => arr.call_method1("astype", (d,))?,
            _ => arr,
        };
        if copy == Some(true) {
            return np.call_method1("array", (arr,));
        }
        Ok(arr)
    }

    /// This tensor converted to another dtype (device arguments are checked only).
    ///
    /// Accepted forms: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
    /// ``to(other)`` (``other``'s dtype), and the keywords. The result is
    /// ``self`` when nothing changes and ``copy`` is False; otherwise a new
    /// tensor (differentiable between floating and complex dtypes). Only the
    /// CPU exists: another device raises a RuntimeError.
    ///
    /// Args:
    ///     *args: a dtype, a device (``"cpu"`` or :class:`ferrograd.device`) or a tensor.
    ///
    /// Keyword args:
    ///     dtype (dtype, optional): the target dtype.
    ///     device (str or device, optional): the target device (CPU only).
    ///     copy (bool): always return a new tensor. Default: False.
    ///     non_blocking (bool): accepted for compatibility; ignored.
    ///     memory_format (memory_format, optional): the layout of a new
    ///         tensor (``ferrograd.preserve_format``, the default, keeps this
    ///         one's); a tensor already laid out so is returned as it is.
    ///
    /// Example:
    ///     >>> t = ferrograd.tensor([1.5, 2.5])
    ///     >>> t.to(ferrograd.int64)
    ///     tensor([1, 2])
    ///     >>> t.to("cpu") is t
    ///     True
    ///     >>> t.to(ferrograd.zeros(1, dtype=ferrograd.float64))
    ///     tensor([1.5000, 2.5000], dtype=ferrograd.float64)
    #[pyo3(signature = (*args, dtype = None, device = None, copy = false, non_blocking = false, memory_format = None))]
    fn to(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        dtype: Option<&Bound<'_, PyAny>>,
        device: Option<&Bound<'_, PyAny>>,
        copy: bool,
        non_blocking: bool,
        memory_format: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let _ = non_blocking;
        let fmt =
            crate::memory_format::parse("to", memory_format)?.unwrap_or(MemoryFormat::Preserve);
        crate::dtype::check_device(device)?;
        let mut target = crate::dtype::parse_opt_dtype(dtype)?;
        for a in args.iter() {
            if let Ok(other) = a.cast::<PyTensor>() {
                target = Some(other.get().tensor().dtype());
            } else if let Ok(d) = parse_dtype(&a) {
                target = Some(d);
            } else {
                crate::dtype::check_device(Some(&a))?;
            }
        }
        let me = slf.get();
        let py = slf.py();
        let dt = target.unwrap_or(me.tensor().dtype());
        let laid_out = fmt == MemoryFormat::Preserve || fmt.matches(me.tensor().layout());
        if dt == me.tensor().dtype() && !copy && laid_out {
            return Ok(slf.clone().into_any().unbind());
        }
        let t = nogil(py, me.tensor().numel(), || {
            let cast = me.tensor().to_dtype(dt);
            if dt == me.tensor().dtype() || !laid_out {
                // Still `self` (or a cast not yet laid out as asked): a copy.
                cast.try_copy_as(fmt)
            } else {
                Ok(cast)
            }
        })
        .py()?;
        wrap_any(py, t)
    }

    /// The type name as a string, or this tensor converted to another type.
    ///
    /// With no argument, returns torch's legacy type name (``'torch.FloatTensor'``
    /// for float32). With a dtype, a type name string or a legacy type such as
    /// :class:`ferrograd.DoubleTensor`, converts like :meth:`to`.
    ///
    /// Args:
    ///     dtype (dtype, str or type, optional): the target type.
    ///
    /// Example:
    ///     >>> t = ferrograd.tensor([1.5, 2.5])
    ///     >>> t.type()
    ///     'torch.FloatTensor'
    ///     >>> t.type(ferrograd.int32)
    ///     tensor([1, 2], dtype=ferrograd.int32)
    ///     >>> t.type("torch.DoubleTensor")
    ///     tensor([1.5000, 2.5000], dtype=ferrograd.float64)
    #[pyo3(signature = (dtype = None))]
    fn r#type(slf: &Bound<'_, Self>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        match dtype {
            // torch's names, so `x.type() == 'torch.FloatTensor'` holds.
            None => Ok(format!(
                "torch.{}Tensor",
                slf.get().tensor().dtype().scalar_type_name()
            )
            .into_pyobject(slf.py())?
            .into_any()
            .unbind()),
            Some(d) => match d.cast::<PyString>() {
                Ok(name) => cast_to(slf, crate::dtype::parse_type_name(&name.to_cow()?)?),
                Err(_) => cast_to(slf, parse_dtype(d)?),
            },
        }
    }

    /// ``self.to(ferrograd.float32)``: this tensor converted to ``ferrograd.float32`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).float()
    ///     tensor([1., 2.])
    fn float(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Float32)
    }
    /// ``self.to(ferrograd.float64)``: this tensor converted to ``ferrograd.float64`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).double()
    ///     tensor([1., 2.], dtype=ferrograd.float64)
    fn double(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Float64)
    }
    /// ``self.to(ferrograd.int64)``: this tensor converted to ``ferrograd.int64`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).long()
    ///     tensor([ 1, -2])
    fn long(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int64)
    }
    /// ``self.to(ferrograd.int32)``: this tensor converted to ``ferrograd.int32`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).int()
    ///     tensor([ 1, -2], dtype=ferrograd.int32)
    fn int(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int32)
    }
    /// ``self.to(ferrograd.bool)``: this tensor converted to ``ferrograd.bool`` (``self`` if it already is).
    ///
    /// Nonzero values become True.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([0.0, 2.0]).bool()
    ///     tensor([False,  True])
    fn bool(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Bool)
    }
    /// ``self.to(ferrograd.float16)``: this tensor converted to ``ferrograd.float16`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).half()
    ///     tensor([1., 2.], dtype=ferrograd.float16)
    fn half(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Float16)
    }
    /// ``self.to(ferrograd.bfloat16)``: this tensor converted to ``ferrograd.bfloat16`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).bfloat16()
    ///     tensor([1., 2.], dtype=ferrograd.bfloat16)
    fn bfloat16(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::BFloat16)
    }
    /// ``self.to(ferrograd.complex64)``: this tensor converted to ``ferrograd.complex64`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).cfloat()
    ///     tensor([1.+0.j, 2.+0.j])
    fn cfloat(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Complex64)
    }
    /// ``self.to(ferrograd.complex128)``: this tensor converted to ``ferrograd.complex128`` (``self`` if it already is).
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.0, 2.0]).cdouble()
    ///     tensor([1.+0.j, 2.+0.j], dtype=ferrograd.complex128)
    fn cdouble(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Complex128)
    }
    /// ``self.to(ferrograd.int16)``: this tensor converted to ``ferrograd.int16`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).short()
    ///     tensor([ 1, -2], dtype=ferrograd.int16)
    fn short(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int16)
    }
    /// ``self.to(ferrograd.int8)``: this tensor converted to ``ferrograd.int8`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, -2.7]).char()
    ///     tensor([ 1, -2], dtype=ferrograd.int8)
    fn char(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::Int8)
    }
    /// ``self.to(ferrograd.uint8)``: this tensor converted to ``ferrograd.uint8`` (``self`` if it already is).
    ///
    /// Floating values are truncated toward zero.
    ///
    /// The conversion is differentiable when both dtypes are floating or complex.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1.7, 2.7]).byte()
    ///     tensor([1, 2], dtype=ferrograd.uint8)
    fn byte(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        cast_to(slf, DType::UInt8)
    }
    /// ``self.to(other.dtype)``: this tensor converted to ``other``'s dtype.
    ///
    /// Args:
    ///     other (Tensor): the tensor whose dtype to take.
    ///
    /// Example:
    ///     >>> ferrograd.tensor([1, 2]).type_as(ferrograd.zeros(1))
    ///     tensor([1., 2.])
    fn type_as(slf: &Bound<'_, Self>, other: PyRef<'_, PyTensor>) -> PyResult<Py<PyAny>> {
        cast_to(slf, other.tensor().dtype())
    }
    /// Returns ``self``: every ferrograd tensor is already on the CPU.
    fn cpu(slf: &Bound<'_, Self>) -> Py<PyAny> {
        slf.clone().into_any().unbind()
    }
}

fn cast_to(slf: &Bound<'_, PyTensor>, dt: DType) -> PyResult<Py<PyAny>> {
    let me = slf.get();
    if me.tensor().dtype() == dt {
        return Ok(slf.clone().into_any().unbind());
    }
    let py = slf.py();
    let t = nogil_ok(py, me.tensor().numel(), || me.tensor().to_dtype(dt))?;
    wrap_any(py, t)
}
