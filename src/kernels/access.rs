//! Locked, typed access to tensor memory for kernels.
//!
//! Kernels first take the storage locks of every tensor they touch with
//! [`lock`] (in storage-address order, so two threads can never wait on each
//! other; see Note [Storage access] in `tensor/storage.rs`), then build
//! typed ndarray views with [`view`]/[`view_mut`] while the guards live.

use crate::{Element, Tensor};
use ndarray::{ArrayViewD, IxDyn, ShapeBuilder};
use parking_lot::{RwLockReadGuard, RwLockWriteGuard};
use smallvec::SmallVec;

#[allow(dead_code)]
enum Guard<'a> {
    Read(RwLockReadGuard<'a, ()>),
    Write(RwLockWriteGuard<'a, ()>),
}

/// Holds storage locks until dropped.
pub(crate) struct Guards<'a> {
    _held: SmallVec<[Guard<'a>; 4]>,
}

/// Locks the storages of `reads` shared and of `write` exclusively. A
/// storage that appears several times is locked once (exclusively if it is
/// written).
pub(crate) fn lock<'a>(reads: &[&'a Tensor], write: Option<&'a Tensor>) -> Guards<'a> {
    match write {
        Some(w) => lock_writes(reads, &[w]),
        None => lock_writes(reads, &[]),
    }
}

/// [`lock`] for kernels that write several tensors.
pub(crate) fn lock_writes<'a>(reads: &[&'a Tensor], writes: &[&'a Tensor]) -> Guards<'a> {
    let mut all: SmallVec<[(usize, &'a Tensor, bool); 4]> = SmallVec::new();
    for w in writes {
        if !all.iter().any(|(_, t, _)| t.storage().same(w.storage())) {
            all.push((w.storage().as_ptr() as usize, w, true));
        }
    }
    for r in reads {
        let key = r.storage().as_ptr() as usize;
        if !all.iter().any(|(_, t, _)| t.storage().same(r.storage())) {
            all.push((key, r, false));
        }
    }
    all.sort_by_key(|(k, _, _)| *k);
    let held = all
        .into_iter()
        .map(|(_, t, w)| {
            if w {
                Guard::Write(t.storage().lock().write())
            } else {
                Guard::Read(t.storage().lock().read_recursive())
            }
        })
        .collect();
    Guards { _held: held }
}

/// Pointer to the first element of `t` as `T`.
#[inline]
pub(crate) fn elem_ptr<T: Element>(t: &Tensor) -> *mut T {
    debug_assert_eq!(T::DTYPE, t.dtype(), "kernel dtype mismatch");
    // SAFETY: the offset lies within the storage (checked when the layout
    // was made), so the pointer stays inside the allocation.
    unsafe { (t.storage().as_ptr() as *mut T).add(t.offset()) }
}

/// A typed read-only view of `t`'s elements with `t`'s strides.
///
/// # Safety
/// The caller holds at least a read lock on `t`'s storage (see [`lock`])
/// for `'a`, and `T::DTYPE == t.dtype()`.
pub(crate) unsafe fn view<'a, T: Element>(t: &'a Tensor) -> ArrayViewD<'a, T> {
    view_strided(t, t.shape(), t.strides())
}

/// A typed view of `t`'s storage with another shape and strides (e.g. its
/// strides broadcast to an output shape, with zeros).
///
/// # Safety
/// As [`view`], and every index of `shape`/`strides` stays within the
/// elements `t`'s own layout can reach.
pub(crate) unsafe fn view_strided<'a, T: Element>(
    t: &'a Tensor,
    shape: &[usize],
    strides: &[usize],
) -> ArrayViewD<'a, T> {
    ArrayViewD::from_shape_ptr(
        IxDyn(shape).strides(IxDyn(strides)),
        elem_ptr::<T>(t) as *const T,
    )
}

/// The elements of a contiguous `t` as a slice.
///
/// # Safety
/// As [`view`], and `t.is_contiguous()`.
pub(crate) unsafe fn slice<T: Element>(t: &Tensor) -> &[T] {
    assert!(
        t.is_contiguous(),
        "a kernel read a strided tensor as a slice"
    );
    std::slice::from_raw_parts(elem_ptr::<T>(t), t.numel())
}

/// The elements of a contiguous `t` as a mutable slice.
///
/// # Safety
/// As [`view_mut`], and `t.is_contiguous()`.
// The mutability comes from the storage's write lock (or a fresh, unshared
// tensor), not from the `&Tensor` borrow.
#[allow(clippy::mut_from_ref)]
pub(crate) unsafe fn slice_mut<T: Element>(t: &Tensor) -> &mut [T] {
    assert!(
        t.is_contiguous(),
        "a kernel read a strided tensor as a slice"
    );
    std::slice::from_raw_parts_mut(elem_ptr::<T>(t), t.numel())
}
