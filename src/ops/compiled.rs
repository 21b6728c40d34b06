//! A compiled program as one node of the autograd graph.
//!
//! [`Program::compile_backward`] makes a program's replays in grad mode
//! run its operations without recording a node each and record one node,
//! `CompiledFunctionBackward`, over the program's inputs and constants
//! that require grad. Its backward is a second captured program: the
//! first replay in grad mode runs the operations one by one (their nodes
//! recorded, as eagerly), then walks those nodes in reverse, as the engine
//! would, while a capture records the operations their formulas run. The
//! walk feeds placeholder gradients for the outputs and sums contributions
//! in the engine's order (Note [Deterministic sums]); the recorded
//! program, fused (`Program::fuse`), is what the node runs, over the
//! gradients and the forward values it reads, which are all the node
//! saves. A later replay whose inputs differ in which of them require grad,
//! a program with anything but pure operations, or one whose formulas do
//! something a capture cannot repeat (a kernel's own buffer, a value read
//! into the host) replays operation by operation as before.
//!
//! The node's backward with `create_graph=True` runs the forward
//! operations again with their nodes and differentiates them (the composed
//! formulas), so higher derivatives see the whole computation.

use crate::autograd::{
    grad_edges, grad_fn_edge, gradient_edge, no_grad, node_id, validate_for, BackwardCtx,
    EngineOptions, GradInput, Grads, Node, Recorder,
};
use crate::compile::{self, Captured, Lifetimes, Program, Row, RowGrad, Source};
use crate::{Error, Result, Scalar, Tensor};
use std::collections::HashMap;
use std::sync::Arc;

/// What a program derived for replays as one node.
enum Derived {
    Node(Arc<Piece>),
    /// It replays operation by operation, and why.
    Rows(String),
}

/// A program's node: its backward program and what it reads.
struct Piece {
    /// Which of the inputs and constants (in that order) required grad
    /// when it was derived.
    requires: Vec<bool>,
    /// The node's inputs: the inputs and constants that require grad.
    sources: Vec<Source>,
    /// The values that get the node as `grad_fn`, in its output order.
    outputs: Vec<usize>,
    /// The backward program: takes the outputs' gradients, then every
    /// forward value and constant (those it does not read as a
    /// placeholder); gives the sources' gradients that are not zero.
    backward: Program,
    /// Per forward value and constant after the gradients: what the node
    /// saves for it, when the backward program reads it.
    reads: Vec<Option<Source>>,
    /// Per source, which result of the backward program is its gradient.
    grads: Vec<Option<usize>>,
    /// The forward operations alone, for `create_graph`.
    forward: Program,
    /// The forward program the node replays, when it differs from the
    /// captured one (summed groups that write their derivatives, see
    /// `fuse::derivatives_in_forward`).
    replayed: Option<Program>,
    placeholder: Tensor,
    /// When a replay as this node drops each forward value.
    lifetimes: Lifetimes,
}

impl Program {
    /// Makes replays in grad mode record one node whose backward is a
    /// captured program (see the module docs), where the program allows it.
    pub fn compile_backward(&mut self) {
        self.replay_hook = Some(replay);
    }
}

/// Which of `p`'s inputs and constants require grad.
fn requires_mask(p: &Program, inputs: &[Tensor]) -> Vec<bool> {
    inputs
        .iter()
        .chain(&p.constants)
        .map(Tensor::requires_grad)
        .collect()
}

