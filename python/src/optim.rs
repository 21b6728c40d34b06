//! The one-call optimizer step behind `ferrograd.optim`:
//! `_optimizer_step(rule, ...)` updates every parameter of a group in Rust
//! with the GIL released, for each rule of `ferrograd::optim::Update`.

use crate::errors::{detached, IntoPyResult};
use crate::linalg::tensor_only;
use ferrograd::optim::{step, step_counted, Update};
use ferrograd::Tensor;
use pyo3::prelude::*;
use std::collections::HashMap;

fn tensors(seq: &Bound<'_, PyAny>) -> PyResult<Vec<Tensor>> {
    seq.try_iter()?
        .map(|o| tensor_only(&o?, "_optimizer_step", "tensors"))
        .collect()
}

/// One step of the update `rule` ("sgd", "adam", ...) over a parameter
/// group: `states[j][i]` is parameter i's j-th state tensor, `scalars[j][i]`
/// its j-th scalar (step count, ...) and `options` the hyper-parameters by
/// name, flags as 0 or 1. With `counts` (each parameter's step count
/// tensor), `scalars` is empty: the counts go up by one and their new
/// values are the scalars (`ferrograd::optim::step_counted`); the rule's
/// other numbers kept in one-element tensors go in `products` (NAdam's
/// momentum products; ASGD's `eta`s, then its `mu`s), updated too.
#[pyfunction]
#[pyo3(signature = (rule, params, grads, states, scalars, options, counts=None, products=None))]
#[allow(clippy::too_many_arguments)]
fn _optimizer_step(
    py: Python<'_>,
    rule: &str,
    params: &Bound<'_, PyAny>,
    grads: &Bound<'_, PyAny>,
    states: Vec<Bound<'_, PyAny>>,
    scalars: Vec<Vec<f64>>,
    options: HashMap<String, f64>,
    counts: Option<&Bound<'_, PyAny>>,
    products: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let options: Vec<(&str, f64)> = options.iter().map(|(k, &v)| (k.as_str(), v)).collect();
    let update = Update::from_options(rule, &options).py()?;
    let (p, g) = (tensors(params)?, tensors(grads)?);
    let states = states.iter().map(tensors).collect::<PyResult<Vec<_>>>()?;
    let states: Vec<&[Tensor]> = states.iter().map(Vec::as_slice).collect();
    let counts = counts.map(tensors).transpose()?;
    let products = products.map(tensors).transpose()?.unwrap_or_default();
    let scalars: Vec<&[f64]> = scalars.iter().map(Vec::as_slice).collect();
    detached(py, || match &counts {
        Some(c) => step_counted(&update, &p, &g, &states, c, &products),
        None => step(&update, &p, &g, &states, &scalars),
    })
    .py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_optimizer_step, m)?)?;
    Ok(())
}
