//! The reverse-mode entry points for Rust code: [`Tensor::backward`],
//! [`backward`], [`grad`] and their option builders ([`BackwardOptions`],
//! [`GradOptions`]).
//!
//! They only translate a call into the engine's general functions
//! ([`backward_edges`], [`grad_edges`], [`grad_batched`]), which take every
//! argument positionally and are what the language bindings call.

use super::engine::{backward_edges, grad_batched, grad_edges, EngineOptions, GradInput};
use crate::{Error, Result, Tensor};

/// Starting gradients as the engine takes them (one per output, all given).
fn given<T: AsRef<Tensor>>(grads: impl IntoIterator<Item = T>) -> Vec<Option<Tensor>> {
    grads
        .into_iter()
        .map(|g| Some(g.as_ref().clone()))
        .collect()
}

/// The `retain_graph` and `create_graph` setters of an options builder.
macro_rules! graph_flags {
    ($options:ident) => {
        /// Keep the saved tensors so that the graph can be run through
        /// again (default: the value of
        #[doc = concat!("[`", stringify!($options), "::create_graph`]).")]
        pub fn retain_graph(mut self, retain: bool) -> Self {
            self.retain_graph = Some(retain);
            self
        }

        /// Record the backward computation, so that the gradients it
        /// produces can themselves be differentiated (higher-order
        /// derivatives).
        pub fn create_graph(mut self, create: bool) -> Self {
            self.create_graph = create;
            self
        }
    };
}

/// How [`Tensor::backward_with`] and [`backward`] run: the gradients to
/// start from, whether to keep or differentiate the graph, and which
/// tensors receive `.grad`.
///
/// The default is what [`Tensor::backward`] does: an implicit gradient of
/// one (scalar outputs only), the graph freed afterwards, every leaf that
/// requires grad receiving its gradient.
///
/// ```
/// use ferrograd::autograd::BackwardOptions;
/// use ferrograd::Tensor;
/// # fn main() -> ferrograd::Result<()> {
/// let x = Tensor::from_slice(&[1.0f64, 2.0], &[2])?.requires_grad_(true)?;
/// let y = x.mul(&x)?; // not a scalar: backward needs a gradient for it
/// y.backward_with(&BackwardOptions::new().gradient(&Tensor::from_slice(&[1.0f64, 0.5], &[2])?))?;
/// assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![2.0, 2.0]); // 2x * v
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct BackwardOptions {
    grad_tensors: Vec<Option<Tensor>>,
    retain_graph: Option<bool>,
    create_graph: bool,
    inputs: Option<Vec<GradInput>>,
}

impl BackwardOptions {
    /// The defaults (same as [`BackwardOptions::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// The gradient of the (single) tensor backward starts from: the `v`
    /// of the vector-Jacobian product. Needed for outputs that are not
    /// scalars.
    pub fn gradient(mut self, gradient: impl AsRef<Tensor>) -> Self {
        self.grad_tensors = vec![Some(gradient.as_ref().clone())];
        self
    }

    /// One starting gradient per tensor given to [`backward`], in order.
    pub fn grad_tensors<T: AsRef<Tensor>>(mut self, grads: impl IntoIterator<Item = T>) -> Self {
        self.grad_tensors = given(grads);
        self
    }

    graph_flags!(BackwardOptions);

    /// Accumulate only into these tensors (leaves or not) or edges, instead
    /// of every leaf the outputs reach.
    pub fn inputs<I: Into<GradInput>>(mut self, inputs: impl IntoIterator<Item = I>) -> Self {
        self.inputs = Some(inputs.into_iter().map(Into::into).collect());
        self
    }

    fn engine(&self) -> EngineOptions {
        EngineOptions {
            retain_graph: self.retain_graph,
            create_graph: self.create_graph,
            ..EngineOptions::default()
        }
    }
}

