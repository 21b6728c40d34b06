//! Conversions between Python objects and tensors: operands, shapes, nested
//! data (`tensor()`, `tolist()`), and NumPy's `__array_interface__`.

use crate::errors::IntoPyResult;
use crate::tensor::PyTensor;
use ferrograd::tensor::Category;
use ferrograd::{
    default_complex_dtype, default_dtype, Complex, DType, Layout, Scalar, Storage, Tensor,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyComplex, PyDict, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple,
};
use pyo3::BoundObject;

/// A Python scalar as a [`Scalar`], or `None` if `obj` is not one.
pub fn scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(Some(Scalar::Bool(obj.extract::<bool>()?)));
    }
    if obj.is_instance_of::<PyInt>() {
        return match obj.extract::<i64>() {
            Ok(v) => Ok(Some(Scalar::Int(v))),
            Err(_) => Err(PyRuntimeError::new_err(format!(
                "Overflow when unpacking long: {} does not fit in int64",
                obj.repr()?
            ))),
        };
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Some(Scalar::Float(obj.extract::<f64>()?)));
    }
    if let Ok(z) = obj.cast::<PyComplex>() {
        return Ok(Some(Scalar::Complex(Complex::new(z.real(), z.imag()))));
    }
    Ok(None)
}

/// A Python `complex` holding `z`.
pub fn complex_to_py(py: Python<'_>, z: Complex<f64>) -> Bound<'_, PyAny> {
    PyComplex::from_doubles(py, z.re, z.im).into_any()
}

/// The Python type name of `obj`, for error messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A number argument (`alpha=`, `value=`, `beta=`...): a Python number or a
/// one-element tensor; `default` when absent; TypeError naming `what`
/// otherwise.
pub fn number_arg(obj: Option<&Bound<'_, PyAny>>, what: &str, default: Scalar) -> PyResult<Scalar> {
    let Some(obj) = obj else {
        return Ok(default);
    };
    if let Ok(t) = obj.cast::<PyTensor>() {
        if t.get().tensor().numel() == 1 {
            return t.get().tensor().item().py();
        }
    }
    scalar(obj)?.ok_or_else(|| {
        PyTypeError::new_err(format!("{what} must be a number, not {}", type_name(obj)))
    })
}

/// A tensor operand: a Tensor, a Python scalar (as a wrapped number), or a
/// NumPy scalar/array (copied). `None` if `obj` is none of these.
pub fn operand(obj: &Bound<'_, PyAny>) -> PyResult<Option<Tensor>> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(Some(t.get().tensor()));
    }
    if let Some(s) = scalar(obj)? {
        return Ok(Some(Tensor::scalar(s)));
    }
    if obj.hasattr("__array_interface__")? && !obj.is_instance_of::<PyString>() {
        return Ok(Some(from_array_interface(obj, false)?));
    }
    Ok(None)
}

/// Like [`operand`] but a TypeError naming `what` when `obj` is not one.
pub fn tensor_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Tensor> {
    operand(obj)?.ok_or_else(|| {
        let ty = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        PyTypeError::new_err(format!("{what} must be a Tensor or a number, not {ty}"))
    })
}

/// Sizes given as `f(2, 3)`, `f((2, 3))` or `f([2, 3])`.
pub fn shape_args(args: &Bound<'_, PyTuple>) -> PyResult<Vec<isize>> {
    if args.len() == 1 {
        let first = args.get_item(0)?;
        if !first.is_instance_of::<PyInt>() {
            return int_list(&first, "size");
        }
    }
    int_list(args.as_any(), "size")
}

/// A sequence of ints (a tuple, list, Size or 1-D integer tensor).
pub fn int_list(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<isize>> {
    if obj.is_instance_of::<PyInt>() {
        return Ok(vec![obj.extract::<isize>()?]);
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().tensor();
        if t.dtype().category() == ferrograd::tensor::Category::Integer && t.ndim() <= 1 {
            return Ok(t.to_vec::<i64>().into_iter().map(|v| v as isize).collect());
        }
    }
    let seq = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a tuple of ints, but got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut out = Vec::with_capacity(seq.len()?);
    for item in seq.try_iter()? {
        let item = item?;
        if item.is_instance_of::<PyBool>() || item.is_instance_of::<PyFloat>() {
            return Err(PyTypeError::new_err(format!(
                "{what} must be a tuple of ints, but got an element of type {}",
                item.get_type().name()?
            )));
        }
        out.push(item.extract::<isize>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what} must be a tuple of ints, but got an element of type {}",
                item.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?);
    }
    Ok(out)
}

