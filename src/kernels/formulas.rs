//! The pointwise derivative formulas, each written once, generic over
//! [`Operand`]: the derivative tables run them on tensors (each step a
//! differentiable op, so a backward with `create_graph=True` records its
//! own graph) and the fused backward kernels (`fused.rs`) run them on the
//! elements of `f32`/`f64` tensors in one pass over memory (Note [Fused
//! backward] in `ops/pointwise/mod.rs`).
//!
//! Both run the same steps in the same order, each rounded to the element
//! type, so they give the same bits: Rust never contracts `a * b + c` into
//! a fused multiply-add, and the element [`Operand`] does none either. A
//! constant (`lit(LN_2)`) is a Python-number-like scalar on tensors and
//! `LN_2 as T` on elements, as the tensor op casts it. `tests/fused_backward.rs`
//! compares the two paths bit for bit.
//!
//! `g` is always the gradient flowing in (or, in forward mode, the
//! tangent); `x` a saved input and `y` a saved output.

use super::vmath::PowElem;
use crate::Result;

const LN_2: f64 = std::f64::consts::LN_2;
const LN_10: f64 = std::f64::consts::LN_10;

/// What a formula computes with: tensors (differentiable ops) or the
/// elements of a float tensor. Every operation may fail on tensors
/// (shapes, dtypes); on elements it never does.
pub(crate) trait Operand: Sized {
    /// `self + o`.
    fn add(&self, o: &Self) -> Result<Self>;
    /// `self - o`.
    fn sub(&self, o: &Self) -> Result<Self>;
    /// `self * o`.
    fn mul(&self, o: &Self) -> Result<Self>;
    /// `self / o`.
    fn div(&self, o: &Self) -> Result<Self>;
    /// `-self`.
    fn neg(&self) -> Result<Self>;
    /// `1 / sqrt(self)`.
    fn rsqrt(&self) -> Result<Self>;
    /// `self ^ e`.
    fn pow(&self, e: &Self) -> Result<Self>;
    /// The sign: -1, 0 or 1 (0 for NaN).
    fn sgn(&self) -> Result<Self>;
    /// `self` where `at` is not zero, zero where it is.
    fn zero_where_zero(&self, at: &Self) -> Result<Self>;
    /// `self` where `by > 0` (or NaN), zero where `by <= 0`.
    fn zero_where_nonpositive(&self, by: &Self) -> Result<Self>;
    /// A float constant, as a Python float joins an op.
    fn lit(v: f64) -> Self;
    /// An integer constant, as a Python int joins an op.
    fn int(v: i64) -> Self;
}

