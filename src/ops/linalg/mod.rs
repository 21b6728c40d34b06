//! Linear algebra: matrix products (`matmul` and its family, backed by a
//! strided GEMM driver), `einsum`, LU-based `inv`/`det`/`solve`, and the
//! decompositions (Cholesky, QR, eigh, SVD) and triangular solves on `faer`.
//!
//! Every op is a row of its file's derivative table (`FORMULAS`): the node
//! it records, its saves and its backward and forward-mode formulas beside
//! its kernel. Products never promote dtypes (as in torch): both operands
//! must share one dtype. Floating products run on the `gemm` crate (or
//! `matrixmultiply`, see [`set_gemm_backend`]) fed with the operands' own
//! strides, so transposed, sliced and expanded inputs are not copied.

/// Runs the faer kernel `kernels::decomp::$kernel` for the float32/float64
/// or complex dtype of `$t`.
macro_rules! faer_kernel {
    ($t:expr, $kernel:ident($($arg:expr),*)) => {
        crate::dispatch_wide_float!($t.dtype(), T => crate::kernels::decomp::$kernel::<T>($($arg),*),
            else crate::dispatch_complex!($t.dtype(), T => crate::kernels::decomp::$kernel::<T>($($arg),*),
                else Err(crate::Error::runtime(format!("linalg: unsupported dtype {}", $t.dtype())))))
    };
}

pub(crate) mod addmv;
pub(crate) mod cholesky;
pub(crate) mod compose;
pub(crate) mod decomp;
pub(crate) mod eig;
pub(crate) mod einsum;
pub(crate) mod expm;
pub(crate) mod ldl;
pub(crate) mod lstsq;
pub(crate) mod lu;
pub(crate) mod matmul;
pub(crate) mod spectral;

pub use einsum::einsum;
pub use matmul::{gemm_backend, matmul_with_backend, set_gemm_backend, GemmBackend};
pub use spectral::QrMode;
