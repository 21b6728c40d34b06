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

/// `beta * input + alpha * product(a, b)` after checking that `a` and `b`
/// (named for torch's errors) have the dims the product takes.
fn add_product(
    input: &Tensor,
    ((a, a_name, a_dims), (b, b_name, b_dims)): ((&Tensor, &str, usize), (&Tensor, &str, usize)),
    (beta, alpha): (Scalar, Scalar),
    product: impl FnOnce(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    check_ndim(a, a_dims, a_name)?;
    check_ndim(b, b_dims, b_name)?;
    add_scaled(input, product(a, b)?, beta, alpha)
}

/// `sum_b (a[b] @ b[b])` as one product of the batches laid side by side:
/// `(n x b*m) @ (b*m x p)`.
fn summed_bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.shape()[0] != b.shape()[0] || a.shape()[2] != b.shape()[1] {
        // bmm's own error, naming both shapes.
        return a.bmm(b);
    }
    let (n, width) = (
        a.shape()[1] as isize,
        (a.shape()[0] * a.shape()[2]) as isize,
    );
    let rows = a.permute(&[1, 0, 2])?.reshape(&[n, width])?;
    rows.mm(&b.reshape(&[width, b.shape()[2] as isize])?)
}

/// The methods `name(a, b, beta, alpha)`: `beta * self + alpha *
/// product(a, b)`, `a` and `b` of the given dims.
macro_rules! fused_add_methods {
    ($($(#[doc = $doc:literal])* $name:ident($a:ident: $ad:literal, $b:ident: $bd:literal) => $product:expr;)*) => {
        impl Tensor {
            $(
                $(#[doc = $doc])*
                pub fn $name(&self, $a: &Tensor, $b: &Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
                    let args = (($a, stringify!($a), $ad), ($b, stringify!($b), $bd));
                    add_product(self, args, (beta, alpha), $product)
                }
            )*
        }
    };
}

fused_add_methods! {
    /// `addmv(mat, vec, beta=1, alpha=1)`: `beta * self + alpha * (mat @ vec)`.
    addmv(mat: 2, vec: 1) => Tensor::mv;
    /// `addr(vec1, vec2, beta=1, alpha=1)`: `beta * self + alpha * outer(vec1, vec2)`.
    addr(vec1: 1, vec2: 1) => Tensor::outer;
    /// `baddbmm(batch1, batch2, beta=1, alpha=1)`: `beta * self + alpha *
    /// (batch1 @ batch2)` for batches of matrices.
    baddbmm(batch1: 3, batch2: 3) => Tensor::bmm;
    /// `addbmm(batch1, batch2, beta=1, alpha=1)`: `beta * self + alpha *
    /// sum_b (batch1[b] @ batch2[b])`.
    addbmm(batch1: 3, batch2: 3) => summed_bmm;
}