macro_rules! element_operand {
    ($($t:ty),*) => {$(
        impl Operand for $t {
            #[inline(always)]
            fn add(&self, o: &Self) -> Result<Self> {
                Ok(self + o)
            }
            #[inline(always)]
            fn sub(&self, o: &Self) -> Result<Self> {
                Ok(self - o)
            }
            #[inline(always)]
            fn mul(&self, o: &Self) -> Result<Self> {
                Ok(self * o)
            }
            #[inline(always)]
            fn div(&self, o: &Self) -> Result<Self> {
                Ok(self / o)
            }
            #[inline(always)]
            fn neg(&self) -> Result<Self> {
                Ok(-self)
            }
            /// Computed as `1 / sqrt(x)`, as the tensor kernel does.
            #[inline(always)]
            fn rsqrt(&self) -> Result<Self> {
                Ok(1.0 / self.sqrt())
            }
            #[inline(always)]
            fn pow(&self, e: &Self) -> Result<Self> {
                Ok(self.pow_one(*e))
            }
            #[inline(always)]
            fn sgn(&self) -> Result<Self> {
                Ok(if *self > 0.0 {
                    1.0
                } else if *self < 0.0 {
                    -1.0
                } else {
                    0.0
                })
            }
            #[inline(always)]
            fn zero_where_zero(&self, at: &Self) -> Result<Self> {
                Ok(if *at == 0.0 { 0.0 } else { *self })
            }
            #[inline(always)]
            fn zero_where_nonpositive(&self, by: &Self) -> Result<Self> {
                Ok(if *by <= 0.0 { 0.0 } else { *self })
            }
            #[inline(always)]
            fn lit(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn int(v: i64) -> Self {
                v as $t
            }
        }
    )*};
}

element_operand!(f32, f64);

/// Defines each formula as a generic function `name(operands) -> Result<N>`.
macro_rules! formulas {
    ($($(#[$m:meta])* $name:ident($($arg:ident),+) = $body:expr;)*) => {$(
        $(#[$m])*
        #[inline(always)]
        pub(crate) fn $name<N: Operand>($($arg: &N),+) -> Result<N> {
            $body
        }
    )*};
}

formulas! {
    /// sqrt: `g / (y * 2)` (inf at 0, as torch).
    sqrt(g, y) = g.div(&y.mul(&N::lit(2.0))?);
    /// rsqrt: `g * (y * y * y) * -0.5`.
    rsqrt(g, y) = g.mul(&y.mul(y)?.mul(y)?)?.mul(&N::lit(-0.5));
    /// exp2: `g * (y * ln 2)`.
    exp2(g, y) = g.mul(&y.mul(&N::lit(LN_2))?);
    /// expm1: `g * (y + 1)`.
    expm1(g, y) = g.mul(&y.add(&N::lit(1.0))?);
    /// log1p: `g / (x + 1)`.
    log1p(g, x) = g.div(&x.add(&N::lit(1.0))?);
    /// log2: `g / (x * ln 2)`.
    log2(g, x) = g.div(&x.mul(&N::lit(LN_2))?);
    /// log10: `g / (x * ln 10)`.
    log10(g, x) = g.div(&x.mul(&N::lit(LN_10))?);
    /// tan: `g * (y * y + 1)`.
    tan(g, y) = g.mul(&y.mul(y)?.add(&N::lit(1.0))?);
    /// asin: `g * rsqrt(1 - x * x)`.
    asin(g, x) = g.mul(&one_minus_sq(x)?.rsqrt()?);
    /// acos: `g * -rsqrt(1 - x * x)`.
    acos(g, x) = g.mul(&one_minus_sq(x)?.rsqrt()?.neg()?);
    /// atan: `g / (x * x + 1)`.
    atan(g, x) = g.div(&x.mul(x)?.add(&N::lit(1.0))?);
    /// asinh: `g * rsqrt(x * x + 1)`.
    asinh(g, x) = g.mul(&x.mul(x)?.add(&N::lit(1.0))?.rsqrt()?);
    /// acosh: `g * rsqrt(x * x - 1)`.
    acosh(g, x) = g.mul(&x.mul(x)?.sub(&N::lit(1.0))?.rsqrt()?);
    /// atanh: `g / (1 - x * x)`.
    atanh(g, x) = g.div(&one_minus_sq(x)?);
    /// tanh: `g * (1 - y * y)`.
    tanh(g, y) = g.mul(&one_minus_sq(y)?);
    /// sigmoid: `g * (y * (1 - y))`.
    sigmoid(g, y) = g.mul(&y.mul(&N::lit(1.0).sub(y)?)?);
    /// reciprocal: `g * -(y * y)`.
    reciprocal(g, y) = g.mul(&y.mul(y)?.neg()?);
    /// abs (real): `g * sgn(x)`, 0 at 0 as torch.
    abs(g, x) = g.mul(&x.sgn()?);
    /// relu: `g` where `y > 0` (or NaN), else 0 (torch's threshold_backward).
    relu(g, y) = g.zero_where_nonpositive(y);
    /// `a / b` for the divisor: `-(g * ((a / b) / b))`, as torch computes
    /// it for stable higher derivatives.
    div_other(g, a, b) = g.mul(&a.div(b)?.div(b)?)?.neg();
    /// `atan2(y, x)`'s common denominator `y * y + x * x`.
    atan2_r2(y, x) = y.mul(y)?.add(&x.mul(x)?);
    /// `atan2(y, x)` for `y`: `(g * x) / r2`.
    atan2_y(g, x, r2) = g.mul(x)?.div(r2);
    /// `atan2(y, x)` for `x`: `-((g * y) / r2)`.
    atan2_x(g, y, r2) = g.mul(y)?.div(r2)?.neg();
    /// [`atan2_y`] from `y` and `x`.
    atan2_dy(g, y, x) = atan2_y(g, x, &atan2_r2(y, x)?);
    /// [`atan2_x`] from `y` and `x`.
    atan2_dx(g, y, x) = atan2_x(g, y, &atan2_r2(y, x)?);
    /// `x ^ e` for the base, `e` a scalar with `em1 = e - 1` computed as
    /// the op computes it: `g * (e * x ^ em1)`.
    pow_base_scalar(g, x, e, em1) = g.mul(&e.mul(&x.pow(em1)?)?);
    /// `x ^ e` for the base, `e` a tensor: `g * (e * x ^ (e - 1))`, 0
    /// where `e == 0` (so `x^0` has zero gradient at `x = 0`, not NaN).
    pow_base(g, x, e) = g.mul(&e.mul(&x.pow(&e.sub(&N::int(1))?)?)?)?.zero_where_zero(e);
}

/// `1 - x * x`.
#[inline(always)]
fn one_minus_sq<N: Operand>(x: &N) -> Result<N> {
    N::lit(1.0).sub(&x.mul(x)?)
}
