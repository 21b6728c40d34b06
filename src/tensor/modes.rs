//! The thread-local modes a tensor is made under: grad mode (whether ops
//! record history) and inference mode (whether new tensors are inference
//! tensors). They live with the tensor because a tensor records, when it
//! is made, which modes were on (see [`Origin`](super::Origin)); the
//! autograd layer's guards (`no_grad`, `inference_mode`) switch them.

use std::cell::Cell;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
    static INFERENCE: Cell<bool> = const { Cell::new(false) };
}

/// Whether ops on this thread record autograd history.
#[inline]
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(|c| c.get())
}

/// Turns recording on or off for this thread (see `GradModeGuard` in the
/// autograd layer for a scoped version).
pub fn set_grad_enabled(enabled: bool) {
    GRAD_ENABLED.with(|c| c.set(enabled))
}

/// Whether inference mode is on for this thread.
#[inline]
pub fn is_inference_mode_enabled() -> bool {
    INFERENCE.with(|c| c.get())
}

/// Turns inference mode on or off for this thread (grad mode is separate;
/// see `InferenceModeGuard` in the autograd layer for the scoped version
/// that sets both).
pub fn set_inference_mode(enabled: bool) {
    INFERENCE.with(|c| c.set(enabled))
}
