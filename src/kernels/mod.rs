//! Kernels: the compute under every op, with no knowledge of autograd.
//!
//! Nothing here records nodes, reads grad mode or touches tangents; a
//! kernel takes tensors and returns (or writes) values. The layer imports
//! only `crate::tensor` (storage, layout, dtype), the thread pool and its
//! own modules:
//!
//! * `access`: locked, typed access to a tensor's memory;
//! * `arith`: element add/sub/mul (wrapping for integers);
//! * `half`: float32 kernels run over the 16-bit floats;
//! * `nest`: strided loop nests (coalesced dims walked in runs);
//! * `iter`: the elementwise loop drivers (`map*` into a new tensor,
//!   `apply*` in place) with broadcasting and parallel chunks;
//! * `reduce`: the loop driver shared by every reduction;
//! * `fold`: the folds of the standard reductions (sum, prod, max/min,
//!   argmax/argmin, all/any, count) and the kernels built on them;
//! * `scan`: cumsum/cumprod scans and softmax rows;
//! * `fft`: discrete Fourier transforms (complex, real-to-complex and
//!   complex-to-real) over any dims;
//! * `norm`: vector norms and singular values;
//! * `copy`: dense copies and dtype casts;
//! * `index`: the positions of nonzero elements (mask indexing, nonzero);
//! * `basic`: writes into existing tensors (`copy_`, `fill_`) and copies of
//!   a dense layout's span that keep its strides;
//! * `pointwise`: the unary float functions' maps and the special
//!   functions (erf, erfc) they use;
//! * `special`: the scalar float64 special functions (gamma, error
//!   function and Bessel families, incomplete gamma, polynomials);
//! * `fused`: pointwise derivative formulas in one pass (what backward
//!   runs when it builds no graph);
//! * `matmul`: the strided, batched GEMM driver under every matrix product;
//! * `linalg`: LU-based inverses, determinants and solutions, and the trace;
//! * `shape`: strided copies and the concatenation, flip, repeat and
//!   triangular-mask kernels;
//! * `isa`: run-time choice of the instruction set a loop is compiled for;
//! * `vmath`: the vectorised float functions (exp, log, tanh...) under the
//!   pointwise maps.
//!
//! The differentiable ops in `crate::ops` call these and record their
//! formulas around them. An in-place op checks that the write is allowed
//! under autograd's modes (`autograd::check_write`, reached through
//! `autograd::inplace`) before it calls an `apply*` kernel; the kernels
//! check only layout (no overlapping writes) and dtypes.

pub(crate) mod access;
pub(crate) mod arith;
pub(crate) mod basic;
pub(crate) mod conv;
pub(crate) mod copy;
pub(crate) mod decomp;
pub(crate) mod decomp_buf;
pub(crate) mod eig;
pub(crate) mod fft;
pub(crate) mod fold;
pub(crate) mod formulas;
pub(crate) mod fused;
pub(crate) mod half;
pub(crate) mod index;
pub(crate) mod isa;
pub(crate) mod iter;
pub(crate) mod layer_norm;
pub(crate) mod ldl;
pub(crate) mod linalg;
pub(crate) mod loss;
pub(crate) mod lu;
pub(crate) mod matmul;
pub(crate) mod nest;
pub(crate) mod norm;
pub(crate) mod pointwise;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod shape;
pub(crate) mod sort;
pub(crate) mod special;
pub(crate) mod vmath;

/// Values closed under the four arithmetic operations and negation, by
/// value: the bound the generic numeric kernels (the LDL factorisation's
/// scalars, the float32 math bodies' lanes) share.
pub(crate) trait FieldOps:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
}

impl<T> FieldOps for T where
    T: Copy
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
        + std::ops::Neg<Output = T>
{
}