/// Runs backward from several tensors at once (torch's
/// `autograd.backward`): the gradients of all of them are summed into the
/// `.grad` of the leaves. Give non-scalar tensors their gradients with
/// [`BackwardOptions::grad_tensors`].
///
/// ```
/// use ferrograd::autograd::{self, BackwardOptions};
/// use ferrograd::Tensor;
/// # fn main() -> ferrograd::Result<()> {
/// let x = Tensor::scalar_tensor(3.0, ferrograd::DType::Float64).requires_grad_(true)?;
/// let a = x.mul(&x)?; // x^2
/// let b = x.sin()?;
/// autograd::backward(&[&a, &b], &BackwardOptions::new())?;
/// let expected = 2.0 * 3.0 + 3.0f64.cos();
/// assert!((x.grad().unwrap().item()?.to_f64() - expected).abs() < 1e-12);
/// # Ok(())
/// # }
/// ```
pub fn backward<T: AsRef<Tensor>>(tensors: &[T], opts: &BackwardOptions) -> Result<()> {
    let roots: Vec<GradInput> = tensors.iter().map(|t| t.as_ref().into()).collect();
    backward_edges(
        &roots,
        &opts.grad_tensors,
        opts.engine(),
        opts.inputs.as_deref(),
    )
}

impl Tensor {
    /// Computes the gradient of this scalar with respect to every leaf it
    /// depends on and accumulates it into their `.grad`
    /// ([`Tensor::grad`]). The graph's saved tensors are freed; use
    /// [`Tensor::backward_with`] to keep them, to start from a gradient
    /// other than one, or to record a graph of the backward pass.
    ///
    /// ```
    /// use ferrograd::Tensor;
    /// # fn main() -> ferrograd::Result<()> {
    /// let w = Tensor::from_slice(&[1.0f32, -2.0, 3.0], &[3])?.requires_grad_(true)?;
    /// let x = Tensor::from_slice(&[0.5f32, 1.0, 2.0], &[3])?;
    /// let loss = w.mul(&x)?.sum(None, false, None)?; // w . x
    /// loss.backward()?;
    /// assert_eq!(w.grad().unwrap().to_vec::<f32>(), vec![0.5, 1.0, 2.0]); // d/dw = x
    /// # Ok(())
    /// # }
    /// ```
    pub fn backward(&self) -> Result<()> {
        self.backward_with(&BackwardOptions::default())
    }

    /// [`Tensor::backward`] with options: a starting gradient (for
    /// non-scalar tensors), `retain_graph`, `create_graph`, or a subset of
    /// tensors to accumulate into.
    pub fn backward_with(&self, opts: &BackwardOptions) -> Result<()> {
        backward(std::slice::from_ref(self), opts)
    }
}

/// How [`grad_with`] and [`grad_allow_unused`] run: the gradients of the
/// outputs to start from, whether to keep or differentiate the graph, and
/// what to return for inputs the outputs do not reach.
///
/// ```
/// use ferrograd::autograd::{self, GradOptions};
/// use ferrograd::{DType, Tensor};
/// # fn main() -> ferrograd::Result<()> {
/// // y = x^3, dy/dx = 3x^2, d2y/dx2 = 6x: at x = 2, 12 and 12.
/// let x = Tensor::scalar_tensor(2.0, DType::Float64).requires_grad_(true)?;
/// let y = x.mul(&x)?.mul(&x)?;
/// let dy = autograd::grad_with(&[&y], &[&x], &GradOptions::new().create_graph(true))?;
/// assert_eq!(dy[0].item()?.to_f64(), 12.0);
/// let d2y = autograd::grad(&[&dy[0]], &[&x])?; // differentiate the gradient
/// assert_eq!(d2y[0].item()?.to_f64(), 12.0);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct GradOptions {
    grad_outputs: Vec<Option<Tensor>>,
    retain_graph: Option<bool>,
    create_graph: bool,
    materialize_grads: bool,
    grads_batched: bool,
}

impl GradOptions {
    /// The defaults (same as [`GradOptions::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// One gradient per output, in order: the `v` of the vector-Jacobian
    /// product. Needed for outputs that are not scalars.
    pub fn grad_outputs<T: AsRef<Tensor>>(mut self, grads: impl IntoIterator<Item = T>) -> Self {
        self.grad_outputs = given(grads);
        self
    }

    graph_flags!(GradOptions);

    /// Return zeros for inputs the outputs do not reach, instead of an
    /// error ([`grad_with`]) or `None` ([`grad_allow_unused`]).
    pub fn materialize_grads(mut self, materialize: bool) -> Self {
        self.materialize_grads = materialize;
        self
    }

    /// Treat the first dim of every grad output as a batch of independent
    /// vector-Jacobian products (torch's `is_grads_batched`): each result
    /// gets that batch dim in front. Needs every grad output given.
    pub fn grads_batched(mut self, batched: bool) -> Self {
        self.grads_batched = batched;
        self
    }
}

