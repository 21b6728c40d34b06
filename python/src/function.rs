//! Custom `autograd.Function`s: the graph node whose backward calls the
//! Python `backward`, the context object (`ctx`) the user's `forward` and
//! `backward` receive, and `Function.apply`.
//!
//! The context is an instance of the Function's backward class (a Python
//! subclass of `_FunctionBase`, itself a `_Node`), and is what `grad_fn`
//! returns for the Function's outputs. The node owns the context; the
//! context refers to the node weakly, so the pair is freed with the graph.
//! The node runs on the thread that called backward (it needs Python),
//! attaching to the interpreter only for the call.

use crate::autograd::PyNode;
use crate::errors::{from_py, IntoPyResult};
use crate::tensor::{wrap_any, PyTensor, TensorOut};
use ferrograd::autograd::{self, Edge, Grads, Node, NodeCore, SavedTensor, TensorMeta};
use ferrograd::{DType, Result, Tensor};
use parking_lot::Mutex;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::{intern, PyTypeInfo};
use std::any::Any;
use std::sync::{Arc, OnceLock};

/// The graph node of one application of a custom Function.
pub struct PyFunctionNode {
    name: String,
    core: NodeCore,
    /// The context (an instance of the Function's backward class).
    ctx: Py<PyAny>,
    /// Which forward arguments were tensors.
    tensor_inputs: Vec<bool>,
    /// Which forward outputs were tensors.
    tensor_outputs: Vec<bool>,
    /// `ctx.save_for_backward(...)`, stored once the outputs are linked.
    saved: OnceLock<Vec<Option<SavedTensor>>>,
}

impl PyFunctionNode {
    /// The context object (what `grad_fn` returns).
    pub fn ctx(&self, py: Python<'_>) -> Py<PyAny> {
        self.ctx.clone_ref(py)
    }

    fn unpack_saved(&self) -> Option<Result<Vec<Option<Tensor>>>> {
        self.saved.get().map(|saved| {
            saved
                .iter()
                .map(|s| s.as_ref().map(SavedTensor::unpack).transpose())
                .collect()
        })
    }

    fn run_backward(&self, py: Python<'_>, grads: Grads) -> PyResult<Grads> {
        let ctx = self.ctx.bind(py);
        let materialize = ctx
            .cast::<PyFunctionBase>()?
            .get()
            .state
            .lock()
            .materialize_grads;
        let args: Vec<Py<PyAny>> = grads
            .into_iter()
            .enumerate()
            .map(|(i, g)| -> PyResult<Py<PyAny>> {
                let g = match g {
                    Some(g) => Some(g),
                    None if materialize && self.tensor_outputs[i] => {
                        Some(self.core.output_meta()[i].zeros().py()?)
                    }
                    None => None,
                };
                Ok(match g {
                    Some(g) => wrap_any(py, g)?,
                    None => py.None(),
                })
            })
            .collect::<PyResult<_>>()?;
        let r = ctx.call_method1(intern!(py, "apply"), PyTuple::new(py, args)?)?;
        let mut items: Vec<Bound<'_, PyAny>> = match r.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![r],
        };
        let n = self.tensor_inputs.len();
        // Extra trailing Nones are allowed.
        if items.len() > n && items[n..].iter().all(|o| o.is_none()) {
            items.truncate(n);
        }
        if items.len() != n {
            return Err(PyRuntimeError::new_err(format!(
                "function {} returned an incorrect number of gradients (expected {n}, got {})",
                self.name,
                items.len()
            )));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, o)| {
                if o.is_none() {
                    return Ok(None);
                }
                if !self.tensor_inputs[i] {
                    return Err(PyRuntimeError::new_err(format!(
                        "function {} returned a gradient different than None at position {}, but the corresponding forward input was not a Variable",
                        self.name,
                        i + 1
                    )));
                }
                match o.cast::<PyTensor>() {
                    Ok(t) => Ok(Some(t.get().tensor())),
                    Err(_) => Err(PyRuntimeError::new_err(format!(
                        "expected Variable or None (got {})",
                        crate::convert::type_name(o)
                    ))),
                }
            })
            .collect()
    }
}

