//! Linear algebra: matrix products (`matmul` and its family, backed by a
//! strided GEMM driver), `einsum`, and LU-based `inv`/`det`/`solve`.
//!
//! Every op is a row of its file's derivative table (`FORMULAS`): the node
//! it records, its saves and its backward and forward-mode formulas beside
//! its kernel. Products never promote dtypes (as in torch): both operands
//! must share one dtype. Floating products run on the `gemm` crate (or
//! `matrixmultiply`, see [`set_gemm_backend`]) fed with the operands' own
//! strides, so transposed, sliced and expanded inputs are not copied.

pub(crate) mod cholesky;
pub(crate) mod decomp;
pub(crate) mod einsum;
pub(crate) mod matmul;

pub use einsum::einsum;
pub use matmul::{gemm_backend, matmul_with_backend, set_gemm_backend, GemmBackend};
