//! Capture and replay behind `ferrograd.compile` (the guards, the cache
//! and the graph breaks are in `ferrograd/_compile.py`): `_capture_begin`
//! and `_capture_end` around one eager call of the function, and
//! `_Program.replay`, which runs the recorded operations with the GIL
//! released.

use crate::errors::{detached, IntoPyResult};
use crate::linalg::tensor_only;
use crate::tensor::{py_helper, PyTensor, TensorOut};
use ferrograd::compile::{self, Captured, Program};
use ferrograd::Tensor;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyComplex, PyDict, PyFloat, PyInt, PyList, PyModule, PyString, PyTuple};
use std::sync::Arc;

mod memo;

fn tensors(seq: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Tensor>> {
    seq.try_iter()?
        .map(|o| tensor_only(&o?, "compile", what))
        .collect()
}

/// A recorded program (see `ferrograd::compile::Program`).
#[pyclass(name = "_Program", module = "ferrograd._core", frozen)]
pub struct PyProgram(Arc<Program>);

#[pymethods]
impl PyProgram {
    /// Runs the recorded operations over `inputs` (GIL released) and
    /// returns the results as a list, or `None` (having changed nothing)
    /// when the function would take another course on these inputs (a
    /// value guard or `.grad` check fails).
    fn replay(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Vec<TensorOut>>> {
        self.run(py, tensors(inputs, "inputs")?)
    }

    /// The recorded operations' names, in order.
    fn operations(&self) -> Vec<&'static str> {
        self.0.operations()
    }

    /// The operations of the backward program its replays in grad mode
    /// run as one node, once a replay derived it; `None` before that or
    /// when it replays operation by operation.
    fn backward_operations(&self) -> Option<Vec<&'static str>> {
        self.0.backward_operations()
    }

    /// Why its replays in grad mode record a node per operation, once a
    /// replay found out; `None` otherwise.
    fn backward_fallback(&self) -> Option<String> {
        self.0.backward_fallback()
    }

    /// Identities of the tensors the program reads by reference (compare
    /// with `_tensor_id`).
    fn constant_ids(&self) -> Vec<usize> {
        self.0
            .constants()
            .iter()
            .filter(|t| !t.is_wrapped_number())
            .map(Tensor::id)
            .collect()
    }

    #[getter]
    fn num_inputs(&self) -> usize {
        self.0.num_inputs()
    }

    #[getter]
    fn num_outputs(&self) -> usize {
        self.0.num_outputs()
    }
}

impl PyProgram {
    fn run(&self, py: Python<'_>, ins: Vec<Tensor>) -> PyResult<Option<Vec<TensorOut>>> {
        Self::run_program(py, &self.0, ins)
    }

    /// Replays `p` over `ins` with the GIL released; `None` (having
    /// changed nothing) when its guards do not hold.
    fn run_program(
        py: Python<'_>,
        p: &Arc<Program>,
        ins: Vec<Tensor>,
    ) -> PyResult<Option<Vec<TensorOut>>> {
        if !p.holds(&ins) {
            return Ok(None);
        }
        let p = p.clone();
        let outs = detached(py, move || p.try_replay(&ins)).py()?;
        Ok(outs.map(|o| o.into_iter().map(TensorOut).collect()))
    }
}

/// Whether `v` is `None`, or a `bool`, `int`, `float`, `complex` or `str`
/// of exactly that type.
fn plain(v: &Bound<'_, PyAny>) -> bool {
    v.is_none()
        || v.is_exact_instance_of::<PyBool>()
        || v.is_exact_instance_of::<PyInt>()
        || v.is_exact_instance_of::<PyFloat>()
        || v.is_exact_instance_of::<PyString>()
        || v.is_exact_instance_of::<PyComplex>()
}

/// The guard of a plain value (`None`, or a `bool`, `int`, `float`,
/// `complex` or `str` of exactly that type): `(type, value)`; `None` for
/// any other value.
fn plain_key<'py>(v: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    if !plain(v) {
        return Ok(None);
    }
    Ok(Some(
        PyTuple::new(v.py(), [v.get_type().into_any(), v.clone()])?.into_any(),
    ))
}

