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

use super::accumulate::{accumulate, AccumulateGrad};
use super::grad_mode::ThreadLocalState;
use super::node::{node_id, Grads, Node, TensorMeta};
use super::sum_to::{sum_to, sum_to_batched};
use super::{gradient_edge, Edge};
use crate::{Error, Result, Tensor};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Options shared by [`backward`] and [`grad`].
#[derive(Clone, Copy, Debug, Default)]
pub struct BackwardOptions {
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

/// What to differentiate with respect to: a tensor, or a gradient edge
/// (`graph.GradientEdge`).
#[derive(Clone)]
pub enum GradInput {
    Tensor(Tensor),
    Edge(Edge),
}

/// Nodes deeper than this in reentrant backward calls are refused.
const MAX_REENTRANT_DEPTH: usize = 64;
/// A graph whose nodes produce fewer gradient elements than this in total
/// runs inline: handing its nodes to the pool would cost more than it saves.
const PARALLEL_MIN_WORK: usize = 1 << 16;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Waves that ran on the pool since the process started (lets tests check
/// that a graph really took the parallel path).
static PARALLEL_WAVES: AtomicU64 = AtomicU64::new(0);
/// Nodes a batched backward ran once per batch row (no batched formula).
static ROW_BY_ROW_NODES: AtomicU64 = AtomicU64::new(0);

/// How many nodes batched backward calls ran row by row so far (a
/// statistic: tests use it to check that batched formulas were used).
pub fn row_by_row_nodes() -> u64 {
    ROW_BY_ROW_NODES.load(Ordering::Relaxed)
}

/// How many waves of ready nodes ran on the pool so far (a statistic for
/// tests and benchmarks).
pub fn parallel_waves() -> u64 {
    PARALLEL_WAVES.load(Ordering::Relaxed)
}

#[derive(Default)]
struct IdHasher(u64);
impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64 ^ (n as u64 >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
type IdMap<V> = HashMap<usize, V, BuildHasherDefault<IdHasher>>;

/// Sort key of one gradient contribution (see Note [Deterministic sums]).
type Key = (u64, usize);

struct Slot {
    parts: SmallVec<[(Key, Tensor); 1]>,
}

/// One backward call's state.
struct GraphTask {
    nodes: Vec<Arc<dyn Node>>,
    index: IdMap<usize>,
    deps: Vec<usize>,
    needed: Vec<bool>,
    buffers: Vec<Vec<Slot>>,
    /// (node, input_nr) -> capture slot.
    captures: IdMap<SmallVec<[(usize, usize); 1]>>,
    captured: Vec<Option<Tensor>>,
    keep_graph: bool,
    state: ThreadLocalState,
    /// Nodes a pool task may run right after their only producer (see
    /// `run_task`).
    follow: Vec<bool>,
    /// Whether the graph has enough work for the pool to pay off.
    parallel: bool,
    /// Nodes that failed in anomaly mode; their reports are rendered and
    /// delivered on the calling thread when the call ends.
    failed_nodes: Mutex<Vec<Arc<dyn Node>>>,
    /// Nodes whose saved values are freed when the call ends (Note [Nodes
    /// applied inside other nodes] in inplace.rs).
    deferred_release: Mutex<Vec<Arc<dyn Node>>>,
}

struct DepthGuard;
impl DepthGuard {
    fn enter() -> Result<DepthGuard> {
        let d = DEPTH.with(|c| c.get());
        if d >= MAX_REENTRANT_DEPTH {
            return Err(Error::runtime(format!(
                "maximum reentrant backward depth ({MAX_REENTRANT_DEPTH}) exceeded"
            )));
        }
        DEPTH.with(|c| c.set(d + 1));
        Ok(DepthGuard)
    }
}
impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|c| c.set(c.get() - 1));
    }
}

