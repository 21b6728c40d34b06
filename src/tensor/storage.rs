//! Shared, untyped, aligned element buffers.
//!
//! A [`Storage`] is the memory behind one or more tensors: an owned buffer
//! (16-byte aligned, always initialised) or foreign memory such as a NumPy
//! array's, kept alive by an owner object. It does not know shapes or
//! dtypes; tensors interpret it through their `Layout` and `DType`.
//!
//! Note [Storage access]: kernels read and write storages through raw
//! pointers. Every owned buffer is initialised when allocated (zeroed by the
//! allocator or reused from the cache), so typed slices over it are sound
//! for numeric types. Writers take the storage's `lock` exclusively and
//! readers take it shared (`read_recursive`, so a thread may nest reads);
//! kernels take the locks on the calling thread, before entering rayon, and
//! never while holding another storage's write lock out of address order
//! (see `kernels::access`). Foreign memory can still be written by its owner
//! (e.g. NumPy) at any time, exactly as with torch's `from_numpy`.
//!
//! Large owned buffers are recycled through a size-bucketed cache: a freed
//! buffer is kept (up to a byte budget) and handed to the next allocation of
//! the same size class, so big temporaries do not pay a page fault per fresh
//! page on every op.

use parking_lot::{Mutex, RwLock};
use std::alloc::{self, Layout as AllocLayout};
use std::any::Any;
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Buffer alignment. 16 bytes (the allocator's natural alignment) lets
/// `alloc_zeroed` use `calloc`, which hands out fresh pages without writing
/// them; a larger alignment would make every zeroed allocation a memset.
const ALIGN: usize = 16;
/// Buffers at least this large go through the cache. Below glibc's
/// default mmap threshold (128 KiB) on purpose: freeing a few buffers of
/// 128 KiB to 1 MiB at the top of the heap makes glibc trim it, and the
/// next allocations fault the same pages in again (a 256x256 float32
/// `(y + 0).tanh()` spent half its time in page faults).
const CACHE_MIN_BYTES: usize = 32 << 10;

/// Who keeps the memory alive.
enum Owner {
    /// Allocated by us with this capacity (a size-class size, in bytes).
    Owned { capacity: usize },
    /// Someone else's memory (a NumPy array...), freed when this drops.
    Foreign(#[allow(dead_code)] Box<dyn Any + Send + Sync>),
}

pub(crate) struct StorageInner {
    ptr: NonNull<u8>,
    nbytes: usize,
    owner: Owner,
    pub(crate) lock: RwLock<()>,
}

// SAFETY: the buffer is plain bytes owned (or kept alive) by this struct;
// concurrent access is governed by `lock` (Note [Storage access]).
unsafe impl Send for StorageInner {}
// SAFETY: as above.
unsafe impl Sync for StorageInner {}

/// A function told of every buffer storage allocates (`bytes` positive)
/// or frees (negative) at `addr`: how a memory profiler above this layer
/// sees allocations without storage knowing of it.
pub type MemoryHook = fn(bytes: i64, addr: usize);

static MEMORY_HOOK: OnceLock<MemoryHook> = OnceLock::new();

/// Installs the memory hook; the first one installed stays (returns
/// whether `hook` is the one installed now).
pub fn set_memory_hook(hook: MemoryHook) -> bool {
    let installed = *MEMORY_HOOK.get_or_init(|| hook);
    std::ptr::fn_addr_eq(installed, hook)
}

#[inline(always)]
fn report_memory(bytes: i64, addr: usize) {
    if let Some(hook) = MEMORY_HOOK.get() {
        hook(bytes, addr);
    }
}

impl Drop for StorageInner {
    fn drop(&mut self) {
        if let Owner::Owned { capacity } = self.owner {
            report_memory(-(self.nbytes as i64), self.ptr.as_ptr() as usize);
            buffer_cache().release(self.ptr, capacity);
        }
    }
}

/// A reference-counted buffer shared by a tensor and all its views.
#[derive(Clone)]
pub struct Storage(pub(crate) Arc<StorageInner>);

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("ptr", &self.0.ptr)
            .field("nbytes", &self.0.nbytes)
            .finish()
    }
}

impl Storage {
    /// A new owned buffer of `nbytes`, zero-filled, or an error when the
    /// memory cannot be had.
    pub fn try_zeroed(nbytes: usize) -> crate::Result<Storage> {
        let (ptr, capacity, reused) = buffer_cache().acquire(nbytes)?;
        if reused {
            // SAFETY: `ptr` is valid for `capacity >= nbytes` bytes and
            // exclusively ours until wrapped below.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, nbytes) };
        }
        Ok(Self::wrap_owned(ptr, nbytes, capacity))
    }