/// The classes the guards treat specially: `nn.Module` (guarded by the
/// caller, through the modules list) and `optim.Optimizer`.
struct Kinds<'a, 'py> {
    module: &'a Bound<'py, PyAny>,
    optimizer: &'a Bound<'py, PyAny>,
    mods: &'a Bound<'py, PyList>,
}

/// The guard of a value: a tensor by its identity (`("T", id)`), a plain
/// value by [`plain_key`], a Python module by its identity (`("O", id)`),
/// a `nn.Module` as `"M"` (appended to `kinds.mods`, guarded by the
/// caller), an optimizer by [`optimizer_key`], anything else by
/// `fallback(v)`.
fn value_key<'py>(
    v: &Bound<'py, PyAny>,
    fallback: &Bound<'py, PyAny>,
    kinds: Option<&Kinds<'_, 'py>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = v.py();
    if let Ok(t) = v.cast::<PyTensor>() {
        return Ok(("T", t.get().tensor().id()).into_pyobject(py)?.into_any());
    }
    if let Some(k) = plain_key(v)? {
        return Ok(k);
    }
    if v.is_exact_instance_of::<PyModule>() {
        return Ok(("O", v.as_ptr() as usize).into_pyobject(py)?.into_any());
    }
    if let Some(kinds) = kinds {
        if v.is_instance(kinds.module)? {
            kinds.mods.append(v)?;
            return Ok(PyString::intern(py, "M").into_any());
        }
        if v.is_instance(kinds.optimizer)? {
            return Ok(optimizer_key(v, fallback)?.into_any());
        }
    }
    fallback.call1((v,))
}

/// The Python objects the guards of every compiled function use, found
/// once.
#[derive(Clone, Copy)]
enum Helper {
    /// `ferrograd._compile._value_key`, the guard of other values.
    ValueKey,
    /// `nn.Module`.
    Module,
    /// `optim.Optimizer`.
    Optimizer,
    /// The module-structure epoch (a one-element list).
    StructureEpoch,
    /// `ferrograd._compile._MISSING`, the mark of a call left to Python.
    Missing,
    /// The pytree `TreeSpec`.
    TreeSpec,
    /// The global optimizer pre-step hooks (a dict, never rebound).
    GlobalPreHooks,
    /// The global optimizer post-step hooks (a dict, never rebound).
    GlobalPostHooks,
    /// `types.FunctionType`.
    FunctionType,
    /// `ferrograd._compile._user_reads`, the names a function of the
    /// user's reads.
    UserReads,
}