impl Node for PyFunctionNode {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn core(&self) -> &NodeCore {
        &self.core
    }
    fn apply(&self, grads: Grads) -> Result<Grads> {
        Python::attach(|py| self.run_backward(py, grads).map_err(from_py))
    }
    fn release_variables(&self) {
        if let Some(saved) = self.saved.get() {
            for s in saved.iter().flatten() {
                s.release();
            }
        }
    }
    fn needs_caller_thread(&self) -> bool {
        true
    }
    fn apply_without_grads(&self) -> bool {
        true
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What `ctx` records during forward.
struct CtxState {
    to_save: Option<Py<PyAny>>,
    dirty_tensors: Option<Py<PyAny>>,
    non_differentiable: Option<Py<PyAny>>,
    saved_for_forward: Option<Py<PyAny>>,
    materialize_grads: bool,
    needs_input_grad: Option<Py<PyAny>>,
}

/// The base of every custom Function's backward class: the `ctx` object.
#[pyclass(name = "_FunctionBase", module = "ferrograd._core", extends = PyNode, subclass, frozen)]
pub struct PyFunctionBase {
    state: Mutex<CtxState>,
}

fn clone_opt(py: Python<'_>, o: &Option<Py<PyAny>>) -> Py<PyAny> {
    o.as_ref().map_or_else(|| py.None(), |o| o.clone_ref(py))
}

fn none_to_opt(o: Bound<'_, PyAny>) -> Option<Py<PyAny>> {
    (!o.is_none()).then(|| o.unbind())
}

#[pymethods]
impl PyFunctionBase {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyClassInitializer<Self> {
        PyClassInitializer::from(PyNode::pending()).add_subclass(PyFunctionBase {
            state: Mutex::new(CtxState {
                to_save: None,
                dirty_tensors: None,
                non_differentiable: None,
                saved_for_forward: None,
                materialize_grads: true,
                needs_input_grad: None,
            }),
        })
    }

    #[getter]
    fn get_to_save(&self, py: Python<'_>) -> Py<PyAny> {
        clone_opt(py, &self.state.lock().to_save)
    }
    #[setter]
    fn set_to_save(&self, v: Bound<'_, PyAny>) {
        self.state.lock().to_save = none_to_opt(v);
    }
    #[getter]
    fn get_dirty_tensors(&self, py: Python<'_>) -> Py<PyAny> {
        clone_opt(py, &self.state.lock().dirty_tensors)
    }
    #[setter]
    fn set_dirty_tensors(&self, v: Bound<'_, PyAny>) {
        self.state.lock().dirty_tensors = none_to_opt(v);
    }
    #[getter]
    fn get_non_differentiable(&self, py: Python<'_>) -> Py<PyAny> {
        clone_opt(py, &self.state.lock().non_differentiable)
    }
    #[setter]
    fn set_non_differentiable(&self, v: Bound<'_, PyAny>) {
        self.state.lock().non_differentiable = none_to_opt(v);
    }
    #[getter]
    fn get_saved_for_forward(&self, py: Python<'_>) -> Py<PyAny> {
        clone_opt(py, &self.state.lock().saved_for_forward)
    }
    #[setter]
    fn set_saved_for_forward(&self, v: Bound<'_, PyAny>) {
        self.state.lock().saved_for_forward = none_to_opt(v);
    }
    #[getter]
    fn get_materialize_grads(&self) -> bool {
        self.state.lock().materialize_grads
    }
    #[setter]
    fn set_materialize_grads(&self, v: bool) {
        self.state.lock().materialize_grads = v;
    }
    #[getter]
    fn get_needs_input_grad(&self, py: Python<'_>) -> Py<PyAny> {
        clone_opt(py, &self.state.lock().needs_input_grad)
    }
    #[setter]
    fn set_needs_input_grad(&self, v: Bound<'_, PyAny>) {
        self.state.lock().needs_input_grad = none_to_opt(v);
    }

    /// The tensors given to `save_for_backward`, checked for in-place
    /// modification since; saved outputs come back with this node as
    /// their `grad_fn`.
    #[getter]
    fn saved_tensors(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let node = slf.as_super().get().node().ok();
        let fnode = node
            .as_ref()
            .and_then(|n| n.as_any().downcast_ref::<PyFunctionNode>());
        if let Some(unpacked) = fnode.and_then(PyFunctionNode::unpack_saved) {
            let ts = unpacked.py()?;
            let items: Vec<Py<PyAny>> = ts
                .into_iter()
                .map(|t| match t {
                    Some(t) => wrap_any(py, t),
                    None => Ok(py.None()),
                })
                .collect::<PyResult<_>>()?;
            return Ok(PyTuple::new(py, items)?.into_any().unbind());
        }
        // Before the node exists (or when none was recorded): what was
        // given.
        match &slf.get().state.lock().to_save {
            Some(t) => Ok(t.clone_ref(py)),
            None => Ok(PyTuple::empty(py).into_any().unbind()),
        }
    }

    #[getter]
    fn saved_variables(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Self::saved_tensors(slf)
    }
}

/// The ids of the tensors in an optional tuple set on ctx (`mark_dirty`,
/// `mark_non_differentiable`), checking that each is a tensor.
fn tensor_ids(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<(usize, Tensor)>> {
    let Some(obj) = obj else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (i, o) in obj.try_iter()?.enumerate() {
        let o = o?;
        match o.cast::<PyTensor>() {
            Ok(t) => out.push((t.get().tensor().id(), t.get().tensor())),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "{what} can only accept variables, but argument {i} is of type {}",
                    crate::convert::type_name(&o)
                )))
            }
        }
    }
    Ok(out)
}

