//! The backward engine.
//!
//! A call builds a graph task: the nodes reachable from the roots, how many
//! incoming edges each has (its dependencies), and, when `inputs` are
//! given, which nodes lie on a path to them. Nodes whose dependencies are
//! all satisfied are ready; the engine runs the ready set as one wave —
//! on ferrograd's pool when there are several nodes and enough work to
//! pay for it, otherwise inline — then routes their outputs.
//!
//! Note [Deterministic sums]: a gradient slot fed by several edges keeps
//! every contribution with a key (the producer's sequence number and output
//! index) and sums them in key order once the node is ready. The order of
//! arrival never matters, so sequential and parallel runs, on any number of
//! threads, produce bitwise-identical gradients.
//!
//! The engine's parts: `task` builds a call's graph task (discovery,
//! pruning to the requested inputs, the gradient buffers) and runs it;
//! `schedule` runs ready nodes in waves, inline or on the pool; `run`
//! applies one node with its hooks (row by row in a batched backward when
//! it has no batched formula); `validate` checks what nodes and callers
//! hand to the engine (gradient counts, shapes, dtypes).

mod run;
mod schedule;
mod task;
mod validate;

pub use schedule::{parallel_waves, row_by_row_nodes};
pub(crate) use validate::validate_for;

use super::accumulate::{accumulate, AccumulateGrad};
use super::node::{Node, TensorMeta};
use super::{gradient_edge, Edge};
use crate::{Error, Result, Tensor};
use std::sync::Arc;
use task::{execute, execute_batched};
use validate::root_grad;

/// The flags the engine's general entry points take ([`backward_edges`],
/// [`grad_edges`], [`grad_batched`]). Rust callers normally describe a call
/// with [`BackwardOptions`](super::BackwardOptions) or
/// [`GradOptions`](super::GradOptions) instead, which also carry the
/// gradients and inputs.
#[derive(Clone, Copy, Debug, Default)]
pub struct EngineOptions {
    /// Keep saved tensors so the graph can be used again (default: the
    /// value of `create_graph`).
    pub retain_graph: Option<bool>,
    /// Record the backward computation so it can itself be differentiated.
    pub create_graph: bool,
    /// `grad` only: return `None` for inputs the outputs do not depend on
    /// instead of raising.
    pub allow_unused: bool,
    /// `grad` only: return zeros instead of `None` for unused inputs.
    pub materialize_grads: bool,
}

/// What to differentiate (or differentiate with respect to): a tensor, or
/// an edge of the graph (`graph.GradientEdge` in the Python API).
///
/// Tensors and edges convert into it, so the Rust entry points take
/// `&x`, `x` or an [`Edge`] alike.
#[derive(Clone, Debug)]
pub enum GradInput {
    /// A tensor: its `grad_fn` edge, or its accumulator for a leaf.
    Tensor(Tensor),
    /// One input slot of a graph node.
    Edge(Edge),
}

impl From<Tensor> for GradInput {
    fn from(t: Tensor) -> Self {
        GradInput::Tensor(t)
    }
}

impl From<&Tensor> for GradInput {
    fn from(t: &Tensor) -> Self {
        GradInput::Tensor(t.clone())
    }
}

impl From<Edge> for GradInput {
    fn from(e: Edge) -> Self {
        GradInput::Edge(e)
    }
}

impl From<&Edge> for GradInput {
    fn from(e: &Edge) -> Self {
        GradInput::Edge(e.clone())
    }
}

/// The graph edge and the shape/dtype of an output to differentiate.
fn output_edge(i: usize, out: &GradInput) -> Result<(Edge, TensorMeta)> {
    match out {
        GradInput::Tensor(t) => {
            let edge = gradient_edge(t).ok_or_else(|| {
                Error::runtime(format!(
                    "element {i} of tensors does not require grad and does not have a grad_fn"
                ))
            })?;
            Ok((edge, TensorMeta::of(t)))
        }
        GradInput::Edge(e) => {
            let meta = e.node.core().output_meta().get(e.input_nr).cloned();
            let meta = meta.ok_or_else(|| {
                Error::runtime(format!(
                    "element {i} of outputs is an edge to input {} of {}, which has {} inputs",
                    e.input_nr,
                    e.node.name(),
                    e.node.core().num_inputs()
                ))
            })?;
            Ok((e.clone(), meta))
        }
    }
}

