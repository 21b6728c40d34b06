//! Binary arithmetic beyond add/sub/mul: `alpha=` forms, the division
//! family, remainders, powers, atan2 and NaN-propagating maximum/minimum.

use super::math::Num;
use super::{
    check_divisor, check_inplace, float_of, num, promoted, scalar_factor, unsupported, zero_where,
};
use crate::autograd::{check_write, inplace, Recorder, SavedValue};
use crate::kernels::iter::{apply2, map2};
use crate::ops::binary::{inplace_operand, promote2, sum1_fresh};
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
        let rec = Recorder::new("AddBackward0", &[self, other]).batched();
        let (dt, a, b) = promote2(self, other);
        let out = dispatch_numeric!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            map2::<T, T, T>(&a, &b, move |x, y| T::add(x, T::mul(k, y)))
        }, else {
            let k: bool = scalar_factor("alpha", alpha, dt)?;
            map2::<bool, bool, bool>(&a, &b, move |x, y| x | (k & y))
        })?;
        rec.jvp_elementwise(|t| {
            sum1_fresh(t, |i, t| {
                if i == 0 {
                    Ok(t.clone())
                } else {
                    t.mul(&num(alpha))
                }
            })
        })
        .finish_simple(&out, move |ctx, g| {
            let other = ctx.needs(1).then(|| g[0].mul(&num(alpha))).transpose()?;
            Ok(vec![Some(g[0].clone()), other])
        })?;
        Ok(out)
    }

    /// In-place form of [`Tensor::add_scaled`].
    pub fn add_scaled_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        if alpha == Scalar::Int(1) {
            return self.add_(other);
        }
        if inplace("add_", self, &[other], |s| s.add_scaled(other, alpha))? {
            return Ok(());
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
        let rec = Recorder::new("SubBackward0", &[self, other]).batched();
        let (dt, a, b) = promote2(self, other);
        let out = dispatch_numeric!(dt, T => {
            let k: T = scalar_factor("alpha", alpha, dt)?;
            map2::<T, T, T>(&a, &b, move |x, y| T::sub(x, T::mul(k, y)))
        }, else Err(bool_sub_error()))?;
        rec.jvp_elementwise(|t| {
            sum1_fresh(t, |i, t| {
                if i == 0 {
                    Ok(t.clone())
                } else {
                    t.mul(&num(alpha))?.neg()
                }
            })
        })
        .finish_simple(&out, move |ctx, g| {
            let other = ctx
                .needs(1)
                .then(|| g[0].mul(&num(alpha))?.neg())
                .transpose()?;
            Ok(vec![Some(g[0].clone()), other])
        })?;
        Ok(out)
    }

    /// `rsub(other, alpha=alpha)`: `other - alpha * self` (what `number -
    /// tensor` computes). torch records `RsubBackward1` with no edge for a
    /// Python-number `other` (a Scalar), `RsubBackward0` for a tensor.
    pub fn rsub_scaled(&self, other: &Tensor, alpha: Scalar) -> Result<Tensor> {
        let rec = if other.is_wrapped_number() {
            Recorder::new("RsubBackward1", &[self, other]).scalar_input(1)
        } else {
            Recorder::new("RsubBackward0", &[self, other])
        }
        .batched();
        // The recorder turned recording off: this computes the value only.
        let out = other.sub_scaled(self, alpha)?;
        rec.jvp_elementwise(|t| {
            sum1_fresh(t, |i, t| {
                if i == 0 {
                    t.mul(&num(alpha))?.neg()
                } else {
                    Ok(t.clone())
                }
            })
        })
        .finish(
            &[&out],
            |s| {
                s.attr(
                    "alpha",
                    match alpha {
                        Scalar::Int(i) => SavedValue::Int(i),
                        Scalar::Float(f) => SavedValue::Float(f),
                        Scalar::Bool(b) => SavedValue::Bool(b),
                    },
                )
            },
            move |ctx, g| {
                let d_self = ctx
                    .needs(0)
                    .then(|| g[0].mul(&num(alpha))?.neg())
                    .transpose()?;
                Ok(vec![d_self, Some(g[0].clone())])
            },
        )?;
        Ok(out)
    }

    /// `sub_(other)`: in place.
    pub fn sub_(&self, other: &Tensor) -> Result<()> {
        self.sub_scaled_(other, Scalar::Int(1))
    }

    /// In-place form of [`Tensor::sub_scaled`].
    pub fn sub_scaled_(&self, other: &Tensor, alpha: Scalar) -> Result<()> {
        if inplace("sub_", self, &[other], |s| s.sub_scaled(other, alpha))? {
            return Ok(());
        }
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
        if inplace("mul_", self, &[other], |s| s.mul(other))? {
            return Ok(());
        }
        let b = inplace_operand("mul_", self, other)?;
        dispatch_numeric!(self.dtype(), T => apply2::<T, T>(self, &b, T::mul),
            else apply2::<bool, bool>(self, &b, |x, y| x & y))
    }

    /// `div(other)` (alias `true_divide`): true division; integer and bool
    /// inputs divide as the default float dtype.
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        let rec = Recorder::new("DivBackward0", &[self, other]).batched();
        let dt = float_of(promoted(&[self, other]));
        let (a, b) = (self.to_dtype(dt), other.to_dtype(dt));
        let out = dispatch_float!(dt, T => map2::<T, T, T>(&a, &b, |x, y| x / y),
            else Err(unsupported("div", dt)))?;
        let n1 = rec.needs(1);
        // d(a/b) = da / b - db * (a / b) / b
        rec.jvp_elementwise(|t| {
            t.sum1(|i, t| {
                if i == 0 {
                    t.div(other)
                } else {
                    t.mul(&out)?.div(other)?.neg()
                }
            })
        })
        .finish(
            &[&out],
            |s| {
                s.save_opt("self", n1.then_some(self));
                s.save("other", other);
            },
            |ctx, g| {
                let other = ctx.saved(1)?;
                // d(a/b)/db = -a / b^2, computed as -(a / b) / b for stable
                // higher derivatives (as torch).
                let d_other = match ctx.saved_opt(0)? {
                    Some(a) => Some(g[0].mul(&a.div(&other)?.div(&other)?)?.neg()?),
                    None => None,
                };
                let d_self = ctx.needs(0).then(|| g[0].div(&other)).transpose()?;
                Ok(vec![d_self, d_other])
            },
        )?;
        Ok(out)
    }

    /// `div_(other)`: in place (float tensors only).
    pub fn div_(&self, other: &Tensor) -> Result<()> {
        if inplace("div_", self, &[other], |s| s.div(other))? {
            return Ok(());
        }
        check_inplace("div_", self, float_of(promoted(&[self, other])))?;
        let b = other.to_dtype(self.dtype());
        dispatch_float!(self.dtype(), T => apply2::<T, T>(self, &b, |x, y| x / y),
            else Err(unsupported("div_", self.dtype())))
    }

    /// `div(other, rounding_mode=...)`: `None` is true division; `Trunc` and
    /// `Floor` keep the promoted dtype (integers raise on a zero divisor).
    pub fn div_mode(&self, other: &Tensor, mode: Option<RoundingMode>) -> Result<Tensor> {
        let Some(mode) = mode else {
            return self.div(other);
        };
        let rec = Recorder::new("DivBackward2", &[self, other]);
        let out = match mode {
            RoundingMode::Trunc => self.binary_num::<DivTrunc>("div_trunc", other),
            RoundingMode::Floor => self.binary_num::<FloorDiv>("div_floor", other),
        }?;
        // A rounded quotient is piecewise constant: zero gradients.
        rec.jvp_batched(|_| Ok(vec![None]))
            .finish_simple(&out, |ctx, g| {
                let zero = |i| ctx.needs(i).then(|| g[0].zeros_like()).transpose();
                Ok(vec![zero(0)?, zero(1)?])
            })?;
        Ok(out)
    }

    /// In-place form of [`Tensor::div_mode`].
    pub fn div_mode_(&self, other: &Tensor, mode: Option<RoundingMode>) -> Result<()> {
        if mode.is_some() && inplace("div_", self, &[other], |s| s.div_mode(other, mode))? {
            return Ok(());
        }
        match mode {
            None => self.div_(other),
            Some(RoundingMode::Trunc) => self.binary_num_::<DivTrunc>("div_trunc_", other),
            Some(RoundingMode::Floor) => self.binary_num_::<FloorDiv>("div_floor_", other),
        }
    }

    /// `floor_divide(other)` (`//`): quotient rounded toward -inf.
    /// Like torch, it has no derivative: backward through it raises.
    pub fn floor_divide(&self, other: &Tensor) -> Result<Tensor> {
        let rec = Recorder::new("NotImplemented", &[self, other]);
        let out = self.binary_num::<FloorDiv>("floor_divide", other)?;
        rec.jvp(|_| Err(floor_divide_error()))
            .finish_simple(&out, |_, _| Err(floor_divide_error()))?;
        Ok(out)
    }
    /// In-place form of [`Tensor::floor_divide`].
    pub fn floor_divide_(&self, other: &Tensor) -> Result<()> {
        if inplace("floor_divide_", self, &[other], |s| s.floor_divide(other))? {
            return Ok(());
        }
        self.binary_num_::<FloorDiv>("floor_divide_", other)
    }

    /// `remainder(other)` (`%`): remainder with the divisor's sign.
    pub fn remainder(&self, other: &Tensor) -> Result<Tensor> {
        let rec = if other.is_wrapped_number() {
            Recorder::new("RemainderBackward0", &[self, other]).scalar_input(1)
        } else {
            Recorder::new("RemainderBackward1", &[self, other])
        };
        let out = self.binary_num::<Remainder>("remainder", other)?;
        self.record_modulo(rec, &out, other, RoundingMode::Floor)?;
        Ok(out)
    }
    /// In-place form of [`Tensor::remainder`].
    pub fn remainder_(&self, other: &Tensor) -> Result<()> {
        if inplace("remainder_", self, &[other], |s| s.remainder(other))? {
            return Ok(());
        }
        self.binary_num_::<Remainder>("remainder_", other)
    }

    /// `fmod(other)`: remainder with the dividend's sign.
    pub fn fmod(&self, other: &Tensor) -> Result<Tensor> {
        let rec = if other.is_wrapped_number() {
            Recorder::new("FmodBackward0", &[self, other]).scalar_input(1)
        } else {
            Recorder::new("FmodBackward1", &[self, other])
        };
        let out = self.binary_num::<Fmod>("fmod", other)?;
        self.record_modulo(rec, &out, other, RoundingMode::Trunc)?;
        Ok(out)
    }
    /// In-place form of [`Tensor::fmod`].
    pub fn fmod_(&self, other: &Tensor) -> Result<()> {
        if inplace("fmod_", self, &[other], |s| s.fmod(other))? {
            return Ok(());
        }
        self.binary_num_::<Fmod>("fmod_", other)
    }

    /// Backward of `self mod other = self - other * q` with the quotient `q`
    /// rounded by `mode` (floor: remainder, trunc: fmod): `d/dself = 1`,
    /// `d/dother = -q` (q is piecewise constant).
    fn record_modulo<'a>(
        &'a self,
        rec: Recorder<'a>,
        out: &'a Tensor,
        other: &'a Tensor,
        mode: RoundingMode,
    ) -> Result<()> {
        let n1 = rec.needs(1);
        rec.jvp_elementwise(|t| {
            sum1_fresh(t, |i, t| {
                if i == 0 {
                    Ok(t.clone())
                } else {
                    t.mul(&self.div_mode(other, Some(mode))?)?.neg()
                }
            })
        })
        .finish(
            &[out],
            |s| {
                s.save_opt("self", n1.then_some(self));
                s.save_opt("other", n1.then_some(other));
            },
            move |ctx, g| {
                let d_other = match (ctx.saved_opt(0)?, ctx.saved_opt(1)?) {
                    (Some(a), Some(b)) => Some(g[0].mul(&a.div_mode(&b, Some(mode))?)?.neg()?),
                    _ => None,
                };
                Ok(vec![Some(g[0].clone()), d_other])
            },
        )
    }

    /// `maximum(other)`: elementwise max; NaN if either is NaN.
    /// Where both are equal, each gets half the gradient.
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        let rec = Recorder::new("MaximumBackward0", &[self, other]);
        let out = self.binary_num::<Maximum>("maximum", other)?;
        record_extremum(rec, &out, self, other, Tensor::lt)?;
        Ok(out)
    }

    /// `minimum(other)`: elementwise min; NaN if either is NaN. Where both
    /// are equal, each gets half the gradient.
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        let rec = Recorder::new("MinimumBackward0", &[self, other]);
        let out = self.binary_num::<Minimum>("minimum", other)?;
        record_extremum(rec, &out, self, other, Tensor::gt)?;
        Ok(out)
    }

    /// `pow(exponent)`: `self ** exponent`. An integer result with a
    /// negative Python-number exponent raises, as torch.
    pub fn pow(&self, exponent: &Tensor) -> Result<Tensor> {
        // torch's overloads: pow(Tensor, Scalar), pow(Scalar, Tensor) and
        // pow(Tensor, Tensor); a Scalar gets no edge.
        let (name, scalar) = if exponent.is_wrapped_number() {
            ("PowBackward0", Some(1))
        } else if self.is_wrapped_number() {
            ("PowBackward2", Some(0))
        } else {
            ("PowBackward1", None)
        };
        let mut rec = Recorder::new(name, &[self, exponent]).batched();
        if let Some(i) = scalar {
            rec = rec.scalar_input(i);
        }
        check_int_pow(promoted(&[self, exponent]), exponent)?;
        let out = self.binary_num::<Pow>("pow", exponent)?;
        let n1 = rec.needs(1);
        rec.jvp_elementwise(|t| {
            t.sum1(|i, t| {
                if i == 0 {
                    pow_grad_base(t, self, exponent)
                } else {
                    pow_grad_exp(t, self, exponent, &out)
                }
            })
        })
        .finish(
            &[&out],
            |s| {
                for (name, t, i) in [("self", self, 0), ("exponent", exponent, 1)] {
                    if scalar == Some(i) {
                        s.save_scalar(name, t);
                    } else {
                        s.save(name, t);
                    }
                }
                if n1 {
                    s.save_output("result", &out, 0);
                } else {
                    s.save_opt("result", None);
                }
            },
            |ctx, g| {
                let (base, exp) = (ctx.saved(0)?, ctx.saved(1)?);
                let d_self = if ctx.needs(0) {
                    Some(pow_grad_base(&g[0], &base, &exp)?)
                } else {
                    None
                };
                let d_exp = match ctx.saved_opt(2)? {
                    Some(y) => Some(pow_grad_exp(&g[0], &base, &exp, &y)?),
                    None => None,
                };
                Ok(vec![d_self, d_exp])
            },
        )?;
        Ok(out)
    }

    /// In-place form of [`Tensor::pow`].
    pub fn pow_(&self, exponent: &Tensor) -> Result<()> {
        if inplace("pow_", self, &[exponent], |s| s.pow(exponent))? {
            return Ok(());
        }
        check_int_pow(self.dtype(), exponent)?;
        self.binary_num_::<Pow>("pow_", exponent)
    }

    /// `atan2(other)` (alias `arctan2`): angle of the point (other, self).
    pub fn atan2(&self, other: &Tensor) -> Result<Tensor> {
        let rec = Recorder::new("Atan2Backward0", &[self, other]);
        let dt = float_of(promoted(&[self, other]));
        let (a, b) = (self.to_dtype(dt), other.to_dtype(dt));
        let out = dispatch_float!(dt, T => map2::<T, T, T>(&a, &b, |y, x| y.atan2(x)),
            else Err(unsupported("atan2", dt)))?;
        // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
        rec.jvp_elementwise(|t| {
            let r2 = self.mul(self)?.add(&other.mul(other)?)?;
            t.sum1(|i, t| {
                if i == 0 {
                    t.mul(other)?.div(&r2)
                } else {
                    t.mul(self)?.div(&r2)?.neg()
                }
            })
        })
        .finish(
            &[&out],
            |s| {
                s.save("self", self);
                s.save("other", other);
            },
            |ctx, g| {
                // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
                let (y, x) = (ctx.saved(0)?, ctx.saved(1)?);
                let r2 = y.mul(&y)?.add(&x.mul(&x)?)?;
                let d_y = ctx.needs(0).then(|| g[0].mul(&x)?.div(&r2)).transpose()?;
                let d_x = ctx
                    .needs(1)
                    .then(|| g[0].mul(&y)?.div(&r2)?.neg())
                    .transpose()?;
                Ok(vec![d_y, d_x])
            },
        )?;
        Ok(out)
    }

    /// In-place form of [`Tensor::atan2`].
    pub fn atan2_(&self, other: &Tensor) -> Result<()> {
        if inplace("atan2_", self, &[other], |s| s.atan2(other))? {
            return Ok(());
        }
        check_inplace("atan2_", self, float_of(promoted(&[self, other])))?;
        let b = other.to_dtype(self.dtype());
        dispatch_float!(self.dtype(), T => apply2::<T, T>(self, &b, |y, x| y.atan2(x)),
            else Err(unsupported("atan2_", self.dtype())))
    }
}