fn replay(p: &Program, inputs: &[Tensor]) -> Option<Result<Option<Vec<Tensor>>>> {
    // A node is recorded in the caller's grad mode, while the operations
    // it stands for ran in grad mode: a call in no-grad mode whose
    // operations turned grad mode on (`with torch.enable_grad():` inside)
    // replays operation by operation, each in its own mode.
    if compile::capturing()
        || crate::autograd::is_anomaly_enabled()
        || !crate::tensor::is_grad_enabled()
    {
        return None;
    }
    let requires = requires_mask(p, inputs);
    if !requires.contains(&true) {
        return None;
    }
    let all: Vec<&Tensor> = inputs.iter().chain(&p.constants).collect();
    if crate::autograd::any_tangent(&all) {
        return None;
    }
    if let Some(d) = p.derived.get() {
        return match d.downcast_ref::<Derived>() {
            Some(Derived::Node(piece)) if piece.requires == requires => Some(run(p, piece, inputs)),
            _ => None,
        };
    }
    let since = compile::new_epoch();
    let first_node = crate::autograd::next_sequence_nr();
    let vals = match p.run_rows(inputs, RowGrad::AsRecorded, None) {
        Ok(Some(vals)) => vals,
        other => return Some(other.map(|_| None)),
    };
    let derived = match derive(p, &vals, (since, first_node), requires) {
        Ok(piece) => Derived::Node(Arc::new(piece)),
        Err(why) => Derived::Rows(why),
    };
    let _ = p.derived.set(Arc::new(derived));
    Some(Ok(Some(p.results(&vals))))
}

/// A replay as one node.
fn run(p: &Program, piece: &Arc<Piece>, inputs: &[Tensor]) -> Result<Option<Vec<Tensor>>> {
    let program = piece.replayed.as_ref().unwrap_or(p);
    let Some(vals) = program.run_rows(inputs, RowGrad::Off, Some(&piece.lifetimes))? else {
        return Ok(None);
    };
    let sources: Vec<Tensor> = piece.sources.iter().map(|s| s.get(&vals)).collect();
    let refs: Vec<&Tensor> = sources.iter().collect();
    let rec = Recorder::new("CompiledFunctionBackward", &refs);
    let outs: Vec<&Tensor> = piece.outputs.iter().map(|&i| &vals[i]).collect();
    let originals: Vec<(Tensor, u64)> = inputs
        .iter()
        .chain(&p.constants)
        .map(|t| (t.clone(), t.version()))
        .collect();
    let kept = piece.clone();
    rec.finish(
        &outs,
        |s| {
            for read in piece.reads.iter().flatten() {
                let t = read.get(&vals);
                match read {
                    Source::Value(i) => match piece.outputs.iter().position(|o| o == i) {
                        Some(nr) => s.save_output("value", &t, nr),
                        None => s.save("value", &t),
                    },
                    Source::Constant(_) => s.save("value", &t),
                }
            }
        },
        move |ctx, g| kept.backward(ctx, g, &originals),
    )?;
    Ok(Some(p.results(&vals)))
}

impl Piece {
    fn backward(
        &self,
        ctx: &BackwardCtx,
        g: &[Tensor],
        originals: &[(Tensor, u64)],
    ) -> Result<Grads> {
        if crate::tensor::is_grad_enabled() {
            return self.composed(g, originals);
        }
        let mut ins: Vec<Tensor> = Vec::with_capacity(self.backward.num_inputs());
        ins.extend(g.iter().cloned());
        let mut k = 0;
        for read in &self.reads {
            ins.push(match read {
                Some(_) => {
                    k += 1;
                    ctx.saved(k - 1)?
                }
                None => self.placeholder.clone(),
            });
        }
        let outs = self.backward.replay(&ins)?;
        Ok(self
            .grads
            .iter()
            .map(|o| o.map(|o| outs[o].clone()))
            .collect())
    }

