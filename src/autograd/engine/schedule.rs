//! Scheduling one wave of ready nodes (the loop over waves is
//! `GraphTask::run`): inline or on ferrograd's pool, and a pool task follows a node's single-producer successors so the
//! branches of a wide graph spread without a wave per node.

use super::super::node::{Grads, Node};
use super::run::call_node;
use super::task::GraphTask;
use crate::{Error, Result};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A graph whose nodes produce fewer gradient elements than this in total
/// runs inline: handing its nodes to the pool would cost more than it saves.
const PARALLEL_MIN_WORK: usize = 1 << 16;

/// Whether a prepared task runs its waves on the pool: multithreading is
/// on, the pool has several threads free for this caller
/// (`pool::kernel_threads`), and the graph has enough gradient elements
/// to pay for it.
pub(super) fn uses_pool(task: &GraphTask, create_graph: bool) -> bool {
    // Python pack hooks run where tensors are saved: a create_graph
    // backward under them stays on the calling thread.
    let hooks_on_caller = create_graph && task.state.saved_hooks.needs_caller_thread();
    crate::autograd::is_multithreading_enabled()
        && !hooks_on_caller
        && crate::pool::kernel_threads() > 1
        && task.nodes.len() > 1
        && {
            let work: usize = (0..task.nodes.len())
                .filter(|&i| task.needed[i])
                .flat_map(|i| task.nodes[i].core().input_meta().iter().flatten())
                .map(|m| m.shape.iter().product::<usize>())
                .sum();
            work >= PARALLEL_MIN_WORK
        }
}

/// Waves that ran on the pool since the process started (lets tests check
/// that a graph really took the parallel path).
static PARALLEL_WAVES: AtomicU64 = AtomicU64::new(0);

/// Nodes a batched backward ran once per batch row (no batched formula).
pub(super) static ROW_BY_ROW_NODES: AtomicU64 = AtomicU64::new(0);

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

/// Whether a node must run on the thread that called backward.
pub(super) fn on_caller(n: &Arc<dyn Node>) -> bool {
    n.needs_caller_thread() || n.core().has_caller_thread_hooks()
}

/// The outputs of one executed node, with the edges whose gradient was
/// already consumed inside the job that ran it.
pub(super) type Executed = (usize, Grads, SmallVec<[bool; 4]>);

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
pub(super) fn run_wave(task: &GraphTask, jobs: Vec<(usize, Grads)>) -> Result<Vec<Executed>> {
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