/// The root edges and gradients of a backward call.
fn roots(outputs: &[GradInput], grads: &[Option<Tensor>]) -> Result<Vec<(Edge, Tensor)>> {
    if !grads.is_empty() && grads.len() != outputs.len() {
        return Err(Error::runtime(format!(
            "grad requires one gradient per output: got {} tensors and {} gradients",
            outputs.len(),
            grads.len()
        )));
    }
    outputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (edge, meta) = output_edge(i, t)?;
            let g = root_grad(i, &meta, grads.get(i).and_then(|g| g.as_ref()))?;
            Ok((edge, g))
        })
        .collect()
}

fn input_edge(input: &GradInput, what: &str) -> Result<Edge> {
    match input {
        GradInput::Edge(e) => Ok(e.clone()),
        GradInput::Tensor(t) => gradient_edge(t).ok_or_else(|| {
            Error::runtime(format!(
                "One of the differentiated Tensors does not require grad{what}"
            ))
        }),
    }
}

/// `autograd.backward(tensors, grad_tensors, retain_graph, create_graph,
/// inputs)` in its general form, the one the bindings call: accumulates
/// gradients into the `.grad` of the leaves (or of `inputs` only, when
/// given). `grad_tensors` is empty or has one entry per output (`None`
/// for an implicit gradient of ones, scalar outputs only). Outputs and
/// inputs may be gradient edges; the gradient reaching an edge input that
/// is not a leaf's accumulator has no `.grad` to go to (its `retain_grad`
/// hooks still see it). Rust code normally calls
/// [`Tensor::backward`] or [`backward`](super::backward).
pub fn backward_edges(
    tensors: &[GradInput],
    grad_tensors: &[Option<Tensor>],
    opts: EngineOptions,
    inputs: Option<&[GradInput]>,
) -> Result<()> {
    if crate::compile::capturing() && inputs.is_none() {
        let ts: Option<Vec<Tensor>> = tensors
            .iter()
            .map(|t| match t {
                GradInput::Tensor(t) => Some(t.clone()),
                GradInput::Edge(_) => None,
            })
            .collect();
        if let Some(ts) = ts {
            return Tensor::backward_recorded(
                &ts,
                grad_tensors,
                opts.retain_graph,
                opts.create_graph,
            );
        }
    }
    backward_now(tensors, grad_tensors, opts, inputs)
}

impl Tensor {
    /// Backward from tensors, as a captured program records it (the
    /// program replays the whole pass, `.grad` accumulation included).
    fn backward_recorded(
        roots: &[Tensor],
        grads: &[Option<Tensor>],
        retain_graph: Option<bool>,
        create_graph: bool,
    ) -> Result<()> {
        crate::autograd::captured!(Tensor::backward_recorded (roots: &[Tensor], grads: &[Option<Tensor>], retain_graph: Option<bool>, create_graph: bool) -> () {
            crate::compile::grads_touched();
            let roots: Vec<GradInput> = roots.iter().cloned().map(GradInput::Tensor).collect();
            let opts = EngineOptions { retain_graph, create_graph, ..Default::default() };
            backward_now(&roots, grads, opts, None)
        })
    }
}