    /// The gradients with the forward operations' own formulas, recorded
    /// (`create_graph`).
    fn composed(&self, g: &[Tensor], originals: &[(Tensor, u64)]) -> Result<Grads> {
        for (t, v) in originals {
            if t.version() != *v {
                return Err(Error::runtime(format!(
                    "one of the variables needed for gradient computation has been modified by an inplace operation: [ferrograd.{}Tensor {:?}], an input of CompiledFunctionBackward, is at version {}; expected version {v} instead.",
                    t.dtype().scalar_type_name(),
                    t.shape(),
                    t.version()
                )));
            }
        }
        let inputs: Vec<Tensor> = originals[..self.forward.num_inputs()]
            .iter()
            .map(|(t, _)| t.clone())
            .collect();
        let vals = self
            .forward
            .run_rows(&inputs, RowGrad::AsRecorded, None)?
            .ok_or_else(|| {
                Error::runtime("CompiledFunctionBackward: the forward took another course")
            })?;
        let outs: Vec<GradInput> = self
            .outputs
            .iter()
            .map(|&i| GradInput::Tensor(vals[i].clone()))
            .collect();
        let sources: Vec<GradInput> = self
            .sources
            .iter()
            .map(|s| GradInput::Tensor(s.get(&vals)))
            .collect();
        let gs: Vec<Option<Tensor>> = g.iter().cloned().map(Some).collect();
        let opts = EngineOptions {
            retain_graph: Some(true),
            create_graph: true,
            allow_unused: true,
            materialize_grads: false,
        };
        grad_edges(&outs, &sources, &gs, opts)
    }
}

/// Abandons the capture begun by [`derive`] unless disarmed.
struct Abandon(bool);

impl Drop for Abandon {
    fn drop(&mut self) {
        if self.0 {
            compile::abort();
        }
    }
}

/// Why a program replays operation by operation.
type Why = std::result::Result<Piece, String>;

