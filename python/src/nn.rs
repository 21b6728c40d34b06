//! The Rust kernels behind `ferrograd.nn.functional`: sliding windows
//! (`unfold`/`fold`) and 2-D convolution. Argument forms (ints or pairs,
//! string paddings) are resolved in Python; these take resolved pairs.

use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::tensor::{nogil, TensorOut};
use ferrograd::{Reduction, Tensor, Window};
use pyo3::prelude::*;

type Pair = (usize, usize);

fn window(kernel: Pair, dilation: Pair, padding: Pair, stride: Pair) -> Window {
    Window {
        kernel: [kernel.0, kernel.1],
        dilation: [dilation.0, dilation.1],
        padding: [padding.0, padding.1],
        stride: [stride.0, stride.1],
    }
}

/// Runs the sliding-window kernel `f` on the tensor `input` (the GIL
/// released for big ones), its work the input's size times the window's.
fn windowed(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    name: &str,
    win: Window,
    f: impl FnOnce(&Tensor, Window) -> ferrograd::Result<Tensor> + Send,
) -> PyResult<TensorOut> {
    let x = tensor_only(input, name, "input")?;
    let work = x.numel().saturating_mul(win.kernel[0] * win.kernel[1]);
    Ok(nogil(py, work, || f(&x, win)).py()?.into())
}

/// `nn.functional.unfold` with resolved pairs.
#[pyfunction]
fn _im2col(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    kernel_size: Pair,
    dilation: Pair,
    padding: Pair,
    stride: Pair,
) -> PyResult<TensorOut> {
    let win = window(kernel_size, dilation, padding, stride);
    windowed(py, input, "unfold", win, |x, win| x.im2col(win))
}

/// `nn.functional.fold` with resolved pairs.
#[pyfunction]
fn _col2im(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    output_size: Pair,
    kernel_size: Pair,
    dilation: Pair,
    padding: Pair,
    stride: Pair,
) -> PyResult<TensorOut> {
    let x = tensor_only(input, "fold", "input")?;
    let win = window(kernel_size, dilation, padding, stride);
    Ok(nogil(py, x.numel(), || {
        x.col2im([output_size.0, output_size.1], win)
    })
    .py()?
    .into())
}

/// `nn.functional.conv2d` with numeric, resolved padding.
#[pyfunction]
#[pyo3(signature = (input, weight, bias, stride, padding, dilation, groups))]
#[allow(clippy::too_many_arguments)]
fn _conv2d(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    weight: &Bound<'_, PyAny>,
    bias: Option<&Bound<'_, PyAny>>,
    stride: Pair,
    padding: Pair,
    dilation: Pair,
    groups: usize,
) -> PyResult<TensorOut> {
    let x = tensor_only(input, "conv2d", "input")?;
    let w = tensor_only(weight, "conv2d", "weight")?;
    let b = bias.map(|b| tensor_only(b, "conv2d", "bias")).transpose()?;
    let work = x.numel().saturating_mul(w.numel());
    Ok(nogil(py, work, || {
        x.conv2d(
            &w,
            b.as_ref(),
            [stride.0, stride.1],
            [padding.0, padding.1],
            [dilation.0, dilation.1],
            groups,
        )
    })
    .py()?
    .into())
}

/// The argmax indices of max pooling (see `Tensor::max_pool2d_indices`).
#[pyfunction]
fn _max_pool2d_indices(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    kernel_size: Pair,
    dilation: Pair,
    padding: Pair,
    stride: Pair,
) -> PyResult<TensorOut> {
    let win = window(kernel_size, dilation, padding, stride);
    windowed(py, input, "max_pool2d", win, |x, win| {
        x.max_pool2d_indices(win)
    })
}

/// `nn.functional.layer_norm` (arguments checked in Rust).
#[pyfunction]
#[pyo3(signature = (input, normalized_shape, weight, bias, eps))]
fn _layer_norm(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    normalized_shape: Vec<usize>,
    weight: Option<&Bound<'_, PyAny>>,
    bias: Option<&Bound<'_, PyAny>>,
    eps: f64,
) -> PyResult<TensorOut> {
    let x = tensor_only(input, "layer_norm", "input")?;
    let w = weight
        .map(|w| tensor_only(w, "layer_norm", "weight"))
        .transpose()?;
    let b = bias
        .map(|b| tensor_only(b, "layer_norm", "bias"))
        .transpose()?;
    Ok(nogil(py, x.numel(), || {
        x.layer_norm(&normalized_shape, w.as_ref(), b.as_ref(), eps)
    })
    .py()?
    .into())
}

/// `nn.functional.nll_loss` with an int64 target and a checked reduction
/// name (`'none'`, `'mean'` or `'sum'`).
#[pyfunction]
#[pyo3(signature = (input, target, weight, reduction, ignore_index))]
fn _nll_loss(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    weight: Option<&Bound<'_, PyAny>>,
    reduction: &str,
    ignore_index: i64,
) -> PyResult<TensorOut> {
    let x = tensor_only(input, "nll_loss", "input")?;
    let t = tensor_only(target, "nll_loss", "target")?;
    let w = weight
        .map(|w| tensor_only(w, "nll_loss", "weight"))
        .transpose()?;
    let reduction = match reduction {
        "none" => Reduction::None,
        "mean" => Reduction::Mean,
        "sum" => Reduction::Sum,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{other} is not a valid value for reduction"
            )))
        }
    };
    Ok(nogil(py, x.numel(), || {
        x.nll_loss(&t, w.as_ref(), reduction, ignore_index)
    })
    .py()?
    .into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_layer_norm, m)?)?;
    m.add_function(wrap_pyfunction!(_nll_loss, m)?)?;
    m.add_function(wrap_pyfunction!(_max_pool2d_indices, m)?)?;
    m.add_function(wrap_pyfunction!(_im2col, m)?)?;
    m.add_function(wrap_pyfunction!(_col2im, m)?)?;
    m.add_function(wrap_pyfunction!(_conv2d, m)?)?;
    Ok(())
}