/// `Function.apply`: runs `forward` (and `setup_context`) with grad mode
/// off, then links the outputs to a new node when an input requires grad.
#[pyfunction]
#[pyo3(signature = (cls, args, kwargs, setup_context))]
fn _function_apply<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
    setup_context: bool,
) -> PyResult<Py<PyAny>> {
    let ctx = cls.getattr(intern!(py, "_backward_cls"))?.call0()?;
    let base = ctx.cast::<PyFunctionBase>()?.clone();
    let grad_on = autograd::is_grad_enabled();
    let mut inputs: Vec<Option<Tensor>> = Vec::with_capacity(args.len());
    let mut needs: Vec<bool> = Vec::with_capacity(args.len());
    for a in args.iter() {
        match a.cast::<PyTensor>() {
            Ok(t) => {
                let t = t.get().tensor();
                needs.push(grad_on && t.requires_grad());
                inputs.push(Some(t));
            }
            Err(_) => {
                needs.push(false);
                inputs.push(None);
            }
        }
    }
    let executable = needs.iter().any(|&b| b);
    if executable && ferrograd::compile::capturing() {
        // The node's backward is Python code, which a replay cannot make.
        let name: String = cls.getattr(intern!(py, "__qualname__"))?.extract()?;
        ferrograd::compile::break_capture(&format!(
            "autograd.Function {name} records a node whose backward runs Python"
        ));
    }
    base.get().state.lock().needs_input_grad = Some(PyTuple::new(py, &needs)?.into_any().unbind());
    let edges: Vec<Option<Edge>> = inputs
        .iter()
        .zip(&needs)
        .map(|(t, &n)| match t {
            Some(t) if n => autograd::gradient_edge(t),
            _ => None,
        })
        .collect();
    let output = {
        let _g = autograd::no_grad();
        if setup_context {
            let out = cls.getattr(intern!(py, "forward"))?.call(args, kwargs)?;
            cls.getattr(intern!(py, "setup_context"))?
                .call1((&ctx, args, &out))?;
            out
        } else {
            let mut full: Vec<Bound<'py, PyAny>> = Vec::with_capacity(args.len() + 1);
            full.push(ctx.clone());
            full.extend(args.iter());
            cls.getattr(intern!(py, "forward"))?
                .call(PyTuple::new(py, full)?, kwargs)?
        }
    };
    let is_tuple = output.cast::<PyTuple>().is_ok();
    let outs: Vec<Bound<'py, PyAny>> = if is_tuple {
        output.cast::<PyTuple>()?.iter().collect()
    } else {
        vec![output.clone()]
    };
    let (dirty, non_diff, to_save) = {
        let st = base.get().state.lock();
        (
            st.dirty_tensors.as_ref().map(|o| o.clone_ref(py)),
            st.non_differentiable.as_ref().map(|o| o.clone_ref(py)),
            st.to_save.as_ref().map(|o| o.clone_ref(py)),
        )
    };
    let dirty = tensor_ids(dirty.as_ref().map(|o| o.bind(py)), "mark_dirty")?;
    let non_diff = tensor_ids(
        non_diff.as_ref().map(|o| o.bind(py)),
        "mark_non_differentiable",
    )?;
    let input_ids: Vec<usize> = inputs.iter().flatten().map(Tensor::id).collect();
    let out_tensors: Vec<Option<Tensor>> = outs
        .iter()
        .map(|o| o.cast::<PyTensor>().ok().map(|t| t.get().tensor()))
        .collect();
    for (id, _) in &dirty {
        if !input_ids.contains(id) {
            return Err(PyRuntimeError::new_err(
                "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there is no need to pass it to mark_dirty().",
            ));
        }
        if !out_tensors.iter().flatten().any(|t| t.id() == *id) {
            return Err(PyRuntimeError::new_err(
                "Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function.",
            ));
        }
    }
    let is_dirty = |t: &Tensor| dirty.iter().any(|(id, _)| *id == t.id());
    let is_non_diff = |t: &Tensor| non_diff.iter().any(|(id, _)| *id == t.id());

    // The node, and the same node as a graph `Node`.
    let node: Option<(Arc<PyFunctionNode>, Arc<dyn Node>)> = if executable {
        let name: String = ctx.get_type().name()?.extract()?;
        let metas = inputs
            .iter()
            .map(|t| t.as_ref().map(TensorMeta::of))
            .collect();
        let output_meta = out_tensors
            .iter()
            .map(|t| match t {
                Some(t) => TensorMeta::of(t),
                None => TensorMeta {
                    shape: Default::default(),
                    dtype: DType::Float32,
                },
            })
            .collect();
        let node = Arc::new(PyFunctionNode {
            name,
            core: NodeCore::new(edges, metas, output_meta),
            ctx: ctx.clone().unbind(),
            tensor_inputs: inputs.iter().map(Option::is_some).collect(),
            tensor_outputs: out_tensors.iter().map(Option::is_some).collect(),
            saved: OnceLock::new(),
        });
        let dyn_node: Arc<dyn Node> = node.clone();
        base.as_super().get().link(&dyn_node);
        autograd::register_custom_node(&dyn_node);
        Some((node, dyn_node))
    } else {
        None
    };

    let mut results: Vec<Py<PyAny>> = Vec::with_capacity(outs.len());
    for (i, (obj, t)) in outs.iter().zip(&out_tensors).enumerate() {
        let Some(t) = t else {
            results.push(obj.clone().unbind());
            continue;
        };
        let differentiable = !is_non_diff(t) && t.dtype().is_differentiable();
        let is_input = input_ids.contains(&t.id());
        let edge = node
            .as_ref()
            .filter(|_| differentiable)
            .map(|(_, n)| Edge::new(n.clone(), i));
        let result = if is_dirty(t) {
            if let Some(edge) = edge {
                autograd::rebase_dirty(t, edge).py()?;
            }
            obj.clone().unbind()
        } else if is_input {
            // An input handed back unchanged: a fresh view with its own
            // history.
            let a = autograd::output_alias(t);
            if edge.is_some() {
                autograd::set_grad_fn(&a, edge);
            }
            wrap_any(py, a)?
        } else {
            if edge.is_some() {
                autograd::set_grad_fn(t, edge);
            }
            obj.clone().unbind()
        };
        results.push(result);
    }

    if let Some((node, dyn_node)) = &node {
        let weak = Arc::downgrade(dyn_node);
        let nid = autograd::node_id(dyn_node);
        let mut saved = Vec::new();
        if let Some(ts) = &to_save {
            for (j, o) in ts.bind(py).try_iter()?.enumerate() {
                let o = o?;
                if o.is_none() {
                    saved.push(None);
                    continue;
                }
                let Ok(t) = o.cast::<PyTensor>() else {
                    return Err(PyTypeError::new_err(format!(
                        "save_for_backward can only save variables, but argument {j} is of type {}",
                        crate::convert::type_name(&o)
                    )));
                };
                let t = &t.get().tensor();
                let own_output = out_tensors
                    .iter()
                    .position(|o| o.as_ref().is_some_and(|o| o.id() == t.id()))
                    .filter(|_| {
                        is_dirty(t) || autograd::grad_fn_edge(t).is_some_and(|e| e.node_id() == nid)
                    });
                saved.push(Some(match own_output {
                    Some(nr) => SavedTensor::output(t, nr, weak.clone(), &node.name).py()?,
                    None => SavedTensor::input(t).py()?,
                }));
            }
        }
        let _ = node.saved.set(saved);
        base.get().state.lock().to_save = None;
    }

    if is_tuple {
        Ok(PyTuple::new(py, results)?.into_any().unbind())
    } else {
        Ok(results.pop().unwrap_or_else(|| py.None()))
    }
}

