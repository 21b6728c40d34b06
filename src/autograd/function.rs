//! Recording ops: [`Recorder`] turns a forward computation into a graph
//! node ([`FnNode`]) whose backward is a closure over saved tensors.
//!
//! Ops do not use it by hand: each is a row of a derivative table
//! (`table.rs`), whose generated method records like this:
//!
//! ```ignore
//! pub fn exp(&self) -> Result<Tensor> {
//!     let rec = Recorder::new("ExpBackward0", &[self]);
//!     let out = /* the forward kernel */;
//!     rec.finish(&[&out], |s| s.save_output("result", &out, 0), |ctx, g| {
//!         Ok(vec![Some(g[0].mul(&ctx.saved(0)?)?)])
//!     })?;
//!     Ok(out)
//! }
//! ```
//!
//! While a recorder is active, grad mode is off on this thread, so ops the
//! forward calls internally do not record nodes of their own. Backward
//! closures use ordinary (differentiable) ops, so running them with grad
//! mode on (`create_graph=True`) records the graph of the gradient itself.

use super::forward::{self, FwState, JvpFn, Tangents};
use super::inplace::OverlappingViewGrad;
use super::node::{Grads, Node, NodeCore, SavedValue, TensorMeta};
use super::saved::SavedTensor;
use super::{gradient_edge, set_grad_fn, Edge, GradModeGuard};
use crate::{Error, Result, Tensor};
use smallvec::SmallVec;
use std::any::Any;
use std::sync::{Arc, Weak};

type BackwardFn = dyn Fn(&BackwardCtx, &[Tensor]) -> Result<Grads> + Send + Sync;

/// A graph node whose backward is a closure (every built-in op's node).
pub struct FnNode {
    name: &'static str,
    core: NodeCore,
    saved: Vec<(&'static str, Option<SavedTensor>)>,
    attrs: Vec<(&'static str, SavedValue)>,
    backward: Option<Box<BackwardFn>>,
    batched: bool,
    /// Inputs (by their index in the recorder) that torch takes as a
    /// Scalar: the node has no edge for them (see
    /// [`Recorder::scalar_input`]); sorted.
    scalars: SmallVec<[usize; 2]>,
}

impl FnNode {
    /// The node's edge index of recorder input `i` (`None` for a Scalar).
    fn edge_index(&self, i: usize) -> Option<usize> {
        if self.scalars.contains(&i) {
            return None;
        }
        Some(i - self.scalars.iter().filter(|&&s| s < i).count())
    }
}

/// What a backward closure can see: saved tensors and which inputs need
/// gradients.
pub struct BackwardCtx<'a> {
    node: &'a FnNode,
}

impl BackwardCtx<'_> {
    /// The `i`-th saved tensor (in the order it was saved), checked for
    /// in-place modification.
    pub fn saved(&self, i: usize) -> Result<Tensor> {
        match &self.node.saved[i].1 {
            Some(s) => s.unpack(),
            None => Err(Error::runtime(format!(
                "{}: saved value {} is undefined",
                self.node.name, self.node.saved[i].0
            ))),
        }
    }
    /// The `i`-th saved tensor, or `None` when an optional one was not
    /// given.
    pub fn saved_opt(&self, i: usize) -> Result<Option<Tensor>> {
        self.node.saved[i]
            .1
            .as_ref()
            .map(|s| s.unpack())
            .transpose()
    }
    /// Whether forward input `i` needs a gradient.
    pub fn needs(&self, i: usize) -> bool {
        self.node
            .edge_index(i)
            .is_some_and(|e| self.node.core.needs_input_grad(e))
    }
    /// Shape and dtype of forward input `i`.
    pub fn input_meta(&self, i: usize) -> Option<&TensorMeta> {
        self.node
            .edge_index(i)
            .and_then(|e| self.node.core.input_meta()[e].as_ref())
    }
    /// In a batched backward (only for nodes recorded with
    /// [`Recorder::batched`]): the size of the extra leading dim of `g` and
    /// of the returned gradients.
    pub fn batch(&self) -> Option<usize> {
        super::current_batch()
    }
    /// Input dim `d` as counted in `g`: dims from the front move past a
    /// batch dim, dims from the back (negative) stay.
    pub fn dim(&self, d: isize) -> isize {
        d + isize::from(d >= 0 && self.batch().is_some())
    }
    /// An input shape as the gradient for it is shaped: with the batch dim
    /// in front in a batched backward.
    pub fn shape(&self, shape: &[usize]) -> Vec<usize> {
        self.batch()
            .into_iter()
            .chain(shape.iter().copied())
            .collect()
    }
}

