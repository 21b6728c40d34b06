//! [`BindingSlot`]: where a language binding keeps its own object for a
//! tensor or a graph node, so that one tensor has one object in that
//! language (Python's `x.grad is x.grad`).
//!
//! The core never looks inside a slot: it holds an address it does not
//! own and, optionally, a value it does own, and drops that value with the
//! tensor or node. What the address and the value mean, and when they are
//! set, is the binding's business (the Python bindings describe theirs in
//! docs/design.md, "Python objects").
//!
//! Note [Binding slots]: the address is a *weak* link (it keeps nothing
//! alive), so a binding must clear it before the object it points to is
//! freed; `clear_object` only clears the address it is given, so a late
//! clear by an object that was already replaced leaves its successor
//! alone. The kept value is a *strong* link owned by the tensor or node; a
//! binding that keeps its own object there makes a cycle (object -> tensor
//! -> slot -> object) that only the binding's garbage collector can break.

use parking_lot::Mutex;
use std::any::Any;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// A value a binding keeps alive with a tensor or node.
pub type Kept = Box<dyn Any + Send + Sync>;

/// A binding's object address and kept value for one tensor or node.
#[derive(Default)]
pub struct BindingSlot {
    object: AtomicPtr<()>,
    /// Whether `kept` holds a value (read without the lock: most tensors
    /// never keep anything, and bindings ask on every new object).
    has_kept: AtomicBool,
    kept: Mutex<Option<Kept>>,
}

impl BindingSlot {
    /// The address stored by [`BindingSlot::set_object`] (null when none).
    pub fn object(&self) -> *mut () {
        self.object.load(Ordering::Acquire)
    }

    /// Stores `addr`, replacing any earlier address.
    pub fn set_object(&self, addr: *mut ()) {
        self.object.store(addr, Ordering::Release);
    }

    /// Clears the address if it is still `addr`; returns whether it was.
    pub fn clear_object(&self, addr: *mut ()) -> bool {
        self.object
            .compare_exchange(addr, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Runs `f` on the kept value (`None` when nothing is kept), which it
    /// may set, replace or change; the slot is locked meanwhile, so `f`
    /// must not run code that could reach this slot again (and a value it
    /// replaces is best returned and dropped after the call).
    pub fn with_kept<R>(&self, f: impl FnOnce(&mut Option<Kept>) -> R) -> R {
        let mut kept = self.kept.lock();
        let r = f(&mut kept);
        self.has_kept.store(kept.is_some(), Ordering::Release);
        r
    }

    /// Whether a value is kept.
    pub fn has_kept(&self) -> bool {
        self.has_kept.load(Ordering::Acquire)
    }

    /// Removes and returns the kept value.
    pub fn take_kept(&self) -> Option<Kept> {
        let mut kept = self.kept.lock();
        self.has_kept.store(false, Ordering::Release);
        kept.take()
    }

    /// Runs `f` on the kept value without blocking: `None` when another
    /// thread holds the slot at this moment (for callers such as a garbage
    /// collector's traversal, which must not wait).
    pub fn try_with_kept<R>(&self, f: impl FnOnce(Option<&Kept>) -> R) -> Option<R> {
        self.kept.try_lock().map(|k| f(k.as_ref()))
    }
}

impl std::fmt::Debug for BindingSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BindingSlot")
            .field("object", &self.object())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_object_only_clears_its_own_address() {
        let s = BindingSlot::default();
        let (a, b) = (8usize as *mut (), 16usize as *mut ());
        s.set_object(a);
        s.set_object(b);
        assert!(!s.clear_object(a));
        assert_eq!(s.object(), b);
        assert!(s.clear_object(b));
        assert!(s.object().is_null());
    }

    #[test]
    fn kept_value_is_dropped_with_the_slot() {
        let marker = std::sync::Arc::new(());
        let s = BindingSlot::default();
        s.with_kept(|k| *k = Some(Box::new(marker.clone())));
        assert_eq!(s.try_with_kept(|k| k.is_some()), Some(true));
        assert_eq!(std::sync::Arc::strong_count(&marker), 2);
        drop(s);
        assert_eq!(std::sync::Arc::strong_count(&marker), 1);
    }
}