impl GraphTask {
    fn discover(roots: &[Edge]) -> GraphTask {
        let mut nodes: Vec<Arc<dyn Node>> = Vec::new();
        let mut index: IdMap<usize> = IdMap::default();
        let mut deps: Vec<usize> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        for r in roots {
            let id = r.node_id();
            if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(id) {
                slot.insert(nodes.len());
                nodes.push(r.node.clone());
                deps.push(0);
                stack.push(nodes.len() - 1);
            }
        }
        while let Some(i) = stack.pop() {
            let node = nodes[i].clone();
            for e in node.core().next_edges().iter().flatten() {
                let id = e.node_id();
                let j = match index.get(&id) {
                    Some(&j) => j,
                    None => {
                        let j = nodes.len();
                        index.insert(id, j);
                        nodes.push(e.node.clone());
                        deps.push(0);
                        stack.push(j);
                        j
                    }
                };
                deps[j] += 1;
            }
        }
        let n = nodes.len();
        GraphTask {
            nodes,
            index,
            deps,
            needed: vec![true; n],
            buffers: (0..n).map(|_| Vec::new()).collect(),
            captures: IdMap::default(),
            captured: Vec::new(),
            keep_graph: false,
            state: ThreadLocalState::for_backward(false),
            follow: Vec::new(),
            parallel: false,
            failed_nodes: Mutex::new(Vec::new()),
            deferred_release: Mutex::new(Vec::new()),
        }
    }

    /// Restricts execution to nodes on a path to a target. `run_targets`
    /// are nodes that must run themselves (leaf accumulators in
    /// `backward(inputs=...)`); capture targets only need their inputs.
    fn prune(&mut self, capture_nodes: &[usize], run_targets: &[usize]) {
        let n = self.nodes.len();
        // Topological order (parents before children) by Kahn's algorithm.
        let mut indeg = self.deps.clone();
        let mut order = Vec::with_capacity(n);
        let mut queue: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        while let Some(i) = queue.pop() {
            order.push(i);
            for e in self.nodes[i].core().next_edges().iter().flatten() {
                let j = self.index[&e.node_id()];
                indeg[j] -= 1;
                if indeg[j] == 0 {
                    queue.push(j);
                }
            }
        }
        let mut is_capture = vec![false; n];
        for &c in capture_nodes {
            is_capture[c] = true;
        }
        let mut needed = vec![false; n];
        for &t in run_targets {
            needed[t] = true;
        }
        for &i in order.iter().rev() {
            if needed[i] {
                continue;
            }
            needed[i] = self.nodes[i].core().next_edges().iter().flatten().any(|e| {
                let j = self.index[&e.node_id()];
                needed[j] || is_capture[j]
            });
        }
        self.needed = needed;
    }

    fn add_grad(&mut self, node: usize, input_nr: usize, key: Key, g: Tensor) {
        let buf = &mut self.buffers[node];
        if buf.is_empty() {
            let k = self.nodes[node].core().num_inputs().max(input_nr + 1);
            buf.extend((0..k).map(|_| Slot {
                parts: SmallVec::new(),
            }));
        }
        buf[input_nr].parts.push((key, g));
    }

    /// The summed gradients of a ready node, in key order.
    fn take_inputs(&mut self, node: usize) -> Result<Grads> {
        let k = self.nodes[node].core().num_inputs();
        let buf = std::mem::take(&mut self.buffers[node]);
        let mut out: Grads = vec![None; k.max(buf.len())];
        for (i, slot) in buf.into_iter().enumerate() {
            let mut parts = slot.parts;
            if parts.len() > 1 {
                parts.sort_by_key(|p| p.0);
            }
            let mut it = parts.into_iter().map(|p| p.1);
            out[i] = match it.next() {
                None => None,
                Some(first) => Some(it.try_fold(first, |acc, g| acc.add(&g))?),
            };
        }
        Ok(out)
    }
}

/// Runs a node with its hooks (see torch's documented order: tensor
/// pre-hooks, node pre-hooks, retain_grad, the node, post-hooks) and checks
/// what it returns.
fn call_node(task: &GraphTask, node: &Arc<dyn Node>, grads: Grads) -> Result<Grads> {
    if !super::anomaly::is_anomaly_enabled() {
        return run_node(task, node, grads);
    }
    let _current = super::anomaly::CurrentNodeGuard::enter(node);
    let r = run_node(task, node, grads).and_then(|outs| {
        if super::anomaly::is_anomaly_check_nan_enabled() {
            super::anomaly::check_nan(node.as_ref(), &outs)?;
        }
        Ok(outs)
    });
    if r.is_err() {
        task.failed_nodes.lock().push(node.clone());
    }
    r
}

