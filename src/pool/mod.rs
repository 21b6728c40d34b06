//! ferrograd's own rayon thread pool, and `SyncPtr`, the raw pointer
//! its parallel sections share.
//!
//! Kernels that split work, and the backward engine, run on this pool
//! rather than rayon's global one, so `set_num_threads` controls exactly
//! ferrograd's parallelism. Its size comes from `FERROGRAD_NUM_THREADS`, else
//! `RAYON_NUM_THREADS`, else the number of cores.

use parking_lot::RwLock;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

mod sync_ptr;
pub(crate) use sync_ptr::SyncPtr;

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
///
/// The pool is entered through one non-generic function: every kernel
/// calls this for each element type it is compiled for, and rayon's entry
/// machinery would otherwise be compiled again for each closure.
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    let mut f = Some(f);
    let mut out = None;
    install_dyn(&mut || out = f.take().map(|f| f()));
    out.expect("the pool ran the closure")
}

fn install_dyn(f: &mut (dyn FnMut() + Send)) {
    pool().install(f)
}

/// Calls `body(i)` for every `i` in `0..n` on ferrograd's pool, in
/// parallel, at least `min_len` indices per task. Like [`install`], the
/// rayon machinery is compiled once for every caller, which passes its
/// loop body as a trait object (one indirect call per index).
///
/// From a thread outside the pool the indices are cut into one contiguous
/// part per pool thread: the calling thread runs the first, offers the
/// others to the pool and takes back any no pool thread has started when
/// its own is done. On a pool thread rayon splits and balances the nested
/// tasks.
pub fn par_for(n: usize, min_len: usize, body: &(dyn Fn(usize) + Sync)) {
    use rayon::prelude::*;
    let min_len = min_len.max(1);
    if rayon::current_thread_index().is_none() {
        let pool = pool();
        let parts = pool.current_num_threads().min(n.div_ceil(min_len));
        if parts <= 1 {
            (0..n).for_each(body);
        } else {
            split_from_caller(&pool, n, parts, body);
        }
        return;
    }
    (0..n).into_par_iter().with_min_len(min_len).for_each(body)
}

/// What the caller of [`split_from_caller`] shares with the pool's helpers.
struct Split {
    /// The loop body; dereferenced only by whoever claimed a part, and the
    /// caller waits for every part before its borrow ends.
    body: *const (dyn Fn(usize) + Sync + 'static),
    n: usize,
    claimed: Box<[AtomicBool]>,
    done: AtomicUsize,
    panic: parking_lot::Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

// SAFETY: `body` points to a `Sync` closure, called from any thread only
// while the caller that owns it waits (see `Split::run`); every other
// field is thread-safe.
unsafe impl Send for Split {}
unsafe impl Sync for Split {}

impl Split {
    /// Runs part `p` (indices `p n / parts .. (p + 1) n / parts`) if no one
    /// has claimed it yet.
    fn run(&self, p: usize) {
        if self.claimed[p].swap(true, Ordering::Acquire) {
            return;
        }
        let parts = self.claimed.len();
        let (lo, hi) = (p * self.n / parts, (p + 1) * self.n / parts);
        // SAFETY: part `p` is claimed and not yet counted done, so the
        // caller is still waiting in `split_from_caller` and `body` lives.
        let body = unsafe { &*self.body };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (lo..hi).for_each(body)));
        if let Err(e) = r {
            self.panic.lock().get_or_insert(e);
        }
        self.done.fetch_add(1, Ordering::Release);
    }
}

/// `body` over `0..n` in `parts` contiguous parts: part `p` is offered to
/// a pool thread, the calling thread runs part 0 and then whatever parts
/// no pool thread has started, and waits (spinning, then yielding) for
/// the parts in flight. The caller never sleeps behind a pool thread that
/// is still waking up, and each thread keeps the same stretch of memory
/// from one call to the next, as a static schedule does.
fn split_from_caller(
    pool: &rayon::ThreadPool,
    n: usize,
    parts: usize,
    body: &(dyn Fn(usize) + Sync),
) {
    // SAFETY: the lifetime is erased only for the helpers' copy; no helper
    // calls `body` after this function returns (see `Split::run`).
    let body: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(body) };
    let split = Arc::new(Split {
        body,
        n,
        claimed: (0..parts).map(|_| AtomicBool::new(false)).collect(),
        done: AtomicUsize::new(0),
        panic: parking_lot::Mutex::new(None),
    });
    for p in (1..parts).rev() {
        let s = split.clone();
        pool.spawn(move || s.run(p));
    }
    for p in 0..parts {
        split.run(p);
    }
    wait_until(|| split.done.load(Ordering::Acquire) >= parts);
    let panic = split.panic.lock().take();
    if let Some(e) = panic {
        std::panic::resume_unwind(e);
    }
}

