//! A backward call's graph task: the nodes reachable from the roots, how
//! many incoming edges each has, which of them lie on a path to the
//! requested inputs, and the buffers where gradients wait for their node
//! (summed in key order, Note [Deterministic sums] in `mod.rs`); and the
//! loop that runs it, wave by wave (`schedule.rs` runs one wave).

use super::super::accumulate::AccumulateGrad;
use super::super::grad_mode::ThreadLocalState;
use super::super::node::{node_id, Grads, Node};
use super::schedule::{on_caller, run_wave, uses_pool};
use super::{Edge, EngineOptions};
use crate::{Error, Result, Tensor};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Nodes deeper than this in reentrant backward calls are refused.
const MAX_REENTRANT_DEPTH: usize = 64;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

#[derive(Default)]
pub(super) struct IdHasher(u64);

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

pub(super) type IdMap<V> = HashMap<usize, V, BuildHasherDefault<IdHasher>>;

/// Sort key of one gradient contribution (see Note [Deterministic sums]).
pub(super) type Key = (u64, usize);

pub(super) struct Slot {
    parts: SmallVec<[(Key, Tensor); 1]>,
}

/// One backward call's state.
pub(super) struct GraphTask {
    pub(super) nodes: Vec<Arc<dyn Node>>,
    pub(super) index: IdMap<usize>,
    pub(super) deps: Vec<usize>,
    pub(super) needed: Vec<bool>,
    pub(super) buffers: Vec<Vec<Slot>>,
    /// (node, input_nr) -> capture slot.
    pub(super) captures: IdMap<SmallVec<[(usize, usize); 1]>>,
    pub(super) captured: Vec<Option<Tensor>>,
    pub(super) keep_graph: bool,
    pub(super) state: ThreadLocalState,
    /// Nodes a pool task may run right after their only producer (see
    /// `run_task`).
    pub(super) follow: Vec<bool>,
    /// Whether the graph has enough work for the pool to pay off.
    pub(super) parallel: bool,
    /// Nodes that failed in anomaly mode; their reports are rendered and
    /// delivered on the calling thread when the call ends.
    pub(super) failed_nodes: Mutex<Vec<Arc<dyn Node>>>,
    /// Nodes whose saved values are freed when the call ends (Note [Nodes
    /// applied inside other nodes] in inplace.rs).
    pub(super) deferred_release: Mutex<Vec<Arc<dyn Node>>>,
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

    pub(super) fn add_grad(&mut self, node: usize, input_nr: usize, key: Key, g: Tensor) {
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
    pub(super) fn take_inputs(&mut self, node: usize) -> Result<Grads> {
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

/// Runs one graph task. `targets` are the edges whose incoming gradients
/// are captured (returned in order); `run_targets` are nodes that must run
/// even though execution is pruned to the targets.
pub(super) fn execute(
    roots: Vec<(Edge, Tensor)>,
    targets: &[Edge],
    run_targets: &[Arc<dyn Node>],
    opts: EngineOptions,
) -> Result<Vec<Option<Tensor>>> {
    execute_batched(roots, targets, run_targets, opts, None)
}

/// [`execute`] with every gradient carrying a leading batch dim of size
/// `batch` (when given).
pub(super) fn execute_batched(
    roots: Vec<(Edge, Tensor)>,
    targets: &[Edge],
    run_targets: &[Arc<dyn Node>],
    opts: EngineOptions,
    batch: Option<usize>,
) -> Result<Vec<Option<Tensor>>> {
    crate::compile::break_capture("backward runs inside the captured function");
    let _depth = DepthGuard::enter()?;
    let root_edges: Vec<Edge> = roots.iter().map(|r| r.0.clone()).collect();
    let _current = crate::autograd::current::enter(&root_edges, targets, run_targets);
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
    task.parallel = uses_pool(&task, opts.create_graph);
    let _state = task.state.install();
    let result = run_graph(&mut task, roots);
    for node in std::mem::take(&mut *task.deferred_release.lock()) {
        node.release_variables();
    }
    crate::autograd::anomaly::emit(std::mem::take(&mut *task.failed_nodes.lock()));
    result.map(|_| task.captured)
}

/// Runs a prepared graph task from its roots: waves of ready nodes until
/// none is left.
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
