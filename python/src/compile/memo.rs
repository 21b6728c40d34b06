//! The memo of a compiled function's last replayed call (Note [Checking
//! a call against the last one]).

use super::{dict, helper, plain, Helper, PyProgram};
use crate::tensor::PyTensor;
use ferrograd::compile::Program;
use ferrograd::{DType, Tensor};
use pyo3::gc::{PyTraverseError, PyVisit};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyList, PyModule, PySet, PyTuple, PyType};
use std::sync::{Arc, Mutex};

// Note [Checking a call against the last one]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A call's guard key is a tuple of Python objects: building it, hashing
// it and comparing it with the cached one costs microseconds, most of a
// small compiled step's time under the GIL. Most calls of a service's
// step see exactly what the previous call saw: the same tensor layouts,
// and the same objects behind every name the function reads. So the call
// that last replayed a program leaves a memo: the modes, the layouts of
// its tensor arguments, and a *trail* of the objects the key was built
// from (the values of the names, each optimizer's groups, their entries
// and its state, with the counts of each container), held by reference.
// A later call walks the same way and compares object by object; when
// all are the same objects, the key would be the same, and the memo's
// program runs without building it.
//
// Identity pins a key only for what the key takes by identity or by an
// unchangeable value: tensors (by identity; a new handle moves the
// handle epoch), plain values, tuples of them, Python modules, classes,
// functions (what a function of the user's reads is on the list itself),
// objects keyed by identity (without a `__dict__` or `__slots__` of
// settings), and `nn.Module`s (whose own guards follow the structure and
// handle epochs, checked too, unless those guards read lists, dicts or
// objects: `volatile`). An optimizer is walked into; a list, dict,
// frozenset, tree spec, tuple of anything else, array or object with
// settings is keyed by its contents, so a function reading one leaves no
// memo. Captures, resets
// and a failed value guard of the program fall back to the full path,
// which leaves a new memo.

/// One step of a trail: an object (compared by identity) or a count.
enum Mark {
    Obj(Py<PyAny>),
    Len(usize),
}

/// The layout of a tensor argument and the position of the first
/// argument that is the same object.
struct Leaf {
    shape: Vec<usize>,
    strides: Vec<usize>,
    dtype: DType,
    requires_grad: bool,
    is_leaf: bool,
    first: usize,
}

struct Memo {
    modes: u8,
    dtype: DType,
    structure: i64,
    handles: u64,
    leaves: Vec<Leaf>,
    trail: Vec<Mark>,
    entry: Py<PyAny>,
    program: Arc<Program>,
    single: bool,
}

/// The memo of a compiled function (`_Compiled.memo`); empty until a
/// call replays a program, emptied by `clear`.
#[pyclass(name = "_CallMemo", module = "ferrograd._core", frozen)]
#[derive(Default)]
pub struct CallMemo(Mutex<Option<Arc<Memo>>>);

#[pymethods]
impl CallMemo {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Forgets the memo.
    fn clear(&self) {
        *lock(&self.0) = None;
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Ok(g) = self.0.try_lock() else {
            return Ok(());
        };
        if let Some(m) = g.as_ref() {
            for mark in &m.trail {
                if let Mark::Obj(o) = mark {
                    visit.call(o)?;
                }
            }
            visit.call(&m.entry)?;
        }
        Ok(())
    }

    fn __clear__(&self) {
        self.clear();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The grad, inference and autocast modes, and whether saved-tensor hooks
/// are active, as one number (as the key has them).
pub(super) fn modes() -> u8 {
    u8::from(ferrograd::autograd::is_grad_enabled())
        | u8::from(ferrograd::autograd::is_inference_mode_enabled()) << 1
        | u8::from(crate::autocast::_autocast_is_enabled()) << 2
        | u8::from(ferrograd::autograd::current_saved_tensors_hooks().is_some()) << 3
}

fn epochs(py: Python<'_>) -> PyResult<(i64, u64)> {
    let structure = helper(py, Helper::StructureEpoch)?.get_item(0)?.extract()?;
    Ok((structure, super::_handle_epoch()))
}

/// Receives a trail: records it, or compares it with a recorded one.
trait Visit<'py> {
    /// False: stop (a difference).
    fn obj(&mut self, o: &Bound<'py, PyAny>) -> bool;
    fn len(&mut self, n: usize) -> bool;
}

struct Record(Vec<Mark>);

impl<'py> Visit<'py> for Record {
    fn obj(&mut self, o: &Bound<'py, PyAny>) -> bool {
        self.0.push(Mark::Obj(o.clone().unbind()));
        true
    }
    fn len(&mut self, n: usize) -> bool {
        self.0.push(Mark::Len(n));
        true
    }
}

struct Compare<'a>(std::slice::Iter<'a, Mark>);

impl<'py> Visit<'py> for Compare<'_> {
    fn obj(&mut self, o: &Bound<'py, PyAny>) -> bool {
        matches!(self.0.next(), Some(Mark::Obj(m)) if m.as_ptr() == o.as_ptr())
    }
    fn len(&mut self, n: usize) -> bool {
        matches!(self.0.next(), Some(Mark::Len(m)) if *m == n)
    }
}

