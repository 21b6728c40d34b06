//! Binary arithmetic beyond add/sub/mul: `alpha=` forms, the division
//! family, remainders, powers, atan2 and NaN-propagating maximum/minimum.

use super::math::Num;
use super::{check_divisor, check_inplace, float_of, promoted, scalar_factor, unsupported};
use crate::ops::binary::{inplace_operand, promote2};
use crate::ops::iter::{apply2, map2};
use crate::ops::Arith;
use crate::{dispatch_float, dispatch_numeric, DType, Error, Result, Scalar, Tensor};

/// How `div` rounds its quotient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundingMode {
    /// Toward zero (C's integer division).
    Trunc,
    /// Toward negative infinity (Python's `//`).
    Floor,
}

impl RoundingMode {
    /// Parses torch's `rounding_mode` strings `"trunc"` and `"floor"`.
    pub fn parse(s: &str) -> Result<RoundingMode> {
        match s {
            "trunc" => Ok(RoundingMode::Trunc),
            "floor" => Ok(RoundingMode::Floor),
            other => Err(Error::runtime(format!(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
            ))),
        }
    }
}

impl Tensor {
    /// `add(other, alpha=alpha)`: `self + alpha * other`.
    pub fn add_scaled(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        if alpha == Scalar::Int(1) {
            return self.add(other);
        }
        let (dt, a, b) = promote2(self, other);
        dispatch_numeric!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            map2::<T, T, T>(&a, &b, move |x, y| T::add(x, T::mul(k, y)))
        }, else {
            let k: bool = scalar_factor("alpha", alpha, dt)?;
            map2::<bool, bool, bool>(&a, &b, move |x, y| x | (k & y))
        })
    }

    /// In-place form of [`Tensor::add_scaled`].
    pub fn add_scaled_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        if alpha == Scalar::Int(1) {
            return self.add_(other);
        }
        let b = inplace_operand("add_", self, other)?;
        let dt = self.dtype();
        dispatch_numeric!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            apply2::<T, T>(self, &b, move |x, y| T::add(x, T::mul(k, y)))
        }, else {
            let k: bool = scalar_factor("alpha", alpha, dt)?;
            apply2::<bool, bool>(self, &b, move |x, y| x | (k & y))
        })
    }

    /// `sub(other, alpha=alpha)`: `self - alpha * other` (not for bool).
    pub fn sub_scaled(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        if alpha == Scalar::Int(1) {
            return self.sub(other);
        }
        let (dt, a, b) = promote2(self, other);
        dispatch_numeric!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            map2::<T, T, T>(&a, &b, move |x, y| T::sub(x, T::mul(k, y)))
        }, else Err(bool_sub_error()))
    }

    /// `sub_(other)`: in place.
    pub fn sub_(&self, other: &Tensor) -> Result<()> {
        self.sub_scaled_(other, Scalar::Int(1))
    }

    /// In-place form of [`Tensor::sub_scaled`].
    pub fn sub_scaled_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        let b = inplace_operand("sub_", self, other)?;
        let dt = self.dtype();
        dispatch_numeric!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            if alpha == Scalar::Int(1) {
                apply2::<T, T>(self, &b, T::sub)
            } else {
                apply2::<T, T>(self, &b, move |x, y| T::sub(x, T::mul(k, y)))
            }
        }, else Err(bool_sub_error()))
    }

    /// `mul_(other)`: in place (bool: logical and).
    pub fn mul_(&self, other: &Tensor) -> Result<()> {
        let b = inplace_operand("mul_", self, other)?;
        dispatch_numeric!(self.dtype(), T => apply2::<T, T>(self, &b, T::mul),
            else apply2::<bool, bool>(self, &b, |x, y| x & y))
    }

    /// `div(other)` (alias `true_divide`): true division; integer and bool
    /// inputs divide as the default float dtype.
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        let dt = float_of(promoted(&[self, other]));
        let (a, b) = (self.to_dtype(dt), other.to_dtype(dt));
        dispatch_float!(dt, T => map2::<T, T, T>(&a, &b, |x, y| x / y),
            else Err(unsupported("div", dt)))
    }

    /// `div_(other)`: in place (float tensors only).
    pub fn div_(&self, other: &Tensor) -> Result<()> {
        check_inplace("div_", self, float_of(promoted(&[self, other])))?;
        let b = other.to_dtype(self.dtype());
        dispatch_float!(self.dtype(), T => apply2::<T, T>(self, &b, |x, y| x / y),
            else Err(unsupported("div_", self.dtype())))
    }

    /// `div(other, rounding_mode=...)`: `None` is true division; `Trunc` and
    /// `Floor` keep the promoted dtype (integers raise on a zero divisor).
    pub fn div_mode(&self, other: &Tensor, mode: Option<RoundingMode>) -> Result<Tensor> {
        match mode {
            None => self.div(other),
            Some(RoundingMode::Trunc) => self.binary_num::<DivTrunc>("div_trunc", other),
            Some(RoundingMode::Floor) => self.binary_num::<FloorDiv>("div_floor", other),
        }
    }

    /// In-place form of [`Tensor::div_mode`].
    pub fn div_mode_(&self, other: &Tensor, mode: Option<RoundingMode>) -> Result<()> {
        match mode {
            None => self.div_(other),
            Some(RoundingMode::Trunc) => self.binary_num_::<DivTrunc>("div_trunc_", other),
            Some(RoundingMode::Floor) => self.binary_num_::<FloorDiv>("div_floor_", other),
        }
    }

    /// `floor_divide(other)` (`//`): quotient rounded toward -inf.
    pub fn floor_divide(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_num::<FloorDiv>("floor_divide", other)
    }
    /// In-place form of [`Tensor::floor_divide`].
    pub fn floor_divide_(&self, other: &Tensor) -> Result<()> {
        self.binary_num_::<FloorDiv>("floor_divide_", other)
    }

    /// `remainder(other)` (`%`): remainder with the divisor's sign.
    pub fn remainder(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_num::<Remainder>("remainder", other)
    }
    /// In-place form of [`Tensor::remainder`].
    pub fn remainder_(&self, other: &Tensor) -> Result<()> {
        self.binary_num_::<Remainder>("remainder_", other)
    }

    /// `fmod(other)`: remainder with the dividend's sign.
    pub fn fmod(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_num::<Fmod>("fmod", other)
    }
    /// In-place form of [`Tensor::fmod`].
    pub fn fmod_(&self, other: &Tensor) -> Result<()> {
        self.binary_num_::<Fmod>("fmod_", other)
    }

    /// `maximum(other)`: elementwise max; NaN if either is NaN.
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_num::<Maximum>("maximum", other)
    }

    /// `minimum(other)`: elementwise min; NaN if either is NaN.
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        self.binary_num::<Minimum>("minimum", other)
    }

    /// `pow(exponent)`: `self ** exponent`. An integer result with a
    /// negative Python-number exponent raises, as torch.
    pub fn pow(&self, exponent: &Tensor) -> Result<Tensor> {
        check_int_pow(promoted(&[self, exponent]), exponent)?;
        self.binary_num::<Pow>("pow", exponent)
    }

    /// In-place form of [`Tensor::pow`].
    pub fn pow_(&self, exponent: &Tensor) -> Result<()> {
        check_int_pow(self.dtype(), exponent)?;
        self.binary_num_::<Pow>("pow_", exponent)
    }

    /// `atan2(other)` (alias `arctan2`): angle of the point (other, self).
    pub fn atan2(&self, other: &Tensor) -> Result<Tensor> {
        let dt = float_of(promoted(&[self, other]));
        let (a, b) = (self.to_dtype(dt), other.to_dtype(dt));
        dispatch_float!(dt, T => map2::<T, T, T>(&a, &b, |y, x| y.atan2(x)),
            else Err(unsupported("atan2", dt)))
    }

    /// In-place form of [`Tensor::atan2`].
    pub fn atan2_(&self, other: &Tensor) -> Result<()> {
        check_inplace("atan2_", self, float_of(promoted(&[self, other])))?;
        let b = other.to_dtype(self.dtype());
        dispatch_float!(self.dtype(), T => apply2::<T, T>(self, &b, |y, x| y.atan2(x)),
            else Err(unsupported("atan2_", self.dtype())))
    }
}

