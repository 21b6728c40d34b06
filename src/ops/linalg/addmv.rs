//! `beta * input + alpha * product` for the products other than `addmm`'s:
//! `addmv` (matrix @ vector), `addr` (outer product), `baddbmm` (batched
//! products) and `addbmm` (the sum of the batched products). Each is the
//! product, scaled, plus the scaled input, so its derivatives are those of
//! the ops it is made of.

use crate::{DType, Error, Result, Scalar, Tensor};

/// torch's rule for the coefficients of integer inputs.
fn check_coeff(dtype: DType, s: Scalar, name: &str) -> Result<()> {
    if !dtype.is_floating_point() && !dtype.is_complex() && s.is_floating_point() {
        return Err(Error::runtime(format!(
            "For integral input tensors, argument {name} must not be a floating point number."
        )));
    }
    Ok(())
}

/// `beta * input + alpha * product`, `input` broadcast to the product's
/// shape and ignored (NaN included) when `beta` is 0, as torch does.
fn add_scaled(input: &Tensor, product: Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
    check_coeff(input.dtype(), beta, "beta")?;
    check_coeff(input.dtype(), alpha, "alpha")?;
    let shape: Vec<isize> = product.shape().iter().map(|&n| n as isize).collect();
    let input = input.expand(&shape)?;
    let scale = |t: Tensor, s: Scalar| -> Result<Tensor> {
        if s.to_f64() == 1.0 && !s.is_complex() {
            Ok(t)
        } else {
            t.mul(&Tensor::scalar(s))
        }
    };
    let product = scale(product, alpha)?;
    if beta.to_f64() == 0.0 && !beta.is_complex() {
        // Zeros in place of the input (its NaNs too), with zero gradients.
        let never = Tensor::full(&[], Scalar::Bool(false), DType::Bool);
        return product.add(&input.r#where(&never, &Tensor::scalar(0i64))?);
    }
    scale(input, beta)?.add(&product)
}

/// Checks that `t` has `want` dims, in torch's words for `what`.
fn check_ndim(t: &Tensor, want: usize, what: &str) -> Result<()> {
    if t.ndim() != want {
        return Err(Error::runtime(format!(
            "{what} must be a {}-D tensor, got {}-D tensor",
            want,
            t.ndim()
        )));
    }
    Ok(())
}

impl Tensor {
    /// `addmv(mat, vec, beta=1, alpha=1)`: `beta * self + alpha * (mat @ vec)`.
    pub fn addmv(&self, mat: &Tensor, vec: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
        check_ndim(mat, 2, "mat")?;
        check_ndim(vec, 1, "vec")?;
        add_scaled(self, mat.mv(vec)?, beta, alpha)
    }

    /// `addr(vec1, vec2, beta=1, alpha=1)`: `beta * self + alpha * outer(vec1, vec2)`.
    pub fn addr(
        &self,
        vec1: &Tensor,
        vec2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
    ) -> Result<Tensor> {
        check_ndim(vec1, 1, "vec1")?;
        check_ndim(vec2, 1, "vec2")?;
        add_scaled(self, vec1.outer(vec2)?, beta, alpha)
    }

    /// `baddbmm(batch1, batch2, beta=1, alpha=1)`: `beta * self + alpha *
    /// (batch1 @ batch2)` for batches of matrices.
    pub fn baddbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
    ) -> Result<Tensor> {
        check_ndim(batch1, 3, "batch1")?;
        check_ndim(batch2, 3, "batch2")?;
        add_scaled(self, batch1.bmm(batch2)?, beta, alpha)
    }

    /// `addbmm(batch1, batch2, beta=1, alpha=1)`: `beta * self + alpha *
    /// sum_b (batch1[b] @ batch2[b])`.
    pub fn addbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: Scalar,
        alpha: Scalar,
    ) -> Result<Tensor> {
        check_ndim(batch1, 3, "batch1")?;
        check_ndim(batch2, 3, "batch2")?;
        add_scaled(
            self,
            batch1.bmm(batch2)?.sum(Some(&[0]), false, None)?,
            beta,
            alpha,
        )
    }
}