impl Node for FnNode {
    fn name(&self) -> String {
        self.name.to_string()
    }
    fn static_name(&self) -> Option<&'static str> {
        Some(self.name)
    }
    fn core(&self) -> &NodeCore {
        &self.core
    }
    fn apply(&self, grads: Grads) -> Result<Grads> {
        let Some(f) = &self.backward else {
            return Err(super::freed_graph_error());
        };
        let g = self.core.materialize(grads)?;
        let out = f(&BackwardCtx { node: self }, &g)?;
        if self.scalars.is_empty() {
            return Ok(out);
        }
        Ok(out
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !self.scalars.contains(i))
            .map(|(_, g)| g)
            .collect())
    }
    fn release_variables(&self) {
        for (_, s) in &self.saved {
            if let Some(s) = s {
                s.release();
            }
        }
    }
    fn saved_values(&self) -> Vec<(String, SavedValue)> {
        // A Scalar is saved twice (as a tensor for backward, as a number
        // to show): the number is what `_saved_<name>` gives.
        let mut v: Vec<(String, SavedValue)> = self
            .saved
            .iter()
            .filter(|(n, _)| !self.attrs.iter().any(|(a, _)| a == n))
            .map(|(n, s)| (n.to_string(), saved_value_of(s)))
            .collect();
        v.extend(self.attrs.iter().map(|(n, a)| (n.to_string(), a.clone())));
        v
    }
    fn saved_value(&self, name: &str) -> Option<SavedValue> {
        if let Some((_, a)) = self.attrs.iter().find(|(n, _)| *n == name) {
            return Some(a.clone());
        }
        self.saved
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| saved_value_of(s))
    }
    fn supports_batched(&self) -> bool {
        self.batched
    }
    fn needs_caller_thread(&self) -> bool {
        self.saved
            .iter()
            .any(|(_, s)| s.as_ref().is_some_and(SavedTensor::needs_caller_thread))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A saved tensor as `_saved_<name>` shows it: unpacked (the raw value if
/// unpacking fails), or `None` once freed.
fn saved_value_of(s: &Option<SavedTensor>) -> SavedValue {
    match s {
        Some(s) if s.is_released() => SavedValue::Tensor(None),
        Some(s) => SavedValue::Tensor(s.unpack().ok().or_else(|| s.raw())),
        None => SavedValue::None,
    }
}

impl FnNode {
    /// The saved tensor called `name`, as stored.
    pub fn saved_tensor(&self, name: &str) -> Option<&SavedTensor> {
        if self.attrs.iter().any(|(n, _)| *n == name) {
            return None;
        }
        self.saved
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, s)| s.as_ref())
    }
}

impl Drop for FnNode {
    fn drop(&mut self) {
        let saved = std::mem::take(&mut self.saved);
        if !saved.is_empty() {
            super::node::defer_drop(Box::new(saved));
        }
        if let Some(f) = self.backward.take() {
            super::node::defer_drop(Box::new(f));
        }
    }
}