fn helper(py: Python<'_>, which: Helper) -> PyResult<Bound<'_, PyAny>> {
    static CELLS: [PyOnceLock<Py<PyAny>>; 10] = [const { PyOnceLock::new() }; 10];
    let (module, name) = match which {
        Helper::ValueKey => ("ferrograd._compile", "_value_key"),
        Helper::Module => ("ferrograd.nn.modules.module", "Module"),
        Helper::Optimizer => ("ferrograd.optim.optimizer", "Optimizer"),
        Helper::StructureEpoch => ("ferrograd.nn.modules._state_dict", "STRUCTURE_EPOCH"),
        Helper::Missing => ("ferrograd._compile", "_MISSING"),
        Helper::TreeSpec => ("ferrograd.utils._pytree", "TreeSpec"),
        Helper::GlobalPreHooks => ("ferrograd.optim.optimizer", "_global_optimizer_pre_hooks"),
        Helper::GlobalPostHooks => ("ferrograd.optim.optimizer", "_global_optimizer_post_hooks"),
        Helper::FunctionType => ("types", "FunctionType"),
        Helper::UserReads => ("ferrograd._compile", "_user_reads"),
    };
    py_helper(py, &CELLS[which as usize], module, name)
}

/// The guard key of a call (see `_Compiled.key`): grad mode, inference
/// mode and CPU autocast as one number, the default dtype's name, then a
/// key per leaf and per value the function names (`refs`). A tensor leaf
/// is keyed by `(shape, strides, dtype name, requires_grad, is_leaf, i)` with `i`
/// the position of the first leaf that is the same object; other values
/// as [`value_key`] keys them (the `nn.Module`s among them are appended
/// to `kinds.mods`, for the caller's own guards on them).
fn guard_key<'py>(
    leaves: &Bound<'py, PyList>,
    refs: &Bound<'py, PyList>,
    fallback: &Bound<'py, PyAny>,
    kinds: &Kinds<'_, 'py>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = leaves.py();
    let mut out = Vec::with_capacity(leaves.len() + refs.len() + 2);
    out.push(memo::modes().into_pyobject(py)?.into_any());
    out.push(PyString::intern(py, ferrograd::default_dtype().name()).into_any());
    let mut seen: Vec<(*mut pyo3::ffi::PyObject, usize)> = Vec::new();
    for (i, v) in leaves.iter().enumerate() {
        if let Ok(t) = v.cast::<PyTensor>() {
            let ptr = v.as_ptr();
            let first = match seen.iter().find(|(p, _)| *p == ptr) {
                Some(&(_, j)) => j,
                None => {
                    seen.push((ptr, i));
                    i
                }
            };
            let x = t.get().tensor();
            let key = (
                PyTuple::new(py, x.shape())?,
                PyTuple::new(py, x.strides())?,
                PyString::intern(py, x.dtype().name()),
                x.requires_grad(),
                x.is_leaf(),
                first,
            );
            out.push(key.into_pyobject(py)?.into_any());
        } else {
            out.push(value_key(&v, fallback, Some(kinds))?);
        }
    }
    for v in refs.iter() {
        out.push(value_key(&v, fallback, Some(kinds))?);
    }
    PyTuple::new(py, out)
}

/// At most this many functions of the user's have their own reads
/// guarded per call (see [`refs_of`]); others only by identity.
const MAX_FUNCTIONS: usize = 32;

/// Appends what a call of the Python function `f` may read besides its
/// arguments: the value of each global of `names` (`None` where absent),
/// of each closure cell (`None` where empty), and its default values.
fn reads_of<'py>(
    f: &Bound<'py, PyAny>,
    names: &Bound<'py, PyAny>,
    out: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<()> {
    let py = f.py();
    let none = py.None().into_bound(py);
    let globals = f.getattr(pyo3::intern!(py, "__globals__"))?;
    let globals = dict(&globals, "a function's globals")?;
    for name in names.try_iter()? {
        out.push(globals.get_item(name?)?.unwrap_or_else(|| none.clone()));
    }
    let cells = f.getattr(pyo3::intern!(py, "__closure__"))?;
    if let Ok(cells) = cells.cast::<PyTuple>() {
        let contents = pyo3::intern!(py, "cell_contents");
        for cell in cells.iter() {
            // An empty cell (a variable not yet assigned) raises ValueError.
            out.push(cell.getattr(contents).unwrap_or_else(|_| none.clone()));
        }
    }
    let defaults = f.getattr(pyo3::intern!(py, "__defaults__"))?;
    if let Ok(d) = defaults.cast::<PyTuple>() {
        out.extend(d.iter());
    }
    let kwdefaults = f.getattr(pyo3::intern!(py, "__kwdefaults__"))?;
    if let Ok(d) = kwdefaults.cast::<PyDict>() {
        out.extend(d.values().iter());
    }
    Ok(())
}

