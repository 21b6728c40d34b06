//! CPU autocast: the per-thread state behind `ferrograd.autocast` and the
//! casts an op applies to its tensor arguments while it is on.
//!
//! An op on autocast's lists casts its floating arguments before it runs:
//! `LOWER` ops (products, convolutions) to the autocast dtype, `FP32` ops
//! (losses, reductions, decompositions) to float32, `PROMOTE` ops (`cat`,
//! `stack`) to the widest floating type among them. float64 arguments and
//! non-floating ones are left alone. The casts are ordinary differentiable
//! `to` ops, so gradients come back in each argument's own dtype. While an
//! op's arguments are being handled and it runs, autocast is suspended on
//! the thread, so the ops it is made of are not cast again.
//!
//! Module functions are routed (`routed.rs` calls the Python hook that
//! applies the casts); the products among the Tensor methods call
//! [`lower`] on their arguments directly, the other listed methods are
//! wrapped in Python. A thread that never enables
//! autocast pays one atomic load per such call.

use crate::dtype::{parse_dtype, PyDType};
use crate::errors::IntoPyResult;
use crate::tensor::{PyTensor, TensorOut};
use ferrograd::{DType, Tensor};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many threads have autocast enabled.
static THREADS_ENABLED: AtomicUsize = AtomicUsize::new(0);

/// A cast policy (the `kind` a routed function carries).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Policy {
    Lower = 1,
    Fp32 = 2,
    Promote = 3,
}

impl Policy {
    fn from_kind(kind: i64) -> PyResult<Policy> {
        match kind {
            1 => Ok(Policy::Lower),
            2 => Ok(Policy::Fp32),
            3 => Ok(Policy::Promote),
            _ => Err(PyRuntimeError::new_err(format!(
                "autocast: unknown cast policy {kind}"
            ))),
        }
    }
}

struct State {
    enabled: bool,
    dtype: DType,
    cache_enabled: bool,
    nesting: i64,
    suspended: u32,
    /// Casts of leaf tensors that require grad (parameters), kept until the
    /// outermost autocast region exits: `(source, cast)`.
    cache: Vec<(Tensor, Tensor)>,
}

impl State {
    fn new() -> State {
        State {
            enabled: false,
            dtype: DType::BFloat16,
            cache_enabled: true,
            nesting: 0,
            suspended: 0,
            cache: Vec::new(),
        }
    }
}

impl Drop for State {
    fn drop(&mut self) {
        if self.enabled {
            THREADS_ENABLED.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::new());
}

/// The dtype arguments are cast to on this thread now, for ops of
/// `policy`'s list: `None` when autocast is off or suspended.
fn target() -> Option<DType> {
    if THREADS_ENABLED.load(Ordering::Relaxed) == 0 {
        return None;
    }
    STATE.with(|s| {
        let s = s.borrow();
        (s.enabled && s.suspended == 0).then_some(s.dtype)
    })
}

/// Whether autocast casts arguments on this thread now.
pub fn active() -> bool {
    target().is_some()
}

/// Autocast considers float32, float16 and bfloat16 tensors.
fn eligible(t: &Tensor) -> bool {
    matches!(t.dtype(), DType::Float32 | DType::Float16 | DType::BFloat16)
}

/// `t` converted to `dtype`, through the cache for parameters.
fn cast(t: &Tensor, dtype: DType) -> PyResult<Tensor> {
    if !eligible(t) || t.dtype() == dtype {
        return Ok(t.clone());
    }
    let cacheable = t.requires_grad() && t.is_leaf() && !t.is_view();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let use_cache = cacheable && s.cache_enabled && dtype == s.dtype;
        if use_cache {
            if let Some((_, c)) = s.cache.iter().find(|(src, _)| src.same(t)) {
                return Ok(c.clone());
            }
        }
        let c = t.try_to_dtype(dtype).py()?;
        if use_cache {
            s.cache.push((t.clone(), c.clone()));
        }
        Ok(c)
    })
}

/// `t` as a `LOWER` op's argument (cast to the autocast dtype).
pub fn lower(t: Tensor) -> PyResult<Tensor> {
    match target() {
        Some(dt) => cast(&t, dt),
        None => Ok(t),
    }
}