/// Collects what an op saves for backward.
pub struct Saver<'a> {
    name: &'static str,
    node: &'a Weak<FnNode>,
    saved: Vec<(&'static str, Option<SavedTensor>)>,
    attrs: Vec<(&'static str, SavedValue)>,
    error: Option<Error>,
}

impl Saver<'_> {
    /// Saves a forward input (or any tensor the op did not produce).
    pub fn save(&mut self, name: &'static str, t: &Tensor) {
        match SavedTensor::input(t) {
            Ok(s) => self.saved.push((name, Some(s))),
            Err(e) => {
                self.error.get_or_insert(e);
                self.saved.push((name, None));
            }
        }
    }
    /// Saves a Python number an op took as a Scalar (see
    /// [`Recorder::scalar_input`]): backward reads it as a tensor like any
    /// saved input, `_saved_<name>` shows the number, as torch's does.
    pub fn save_scalar(&mut self, name: &'static str, t: &Tensor) {
        let shown = t.item().map_or(SavedValue::None, SavedValue::from);
        self.attrs.push((name, shown));
        self.save(name, t);
    }
    /// Saves an optional tensor (`saved_opt` returns `None` for it).
    pub fn save_opt(&mut self, name: &'static str, t: Option<&Tensor>) {
        match t {
            Some(t) => self.save(name, t),
            None => self.saved.push((name, None)),
        }
    }
    /// Saves output `output_nr` of this op.
    pub fn save_output(&mut self, name: &'static str, t: &Tensor, output_nr: usize) {
        let weak: Weak<dyn Node> = self.node.clone();
        match SavedTensor::output(t, output_nr, weak, self.name) {
            Ok(s) => self.saved.push((name, Some(s))),
            Err(e) => {
                self.error.get_or_insert(e);
                self.saved.push((name, None));
            }
        }
    }
    /// Saves output `output_nr` when `needed` (a formula that reads it only
    /// for some inputs' gradients), else an empty slot in its place.
    pub fn save_output_if(
        &mut self,
        needed: bool,
        name: &'static str,
        t: &Tensor,
        output_nr: usize,
    ) {
        if needed {
            self.save_output(name, t, output_nr);
        } else {
            self.save_opt(name, None);
        }
    }
    /// Records a non-tensor argument for `_saved_<name>`.
    pub fn attr(&mut self, name: &'static str, value: SavedValue) {
        self.attrs.push((name, value));
    }
}

/// Records one op's node when any input requires grad and grad mode is on,
/// and gives its outputs tangents when any input has one (forward AD).
///
/// This is also how Rust code defines a custom op: start a recorder over
/// the inputs, compute the output (ops run meanwhile record nothing of
/// their own), then [`Recorder::finish`] with what to save and the
/// backward formula. Optionally give a forward-mode formula with
/// [`Recorder::jvp`] before computing.
///
/// ```
/// use ferrograd::autograd::Recorder;
/// use ferrograd::{Result, Tensor};
///
/// /// x^3, with its derivative 3x^2 written by hand.
/// fn cube(x: &Tensor) -> Result<Tensor> {
///     let rec = Recorder::new("CubeBackward", &[x]);
///     let out = x.mul(x)?.mul(x)?;
///     rec.finish(
///         &[&out],
///         |saver| saver.save("self", x),
///         |ctx, grads| {
///             let x = ctx.saved(0)?;
///             let dx = x.mul(&x)?.mul(&Tensor::scalar(3.0))?;
///             Ok(vec![Some(grads[0].mul(&dx)?)])
///         },
///     )?;
///     Ok(out)
/// }
///
/// # fn main() -> Result<()> {
/// let x = Tensor::from_slice(&[1.0f64, 2.0], &[2])?.requires_grad_(true)?;
/// let y = cube(&x)?;
/// assert_eq!(y.grad_fn().unwrap().node.name(), "CubeBackward");
/// y.sum(None, false, None)?.backward()?;
/// assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![3.0, 12.0]);
/// # Ok(())
/// # }
/// ```
pub struct Recorder<'a> {
    name: &'static str,
    edges: Option<Vec<Option<Edge>>>,
    metas: Vec<Option<TensorMeta>>,
    input_ids: SmallVec<[usize; 4]>,
    batched: bool,
    scalars: SmallVec<[usize; 2]>,
    fw: Option<FwState>,
    jvp: Option<Box<JvpFn<'a>>>,
    jvp_batched: bool,
    jvp_align: bool,
    views: bool,
    grad_mode: bool,
    _guard: Option<GradModeGuard>,
    /// Forward AD is off while the op computes its outputs (as grad mode
    /// is), so ops it calls internally compute no tangents of their own.
    _fw_guard: Option<forward::FwGradGuard>,
}