/// What a call of the compiled function `comp` (a `_Compiled`) may read
/// besides its arguments (see `_Refs`): the bound method's or callable
/// object's own object; the reads of its function ([`reads_of`]); the
/// reads of each function of the user's among those values, and among
/// theirs (`_user_reads` gives its names; each function once, at most
/// [`MAX_FUNCTIONS`]); and the module whose forward it is. The key and
/// the memo's trail are both made from this list.
pub(super) fn refs_of<'py>(comp: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let py = comp.py();
    let refs = comp.getattr(pyo3::intern!(py, "refs"))?;
    let mut out = Vec::new();
    let self_obj = refs.getattr(pyo3::intern!(py, "self_obj"))?;
    if !self_obj.is_none() {
        out.push(self_obj);
    }
    let func = refs.getattr(pyo3::intern!(py, "func"))?;
    let mut seen = vec![func.as_ptr()];
    if !func.is_none() {
        reads_of(&func, &refs.getattr(pyo3::intern!(py, "names"))?, &mut out)?;
    }
    let function = helper(py, Helper::FunctionType)?;
    let mut at = 0;
    while at < out.len() && seen.len() <= MAX_FUNCTIONS {
        let v = out[at].clone();
        at += 1;
        if !v.get_type().is(&function) || seen.contains(&v.as_ptr()) {
            continue;
        }
        seen.push(v.as_ptr());
        let names = helper(py, Helper::UserReads)?.call1((&v,))?;
        if !names.is_none() {
            reads_of(&v, &names, &mut out)?;
        }
    }
    let owner = comp.getattr(pyo3::intern!(py, "owner"))?;
    if !owner.is_none() && !out.iter().any(|r| r.is(&owner)) {
        out.push(owner);
    }
    Ok(out)
}

/// The values a call of the compiled function `comp` (a `_Compiled`) may
/// read besides its arguments, as a list (see `refs_of`): its object, the
/// globals, closure cells and defaults of its function and of the user's
/// functions among those, and the module whose forward it is.
#[pyfunction]
fn _call_refs<'py>(comp: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    PyList::new(comp.py(), refs_of(comp)?)
}

/// The guards of a call of the compiled function `comp` with `leaves`:
/// `(key, modules key)` (see `_Compiled.key`). The modules' own guards
/// are `comp.mods_key`'s while no module structure or tensor handle has
/// changed and the same modules are named, else `comp._modules_key`'s.
#[pyfunction]
fn _call_key<'py>(
    comp: &Bound<'py, PyAny>,
    leaves: &Bound<'py, PyList>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = comp.py();
    let mods = PyList::empty(py);
    let (module, optimizer) = (helper(py, Helper::Module)?, helper(py, Helper::Optimizer)?);
    let kinds = Kinds {
        module: &module,
        optimizer: &optimizer,
        mods: &mods,
    };
    let key = guard_key(
        leaves,
        &_call_refs(comp)?,
        &helper(py, Helper::ValueKey)?,
        &kinds,
    )?;
    let ids = mods.iter().map(|m| m.as_ptr() as usize);
    let epoch = (
        helper(py, Helper::StructureEpoch)?.get_item(0)?,
        _handle_epoch(),
        PyTuple::new(py, ids)?,
    )
        .into_pyobject(py)?;
    let cached = comp.getattr(pyo3::intern!(py, "mods_key"))?;
    let mods_key = match cached.cast::<PyTuple>() {
        Ok(c) if c.len() == 2 && c.get_item(0)?.eq(&epoch)? => c.get_item(1)?,
        _ => comp.call_method1(pyo3::intern!(py, "_modules_key"), (mods,))?,
    };
    PyTuple::new(py, [key.into_any(), mods_key])
}

