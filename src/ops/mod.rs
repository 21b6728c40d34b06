//! Ops: every differentiable operation on tensors, grouped by family.
//!
//! Each submodule adds methods to [`Tensor`] (and free functions where torch
//! has them). A differentiable op is one row of its family's derivative
//! table (`autograd::derivatives!`): the row names the node, calls the
//! kernel (`crate::kernels`) and gives the backward, forward-mode and
//! batched rules, and the table generates the method and its in-place form.
//! [`derivative_tables`] lists every table; `docs/formulas.md` is generated
//! from it.
//!
//! [`Tensor`]: crate::Tensor

mod basic;
mod binary;
mod capture_args;
mod compiled;
mod complex;
pub mod conv;
mod creation;
mod fft;
pub mod fuse;
mod index;
pub mod linalg;
mod nn;
mod operators;
mod pointwise;
pub mod reduce;
mod resize;
mod shape;
mod view;
pub use binary::Arith;
pub use fft::FftNorm;
pub(crate) use view::as_strided_grad;

pub use index::TensorIndex;

use crate::autograd::FormulaRow;

/// Every derivative table, in the order `docs/formulas.md` lists them.
pub fn derivative_tables() -> Vec<&'static [FormulaRow]> {
    let mut tables = vec![
        basic::FORMULAS,
        binary::FORMULAS,
        pointwise::FORMULAS_ARITH,
        pointwise::FORMULAS_BINARY_FLOAT,
        pointwise::FORMULAS_UNARY_FLOAT,
        pointwise::FORMULAS_UNARY_NUM,
        pointwise::FORMULAS_UNARY_ROUND,
        pointwise::FORMULAS_UNARY_SPECIAL,
        pointwise::FORMULAS_SPECIAL_PARAM,
        pointwise::FORMULAS_TERNARY,
        complex::FORMULAS,
        view::FORMULAS,
        view::FORMULAS_SCATTER,
        shape::FORMULAS,
        linalg::matmul::FORMULAS,
        linalg::decomp::FORMULAS,
        linalg::cholesky::FORMULAS,
        linalg::spectral::FORMULAS,
        linalg::lu::FORMULAS,
        linalg::lstsq::FORMULAS,
        linalg::expm::FORMULAS,
        linalg::eig::FORMULAS,
        linalg::ldl::FORMULAS,
        linalg::einsum::FORMULAS,
        fft::FORMULAS,
        conv::FORMULAS,
        nn::FORMULAS,
        fuse::FORMULAS,
    ];
    tables.extend_from_slice(index::FORMULA_TABLES);
    tables.extend_from_slice(reduce::FORMULA_TABLES);
    tables.push(crate::autograd::HELPER_FORMULAS);
    tables
}
pub use nn::Reduction;
pub use pointwise::{erf, erfc, Num, RoundingMode};
pub(crate) use view::ViewFn;