impl<'a> Recorder<'a> {
    /// Starts recording `name` over `inputs` (optional inputs that are not
    /// tensors are simply left out by the caller). The reverse part is
    /// inactive when grad mode is off or no input requires grad; the
    /// forward part when no input has a tangent.
    pub fn new(name: &'static str, inputs: &[&Tensor]) -> Recorder<'a> {
        let grad_mode = super::is_grad_enabled();
        let fw = forward::capture_all(inputs);
        if !Self::records_node(grad_mode, inputs) {
            return Recorder {
                name,
                edges: None,
                metas: Vec::new(),
                input_ids: SmallVec::new(),
                batched: false,
                scalars: SmallVec::new(),
                jvp: None,
                jvp_batched: false,
                jvp_align: false,
                views: false,
                grad_mode,
                _guard: fw.as_ref().map(|_| GradModeGuard::new(false)),
                _fw_guard: fw.as_ref().map(|_| forward::FwGradGuard::new(false)),
                fw,
            };
        }
        let edges = inputs.iter().map(|t| gradient_edge(t)).collect();
        let metas = inputs.iter().map(|t| Some(TensorMeta::of(t))).collect();
        let fw_guard = fw.as_ref().map(|_| forward::FwGradGuard::new(false));
        Recorder {
            name,
            edges: Some(edges),
            metas,
            input_ids: inputs.iter().map(|t| t.id()).collect(),
            batched: false,
            scalars: SmallVec::new(),
            fw,
            jvp: None,
            jvp_batched: false,
            jvp_align: false,
            views: false,
            grad_mode,
            _guard: Some(GradModeGuard::new(false)),
            _fw_guard: fw_guard,
        }
    }

    /// Whether a node is recorded over `inputs` under grad mode `grad_mode`.
    fn records_node(grad_mode: bool, inputs: &[&Tensor]) -> bool {
        grad_mode && inputs.iter().any(|t| t.requires_grad())
    }

    /// Whether a recorder over `inputs` would be active (see
    /// [`Recorder::active`]), without starting one.
    pub fn would_record(inputs: &[&Tensor]) -> bool {
        Self::records_node(super::is_grad_enabled(), inputs) || forward::any_tangent(inputs)
    }

    /// The op's forward formula: maps the input tangents (in the order of
    /// the inputs given to [`Recorder::new`]) to one tangent per output,
    /// `None` for zero. Formulas use ordinary ops, so tangents are
    /// themselves differentiable. Run by `finish` when an input has a
    /// tangent. In a batched level it sees one row of tangents at a time
    /// unless declared with [`Recorder::jvp_batched`].
    pub fn jvp(mut self, f: impl Fn(&Tangents) -> Result<Vec<Option<Tensor>>> + 'a) -> Self {
        if self.fw.is_some() {
            self.jvp = Some(Box::new(f));
        }
        self
    }

    /// Like [`Recorder::jvp`] for a formula that handles tangents with an
    /// extra leading batch dim ([`Tangents::batch`]); elementwise formulas
    /// that broadcast do by themselves.
    pub fn jvp_batched(
        mut self,
        f: impl Fn(&Tangents) -> Result<Vec<Option<Tensor>>> + 'a,
    ) -> Self {
        self.jvp_batched = true;
        self.jvp(f)
    }

    /// [`Recorder::jvp_batched`] when `batched` holds, else
    /// [`Recorder::jvp`]: for a formula that handles a batch of tangents
    /// only for some arguments (e.g. inputs of at least one dim).
    pub fn jvp_batched_if(
        self,
        batched: bool,
        f: impl Fn(&Tangents) -> Result<Vec<Option<Tensor>>> + 'a,
    ) -> Self {
        if batched {
            self.jvp_batched(f)
        } else {
            self.jvp(f)
        }
    }

    /// [`Recorder::jvp_batched`] for a broadcasting elementwise op: in a
    /// batched level, input tangents of lower rank get singleton dims after
    /// the batch dim, so that all line up on the output's trailing dims.
    pub fn jvp_elementwise(
        mut self,
        f: impl Fn(&Tangents) -> Result<Vec<Option<Tensor>>> + 'a,
    ) -> Self {
        self.jvp_align = true;
        self.jvp_batched(f)
    }

    /// Whether forward AD is computing tangents for this op.
    pub fn forward_active(&self) -> bool {
        self.fw.is_some()
    }

    /// Declares that the backward closure handles a batched backward: with
    /// [`BackwardCtx::batch`] set, every `g` has an extra leading batch dim
    /// and so must each returned gradient (broadcasting elementwise
    /// formulas do this by themselves). Other nodes are run once per row.
    pub fn batched(mut self) -> Recorder<'a> {
        self.batched = true;
        self
    }