/// `UndefinedGrad()(t)`: an alias of `t` whose backward passes an
/// undefined gradient upstream.
#[pyfunction]
fn _undefined_grad(t: PyRef<'_, PyTensor>) -> PyResult<TensorOut> {
    Ok(TensorOut(autograd::undefined_grad(&t.tensor()).py()?))
}

/// `DelayedError(msg)(*tensors)`: aliases whose backward raises `msg`.
#[pyfunction]
fn _delayed_error(
    msg: &str,
    tensors: Vec<Option<PyRef<'_, PyTensor>>>,
) -> PyResult<Vec<Option<TensorOut>>> {
    let ts: Vec<Option<Tensor>> = tensors
        .iter()
        .map(|t| t.as_ref().map(|t| t.tensor()))
        .collect();
    Ok(autograd::delayed_error(msg, &ts)
        .py()?
        .into_iter()
        .map(|t| t.map(TensorOut))
        .collect())
}

/// Returns True if anomaly detection is on in this thread (see
/// :class:`ferrograd.autograd.detect_anomaly` and
/// :func:`ferrograd.set_anomaly_enabled`).
///
/// Example:
///     >>> ferrograd.is_anomaly_enabled()
///     False
#[pyfunction]
fn is_anomaly_enabled() -> bool {
    autograd::is_anomaly_enabled()
}