fn run_node(task: &GraphTask, node: &Arc<dyn Node>, mut grads: Grads) -> Result<Grads> {
    let hooks = node.core().hooks_snapshot();
    if let Some(h) = &hooks {
        for (nr, r) in &h.tensor_pre {
            if let Some(g) = grads.get(*nr).cloned().flatten() {
                if let Some(new) = (r.hook)(&g)? {
                    grads[*nr] = Some(new);
                }
            }
        }
        for r in &h.pre {
            if let Some(new) = (r.hook)(&grads)? {
                if new.len() != grads.len() {
                    return Err(Error::runtime(format!(
                        "hook of {} returned {} gradients, expected {}",
                        node.name(),
                        new.len(),
                        grads.len()
                    )));
                }
                grads = new;
            }
        }
        for (nr, weak) in &h.retains {
            if let (Some(t), Some(g)) = (weak.upgrade(), grads.get(*nr).cloned().flatten()) {
                retain(&t, &g)?;
            }
        }
    }
    let inputs_for_hooks = hooks
        .as_ref()
        .filter(|h| !h.post.is_empty())
        .map(|_| grads.clone());
    let mut outs = if skips(node, &grads) {
        vec![None; node.core().next_edges().len()]
    } else {
        apply_node(node, grads)?
    };
    if !task.keep_graph {
        if node.core().defers_release() {
            task.deferred_release.lock().push(node.clone());
        } else {
            node.release_variables();
        }
    }
    if let (Some(h), Some(gin)) = (&hooks, inputs_for_hooks) {
        for r in &h.post {
            if let Some(new) = (r.hook)(&outs, &gin)? {
                outs = new;
            }
        }
    }
    validate(node.as_ref(), outs)
}

/// A batched gradient `t` (leading dim `b`, then a shape broadcastable to
/// `shape`) reduced to `[b] + shape`, or torch's error naming the node.
fn batched_sum_to(
    node: &dyn Node,
    i: usize,
    t: Tensor,
    b: usize,
    shape: &[usize],
) -> Result<Tensor> {
    if t.ndim() == 0 || t.shape()[0] != b || !expandable_to(shape, &t.shape()[1..]) {
        let full: Vec<usize> = std::iter::once(b).chain(shape.iter().copied()).collect();
        return Err(Error::runtime(format!(
            "Function {} returned an invalid gradient at index {i} - got {:?} but expected shape compatible with {full:?} (batch of {b})",
            node.name(),
            t.shape(),
        )));
    }
    sum_to_batched(&t, shape)
}

/// Whether the engine passes undefined gradients on without running the
/// node (every incoming gradient is undefined and the node does not ask to
/// see that).
fn skips(node: &Arc<dyn Node>, grads: &[Option<Tensor>]) -> bool {
    grads.iter().all(|g| g.is_none()) && !node.apply_without_grads()
}

/// Runs a node's backward. In a batched backward, a node that does not
/// handle batches runs once per batch row (without the batch set), and its
/// results are stacked.
fn apply_node(node: &Arc<dyn Node>, grads: Grads) -> Result<Grads> {
    let b = match super::current_batch() {
        Some(b) if !node.supports_batched() => b,
        _ => return node.apply(grads),
    };
    ROW_BY_ROW_NODES.fetch_add(1, Ordering::Relaxed);
    let _rows = super::BatchGuard::new(None);
    let n_out = node.core().next_edges().len();
    let mut cols: Vec<Vec<Option<Tensor>>> = vec![Vec::with_capacity(b); n_out];
    for r in 0..b {
        let row: Grads = grads
            .iter()
            .map(|g| g.as_ref().map(|g| g.select(0, r as isize)).transpose())
            .collect::<Result<_>>()?;
        let outs = if skips(node, &row) {
            vec![None; n_out]
        } else {
            validate(node.as_ref(), node.apply(row)?)?
        };
        for (col, g) in cols.iter_mut().zip(outs) {
            col.push(g);
        }
    }
    cols.into_iter()
        .enumerate()
        .map(|(k, col)| {
            if col.iter().all(|g| g.is_none()) {
                return Ok(None);
            }
            let meta = node.core().input_meta()[k].as_ref();
            let parts: Vec<Tensor> = col
                .into_iter()
                .map(|g| match (g, meta) {
                    (Some(g), _) => Ok(g),
                    (None, Some(m)) => m.zeros(),
                    (None, None) => Err(Error::runtime(format!(
                        "{}: a batch row returned no gradient for input {k}, whose shape is unknown",
                        node.name()
                    ))),
                })
                .collect::<Result<_>>()?;
            Tensor::stack(&parts, 0).map(Some)
        })
        .collect()
}