/// The node's backward program, from the graph `p`'s replay recorded
/// (`vals`; every tensor made since the epoch `since.0`, every node since
/// the sequence number `since.1`), or why the program does not replay as
/// one node.
fn derive(p: &Program, vals: &[Tensor], since: (u64, u64), requires: Vec<bool>) -> Why {
    if let Some(r) = p.rows.iter().find(|r| !in_node(p, r, vals)) {
        return Err(format!(
            "`{}` changes state or runs without grad mode",
            r.name
        ));
    }
    let n_in = p.inputs;
    let originals: Vec<&Tensor> = vals[..n_in].iter().chain(&p.constants).collect();
    // The outputs that get the node: made by the program, requiring grad,
    // each once, none sharing memory with an input or constant.
    let mut outputs: Vec<usize> = Vec::new();
    for s in &p.outputs {
        let Source::Value(i) = *s else { continue };
        if i < n_in || !vals[i].requires_grad() {
            continue;
        }
        let shares = originals
            .iter()
            .any(|o| o.storage().same(vals[i].storage()));
        if outputs.contains(&i) {
            return Err("a result is returned twice".into());
        }
        if shares {
            return Err("a result shares memory with an input or constant".into());
        }
        outputs.push(i);
    }
    if outputs.is_empty() {
        return Err("no result requires grad".into());
    }
    let sources: Vec<Source> = (0..n_in)
        .map(Source::Value)
        .chain(p.constants.iter().cloned().map(Source::Constant))
        .zip(&requires)
        .filter(|(_, r)| **r)
        .map(|(s, _)| s)
        .collect();
    // Where the graph leaves the program: each source's gradient edge.
    let mut exits: HashMap<(usize, usize), usize> = HashMap::new();
    for (j, s) in sources.iter().enumerate() {
        let Some(e) = gradient_edge(&s.get(vals)) else {
            return Err("an input requiring grad has no gradient edge".into());
        };
        if exits.insert((e.node_id(), e.input_nr), j).is_some() {
            return Err("two inputs share a gradient edge".into());
        }
    }
    // The program's nodes: those the replay made, reached from the results
    // before the graph leaves; latest first (a node's inputs were made
    // before it).
    let mut nodes: HashMap<usize, Arc<dyn Node>> = HashMap::new();
    let mut stack: Vec<Arc<dyn Node>> = Vec::new();
    for &i in &outputs {
        if let Some(e) = grad_fn_edge(&vals[i]) {
            stack.push(e.node);
        }
    }
    while let Some(n) = stack.pop() {
        if n.core().sequence_nr() < since.1 {
            return Err(format!("{} was made before the program ran", n.name()));
        }
        if nodes.insert(node_id(&n), n.clone()).is_some() {
            continue;
        }
        for e in n.core().next_edges().iter().flatten() {
            if !exits.contains_key(&(e.node_id(), e.input_nr)) && !nodes.contains_key(&e.node_id())
            {
                stack.push(e.node.clone());
            }
        }
    }
    let mut order: Vec<Arc<dyn Node>> = nodes.values().cloned().collect();
    order.sort_by_key(|n| std::cmp::Reverse(n.core().sequence_nr()));
    let _off = no_grad();
    let gs: Vec<Tensor> = outputs
        .iter()
        .map(|&i| Tensor::try_zeros(vals[i].shape(), vals[i].dtype()))
        .collect::<Result<_>>()
        .map_err(|e| e.to_string())?;
    let mut cap_in: Vec<Tensor> = gs.clone();
    cap_in.extend(vals.iter().cloned());
    cap_in.extend(p.constants.iter().cloned());
    compile::begin_derived(&cap_in, since.0).map_err(|e| e.to_string())?;
    let mut abandon = Abandon(true);
    let grads = walk(&order, &nodes, &exits, sources.len(), &outputs, vals, &gs)
        .map_err(|e| e.to_string())?;
    let results: Vec<Tensor> = grads.iter().flatten().cloned().collect();
    abandon.0 = false;
    let mut backward = match compile::end(&results) {
        Captured::Program(b) => b,
        Captured::Broken(why) => return Err(why),
    };
    backward.fuse();
    let replayed = super::fuse::derivatives_in_forward(p, &mut backward, gs.len(), vals.len());
    let mut read = vec![false; backward.num_inputs()];
    for s in backward
        .rows
        .iter()
        .flat_map(|r| &r.inputs)
        .chain(&backward.outputs)
    {
        if let Source::Value(i) = *s {
            if i < read.len() {
                read[i] = true;
            }
        }
    }
    let reads: Vec<Option<Source>> = (gs.len()..backward.num_inputs())
        .map(|k| {
            let v = k - gs.len();
            read[k].then(|| match v.checked_sub(vals.len()) {
                None => Source::Value(v),
                Some(c) => Source::Constant(p.constants[c].clone()),
            })
        })
        .collect();
    let mut next = 0;
    let grads = grads
        .iter()
        .map(|g| {
            g.as_ref().map(|_| {
                next += 1;
                next - 1
            })
        })
        .collect();
    // A replay keeps what the node takes, gives and saves.
    let kept: Vec<usize> = sources
        .iter()
        .chain(reads.iter().flatten())
        .filter_map(|s| match s {
            Source::Value(i) => Some(*i),
            Source::Constant(_) => None,
        })
        .chain(outputs.iter().copied())
        .collect();
    Ok(Piece {
        lifetimes: Lifetimes::of(replayed.as_ref().unwrap_or(p), kept),
        replayed,
        requires,
        sources,
        outputs,
        backward,
        reads,
        grads,
        forward: p.rows_copy(),
        placeholder: Tensor::scalar(0.0),
    })
}

/// Whether row `r` of `p` can run inside the node: in grad mode, and
/// computing its results, drawing from a generator (which moves on
/// however the program replays), or writing in place a value the program
/// made that needs no gradient (a buffer it fills, such as dropout's mask;
/// had a formula saved it before the write, the derivation fails as eager
/// backward does).
fn in_node(p: &Program, r: &Row, vals: &[Tensor]) -> bool {
    if !r.grad_mode || r.is_read() {
        return false;
    }
    r.pure
        || r.outputs > 0
        || matches!(r.inputs.first(), Some(Source::Value(i)) if *i >= p.inputs && !vals[*i].requires_grad())
}

/// One gradient contribution: its key in the engine's order (the
/// producer's sequence number and output index) and value.
type Part = ((u64, usize), Tensor);

/// Adds a contribution to input `slot` of `node`.
fn push(bufs: &mut HashMap<usize, Vec<Vec<Part>>>, node: usize, slot: usize, part: Part) {
    let b = bufs.entry(node).or_default();
    if b.len() <= slot {
        b.resize_with(slot + 1, Vec::new);
    }
    b[slot].push(part);
}