/// How the guards key `v`: `Some(true)` by something its identity pins,
/// `Some(false)` an optimizer (walked into), `None` by contents that may
/// change under the same object.
fn pinned(v: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
    let py = v.py();
    if v.cast::<PyTensor>().is_ok() || plain(v) || v.is_exact_instance_of::<PyModule>() {
        return Ok(Some(true));
    }
    if let Ok(t) = v.cast_exact::<PyTuple>() {
        let all = t.iter().all(|x| plain(&x));
        return Ok(all.then_some(true));
    }
    if v.is_instance(&helper(py, Helper::Optimizer)?)? {
        return Ok(Some(false));
    }
    if v.is_instance(&helper(py, Helper::Module)?)? {
        return Ok(Some(true));
    }
    let contents = v.cast::<PyTuple>().is_ok()
        || v.cast::<PyList>().is_ok()
        || v.cast::<PyDict>().is_ok()
        || v.cast::<PyFrozenSet>().is_ok()
        || v.cast::<PySet>().is_ok()
        || v.is_instance(&helper(py, Helper::TreeSpec)?)?
        || (v.cast::<PyType>().is_err()
            && !v.get_type().is(&helper(py, Helper::FunctionType)?)
            && (v.hasattr(pyo3::intern!(py, "__dict__"))?
                || v.get_type().hasattr(pyo3::intern!(py, "__slots__"))?
                || v.hasattr(pyo3::intern!(py, "__array_interface__"))?));
    Ok((!contents).then_some(true))
}

/// Walks `v` (a value the key reads) into `out`: the object, and for an
/// optimizer what its key reads. False when `v`'s key is not pinned by
/// the trail or `out` stopped.
fn walk_value<'py>(v: &Bound<'py, PyAny>, out: &mut dyn Visit<'py>) -> PyResult<bool> {
    if !out.obj(v) {
        return Ok(false);
    }
    match pinned(v)? {
        Some(true) => Ok(true),
        Some(false) => walk_optimizer(v, out),
        None => Ok(false),
    }
}

