//! Maps ferrograd errors to the Python exceptions torch raises.

use ferrograd::{Error, ErrorKind};
use pyo3::exceptions::{
    PyAssertionError, PyIndexError, PyNotImplementedError, PyRuntimeError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::PyAnyMethods;
use pyo3::PyErr;
use pyo3::Python;

pyo3::create_exception!(
    ferrograd.linalg,
    LinAlgError,
    PyRuntimeError,
    "A linear algebra function failed on its input's values (a singular matrix, one that is not positive definite); a subclass of RuntimeError, as torch.linalg.LinAlgError."
);

/// Converts a core error into the matching Python exception.
pub fn to_py(e: Error) -> PyErr {
    if let Error::External { payload, .. } = &e {
        if let Some(err) = payload.0.downcast_ref::<PyErr>() {
            return pyo3::Python::attach(|py| err.clone_ref(py));
        }
    }
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Runtime => PyRuntimeError::new_err(msg),
        ErrorKind::Index => PyIndexError::new_err(msg),
        ErrorKind::Type => PyTypeError::new_err(msg),
        ErrorKind::Value => PyValueError::new_err(msg),
        ErrorKind::Assertion => PyAssertionError::new_err(msg),
        ErrorKind::NotImplemented => PyNotImplementedError::new_err(msg),
        ErrorKind::LinAlg => LinAlgError::new_err(msg),
    }
}

/// Carries a Python exception through the core (e.g. out of a hook called
/// by the backward engine) so that [`to_py`] re-raises it unchanged.
pub fn from_py(e: PyErr) -> Error {
    let msg =
        pyo3::Python::attach(|py| e.value(py).str().map(|s| s.to_string()).unwrap_or_default());
    Error::External {
        msg,
        payload: ferrograd::ExternalError(std::sync::Arc::new(e)),
    }
}

/// `?`-friendly conversion: `core_call().map_err(to_py)?` reads as `.py()?`.
pub trait IntoPyResult<T> {
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPyResult<T> for ferrograd::Result<T> {
    #[inline]
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}

/// A result type that can stand for a Rust panic caught at the binding's
/// edge: the panic becomes a `RuntimeError` carrying the panic's message,
/// so Python sees an ordinary exception (pyo3 would otherwise raise its
/// `PanicException`, a `BaseException` that `except Exception` misses).
pub trait FromPanic {
    fn from_panic(msg: String) -> Self;
}

impl<T> FromPanic for ferrograd::Result<T> {
    fn from_panic(msg: String) -> Self {
        Err(Error::runtime(msg))
    }
}

impl<T> FromPanic for pyo3::PyResult<T> {
    fn from_panic(msg: String) -> Self {
        Err(PyRuntimeError::new_err(msg))
    }
}

/// The message of a panic payload (`panic!` with a literal or a format).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("a Rust panic without a message");
    text.to_string()
}

/// Runs `f`, turning a panic inside it (on this thread or one of the pool's,
/// which rayon re-raises here) into the error [`FromPanic`] makes.
///
/// Note [Panics at the binding's edge]: the work a binding hands to the
/// core (kernels, backward) runs through this, so a bug or an unchecked
/// size deep in a kernel reaches Python as `RuntimeError`. Nothing the
/// closure borrowed is used again after a panic except to drop it, which
/// is why asserting unwind safety is sound here.
pub fn catch_panic<T: FromPanic>(f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => T::from_panic(panic_message(payload.as_ref())),
    }
}

/// [`catch_panic`] with the interpreter lock released and the thread
/// registered as a running caller (`pool::Caller`), so that kernels of
/// other threads know the pool is shared.
pub fn detached<T: FromPanic + Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    let out = py.detach(|| {
        handoff::released();
        let out = {
            let _caller = ferrograd::pool::Caller::enter();
            catch_panic(f)
        };
        handoff::before_reacquire();
        out
    });
    handoff::acquired();
    out
}

/// Note [Taking the lock back without sleeping]: a thread that comes
/// back from [`detached`] while another thread holds the interpreter lock
/// waits for it; the interpreter's wait puts the thread to sleep, and the
/// wake-up when the lock is dropped costs (on a virtual machine, where it
/// crosses processors) more than a small compiled step's whole Python
/// part. So one returning thread at a time, while the lock's holder is a
/// thread that took it back here too (and so will likely drop it again at
/// its next kernel call), spins for a bounded time until that holder has
/// dropped it, then asks for the lock, which is then usually free and
/// taken without sleeping. Holders that are not known (plain Python
/// threads) fall back to the interpreter's wait. A holder that drops the
/// lock some other way (a Python sleep or queue wait) is still noted as
/// holding it; the first spin that runs out of time on it marks that
/// holding stale, so it costs one bounded spin, not one per call. At most
/// one thread spins, so the spinning costs one processor at most, only
/// while a hand-off is near.
mod handoff {
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    /// The holding of the lock by a thread that took it back in
    /// [`super::detached`] and has not released it there since (a fresh
    /// number per taking); 0 when no such thread holds it.
    static HOLDER: AtomicU64 = AtomicU64::new(0);
    /// The last number handed out for a holding.
    static LAST: AtomicU64 = AtomicU64::new(0);
    /// A holding a spin ran out of time on: not spun on again.
    static STALE: AtomicU64 = AtomicU64::new(0);
    /// Whether a thread is spinning (at most one does).
    static SPINNING: AtomicBool = AtomicBool::new(false);
    /// How long a returning thread spins before it sleeps in the
    /// interpreter's wait: several times a small step's Python part.
    const BOUND: Duration = Duration::from_micros(50);

    thread_local! {
        /// This thread's holding, while it holds the lock.
        static MINE: Cell<u64> = const { Cell::new(0) };
    }

    /// Called with the lock just released by this thread.
    pub fn released() {
        let mine = MINE.replace(0);
        if mine != 0 {
            // Only this thread's own holding is cleared: another thread
            // may already have taken the lock and noted its own.
            let _ = HOLDER.compare_exchange(mine, 0, Ordering::Release, Ordering::Relaxed);
        }
    }

    /// Called with the lock just taken back by this thread.
    pub fn acquired() {
        let n = LAST.fetch_add(1, Ordering::Relaxed) + 1;
        MINE.set(n);
        HOLDER.store(n, Ordering::Release);
    }

    /// Waits, spinning for at most [`BOUND`], until no known holder holds
    /// the lock.
    pub fn before_reacquire() {
        let held = |h: u64| h != 0 && h != STALE.load(Ordering::Relaxed);
        if !held(HOLDER.load(Ordering::Acquire))
            || SPINNING
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let start = Instant::now();
        'wait: loop {
            for _ in 0..64 {
                std::hint::spin_loop();
                if !held(HOLDER.load(Ordering::Acquire)) {
                    break 'wait;
                }
            }
            if start.elapsed() > BOUND {
                STALE.store(HOLDER.load(Ordering::Acquire), Ordering::Relaxed);
                break;
            }
        }
        SPINNING.store(false, Ordering::Release);
    }
}