/// `retain_grad()`'s hook: keep (or add to) the non-leaf's `.grad`.
fn retain(t: &Tensor, g: &Tensor) -> Result<()> {
    let slot = t.autograd().grad_slot();
    let mut cur = slot.lock();
    *cur = Some(match cur.take() {
        None => g.copy(),
        Some(old) => old.add(g)?,
    });
    Ok(())
}

fn expandable_to(from: &[usize], to: &[usize]) -> bool {
    from.len() <= to.len()
        && from
            .iter()
            .rev()
            .zip(to.iter().rev())
            .all(|(&f, &t)| f == t || f == 1)
}

/// Checks a node's outputs against its inputs' metadata: the count, the
/// shape (reducing broadcast gradients) and the dtype (casting).
pub(crate) fn validate_for(node: &dyn Node, outs: Grads) -> Result<Grads> {
    validate(node, outs)
}

fn validate(node: &dyn Node, mut outs: Grads) -> Result<Grads> {
    let core = node.core();
    let n = core.next_edges().len();
    if outs.len() != n {
        return Err(Error::runtime(format!(
            "function {} returned an incorrect number of gradients (expected {n}, got {})",
            node.name(),
            outs.len()
        )));
    }
    for (i, g) in outs.iter_mut().enumerate() {
        if core.next_edges()[i].is_none() {
            *g = None;
            continue;
        }
        let (Some(t), Some(meta)) = (g.as_ref(), core.input_meta()[i].as_ref()) else {
            continue;
        };
        let mut t = t.clone();
        if let Some(b) = super::current_batch() {
            t = batched_sum_to(node, i, t, b, &meta.shape)?;
        } else if t.shape() != meta.shape.as_slice() {
            if !expandable_to(&meta.shape, t.shape()) {
                return Err(Error::runtime(format!(
                    "Function {} returned an invalid gradient at index {i} - got {:?} but expected shape compatible with {:?}",
                    node.name(),
                    t.shape(),
                    meta.shape.as_slice()
                )));
            }
            t = sum_to(&t, &meta.shape)?;
        }
        if t.dtype() != meta.dtype {
            if !t.dtype().is_floating_point() {
                return Err(Error::runtime(format!(
                    "Function {} returned an invalid gradient at index {i} - expected dtype {} but got {}",
                    node.name(),
                    meta.dtype,
                    t.dtype()
                )));
            }
            t = t.to_dtype(meta.dtype);
        }
        *g = Some(t);
    }
    Ok(outs)
}

