//! ferrograd: torch.autograd's feature set as a Rust crate.
//!
//! The core is a strided [`Tensor`] (shared [`Storage`], [`Layout`] with
//! shape/strides/offset, [`DType`] with torch's promotion) and kernels for
//! torch's operations, parallelised over ferrograd's own rayon pool. On
//! top of it, [`autograd`] records every differentiable op and runs
//! reverse mode (a parallel backward engine, higher-order gradients,
//! hooks, saved-tensor hooks) and forward mode (dual tensors). The same
//! crate backs the `ferrograd` Python package; everything here works from
//! Rust alone.
//!
//! Tensors, ops and views:
//!
//! ```
//! use ferrograd::{DType, Tensor};
//! # fn main() -> ferrograd::Result<()> {
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = a.transpose(0, 1)?; // a view: shares a's memory
//! let c = a.add(&b)?;
//! assert_eq!(c.to_vec::<f32>(), vec![2.0, 5.0, 5.0, 8.0]);
//! assert_eq!(c.dtype(), DType::Float32);
//! # Ok(())
//! # }
//! ```
//!
//! Gradients:
//!
//! ```
//! use ferrograd::Tensor;
//! # fn main() -> ferrograd::Result<()> {
//! let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?.requires_grad_(true)?;
//! let y = x.mul(&x)?.sum(None, false, None)?; // sum(x^2)
//! y.backward()?;
//! assert_eq!(x.grad().unwrap().to_vec::<f64>(), vec![2.0, 4.0, 6.0]); // 2x
//! # Ok(())
//! # }
//! ```
//!
//! Where to look:
//!
//! - [`Tensor`]: creation (`from_slice`, `zeros`, `randn`, ...), every op
//!   as a method (`add`, `matmul`, `sum`, ...), in-place forms (`add_`).
//! - [`Tensor::backward`], [`autograd::grad`] and
//!   [`autograd::grad_with`] (options in [`autograd::BackwardOptions`],
//!   [`autograd::GradOptions`]): reverse mode, including higher order
//!   with `create_graph`.
//! - [`autograd::DualLevel`]: forward mode.
//! - [`autograd::Recorder`]: custom ops with your own backward (and
//!   forward-mode) formula.
//! - [`Tensor::register_hook`]: hooks on gradients; [`autograd::no_grad`]
//!   and [`autograd::GradModeGuard`]: switching recording off.
//! - [`optim`], [`random`], [`profiler`], [`pool`]: optimizers, random
//!   numbers, a profiler, and the thread pool's size.
//!
//! Every fallible function returns [`Result`]; [`Error`] carries torch's
//! message and [`ErrorKind`] tells which Python exception it maps to.
//! Tensors are `Send + Sync`: several threads may build graphs and run
//! backward at the same time.

#![warn(missing_docs)]

pub mod autograd;
mod binding;
mod error;
mod kernels;
pub mod ops;
pub mod optim;
pub mod pool;
pub mod profiler;
pub mod random;
pub mod tensor;
mod trace;

pub use binding::{BindingSlot, Kept};
pub use error::{Error, ErrorKind, ExternalError, Result, ScalarTypeName};
/// The 16-bit float element types (`float16`, `bfloat16`), from the `half` crate.
pub use half::{bf16, f16};
pub use ops::conv::Window;
pub use ops::linalg::QrMode;
pub use ops::{FftNorm, Reduction};
pub use pool::{num_threads, set_num_threads};
/// Capture and replay of tensor programs ([`tensor::capture`]).
pub use tensor::capture as compile;
pub use tensor::{
    broadcast_shapes, default_complex_dtype, default_dtype, result_type, set_default_dtype,
    Complex, ComplexDouble, ComplexFloat, DType, Element, Layout, RealElement, Scalar, Storage,
    Tensor,
};