/// `d(a^b)/da = b * a^(b-1)`, taken as 0 where `b == 0` (so `x^0` has zero
/// gradient at `x = 0` rather than NaN).
fn pow_grad_base(g: &Tensor, base: &Tensor, exp: &Tensor) -> Result<Tensor> {
    if exp.is_wrapped_number() {
        let e = exp.item()?;
        if e.to_f64() == 0.0 {
            return g.zeros_like();
        }
        let minus_one = match e {
            Scalar::Float(e) => num(e - 1.0),
            e => num(e.to_i64() - 1),
        };
        return g.mul(&exp.mul(&base.pow(&minus_one)?)?);
    }
    let grad = g.mul(&exp.mul(&base.pow(&exp.sub(&num(1i64))?)?)?)?;
    zero_where(&grad, &exp.eq(&num(0.0))?)
}

/// `d(a^b)/db = a^b * log(a)` (`y` is `a^b`), taken as 0 where `a == 0`
/// and `b >= 0` (the limit from the right).
fn pow_grad_exp(g: &Tensor, base: &Tensor, exp: &Tensor, y: &Tensor) -> Result<Tensor> {
    let base = base.to_dtype(y.dtype());
    let at_zero = base.eq(&num(0.0))?.logical_and(&exp.ge(&num(0.0))?)?;
    zero_where(&g.mul(&y.mul(&base.log()?)?)?, &at_zero)
}