/// Returns once `done()` holds: spinning at first, then yielding the CPU
/// between checks. For waits on work that running threads are finishing
/// (never on work that has not been handed to a thread).
pub(crate) fn wait_until(done: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !done() {
        if spins < 1 << 12 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// Like [`par_for`], collecting `body(i)` in index order.
pub fn par_map<R: Send>(n: usize, body: &(dyn Fn(usize) -> R + Sync)) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    let slots = SyncPtr(out.as_mut_ptr());
    par_for(n, 1, &|i| {
        // SAFETY: each index `i < n` is written by exactly one task (its
        // slot holds `None`, which needs no drop), and `out` outlives the
        // parallel loop.
        unsafe { slots.at(i).write(Some(body(i))) }
    });
    out.into_iter().flatten().collect()
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
    static SERIAL: Cell<bool> = const { Cell::new(false) };
    /// How deep this thread is inside [`Caller::enter`] guards.
    static ENTERED: Cell<u32> = const { Cell::new(0) };
}

/// Threads outside the pool that are running ferrograd work right now
/// (inside a [`Caller`] guard).
static CALLERS: AtomicUsize = AtomicUsize::new(0);

/// Marks the current thread, while the guard lives, as a caller running
/// ferrograd work (a kernel or a backward pass): the Python bindings take
/// one around every call that releases the interpreter lock.
///
/// While another caller runs, kernels on this thread stay on it instead of
/// splitting over the pool (see [`kernel_threads`]): with several callers
/// at once, each one's own thread is the cheapest place for its work, and
/// the pool's threads would only be shared among them.
pub struct Caller(());

impl Caller {
    /// Registers the current thread (nested guards count once).
    pub fn enter() -> Caller {
        if ENTERED.with(|e| e.replace(e.get() + 1)) == 0 {
            CALLERS.fetch_add(1, Ordering::Relaxed);
        }
        Caller(())
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        if ENTERED.with(|e| e.replace(e.get() - 1)) == 1 {
            CALLERS.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Whether a caller other than this thread is running ferrograd work.
fn others_running() -> bool {
    let mine = ENTERED.with(|e| e.get() > 0) as usize;
    CALLERS.load(Ordering::Relaxed) > mine
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

/// The threads a kernel may split over right now: 1 inside [`serial`],
/// and 1 on a thread outside the pool while another caller runs (see
/// [`Caller`]); else the pool's size. On a pool thread (a kernel inside
/// parallel work) the pool's size: rayon balances the nested tasks.
pub fn kernel_threads() -> usize {
    if SERIAL.with(|c| c.get()) || (rayon::current_thread_index().is_none() && others_running()) {
        1
    } else {
        num_threads()
    }
}

/// Elementwise kernels with at least this many elements are split over the
/// pool; smaller ones run on the calling thread. Handing half of a loop to
/// a pool thread and waiting for it costs about as much as 16K float32
/// additions run serially on a two-core VM, so a 32K-element `add`, `relu`
/// or `sum` was slower on two threads than on one (the measurements are in
/// docs/performance/products.md); from 64K elements it is even or better.
pub const PARALLEL_MIN_ELEMS: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[test]
    fn par_for_from_a_caller_visits_every_index_once_and_returns_panics() {
        let n = 10_007;
        let seen: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
        par_for(n, 64, &|i| {
            seen[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(seen.iter().all(|c| c.load(Ordering::Relaxed) == 1));
        // Nested from inside a part (on the caller or on a pool thread).
        let total = AtomicUsize::new(0);
        par_for(8, 1, &|_| {
            par_for(100, 1, &|j| {
                total.fetch_add(j, Ordering::Relaxed);
            })
        });
        assert_eq!(total.load(Ordering::Relaxed), 8 * 4950);
        // A panic in any part reaches the caller as a panic, and the pool
        // keeps working afterwards.
        for bad in [0, n - 1] {
            let r = std::panic::catch_unwind(|| {
                par_for(n, 64, &|i| assert!(i != bad, "index {i}"));
            });
            let msg = r.expect_err("the panic reaches the caller");
            let text = msg.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(text, format!("index {bad}"));
        }
        let count = AtomicUsize::new(0);
        par_for(n, 64, &|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(count.load(Ordering::Relaxed), n);
    }

    #[test]
    fn a_running_caller_keeps_other_callers_kernels_serial() {
        // Only meaningful with a pool of several threads.
        if num_threads() < 2 {
            return;
        }
        let me = Caller::enter();
        assert_eq!(
            kernel_threads(),
            num_threads(),
            "alone, a caller may use the pool"
        );
        let (entered, done) = (Barrier::new(2), Barrier::new(2));
        std::thread::scope(|s| {
            s.spawn(|| {
                let _other = Caller::enter();
                entered.wait();
                done.wait();
            });
            entered.wait();
            assert_eq!(
                kernel_threads(),
                1,
                "with another caller running, kernels stay serial"
            );
            // Inside the pool, nested kernels still split.
            assert_eq!(install(kernel_threads), num_threads());
            done.wait();
        });
        assert_eq!(kernel_threads(), num_threads());
        drop(me);
        // Nested guards count once and release on the outermost drop.
        let a = Caller::enter();
        let b = Caller::enter();
        drop(b);
        assert_eq!(CALLERS.load(Ordering::Relaxed), 1);
        drop(a);
        assert_eq!(CALLERS.load(Ordering::Relaxed), 0);
    }
}
