//! The samplers with rejection loops (`poisson`, `binomial`, the gamma
//! and Dirichlet draws behind `ferrograd.distributions`) and the implicit
//! derivatives of gamma and beta samples in their shapes.

use crate::errors::IntoPyResult;
use crate::linalg::tensor_only;
use crate::random::{core_gen, Gen};
use crate::tensor::{nogil, TensorOut};
use ferrograd::Tensor;
use pyo3::prelude::*;

/// Work estimate for releasing the GIL: rejection samplers take tens of
/// nanoseconds per element, the derivatives microseconds.
fn work(t: &Tensor, per_element: usize) -> usize {
    t.numel().saturating_mul(per_element)
}

/// Draws one Poisson sample per element of ``input``, with the rates in
/// ``input``.
///
/// Args:
///     input (Tensor): the rates (floating, non-negative).
///
/// Keyword args:
///     generator (Generator, optional): the generator to draw from.
///
/// Example:
///     >>> _ = ferrograd.manual_seed(0)
///     >>> ferrograd.poisson(ferrograd.zeros(3))
///     tensor([0., 0., 0.])
#[pyfunction]
#[pyo3(signature = (input, generator = None))]
fn poisson(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    generator: Gen<'_, '_>,
) -> PyResult<TensorOut> {
    let t = tensor_only(input, "poisson", "input")?;
    let g = core_gen(generator);
    Ok(nogil(py, work(&t, 8), || t.poisson(g.as_deref()))
        .py()?
        .into())
}

/// Draws one binomial sample per element of ``count``: the number of
/// successes in ``count`` trials of success probability ``prob``.
///
/// Args:
///     count (Tensor): the numbers of trials (floating).
///     prob (Tensor): the success probabilities (same dtype, broadcast to
///         ``count``).
///
/// Keyword args:
///     generator (Generator, optional): the generator to draw from.
///
/// Example:
///     >>> ferrograd.binomial(ferrograd.tensor([4.0, 7.0]), ferrograd.tensor([1.0, 0.0]))
///     tensor([4., 0.])
#[pyfunction]
#[pyo3(signature = (count, prob, generator = None))]
fn binomial(
    py: Python<'_>,
    count: &Bound<'_, PyAny>,
    prob: &Bound<'_, PyAny>,
    generator: Gen<'_, '_>,
) -> PyResult<TensorOut> {
    let n = tensor_only(count, "binomial", "count")?;
    let p = tensor_only(prob, "binomial", "prob")?;
    let g = core_gen(generator);
    Ok(
        nogil(py, work(&n, 8), || Tensor::binomial(&n, &p, g.as_deref()))
            .py()?
            .into(),
    )
}

/// Gamma(``input``, 1) samples (float32 or float64), without gradients.
#[pyfunction]
#[pyo3(signature = (input, generator = None))]
fn _standard_gamma_sample(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    generator: Gen<'_, '_>,
) -> PyResult<TensorOut> {
    let t = tensor_only(input, "_standard_gamma", "input")?;
    let g = core_gen(generator);
    Ok(nogil(py, work(&t, 8), || t.standard_gamma(g.as_deref()))
        .py()?
        .into())
}

/// Dirichlet samples with the concentrations in the last dimension of
/// ``input`` (float32 or float64).
///
/// Args:
///     input (Tensor): the concentrations.
///
/// Keyword args:
///     generator (Generator, optional): the generator to draw from.
///
/// Example:
///     >>> ferrograd._sample_dirichlet(ferrograd.ones(2, 3)).sum(-1)
///     tensor([1., 1.])
#[pyfunction]
#[pyo3(signature = (input, generator = None))]
fn _sample_dirichlet(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    generator: Gen<'_, '_>,
) -> PyResult<TensorOut> {
    let t = tensor_only(input, "_sample_dirichlet", "input")?;
    let g = core_gen(generator);
    Ok(nogil(py, work(&t, 8), || t.sample_dirichlet(g.as_deref()))
        .py()?
        .into())
}

/// Runs the derivative `f` on the tensors `args` (`(object, name)` pairs of
/// the function `fname`), the GIL released: microseconds per element.
fn derivative(
    py: Python<'_>,
    fname: &str,
    args: &[(&Bound<'_, PyAny>, &str)],
    f: impl FnOnce(&[Tensor]) -> ferrograd::Result<Tensor> + Send,
) -> PyResult<TensorOut> {
    let ts = args
        .iter()
        .map(|(obj, name)| tensor_only(obj, fname, name))
        .collect::<PyResult<Vec<Tensor>>>()?;
    let n = ts.first().map_or(0, Tensor::numel);
    Ok(nogil(py, n.saturating_mul(2000), || f(&ts)).py()?.into())
}

/// The derivative ``dx / dalpha`` of standard gamma samples ``output``
/// drawn with the shapes ``input`` (implicit reparameterization).
///
/// Args:
///     input (Tensor): the shapes ``alpha``.
///     output (Tensor): the samples.
///
/// Example:
///     >>> alpha = ferrograd.tensor([0.5, 2.0, 9.0])
///     >>> ferrograd._standard_gamma_grad(alpha, alpha).shape
///     ferrograd.Size([3])
#[pyfunction]
fn _standard_gamma_grad(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    output: &Bound<'_, PyAny>,
) -> PyResult<TensorOut> {
    let args = [(input, "self"), (output, "output")];
    derivative(py, "_standard_gamma_grad", &args, |t| {
        t[0].standard_gamma_grad(&t[1])
    })
}

/// The implicit reparameterization factor of Dirichlet coordinates: for
/// samples ``x`` of Beta(``alpha``, ``total - alpha``), ``dx / dalpha``
/// with ``total - alpha`` held fixed, divided by ``1 - x``. The backward of
/// a Dirichlet draw is ``grad * (g - (x * g).sum(-1, keepdim=True))``.
///
/// Args:
///     x (Tensor): the samples, in ``[0, 1]``.
///     alpha (Tensor): the concentrations of the coordinates.
///     total (Tensor): the total concentrations.
///
/// Example:
///     >>> x = ferrograd.tensor([0.2, 0.7])
///     >>> ferrograd._dirichlet_grad(x, ferrograd.ones(2), ferrograd.full((2,), 3.0)).shape
///     ferrograd.Size([2])
#[pyfunction]
fn _dirichlet_grad(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    alpha: &Bound<'_, PyAny>,
    total: &Bound<'_, PyAny>,
) -> PyResult<TensorOut> {
    let args = [(x, "x"), (alpha, "alpha"), (total, "total")];
    derivative(py, "_dirichlet_grad", &args, |t| {
        Tensor::dirichlet_grad(&t[0], &t[1], &t[2])
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(poisson, m)?)?;
    m.add_function(wrap_pyfunction!(binomial, m)?)?;
    m.add_function(wrap_pyfunction!(_standard_gamma_sample, m)?)?;
    m.add_function(wrap_pyfunction!(_sample_dirichlet, m)?)?;
    m.add_function(wrap_pyfunction!(_standard_gamma_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_dirichlet_grad, m)?)?;
    Ok(())
}