/// Non-negative sizes.
pub fn sizes(v: &[isize]) -> PyResult<Vec<usize>> {
    v.iter()
        .map(|&s| {
            usize::try_from(s).map_err(|_| {
                PyRuntimeError::new_err(format!(
                    "Trying to create tensor with negative dimension {s}: {v:?}"
                ))
            })
        })
        .collect()
}

/// Values gathered from nested Python sequences.
enum Values {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Complex(Vec<Complex<f64>>),
}

impl Values {
    fn push(&mut self, s: Scalar) {
        // Widen the buffer to the scalar's kind first (bool < int < float <
        // complex).
        match (&*self, s) {
            (Values::Complex(_), _) => {}
            (_, Scalar::Complex(_)) => {
                let v: Vec<Complex<f64>> = match &*self {
                    Values::Bool(v) => v
                        .iter()
                        .map(|&b| Complex::new(b as u8 as f64, 0.0))
                        .collect(),
                    Values::Int(v) => v.iter().map(|&i| Complex::new(i as f64, 0.0)).collect(),
                    Values::Float(v) => v.iter().map(|&f| Complex::new(f, 0.0)).collect(),
                    Values::Complex(v) => v.clone(),
                };
                *self = Values::Complex(v)
            }
            (Values::Bool(v), Scalar::Int(_)) => {
                *self = Values::Int(v.iter().map(|&b| b as i64).collect())
            }
            (Values::Bool(v), Scalar::Float(_)) => {
                *self = Values::Float(v.iter().map(|&b| b as u8 as f64).collect())
            }
            (Values::Int(v), Scalar::Float(_)) => {
                *self = Values::Float(v.iter().map(|&i| i as f64).collect())
            }
            _ => {}
        }
        match self {
            Values::Bool(v) => v.push(s.to_bool()),
            Values::Int(v) => v.push(s.to_i64()),
            Values::Float(v) => v.push(s.to_f64()),
            Values::Complex(v) => v.push(s.to_complex()),
        }
    }
}

fn collect(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    shape: &mut Vec<usize>,
    known: &mut bool,
    out: &mut Values,
) -> PyResult<()> {
    if let Some(s) = scalar(obj)? {
        if *known && depth != shape.len() {
            return Err(PyValueError::new_err(format!(
                "expected sequence of length {} at dim {depth} (got a number)",
                shape[depth]
            )));
        }
        *known = true;
        out.push(s);
        return Ok(());
    }
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().tensor();
        if t.ndim() == 0 {
            let s = t.item().py()?;
            return collect_scalar(s, depth, shape, known, out);
        }
        let list = to_list(obj.py(), t)?;
        return collect(&list, depth, shape, known, out);
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "new(): invalid data type 'str' ({})",
            obj.repr()?
        )));
    }
    if obj.hasattr("__array_interface__")? && !obj.is_instance_of::<PyList>() {
        let t = from_array_interface(obj, false)?;
        if t.ndim() == 0 {
            return collect_scalar(t.item().py()?, depth, shape, known, out);
        }
        let list = to_list(obj.py(), &t)?;
        return collect(&list, depth, shape, known, out);
    }
    let seq = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!(
            "new(): invalid data type '{}'",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let n = seq.len()?;
    if *known {
        if depth >= shape.len() || shape[depth] != n {
            return Err(PyValueError::new_err(format!(
                "expected sequence of length {} at dim {depth} (got {n})",
                shape.get(depth).copied().unwrap_or(0)
            )));
        }
    } else {
        shape.push(n);
        if n == 0 {
            *known = true;
        }
    }
    for item in seq.try_iter()? {
        collect(&item?, depth + 1, shape, known, out)?;
    }
    Ok(())
}

fn collect_scalar(
    s: Scalar,
    depth: usize,
    shape: &mut [usize],
    known: &mut bool,
    out: &mut Values,
) -> PyResult<()> {
    if *known && depth != shape.len() {
        return Err(PyValueError::new_err(format!(
            "expected sequence of length {} at dim {depth} (got a number)",
            shape[depth]
        )));
    }
    *known = true;
    out.push(s);
    Ok(())
}