/// Returns True if anomaly detection, when on, also checks every backward
/// result for NaN (the ``check_nan`` flag of
/// :func:`ferrograd.set_anomaly_enabled`).
///
/// Example:
///     >>> ferrograd.is_anomaly_check_nan_enabled()
///     True
#[pyfunction]
fn is_anomaly_check_nan_enabled() -> bool {
    autograd::is_anomaly_check_nan_enabled()
}

/// Switches anomaly detection on or off for this thread.
///
/// While it is on, each forward operation records the Python stack that made
/// it, so an error in the backward pass names the forward line at fault; with
/// ``check_nan``, a backward function that returns NaN raises an error. It
/// slows autograd down: prefer the scoped
/// :class:`ferrograd.autograd.detect_anomaly` context manager.
///
/// Args:
///     enabled (bool): whether anomaly detection is on.
///     check_nan (bool): whether backward results are checked for NaN.
///         Default: True.
///
/// Example:
///     >>> ferrograd.set_anomaly_enabled(True)
///     >>> ferrograd.is_anomaly_enabled()
///     True
///     >>> ferrograd.set_anomaly_enabled(False)
#[pyfunction]
#[pyo3(signature = (enabled, check_nan = true))]
fn set_anomaly_enabled(enabled: bool, check_nan: bool) {
    autograd::set_anomaly_enabled(enabled, check_nan)
}

