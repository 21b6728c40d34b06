//! In-place ops and views under autograd.
//!
//! An in-place op that needs a gradient is recorded as its out-of-place
//! form applied to a snapshot of the tensor's old value (which carries the
//! old history); the result is then written into the tensor and becomes
//! its history. When the tensor is a view, its base's history is rebased
//! instead through a [`CopySlices`] node, and the view (and every other
//! view of that base) gets a fresh `AsStridedBackward0` edge onto the new
//! history the next time its `grad_fn` is asked for.

use super::forward;
use super::node::{Grads, Node, NodeCore, TensorMeta};
use super::{grad_fn_edge, gradient_edge, is_grad_enabled, set_grad_fn, Edge};
use crate::{Error, Result, Tensor};
use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, OnceLock};

thread_local! {
    static WRITING_RESULT: Cell<bool> = const { Cell::new(false) };
}

/// `increment_version(tensor)`: marks the tensor as modified in place.
pub fn increment_version(t: &Tensor) {
    t.bump_version();
}

/// Checks that `dst` may be written in place under the current modes;
/// called by every in-place op before its kernel writes ([`inplace`] does
/// for the ops that go through it).
pub(crate) fn check_write(dst: &Tensor) -> Result<()> {
    if dst.is_inference() && !super::is_inference_mode_enabled() {
        return Err(Error::runtime(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.",
        ));
    }
    if WRITING_RESULT.with(|c| c.get()) {
        return Ok(());
    }
    super::mutation::before_write(dst);
    // A kernel that overwrites a dual tensor without a formula (fill_,
    // random fills) leaves values that do not depend on any tangent.
    if forward::any_tangent(&[dst]) {
        forward::set_inplace_tangent(dst, None)?;
    }
    if !is_grad_enabled() {
        return Ok(());
    }
    check_leaf(dst)?;
    if dst.requires_grad() {
        return Err(Error::runtime(format!(
            "this in-place operation on a tensor that requires grad (shape {:?}) has no derivative formula; use the out-of-place form",
            dst.shape()
        )));
    }
    Ok(())
}

pub(crate) fn check_leaf(dst: &Tensor) -> Result<()> {
    // Read without making autograd state: most destinations never had any.
    let leaf_flag = |t: &Tensor| t.autograd_if_made().is_some_and(|m| m.requires_grad_flag());
    if leaf_flag(dst) && grad_fn_edge(dst).is_none() {
        return Err(Error::runtime(
            "a leaf Variable that requires grad is being used in an in-place operation.",
        ));
    }
    if let Some(base) = dst.base() {
        if leaf_flag(base) && grad_fn_edge(base).is_none() {
            return Err(Error::runtime(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            ));
        }
        if base.requires_grad() && !super::view_state(dst).1 {
            return Err(Error::runtime(
                "A view was created in no_grad mode and is being modified inplace with grad mode enabled. This view is the output of a function that returns multiple views or was created in no_grad mode; such views cannot be modified inplace. You should replace the inplace operation by an out-of-place one.",
            ));
        }
    }
    Ok(())
}

