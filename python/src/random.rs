//! The seeded generator (`Generator`, `manual_seed`, ...) and random
//! sampling functions and in-place methods.

use crate::convert::{int_list, sizes};
use crate::creation::{
    deliver, finish, in_layout, integer, like_factories, like_strides, number, shape_factories,
};
use crate::dtype::{check_device, parse_opt_dtype, PyDevice};
use crate::errors::IntoPyResult;
use crate::tensor::{nogil, PyTensor, TensorOut};
use ferrograd::random::{self as rng, Generator};
use ferrograd::{default_dtype, DType, Tensor};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt, PyTuple};
use std::sync::Arc;

/// A seeded stream of random numbers for the sampling functions.
///
/// Pass it as ``generator=`` to a random function (:func:`ferrograd.rand`,
/// :func:`ferrograd.randn`, :meth:`Tensor.uniform_`, ...) to draw from it
/// instead of the default generator that :func:`ferrograd.manual_seed`
/// seeds. A generator seeded with ``s`` produces torch's CPU sequences for
/// the same seed.
///
/// Args:
///     device (str or device, optional): accepted for compatibility; only
///         ``"cpu"`` is allowed.
///
/// Example:
///     >>> g = ferrograd.Generator().manual_seed(0)
///     >>> ferrograd.rand(2, generator=g)
///     tensor([0.4963, 0.7682])
///     >>> g.initial_seed()
///     0
#[pyclass(name = "Generator", module = "ferrograd", frozen)]
pub struct PyGenerator {
    pub g: Arc<Generator>,
}

