//! Binary elementwise arithmetic with broadcasting and type promotion.

use crate::autograd::{derivatives, Tangents};
pub use crate::kernels::arith::Arith;
use crate::kernels::half::half_map2;
use crate::kernels::iter::{apply2, map2};
pub(crate) use crate::tensor::check_inplace_dtype as check_inplace;
use crate::tensor::result_type;
use crate::{DType, Error, Result, Tensor};

/// The promoted dtype of two operands and both operands cast to it.
pub(crate) fn promote2(a: &Tensor, b: &Tensor) -> (DType, Tensor, Tensor) {
    let dt = result_type(&[a.promotion_operand(), b.promotion_operand()]);
    (dt, a.to_dtype(dt), b.to_dtype(dt))
}

/// [`Tangents::sum1`] for an op whose output is a new tensor: a sum that is
/// just one input's tangent (or a view of it) is copied, so an in-place op
/// on the output, which writes into the output's tangent, leaves the
/// input's alone.
pub(crate) fn sum1_fresh(
    ts: &Tangents,
    f: impl FnMut(usize, &Tensor) -> Result<Tensor>,
) -> Result<Vec<Option<Tensor>>> {
    let sum = ts.combine(f)?.map(|s| {
        let aliased =
            (0..ts.len()).any(|i| ts.get(i).is_some_and(|t| t.storage().same(s.storage())));
        if aliased {
            s.copy()
        } else {
            s
        }
    });
    Ok(vec![sum])
}

/// For in-place ops: `other` cast to `dst`'s dtype, after checking that the
/// promoted result type can be stored in `dst` (torch refuses e.g. writing
/// a float result into an int tensor).
pub(crate) fn inplace_operand(op: &'static str, dst: &Tensor, other: &Tensor) -> Result<Tensor> {
    let dt = result_type(&[dst.promotion_operand(), other.promotion_operand()]);
    check_inplace(op, dst, dt)?;
    Ok(other.to_dtype(dst.dtype()))
}

derivatives! {
    table FORMULAS("binary: add, sub, mul") for Tensor;

    /// `add(other)`: `self + other` (bool + bool is logical or).
    pub fn add(&self, other: &Tensor) -> Result<Tensor> {
        record "AddBackward0", [self, other];
        compute {
            let (dt, a, b) = promote2(self, other);
        } => out = match half_map2(&a, &b, |x, y| x + y) {
            Some(r) => r,
            None => crate::dispatch_arith!(dt, T => map2::<T, T, T>(&a, &b, T::add),
                else map2::<bool, bool, bool>(&a, &b, |x, y| x | y)),
        }?;
        save nothing
        backward |ctx, g| Ok(vec![Some(g[0].clone()), Some(g[0].clone())]);
        forward elementwise(|t| sum1_fresh(t, |_, t| Ok(t.clone())));
        batched broadcast;
        inplace add_(self; other) |s| s.add(other); {
            let b = inplace_operand("add_", self, other)?;
        } => crate::dispatch_arith!(self.dtype(), T => apply2::<T, T>(self, &b, T::add),
            else apply2::<bool, bool>(self, &b, |x, y| x | y));
    }

    /// `sub(other)`: `self - other` (not defined for bool, as in torch).
    pub fn sub(&self, other: &Tensor) -> Result<Tensor> {
        record "SubBackward0", [self, other];
        compute {
            let (dt, a, b) = promote2(self, other);
        } => out = match half_map2(&a, &b, |x, y| x - y) {
            Some(r) => r,
            None => crate::dispatch_arith!(dt, T => map2::<T, T, T>(&a, &b, T::sub),
                else Err(Error::runtime("Subtraction, the `-` operator, with two bool tensors is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."))),
        }?;
        save nothing
        backward |ctx, g| Ok(vec![
            Some(g[0].clone()),
            ctx.needs(1).then(|| g[0].neg()).transpose()?,
        ]);
        forward elementwise(|t| sum1_fresh(t, |i, t| if i == 0 { Ok(t.clone()) } else { t.neg() }));
        batched broadcast;
    }

    /// `mul(other)`: `self * other` (bool * bool is logical and).
    pub fn mul(&self, other: &Tensor) -> Result<Tensor> {
        record "MulBackward0", [self, other];
        compute {
            let (dt, a, b) = promote2(self, other);
        } => out = match half_map2(&a, &b, |x, y| x * y) {
            Some(r) => r,
            None => crate::dispatch_arith!(dt, T => map2::<T, T, T>(&a, &b, T::mul),
                else map2::<bool, bool, bool>(&a, &b, |x, y| x & y)),
        }?;
        save |s, needs| {
            s.save_opt("other", needs[0].then_some(other));
            s.save_opt("self", needs[1].then_some(self));
        }
        backward |ctx, g| Ok(vec![
            // conj: a no-op for real operands (see ops::complex).
            ctx.saved_opt(0)?.map(|o| g[0].mul(&o.conj()?)).transpose()?,
            ctx.saved_opt(1)?.map(|s| g[0].mul(&s.conj()?)).transpose()?,
        ]);
        forward elementwise(|t| t.sum1(|i, t| if i == 0 { t.mul(other) } else { t.mul(self) }));
        batched broadcast;
    }
}
