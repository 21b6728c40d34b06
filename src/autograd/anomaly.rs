//! Anomaly detection: while on (a thread-local mode), every recorded node
//! keeps the stack of the forward call that created it, a failing backward
//! node reports that stack, and with `check_nan` a node whose output holds
//! NaN fails with an error naming it.
//!
//! The stack comes from a capture function the bindings install (Python's
//! traceback); without one, Rust's backtrace is used. Reports go to a
//! warning handler (the bindings turn them into Python `UserWarning`s),
//! or to stderr.

use super::node::{Grads, Node};
use crate::{Error, Result};
use parking_lot::RwLock;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    static CHECK_NAN: Cell<bool> = const { Cell::new(true) };
    /// The node this thread is running in backward (anomaly mode only), so
    /// nodes recorded by a `create_graph` backward know their parent.
    static CURRENT: RefCell<Option<Arc<dyn Node>>> = const { RefCell::new(None) };
}

/// Whether anomaly mode is on for this thread.
#[inline]
pub fn is_anomaly_enabled() -> bool {
    ENABLED.with(|c| c.get())
}

/// Whether anomaly mode checks backward outputs for NaN.
pub fn is_anomaly_check_nan_enabled() -> bool {
    CHECK_NAN.with(|c| c.get())
}

/// `set_detect_anomaly(mode, check_nan)` for this thread.
pub fn set_anomaly_enabled(enabled: bool, check_nan: bool) {
    ENABLED.with(|c| c.set(enabled));
    CHECK_NAN.with(|c| c.set(check_nan));
}

/// Sets anomaly mode until dropped, then restores the previous mode.
#[must_use = "the mode is restored when the guard is dropped"]
pub struct AnomalyModeGuard {
    prev: (bool, bool),
}

impl AnomalyModeGuard {
    /// Sets anomaly mode (and whether it checks backward results for NaN)
    /// until the guard is dropped.
    pub fn new(enabled: bool, check_nan: bool) -> AnomalyModeGuard {
        let prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled());
        set_anomaly_enabled(enabled, check_nan);
        AnomalyModeGuard { prev }
    }
}

impl Drop for AnomalyModeGuard {
    fn drop(&mut self) {
        set_anomaly_enabled(self.prev.0, self.prev.1);
    }
}

/// A stack captured when a node was recorded, rendered to text only if a
/// report needs it (capturing must be cheap; rendering may look up source
/// lines).
pub trait CapturedStack: Send + Sync {
    /// The frames, outermost first, one `File "...", line N, in f` entry
    /// per frame.
    fn render(&self) -> String;
}

impl CapturedStack for String {
    fn render(&self) -> String {
        self.clone()
    }
}

impl CapturedStack for std::backtrace::Backtrace {
    fn render(&self) -> String {
        self.to_string()
    }
}

/// What anomaly mode attaches to a node when it is recorded.
pub struct AnomalyInfo {
    /// The stack of the forward call.
    pub stack: Option<Box<dyn CapturedStack>>,
    /// The node whose backward (with `create_graph`) recorded this one.
    pub parent: Option<Arc<dyn Node>>,
}

type StackCapture = Box<dyn Fn() -> Option<Box<dyn CapturedStack>> + Send + Sync>;
type WarningHandler = Box<dyn Fn(&str) + Send + Sync>;

static STACK_CAPTURE: RwLock<Option<StackCapture>> = RwLock::new(None);
static WARNING_HANDLER: RwLock<Option<WarningHandler>> = RwLock::new(None);

/// Installs the function that captures the forward stack of a new node
/// (`None` restores Rust's backtrace).
pub fn set_stack_capture(f: Option<StackCapture>) {
    *STACK_CAPTURE.write() = f;
}

/// Installs where anomaly reports go (`None` restores stderr). The
/// handler runs on the thread that called backward.
pub fn set_warning_handler(f: Option<WarningHandler>) {
    *WARNING_HANDLER.write() = f;
}

/// Attaches the forward stack (and parent) to a node just recorded.
pub(crate) fn record(node: &Arc<dyn Node>) {
    let stack = match STACK_CAPTURE.read().as_ref() {
        // Pool workers never run the installed capture (it may need
        // Python, which workers never call).
        Some(_) if rayon::current_thread_index().is_some() => None,
        Some(f) => f(),
        None => {
            Some(Box::new(std::backtrace::Backtrace::force_capture()) as Box<dyn CapturedStack>)
        }
    };
    let parent = CURRENT.with(|c| c.borrow().clone());
    node.core()
        .set_anomaly(Arc::new(AnomalyInfo { stack, parent }));
}

/// Marks `node` as the one this thread runs, until the guard drops.
pub(crate) struct CurrentNodeGuard {
    prev: Option<Arc<dyn Node>>,
}

impl CurrentNodeGuard {
    pub(crate) fn enter(node: &Arc<dyn Node>) -> CurrentNodeGuard {
        let prev = CURRENT.with(|c| c.borrow_mut().replace(node.clone()));
        CurrentNodeGuard { prev }
    }
}

impl Drop for CurrentNodeGuard {
    fn drop(&mut self) {
        let prev = self.prev.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

/// torch's error for a backward output holding NaN.
pub(crate) fn check_nan(node: &dyn Node, outs: &Grads) -> Result<()> {
    for (i, g) in outs.iter().enumerate() {
        let Some(g) = g else { continue };
        if !g.dtype().is_differentiable() {
            continue;
        }
        let _g = super::no_grad();
        if g.isnan().any(None, false)?.item()?.to_f64() != 0.0 {
            return Err(Error::runtime(format!(
                "Function '{}' returned nan values in its {i}th output.",
                node.name()
            )));
        }
    }
    Ok(())
}

/// The report for a node whose backward failed: the forward stack of the
/// node, then of each parent that induced it.
fn report(node: &Arc<dyn Node>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = Some(node.clone());
    let mut first = true;
    while let Some(n) = cur {
        let info = n.core().anomaly();
        let info = info.as_ref().and_then(|a| a.downcast_ref::<AnomalyInfo>());
        let stack = info.and_then(|i| i.stack.as_ref()).map(|s| s.render());
        out.push(match (stack, first) {
            (None, true) => format!(
                "Error detected in {}. No forward pass information available. Enable detect anomaly during forward pass for more information.",
                n.name()
            ),
            (None, false) => format!(
                "\n\nPrevious calculation was induced by {}. No forward pass information available. Enable detect anomaly during forward pass for more information.",
                n.name()
            ),
            (Some(s), true) => format!(
                "Error detected in {}. Traceback of forward call that caused the error:\n{s}",
                n.name()
            ),
            (Some(s), false) => format!(
                "\n\nPrevious calculation was induced by {}. Traceback of forward call that induced the previous calculation:\n{s}",
                n.name()
            ),
        });
        first = false;
        cur = info.and_then(|i| i.parent.clone());
    }
    out
}

/// Delivers the reports of failed nodes to the warning handler (or
/// stderr); runs on the thread that called backward.
pub(crate) fn emit(failed: Vec<Arc<dyn Node>>) {
    if failed.is_empty() {
        return;
    }
    let reports: Vec<String> = failed.iter().flat_map(report).collect();
    let handler = WARNING_HANDLER.read();
    for r in reports {
        match handler.as_ref() {
            Some(h) => h(&r),
            None => eprintln!("Warning: {r}"),
        }
    }
}