/// A seed as torch accepts it: any integer in `[-2^63, 2^64)`, negative
/// values taken modulo 2^64.
fn parse_seed(seed: &Bound<'_, PyAny>) -> PyResult<u64> {
    if seed.is_instance_of::<PyBool>() || !seed.is_instance_of::<PyInt>() {
        let int = seed.py().get_type::<PyInt>().call1((seed,)).map_err(|_| {
            PyTypeError::new_err(format!(
                "seed must be an integer, got {}",
                seed.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        return parse_seed(&int);
    }
    if let Ok(v) = seed.extract::<u64>() {
        return Ok(v);
    }
    if let Ok(v) = seed.extract::<i64>() {
        return Ok(v as u64);
    }
    Err(PyRuntimeError::new_err(format!(
        "Overflow when unpacking long: seed {} is outside [-2**63, 2**64)",
        seed.repr()?
    )))
}

/// A generator state as torch shows it: a uint8 tensor of torch's layout
/// (ferrograd has no uint8 dtype, so the bytes are held in an int64
/// tensor; `set_state` accepts it, torch's byte tensor, or its `.tolist()`).
fn state_tensor(bytes: Vec<u8>) -> TensorOut {
    TensorOut(Tensor::from_vec(
        bytes.into_iter().map(i64::from).collect::<Vec<i64>>(),
    ))
}

fn parse_state(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let values: Vec<i64> = if let Ok(t) = obj.cast::<PyTensor>() {
        let t = &t.get().tensor();
        if t.dtype().is_floating_point() || t.ndim() != 1 {
            return Err(PyTypeError::new_err(format!(
                "RNG state must be a 1-D tensor of bytes (from get_state()), got {} with shape {:?}",
                t.dtype(),
                t.shape()
            )));
        }
        t.to_vec::<i64>()
    } else if let Ok(v) = obj.extract::<Vec<i64>>() {
        v
    } else if let Ok(v) = obj
        .call_method0("tolist")
        .and_then(|l| l.extract::<Vec<i64>>())
    {
        // torch's own uint8 state tensor, or a NumPy array of bytes.
        v
    } else {
        return Err(PyTypeError::new_err(format!(
            "expected a RNG state tensor (from get_state()), got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )));
    };
    values
        .into_iter()
        .map(|v| {
            u8::try_from(v).map_err(|_| {
                PyRuntimeError::new_err(format!("RNG state bytes must be in [0, 255], got {v}"))
            })
        })
        .collect()
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (device = None))]
    fn py_new(device: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        check_device(device)?;
        Ok(PyGenerator {
            g: Arc::new(Generator::default()),
        })
    }
    /// Seeds this generator and returns it; the stream restarts from ``seed``.
    ///
    /// Args:
    ///     seed (int): any integer in ``[-2**63, 2**64)``.
    fn manual_seed<'py>(
        slf: &Bound<'py, Self>,
        seed: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        slf.get().g.manual_seed(parse_seed(seed)?);
        Ok(slf.clone())
    }
    /// The seed this generator was last seeded with, as a Python int.
    fn initial_seed(&self) -> u64 {
        self.g.initial_seed()
    }
    /// Reseeds this generator with a non-deterministic seed and returns that seed.
    fn seed(&self) -> u64 {
        self.g.seed()
    }
    /// The generator's state, as a 1-D int64 tensor of torch's 5056 state bytes.
    ///
    /// Pass it to :meth:`set_state` to replay the stream from this point.
    fn get_state(&self) -> TensorOut {
        state_tensor(self.g.get_state())
    }
    /// Restores a state from :meth:`get_state` and returns the generator.
    ///
    /// Args:
    ///     new_state (Tensor or list of ints): the state bytes.
    fn set_state<'py>(
        slf: &Bound<'py, Self>,
        new_state: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        slf.get().g.set_state(&parse_state(new_state)?).py()?;
        Ok(slf.clone())
    }
    /// The generator's device: always the CPU.
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice {}
    }
    fn __repr__(&self) -> String {
        format!(
            "<ferrograd.Generator (initial_seed={})>",
            self.g.initial_seed()
        )
    }
}

static DEFAULT_OBJ: PyOnceLock<Py<PyGenerator>> = PyOnceLock::new();

fn default_obj(py: Python<'_>) -> PyResult<Py<PyGenerator>> {
    Ok(DEFAULT_OBJ
        .get_or_try_init(py, || {
            Py::new(
                py,
                PyGenerator {
                    g: rng::default_generator().clone(),
                },
            )
        })?
        .clone_ref(py))
}

/// Seeds the default random generator and returns it.
///
/// Every random function that is not given a ``generator=`` draws from the
/// default generator, so the same seed gives the same sequence of results.
/// ferrograd's generator reproduces torch's CPU sequences for ``rand``,
/// ``randn`` and the other samplers built on them.
///
/// Args:
///     seed (int): any integer in ``[-2**63, 2**64)``; negative values are taken
///         modulo ``2**64``.
///
/// Returns:
///     Generator: the default generator.
///
/// Example:
///     >>> _ = ferrograd.manual_seed(0)
///     >>> ferrograd.rand(2)
///     tensor([0.4963, 0.7682])
#[pyfunction]
fn manual_seed(py: Python<'_>, seed: &Bound<'_, PyAny>) -> PyResult<Py<PyGenerator>> {
    rng::manual_seed(parse_seed(seed)?);
    default_obj(py)
}

/// Returns the seed the default generator was last seeded with (by
/// :func:`ferrograd.manual_seed` or :func:`ferrograd.seed`), as a Python int.
///
/// Example:
///     >>> _ = ferrograd.manual_seed(42)
///     >>> ferrograd.initial_seed()
///     42
#[pyfunction]
fn initial_seed() -> u64 {
    rng::initial_seed()
}

/// Seeds the default generator with a non-deterministic random number and
/// returns that seed (a Python int), so a run can be reproduced later with
/// :func:`ferrograd.manual_seed`.
///
/// Example:
///     >>> s = ferrograd.seed()
///     >>> ferrograd.initial_seed() == s
///     True
#[pyfunction]
fn seed() -> u64 {
    rng::seed()
}

/// Returns the state of the default generator as a 1-D tensor of byte values.
///
/// Pass it to :func:`ferrograd.set_rng_state` to replay the random numbers
/// drawn after this point. The bytes are laid out as torch's CPU generator
/// state, held in an ``int64`` tensor.
///
/// Example:
///     >>> state = ferrograd.get_rng_state()
///     >>> a = ferrograd.rand(2)
///     >>> ferrograd.set_rng_state(state)
///     >>> ferrograd.equal(ferrograd.rand(2), a)
///     True
#[pyfunction]
fn get_rng_state() -> TensorOut {
    state_tensor(rng::default_generator().get_state())
}

/// Restores the state of the default generator.
///
/// Args:
///     new_state (Tensor): a state returned by :func:`ferrograd.get_rng_state`
///         (torch's ``uint8`` state tensor, or a list of its byte values, is
///         accepted too).
///
/// Example:
///     >>> state = ferrograd.get_rng_state()
///     >>> a = ferrograd.randn(3)
///     >>> ferrograd.set_rng_state(state)
///     >>> ferrograd.equal(ferrograd.randn(3), a)
///     True
#[pyfunction]
fn set_rng_state(new_state: &Bound<'_, PyAny>) -> PyResult<()> {
    rng::default_generator()
        .set_state(&parse_state(new_state)?)
        .py()
}

pub(crate) type Gen<'a, 'py> = Option<&'a Bound<'py, PyGenerator>>;

/// The core generator behind an optional `generator=` argument.
pub(crate) fn core_gen(g: Gen<'_, '_>) -> Option<Arc<Generator>> {
    g.map(|b| b.get().g.clone())
}

// ------------------------------------------------------------- sampling

/// An optional argument, with an explicit `None` treated as absent.
fn given<'py>(o: Option<&Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
    o.filter(|o| !o.is_none()).cloned()
}

/// `(low, high)` from torch's `randint` positional forms `(high)` and
/// `(low, high)` plus the keywords.
fn low_high(
    pos: &[Bound<'_, PyAny>],
    low: Option<&Bound<'_, PyAny>>,
    high: Option<&Bound<'_, PyAny>>,
    op: &str,
) -> PyResult<(i64, i64)> {
    let (l, h) = match (pos.len(), given(low), given(high)) {
        (0, l, Some(h)) => (l, h),
        (1, None, None) => (None, pos[0].clone()),
        (1, Some(l), None) => (Some(l), pos[0].clone()),
        (1, None, Some(h)) => (Some(pos[0].clone()), h),
        (2, None, None) => (Some(pos[0].clone()), pos[1].clone()),
        (0, _, None) => {
            return Err(PyTypeError::new_err(format!(
                "{op}() missing required argument 'high'"
            )))
        }
        _ => {
            return Err(PyTypeError::new_err(format!(
            "{op}() received an invalid combination of arguments: expected (high) or (low, high)"
        )))
        }
    };
    let l = l.map(|l| integer(&l, "low")).transpose()?.unwrap_or(0);
    Ok((l, integer(&h, "high")?))
}

/// randint(low=0, high, size, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor
///
/// Returns a tensor of shape ``size`` filled with integers drawn uniformly
/// from ``[low, high)``.
///
/// Called as ``randint(high, size)`` or ``randint(low, high, size)``, or with
/// keywords. The values are integers even when ``dtype`` is a float type.
///
/// Args:
///     low (int): the smallest value that can be drawn. Default: 0.
///     high (int): one above the largest value that can be drawn.
///     size (tuple of ints): the shape of the result.
///
/// Keyword args:
///     generator (Generator, optional): the generator to draw from. Default:
///         the default generator (seeded by :func:`ferrograd.manual_seed`).
///     out (Tensor, optional): a tensor of the result's shape to write into.
///     dtype (dtype, optional): the element type. Default: ``int64``.
///     layout (layout, optional): accepted for compatibility and ignored.
///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.randint(10, (5,))
///     tensor([4, 9, 3, 0, 3])
///     >>> ferrograd.randint(3, 6, (2, 2))
///     tensor([[3, 4],
///             [4, 4]])
#[pyfunction]
#[pyo3(signature = (*args, low = None, high = None, size = None, generator = None, out = None, dtype = None, layout = None, device = None, requires_grad = false, pin_memory = false))]
#[allow(clippy::too_many_arguments)]
fn randint(
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    low: Option<&Bound<'_, PyAny>>,
    high: Option<&Bound<'_, PyAny>>,
    size: Option<&Bound<'_, PyAny>>,
    generator: Gen<'_, '_>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    pin_memory: bool,
) -> PyResult<Py<PyAny>> {
    let _ = (layout, pin_memory);
    check_device(device)?;
    let mut pos: Vec<Bound<'_, PyAny>> = args.iter().collect();
    let size = match size.filter(|s| !s.is_none()) {
        Some(s) => s.clone(),
        None => pos
            .pop()
            .ok_or_else(|| PyTypeError::new_err("randint() missing required argument 'size'"))?,
    };
    if size.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(
            "randint(): argument 'size' must be a tuple of ints, not int",
        ));
    }
    let shape = sizes(&int_list(&size, "size")?)?;
    let (l, h) = low_high(&pos, low, high, "randint")?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or(DType::Int64);
    let g = core_gen(generator);
    let n = shape.iter().product();
    let t = nogil(py, n, || Tensor::randint(l, h, &shape, dt, g.as_deref())).py()?;
    deliver(py, t, out, requires_grad)
}