/// Runs [`grad_edges`] or [`grad_batched`] for one of the Rust entries.
fn run_grad<O: AsRef<Tensor>, I: Into<GradInput> + Clone>(
    outputs: &[O],
    inputs: &[I],
    opts: &GradOptions,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
    let ins: Vec<GradInput> = inputs.iter().cloned().map(Into::into).collect();
    let engine = EngineOptions {
        retain_graph: opts.retain_graph,
        create_graph: opts.create_graph,
        allow_unused,
        materialize_grads: opts.materialize_grads,
    };
    if opts.grads_batched {
        let outs: Vec<Tensor> = outputs.iter().map(|o| o.as_ref().clone()).collect();
        let gos: Vec<Tensor> = opts.grad_outputs.iter().flatten().cloned().collect();
        if gos.len() != outs.len() {
            return Err(Error::runtime(format!(
                "grads_batched needs one grad output per output: got {} outputs and {} grad outputs",
                outs.len(),
                gos.len()
            )));
        }
        return grad_batched(&outs, &ins, &gos, engine);
    }
    let outs: Vec<GradInput> = outputs.iter().map(|o| o.as_ref().into()).collect();
    grad_edges(&outs, &ins, &opts.grad_outputs, engine)
}

/// The gradients of scalar `outputs` (summed) with respect to each of
/// `inputs`, without touching any `.grad` (torch's `autograd.grad`). Every
/// input must be reached from the outputs. Inputs are tensors, `&Tensor`s
/// or graph [`Edge`](super::Edge)s.
///
/// ```
/// use ferrograd::autograd;
/// use ferrograd::Tensor;
/// # fn main() -> ferrograd::Result<()> {
/// let a = Tensor::from_slice(&[2.0f64], &[1])?.requires_grad_(true)?;
/// let b = Tensor::from_slice(&[5.0f64], &[1])?.requires_grad_(true)?;
/// let y = a.mul(&b)?.sum(None, false, None)?;
/// let g = autograd::grad(&[&y], &[&a, &b])?;
/// assert_eq!(g[0].to_vec::<f64>(), vec![5.0]); // dy/da = b
/// assert_eq!(g[1].to_vec::<f64>(), vec![2.0]); // dy/db = a
/// assert!(a.grad().is_none());
/// # Ok(())
/// # }
/// ```
pub fn grad<O: AsRef<Tensor>, I: Into<GradInput> + Clone>(
    outputs: &[O],
    inputs: &[I],
) -> Result<Vec<Tensor>> {
    grad_with(outputs, inputs, &GradOptions::default())
}

/// [`grad`] with options: gradients for non-scalar outputs,
/// `retain_graph`, `create_graph` (for higher-order derivatives),
/// `materialize_grads`, batched grad outputs. An input the outputs do not
/// reach is an error (zeros with `materialize_grads`); use
/// [`grad_allow_unused`] to get `None` for it instead.
pub fn grad_with<O: AsRef<Tensor>, I: Into<GradInput> + Clone>(
    outputs: &[O],
    inputs: &[I],
    opts: &GradOptions,
) -> Result<Vec<Tensor>> {
    run_grad(outputs, inputs, opts, false)?
        .into_iter()
        .map(|g| {
            g.ok_or_else(|| Error::runtime("grad: the engine returned no gradient for an input"))
        })
        .collect()
}

/// [`grad_with`] returning `None` for inputs the outputs do not reach
/// (torch's `allow_unused=True`), or zeros for them with
/// [`GradOptions::materialize_grads`].
///
/// ```
/// use ferrograd::autograd::{self, GradOptions};
/// use ferrograd::{DType, Tensor};
/// # fn main() -> ferrograd::Result<()> {
/// let x = Tensor::scalar_tensor(1.0, DType::Float32).requires_grad_(true)?;
/// let unused = Tensor::scalar_tensor(1.0, DType::Float32).requires_grad_(true)?;
/// let y = x.exp()?;
/// let g = autograd::grad_allow_unused(&[&y], &[&x, &unused], &GradOptions::new())?;
/// assert!(g[0].is_some() && g[1].is_none());
/// # Ok(())
/// # }
/// ```
pub fn grad_allow_unused<O: AsRef<Tensor>, I: Into<GradInput> + Clone>(
    outputs: &[O],
    inputs: &[I],
    opts: &GradOptions,
) -> Result<Vec<Option<Tensor>>> {
    run_grad(outputs, inputs, opts, true)
}
