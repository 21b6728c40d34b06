//! The one-call optimizer steps behind `ferrograd.optim` (`_sgd_step`,
//! `_adam_step`): every parameter of a group updated in Rust with the GIL
//! released.

use crate::errors::{catch_panic, IntoPyResult};
use crate::linalg::tensor_only;
use ferrograd::optim::{adam_step, sgd_step, Adam, Sgd};
use ferrograd::Tensor;
use pyo3::prelude::*;

fn tensors(seq: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Tensor>> {
    seq.try_iter()?
        .map(|o| tensor_only(&o?, what, "tensors"))
        .collect()
}

#[pyfunction]
#[pyo3(signature = (params, grads, momentum_buffers, fresh, *, lr, momentum, dampening, weight_decay, nesterov, maximize))]
#[allow(clippy::too_many_arguments)]
fn _sgd_step(
    py: Python<'_>,
    params: &Bound<'_, PyAny>,
    grads: &Bound<'_, PyAny>,
    momentum_buffers: &Bound<'_, PyAny>,
    fresh: Vec<bool>,
    lr: f64,
    momentum: f64,
    dampening: f64,
    weight_decay: f64,
    nesterov: bool,
    maximize: bool,
) -> PyResult<()> {
    let (p, g, b) = (
        tensors(params, "_sgd_step")?,
        tensors(grads, "_sgd_step")?,
        tensors(momentum_buffers, "_sgd_step")?,
    );
    let h = Sgd {
        lr,
        momentum,
        dampening,
        weight_decay,
        nesterov,
        maximize,
    };
    py.detach(|| catch_panic(|| sgd_step(&p, &g, &b, &fresh, h)))
        .py()
}

#[pyfunction]
#[pyo3(signature = (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize))]
#[allow(clippy::too_many_arguments)]
fn _adam_step(
    py: Python<'_>,
    params: &Bound<'_, PyAny>,
    grads: &Bound<'_, PyAny>,
    exp_avgs: &Bound<'_, PyAny>,
    exp_avg_sqs: &Bound<'_, PyAny>,
    max_exp_avg_sqs: &Bound<'_, PyAny>,
    steps: Vec<f64>,
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    decoupled: bool,
    amsgrad: bool,
    maximize: bool,
) -> PyResult<()> {
    let p = tensors(params, "_adam_step")?;
    let g = tensors(grads, "_adam_step")?;
    let m = tensors(exp_avgs, "_adam_step")?;
    let v = tensors(exp_avg_sqs, "_adam_step")?;
    let vmax = tensors(max_exp_avg_sqs, "_adam_step")?;
    let h = Adam {
        lr,
        beta1,
        beta2,
        eps,
        weight_decay,
        decoupled,
        amsgrad,
        maximize,
    };
    py.detach(|| catch_panic(|| adam_step(&p, &g, &m, &v, &vmax, &steps, h)))
        .py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_sgd_step, m)?)?;
    m.add_function(wrap_pyfunction!(_adam_step, m)?)?;
    Ok(())
}