shape_factories! {
    generator:
    /// rand(*size, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor
    ///
    /// Returns a tensor of the given shape filled with numbers drawn uniformly
    /// from ``[0, 1)``.
    ///
    /// Args:
    ///     size (int...): the shape, as separate ints or one list/tuple; may also
    ///         be given as ``size=``.
    ///
    /// Keyword args:
    ///     generator (Generator, optional): the generator to draw from. Default:
    ///         the default generator (seeded by :func:`ferrograd.manual_seed`).
    ///     out (Tensor, optional): a tensor of the result's shape to write into.
    ///     dtype (dtype, optional): the element type. Default: the default dtype.
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.rand(2, 3)
    ///     tensor([[0.4963, 0.7682, 0.0885],
    ///             [0.1320, 0.3074, 0.6341]])
    rand => |shape, dt, g| Tensor::rand(shape, dt, g.as_deref());
    /// randn(*size, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor
    ///
    /// Returns a tensor of the given shape filled with numbers drawn from the
    /// standard normal distribution (mean 0, variance 1).
    ///
    /// Args:
    ///     size (int...): the shape, as separate ints or one list/tuple; may also
    ///         be given as ``size=``.
    ///
    /// Keyword args:
    ///     generator (Generator, optional): the generator to draw from. Default:
    ///         the default generator (seeded by :func:`ferrograd.manual_seed`).
    ///     out (Tensor, optional): a tensor of the result's shape to write into.
    ///     dtype (dtype, optional): the element type. Default: the default dtype.
    ///     layout (layout, optional): accepted for compatibility and ignored.
    ///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
    ///     device (device or str, optional): only ``"cpu"`` is supported.
    ///     requires_grad (bool): whether the new tensor requires grad. Default: False.
    ///
    /// Example:
    ///     >>> ferrograd.randn(4)
    ///     tensor([ 1.5410, -0.2934, -2.1788,  0.5684])
    randn => |shape, dt, g| Tensor::randn(shape, dt, g.as_deref());
}

