//! Grad modes: thread-local switches that decide whether ops record graph
//! nodes (`no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`),
//! and the process-wide switch for multithreaded backward.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::tensor::{
    is_grad_enabled, is_inference_mode_enabled, set_grad_enabled, set_inference_mode,
};

thread_local! {
    static BATCH: Cell<Option<usize>> = const { Cell::new(None) };
}

/// While a batched backward (`grad(..., is_grads_batched=True)`) runs a
/// node that handles batches: the batch size, the extra leading dim of
/// every gradient the node receives and returns.
pub fn current_batch() -> Option<usize> {
    BATCH.with(|c| c.get())
}

/// Sets the batch size backward formulas see until dropped.
pub(crate) struct BatchGuard {
    prev: Option<usize>,
}

impl BatchGuard {
    pub(crate) fn new(batch: Option<usize>) -> BatchGuard {
        BatchGuard {
            prev: BATCH.with(|c| c.replace(batch)),
        }
    }
}

impl Drop for BatchGuard {
    fn drop(&mut self) {
        BATCH.with(|c| c.set(self.prev));
    }
}

static MULTITHREADING: AtomicBool = AtomicBool::new(true);

/// Sets this thread's grad mode until dropped, then restores the previous
/// one (`no_grad` is `GradModeGuard::new(false)`).
#[must_use = "the mode is restored when the guard is dropped"]
pub struct GradModeGuard {
    prev: bool,
}

impl GradModeGuard {
    /// Sets grad mode to `enabled` on this thread until the guard is
    /// dropped.
    pub fn new(enabled: bool) -> GradModeGuard {
        let prev = is_grad_enabled();
        set_grad_enabled(enabled);
        GradModeGuard { prev }
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        set_grad_enabled(self.prev);
    }
}

/// `no_grad()`: disables recording until the guard is dropped.
pub fn no_grad() -> GradModeGuard {
    GradModeGuard::new(false)
}

/// `inference_mode(mode)`: while on, grad mode is off and new tensors are
/// inference tensors (they can never join a graph).
#[must_use = "the mode is restored when the guard is dropped"]
pub struct InferenceModeGuard {
    prev_inference: bool,
    _grad: GradModeGuard,
}

impl InferenceModeGuard {
    /// Sets inference mode to `enabled` on this thread until the guard
    /// is dropped.
    pub fn new(enabled: bool) -> InferenceModeGuard {
        let prev_inference = is_inference_mode_enabled();
        set_inference_mode(enabled);
        InferenceModeGuard {
            prev_inference,
            _grad: GradModeGuard::new(if enabled { false } else { is_grad_enabled() }),
        }
    }
}

impl Drop for InferenceModeGuard {
    fn drop(&mut self) {
        set_inference_mode(self.prev_inference);
    }
}

/// `set_multithreading_enabled(mode)`: whether backward may run
/// independent nodes on ferrograd's pool (process-wide, as torch).
pub fn set_multithreading_enabled(enabled: bool) {
    MULTITHREADING.store(enabled, Ordering::Relaxed)
}

/// See [`set_multithreading_enabled`].
pub fn is_multithreading_enabled() -> bool {
    MULTITHREADING.load(Ordering::Relaxed)
}

/// The thread-local autograd state that backward captures on the calling
/// thread and installs on every worker that runs one of its nodes.
#[derive(Clone)]
pub struct ThreadLocalState {
    /// Whether grad mode is on.
    pub grad_enabled: bool,
    /// Anomaly mode and its NaN check, as on the calling thread.
    pub anomaly: (bool, bool),
    /// The batch size of a batched backward.
    pub batch: Option<usize>,
    /// Saved-tensor hooks, as on the calling thread.
    pub(crate) saved_hooks: super::saved::SavedHooksState,
    /// The profiler run the calling thread records for, so that the pool
    /// threads running its nodes record too.
    pub profiler: crate::trace::Scope,
}

impl ThreadLocalState {
    /// The state the engine runs nodes under: grad mode on exactly when
    /// `create_graph` is.
    pub fn for_backward(create_graph: bool) -> ThreadLocalState {
        ThreadLocalState {
            grad_enabled: create_graph,
            anomaly: (
                super::anomaly::is_anomaly_enabled(),
                super::anomaly::is_anomaly_check_nan_enabled(),
            ),
            batch: None,
            saved_hooks: super::saved::SavedHooksState::capture(),
            profiler: crate::trace::current_scope(),
        }
    }

    /// Installs this state on the current thread until the guard drops.
    pub fn install(&self) -> StateGuard {
        let guard = StateGuard {
            grad: is_grad_enabled(),
            inference: is_inference_mode_enabled(),
            anomaly: (
                super::anomaly::is_anomaly_enabled(),
                super::anomaly::is_anomaly_check_nan_enabled(),
            ),
            batch: current_batch(),
            saved_hooks: self.saved_hooks.clone().install(),
            _profiler: self.profiler.enter(),
        };
        set_grad_enabled(self.grad_enabled);
        BATCH.with(|c| c.set(self.batch));
        super::anomaly::set_anomaly_enabled(self.anomaly.0, self.anomaly.1);
        set_inference_mode(false);
        guard
    }
}

/// Restores the previous thread-local state when dropped.
pub struct StateGuard {
    grad: bool,
    inference: bool,
    anomaly: (bool, bool),
    batch: Option<usize>,
    saved_hooks: super::saved::SavedHooksState,
    _profiler: crate::trace::ScopeGuard,
}

impl Drop for StateGuard {
    fn drop(&mut self) {
        std::mem::take(&mut self.saved_hooks).install();
        set_grad_enabled(self.grad);
        set_inference_mode(self.inference);
        super::anomaly::set_anomaly_enabled(self.anomaly.0, self.anomaly.1);
        BATCH.with(|c| c.set(self.batch));
    }
}
