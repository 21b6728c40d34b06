//! Autograd bindings: `backward`/`grad` (the GIL is released for the whole
//! engine run), graph nodes as Python objects, hooks that call Python, grad
//! and grad modes (the autograd methods of `Tensor` are in
//! `tensor_autograd.rs`).
//!
//! Hooks written in Python are wrapped in Rust closures that re-attach to
//! the interpreter only around the Python call; the engine runs nodes with
//! such hooks on the thread that called backward (see
//! `Node::needs_caller_thread`), never on a pool worker. A Python exception
//! raised in a hook travels through the engine as `Error::External` and is
//! re-raised unchanged.

use crate::errors::{detached, from_py, IntoPyResult};
use crate::tensor::{wrap_any, PyTensor, TensorOut};
use ferrograd::autograd::{
    self, AccumulateGrad, Edge, EngineOptions, GradInput, Grads, Node, SavedValue,
};
use ferrograd::{Result, Tensor};
use pyo3::exceptions::{PyAttributeError, PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// A backward graph node (`grad_fn`); an instance of
/// `ferrograd.autograd.graph.Node`.
#[pyclass(name = "_Node", module = "ferrograd._core", frozen, weakref, subclass)]
pub struct PyNode {
    inner: NodeRef,
    /// This object's address once it is its node's registered object
    /// (plain nodes only; see [`node_object`]).
    me: AtomicPtr<ffi::PyObject>,
}

impl Drop for PyNode {
    fn drop(&mut self) {
        let me = *self.me.get_mut();
        if let (false, NodeRef::Strong(n)) = (me.is_null(), &self.inner) {
            n.core().binding_slot().clear_object(me.cast());
        }
    }
}

/// How a Python node object refers to its graph node: a plain node object
/// owns it; a custom Function's context (which the node itself owns) only
/// refers to it weakly, set once the node exists.
pub enum NodeRef {
    Strong(Arc<dyn Node>),
    Weak(OnceLock<Weak<dyn Node>>),
}

impl PyNode {
    /// The node object for a context whose node is made later.
    pub fn pending() -> PyNode {
        PyNode {
            inner: NodeRef::Weak(OnceLock::new()),
            me: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Links a context to its node.
    pub fn link(&self, node: &Arc<dyn Node>) {
        if let NodeRef::Weak(w) = &self.inner {
            let _ = w.set(Arc::downgrade(node));
        }
    }

    /// The graph node, or torch's error when it no longer (or not yet)
    /// exists.
    pub fn node(&self) -> PyResult<Arc<dyn Node>> {
        match &self.inner {
            NodeRef::Strong(n) => Ok(n.clone()),
            NodeRef::Weak(w) => w.get().and_then(Weak::upgrade).ok_or_else(|| {
                PyRuntimeError::new_err(
                    "this custom Function's graph node does not exist: it is made when the Function is applied to inputs that require grad, and freed with the graph",
                )
            }),
        }
    }
}

/// What a hook handle removes.
enum HookTarget {
    Node(Arc<dyn Node>),
    Tensor(Tensor),
}

/// `RemovableHandle`: `.remove()` unregisters the hook; also a context
/// manager that removes it on exit.
#[pyclass(name = "RemovableHandle", module = "ferrograd._core", frozen)]
pub struct PyHookHandle {
    target: HookTarget,
    #[pyo3(get)]
    id: u64,
}

impl PyHookHandle {
    /// The handle of hook `id` registered on `t`.
    pub(crate) fn on_tensor(t: &Tensor, id: u64) -> PyHookHandle {
        PyHookHandle {
            target: HookTarget::Tensor(t.clone()),
            id,
        }
    }
}

#[pymethods]
impl PyHookHandle {
    fn remove(&self) {
        match &self.target {
            HookTarget::Node(n) => {
                n.core().remove_hook(self.id);
            }
            HookTarget::Tensor(t) => {
                t.remove_hook(self.id);
            }
        }
    }
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }
    fn __exit__(&self, _a: Py<PyAny>, _b: Py<PyAny>, _c: Py<PyAny>) {
        self.remove();
    }
}

/// The Python object a node owns itself, if it is a node of that kind (a
/// custom Function's node owns its context): installed by the module that
/// defines such nodes (`function.rs`) when the extension module is made.
pub type OwnedObject = fn(Python<'_>, &dyn Node) -> Option<Py<PyAny>>;

static OWNED_OBJECT: OnceLock<OwnedObject> = OnceLock::new();

/// Installs the [`OwnedObject`] lookup (the first one installed stays).
pub fn set_owned_object(f: OwnedObject) {
    OWNED_OBJECT.get_or_init(|| f);
}

/// The one Python object of a graph node: a custom Function's context
/// (which its node owns), or the node's registered object while it is
/// alive, otherwise a new one. As for tensors (Note [Python objects of
/// tensors] in `tensor.rs`), the node's binding slot holds the object's
/// address without owning it, read and written with the GIL held, and the
/// object's `Drop` clears it; a node keeps no object alive, so `metadata`
/// and hooks live on the node itself.
pub fn node_object(py: Python<'_>, node: Arc<dyn Node>) -> PyResult<Py<PyAny>> {
    if let Some(owned) = OWNED_OBJECT.get().and_then(|f| f(py, &*node)) {
        return Ok(owned);
    }
    let p = node.core().binding_slot().object() as *mut ffi::PyObject;
    if !p.is_null() {
        // SAFETY: the GIL is held and a registered address is cleared by
        // the object's `Drop` (GIL held) before its memory is freed, so `p`
        // is a live allocation; a zero count means it is being deallocated.
        unsafe {
            if ffi::Py_REFCNT(p) > 0 {
                return Ok(Bound::from_borrowed_ptr(py, p).unbind());
            }
        }
    }
    let obj = Bound::new(
        py,
        PyNode {
            inner: NodeRef::Strong(node.clone()),
            me: AtomicPtr::new(std::ptr::null_mut()),
        },
    )?;
    obj.get().me.store(obj.as_ptr(), Ordering::Release);
    node.core().binding_slot().set_object(obj.as_ptr().cast());
    Ok(obj.into_any().unbind())
}

fn tensor_out(py: Python<'_>, t: Option<Tensor>) -> PyResult<Py<PyAny>> {
    match t {
        Some(t) => wrap_any(py, t),
        None => Ok(py.None()),
    }
}

fn grads_to_py<'py>(py: Python<'py>, g: &[Option<Tensor>]) -> PyResult<Bound<'py, PyTuple>> {
    let items: Vec<Py<PyAny>> = g
        .iter()
        .map(|t| tensor_out(py, t.clone()))
        .collect::<PyResult<_>>()?;
    PyTuple::new(py, items)
}

/// Reads a hook's return value: `None` keeps the gradients; otherwise a
/// tensor (or None) per slot.
fn grads_from_py(obj: &Bound<'_, PyAny>, n: usize, who: &str) -> PyResult<Option<Grads>> {
    if obj.is_none() {
        return Ok(None);
    }
    let seq: Vec<Bound<'_, PyAny>> = if let Ok(t) = obj.cast::<PyTuple>() {
        t.iter().collect()
    } else if let Ok(l) = obj.cast::<PyList>() {
        l.iter().collect()
    } else {
        return Err(PyTypeError::new_err(format!(
            "{who} hook must return None or a tuple of gradients"
        )));
    };
    if seq.len() != n {
        return Err(PyRuntimeError::new_err(format!(
            "{who} hook returned {} gradients, expected {n}",
            seq.len()
        )));
    }
    seq.into_iter()
        .map(|o| {
            if o.is_none() {
                Ok(None)
            } else {
                Ok(Some(crate::convert::tensor_arg(&o, "gradient")?))
            }
        })
        .collect::<PyResult<Grads>>()
        .map(Some)
}