/// `tensor(data)`: copies nested sequences / scalars / arrays / tensors.
/// Inferred dtype: bool if all bools, int64 if all integers, the default
/// complex dtype if any complex, else the default float dtype.
pub fn data_to_tensor(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = t.get().tensor().copy();
        return Ok(match dtype {
            Some(d) => t.to_dtype(d),
            None => t,
        });
    }
    if obj.hasattr("__array_interface__")? && !obj.is_instance_of::<PyList>() {
        let t = from_array_interface(obj, false)?;
        return Ok(match dtype {
            Some(d) => t.to_dtype(d),
            None => t,
        });
    }
    let mut shape = Vec::new();
    let mut known = false;
    let mut values = Values::Bool(Vec::new());
    collect(obj, 0, &mut shape, &mut known, &mut values)?;
    let t = match values {
        Values::Bool(v) if !v.is_empty() => Tensor::from_slice(&v, &shape).py()?,
        Values::Bool(_) => Tensor::zeros(&shape, dtype.unwrap_or_else(default_dtype)),
        Values::Int(v) => Tensor::from_slice(&v, &shape).py()?,
        // Python floats are doubles: convert once, to the requested dtype
        // (rounding through the default dtype first would lose precision).
        Values::Float(v) => Tensor::from_slice(&v, &shape)
            .py()?
            .to_dtype(dtype.unwrap_or_else(default_dtype)),
        Values::Complex(v) => Tensor::from_slice(&v, &shape)
            .py()?
            .to_dtype(dtype.unwrap_or_else(default_complex_dtype)),
    };
    Ok(match dtype {
        Some(d) => t.to_dtype(d),
        None => t,
    })
}

/// Nested Python lists (or a scalar for 0-dim) of a tensor's values.
pub fn to_list<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyAny>> {
    ferrograd::compile::break_capture("tensor values are read into Python (tolist)");
    fn build<'py, T: Copy>(
        py: Python<'py>,
        data: &[T],
        shape: &[usize],
        item: &dyn Fn(T) -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if shape.is_empty() {
            return item(data[0]);
        }
        let n = shape[0];
        let inner: usize = shape[1..].iter().product();
        let items = (0..n)
            .map(|i| build(py, &data[i * inner..(i + 1) * inner], &shape[1..], item))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.into_any())
    }
    fn plain<'py, T: IntoPyObject<'py>>(
        py: Python<'py>,
    ) -> impl Fn(T) -> PyResult<Bound<'py, PyAny>> {
        move |v| {
            Ok(v.into_pyobject(py)
                .map_err(Into::into)?
                .into_any()
                .into_bound())
        }
    }
    let shape = t.shape();
    match t.dtype().category() {
        Category::Bool => build(py, &t.to_vec::<bool>(), shape, &plain(py)),
        Category::Integer => build(py, &t.to_vec::<i64>(), shape, &plain(py)),
        Category::Floating => build(py, &t.to_vec::<f64>(), shape, &plain(py)),
        Category::Complex => build(py, &t.to_vec::<Complex<f64>>(), shape, &|z| {
            Ok(complex_to_py(py, z))
        }),
    }
}