/// A call of the compiled function `comp` with the tensors `args` and no
/// keyword arguments, made without Python frames where a kept program
/// fits: the memo's check (Note [Checking a call against the last one])
/// or the guard key and the cache lookup, then the replay (GIL released).
/// `_MISSING` when no program fits (a new capture, a cut function, an
/// eager entry, a value that cannot be keyed): the caller takes the full
/// path, which finds the same.
#[pyfunction]
fn _compiled_call<'py>(
    comp: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = comp.py();
    let missing = helper(py, Helper::Missing)?;
    if compile::capturing() {
        return Ok(missing);
    }
    let args: Vec<_> = args.iter().collect();
    let mut ins = Vec::with_capacity(args.len());
    for a in &args {
        let Ok(t) = a.cast_exact::<PyTensor>() else {
            return Ok(missing);
        };
        ins.push(t.get().tensor().clone());
    }
    if let Some(out) = memo::try_memo(comp, &args, &ins)? {
        return Ok(out);
    }
    let leaves = PyList::new(py, &args)?;
    leaves.append(pyo3::intern!(py, "(tensors only)"))?;
    let Some(key) = keyable(py, _call_key(comp, &leaves))? else {
        return Ok(missing);
    };
    let cache = comp.getattr(pyo3::intern!(py, "cache"))?;
    let cache = dict(&cache, "the program cache")?;
    let Some(Some(entry)) = keyable(py, cache.get_item(key))? else {
        return Ok(missing);
    };
    let Ok(entry) = entry.cast::<PyList>() else {
        return Ok(missing);
    };
    let mut snapshot = memo::Snapshot::take(comp, &args, &ins)?;
    for e in entry.iter() {
        let prog = e.getattr(pyo3::intern!(py, "program"))?;
        let prog = &prog.cast::<PyProgram>()?.get().0;
        let Some(outs) = PyProgram::run_program(py, prog, ins.clone())? else {
            continue;
        };
        let single = e.getattr(pyo3::intern!(py, "single"))?.is_truthy()?;
        if let Some(s) = snapshot.take() {
            s.keep(comp, &e, prog, single)?;
        }
        return result(comp, &e, single, outs);
    }
    Ok(missing)
}

/// `r`'s value, or `None` for a TypeError (a value that cannot be keyed or
/// hashed: the full path's to report).
fn keyable<T>(py: Python<'_>, r: PyResult<T>) -> PyResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The result of a call of `comp` whose replay of `entry`'s program gave
/// `outs` (`single`: the result is the one tensor).
fn result<'py>(
    comp: &Bound<'py, PyAny>,
    entry: &Bound<'py, PyAny>,
    single: bool,
    mut outs: Vec<TensorOut>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = comp.py();
    if single && outs.len() == 1 {
        if let Some(out) = outs.pop() {
            return Ok(out.into_pyobject(py)?.into_any());
        }
    }
    comp.call_method1(pyo3::intern!(py, "_result"), (entry, outs))
}

fn dict<'a, 'py>(v: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyDict>> {
    v.cast::<PyDict>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!("compile: {what} is not a dict"))
    })
}

/// The guard key of an optimizer (see `_optimizer_key`): every group's
/// hyper-parameters (name, type, value) and parameters (identity,
/// `requires_grad`), and every parameter's state entries, flattened into
/// one tuple with the counts that keep it unambiguous.
#[pyfunction]
fn _optimizer_key<'py>(
    opt: &Bound<'py, PyAny>,
    fallback: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    optimizer_key(opt, fallback)
}

fn optimizer_key<'py>(
    opt: &Bound<'py, PyAny>,
    fallback: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = opt.py();
    let mut key: Vec<Bound<'py, PyAny>> =
        vec![(opt.as_ptr() as usize).into_pyobject(py)?.into_any()];
    let int = |key: &mut Vec<Bound<'py, PyAny>>, n: usize| -> PyResult<()> {
        key.push(n.into_pyobject(py)?.into_any());
        Ok(())
    };
    for g in opt.getattr("param_groups")?.try_iter()? {
        let g = g?;
        let g = dict(&g, "a parameter group")?;
        int(&mut key, g.len())?;
        for (k, v) in g.iter() {
            let params =
                k.is_exact_instance_of::<PyString>() && k.cast::<PyString>()?.to_cow()? == "params";
            key.push(k);
            if params {
                let start = key.len();
                int(&mut key, 0)?;
                let mut n = 0usize;
                for p in v.try_iter()? {
                    let t = tensor_only(&p?, "compile", "a parameter")?;
                    int(&mut key, t.id())?;
                    key.push(PyBool::new(py, t.requires_grad()).to_owned().into_any());
                    n += 1;
                }
                key[start] = n.into_pyobject(py)?.into_any();
            } else if plain(&v) {
                key.push(v.get_type().into_any());
                key.push(v);
            } else {
                key.push(fallback.call1((&v,))?);
            }
        }
    }
    int(&mut key, step_hooks(opt)?)?;
    let state = opt.getattr("state")?;
    let state = dict(&state, "an optimizer's state")?;
    int(&mut key, state.len())?;
    for (p, st) in state.iter() {
        int(&mut key, tensor_only(&p, "compile", "a parameter")?.id())?;
        let st = dict(&st, "a parameter's state")?;
        int(&mut key, st.len())?;
        for (k, v) in st.iter() {
            key.push(k);
            key.push(value_key(&v, fallback, None)?);
        }
    }
    PyTuple::new(py, key)
}

