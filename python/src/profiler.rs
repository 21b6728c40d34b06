//! The profiler's recorder (`ferrograd::profiler`) for the Python modules
//! `autograd.profiler`, `autograd.profiler_util` and `profiler`: start and
//! stop a run, user ranges, the recorded events as typed records, and the
//! Python frames an op was called from (`with_stack`).

use crate::errors::IntoPyResult;
use ferrograd::profiler::{self, Event, EventKind, Profiler, ProfilerConfig, Recording, Span};
use ferrograd::DType;
use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::OnceLock;

/// The running profiler, if any (one per process).
static RUNNING: Mutex<Option<Profiler>> = Mutex::new(None);

/// Starts recording the calling thread and the backward work done for it.
#[pyfunction]
fn _profiler_start(
    py: Python<'_>,
    record_shapes: bool,
    profile_memory: bool,
    with_stack: bool,
) -> PyResult<()> {
    label_python_thread(py);
    if with_stack {
        package_dir(py);
        profiler::set_stack_provider(python_stack);
    }
    let mut running = RUNNING.lock();
    let p = Profiler::start(ProfilerConfig {
        record_shapes,
        profile_memory,
        with_stack,
    })
    .py()?;
    *running = Some(p);
    Ok(())
}

/// Stops the running profiler and returns what it recorded.
#[pyfunction]
fn _profiler_stop() -> PyResult<PyProfilerResult> {
    let p = RUNNING
        .lock()
        .take()
        .ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("the profiler is not running"))?;
    Ok(PyProfilerResult {
        recording: p.stop(),
    })
}

/// Whether the calling thread's work is being recorded.
#[pyfunction]
fn _profiler_enabled() -> bool {
    profiler::is_recording()
}

/// An open `record_function` range.
#[pyclass(name = "_RecordFunction", module = "ferrograd._core", frozen)]
struct PyRecordFunction {
    span: Mutex<Option<Span>>,
}

#[pymethods]
impl PyRecordFunction {
    /// Closes the range (once; later calls do nothing).
    fn end(&self) {
        drop(self.span.lock().take());
    }
}

/// Lists the calling Python thread under its `threading` name.
fn label_python_thread(py: Python<'_>) {
    let name = py
        .import("threading")
        .and_then(|t| t.call_method0("current_thread"))
        .and_then(|t| t.getattr("name"))
        .and_then(|n| n.extract::<String>());
    if let Ok(name) = name {
        profiler::set_thread_label(format!("{name} (python)"));
    }
}

/// Opens a user range on the calling thread (recorded only while the
/// thread is profiled).
#[pyfunction]
fn _record_function_enter(name: &str) -> PyRecordFunction {
    PyRecordFunction {
        span: Mutex::new(profiler::record_function(name)),
    }
}

/// The events of one profiler run.
#[pyclass(name = "_ProfilerResult", module = "ferrograd._core", frozen)]
struct PyProfilerResult {
    recording: Recording,
}

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::Op => "op",
        EventKind::Backward => "backward",
        EventKind::Evaluate => "evaluate",
        EventKind::UserRange => "user",
        EventKind::Memory => "memory",
    }
}

/// torch's C type names for `Input type`.
fn c_type_name(d: Option<DType>) -> &'static str {
    d.map_or("", DType::c_type_name)
}

/// One recorded event as the Python profiler reads it, with its place in
/// the nesting (`profiler::nest`): the one record that crosses the binding.
#[pyclass(name = "_ProfilerEvent", module = "ferrograd._core", frozen, get_all)]
struct PyProfilerEvent {
    /// The op, node or range name (`aten::mul`, `MulBackward0`, ...).
    name: String,
    /// `op`, `backward`, `evaluate`, `user` or `memory`.
    kind: &'static str,
    /// Start on the run's clock, in nanoseconds.
    start_ns: u64,
    /// End on the run's clock, in nanoseconds.
    end_ns: u64,
    /// The recording thread's id.
    thread: u64,
    /// Spans open on the thread when the event began.
    depth: u32,
    /// The backward node's sequence number (its forward op's too); -1 when none.
    sequence_nr: i64,
    /// For backward events: the thread of the forward op that recorded the node (0: none).
    fwd_thread: u64,
    /// The inputs' shapes, when shapes were recorded.
    input_shapes: Option<Vec<Vec<usize>>>,
    /// The inputs' C type names (`float`, `long int`, ...), when shapes were recorded.
    input_dtypes: Option<Vec<&'static str>>,
    /// The caller's frames, when stacks were recorded.
    stack: Option<Vec<String>>,
    /// Memory events: bytes allocated (positive) or freed (negative).
    bytes: i64,
    /// The index of the enclosing event in the run's list; -1 when none.
    parent: i64,
    /// Time not spent in children.
    self_ns: u64,
    /// Bytes allocated minus freed inside the event.
    cpu_memory_usage: i64,
    /// Bytes allocated minus freed inside the event, outside its children.
    self_cpu_memory_usage: i64,
}