fn bool_sub_error() -> Error {
    Error::runtime("Subtraction, the `-` operator, with two bool tensors is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
}

fn check_int_pow(dt: DType, exponent: &Tensor) -> Result<()> {
    if !dt.is_floating_point() && exponent.is_wrapped_number() && exponent.item()?.to_f64() < 0.0 {
        return Err(Error::runtime(
            "Integers to negative integer powers are not allowed.",
        ));
    }
    Ok(())
}

/// A binary op with per-dtype semantics from [`Num`]: its math, what bool
/// tensors do (`None`: raise as torch), and whether an integer zero divisor
/// must be refused.
trait NumOp {
    const BOOL: Option<fn(bool, bool) -> bool> = None;
    const DIVIDES: bool = false;
    fn apply<T: Num>(a: T, b: T) -> T;
}

macro_rules! num_ops {
    ($($op:ident: $f:ident $(, divides: $div:expr)? $(, bool: $b:expr)?;)*) => {
        $(
            struct $op;
            impl NumOp for $op {
                $(const DIVIDES: bool = $div;)?
                $(const BOOL: Option<fn(bool, bool) -> bool> = Some($b);)?
                #[inline(always)]
                fn apply<T: Num>(a: T, b: T) -> T {
                    T::$f(a, b)
                }
            }
        )*
    };
}

num_ops! {
    DivTrunc: div_trunc, divides: true;
    FloorDiv: floor_div, divides: true;
    Remainder: remainder, divides: true;
    Fmod: fmod, divides: true;
    Maximum: max_nan, bool: |x, y| x | y;
    Minimum: min_nan, bool: |x, y| x & y;
    Pow: power;
}

impl Tensor {
    fn binary_num<K: NumOp>(&self, name: &str, other: &Tensor) -> Result<Tensor> {
        let (dt, a, b) = promote2(self, other);
        if K::DIVIDES {
            check_divisor(dt, &b)?;
        }
        dispatch_numeric!(dt, T => map2::<T, T, T>(&a, &b, K::apply::<T>),
        else match K::BOOL {
            Some(g) => map2::<bool, bool, bool>(&a, &b, g),
            None => Err(unsupported(name, dt)),
        })
    }

    fn binary_num_<K: NumOp>(&self, name: &'static str, other: &Tensor) -> Result<()> {
        let b = inplace_operand(name, self, other)?;
        let dt = self.dtype();
        if K::DIVIDES {
            check_divisor(dt, &b)?;
        }
        dispatch_numeric!(dt, T => apply2::<T, T>(self, &b, K::apply::<T>),
        else match K::BOOL {
            Some(g) => apply2::<bool, bool>(self, &b, g),
            None => Err(unsupported(name, dt)),
        })
    }
}