    /// Declares the op a view op: outputs that are views of an input stay
    /// differentiable views once recorded (an in-place op on one rebases
    /// its base's history), though they were made with grad mode off.
    /// `overlapping_grad` is how the view layer sums the gradients of a
    /// view whose elements overlap onto its base, which a view whose base's
    /// history moved on needs (see [`OverlappingViewGrad`]).
    pub fn views(mut self, overlapping_grad: OverlappingViewGrad) -> Recorder<'a> {
        super::inplace::set_overlapping_view_grad(overlapping_grad);
        self.views = true;
        self
    }

    /// Marks input `i` as what torch's signature takes as a Scalar (a
    /// Python number, as in `pow(Tensor, Scalar)`): the node gets no edge
    /// for it, so `next_functions` lists only the tensor arguments, as
    /// torch's does. Formulas still see inputs in the order given to
    /// [`Recorder::new`] and return one gradient per input; the Scalar's
    /// is dropped.
    pub fn scalar_input(mut self, i: usize) -> Recorder<'a> {
        if !self.scalars.contains(&i) {
            self.scalars.push(i);
            self.scalars.sort_unstable();
        }
        self
    }

    /// Like [`Recorder::new`] with optional inputs (`None` gets no edge
    /// and no tangent).
    pub fn new_opt(name: &'static str, inputs: &[Option<&Tensor>]) -> Recorder<'a> {
        let present: SmallVec<[&Tensor; 4]> = inputs.iter().flatten().copied().collect();
        // Captured before `new` switches forward AD off for the kernel.
        let fw = forward::capture(inputs);
        let mut rec = Recorder::new(name, &present);
        if rec.fw.is_some() {
            rec.fw = fw;
        }
        if let Some(edges) = rec.edges.take() {
            let mut it_e = edges.into_iter();
            let mut it_m = std::mem::take(&mut rec.metas).into_iter();
            let mut e2 = Vec::new();
            let mut m2 = Vec::new();
            for t in inputs {
                if t.is_some() {
                    e2.push(it_e.next().flatten());
                    m2.push(it_m.next().flatten());
                } else {
                    e2.push(None);
                    m2.push(None);
                }
            }
            rec.edges = Some(e2);
            rec.metas = m2;
        }
        rec
    }

    /// Whether `finish` has work to do: a node will be recorded or output
    /// tangents computed.
    pub fn active(&self) -> bool {
        self.edges.is_some() || self.fw.is_some()
    }

    /// Whether a node will be recorded.
    pub fn recording(&self) -> bool {
        self.edges.is_some()
    }

    /// Which forward inputs need a gradient (all false when inactive).
    pub fn needs_all(&self) -> SmallVec<[bool; 4]> {
        let n = self.edges.as_ref().map_or(0, Vec::len);
        (0..n).map(|i| self.needs(i)).collect()
    }

    /// Whether forward input `i` needs a gradient (false when inactive).
    pub fn needs(&self, i: usize) -> bool {
        self.edges
            .as_ref()
            .is_some_and(|e| e.get(i).is_some_and(|e| e.is_some()))
    }

    /// Records the node: `save` stores what backward needs, `backward` maps
    /// the output gradients (zeros for unused outputs) to one gradient per
    /// input (`None` where an input needs none; gradients of broadcast
    /// shape are summed down to the input's shape by the engine). Floating
    /// outputs get the node as `grad_fn`; others are not differentiable.
    pub fn finish<S, B>(mut self, outputs: &[&Tensor], save: S, backward: B) -> Result<()>
    where
        S: FnOnce(&mut Saver),
        B: Fn(&BackwardCtx, &[Tensor]) -> Result<Grads> + Send + Sync + 'static,
    {
        drop(self._guard.take());
        drop(self._fw_guard.take());
        let Some(edges) = self.edges.take() else {
            return self.finish_forward(outputs, None);
        };
        let name = self.name;
        let mut metas = std::mem::take(&mut self.metas);
        let mut edges = edges;
        let scalars = std::mem::take(&mut self.scalars);
        for &i in scalars.iter().rev() {
            edges.remove(i);
            metas.remove(i);
        }
        let output_meta = outputs.iter().map(|t| TensorMeta::of(t)).collect();
        let mut error = None;
        let node = Arc::new_cyclic(|weak: &Weak<FnNode>| {
            let mut s = Saver {
                name,
                node: weak,
                saved: Vec::new(),
                attrs: Vec::new(),
                error: None,
            };
            save(&mut s);
            error = s.error;
            FnNode {
                name,
                core: NodeCore::new(edges, metas, output_meta),
                saved: s.saved,
                attrs: s.attrs,
                backward: Some(Box::new(backward)),
                batched: self.batched,
                scalars,
            }
        });
        if let Some(e) = error {
            return Err(e);
        }
        let fn_node = node.clone();
        let node: Arc<dyn Node> = node;
        super::on_node_created(&node);
        for (i, out) in outputs.iter().enumerate() {
            // An op that hands back one of its inputs unchanged records
            // nothing on it.
            if out.dtype().is_differentiable() && !self.input_ids.contains(&out.id()) {
                set_grad_fn(out, Some(Edge::new(node.clone(), i)));
            }
            if self.views && out.is_view() {
                out.autograd().mark_view(out.version());
            }
        }
        self.finish_forward(outputs, Some(&fn_node))
    }

    /// The forward-AD part of `finish`: runs the formula after the outputs
    /// have their history (so tangents built from outputs are
    /// differentiable) and shares output tangents with saved copies of the
    /// outputs.
    fn finish_forward(mut self, outputs: &[&Tensor], node: Option<&FnNode>) -> Result<()> {
        let Some(state) = self.fw.take() else {
            return Ok(());
        };
        forward::apply(
            self.name,
            state,
            outputs,
            self.jvp.as_deref(),
            self.jvp_batched,
            self.jvp_align,
            self.grad_mode,
        )?;
        for s in node
            .iter()
            .flat_map(|n| n.saved.iter())
            .flat_map(|(_, s)| s)
        {
            if let (Some(nr), Some(raw)) = (s.output_nr(), s.raw()) {
                forward::share_tangent(outputs[nr], &raw);
            }
        }
        Ok(())
    }

    /// Records a node for an op with one output and a backward that needs
    /// nothing saved beyond what the closure captures.
    pub fn finish_simple<B>(self, out: &Tensor, backward: B) -> Result<()>
    where
        B: Fn(&BackwardCtx, &[Tensor]) -> Result<Grads> + Send + Sync + 'static,
    {
        self.finish(&[out], |_| {}, backward)
    }
}