/// The dtype a `PROMOTE` op casts its eligible arguments to: the widest of
/// the autocast dtype and theirs.
fn widest(tensors: &[Tensor], start: DType) -> DType {
    tensors
        .iter()
        .filter(|t| eligible(t))
        .fold(start, |acc, t| acc.promote(t.dtype()))
}

/// Sets whether autocast is enabled on this thread.
#[pyfunction]
fn _autocast_set_enabled(enabled: bool) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.enabled != enabled {
            if enabled {
                THREADS_ENABLED.fetch_add(1, Ordering::Relaxed);
            } else {
                THREADS_ENABLED.fetch_sub(1, Ordering::Relaxed);
            }
            s.enabled = enabled;
        }
    });
}

/// Whether autocast is enabled on this thread.
#[pyfunction]
pub(crate) fn _autocast_is_enabled() -> bool {
    STATE.with(|s| s.borrow().enabled)
}

/// Sets the autocast dtype of this thread (float16 or bfloat16).
#[pyfunction]
fn _autocast_set_dtype(dtype: &Bound<'_, PyAny>) -> PyResult<()> {
    let dt = parse_dtype(dtype)?;
    STATE.with(|s| s.borrow_mut().dtype = dt);
    Ok(())
}

/// The autocast dtype of this thread.
#[pyfunction]
fn _autocast_get_dtype() -> PyDType {
    PyDType {
        dt: STATE.with(|s| s.borrow().dtype),
    }
}

/// Enters an autocast region; returns the new depth.
#[pyfunction]
fn _autocast_increment_nesting() -> i64 {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.nesting += 1;
        s.nesting
    })
}

/// Leaves an autocast region; returns the new depth. Leaving the
/// outermost one drops the cached parameter casts.
#[pyfunction]
fn _autocast_decrement_nesting() -> i64 {
    // The casts are dropped after the borrow ends (dropping a tensor can
    // run arbitrary code).
    let (nesting, dropped) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.nesting -= 1;
        let dropped = if s.nesting == 0 {
            std::mem::take(&mut s.cache)
        } else {
            Vec::new()
        };
        (s.nesting, dropped)
    });
    drop(dropped);
    nesting
}

/// Drops the cached parameter casts of this thread.
#[pyfunction]
fn _autocast_clear_cache() {
    let dropped = STATE.with(|s| std::mem::take(&mut s.borrow_mut().cache));
    drop(dropped);
}

/// Sets whether parameter casts are cached in autocast regions.
#[pyfunction]
fn _autocast_set_cache_enabled(enabled: bool) {
    STATE.with(|s| s.borrow_mut().cache_enabled = enabled);
}

/// Whether parameter casts are cached in autocast regions.
#[pyfunction]
fn _autocast_is_cache_enabled() -> bool {
    STATE.with(|s| s.borrow().cache_enabled)
}

/// Whether this thread casts arguments now (enabled and not suspended).
#[pyfunction]
fn _autocast_active() -> bool {
    active()
}

/// Suspends (`delta = 1`) or resumes (`delta = -1`) the casts on this
/// thread, around the body of an op whose arguments were cast.
#[pyfunction]
fn _autocast_suspend(delta: i64) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.suspended = if delta > 0 {
            s.suspended + 1
        } else {
            s.suspended.saturating_sub(1)
        };
    });
}

/// The tensors of `tensors` cast for an op of policy `kind` (1: the
/// autocast dtype, 2: float32, 3: the widest floating type among them).
#[pyfunction]
fn _autocast_cast(kind: i64, tensors: Vec<Bound<'_, PyTensor>>) -> PyResult<Vec<TensorOut>> {
    let tensors: Vec<Tensor> = tensors.iter().map(|t| t.get().tensor()).collect();
    let Some(dt) = target() else {
        return Ok(tensors.into_iter().map(TensorOut::from).collect());
    };
    let to = match Policy::from_kind(kind)? {
        Policy::Lower => dt,
        Policy::Fp32 => DType::Float32,
        Policy::Promote => widest(&tensors, dt),
    };
    tensors.iter().map(|t| Ok(cast(t, to)?.into())).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_autocast_set_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_is_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_set_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_get_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_increment_nesting, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_decrement_nesting, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_clear_cache, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_set_cache_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_is_cache_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_active, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_suspend, m)?)?;
    m.add_function(wrap_pyfunction!(_autocast_cast, m)?)?;
    Ok(())
}