/// A tensor hook calling Python: `fn(grad) -> Tensor or None`.
pub fn py_tensor_hook(f: Py<PyAny>) -> autograd::TensorHook {
    Arc::new(move |g: &Tensor| -> Result<Option<Tensor>> {
        Python::attach(|py| {
            let r = f.call1(py, (TensorOut(g.clone()),)).map_err(from_py)?;
            let r = r.bind(py);
            if r.is_none() {
                return Ok(None);
            }
            let t = crate::convert::tensor_arg(r, "hook result").map_err(from_py)?;
            if t.shape() != g.shape() {
                return Err(ferrograd::Error::runtime(format!(
                    "hook has changed the size of value: expected {:?}, got {:?}",
                    g.shape(),
                    t.shape()
                )));
            }
            Ok(Some(t))
        })
    })
}

fn edge_tuple(py: Python<'_>, e: &Option<Edge>) -> PyResult<Py<PyAny>> {
    Ok(match e {
        Some(e) => (node_object(py, e.node.clone())?, e.input_nr)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        None => (py.None(), 0usize).into_pyobject(py)?.into_any().unbind(),
    })
}

fn saved_to_py(py: Python<'_>, v: SavedValue) -> PyResult<Py<PyAny>> {
    Ok(match v {
        SavedValue::Tensor(t) => tensor_out(py, t)?,
        SavedValue::Tensors(ts) => {
            let items: Vec<Py<PyAny>> = ts
                .into_iter()
                .map(|t| tensor_out(py, Some(t)))
                .collect::<PyResult<_>>()?;
            PyTuple::new(py, items)?.into_any().unbind()
        }
        SavedValue::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        SavedValue::Ints(v) => PyTuple::new(py, v)?.into_any().unbind(),
        SavedValue::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        SavedValue::Complex(z) => pyo3::types::PyComplex::from_doubles(py, z.re, z.im)
            .into_any()
            .unbind(),
        SavedValue::Bool(b) => pyo3::types::PyBool::new(py, b)
            .to_owned()
            .into_any()
            .unbind(),
        SavedValue::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        SavedValue::None => py.None(),
    })
}