fn backward_now(
    tensors: &[GradInput],
    grad_tensors: &[Option<Tensor>],
    opts: EngineOptions,
    inputs: Option<&[GradInput]>,
) -> Result<()> {
    let roots = roots(tensors, grad_tensors)?;
    let Some(inputs) = inputs else {
        execute(roots, &[], &[], opts)?;
        return Ok(());
    };
    if inputs.is_empty() {
        return Err(Error::runtime(
            "'inputs' argument to backward() cannot be empty.",
        ));
    }
    // Leaves accumulate through their own node; non-leaf inputs capture
    // their gradient, which is then accumulated into their `.grad`.
    let mut run: Vec<Arc<dyn Node>> = Vec::new();
    let mut targets: Vec<Edge> = Vec::new();
    let mut target_tensors: Vec<Option<Tensor>> = Vec::new();
    for input in inputs {
        let edge = input_edge(input, "")?;
        if edge.node.as_any().is::<AccumulateGrad>() {
            run.push(edge.node);
        } else {
            targets.push(edge);
            target_tensors.push(match input {
                GradInput::Tensor(t) => Some(t.clone()),
                GradInput::Edge(_) => None,
            });
        }
    }
    let captured = execute(roots, &targets, &run, opts)?;
    let _g = super::GradModeGuard::new(opts.create_graph);
    for ((t, g), e) in target_tensors.iter().zip(captured).zip(&targets) {
        match (t, g) {
            (Some(t), Some(g)) => accumulate(t, g)?,
            // An edge has no tensor of its own; one that retains its grad
            // gets it.
            (None, Some(g)) => {
                let retains = e.node.core().hooks_snapshot().map(|h| h.retains);
                for (nr, weak) in retains.into_iter().flatten() {
                    if let (true, Some(t)) = (nr == e.input_nr, weak.upgrade()) {
                        run::retain(&t, &g)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `autograd.grad(outputs, inputs, grad_outputs, ...)` in its general
/// form, the one the bindings call: the gradients of the outputs with
/// respect to `inputs`, without touching any `.grad`. Outputs may be
/// gradient edges (their gradient then has the shape and dtype the edge's
/// node expects). An input the outputs do not reach gets zeros
/// (`materialize_grads`), `None` (`allow_unused`) or an error. Rust code
/// normally calls [`grad`](super::grad) or [`grad_with`](super::grad_with).
pub fn grad_edges(
    outputs: &[GradInput],
    inputs: &[GradInput],
    grad_outputs: &[Option<Tensor>],
    opts: EngineOptions,
) -> Result<Vec<Option<Tensor>>> {
    if inputs.is_empty() {
        return Err(Error::runtime("grad requires non-empty inputs."));
    }
    let roots = roots(outputs, grad_outputs)?;
    let targets: Vec<Edge> = inputs
        .iter()
        .map(|i| input_edge(i, ""))
        .collect::<Result<_>>()?;
    let captured = execute(roots, &targets, &[], opts)?;
    unused_inputs(captured, inputs, opts, None)
}

/// The tail `grad` and `grad_batched` share: each input's captured
/// gradient; for an input the graph never reached, zeros
/// (`materialize_grads`, with the batch dim in front when `batch` is set),
/// `None` (`allow_unused`) or torch's error.
fn unused_inputs(
    captured: Vec<Option<Tensor>>,
    inputs: &[GradInput],
    opts: EngineOptions,
    batch: Option<usize>,
) -> Result<Vec<Option<Tensor>>> {
    captured
        .into_iter()
        .zip(inputs)
        .map(|(g, input)| match g {
            Some(g) => Ok(Some(g)),
            None if opts.materialize_grads => {
                let meta = match input {
                    GradInput::Tensor(t) => super::TensorMeta::of(t),
                    GradInput::Edge(e) => e.node.core().output_meta()[e.input_nr].clone(),
                };
                let shape: Vec<usize> = batch.into_iter().chain(meta.shape).collect();
                Ok(Some(Tensor::try_zeros(&shape, meta.dtype)?))
            }
            None if opts.allow_unused => Ok(None),
            None => Err(Error::runtime(
                "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
            )),
        })
        .collect()
}

/// `grad(..., is_grads_batched=True)`: the first dim of every grad output
/// indexes independent vector-Jacobian products; results are stacked.
pub fn grad_batched(
    outputs: &[Tensor],
    inputs: &[GradInput],
    grad_outputs: &[Tensor],
    opts: EngineOptions,
) -> Result<Vec<Option<Tensor>>> {
    let b = grad_outputs
        .first()
        .map_or(0, |g| g.shape().first().copied().unwrap_or(0));
    for (i, g) in grad_outputs.iter().enumerate() {
        let out_shape = outputs.get(i).map(|o| o.shape());
        if g.ndim() == 0 || g.shape()[0] != b || out_shape.is_some_and(|s| s != &g.shape()[1..]) {
            return Err(Error::runtime(format!(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of {:?} and output[{i}] has a shape of {:?}.",
                g.shape().get(1..).unwrap_or(&[]),
                outputs.get(i).map(|o| o.shape().to_vec()).unwrap_or_default()
            )));
        }
    }
    // One pass over the graph with batched gradients.
    let roots: Vec<(Edge, Tensor)> = outputs
        .iter()
        .zip(grad_outputs)
        .enumerate()
        .map(|(i, (t, g))| {
            let edge = gradient_edge(t).ok_or_else(|| {
                Error::runtime(format!(
                    "element {i} of tensors does not require grad and does not have a grad_fn"
                ))
            })?;
            Ok((edge, g.clone()))
        })
        .collect::<Result<_>>()?;
    let targets: Vec<Edge> = inputs
        .iter()
        .map(|i| input_edge(i, ""))
        .collect::<Result<_>>()?;
    let captured = execute_batched(roots, &targets, &[], opts, Some(b))?;
    unused_inputs(captured, inputs, opts, Some(b))
}
