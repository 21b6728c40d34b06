//! Which graph task is running on this thread, for Python hooks that need
//! to know (`_current_graph_task_id`, `_will_engine_execute_node`; used by
//! `graph.register_multi_grad_hook`). Hooks that run Python always run on
//! the thread that called backward, so a thread-local stack (one entry per
//! nested, reentrant backward) is enough.

use super::node::{node_id, Node};
use super::Edge;
use crate::{Error, Result};
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct TaskInfo {
    id: u64,
    roots: Vec<Arc<dyn Node>>,
    /// Nodes whose input gradients are wanted (`grad`'s inputs, or the
    /// accumulators of `backward(inputs=...)`); empty when nothing was
    /// pruned.
    targets: Vec<Arc<dyn Node>>,
    /// The nodes of `grad`'s inputs: their gradients are captured and
    /// returned, so the nodes themselves do not run.
    captured: Vec<Arc<dyn Node>>,
}

thread_local! {
    static TASKS: RefCell<Vec<TaskInfo>> = const { RefCell::new(Vec::new()) };
}

static NEXT_TASK_ID: AtomicU64 = AtomicU64::new(1);

/// Pops this thread's current task when dropped.
pub(crate) struct CurrentTask;

impl Drop for CurrentTask {
    fn drop(&mut self) {
        TASKS.with(|t| t.borrow_mut().pop());
    }
}

/// Marks a graph task as running on this thread until the guard drops.
pub(crate) fn enter(
    roots: &[Edge],
    targets: &[Edge],
    run_targets: &[Arc<dyn Node>],
) -> CurrentTask {
    let info = TaskInfo {
        id: NEXT_TASK_ID.fetch_add(1, Ordering::Relaxed),
        roots: roots.iter().map(|e| e.node.clone()).collect(),
        targets: targets
            .iter()
            .map(|e| e.node.clone())
            .chain(run_targets.iter().cloned())
            .collect(),
        captured: targets.iter().map(|e| e.node.clone()).collect(),
    };
    TASKS.with(|t| t.borrow_mut().push(info));
    CurrentTask
}

/// The id of the innermost graph task running on this thread, if any.
pub fn current_graph_task_id() -> Option<u64> {
    TASKS.with(|t| t.borrow().last().map(|i| i.id))
}

/// Whether `node` runs (or has its gradient captured) in the innermost
/// graph task of this thread: it is reachable from the roots and, when the
/// task was restricted to some inputs, lies on a path to one of them.
pub fn will_engine_execute_node(node: &Arc<dyn Node>) -> Result<bool> {
    let (roots, targets) = TASKS
        .with(|t| {
            t.borrow()
                .last()
                .map(|i| (i.roots.clone(), i.targets.clone()))
        })
        .ok_or_else(|| {
            Error::runtime(
                "_will_engine_execute_node should only be called during the backward pass",
            )
        })?;
    let wanted = node_id(node);
    if !reaches(&roots, |id| id == wanted) {
        return Ok(false);
    }
    if targets.is_empty() {
        return Ok(true);
    }
    let target_ids: HashSet<usize> = targets.iter().map(node_id).collect();
    Ok(reaches(std::slice::from_ref(node), |id| {
        target_ids.contains(&id)
    }))
}

/// Whether `node` runs in the innermost graph task of this thread:
/// [`will_engine_execute_node`], except for the nodes of `grad`'s inputs,
/// whose gradients are captured instead (a leaf's `AccumulateGrad` runs
/// under `backward`, not under `grad`).
pub fn will_engine_run_node(node: &Arc<dyn Node>) -> Result<bool> {
    let wanted = node_id(node);
    let captured = TASKS.with(|t| {
        t.borrow()
            .last()
            .is_some_and(|i| i.captured.iter().any(|n| node_id(n) == wanted))
    });
    Ok(!captured && will_engine_execute_node(node)?)
}

/// Whether a node satisfying `hit` is reachable from `start` (iterative).
fn reaches(start: &[Arc<dyn Node>], hit: impl Fn(usize) -> bool) -> bool {
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack: Vec<Arc<dyn Node>> = start.to_vec();
    while let Some(n) = stack.pop() {
        let id = node_id(&n);
        if !seen.insert(id) {
            continue;
        }
        if hit(id) {
            return true;
        }
        stack.extend(
            n.core()
                .next_edges()
                .iter()
                .flatten()
                .map(|e| e.node.clone()),
        );
    }
    false
}

thread_local! {
    static FREES_SAVED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the node being applied on this thread has its saved values
/// freed as soon as it returns (a backward without `retain_graph`, the node
/// applied once): a gradient it gives may then be a tensor it saved, as
/// nothing will read that tensor through the node again.
pub(crate) fn frees_saved() -> bool {
    FREES_SAVED.with(|f| f.get())
}

/// Restores the previous [`frees_saved`] when dropped.
pub(crate) struct FreesSaved(bool);

impl Drop for FreesSaved {
    fn drop(&mut self) {
        FREES_SAVED.with(|f| f.set(self.0));
    }
}

/// Sets [`frees_saved`] for the node applied while the guard lives.
pub(crate) fn set_frees_saved(v: bool) -> FreesSaved {
    FreesSaved(FREES_SAVED.with(|f| f.replace(v)))
}
