//! `linalg.matrix_exp`: the exponential of square matrices by scaling and
//! squaring with the degree-13 Padé approximant (Higham, "The scaling and
//! squaring method for the matrix exponential revisited", 2005), in the
//! input's own dtype. Its derivatives are themselves exponentials: the
//! upper-right block of `exp([[X, Y], [0, X]])` is the derivative of `exp`
//! at `X` in the direction `Y` (the reverse one takes `X = A^H`).

use super::decomp::check_square;
use crate::autograd::derivatives;
use crate::tensor::broadcast_shapes;
use crate::{DType, Result, Tensor};

/// The coefficients `b_0..b_13` of the degree-13 Padé approximant of `exp`.
const PADE13: [f64; 14] = [
    64_764_752_532_480_000.0,
    32_382_376_266_240_000.0,
    7_771_770_303_897_600.0,
    1_187_353_796_428_800.0,
    129_060_195_264_000.0,
    10_559_470_521_600.0,
    670_442_572_800.0,
    33_522_128_640.0,
    1_323_241_920.0,
    40_840_800.0,
    960_960.0,
    16_380.0,
    182.0,
    1.0,
];

/// The 1-norm up to which the degree-13 approximant is exact to float64
/// rounding (Higham's `θ_13`); larger matrices are scaled down by powers
/// of two below it and the result squared back up.
const THETA13: f64 = 5.371_920_351_148_152;

/// `Σ c_i X_i` over the `(c_i, X_i)` of `terms`.
fn combine(terms: &[(f64, &Tensor)]) -> Result<Tensor> {
    let (c0, x0) = terms[0];
    let mut acc = x0.mul(&Tensor::scalar(c0))?;
    for &(c, x) in &terms[1..] {
        acc = acc.add(&x.mul(&Tensor::scalar(c))?)?;
    }
    Ok(acc)
}

/// The exponential of each square matrix of `a` (not recorded).
fn expm_value(a: &Tensor, n: usize) -> Result<Tensor> {
    if a.numel() == 0 {
        return Tensor::try_zeros(a.shape(), a.dtype());
    }
    let nd = a.ndim();
    // The number of halvings per matrix, from its 1-norm (the largest
    // column sum of moduli).
    let norms = a
        .abs()?
        .to_dtype(DType::Float64)
        .sum(Some(&[-2]), false, None)?
        .amax(Some(&[-1]), false)?
        .to_vec::<f64>();
    let halvings: Vec<i32> = norms
        .iter()
        .map(|&x| {
            if x.is_finite() && x > THETA13 {
                (x / THETA13).log2().ceil().min(1024.0) as i32
            } else {
                0
            }
        })
        .collect();
    let scales: Vec<f64> = halvings.iter().map(|&s| (-s as f64).exp2()).collect();
    let mut batch: Vec<usize> = a.shape()[..nd - 2].to_vec();
    batch.extend([1, 1]);
    let scale = Tensor::from_slice(&scales, &batch)?.to_dtype(a.dtype());
    let x = a.mul(&scale)?;
    let eye = Tensor::eye(n as i64, None, a.dtype())?;
    let x2 = x.matmul(&x)?;
    let x4 = x2.matmul(&x2)?;
    let x6 = x4.matmul(&x2)?;
    let b = PADE13;
    let u_inner = x6.matmul(&combine(&[(b[13], &x6), (b[11], &x4), (b[9], &x2)])?)?;
    let u = x.matmul(&u_inner.add(&combine(&[
        (b[7], &x6),
        (b[5], &x4),
        (b[3], &x2),
        (b[1], &eye),
    ])?)?)?;
    let v_inner = x6.matmul(&combine(&[(b[12], &x6), (b[10], &x4), (b[8], &x2)])?)?;
    let v = v_inner.add(&combine(&[
        (b[6], &x6),
        (b[4], &x4),
        (b[2], &x2),
        (b[0], &eye),
    ])?)?;
    let mut r = v.sub(&u)?.linalg_solve(&v.add(&u)?)?;
    let most = halvings.iter().copied().max().unwrap_or(0);
    let uniform = halvings.iter().all(|&s| s == most);
    for step in 0..most {
        let squared = r.matmul(&r)?;
        r = if uniform {
            squared
        } else {
            let left: Vec<bool> = halvings.iter().map(|&s| step < s).collect();
            squared.r#where(&Tensor::from_slice(&left, &batch)?, &r)?
        };
    }
    // Row-major, as torch's result (the solve's is column-major).
    Ok(r.contiguous())
}

/// The upper-right `n x n` block of `exp([[x, y], [0, x]])` (recorded):
/// the derivative of `exp` at `x` in the direction `y`; `x` broadcasts to
/// `y`'s batch dims.
fn upper_block_exp(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    let shape = broadcast_shapes(x.shape(), y.shape())?;
    let (x, y) = (x.broadcast_to(&shape)?, y.broadcast_to(&shape)?);
    let n = shape[shape.len() - 1];
    let zero = Tensor::try_zeros(&shape, x.dtype())?;
    let top = Tensor::cat(&[x.clone(), y], -1)?;
    let bottom = Tensor::cat(&[zero, x], -1)?;
    let big = Tensor::cat(&[top, bottom], -2)?.linalg_matrix_exp()?;
    big.narrow(-2, 0, n)?.narrow(-1, n as isize, n)
}

derivatives! {
    table FORMULAS("linear algebra: matrix_exp") for Tensor;

    /// `linalg.matrix_exp(A)`: `Σ A^k / k!` for each square matrix.
    pub fn linalg_matrix_exp(&self) -> Result<Tensor> {
        before {
            let n = check_square(self, "linalg.matrix_exp")?;
        }
        record "LinalgMatrixExpBackward0", [self];
        compute => out = expm_value(self, n)?;
        save |s| {
            s.save("self", self);
        }
        backward |ctx, g| {
            let a = ctx.saved(0)?;
            Ok(vec![Some(upper_block_exp(&a.adjoint()?, &g[0])?)])
        };
        forward formula(|t| t.map1(|da| upper_block_exp(self, da)));
        // The block matrix takes `g`'s batch dims, `A^H` broadcast to them.
        batched broadcast;
    }
}