like_factories! {
    generator:
    /// rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, generator=None) -> Tensor
    ///
    /// Returns a tensor with the shape (and, unless ``dtype`` is given, the dtype)
    /// of ``input``, filled with numbers drawn uniformly from ``[0, 1)``.
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
    ///     generator (Generator, optional): the generator to draw from. Default:
    ///         the default generator (seeded by :func:`ferrograd.manual_seed`).
    ///
    /// Example:
    ///     >>> ferrograd.rand_like(ferrograd.zeros(3))
    ///     tensor([0.4963, 0.7682, 0.0885])
    rand_like => |shape, dt, g| Tensor::rand(shape, dt, g.as_deref());
    /// randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, generator=None) -> Tensor
    ///
    /// Returns a tensor with the shape (and, unless ``dtype`` is given, the dtype)
    /// of ``input``, filled with numbers drawn from the standard normal
    /// distribution.
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
    ///     generator (Generator, optional): the generator to draw from. Default:
    ///         the default generator (seeded by :func:`ferrograd.manual_seed`).
    ///
    /// Example:
    ///     >>> ferrograd.randn_like(ferrograd.zeros(2, dtype=ferrograd.float64))
    ///     tensor([ 1.5410, -0.2934], dtype=ferrograd.float64)
    randn_like => |shape, dt, g| Tensor::randn(shape, dt, g.as_deref());
}

