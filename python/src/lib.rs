//! `ferrograd._core`: the thin PyO3 bindings of the ferrograd crate.
//!
//! Conversions and GIL handling only; all logic lives in the core crate.
//! The `Tensor` class is defined in `tensor.rs`; each area of operations
//! adds its methods in its own `#[pymethods]` block (pyo3's
//! `multiple-pymethods`) and its module functions in its `register`.

/// The extension's allocator: small tensors, graph nodes and saved
/// values are many small blocks made and freed on every operation, from
/// several threads at once, where mimalloc's thread-local free lists cost
/// a fraction of the system allocator's. Blocks of [`LARGE`] bytes or more
/// come from the system allocator: they are few (tensor storage, mostly
/// reused from the buffer cache), and it refuses a request the machine
/// cannot hold, where mimalloc reserves address space without backing
/// (a 4 TiB tensor would be handed out, and the process killed when its
/// pages are first written, instead of an out-of-memory error).
struct Allocator;

/// Where [`Allocator`] switches to the system allocator.
const LARGE: usize = 1 << 20;

// SAFETY: every block is freed (or resized) by the allocator that made it,
// chosen by its size in the same way on both sides.
unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.size() >= LARGE {
            std::alloc::System.alloc(layout)
        } else {
            mimalloc::MiMalloc.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.size() >= LARGE {
            std::alloc::System.alloc_zeroed(layout)
        } else {
            mimalloc::MiMalloc.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if layout.size() >= LARGE {
            std::alloc::System.dealloc(ptr, layout)
        } else {
            mimalloc::MiMalloc.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        match (layout.size() >= LARGE, new_size >= LARGE) {
            (true, true) => std::alloc::System.realloc(ptr, layout, new_size),
            (false, false) => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
            _ => {
                // The block moves between the allocators.
                let new = std::alloc::Layout::from_size_align_unchecked(new_size, layout.align());
                let p = self.alloc(new);
                if !p.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                p
            }
        }
    }
}

#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

mod addmv;
mod autocast;
mod autograd;
mod compile;
mod complex;
mod compose;
mod convert;
mod creation;
mod decomp;
mod dtype;
mod elementwise;
mod errors;
mod fft;
mod forward_ad;
mod function;
mod interop;
mod joining;
mod linalg;
mod lu;
mod memory_format;
mod nn;
mod optim;
mod profiler;
mod random;
mod reduce;
mod resize;
mod routed;
mod samplers;
mod saved_hooks;
mod search;
mod shape_index;
mod solvers;
mod sort;
mod special;
mod spectral;
mod tensor;
mod tensor_autograd;
mod tensor_convert;
mod tensor_methods;
mod unary_methods;
mod views;

use dtype::{PyDType, PyDevice};
use ferrograd::DType;
use pyo3::prelude::*;
use tensor::PyTensor;

/// Returns the current default floating-point dtype (``float32`` unless
/// changed with :func:`ferrograd.set_default_dtype`).
///
/// It is the dtype of tensors made from Python floats and of the float
/// factories (``zeros``, ``rand``, ``linspace``...) when no ``dtype`` is given.
///
/// Example:
///     >>> ferrograd.get_default_dtype()
///     ferrograd.float32
#[pyfunction]
fn get_default_dtype() -> PyDType {
    PyDType {
        dt: ferrograd::default_dtype(),
    }
}

/// Sets the default floating-point dtype.
///
/// It becomes the dtype of tensors made from Python floats and of the float
/// factories when no ``dtype`` is given; the default complex dtype follows it
/// (``complex128`` for ``float64``, ``complex64`` otherwise). The setting is
/// process-wide.
///
/// Args:
///     d (dtype): a floating-point dtype (``float16``, ``bfloat16``, ``float32``
///         or ``float64``); other dtypes raise ``TypeError``.
///
/// Example:
///     >>> ferrograd.set_default_dtype(ferrograd.float64)
///     >>> ferrograd.tensor([1.5]).dtype
///     ferrograd.float64
///     >>> ferrograd.set_default_dtype(ferrograd.float32)
#[pyfunction]
fn set_default_dtype(d: &Bound<'_, PyAny>) -> PyResult<()> {
    use errors::IntoPyResult;
    ferrograd::set_default_dtype(dtype::parse_dtype(d)?).py()
}

/// Returns the smallest dtype that both ``type1`` and ``type2`` convert to
/// without losing range or kind (torch's promotion table: ints before floats
/// before complex, bool lowest).
///
/// Args:
///     type1 (dtype): the first dtype.
///     type2 (dtype): the second dtype.
///
/// Example:
///     >>> ferrograd.promote_types(ferrograd.int64, ferrograd.float16)
///     ferrograd.float16
///     >>> ferrograd.promote_types(ferrograd.int8, ferrograd.uint8)
///     ferrograd.int16
#[pyfunction]
fn promote_types(type1: &Bound<'_, PyAny>, type2: &Bound<'_, PyAny>) -> PyResult<PyDType> {
    Ok(PyDType {
        dt: dtype::parse_dtype(type1)?.promote(dtype::parse_dtype(type2)?),
    })
}

/// Returns the dtype an arithmetic operation on ``tensor1`` and ``tensor2``
/// would produce.
///
/// A Python number or zero-dimensional tensor only raises the category
/// (bool, integer, float, complex) of the result, not the width of a
/// dimensioned tensor's dtype, as in torch.
///
/// Args:
///     tensor1 (Tensor or Number): the first operand.
///     tensor2 (Tensor or Number): the second operand.
///
/// Example:
///     >>> ferrograd.result_type(ferrograd.tensor([1, 2]), 1.5)
///     ferrograd.float32
///     >>> ferrograd.result_type(ferrograd.tensor([1], dtype=ferrograd.int8), 1000)
///     ferrograd.int8
#[pyfunction]
fn result_type(tensor1: &Bound<'_, PyAny>, tensor2: &Bound<'_, PyAny>) -> PyResult<PyDType> {
    let a = convert::tensor_arg(tensor1, "tensor1")?;
    let b = convert::tensor_arg(tensor2, "tensor2")?;
    Ok(PyDType {
        dt: ferrograd::result_type(&[a.promotion_operand(), b.promotion_operand()]),
    })
}

/// Returns True if the dtype of ``input`` is a floating-point type
/// (``float16``, ``bfloat16``, ``float32`` or ``float64``).
///
/// Args:
///     input (Tensor): the tensor to check.
///
/// Example:
///     >>> ferrograd.is_floating_point(ferrograd.tensor([1.0]))
///     True
///     >>> ferrograd.is_floating_point(ferrograd.tensor([1]))
///     False
#[pyfunction]
fn is_floating_point(input: PyRef<'_, PyTensor>) -> bool {
    input.tensor().dtype().is_floating_point()
}

/// Returns True if the dtype of ``input`` is a complex type (``complex64`` or
/// ``complex128``).
///
/// Args:
///     input (Tensor): the tensor to check.
///
/// Example:
///     >>> ferrograd.is_complex(ferrograd.tensor([1 + 2j]))
///     True
#[pyfunction]
fn is_complex(input: PyRef<'_, PyTensor>) -> bool {
    input.tensor().dtype().is_complex()
}

/// Returns True if ``obj`` is a ferrograd tensor (including parameters and
/// other Tensor subclasses).
///
/// Args:
///     obj (object): the object to check.
///
/// Example:
///     >>> ferrograd.is_tensor(ferrograd.zeros(1)), ferrograd.is_tensor([1.0])
///     (True, False)
#[pyfunction]
fn is_tensor(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast::<PyTensor>().is_ok()
}

/// Returns the number of elements of ``input``, the product of its sizes.
///
/// Args:
///     input (Tensor): the tensor.
///
/// Example:
///     >>> ferrograd.numel(ferrograd.zeros(2, 3))
///     6
#[pyfunction]
fn numel(input: PyRef<'_, PyTensor>) -> usize {
    input.tensor().numel()
}

/// Sets how many threads ferrograd's pool uses for intra-op parallelism.
///
/// The setting is process-wide and applies to the operations started after
/// the call.
///
/// Args:
///     n (int): the number of threads, at least 1.
///
/// Example:
///     >>> n = ferrograd.get_num_threads()
///     >>> ferrograd.set_num_threads(1)
///     >>> ferrograd.get_num_threads()
///     1
///     >>> ferrograd.set_num_threads(n)
#[pyfunction]
fn set_num_threads(n: i64) -> PyResult<()> {
    if n < 1 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "set_num_threads expects a positive integer, got {n}"
        )));
    }
    ferrograd::set_num_threads(n as usize);
    Ok(())
}

