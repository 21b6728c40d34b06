//! [`SyncPtr`]: the one raw element pointer that kernels hand to the
//! workers of a parallel section.

/// A raw element pointer that may cross into rayon workers.
///
/// Closures should capture the whole wrapper (use its methods, or copy it
/// into a local first) rather than its raw-pointer field, which is neither
/// `Send` nor `Sync`.
pub(crate) struct SyncPtr<T>(pub(crate) *mut T);

// A pointer copies whatever it points to (derive would ask `T: Copy`).
impl<T> Clone for SyncPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SyncPtr<T> {}

// SAFETY: every user dereferences it only at offsets that are disjoint
// between workers (writes) or read-only (reads), while the buffer it points
// into is locked and outlives the parallel section.
unsafe impl<T> Send for SyncPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SyncPtr<T> {}

impl<T> SyncPtr<T> {
    /// The pointer.
    #[inline(always)]
    pub(crate) fn get(self) -> *mut T {
        self.0
    }

    /// Pointer to element `i`.
    ///
    /// # Safety
    /// `i` is within the allocation.
    #[inline(always)]
    pub(crate) unsafe fn at(self, i: usize) -> *mut T {
        // SAFETY: the caller keeps `i` within the allocation.
        unsafe { self.0.add(i) }
    }

    /// Writes `v` at element `i`.
    ///
    /// # Safety
    /// `i` is within the allocation and no other thread touches it.
    #[inline(always)]
    pub(crate) unsafe fn write(self, i: usize, v: T) {
        // SAFETY: as the caller guarantees.
        unsafe { *self.0.add(i) = v };
    }
}