/// A Python stack captured cheaply: the code object and line of each
/// frame, innermost first. Source lines are looked up only when a report
/// is rendered.
struct PyStack(Vec<(Py<PyAny>, i64)>);

impl autograd::CapturedStack for PyStack {
    fn render(&self) -> String {
        Python::attach(|py| -> PyResult<String> {
            let linecache = py.import(intern!(py, "linecache"))?;
            let mut s = String::new();
            for (code, line) in self.0.iter().rev() {
                let code = code.bind(py);
                let file: String = code.getattr(intern!(py, "co_filename"))?.extract()?;
                let name: String = code.getattr(intern!(py, "co_name"))?.extract()?;
                s.push_str(&format!("  File \"{file}\", line {line}, in {name}\n"));
                let text: String = linecache
                    .call_method1(intern!(py, "getline"), (&file, *line))?
                    .extract()?;
                if !text.trim().is_empty() {
                    s.push_str(&format!("    {}\n", text.trim()));
                }
            }
            Ok(s)
        })
        .unwrap_or_default()
    }
}

/// The Python stack of the current call (anomaly mode's forward stack).
fn python_stack() -> Option<Box<dyn autograd::CapturedStack>> {
    Python::attach(|py| -> PyResult<PyStack> {
        let mut frames = Vec::new();
        let mut f = py
            .import(intern!(py, "sys"))?
            .getattr(intern!(py, "_getframe"))?
            .call0()?;
        while !f.is_none() {
            let line: i64 = f.getattr(intern!(py, "f_lineno"))?.extract().unwrap_or(0);
            frames.push((f.getattr(intern!(py, "f_code"))?.unbind(), line));
            f = f.getattr(intern!(py, "f_back"))?;
        }
        Ok(PyStack(frames))
    })
    .ok()
    .map(|s| Box::new(s) as Box<dyn autograd::CapturedStack>)
}

/// Anomaly reports become `UserWarning`s of the thread that called
/// backward.
fn warn_user(msg: &str) {
    Python::attach(|py| {
        let category = pyo3::exceptions::PyUserWarning::type_object(py);
        let Ok(text) = std::ffi::CString::new(msg.replace('\0', " ")) else {
            return;
        };
        if let Err(e) = PyErr::warn(py, &category, &text, 1) {
            e.write_unraisable(py, None);
        }
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyFunctionBase>()?;
    m.add_function(wrap_pyfunction!(_function_apply, m)?)?;
    m.add_function(wrap_pyfunction!(_undefined_grad, m)?)?;
    m.add_function(wrap_pyfunction!(_delayed_error, m)?)?;
    m.add_function(wrap_pyfunction!(is_anomaly_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_anomaly_check_nan_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(set_anomaly_enabled, m)?)?;
    crate::autograd::set_owned_object(|py, node| {
        let f = node.as_any().downcast_ref::<PyFunctionNode>()?;
        Some(f.ctx(py))
    });
    autograd::set_stack_capture(Some(Box::new(python_stack)));
    autograd::set_warning_handler(Some(Box::new(warn_user)));
    Ok(())
}