/// The root gradient for `out`: the given one (checked) or ones for a
/// scalar.
fn root_grad(i: usize, out: &TensorMeta, given: Option<&Tensor>) -> Result<Tensor> {
    match given {
        Some(g) => {
            if g.shape() != &out.shape[..] {
                return Err(Error::runtime(format!(
                    "Mismatch in shape: grad_output[{i}] has a shape of {:?} and output[{i}] has a shape of {:?}.",
                    g.shape(),
                    &out.shape[..]
                )));
            }
            if g.dtype().is_floating_point() != out.dtype.is_floating_point() {
                return Err(Error::runtime(format!(
                    "For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {} and output[{i}] has a dtype of {}.",
                    g.dtype(),
                    out.dtype
                )));
            }
            Ok(g.clone())
        }
        None => {
            if out.shape.iter().product::<usize>() != 1 {
                return Err(Error::runtime(format!(
                    "grad can be implicitly created only for scalar outputs (got shape {:?})",
                    &out.shape[..]
                )));
            }
            Tensor::try_ones(&out.shape, out.dtype)
        }
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

fn as_inputs(tensors: &[Tensor]) -> Vec<GradInput> {
    tensors.iter().cloned().map(GradInput::Tensor).collect()
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

/// Runs one graph task. `targets` are the edges whose incoming gradients
/// are captured (returned in order); `run_targets` are nodes that must run
/// even though execution is pruned to the targets.
fn execute(
    roots: Vec<(Edge, Tensor)>,
    targets: &[Edge],
    run_targets: &[Arc<dyn Node>],
    opts: BackwardOptions,
) -> Result<Vec<Option<Tensor>>> {
    execute_batched(roots, targets, run_targets, opts, None)
}

/// [`execute`] with every gradient carrying a leading batch dim of size
/// `batch` (when given).
fn execute_batched(
    roots: Vec<(Edge, Tensor)>,
    targets: &[Edge],
    run_targets: &[Arc<dyn Node>],
    opts: BackwardOptions,
    batch: Option<usize>,
) -> Result<Vec<Option<Tensor>>> {
    let _depth = DepthGuard::enter()?;
    let root_edges: Vec<Edge> = roots.iter().map(|r| r.0.clone()).collect();
    let _current = super::current::enter(&root_edges, targets, run_targets);
    let mut task = GraphTask::discover(&root_edges);
    task.keep_graph = opts.retain_graph.unwrap_or(opts.create_graph);
    task.state = ThreadLocalState::for_backward(opts.create_graph);
    task.state.batch = batch;
    task.captured = vec![None; targets.len()];
    if !targets.is_empty() || !run_targets.is_empty() {
        let mut capture_nodes = Vec::new();
        for (slot, e) in targets.iter().enumerate() {
            if let Some(&i) = task.index.get(&e.node_id()) {
                task.captures.entry(i).or_default().push((e.input_nr, slot));
                capture_nodes.push(i);
            }
        }
        let run: Vec<usize> = run_targets
            .iter()
            .filter_map(|n| task.index.get(&node_id(n)).copied())
            .collect();
        task.prune(&capture_nodes, &run);
    }
    task.follow = (0..task.nodes.len())
        .map(|i| {
            task.deps[i] == 1
                && task.needed[i]
                && !task.captures.contains_key(&i)
                && !on_caller(&task.nodes[i])
        })
        .collect();
    // Python pack hooks run where tensors are saved: a create_graph
    // backward under them stays on the calling thread.
    let hooks_on_caller = opts.create_graph && task.state.saved_hooks.needs_caller_thread();
    task.parallel = super::is_multithreading_enabled()
        && !hooks_on_caller
        && crate::pool::num_threads() > 1
        && task.nodes.len() > 1
        && {
            let work: usize = (0..task.nodes.len())
                .filter(|&i| task.needed[i])
                .flat_map(|i| task.nodes[i].core().input_meta().iter().flatten())
                .map(|m| m.shape.iter().product::<usize>())
                .sum();
            work >= PARALLEL_MIN_WORK
        };
    let _state = task.state.install();
    let result = run_graph(&mut task, roots);
    for node in std::mem::take(&mut *task.deferred_release.lock()) {
        node.release_variables();
    }
    super::anomaly::emit(std::mem::take(&mut *task.failed_nodes.lock()));
    result.map(|_| task.captured)
}

/// Runs a prepared graph task from its roots.
fn run_graph(task: &mut GraphTask, roots: Vec<(Edge, Tensor)>) -> Result<()> {
    let mut ready: Vec<usize> = Vec::new();
    for (k, (edge, g)) in roots.into_iter().enumerate() {
        let i = task.index[&edge.node_id()];
        task.add_grad(i, edge.input_nr, (u64::MAX, k), g);
    }
    for (i, &d) in task.deps.iter().enumerate() {
        if d == 0 {
            ready.push(i);
        }
    }
    while !ready.is_empty() {
        // Later nodes first, as torch's ready queue orders them.
        ready.sort_by_key(|&i| std::cmp::Reverse(task.nodes[i].core().sequence_nr()));
        let batch = std::mem::take(&mut ready);
        let mut jobs: Vec<(usize, Grads)> = Vec::with_capacity(batch.len());
        for i in batch {
            let grads = task.take_inputs(i)?;
            if let Some(caps) = task.captures.get(&i).cloned() {
                for (input_nr, slot) in caps {
                    let g = grads.get(input_nr).cloned().flatten();
                    task.captured[slot] = match g {
                        Some(g) => Some(run_capture_hooks(&task.nodes[i], input_nr, g)?),
                        None => None,
                    };
                }
            }
            if task.needed[i] {
                jobs.push((i, grads));
            }
        }
        let results = run_wave(task, jobs)?;
        for (i, outs, consumed) in results {
            let node = task.nodes[i].clone();
            let seq = node.core().sequence_nr();
            for (k, (edge, g)) in node.core().next_edges().iter().zip(outs).enumerate() {
                let Some(edge) = edge else { continue };
                if consumed.get(k).copied().unwrap_or(false) {
                    continue;
                }
                let j = task.index[&edge.node_id()];
                if let Some(g) = g {
                    task.add_grad(j, edge.input_nr, (seq, k), g);
                }
                task.deps[j] -= 1;
                if task.deps[j] == 0 {
                    ready.push(j);
                }
            }
        }
    }
    Ok(())
}

/// Hooks registered on a tensor run on its gradient even when the gradient
/// is captured by `grad()` rather than passed on.
fn run_capture_hooks(node: &Arc<dyn Node>, input_nr: usize, mut g: Tensor) -> Result<Tensor> {
    if let Some(acc) = node.as_any().downcast_ref::<AccumulateGrad>() {
        for (h, _) in acc.variable().accumulator_hooks().0 {
            if let Some(r) = h(&g)? {
                g = r;
            }
        }
        return Ok(g);
    }
    if let Some(h) = node.core().hooks_snapshot() {
        for (nr, r) in &h.tensor_pre {
            if *nr == input_nr {
                if let Some(new) = (r.hook)(&g)? {
                    g = new;
                }
            }
        }
    }
    Ok(g)
}

/// Whether a node must run on the thread that called backward.
fn on_caller(n: &Arc<dyn Node>) -> bool {
    n.needs_caller_thread() || n.core().has_python_hooks()
}

/// The outputs of one executed node, with the edges whose gradient was
/// already consumed inside the job that ran it.
type Executed = (usize, Grads, SmallVec<[bool; 4]>);

/// Results of the nodes run on the pool during one wave.
struct Sink {
    done: Mutex<Vec<Executed>>,
    error: Mutex<Option<Error>>,
    failed: AtomicBool,
}

/// Runs node `i` as a pool task, then every node whose only producer is
/// a node this task ran (`task.follow`): one successor continues on this
/// task, the others are spawned as tasks of their own, so the branches of
/// a wide graph spread over the pool without a wave per node. A followed
/// node receives exactly one contribution, so no summation order is
/// involved and results stay deterministic.
fn run_task<'s>(
    scope: &rayon::Scope<'s>,
    task: &'s GraphTask,
    sink: &'s Sink,
    i: usize,
    grads: Grads,
) {
    let _s = task.state.install();
    let (mut n, mut g) = (i, grads);
    loop {
        if sink.failed.load(AtomicOrdering::Relaxed) {
            return;
        }
        let node = &task.nodes[n];
        let mut outs = match call_node(task, node, g) {
            Ok(o) => o,
            Err(e) => {
                sink.error.lock().get_or_insert(e);
                sink.failed.store(true, AtomicOrdering::Relaxed);
                return;
            }
        };
        let edges = node.core().next_edges();
        let mut consumed: SmallVec<[bool; 4]> = SmallVec::from_elem(false, edges.len());
        let mut next: SmallVec<[(usize, Grads); 2]> = SmallVec::new();
        for (k, e) in edges.iter().enumerate() {
            let (Some(e), Some(_)) = (e, outs.get(k).and_then(|g| g.as_ref())) else {
                continue;
            };
            let j = task.index[&e.node_id()];
            if task.follow[j] {
                let mut gj: Grads =
                    vec![None; task.nodes[j].core().num_inputs().max(e.input_nr + 1)];
                gj[e.input_nr] = outs[k].take();
                consumed[k] = true;
                next.push((j, gj));
            }
        }
        sink.done.lock().push((n, outs, consumed));
        let Some(last) = next.pop() else { return };
        for (j, gj) in next {
            scope.spawn(move |s| run_task(s, task, sink, j, gj));
        }
        (n, g) = last;
    }
}

/// How many of a node's next edges lead to nodes a pool task would run
/// right after it.
fn fanout(task: &GraphTask, i: usize) -> usize {
    task.nodes[i]
        .core()
        .next_edges()
        .iter()
        .flatten()
        .filter(|e| task.follow[task.index[&e.node_id()]])
        .count()
}

/// Runs one wave of ready nodes; returns what ran (nodes that ran on the
/// pool in completion order; the caller's sums do not depend on it).
fn run_wave(task: &GraphTask, jobs: Vec<(usize, Grads)>) -> Result<Vec<Executed>> {
    let pool_jobs: Vec<usize> = jobs
        .iter()
        .filter(|(i, _)| !on_caller(&task.nodes[*i]))
        .map(|(i, _)| *i)
        .collect();
    let parallel =
        task.parallel && (pool_jobs.len() >= 2 || pool_jobs.iter().any(|&i| fanout(task, i) >= 2));
    if !parallel {
        return jobs
            .into_iter()
            .map(|(i, g)| Ok((i, call_node(task, &task.nodes[i], g)?, SmallVec::new())))
            .collect();
    }
    let mut out = Vec::new();
    let mut par: Vec<(usize, Grads)> = Vec::new();
    for (i, g) in jobs {
        if on_caller(&task.nodes[i]) {
            out.push((i, call_node(task, &task.nodes[i], g)?, SmallVec::new()));
        } else {
            par.push((i, g));
        }
    }
    PARALLEL_WAVES.fetch_add(1, Ordering::Relaxed);
    let sink = Sink {
        done: Mutex::new(Vec::new()),
        error: Mutex::new(None),
        failed: AtomicBool::new(false),
    };
    crate::pool::install(|| {
        rayon::scope(|s| {
            for (i, g) in par {
                let sink = &sink;
                s.spawn(move |s| run_task(s, task, sink, i, g));
            }
        })
    });
    if let Some(e) = sink.error.into_inner() {
        return Err(e);
    }
    out.extend(sink.done.into_inner());
    Ok(out)
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
/// inputs)`: accumulates gradients into the `.grad` of the leaves (or of
/// `inputs` only, when given).
pub fn backward(
    tensors: &[Tensor],
    grad_tensors: &[Option<Tensor>],
    opts: BackwardOptions,
    inputs: Option<&[Tensor]>,
) -> Result<()> {
    let inputs = inputs.map(as_inputs);
    backward_edges(&as_inputs(tensors), grad_tensors, opts, inputs.as_deref())
}

/// [`backward`] where outputs and inputs may also be gradient edges. The
/// gradient reaching an edge input that is not a leaf's accumulator has no
/// `.grad` to go to (its `retain_grad` hooks still see it).
pub fn backward_edges(
    tensors: &[GradInput],
    grad_tensors: &[Option<Tensor>],
    opts: BackwardOptions,
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
                        retain(&t, &g)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `autograd.grad(outputs, inputs, grad_outputs, ...)`: the gradients of
/// the outputs with respect to `inputs`, without touching any `.grad`.
pub fn grad(
    outputs: &[Tensor],
    inputs: &[GradInput],
    grad_outputs: &[Option<Tensor>],
    opts: BackwardOptions,
) -> Result<Vec<Option<Tensor>>> {
    grad_edges(&as_inputs(outputs), inputs, grad_outputs, opts)
}

/// [`grad`] where outputs may also be gradient edges (their gradient then
/// has the shape and dtype the edge's node expects).
pub fn grad_edges(
    outputs: &[GradInput],
    inputs: &[GradInput],
    grad_outputs: &[Option<Tensor>],
    opts: BackwardOptions,
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
    opts: BackwardOptions,
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
    opts: BackwardOptions,
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