/// randint_like(input, low=0, high, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, generator=None) -> Tensor
///
/// Returns a tensor with the shape (and, unless ``dtype`` is given, the dtype)
/// of ``input``, filled with integers drawn uniformly from ``[low, high)``.
///
/// Called as ``randint_like(input, high)`` or ``randint_like(input, low,
/// high)``.
///
/// Args:
///     input (Tensor): the tensor whose shape and dtype are used.
///     low (int): the smallest value that can be drawn. Default: 0.
///     high (int): one above the largest value that can be drawn.
///
/// Keyword args:
///     dtype (dtype, optional): the element type. Default: ``input.dtype``.
///     layout (layout, optional): accepted for compatibility and ignored.
///     memory_format (memory_format, optional): the layout of the result.
///         Default: ``ferrograd.preserve_format`` (``input``'s layout).
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///     generator (Generator, optional): the generator to draw from. Default:
///         the default generator (seeded by :func:`ferrograd.manual_seed`).
///
/// Example:
///     >>> ferrograd.randint_like(ferrograd.zeros(3, dtype=ferrograd.int64), 10)
///     tensor([4, 9, 3])
#[pyfunction]
#[pyo3(signature = (input, *args, low = None, high = None, dtype = None, layout = None, device = None, requires_grad = false, memory_format = None, generator = None))]
#[allow(clippy::too_many_arguments)]
fn randint_like(
    py: Python<'_>,
    input: PyRef<'_, PyTensor>,
    args: &Bound<'_, PyTuple>,
    low: Option<&Bound<'_, PyAny>>,
    high: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    memory_format: Option<&Bound<'_, PyAny>>,
    generator: Gen<'_, '_>,
) -> PyResult<TensorOut> {
    let _ = layout;
    check_device(device)?;
    let pos: Vec<Bound<'_, PyAny>> = args.iter().collect();
    let (l, h) = low_high(&pos, low, high, "randint_like")?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or(input.tensor().dtype());
    let strides = like_strides("randint_like", &input.tensor(), memory_format)?;
    let g = core_gen(generator);
    let shape = input.tensor().shape().to_vec();
    let t = nogil(py, input.tensor().numel(), || {
        in_layout(Tensor::randint(l, h, &shape, dt, g.as_deref())?, &strides)
    })
    .py()?;
    finish(t, requires_grad)
}

/// Returns a random permutation of the integers ``0`` to ``n - 1``.
///
/// Args:
///     n (int): the number of integers (the length of the result).
///
/// Keyword args:
///     generator (Generator, optional): the generator to draw from. Default:
///         the default generator (seeded by :func:`ferrograd.manual_seed`).
///     out (Tensor, optional): a tensor of the result's shape to write into.
///     dtype (dtype, optional): the element type. Default: ``int64``.
///     layout (layout, optional): accepted for compatibility and ignored.
///     pin_memory (bool): accepted for compatibility and ignored. Default: False.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.randperm(5)
///     tensor([4, 0, 1, 3, 2])
#[pyfunction]
#[pyo3(signature = (n, *, generator = None, out = None, dtype = None, layout = None, device = None, requires_grad = false, pin_memory = false))]
#[allow(clippy::too_many_arguments)]
fn randperm(
    py: Python<'_>,
    n: &Bound<'_, PyAny>,
    generator: Gen<'_, '_>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
    pin_memory: bool,
) -> PyResult<Py<PyAny>> {
    let _ = (layout, pin_memory);
    check_device(device)?;
    let n = integer(n, "n")?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or(DType::Int64);
    let g = core_gen(generator);
    let t = nogil(py, n.max(0) as usize, || {
        Tensor::randperm(n, dt, g.as_deref())
    })
    .py()?;
    deliver(py, t, out, requires_grad)
}

/// normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor
///
/// Draws numbers from normal distributions with the given means and standard
/// deviations.
///
/// Two forms: with numbers ``mean`` and ``std``, ``size`` is required and every
/// element is drawn from the same distribution; with a tensor ``mean`` and/or
/// ``std`` (the other may be a number), the two are broadcast together and
/// each element of the result is drawn with its own mean and standard
/// deviation (``size`` must then be omitted).
///
/// Args:
///     mean (Tensor or float): the mean(s).
///     std (Tensor or float): the standard deviation(s). Default: 1.0.
///     size (tuple of ints, optional): the shape of the result, for the
///         numbers form.
///
/// Keyword args:
///     generator (Generator, optional): the generator to draw from. Default:
///         the default generator (seeded by :func:`ferrograd.manual_seed`).
///     out (Tensor, optional): a tensor of the result's shape to write into.
///     dtype (dtype, optional): the element type. Default: the default dtype (numbers form).
///     layout (layout, optional): accepted for compatibility and ignored.
///     device (device or str, optional): only ``"cpu"`` is supported.
///     requires_grad (bool): whether the new tensor requires grad. Default: False.
///
/// Example:
///     >>> ferrograd.normal(0.0, 1.0, size=(3,))
///     tensor([ 1.5410, -0.2934, -2.1788])
///     >>> ferrograd.normal(ferrograd.tensor([0.0, 10.0]), ferrograd.tensor([1.0, 0.5]))
///     tensor([0.5684, 9.4577])
#[pyfunction]
#[pyo3(signature = (mean, std = None, size = None, *, generator = None, out = None, dtype = None, layout = None, device = None, requires_grad = false))]
#[allow(clippy::too_many_arguments)]
fn normal(
    py: Python<'_>,
    mean: &Bound<'_, PyAny>,
    std: Option<&Bound<'_, PyAny>>,
    size: Option<&Bound<'_, PyAny>>,
    generator: Gen<'_, '_>,
    out: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    layout: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<Py<PyAny>> {
    let _ = layout;
    check_device(device)?;
    let g = core_gen(generator);
    let std = std.filter(|s| !s.is_none());
    let size = size.filter(|s| !s.is_none());
    let is_tensor = |o: &Bound<'_, PyAny>| o.cast::<PyTensor>().is_ok();
    if is_tensor(mean) || std.is_some_and(is_tensor) {
        if size.is_some() {
            return Err(PyTypeError::new_err(
                "normal(): size may only be given when mean and std are numbers",
            ));
        }
        let m = crate::convert::tensor_arg(mean, "mean")?;
        let s = match std {
            Some(s) => crate::convert::tensor_arg(s, "std")?,
            None => Tensor::scalar(1.0),
        };
        let n = m.numel().max(s.numel());
        let t = nogil(py, n, || Tensor::normal_tensor(&m, &s, g.as_deref())).py()?;
        return deliver(py, t, out, requires_grad);
    }
    let m = number(mean, "mean")?.to_f64();
    let s = std.map(|s| number(s, "std")).transpose()?;
    let s = s.map_or(1.0, |s| s.to_f64());
    let size = size.ok_or_else(|| {
        PyTypeError::new_err(
            "normal() with a float mean and std needs a size, e.g. normal(0.0, 1.0, size=(2, 3))",
        )
    })?;
    let shape = sizes(&int_list(size, "size")?)?;
    let dt = parse_opt_dtype(dtype)?.unwrap_or_else(default_dtype);
    let n = shape.iter().product();
    let t = nogil(py, n, || Tensor::normal(m, s, &shape, dt, g.as_deref())).py()?;
    deliver(py, t, out, requires_grad)
}

fn float_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    Ok(number(obj, what)?.to_f64())
}