/// The contributions summed in key order (Note [Deterministic sums]).
fn sum_parts(mut parts: Vec<Part>) -> Result<Option<Tensor>> {
    parts.sort_by_key(|p| p.0);
    let mut it = parts.into_iter().map(|p| p.1);
    let Some(first) = it.next() else {
        return Ok(None);
    };
    it.try_fold(first, |acc, g| acc.add(&g)).map(Some)
}

/// Runs the program's nodes (`order`, latest first) as the engine would,
/// from the gradients `gs` of the values `outputs`: the gradient of each
/// of the `n_sources` sources (`exits` maps an edge leaving the nodes to
/// its source).
fn walk(
    order: &[Arc<dyn Node>],
    nodes: &HashMap<usize, Arc<dyn Node>>,
    exits: &HashMap<(usize, usize), usize>,
    n_sources: usize,
    outputs: &[usize],
    vals: &[Tensor],
    gs: &[Tensor],
) -> Result<Vec<Option<Tensor>>> {
    let mut bufs: HashMap<usize, Vec<Vec<Part>>> = HashMap::new();
    for (j, &i) in outputs.iter().enumerate() {
        let e =
            grad_fn_edge(&vals[i]).ok_or_else(|| Error::runtime("an output lost its grad_fn"))?;
        if !nodes.contains_key(&e.node_id()) {
            return Err(Error::runtime("an output's node is not the program's"));
        }
        push(
            &mut bufs,
            e.node_id(),
            e.input_nr,
            ((u64::MAX, j), gs[j].clone()),
        );
    }
    let mut at_sources: Vec<Vec<Part>> = vec![Vec::new(); n_sources];
    // The nodes keep their saved values: no gradient may be one of them.
    let _keeps = crate::autograd::set_frees_saved(false);
    for node in order {
        let slots = bufs.remove(&node_id(node)).unwrap_or_default();
        let mut grads: Grads = vec![None; node.core().num_inputs()];
        for (k, parts) in slots.into_iter().enumerate() {
            if k < grads.len() {
                grads[k] = sum_parts(parts)?;
            }
        }
        if grads.iter().all(Option::is_none) && !node.apply_without_grads() {
            continue;
        }
        if node.materialize_grads() {
            for (g, m) in grads.iter_mut().zip(node.core().output_meta()) {
                if g.is_none() {
                    *g = Some(Tensor::full_of(&m.shape, Scalar::Int(0), m.dtype)?);
                }
            }
        }
        let outs = validate_for(node.as_ref(), node.apply(grads)?)?;
        let seq = node.core().sequence_nr();
        for (k, (e, g)) in node.core().next_edges().iter().zip(outs).enumerate() {
            let (Some(e), Some(g)) = (e, g) else { continue };
            let part = ((seq, k), g);
            match exits.get(&(e.node_id(), e.input_nr)) {
                Some(&j) => at_sources[j].push(part),
                None => push(&mut bufs, e.node_id(), e.input_nr, part),
            }
        }
    }
    at_sources.into_iter().map(sum_parts).collect()
}

impl Program {
    /// The operations of the backward program its replays as one node run
    /// (see [`Program::compile_backward`]), once a replay in grad mode has
    /// derived it; `None` before that, or when the program replays
    /// operation by operation.
    pub fn backward_operations(&self) -> Option<Vec<&'static str>> {
        match self.derived.get()?.downcast_ref::<Derived>()? {
            Derived::Node(piece) => Some(piece.backward.operations()),
            Derived::Rows(_) => None,
        }
    }

    /// Why replays of this program in grad mode record a node per
    /// operation rather than one (see [`Program::compile_backward`]), once
    /// a replay found out.
    pub fn backward_fallback(&self) -> Option<String> {
        match self.derived.get()?.downcast_ref::<Derived>()? {
            Derived::Rows(why) => Some(why.clone()),
            Derived::Node(_) => None,
        }
    }
}
