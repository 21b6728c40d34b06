//! ferrograd: torch.autograd's feature set as a Rust crate.
//!
//! The core is a strided [`Tensor`] (shared [`Storage`], [`Layout`] with
//! shape/strides/offset, [`DType`] with torch's promotion) and kernels for
//! torch's operations, parallelised over ferrograd's own rayon pool.
//!
//! ```
//! use ferrograd::{DType, Tensor};
//! let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
//! let b = a.transpose(0, 1).unwrap();
//! let c = a.add(&b).unwrap();
//! assert_eq!(c.to_vec::<f32>(), vec![2.0, 5.0, 5.0, 8.0]);
//! assert_eq!(c.dtype(), DType::Float32);
//! ```

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

pub use binding::{BindingSlot, Kept};
pub use error::{Error, ErrorKind, ExternalError, Result};
/// The 16-bit float element types (`float16`, `bfloat16`), from the `half` crate.
pub use half::{bf16, f16};
pub use ops::conv::Window;
pub use ops::Reduction;
pub use pool::{num_threads, set_num_threads};
pub use tensor::{
    broadcast_shapes, default_complex_dtype, default_dtype, result_type, set_default_dtype,
    Complex, ComplexDouble, ComplexFloat, DType, Element, Layout, RealElement, Scalar, Storage,
    Tensor,
};