#[pymethods]
impl PyTensor {
    /// Fills ``self`` in place with samples from the uniform distribution on ``[from, to)``.
    ///
    /// Args:
    ///     from (float): the lower bound. Default: 0.
    ///     to (float): the upper bound. Default: 1.
    ///
    /// Keyword args:
    ///     generator (Generator, optional): draw from it instead of the default generator.
    ///
    /// Example:
    ///     >>> _ = ferrograd.manual_seed(0)
    ///     >>> ferrograd.empty(3).uniform_(-1, 1)
    ///     tensor([-0.0075,  0.5364, -0.8230])
    #[pyo3(signature = (r#from = None, to = None, *, generator = None))]
    fn uniform_<'py>(
        slf: &Bound<'py, Self>,
        r#from: Option<&Bound<'_, PyAny>>,
        to: Option<&Bound<'_, PyAny>>,
        generator: Gen<'_, 'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let a = r#from
            .map(|v| float_arg(v, "from"))
            .transpose()?
            .unwrap_or(0.0);
        let b = to.map(|v| float_arg(v, "to")).transpose()?.unwrap_or(1.0);
        let g = core_gen(generator);
        let t = &slf.get().tensor();
        nogil(slf.py(), t.numel(), || t.uniform_(a, b, g.as_deref())).py()?;
        Ok(slf.clone())
    }

    /// Fills ``self`` in place with samples from the normal distribution ``N(mean, std**2)``.
    ///
    /// Args:
    ///     mean (float): the mean. Default: 0.
    ///     std (float): the standard deviation. Default: 1.
    ///
    /// Keyword args:
    ///     generator (Generator, optional): draw from it instead of the default generator.
    ///
    /// Example:
    ///     >>> _ = ferrograd.manual_seed(0)
    ///     >>> ferrograd.empty(3).normal_(mean=10.0, std=0.1)
    ///     tensor([10.1541,  9.9707,  9.7821])
    #[pyo3(signature = (mean = None, std = None, *, generator = None))]
    fn normal_<'py>(
        slf: &Bound<'py, Self>,
        mean: Option<&Bound<'_, PyAny>>,
        std: Option<&Bound<'_, PyAny>>,
        generator: Gen<'_, 'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let m = mean
            .map(|v| float_arg(v, "mean"))
            .transpose()?
            .unwrap_or(0.0);
        let s = std.map(|v| float_arg(v, "std")).transpose()?.unwrap_or(1.0);
        let g = core_gen(generator);
        let t = &slf.get().tensor();
        nogil(slf.py(), t.numel(), || t.normal_(m, s, g.as_deref())).py()?;
        Ok(slf.clone())
    }

    /// Fills ``self`` in place with random integers (in ``self``'s dtype).
    ///
    /// ``random_(from, to)`` draws uniformly from ``[from, to)``, ``random_(to)``
    /// from ``[0, to)``, and ``random_()`` from 0 up to the largest integer the
    /// dtype holds exactly (``2**24`` for float32, the maximum for integer dtypes).
    ///
    /// Args:
    ///     from (int): the lower bound. Default: 0.
    ///     to (int, optional): the upper bound (exclusive).
    ///
    /// Keyword args:
    ///     generator (Generator, optional): draw from it instead of the default generator.
    ///
    /// Example:
    ///     >>> _ = ferrograd.manual_seed(0)
    ///     >>> ferrograd.empty(4, dtype=ferrograd.int64).random_(0, 10)
    ///     tensor([4, 9, 3, 0])
    #[pyo3(signature = (*args, r#from = None, to = None, generator = None))]
    fn random_<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'_, PyTuple>,
        r#from: Option<&Bound<'_, PyAny>>,
        to: Option<&Bound<'_, PyAny>>,
        generator: Gen<'_, 'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let pos: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let (f, t) = match (pos.len(), given(r#from), given(to)) {
            (0, f, t) => (f, t),
            (1, None, None) => (None, Some(pos[0].clone())),
            (1, None, t) => (Some(pos[0].clone()), t),
            (2, None, None) => (Some(pos[0].clone()), given(Some(&pos[1]))),
            _ => {
                return Err(PyTypeError::new_err(
                    "random_() takes random_(), random_(to) or random_(from, to)",
                ))
            }
        };
        let f = f.map(|v| integer(&v, "from")).transpose()?;
        let to = t.map(|v| integer(&v, "to")).transpose()?;
        let g = core_gen(generator);
        let me = &slf.get().tensor();
        nogil(slf.py(), me.numel(), || me.random_(f, to, g.as_deref())).py()?;
        Ok(slf.clone())
    }

    /// Fills ``self`` in place with 0/1 samples, 1 with probability ``p``.
    ///
    /// Args:
    ///     p (float or Tensor): the probability of 1, one number or a tensor
    ///         broadcast to ``self``. Default: 0.5.
    ///
    /// Keyword args:
    ///     generator (Generator, optional): draw from it instead of the default generator.
    ///
    /// Example:
    ///     >>> _ = ferrograd.manual_seed(0)
    ///     >>> ferrograd.empty(4).bernoulli_(0.5)
    ///     tensor([0., 0., 1., 0.])
    #[pyo3(signature = (p = None, *, generator = None))]
    fn bernoulli_<'py>(
        slf: &Bound<'py, Self>,
        p: Option<&Bound<'_, PyAny>>,
        generator: Gen<'_, 'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let g = core_gen(generator);
        let me = &slf.get().tensor();
        match p {
            Some(pt) if pt.cast::<PyTensor>().is_ok() => {
                let pt = crate::convert::tensor_arg(pt, "p")?;
                nogil(slf.py(), me.numel(), || {
                    me.bernoulli_tensor_(&pt, g.as_deref())
                })
                .py()?;
            }
            _ => {
                let pv = p.map(|v| float_arg(v, "p")).transpose()?.unwrap_or(0.5);
                nogil(slf.py(), me.numel(), || me.bernoulli_(pv, g.as_deref())).py()?;
            }
        }
        Ok(slf.clone())
    }

    /// Fills ``self`` in place with samples from the exponential distribution of rate ``lambd``.
    ///
    /// Args:
    ///     lambd (float): the rate (the inverse of the mean). Default: 1.
    ///
    /// Keyword args:
    ///     generator (Generator, optional): draw from it instead of the default generator.
    ///
    /// Example:
    ///     >>> _ = ferrograd.manual_seed(0)
    ///     >>> ferrograd.empty(3).exponential_(2.0)
    ///     tensor([1.7542, 0.6152, 0.3075])
    #[pyo3(signature = (lambd = None, *, generator = None))]
    fn exponential_<'py>(
        slf: &Bound<'py, Self>,
        lambd: Option<&Bound<'_, PyAny>>,
        generator: Gen<'_, 'py>,
    ) -> PyResult<Bound<'py, Self>> {
        let l = lambd
            .map(|v| float_arg(v, "lambd"))
            .transpose()?
            .unwrap_or(1.0);
        let g = core_gen(generator);
        let me = &slf.get().tensor();
        nogil(slf.py(), me.numel(), || me.exponential_(l, g.as_deref())).py()?;
        Ok(slf.clone())
    }

    /// 0/1 samples, 1 with the probabilities in ``self`` (or with probability ``p`` when given).
    ///
    /// See :func:`ferrograd.bernoulli`.
    #[pyo3(signature = (p = None, *, generator = None, out = None))]
    fn bernoulli(
        &self,
        py: Python<'_>,
        p: Option<&Bound<'_, PyAny>>,
        generator: Gen<'_, '_>,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let g = core_gen(generator);
        let me = &self.tensor();
        let t = match p.filter(|p| !p.is_none()) {
            Some(pv) => {
                let pv = float_arg(pv, "p")?;
                nogil(py, me.numel(), || me.bernoulli_p(pv, g.as_deref()))
            }
            None => nogil(py, me.numel(), || me.bernoulli(g.as_deref())),
        }
        .py()?;
        deliver(py, t, out, false)
    }

    /// ``num_samples`` category indices per row, drawn with the weights in ``self``.
    ///
    /// See :func:`ferrograd.multinomial`.
    #[pyo3(signature = (num_samples, replacement = false, *, generator = None, out = None))]
    fn multinomial(
        &self,
        py: Python<'_>,
        num_samples: &Bound<'_, PyAny>,
        replacement: bool,
        generator: Gen<'_, '_>,
        out: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let n = integer(num_samples, "num_samples")?;
        let g = core_gen(generator);
        let me = &self.tensor();
        let t = nogil(py, me.numel(), || {
            me.multinomial(n, replacement, g.as_deref())
        })
        .py()?;
        deliver(py, t, out, false)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGenerator>()?;
    m.add("default_generator", default_obj(m.py())?)?;
    m.add_function(wrap_pyfunction!(manual_seed, m)?)?;
    m.add_function(wrap_pyfunction!(initial_seed, m)?)?;
    m.add_function(wrap_pyfunction!(seed, m)?)?;
    m.add_function(wrap_pyfunction!(get_rng_state, m)?)?;
    m.add_function(wrap_pyfunction!(set_rng_state, m)?)?;
    m.add_function(wrap_pyfunction!(rand, m)?)?;
    m.add_function(wrap_pyfunction!(randn, m)?)?;
    m.add_function(wrap_pyfunction!(randint, m)?)?;
    m.add_function(wrap_pyfunction!(rand_like, m)?)?;
    m.add_function(wrap_pyfunction!(randn_like, m)?)?;
    m.add_function(wrap_pyfunction!(randint_like, m)?)?;
    m.add_function(wrap_pyfunction!(randperm, m)?)?;
    m.add_function(wrap_pyfunction!(normal, m)?)?;
    Ok(())
}
