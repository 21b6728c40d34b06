//! Running one node: tensor and node hooks in torch's documented order,
//! `retain_grad`, the node's backward (row by row in a batched backward
//! when the node has no batched formula), releasing its saved values, and
//! checking what it returned.

use super::super::node::{Grads, Node};
use super::schedule::ROW_BY_ROW_NODES;
use super::task::GraphTask;
use super::validate::validate;
use crate::{Error, Result, Tensor};
use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Runs a node with its hooks (see torch's documented order: tensor
/// pre-hooks, node pre-hooks, retain_grad, the node, post-hooks) and checks
/// what it returns.
pub(super) fn call_node(task: &GraphTask, node: &Arc<dyn Node>, grads: Grads) -> Result<Grads> {
    let _spans = crate::trace::node_spans(
        || match node.static_name() {
            Some(name) => Cow::Borrowed(name),
            None => Cow::Owned(node.name()),
        },
        node.core().sequence_nr(),
    );
    if !crate::autograd::anomaly::is_anomaly_enabled() {
        return run_node(task, node, grads);
    }
    let _current = crate::autograd::anomaly::CurrentNodeGuard::enter(node);
    let r = run_node(task, node, grads).and_then(|outs| {
        if crate::autograd::anomaly::is_anomaly_check_nan_enabled() {
            crate::autograd::anomaly::check_nan(node.as_ref(), &outs)?;
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
        let _frees = crate::autograd::set_frees_saved(
            !task.keep_graph
                && !node.core().defers_release()
                && crate::autograd::current_batch().is_none(),
        );
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
    let b = match crate::autograd::current_batch() {
        Some(b) if !node.supports_batched() => b,
        _ => return node.apply(grads),
    };
    ROW_BY_ROW_NODES.fetch_add(1, Ordering::Relaxed);
    let _rows = crate::autograd::BatchGuard::new(None);
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
pub(super) fn retain(t: &Tensor, g: &Tensor) -> Result<()> {
    let slot = t.autograd().grad_slot();
    let mut cur = slot.lock();
    *cur = Some(match cur.take() {
        None => g.copy(),
        Some(old) => old.add(g)?,
    });
    Ok(())
}