/// Returns the number of threads ferrograd's pool uses for intra-op
/// parallelism (by default, the number of available cores; see
/// :func:`ferrograd.set_num_threads`).
///
/// Example:
///     >>> ferrograd.get_num_threads() >= 1
///     True
#[pyfunction]
fn get_num_threads() -> usize {
    ferrograd::num_threads()
}

/// Frees buffers held by the allocation cache; returns bytes it held.
#[pyfunction]
fn _empty_cache() -> usize {
    let n = ferrograd::tensor::buffer_cache_bytes();
    ferrograd::tensor::empty_buffer_cache();
    n
}

/// Sets the allocation cache's byte budget (0 disables it).
#[pyfunction]
fn _set_cache_limit(bytes: usize) {
    ferrograd::tensor::set_buffer_cache_limit(bytes);
}

/// Panics inside a kernel run the way every binding runs one (on the
/// calling thread, or in a task of the thread pool): a test proves the
/// panic reaches Python as `RuntimeError`.
#[pyfunction]
fn _panic_in_kernel(py: Python<'_>, on_pool: bool, work: usize) -> PyResult<()> {
    tensor::nogil_ok(py, work, || {
        if on_pool {
            ferrograd::pool::par_for(64, 1, &|i| {
                if i == 37 {
                    panic!("kernel panic forced for a test (task {i})");
                }
            });
        } else {
            panic!("kernel panic forced for a test");
        }
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The package version, single-sourced from Cargo.toml.
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyTensor>()?;
    m.add_class::<PyDType>()?;
    m.add_class::<PyDevice>()?;
    for d in DType::ALL {
        m.add(d.name(), PyDType { dt: d })?;
    }
    m.add_function(wrap_pyfunction!(get_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(promote_types, m)?)?;
    m.add_function(wrap_pyfunction!(result_type, m)?)?;
    m.add_function(wrap_pyfunction!(is_floating_point, m)?)?;
    m.add_function(wrap_pyfunction!(is_complex, m)?)?;
    m.add_function(wrap_pyfunction!(is_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(numel, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_empty_cache, m)?)?;
    m.add_function(wrap_pyfunction!(_set_cache_limit, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_in_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_methods::_rebuild_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_methods::_read_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(unary_methods::_unary_rows, m)?)?;
    memory_format::register(m)?;
    compile::register(m)?;
    creation::register(m)?;
    elementwise::register(m)?;
    complex::register(m)?;
    reduce::register(m)?;
    search::register(m)?;
    views::register(m)?;
    shape_index::register(m)?;
    joining::register(m)?;
    linalg::register(m)?;
    decomp::register(m)?;
    spectral::register(m)?;
    fft::register(m)?;
    lu::register(m)?;
    compose::register(m)?;
    solvers::register(m)?;
    nn::register(m)?;
    optim::register(m)?;
    random::register(m)?;
    samplers::register(m)?;
    autocast::register(m)?;
    autograd::register(m)?;
    forward_ad::register(m)?;
    function::register(m)?;
    saved_hooks::register(m)?;
    profiler::register(m)?;
    routed::register(m)?;
    interop::register(m)?;
    Ok(())
}