    /// A new owned buffer of `nbytes` whose contents are unspecified (but
    /// initialised: previous contents of a recycled buffer, or zeros). Use
    /// when every byte is about to be overwritten.
    pub fn try_uninit(nbytes: usize) -> crate::Result<Storage> {
        let (ptr, capacity, _) = buffer_cache().acquire(nbytes)?;
        Ok(Self::wrap_owned(ptr, nbytes, capacity))
    }

    /// [`Storage::try_zeroed`] for sizes derived from existing tensors;
    /// failing to allocate panics with the allocator's message (a Python
    /// caller sees an exception, never an abort).
    pub fn zeroed(nbytes: usize) -> Storage {
        Self::try_zeroed(nbytes).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Storage::try_uninit`], panicking with the allocator's message on
    /// failure (see [`Storage::zeroed`]).
    pub fn uninit(nbytes: usize) -> Storage {
        Self::try_uninit(nbytes).unwrap_or_else(|e| panic!("{e}"))
    }

    fn wrap_owned(ptr: NonNull<u8>, nbytes: usize, capacity: usize) -> Storage {
        report_memory(nbytes as i64, ptr.as_ptr() as usize);
        Storage(Arc::new(StorageInner {
            ptr,
            nbytes,
            owner: Owner::Owned { capacity },
            lock: RwLock::new(()),
        }))
    }

    /// Wraps foreign memory, kept alive by `owner` for as long as any tensor
    /// uses it.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `nbytes` bytes, hold
    /// initialised values of the dtype it will be viewed as, and stay valid
    /// until `owner` is dropped.
    pub unsafe fn from_foreign(
        ptr: *mut u8,
        nbytes: usize,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Storage {
        let ptr = NonNull::new(ptr).unwrap_or(NonNull::dangling());
        Storage(Arc::new(StorageInner {
            ptr,
            nbytes,
            owner: Owner::Foreign(owner),
            lock: RwLock::new(()),
        }))
    }

    /// Copies a slice of elements into a new owned buffer.
    pub fn from_slice<T: Copy>(data: &[T]) -> Storage {
        let nbytes = std::mem::size_of_val(data);
        let s = Storage::uninit(nbytes);
        // SAFETY: the new buffer holds `nbytes` bytes and cannot overlap
        // `data`, which is borrowed memory of another allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr() as *const u8, s.as_ptr(), nbytes);
        }
        s
    }

    /// The size of the buffer in bytes.
    pub fn nbytes(&self) -> usize {
        self.0.nbytes
    }

    /// The start of the buffer.
    pub fn as_ptr(&self) -> *mut u8 {
        self.0.ptr.as_ptr()
    }

    /// True when both handles refer to the same buffer.
    pub fn same(&self, other: &Storage) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// How many handles share this buffer.
    pub fn handle_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    /// Whether this buffer belongs to someone else (e.g. NumPy).
    pub fn is_foreign(&self) -> bool {
        matches!(self.0.owner, Owner::Foreign(_))
    }

    pub(crate) fn lock(&self) -> &RwLock<()> {
        &self.0.lock
    }
}

/// Rounds a byte count up to its size class: 8 classes per power of two, so
/// at most 12.5% of a cached buffer is slack.
fn size_class(nbytes: usize) -> usize {
    if nbytes < CACHE_MIN_BYTES {
        return nbytes.max(1).next_multiple_of(ALIGN);
    }
    let pow = usize::BITS - 1 - nbytes.leading_zeros();
    let step = 1usize << (pow - 3);
    nbytes.next_multiple_of(step)
}

/// The process-wide cache of large freed buffers.
pub(crate) struct BufferCache {
    free: Mutex<HashMap<usize, Vec<SendPtr>>>,
    cached_bytes: AtomicUsize,
    budget: AtomicUsize,
}

struct SendPtr(NonNull<u8>);
// SAFETY: a cached buffer is owned by the cache alone; no one else points
// into it until it is handed out again.
unsafe impl Send for SendPtr {}

fn buffer_cache() -> &'static BufferCache {
    static CACHE: OnceLock<BufferCache> = OnceLock::new();
    CACHE.get_or_init(|| {
        let mb = std::env::var("FERROGRAD_BUFFER_CACHE_MB")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(1024);
        BufferCache {
            free: Mutex::new(HashMap::new()),
            cached_bytes: AtomicUsize::new(0),
            budget: AtomicUsize::new(mb << 20),
        }
    })
}

impl BufferCache {
    /// Returns (pointer, capacity, whether it was recycled).
    fn acquire(&self, nbytes: usize) -> crate::Result<(NonNull<u8>, usize, bool)> {
        let oom = || {
            crate::Error::runtime(format!(
                "can't allocate memory: you tried to allocate {nbytes} bytes"
            ))
        };
        if nbytes > isize::MAX as usize / 2 {
            return Err(oom());
        }
        let capacity = size_class(nbytes);
        if capacity >= CACHE_MIN_BYTES {
            let hit = self.free.lock().get_mut(&capacity).and_then(|v| v.pop());
            if let Some(SendPtr(p)) = hit {
                self.cached_bytes.fetch_sub(capacity, Ordering::Relaxed);
                return Ok((p, capacity, true));
            }
        }
        let layout = AllocLayout::from_size_align(capacity, ALIGN).map_err(|_| oom())?;
        // SAFETY: `capacity` is non-zero (size_class returns at least ALIGN).
        let p = unsafe { alloc::alloc_zeroed(layout) };
        let p = NonNull::new(p).ok_or_else(oom)?;
        advise_huge_pages(p, capacity);
        Ok((p, capacity, false))
    }

    fn release(&self, ptr: NonNull<u8>, capacity: usize) {
        if capacity >= CACHE_MIN_BYTES {
            let budget = self.budget.load(Ordering::Relaxed);
            let now = self.cached_bytes.load(Ordering::Relaxed);
            if now + capacity <= budget {
                self.cached_bytes.fetch_add(capacity, Ordering::Relaxed);
                self.free
                    .lock()
                    .entry(capacity)
                    .or_default()
                    .push(SendPtr(ptr));
                return;
            }
        }
        let layout = AllocLayout::from_size_align(capacity, ALIGN).expect("size fits isize");
        // SAFETY: `ptr` came from `alloc_zeroed` with this exact layout.
        unsafe { alloc::dealloc(ptr.as_ptr(), layout) };
    }

    fn clear(&self) {
        let drained: Vec<(usize, Vec<SendPtr>)> = self.free.lock().drain().collect();
        for (capacity, ptrs) in drained {
            let layout = AllocLayout::from_size_align(capacity, ALIGN).expect("size fits isize");
            for SendPtr(p) in ptrs {
                self.cached_bytes.fetch_sub(capacity, Ordering::Relaxed);
                // SAFETY: cached pointers came from `alloc_zeroed` with this layout.
                unsafe { alloc::dealloc(p.as_ptr(), layout) };
            }
        }
    }
}

/// Buffers at least this large ask the kernel for transparent huge pages.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Asks Linux to back a fresh, untouched buffer with transparent huge pages
/// (where the system's THP mode is `madvise`), so filling it costs one page
/// fault per 2 MiB instead of per 4 KiB. Advisory: failure changes nothing.
#[cfg(target_os = "linux")]
fn advise_huge_pages(p: NonNull<u8>, len: usize) {
    if len < HUGE_PAGE_MIN_BYTES {
        return;
    }
    const PAGE: usize = 4096;
    let start = (p.as_ptr() as usize).next_multiple_of(PAGE);
    let end = (p.as_ptr() as usize + len) / PAGE * PAGE;
    if end > start {
        // SAFETY: the range lies inside an allocation we own; MADV_HUGEPAGE
        // only changes how the kernel backs it, never its contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_p: NonNull<u8>, _len: usize) {}

/// Frees every buffer held by the cache.
pub fn empty_buffer_cache() {
    buffer_cache().clear();
}

/// Bytes currently held by the buffer cache.
pub fn buffer_cache_bytes() -> usize {
    buffer_cache().cached_bytes.load(Ordering::Relaxed)
}

/// Sets the cache's byte budget (0 disables caching) and trims it.
pub fn set_buffer_cache_limit(bytes: usize) {
    buffer_cache().budget.store(bytes, Ordering::Relaxed);
    if buffer_cache_bytes() > bytes {
        empty_buffer_cache();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_bound_slack() {
        for n in [32usize << 10, (1 << 20) + 1, 3 << 21, 123_456_789] {
            let c = size_class(n);
            assert!(c >= n && (c - n) * 8 <= n, "{n} -> {c}");
        }
    }

    #[test]
    fn large_buffers_are_recycled() {
        let n = (5 << 20) + 17;
        let a = Storage::zeroed(n);
        let p = a.as_ptr();
        drop(a);
        let b = Storage::uninit(n);
        // Another test thread could take it first; only check when it did not.
        if b.as_ptr() == p {
            assert_eq!(b.nbytes(), n);
        }
        let c = Storage::zeroed(n);
        // SAFETY: c holds n initialised bytes.
        let bytes = unsafe { std::slice::from_raw_parts(c.as_ptr(), n) };
        assert!(bytes.iter().all(|&x| x == 0));
    }
}
