//! Kernels: every operation on tensors, grouped by kind.
//!
//! Each submodule adds methods to [`Tensor`] (and free functions where torch
//! has them). Each op's kernel, its backward formula and its forward-mode
//! formula sit together here (recorded through `autograd::Recorder`).
//! Shared loop drivers are in `iter`, locked typed memory access in
//! `access`, the raw pointer parallel loops share in `sync_ptr`.

mod basic;
mod binary;
mod creation;
mod index;
pub mod linalg;
mod pointwise;
pub mod reduce;
mod shape;
mod view;
pub use binary::Arith;
pub(crate) use view::as_strided_grad;

pub use index::TensorIndex;
pub use pointwise::{erf, erfc, Num, RoundingMode};