/// Records maximum/minimum's backward: `self` gets the gradient where it
/// won, `other` where it won, each half where they tie. `loses(a, b)` says
/// where `a` lost (`lt` for maximum, `gt` for minimum).
fn record_extremum<'a>(
    rec: Recorder<'a>,
    out: &'a Tensor,
    a: &'a Tensor,
    b: &'a Tensor,
    loses: fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<()> {
    // The transpose of the backward: each tangent where its input won,
    // half of each where they tie.
    rec.jvp_elementwise(|t| {
        let tie = a.eq(b)?;
        t.sum1(|i, t| {
            let split = t.r#where(&tie.logical_not(), &t.mul(&num(0.5))?)?;
            let lost = if i == 0 { loses(a, b)? } else { loses(b, a)? };
            zero_where(&split, &lost)
        })
    })
    .finish(
        &[out],
        |s| {
            s.save("self", a);
            s.save("other", b);
        },
        move |ctx, g| {
            let (a, b) = (ctx.saved(0)?, ctx.saved(1)?);
            let tie = a.eq(&b)?;
            let split = g[0].r#where(&tie.logical_not(), &g[0].mul(&num(0.5))?)?;
            let d_a = ctx
                .needs(0)
                .then(|| zero_where(&split, &loses(&a, &b)?))
                .transpose()?;
            let d_b = ctx
                .needs(1)
                .then(|| zero_where(&split, &loses(&b, &a)?))
                .transpose()?;
            Ok(vec![d_a, d_b])
        },
    )
}

fn floor_divide_error() -> Error {
    Error::runtime("derivative for floor_divide is not implemented")
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
        check_write(self)?;
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