/// Keeps a Python object alive from Rust (the owner of foreign memory).
struct PyOwner(#[allow(dead_code)] Py<PyAny>);

/// Reads an object exposing `__array_interface__` (NumPy arrays and
/// scalars). With `share`, the tensor views the object's memory and keeps it
/// alive; otherwise the data are copied.
pub fn from_array_interface(obj: &Bound<'_, PyAny>, share: bool) -> PyResult<Tensor> {
    let py = obj.py();
    let iface = obj.getattr("__array_interface__")?;
    let iface = iface.cast::<PyDict>()?;
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        iface
            .get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("__array_interface__ lacks '{k}'")))
    };
    let typestr: String = get("typestr")?.extract()?;
    let dtype = DType::from_numpy_typestr(&typestr).ok_or_else(|| {
        let name = obj
            .getattr("dtype")
            .and_then(|d| d.str().map(|s| s.to_string()))
            .unwrap_or(typestr.clone());
        PyTypeError::new_err(format!(
            "can't convert np.ndarray of type numpy.{name}. The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
        ))
    })?;
    let shape: Vec<usize> = get("shape")?.extract()?;
    let (ptr, readonly): (usize, bool) = match iface.get_item("data")? {
        Some(d) if !d.is_none() => d.extract()?,
        _ => {
            // Buffer-protocol-only objects: go through numpy to get a pointer.
            let arr = py
                .import("numpy")?
                .call_method1("ascontiguousarray", (obj,))?;
            return from_array_interface(&arr, share);
        }
    };
    let offset_bytes: usize = match iface.get_item("offset")? {
        Some(o) if !o.is_none() => o.extract()?,
        _ => 0,
    };
    let itemsize = dtype.itemsize();
    let strides: Vec<usize> = match iface.get_item("strides")? {
        Some(s) if !s.is_none() => {
            let bytes: Vec<isize> = s.extract()?;
            let mut out = Vec::with_capacity(bytes.len());
            for &b in &bytes {
                if b < 0 {
                    return Err(PyValueError::new_err(format!(
                        "At least one stride in the given numpy array is negative, and tensors with negative strides are not currently supported. (You can probably work around this by making a copy of your array  with array.copy().) Strides: {bytes:?}"
                    )));
                }
                if !(b as usize).is_multiple_of(itemsize) {
                    return Err(PyValueError::new_err(format!(
                        "given numpy array strides not a multiple of the element byte size ({itemsize}). Copy the numpy array to reallocate the memory. Strides: {bytes:?}"
                    )));
                }
                out.push(b as usize / itemsize);
            }
            out
        }
        _ => ferrograd::tensor::contiguous_strides(&shape).to_vec(),
    };
    let layout = Layout::new(&shape, &strides, 0);
    let nbytes = layout.max_extent() * itemsize;
    let base = (ptr + offset_bytes) as *mut u8;
    if dtype == DType::Bool && nbytes > 0 {
        // SAFETY: the interface promises `nbytes` readable bytes at `base`.
        let bytes = unsafe { std::slice::from_raw_parts(base, nbytes) };
        if bytes.iter().any(|&b| b > 1) {
            return Err(PyValueError::new_err(
                "numpy bool array holds bytes other than 0 and 1",
            ));
        }
    }
    // SAFETY: numpy guarantees the buffer spans the layout's extent and stays
    // valid while the array object lives; `PyOwner` keeps it alive.
    let storage =
        unsafe { Storage::from_foreign(base, nbytes, Box::new(PyOwner(obj.clone().unbind()))) };
    let t = Tensor::from_parts(storage, layout, dtype).py()?;
    if share {
        if readonly {
            let warnings = py.import("warnings")?;
            warnings.call_method1(
                "warn",
                ("The given NumPy array is not writable, and ferrograd does not support non-writable tensors. Writing to this tensor will result in undefined behavior.",),
            )?;
        }
        Ok(t)
    } else {
        Ok(t.copy())
    }
}

/// The `__array_interface__` dict describing a tensor's memory.
pub fn array_interface<'py>(py: Python<'py>, t: &Tensor) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let isz = t.dtype().itemsize();
    d.set_item("shape", PyTuple::new(py, t.shape())?)?;
    let typestr = t.dtype().numpy_typestr().ok_or_else(|| {
        PyTypeError::new_err(format!(
            "Got unsupported ScalarType {}",
            t.dtype().scalar_type_name()
        ))
    })?;
    d.set_item("typestr", typestr)?;
    d.set_item("data", (t.data_ptr(), false))?;
    if t.is_contiguous() {
        d.set_item("strides", py.None())?;
    } else {
        let s: Vec<usize> = t.strides().iter().map(|&s| s * isz).collect();
        d.set_item("strides", PyTuple::new(py, s)?)?;
    }
    d.set_item("version", 3)?;
    Ok(d)
}

/// A Python number for a scalar.
pub fn scalar_to_py(py: Python<'_>, s: Scalar) -> PyResult<Bound<'_, PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => pyo3::types::PyBool::new(py, b).to_owned().into_any(),
        Scalar::Int(i) => i.into_pyobject(py)?.into_any(),
        Scalar::Float(f) => f.into_pyobject(py)?.into_any(),
        Scalar::Complex(z) => complex_to_py(py, z),
    })
}