impl PyProfilerEvent {
    fn new(e: &Event, n: &profiler::Nesting) -> PyProfilerEvent {
        let inputs = e.inputs.as_ref();
        PyProfilerEvent {
            name: e.label().into_owned(),
            kind: kind_name(e.kind),
            start_ns: e.start_ns,
            end_ns: e.end_ns,
            thread: e.thread,
            depth: e.depth,
            sequence_nr: e.sequence_nr.map_or(-1, |s| s as i64),
            fwd_thread: n.fwd_thread.unwrap_or(0),
            input_shapes: inputs.map(|i| i.iter().map(|i| i.shape.clone()).collect()),
            input_dtypes: inputs.map(|i| i.iter().map(|i| c_type_name(i.dtype)).collect()),
            stack: e.stack.clone(),
            bytes: e.bytes,
            parent: n.parent.map_or(-1, |p| p as i64),
            self_ns: n.self_ns,
            cpu_memory_usage: n.memory,
            self_cpu_memory_usage: n.self_memory,
        }
    }
}

#[pymethods]
impl PyProfilerResult {
    fn __len__(&self) -> usize {
        self.recording.events.len()
    }

    /// When the run started, in nanoseconds on the events' clock.
    fn trace_start_ns(&self) -> u64 {
        self.recording.start_ns
    }

    /// The recorded threads: `(id, name)` pairs.
    fn threads(&self) -> Vec<(u64, String)> {
        self.recording.threads.clone()
    }

    /// The events, ordered by thread, then start (outer first).
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let events = &self.recording.events;
        let nesting = profiler::nest(events);
        let list = PyList::empty(py);
        for (e, n) in events.iter().zip(&nesting) {
            list.append(Bound::new(py, PyProfilerEvent::new(e, n))?)?;
        }
        Ok(list)
    }
}

/// The directory of the `ferrograd` package, whose frames stacks leave out.
fn package_dir(py: Python<'_>) -> Option<&'static str> {
    static DIR: OnceLock<Option<String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let file: String = py
            .import("ferrograd")
            .ok()?
            .getattr("__file__")
            .ok()?
            .extract()
            .ok()?;
        let dir = std::path::Path::new(&file).parent()?;
        Some(format!("{}{}", dir.display(), std::path::MAIN_SEPARATOR))
    })
    .as_deref()
}

/// The calling Python frames, innermost first, as `file(line): function`,
/// leaving out ferrograd's own; `None` when this thread is not running
/// Python code (it does not hold the interpreter).
fn python_stack() -> Option<Vec<String>> {
    extern "C" {
        // Part of CPython's stable ABI.
        fn PyGILState_Check() -> std::os::raw::c_int;
    }
    // SAFETY: PyGILState_Check only reads the calling thread's state.
    if unsafe { PyGILState_Check() } != 1 {
        return None;
    }
    Python::attach(|py| frames(py).ok())
}

fn frames(py: Python<'_>) -> PyResult<Vec<String>> {
    let skip = package_dir(py).unwrap_or("\u{0}");
    let mut out = Vec::new();
    let mut frame = py.import("sys")?.getattr("_getframe")?.call1((0,))?;
    while !frame.is_none() {
        let code = frame.getattr("f_code")?;
        let file: String = code.getattr("co_filename")?.extract()?;
        if !file.starts_with(skip) {
            let line: i64 = frame.getattr("f_lineno")?.extract().unwrap_or(0);
            let name: String = code.getattr("co_name")?.extract()?;
            out.push(format!("{file}({line}): {name}"));
        }
        frame = frame.getattr("f_back")?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyProfilerResult>()?;
    m.add_class::<PyProfilerEvent>()?;
    m.add_class::<PyRecordFunction>()?;
    m.add_function(wrap_pyfunction!(_profiler_start, m)?)?;
    m.add_function(wrap_pyfunction!(_profiler_stop, m)?)?;
    m.add_function(wrap_pyfunction!(_profiler_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_record_function_enter, m)?)?;
    Ok(())
}