/// Walks what an optimizer's key reads (`optimizer_key`): its group list,
/// each group's entries (and the parameters), its state's entries.
fn walk_optimizer<'py>(opt: &Bound<'py, PyAny>, out: &mut dyn Visit<'py>) -> PyResult<bool> {
    let py = opt.py();
    let groups = opt.getattr(pyo3::intern!(py, "param_groups"))?;
    let Ok(groups) = groups.cast_exact::<PyList>() else {
        return Ok(false);
    };
    if !out.obj(groups.as_any()) || !out.len(groups.len()) {
        return Ok(false);
    }
    for g in groups.iter() {
        let g = dict(&g, "a parameter group")?;
        if !out.obj(g.as_any()) || !out.len(g.len()) {
            return Ok(false);
        }
        for (k, v) in g.iter() {
            if !out.obj(&k) {
                return Ok(false);
            }
            if let Ok(params) = v.cast_exact::<PyList>() {
                if !out.obj(&v) || !out.len(params.len()) {
                    return Ok(false);
                }
                for p in params.iter() {
                    if !walk_value(&p, out)? {
                        return Ok(false);
                    }
                }
            } else if !walk_value(&v, out)? {
                return Ok(false);
            }
        }
    }
    if !out.len(super::step_hooks(opt)?) {
        return Ok(false);
    }
    let state = opt.getattr(pyo3::intern!(py, "state"))?;
    let state = dict(&state, "an optimizer's state")?;
    if !out.obj(state.as_any()) || !out.len(state.len()) {
        return Ok(false);
    }
    for (p, st) in state.iter() {
        let st = dict(&st, "a parameter's state")?;
        if !out.obj(&p) || !out.obj(st.as_any()) || !out.len(st.len()) {
            return Ok(false);
        }
        for (k, v) in st.iter() {
            if !out.obj(&k) || !walk_value(&v, out)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Walks what the key of a call of `comp` reads besides its arguments
/// (`refs_of`: the bound method's object, the globals, closure cells and
/// defaults its code and the user's functions among those read, the
/// module it is the forward of).
fn walk_refs<'py>(comp: &Bound<'py, PyAny>, out: &mut dyn Visit<'py>) -> PyResult<bool> {
    for v in super::refs_of(comp)? {
        if !walk_value(&v, out)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The position of the first argument that is the same object as `args[i]`.
fn first(args: &[Bound<'_, PyAny>], i: usize) -> usize {
    args[..i]
        .iter()
        .position(|a| a.as_ptr() == args[i].as_ptr())
        .unwrap_or(i)
}

/// Runs the memo's program when a call of `comp` with the tensors `args`
/// (`ins`, their tensors) sees what the memo's call saw: `Some(result)`,
/// or `None` for the full path (which also reports what cannot be read).
pub(super) fn try_memo<'py>(
    comp: &Bound<'py, PyAny>,
    args: &[Bound<'py, PyAny>],
    ins: &[Tensor],
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = comp.py();
    let Ok(Some(m)) = matching(comp, args, ins) else {
        return Ok(None);
    };
    let Some(outs) = PyProgram::run_program(py, &m.program, ins.to_vec())? else {
        return Ok(None);
    };
    super::result(comp, m.entry.bind(py), m.single, outs).map(Some)
}

/// The memo of `comp` when a call with `args` (`ins`) sees what its call saw.
fn matching<'py>(
    comp: &Bound<'py, PyAny>,
    args: &[Bound<'py, PyAny>],
    ins: &[Tensor],
) -> PyResult<Option<Arc<Memo>>> {
    let py = comp.py();
    let memo = comp.getattr(pyo3::intern!(py, "memo"))?;
    let Some(m) = lock(&memo.cast::<CallMemo>()?.get().0).clone() else {
        return Ok(None);
    };
    if m.modes != modes() || m.dtype != ferrograd::default_dtype() || m.leaves.len() != ins.len() {
        return Ok(None);
    }
    if (m.structure, m.handles) != epochs(py)? {
        return Ok(None);
    }
    for (i, (l, x)) in m.leaves.iter().zip(ins).enumerate() {
        if l.shape != x.shape()
            || l.strides != x.strides()
            || l.dtype != x.dtype()
            || l.requires_grad != x.requires_grad()
            || l.is_leaf != x.is_leaf()
            || l.first != first(args, i)
        {
            return Ok(None);
        }
    }
    let mut cmp = Compare(m.trail.iter());
    let same = walk_refs(comp, &mut cmp)? && cmp.0.next().is_none();
    Ok(same.then_some(m))
}

/// What a call of `comp` with the tensors `args` (`ins`, their tensors)
/// reads besides its arguments, taken before a replay (which may change
/// it), to become the memo when the replay runs.
pub(super) struct Snapshot {
    structure: i64,
    handles: u64,
    leaves: Vec<Leaf>,
    trail: Vec<Mark>,
}

impl Snapshot {
    /// `None` when the key reads something identity does not pin.
    pub(super) fn take<'py>(
        comp: &Bound<'py, PyAny>,
        args: &[Bound<'py, PyAny>],
        ins: &[Tensor],
    ) -> PyResult<Option<Snapshot>> {
        if comp
            .getattr(pyo3::intern!(comp.py(), "volatile"))?
            .is_truthy()?
        {
            return Ok(None); // a module's guards read contents that change in place
        }
        let mut trail = Record(Vec::new());
        if !walk_refs(comp, &mut trail)? {
            return Ok(None);
        }
        let (structure, handles) = epochs(comp.py())?;
        let leaves = ins
            .iter()
            .enumerate()
            .map(|(i, x)| Leaf {
                shape: x.shape().to_vec(),
                strides: x.strides().to_vec(),
                dtype: x.dtype(),
                requires_grad: x.requires_grad(),
                is_leaf: x.is_leaf(),
                first: first(args, i),
            })
            .collect();
        Ok(Some(Snapshot {
            structure,
            handles,
            leaves,
            trail: trail.0,
        }))
    }

    /// Makes this `comp`'s memo, with the program of `entry` that ran
    /// (`single`: its result is that one tensor).
    pub(super) fn keep(
        self,
        comp: &Bound<'_, PyAny>,
        entry: &Bound<'_, PyAny>,
        program: &Arc<Program>,
        single: bool,
    ) -> PyResult<()> {
        let memo = comp.getattr(pyo3::intern!(comp.py(), "memo"))?;
        *lock(&memo.cast::<CallMemo>()?.get().0) = Some(Arc::new(Memo {
            modes: modes(),
            dtype: ferrograd::default_dtype(),
            structure: self.structure,
            handles: self.handles,
            leaves: self.leaves,
            trail: self.trail,
            entry: entry.clone().unbind(),
            program: program.clone(),
            single,
        }));
        Ok(())
    }
}
