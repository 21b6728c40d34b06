//! `allow_mutation_on_saved_tensors`: inside the context, writing in place
//! into a tensor that was saved for backward first copies the saved value,
//! so backward still sees the value from the forward pass.
//!
//! The context is a pair of saved-tensor hooks (see `saved.rs`): packing
//! records the saved tensor in this thread's registry; every in-place write
//! asks the registry ([`before_write`]) to copy the saved tensors that share
//! the written memory, once each; unpacking returns the copy when one was
//! made. Leaving the context frees the copies, and unpacking afterwards
//! fails with torch's error.

use super::saved::{Packed, SavedTensorHooks};
use crate::{Error, Result, Tensor};
use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

/// One saved tensor under the context.
struct Entry {
    original: Tensor,
    copy: Mutex<Option<Tensor>>,
}

/// The state of one `allow_mutation_on_saved_tensors` context.
struct Context {
    entries: Mutex<Vec<Weak<Entry>>>,
    closed: AtomicBool,
}

thread_local! {
    /// The open contexts on this thread, innermost last.
    static OPEN: RefCell<Vec<Arc<Context>>> = const { RefCell::new(Vec::new()) };
}

/// What the pack hook keeps: the entry and the context that made it.
struct Handle {
    entry: Arc<Entry>,
    ctx: Arc<Context>,
}

struct MutationHooks {
    ctx: Arc<Context>,
}

impl SavedTensorHooks for MutationHooks {
    fn pack(&self, t: &Tensor) -> Result<Packed> {
        let entry = Arc::new(Entry {
            original: t.clone(),
            copy: Mutex::new(None),
        });
        let mut entries = self.ctx.entries.lock();
        entries.retain(|e| e.strong_count() > 0);
        entries.push(Arc::downgrade(&entry));
        Ok(Box::new(Handle {
            entry,
            ctx: self.ctx.clone(),
        }))
    }

    fn unpack(&self, packed: &Packed) -> Result<Tensor> {
        let h = packed
            .downcast_ref::<Handle>()
            .ok_or_else(|| Error::runtime("saved tensor was packed by other hooks"))?;
        if h.ctx.closed.load(Ordering::Acquire) {
            return Err(Error::Assertion(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context in which the graph was originally recorded.".into(),
            ));
        }
        let copy = h.entry.copy.lock().clone();
        Ok(copy.unwrap_or_else(|| h.entry.original.clone()))
    }
}

/// Opens a context on this thread (until [`close_mutation_context`]).
pub fn open_mutation_context() -> Result<()> {
    let ctx = Arc::new(Context {
        entries: Mutex::new(Vec::new()),
        closed: AtomicBool::new(false),
    });
    super::saved::push_saved_tensors_hooks(Arc::new(MutationHooks { ctx: ctx.clone() }))?;
    OPEN.with(|o| o.borrow_mut().push(ctx));
    Ok(())
}

/// Closes the innermost context: its copies are freed and graphs recorded
/// in it can no longer run backward.
pub fn close_mutation_context() {
    let Some(ctx) = OPEN.with(|o| o.borrow_mut().pop()) else {
        return;
    };
    super::saved::pop_saved_tensors_hooks();
    ctx.closed.store(true, Ordering::Release);
    let entries = std::mem::take(&mut *ctx.entries.lock());
    for e in entries.iter().filter_map(Weak::upgrade) {
        e.copy.lock().take();
    }
}

/// Called before every in-place write to `dst`: copies the saved tensors
/// that share its memory (once each) in the open contexts.
pub(crate) fn before_write(dst: &Tensor) {
    let open = OPEN.with(|o| {
        let o = o.borrow();
        (!o.is_empty()).then(|| o.clone())
    });
    let Some(open) = open else { return };
    for ctx in open {
        let entries: Vec<Arc<Entry>> = ctx
            .entries
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for e in entries {
            if e.original.shares_version_counter(dst) {
                let mut copy = e.copy.lock();
                if copy.is_none() {
                    let _g = super::no_grad();
                    *copy = Some(e.original.copy());
                }
            }
        }
    }
}
