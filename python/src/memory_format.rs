//! `ferrograd.memory_format` and its four values, and the parsing of
//! `memory_format=` arguments.

use ferrograd::tensor::MemoryFormat;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// How a dense tensor's dims are ordered in memory: the type of
/// ``ferrograd.contiguous_format`` (row-major), ``ferrograd.channels_last``
/// (``N, C, H, W`` stored as ``N, H, W, C``), ``ferrograd.channels_last_3d``
/// (the five-dim form) and ``ferrograd.preserve_format`` (keep the source's
/// layout), as torch's ``torch.memory_format``.
///
/// Example:
///     >>> x = ferrograd.zeros(2, 3, 4, 5).contiguous(memory_format=ferrograd.channels_last)
///     >>> x.stride(), x.is_contiguous(memory_format=ferrograd.channels_last)
///     ((60, 1, 15, 3), True)
///     >>> ferrograd.channels_last
///     ferrograd.channels_last
// One object per format (the module's values, which unpickling returns),
// so identity is equality.
#[pyclass(name = "memory_format", module = "ferrograd", frozen, from_py_object)]
#[derive(Clone, Copy)]
pub struct PyMemoryFormat {
    pub f: MemoryFormat,
}

#[pymethods]
impl PyMemoryFormat {
    fn __repr__(&self) -> String {
        format!("ferrograd.{}", self.f.name())
    }
    /// Pickled by name: loads as the module's own value.
    fn __reduce__(&self) -> &'static str {
        self.f.name()
    }
}

/// Parses a `memory_format=` argument of `fname` (None when absent or
/// None); anything but a memory format is torch's TypeError.
pub fn parse(fname: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<MemoryFormat>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => match o.cast::<PyMemoryFormat>() {
            Ok(m) => Ok(Some(m.get().f)),
            Err(_) => Err(PyTypeError::new_err(format!(
                "{fname}(): argument 'memory_format' must be ferrograd.memory_format, not {}",
                o.get_type().name()?
            ))),
        },
    }
}

/// [`parse`] for a keyword a function may not have (`None`: it has not).
pub fn parse_opt(
    fname: &str,
    obj: Option<Option<&Bound<'_, PyAny>>>,
) -> PyResult<Option<MemoryFormat>> {
    parse(fname, obj.flatten())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMemoryFormat>()?;
    for f in [
        MemoryFormat::Contiguous,
        MemoryFormat::ChannelsLast,
        MemoryFormat::ChannelsLast3d,
        MemoryFormat::Preserve,
    ] {
        m.add(f.name(), PyMemoryFormat { f })?;
    }
    Ok(())
}