#[pymethods]
impl PyNode {
    /// torch's node name (`MulBackward0`).
    fn name(&self) -> PyResult<String> {
        Ok(self.node()?.name())
    }

    /// `((node, input_nr), ...)`, one per forward input; `(None, 0)` where
    /// no gradient flows.
    #[getter]
    fn next_functions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let items: Vec<Py<PyAny>> = self
            .node()?
            .core()
            .next_edges()
            .iter()
            .map(|e| edge_tuple(py, e))
            .collect::<PyResult<_>>()?;
        PyTuple::new(py, items)
    }

    /// A dict for user data, kept for the node's lifetime.
    #[getter]
    fn metadata(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let a = self
            .node()?
            .core()
            .metadata(|| Arc::new(Python::attach(|py| PyDict::new(py).unbind())));
        let d = a
            .downcast_ref::<Py<PyDict>>()
            .ok_or_else(|| PyRuntimeError::new_err("node metadata is not a dict"))?;
        Ok(d.clone_ref(py))
    }

    fn _sequence_nr(&self) -> PyResult<u64> {
        Ok(self.node()?.core().sequence_nr())
    }

    /// For `AccumulateGrad`: the leaf it accumulates into.
    #[getter]
    fn variable(&self) -> PyResult<TensorOut> {
        let node = self.node()?;
        match node.as_any().downcast_ref::<AccumulateGrad>() {
            Some(a) => Ok(TensorOut(a.variable().clone())),
            None => Err(PyAttributeError::new_err(format!(
                "'{}' object has no attribute 'variable'",
                node.name()
            ))),
        }
    }

    /// Registers a hook that runs after this node computed its gradients.
    ///
    /// ``hook(grad_inputs, grad_outputs)`` receives the gradients the node
    /// produced (one per forward input, None where none flows) and the ones
    /// it received (one per forward output). If it returns a tuple, that
    /// replaces ``grad_inputs``; None keeps them.
    ///
    /// Args:
    ///     hook (callable): ``hook(grad_inputs, grad_outputs) -> tuple or None``.
    ///
    /// Returns:
    ///     RemovableHandle: ``handle.remove()`` unregisters the hook.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> y = x * 3
    ///     >>> handle = y.grad_fn.register_hook(lambda gin, gout: print(gin, gout))
    ///     >>> y.sum().backward()
    ///     (tensor([3., 3.]), None) (tensor([1., 1.]),)
    ///     >>> handle.remove()
    fn register_hook(&self, hook: Py<PyAny>) -> PyResult<PyHookHandle> {
        let node = self.node()?;
        let n = node.core().next_edges().len();
        let f: autograd::PostHook =
            Arc::new(move |gin: &[Option<Tensor>], gout: &[Option<Tensor>]| {
                Python::attach(|py| {
                    let r = hook
                        .call1(
                            py,
                            (
                                grads_to_py(py, gin).map_err(from_py)?,
                                grads_to_py(py, gout).map_err(from_py)?,
                            ),
                        )
                        .map_err(from_py)?;
                    grads_from_py(r.bind(py), n, "backward").map_err(from_py)
                })
            });
        let id = node.core().register_caller_thread_hook(f);
        Ok(PyHookHandle {
            target: HookTarget::Node(node),
            id,
        })
    }

    /// Registers a hook that runs before this node, on the gradients it
    /// received.
    ///
    /// ``hook(grad_outputs)`` gets one gradient per forward output; if it
    /// returns a tuple, the node uses that instead.
    ///
    /// Args:
    ///     hook (callable): ``hook(grad_outputs) -> tuple or None``.
    ///
    /// Returns:
    ///     RemovableHandle: ``handle.remove()`` unregisters the hook.
    ///
    /// Example:
    ///     >>> x = ferrograd.tensor([1.0, 2.0], requires_grad=True)
    ///     >>> y = x * 3
    ///     >>> handle = y.grad_fn.register_prehook(lambda gout: (gout[0] * 10,))
    ///     >>> y.sum().backward()
    ///     >>> x.grad
    ///     tensor([30., 30.])
    fn register_prehook(&self, hook: Py<PyAny>) -> PyResult<PyHookHandle> {
        let node = self.node()?;
        let n = node.core().num_inputs();
        let f: autograd::PreHook = Arc::new(move |gout: &[Option<Tensor>]| {
            Python::attach(|py| {
                let r = hook
                    .call1(py, (grads_to_py(py, gout).map_err(from_py)?,))
                    .map_err(from_py)?;
                grads_from_py(r.bind(py), n, "backward pre").map_err(from_py)
            })
        });
        let id = node.core().register_caller_thread_prehook(f);
        Ok(PyHookHandle {
            target: HookTarget::Node(node),
            id,
        })
    }

    /// `node(*grads)`: runs this node's backward once on the given
    /// gradients (one per forward output, `None` for undefined) and returns
    /// one gradient per forward input.
    #[pyo3(signature = (*grads))]
    fn __call__(
        &self,
        py: Python<'_>,
        grads: Vec<Option<PyRef<'_, PyTensor>>>,
    ) -> PyResult<Py<PyTuple>> {
        let node = self.node()?;
        let n = node.core().num_inputs();
        if grads.len() != n {
            return Err(PyTypeError::new_err(format!(
                "{} expects {n} gradients (one per output of the forward op), got {}",
                node.name(),
                grads.len()
            )));
        }
        let gs = opt_tensors(&grads);
        let out = node.apply(gs).py()?;
        let items = out
            .into_iter()
            .map(|g| tensor_out(py, g))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyTuple::new(py, items)?.unbind())
    }

    /// `_saved_<name>` and `_raw_saved_<name>`.
    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let node = self.node()?;
        let (key, raw) = if let Some(k) = name.strip_prefix("_raw_saved_") {
            (k, true)
        } else if let Some(k) = name.strip_prefix("_saved_") {
            (k, false)
        } else {
            return Err(PyAttributeError::new_err(format!(
                "'{}' object has no attribute '{name}'",
                node.name()
            )));
        };
        if raw && is_saved_tensor(&node, key) {
            return Ok(Py::new(py, crate::saved_hooks::PySavedTensor::new(node, key))?.into_any());
        }
        let Some(v) = node.saved_value(key) else {
            return Err(PyAttributeError::new_err(format!(
                "'{}' object has no attribute '{name}'",
                node.name()
            )));
        };
        if let SavedValue::Tensor(None) = v {
            if saved_was_freed(&node, key) {
                return Err(PyRuntimeError::new_err(
                    autograd::freed_graph_error().to_string(),
                ));
            }
        }
        if raw {
            if let SavedValue::Tensor(Some(t)) = &v {
                // The raw view: the stored tensor without its graph link.
                return tensor_out(py, Some(t.detach()));
            }
        }
        saved_to_py(py, v)
    }

    /// The default attributes plus `_saved_<name>` (and `_raw_saved_<name>`
    /// for tensors) of what the node saved, as `dir()` shows torch's.
    fn __dir__(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        let py = slf.py();
        let object = py.get_type::<pyo3::types::PyAny>();
        let mut names: Vec<String> = object.call_method1("__dir__", (slf,))?.extract()?;
        if let Ok(node) = slf.get().node() {
            for (name, v) in node.saved_values() {
                names.push(format!("_saved_{name}"));
                if matches!(v, SavedValue::Tensor(_)) {
                    names.push(format!("_raw_saved_{name}"));
                }
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn __repr__(&self) -> String {
        match self.node() {
            Ok(node) => format!(
                "<{} object at {:#x}>",
                node.name().trim_start_matches("torch::autograd::"),
                autograd::node_id(&node)
            ),
            Err(_) => "<graph node (not linked)>".to_string(),
        }
    }

    fn __eq__(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> bool {
        if slf.is(other) {
            return true;
        }
        let (Ok(o), Ok(a)) = (other.cast::<PyNode>(), slf.get().node()) else {
            return false;
        };
        o.get()
            .node()
            .is_ok_and(|b| autograd::node_id(&a) == autograd::node_id(&b))
    }

    fn __hash__(slf: &Bound<'_, Self>) -> u64 {
        match slf.get().node() {
            Ok(n) => autograd::node_id(&n) as u64,
            Err(_) => slf.as_ptr() as u64,
        }
    }
}

/// Whether `node` keeps a [`autograd::SavedTensor`] called `key`.
fn is_saved_tensor(node: &Arc<dyn Node>, key: &str) -> bool {
    node.as_any()
        .downcast_ref::<autograd::FnNode>()
        .is_some_and(|n| n.saved_tensor(key).is_some())
}

fn saved_was_freed(node: &Arc<dyn Node>, key: &str) -> bool {
    node.as_any()
        .downcast_ref::<autograd::FnNode>()
        .and_then(|n| n.saved_tensor(key))
        .is_some_and(|s| s.is_released())
}

fn opt_tensors(v: &[Option<PyRef<'_, PyTensor>>]) -> Vec<Option<Tensor>> {
    v.iter().map(|t| t.as_ref().map(|t| t.tensor())).collect()
}

/// Reads an input of `grad`: a tensor, or a `GradientEdge(node, output_nr)`.
/// Whether `obj` is a `graph.GradientEdge` (a `(node, output_nr)` pair).
pub(crate) fn is_gradient_edge(obj: &Bound<'_, PyAny>) -> bool {
    obj.getattr("node")
        .is_ok_and(|n| n.cast::<PyNode>().is_ok())
        && obj.hasattr("output_nr").unwrap_or(false)
}

pub(crate) fn grad_input(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<GradInput> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        return Ok(GradInput::Tensor(t.get().tensor()));
    }
    if let (Ok(node), Ok(nr)) = (obj.getattr("node"), obj.getattr("output_nr")) {
        if let Ok(n) = node.cast::<PyNode>() {
            return Ok(GradInput::Edge(Edge::new(n.get().node()?, nr.extract()?)));
        }
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be Tensors or GradientEdges, got {}",
        crate::convert::type_name(obj)
    )))
}

/// The engine entry of `Tensor.backward` and `autograd.backward`.
#[pyfunction]
#[pyo3(signature = (tensors, grad_tensors, retain_graph, create_graph, inputs))]
fn _run_backward(
    py: Python<'_>,
    tensors: Vec<Bound<'_, PyAny>>,
    grad_tensors: Vec<Option<PyRef<'_, PyTensor>>>,
    retain_graph: Option<bool>,
    create_graph: bool,
    inputs: Option<Vec<Bound<'_, PyAny>>>,
) -> PyResult<()> {
    let ts = grad_inputs(&tensors, "tensors")?;
    let gs = opt_tensors(&grad_tensors);
    let inputs = inputs.map(|v| grad_inputs(&v, "inputs")).transpose()?;
    run_backward(py, ts, gs, retain_graph, create_graph, inputs)
}

/// Runs backward from `ts` with starting gradients `gs` (GIL released).
pub(crate) fn run_backward(
    py: Python<'_>,
    ts: Vec<GradInput>,
    gs: Vec<Option<Tensor>>,
    retain_graph: Option<bool>,
    create_graph: bool,
    inputs: Option<Vec<GradInput>>,
) -> PyResult<()> {
    let opts = EngineOptions {
        retain_graph,
        create_graph,
        ..Default::default()
    };
    detached(py, move || {
        autograd::backward_edges(&ts, &gs, opts, inputs.as_deref())
    })
    .py()
}

/// Tensors or gradient edges, as `backward`/`grad` take them.
fn grad_inputs(objs: &[Bound<'_, PyAny>], what: &str) -> PyResult<Vec<GradInput>> {
    objs.iter().map(|o| grad_input(o, what)).collect()
}

/// The engine entry of `autograd.grad`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, is_grads_batched, materialize_grads))]
fn _grad(
    py: Python<'_>,
    outputs: Vec<Bound<'_, PyAny>>,
    inputs: Vec<Bound<'_, PyAny>>,
    grad_outputs: Vec<Option<PyRef<'_, PyTensor>>>,
    retain_graph: Option<bool>,
    create_graph: bool,
    allow_unused: bool,
    is_grads_batched: bool,
    materialize_grads: bool,
) -> PyResult<Vec<Option<TensorOut>>> {
    let outs = grad_inputs(&outputs, "grad(): outputs")?;
    let ins = grad_inputs(&inputs, "grad(): inputs")?;
    let gos = opt_tensors(&grad_outputs);
    let opts = EngineOptions {
        retain_graph,
        create_graph,
        allow_unused: allow_unused || materialize_grads,
        materialize_grads,
    };
    let r = if is_grads_batched {
        let gos: Vec<Tensor> = gos
            .into_iter()
            .map(|g| {
                g.ok_or_else(|| {
                    PyRuntimeError::new_err("is_grads_batched=True needs every grad_output")
                })
            })
            .collect::<PyResult<_>>()?;
        let outs = outs
            .into_iter()
            .map(|o| match o {
                GradInput::Tensor(t) => Ok(t),
                GradInput::Edge(_) => Err(PyRuntimeError::new_err(
                    "is_grads_batched=True needs Tensor outputs, not GradientEdges",
                )),
            })
            .collect::<PyResult<Vec<Tensor>>>()?;
        detached(py, move || autograd::grad_batched(&outs, &ins, &gos, opts))
    } else {
        detached(py, move || autograd::grad_edges(&outs, &ins, &gos, opts))
    };
    Ok(r.py()?.into_iter().map(|g| g.map(TensorOut)).collect())
}

/// The leaves that gradients of `outputs` would accumulate into (each once).
#[pyfunction]
fn _reached_leaves(outputs: Vec<PyRef<'_, PyTensor>>) -> Vec<TensorOut> {
    let ts: Vec<Tensor> = outputs.iter().map(|t| t.tensor()).collect();
    autograd::reached_leaves(&ts)
        .into_iter()
        .map(TensorOut)
        .collect()
}

/// Whether gradient recording is on for the current thread.
///
/// It is on by default and turned off by `no_grad`, `set_grad_enabled(False)`
/// and `inference_mode`.
///
/// Example:
///     >>> ferrograd.is_grad_enabled()
///     True
///     >>> with ferrograd.no_grad():
///     ...     print(ferrograd.is_grad_enabled())
///     False
#[pyfunction]
fn is_grad_enabled() -> bool {
    autograd::is_grad_enabled()
}

#[pyfunction]
fn _set_grad_enabled(mode: bool) {
    autograd::set_grad_enabled(mode)
}

/// Whether inference mode (see `inference_mode`) is on for the current
/// thread.
///
/// Example:
///     >>> ferrograd.is_inference_mode_enabled()
///     False
///     >>> with ferrograd.inference_mode():
///     ...     print(ferrograd.is_inference_mode_enabled())
///     True
#[pyfunction]
fn is_inference_mode_enabled() -> bool {
    autograd::is_inference_mode_enabled()
}

/// Switches inference mode; returns the previous `(inference, grad)`
/// state for `_restore_inference_mode`.
#[pyfunction]
fn _set_inference_mode(mode: bool) -> (bool, bool) {
    let prev = (
        autograd::is_inference_mode_enabled(),
        autograd::is_grad_enabled(),
    );
    autograd::set_inference_mode(mode);
    if mode {
        autograd::set_grad_enabled(false);
    }
    prev
}

#[pyfunction]
fn _restore_inference_mode(inference: bool, grad: bool) {
    autograd::set_inference_mode(inference);
    autograd::set_grad_enabled(grad);
}

#[pyfunction]
fn set_multithreading_enabled(mode: bool) {
    autograd::set_multithreading_enabled(mode)
}

#[pyfunction]
fn is_multithreading_enabled() -> bool {
    autograd::is_multithreading_enabled()
}

/// How many waves of ready nodes backward ran on the pool so far (a
/// statistic: tests use it to check that the parallel path was taken).
#[pyfunction]
fn _parallel_waves() -> u64 {
    autograd::parallel_waves()
}

/// How many nodes batched backward calls ran row by row so far (a
/// statistic: tests use it to check that batched formulas were used).
#[pyfunction]
fn _row_by_row_nodes() -> u64 {
    autograd::row_by_row_nodes()
}

/// The id of the backward call running on this thread (-1 outside one).
#[pyfunction]
fn _current_graph_task_id() -> i64 {
    autograd::current_graph_task_id().map_or(-1, |id| id as i64)
}

/// Whether the backward call running on this thread will run `node` (or
/// capture its gradient).
#[pyfunction]
fn _will_engine_execute_node(node: &Bound<'_, PyAny>) -> PyResult<bool> {
    let n = node.cast::<PyNode>().map_err(|_| {
        PyTypeError::new_err(format!(
            "_will_engine_execute_node expects a graph Node, got {}",
            crate::convert::type_name(node)
        ))
    })?;
    autograd::will_engine_execute_node(&n.get().node()?).py()
}

/// Whether the backward call running on this thread will run `node`
/// (unlike :func:`_will_engine_execute_node`, false for the nodes whose
/// gradients `autograd.grad` captures instead).
#[pyfunction]
fn _will_engine_run_node(node: &Bound<'_, PyAny>) -> PyResult<bool> {
    let n = node.cast::<PyNode>().map_err(|_| {
        PyTypeError::new_err(format!(
            "_will_engine_run_node expects a graph Node, got {}",
            crate::convert::type_name(node)
        ))
    })?;
    autograd::will_engine_run_node(&n.get().node()?).py()
}

#[pyfunction]
fn increment_version(tensor: &Bound<'_, PyAny>) -> PyResult<()> {
    if let Ok(t) = tensor.cast::<PyTensor>() {
        autograd::increment_version(&t.get().tensor());
        return Ok(());
    }
    for t in tensor.try_iter()? {
        autograd::increment_version(&crate::convert::tensor_arg(&t?, "tensor")?);
    }
    Ok(())
}

/// The gradient edge of a tensor: `(node, output_nr)`.
#[pyfunction]
fn _gradient_edge(py: Python<'_>, tensor: PyRef<'_, PyTensor>) -> PyResult<(Py<PyAny>, usize)> {
    match autograd::gradient_edge(&tensor.tensor()) {
        Some(e) => Ok((node_object(py, e.node)?, e.input_nr)),
        None => Err(PyRuntimeError::new_err(
            "It is not possible to get the gradient edge for a Tensor that does not require gradients",
        )),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNode>()?;
    m.add_class::<PyHookHandle>()?;
    m.add_function(wrap_pyfunction!(_run_backward, m)?)?;
    m.add_function(wrap_pyfunction!(_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_reached_leaves, m)?)?;
    m.add_function(wrap_pyfunction!(is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_set_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_inference_mode_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_set_inference_mode, m)?)?;
    m.add_function(wrap_pyfunction!(_restore_inference_mode, m)?)?;
    m.add_function(wrap_pyfunction!(set_multithreading_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_multithreading_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(increment_version, m)?)?;
    m.add_function(wrap_pyfunction!(_parallel_waves, m)?)?;
    m.add_function(wrap_pyfunction!(_row_by_row_nodes, m)?)?;
    m.add_function(wrap_pyfunction!(_current_graph_task_id, m)?)?;
    m.add_function(wrap_pyfunction!(_will_engine_execute_node, m)?)?;
    m.add_function(wrap_pyfunction!(_will_engine_run_node, m)?)?;
    m.add_function(wrap_pyfunction!(_gradient_edge, m)?)?;
    Ok(())
}