/// Runs an in-place op under autograd. Returns `Ok(false)` when no
/// gradient is involved (the caller then runs its fast kernel); otherwise
/// computes `out_of_place(old_value)` with recording, writes it into
/// `dst` and rebases `dst`'s history (see the module docs), returning
/// `Ok(true)`. `op` names the op in errors.
pub fn inplace(
    op: &str,
    dst: &Tensor,
    others: &[&Tensor],
    out_of_place: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<bool> {
    let grad =
        is_grad_enabled() && (dst.requires_grad() || others.iter().any(|o| o.requires_grad()));
    let dual = forward::any_tangent(&[dst]) || forward::any_tangent(others);
    if !grad && !dual {
        check_write(dst)?;
        return Ok(false);
    }
    if grad {
        if dst.is_inference() && !super::is_inference_mode_enabled() {
            return check_write(dst).map(|_| false);
        }
        check_leaf(dst)?;
        if let Some(base) = dst.base() {
            if base.dtype() != dst.dtype() {
                return Err(Error::runtime(format!(
                    "{op}: an in-place change to a {} view of a {} tensor (its real or imaginary part, or view_as_real/view_as_complex) is not differentiable; build a new tensor instead (e.g. with complex(real, imag))",
                    dst.dtype(),
                    base.dtype()
                )));
            }
        }
    }
    crate::tensor::check_no_overlap(dst)?;
    super::mutation::before_write(dst);
    let old = {
        let _g = super::no_grad();
        let _fw = forward::FwGradGuard::new(false);
        dst.copy()
    };
    if let Some(t) = forward::fw_grad(dst) {
        let t = {
            let _fw = forward::FwGradGuard::new(false);
            t.copy()
        };
        forward::set_fw_grad(&old, &t)?;
    }
    if grad {
        if let Some(e) = gradient_edge(dst) {
            set_grad_fn(&old, Some(e));
        }
    }
    let result = out_of_place(&old)?;
    if result.shape() != dst.shape() {
        return Err(Error::runtime(format!(
            "output with shape {:?} doesn't match the broadcast shape {:?} (in {op})",
            dst.shape(),
            result.shape()
        )));
    }
    crate::tensor::check_inplace_dtype(op, dst, result.dtype())?;
    {
        let _g = super::no_grad();
        let _fw = forward::FwGradGuard::new(false);
        WRITING_RESULT.with(|c| c.set(true));
        let r = dst.copy_(&result);
        WRITING_RESULT.with(|c| c.set(false));
        r?;
    }
    if grad {
        rebase_history(dst, grad_fn_edge(&result));
    }
    if dual {
        forward::set_inplace_tangent(dst, forward::fw_grad(&result))?;
    }
    Ok(true)
}

/// Makes `edge` the history of `dst` after an in-place write.
pub(crate) fn rebase_history(dst: &Tensor, edge: Option<Edge>) {
    let Some(base) = dst.base().cloned() else {
        set_grad_fn(dst, edge);
        return;
    };
    let Some(edge) = edge else { return };
    // Note [Nodes applied inside other nodes]: CopySlices runs the op's
    // node (`func`) inside its own apply, but `func` can also be reached
    // directly: through the saved result it hands to a double backward, or
    // through a tangent computed from that result. One backward call may
    // then run `func` twice, so neither visit may free what the other
    // needs; the engine frees both nodes when the call ends.
    edge.node.core().set_defer_release();
    let node: Arc<dyn Node> = Arc::new(CopySlices::new(&base, dst, edge));
    node.core().set_defer_release();
    super::on_node_created(&node);
    set_grad_fn(&base, Some(Edge::new(node, 0)));
    regenerate_view_grad_fn(dst);
}

/// [`regenerate_view_grad_fn`] for a view of another dtype: a real view
/// of a complex base goes through the base's real pairs
/// (`view_as_real`), then the strided view; a complex view of a real base
/// is the strided view of its real pairs, then `view_as_complex`.
fn regenerate_reinterpreting_view(base: &Tensor, view: &Tensor) {
    let _g = super::grad_mode::GradModeGuard::new(true);
    let edge = if base.dtype().is_complex() {
        let Ok(pairs) = base.view_as_real() else {
            return;
        };
        strided_edge(&pairs, view)
    } else {
        let pairs = view.real_pairs();
        let Some(e) = strided_edge(base, &pairs) else {
            set_grad_fn(view, None);
            return;
        };
        set_grad_fn(&pairs, Some(e));
        pairs.view_as_complex().ok().and_then(|c| gradient_edge(&c))
    };
    set_grad_fn(view, edge);
}

/// An `AsStridedBackward0` edge taking `view`'s geometry out of `base`
/// (same dtype), onto `base`'s current history.
fn strided_edge(base: &Tensor, view: &Tensor) -> Option<Edge> {
    let edge = gradient_edge(base)?;
    let node: Arc<dyn Node> = Arc::new(AsStridedBackward {
        core: NodeCore::new(
            vec![Some(edge)],
            vec![Some(TensorMeta::of(base))],
            vec![TensorMeta::of(view)],
        ),
        base: Geometry::of(base),
        view: Geometry::of(view),
        storage_elems: base.storage().nbytes() / base.dtype().itemsize(),
    });
    Some(Edge::new(node, 0))
}

/// Shape, strides and storage offset of a tensor.
#[derive(Clone, Debug)]
struct Geometry {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl Geometry {
    fn of(t: &Tensor) -> Geometry {
        Geometry {
            shape: t.shape().to_vec(),
            strides: t.strides().iter().map(|&s| s as isize).collect(),
            offset: t.offset(),
        }
    }
    fn on(&self, flat: &Tensor) -> Result<Tensor> {
        flat.as_strided(&self.shape, &self.strides, Some(self.offset))
    }
}

/// The gradient of a base whose view was modified in place by `func`.
pub struct CopySlices {
    core: NodeCore,
    base: Geometry,
    view: Geometry,
    storage_elems: usize,
    func: Arc<dyn Node>,
    /// Which output of `func` is the view's new value.
    output_nr: usize,
}

impl CopySlices {
    fn new(base: &Tensor, view: &Tensor, func: Edge) -> CopySlices {
        let Edge {
            node: func,
            input_nr: output_nr,
        } = func;
        let fc = func.core();
        let mut edges = vec![gradient_edge(base)];
        let mut metas = vec![Some(TensorMeta::of(base))];
        edges.extend(fc.next_edges().iter().skip(1).cloned());
        metas.extend(fc.input_meta().iter().skip(1).cloned());
        CopySlices {
            core: NodeCore::new(edges, metas, vec![TensorMeta::of(base)]),
            base: Geometry::of(base),
            view: Geometry::of(view),
            storage_elems: base.storage().nbytes() / base.dtype().itemsize(),
            func,
            output_nr,
        }
    }
}

impl Node for CopySlices {
    fn name(&self) -> String {
        "CopySlices".to_string()
    }
    fn static_name(&self) -> Option<&'static str> {
        Some("CopySlices")
    }
    fn core(&self) -> &NodeCore {
        &self.core
    }
    fn apply(&self, grads: Grads) -> Result<Grads> {
        let g = self.core.materialize(grads)?.swap_remove(0);
        let flat = Tensor::try_zeros(&[self.storage_elems], g.dtype())?;
        let result = self.base.on(&flat)?;
        result.copy_(&g)?;
        let grad_slice = self.view.on(&flat)?;
        // Only the output written into the view gets a gradient here.
        let mut func_grads: Grads = vec![None; self.func.core().num_inputs()];
        func_grads[self.output_nr] = Some(grad_slice.copy());
        let fg = self.func.apply(func_grads)?;
        let fg = super::engine::validate_for(self.func.as_ref(), fg)?;
        match fg.first().cloned().flatten() {
            Some(g0) => grad_slice.copy_(&g0)?,
            None => grad_slice.zero_()?,
        }
        let mut out = vec![Some(result)];
        out.extend(fg.into_iter().skip(1));
        Ok(out)
    }
    fn release_variables(&self) {
        self.func.release_variables();
    }
    fn needs_caller_thread(&self) -> bool {
        self.func.needs_caller_thread()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The gradient `g` of a view (`size`, `stride`, `offset` into its
/// storage) whose elements overlap, with respect to a base laid out like
/// `base_like`: each aliased element adds its gradient. A function of the
/// view layer (it is differentiable, for double backward), given to the
/// recorder by every view op ([`Recorder::views`](super::Recorder::views)).
pub type OverlappingViewGrad = fn(
    base_like: &Tensor,
    size: &[usize],
    stride: &[isize],
    offset: usize,
    g: &Tensor,
) -> Result<Tensor>;

static OVERLAPPING_VIEW_GRAD: OnceLock<OverlappingViewGrad> = OnceLock::new();

pub(super) fn set_overlapping_view_grad(f: OverlappingViewGrad) {
    OVERLAPPING_VIEW_GRAD.get_or_init(|| f);
}

/// The gradient of a view with respect to its base, through the view's
/// geometry (used for views whose base's history changed).
struct AsStridedBackward {
    core: NodeCore,
    base: Geometry,
    view: Geometry,
    storage_elems: usize,
}

impl Node for AsStridedBackward {
    fn name(&self) -> String {
        "AsStridedBackward0".to_string()
    }
    fn static_name(&self) -> Option<&'static str> {
        Some("AsStridedBackward0")
    }
    fn core(&self) -> &NodeCore {
        &self.core
    }
    fn apply(&self, grads: Grads) -> Result<Grads> {
        let g = self.core.materialize(grads)?.swap_remove(0);
        let dtype = self.core.input_meta()[0]
            .as_ref()
            .map_or(g.dtype(), |m| m.dtype);
        let flat = Tensor::try_zeros(&[self.storage_elems], dtype)?;
        let slice = self.view.on(&flat)?;
        if !slice.layout().is_non_overlapping() {
            // Aliased elements of the view each add their gradient.
            let base_like = self.base.on(&flat)?;
            let overlapping_grad = OVERLAPPING_VIEW_GRAD.get().ok_or_else(|| {
                Error::runtime(
                    "no view op has recorded a differentiable view of overlapping elements",
                )
            })?;
            let g = overlapping_grad(
                &base_like,
                &self.view.shape,
                &self.view.strides,
                self.view.offset,
                &g,
            )?;
            return Ok(vec![Some(g)]);
        }
        slice.copy_(&g)?;
        Ok(vec![Some(self.base.on(&flat)?)])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Gives a view a fresh `AsStridedBackward0` edge onto its base's current
/// history.
pub(crate) fn regenerate_view_grad_fn(view: &Tensor) {
    let Some(base) = view.base().cloned() else {
        return;
    };
    if base.dtype() != view.dtype() {
        regenerate_reinterpreting_view(&base, view);
        return;
    }
    let edge = gradient_edge(&base);
    let Some(edge) = edge else {
        set_grad_fn(view, None);
        return;
    };
    let node: Arc<dyn Node> = Arc::new(AsStridedBackward {
        core: NodeCore::new(
            vec![Some(edge)],
            vec![Some(TensorMeta::of(&base))],
            vec![TensorMeta::of(view)],
        ),
        base: Geometry::of(&base),
        view: Geometry::of(view),
        storage_elems: base.storage().nbytes() / base.dtype().itemsize(),
    });
    set_grad_fn(view, Some(Edge::new(node, 0)));
}