/// How many step hooks apply to the optimizer `opt`: its own pre- and
/// post-step hooks and the global ones (a call with any runs eagerly, so
/// the guards tell it from a call without).
fn step_hooks(opt: &Bound<'_, PyAny>) -> PyResult<usize> {
    let py = opt.py();
    Ok(opt
        .getattr(pyo3::intern!(py, "_optimizer_step_pre_hooks"))?
        .len()?
        + opt
            .getattr(pyo3::intern!(py, "_optimizer_step_post_hooks"))?
            .len()?
        + helper(py, Helper::GlobalPreHooks)?.len()?
        + helper(py, Helper::GlobalPostHooks)?.len()?)
}

/// Starts recording on this thread, with `inputs` as the program's inputs.
#[pyfunction]
fn _capture_begin(inputs: &Bound<'_, PyAny>) -> PyResult<()> {
    compile::begin(&tensors(inputs, "inputs")?).py()
}

/// Ends this thread's recording with `outputs` as the results: the
/// program, or `None` and why the function cannot be replayed.
#[pyfunction]
fn _capture_end(outputs: &Bound<'_, PyAny>) -> PyResult<(Option<PyProgram>, Option<String>)> {
    let outs = match tensors(outputs, "outputs") {
        Ok(o) => o,
        Err(e) => {
            compile::abort();
            return Err(e);
        }
    };
    Ok(match compile::end(&outs) {
        Captured::Program(mut p) => {
            p.fuse();
            p.compile_backward();
            (Some(PyProgram(Arc::new(p))), None)
        }
        Captured::Broken(why) => (None, Some(why)),
    })
}

/// Abandons this thread's recording, if any.
#[pyfunction]
fn _capture_abort() {
    compile::abort();
}

/// Marks this thread's recording as not repeatable, with `why` (a no-op
/// when not recording).
#[pyfunction]
fn _capture_break(why: &str) {
    compile::break_capture(why);
}

/// Whether this thread's recording is broken (what has run so far
/// cannot be replayed).
#[pyfunction]
fn _capture_broken() -> bool {
    compile::broken().is_some()
}

/// Whether this thread is recording.
#[pyfunction]
fn _capturing() -> bool {
    compile::capturing()
}

/// The identity of the tensor `t` stands for now (it changes when
/// `resize_` or `set_` give the object new memory).
#[pyfunction]
fn _tensor_id(t: &Bound<'_, PyTensor>) -> usize {
    t.get().tensor().id()
}

/// How many times a tensor object has been given a new handle (`resize_`,
/// `set_`) in this process.
#[pyfunction]
fn _handle_epoch() -> u64 {
    crate::tensor::HANDLE_EPOCH.load(std::sync::atomic::Ordering::Relaxed) + compile::guard_epoch()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_handle_epoch, m)?)?;
    m.add_class::<PyProgram>()?;
    m.add_class::<memo::CallMemo>()?;
    m.add_function(wrap_pyfunction!(_capture_begin, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_end, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_abort, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_break, m)?)?;
    m.add_function(wrap_pyfunction!(_capturing, m)?)?;
    m.add_function(wrap_pyfunction!(_capture_broken, m)?)?;
    m.add_function(wrap_pyfunction!(_tensor_id, m)?)?;
    m.add_function(wrap_pyfunction!(_call_refs, m)?)?;
    m.add_function(wrap_pyfunction!(_call_key, m)?)?;
    m.add_function(wrap_pyfunction!(_compiled_call, m)?)?;
    m.add_function(wrap_pyfunction!(_optimizer_key, m)?)?;
    Ok(())
}
