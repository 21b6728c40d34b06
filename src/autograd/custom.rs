//! What nodes defined outside the op library need from the graph: custom
//! functions (the bindings' `autograd.Function`) returning their inputs or
//! modifying them in place, and two helper nodes, `UndefinedGradBackward`
//! (passes undefined gradients upstream, for gradcheck) and `DelayedError`
//! (fails when differentiated, for `once_differentiable`).

use super::{derivatives, inplace, no_grad, Edge, Recorder};
use crate::{Error, Result, Tensor};

/// Announces a node made outside the op library (anomaly mode records its
/// forward stack).
pub fn register_custom_node(node: &std::sync::Arc<dyn super::Node>) {
    super::on_node_created(node);
}

/// Makes `edge` the history of `t`, which a custom function modified in
/// place (`ctx.mark_dirty`). Refuses leaves that require grad and views
/// of them, as in-place ops do; a view's base is rebased through
/// `CopySlices`.
pub fn rebase_dirty(t: &Tensor, edge: Edge) -> Result<()> {
    inplace::check_leaf(t)?;
    inplace::rebase_history(t, Some(edge));
    Ok(())
}

/// A new view of `t` with the same layout, made without recording: what a
/// custom function returns in place of an input it hands back unchanged,
/// so that the output can get its own `grad_fn`. In-place writes to it are
/// refused while its base requires grad.
pub fn output_alias(t: &Tensor) -> Tensor {
    let _g = no_grad();
    t.view_with_layout(t.layout().clone())
}

derivatives! {
    table FORMULAS("autograd helper nodes");

    /// An alias of `t` whose backward passes an undefined gradient upstream,
    /// whatever gradient it receives (torch's `UndefinedGrad`). Only reverse
    /// mode is cut; the tangent passes through.
    pub fn undefined_grad(t: &Tensor) -> Result<Tensor> {
        record "UndefinedGradBackward", [t];
        compute => out = output_alias(t);
        save nothing
        backward |ctx, g| Ok(vec![None]);
        forward formula(|t| t.map1(|t| Ok(t.clone())));
        batched broadcast;
    }

    /// Aliases of `present` whose backward raises `msg`: only reverse mode
    /// raises; tangents pass through.
    fn delayed_error_aliases(present: &[Tensor], msg: String) -> Result<Vec<Tensor>> {
        record "DelayedError", each [present];
        compute => outs = present.iter().map(output_alias).collect();
        save nothing
        backward |ctx, g| Err(Error::runtime(msg.clone()));
        forward formula(|t| Ok((0..t.len()).map(|i| t.get(i).cloned()).collect()));
        batched broadcast;
    }
}

/// Aliases of `tensors` whose backward raises `msg` (torch's
/// `DelayedError`): marks results that must not be differentiated again.
/// `None` entries stay `None`; when nothing would be recorded (no input
/// requires grad under grad mode and none has a tangent) the tensors are
/// returned as they are.
pub fn delayed_error(msg: &str, tensors: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
    let present: Vec<Tensor> = tensors.iter().flatten().cloned().collect();
    if !Recorder::would_record(&present.iter().collect::<Vec<_>>()) {
        return Ok(tensors.to_vec());
    }
    let mut it = delayed_error_aliases(&present, msg.to_string())?.into_iter();
    Ok(tensors
        .iter()
        .map(|t| t.as_ref().and_then(|_| it.next()))
        .collect())
}
