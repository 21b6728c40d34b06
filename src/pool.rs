//! ferrograd's own rayon thread pool.
//!
//! Kernels that split work, and (later) the backward engine, run on this
//! pool rather than rayon's global one, so `set_num_threads` controls exactly
//! ferrograd's parallelism. Its size comes from `FERROGRAD_NUM_THREADS`, else
//! `RAYON_NUM_THREADS`, else the number of cores.

use parking_lot::RwLock;
use std::sync::{Arc, OnceLock};

fn default_threads() -> usize {
    ["FERROGRAD_NUM_THREADS", "RAYON_NUM_THREADS"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .filter_map(|v| v.trim().parse::<usize>().ok())
        .find(|&n| n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

fn build(n: usize) -> Arc<rayon::ThreadPool> {
    Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("ferrograd-{i}"))
            .build()
            .expect("spawning ferrograd's worker threads"),
    )
}

fn slot() -> &'static RwLock<Arc<rayon::ThreadPool>> {
    static POOL: OnceLock<RwLock<Arc<rayon::ThreadPool>>> = OnceLock::new();
    POOL.get_or_init(|| RwLock::new(build(default_threads())))
}

/// The current pool (cheap: one `Arc` clone).
pub fn pool() -> Arc<rayon::ThreadPool> {
    slot().read().clone()
}

/// Runs `f` inside ferrograd's pool, so rayon calls in it use that pool.
/// Already inside the pool (on a worker), runs `f` directly.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    pool().install(f)
}

/// Number of threads in ferrograd's pool.
pub fn num_threads() -> usize {
    slot().read().current_num_threads()
}

/// Replaces the pool with one of `n` threads (at least 1). Work already
/// running finishes on the old pool.
pub fn set_num_threads(n: usize) {
    let n = n.max(1);
    if num_threads() != n {
        *slot().write() = build(n);
    }
}

thread_local! {
    static SERIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with kernels on this thread kept serial. Used where a lock is
/// held around a kernel: a parallel kernel would let this thread pick up
/// (steal) unrelated pool work that may want the same lock.
pub fn serial<R>(f: impl FnOnce() -> R) -> R {
    let prev = SERIAL.with(|c| c.replace(true));
    let r = f();
    SERIAL.with(|c| c.set(prev));
    r
}

/// The threads a kernel may split over right now (1 inside [`serial`]).
pub fn kernel_threads() -> usize {
    if SERIAL.with(|c| c.get()) {
        1
    } else {
        num_threads()
    }
}

/// Elementwise kernels with at least this many elements are split over the
/// pool; smaller ones run on the calling thread.
pub const PARALLEL_MIN_ELEMS: usize = 1 << 15;
